/* SPDX-License-Identifier: GPL-2.0-only */
/* test_vfs: a session's copy-on-write overlay, the parts below the
 * session (loader/vfs.c, vfs_cmd.c; tools/check-vfs drives whole
 * sessions):
 *
 *   - --overlay specs: a table of DIR[:mode] strings, the accepted ones
 *     with their mode and cap, the refused ones with their reason
 *   - the changes read from an upper layer built by hand as overlayfs
 *     leaves it (root: whiteouts are 0/0 character devices, an opaque
 *     directory has trusted.overlay.opaque "y"): a table of what each
 *     entry is, and that a copy equal to the real file, a whiteout of
 *     nothing and an unchanged directory are no change
 *   - apply of an ended session: refused with ESTALE when what it would
 *     replace changed after the reference time, nothing written; the
 *     control with the reference after the change writes exactly the
 *     changes, and the upper layer is emptied
 *
 * The upper layer needs root (not root: SKIPPED, unless CI is set, then
 * FAILED). Everything lives in one temporary directory, removed at the end.
 */
#include "vfs.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

static char top[64];

static int setup(void **state)
{
	(void)state;
	snprintf(top, sizeof(top), "/tmp/test_vfs-XXXXXX");
	return mkdtemp(top) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return bee_vfs_rm(top);
}

static void put(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	assert_int_equal(chmod(path, mode), 0);
}

static void need_root(void)
{
	if (geteuid() != 0) {
		if (getenv("CI"))
			fail_msg("test_vfs: the upper layers need root, and CI is set");
		fprintf(stderr, "test_vfs: SKIPPED: not root\n");
		skip();
	}
}

/* ---- specs ------------------------------------------------------------------------------ */

static void test_spec(void **state)
{
	(void)state;
	char dir[128], file[160];
	snprintf(dir, sizeof(dir), "%s/d:x", top);       /* a ':' in DIR itself */
	snprintf(file, sizeof(file), "%s/f", top);
	assert_int_equal(mkdir(dir, 0755), 0);
	put(file, "f", 0644);
	char a[16][256];
	snprintf(a[0], sizeof(a[0]), "%s", dir);
	snprintf(a[1], sizeof(a[1]), "%s:disk", dir);
	snprintf(a[2], sizeof(a[2]), "%s:memory", dir);
	snprintf(a[3], sizeof(a[3]), "%s:memory=2M", dir);
	snprintf(a[4], sizeof(a[4]), "%s:memory=1g", dir);
	snprintf(a[5], sizeof(a[5]), "%s/./:memory=1024K", dir);
	snprintf(a[6], sizeof(a[6]), "%s:memory=512K", dir);
	snprintf(a[7], sizeof(a[7]), "%s:memory=0", dir);
	snprintf(a[8], sizeof(a[8]), "%s:memory=12X", dir);
	snprintf(a[9], sizeof(a[9]), "%s:memory=-1M", dir);
	snprintf(a[10], sizeof(a[10]), "%s", file);
	snprintf(a[11], sizeof(a[11]), "%s/missing", top);
	snprintf(a[12], sizeof(a[12]), "relative/dir");
	snprintf(a[13], sizeof(a[13]), "/");
	snprintf(a[14], sizeof(a[14]), "/:disk");
	snprintf(a[15], sizeof(a[15]), "%s:tmpfs", dir);  /* not a mode: part of DIR, which is missing */
	const struct {
		int err;                /* 0: accepted */
		bool memory;
		unsigned long long size;
		const char *why;        /* a refusal's message holds it */
	} rows[16] = {
		{ 0, false, 0, NULL },
		{ 0, false, 0, NULL },
		{ 0, true, 64ULL << 20, NULL },
		{ 0, true, 2ULL << 20, NULL },
		{ 0, true, 1ULL << 30, NULL },
		{ 0, true, 1ULL << 20, NULL },
		{ -EINVAL, false, 0, "at least 1M" },
		{ -EINVAL, false, 0, "is not a size" },
		{ -EINVAL, false, 0, "is not a size" },
		{ -EINVAL, false, 0, "is not a size" },
		{ -ENOTDIR, false, 0, "is not a directory" },
		{ -ENOENT, false, 0, "No such file" },
		{ -EINVAL, false, 0, "absolute" },
		{ -EINVAL, false, 0, "root directory" },
		{ -EINVAL, false, 0, "root directory" },
		{ -ENOENT, false, 0, "No such file" },
	};
	for (size_t i = 0; i < 16; i++) {
		struct bee_vfs_spec sp;
		struct bee_error e = { 0 };
		int err = bee_vfs_spec_parse(a[i], &sp, &e);
		if (err != rows[i].err)
			fail_msg("row %zu '%s': %d, not %d (%s)", i, a[i], err, rows[i].err, e.msg);
		if (err) {
			assert_int_equal(e.stage, BEE_STAGE_USAGE);
			if (!strstr(e.msg, rows[i].why))
				fail_msg("row %zu '%s': '%s' does not say '%s'", i, a[i], e.msg, rows[i].why);
			continue;
		}
		assert_string_equal(sp.dir, dir);
		assert_int_equal(sp.memory, rows[i].memory);
		assert_int_equal(sp.size, rows[i].size);
	}
}

