/* SPDX-License-Identifier: GPL-2.0-only */
/* test_bpf_match: the matchers of runtime/ in the kernel, against the host
 * evaluator.
 *
 * build/bpf/match.bpf.o holds the walk of runtime/bee_dfa.h and the network
 * decision of runtime/bee_net.h compiled as BPF (bpf/match.bpf.c). For every
 * example policy (the .toml files in policies/) and for generated policies of 1,000 and
 * 10,000 rules, the compiler lowers the policy and writes its map images;
 * the object is loaded with its maps sized to them (the kernel verifier must
 * accept it) and filled from them, and each program runs through
 * BPF_PROG_TEST_RUN on generated inputs:
 *
 *   paths     >= 10,000 per automaton (fs, exec, env): instantiated from the
 *             domain's globs (many allowed), mutated, random, and of exactly
 *             1, 2, 64, 255, 256, 4094, 4095, 4096 and 5000 bytes; state,
 *             permissions and the too-long flag must equal bee_eval_dfa's
 *   endpoints >= 10,000 per policy: inside, at and just outside the LPM
 *             entries, IPv4, IPv6 and IPv4-mapped IPv6, ports at range
 *             edges; allow, the map asked and the matching entry's
 *             provenance must equal net_eval_decide's
 *
 * A table of fixed answers and images corrupted on purpose keep the two
 * sides from agreeing on something wrong. The mean cost of a walk comes from
 * bpf_ktime_get_ns() inside the program (syscall programs take no repeat),
 * that of a network decision from the kernel's own duration with repeat.
 *
 * Needs root: without it the suite prints SKIPPED and passes, unless CI is
 * set, when it fails. Runs from the repository root. The inputs come from
 * BEE_SEED (default fixed, so runs repeat); every failure prints the seed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/examples.h"
#include "tests/seed.h"
#include "bpf/bee_match.h"
#include "eval.h"
#include "image.h"
#include "libbeec.h"
#include "lower.h"
#include "net_eval.h"
#include "netset.h"
#include "pack.h"
#include "pack_build.h"

#define OBJ_PATH BEE_BUILD_DIR "/bpf/match.bpf.o"
#define PATH_CASES 10000          /* per automaton image */
#define NET_CASES 10000           /* per policy */
#define LONGEST 5000              /* longest path asked, over the bound */
#define XDP_PASS_RC 2
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static const char *const defines[] = { "HOME=/home/you", "PROJECT=/home/you/project" };

/* ---- determinism ------------------------------------------------------------ */

static uint64_t seed, rng;

static uint64_t rnd(void)
{
	return test_rng_next(&rng);
}

static unsigned below(unsigned n)
{
	return n ? (unsigned)(rnd() % n) : 0;
}

static bool chance(unsigned pct)
{
	return below(100) < pct;
}

static unsigned failures;

#define CASE_FAIL(...)                                                            \
	do {                                                                      \
		if (failures++ < 10) {                                            \
			print_error(__VA_ARGS__);                                 \
			print_error(" (BEE_SEED=%" PRIu64 " replays)\n", seed);   \
		}                                                                 \
	} while (0)

