/* SPDX-License-Identifier: GPL-2.0-only */
/* The landlock walk's lookups (ll_walk.c): a mixed directory decided by
 * looking its few names up gives exactly the plan its listing gives (the
 * same rules, in the same order, and the same narrowings with the same
 * counts and first paths). Seeded trees of files, directories, symlinks
 * and fifos whose names match and nearly match literal alternatives,
 * under seeded policies of literals, braces, '*', '?', classes, '**' and
 * denies inside grants, each walked twice: with lookups and with
 * opts.list_all; as root, once more as nobody. Every rule's listing is
 * checked too (got_listing). BEE_SEED=N replays a run. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "diag.h"
#include "libbeec.h"
#include "seed.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char tmp[PATH_MAX];   /* realpath of a mkdtemp under /tmp: short */

/* A rule's listing (the loader hands rules on by it, loader/ll.c): one
 * number is one directory, the one dirfd is open on, whose path is the
 * rule's without its name, though an fd's number comes back for another
 * directory once the walk closed it. */
struct listing {
	unsigned id;
	int fd;
	dev_t dev;
	ino_t ino;
	char dir[PATH_MAX];
};

/* what a walk gave: each rule as a line, in the order emitted */
struct got {
	char **rule;
	size_t n, cap;
	struct listing *ls;
	size_t nls, lscap;
	unsigned fd_again;   /* an fd's number met again under a new listing */
	bool masked;         /* opts.ro's walk: lines without BEEC_LL_TRUNC, and
			      * no line for a rule of truncate alone (counted) */
	unsigned trunc, trunc_only;
};

/* opts.ro's writable places for the tree walked now (test_seeded) */
static const char *ro_rw[2];
static size_t ro_nrw;

static bool within(const char *a, const char *b)
{
	size_t n = strlen(b);
	return !strncmp(a, b, n) && (a[n] == '\0' || a[n] == '/');
}

/* A rule of opts.ro's walk: truncate only outside every writable place
 * (neither at, below nor above one), and one of truncate alone only in a
 * directory that holds one. */
static void got_trunc(struct got *g, const struct beec_ll_rule *r)
{
	bool out = true, parent_holds = false;
	char parent[PATH_MAX];
	snprintf(parent, sizeof(parent), "%s", r->path);
	char *slash = strrchr(parent, '/');
	if (slash)
		*slash = '\0';
	for (size_t i = 0; i < ro_nrw; i++) {
		out &= !within(r->path, ro_rw[i]) && !within(ro_rw[i], r->path);
		parent_holds |= within(ro_rw[i], parent) && strcmp(ro_rw[i], parent) != 0;
	}
	if (!(r->rights & BEEC_LL_TRUNC)) {
		/* a rule outside them all but late has it */
		if (out && !r->late)
			fprintf(stderr, "test_ll_walk: %s: no truncate outside the writable places\n", r->path);
		assert_false(out && !r->late);
		return;
	}
	if (!out)
		fprintf(stderr, "test_ll_walk: %s: truncate at, below or above a writable place\n", r->path);
	assert_true(out);
	g->trunc++;
	if (r->rights == BEEC_LL_TRUNC) {
		assert_true(parent_holds);
		g->trunc_only++;
	}
}

