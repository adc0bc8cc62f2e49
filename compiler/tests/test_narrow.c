/* SPDX-License-Identifier: GPL-2.0-only */
/* test_narrow: what libbeec computes for the loader (narrow.h, glob_prefix.h),
 * table driven:
 *
 *   - revoke's narrowing: fs/exec automata against the policy without the
 *     rule on many strings (never wider than the live image, exact when
 *     it says so, narrower-but-reported when not; every write safe to
 *     read half-done), a narrowed automaton that widens refused, and
 *     network values recomputed from provenance equal to the compiler's
 *   - the literal prefixes of write globs (braces, escapes, literals), from
 *     which bee-load's Landlock hardening and mount namespace start
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "policy_text.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bee_dfa.h"
#include "bee_net.h"
#include "eval.h"
#include "image.h"
#include "libbeec.h"
#include "netset.h"

/* ---- helpers ---------------------------------------------------------------------- */


/* ---- automata --------------------------------------------------------------------- */

static const char *const sample_paths[] = {
	"/", "/a", "/a/b", "/a/c", "/a/b/x", "/a/c/x", "/a/bb", "/etc/passwd", "/etc/shadow", "/etc",
	"/usr/lib/libc.so", "/usr/bin/sh", "/usr", "/home/dev/src/app", "/home/dev/src/app/out/x",
	"/home/dev/src/app/.env", "/home/dev/src/app/k.pem", "/home/dev/.ssh/id", "/x/y/z.pem",
};

/* Random paths over the bytes the rules use. */
static void random_path(unsigned *seed, char *buf, size_t size)
{
	static const char alpha[] = "/abcehlprsuxz.";
	size_t n = 1 + (size_t)(rand_r(seed) % (int)(size - 2));
	buf[0] = '/';
	for (size_t i = 1; i < n; i++)
		buf[i] = alpha[rand_r(seed) % (int)(sizeof(alpha) - 1)];
	buf[n] = '\0';
}

static uint32_t walk(const void *img, const char *s)
{
	struct bee_verdict v;
	bee_eval_dfa(img, s, strlen(s), &v);
	return v.perms;
}

struct narrow_case {
	const char *policy;
	enum ir_domain domain;
	unsigned revoke;
	int nwrites;                /* 1: permission words lowered; 3: replaced */
	bool exact;
	size_t extra_value;         /* bytes the map value has beyond the image */
};

/* The walk of the BPF programs over a buffer of value_size bytes. */
static uint32_t walk_value(const void *value, size_t value_size, const char *s)
{
	struct bee_dfa_answer a;
	bee_dfa_match(value, (__u32)value_size, (const __u8 *)s, (__u32)strlen(s), &a);
	return a.perms;
}

/* A half-done write: each byte from a or b. */
static void mix(const uint8_t *a, const uint8_t *b, uint8_t *out, size_t n, unsigned *seed)
{
	for (size_t i = 0; i < n; i++)
		out[i] = rand_r(seed) & 1 ? a[i] : b[i];
}

static const char *next_path(size_t i, unsigned *seed, char *buf, size_t size)
{
	if (i < sizeof(sample_paths) / sizeof(sample_paths[0]))
		return sample_paths[i];
	random_path(seed, buf, size);
	return buf;
}

