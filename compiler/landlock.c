/* SPDX-License-Identifier: GPL-2.0-only */
/* landlock.c: the Landlock plan of a policy, or the reason there is none. */
#include "landlock.h"
#include "glob.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The one byte of a set that holds exactly one, or -1. */
static int byteset_single(const struct glob_byteset *s)
{
	int found = -1;
	for (unsigned b = 0; b < 256; b++) {
		if (!glob_byteset_has(s, b))
			continue;
		if (found >= 0)
			return -1;
		found = (int)b;
	}
	return found;
}

/* A literal path, or a literal directory "/" and a trailing '**'. */
static bool alt_expressible(const struct glob_alt *a, char *path, size_t size, bool *beneath)
{
	size_t len = 0;
	*beneath = false;
	for (size_t i = 0; i < a->n; i++) {
		const struct glob_item *it = &a->items[i];
		int c;
		switch (it->kind) {
		case GLOB_ITEM_BYTE:
			c = byteset_single(&it->set);
			if (c < 0 || len + 1 >= size)
				return false;
			path[len++] = (char)c;
			break;
		case GLOB_ITEM_ANY:
			if (i + 1 != a->n || len < 2 || path[len - 1] != '/')
				return false;
			*beneath = true;
			len--;      /* "/usr/" beneath -> "/usr" */
			break;
		case GLOB_ITEM_STAR:
		case GLOB_ITEM_DIRS:
			return false;
		}
	}
	if (len == 0)
		return false;
	path[len] = '\0';
	return true;
}

static int lrule_cmp(const void *a, const void *b)
{
	const struct landlock_rule *x = a, *y = b;
	int c = strcmp(x->path, y->path);
	if (c)
		return c;
	if (x->beneath != y->beneath)
		return x->beneath - y->beneath;
	return (x->rule > y->rule) - (x->rule < y->rule);
}

static void plan_refuse(struct landlock_plan *plan, const struct ir_rule *r, const char *fmt, const char *a)
{
	plan->expressible = false;
	plan->culprit = r;
	snprintf(plan->reason, sizeof(plan->reason), fmt, a);
}

/* Whether deny d and grant g match a common path: the provenance
 * automaton of the two alone has a state that both rules reach. */
static bool rules_meet(const struct ir_rule *g, const struct ir_rule *d)
{
	struct dfa_rule pair[2] = {
		{ .glob = g->text, .grant = IR_PERM_READ, .rule = 0 },
		{ .glob = d->text, .deny = IR_PERM_READ, .rule = 1, .cover_dir = true },
	};
	struct dfa_build_opts o = { .sz = sizeof(o), .kind = DFA_KIND_PATH };
	struct dfa *a;
	if (dfa_build(pair, 2, &o, &a, NULL) < 0)
		return true;   /* cannot tell: not expressible */
	struct dfa_tables t;
	dfa_tables_get(a, &t);
	bool meet = false;
	for (unsigned s = 0; s < t.nstates && !meet; s++)
		meet = dfa_state_rules(a, s).n == 2;
	dfa_free(a);
	return meet;
}

/* A deny that takes something away from a grant (Landlock has no deny). */
static const struct ir_rule *deny_overlap(const struct lowered *lw, const struct ir_rule **grant)
{
	const struct ir_policy *ir = lw->ir;
	for (size_t i = 0; i < ir->nrules; i++) {
		const struct ir_rule *d = &ir->rules[i];
		if (d->kind != IR_RULE_FS_DENY)
			continue;
		for (size_t j = 0; j < ir->nrules; j++) {
			const struct ir_rule *g = &ir->rules[j];
			if ((g->kind == IR_RULE_FS_READ || g->kind == IR_RULE_FS_WRITE) && rules_meet(g, d)) {
				*grant = g;
				return d;
			}
		}
	}
	return NULL;
}

int landlock_plan_build(const struct lowered *lw, struct landlock_plan *plan)
{
	memset(plan, 0, sizeof(*plan));
	plan->expressible = true;
	size_t cap = 0;
	const struct ir_policy *ir = lw->ir;
	for (size_t i = 0; i < ir->nrules && plan->expressible; i++) {
		const struct ir_rule *r = &ir->rules[i];
		uint32_t perms = 0;
		switch (r->kind) {
		case IR_RULE_FS_READ:
			perms = IR_PERM_READ;
			break;
		case IR_RULE_FS_WRITE:
			perms = IR_PERM_WRITE;
			break;
		case IR_RULE_EXEC_ALLOW:
			perms = IR_PERM_EXEC;
			break;
		case IR_RULE_FS_DENY:
		case IR_RULE_NET_CONNECT:
		case IR_RULE_NET_BIND:
		case IR_RULE_NET_DENY:
		case IR_RULE_NET_HOST:
		case IR_RULE_ENV_ALLOW:
		case IR_RULE_ENV_SET:
		case IR_RULE_KIND_COUNT:
			continue;
		}
		if (r->kind == IR_RULE_EXEC_ALLOW && r->exec.pinned) {
			/* a Landlock rule is bound to the inode opened at start: a pin */
			struct landlock_rule *lr = VEC_PUSH(plan->rules, plan->n, cap);
			*lr = (struct landlock_rule){ xstrdup(r->text), false, perms, r->index };
			continue;
		}
		struct glob g;
		struct glob_error ge;
		if (glob_parse(r->text, &g, &ge) < 0) {
			plan_refuse(plan, r, "'%s' is not a glob bee can parse", r->text);
			break;
		}
		for (size_t a = 0; a < g.nalts; a++) {
			char path[4200];
			bool beneath;
			if (!alt_expressible(&g.alts[a], path, sizeof(path), &beneath)) {
				plan_refuse(plan, r, "'%s' is neither a literal path nor a literal directory "
					    "followed by '/**': Landlock grants on files and whole directories only",
					    r->text);
				break;
			}
			struct landlock_rule *lr = VEC_PUSH(plan->rules, plan->n, cap);
			*lr = (struct landlock_rule){ xstrdup(path), beneath, perms, r->index };
		}
		glob_fini(&g);
	}
	if (plan->expressible) {
		const struct ir_rule *grant = NULL;
		const struct ir_rule *deny = deny_overlap(lw, &grant);
		if (deny) {
			char what[300];
			snprintf(what, sizeof(what), "'%s' denies inside the grant '%s': Landlock has no deny",
				 deny->text, grant->text);
			plan_refuse(plan, deny, "%s", what);
		}
	}
	if (!plan->expressible) {
		for (size_t i = 0; i < plan->n; i++)
			free(plan->rules[i].path);
		free(plan->rules);
		plan->rules = NULL;
		plan->n = 0;
		return 0;
	}
	if (plan->n) /* qsort's base must not be NULL, even for no element */
		qsort(plan->rules, plan->n, sizeof(*plan->rules), lrule_cmp);
	return 0;
}

void landlock_plan_fini(struct landlock_plan *plan)
{
	for (size_t i = 0; i < plan->n; i++)
		free(plan->rules[i].path);
	free(plan->rules);
	memset(plan, 0, sizeof(*plan));
}
