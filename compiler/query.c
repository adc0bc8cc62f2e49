/* SPDX-License-Identifier: GPL-2.0-only */
/* query.c: answer one decision from the map images and explain it. */
#include "query.h"
#include "mem.h"
#include "eval.h"
#include "image.h"
#include "netaddr.h"
#include "netset.h"

#include <stdlib.h>
#include <string.h>

struct query_action {
	const char *kind, *action;
	enum ir_domain domain;
	uint32_t want;
	bool bind;
};

static const struct query_action query_actions[] = {
	{ "fs", "read", IR_DOMAIN_FS, IR_PERM_READ, false },
	{ "fs", "write", IR_DOMAIN_FS, IR_PERM_WRITE, false },
	{ "exec", "execute", IR_DOMAIN_EXEC, IR_PERM_EXEC, false },
	{ "env", "read", IR_DOMAIN_ENV, IR_PERM_READ, false },
	{ "net", "connect", IR_DOMAIN_NET, 0, false },
	{ "net", "bind", IR_DOMAIN_NET, 0, true },
};

int query_parse(const char *kind, const char *action, const char *resource,
		struct query *q, char *err, size_t errlen)
{
	memset(q, 0, sizeof(*q));
	const struct query_action *a = NULL;
	bool kind_known = false;
	for (size_t i = 0; i < sizeof(query_actions) / sizeof(query_actions[0]); i++) {
		if (strcmp(query_actions[i].kind, kind) != 0)
			continue;
		kind_known = true;
		if (strcmp(query_actions[i].action, action) == 0)
			a = &query_actions[i];
	}
	if (!kind_known) {
		snprintf(err, errlen, "unknown kind '%s': expected fs, exec, net or env", kind);
		return -1;
	}
	if (!a) {
		char list[64] = "";
		for (size_t i = 0; i < sizeof(query_actions) / sizeof(query_actions[0]); i++) {
			if (strcmp(query_actions[i].kind, kind) != 0)
				continue;
			strcat(list, list[0] ? " or " : "");
			strcat(list, query_actions[i].action);
		}
		snprintf(err, errlen, "unknown action '%s' for %s: expected %s", action, kind, list);
		return -1;
	}
	q->domain = a->domain;
	q->want = a->want;
	q->kind = a->kind;
	q->action = a->action;
	q->bind = a->bind;
	q->resource = resource;
	if (a->domain == IR_DOMAIN_NET) {
		struct netaddr_err ne;
		if (netaddr_parse(resource, strlen(resource), &q->net, NULL, &ne) < 0) {
			snprintf(err, errlen, "bad address '%s': %s", resource, ne.msg);
			return -1;
		}
		unsigned full = q->net.family == IR_NET_IPV4 ? 32 : 128;
		if (q->net.prefix != full || q->net.port_lo != q->net.port_hi) {
			snprintf(err, errlen, "bad address '%s': a query names one address and one port", resource);
			return -1;
		}
	} else if (a->domain != IR_DOMAIN_ENV && resource[0] != '/') {
		snprintf(err, errlen, "bad path '%s': paths are absolute", resource);
		return -1;
	}
	return 0;
}

static void result_add_rule(struct beec_answer *r, unsigned rule)
{
	if (r->nrules < sizeof(r->rules) / sizeof(r->rules[0]))
		r->rules[r->nrules++] = rule;
}

/* The rules the resource matches that bear on the bit asked for: grants of
 * it and denies of it, in policy order. */
static void result_rules_of(const struct lowered *lw, const struct dfa *d, const char *resource,
			    uint32_t want, struct beec_answer *r)
{
	unsigned *ids = NULL;
	size_t n = dfa_string_rules(d, resource, strlen(resource), &ids);
	for (size_t i = 0; i < n; i++) {
		const struct ir_rule *rule = lowered_rule(lw, ids[i]);
		bool relevant = false;
		switch (rule->kind) {
		case IR_RULE_FS_READ:
			relevant = want == IR_PERM_READ;
			break;
		case IR_RULE_FS_WRITE:
			relevant = want == IR_PERM_WRITE;
			break;
		case IR_RULE_FS_DENY:
		case IR_RULE_EXEC_ALLOW:
		case IR_RULE_ENV_ALLOW:
			relevant = true;
			break;
		case IR_RULE_ENV_SET:
		case IR_RULE_NET_CONNECT:
		case IR_RULE_NET_BIND:
		case IR_RULE_NET_DENY:
		case IR_RULE_NET_HOST:
		case IR_RULE_KIND_COUNT:
			break;
		}
		if (relevant)
			result_add_rule(r, ids[i]);
	}
	free(ids);
}

static int query_run_dfa(const struct lowered *lw, const struct query *q, struct beec_answer *r)
{
	const struct dfa *d = lw->dfa[q->domain];
	if (q->domain == IR_DOMAIN_ENV) {
		/* a variable the policy sets is injected, whatever the allow list says */
		for (size_t i = 0; i < lw->ir->nrules; i++) {
			const struct ir_rule *rule = &lw->ir->rules[i];
			if (rule->kind == IR_RULE_ENV_SET && strcmp(rule->text, q->resource) == 0) {
				r->allow = r->injected = true;
				result_add_rule(r, rule->index);
				return 0;
			}
		}
	}
	size_t len;
	struct bee_dfa_hdr *img = image_dfa_write(d, &len);
	if (!img)
		mem_raise(__func__);   /* exhausted in the nested entry: unwind to ours */
	struct bee_verdict v;
	bee_eval_dfa(img, q->resource, strlen(q->resource), &v);
	free(img);
	r->too_long = v.too_long;
	if (v.too_long)
		return 0;
	if (q->domain == IR_DOMAIN_EXEC) {
		r->allow = v.perms & (IR_PERM_EXEC | IR_PERM_EXEC_PINNED);
		r->pinned = r->allow && !(v.perms & IR_PERM_EXEC);
	} else {
		r->allow = v.perms & q->want;
	}
	result_rules_of(lw, d, q->resource, q->want, r);
	return 0;
}

