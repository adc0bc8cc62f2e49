/* SPDX-License-Identifier: GPL-2.0-only */
/* test_dfa: the automaton's API: tables, provenance, limits, dumps. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "dfa.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct dfa *build(const struct dfa_rule *r, size_t n)
{
	struct dfa *d = NULL;
	assert_int_equal(dfa_build(r, n, NULL, &d, NULL), 0);
	assert_non_null(d);
	return d;
}

static char *dump_text(const struct dfa *d, bool dot)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (dot)
		dfa_dump_dot(d, f);
	else
		dfa_dump(d, f);
	fclose(f);
	return buf;
}

static uint32_t perms_of(const struct dfa *d, const char *s)
{
	uint32_t p;
	dfa_match(d, s, strlen(s), &p, NULL);
	return p;
}

/* Every table entry in range, the dead state closed and permission-less
 * (and, with provenance, matching no rule). */
static void check_tables_prov(const struct dfa *d, bool prov)
{
	struct dfa_tables t;
	dfa_tables_get(d, &t);
	assert_true(t.nstates >= 1 && t.nstates <= DFA_MAX_STATES);
	assert_true(t.nclasses >= 1 && t.nclasses <= 256);
	assert_int_equal(t.start, 0);
	for (unsigned b = 0; b < 256; b++)
		assert_true(t.class_of[b] < t.nclasses);
	for (size_t i = 0; i < (size_t)t.nstates * t.nclasses; i++)
		assert_true(t.next[i] < t.nstates);
	/* byte 0 never leads to permissions */
	for (unsigned s = 0; s < t.nstates; s++)
		assert_int_equal(t.perms[t.next[s * t.nclasses + t.class_of[0]]], 0);
	if (t.dead != DFA_STATE_NONE) {
		assert_int_equal(t.dead, t.nstates - 1);
		assert_int_equal(t.perms[t.dead], 0);
		if (prov)
			assert_int_equal(dfa_state_rules(d, t.dead).n, 0);
		for (unsigned c = 0; c < t.nclasses; c++)
			assert_int_equal(t.next[t.dead * t.nclasses + c], t.dead);
	}
	/* every class has a non-NUL example, or is the class of NUL alone */
	for (unsigned c = 0; c < t.nclasses; c++) {
		int e = dfa_class_example(d, c);
		if (e < 0)
			assert_int_equal(c, t.class_of[0]);
		else
			assert_true(e > 0 && t.class_of[e] == c);
	}
}

static void check_tables(const struct dfa *d)
{
	check_tables_prov(d, true);
}

/* A permission-only automaton: may-match rules cover the exact ones. */
static void check_may_rules(const struct dfa *d, const struct dfa *p, const char *s)
{
	struct dfa_rules exact, may;
	unsigned *ids;
	dfa_match(d, s, strlen(s), NULL, &exact);
	dfa_match(p, s, strlen(s), NULL, &may);
	size_t n = dfa_string_rules(p, s, strlen(s), &ids);
	assert_int_equal(n, exact.n);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(ids[i], exact.ids[i]);
		bool in = false;
		for (size_t j = 0; j < may.n; j++)
			in |= may.ids[j] == ids[i];
		assert_true(in);
	}
	free(ids);
}

static void test_dfa_small(void **state)
{
	(void)state;
	struct dfa_rule r[] = { { .glob = "/a", .grant = 1, .rule = 4 } };
	struct dfa *d = build(r, 1);
	struct dfa_stats st;
	dfa_stats_get(d, &st);
	/* 0 -'/'-> 1 -'a'-> 2, and the dead state 3; classes: other, '/', 'a' */
	assert_int_equal(st.states, 4);
	assert_int_equal(st.classes, 3);
	assert_int_equal(st.transitions, 2);
	assert_int_equal(st.accepting, 1);
	struct dfa_tables t;
	dfa_tables_get(d, &t);
	assert_int_equal(t.dead, 3);
	assert_int_equal(t.class_of['/'], 1);
	assert_int_equal(t.class_of['a'], 2);
	assert_int_equal(t.class_of[0], 0);
	assert_int_equal(t.class_of['b'], 0);
	uint32_t p;
	struct dfa_rules rules;
	assert_int_equal(dfa_match(d, "/a", 2, &p, &rules), 2);
	assert_int_equal(p, 1);
	assert_int_equal(rules.n, 1);
	assert_int_equal(rules.ids[0], 4);
	assert_int_equal(dfa_match(d, "/ab", 3, &p, &rules), 3);
	assert_int_equal(p, 0);
	assert_int_equal(rules.n, 0);
	assert_int_equal(dfa_match(d, "", 0, NULL, NULL), 0);
	assert_int_equal(dfa_kind_get(d), DFA_KIND_PATH);
	assert_int_equal(dfa_rule_count(d), 1);
	assert_string_equal(dfa_rule_get(d, 0)->glob, "/a");
	check_tables(d);
	dfa_free(d);
}

