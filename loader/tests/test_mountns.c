/* SPDX-License-Identifier: GPL-2.0-only */
/* test_mountns: the session's mount namespace (loader/mountns.c).
 *
 *   - the plan: each [fs] write grant's place (its literal prefix, the
 *     nearest existing directory when missing, the file itself for a
 *     literal file, nothing for a device), sorted, without duplicates or
 *     places below others, /proc apart, nothing inside bee's state
 *     directory, "/" leaving the tree writable
 *   - entering it, as root, in a process made the way bee-load makes the
 *     session's init (its own cgroup, then new mount, pid and cgroup
 *     namespaces, pid 1): outside the write grants chmod, chown, utimes,
 *     truncate, setxattr, create, mkdir, unlink and rename fail with EROFS,
 *     and inside them (a glob's directory, a literal file) they succeed;
 *     /dev/null stays writable; bpffs and the state directory are empty
 *     (they were not before); /proc lists the session's process only and
 *     nothing outside can be signalled; the cgroup2 mount shows the
 *     session's cgroup only and its cgroup.procs refuses writes (EROFS)
 *
 * Entering needs root (not root: SKIPPED, unless CI is set, then FAILED).
 * Nothing is mounted outside the test's own mount namespaces; the test's
 * cgroup and directory are removed on every path.
 */
#include "internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <cmocka.h>

static char tmp[PATH_MAX];        /* resolved, so plans compare as text */
static char cgroup[PATH_MAX + 64]; /* the test's session cgroup, "" when none */

/* "@" in s replaced by tmp */
static char *expand(const char *s, char *buf, size_t size)
{
	size_t o = 0;
	for (; *s && o + 1 < size; s++) {
		if (*s == '@')
			o += (size_t)snprintf(buf + o, size - o, "%s", tmp);
		else
			buf[o++] = *s;
	}
	buf[o < size ? o : size - 1] = '\0';
	return buf;
}

static void put(const char *rel, const char *text)
{
	char p[PATH_MAX + 64];
	snprintf(p, sizeof(p), "%s/%s", tmp, rel);
	assert_int_equal(bee_write_atomic(p, text, strlen(text)), 0);
	assert_int_equal(chmod(p, 0644), 0);
}

static void mkd(const char *rel)
{
	char p[PATH_MAX + 64];
	snprintf(p, sizeof(p), "%s/%s", tmp, rel);
	assert_int_equal(bee_mkdirs(p, 0755), 0);
}

static int setup(void **state)
{
	(void)state;
	char t[] = "/tmp/test_mountns-XXXXXX";
	if (!mkdtemp(t) || !realpath(t, tmp))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	if (*cgroup)
		rmdir(cgroup);
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	if (system(cmd) != 0)
		fprintf(stderr, "test_mountns: cannot remove %s\n", tmp);
	return 0;
}

/* A manifest of fs write rules only: what the plan reads. */
struct mf {
	struct bee_manifest m;
	struct bee_mf_rule r[8];
	char text[8][PATH_MAX];
};

static void mf_make(struct mf *f, const char *const *globs)
{
	memset(f, 0, sizeof(*f));
	for (size_t i = 0; globs[i]; i++) {
		expand(globs[i], f->text[i], sizeof(f->text[i]));
		f->r[i] = (struct bee_mf_rule){ .index = (unsigned)i, .domain = "fs", .kind = "write",
						.rdomain = BEE_DOMAIN_FS, .rkind = BEE_RULE_FS_WRITE,
						.text = f->text[i] };
		f->m.nrules++;
	}
	f->m.rules = f->r;
}

/* the plan's write, tree and proc lines (covers and cgroup2 are the host's) */
static void plan_lines(const struct bee_mountns *ns, char *out, size_t size)
{
	char all[16384];
	assert_int_equal(bee_mountns_describe(ns, all, sizeof(all)), 0);
	size_t o = 0;
	*out = '\0';
	for (char *l = strtok(all, "\n"); l; l = strtok(NULL, "\n"))
		if (strncmp(l, "write ", 6) == 0 || strncmp(l, "tree ", 5) == 0 || strncmp(l, "proc ", 5) == 0)
			o += (size_t)snprintf(out + o, size - o, "%s\n", l);
}

