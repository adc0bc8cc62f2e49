/* SPDX-License-Identifier: GPL-2.0-only */
/* test_dfa_widen: attenuation by product search.
 *
 * A table of parent/child pairs with the expected answer (subset, or the
 * exact shortest counterexample and the bits it widens by), then a
 * randomized soundness test against an independent reference matcher:
 * when the search says "subset", sampled strings never get more from the
 * child; when it names a counterexample, the reference agrees that the
 * child grants more there, and no shorter well-formed string over the
 * globs' bytes does.
 *
 * Rules are written "perms:glob", space separated: perms is any of r w x
 * (grants, bits 1 2 4), or d followed by the denied bits (d alone denies r
 * and w). BEE_WIDEN_PRINT=1 prints every row's answer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "dfa.h"
#include "seed.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define R 1u
#define W 2u
#define X 4u

struct widen_rules {
	struct dfa_rule r[16];
	char text[16][128];
	size_t n;
};

static void widen_rules_parse(const char *spec, struct widen_rules *wr)
{
	wr->n = 0;
	const char *p = spec;
	while (*p) {
		while (*p == ' ')
			p++;
		if (!*p)
			break;
		const char *e = strchr(p, ' ');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		const char *colon = memchr(p, ':', len);
		assert_non_null(colon);
		struct dfa_rule *r = &wr->r[wr->n];
		memset(r, 0, sizeof(*r));
		uint32_t bits = 0;
		bool deny = false;
		for (const char *q = p; q < colon; q++) {
			switch (*q) {
			case 'r': bits |= R; break;
			case 'w': bits |= W; break;
			case 'x': bits |= X; break;
			case 'd': deny = true; break;
			default: fail_msg("bad perms in '%s'", spec);
			}
		}
		if (deny)
			r->deny = bits ? bits : R | W;
		else
			r->grant = bits;
		size_t glen = len - (size_t)(colon + 1 - p);
		memcpy(wr->text[wr->n], colon + 1, glen);
		wr->text[wr->n][glen] = '\0';
		r->glob = wr->text[wr->n];
		r->rule = (unsigned)wr->n;
		wr->n++;
		p += len;
	}
}

static struct dfa *widen_build_opt(const char *spec, enum dfa_kind kind, bool perms_only,
				   struct widen_rules *wr)
{
	widen_rules_parse(spec, wr);
	struct dfa_build_opts o = { .sz = sizeof(o), .kind = kind, .perms_only = perms_only };
	struct dfa *d;
	struct diag_ctx dc;
	diag_init(&dc);
	int rc = dfa_build(wr->r, wr->n, &o, &d, &dc);
	if (rc) {
		diag_print(&dc, stderr);
		fail_msg("'%s' does not build: %d", spec, rc);
	}
	diag_fini(&dc);
	return d;
}

static struct dfa *widen_build(const char *spec, enum dfa_kind kind, struct widen_rules *wr)
{
	return widen_build_opt(spec, kind, false, wr);
}

/* Well-formed, as the search prefers: "/" or absolute with no empty, "."
 * or ".." segment. */
static bool path_well_formed(const char *s)
{
	if (s[0] != '/')
		return false;
	if (!s[1])
		return true;
	for (const char *seg = s + 1;;) {
		const char *e = strchr(seg, '/');
		size_t len = e ? (size_t)(e - seg) : strlen(seg);
		if (len == 0 || (len == 1 && seg[0] == '.') || (len == 2 && seg[0] == '.' && seg[1] == '.'))
			return false;
		if (!e)
			return true;
		seg = e + 1;
	}
}

struct widen_row {
	enum dfa_kind kind;
	const char *parent, *child;
	const char *example;     /* NULL: the child is a subset */
	uint32_t extra;
	const char *rules;       /* child rules responsible, "0 2" */
};

#define P DFA_KIND_PATH
#define N DFA_KIND_NAME

