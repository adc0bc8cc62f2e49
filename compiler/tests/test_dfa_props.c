/* SPDX-License-Identifier: GPL-2.0-only */
/* test_dfa_props: the automaton against an independent reference matcher.
 *
 * The reference below backtracks over the glob text itself: braces are
 * expanded lazily in place (the first '{' outside a class), then a
 * wildmatch-style recursion decides the match. It shares no code with
 * glob.c/nfa.c/dfa.c. Random rule sets (with deny rules) and random paths,
 * biased to match (paths drawn from the globs' alphabet and instantiated
 * from the globs themselves), must get the same permissions and the same
 * matching rules from both.
 *
 * The seed comes from BEE_SEED (or the clock); it is printed at the start
 * and with every failure, so `BEE_SEED=n build/compiler/tests/test_dfa_props`
 * replays a run. BEE_PROP_CASES sets the number of cases (600,000).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "dfa.h"
#include "seed.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- the reference matcher ---------------------------------------------- */

/* One past the ']' of the class opening at p[0] == '['. */
static const char *ref_class_skip(const char *p)
{
	p++;
	if (*p == '!' || *p == '^')
		p++;
	bool first = true;
	while (*p && (*p != ']' || first)) {
		first = false;
		if (p[0] == '[' && p[1] == ':') {
			const char *e = strchr(p + 2, ']');
			if (e && e - (p + 2) >= 1 && e[-1] == ':') {
				p = e + 1;
				continue;
			}
		}
		if (*p == '\\' && p[1])
			p++;
		p++;
	}
	return *p ? p + 1 : p;
}

static bool ref_posix(const char *name, size_t len, int c)
{
	if (c >= 0x80)
		return false;
#define N(s) (len == strlen(s) && strncmp(name, s, len) == 0)
	if (N("alnum")) return isalnum(c);
	if (N("alpha")) return isalpha(c);
	if (N("blank")) return isblank(c);
	if (N("cntrl")) return iscntrl(c);
	if (N("digit")) return isdigit(c);
	if (N("graph")) return isgraph(c);
	if (N("lower")) return islower(c);
	if (N("print")) return isprint(c);
	if (N("punct")) return ispunct(c);
	if (N("space")) return isspace(c);
	if (N("upper")) return isupper(c);
	if (N("xdigit")) return isxdigit(c);
#undef N
	return false;
}

/* Does byte c (never '/' or NUL here) belong to the class at p? */
static bool ref_class_has(const char *p, int c)
{
	p++;
	bool neg = false, hit = false, first = true;
	if (*p == '!' || *p == '^') {
		neg = true;
		p++;
	}
	while (*p != ']' || first) {
		first = false;
		if (p[0] == '[' && p[1] == ':') {
			const char *e = strchr(p + 2, ']');
			if (e && e - (p + 2) >= 1 && e[-1] == ':') {
				hit |= ref_posix(p + 2, (size_t)(e - 1 - (p + 2)), c);
				p = e + 1;
				continue;
			}
		}
		if (*p == '\\')
			p++;
		int lo = (unsigned char)*p++, hi = lo;
		if (p[0] == '-' && p[1] != ']') {
			p++;
			if (*p == '\\')
				p++;
			hi = (unsigned char)*p++;
		}
		hit |= lo <= c && c <= hi;
	}
	return hit != neg;
}