/* Whether net rule r holds the one endpoint q names. */
static bool net_rule_holds(const struct ir_net *r, const struct ir_net *q)
{
	if (r->family != q->family || r->proto != q->proto ||
	    q->port_lo < r->port_lo || q->port_lo > r->port_hi)
		return false;
	for (unsigned bit = 0; bit < r->prefix; bit++) {
		unsigned mask = 0x80u >> (bit & 7);
		if ((r->addr[bit / 8] & mask) != (q->addr[bit / 8] & mask))
			return false;
	}
	return true;
}

static int query_run_net(const struct lowered *lw, const struct query *q, struct beec_answer *r)
{
	struct netset_image img;
	if (netset_image_build(lw->net, &img) < 0)
		mem_raise(__func__);
	struct net_eval_maps maps = netset_image_maps(&img);
	struct net_eval_decision dec;
	int err = net_eval_decide(&maps, q->bind ? BEE_NET_BIND : BEE_NET_CONNECT,
				  q->net.family == IR_NET_IPV4 ? 4 : 6, q->net.addr, q->net.port_lo,
				  (uint8_t)q->net.proto, &dec);
	netset_image_free(&img);
	if (err < 0)
		return err;
	r->allow = dec.allow;
	if (dec.prov != BEE_NET_PROV_NONE) {
		const struct netset_entry *e = &lw->net->entries[dec.prov];
		for (unsigned i = 0; i < e->nrules; i++) {
			const struct ir_rule *rule = &lw->net->rules[e->rules[i]];
			/* a grant of the other direction contains the prefix only by chance */
			if ((rule->kind == IR_RULE_NET_CONNECT && q->bind) ||
			    (rule->kind == IR_RULE_NET_BIND && !q->bind))
				continue;
			result_add_rule(r, rule->index);
		}
	}
	if (!r->allow && r->nrules == 0) {
		/* a deny that no grant overlaps leaves no entry; name it all the same */
		for (size_t i = 0; i < lw->ir->nrules; i++) {
			const struct ir_rule *rule = &lw->ir->rules[i];
			if (rule->kind == IR_RULE_NET_DENY && net_rule_holds(&rule->net, &q->net))
				result_add_rule(r, rule->index);
		}
	}
	return 0;
}

static int query_run_body(const struct lowered *lw, const struct query *q, struct beec_answer *r)
{
	memset(r, 0, sizeof(*r));
	switch (q->domain) {
	case IR_DOMAIN_FS:
	case IR_DOMAIN_EXEC:
	case IR_DOMAIN_ENV:
		return query_run_dfa(lw, q, r);
	case IR_DOMAIN_NET:
		return query_run_net(lw, q, r);
	case IR_DOMAIN_COUNT:
		break;
	}
	abort();
}

int query_run(const struct lowered *lw, const struct query *q, struct beec_answer *r)
{
	return MEM_PROTECT(-ENOMEM, query_run_body(lw, q, r));
}

static const char *rule_role(const struct ir_rule *rule)
{
	switch (rule->kind) {
	case IR_RULE_FS_READ:
	case IR_RULE_FS_WRITE:
	case IR_RULE_EXEC_ALLOW:
	case IR_RULE_NET_CONNECT:
	case IR_RULE_NET_BIND:
	case IR_RULE_NET_HOST:
	case IR_RULE_ENV_ALLOW:
		return "granted by";
	case IR_RULE_ENV_SET:
		return "injected by";
	case IR_RULE_FS_DENY:
	case IR_RULE_NET_DENY:
		return "denied by";
	case IR_RULE_KIND_COUNT:
		break;
	}
	abort();
}

static void query_explain_body(const struct lowered *lw, const struct query *q,
		   const struct beec_answer *r, FILE *out, struct diag_ctx *notes)
{
	fprintf(out, "%s %s %s %s\n", r->allow ? "Allow" : "Deny", q->kind, q->action, q->resource);
	if (r->too_long)
		fprintf(out, "  the path is longer than %d bytes: the kernel denies it without matching\n",
			BEE_PATH_MAX - 1);
	if (r->pinned)
		fprintf(out, "  only as the pinned file: the kernel compares its device and inode\n");
	if (!r->allow && !r->too_long) {
		bool denied = false;
		for (size_t i = 0; i < r->nrules; i++) {
			const struct ir_rule *rule = lowered_rule(lw, r->rules[i]);
			denied |= rule->kind == IR_RULE_FS_DENY || rule->kind == IR_RULE_NET_DENY;
		}
		if (!denied)
			fprintf(out, "  no rule grants %s: denied by default\n", q->action);
	}
	for (size_t i = 0; i < r->nrules; i++) {
		const struct ir_rule *rule = lowered_rule(lw, r->rules[i]);
		diag_add(notes, DIAG_NOTE, rule->loc, "%s %s.%s '%s'", rule_role(rule),
			 ir_domain_name(ir_rule_kind_domain(rule->kind)), ir_rule_kind_key(rule->kind),
			 rule->text);
	}
}

int query_explain(const struct lowered *lw, const struct query *q,
		   const struct beec_answer *r, FILE *out, struct diag_ctx *notes)
{
	return MEM_PROTECT(-ENOMEM, (query_explain_body(lw, q, r, out, notes), 0));
}