static void test_dfa_no_rules(void **state)
{
	(void)state;
	struct dfa *d = build(NULL, 0);
	struct dfa_tables t;
	dfa_tables_get(d, &t);
	assert_int_equal(t.nstates, 1);
	assert_int_equal(t.nclasses, 1);
	assert_int_equal(t.dead, 0);
	assert_int_equal(perms_of(d, "/etc/passwd"), 0);
	check_tables(d);
	dfa_free(d);

	struct dfa_build_opts o = { .sz = sizeof(o), .perms_only = true };
	assert_int_equal(dfa_build(NULL, 0, &o, &d, NULL), 0);
	dfa_tables_get(d, &t);
	assert_int_equal(t.nstates, 1);
	assert_int_equal(t.dead, 0);
	check_tables(d);
	dfa_free(d);
}

/* "**" matches every string, but no glob matches NUL: NUL is the one way
 * into the dead state. */
static void test_dfa_nul(void **state)
{
	(void)state;
	struct dfa_rule r[] = { { .glob = "**", .grant = 2, .rule = 0 } };
	struct dfa *d = build(r, 1);
	struct dfa_tables t;
	dfa_tables_get(d, &t);
	assert_int_equal(t.nstates, 2);
	assert_int_equal(t.dead, 1);
	assert_int_equal(perms_of(d, ""), 2);
	assert_int_equal(perms_of(d, "/x/y"), 2);
	assert_int_equal(dfa_match(d, "a\0b", 3, NULL, NULL), t.dead);
	check_tables(d);
	dfa_free(d);
}

/* Grants union, denies subtract, provenance names every matching rule. */
static void test_dfa_semantics(void **state)
{
	(void)state;
	struct dfa_rule r[] = {
		{ .glob = "/home/you/project/**", .grant = 1, .rule = 0 },
		{ .glob = "/home/you/project/target/**", .grant = 2, .rule = 1 },
		{ .glob = "**/*.pem", .deny = 3, .rule = 2 },
		{ .glob = "/home/you/project/secret", .deny = 1, .rule = 3 },
		{ .glob = "/home/you/project/noop", .rule = 4 },
	};
	struct dfa *d = build(r, 5);
	static const struct {
		const char *s;
		uint32_t perms;
		unsigned rules[4];
		size_t n;
	} rows[] = {
		{ "/home/you/project/src/main.rs", 1, { 0 }, 1 },
		{ "/home/you/project/target/debug/x", 3, { 0, 1 }, 2 },
		{ "/home/you/project/target/key.pem", 0, { 0, 1, 2 }, 3 },
		{ "/home/you/project/secret", 0, { 0, 3 }, 2 },
		{ "/home/you/project/noop", 1, { 0, 4 }, 2 },
		{ "/etc/key.pem", 0, { 2 }, 1 },
		{ "/home/you/projects", 0, { 0 }, 0 },
		{ "/home/you/project", 0, { 0 }, 0 },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		uint32_t p;
		struct dfa_rules got;
		dfa_match(d, rows[i].s, strlen(rows[i].s), &p, &got);
		assert_int_equal(p, rows[i].perms);
		assert_int_equal(got.n, rows[i].n);
		for (size_t k = 0; k < got.n; k++)
			assert_int_equal(got.ids[k], rows[i].rules[k]);
	}
	check_tables(d);
	dfa_free(d);
}

/* Hidden means hidden: a deny with cover_dir (an [fs] deny) of "X/" "**"
 * takes X itself too, per brace alternative, and nothing beside X; the
 * same globs without cover_dir leave X alone (the control). */
static void test_dfa_cover_dir(void **state)
{
	(void)state;
	static const struct {
		const char *deny, *s;
		uint32_t with, without;    /* perms of s: deny with cover_dir, without */
	} rows[] = {
		{ "/h/.ssh/**", "/h/.ssh", 0, 3 },
		{ "/h/.ssh/**", "/h/.ssh/id", 0, 0 },
		{ "/h/.ssh/**", "/h/.sshx", 3, 3 },
		{ "/h/.ssh/**", "/h", 3, 3 },
		{ "**/secret/**", "/h/a/secret", 0, 3 },
		{ "**/secret/**", "/h/a/secrets", 3, 3 },
		{ "/h/{a,b/c}/**", "/h/b/c", 0, 3 },
		{ "/h/{a,b/c}/**", "/h/b", 3, 3 },
		{ "/h/{a/**,b}", "/h/a", 0, 3 },
		{ "/h/*.d/**", "/h/x.d", 0, 3 },
		{ "/h/x/*", "/h/x", 3, 3 },           /* no trailing '**': nothing more */
		{ "/h/x*", "/h/x", 0, 0 },
		{ "/**", "/", 0, 0 },                 /* "/dir/" "**" matches "/dir/" already */
		{ "/**", "/h", 0, 0 },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		for (int cover = 0; cover < 2; cover++) {
			struct dfa_rule r[] = {
				{ .glob = "**", .grant = 3, .rule = 0 },
				{ .glob = rows[i].deny, .deny = 3, .rule = 1, .cover_dir = cover },
			};
			struct dfa *d = build(r, 2);
			uint32_t p;
			struct dfa_rules got;
			dfa_match(d, rows[i].s, strlen(rows[i].s), &p, &got);
			uint32_t want = cover ? rows[i].with : rows[i].without;
			if (p != want)
				fail_msg("deny '%s'%s: '%s' has perms %u, want %u", rows[i].deny,
					 cover ? " (cover_dir)" : "", rows[i].s, p, want);
			/* the exact rules of one input agree with the table */
			unsigned *ids;
			size_t n = dfa_string_rules(d, rows[i].s, strlen(rows[i].s), &ids);
			assert_int_equal(n, want == 3 ? 1 : 2);
			free(ids);
			dfa_free(d);
		}
	}
}

