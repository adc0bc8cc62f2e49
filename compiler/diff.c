/* SPDX-License-Identifier: GPL-2.0-only */
/* diff.c: capabilities added and removed between two policies. */
#include "diff.h"
#include "mem.h"

#include "jsonx.h"
#include <stdlib.h>
#include <string.h>

static const enum ir_domain diff_order[] = { IR_DOMAIN_FS, IR_DOMAIN_EXEC, IR_DOMAIN_ENV, IR_DOMAIN_NET };

/* Every widening of child over parent in domain dom, one per child rule. */
static int diff_side(const struct lowered *child, const struct lowered *parent, enum ir_domain dom,
		     bool added, const struct lower_opts *lo, struct diag_ctx *dc, struct diff *out)
{
	bool *exclude = xcalloc(child->ir->nrules + 1, sizeof(*exclude));
	/* each round re-lowers this domain alone, without the rules explained */
	struct lower_opts o = { .sz = sizeof(o), .max_states = lo ? lo->max_states : 0,
				.domains = 1u << dom, .exclude = exclude,
				.limits = lo ? lo->limits : NULL };
	const struct lowered *cur = child;
	struct lowered *owned = NULL;
	int err = 0;
	for (int round = 0; round < DIFF_MAX_PER_DOMAIN; round++) {
		struct attenuate_widening w;
		int wide = attenuate_domain_opts(cur, parent, dom, o.limits, &w);
		if (wide < 0)
			mem_raise(__func__);   /* exhausted in the nested entry: unwind to ours */
		if (!wide)
			break;
		if (w.too_large) {
			/* what cannot be compared cannot be listed: an error, not a guess */
			diag_error(dc, LOC_NONE, "cannot compare [%s]: the search reached %zu states, "
				   "more than the limit of %zu", ir_domain_name(dom), w.searched, w.limit);
			beec_limit_note(dc, BEEC_LIMIT_search_states, (unsigned)w.limit);
			err = -1;
			break;
		}
		struct diff_entry *e = VEC_PUSH(out->entries, out->n, out->cap);
		*e = (struct diff_entry){ .added = added, .w = w };
		if (added)
			out->nadded++;
		else
			out->nremoved++;
		if (!w.child_rule)
			break;
		/* set the rule aside and look for what the others add */
		exclude[w.child_rule->index] = true;
		lowered_free(owned);
		owned = NULL;
		if (lower_policy(child->ir, &o, dc, &owned) < 0) {
			err = -1;
			break;
		}
		cur = owned;
	}
	lowered_free(owned);
	free(exclude);
	return err;
}

/* The [syscalls] groups that have allows and other does not. */
static void diff_syscalls(const struct ir_policy *has, const struct ir_policy *other, bool added,
			  struct diff *out)
{
	uint32_t extra = has->syscalls & ~other->syscalls;
	for (unsigned g = 0; g < BEE_SYSCALLS_COUNT; g++) {
		if (!(extra & (1u << g)))
			continue;
		struct diff_entry *e = VEC_PUSH(out->entries, out->n, out->cap);
		memset(e, 0, sizeof(*e));
		e->added = added;
		e->syscall = true;
		e->group = g;
		e->group_loc = has->syscalls_loc[g];
		if (added)
			out->nadded++;
		else
			out->nremoved++;
	}
}

static int diff_policies_body(const struct lowered *old, const struct lowered *new_, const struct lower_opts *lo,
		  struct diag_ctx *dc, struct diff *out)
{
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < sizeof(diff_order) / sizeof(diff_order[0]); i++) {
		if (diff_side(new_, old, diff_order[i], true, lo, dc, out) < 0 ||
		    diff_side(old, new_, diff_order[i], false, lo, dc, out) < 0)
			return -1;
	}
	diff_syscalls(new_->ir, old->ir, true, out);
	diff_syscalls(old->ir, new_->ir, false, out);
	return 0;
}

int diff_policies(const struct lowered *old, const struct lowered *new_, const struct lower_opts *lo,
		  struct diag_ctx *dc, struct diff *out)
{
	return MEM_PROTECT(-ENOMEM, diff_policies_body(old, new_, lo, dc, out));
}

void diff_fini(struct diff *d)
{
	free(d->entries);
	memset(d, 0, sizeof(*d));
}