static const struct widen_row widen_rows[] = {
	/* ---- equal and narrower */
	{ P, "r:/usr/**", "r:/usr/**", NULL, 0, NULL },
	{ P, "r:/usr/**", "r:/usr/lib/**", NULL, 0, NULL },
	{ P, "r:/usr/**", "r:/usr/bin/cc", NULL, 0, NULL },
	{ P, "r:/usr/**", "", NULL, 0, NULL },
	{ P, "", "", NULL, 0, NULL },
	{ P, "rw:/tmp/**", "r:/tmp/x w:/tmp/y", NULL, 0, NULL },
	{ P, "r:/a/* w:/a/*", "rw:/a/b", NULL, 0, NULL },
	{ P, "r:/**", "r:/etc/passwd", NULL, 0, NULL },
	{ P, "r:**", "r:/etc/passwd", NULL, 0, NULL },
	{ P, "r:/a/**/b", "r:/a/b", NULL, 0, NULL },
	{ P, "r:/a/**/b", "r:/a/x/y/b", NULL, 0, NULL },
	{ P, "r:/a/**/b", "r:/a/*/b", NULL, 0, NULL },
	{ P, "r:/a/*", "r:/a/?", NULL, 0, NULL },
	{ P, "r:/a/*", "r:/a/[a-z]", NULL, 0, NULL },
	{ P, "r:/a/[a-z]", "r:/a/[b-d]", NULL, 0, NULL },
	{ P, "r:/a/{b,c,d}", "r:/a/{c,b}", NULL, 0, NULL },
	{ P, "r:/a/{b,c}/**", "r:/a/b/** r:/a/c/x", NULL, 0, NULL },
	{ P, "r:/home/*/project/**", "r:/home/you/project/src/**", NULL, 0, NULL },
	{ P, "r:**/*.rs", "r:/src/main.rs", NULL, 0, NULL },
	{ P, "r:/usr/** r:/lib/**", "r:/lib/x r:/usr/y", NULL, 0, NULL },
	{ P, "x:/usr/bin/*", "x:/usr/bin/cargo x:/usr/bin/rustc", NULL, 0, NULL },
	{ P, "r:/a/*b", "r:/a/*bb", NULL, 0, NULL },
	{ P, "r:/a/*.{c,h}", "r:/a/x.c", NULL, 0, NULL },
	{ P, "r:/a/**", "r:/a/{b,c/**}", NULL, 0, NULL },
	{ P, "r:/a/[!x]*", "r:/a/y*", NULL, 0, NULL },
	/* denies in the child only narrow */
	{ P, "r:/usr/**", "r:/usr/** d:/usr/secret", NULL, 0, NULL },
	{ P, "r:/usr/**", "r:/** d:/[!u]*/** d:/[!u]* d:/u[!s]*/** d:/u[!s]* d:/us[!r]*/** d:/us[!r]* "
	  "d:/usr?*/** d:/usr?* d:/u/** d:/us/** d:/u d:/us d:/usr d:/", "//", R, "0" },
	/* denies that look complete but miss deeper paths */
	{ P, "r:/usr/**", "r:/** d:/[!u]* d:/u[!s]* d:/us[!r]* d:/usr?* d:/u d:/us d:/usr d:/", "/a/a", R,
	  "0" },
	{ P, "r:/a/** d:/a/s", "r:/a/** d:/a/s", NULL, 0, NULL },
	{ P, "r:/a/** d:/a/s", "r:/a/** d:/a/*", NULL, 0, NULL },
	{ P, "rw:/a/**", "rw:/a/** dw:/a/b", NULL, 0, NULL },
	/* a child deny that only removes what the parent also removes */
	{ P, "r:/a/** d:**/*.pem", "r:/a/** d:**/*.pem d:**/*.key", NULL, 0, NULL },

	/* ---- wider: the shortest well-formed string */
	{ P, "r:/usr/**", "r:/**", "/", R, "0" },
	{ P, "r:/usr/**", "r:/etc/passwd", "/etc/passwd", R, "0" },
	{ P, "r:/usr/lib/**", "r:/usr/**", "/usr/a", R, "0" },
	{ P, "r:/usr/lib/**", "r:/usr/*", "/usr/a", R, "0" },
	{ P, "r:/usr/lib/**", "r:/usr/?*", "/usr/a", R, "0" },
	{ P, "r:/a/*", "r:/a/**", "/a/a/a", R, "0" },
	{ P, "r:/a/*/b", "r:/a/**/b", "/a/b", R, "0" },
	{ P, "r:/a/?", "r:/a/*", "/a/aa", R, "0" },
	{ P, "r:/a/[a-m]", "r:/a/[a-z]", "/a/n", R, "0" },
	{ P, "r:/a/[b-z]", "r:/a/?", "/a/a", R, "0" },
	{ P, "r:/a/{b,c}", "r:/a/{b,c,d}", "/a/d", R, "0" },
	{ P, "r:/dir/**", "r:/dir", "/dir", R, "0" },
	{ P, "r:/dir/**", "r:/dir/** r:/dir", "/dir", R, "1" },
	{ P, "r:/a/**", "r:/a", "/a", R, "0" },
	{ P, "r:/a/** d:/a/s", "r:/a/**", "/a/s", R, "0" },
	{ P, "r:/a/** d:/a/s/**", "r:/a/s/x", "/a/s/x", R, "0" },
	{ P, "r:/a/** d:**/*.pem", "r:/a/**", "/a/.pem", R, "0" },
	{ P, "r:/a/** d:**/*.pem", "r:/a/k.pem", "/a/k.pem", R, "0" },
	{ P, "r:/a/** d:**/.ssh/**", "r:/a/**", "/a/.ssh/a", R, "0" },
	{ P, "r:/home/you/project/**", "r:/home/you/**", "/home/you/a", R, "0" },
	{ P, "r:/home/you/project/**", "r:/home/*/project/**", "/home/a/project/a", R, "0" },
	{ P, "r:/tmp/bee-*/**", "r:/tmp/**", "/tmp/a", R, "0" },
	{ P, "r:/tmp/bee-*/**", "r:/tmp/bee*/**", "/tmp/bee/a", R, "0" },
	{ P, "r:**/*.rs", "r:**/*.r?", "/.ra", R, "0" },
	{ P, "r:/src/**/*.rs", "r:**/*.rs", "/.rs", R, "0" },
	/* perms: write does not imply read, nor read write */
	{ P, "r:/a/**", "w:/a/x", "/a/x", W, "0" },
	{ P, "w:/a/**", "r:/a/x", "/a/x", R, "0" },
	{ P, "r:/a/** w:/a/t/**", "rw:/a/**", "/a/a", W, "0" },
	{ P, "r:/a/** w:/a/t/**", "r:/a/** w:/a/t/** w:/a/u", "/a/u", W, "2" },
	{ P, "rw:/a/**", "rwx:/a/b", "/a/b", X, "0" },
	{ P, "x:/usr/bin/*", "x:/usr/bin/**", "/usr/bin/a/a", X, "0" },
	{ P, "x:/usr/bin/cargo", "x:/usr/bin/cargo x:/usr/bin/rustc", "/usr/bin/rustc", X, "1" },
	{ P, "x:/usr/bin/cargo", "x:/usr/bin/carg?", "/usr/bin/carga", X, "0" },
	/* several child rules grant the extra bits */
	{ P, "r:/a", "r:/b r:/? w:/b", "/b", R | W, "0 1 2" },
	{ P, "r:/a/**", "r:/a/** r:/b/** r:/b/c", "/b/a", R, "1" },
	{ P, "", "r:/x", "/x", R, "0" },
	{ P, "", "r:/**", "/", R, "0" },
	{ P, "", "w:/", "/", W, "0" },
	/* a child deny that does not cover the widening */
	{ P, "r:/a/**", "r:/** d:/b/**", "/", R, "0" },
	{ P, "r:/a/**", "r:/* d:/", "/a", R, "0" },
	{ P, "r:/a/** d:/a/x", "r:/a/** d:/a/y", "/a/x", R, "0" },
	/* braces in parent and child */
	{ P, "r:/usr/{lib,lib64}/**", "r:/usr/lib*/**", "/usr/liba/a", R, "0" },
	{ P, "r:/usr/{lib,lib64}/**", "r:/usr/lib{,32,64}/**", "/usr/lib32/a", R, "0" },
	{ P, "r:/a/{b,c/d}", "r:/a/c/*", "/a/c/a", R, "0" },
	{ P, "r:/{a,b}/**", "r:/{a,b,c}/x", "/c/x", R, "0" },
	/* classes */
	{ P, "r:/a/[[:digit:]]", "r:/a/[[:alnum:]]", "/a/a", R, "0" },
	{ P, "r:/a/[[:alpha:]]", "r:/a/[[:alnum:]]", "/a/0", R, "0" },
	{ P, "r:/a/[!.]*", "r:/a/*", "/a/.a", R, "0" },
	{ P, "r:/a/?*", "r:/a/*", "/a/", R, "0" },
	{ P, "r:/a/[!.]?*", "r:/a/?*", "/a/a", R, "0" },
	{ P, "r:/a/[a-z]*", "r:/a/*", "/a/A", R, "0" },
	{ P, "r:/a/[a-z]?*", "r:/a/?*", "/a/a", R, "0" },
	{ P, "r:/a/[!a-z]", "r:/a/?", "/a/a", R, "0" },
	{ P, "r:/a/[!a-zA-Z0-9]", "r:/a/?", "/a/a", R, "0" },
	{ P, "r:/a/[a-zA-Z0-9_-]", "r:/a/?", "/a/!", R, "0" },
	{ P, "r:/a/[a-zA-Z0-9_.-]", "r:/a/?", "/a/!", R, "0" },
	/* escapes: the child's literal '*' is not the parent's wildcard's job */
	{ P, "r:/a/\\*", "r:/a/*", "/a/a", R, "0" },
	{ P, "r:/a/*", "r:/a/\\*", NULL, 0, NULL },
	/* well-formed preference: no empty segment when another string works */
	{ P, "r:/a/b", "r:/a/**", "/a/a", R, "0" },
	{ P, "r:/a/ r:/a/b", "r:/a/**", "/a/a", R, "0" },
	{ P, "r:/a/*", "r:/a/**", "/a/a/a", R, "0" },
	{ P, "r:/a/** d:/a/*", "r:/a/**", "/a/a", R, "0" },
	{ P, "r:/a/*/** d:/a/*/", "r:/a/*/**", "/a//", R, "0" },
	/* no "." or ".." segment when another string works */
	{ P, "r:/a/[!.]*", "r:/a/.*", "/a/.a", R, "0" },
	{ P, "r:/a/[!.]*", "r:/a/..*", "/a/..a", R, "0" },
	{ P, "r:/a/[!.]*", "r:/a/.{,.}", "/a/.", R, "0" },
	{ P, "r:/a/?*", "r:/a/.{,.}", NULL, 0, NULL },
	{ P, "r:/a/[!.]*/b", "r:/a/*/b", "/a/.a/b", R, "0" },
	{ P, "r:/*/b", "r:/*/*/b", "/a/a/b", R, "0" },
	/* only malformed strings widen: still a widening, flagged as such */
	{ P, "r:/**", "r:**", "", R, "0" },
	{ P, "r:/**", "r:x", "x", R, "0" },
	{ P, "r:/a/*", "r:/a//", "/a//", R, "0" },
	{ P, "r:/a/?/b", "r:/a//b", "/a//b", R, "0" },
	{ P, "r:/a/*/b", "r:/a//b", NULL, 0, NULL },

	/* ---- names (environment variables) */
	{ N, "r:CARGO_*", "r:CARGO_HOME", NULL, 0, NULL },
	{ N, "r:CARGO_*", "r:CARGO_*", NULL, 0, NULL },
	{ N, "r:*", "r:PATH r:HOME", NULL, 0, NULL },
	{ N, "r:{PATH,HOME,LANG}", "r:{HOME,PATH}", NULL, 0, NULL },
	{ N, "r:LC_*", "r:LC_{ALL,CTYPE}", NULL, 0, NULL },
	{ N, "r:PATH", "r:PATH r:HOME", "HOME", R, "1" },
	{ N, "r:CARGO_HOME", "r:CARGO_*", "CARGO_", R, "0" },
	{ N, "r:CARGO_?*", "r:CARGO_*", "CARGO_", R, "0" },
	{ N, "r:[A-Z]*", "r:*", "a", R, "0" },
	{ N, "r:[A-Z]*", "r:?*", "a", R, "0" },
	{ N, "r:A*", "r:?", "a", R, "0" },
	{ N, "r:*_TOKEN", "r:*TOKEN", "TOKEN", R, "0" },
	{ N, "", "r:*", "a", R, "0" },
	{ N, "r:?*", "r:*", "", R, "0" },
	{ N, "r:*", "r:* d:SECRET", NULL, 0, NULL },
	{ N, "r:* d:SECRET", "r:*", "SECRET", R, "0" },
	{ N, "r:[!=]*", "r:*", "", R, "0" },
};