/* Marks: a deny rule that "grants" a bit no rule denies leaves it on what it
 * matches, and only there (an [fs] deny's IR_PERM_DENIED); permissions stay
 * those of the same rules without the mark, and a child that adds a marked
 * deny does not widen its parent, while one that adds a grant does (the
 * control). */
#define MARK 0x10u
static void test_dfa_marks(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		uint32_t perms;            /* with the mark; without it: perms & ~MARK */
	} rows[] = {
		{ "/h/src/a.c", 3 },
		{ "/h/.ssh", MARK },       /* cover_dir: X of X/ ** */
		{ "/h/.ssh/id", MARK },
		{ "/h/src/k.pem", MARK },
		{ "/etc/k.pem", MARK },    /* denied though never granted */
		{ "/etc/passwd", 0 },      /* merely not granted: no mark */
		{ "/h/.sshx", 3 },
		{ "/", 0 },
	};
	const struct dfa_rule marked[] = {
		{ .glob = "/h/**", .grant = 3, .rule = 0 },
		{ .glob = "/h/.ssh/**", .grant = MARK, .deny = 3, .rule = 1, .cover_dir = true },
		{ .glob = "**/*.pem", .grant = MARK, .deny = 3, .rule = 2, .cover_dir = true },
	};
	struct dfa_rule plain[3];
	memcpy(plain, marked, sizeof(plain));
	plain[1].grant = plain[2].grant = 0;
	for (int perms_only = 0; perms_only < 2; perms_only++) {
		struct dfa_build_opts o = { .sz = sizeof(o), .kind = DFA_KIND_PATH,
					    .perms_only = perms_only, .marks = MARK };
		struct dfa *m = NULL, *p = NULL, *wide = NULL;
		assert_int_equal(dfa_build(marked, 3, &o, &m, NULL), 0);
		o.marks = 0;
		assert_int_equal(dfa_build(plain, 3, &o, &p, NULL), 0);
		assert_int_equal(dfa_marks_get(m), MARK);
		for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
			if (perms_of(m, rows[i].s) != rows[i].perms)
				fail_msg("'%s': perms 0x%x, want 0x%x", rows[i].s, perms_of(m, rows[i].s),
					 rows[i].perms);
			assert_int_equal(perms_of(p, rows[i].s), rows[i].perms & ~MARK);
		}
		check_tables(m);
		/* the marked child of the unmarked parent and the other way
		 * round: no widening either way */
		struct dfa_widening w;
		assert_int_equal(dfa_widening_find(m, p, &w), 0);
		assert_false(w.found);
		dfa_widening_fini(&w);
		assert_int_equal(dfa_widening_find(p, m, &w), 0);
		assert_false(w.found);
		dfa_widening_fini(&w);
		/* the control: a marked child that also grants /etc/passwd */
		struct dfa_rule more[4];
		memcpy(more, marked, sizeof(marked));
		more[3] = (struct dfa_rule){ .glob = "/etc/passwd", .grant = 1, .rule = 3 };
		o.marks = MARK;
		assert_int_equal(dfa_build(more, 4, &o, &wide, NULL), 0);
		assert_int_equal(dfa_widening_find(wide, p, &w), 0);
		assert_true(w.found);
		assert_string_equal(w.example, "/etc/passwd");
		assert_int_equal(w.extra, 1);
		dfa_widening_fini(&w);
		dfa_free(wide);
		dfa_free(m);
		dfa_free(p);
	}
}

/* Entries may share a rule id (one policy rule lowered twice): the id is
 * named once. */
static void test_dfa_shared_rule_id(void **state)
{
	(void)state;
	struct dfa_rule r[] = {
		{ .glob = "/a/*", .grant = 1, .rule = 9 },
		{ .glob = "/a/b", .grant = 2, .rule = 9 },
		{ .glob = "/a/c", .grant = 4, .rule = 3 },
	};
	struct dfa *d = build(r, 3);
	struct dfa_rules got;
	uint32_t p;
	dfa_match(d, "/a/b", 4, &p, &got);
	assert_int_equal(p, 3);
	assert_int_equal(got.n, 1);
	assert_int_equal(got.ids[0], 9);
	dfa_match(d, "/a/c", 4, &p, &got);
	assert_int_equal(p, 5);
	assert_int_equal(got.n, 2);
	assert_int_equal(got.ids[0], 3);
	assert_int_equal(got.ids[1], 9);
	dfa_free(d);
}