static void got_listing(struct got *g, const struct beec_ll_rule *r, int dirfd, const char *name)
{
	if (dirfd < 0) {
		assert_int_equal(r->listing, 0);
		return;
	}
	assert_int_not_equal(r->listing, 0);
	struct stat st;
	assert_int_equal(fstat(dirfd, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	size_t pl = strlen(r->path), nl = strlen(name);
	assert_true(pl > nl && r->path[pl - nl - 1] == '/' && !strcmp(r->path + pl - nl, name));
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%.*s", (int)(pl - nl - 1), r->path);
	for (size_t i = 0; i < g->nls; i++) {
		struct listing *l = &g->ls[i];
		if (l->id == r->listing) {
			assert_int_equal(l->fd, dirfd);
			assert_true(l->dev == st.st_dev && l->ino == st.st_ino);
			assert_string_equal(l->dir, dir);
			return;
		}
	}
	for (size_t i = 0; i < g->nls; i++)
		g->fd_again += g->ls[i].fd == dirfd;
	if (g->nls == g->lscap) {
		g->lscap = g->lscap ? 2 * g->lscap : 16;
		g->ls = realloc(g->ls, g->lscap * sizeof(*g->ls));
		assert_non_null(g->ls);
	}
	struct listing *l = &g->ls[g->nls++];
	*l = (struct listing){ .id = r->listing, .fd = dirfd, .dev = st.st_dev, .ino = st.st_ino };
	snprintf(l->dir, sizeof(l->dir), "%s", dir);
}

static int got_rule(void *ctx, const struct beec_ll_rule *r, int dirfd, const char *name)
{
	struct got *g = ctx;
	got_listing(g, r, dirfd, name);
	uint32_t rights = r->rights;
	if (g->masked) {
		got_trunc(g, r);
		if (rights == BEEC_LL_TRUNC)
			return 0;
		rights &= ~BEEC_LL_TRUNC;
	}
	if (g->n == g->cap) {
		g->cap = g->cap ? 2 * g->cap : 64;
		g->rule = realloc(g->rule, g->cap * sizeof(*g->rule));
		assert_non_null(g->rule);
	}
	char line[PATH_MAX + 64];
	snprintf(line, sizeof(line), "%s rights=%#x dir=%d late=%d rule=%u", r->path, rights, r->dir, r->late,
		 r->rule);
	g->rule[g->n] = strdup(line);
	assert_non_null(g->rule[g->n++]);
	return 0;
}

static void got_fini(struct got *g)
{
	for (size_t i = 0; i < g->n; i++)
		free(g->rule[i]);
	free(g->rule);
	free(g->ls);
	memset(g, 0, sizeof(*g));
}

struct totals {
	unsigned policies, looked_up, listed_only, rules, fd_again, trunc, trunc_only;
	uint64_t dirs_looked_up;   /* directories decided by lookups, all policies */
};

/* The plan of the policy text with lookups and without: equal. */
static void same_plan(const char *text, const char *what, struct totals *t)
{
	char path[PATH_MAX + 16];
	snprintf(path, sizeof(path), "%s/policy.toml", tmp);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	struct beec_policy p = { 0 };
	struct diag_ctx dc;
	diag_init(&dc);
	int err = beec_policy__load(&p, path, NULL, &dc);
	if (!err)
		err = beec_policy__lower(&p, NULL, &dc);
	diag_fini(&dc);
	if (err) {   /* a seeded policy the compiler refuses: not a walk's case */
		beec_policy__fini(&p);
		return;
	}
	struct got a = { 0 }, b = { 0 };
	struct beec_ll_plan pa, pb;
	struct beec_ll_opts oa = { .sz = sizeof(oa) }, ob = { .sz = sizeof(ob), .list_all = true };
	int ea = beec_policy__ll_walk(&p, &oa, got_rule, &a, &pa);
	int eb = beec_policy__ll_walk(&p, &ob, got_rule, &b, &pb);
	if (ea != eb || a.n != b.n || pa.nnarrow != pb.nnarrow)
		fprintf(stderr, "%s: %d/%d rules %zu/%zu narrowings %zu/%zu\n%s", what, ea, eb, a.n, b.n, pa.nnarrow,
			pb.nnarrow, text);
	assert_int_equal(ea, eb);
	for (size_t i = 0; i < a.n && i < b.n; i++) {
		if (strcmp(a.rule[i], b.rule[i]))
			fprintf(stderr, "%s: rule %zu: '%s', listed '%s'\n%s", what, i, a.rule[i], b.rule[i], text);
		assert_string_equal(a.rule[i], b.rule[i]);
	}
	assert_int_equal(a.n, b.n);
	assert_int_equal(pa.nnarrow, pb.nnarrow);
	for (size_t i = 0; i < pa.nnarrow; i++) {
		const struct beec_ll_narrowing *x = &pa.narrow[i], *y = &pb.narrow[i];
		if (x->kind != y->kind || x->count != y->count || strcmp(x->path, y->path))
			fprintf(stderr, "%s: narrowing %zu: %s %" PRIu64 " '%s', listed %s %" PRIu64 " '%s'\n%s", what,
				i, beec_ll__narrow_name(x->kind), x->count, x->path, beec_ll__narrow_name(y->kind),
				y->count, y->path, text);
		assert_int_equal(x->rule, y->rule);
		assert_int_equal(x->kind, y->kind);
		assert_int_equal(x->rights, y->rights);
		assert_int_equal(x->count, y->count);
		assert_string_equal(x->path, y->path);
	}
	/* the switch lists every mixed directory */
	assert_int_equal(pb.looked_up, 0);
	assert_int_equal(pb.lookups, 0);
	t->policies++;
	t->dirs_looked_up += pa.looked_up;
	t->looked_up += pa.looked_up ? 1 : 0;
	t->listed_only += pa.looked_up ? 0 : 1;
	t->rules += (unsigned)a.n;
	t->fd_again += a.fd_again + b.fd_again;
	/* opts.ro: with lookups and without, the same; and the plan without
	 * it but for truncate (the rules of truncate alone left out) */
	if (ro_nrw) {
		struct got c = { .masked = true }, d = { .masked = true };
		struct beec_ll_plan pc, pd;
		struct beec_ll_opts oc = { .sz = sizeof(oc), .ro = true, .rw = ro_rw, .nrw = ro_nrw };
		struct beec_ll_opts od = oc;
		od.list_all = true;
		assert_int_equal(beec_policy__ll_walk(&p, &oc, got_rule, &c, &pc), ea);
		assert_int_equal(beec_policy__ll_walk(&p, &od, got_rule, &d, &pd), ea);
		assert_int_equal(c.n, a.n);
		assert_int_equal(d.n, a.n);
		for (size_t i = 0; i < a.n; i++) {
			if (strcmp(a.rule[i], c.rule[i]))
				fprintf(stderr, "%s: rule %zu: '%s', with opts.ro '%s'\n%s", what, i, a.rule[i], c.rule[i],
					text);
			assert_string_equal(a.rule[i], c.rule[i]);
			assert_string_equal(a.rule[i], d.rule[i]);
		}
		assert_int_equal(c.trunc, d.trunc);
		assert_int_equal(c.trunc_only, d.trunc_only);
		assert_int_equal(pc.nnarrow, pa.nnarrow);
		assert_int_equal(pd.nnarrow, pa.nnarrow);
		t->trunc += c.trunc;
		t->trunc_only += c.trunc_only;
		got_fini(&c);
		got_fini(&d);
		beec_ll_plan__fini(&pc);
		beec_ll_plan__fini(&pd);
	}
	got_fini(&a);
	got_fini(&b);
	beec_ll_plan__fini(&pa);
	beec_ll_plan__fini(&pb);
	beec_policy__fini(&p);
}

static void put(const char *rel, mode_t mode)
{
	char p[PATH_MAX + 600];
	snprintf(p, sizeof(p), "%s/%s", tmp, rel);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fclose(f);
	assert_int_equal(chmod(p, mode), 0);
}

static void mk(const char *rel)
{
	char p[PATH_MAX + 600];
	snprintf(p, sizeof(p), "%s/%s", tmp, rel);
	assert_int_equal(mkdir(p, 0755), 0);
}

/* ---- a big directory with few names granted: looked up ---------------------------------- */

static void test_big_dir(void **state)
{
	(void)state;
	mk("big");
	mk("big/bin");
	mk("big/bin/sh.d");
	char rel[64];
	for (int i = 0; i < 1500; i++) {
		snprintf(rel, sizeof(rel), "big/bin/t%04d", i);
		put(rel, 0755);
	}
	put("big/bin/sh", 0755);
	put("big/bin/cat", 0755);
	put("big/bin/shx", 0755);
	put("big/bin/ca", 0755);
	put("big/bin/SH", 0755);
	char text[3 * PATH_MAX];
	snprintf(text, sizeof(text),
		 "version = 1\nname = \"big\"\n[fs]\nread = [\"%s/big/**\"]\n"
		 "[exec]\nallow = [\"%s/big/bin/{sh,cat,dash,sh.d}\"]\n",
		 tmp, tmp);
	struct totals t = { 0 };
	same_plan(text, "big", &t);
	assert_int_equal(t.policies, 1);
	assert_int_equal(t.looked_up, 1);
	/* the counters say it: bin is not listed, its four names looked up */
	struct beec_policy p = { 0 };
	struct diag_ctx dc;
	diag_init(&dc);
	char path[PATH_MAX + 16];
	snprintf(path, sizeof(path), "%s/policy.toml", tmp);
	assert_int_equal(beec_policy__load(&p, path, NULL, &dc), 0);
	assert_int_equal(beec_policy__lower(&p, NULL, &dc), 0);
	diag_fini(&dc);
	struct beec_ll_plan pl;
	struct beec_ll_opts o = { .sz = sizeof(o) };
	assert_int_equal(beec_policy__ll_walk(&p, &o, NULL, NULL, &pl), 0);
	/* bin is looked up, not listed: sh, cat, dash and sh.d alone (a
	 * prefix of a name is another entry: an unopenable directory "c"
	 * loses nothing of "cat", and is neither narrowed nor looked up) */
	assert_int_equal(pl.looked_up, 1);
	assert_int_equal(pl.lookups, 4);
	assert_int_equal(pl.entries, 1 + 3);   /* big's bin; cat, sh, sh.d in bin (not ca) */
	assert_int_equal(pl.dirs, 1);          /* big (every directory below lists itself) */
	beec_ll_plan__fini(&pl);
	beec_policy__fini(&p);
}

/* Directories decided by lookups inside one decided by lookups, each of
 * its own states: the walk's kept decisions grow (and move) while the
 * outer one's names are still being walked (a use after free the
 * sanitizers found once). */
static void test_nested_lookups(void **state)
{
	(void)state;
	char rel[64], text[32 * 80 + 256];
	mk("nest");
	mk("nest/bin");
	int n = snprintf(text, sizeof(text), "version = 1\nname = \"nest\"\n[fs]\nread = [\"%s/nest/**\"]\n"
			 "[exec]\nallow = [", tmp);
	for (int i = 0; i < 24; i++) {
		snprintf(rel, sizeof(rel), "nest/bin/%c", 'a' + i);
		mk(rel);
		snprintf(rel, sizeof(rel), "nest/bin/%c/%c", 'a' + i, 'A' + i);
		put(rel, 0755);
		snprintf(rel, sizeof(rel), "nest/bin/%c/y", 'a' + i);
		put(rel, 0755);
		n += snprintf(text + n, sizeof(text) - (size_t)n, "%s\"%s/nest/bin/%c/%c\"", i ? ", " : "", tmp,
			      'a' + i, 'A' + i);
	}
	snprintf(text + n, sizeof(text) - (size_t)n, "]\n");
	struct totals t = { 0 };
	same_plan(text, "nest", &t);
	assert_int_equal(t.policies, 1);
	/* bin and each directory in it (its exec name and y) */
	assert_int_equal(t.dirs_looked_up, 1 + 24);
}

/* ---- seeded trees and policies ---------------------------------------------------------- */

/* names that match, nearly match and do not match the patterns below */
static const char *const names[] = {
	"a",	"ab",	 "abc",	  "b",	  "ba",	   "sh",    "bash",	"dash", "cat",	 "ca",
	"cats", "x.pem", "a.pem", "key.pem", ".hidden", "A",	   "SH",	"lib",	"lib64", "libc.so.6",
	"ld.so", "[x]",	 "{a}",	  "a b",  "\xc3\xa9", "z-1",	 "ls",	"shh",	"s",	 "..a",
};

/* segments that name finitely many entries (the lookups' case) and ones
 * that do not (the listing's) */
static const char *const few[] = {
	"a",	 "ab",	     "sh",	"cat",	      "lib",	  "x.pem",	   "{sh,bash,cat}",
	"{a,ab,abc}", "?",   "[ab]",	"ca?",	      "{lib,lib64}", "{x.pem,a}",  "s[h-z]",
	"{sh,ls,cat,dash}", "{a,b}{,b,c}", "\xc3\xa9", ".hidden", "{ca,cats}", "[!a]",
};
static const char *const endless[] = { "*", "a*", "*.pem", "**", "lib*", "[!a]*", "*a" };

#define RND(n) ((unsigned)(test_rng_next(&rng) % (n)))

static void grow(uint64_t *seed, const char *rel, int depth)
{
	uint64_t rng = *seed;
	unsigned k = 2 + RND(depth ? 8 : 14);
	for (unsigned i = 0; i < k; i++) {
		const char *nm = names[RND(sizeof(names) / sizeof(*names))];
		char sub[512], p[PATH_MAX + 520];
		snprintf(sub, sizeof(sub), "%s/%s", rel, nm);
		snprintf(p, sizeof(p), "%s/%s", tmp, sub);
		struct stat st;
		if (lstat(p, &st) == 0)
			continue;
		unsigned what = RND(20);
		if (what < 9) {
			put(sub, RND(3) ? 0644 : 0755);
		} else if (what < 15 && depth < 3) {
			mk(sub);
			*seed = rng;
			grow(seed, sub, depth + 1);
			rng = *seed;
			if (RND(5) == 0)   /* listed but not searched (for one not root) */
				assert_int_equal(chmod(p, 0555 & ~0111), 0);
			else if (RND(4) == 0)
				assert_int_equal(chmod(p, 0111), 0);
		} else if (what < 19) {
			const char *to = RND(2) ? names[RND(sizeof(names) / sizeof(*names))] : "/nowhere";
			assert_int_equal(symlink(to, p), 0);
		} else {
			assert_int_equal(mkfifo(p, 0644), 0);
		}
	}
	*seed = rng;
}

static void glob_of(uint64_t *seed, const char *top, char *out, size_t len)
{
	uint64_t rng = *seed;
	unsigned nseg = 1 + RND(3);
	int n = snprintf(out, len, "%s", top);
	for (unsigned i = 0; i < nseg; i++)
		n += snprintf(out + n, len - (size_t)n, "/%s",
			      RND(5) ? few[RND(sizeof(few) / sizeof(*few))]
				     : endless[RND(sizeof(endless) / sizeof(*endless))]);
	if (RND(4) == 0)
		snprintf(out + n, len - (size_t)n, "/**");
	*seed = rng;
}

static void list_of(uint64_t *seed, const char *top, const char *key, unsigned max, char *out, size_t len)
{
	uint64_t rng = *seed;
	unsigned k = RND(max + 1);
	size_t n = strlen(out);
	if (!k) {
		*seed = rng;
		return;
	}
	n += (size_t)snprintf(out + n, len - n, "%s = [", key);
	for (unsigned i = 0; i < k; i++) {
		char g[PATH_MAX];
		*seed = rng;
		if (!strcmp(key, "deny") && RND(4) == 0)
			snprintf(g, sizeof(g), "**/%s", few[RND(sizeof(few) / sizeof(*few))]);
		else if (RND(5) == 0)   /* uniform below: exec without read, lists of each directory */
			snprintf(g, sizeof(g), "%s/**", top);
		else
			glob_of(seed, top, g, sizeof(g));
		rng = *seed;
		n += (size_t)snprintf(out + n, len - n, "%s\"%s\"", i ? ", " : "", g);
	}
	snprintf(out + n, len - n, "]\n");
	*seed = rng;
}

static void test_seeded(void **state)
{
	(void)state;
	uint64_t rng = test_seed("test_ll_walk", 0);
	long cases = test_cases(1200);
	struct totals t = { 0 };
	for (int tree = 0; tree < 4; tree++) {
		char top[64], abs_top[PATH_MAX + 80];
		snprintf(top, sizeof(top), "t%d", tree);
		mk(top);
		grow(&rng, top, 0);
		snprintf(abs_top, sizeof(abs_top), "%s/%s", tmp, top);
		/* opts.ro: trees 1 and 3 have a directory of their own writable */
		static char rw_dir[PATH_MAX + 300];
		ro_nrw = 0;
		if (tree % 2) {
			char rel[80];
			snprintf(rel, sizeof(rel), "%s/rw", top);
			mk(rel);
			snprintf(rel, sizeof(rel), "%s/rw/f", top);
			put(rel, 0644);
			snprintf(rw_dir, sizeof(rw_dir), "%s/rw", abs_top);
			ro_rw[0] = rw_dir;
			ro_nrw = 1;
		}
		for (long c = 0; c < cases / 4; c++) {
			char text[16384] = "version = 1\nname = \"seeded\"\n[fs]\n";
			list_of(&rng, abs_top, "read", 3, text, sizeof(text));
			list_of(&rng, abs_top, "write", 2, text, sizeof(text));
			list_of(&rng, abs_top, "deny", 2, text, sizeof(text));
			strcat(text, "[exec]\n");
			list_of(&rng, abs_top, "allow", 3, text, sizeof(text));
			char what[64];
			snprintf(what, sizeof(what), "tree %d case %ld", tree, c);
			same_plan(text, what, &t);
		}
	}
	ro_nrw = 0;
	fprintf(stderr, "test_ll_walk: %u policies walked (%u with lookups, %u listed only), %u rules, "
		"%u fds numbered again under a new listing; with a writable place, %u rules with truncate, "
		"%u of truncate alone\n", t.policies, t.looked_up, t.listed_only, t.rules, t.fd_again, t.trunc,
		t.trunc_only);
	/* no vacuous run: both kinds of directory met, rules made, and the
	 * listings told apart directories that had the same fd number */
	assert_true(t.policies >= (unsigned)(cases / 4));
	assert_true(t.looked_up > 0);
	assert_true(t.listed_only > 0);
	assert_true(t.rules > 0);
	assert_true(t.fd_again > 0);
	assert_true(t.trunc > 0);
	assert_true(t.trunc_only > 0);
}

static int setup(void **state)
{
	(void)state;
	char t[] = "/tmp/bee-llwalk-test.XXXXXX";
	if (!mkdtemp(t) || !realpath(t, tmp))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[2 * PATH_MAX + 64];
	snprintf(cmd, sizeof(cmd), "chmod -R u+rwx '%s' && rm -rf '%s'", tmp, tmp);
	return system(cmd) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
	(void)argc;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_big_dir),
		cmocka_unit_test(test_nested_lookups),
		cmocka_unit_test(test_seeded),
	};
	int rc = cmocka_run_group_tests(tests, setup, teardown);
	if (geteuid() || getenv("BEE_LLWALK_NOBODY"))
		return rc;
	/* again as nobody: directories it cannot open (the walk's unreadable)
	 * or list and not search (a lookup refused: listed), which root's
	 * CAP_DAC_OVERRIDE never meets */
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		setenv("BEE_LLWALK_NOBODY", "1", 1);
		if (setgroups(0, NULL) == 0 && setgid(65534) == 0 && setuid(65534) == 0)
			execv("/proc/self/exe", argv);
		perror("test_ll_walk: as nobody");
		_exit(127);
	}
	int st;
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		rc |= 1;
	return rc;
}