static void test_plan(void **state)
{
	(void)state;
	mkd("a/b");
	mkd("w");
	mkd("state");
	put("c", "c\n");
	static const struct {
		const char *globs[4];
		const char *want;
	} rows[] = {
		{ { "@/a/b/**", "@/a/**" }, "write @/a\ntree ro\nproc ro\n" },
		{ { "@/a/missing/x/**" }, "write @/a\ntree ro\nproc ro\n" },
		{ { "@/c" }, "write @/c\ntree ro\nproc ro\n" },
		{ { "@/a/missing.txt" }, "write @/a\ntree ro\nproc ro\n" },
		{ { "/dev/null" }, "tree ro\nproc ro\n" },
		{ { "@/a/*.txt", "@/z-*/**" }, "write @\ntree ro\nproc ro\n" },
		{ { "@/{w,a}/**", "@/w/**" }, "write @/a\nwrite @/w\ntree ro\nproc ro\n" },
		{ { "/proc/self/**" }, "tree ro\nproc rw\n" },
		{ { "@/state/x/**", "@/state" }, "tree ro\nproc ro\n" },
		{ { "/**" }, "tree rw\nproc ro\n" },
		{ { NULL }, "tree ro\nproc ro\n" },
	};
	char st[PATH_MAX + 16];
	snprintf(st, sizeof(st), "%s/state", tmp);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct mf f;
		struct bee_mountns *ns;
		struct bee_error e;
		char got[8192], want[8192];
		mf_make(&f, rows[i].globs);
		assert_int_equal(bee_mountns_plan(&f.m, st, &ns, &e), 0);
		plan_lines(ns, got, sizeof(got));
		expand(rows[i].want, want, sizeof(want));
		if (strcmp(got, want) != 0)
			fprintf(stderr, "row %zu:\n--- got\n%s--- want\n%s", i, got, want);
		assert_string_equal(got, want);
		/* the state directory is always covered */
		char all[16384], cover[PATH_MAX + 32];
		assert_int_equal(bee_mountns_describe(ns, all, sizeof(all)), 0);
		snprintf(cover, sizeof(cover), "cover %s\n", st);
		assert_non_null(strstr(all, cover));
		bee_mountns_free(ns);
	}
}

/* ---- inside the namespace ---------------------------------------------------------- */

static int fails;

#define EXPECT(cond, ...)                                                                                  \
	do {                                                                                               \
		if (!(cond)) {                                                                             \
			fprintf(stderr, "test_mountns: inside: " __VA_ARGS__);                             \
			fprintf(stderr, " (errno %d %s)\n", errno, strerror(errno));                       \
			fails++;                                                                           \
		}                                                                                          \
	} while (0)

/* r is -1 with errno EROFS */
#define EXPECT_EROFS(r, what, path) EXPECT((r) < 0 && errno == EROFS, "%s '%s' is not refused with EROFS", what, path)
#define EXPECT_OK(r, what, path) EXPECT((r) == 0, "%s '%s' fails", what, path)