static const char dump_expect[] =
	"dfa path: 11 states, 8 classes, 40 transitions, start 0, dead 10\n"
	"rule 0: grant 0x1 deny 0x0 '/usr/**'\n"
	"rule 1: grant 0x0 deny 0x1 '/usr/sec*'\n"
	"class 0: \\x00\n"
	"class 1: ^'/' 'c' 'e' 'r'-'s' 'u'\n"
	"class 2: '/'\n"
	"class 3: 'c'\n"
	"class 4: 'e'\n"
	"class 5: 'r'\n"
	"class 6: 's'\n"
	"class 7: 'u'\n"
	"state 0:\n"
	"  2 -> 1\n"
	"state 1:\n"
	"  7 -> 2\n"
	"state 2:\n"
	"  6 -> 3\n"
	"state 3:\n"
	"  5 -> 4\n"
	"state 4:\n"
	"  2 -> 5\n"
	"state 5: perms 0x1 rules 0\n"
	"  1 2 3 4 5 7 -> 6\n"
	"  6 -> 7\n"
	"state 6: perms 0x1 rules 0\n"
	"  1 2 3 4 5 6 7 -> 6\n"
	"state 7: perms 0x1 rules 0\n"
	"  1 2 3 5 6 7 -> 6\n"
	"  4 -> 8\n"
	"state 8: perms 0x1 rules 0\n"
	"  1 2 4 5 6 7 -> 6\n"
	"  3 -> 9\n"
	"state 9: rules 0,1\n"
	"  1 3 4 5 6 7 -> 9\n"
	"  2 -> 6\n"
	"state 10: dead\n";

static void test_dfa_dump(void **state)
{
	(void)state;
	struct dfa_rule r[] = {
		{ .glob = "/usr/**", .grant = 1, .rule = 0 },
		{ .glob = "/usr/sec*", .deny = 1, .rule = 1 },
	};
	struct dfa_rule rev[] = { r[1], r[0] };
	struct dfa *d = build(r, 2), *d2 = build(rev, 2);
	char *a = dump_text(d, false), *b = dump_text(d2, false);
	assert_string_equal(a, dump_expect);
	/* the rule lines follow input order; everything after them is equal */
	assert_string_equal(strstr(a, "class 0"), strstr(b, "class 0"));
	free(a);
	free(b);

	char *dot = dump_text(d, true);
	assert_non_null(strstr(dot, "digraph dfa {\n"));
	assert_non_null(strstr(dot, "\ts9 [shape=doublecircle, label=\"9\\nrules 0,1\"];\n"));
	assert_non_null(strstr(dot, "\ts6 -> s6 [label=\"any\"];\n"));
	assert_non_null(strstr(dot, "\ts5 -> s7 [label=\"'s'\"];\n"));
	assert_null(strstr(dot, "s10"));   /* the dead state is left out */
	free(dot);
	dfa_free(d);
	dfa_free(d2);
}

/* Quotes and backslashes in edge labels are escaped for Graphviz. */
static void test_dfa_dump_dot_escape(void **state)
{
	(void)state;
	struct dfa_rule r[] = { { .glob = "/\\\\\"", .grant = 1, .rule = 0 } };
	struct dfa *d = build(r, 1);
	char *dot = dump_text(d, true);
	assert_non_null(strstr(dot, "[label=\"\\\\x5c\"]"));
	assert_non_null(strstr(dot, "[label=\"'\\\"'\"]"));
	free(dot);
	dfa_free(d);
}

/* "n-th byte from the end is 'a'" needs 2^n states: the build stops and
 * names that rule, not the innocent ones. */
static void test_dfa_build_limit(void **state)
{
	(void)state;
	const char *text = "x = [\"/etc/passwd\", \"/x/*a?????????????\", \"/usr/**\"]\n";
	struct source *src = source_new("p.toml", text, strlen(text));
	const char *g = strstr(text, "\"/x/");
	struct dfa_rule r[] = {
		{ .glob = "/etc/passwd", .grant = 1, .rule = 0, .loc = { src, 5, 13 } },
		{ .glob = "/x/*a?????????????", .grant = 1, .rule = 1,
		  .loc = { src, (uint32_t)(g - text), 20 } },
		{ .glob = "/usr/**", .grant = 1, .rule = 2, .loc = { src, 42, 9 } },
	};
	struct dfa_limit_report rep;
	struct dfa_build_opts o = { .sz = sizeof(o), .max_build_states = 1000, .limit = &rep };
	struct diag_ctx dc;
	struct dfa *d = (struct dfa *)1;
	diag_init(&dc);
	assert_int_equal(dfa_build(r, 3, &o, &d, &dc), -E2BIG);
	assert_null(d);
	assert_true(rep.nrules >= 1);
	assert_int_equal(rep.rules[0], 1);
	assert_int_equal(rep.built, 1001);   /* stopped at the first state past the bound */
	assert_false(rep.minimal);
	assert_true(rep.states[0] > 900);
	for (unsigned i = 1; i < rep.nrules; i++)
		assert_true(rep.states[i] < rep.states[0] / 10);
	assert_int_equal(dc.errors, 1);
	assert_string_equal(dc.items[0].msg,
			    "the path automaton is too large: building it reached 1001 states, "
			    "more than the limit of 1000");
	assert_int_equal(dc.items[0].loc.off, (uint32_t)(g - text));
	assert_true(dc.items[0].nnotes >= 1);
	assert_non_null(strstr(dc.items[0].notes[0].msg, "glob '/x/*a?????????????" "' accounts for"));
	diag_fini(&dc);

	/* the same rules fit with the default bounds */
	assert_int_equal(dfa_build(r, 3, NULL, &d, NULL), 0);
	struct dfa_stats st;
	dfa_stats_get(d, &st);
	assert_true(st.states > 8192);
	assert_int_equal(perms_of(d, "/x/qqqa0123456789bcd"), 1);
	assert_int_equal(perms_of(d, "/x/qqqb0123456789bcd"), 0);
	dfa_free(d);
	source_free(src);
}

