/* SPDX-License-Identifier: GPL-2.0-only */
/* test_alloc_sweep: the out-of-memory contract (mem.h), stage by stage.
 *
 * For every example policy, each stage of beec's pipeline (load, lower,
 * pack, show, query, check against a parent, diff, the --dump printers,
 * reading a pack back) runs once cleanly to count its allocations (funnel
 * and jansson), then again with the k-th allocation failed, and every
 * later one: each run must end in -ENOMEM (NULL for a pointer), never a
 * crash, and a k past the end must succeed. Every k is swept when a stage
 * makes at most SWEEP_ALL allocations; above that, the first allocation of
 * each allocation site (function) and the last one, so a lowering of
 * 15,000 allocations costs hundreds of runs, not 15,000.
 *
 * Around a failing run LeakSanitizer is paused: the unwinding does not free
 * the interrupted stage's transient blocks (mem.h says so); clean runs are
 * leak-checked as usual. The pack stage runs no compiler (codegen only
 * computes tables over bee's embedded object), so it is swept like the rest.
 *
 * Then beec itself: --max-memory too small exits 6 with the budget message
 * and leaves no pack and no temporary; the control with the default
 * budget writes the pack.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "attenuate.h"
#include "diff.h"
#include "examples.h"
#include "libbeec.h"
#include "mem.h"
#include "pack.h"
#include "query.h"
#include "seed.h"
#include "show.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define SWEEP_ALL 400

/* LeakSanitizer's pause, when it is linked in */
void __lsan_disable(void) __attribute__((weak));
void __lsan_enable(void) __attribute__((weak));

static const char *const defines[] = { "HOME=/home/dev", "PROJECT=/home/dev/src/app" };
static const struct beec_opts opts = { .sz = sizeof(opts), .defines = defines, .ndefines = 2 };
static char tmpdir[] = "/tmp/bee-alloc-sweep-XXXXXX";
static FILE *devnull;

/* What the stages work on, built cleanly before each stage is swept. */
struct sweep {
	const char *path;
	struct beec_policy pol;       /* loaded and lowered */
	struct beec_policy parent;    /* policies/parent.toml, lowered */
	uint8_t *pack;
	size_t pack_len;
	char pack_path[300];
	unsigned long runs, allocs;
};

typedef int (*stage_fn)(struct sweep *s);

/* ---- the stages: each returns 0 or a negative errno, and cleans up ----------- */

static int stage_load(struct sweep *s)
{
	struct beec_policy p;
	struct diag_ctx dc;
	diag_init(&dc);
	int err = beec_policy__load(&p, s->path, &opts, &dc);
	diag_fini(&dc);
	beec_policy__fini(&p);
	return err;
}

static int stage_lower(struct sweep *s)
{
	struct diag_ctx dc;
	diag_init(&dc);
	struct lowered *keep = s->pol.lw;
	s->pol.lw = NULL;
	int err = beec_policy__lower(&s->pol, &opts, &dc);
	lowered_free(s->pol.lw);
	s->pol.lw = keep;
	diag_fini(&dc);
	return err;
}

static int stage_pack(struct sweep *s)
{
	struct diag_ctx dc;
	diag_init(&dc);
	uint8_t *buf = NULL;
	size_t len = 0;
	int err = beec_policy__pack(&s->pol, &opts, &dc, &buf, &len);
	if (err == 0 && (!buf || len == 0))
		err = -EBADMSG;
	free(buf);
	diag_fini(&dc);
	return err;
}

static int stage_show(struct sweep *s)
{
	char msg[256];
	return show_pack(s->pack, s->pack_len, devnull, msg, sizeof(msg));
}

static int stage_read_pack(struct sweep *s)
{
	struct beec_policy p;
	struct diag_ctx dc;
	diag_init(&dc);
	int err = beec_policy__read_any(&p, s->pack_path, NULL, &dc);
	if (!err)
		err = beec_policy__parse(&p, &dc);
	if (!err)
		err = beec_policy__build(&p, NULL, &dc);
	diag_fini(&dc);
	beec_policy__fini(&p);
	return err;
}

