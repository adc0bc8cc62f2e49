/* SPDX-License-Identifier: GPL-2.0-only */
/* fuzz_glob.c: libFuzzer target for glob parsing (glob.h) and lowering to
 * an automaton (dfa.h).
 *
 * The input is up to FUZZ_GLOB_RULES lines, one glob each; the first byte
 * of a line picks what the rule does ('-' deny, '=' grant write, anything
 * else grant read, kept as part of the glob). A first line starting with
 * '$' lowers names (env) instead of paths. Every glob is parsed on its own
 * (an error must point inside it), then the rules are built into one
 * automaton twice, by permissions alone and with provenance; dfa.h
 * promises that reducing the second by permissions gives the first, table
 * for table, and both must answer every line (as a string) the same. */
#include "fuzz_policy.h"

#include "dfa.h"
#include "glob.h"
#include "ir.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_GLOB_RULES 8
/* provenance automata multiply with the rules: keep building them cheap */
#define FUZZ_GLOB_BUILD_STATES 16384

static void fuzz_glob_parse(const char *text)
{
	struct glob g;
	struct glob_error err;
	if (glob_parse(text, &g, &err) == 0) {
		fuzz_require(g.nalts >= 1 && g.nalts <= GLOB_MAX_ALTS);
		glob_dump(&g, fuzz_null());
		glob_fini(&g);
		return;
	}
	size_t len = strlen(text);
	fuzz_require(err.off <= len && err.len <= len - err.off);
	fuzz_require(err.msg[0] != '\0' && memchr(err.msg, '\0', sizeof(err.msg)) != NULL);
}

static void fuzz_tables_equal(const struct dfa *a, const struct dfa *b)
{
	struct dfa_tables ta, tb;
	dfa_tables_get(a, &ta);
	dfa_tables_get(b, &tb);
	fuzz_require(ta.nstates == tb.nstates && ta.nclasses == tb.nclasses && ta.dead == tb.dead);
	fuzz_require(memcmp(ta.class_of, tb.class_of, 256) == 0);
	fuzz_require(memcmp(ta.next, tb.next, (size_t)ta.nstates * ta.nclasses * sizeof(*ta.next)) == 0);
	fuzz_require(memcmp(ta.perms, tb.perms, ta.nstates * sizeof(*ta.perms)) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* a NUL-terminated copy; a glob ends at its first NUL, as in a policy */
	char *text = malloc(size + 1);
	fuzz_require(text != NULL);
	memcpy(text, data, size);
	text[size] = '\0';

	enum dfa_kind kind = DFA_KIND_PATH;
	char *line = text;
	if (*line == '$') {
		kind = DFA_KIND_NAME;
		line++;
	}
	struct dfa_rule rules[FUZZ_GLOB_RULES];
	size_t n = 0;
	while (n < FUZZ_GLOB_RULES) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		struct dfa_rule *r = &rules[n];
		memset(r, 0, sizeof(*r));
		r->glob = line;
		r->rule = (unsigned)n;
		r->loc = LOC_NONE;
		if (*line == '-')
			r->deny = IR_PERM_READ | IR_PERM_WRITE;
		else if (*line == '=')
			r->grant = IR_PERM_WRITE;
		else
			r->grant = IR_PERM_READ;
		fuzz_glob_parse(line);
		n++;
		if (!nl)
			break;
		line = nl + 1;
	}

	struct dfa_limit_report limit;
	struct dfa_build_opts o = {
		.sz = sizeof(o), .kind = kind, .max_states = FUZZ_MAX_STATES,
		.max_build_states = FUZZ_GLOB_BUILD_STATES, .perms_only = true, .limit = &limit,
	};
	struct diag_ctx dc;
	diag_init(&dc);
	struct dfa *perms = NULL, *prov = NULL;
	int rc = dfa_build(rules, n, &o, &perms, &dc);
	fuzz_require(rc == 0 || rc == -EINVAL || rc == -E2BIG);
	fuzz_require((rc == 0) == (dc.errors == 0));
	if (rc == -E2BIG)
		fuzz_require(limit.nrules <= 3);
	if (rc == 0) {
		o.perms_only = false;
		rc = dfa_build(rules, n, &o, &prov, &dc);
		/* the same globs parsed once; only the provenance product may be too big */
		fuzz_require(rc == 0 || rc == -E2BIG);
	}
	if (prov) {
		struct dfa *reduced = NULL;
		fuzz_require(dfa_perms_reduce(prov, &reduced) == 0);
		fuzz_tables_equal(perms, reduced);
		dfa_free(reduced);
		for (size_t i = 0; i < n; i++) {
			const char *s = rules[i].glob;
			uint32_t p1, p2;
			struct dfa_rules exact;
			dfa_match(perms, s, strlen(s), &p1, NULL);
			dfa_match(prov, s, strlen(s), &p2, &exact);
			fuzz_require(p1 == p2);
			/* provenance is exact: the globs themselves agree */
			unsigned *ids;
			size_t k = dfa_string_rules(perms, s, strlen(s), &ids);
			fuzz_require(k == exact.n && (k == 0 || memcmp(ids, exact.ids, k * sizeof(*ids)) == 0));
			free(ids);
		}
		dfa_dump(prov, fuzz_null());
	}
	if (perms)
		dfa_dump(perms, fuzz_null());
	dfa_free(prov);
	dfa_free(perms);
	diag_print(&dc, fuzz_null());
	diag_fini(&dc);
	free(text);
	return 0;
}