/* Many rules that may match anywhere: no one rule is to blame, and the
 * diagnostic says so. */
static void test_dfa_build_limit_crowd(void **state)
{
	(void)state;
	static const char *const globs[] = {
		"/usr/**", "**/*.pem", "**/*.{key,p12,pfx}", "**/.env", "**/.env.*", "**/.git/config",
		"**/id_{rsa,ed25519,ecdsa}*", "**/secrets/**", "**/*credentials*", "**/.netrc",
		"**/.npmrc", "**/*token*", "**/*secret*",
	};
	struct dfa_rule r[16];
	size_t n = sizeof(globs) / sizeof(globs[0]);
	for (size_t i = 0; i < n; i++)
		r[i] = (struct dfa_rule){ .glob = globs[i], .grant = i ? 0 : 1, .deny = i ? 1 : 0,
					  .rule = (unsigned)i };
	struct dfa_limit_report rep;
	struct dfa_build_opts o = { .sz = sizeof(o), .max_build_states = 1000, .limit = &rep };
	struct diag_ctx dc;
	struct dfa *d;
	diag_init(&dc);
	assert_int_equal(dfa_build(r, n, &o, &d, &dc), -E2BIG);
	assert_true(rep.crowd > 3);
	assert_int_equal(dc.items[0].nnotes, 3);
	assert_non_null(strstr(dc.items[0].notes[1].msg, "globs take part in most states"));
	assert_non_null(strstr(dc.items[0].notes[2].msg, "raise it with --limit build-states=N"));
	diag_fini(&dc);
	/* by permissions the same rules are small */
	o.perms_only = true;
	o.max_states = 200;
	assert_int_equal(dfa_build(r, n, &o, &d, NULL), 0);
	dfa_free(d);
}

/* The minimal automaton itself may be over max_states. */
static void test_dfa_final_limit(void **state)
{
	(void)state;
	struct dfa_rule r[] = { { .glob = "/x/*a???????", .grant = 1, .rule = 5 } };
	struct dfa_limit_report rep;
	struct dfa_build_opts o = { .sz = sizeof(o), .max_states = 100, .limit = &rep };
	struct diag_ctx dc;
	struct dfa *d;
	diag_init(&dc);
	assert_int_equal(dfa_build(r, 1, &o, &d, &dc), -E2BIG);
	assert_int_equal(rep.nrules, 1);
	assert_int_equal(rep.rules[0], 5);
	assert_true(rep.minimal);
	assert_true(rep.built > 100);
	char want[128];
	snprintf(want, sizeof(want), "the path automaton is too large: its minimal form has %zu states, "
		 "more than the limit of 100", rep.built);
	assert_string_equal(dc.items[0].msg, want);
	diag_fini(&dc);
	o.max_states = 1000;
	assert_int_equal(dfa_build(r, 1, &o, &d, NULL), 0);
	dfa_free(d);
}

/* Options from an older, shorter struct still work. */
static void test_dfa_opts_size(void **state)
{
	(void)state;
	struct dfa_rule r[] = { { .glob = "HOME", .grant = 1, .rule = 0 } };
	struct dfa_build_opts o = { .sz = offsetof(struct dfa_build_opts, max_states), .kind = DFA_KIND_NAME,
				    .max_states = 1 };
	struct dfa *d;
	assert_int_equal(dfa_build(r, 1, &o, &d, NULL), 0);
	assert_int_equal(dfa_kind_get(d), DFA_KIND_NAME);
	assert_int_equal(perms_of(d, "HOME"), 1);
	dfa_free(d);
}

static void test_dfa_perms_reduce(void **state)
{
	(void)state;
	struct dfa_rule r[] = {
		{ .glob = "/usr/**", .grant = 1, .rule = 0 },
		{ .glob = "/usr/lib/**", .grant = 1, .rule = 1 },
		{ .glob = "/usr/lib/*.so", .grant = 1, .rule = 2 },
		{ .glob = "**/*.pem", .deny = 1, .rule = 3 },
		{ .glob = "**/*.key", .deny = 1, .rule = 4 },
		{ .glob = "/tmp/**", .grant = 3, .rule = 5 },
	};
	struct dfa *d = build(r, 6), *p;
	assert_int_equal(dfa_perms_reduce(d, &p), 0);
	struct dfa_stats sd, sp;
	dfa_stats_get(d, &sd);
	dfa_stats_get(p, &sp);
	assert_true(sp.states < sd.states);
	static const char *const paths[] = {
		"/usr/bin/cc", "/usr/lib/libc.so", "/usr/lib/x/y.pem", "/usr/lib/a.key", "/tmp/a/b",
		"/tmp/k.pem", "/etc/passwd", "/usr", "/usr/", "/tmp/", "",
	};
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		uint32_t a, b;
		dfa_match(d, paths[i], strlen(paths[i]), &a, NULL);
		dfa_match(p, paths[i], strlen(paths[i]), &b, NULL);
		assert_int_equal(a, b);
		check_may_rules(d, p, paths[i]);
	}
	check_tables_prov(p, false);

	/* the option (built rule by rule) gives the same automaton */
	struct dfa_build_opts o = { .sz = sizeof(o), .perms_only = true };
	struct dfa *q;
	assert_int_equal(dfa_build(r, 6, &o, &q, NULL), 0);
	char *x = dump_text(p, false), *y = dump_text(q, false);
	assert_string_equal(x, y);
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		check_may_rules(d, q, paths[i]);
	free(x);
	free(y);
	dfa_free(q);
	dfa_free(p);
	dfa_free(d);
}

