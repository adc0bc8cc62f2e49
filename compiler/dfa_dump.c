/* SPDX-License-Identifier: GPL-2.0-only */
/* dfa_dump.c: the automaton as deterministic text and as Graphviz. */
#include "dfa_impl.h"
#include "mem.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static void dfa_class_set(const struct dfa *d, unsigned cls, struct glob_byteset *set)
{
	memset(set, 0, sizeof(*set));
	for (unsigned b = 0; b < 256; b++)
		if (d->class_of[b] == cls)
			glob_byteset_add(set, b);
}

static void dfa_rules_print(const struct dfa *d, unsigned s, FILE *out, const char *sep)
{
	struct dfa_rules r = dfa_state_rules(d, s);
	for (size_t i = 0; i < r.n; i++)
		fprintf(out, "%s%u", i ? sep : "", r.ids[i]);
}

static void dfa_dump_body(const struct dfa *d, FILE *out)
{
	char buf[1200];
	fprintf(out, "dfa %s%s: %u states, %u classes, %u transitions, start 0, dead ",
		dfa_kind_name(d->kind), d->perms_only ? " (by permissions)" : "", d->nstates,
		d->nclasses, d->stats.transitions);
	if (d->dead == DFA_STATE_NONE)
		fprintf(out, "none\n");
	else
		fprintf(out, "%u\n", d->dead);
	for (size_t i = 0; i < d->nrules; i++)
		fprintf(out, "rule %u: grant 0x%" PRIx32 " deny 0x%" PRIx32 " '%s'\n", d->rules[i].rule,
			d->rules[i].grant, d->rules[i].deny, d->rules[i].glob);
	for (unsigned c = 0; c < d->nclasses; c++) {
		struct glob_byteset set;
		dfa_class_set(d, c, &set);
		glob_byteset_format(&set, buf, sizeof(buf));
		fprintf(out, "class %u: %s\n", c, buf);
	}
	for (unsigned s = 0; s < d->nstates; s++) {
		fprintf(out, "state %u:", s);
		if (s == d->dead) {
			fprintf(out, " dead\n");
			continue;
		}
		if (d->perms[s])
			fprintf(out, " perms 0x%" PRIx32, d->perms[s]);
		if (d->rule_off[s + 1] > d->rule_off[s]) {
			/* by permissions a state only knows the rules that may match */
			fprintf(out, d->perms_only ? " may " : " rules ");
			dfa_rules_print(d, s, out, ",");
		}
		fputc('\n', out);
		/* one line per target, classes ascending; targets by first class */
		bool *done = xcalloc(d->nclasses, sizeof(bool));
		for (unsigned c = 0; c < d->nclasses; c++) {
			unsigned t = dfa_next(d, s, c);
			if (done[c] || t == d->dead)
				continue;
			fprintf(out, " ");
			for (unsigned e = c; e < d->nclasses; e++) {
				if (!done[e] && dfa_next(d, s, e) == t) {
					done[e] = true;
					fprintf(out, " %u", e);
				}
			}
			fprintf(out, " -> %u\n", t);
		}
		free(done);
	}
}

int dfa_dump(const struct dfa *d, FILE *out)
{
	return MEM_PROTECT(-ENOMEM, (dfa_dump_body(d, out), 0));
}

static void dfa_dot_escape(const char *s, FILE *out)
{
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', out);
		fputc(*s, out);
	}
}

static void dfa_dump_dot_body(const struct dfa *d, FILE *out)
{
	char buf[1200];
	fprintf(out, "digraph dfa {\n\trankdir=LR;\n\tnode [shape=circle];\n");
	fprintf(out, "\tlabel=\"%s: %u states, %u classes\";\n", dfa_kind_name(d->kind), d->nstates,
		d->nclasses);
	for (unsigned s = 0; s < d->nstates; s++) {
		if (s == d->dead)
			continue;
		bool acc = d->perms_only ? d->perms[s] != 0 : d->rule_off[s + 1] > d->rule_off[s];
		fprintf(out, "\ts%u [%slabel=\"%u", s, acc ? "shape=doublecircle, " : "", s);
		if (d->perms[s])
			fprintf(out, "\\nperms 0x%" PRIx32, d->perms[s]);
		if (d->rule_off[s + 1] > d->rule_off[s]) {
			fprintf(out, d->perms_only ? "\\nmay " : "\\nrules ");
			dfa_rules_print(d, s, out, ",");
		}
		fprintf(out, "\"];\n");
	}
	for (unsigned s = 0; s < d->nstates; s++) {
		if (s == d->dead)
			continue;
		bool *done = xcalloc(d->nclasses, sizeof(bool));
		for (unsigned c = 0; c < d->nclasses; c++) {
			unsigned t = dfa_next(d, s, c);
			if (done[c] || t == d->dead)
				continue;
			struct glob_byteset set = { { 0 } };
			for (unsigned e = c; e < d->nclasses; e++) {
				if (!done[e] && dfa_next(d, s, e) == t) {
					done[e] = true;
					struct glob_byteset part;
					dfa_class_set(d, e, &part);
					for (unsigned w = 0; w < 4; w++)
						set.w[w] |= part.w[w];
				}
			}
			glob_byteset_format(&set, buf, sizeof(buf));
			fprintf(out, "\ts%u -> s%u [label=\"", s, t);
			dfa_dot_escape(buf, out);
			fprintf(out, "\"];\n");
		}
		free(done);
	}
	fprintf(out, "}\n");
}

int dfa_dump_dot(const struct dfa *d, FILE *out)
{
	return MEM_PROTECT(-ENOMEM, (dfa_dump_dot_body(d, out), 0));
}