static int entries(const char *dir, char *names, size_t size)
{
	DIR *d = opendir(dir);
	int n = 0;
	size_t o = 0;
	struct dirent *de;
	if (!d)
		return -1;
	*names = '\0';
	while ((de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		n++;
		if (o < size)
			o += (size_t)snprintf(names + o, size - o, "%s ", de->d_name);
	}
	closedir(d);
	return n;
}

/* 0 when path opens with flags (then closed), else -1 with errno */
static int try_open(const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

/* every metadata and namespace change on file f in directory dir */
static void changes(const char *dir, const char *f, bool allowed)
{
	char p[PATH_MAX + 64], q[PATH_MAX + 64];
	int r;
#define CHECK(call, what, path)                            \
	do {                                               \
		errno = 0;                                 \
		r = (call);                                \
		if (allowed)                               \
			EXPECT_OK(r, what, path);          \
		else                                       \
			EXPECT_EROFS(r, what, path);       \
	} while (0)
	CHECK(chmod(f, 0600), "chmod", f);
	CHECK(chown(f, 0, 0), "chown", f);
	CHECK(utimensat(AT_FDCWD, f, NULL, 0), "utimes", f);
	CHECK(truncate(f, 1), "truncate", f);
	CHECK(setxattr(f, "user.bee", "1", 1, 0), "setxattr", f);
	CHECK(try_open(f, O_WRONLY), "open for writing", f);
	if (!dir)
		return;
	snprintf(p, sizeof(p), "%s/new", dir);
	CHECK(try_open(p, O_WRONLY | O_CREAT | O_EXCL), "create", p);
	snprintf(p, sizeof(p), "%s/sub", dir);
	CHECK(mkdir(p, 0700), "mkdir", p);
	snprintf(q, sizeof(q), "%s.moved", f);
	CHECK(rename(f, q), "rename", f);
	CHECK(unlink(allowed ? q : f), "unlink", allowed ? q : f);
#undef CHECK
}

/* pid 1 of the new pid namespace: enter, then look from inside */
static int inside(const struct bee_mountns *ns, const char *cg2)
{
	char p[PATH_MAX + 64], names[512], d[PATH_MAX + 128];
	const char *what = "";
	int err = bee_mountns_enter(ns, &what);
	if (err) {
		fprintf(stderr, "test_mountns: enter: %s: %s\n", what, strerror(-err));
		return 2;
	}
	/* outside the grants: EROFS; in the glob's directory and on the literal
	 * file: allowed (the controls) */
	snprintf(p, sizeof(p), "%s/ro/file", tmp);
	snprintf(d, sizeof(d), "%s/ro", tmp);
	changes(d, p, false);
	snprintf(p, sizeof(p), "%s/w/file", tmp);
	snprintf(d, sizeof(d), "%s/w", tmp);
	changes(d, p, true);
	snprintf(p, sizeof(p), "%s/lit", tmp);
	changes(NULL, p, true);
	snprintf(p, sizeof(p), "%s/lit-beside", tmp);
	int fd = open(p, O_WRONLY | O_CREAT, 0600);
	EXPECT(fd < 0 && errno == EROFS, "creating '%s' beside a literal grant is not refused with EROFS", p);
	fd = open("/dev/null", O_WRONLY);
	EXPECT(fd >= 0 && write(fd, "x", 1) == 1, "/dev/null cannot be written on the read-only tree");
	if (fd >= 0)
		close(fd);
	/* bee's objects: empty, and nothing can be made there */
	snprintf(p, sizeof(p), "%s/bpffs", tmp);
	EXPECT(entries(p, names, sizeof(names)) == 0, "bpffs '%s' shows: %s", p, names);
	snprintf(d, sizeof(d), "%s/pin2", p);
	EXPECT(mkdir(d, 0700) < 0 && errno == EROFS, "mkdir in the covered bpffs is not refused with EROFS");
	snprintf(p, sizeof(p), "%s/state", tmp);
	EXPECT(entries(p, names, sizeof(names)) == 0, "state directory '%s' shows: %s", p, names);
	struct stat st;
	EXPECT(stat(p, &st) == 0 && (st.st_mode & 07777) == 0, "the state directory's cover is not mode 0");
	/* /proc: this process alone; nothing else to signal */
	int n = entries("/proc", names, sizeof(names));
	EXPECT(n > 0, "/proc cannot be listed");
	DIR *dp = opendir("/proc");
	struct dirent *de;
	int pids = 0;
	while (dp && (de = readdir(dp)))
		if (strspn(de->d_name, "0123456789") == strlen(de->d_name)) {
			pids++;
			EXPECT(strcmp(de->d_name, "1") == 0, "/proc shows process %s", de->d_name);
		}
	if (dp)
		closedir(dp);
	EXPECT(pids == 1, "/proc shows %d processes, not 1", pids);
	EXPECT(kill(1, 0) == 0, "the session's own process cannot be signalled (control)");
	errno = 0;
	EXPECT(kill(-1, 0) < 0 && errno == ESRCH, "kill(-1) reaches a process");
	EXPECT(getppid() == 0, "the parent outside is visible as pid %d", (int)getppid());
	/* cgroup2: the session's cgroup, read-only */
	snprintf(p, sizeof(p), "%s/cgroup.procs", cg2);
	char *text = NULL;
	EXPECT(bee_read_file(p, &text, NULL) == 0, "'%s' cannot be read (control)", p);
	bool self = false, other = false;
	for (char *l = text ? strtok(text, "\n") : NULL; l; l = strtok(NULL, "\n")) {
		self |= strcmp(l, "1") == 0;
		/* the parent outside the pid namespace shows as 0 */
		other |= strcmp(l, "1") != 0 && strcmp(l, "0") != 0;
	}
	free(text);
	EXPECT(self && !other, "'%s' does not show the session's process alone", p);
	fd = open(p, O_WRONLY);
	EXPECT(fd < 0 && errno == EROFS, "'%s' opens for writing", p);
	snprintf(p, sizeof(p), "%s/cgroup.subtree_control", cg2);
	fd = open(p, O_WRONLY);
	EXPECT(fd < 0 && errno == EROFS, "'%s' opens for writing", p);
	n = 0;
	dp = opendir(cg2);
	while (dp && (de = readdir(dp)))
		n += de->d_type == DT_DIR && de->d_name[0] != '.';
	if (dp)
		closedir(dp);
	EXPECT(n == 0, "the cgroup2 mount shows %d cgroups below the session's", n);
	return fails ? 1 : 0;
}

/* The process bee-load's clone3 makes: a cgroup of its own, then new mount,
 * pid and cgroup namespaces; its first child is pid 1. Before that, in a
 * mount namespace of the test's own, a bpffs with a pin folder and the
 * plan, as bee-load makes it. */
static int session_child(void)
{
	char p[PATH_MAX + 64], cg2[PATH_MAX], names[256];
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return 3;
	snprintf(p, sizeof(p), "%s/bpffs", tmp);
	if (mount("bpf", p, "bpf", 0, "mode=0700") < 0)
		return 4;
	snprintf(p, sizeof(p), "%s/bpffs/pins", tmp);
	if (mkdir(p, 0700) < 0)
		return 5;
	/* the controls: before entering, bpffs and the state directory are not empty */
	snprintf(p, sizeof(p), "%s/bpffs", tmp);
	/* (6.18's bpffs also shows bpf_preload's progs.debug and maps.debug) */
	if (entries(p, names, sizeof(names)) < 1 || !strstr(names, "pins ")) {
		fprintf(stderr, "test_mountns: bpffs before entering: %s\n", names);
		return 6;
	}
	snprintf(p, sizeof(p), "%s/state", tmp);
	if (entries(p, names, sizeof(names)) != 1)
		return 7;
	if (bee_cgroup2_mount(cg2, sizeof(cg2), NULL, 0) < 0)
		return 8;
	static const char *const globs[] = { "@/w/**", "@/lit", "/dev/null", NULL };
	struct mf f;
	struct bee_mountns *ns;
	struct bee_error e;
	mf_make(&f, globs);
	snprintf(p, sizeof(p), "%s/state", tmp);
	if (bee_mountns_plan(&f.m, p, &ns, &e) < 0) {
		fprintf(stderr, "test_mountns: plan: %s\n", e.msg);
		return 9;
	}
	snprintf(p, sizeof(p), "%s/cgroup.procs", cgroup);
	if (bee_write_file(p, "0") < 0)
		return 10;
	if (unshare(CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWCGROUP) < 0)
		return 11;
	pid_t pid = fork();
	if (pid < 0)
		return 12;
	if (pid == 0)
		_exit(inside(ns, cg2));
	int st;
	if (waitpid(pid, &st, 0) != pid)
		return 13;
	bee_mountns_free(ns);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void test_enter(void **state)
{
	(void)state;
	if (geteuid() != 0) {
		if (getenv("CI"))
			fail_msg("test_mountns: entering needs root, and CI is set");
		fprintf(stderr, "test_mountns: SKIPPED entering: not root\n");
		skip();
	}
	mkd("ro");
	mkd("w");
	mkd("state");
	mkd("bpffs");
	put("ro/file", "r\n");
	put("w/file", "w\n");
	put("lit", "l\n");
	put("state/secret", "s\n");
	char self[PATH_MAX];
	assert_int_equal(bee_cgroup_self(self, sizeof(self)), 0);
	snprintf(cgroup, sizeof(cgroup), "%s/test_mountns-%d", self, (int)getpid());
	assert_int_equal(mkdir(cgroup, 0755), 0);
	fflush(stderr);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(session_child());
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	/* nothing was mounted here, and the cgroup empties */
	char p[PATH_MAX + 64];
	snprintf(p, sizeof(p), "%s/bpffs", tmp);
	assert_int_equal(bee_is_bpffs(p), 0);
	assert_int_equal(rmdir(cgroup), 0);
	*cgroup = '\0';
	/* the writes inside happened to the real files */
	snprintf(p, sizeof(p), "%s/w/file.moved", tmp);
	assert_int_equal(access(p, F_OK), -1);
	snprintf(p, sizeof(p), "%s/w/new", tmp);
	assert_int_equal(access(p, F_OK), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plan),
		cmocka_unit_test(test_enter),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