/* A realistic filesystem policy builds quickly and fits the u16 table. */
static void test_dfa_realistic(void **state)
{
	(void)state;
	static const struct {
		const char *g;
		uint32_t grant, deny;
	} pol[] = {
		{ "/usr/**", 1, 0 }, { "/lib/**", 1, 0 }, { "/lib64/**", 1, 0 },
		{ "/etc/ld.so.cache", 1, 0 }, { "/etc/{passwd,group,hosts,resolv.conf,nsswitch.conf}", 1, 0 },
		{ "/home/you/project/**", 1, 0 }, { "/home/you/.cargo/**", 1, 0 },
		{ "/home/you/.rustup/**", 1, 0 }, { "/tmp/bee-*/**", 3, 0 },
		{ "/home/you/project/target/**", 3, 0 }, { "/home/you/.ssh/**", 0, 3 },
		{ "**/*.pem", 0, 3 }, { "**/*.{key,p12,pfx}", 0, 3 }, { "**/.env", 0, 3 },
		{ "**/.env.*", 0, 3 }, { "**/.git/config", 0, 3 }, { "**/node_modules/**", 3, 0 },
		{ "/proc/self/**", 1, 0 }, { "/dev/{null,zero,urandom,tty}", 3, 0 },
		{ "/home/*/.{aws,gnupg,kube,docker}/**", 0, 3 }, { "**/id_{rsa,ed25519,ecdsa}*", 0, 3 },
		{ "**/secrets/**", 0, 3 }, { "**/*credentials*", 0, 3 },
	};
	struct dfa_rule r[sizeof(pol) / sizeof(pol[0])];
	for (size_t i = 0; i < sizeof(pol) / sizeof(pol[0]); i++)
		r[i] = (struct dfa_rule){ .glob = pol[i].g, .grant = pol[i].grant, .deny = pol[i].deny,
					  .rule = (unsigned)i };
	struct dfa *d = build(r, sizeof(pol) / sizeof(pol[0])), *p;
	assert_int_equal(perms_of(d, "/home/you/project/src/lib.rs"), 1);
	assert_int_equal(perms_of(d, "/home/you/project/target/debug/build"), 3);
	assert_int_equal(perms_of(d, "/home/you/project/.env"), 0);
	assert_int_equal(perms_of(d, "/home/you/project/node_modules/x/aws_credentials.json"), 0);
	assert_int_equal(perms_of(d, "/home/you/project/node_modules/x/index.js"), 3);
	assert_int_equal(perms_of(d, "/home/you/.ssh/config"), 0);
	assert_int_equal(perms_of(d, "/etc/hosts"), 1);
	assert_int_equal(perms_of(d, "/etc/shadow"), 0);
	assert_int_equal(perms_of(d, "/dev/null"), 3);
	check_tables(d);
	assert_int_equal(dfa_perms_reduce(d, &p), 0);
	struct dfa_stats sd, sp;
	dfa_stats_get(d, &sd);
	dfa_stats_get(p, &sp);
	print_message("realistic policy: %u rules, nfa %u, subset %u, minimal %u states (%u with "
		      "permissions only), %u classes\n",
		      (unsigned)(sizeof(pol) / sizeof(pol[0])), sd.nfa_states, sd.subset_states,
		      sd.states, sp.states, sd.classes);
	check_tables_prov(p, false);
	dfa_free(p);
	dfa_free(d);
}

/* Built rule by rule, a limit names the rule whose automaton broke it. */
static void test_dfa_fold_limit(void **state)
{
	(void)state;
	struct dfa_rule r[] = {
		{ .glob = "/etc/passwd", .grant = 1, .rule = 0 },
		{ .glob = "/x/*a?????????????", .grant = 1, .rule = 1 },
		{ .glob = "/usr/**", .grant = 1, .rule = 2 },
	};
	struct dfa_limit_report rep;
	struct dfa_build_opts o = { .sz = sizeof(o), .perms_only = true, .max_build_states = 1000,
				    .limit = &rep };
	struct diag_ctx dc;
	struct dfa *d;
	diag_init(&dc);
	assert_int_equal(dfa_build(r, 3, &o, &d, &dc), -E2BIG);
	assert_false(rep.minimal);
	assert_int_equal(rep.rules[0], 1);
	assert_string_equal(dc.items[0].msg,
			    "the path automaton is too large: building it reached 1001 states, "
			    "more than the limit of 1000");
	diag_fini(&dc);

	o.max_build_states = 0;
	o.max_states = 100;
	diag_init(&dc);
	assert_int_equal(dfa_build(r, 3, &o, &d, &dc), -E2BIG);
	assert_true(rep.minimal);
	assert_int_equal(rep.rules[0], 1);
	assert_true(rep.built > 100);
	char want[128];
	snprintf(want, sizeof(want), "the path automaton is too large: its minimal form has %zu states, "
		 "more than the limit of 100", rep.built);
	assert_string_equal(dc.items[0].msg, want);
	diag_fini(&dc);
}

