/* attenuate.c: child ⊆ parent, per domain, with counterexamples. */
#include "attenuate.h"

#include "netset.h"

#include <string.h>

const char *attenuate_perm_text(enum ir_domain d, uint32_t bits, char *buf, size_t len)
{
	buf[0] = '\0';
	const char *names[4] = { 0 };
	size_t n = 0;
	switch (d) {
	case IR_DOMAIN_FS:
		if (bits & IR_PERM_READ)
			names[n++] = "read";
		if (bits & IR_PERM_WRITE)
			names[n++] = "write";
		break;
	case IR_DOMAIN_EXEC:
		if (bits & IR_PERM_EXEC)
			names[n++] = "execute";
		else if (bits & IR_PERM_EXEC_PINNED)
			names[n++] = "execute (pinned)";
		break;
	case IR_DOMAIN_ENV:
		if (bits & IR_PERM_READ)
			names[n++] = "read";
		break;
	case IR_DOMAIN_NET:
	case IR_DOMAIN_COUNT:
		break;
	}
	for (size_t i = 0; i < n; i++) {
		strncat(buf, i ? " and " : "", len - strlen(buf) - 1);
		strncat(buf, names[i], len - strlen(buf) - 1);
	}
	return buf;
}

static int attenuate_dfa(const struct lowered *child, const struct lowered *parent,
			 enum ir_domain d, struct diag_ctx *dc)
{
	struct dfa_widening w;
	if (dfa_widening_find(child->dfa[d], parent->dfa[d], &w) < 0)
		return diag_error(dc, LOC_NONE, "%s: automata of different kinds", ir_domain_name(d));
	if (!w.found) {
		dfa_widening_fini(&w);
		return 0;
	}
	char perms[64];
	attenuate_perm_text(d, w.extra, perms, sizeof(perms));
	const struct ir_rule *rule = w.nchild_rules ? lowered_rule(child, w.child_rules[0]) : NULL;
	const char *what = d == IR_DOMAIN_ENV ? "variable" : d == IR_DOMAIN_EXEC ? "binary" : "path";
	diag_error(dc, rule ? rule->loc : LOC_NONE, "child grants %s on %s '%s', parent does not",
		   perms, what, w.example);
	diag_note(dc, LOC_NONE, "%s: child grants %s, parent does not", w.example, perms);
	if (w.nparent_rules) {
		const struct ir_rule *pr = lowered_rule(parent, w.parent_rules[0]);
		char pp[64];
		attenuate_perm_text(d, w.parent_perms, pp, sizeof(pp));
		diag_note(dc, pr->loc, "the parent's rule here gives '%s' %s", w.example,
			  pp[0] ? pp : "nothing");
	}
	dfa_widening_fini(&w);
	return 1;
}

static int attenuate_net(const struct lowered *child, const struct lowered *parent,
			 struct diag_ctx *dc)
{
	struct netset_cex cex;
	if (netset_subset(child->net, parent->net, &cex))
		return 0;
	char ep[NETSET_CEX_STRLEN];
	netset_cex_format(&cex, ep);
	diag_error(dc, cex.child_rule ? cex.child_rule->loc : LOC_NONE,
		   "child allows %s, parent does not", ep);
	diag_note(dc, LOC_NONE, "%s: child grants %s, parent does not", ep, netset_dir_name(cex.dir));
	if (cex.parent_deny)
		diag_note(dc, cex.parent_deny->loc, "the parent denies it here");
	return 1;
}

int attenuate_check(const struct lowered *child, const struct lowered *parent, struct diag_ctx *dc)
{
	int widened = 0;
	widened |= attenuate_dfa(child, parent, IR_DOMAIN_FS, dc);
	widened |= attenuate_dfa(child, parent, IR_DOMAIN_EXEC, dc);
	widened |= attenuate_dfa(child, parent, IR_DOMAIN_ENV, dc);
	widened |= attenuate_net(child, parent, dc);
	return widened ? 1 : 0;
}
