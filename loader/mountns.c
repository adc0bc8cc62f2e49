/* SPDX-License-Identifier: GPL-2.0-only */
/* mountns.c: the session's mount namespace (internal.h says what it holds).
 *
 * Planned in bee-load, where allocating and reading files is safe:
 *
 *   covers   every bpffs mount point and bee's state directory, longest
 *            path first (a nested mount is covered before its parent's
 *            cover would hide its path)
 *   cgroup2  every place the host mounts cgroup2
 *   writes   the existing literal prefixes of the [fs] write grants,
 *            resolved, sorted, without duplicates or prefixes below others
 *
 * Entered by the session's init, only system calls:
 *
 *   1. every mount private (nothing propagates back to the host)
 *   2. each cover: an empty read-only tmpfs of mode 0, one for them all
 *      (its mount moved onto the first cover, a clone of it onto each
 *      other: one superblock made, and torn down at the session's end)
 *   3. cgroup2 mounted again read-only at each place: in the session's
 *      cgroup namespace it shows the session's subtree only
 *   4. each write prefix cloned (open_tree OPEN_TREE_CLONE|AT_RECURSIVE)
 *      while it is still writable, then the whole tree read-only
 *      (mount_setattr AT_RECURSIVE MOUNT_ATTR_RDONLY), then each clone moved
 *      back onto its place (move_mount); cloning before the tree turns
 *      read-only keeps every mount's own flags, so a mount the host made
 *      read-only stays so, and the covers of step 2 come along
 *   5. a new /proc of the session's pid namespace, read-only unless a
 *      write grant reaches into /proc
 *
 * With --overlay (vfs.c), before step 2 each DIR and STATE/vfs/ID (where
 * the upper layers are) are opened and the latter cloned while it is
 * writable; after step 4 the clone is moved back under the state
 * directory's cover and each DIR gets an overlayfs over the real one
 * (through the descriptors: the paths are covered by then), read-write
 * when a write grant's place is at, above or below DIR. init keeps those
 * descriptors for the session's life: reset mounts a fresh overlay through
 * them from outside.
 *
 * So outside the write grants every metadata change, truncate, create,
 * unlink and rename fails with EROFS whatever the kernel's LSMs can do;
 * inside them Landlock or the BPF LSM hooks decide. Device nodes, FIFOs and
 * sockets stay writable on a read-only mount (the kernel checks the mount
 * only for regular files and directories), so a literal grant of /dev/null
 * needs no writable mount.
 */
#include "internal.h"
#include "sys.h"
#include "vfs.h"

#include "libbeec.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* write prefixes a session may have (each is a descriptor on init's stack) */
#define MOUNTNS_WRITES_MAX 64

struct path_list {
	char **v;
	size_t n, cap;
};

struct mountns_overlay {
	char *dir;
	char upper[32], work[32];   /* below the session's vfs root: "N/upper.0" */
	bool rw;
};

struct bee_mountns {
	struct path_list covers, cgroup2, writes;
	bool proc_rw;               /* a write grant reaches into /proc */
	bool tree_rw;               /* a write grant of "/" itself: nothing turns read-only */
	char *vfs_root;             /* STATE/vfs/ID: the upper layers (NULL: no overlay) */
	struct mountns_overlay ov[BEE_VFS_MAX];
	size_t nov;
};

static int list_add(struct path_list *l, const char *path)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i], path) == 0)
			return 0;
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 8;
		char **v = realloc(l->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	if (!(l->v[l->n] = strdup(path)))
		return -ENOMEM;
	l->n++;
	return 0;
}