/* Many independent rules: with provenance every rule's progress multiplies
 * the states; by permissions, built rule by rule, the table stays small. */
static void test_dfa_many_rules(void **state)
{
	(void)state;
	static const char *const deny[] = {
		"**/*.pem", "**/*.{key,p12,pfx}", "**/.env", "**/.env.*", "**/.git/config",
		"/home/*/.{aws,gnupg,kube,docker}/**", "**/id_{rsa,ed25519,ecdsa}*", "**/secrets/**",
		"**/*credentials*", "**/.netrc", "**/.npmrc", "**/.pypirc", "**/*.keystore", "**/*.jks",
		"**/.htpasswd", "**/*secret*", "**/*.kdbx", "**/.bash_history", "**/.zsh_history",
		"**/*token*", "**/.docker/config.json", "**/*.ovpn", "**/*.sqlite", "**/Cookies",
		"**/*password*", "**/.gitconfig", "**/*.gpg", "**/*.asc", "**/.vault-token",
		"**/kubeconfig*", "**/*.ppk", "/home/you/.ssh/**",
	};
	static const char *const read[] = {
		"/usr/**", "/lib/**", "/lib64/**", "/etc/ld.so.cache",
		"/etc/{passwd,group,hosts,resolv.conf,nsswitch.conf}", "/home/you/project/**",
		"/home/you/.cargo/**", "/home/you/.rustup/**", "/proc/self/**", "/sys/fs/cgroup/**",
		"/opt/**", "/var/lib/dpkg/**", "/home/you/go/**", "/home/you/.npm/**",
		"/home/you/.cache/**", "/snap/**", "/etc/ssl/certs/**", "/usr/share/zoneinfo/**",
	};
	static const char *const write[] = {
		"/tmp/bee-*/**", "/home/you/project/target/**", "**/node_modules/**",
		"/dev/{null,zero,urandom,tty}", "/home/you/.cache/bee/**",
	};
	struct dfa_rule r[64];
	size_t n = 0;
	for (size_t i = 0; i < sizeof(read) / sizeof(read[0]); i++, n++)
		r[n] = (struct dfa_rule){ .glob = read[i], .grant = 1, .rule = (unsigned)n };
	for (size_t i = 0; i < sizeof(write) / sizeof(write[0]); i++, n++)
		r[n] = (struct dfa_rule){ .glob = write[i], .grant = 3, .rule = (unsigned)n };
	for (size_t i = 0; i < sizeof(deny) / sizeof(deny[0]); i++, n++)
		r[n] = (struct dfa_rule){ .glob = deny[i], .deny = 3, .rule = (unsigned)n };
	struct dfa_build_opts o = { .sz = sizeof(o), .perms_only = true };
	struct dfa *d;
	assert_int_equal(dfa_build(r, n, &o, &d, NULL), 0);
	struct dfa_stats st;
	dfa_stats_get(d, &st);
	print_message("%zu rules by permissions: %u states, %u classes, largest intermediate %u\n", n,
		      st.states, st.classes, st.subset_states);
	assert_true(st.states < 2000);
	assert_int_equal(perms_of(d, "/home/you/project/src/main.rs"), 1);
	assert_int_equal(perms_of(d, "/home/you/project/target/x"), 3);
	assert_int_equal(perms_of(d, "/home/you/project/api_token.txt"), 0);
	assert_int_equal(perms_of(d, "/home/you/.cache/bee/x"), 3);
	assert_int_equal(perms_of(d, "/home/you/.cache/pip/x"), 1);
	assert_int_equal(perms_of(d, "/usr/lib/ssl/private/a.pem"), 0);
	unsigned *ids;
	size_t k = dfa_string_rules(d, "/home/you/project/target/secrets/x.pem", 38, &ids);
	/* project, target, secrets and .pem; "*secret*" looks at the last segment only */
	assert_int_equal(k, 4);
	free(ids);
	k = dfa_string_rules(d, "/home/you/project/target/my_secret.pem", 38, &ids);
	assert_int_equal(k, 4);
	free(ids);
	check_tables_prov(d, false);
	dfa_free(d);
}

/* Directories laid out alike: by permissions, the subset states of one
 * are the other's (dfa_subset_canonical), so the largest automaton built
 * on the way grows by the few states of each directory's name, not by
 * its whole layout; the tables and the may-sets are those of a fold
 * rule by rule (the provenance build, reduced). */