/* "fs read", "net connect" ... and the example, for one entry. */
static void entry_describe(const struct diff_entry *e, char *what, size_t wlen, char *example, size_t elen)
{
	const struct attenuate_widening *w = &e->w;
	if (e->syscall) {
		snprintf(what, wlen, "syscalls allow");
		snprintf(example, elen, "%s", bee_syscall_groups[e->group].name);
		return;
	}
	if (w->domain == IR_DOMAIN_NET && w->host) {
		snprintf(what, wlen, "net connect");
		snprintf(example, elen, "%s", w->example);
		return;
	}
	if (w->domain == IR_DOMAIN_NET) {
		char ep[NETSET_CEX_STRLEN];
		netset_cex_format(&w->net, ep);
		char *sp = strchr(ep, ' ');
		if (sp)
			*sp = '\0';
		snprintf(what, wlen, "net %s", ep);
		snprintf(example, elen, "%s", sp ? sp + 1 : ep);
		return;
	}
	char perms[64];
	attenuate_perm_text(w->domain, w->extra, perms, sizeof(perms));
	snprintf(what, wlen, "%s %s", ir_domain_name(w->domain), perms);
	snprintf(example, elen, "%s", w->example);
}

static void rule_where(const struct ir_rule *r, char *buf, size_t len)
{
	if (!r) {
		snprintf(buf, len, "no single rule");
		return;
	}
	unsigned line = 0, col = 0;
	if (r->loc.src)
		loc_linecol(r->loc, &line, &col);
	snprintf(buf, len, "%s:%u:%u %s.%s '%s'", r->loc.src ? r->loc.src->name : "?", line, col,
		 ir_domain_name(ir_rule_kind_domain(r->kind)), ir_rule_kind_key(r->kind), r->text);
}

static void group_where(const struct diff_entry *e, char *buf, size_t len)
{
	unsigned line = 0, col = 0;
	if (e->group_loc.src)
		loc_linecol(e->group_loc, &line, &col);
	snprintf(buf, len, "%s:%u:%u syscalls.allow '%s'", e->group_loc.src ? e->group_loc.src->name : "?",
		 line, col, bee_syscall_groups[e->group].name);
}

static void diff_print_text_body(const struct diff *d, FILE *out)
{
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < d->n; i++) {
			const struct diff_entry *e = &d->entries[i];
			if (e->added != (pass == 0))
				continue;
			char what[128], example[4200], where[4400];
			entry_describe(e, what, sizeof(what), example, sizeof(example));
			if (e->syscall)
				group_where(e, where, sizeof(where));
			else
				rule_where(e->w.child_rule, where, sizeof(where));
			fprintf(out, "%c %s: e.g. %s\n    %s by %s\n", e->added ? '+' : '-', what, example,
				e->added ? "added" : "removed", where);
		}
	}
	if (!d->n)
		fprintf(out, "no capability added or removed\n");
	else
		fprintf(out, "%zu added, %zu removed\n", d->nadded, d->nremoved);
}

int diff_print_text(const struct diff *d, FILE *out)
{
	return MEM_PROTECT(-ENOMEM, (diff_print_text_body(d, out), 0));
}

/* The JSON of the rule that decided an entry: where it is, its key, its text. */
static json_t *rule_json(struct loc loc, const char *kind, const char *text)
{
	unsigned line = 0, col = 0;
	if (loc.src)
		loc_linecol(loc, &line, &col);
	json_t *rule = jx(json_object());
	jx_set(rule, "file", json_string(loc.src ? loc.src->name : ""));
	jx_set(rule, "line", json_integer(line));
	jx_set(rule, "column", json_integer(col));
	jx_set(rule, "kind", json_string(kind));
	jx_set(rule, "text", json_string(text));
	return rule;
}

static void diff_print_json_body(const struct diff *d, FILE *out)
{
	json_t *root = jx(json_object()), *added = jx(json_array()), *removed = jx(json_array());
	for (size_t i = 0; i < d->n; i++) {
		const struct diff_entry *e = &d->entries[i];
		char what[128], example[4200];
		entry_describe(e, what, sizeof(what), example, sizeof(example));
		char *sp = strchr(what, ' ');
		json_t *o = jx(json_object());
		jx_set(o, "domain", json_string(e->syscall ? "syscalls" : ir_domain_name(e->w.domain)));
		jx_set(o, "access", json_string(sp ? sp + 1 : what));
		jx_set(o, "example", json_string(example));
		const struct ir_rule *r = e->syscall ? NULL : e->w.child_rule;
		if (e->syscall)
			jx_set(o, "rule", rule_json(e->group_loc, "allow", bee_syscall_groups[e->group].name));
		else if (r)
			jx_set(o, "rule", rule_json(r->loc, ir_rule_kind_key(r->kind), r->text));
		jx_push(e->added ? added : removed, o);
	}
	jx_set(root, "added", added);
	jx_set(root, "removed", removed);
	jx_set(root, "widens", json_boolean(d->nadded > 0));
	if (json_dumpf(root, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER) < 0 && mem_exhausted())
		mem_raise(__func__);
	fputc('\n', out);
	json_decref(root);
}

int diff_print_json(const struct diff *d, FILE *out)
{
	return MEM_PROTECT(-ENOMEM, (diff_print_json_body(d, out), 0));
}