static void widen_rules_text(const struct dfa_widening *w, char *buf, size_t size)
{
	buf[0] = '\0';
	for (size_t i = 0; i < w->nchild_rules; i++) {
		size_t l = strlen(buf);
		snprintf(buf + l, size - l, "%s%u", i ? " " : "", w->child_rules[i]);
	}
}

static void test_dfa_widen_rows(void **state)
{
	(void)state;
	bool print = getenv("BEE_WIDEN_PRINT") != NULL;
	unsigned bad = 0, subsets = 0;
	for (size_t i = 0; i < sizeof(widen_rows) / sizeof(widen_rows[0]); i++) {
		const struct widen_row *row = &widen_rows[i];
		struct widen_rules pr, cr;
		/* odd rows: permission-only automata, whose answers must not differ */
		struct dfa *p = widen_build_opt(row->parent, row->kind, i % 2, &pr);
		struct dfa *c = widen_build_opt(row->child, row->kind, i % 2, &cr);
		struct dfa_widening w;
		assert_int_equal(dfa_widening_find(c, p, &w), 0);
		char rules[64];
		widen_rules_text(&w, rules, sizeof(rules));
		if (print)
			printf("row %zu: parent '%s' child '%s': %s%s%s extra %u rules '%s'%s\n", i,
			       row->parent, row->child, w.found ? "'" : "subset", w.found ? w.example : "",
			       w.found ? "'" : "", w.extra, rules, w.found && !w.well_formed ? " (malformed)" : "");
		subsets += !row->example;
		bool ok = w.found == (row->example != NULL);
		if (ok && w.found) {
			ok = strcmp(w.example, row->example) == 0 && w.len == strlen(row->example) &&
			     w.extra == row->extra && strcmp(rules, row->rules) == 0 &&
			     w.extra == (w.child_perms & ~w.parent_perms);
			/* a widening on a well-formed string says so */
			bool wf = row->kind == DFA_KIND_PATH ? path_well_formed(w.example)
							     : w.len > 0 && !strchr(w.example, '=');
			ok = ok && w.well_formed == wf;
			/* the answer agrees with walking both automata */
			uint32_t cp, pp;
			dfa_match(c, w.example, w.len, &cp, NULL);
			dfa_match(p, w.example, w.len, &pp, NULL);
			ok = ok && cp == w.child_perms && pp == w.parent_perms;
		}
		if (!ok) {
			print_error("row %zu: parent '%s' child '%s': expected %s'%s' extra %u rules '%s', got %s'%s' extra %u rules '%s'\n",
				    i, row->parent, row->child, row->example ? "" : "subset ",
				    row->example ? row->example : "", row->extra, row->rules ? row->rules : "",
				    w.found ? "" : "subset ", w.found ? w.example : "", w.extra, rules);
			bad++;
		}
		dfa_widening_fini(&w);
		dfa_free(p);
		dfa_free(c);
	}
	print_message("%zu attenuation rows, %u subsets\n", sizeof(widen_rows) / sizeof(widen_rows[0]),
		      subsets);
	assert_int_equal(bad, 0);
}