static void test_dfa_alike_dirs(void **state)
{
	(void)state;
	static const char *const layout[][2] = {
		{ "lib/**", "r" }, { "**/gen.mk", "r" }, { "src/{io,net}/[a-z]*.c", "r" },
		{ "build/*.o", "w" }, { "log/db-?.log", "w" }, { "**/auth.pem", "d" }, { "core/secret/**", "d" },
	};
	enum { L = sizeof(layout) / sizeof(layout[0]), DIRS = 48 };
	struct dfa_rule r[L * DIRS];
	char text[L * DIRS][64];
	size_t one = 0, n = 0;
	for (unsigned dir = 0; dir < DIRS; dir++) {
		for (size_t i = 0; i < L; i++, n++) {
			snprintf(text[n], sizeof(text[n]), "/srv/team%u/svc%u/%s", dir / 8, dir % 8, layout[i][0]);
			char k = layout[i][1][0];
			r[n] = (struct dfa_rule){ .glob = text[n], .grant = k == 'r' ? 1 : k == 'w' ? 3 : 0,
						  .deny = k == 'd' ? 3 : 0, .rule = (unsigned)n };
		}
		if (dir == 0) {
			struct dfa_build_opts o = { .sz = sizeof(o), .perms_only = true };
			struct dfa *d;
			struct dfa_stats st;
			assert_int_equal(dfa_build(r, n, &o, &d, NULL), 0);
			dfa_stats_get(d, &st);
			one = st.subset_states;
			dfa_free(d);
		}
	}
	struct dfa_build_opts o = { .sz = sizeof(o), .perms_only = true };
	struct dfa *d, *p, *reduced;
	struct dfa_stats st;
	assert_int_equal(dfa_build(r, n, &o, &d, NULL), 0);
	dfa_stats_get(d, &st);
	print_message("%u directories laid out alike: largest automaton on the way %u states (one "
		      "directory: %zu), %u once minimal\n", (unsigned)DIRS, st.subset_states, one, st.states);
	/* each directory adds its name's few states; its layout is shared */
	assert_true(st.subset_states < one + DIRS * 12);
	o.perms_only = false;
	assert_int_equal(dfa_build(r, n, &o, &p, NULL), 0);
	assert_int_equal(dfa_perms_reduce(p, &reduced), 0);
	struct dfa_tables td, tr;
	dfa_tables_get(d, &td);
	dfa_tables_get(reduced, &tr);
	assert_int_equal(td.nstates, tr.nstates);
	assert_int_equal(td.nclasses, tr.nclasses);
	assert_memory_equal(td.next, tr.next, (size_t)td.nstates * td.nclasses * sizeof(*td.next));
	assert_memory_equal(td.perms, tr.perms, td.nstates * sizeof(*td.perms));
	/* the may-sets are exact: those of the reduced provenance automaton */
	for (unsigned s = 0; s < td.nstates; s++) {
		struct dfa_rules a = dfa_state_rules(d, s), b = dfa_state_rules(reduced, s);
		assert_int_equal(a.n, b.n);
		if (a.n)
			assert_memory_equal(a.ids, b.ids, a.n * sizeof(*a.ids));
	}
	check_may_rules(p, d, "/srv/team3/svc5/lib/x/gen.mk");
	check_may_rules(p, d, "/srv/team5/svc7/src/net/auth.pem");
	assert_int_equal(perms_of(d, "/srv/team5/svc7/src/net/a.c"), 1);
	assert_int_equal(perms_of(d, "/srv/team5/svc7/core/secret/a.c"), 0);
	assert_int_equal(perms_of(d, "/srv/team5/svc7/build/a.o"), 3);
	dfa_free(reduced);
	dfa_free(p);
	dfa_free(d);
}

static void test_dfa_class_example(void **state)
{
	(void)state;
	struct dfa_rule r[] = { { .glob = "/[!a]/[0-9]/[!/a-zA-Z0-9]", .grant = 1, .rule = 0 } };
	struct dfa *d = build(r, 1);
	struct dfa_tables t;
	dfa_tables_get(d, &t);
	assert_int_equal(dfa_class_example(d, t.class_of['b']), 'b');
	assert_int_equal(dfa_class_example(d, t.class_of['5']), '0');
	assert_int_equal(dfa_class_example(d, t.class_of['_']), '_');
	assert_int_equal(dfa_class_example(d, t.class_of['/']), '/');
	assert_true(dfa_byte_rank('a') < dfa_byte_rank('Z'));
	assert_true(dfa_byte_rank('Z') < dfa_byte_rank('0'));
	assert_true(dfa_byte_rank('9') < dfa_byte_rank('_'));
	assert_true(dfa_byte_rank('.') < dfa_byte_rank('~'));
	assert_true(dfa_byte_rank('~') < dfa_byte_rank(' '));
	assert_true(dfa_byte_rank(' ') < dfa_byte_rank(0x80));
	assert_true(dfa_byte_rank(0xff) < dfa_byte_rank(0x01));
	assert_int_equal(dfa_byte_rank(0), UINT32_MAX);
	dfa_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dfa_small),
		cmocka_unit_test(test_dfa_cover_dir),
		cmocka_unit_test(test_dfa_marks),
		cmocka_unit_test(test_dfa_no_rules),
		cmocka_unit_test(test_dfa_nul),
		cmocka_unit_test(test_dfa_semantics),
		cmocka_unit_test(test_dfa_shared_rule_id),
		cmocka_unit_test(test_dfa_dump),
		cmocka_unit_test(test_dfa_dump_dot_escape),
		cmocka_unit_test(test_dfa_build_limit),
		cmocka_unit_test(test_dfa_build_limit_crowd),
		cmocka_unit_test(test_dfa_final_limit),
		cmocka_unit_test(test_dfa_opts_size),
		cmocka_unit_test(test_dfa_perms_reduce),
		cmocka_unit_test(test_dfa_realistic),
		cmocka_unit_test(test_dfa_fold_limit),
		cmocka_unit_test(test_dfa_many_rules),
		cmocka_unit_test(test_dfa_alike_dirs),
		cmocka_unit_test(test_dfa_class_example),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