static void narrow_one(const struct narrow_case *c)
{
	struct policy pol;
	policy_text(&pol, c->policy);
	const struct ir_policy *ir = pol.p.ir;
	size_t live_len;
	struct bee_dfa_hdr *img = image_dfa_write(pol.p.lw->dfa[c->domain], &live_len);
	size_t vs = live_len + c->extra_value;
	uint8_t *live = calloc(1, vs), *m = malloc(vs);
	memcpy(live, img, live_len);
	bool *ex = calloc(ir->nrules, sizeof(bool));
	ex[c->revoke] = true;
	struct lower_opts lo = { .sz = sizeof(lo), .exclude = ex };
	struct lowered *lw;
	assert_int_equal(lower_policy(ir, &lo, NULL, &lw), 0);
	size_t want_len;
	struct bee_dfa_hdr *want = image_dfa_write(lw->dfa[c->domain], &want_len);
	struct beec_narrow_plan plan;
	assert_int_equal(beec_narrow__plan((struct bee_dfa_hdr *)live, vs, lw->dfa[c->domain], &plan), 0);
	if (plan.nwrites != c->nwrites || plan.exact != c->exact)
		fprintf(stderr, "policy %s: writes %d exact %d, over %u, example '%s'\n", c->policy, plan.nwrites,
			plan.exact, plan.rep.states_over, plan.rep.example);
	assert_int_equal(plan.nwrites, c->nwrites);
	assert_int_equal(plan.exact, c->exact);
	const uint8_t *final = plan.writes[plan.nwrites - 1];
	unsigned seed = 7;
	char path[64];
	for (size_t i = 0; i < 20000; i++) {
		const char *s = next_path(i, &seed, path, sizeof(path));
		uint32_t o = walk(live, s), n = walk_value(final, vs, s), w = walk(want, s);
		assert_int_equal(n & ~o, 0);      /* never wider than the live image */
		assert_int_equal(n & ~w, 0);      /* never wider than the policy without the rule */
		if (plan.exact)
			assert_int_equal(n, w);
	}
	/* every write may be read half-done: never wider than before it, and
	 * in the middle of a replacement never anything at all */
	const uint8_t *before = live;
	for (int k = 0; k < plan.nwrites; k++) {
		const uint8_t *after = plan.writes[k];
		for (int round = 0; round < 200; round++) {
			mix(before, after, m, vs, &seed);
			for (size_t i = 0; i < 200; i++) {
				const char *s = next_path(i, &seed, path, sizeof(path));
				uint32_t got = walk_value(m, vs, s);
				uint32_t limit = walk_value(before, vs, s) | walk_value(after, vs, s);
				if (plan.nwrites == 3 && k == 1)
					limit = 0;
				assert_int_equal(got & ~limit, 0);
				assert_int_equal(got & ~walk(live, s), 0);
			}
		}
		before = after;
	}
	if (!plan.exact) {
		assert_true(strlen(plan.rep.example) > 0);
		assert_int_not_equal(walk(want, plan.rep.example) & ~walk_value(final, vs, plan.rep.example), 0);
	}
	beec_narrow__plan_fini(&plan);
	free(m);
	free(live);
	free(img);
	free(want);
	free(ex);
	lowered_free(lw);
	policy_free(&pol);
}