/* The well-formed flag on the malformed rows. */
static void test_dfa_widen_malformed(void **state)
{
	(void)state;
	struct widen_rules pr, cr;
	struct dfa *p = widen_build("r:/**", DFA_KIND_PATH, &pr);
	struct dfa *c = widen_build("r:**", DFA_KIND_PATH, &cr);
	struct dfa_widening w;
	assert_int_equal(dfa_widening_find(c, p, &w), 0);
	assert_true(w.found);
	assert_false(w.well_formed);
	dfa_widening_fini(&w);
	assert_int_equal(dfa_widening_find(p, p, &w), 0);
	assert_false(w.found);
	assert_null(w.example);
	dfa_widening_fini(&w);
	dfa_free(c);
	c = widen_build("r:/**", DFA_KIND_NAME, &cr);
	assert_int_equal(dfa_widening_find(c, p, &w), -EINVAL);
	dfa_free(c);
	dfa_free(p);
}

/* Parent rules at the counterexample are reported too. */
static void test_dfa_widen_parent_rules(void **state)
{
	(void)state;
	struct widen_rules pr, cr;
	struct dfa *p = widen_build("r:/a/** d:/a/s w:/z", DFA_KIND_PATH, &pr);
	struct dfa *c = widen_build("r:/a/**", DFA_KIND_PATH, &cr);
	struct dfa_widening w;
	assert_int_equal(dfa_widening_find(c, p, &w), 0);
	assert_string_equal(w.example, "/a/s");
	assert_int_equal(w.nparent_rules, 2);
	assert_int_equal(w.parent_rules[0], 0);
	assert_int_equal(w.parent_rules[1], 1);
	assert_int_equal(w.parent_perms, 0);
	assert_int_equal(w.child_perms, R);
	dfa_widening_fini(&w);
	dfa_free(c);
	dfa_free(p);
}