/* ---- the changes -------------------------------------------------------------------------- */

struct tree {
	char state[96], lower[96], upper[160];
	struct bee_vfs_record r;
	struct bee_vfs_ov ov;
};

static void tree_make(struct tree *t, const char *name)
{
	char p[256];
	memset(t, 0, sizeof(*t));
	snprintf(t->state, sizeof(t->state), "%s/%s-state", top, name);
	snprintf(t->lower, sizeof(t->lower), "%s/%s-lower", top, name);
	snprintf(p, sizeof(p), "%s/vfs/%s/0", t->state, name);
	assert_int_equal(bee_mkdirs(p, 0700), 0);
	assert_int_equal(mkdir(t->lower, 0755), 0);
	snprintf(t->r.sid, sizeof(t->r.sid), "%s", name);
	snprintf(t->ov.dir, sizeof(t->ov.dir), "%s", t->lower);
	t->r.ov = &t->ov;
	t->r.n = 1;
	assert_int_equal(bee_vfs_layer_make(t->state, name, 0, t->lower, 0), 0);
	bee_vfs_layer(t->upper, sizeof(t->upper), t->state, name, 0, "upper", 0);
}

static void at(char *buf, size_t size, const char *dir, const char *rel)
{
	snprintf(buf, size, "%s/%s", dir, rel);
}

static void whiteout(const char *upper, const char *rel)
{
	char p[256];
	at(p, sizeof(p), upper, rel);
	assert_int_equal(mknod(p, S_IFCHR | 0, makedev(0, 0)), 0);
}

static void test_changes(void **state)
{
	(void)state;
	need_root();
	struct tree t;
	char l[256], u[256];
	tree_make(&t, "changes");
#define L(rel) (at(l, sizeof(l), t.lower, rel), l)
#define U(rel) (at(u, sizeof(u), t.upper, rel), u)
	/* the real tree */
	put(L("same.txt"), "same\n", 0644);
	put(L("mod.txt"), "old\n", 0644);
	put(L("mode.txt"), "mode\n", 0644);
	put(L("gone.txt"), "gone\n", 0644);
	put(L("retype"), "a file\n", 0644);
	assert_int_equal(mkdir(L("dir"), 0755), 0);
	assert_int_equal(mkdir(L("dir/sub"), 0755), 0);
	put(L("dir/sub/kept.txt"), "kept\n", 0644);
	assert_int_equal(mkdir(L("opq"), 0755), 0);
	put(L("opq/x"), "x\n", 0644);
	put(L("opq/y"), "y\n", 0644);
	assert_int_equal(mkdir(L("deldir"), 0755), 0);
	put(L("deldir/f"), "f\n", 0644);
	/* what overlayfs would have left in the upper layer */
	put(U("same.txt"), "same\n", 0644);                  /* copied up, equal: no change */
	put(U("mod.txt"), "newer\n", 0644);
	put(U("mode.txt"), "mode\n", 0600);
	whiteout(t.upper, "gone.txt");
	whiteout(t.upper, "never-was");                       /* a whiteout of nothing: no change */
	assert_int_equal(mkdir(U("retype"), 0700), 0);
	assert_int_equal(mkdir(U("dir"), 0755), 0);           /* copied up on the way: no change */
	assert_int_equal(mkdir(U("dir/sub"), 0755), 0);
	put(U("dir/sub/new.txt"), "new\n", 0600);
	assert_int_equal(mkdir(U("opq"), 0755), 0);
	assert_int_equal(setxattr(U("opq"), "trusted.overlay.opaque", "y", 1, 0), 0);
	put(U("opq/y"), "y\n", 0644);
	whiteout(t.upper, "deldir");
	assert_int_equal(mkdir(U("newdir"), 0700), 0);
	put(U("newdir/f"), "f\n", 0600);
	assert_int_equal(symlink("mod.txt", U("link")), 0);
	struct bee_vfs_change *v;
	size_t n;
	assert_int_equal(bee_vfs_changes(t.state, &t.r, &v, &n), 0);
	const struct {
		const char *rel;
		enum bee_vfs_kind kind;
		char type, was_type;
		bool content;
		unsigned mode;
	} want[] = {
		{ "deldir", BEE_VFS_DELETED, 'd', 'd', true, 0755 },
		{ "dir/sub/new.txt", BEE_VFS_ADDED, 'f', 0, true, 0600 },
		{ "gone.txt", BEE_VFS_DELETED, 'f', 'f', true, 0644 },
		{ "link", BEE_VFS_ADDED, 'l', 0, true, 0777 },
		{ "mod.txt", BEE_VFS_MODIFIED, 'f', 'f', true, 0644 },
		{ "mode.txt", BEE_VFS_MODIFIED, 'f', 'f', false, 0600 },
		{ "newdir", BEE_VFS_ADDED, 'd', 0, true, 0700 },
		{ "newdir/f", BEE_VFS_ADDED, 'f', 0, true, 0600 },
		{ "opq/x", BEE_VFS_DELETED, 'f', 'f', true, 0644 },
		{ "retype", BEE_VFS_MODIFIED, 'd', 'f', true, 0700 },
	};
	size_t nw = sizeof(want) / sizeof(want[0]);
	assert_int_equal(n, nw);
	for (size_t i = 0; i < nw; i++) {
		assert_string_equal(v[i].rel, want[i].rel);
		assert_int_equal(v[i].kind, want[i].kind);
		assert_int_equal(v[i].type, want[i].type);
		if (want[i].kind != BEE_VFS_ADDED && want[i].kind != BEE_VFS_DELETED)
			assert_int_equal(v[i].was_type, want[i].was_type);
		assert_int_equal(v[i].content, want[i].content);
		assert_int_equal(v[i].mode, want[i].mode);
		assert_int_equal(strncmp(v[i].path, t.lower, strlen(t.lower)), 0);
	}
	assert_int_equal(v[4].was_size, 4);
	assert_int_equal(v[4].size, 6);
	bee_vfs__changes_free(v, n);
#undef L
#undef U
}