static void test_narrow_dfa(void **state)
{
	(void)state;
	static const struct narrow_case rows[] = {
		/* write taken, read stays: permission words only, exact */
		{ "version = 1\nname = \"t\"\n[fs]\nread = [\"/a/**\"]\nwrite = [\"/a/**\"]\n", IR_DOMAIN_FS, 1, 1,
		  true, 0 },
		/* the live table merged what the two globs reach: replaced */
		{ "version = 1\nname = \"t\"\n[fs]\nread = [\"/usr/**\", \"/x/**\"]\ndeny = [\"**/*.pem\"]\n",
		  IR_DOMAIN_FS, 1, 3, true, 0 },
		/* two files read alike share an accepting state: replaced */
		{ "version = 1\nname = \"t\"\n[fs]\nread = [\"/etc/passwd\", \"/etc/shadow\", \"/usr/**\"]\n",
		  IR_DOMAIN_FS, 1, 3, true, 0 },
		{ "version = 1\nname = \"t\"\n[exec]\nallow = [\"/usr/bin/sh\", \"/usr/bin/ls\", \"/usr/lib/**\"]\n",
		  IR_DOMAIN_EXEC, 0, 3, true, 0 },
		/* without "/a/ **", "/a/b" needs states the live table lacks:
		 * permission words only, and "/a/b" loses its read too */
		{ "version = 1\nname = \"t\"\n[fs]\nread = [\"/a/**\", \"/a/b\"]\n", IR_DOMAIN_FS, 0, 1, false, 0 },
		{ "version = 1\nname = \"t\"\n[fs]\nread = [\"/a/**\", \"/a/b\"]\n", IR_DOMAIN_FS, 0, 1, false, 64 },
		{ "version = 1\nname = \"t\"\n[fs]\nread = [\"/a/**\", \"/a/b/c\", \"/a/x*/y\"]\n", IR_DOMAIN_FS, 0, 1,
		  false, 0 },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		narrow_one(&rows[i]);
}

/* A narrowed automaton that widens is refused. */
static void test_narrow_refuses_widening(void **state)
{
	(void)state;
	struct policy a, b;
	policy_text(&a, "version = 1\nname = \"t\"\n[fs]\nread = [\"/etc/passwd\"]\n");
	policy_text(&b, "version = 1\nname = \"t\"\n[fs]\nread = [\"/etc/passwd\", \"/etc/shadow\"]\n");
	size_t len;
	struct bee_dfa_hdr *live = image_dfa_write(a.p.lw->dfa[IR_DOMAIN_FS], &len);
	void *out = malloc(len);
	struct beec_narrow_report rep;
	assert_int_equal(beec_narrow__dfa(live, b.p.lw->dfa[IR_DOMAIN_FS], out, &rep), -EINVAL);
	free(out);
	free(live);
	policy_free(&a);
	policy_free(&b);
}

/* ---- network values ------------------------------------------------------------------ */

static void test_narrow_net(void **state)
{
	(void)state;
	struct policy pol;
	policy_text(&pol, "version = 1\nname = \"t\"\n[net]\n"
			  "connect = [\"10.0.0.0/8:1-100\", \"10.1.0.0/16:50-200\", \"10.1.0.0/16:300\", \"[::1]:80\"]\n"
			  "bind = [\"127.0.0.1:8000\"]\n"
			  "deny = [\"10.1.2.0/24:60\"]\n");
	const struct ir_policy *ir = pol.p.ir;
	const struct netset *ns = pol.p.lw->net;
	struct netset_image img;
	netset_image_build(ns, &img);
	/* every entry from its provenance equals the compiler's value */
	for (size_t i = 0; i < ns->nentries; i++) {
		const struct netset_entry *en = &ns->entries[i];
		unsigned prov[16];
		for (unsigned j = 0; j < en->nrules; j++)
			prov[j] = ns->rules[en->rules[j]].index;
		const struct bee_net_value *want = i < ns->n4 ? &img.values4[i] : &img.values6[i - ns->n4];
		struct bee_net_value v = *want;
		assert_int_equal(beec_narrow__net_value(ir, prov, en->nrules, en->dir, en->proto, NULL, &v), 0);
		assert_memory_equal(&v, want, sizeof(v));
		/* without rule 1 (10.1.0.0/16:50-200): ports only go away */
		bool ex[8] = { false, true };
		struct bee_net_value n = *want;
		beec_narrow__net_value(ir, prov, en->nrules, en->dir, en->proto, ex, &n);
		for (unsigned p = 0; p < 65536; p++) {
			int before = bee_net_ports_allow(want, (uint16_t)p), after = bee_net_ports_allow(&n, (uint16_t)p);
			assert_false(after && !before);
		}
		/* the /16 entry keeps 1-59, 61-100 (rule 0), 300 (rule 2), minus the deny for the /24 */
		if (en->family == IR_NET_IPV4 && en->prefix == 16 && en->dir == BEE_NET_CONNECT) {
			assert_int_equal(n.nranges, 2);
			assert_int_equal(n.ranges[0].lo, 1);
			assert_int_equal(n.ranges[0].hi, 100);
			assert_int_equal(n.ranges[1].lo, 300);
		}
		if (en->family == IR_NET_IPV4 && en->prefix == 24) {
			assert_int_equal(n.nranges, 3);   /* 1-59, 61-100, 300 */
			assert_int_equal(n.ranges[1].lo, 61);
		}
	}
	netset_image_free(&img);
	policy_free(&pol);
}

/* ---- literal prefixes of write globs ---------------------------------------------------- */

static void test_write_prefixes(void **state)
{
	(void)state;
	static const struct {
		const char *glob;
		int n;
		const char *want[3];
		bool literal[3];
	} rows[] = {
		{ "/home/dev/src/app/target/**", 1, { "/home/dev/src/app/target" }, { false } },
		{ "/tmp/bee-*/**", 1, { "/tmp" }, { false } },
		{ "/dev/null", 1, { "/dev/null" }, { true } },
		{ "/**", 1, { "/" }, { false } },
		{ "/*.log", 1, { "/" }, { false } },
		{ "/a/b?/c", 1, { "/a" }, { false } },
		{ "/a/[xy]/**", 1, { "/a" }, { false } },
		{ "/a/b/", 1, { "/a/b/" }, { true } },
		{ "/a/{x,y}/**", 2, { "/a/x", "/a/y" }, { false, false } },
		{ "/home/dev/src/app{,/**}", 2, { "/home/dev/src/app", "/home/dev/src/app" }, { true, false } },
		{ "/a/{x,y/{p,q}}/z", 3, { "/a/x/z", "/a/y/p/z", "/a/y/q/z" }, { true, true, true } },
		{ "/a/{x,y}*", 1, { "/a" }, { false } },
		{ "{/a,/b}/**", 2, { "/a", "/b" }, { false, false } },
		{ "/a/\\*b/**", 1, { "/a/*b" }, { false } },
		{ "/a/b{c/**", 1, { "/a" }, { false } },
	};
	struct beec_prefix px[4];
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		int n = beec_glob__write_prefixes(rows[i].glob, px, 4);
		if (n != rows[i].n)
			fail_msg("'%s': %d prefixes, want %d", rows[i].glob, n, rows[i].n);
		for (int k = 0; k < n; k++) {
			if (strcmp(px[k].path, rows[i].want[k]) != 0 || px[k].literal != rows[i].literal[k])
				fail_msg("'%s' #%d: '%s' %s, want '%s' %s", rows[i].glob, k, px[k].path,
					 px[k].literal ? "literal" : "prefix", rows[i].want[k],
					 rows[i].literal[k] ? "literal" : "prefix");
		}
	}
	assert_int_equal(beec_glob__write_prefixes("relative/**", px, 4), -EINVAL);
	assert_int_equal(beec_glob__write_prefixes("/{a,b,c,d,e}/**", px, 4), -E2BIG);
}