/* ---- randomized soundness ------------------------------------------------ */

/* An independent matcher for the random globs here, which use only
 * literals, '*', '?', '**' segments and {a,b} groups without nesting. */
static bool ref_wild(const char *pat, const char *p, const char *t)
{
	for (; *p; p++, t++) {
		if (*p == '*') {
			const char *q = p;
			while (*q == '*')
				q++;
			if (q - p >= 2 && (p == pat || p[-1] == '/') && (!*q || *q == '/')) {
				if (!*q)
					return true;
				if (ref_wild(pat, q + 1, t))
					return true;
				for (const char *u = t; *u; u++)
					if (*u == '/' && ref_wild(pat, q + 1, u + 1))
						return true;
				return false;
			}
			for (const char *u = t;; u++) {
				if (ref_wild(pat, q, u))
					return true;
				if (!*u || *u == '/')
					return false;
			}
		}
		if (!*t || (*p == '?' ? *t == '/' : *p != *t))
			return false;
	}
	return !*t;
}

static bool ref_match(const char *pat, const char *text)
{
	const char *open = strchr(pat, '{');
	if (!open)
		return ref_wild(pat, pat, text);
	const char *close = strchr(open, '}');
	char buf[256];
	for (const char *a = open + 1;;) {
		const char *e = a;
		while (*e != ',' && *e != '}')
			e++;
		snprintf(buf, sizeof(buf), "%.*s%.*s%s", (int)(open - pat), pat, (int)(e - a), a, close + 1);
		if (ref_match(buf, text))
			return true;
		if (*e == '}')
			return false;
		a = e + 1;
	}
}