/* ---- apply of an ended session ------------------------------------------------------------- */

static void test_apply(void **state)
{
	(void)state;
	need_root();
	struct tree t;
	char l[256], u[256];
	tree_make(&t, "apply");
	at(l, sizeof(l), t.lower, "a.txt");
	put(l, "a\n", 0644);
	at(l, sizeof(l), t.lower, "b.txt");
	put(l, "b\n", 0644);
	at(u, sizeof(u), t.upper, "a.txt");
	put(u, "A\n", 0640);
	whiteout(t.upper, "b.txt");
	at(u, sizeof(u), t.upper, "c.txt");
	put(u, "c\n", 0600);
	/* the reference before the real a.txt changed: refused */
	t.r.ref_ns = bee_vfs_coarse_ns() - 1000000000LL;
	assert_int_equal(bee_vfs_record_write(t.state, &t.r), 0);
	struct bee_vfs_opts o = { .sz = sizeof(o), .state_dir = t.state };
	struct bee_error e = { 0 };
	assert_int_equal(bee_vfs__apply("apply", &o, &e), -ESTALE);
	assert_int_equal(e.stage, BEE_STAGE_VFS);
	assert_non_null(strstr(e.msg, "changed underneath"));
	assert_non_null(strstr(e.msg, "nothing applied"));
	struct stat st;
	at(l, sizeof(l), t.lower, "b.txt");
	assert_int_equal(stat(l, &st), 0);           /* not deleted */
	at(l, sizeof(l), t.lower, "c.txt");
	assert_int_equal(stat(l, &st), -1);          /* not added */
	/* the control: a reference after every change of the real tree */
	struct timespec ts = { 0, 20 * 1000 * 1000 };
	nanosleep(&ts, NULL);
	t.r.ref_ns = bee_vfs_coarse_ns() + 1;
	assert_int_equal(bee_vfs_record_write(t.state, &t.r), 0);
	assert_int_equal(bee_vfs__apply("apply", &o, &e), 3);
	char buf[8] = "";
	at(l, sizeof(l), t.lower, "a.txt");
	int fd = open(l, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(read(fd, buf, sizeof(buf)), 2);
	close(fd);
	assert_memory_equal(buf, "A\n", 2);
	assert_int_equal(stat(l, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0640);
	at(l, sizeof(l), t.lower, "b.txt");
	assert_int_equal(stat(l, &st), -1);
	at(l, sizeof(l), t.lower, "c.txt");
	assert_int_equal(stat(l, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	/* a whole apply of an ended session empties its upper layer */
	struct bee_vfs_change *v;
	size_t n;
	assert_int_equal(bee_vfs_changes(t.state, &t.r, &v, &n), 0);
	assert_int_equal(n, 0);
	bee_vfs__changes_free(v, n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spec),
		cmocka_unit_test(test_changes),
		cmocka_unit_test(test_apply),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