static int stage_query(struct sweep *s)
{
	static const char *const q[][3] = {
		{ "fs", "read", "/usr/lib/x86_64-linux-gnu/libc.so.6" },
		{ "exec", "execute", "/usr/bin/git" },
		{ "net", "connect", "127.0.0.1:443" },
		{ "env", "read", "PATH" },
	};
	for (size_t i = 0; i < ARRAY_LEN(q); i++) {
		struct query qq;
		struct beec_answer r;
		char err[128];
		assert_int_equal(query_parse(q[i][0], q[i][1], q[i][2], &qq, err, sizeof(err)), 0);
		int rc = query_run(s->pol.lw, &qq, &r);
		if (rc < 0)
			return rc;
		struct diag_ctx notes;
		diag_init(&notes);
		rc = query_explain(s->pol.lw, &qq, &r, devnull, &notes);
		diag_fini(&notes);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int stage_check(struct sweep *s)
{
	struct diag_ctx dc;
	diag_init(&dc);
	int rc = attenuate_check(s->pol.lw, s->parent.lw, &dc);
	diag_fini(&dc);
	return rc < 0 ? rc : 0;   /* 1, "not a subset", is an answer */
}

static int stage_diff(struct sweep *s)
{
	struct diag_ctx dc;
	struct diff d;
	diag_init(&dc);
	struct lower_opts lo = { .sz = sizeof(lo) };
	int rc = diff_policies(s->parent.lw, s->pol.lw, &lo, &dc, &d);
	if (rc == 0)
		rc = diff_print_text(&d, devnull);
	if (rc == 0)
		rc = diff_print_json(&d, devnull);
	diff_fini(&d);
	diag_fini(&dc);
	return rc;
}

static int stage_dumps(struct sweep *s)
{
	int rc = toml_dump_canonical(s->pol.doc, devnull);
	if (!rc)
		rc = toml_dump_json(s->pol.doc->root, devnull);
	if (!rc)
		rc = ir_dump(s->pol.ir, devnull);
	for (int d = 0; d < IR_DOMAIN_COUNT && !rc; d++) {
		if (!s->pol.lw->dfa[d])
			continue;
		rc = dfa_dump(s->pol.lw->dfa[d], devnull);
		if (!rc)
			rc = dfa_dump_dot(s->pol.lw->dfa[d], devnull);
	}
	if (!rc)
		rc = netset_dump(s->pol.lw->net, devnull);
	return rc;
}

/* ---- the sweep ------------------------------------------------------------------ */

struct sites {
	uint64_t first[1024];   /* the number of each site's first allocation */
	const char *where[1024];
	size_t n;
};

static void site_note(uint64_t k, const char *where, void *ctx)
{
	struct sites *st = ctx;
	for (size_t i = 0; i < st->n; i++)
		if (st->where[i] == where || strcmp(st->where[i], where) == 0)
			return;
	if (st->n < ARRAY_LEN(st->first)) {
		st->where[st->n] = where;
		st->first[st->n++] = k;
	}
}

static void sweep_stage(struct sweep *s, const char *name, stage_fn fn)
{
	struct sites sites = { .n = 0 };
	struct mem_stats st;
	mem_stats_reset();
	mem_on_alloc(site_note, &sites);
	int rc = fn(s);
	mem_on_alloc(NULL, NULL);
	mem_stats_get(&st);
	if (rc != 0)
		fail_msg("%s: %s: the clean run fails: %s", s->path, name, strerror(-rc));
	uint64_t n = st.allocs;

	uint64_t ks[SWEEP_ALL + 1024 + 2];
	size_t nk = 0;
	if (n <= SWEEP_ALL) {
		for (uint64_t k = 0; k <= n; k++)
			ks[nk++] = k;
	} else {
		for (size_t i = 0; i < sites.n; i++)
			ks[nk++] = sites.first[i];
		ks[nk++] = n - 1;
		ks[nk++] = n;
	}
	for (size_t i = 0; i < nk; i++) {
		uint64_t k = ks[i];
		bool fails = k < n;
		if (fails && __lsan_disable)
			__lsan_disable();
		mem_stats_reset();
		mem_fail_after((long)k);
		rc = fn(s);
		mem_fail_after(-1);
		mem_stats_get(&st);
		if (fails && __lsan_enable)
			__lsan_enable();
		if (fails && rc != -ENOMEM)
			fail_msg("%s: %s: allocation %llu of %llu failed, and the stage returned %d, not -ENOMEM",
				 s->path, name, (unsigned long long)k, (unsigned long long)n, rc);
		if (fails && st.failure != MEM_FAIL_INJECTED)
			fail_msg("%s: %s: allocation %llu: no injected failure recorded", s->path, name,
				 (unsigned long long)k);
		if (!fails && rc != 0)
			fail_msg("%s: %s: with %llu allocations allowed of %llu the stage fails: %d", s->path,
				 name, (unsigned long long)k, (unsigned long long)n, rc);
	}
	s->runs += nk;
	s->allocs += n;
	printf("  %-14s %-10s %6llu allocations, %3zu sites, %4zu runs\n", s->path + 9, name,
	       (unsigned long long)n, sites.n, nk);
}

static void sweep_prepare(struct sweep *s, const char *path)
{
	struct diag_ctx dc;
	memset(s, 0, sizeof(*s));
	s->path = path;
	diag_init(&dc);
	assert_int_equal(beec_policy__load(&s->pol, path, &opts, &dc), 0);
	assert_int_equal(beec_policy__lower(&s->pol, &opts, &dc), 0);
	assert_int_equal(beec_policy__load(&s->parent, "policies/parent.toml", &opts, &dc), 0);
	assert_int_equal(beec_policy__lower(&s->parent, &opts, &dc), 0);
	assert_int_equal(beec_policy__pack(&s->pol, &opts, &dc, &s->pack, &s->pack_len), 0);
	diag_fini(&dc);
	snprintf(s->pack_path, sizeof(s->pack_path), "%s/policy.bpfpack", tmpdir);
	FILE *f = fopen(s->pack_path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(s->pack, 1, s->pack_len, f), s->pack_len);
	assert_int_equal(fclose(f), 0);
}

static void sweep_release(struct sweep *s)
{
	beec_policy__fini(&s->pol);
	beec_policy__fini(&s->parent);
	free(s->pack);
}

static void test_alloc_sweep_examples(void **state)
{
	(void)state;
	static const struct { const char *name; stage_fn fn; } stages[] = {
		{ "load", stage_load }, { "lower", stage_lower }, { "pack", stage_pack },
		{ "show", stage_show }, { "read-pack", stage_read_pack }, { "query", stage_query },
		{ "check", stage_check }, { "diff", stage_diff }, { "dumps", stage_dumps },
	};
	char *names[64];
	size_t n = examples_list(names, ARRAY_LEN(names));
	assert_true(n >= 5);
	unsigned long runs = 0, allocs = 0;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (size_t i = 0; i < n; i++) {
		char path[300];
		struct sweep s;
		snprintf(path, sizeof(path), "policies/%s", names[i]);
		sweep_prepare(&s, path);
		for (size_t j = 0; j < ARRAY_LEN(stages); j++)
			sweep_stage(&s, stages[j].name, stages[j].fn);
		runs += s.runs;
		allocs += s.allocs;
		sweep_release(&s);
		free(names[i]);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("alloc sweep: %zu policies, %lu allocations in clean runs, %lu failing runs, %.1f s\n", n,
	       allocs, runs, (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
}

/* ---- beec --max-memory ------------------------------------------------------------ */

/* beec POLICY -o OUT, with --max-memory=MAX_MEMORY unless it is NULL (the
 * default budget); its stderr goes to TMPDIR/stderr. */
static int run_beec(const char *max_memory, const char *policy, const char *out)
{
	const char *beec = getenv("BEEC") ? getenv("BEEC") : BEE_BUILD_DIR "/beec";
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char opt[64];
		snprintf(opt, sizeof(opt), "--max-memory=%s", max_memory ? max_memory : "");
		/* under ASan: the unwound stage's transient blocks are lost by
		 * contract (mem.h), so LeakSanitizer's exit report is not a finding */
		setenv("ASAN_OPTIONS", "detect_leaks=0", 1);
		char err[320];
		snprintf(err, sizeof(err), "%s/stderr", tmpdir);
		if (!freopen("/dev/null", "w", stdout) || !freopen(err, "w", stderr))
			_exit(127);
		if (max_memory)
			execl(beec, beec, "-D", defines[0], "-D", defines[1], opt, policy, "-o", out, (char *)NULL);
		else
			execl(beec, beec, "-D", defines[0], "-D", defines[1], policy, "-o", out, (char *)NULL);
		_exit(127);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static size_t entries_in(const char *dir)
{
	size_t n = 0;
	DIR *d = opendir(dir);
	assert_non_null(d);
	for (struct dirent *e; (e = readdir(d));)
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

static void test_alloc_sweep_beec_budget(void **state)
{
	(void)state;
	char dir[300], out[320];
	snprintf(dir, sizeof(dir), "%s/out", tmpdir);
	assert_int_equal(mkdir(dir, 0700), 0);
	snprintf(out, sizeof(out), "%s/reviewer.bpfpack", dir);
	/* reviewer.toml's compile peaks at about 400 KB of heap */
	static const char *const small[] = { "1", "64K", "128K" };
	for (size_t i = 0; i < ARRAY_LEN(small); i++) {
		assert_int_equal(run_beec(small[i], "policies/reviewer.toml", out), 6);
		assert_int_equal(entries_in(dir), 0);   /* no pack, no temporary */
		char err[320], *text = NULL;
		size_t len = 0;
		snprintf(err, sizeof(err), "%s/stderr", tmpdir);
		FILE *f = fopen(err, "r");
		assert_non_null(f);
		assert_true(getdelim(&text, &len, '\0', f) > 0);
		fclose(f);
		assert_non_null(strstr(text, "needed a heap of more than"));
		assert_non_null(strstr(text, "raise it with --max-memory"));
		free(text);
		unlink(err);
	}
	/* the control: the same compile with room enough */
	assert_int_equal(run_beec("1G", "policies/reviewer.toml", out), 0);
	struct stat sb;
	assert_int_equal(stat(out, &sb), 0);
	assert_true(sb.st_size > 0);
	assert_int_equal(entries_in(dir), 1);
	unlink(out);
	rmdir(dir);
}

/* The default budget (4G) leaves room for a large policy: 10,000 generated
 * fs rules (a twentieth under the sanitizers) compile with no
 * --max-memory; 1M, the control, is refused. */
static void test_alloc_sweep_beec_default_budget(void **state)
{
	(void)state;
	char policy[320], out[320];
	snprintf(policy, sizeof(policy), "%s/generated.toml", tmpdir);
	snprintf(out, sizeof(out), "%s/generated.bpfpack", tmpdir);
	FILE *f = fopen(policy, "w");
	assert_non_null(f);
	long n = test_cases(10000);
	fprintf(f, "version = 1\nname = \"generated\"\n\n[fs]\nread = [\n");
	for (long i = 0; i < n; i++)
		fprintf(f, "  \"/data/d%ld/f%ld/**\",\n", i % 97, i);
	fprintf(f, "]\n");
	assert_int_equal(fclose(f), 0);
	assert_int_equal(run_beec(NULL, policy, out), 0);
	struct stat sb;
	assert_int_equal(stat(out, &sb), 0);
	unlink(out);
	assert_int_equal(run_beec("1M", policy, out), 6);
	assert_int_equal(stat(out, &sb), -1);
	unlink(policy);
	char err[320];
	snprintf(err, sizeof(err), "%s/stderr", tmpdir);
	unlink(err);
}

/* A funnel call outside any protected call is a host's programming error:
 * it aborts, naming the function, when the allocation fails; the control,
 * the same call with memory to spare, returns. */
static void test_alloc_outside_trap(void **state)
{
	(void)state;
	for (int fail = 0; fail <= 1; fail++) {
		char err[320];
		snprintf(err, sizeof(err), "%s/outside", tmpdir);
		pid_t pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			if (!freopen(err, "w", stderr))
				_exit(127);
			mem_fail_after(fail ? 0 : -1);
			free(xmalloc(16));
			_exit(0);
		}
		int status;
		assert_int_equal(waitpid(pid, &status, 0), pid);
		if (!fail) {
			assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		} else {
			assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
			FILE *f = fopen(err, "r");
			assert_non_null(f);
			char *text = NULL;
			size_t len = 0;
			assert_true(getdelim(&text, &len, '\0', f) > 0);
			fclose(f);
			assert_non_null(strstr(text, "out of memory in 'test_alloc_outside_trap', outside any "
						     "protected call"));
			free(text);
		}
		unlink(err);
	}
}

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(tmpdir))
		return -1;
	setenv("TMPDIR", tmpdir, 1);
	devnull = fopen("/dev/null", "w");
	mem_json_route();
	return devnull ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char p[400];
	snprintf(p, sizeof(p), "%s/policy.bpfpack", tmpdir);
	unlink(p);
	rmdir(tmpdir);
	fclose(devnull);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_alloc_sweep_examples),
		cmocka_unit_test(test_alloc_sweep_beec_budget),
		cmocka_unit_test(test_alloc_sweep_beec_default_budget),
		cmocka_unit_test(test_alloc_outside_trap),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