static uint32_t ref_perms(const struct widen_rules *wr, const char *s)
{
	uint32_t g = 0, d = 0;
	for (size_t i = 0; i < wr->n; i++) {
		if (ref_match(wr->r[i].glob, s)) {
			g |= wr->r[i].grant;
			d |= wr->r[i].deny;
		}
	}
	return g & ~d;
}

static uint64_t rng;

static uint64_t rnd(void)
{
	return test_rng_next(&rng);
}

static unsigned below(unsigned n)
{
	return (unsigned)(rnd() % n);
}

static void gen_glob(char *buf, size_t size)
{
	static const char *const segs[] = { "a", "b", "ab", "*", "?", "**", "a*", "*b", "{a,b}", "{a,bb}",
					    "?*", ".*", "{.,..}", "a.b", "*.b" };
	size_t n = 0;
	buf[0] = '\0';
	unsigned nseg = 1 + below(3);
	for (unsigned i = 0; i < nseg; i++)
		n += (size_t)snprintf(buf + n, size - n, "/%s", segs[below(sizeof(segs) / sizeof(segs[0]))]);
}

static void gen_rules(char *spec, size_t size)
{
	static const char *const perms[] = { "r", "w", "rw", "r", "d", "dr" };
	size_t n = 0;
	unsigned nr = below(4);
	spec[0] = '\0';
	for (unsigned i = 0; i < nr; i++) {
		char g[64];
		gen_glob(g, sizeof(g));
		n += (size_t)snprintf(spec + n, size - n, "%s%s:%s", i ? " " : "",
				      perms[below(sizeof(perms) / sizeof(perms[0]))], g);
	}
}