/* ---- the kernel side ---------------------------------------------------------- */

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	/* warnings carry the verifier's log when a load fails */
	if (level == LIBBPF_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

struct kern {
	struct bpf_object *obj;
	int path_fd, net_fd;
	int dfa_fd, net4_fd, net6_fd;
};

static struct bpf_map *kern_map(struct kern *k, const char *name)
{
	struct bpf_map *m = bpf_object__find_map_by_name(k->obj, name);
	if (!m)
		fail_msg("%s: no map '%s'", OBJ_PATH, name);
	return m;
}

/* Loads the object with bee_dfa's value (and the walk's bound) of
 * value_size bytes and tries for n4/n6 entries. A refusal fails the test;
 * libbpf has printed the verifier's log by then. */
static void kern_load(struct kern *k, uint32_t value_size, size_t n4, size_t n6)
{
	memset(k, 0, sizeof(*k));
	k->obj = bpf_object__open_file(OBJ_PATH, NULL);
	if (!k->obj)
		fail_msg("%s: cannot open: %s (make %s)", OBJ_PATH, strerror(errno), OBJ_PATH);
	assert_int_equal(bpf_map__set_value_size(kern_map(k, "bee_dfa"), value_size), 0);
	size_t rosz = 0;
	uint32_t *image_max = (uint32_t *)bpf_map__initial_value(kern_map(k, ".rodata"), &rosz);
	assert_non_null(image_max);
	assert_int_equal(rosz, sizeof(*image_max));   /* bee_dfa_image_max alone */
	*image_max = value_size;
	/* an LPM trie cannot be empty of room */
	assert_int_equal(bpf_map__set_max_entries(kern_map(k, "bee_net4"), n4 ? (uint32_t)n4 : 1), 0);
	assert_int_equal(bpf_map__set_max_entries(kern_map(k, "bee_net6"), n6 ? (uint32_t)n6 : 1), 0);
	int err = bpf_object__load(k->obj);
	if (err)
		fail_msg("%s: the kernel refused to load it: %s (verifier log above)", OBJ_PATH,
			 strerror(-err));
	k->path_fd = bpf_program__fd(bpf_object__find_program_by_name(k->obj, "bee_match_path"));
	k->net_fd = bpf_program__fd(bpf_object__find_program_by_name(k->obj, "bee_match_net"));
	k->dfa_fd = bpf_map__fd(kern_map(k, "bee_dfa"));
	k->net4_fd = bpf_map__fd(kern_map(k, "bee_net4"));
	k->net6_fd = bpf_map__fd(kern_map(k, "bee_net6"));
	assert_true(k->path_fd >= 0 && k->net_fd >= 0 && k->dfa_fd >= 0);
}

static void kern_close(struct kern *k)
{
	bpf_object__close(k->obj);   /* closes every program and map fd */
	memset(k, 0, sizeof(*k));
}

static void kern_load_dfa(struct kern *k, const struct bee_dfa_hdr *img, size_t len)
{
	uint32_t zero = 0;
	kern_load(k, (uint32_t)len, 0, 0);
	assert_int_equal(bpf_map_update_elem(k->dfa_fd, &zero, img, BPF_ANY), 0);
}

/* A copy of img without hops[], as a live revoke that replaces next[]
 * leaves it (the header keeps hops, the size drops the table): the walk
 * then takes next[]. *len is its size. */
static struct bee_dfa_hdr *image_bytes_only(const struct bee_dfa_hdr *img, size_t *len)
{
	*len = bee_dfa_image_size(img->nstates, img->nclasses);
	struct bee_dfa_hdr *b = malloc(*len);
	assert_non_null(b);
	memcpy(b, img, *len);
	b->size = (uint32_t)*len;
	return b;
}

/* The too-long path as the kernel gets it: its first BEE_PATH_MAX bytes. */
static struct bee_match_path_ctx path_ctx;

/* Runs bee_match_path on s[0..len); the answer is in path_ctx. */
static void kern_path(const struct kern *k, const uint8_t *s, size_t len)
{
	memset(&path_ctx, 0, offsetof(struct bee_match_path_ctx, path));
	path_ctx.len = (uint32_t)len;
	memcpy(path_ctx.path, s, len < BEE_PATH_MAX ? len : BEE_PATH_MAX);
	/* a syscall program's context comes back in ctx_in: no ctx_out, no repeat */
	LIBBPF_OPTS(bpf_test_run_opts, o, .ctx_in = &path_ctx, .ctx_size_in = sizeof(path_ctx));
	int err = bpf_prog_test_run_opts(k->path_fd, &o);
	if (err || o.retval != 0)
		fail_msg("bee_match_path: BPF_PROG_TEST_RUN: %s, retval %u", strerror(errno), o.retval);
}

/* ---- text for messages ---------------------------------------------------------- */

static const char *show(const uint8_t *s, size_t len)
{
	static char out[200];
	size_t o = 0;
	for (size_t i = 0; i < len && o + 8 < sizeof(out); i++) {
		if (isprint(s[i]) && s[i] != '\\')
			out[o++] = (char)s[i];
		else
			o += (size_t)snprintf(out + o, sizeof(out) - o, "\\x%02x", s[i]);
	}
	if (o + 8 >= sizeof(out))
		o += (size_t)snprintf(out + o, sizeof(out) - o, "...");
	out[o] = '\0';
	return out;
}

/* ---- paths from globs ---------------------------------------------------------------- */

struct pbuf {
	uint8_t s[LONGEST + 64];
	size_t n;
};

static void pb_put(struct pbuf *b, uint8_t c)
{
	if (b->n < sizeof(b->s))
		b->s[b->n++] = c;
}

static uint8_t name_char(void)
{
	static const char set[] = "abcdefghijklmnopqrstuvwxyz0123456789._-ABCXYZ";
	return (uint8_t)set[below(sizeof(set) - 1)];
}

static void pb_name(struct pbuf *b, unsigned max)
{
	for (unsigned i = 1 + below(max); i > 0; i--)
		pb_put(b, name_char());
}

static bool posix_has(const char *name, size_t len, int c)
{
#define N(s) (len == strlen(s) && strncmp(name, s, len) == 0)
	if (N("alnum")) return isalnum(c);
	if (N("alpha")) return isalpha(c);
	if (N("digit")) return isdigit(c);
	if (N("lower")) return islower(c);
	if (N("upper")) return isupper(c);
	if (N("xdigit")) return isxdigit(c);
	if (N("punct")) return ispunct(c);
	if (N("space")) return isspace(c);
	if (N("print")) return isprint(c);
	if (N("graph")) return isgraph(c);
#undef N
	return false;
}

/* Does printable c belong to the class at p ('[')? *end is set past ']'. */
static bool class_has(const char *p, int c, const char **end)
{
	bool neg = false, hit = false, first = true;
	p++;
	if (*p == '!' || *p == '^') {
		neg = true;
		p++;
	}
	while (*p && (*p != ']' || first)) {
		first = false;
		if (p[0] == '[' && p[1] == ':') {
			const char *e = strstr(p + 2, ":]");
			if (e) {
				hit |= posix_has(p + 2, (size_t)(e - p - 2), c);
				p = e + 2;
				continue;
			}
		}
		if (*p == '\\' && p[1])
			p++;
		int lo = (unsigned char)*p++, hi = lo;
		if (p[0] == '-' && p[1] && p[1] != ']') {
			p++;
			if (*p == '\\' && p[1])
				p++;
			hi = (unsigned char)*p++;
		}
		hit |= lo <= c && c <= hi;
	}
	*end = *p ? p + 1 : p;
	return hit != neg;
}

/* Appends a string that the glob g (up to gend) likely matches. */
static void gen_from_glob(struct pbuf *b, const char *g, const char *gend)
{
	while (g < gend && *g) {
		if (*g == '\\' && g + 1 < gend) {
			pb_put(b, (uint8_t)g[1]);
			g += 2;
		} else if (g[0] == '*' && g + 1 < gend && g[1] == '*') {
			g += 2;
			if (g < gend && *g == '/') {
				/* a whole-segment double star: zero or more segments */
				for (unsigned k = below(3); k > 0; k--) {
					pb_name(b, 8);
					pb_put(b, '/');
				}
				g++;
			} else {
				/* a trailing double star: something below */
				for (unsigned k = 1 + below(3); k > 0; k--) {
					pb_name(b, 8);
					if (k > 1)
						pb_put(b, '/');
				}
			}
		} else if (*g == '*') {
			for (unsigned k = below(6); k > 0; k--)
				pb_put(b, name_char());
			g++;
		} else if (*g == '?') {
			pb_put(b, name_char());
			g++;
		} else if (*g == '[') {
			const char *end = g;
			int pick = -1;
			for (int tries = 0; tries < 64 && pick < 0; tries++) {
				int c = tries < 48 ? name_char() : 32 + (int)below(95);
				if (c != '/' && class_has(g, c, &end))
					pick = c;
			}
			class_has(g, 'x', &end);
			pb_put(b, (uint8_t)(pick >= 0 ? pick : 'x'));
			g = end;
		} else if (*g == '{') {
			/* the alternatives at depth 1, then what follows the '}' */
			const char *alt[32], *alt_end[32];
			unsigned nalt = 0, depth = 0;
			const char *p = g + 1, *start = p;
			for (; p < gend && *p; p++) {
				if (*p == '\\' && p + 1 < gend) {
					p++;
				} else if (*p == '{') {
					depth++;
				} else if (*p == '}' && depth) {
					depth--;
				} else if ((*p == ',' || *p == '}') && !depth) {
					if (nalt < ARRAY_LEN(alt)) {
						alt[nalt] = start;
						alt_end[nalt++] = p;
					}
					start = p + 1;
					if (*p == '}')
						break;
				}
			}
			if (nalt) {
				unsigned a = below(nalt);
				gen_from_glob(b, alt[a], alt_end[a]);
			}
			g = p < gend && *p ? p + 1 : p;
		} else {
			pb_put(b, (uint8_t)*g++);
		}
	}
}

/* A near miss or a plain variant of what is in b. */
static void mutate(struct pbuf *b)
{
	switch (below(6)) {
	case 0:
		pb_put(b, name_char());
		break;
	case 1:
		pb_put(b, '/');
		pb_name(b, 6);
		break;
	case 2:
		if (b->n)
			b->s[below((unsigned)b->n)] = name_char();
		break;
	case 3:
		if (b->n)
			b->n = below((unsigned)b->n) + 1;
		break;
	case 4:
		if (b->n)
			b->s[below((unsigned)b->n)] = (uint8_t)below(256);   /* NUL and high bytes too */
		break;
	default:
		if (b->n && b->s[b->n - 1] != '/')
			pb_put(b, '/');
		break;
	}
}

static void gen_random(struct pbuf *b)
{
	static const char *const words[] = {
		"usr", "lib", "bin", "etc", "home", "you", "project", "target", "debug", "tmp",
		".ssh", ".cargo", "registry", "git", "proc", "1234", "sys", "dev", "null", "gen",
		"src", "tmp", "var", "w1", "f12", "f7", "t3", "x86_64-linux-gnu", "libc.so.6",
		"id_rsa", ".env", "a.pem", "CARGO_HOME", "PATH", "LC_ALL", "GEN12_X",
	};
	b->n = 0;
	if (chance(10)) {
		for (unsigned k = below(40); k > 0; k--)
			pb_put(b, (uint8_t)below(256));
		return;
	}
	if (chance(85))
		pb_put(b, '/');
	for (unsigned k = 1 + below(6); k > 0; k--) {
		const char *w = words[below(ARRAY_LEN(words))];
		for (; *w; w++)
			pb_put(b, (uint8_t)*w);
		if (k > 1)
			pb_put(b, '/');
	}
}

/* Pads b with segments (or cuts it) to exactly len bytes. */
static void fit_len(struct pbuf *b, size_t len)
{
	if (b->n > len)
		b->n = len;
	while (b->n < len) {
		pb_put(b, b->n && b->s[b->n - 1] != '/' ? '/' : name_char());
		for (unsigned k = 1 + below(12); k > 0 && b->n < len; k--)
			pb_put(b, name_char());
	}
}

/* ---- policies --------------------------------------------------------------------------- */

struct policy {
	char name[64];
	struct beec_policy p;
	struct lowered *lw;
};

static void policy_lower(struct policy *pol, unsigned max_states)
{
	struct diag_ctx dc;
	diag_init(&dc);
	struct lower_opts lo = { .sz = sizeof(lo), .max_states = max_states };
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (lower_policy(pol->p.ir, &lo, &dc, &pol->lw) < 0) {
		diag_print(&dc, stderr);
		fail_msg("%s: lowering failed", pol->name);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	diag_fini(&dc);
	fprintf(stderr, "test_bpf_match: %s: %zu rules lowered in %.2f s\n", pol->name,
		pol->p.ir->nrules,
		(double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
}

static void policy_load_file(struct policy *pol, const char *path)
{
	struct diag_ctx dc;
	struct beec_opts o = { .sz = sizeof(o), .defines = defines, .ndefines = ARRAY_LEN(defines) };
	memset(pol, 0, sizeof(*pol));
	const char *base = strrchr(path, '/');
	snprintf(pol->name, sizeof(pol->name), "%.60s", base ? base + 1 : path);
	diag_init(&dc);
	int rc = beec_policy__load(&pol->p, path, &o, &dc);
	if (rc < 0) {
		diag_print(&dc, stderr);
		fail_msg("%s: cannot load: %s", path, strerror(-rc));
	}
	diag_fini(&dc);
	policy_lower(pol, 0);
}

static void policy_free(struct policy *pol)
{
	lowered_free(pol->lw);
	beec_policy__fini(&pol->p);
}

/* The globs (rule texts) of one domain. */
struct globs {
	const char **g;
	size_t n;
};

static struct globs domain_globs(const struct policy *pol, enum ir_domain dom)
{
	const struct ir_policy *ir = pol->p.ir;
	struct globs gl = { calloc(ir->nrules + 1, sizeof(char *)), 0 };
	for (size_t i = 0; i < ir->nrules; i++)
		if (ir_rule_kind_domain(ir->rules[i].kind) == dom)
			gl.g[gl.n++] = ir->rules[i].text;
	return gl;
}

/* ---- paths: kernel against host ----------------------------------------------------------- */

struct path_stats {
	long cases, allowed, denied, too_long, lengths[12];
};

/* the edges of the walk: nothing, one byte, a cache line either side, the
 * longest path and beyond */
static const size_t exact_lens[] = { 0, 1, 2, 3, 63, 64, 255, 256, 4094, 4095, 4096, 5000 };

static void path_check(const struct kern *k, const struct bee_dfa_hdr *img,
		       const struct bee_dfa_hdr *bytes, const char *what, const struct pbuf *b,
		       struct path_stats *st)
{
	struct bee_verdict v, vb;
	bee_eval_dfa(img, (const char *)b->s, b->n, &v);
	/* the two tables of one image give one walk */
	bee_eval_dfa(bytes, (const char *)b->s, b->n, &vb);
	if (vb.state != v.state || vb.perms != v.perms || vb.too_long != v.too_long)
		CASE_FAIL("%s: path '%s' (%zu bytes): hops[] state %u perms %#x, next[] state %u "
			  "perms %#x", what, show(b->s, b->n), b->n, v.state, v.perms, vb.state, vb.perms);
	kern_path(k, b->s, b->n);
	st->cases++;
	st->allowed += v.perms != 0;
	st->denied += v.perms == 0;
	st->too_long += v.too_long;
	for (size_t i = 0; i < ARRAY_LEN(exact_lens); i++)
		st->lengths[i] += b->n == exact_lens[i];
	if (path_ctx.state != v.state || path_ctx.perms != v.perms ||
	    path_ctx.too_long != (uint32_t)v.too_long)
		CASE_FAIL("%s: path '%s' (%zu bytes): kernel state %u perms %#x too_long %u, "
			  "host state %u perms %#x too_long %d",
			  what, show(b->s, b->n), b->n, path_ctx.state, path_ctx.perms,
			  path_ctx.too_long, v.state, v.perms, v.too_long);
}

static void gen_path(struct pbuf *b, const struct globs *gl)
{
	b->n = 0;
	if (gl->n && chance(65)) {
		const char *g = gl->g[below((unsigned)gl->n)];
		gen_from_glob(b, g, g + strlen(g));
		if (chance(30))
			mutate(b);
	} else {
		gen_random(b);
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* Median ns of bpf_ktime_get_ns() around the match, over runs of s: the
 * two cores here are shared, and a mean would count whatever preempted a
 * run. Each run is its own BPF_PROG_TEST_RUN, so the walk finds the
 * table as a hook would between two syscalls, not hot from a loop. */
static double walk_ns(const struct kern *k, const struct pbuf *b, unsigned runs)
{
	uint64_t *ns = calloc(runs, sizeof(*ns));
	assert_non_null(ns);
	for (unsigned i = 0; i < runs; i++) {
		kern_path(k, b->s, b->n);
		ns[i] = path_ctx.walk_ns;
	}
	qsort(ns, runs, sizeof(*ns), cmp_u64);
	double med = (double)ns[runs / 2];
	free(ns);
	return med;
}

/* An allowed path of exactly len bytes that never reaches the dead state:
 * the walk reads every byte. */
static bool allowed_path(const struct bee_dfa_hdr *img, const struct globs *gl, size_t len,
			 struct pbuf *b)
{
	size_t start = below((unsigned)gl->n);
	for (size_t tries = 0; tries < 50 * gl->n && tries < 100000; tries++) {
		/* only a glob ending in a double star can be padded and stay allowed */
		const char *g = gl->g[(start + tries) % gl->n];
		size_t gn = strlen(g);
		if (gn < 3 || strcmp(g + gn - 3, "/**"))
			continue;
		b->n = 0;
		gen_from_glob(b, g, g + gn);
		fit_len(b, len);
		struct bee_verdict v;
		bee_eval_dfa(img, (const char *)b->s, b->n, &v);
		if (v.perms && b->n == len)
			return true;
	}
	return false;
}

static void report_timing(const struct kern *k, const struct bee_dfa_hdr *img,
			  const struct globs *gl, const char *what)
{
	struct pbuf b64, blong, empty = { .n = 0 };
	if (!allowed_path(img, gl, 64, &b64) || !allowed_path(img, gl, BEE_PATH_MAX - 1, &blong))
		return;
	enum { RUNS = 20000 };
	struct timespec t0, t1;
	double base = walk_ns(k, &empty, RUNS);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	double w64 = walk_ns(k, &b64, RUNS);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double wlong = walk_ns(k, &blong, RUNS / 10);
	double rt = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / RUNS;
	fprintf(stderr,
		"test_bpf_match: %s: 64-byte allowed path: %.0f ns per walk (%.0f ns of it the "
		"clock; %.2f ns/byte), 4095 bytes: %.2f ns/byte; %.0f ns per BPF_PROG_TEST_RUN\n",
		what, w64, base, (w64 - base) / 64, (wlong - base) / (BEE_PATH_MAX - 1), rt);
}

static long check_paths(const struct policy *pol, enum ir_domain dom, bool timing)
{
	const struct dfa *d = pol->lw->dfa[dom];
	if (!d)
		return 0;
	size_t len, blen;
	struct bee_dfa_hdr *img = image_dfa_write(d, &len);
	assert_int_equal(bee_dfa_image_check(img, len), 0);
	struct bee_dfa_hdr *bytes = image_bytes_only(img, &blen);
	assert_int_equal(bee_dfa_image_check(bytes, blen), 0);
	char what[128];
	snprintf(what, sizeof(what), "%s %s", pol->name, ir_domain_name(dom));

	struct kern k, kb;
	kern_load_dfa(&k, img, len);
	struct globs gl = domain_globs(pol, dom);
	struct path_stats st = { 0 }, stb = { 0 };
	static struct pbuf b;

	/* the lengths at the edges, each from a glob and at random */
	for (size_t li = 0; li < ARRAY_LEN(exact_lens); li++) {
		for (int r = 0; r < 30; r++) {
			gen_path(&b, &gl);
			fit_len(&b, exact_lens[li]);
			path_check(&k, img, bytes, what, &b, &st);
		}
		if (allowed_path(img, &gl, exact_lens[li], &b))
			path_check(&k, img, bytes, what, &b, &st);
	}
	while (st.cases < test_cases(PATH_CASES)) {
		gen_path(&b, &gl);
		path_check(&k, img, bytes, what, &b, &st);
	}
	/* the kernel's walk of next[] alone, on a tenth as many paths */
	kern_load_dfa(&kb, bytes, blen);
	while (stb.cases < test_cases(PATH_CASES) / 10) {
		gen_path(&b, &gl);
		if (chance(20))
			fit_len(&b, exact_lens[below(ARRAY_LEN(exact_lens))]);
		path_check(&kb, bytes, bytes, what, &b, &stb);
	}
	fprintf(stderr,
		"test_bpf_match: %s: %u states, %u classes, %zu-byte image (%s; %zu bytes "
		"without): %ld paths (%ld allowed, %ld denied, %ld too long), kernel == host, and "
		"%ld more through next[] alone\n",
		what, img->nstates, img->nclasses, len, img->hops ? "with hops[]" : "no hops[]", blen,
		st.cases, st.allowed, st.denied, st.too_long, stb.cases);
	/* both answers must be common, or the comparison proves little */
	if (gl.n) {
		assert_true(st.allowed * 20 > st.cases);
		assert_true(st.denied * 20 > st.cases);
	}
	for (size_t li = 0; li < ARRAY_LEN(exact_lens); li++)
		assert_true(st.lengths[li] >= 30);
	assert_true(st.too_long >= 60);
	if (timing) {
		report_timing(&k, img, &gl, what);
		if (img->hops) {
			char w2[160];
			snprintf(w2, sizeof(w2), "%s over next[]", what);
			report_timing(&kb, bytes, &gl, w2);
		}
	}
	free(gl.g);
	kern_close(&kb);
	kern_close(&k);
	free(bytes);
	free(img);
	return st.cases + stb.cases;
}

/* ---- endpoints: kernel against host ------------------------------------------------------- */

struct net_stats {
	long cases, allowed, mapped, v6;
};

static void kern_load_net(struct kern *k, const struct netset_image *img)
{
	kern_load(k, sizeof(struct bee_dfa_hdr) + 2, img->n4, img->n6);
	for (size_t i = 0; i < img->n4; i++)
		assert_int_equal(bpf_map_update_elem(k->net4_fd, &img->keys4[i], &img->values4[i],
						     BPF_NOEXIST), 0);
	for (size_t i = 0; i < img->n6; i++)
		assert_int_equal(bpf_map_update_elem(k->net6_fd, &img->keys6[i], &img->values6[i],
						     BPF_NOEXIST), 0);
}

static void kern_net(const struct kern *k, const struct bee_match_net_ctx *q,
		     struct bee_match_net_ctx *out)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = q, .data_size_in = sizeof(*q),
		    .data_out = out, .data_size_out = sizeof(*out));
	int err = bpf_prog_test_run_opts(k->net_fd, &o);
	if (err || o.retval != XDP_PASS_RC || o.data_size_out != sizeof(*out))
		fail_msg("bee_match_net: BPF_PROG_TEST_RUN: %s, retval %u, %u bytes back",
			 strerror(errno), o.retval, o.data_size_out);
}

/* Random bits below a prefix of plen bits in addr[0..bytes). */
static void host_bits(uint8_t *addr, unsigned bytes, unsigned plen)
{
	for (unsigned bit = plen; bit < bytes * 8; bit++)
		if (chance(50))
			addr[bit / 8] ^= (uint8_t)(0x80u >> (bit % 8));
}

static uint16_t port_near(const struct bee_net_value *v)
{
	if (!v || !v->nranges || chance(15))
		return (uint16_t)(chance(50) ? below(65536) : below(1100));
	const struct bee_net_range *r = &v->ranges[below(v->nranges)];
	switch (below(5)) {
	case 0: return r->lo;
	case 1: return r->hi;
	case 2: return (uint16_t)(r->lo - 1);
	case 3: return (uint16_t)(r->hi + 1);
	default: return (uint16_t)(r->lo + below((unsigned)r->hi - r->lo + 1));
	}
}

static void gen_endpoint(const struct netset_image *img, struct bee_match_net_ctx *q)
{
	static const uint8_t protos[] = { 6, 17, 6, 17, 1, 132, 0, 255 };
	uint8_t a[16] = { 0 };
	const struct bee_net_value *v = NULL;
	unsigned family;
	memset(q, 0, sizeof(*q));
	q->dir = below(2);
	q->proto = protos[below(ARRAY_LEN(protos))];
	unsigned pick = below(10);
	if (pick < 4 && img->n4) {
		size_t i = below((unsigned)img->n4);
		const struct bee_net_key4 *key = &img->keys4[i];
		unsigned plen = key->prefixlen - BEE_NET_HDR_BITS;
		v = &img->values4[i];
		memcpy(a, key->addr, 4);
		host_bits(a, 4, plen);
		if (plen && chance(20))
			a[(plen - 1) / 8] ^= (uint8_t)(0x80u >> ((plen - 1) % 8));   /* just outside */
		if (chance(80)) {
			q->dir = key->dir;
			q->proto = key->proto;
		}
		family = 4;
	} else if (pick < 7 && img->n6) {
		size_t i = below((unsigned)img->n6);
		const struct bee_net_key6 *key = &img->keys6[i];
		unsigned plen = key->prefixlen - BEE_NET_HDR_BITS;
		v = &img->values6[i];
		memcpy(a, key->addr, 16);
		host_bits(a, 16, plen);
		if (plen && chance(20))
			a[(plen - 1) / 8] ^= (uint8_t)(0x80u >> ((plen - 1) % 8));
		if (chance(80)) {
			q->dir = key->dir;
			q->proto = key->proto;
		}
		family = 6;
	} else {
		static const uint8_t specials[][4] = {
			{ 0, 0, 0, 0 }, { 255, 255, 255, 255 }, { 127, 0, 0, 53 }, { 127, 0, 0, 1 },
			{ 169, 254, 169, 254 }, { 10, 1, 2, 3 }, { 140, 82, 112, 1 },
		};
		family = chance(50) ? 4 : 6;
		if (chance(30))
			memcpy(a, specials[below(ARRAY_LEN(specials))], 4);
		else
			host_bits(a, 16, 0);
		if (family == 6 && chance(30)) {
			a[0] = 0x20, a[1] = 0x01, a[2] = 0x0d, a[3] = 0xb8;
		}
	}
	/* an IPv4 endpoint asked from an IPv6 socket: ::ffff:a.b.c.d */
	if (family == 4 && chance(30)) {
		memmove(a + 12, a, 4);
		memset(a, 0, 10);
		a[10] = a[11] = 0xff;
		family = 6;
	}
	q->family = family;
	memcpy(q->addr_be32, a, family == 4 ? 4 : 16);
	q->port_be = htons(port_near(v));
}

static long check_net(const struct policy *pol, bool timing)
{
	struct netset_image img;
	netset_image_build(pol->lw->net, &img);
	struct net_eval_maps m = netset_image_maps(&img);
	char err[256];
	if (net_eval_maps_check(&m, err, sizeof(err)) < 0)
		fail_msg("%s: bad net maps: %s", pol->name, err);

	struct kern k;
	kern_load_net(&k, &img);
	struct net_stats st = { 0 };
	while (st.cases < test_cases(NET_CASES)) {
		struct bee_match_net_ctx q, out;
		struct net_eval_decision d;
		gen_endpoint(&img, &q);
		uint16_t port = ntohs((uint16_t)q.port_be);
		assert_int_equal(net_eval_decide(&m, q.dir, (int)q.family, (const uint8_t *)q.addr_be32,
						 port, (uint8_t)q.proto, &d), 0);
		kern_net(&k, &q, &out);
		st.cases++;
		st.allowed += d.allow;
		st.mapped += q.family == 6 && d.map_family == 4;
		st.v6 += d.map_family == 6;
		if (out.allow != (uint32_t)d.allow || out.map_family != (uint32_t)d.map_family ||
		    out.prov != d.prov) {
			char as[INET6_ADDRSTRLEN];
			inet_ntop(q.family == 4 ? AF_INET : AF_INET6, q.addr_be32, as, sizeof(as));
			CASE_FAIL("%s: %s %s port %u proto %u: kernel allow %u map %u prov %u, "
				  "host allow %d map %d prov %u",
				  pol->name, netset_dir_name(q.dir), as, port, q.proto, out.allow,
				  out.map_family, out.prov, d.allow, d.map_family, d.prov);
		}
	}
	fprintf(stderr,
		"test_bpf_match: %s net: %zu + %zu entries: %ld endpoints (%ld allowed, %ld "
		"IPv4-mapped, %ld asked bee_net6), kernel == host\n",
		pol->name, img.n4, img.n6, st.cases, st.allowed, st.mapped, st.v6);
	assert_true(st.mapped > 0);
	if (img.n4 + img.n6) {
		/* allows and denies both, or the comparison proves little */
		assert_true(st.allowed * 20 > st.cases);
		assert_true((st.cases - st.allowed) * 20 > st.cases);
	}
	if (timing && img.n4) {
		struct bee_match_net_ctx q, out;
		do
			gen_endpoint(&img, &q);
		while (q.family != 4);
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = &q, .data_size_in = sizeof(q),
			    .data_out = &out, .data_size_out = sizeof(out), .repeat = 100000);
		assert_int_equal(bpf_prog_test_run_opts(k.net_fd, &o), 0);
		fprintf(stderr, "test_bpf_match: %s net: %u ns per decision (repeat %d)\n", pol->name,
			o.duration, 100000);
	}
	kern_close(&k);
	netset_image_free(&img);
	return st.cases;
}

/* The images the kernel is tested on are the pack's: build the policy's
 * pack and require each MAP_IMAGE section to be byte for byte the image
 * loaded into the maps here. */
static void check_pack_images(const struct policy *pol)
{
	struct diag_ctx dc;
	diag_init(&dc);
	struct pack_build_opts po = { .sz = sizeof(po), .defines = defines, .ndefines = ARRAY_LEN(defines) };
	uint8_t *buf;
	size_t len;
	if (pack_build(pol->lw, pol->p.src, &po, &dc, &buf, &len) < 0) {
		diag_print(&dc, stderr);
		fail_msg("%s: cannot build its pack", pol->name);
	}
	diag_fini(&dc);
	struct bee_pack *pack;
	char err[512];
	if (bee_pack__open_mem(buf, len, &pack, err, sizeof(err)) < 0)
		fail_msg("%s: %s", pol->name, err);
	static const struct { const char *sec; enum ir_domain dom; } dfas[] = {
		{ "bee_fs", IR_DOMAIN_FS }, { "bee_exec", IR_DOMAIN_EXEC }, { "bee_env", IR_DOMAIN_ENV },
	};
	for (size_t i = 0; i < ARRAY_LEN(dfas); i++) {
		size_t ilen;
		struct bee_dfa_hdr *img = image_dfa_write(pol->lw->dfa[dfas[i].dom], &ilen);
		const struct bee_pack_section_info *s = bee_pack__find(pack, BEE_PACK_MAP_IMAGE, dfas[i].sec);
		assert_non_null(s);
		assert_int_equal(s->size, ilen);
		assert_memory_equal(s->data, img, ilen);
		free(img);
	}
	struct netset_image ni;
	netset_image_build(pol->lw->net, &ni);
	const struct bee_pack_section_info *s4 = bee_pack__find(pack, BEE_PACK_MAP_IMAGE, "bee_net4");
	assert_non_null(s4);
	assert_int_equal(s4->elem_count, ni.n4);
	for (size_t i = 0; i < ni.n4; i++) {
		const uint8_t *rec = (const uint8_t *)s4->data + i * s4->elem_width;
		assert_memory_equal(rec, &ni.keys4[i], sizeof(ni.keys4[i]));
		assert_memory_equal(rec + sizeof(ni.keys4[i]), &ni.values4[i], sizeof(ni.values4[i]));
	}
	const struct bee_pack_section_info *s6 = bee_pack__find(pack, BEE_PACK_MAP_IMAGE, "bee_net6");
	assert_non_null(s6);
	assert_int_equal(s6->elem_count, ni.n6);
	for (size_t i = 0; i < ni.n6; i++) {
		const uint8_t *rec = (const uint8_t *)s6->data + i * s6->elem_width;
		assert_memory_equal(rec, &ni.keys6[i], sizeof(ni.keys6[i]));
		assert_memory_equal(rec + sizeof(ni.keys6[i]), &ni.values6[i], sizeof(ni.values6[i]));
	}
	netset_image_free(&ni);
	bee_pack__close(pack);
	free(buf);
	fprintf(stderr, "test_bpf_match: %s: the pack's map images are the ones tested\n", pol->name);
}

static void check_policy(struct policy *pol, bool timing)
{
	if (pol->p.src && pol->p.src->name[0] != '<')
		check_pack_images(pol);
	unsigned before = failures;
	long cases = check_paths(pol, IR_DOMAIN_FS, timing);
	cases += check_paths(pol, IR_DOMAIN_EXEC, false);
	cases += check_paths(pol, IR_DOMAIN_ENV, false);
	cases += check_net(pol, timing);
	fprintf(stderr, "test_bpf_match: %s: %ld cases, %u where kernel and host differ\n",
		pol->name, cases, failures - before);
	assert_int_equal(failures - before, 0);
}

/* ---- the tests --------------------------------------------------------------------------- */

static void test_bpf_match_examples(void **state)
{
	(void)state;
	char *names[64];
	size_t n = examples_list(names, ARRAY_LEN(names));
	assert_true(n >= 5);
	for (size_t i = 0; i < n; i++) {
		char path[300];
		struct policy pol;
		snprintf(path, sizeof(path), "policies/%s", names[i]);
		policy_load_file(&pol, path);
		check_policy(&pol, true);   /* every example's walk is timed */
		policy_free(&pol);
		free(names[i]);
	}
}

/* A policy of n rules shaped like a large real one: deep shared prefixes
 * with stars, classes and braces, rules told apart by a literal tail, so
 * that the automaton grows by about one state per rule; denies on some of
 * the very strings reads grant, and on strings no grant reaches. */
static char *gen_policy_text(unsigned n)
{
	unsigned nread = n * 45 / 100, nwrite = n * 25 / 100, ndeny = n * 15 / 100;
	unsigned nexec = n * 5 / 100, nenv = n * 5 / 100;
	unsigned nnet = n - nread - nwrite - ndeny - nexec - nenv;
	static const char *const ports[] = { "22", "53", "80", "443", "8000-8100", "1-1024", "*",
					     "5000-5010" };
	uint64_t saved = rng;
	rng = 0x9e3779b97f4a7c15ull ^ n;   /* the same policy whatever BEE_SEED is */
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	fprintf(f, "version = 1\nname = \"gen-%u\"\n\n[fs]\nread = [\n", n);
	for (unsigned i = 0; i < nread; i++)
		fprintf(f, "  \"/gen/[a-z]*/src/**/f%u\",\n", 2 * i);
	fprintf(f, "  \"/usr/**\",\n]\nwrite = [\n");
	for (unsigned i = 0; i < nwrite; i++)
		fprintf(f, "  \"/gen/{tmp,var}/w?/*.f%u\",\n", i);
	fprintf(f, "]\ndeny = [\n");
	for (unsigned i = 0; i < ndeny; i++) {
		if (i % 2)   /* part of a write rule's strings */
			fprintf(f, "  \"/gen/var/w[0-4]/*.f%u\",\n", i);
		else         /* exactly a read rule's strings */
			fprintf(f, "  \"/gen/[a-z]*/src/**/f%u\",\n", i);
	}
	fprintf(f, "]\n\n[exec]\nallow = [\n");
	for (unsigned i = 0; i < nexec; i++)
		fprintf(f, i % 10 ? "  \"/gen/opt/*/bin/t%u\",\n" : "  \"!/gen/pin/p%u\",\n", i);
	fprintf(f, "  \"/usr/lib/**/*.so*\",\n]\n\n[env]\nallow = [\n");
	for (unsigned i = 0; i < nenv; i++)
		fprintf(f, "  \"GEN%u_*\",\n", i);
	fprintf(f, "]\n\n[net]\nconnect = [\n");
	/* addresses follow from the index, so no two rules are the same */
	unsigned nconnect = nnet * 6 / 10, nbind = nnet / 10, nndeny = nnet - nconnect - nbind;
	for (unsigned i = 0; i < nconnect; i++) {
		const char *port = ports[below(ARRAY_LEN(ports))];
		const char *proto = chance(25) ? "/udp" : "";
		unsigned k = i / 5;
		switch (i % 5) {
		case 0:
			fprintf(f, "  \"10.%u.0.0/16:%s%s\",\n", k * 3 % 256, port, proto);
			break;
		case 1:   /* inside a /16 of case 0 */
			fprintf(f, "  \"10.%u.%u.0/24:%s%s\",\n", k * 3 % 256, below(256), port, proto);
			break;
		case 2:
			fprintf(f, "  \"[2001:db8:%x::]/48:%s%s\",\n", k, port, proto);
			break;
		case 3:   /* inside a /48 of case 2 */
			fprintf(f, "  \"[2001:db8:%x:%x::]/64:%s%s\",\n", k, below(65536), port, proto);
			break;
		default:  /* an IPv4 rule written as IPv6 */
			fprintf(f, "  \"[::ffff:10.%u.0.0]/112:%s%s\",\n", (k * 3 + 1) % 256, port, proto);
			break;
		}
	}
	fprintf(f, "  \"0.0.0.0/0:443\",\n]\nbind = [\n");
	for (unsigned i = 0; i < nbind; i++) {
		if (i % 2)
			fprintf(f, "  \"127.0.0.%u:%s\",\n", i % 256, ports[below(ARRAY_LEN(ports))]);
		else
			fprintf(f, "  \"[fd00::%x]:%s\",\n", i, ports[below(ARRAY_LEN(ports))]);
	}
	fprintf(f, "]\ndeny = [\n");
	for (unsigned i = 0; i < nndeny; i++) {
		if (i % 3)   /* inside the /16s and /24s above */
			fprintf(f, "  \"10.%u.%u.%u/32:%s\",\n", i % 86 * 3, below(256), i / 86 + 1,
				chance(50) ? "*" : "22");
		else
			fprintf(f, "  \"[2001:db8:%x::%x]/128:*\",\n", i % 100, i);
	}
	fprintf(f, "]\n");
	fclose(f);
	rng = saved;
	return text;
}

/* pol from a generated policy's text (taking it), parsed and built, not
 * lowered: no diagnostic at all, not even a warning */
static void policy_from_text(struct policy *pol, const char *name, char *text)
{
	struct diag_ctx dc;
	memset(pol, 0, sizeof(*pol));
	snprintf(pol->name, sizeof(pol->name), "%s", name);
	pol->p.src = source_new(pol->name, text, strlen(text));
	free(text);
	diag_init(&dc);
	struct beec_opts o = { .sz = sizeof(o) };
	if (beec_policy__parse(&pol->p, &dc) < 0 || beec_policy__build(&pol->p, &o, &dc) < 0) {
		diag_print(&dc, stderr);
		fail_msg("%s: the generated policy does not compile", pol->name);
	}
	diag_print(&dc, stderr);
	assert_int_equal(dc.n, 0);   /* not even a warning: no rule was dropped */
	diag_fini(&dc);
}

static void policy_generate(struct policy *pol, unsigned n)
{
	char name[32];
	snprintf(name, sizeof(name), "gen-%u", n);
	policy_from_text(pol, name, gen_policy_text(n));
	/* n plus three fixed rules as written (the IR splits some net rules) */
	size_t written = 0;
	const struct ir_policy *ir = pol->p.ir;
	for (size_t i = 0; i < ir->nrules; i++)
		written += i == 0 || ir->rules[i].loc.off != ir->rules[i - 1].loc.off;
	assert_int_equal(written, n + 3);
	policy_lower(pol, 0);   /* the default state limit */
}

static void test_bpf_match_generated(unsigned n)
{
	struct policy pol;
	policy_generate(&pol, n);
	check_policy(&pol, true);
	policy_free(&pol);
}

static void test_bpf_match_gen_1000(void **state)
{
	(void)state;
	test_bpf_match_generated(1000);
}

static void test_bpf_match_gen_10000(void **state)
{
	(void)state;
	test_bpf_match_generated(10000);
}

/* An fs automaton too big for hops 2 but whose hops[] fits 16 bits: the
 * kernel walks hops 1 (bee_dfa_walk_hops), which no example's image is
 * big enough for. Literal reads of random names over 16 letters (few
 * classes, about a state a byte); the rule count is searched for until the
 * image's form is hops 1. */
static char *hops_rel_text(unsigned k)
{
	uint64_t saved = rng;
	rng = 0x51ed27a1d3c6b5f9ull ^ k;   /* the same policy whatever BEE_SEED is */
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	fprintf(f, "version = 1\nname = \"hops-rel\"\n\n[fs]\nread = [\n");
	for (unsigned i = 0; i < k; i++) {
		char name[12];
		for (unsigned j = 0; j < 10; j++)
			name[j] = (char)('a' + below(16));
		name[10] = '\0';
		fprintf(f, "  \"/r/%s\",\n", name);
	}
	fprintf(f, "]\n");
	fclose(f);
	rng = saved;
	return text;
}

static void test_bpf_match_hops_rel(void **state)
{
	(void)state;
	unsigned lo = 1, hi = 4096, k = 180;
	for (int tries = 0; tries < 40; tries++) {
		struct policy pol;
		policy_from_text(&pol, "hops-rel", hops_rel_text(k));
		policy_lower(&pol, 0);
		size_t len;
		struct bee_dfa_hdr *img = image_dfa_write(pol.lw->dfa[IR_DOMAIN_FS], &len);
		unsigned form = img->hops, nstates = img->nstates, ncl = img->nclasses;
		free(img);
		if (form == BEE_DFA_HOPS_REL) {
			fprintf(stderr, "test_bpf_match: hops-rel: %u rules, %u states, %u classes, %zu bytes: hops 1\n",
				k, nstates, ncl, len);
			check_policy(&pol, false);
			policy_free(&pol);
			return;
		}
		policy_free(&pol);
		/* hops 2: too small; none: hops[] past 16 bits */
		if (form == BEE_DFA_HOPS_ABS)
			lo = k + 1;
		else
			hi = k - 1;
		if (lo > hi)
			break;
		k = lo + (hi - lo) / 2;
	}
	fail_msg("hops-rel: no rule count gives an image of hops 1");
}

/* path through a corrupted image: the kernel and the host give state want
 * and no permissions. */
static void bad_walk(const struct bee_dfa_hdr *img, size_t len, const char *path, uint32_t want)
{
	struct kern k;
	struct bee_dfa_answer a;
	size_t n = strlen(path);
	kern_load_dfa(&k, img, len);
	kern_path(&k, (const uint8_t *)path, n);
	bee_dfa_match(img, img->size, (const uint8_t *)path, (uint32_t)n, &a);
	if (path_ctx.state != want || path_ctx.perms || a.state != want || a.perms)
		CASE_FAIL("corrupt image, '%s': want state %u; kernel %u perms %#x, host %u perms %#x",
			  path, want, path_ctx.state, path_ctx.perms, a.state, a.perms);
	kern_close(&k);
}

/* Fixed answers, so that the kernel and the host cannot agree on a wrong one. */
static void test_bpf_match_table(void **state)
{
	(void)state;
	static const struct dfa_rule rules[] = {
		{ .glob = "/usr/**", .grant = IR_PERM_READ, .rule = 0 },
		{ .glob = "/home/you/project/**", .grant = IR_PERM_READ | IR_PERM_WRITE, .rule = 1 },
		{ .glob = "**/*.pem", .deny = IR_PERM_READ | IR_PERM_WRITE, .rule = 2 },
		{ .glob = "/dev/{null,tty}", .grant = IR_PERM_WRITE, .rule = 3 },
	};
	struct dfa *d;
	struct dfa_build_opts o = { .sz = sizeof(o), .kind = DFA_KIND_PATH };
	assert_int_equal(dfa_build(rules, ARRAY_LEN(rules), &o, &d, NULL), 0);
	size_t len, blen;
	struct bee_dfa_hdr *img = image_dfa_write(d, &len);
	struct bee_dfa_hdr *bytes = image_bytes_only(img, &blen);
	assert_true(img->hops);   /* a small automaton always gets hops[] */
	assert_int_equal(bee_dfa_image_check(img, len), 0);
	assert_int_equal(bee_dfa_image_check(bytes, blen), 0);
	struct kern k;
	kern_load_dfa(&k, img, len);
	struct bpf_prog_info info;
	uint32_t info_len = sizeof(info);
	memset(&info, 0, sizeof(info));
	assert_int_equal(bpf_obj_get_info_by_fd(k.path_fd, &info, &info_len), 0);
	fprintf(stderr, "test_bpf_match: bee_match_path: the verifier processed %u instructions "
		"(limit 1000000)\n", info.verified_insns);
	kern_close(&k);

	static struct pbuf b;
	const uint32_t RW = IR_PERM_READ | IR_PERM_WRITE;
	struct {
		const char *path;   /* NULL: '/usr/' padded to len bytes */
		size_t len;
		uint32_t perms;
		uint32_t too_long;
	} rows[] = {
		{ "/usr/bin/cc", 0, IR_PERM_READ, 0 },
		{ "/usr", 0, 0, 0 },
		{ "/usr/lib/x.pem", 0, 0, 0 },
		{ "/home/you/project/src/main.rs", 0, RW, 0 },
		{ "/home/you/project2/x", 0, 0, 0 },
		{ "/dev/null", 0, IR_PERM_WRITE, 0 },
		{ "/dev/nullx", 0, 0, 0 },
		{ "/etc/passwd", 0, 0, 0 },
		{ "/", 0, 0, 0 },
		{ "", 0, 0, 0 },
		{ NULL, 64, IR_PERM_READ, 0 },
		{ NULL, 255, IR_PERM_READ, 0 },
		{ NULL, 256, IR_PERM_READ, 0 },
		{ NULL, 4095, IR_PERM_READ, 0 },   /* the longest path: walked to its end */
		{ NULL, 4096, 0, 1 },              /* one byte more: denied, never a prefix */
		{ NULL, 5000, 0, 1 },
	};
	/* each row through both tables, in the kernel and on the host */
	for (int form = 0; form < 2; form++) {
		const struct bee_dfa_hdr *im = form ? bytes : img;
		kern_load_dfa(&k, im, form ? blen : len);
		for (size_t i = 0; i < ARRAY_LEN(rows); i++) {
			if (rows[i].path) {
				b.n = strlen(rows[i].path);
				memcpy(b.s, rows[i].path, b.n);
			} else {
				memcpy(b.s, "/usr/", 5);
				b.n = 5;
				fit_len(&b, rows[i].len);
			}
			struct bee_verdict v;
			bee_eval_dfa(im, (const char *)b.s, b.n, &v);
			kern_path(&k, b.s, b.n);
			if (path_ctx.perms != rows[i].perms || path_ctx.too_long != rows[i].too_long ||
			    v.perms != rows[i].perms || v.too_long != (rows[i].too_long != 0) ||
			    path_ctx.state != v.state)
				CASE_FAIL("%s, row %zu '%s' (%zu bytes): want perms %#x too_long %u; "
					  "kernel %#x %u state %u, host %#x %d state %u",
					  form ? "next[]" : "hops[]", i, show(b.s, b.n), b.n, rows[i].perms,
					  rows[i].too_long, path_ctx.perms, path_ctx.too_long,
					  path_ctx.state, v.perms, v.too_long, v.state);
		}
		kern_close(&k);
	}

	/* A transition out of the table: both walks stop and deny, and the
	 * kernel reads nothing outside the map value (the verifier saw to it).
	 * First next[] alone. */
	uint16_t *next = (uint16_t *)(void *)bee_dfa_next(bytes);
	uint16_t saved = next[bytes->class_of['/']];
	next[bytes->class_of['/']] = 0xfffe;
	bad_walk(bytes, blen, "/usr/bin", BEE_DFA_STATE_INVALID);
	/* one state past the last, reached on the last byte: no permissions */
	next[bytes->class_of['/']] = bytes->nstates;
	bad_walk(bytes, blen, "/", bytes->nstates);
	next[bytes->class_of['/']] = saved;

	/* Then hops[] (of hops 2 here): state 0's hop on '/' is past every
	 * row, as a stop mark is, or is the row just past the last; and
	 * hops[] that differ from next[] */
	assert_int_equal(img->hops, BEE_DFA_HOPS_ABS);
	uint16_t *hops = (uint16_t *)(void *)((uint8_t *)img + bee_dfa_hops_off(img->nstates, img->nclasses));
	uint16_t *slash = &hops[1 + img->class_of['/']];
	uint16_t hsaved = *slash;
	*slash = (uint16_t)bee_dfa_abs_mark(0);   /* a stop before the end */
	assert_int_equal(bee_dfa_image_check(img, len), BEE_DFA_ERR_HOPS);
	bad_walk(img, len, "/usr/bin", BEE_DFA_STATE_INVALID);
	bad_walk(img, len, "/", BEE_DFA_STATE_INVALID);
	*slash = 0xfffe - img->nstates;   /* the mark of no state */
	assert_int_equal(bee_dfa_image_check(img, len), BEE_DFA_ERR_HOPS);
	bad_walk(img, len, "/", BEE_DFA_STATE_INVALID);
	*slash = (uint16_t)bee_dfa_hop(img, img->nstates);
	assert_int_equal(bee_dfa_image_check(img, len), BEE_DFA_ERR_HOPS);
	bad_walk(img, len, "/", BEE_DFA_STATE_INVALID);
	*slash = (uint16_t)bee_dfa_hop(img, hsaved == bee_dfa_hop(img, 0) ? 1 : 0);
	assert_int_equal(bee_dfa_image_check(img, len), BEE_DFA_ERR_HOPS);
	*slash = hsaved;
	hops[0] = 0;   /* row 0 leads with a row's offset, not its mark */
	assert_int_equal(bee_dfa_image_check(img, len), BEE_DFA_ERR_HOPS);
	hops[0] = (uint16_t)bee_dfa_hops_lead(img, 0);
	/* the zero tail, the room of the widest column */
	uint8_t *tail = (uint8_t *)img + len - 1;
	assert_int_equal(*tail, 0);
	*tail = 1;
	assert_int_equal(bee_dfa_image_check(img, len), BEE_DFA_ERR_HOPS);
	*tail = 0;
	assert_int_equal(bee_dfa_image_check(img, len), 0);
	img->hops = 3;
	assert_int_equal(bee_dfa_image_check(img, len), BEE_DFA_ERR_COUNTS);
	img->hops = BEE_DFA_HOPS_REL;   /* the other form's size is not this one */
	assert_int_equal(bee_dfa_image_check(img, len), BEE_DFA_ERR_COUNTS);
	img->hops = BEE_DFA_HOPS_ABS;
	assert_int_equal(bee_dfa_image_check(img, len), 0);

	free(bytes);
	free(img);
	dfa_free(d);
	assert_int_equal(failures, 0);
}

int main(void)
{

	if (geteuid() != 0) {
		const char *ci = getenv("CI");
		if (ci && *ci) {
			fprintf(stderr, "test_bpf_match: FAILED: needs root (BPF_PROG_TEST_RUN), and CI is set\n");
			return 1;
		}
		fprintf(stderr, "test_bpf_match: SKIPPED: needs root (BPF_PROG_TEST_RUN)\n");
		return 0;
	}
	libbpf_set_print(libbpf_print);
	/* a fixed default seed: the same run every time unless BEE_SEED says */
	seed = test_seed("test_bpf_match", 0x62656521ull);
	rng = seed;

	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bpf_match_table),
		cmocka_unit_test(test_bpf_match_examples),
		cmocka_unit_test(test_bpf_match_gen_1000),
		cmocka_unit_test(test_bpf_match_gen_10000),
		cmocka_unit_test(test_bpf_match_hops_rel),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