/* ---- the policy without rules, through libbeec.h ----------------------------------------- */

/* beec_policy__lower_without leaves exactly the excluded rules out: the
 * policy without its write rule reads but no longer writes. */
static void test_lower_without(void **state)
{
	(void)state;
	struct policy pol;
	policy_text(&pol, "version = 1\nname = \"t\"\n[fs]\nread = [\"/a/**\"]\nwrite = [\"/a/**\"]\n");
	bool ex[2] = { false, true };
	struct lowered *lw;
	assert_int_equal(beec_policy__lower_without(&pol.p, ex, &pol.dc, &lw), 0);
	size_t len;
	struct bee_dfa_hdr *img = image_dfa_write(lw->dfa[IR_DOMAIN_FS], &len);
	assert_int_equal(walk(img, "/a/x"), BEE_PERM_READ);
	free(img);
	img = image_dfa_write(pol.p.lw->dfa[IR_DOMAIN_FS], &len);
	assert_int_equal(walk(img, "/a/x"), BEE_PERM_READ | BEE_PERM_WRITE);
	free(img);
	beec_lowered__free(lw);
	policy_free(&pol);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_narrow_dfa),
		cmocka_unit_test(test_narrow_refuses_widening),
		cmocka_unit_test(test_narrow_net),
		cmocka_unit_test(test_lower_without),
		cmocka_unit_test(test_write_prefixes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