static void list_fini(struct path_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* path is dir or below it */
static bool path_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	if (strcmp(dir, "/") == 0)
		return true;
	return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static int by_length_desc(const void *a, const void *b)
{
	const char *x = *(char *const *)a, *y = *(char *const *)b;
	size_t lx = strlen(x), ly = strlen(y);
	return lx != ly ? (lx < ly ? 1 : -1) : strcmp(x, y);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int on_mount(const char *mnt, const char *fstype, void *ctx)
{
	struct bee_mountns *ns = ctx;
	if (strcmp(fstype, "bpf") == 0)
		return list_add(&ns->covers, mnt);
	if (strcmp(fstype, "cgroup2") == 0)
		return list_add(&ns->cgroup2, mnt);
	return 0;
}

/* The directory to make writable for one literal prefix of a write glob:
 * the nearest existing ancestor directory (the path itself for a literal
 * regular file or directory that exists), resolved. Sets *out to "" when
 * nothing needs a writable mount (a device node, FIFO or socket). */
static int write_place(const struct beec_prefix *px, char *out)
{
	char buf[PATH_MAX];
	struct stat st;
	*out = '\0';
	snprintf(buf, sizeof(buf), "%s", px->path);
	if (stat(buf, &st) == 0) {
		if (px->literal && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
			return 0;
		if (px->literal || S_ISDIR(st.st_mode))
			return realpath(buf, out) ? 0 : -errno;
	}
	/* missing (or a glob's prefix that is not a directory): the nearest
	 * existing directory above, where its files would be created */
	for (;;) {
		char *slash = strrchr(buf, '/');
		if (!slash)
			return -EINVAL;
		if (slash == buf)
			slash[1] = '\0';
		else
			*slash = '\0';
		if (stat(buf, &st) == 0 && S_ISDIR(st.st_mode))
			return realpath(buf, out) ? 0 : -errno;
		if (strcmp(buf, "/") == 0)
			return -ENOENT;
	}
}

struct write_ctx {
	struct bee_mountns *ns;
	struct path_list *all;
	char *place;                /* PATH_MAX bytes */
	struct bee_error *e;
};

/* One write prefix's place (bee_write_prefixes_each's fn). */
static int plan_write(void *ctx, const struct bee_mf_rule *r, const struct beec_prefix *px)
{
	struct write_ctx *w = ctx;
	int err = write_place(px, w->place);
	if (err < 0)
		return bee_fail(w->e, BEE_STAGE_NAMESPACE, err, "rule %u 'fs.write %s': '%s': %s", r->index, r->text,
				px->path, strerror(-err));
	if (!*w->place)
		return 0;
	if (path_under(w->place, "/proc")) {
		w->ns->proc_rw = true;
		return 0;
	}
	/* bee's own objects stay hidden, whatever a grant says */
	for (size_t c = 0; c < w->ns->covers.n; c++)
		if (path_under(w->place, w->ns->covers.v[c]))
			return 0;
	if ((err = list_add(w->all, w->place)) < 0)
		return bee_fail(w->e, BEE_STAGE_NAMESPACE, err, "out of memory");
	return 0;
}

static int plan_writes(const struct bee_manifest *m, struct bee_mountns *ns, struct bee_error *e)
{
	char *place = malloc(PATH_MAX);
	struct path_list all = { 0 };
	int err = 0;
	if (!place) {
		err = bee_fail(e, BEE_STAGE_NAMESPACE, -ENOMEM, "out of memory");
		goto out;
	}
	struct write_ctx w = { .ns = ns, .all = &all, .place = place, .e = e };
	if ((err = bee_write_prefixes_each(m, BEE_STAGE_NAMESPACE, plan_write, &w, e)) < 0)
		goto out;
	/* sorted, a prefix below another dropped: the clone of the upper one
	 * holds it */
	if (all.n)
		qsort(all.v, all.n, sizeof(*all.v), by_name);
	for (size_t i = 0; i < all.n; i++) {
		bool below = false;
		for (size_t k = 0; k < ns->writes.n; k++)
			below |= path_under(all.v[i], ns->writes.v[k]);
		if (!below && (err = list_add(&ns->writes, all.v[i])) < 0)
			goto oom;
	}
	if (ns->writes.n == 1 && strcmp(ns->writes.v[0], "/") == 0) {
		ns->tree_rw = true;
		free(ns->writes.v[0]);
		ns->writes.n = 0;
	}
	if (ns->writes.n > MOUNTNS_WRITES_MAX)
		err = bee_fail(e, BEE_STAGE_NAMESPACE, -E2BIG,
			       "the policy's write grants need %zu writable places, more than %d", ns->writes.n,
			       MOUNTNS_WRITES_MAX);
	goto out;
oom:
	err = bee_fail(e, BEE_STAGE_NAMESPACE, err, "out of memory");
out:
	list_fini(&all);
	free(place);
	return err;
}

void bee_mountns_learn(struct bee_mountns *ns)
{
	ns->tree_rw = true;
}

int bee_mountns_plan(const struct bee_manifest *m, const char *state_dir, struct bee_mountns **out,
		     struct bee_error *e)
{
	struct bee_mountns *ns = calloc(1, sizeof(*ns));
	char real[PATH_MAX];
	int err;
	*out = NULL;
	if (!ns)
		return bee_fail(e, BEE_STAGE_NAMESPACE, -ENOMEM, "out of memory");
	if ((err = bee_mountinfo_each(NULL, on_mount, ns)) < 0) {
		bee_fail(e, BEE_STAGE_NAMESPACE, err, "/proc/self/mountinfo: %s", strerror(-err));
		goto fail;
	}
	/* a state directory that does not exist holds nothing to hide */
	if (state_dir && realpath(state_dir, real) && (err = list_add(&ns->covers, real)) < 0) {
		bee_fail(e, BEE_STAGE_NAMESPACE, err, "out of memory");
		goto fail;
	}
	qsort(ns->covers.v, ns->covers.n, sizeof(char *), by_length_desc);
	if ((err = plan_writes(m, ns, e)) < 0)
		goto fail;
	*out = ns;
	return 0;
fail:
	bee_mountns_free(ns);
	return err;
}

int bee_mountns_overlays(struct bee_mountns *ns, struct bee_vfs *v, struct bee_error *e)
{
	size_t n = bee_vfs_count(v);
	if (!n)
		return 0;
	if (!(ns->vfs_root = strdup(bee_vfs_root(v))))
		return bee_fail(e, BEE_STAGE_NAMESPACE, -ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		const char *dir = bee_vfs_dir(v, i);
		struct mountns_overlay *o = &ns->ov[i];
		for (size_t c = 0; c < ns->covers.n; c++)
			if (path_under(dir, ns->covers.v[c]))
				return bee_fail(e, BEE_STAGE_USAGE, -EINVAL, "--overlay '%s': it lies in '%s', which bee "
						"covers in every session", dir, ns->covers.v[c]);
		if (path_under(dir, "/proc"))
			return bee_fail(e, BEE_STAGE_USAGE, -EINVAL, "--overlay '%s': /proc cannot be overlaid", dir);
		if (!(o->dir = strdup(dir)))
			return bee_fail(e, BEE_STAGE_NAMESPACE, -ENOMEM, "out of memory");
		snprintf(o->upper, sizeof(o->upper), "%zu/upper.0", i);
		snprintf(o->work, sizeof(o->work), "%zu/work.0", i);
		/* writable as the tree there would be: the policy's rules
		 * decide inside it, the mount only where nothing may write */
		o->rw = ns->tree_rw;
		for (size_t k = 0; k < ns->writes.n; k++)
			o->rw |= path_under(ns->writes.v[k], dir) || path_under(dir, ns->writes.v[k]);
		bee_vfs_set_writable(v, i, o->rw);
		ns->nov++;
	}
	return 0;
}

/* "/proc/self/fd/N" and "/proc/self/fd/N/TAIL" without stdio: init only
 * makes system calls */
static void fd_path(char *buf, size_t size, int fd, const char *tail)
{
	static const char head[] = "/proc/self/fd/";
	char digits[12];
	size_t nd = 0, off = 0;
	do
		digits[nd++] = (char)('0' + fd % 10);
	while ((fd /= 10) && nd < sizeof(digits));
	for (size_t i = 0; head[i] && off + 1 < size; i++)
		buf[off++] = head[i];
	while (nd && off + 1 < size)
		buf[off++] = digits[--nd];
	if (tail && off + 1 < size)
		buf[off++] = '/';
	for (size_t i = 0; tail && tail[i] && off + 1 < size; i++)
		buf[off++] = tail[i];
	buf[off] = '\0';
}

/* The calls of init's setup, made through bee_sys (sys.h: init may run
 * in bee-load's memory); each returns a descriptor, 0, or -errno. */
static int sys_open_tree(const char *path, unsigned flags)
{
	return (int)bee_sys(SYS_open_tree, AT_FDCWD, path, flags);
}

static int sys_move_mount(int fd, const char *to)
{
	return (int)bee_sys(SYS_move_mount, fd, "", AT_FDCWD, to, MOVE_MOUNT_F_EMPTY_PATH);
}

static int sys_tree_rdonly(const char *path)
{
	struct mount_attr a = { .attr_set = MOUNT_ATTR_RDONLY };
	return (int)bee_sys(SYS_mount_setattr, AT_FDCWD, path, AT_RECURSIVE, &a, sizeof(a));
}

static int sys_open_dir(const char *path)
{
	return (int)bee_sys(SYS_openat, AT_FDCWD, path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

#define ATTR_SAFE (MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC)

/* A new mount of type (options: key, value pairs, NULL-terminated) with
 * the mount attributes attr, not attached yet: its descriptor, or -errno.
 * With bee_mount_new (internal.h), which moves it onto a target: the new
 * mount API, not
 * mount(2): mount(2) refuses (EBUSY) a file system on a mount point that
 * is the root of a mount of the same superblock, which is what cgroup2 of
 * the session's cgroup namespace over the host's cgroup2 is; and attr
 * makes the mount read-only without asking a shared superblock to be. */
static int mount_detached(const char *type, const char *const *opts, unsigned attr)
{
	int err = 0, mfd = -1;
	int fsfd = (int)bee_sys(SYS_fsopen, type, FSOPEN_CLOEXEC);
	if (fsfd < 0)
		return fsfd;
	for (; !err && opts && *opts; opts += 2)
		err = (int)bee_sys(SYS_fsconfig, fsfd, FSCONFIG_SET_STRING, opts[0], opts[1], 0);
	if (!err)
		err = (int)bee_sys(SYS_fsconfig, fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0);
	if (!err && (mfd = (int)bee_sys(SYS_fsmount, fsfd, FSMOUNT_CLOEXEC, attr)) < 0)
		err = mfd;
	bee_sys_close(fsfd);
	return err < 0 ? err : mfd;
}

int bee_mount_new(const char *type, const char *target, const char *const *opts, unsigned attr)
{
	int mfd = mount_detached(type, opts, attr);
	if (mfd < 0)
		return mfd;
	int err = sys_move_mount(mfd, target);
	bee_sys_close(mfd);
	return err < 0 ? err : 0;
}

/* Step 2: one empty read-only tmpfs of mode 0, its mount moved onto the
 * first cover and a clone of it (attached now, so open_tree may clone it)
 * onto each other, longest path first. */
static int covers_mount(const struct path_list *covers)
{
	static const char *const empty[] = { "mode", "000", "size", "4k", "nr_inodes", "1", NULL };
	if (!covers->n)
		return 0;
	int mfd = mount_detached("tmpfs", empty, ATTR_SAFE | MOUNT_ATTR_RDONLY), err = 0;
	if (mfd < 0)
		return mfd;
	for (size_t i = 0; !err && i < covers->n; i++) {
		int fd = i ? (int)bee_sys(SYS_open_tree, mfd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH)
			   : mfd;
		err = fd < 0 ? fd : sys_move_mount(fd, covers->v[i]);
		if (fd != mfd)
			bee_sys_close(fd);
	}
	bee_sys_close(mfd);
	return err < 0 ? err : 0;
}

/* Before the covers: the real DIRs and STATE/vfs/ID opened, the latter
 * cloned while it is writable. The descriptors stay init's (O_CLOEXEC). */
static int overlays_open(const struct bee_mountns *ns, int *tfd, int *vfd, int *lfd, const char **what)
{
	if (!ns->nov)
		return 0;
	*tfd = sys_open_dir(ns->vfs_root);
	*vfd = sys_open_tree(ns->vfs_root, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_SYMLINK_NOFOLLOW);
	if (*tfd < 0 || *vfd < 0) {
		*what = "open_tree the session's overlay layers";
		return *tfd < 0 ? *tfd : *vfd;
	}
	for (size_t i = 0; i < ns->nov; i++) {
		if ((lfd[i] = sys_open_dir(ns->ov[i].dir)) < 0) {
			*what = "open an overlay's directory";
			return lfd[i];
		}
	}
	return 0;
}

/* After the read-only pass: the layers' clone moved back (hidden under
 * the state directory's cover, but a mount of this namespace, which
 * overlayfs wants of its layers), then each overlay mounted over its DIR. */
static int overlays_mount(const struct bee_mountns *ns, int tfd, int vfd, const int *lfd, const char **what)
{
	char lower[48], upper[96], work[96];
	if (!ns->nov)
		return 0;
	int err = (int)bee_sys(SYS_move_mount, vfd, "", tfd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
	if (err < 0) {
		*what = "move_mount the session's overlay layers";
		return err;
	}
	for (size_t i = 0; i < ns->nov; i++) {
		fd_path(lower, sizeof(lower), lfd[i], NULL);
		fd_path(upper, sizeof(upper), vfd, ns->ov[i].upper);
		fd_path(work, sizeof(work), vfd, ns->ov[i].work);
		err = bee_vfs_overlay_mount(lower, upper, work, !ns->ov[i].rw, ns->ov[i].dir);
		if (err) {
			*what = "mount an overlay";
			return err;
		}
	}
	return 0;
}

int bee_mountns_enter(const struct bee_mountns *ns, const char **what)
{
	int fds[MOUNTNS_WRITES_MAX];
	int tfd = -1, vfd = -1, lfd[BEE_VFS_MAX];
	size_t nfds = 0;
	int err = (int)bee_sys(SYS_mount, NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL);
	if (err < 0) {
		*what = "mount / private";
		return err;
	}
	if ((err = overlays_open(ns, &tfd, &vfd, lfd, what)) < 0)
		return err;
	if ((err = covers_mount(&ns->covers)) < 0) {
		*what = "mount an empty tmpfs over bpffs or the state directory";
		return err;
	}
	for (size_t i = 0; i < ns->cgroup2.n; i++) {
		if ((err = bee_mount_new("cgroup2", ns->cgroup2.v[i], NULL, ATTR_SAFE | MOUNT_ATTR_RDONLY)) < 0) {
			*what = "mount cgroup2 read-only";
			return err;
		}
	}
	for (; nfds < ns->writes.n; nfds++) {
		fds[nfds] = sys_open_tree(ns->writes.v[nfds],
					  OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_SYMLINK_NOFOLLOW);
		if (fds[nfds] < 0) {
			err = fds[nfds];
			*what = "open_tree a write grant's place";
			goto out;
		}
	}
	if (!ns->tree_rw && (err = sys_tree_rdonly("/")) < 0) {
		*what = "mount_setattr / read-only";
		goto out;
	}
	for (size_t i = 0; i < nfds; i++) {
		if ((err = sys_move_mount(fds[i], ns->writes.v[i])) < 0) {
			*what = "move_mount a write grant's place back";
			goto out;
		}
	}
	if ((err = overlays_mount(ns, tfd, vfd, lfd, what)) < 0)
		goto out;
	bee_sys_close(tfd);
	/* a working directory inherited from bee-load names the real DIR's
	 * inode (run's tool keeps it): looked up again, it is the overlay's */
	if (ns->nov) {
		char cwd[PATH_MAX];
		if (bee_sys(SYS_getcwd, cwd, sizeof(cwd)) > 0 && cwd[0] == '/' &&
		    (err = (int)bee_sys(SYS_chdir, cwd)) < 0) {
			*what = "chdir into the overlay";
			goto out;
		}
	}
	if ((err = bee_mount_new("proc", "/proc", NULL, ATTR_SAFE | (ns->proc_rw ? 0 : MOUNT_ATTR_RDONLY))) < 0)
		*what = "mount /proc";
out:
	for (size_t i = 0; i < nfds; i++)
		bee_sys_close(fds[i]);
	return err;
}

/* ---- the plan, copied into init's memory ---------------------------------------------- */

static size_t al16(size_t n)
{
	return (n + 15) & ~(size_t)15;
}

static size_t list_size(const struct path_list *l)
{
	size_t s = al16(l->n * sizeof(char *));
	for (size_t i = 0; i < l->n; i++)
		s += al16(strlen(l->v[i]) + 1);
	return s;
}

static char *bump_str(char **p, const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = memcpy(*p, s, n);
	*p += al16(n);
	return d;
}

static void list_copy(struct path_list *d, const struct path_list *s, char **p)
{
	d->v = (char **)(void *)*p;
	*p += al16(s->n * sizeof(char *));
	for (size_t i = 0; i < s->n; i++)
		d->v[i] = bump_str(p, s->v[i]);
	d->n = d->cap = s->n;
}

size_t bee_mountns_size(const struct bee_mountns *ns)
{
	size_t s = al16(sizeof(*ns)) + list_size(&ns->covers) + list_size(&ns->cgroup2) + list_size(&ns->writes);
	if (ns->vfs_root)
		s += al16(strlen(ns->vfs_root) + 1);
	for (size_t i = 0; i < ns->nov; i++)
		s += al16(strlen(ns->ov[i].dir) + 1);
	return s;
}

const struct bee_mountns *bee_mountns_copy(const struct bee_mountns *ns, void *buf)
{
	char *p = buf;
	struct bee_mountns *d = buf;
	p += al16(sizeof(*d));
	*d = *ns;
	list_copy(&d->covers, &ns->covers, &p);
	list_copy(&d->cgroup2, &ns->cgroup2, &p);
	list_copy(&d->writes, &ns->writes, &p);
	d->vfs_root = ns->vfs_root ? bump_str(&p, ns->vfs_root) : NULL;
	for (size_t i = 0; i < ns->nov; i++)
		d->ov[i].dir = bump_str(&p, ns->ov[i].dir);
	return d;
}

int bee_mountns_writable(const struct bee_mountns *ns, const char ***out, size_t *n)
{
	*out = NULL;
	*n = 0;
	if (ns->tree_rw)
		return 1;
	const char **v = calloc(ns->writes.n + ns->nov + 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	size_t k = 0;
	for (size_t i = 0; i < ns->writes.n; i++)
		v[k++] = ns->writes.v[i];
	if (ns->proc_rw)
		v[k++] = "/proc";
	for (size_t i = 0; i < ns->nov; i++)
		if (ns->ov[i].rw)
			v[k++] = ns->ov[i].dir;
	*out = v;
	*n = k;
	return 0;
}

int bee_mountns_describe(const struct bee_mountns *ns, char *buf, size_t size)
{
	size_t off = 0;
	const struct {
		const char *word;
		const struct path_list *l;
	} steps[] = { { "cover", &ns->covers }, { "cgroup2", &ns->cgroup2 }, { "write", &ns->writes } };
	*buf = '\0';
	for (size_t s = 0; s < sizeof(steps) / sizeof(steps[0]); s++) {
		for (size_t i = 0; i < steps[s].l->n; i++) {
			int n = snprintf(buf + off, size - off, "%s %s\n", steps[s].word, steps[s].l->v[i]);
			if (n < 0 || (size_t)n >= size - off)
				return -ENOSPC;
			off += (size_t)n;
		}
	}
	for (size_t i = 0; i < ns->nov; i++) {
		int k = snprintf(buf + off, size - off, "overlay %s %s\n", ns->ov[i].dir, ns->ov[i].rw ? "rw" : "ro");
		if (k < 0 || (size_t)k >= size - off)
			return -ENOSPC;
		off += (size_t)k;
	}
	int n = snprintf(buf + off, size - off, "tree %s\nproc %s\n", ns->tree_rw ? "rw" : "ro",
			 ns->proc_rw ? "rw" : "ro");
	return n < 0 || (size_t)n >= size - off ? -ENOSPC : 0;
}

void bee_mountns_free(struct bee_mountns *ns)
{
	if (!ns)
		return;
	list_fini(&ns->covers);
	list_fini(&ns->cgroup2);
	list_fini(&ns->writes);
	for (size_t i = 0; i < ns->nov; i++)
		free(ns->ov[i].dir);
	free(ns->vfs_root);
	free(ns);
}