static void gen_string(char *buf, size_t size)
{
	static const char alpha[] = "/ab.";
	unsigned len = below(9);
	if (size)
		buf[0] = '\0';
	for (unsigned i = 0; i < len && i + 1 < size; i++) {
		buf[i] = i == 0 && below(5) ? '/' : alpha[below(4)];
		buf[i + 1] = '\0';
	}
}


/* No well-formed string shorter than len over {/, a, b, ., c} widens. The
 * globs use only 'a', 'b' and '.', so 'c' stands for every other byte. */
static bool no_shorter(const struct widen_rules *c, const struct widen_rules *p, size_t len)
{
	static const char alpha[] = "/ab.c";
	char s[8];
	for (size_t l = 1; l < len && l < 7; l++) {
		unsigned total = 1;
		for (size_t i = 0; i < l; i++)
			total *= 5;
		for (unsigned v = 0; v < total; v++) {
			unsigned x = v;
			for (size_t i = 0; i < l; i++, x /= 5)
				s[i] = alpha[x % 5];
			s[l] = '\0';
			if (!path_well_formed(s))
				continue;
			if (ref_perms(c, s) & ~ref_perms(p, s))
				return false;
		}
	}
	return true;
}

static void test_dfa_widen_random(void **state)
{
	(void)state;
	uint64_t seed = test_seed("test_dfa_widen", 0);
	rng = seed;
	unsigned subset = 0, widened = 0, bad = 0;
	long n = test_cases(3000);
	for (long iter = 0; iter < n && bad < 5; iter++) {
		char ps[512], cs[512];
		gen_rules(ps, sizeof(ps));
		if (below(3) == 0) {
			/* a child made from the parent: often a subset */
			snprintf(cs, sizeof(cs), "%s", ps);
			if (below(2)) {
				char g[64];
				gen_glob(g, sizeof(g));
				size_t l = strlen(cs);
				snprintf(cs + l, sizeof(cs) - l, "%sd:%s", l ? " " : "", g);
			}
		} else {
			gen_rules(cs, sizeof(cs));
		}
		struct widen_rules pr, cr;
		struct dfa *p = widen_build_opt(ps, DFA_KIND_PATH, iter % 3 == 1, &pr);
		struct dfa *c = widen_build_opt(cs, DFA_KIND_PATH, iter % 3 != 0, &cr);
		struct dfa_widening w;
		assert_int_equal(dfa_widening_find(c, p, &w), 0);
		if (w.found) {
			widened++;
			uint32_t cp = ref_perms(&cr, w.example), pp = ref_perms(&pr, w.example);
			bool ok = (cp & ~pp) == w.extra && w.extra != 0 && cp == w.child_perms &&
				  pp == w.parent_perms;
			ok = ok && w.well_formed == path_well_formed(w.example);
			if (ok && w.well_formed && w.len <= 6)
				ok = no_shorter(&cr, &pr, w.len);
			if (!ok) {
				print_error("seed %" PRIu64 ": parent '%s' child '%s': counterexample '%s' (extra %u), reference child %u parent %u\n",
					    seed, ps, cs, w.example, w.extra, cp, pp);
				bad++;
			}
		} else {
			subset++;
			for (int k = 0; k < 60; k++) {
				char s[16];
				gen_string(s, sizeof(s));
				uint32_t cp = ref_perms(&cr, s), pp = ref_perms(&pr, s);
				if (cp & ~pp) {
					print_error("seed %" PRIu64 ": parent '%s' child '%s': called a subset, but '%s' gets %u from the child and %u from the parent\n",
						    seed, ps, cs, s, cp, pp);
					bad++;
					break;
				}
			}
		}
		dfa_widening_fini(&w);
		dfa_free(p);
		dfa_free(c);
	}
	fprintf(stderr, "test_dfa_widen: %u subsets, %u widenings\n", subset, widened);
	assert_int_equal(bad, 0);
	/* each side is at least a tenth of the pairs: both answers are exercised */
	assert_true(subset > n / 10 && widened > n / 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dfa_widen_rows),
		cmocka_unit_test(test_dfa_widen_malformed),
		cmocka_unit_test(test_dfa_widen_parent_rules),
		cmocka_unit_test(test_dfa_widen_random),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
