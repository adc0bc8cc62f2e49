/* SPDX-License-Identifier: GPL-2.0-only */
/* lower.c: IR rules to per-domain DFA rules and network sets. */
#include "lower.h"
#include "mem.h"

#include "bee_hosts.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* A pinned path names one file: its bytes are literal, not glob syntax. */
static char *glob_escape(struct arena *a, const char *s)
{
	size_t n = strlen(s);
	char *out = arena_alloc(a, 2 * n + 1), *o = out;
	for (; *s; s++) {
		if (strchr("*?[]{}\\", *s))
			*o++ = '\\';
		*o++ = *s;
	}
	*o = '\0';
	return out;
}

static int lower_domain(const struct ir_policy *ir, enum ir_domain dom, enum dfa_kind kind,
			const struct lower_opts *opts, struct diag_ctx *dc, struct arena *scratch,
			struct dfa **out)
{
	struct dfa_rule *rules = arena_alloc(scratch, (ir->nrules + 1) * sizeof(*rules));
	size_t n = 0;
	for (size_t i = 0; i < ir->nrules; i++) {
		const struct ir_rule *r = &ir->rules[i];
		/* exec implies read of the executable (docs/decisions.md, "One
		 * semantics"): each exec grant is a read grant of fs too, which
		 * an fs deny still beats */
		bool exec_read = dom == IR_DOMAIN_FS && r->kind == IR_RULE_EXEC_ALLOW;
		if ((ir_rule_kind_domain(r->kind) != dom && !exec_read) ||
		    (opts && opts->exclude && opts->exclude[r->index]))
			continue;
		struct dfa_rule *d = &rules[n];
		*d = (struct dfa_rule){ 0 };
		d->glob = r->text;
		d->rule = r->index;
		d->loc = r->loc;
		if (exec_read) {
			if (r->exec.pinned)
				d->glob = glob_escape(scratch, r->text);
			d->grant = IR_PERM_READ;
			n++;
			continue;
		}
		switch (r->kind) {
		case IR_RULE_FS_READ:
			d->grant = IR_PERM_READ;
			break;
		case IR_RULE_FS_WRITE:
			d->grant = IR_PERM_WRITE;
			break;
		case IR_RULE_FS_DENY:
			/* hidden means hidden: denying X/ ** denies X too, and
			 * the mark tells a denied path from an ungranted one */
			d->deny = IR_PERM_READ | IR_PERM_WRITE;
			d->grant = IR_PERM_DENIED;
			d->cover_dir = true;
			break;
		case IR_RULE_EXEC_ALLOW:
			if (r->exec.pinned) {
				d->glob = glob_escape(scratch, r->text);
				d->grant = IR_PERM_EXEC_PINNED;
			} else {
				d->grant = IR_PERM_EXEC | IR_PERM_EXEC_PINNED;
			}
			break;
		case IR_RULE_ENV_ALLOW:
			d->grant = IR_PERM_READ;
			break;
		case IR_RULE_ENV_SET:
		case IR_RULE_NET_CONNECT:
		case IR_RULE_NET_BIND:
		case IR_RULE_NET_DENY:
		case IR_RULE_NET_HOST:
			continue;
		case IR_RULE_KIND_COUNT:
			abort();
		}
		n++;
	}
	struct beec_limits lim = beec_limits_resolve(opts ? opts->limits : NULL);
	struct dfa_build_opts o = {
		.sz = sizeof(o),
		.kind = kind,
		.max_states = opts && opts->max_states ? opts->max_states : lim.states,
		.max_build_states = lim.build_states,
		.max_build_total = lim.build_total,
		/* map images need permissions only; exact rules for one input
		 * come from dfa_string_rules (provenance automata multiply) */
		.perms_only = true,
		.marks = IR_PERM_DENIED,
	};
	return dfa_build(rules, n, &o, out, dc);
}

/* The host names, each once, in policy order; more than the pack may
 * carry is an error at the first one beyond the limit. */
static int lower_hosts(const struct ir_policy *ir, const struct lower_opts *opts, struct diag_ctx *dc,
		       struct lowered *lw)
{
	lw->hosts = xcalloc(ir->nrules + 1, sizeof(*lw->hosts));
	for (size_t i = 0; i < ir->nrules; i++) {
		const struct ir_rule *r = &ir->rules[i];
		if (r->kind != IR_RULE_NET_HOST || (opts && opts->exclude && opts->exclude[r->index]))
			continue;
		if (lw->nhosts == BEE_HOSTS_MAX) {
			diag_error(dc, r->loc, "too many host names in [net] connect: a pack carries at most %d",
				   BEE_HOSTS_MAX);
			diag_note(dc, LOC_NONE, "a wildcard ('*.example.com:443') covers the names below a domain");
			return -1;
		}
		lw->hosts[lw->nhosts++] = r;
	}
	return 0;
}

static int lower_policy_body(const struct ir_policy *ir, const struct lower_opts *opts,
		 struct diag_ctx *dc, struct lowered **out)
{
	struct lowered *lw = xcalloc(1, sizeof(*lw));
	struct arena scratch = { 0 };
	int err = 0;
	lw->ir = ir;
	static const struct { enum ir_domain dom; enum dfa_kind kind; } dfas[] = {
		{ IR_DOMAIN_FS, DFA_KIND_PATH }, { IR_DOMAIN_EXEC, DFA_KIND_PATH }, { IR_DOMAIN_ENV, DFA_KIND_NAME },
	};
	unsigned want = opts && opts->domains ? opts->domains : ~0u;
	for (size_t i = 0; i < sizeof(dfas) / sizeof(dfas[0]); i++)
		if ((want & (1u << dfas[i].dom)) &&
		    lower_domain(ir, dfas[i].dom, dfas[i].kind, opts, dc, &scratch, &lw->dfa[dfas[i].dom]) < 0)
			err = -1;
	if (!(want & (1u << IR_DOMAIN_NET)))
		goto out;
	const struct ir_rule *net_rules = ir->rules;
	size_t nnet = ir->nrules;
	if (opts && opts->exclude) {
		struct ir_rule *kept = arena_alloc(&scratch, (ir->nrules + 1) * sizeof(*kept));
		nnet = 0;
		for (size_t i = 0; i < ir->nrules; i++)
			if (!opts->exclude[ir->rules[i].index])
				kept[nnet++] = ir->rules[i];
		net_rules = kept;
	}
	if (netset_build(net_rules, nnet, NULL, dc, &lw->net) < 0)
		err = -1;
	if (lower_hosts(ir, opts, dc, lw) < 0)
		err = -1;
out:
	arena_free(&scratch);
	if (err) {
		lowered_free(lw);
		*out = NULL;
		return -1;
	}
	*out = lw;
	return 0;
}

int lower_policy(const struct ir_policy *ir, const struct lower_opts *opts,
		 struct diag_ctx *dc, struct lowered **out)
{
	return MEM_PROTECT(-ENOMEM, lower_policy_body(ir, opts, dc, out));
}

void lowered_free(struct lowered *lw)
{
	if (!lw)
		return;
	for (int d = 0; d < IR_DOMAIN_COUNT; d++)
		dfa_free(lw->dfa[d]);
	netset_free(lw->net);
	free(lw->hosts);
	free(lw);
}

const struct ir_rule *lowered_rule(const struct lowered *lw, unsigned i)
{
	return i < lw->ir->nrules ? &lw->ir->rules[i] : NULL;
}