/* Wildmatch in pathname mode over a brace-free pattern p, whole text t. */
static bool ref_wild(const char *pat, const char *p, const char *t)
{
	for (; *p; p++, t++) {
		int c = (unsigned char)*t;
		switch (*p) {
		case '\\':
			p++;
			if (c != (unsigned char)*p)
				return false;
			break;
		case '?':
			if (!c || c == '/')
				return false;
			break;
		case '[':
			if (!c || c == '/' || !ref_class_has(p, c))
				return false;
			p = ref_class_skip(p) - 1;
			break;
		case '*': {
			const char *q = p;
			while (*q == '*')
				q++;
			bool dbl = q - p >= 2;
			bool before = p == pat || p[-1] == '/';
			bool after = !*q || *q == '/' || (q[0] == '\\' && q[1] == '/');
			if (dbl && before && after) {
				if (!*q)
					return true;
				const char *rest = *q == '/' ? q + 1 : q + 2;
				if (ref_wild(pat, rest, t))
					return true;
				for (const char *u = t; *u; u++)
					if (*u == '/' && ref_wild(pat, rest, u + 1))
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
		default:
			if (c != (unsigned char)*p)
				return false;
			break;
		}
	}
	return *t == '\0';
}

/* Expands the first brace group of pat in place, one alternative at a time. */
static bool ref_match(const char *pat, const char *text)
{
	const char *p = pat;
	while (*p && *p != '{') {
		if (*p == '\\' && p[1])
			p += 2;
		else if (*p == '[')
			p = ref_class_skip(p);
		else
			p++;
	}
	if (!*p)
		return ref_wild(pat, pat, text);
	const char *open = p, *alt = p + 1;
	int depth = 0;
	size_t plen = strlen(pat);
	char *buf = malloc(plen + 1);
	bool hit = false;
	for (p = open + 1;; p++) {
		if (*p == '\\') {
			p++;
			continue;
		}
		if (*p == '[') {
			p = ref_class_skip(p) - 1;
			continue;
		}
		if (*p == '{') {
			depth++;
			continue;
		}
		if (*p == '}' && depth) {
			depth--;
			continue;
		}
		if ((*p == ',' && !depth) || *p == '}') {
			const char *close = p;
			if (*p == ',') {
				/* find the group's end to get the suffix */
				int d = 0;
				const char *q = p + 1;
				for (;; q++) {
					if (*q == '\\') {
						q++;
						continue;
					}
					if (*q == '[') {
						q = ref_class_skip(q) - 1;
						continue;
					}
					if (*q == '{')
						d++;
					else if (*q == '}' && d)
						d--;
					else if (*q == '}')
						break;
				}
				close = q;
			}
			size_t n = 0;
			memcpy(buf + n, pat, (size_t)(open - pat));
			n += (size_t)(open - pat);
			memcpy(buf + n, alt, (size_t)(p - alt));
			n += (size_t)(p - alt);
			strcpy(buf + n, close + 1);
			if (ref_match(buf, text)) {
				hit = true;
				break;
			}
			if (*p == '}')
				break;
			alt = p + 1;
		}
	}
	free(buf);
	return hit;
}

/* ---- random generation ---------------------------------------------------- */

static uint64_t prop_rng;

static uint64_t prop_next(void)
{
	return test_rng_next(&prop_rng);
}

static unsigned prop_below(unsigned n)
{
	return (unsigned)(prop_next() % n);
}

static bool prop_chance(unsigned percent)
{
	return prop_below(100) < percent;
}

struct prop_buf {
	char s[512];
	size_t n;
};

static void prop_put(struct prop_buf *b, const char *s)
{
	size_t l = strlen(s);
	if (b->n + l < sizeof(b->s)) {
		memcpy(b->s + b->n, s, l + 1);
		b->n += l;
	}
}

static void prop_putc(struct prop_buf *b, char c)
{
	char s[2] = { c, 0 };
	prop_put(b, s);
}

static const char prop_letters[] = "abc.";

static void prop_gen_atom(struct prop_buf *b, int depth);

static void prop_gen_seg(struct prop_buf *b, int depth)
{
	unsigned n = 1 + prop_below(3);
	for (unsigned i = 0; i < n; i++)
		prop_gen_atom(b, depth);
}

static void prop_gen_path(struct prop_buf *b, int depth, bool lead)
{
	if (lead)
		prop_putc(b, '/');
	unsigned nseg = 1 + prop_below(depth ? 2 : 4);
	for (unsigned i = 0; i < nseg; i++) {
		if (i)
			prop_putc(b, '/');
		if (prop_chance(18))
			prop_put(b, prop_chance(85) ? "**" : "***");
		else
			prop_gen_seg(b, depth);
	}
}

static void prop_gen_atom(struct prop_buf *b, int depth)
{
	static const char *const classes[] = {
		"[a-b]", "[!a]", "[^b.]", "[[:alpha:]]", "[]a]", "[a-]", "[.c]", "[!/]",
		"[\\]]", "[*]", "[{]", "[a,]", "[[:punct:]]", "[!a-c]", "[[]",
	};
	static const char *const escapes[] = { "\\*", "\\a", "\\{", "\\?", "\\,", "\\}", "\\\\", "\\[" };
	unsigned r = prop_below(100);
	if (r < 45) {
		prop_putc(b, prop_letters[prop_below(sizeof(prop_letters) - 1)]);
	} else if (r < 60) {
		prop_putc(b, '*');
	} else if (r < 66) {
		prop_put(b, "**");
	} else if (r < 74) {
		prop_putc(b, '?');
	} else if (r < 84) {
		prop_put(b, classes[prop_below(sizeof(classes) / sizeof(classes[0]))]);
	} else if (r < 88) {
		prop_put(b, escapes[prop_below(sizeof(escapes) / sizeof(escapes[0]))]);
	} else if (r < 90) {
		prop_putc(b, ',');
	} else if (depth < 2) {
		/* a brace group whose alternatives may hold '/' and '**' */
		unsigned n = 1 + prop_below(3);
		prop_putc(b, '{');
		for (unsigned i = 0; i < n; i++) {
			if (i)
				prop_putc(b, ',');
			unsigned k = prop_below(10);
			if (k < 5)
				prop_gen_seg(b, depth + 1);
			else if (k < 7)
				prop_gen_path(b, depth + 1, prop_chance(50));
			else if (k < 8)
				prop_put(b, prop_chance(50) ? "**/" : "/**");
			/* else empty */
		}
		prop_putc(b, '}');
	} else {
		prop_putc(b, 'a');
	}
}

static void prop_gen_glob(struct prop_buf *b)
{
	b->n = 0;
	b->s[0] = '\0';
	unsigned r = prop_below(100);
	if (r < 10)
		prop_put(b, "**/");
	prop_gen_path(b, 0, r >= 10 && r < 88);
	if (prop_chance(15))
		prop_put(b, "/**");
}

/* Random text over the bytes that the globs use. */
static void prop_gen_text_random(struct prop_buf *b)
{
	static const char alpha[] = "//abc.xA*?{},[]\\-";
	b->n = 0;
	b->s[0] = '\0';
	if (prop_chance(80))
		prop_putc(b, '/');
	unsigned n = prop_below(12);
	for (unsigned i = 0; i < n; i++)
		prop_putc(b, alpha[prop_below(sizeof(alpha) - 1)]);
}

/* A text that the glob likely matches: walk the glob, picking one brace
 * alternative, filling wildcards with random bytes. */
static const char *prop_inst(struct prop_buf *b, const char *p, int stop_at_alt_end);

static const char *prop_inst_group(struct prop_buf *b, const char *open)
{
	/* count alternatives, pick one, emit it, skip to after the '}' */
	const char *alts[16];
	unsigned nalts = 0;
	int depth = 0;
	const char *p = open + 1;
	alts[nalts++] = p;
	for (;; p++) {
		if (*p == '\\') {
			p++;
			continue;
		}
		if (*p == '[') {
			p = ref_class_skip(p) - 1;
			continue;
		}
		if (*p == '{')
			depth++;
		else if (*p == '}' && depth)
			depth--;
		else if (*p == '}')
			break;
		else if (*p == ',' && !depth && nalts < 16)
			alts[nalts++] = p + 1;
	}
	prop_inst(b, alts[prop_below(nalts)], 1);
	return p + 1;
}

static void prop_inst_seg_bytes(struct prop_buf *b, unsigned max)
{
	static const char seg[] = "abcx.-";
	unsigned n = prop_below(max + 1);
	for (unsigned i = 0; i < n; i++)
		prop_putc(b, seg[prop_below(sizeof(seg) - 1)]);
}

static const char *prop_inst(struct prop_buf *b, const char *p, int stop_at_alt_end)
{
	int depth = 0;
	while (*p) {
		if (stop_at_alt_end && depth == 0 && (*p == ',' || *p == '}'))
			return p;
		switch (*p) {
		case '\\':
			prop_putc(b, p[1]);
			p += 2;
			break;
		case '?':
			prop_putc(b, "abx"[prop_below(3)]);
			p++;
			break;
		case '[': {
			/* try bytes until one is in the class */
			static const char cand[] = "abcx.-]*{,[!^A";
			char pick = 'a';
			for (int i = 0; i < 20; i++) {
				char c = cand[prop_below(sizeof(cand) - 1)];
				if (ref_class_has(p, (unsigned char)c)) {
					pick = c;
					break;
				}
			}
			prop_putc(b, pick);
			p = ref_class_skip(p);
			break;
		}
		case '*': {
			const char *q = p;
			while (*q == '*')
				q++;
			if (q - p >= 2 && prop_chance(60)) {
				unsigned nseg = prop_below(3);
				for (unsigned i = 0; i < nseg; i++) {
					prop_inst_seg_bytes(b, 3);
					if (i + 1 < nseg || *q == '/')
						prop_putc(b, '/');
				}
				if (nseg && *q == '/')
					q++;
			} else {
				prop_inst_seg_bytes(b, 3);
			}
			p = q;
			break;
		}
		case '{':
			p = prop_inst_group(b, p);
			break;
		default:
			prop_putc(b, *p);
			p++;
			break;
		}
	}
	return p;
}

static void prop_gen_text_from(struct prop_buf *b, const char *glob)
{
	b->n = 0;
	b->s[0] = '\0';
	prop_inst(b, glob, 0);
	if (prop_chance(25) && b->n) {
		/* a small mutation: near misses find boundary bugs */
		size_t at = prop_below((unsigned)b->n);
		unsigned kind = prop_below(3);
		if (kind == 0)
			memmove(b->s + at, b->s + at + 1, b->n-- - at);
		else if (kind == 1)
			b->s[at] = "/ab."[prop_below(4)];
		else if (b->n + 1 < sizeof(b->s)) {
			memmove(b->s + at + 1, b->s + at, b->n - at + 1);
			b->s[at] = "/a*"[prop_below(3)];
			b->n++;
		}
	}
}

/* ---- the property ---------------------------------------------------------- */

#define PROP_MAX_RULES 5

struct prop_case {
	struct prop_buf globs[PROP_MAX_RULES];
	struct dfa_rule rules[PROP_MAX_RULES];
	size_t n;
};

static void prop_gen_rules(struct prop_case *pc)
{
	pc->n = 1 + prop_below(PROP_MAX_RULES);
	for (size_t i = 0; i < pc->n; i++) {
		prop_gen_glob(&pc->globs[i]);
		struct dfa_rule *r = &pc->rules[i];
		memset(r, 0, sizeof(*r));
		r->glob = pc->globs[i].s;
		r->rule = (unsigned)(10 + i * 3);    /* not the position: provenance must map */
		unsigned k = prop_below(100);
		if (k < 25) {
			r->deny = 1 + prop_below(7);
		} else {
			r->grant = 1 + prop_below(7);
			if (k > 95)
				r->deny = 1 + prop_below(7);
		}
	}
}

static void prop_ref_eval(const struct prop_case *pc, const char *text, uint32_t *perms,
			  unsigned *ids, size_t *nids)
{
	uint32_t grant = 0, deny = 0;
	*nids = 0;
	for (size_t i = 0; i < pc->n; i++) {
		if (!ref_match(pc->rules[i].glob, text))
			continue;
		grant |= pc->rules[i].grant;
		deny |= pc->rules[i].deny;
		ids[(*nids)++] = pc->rules[i].rule;   /* ascending by construction */
	}
	*perms = grant & ~deny;
}

static void prop_case_print(const struct prop_case *pc, uint64_t seed)
{
	print_error("seed %" PRIu64 " (replay with BEE_SEED=%" PRIu64 ")\n", seed, seed);
	for (size_t i = 0; i < pc->n; i++)
		print_error("  rule %u: '%s' grant %u deny %u\n", pc->rules[i].rule, pc->rules[i].glob,
			    pc->rules[i].grant, pc->rules[i].deny);
}

static long prop_cases(long dflt)
{
	const char *s = getenv("BEE_PROP_CASES");
	return s && *s ? strtol(s, NULL, 0) : test_cases(dflt);
}

/* Permuting the rules must not change one byte of the tables. */
static bool prop_same_tables(const struct dfa *a, const struct dfa *b)
{
	struct dfa_tables x, y;
	dfa_tables_get(a, &x);
	dfa_tables_get(b, &y);
	if (x.nstates != y.nstates || x.nclasses != y.nclasses || x.dead != y.dead)
		return false;
	if (memcmp(x.class_of, y.class_of, 256) ||
	    memcmp(x.perms, y.perms, x.nstates * sizeof(uint32_t)) ||
	    memcmp(x.next, y.next, (size_t)x.nstates * x.nclasses * sizeof(uint16_t)))
		return false;
	for (unsigned s = 0; s < x.nstates; s++) {
		struct dfa_rules ra = dfa_state_rules(a, s), rb = dfa_state_rules(b, s);
		if (ra.n != rb.n || memcmp(ra.ids, rb.ids, ra.n * sizeof(unsigned)))
			return false;
	}
	return true;
}

static void test_dfa_props_reference(void **state)
{
	(void)state;
	uint64_t seed = test_seed("test_dfa_props", 0);
	long target = prop_cases(600000);
	long cases = 0, matched = 0, sets = 0, too_big = 0;
	unsigned failures = 0;
	prop_rng = seed;
	fprintf(stderr, "test_dfa_props: %ld cases\n", target);

	while (cases < target && failures < 5) {
		struct prop_case pc;
		prop_gen_rules(&pc);
		struct dfa *d;
		struct diag_ctx dc;
		diag_init(&dc);
		/* a low construction bound: random globs can be monsters (a leading
		 * '**' '/', nested braces, stars), and those are only skipped */
		struct dfa_build_opts o = { .sz = sizeof(o), .kind = DFA_KIND_PATH,
					    .max_build_states = 20000 };
		int rc = dfa_build(pc.rules, pc.n, &o, &d, &dc);
		/* nested braces can pass the fixed bound on alternatives (glob.c):
		 * refused, like a set over the build bound, not a failure */
		bool too_many_alts = rc == -EINVAL && dc.n && strstr(dc.items[0].msg, "braces expand to");
		if (rc == -E2BIG || too_many_alts) {
			diag_fini(&dc);
			too_big++;
			continue;
		}
		if (rc) {
			prop_case_print(&pc, seed);
			print_error("  build failed: %d\n", rc);
			diag_print(&dc, stderr);
			diag_fini(&dc);
			failures++;
			continue;
		}
		diag_fini(&dc);
		sets++;
		/* the permission-only automaton, built rule by rule */
		struct dfa_build_opts po = o;
		po.perms_only = true;
		struct dfa *q;
		rc = dfa_build(pc.rules, pc.n, &po, &q, NULL);
		if (rc) {
			prop_case_print(&pc, seed);
			print_error("  perms_only build failed: %d\n", rc);
			failures++;
			dfa_free(d);
			continue;
		}

		for (int t = 0; t < 40; t++, cases++) {
			struct prop_buf text;
			if (prop_chance(30))
				prop_gen_text_random(&text);
			else
				prop_gen_text_from(&text, pc.rules[prop_below((unsigned)pc.n)].glob);
			uint32_t want, got, gotq;
			unsigned ids[PROP_MAX_RULES];
			size_t nids;
			struct dfa_rules rules;
			prop_ref_eval(&pc, text.s, &want, ids, &nids);
			dfa_match(d, text.s, text.n, &got, &rules);
			dfa_match(q, text.s, text.n, &gotq, NULL);
			matched += nids > 0;
			bool ok = want == got && want == gotq && nids == rules.n &&
				  (!nids || memcmp(ids, rules.ids, nids * sizeof(unsigned)) == 0);
			if (ok && t % 8 == 0) {
				/* exact provenance by running the globs */
				unsigned *sids;
				size_t ns = dfa_string_rules(q, text.s, text.n, &sids);
				ok = ns == nids && (!ns || memcmp(ids, sids, ns * sizeof(unsigned)) == 0);
				free(sids);
			}
			if (!ok) {
				prop_case_print(&pc, seed);
				print_error("  text '%s': reference perms %u (%zu rules), dfa perms %u (%zu rules), perms-only dfa %u\n",
					    text.s, want, nids, got, rules.n, gotq);
				failures++;
				break;
			}
		}

		if (sets % 8 == 4) {
			/* folding rule by rule and reducing the provenance automaton
			 * reach the same minimal automaton */
			struct dfa *r;
			assert_int_equal(dfa_perms_reduce(d, &r), 0);
			if (!prop_same_tables(q, r)) {
				prop_case_print(&pc, seed);
				print_error("  perms_only and dfa_perms_reduce differ\n");
				failures++;
			}
			dfa_free(r);
		}
		dfa_free(q);

		if (sets % 8 == 0) {
			/* the same rules in reverse order: byte-identical tables */
			struct prop_case rev = pc;
			for (size_t i = 0; i < pc.n; i++) {
				rev.rules[i] = pc.rules[pc.n - 1 - i];
				rev.rules[i].glob = pc.globs[pc.n - 1 - i].s;
			}
			struct dfa *d2;
			assert_int_equal(dfa_build(rev.rules, rev.n, &o, &d2, NULL), 0);
			if (!prop_same_tables(d, d2)) {
				prop_case_print(&pc, seed);
				print_error("  reversed rule order gives different tables\n");
				failures++;
			}
			dfa_free(d2);
		}
		dfa_free(d);
	}
	fprintf(stderr,
		"test_dfa_props: %ld cases over %ld rule sets (%ld sets over the build bound skipped), %ld matched some rule\n",
		cases, sets, too_big, matched);
	assert_int_equal(failures, 0);
	assert_true(too_big * 50 < sets);
	/* the generator must keep producing matches, or the test proves little */
	assert_true(matched * 4 > cases);
}

/* The reference matcher itself, on rows whose answers are known. */
static void test_dfa_props_reference_sane(void **state)
{
	(void)state;
	static const struct {
		const char *g, *t;
		bool m;
	} rows[] = {
		{ "/a/**/b", "/a/b", true },     { "/a/**/b", "/a/x/y/b", true },
		{ "/a/**/b", "/a/xb", false },   { "/dir/**", "/dir", false },
		{ "/dir/**", "/dir/x/y", true }, { "**/x", "x", true },
		{ "/a/{b,c/d}", "/a/c/d", true }, { "/a/{b,c/d}", "/a/c", false },
		{ "/{a,{b,c}x}", "/cx", true },  { "/[!a]", "/b", true },
		{ "/[!a]", "/a", false },        { "/a**", "/ax/y", false },
		{ "{a,/}**", "/x/y", true },     { "[[:alpha:]]", "q", true },
		{ "/[{]x", "/{x", true },        { "/{[},]x,y}", "/,x", true },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		if (ref_match(rows[i].g, rows[i].t) != rows[i].m)
			fail_msg("reference: '%s' on '%s'", rows[i].g, rows[i].t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dfa_props_reference_sane),
		cmocka_unit_test(test_dfa_props_reference),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
