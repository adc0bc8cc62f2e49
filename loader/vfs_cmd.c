/* SPDX-License-Identifier: GPL-2.0-only */
/* vfs_cmd.c: the vfs commands (libbee.h's bee_vfs__*): the changes of a
 * session's overlays read from their upper layers against the real
 * directories, and what ls, diff, apply, reset, disable and gc do with
 * them. Every command holds STATE/vfs/ID/lock and leaves one audit
 * record in the session's log. */
#include "vfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

/* ---- the changes --------------------------------------------------------------------------- */

struct chg_vec {
	struct bee_vfs_change *v;
	size_t n, cap;
};

struct walk {
	struct chg_vec *out;
	unsigned ov;
	const char *dir;
	char rel[PATH_MAX];
};

static char type_of(mode_t m)
{
	return S_ISREG(m) ? 'f' : S_ISDIR(m) ? 'd' : S_ISLNK(m) ? 'l' : 'o';
}

static int chg_push(struct walk *w, const char *name, enum bee_vfs_kind kind, const struct stat *now,
		    const struct stat *was, bool content)
{
	struct chg_vec *c = w->out;
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;
		struct bee_vfs_change *v = realloc(c->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		c->v = v;
		c->cap = cap;
	}
	struct bee_vfs_change *x = &c->v[c->n];
	memset(x, 0, sizeof(*x));
	size_t dl = strlen(w->dir), rl = strlen(w->rel);
	if (!(x->path = malloc(dl + rl + strlen(name) + 3)))
		return -ENOMEM;
	sprintf(x->path, "%s/%s%s%s", w->dir, w->rel, rl ? "/" : "", name);
	x->rel = x->path + dl + 1;
	x->overlay = w->ov;
	x->kind = kind;
	x->content = content;
	const struct stat *t = now ? now : was;
	x->type = type_of(t->st_mode);
	x->size = S_ISDIR(t->st_mode) ? 0 : (uint64_t)t->st_size;
	x->mode = t->st_mode & 07777;
	if (was) {
		x->was_type = type_of(was->st_mode);
		x->was_size = S_ISDIR(was->st_mode) ? 0 : (uint64_t)was->st_size;
		x->was_mode = was->st_mode & 07777;
	}
	c->n++;
	return 0;
}

static int same_bytes(int ufd, int lfd, const char *name, const struct stat *us, const struct stat *ls)
{
	if (us->st_size != ls->st_size)
		return 0;
	if (S_ISLNK(us->st_mode)) {
		char a[PATH_MAX], b[PATH_MAX];
		ssize_t na = readlinkat(ufd, name, a, sizeof(a)), nb = readlinkat(lfd, name, b, sizeof(b));
		if (na < 0 || nb < 0)
			return -errno;
		return na == nb && memcmp(a, b, (size_t)na) == 0;
	}
	if (!S_ISREG(us->st_mode))
		return 1;
	int a = openat(ufd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), b = openat(lfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	int same = 1;
	static char ba[65536], bb[65536];
	if (a < 0 || b < 0) {
		same = -errno;
		goto out;
	}
	for (;;) {
		ssize_t na = read(a, ba, sizeof(ba)), nb = read(b, bb, sizeof(bb));
		if (na < 0 || nb < 0) {
			same = -errno;
			break;
		}
		if (na != nb || memcmp(ba, bb, (size_t)na) != 0) {
			same = 0;
			break;
		}
		if (na == 0)
			break;
	}
out:
	if (a >= 0)
		close(a);
	if (b >= 0)
		close(b);
	return same;
}

static int by_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names of a directory, sorted (malloc'ed). */
static int names_of(int dfd, char ***out, size_t *n)
{
	int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	*out = NULL;
	*n = 0;
	if (fd < 0)
		return -errno;
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	char **v = NULL;
	size_t k = 0, cap = 0;
	struct dirent *de;
	int err = 0;
	while ((de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (k == cap) {
			cap = cap ? cap * 2 : 16;
			char **nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				err = -ENOMEM;
				break;
			}
			v = nv;
		}
		if (!(v[k] = strdup(de->d_name))) {
			err = -ENOMEM;
			break;
		}
		k++;
	}
	closedir(d);
	if (k)
		qsort(v, k, sizeof(*v), by_str);
	*out = v;
	*n = k;
	return err;
}

static void names_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static bool is_whiteout(const struct stat *st)
{
	return S_ISCHR(st->st_mode) && st->st_rdev == 0;
}

static int walk_dir(struct walk *w, int ufd, int lfd, bool opaque);

static int walk_entry(struct walk *w, int ufd, int lfd, const char *name)
{
	struct stat us, ls;
	bool has_l = lfd >= 0 && fstatat(lfd, name, &ls, AT_SYMLINK_NOFOLLOW) == 0;
	if (fstatat(ufd, name, &us, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (is_whiteout(&us))
		return has_l ? chg_push(w, name, BEE_VFS_DELETED, NULL, &ls, true) : 0;
	int err = 0;
	if (!has_l) {
		err = chg_push(w, name, BEE_VFS_ADDED, &us, NULL, true);
	} else if ((us.st_mode & S_IFMT) != (ls.st_mode & S_IFMT)) {
		err = chg_push(w, name, BEE_VFS_MODIFIED, &us, &ls, true);
	} else if (!S_ISDIR(us.st_mode)) {
		int same = same_bytes(ufd, lfd, name, &us, &ls);
		if (same < 0)
			return same;
		bool meta = (us.st_mode & 07777) != (ls.st_mode & 07777) || us.st_uid != ls.st_uid ||
			    us.st_gid != ls.st_gid;
		if (!same || (meta && !S_ISLNK(us.st_mode)))
			err = chg_push(w, name, BEE_VFS_MODIFIED, &us, &ls, !same);
	} else if ((us.st_mode & 07777) != (ls.st_mode & 07777) || us.st_uid != ls.st_uid || us.st_gid != ls.st_gid) {
		err = chg_push(w, name, BEE_VFS_MODIFIED, &us, &ls, false);
	}
	if (err || !S_ISDIR(us.st_mode))
		return err;
	/* below a directory of the upper layer */
	int u2 = openat(ufd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (u2 < 0)
		return -errno;
	int l2 = has_l && S_ISDIR(ls.st_mode) ? openat(lfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
	char x[4] = "";
	bool op = fgetxattr(u2, "trusted.overlay.opaque", x, sizeof(x)) == 1 && x[0] == 'y';
	size_t rl = strlen(w->rel);
	if (rl + strlen(name) + 2 >= sizeof(w->rel)) {
		err = -ENAMETOOLONG;
	} else {
		sprintf(w->rel + rl, "%s%s", rl ? "/" : "", name);
		err = walk_dir(w, u2, l2, op);
		w->rel[rl] = '\0';
	}
	close(u2);
	if (l2 >= 0)
		close(l2);
	return err;
}

static int walk_dir(struct walk *w, int ufd, int lfd, bool opaque)
{
	char **un, **ln = NULL;
	size_t nu, nl = 0;
	int err = names_of(ufd, &un, &nu);
	if (!err && opaque && lfd >= 0)
		err = names_of(lfd, &ln, &nl);
	/* merged in name order: the upper's entries, and an opaque
	 * directory's real entries that the upper does not have (deleted) */
	size_t i = 0, k = 0;
	while (!err && (i < nu || k < nl)) {
		int c = i < nu && k < nl ? strcmp(un[i], ln[k]) : i < nu ? -1 : 1;
		if (c <= 0) {
			err = walk_entry(w, ufd, lfd, un[i]);
			i++;
			k += c == 0;
		} else {
			struct stat ls;
			if (fstatat(lfd, ln[k], &ls, AT_SYMLINK_NOFOLLOW) == 0)
				err = chg_push(w, ln[k], BEE_VFS_DELETED, NULL, &ls, true);
			k++;
		}
	}
	names_free(un, nu);
	names_free(ln, nl);
	return err;
}

static int chg_cmp(const void *a, const void *b)
{
	const struct bee_vfs_change *x = a, *y = b;
	return strcmp(x->path, y->path);
}

void bee_vfs__changes_free(struct bee_vfs_change *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i].path);
	free(v);
}

int bee_vfs_changes(const char *state_dir, const struct bee_vfs_record *r, struct bee_vfs_change **out, size_t *n)
{
	struct chg_vec c = { 0 };
	int err = 0;
	*out = NULL;
	*n = 0;
	for (size_t i = 0; !err && i < r->n; i++) {
		char up[PATH_MAX];
		bee_vfs_layer(up, sizeof(up), state_dir, r->sid, i, "upper", r->ov[i].gen);
		int ufd = open(up, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (ufd < 0) {
			err = -errno;
			break;
		}
		int lfd = open(r->ov[i].dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		struct walk w = { .out = &c, .ov = (unsigned)i, .dir = r->ov[i].dir };
		err = walk_dir(&w, ufd, lfd, false);
		close(ufd);
		if (lfd >= 0)
			close(lfd);
	}
	if (err) {
		bee_vfs__changes_free(c.v, c.n);
		return err;
	}
	if (c.n)
		qsort(c.v, c.n, sizeof(*c.v), chg_cmp);
	*out = c.v;
	*n = c.n;
	return 0;
}

/* ---- a command's frame: the record, locked ----------------------------------------------- */

struct vfs_cmd {
	const char *verb;
	const char *state_dir;
	struct bee_vfs_opts o;
	struct bee_vfs_record r;
	int lock;
	bool live;
};

static int cmd_begin(struct vfs_cmd *c, const char *verb, const char *sid, const struct bee_vfs_opts *opts,
		     struct bee_error *e)
{
	memset(c, 0, sizeof(*c));
	c->lock = -1;
	c->verb = verb;
	if (bee_opts_copy(&c->o, sizeof(c->o), opts) < 0)
		return bee_fail(e, BEE_STAGE_USAGE, -EINVAL, "bee_vfs_opts: unknown fields set");
	c->state_dir = bee_state_dir(c->o.state_dir);
	if (!sid || !*sid || strchr(sid, '/') || strchr(sid, '.') || strlen(sid) >= 32)
		return bee_fail(e, BEE_STAGE_USAGE, -EINVAL, "%s: '%s' is not a session id", verb, sid ? sid : "");
	char lk[PATH_MAX];
	snprintf(lk, sizeof(lk), "%s/vfs/%s/lock", c->state_dir, sid);
	c->lock = open(lk, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (c->lock < 0) {
		int err = -errno;
		if (err == -ENOENT)
			return bee_fail(e, BEE_STAGE_SESSION, err, "%s: session %s has no overlay in '%s'", verb, sid,
					c->state_dir);
		return bee_fail(e, BEE_STAGE_VFS, err, "%s: '%s': %s", verb, lk, strerror(-err));
	}
	flock(c->lock, LOCK_EX);
	int err = bee_vfs_record_read(c->state_dir, sid, &c->r);
	if (err)
		return bee_fail(e, err == -ENOENT ? BEE_STAGE_SESSION : BEE_STAGE_VFS, err,
				"%s: session %s: its record '%s/vfs/%s/vfs.json': %s", verb, sid, c->state_dir, sid,
				err == -EINVAL ? "malformed" : strerror(-err));
	c->live = bee_vfs_record_live(&c->r);
	return 0;
}

static void cmd_end(struct vfs_cmd *c)
{
	bee_vfs_record_fini(&c->r);
	if (c->lock >= 0)
		close(c->lock);
}

/* A failure recorded (decision Deny) and returned. */
static int cmd_fail(struct vfs_cmd *c, struct bee_error *e, enum bee_stage st, int err, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static int cmd_fail(struct vfs_cmd *c, struct bee_error *e, enum bee_stage st, int err, const char *fmt, ...)
{
	char msg[BEE_ERRLEN];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (c->r.n)
		bee_vfs_audit(&c->r, c->verb, false, msg, c->o.warn, c->o.warn_ctx);
	return bee_fail(e, st, err, "%s: %s", c->verb, msg);
}

/* The changes that opts->paths select (all without paths); each path must
 * select one. */
static int cmd_changes(struct vfs_cmd *c, struct bee_vfs_change **out, size_t *n, struct bee_error *e)
{
	struct bee_vfs_change *v;
	size_t nv;
	int err = bee_vfs_changes(c->state_dir, &c->r, &v, &nv);
	if (err)
		return cmd_fail(c, e, BEE_STAGE_VFS, err, "session %s: its upper layers: %s", c->r.sid, strerror(-err));
	if (!c->o.npaths) {
		*out = v;
		*n = nv;
		return 0;
	}
	bool *keep = calloc(nv + 1, sizeof(*keep));
	if (!keep) {
		bee_vfs__changes_free(v, nv);
		return cmd_fail(c, e, BEE_STAGE_VFS, -ENOMEM, "out of memory");
	}
	for (size_t p = 0; p < c->o.npaths; p++) {
		char want[PATH_MAX];
		snprintf(want, sizeof(want), "%s", c->o.paths[p]);
		for (size_t l = strlen(want); l > 1 && want[l - 1] == '/'; l--)
			want[l - 1] = '\0';
		bool any = false;
		for (size_t i = 0; i < nv; i++)
			if (bee_vfs_path_under(v[i].path, want))
				keep[i] = any = true;
		if (!any) {
			free(keep);
			bee_vfs__changes_free(v, nv);
			return cmd_fail(c, e, BEE_STAGE_USAGE, -ENOENT, "'%s' names no change of session %s", want,
					c->r.sid);
		}
	}
	/* an added directory that a kept change lies in comes along */
	for (size_t i = 0; i < nv; i++)
		for (size_t k = 0; keep[i] && k < nv; k++)
			if (!keep[k] && v[k].kind == BEE_VFS_ADDED && v[k].type == 'd' && k != i &&
			    bee_vfs_path_under(v[i].path, v[k].path))
				keep[k] = true;
	size_t m = 0;
	for (size_t i = 0; i < nv; i++) {
		if (keep[i])
			v[m++] = v[i];
		else
			free(v[i].path);
	}
	free(keep);
	*out = v;
	*n = m;
	return 0;
}

/* ---- ls, diff, snapshot ---------------------------------------------------------------------- */

int bee_vfs__list(const char *sid, const struct bee_vfs_opts *opts, struct bee_vfs_change **out, size_t *n,
		  struct bee_error *e)
{
	struct vfs_cmd c;
	*out = NULL;
	*n = 0;
	int err = cmd_begin(&c, "ls", sid, opts, e);
	if (!err)
		err = cmd_changes(&c, out, n, e);
	if (!err) {
		char why[64];
		snprintf(why, sizeof(why), "%zu change%s", *n, *n == 1 ? "" : "s");
		bee_vfs_audit(&c.r, c.verb, true, why, c.o.warn, c.o.warn_ctx);
	}
	cmd_end(&c);
	return err;
}

static int dprint(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int dprint(int fd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vdprintf(fd, fmt, ap);
	va_end(ap);
	return n < 0 ? -EIO : 0;
}

/* diff -u of two descriptors (-1: /dev/null) under labels, to out */
static int run_diff(int out, int a, int b, const char *la, const char *lb)
{
	pid_t c = fork();
	if (c < 0)
		return -errno;
	if (c == 0) {
		int na = a >= 0 ? a : open("/dev/null", O_RDONLY), nb = b >= 0 ? b : open("/dev/null", O_RDONLY);
		if (dup2(out, 1) < 0 || dup2(na, 3) < 0 || dup2(nb, 4) < 0)
			_exit(2);
		char *argv[] = { "diff", "-u", "--label", (char *)la, "--label", (char *)lb, "/dev/fd/3", "/dev/fd/4",
				 NULL };
		execv("/usr/bin/diff", argv);
		_exit(2);
	}
	int st;
	while (waitpid(c, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(st) && WEXITSTATUS(st) < 2 ? 0 : -EIO;
}

static int open_in(const char *root, const char *rel)
{
	int d = open(root, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (d < 0)
		return -errno;
	struct open_how how = { .flags = O_RDONLY | O_NOFOLLOW | O_CLOEXEC,
				.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
	int fd = (int)syscall(SYS_openat2, d, rel, &how, sizeof(how));
	int err = errno;
	close(d);
	return fd < 0 ? -err : fd;
}

static const char *type_word(char t)
{
	return t == 'f' ? "file" : t == 'd' ? "directory" : t == 'l' ? "symlink" : "special file";
}

static int diff_one(const struct vfs_cmd *c, const struct bee_vfs_change *x, int out)
{
	char up[PATH_MAX], la[PATH_MAX + 2], lb[PATH_MAX + 2];
	bee_vfs_layer(up, sizeof(up), c->state_dir, c->r.sid, x->overlay, "upper", c->r.ov[x->overlay].gen);
	snprintf(la, sizeof(la), "a%s", x->path);
	snprintf(lb, sizeof(lb), "b%s", x->path);
	const char *dir = c->r.ov[x->overlay].dir;
	bool old_f = x->kind != BEE_VFS_ADDED && (x->kind == BEE_VFS_DELETED ? x->type : x->was_type) == 'f';
	bool new_f = x->kind != BEE_VFS_DELETED && x->type == 'f';
	int err = 0;
	switch (x->kind) {
	case BEE_VFS_ADDED:
		if (!new_f)
			return x->type == 'l' ? dprint(out, "added symlink %s\n", x->path)
					      : dprint(out, "added %s %s (mode %04o)\n", type_word(x->type), x->path, x->mode);
		err = dprint(out, "added file %s (mode %04o)\n", x->path, x->mode);
		break;
	case BEE_VFS_DELETED:
		if (!old_f)
			return dprint(out, "deleted %s %s\n", type_word(x->type), x->path);
		err = dprint(out, "deleted file %s\n", x->path);
		break;
	case BEE_VFS_MODIFIED:
		if (x->type != x->was_type)
			err = dprint(out, "%s: %s -> %s\n", x->path, type_word(x->was_type), type_word(x->type));
		else if (x->mode != x->was_mode)
			err = dprint(out, "mode %s %04o -> %04o\n", x->path, x->was_mode, x->mode);
		if (!err && x->type == x->was_type && x->type == 'l' && x->content)
			err = dprint(out, "symlink %s changed\n", x->path);
		if (err || !x->content || (!old_f && !new_f))
			return err;
		break;
	}
	if (err)
		return err;
	int a = old_f ? open_in(dir, x->rel) : -1, b = new_f ? open_in(up, x->rel) : -1;
	if ((old_f && a < 0) || (new_f && b < 0)) {
		err = a < 0 && old_f ? a : b;
		goto out;
	}
	err = run_diff(out, a, b, old_f ? la : "/dev/null", new_f ? lb : "/dev/null");
out:
	if (a >= 0)
		close(a);
	if (b >= 0)
		close(b);
	return err;
}

int bee_vfs__diff(const char *sid, const struct bee_vfs_opts *opts, struct bee_error *e)
{
	struct vfs_cmd c;
	struct bee_vfs_change *v = NULL;
	size_t n = 0;
	int err = cmd_begin(&c, "diff", sid, opts, e);
	if (!err)
		err = cmd_changes(&c, &v, &n, e);
	int out = c.o.out_fd > 0 ? c.o.out_fd : 1;
	for (size_t i = 0; !err && i < n; i++)
		if ((err = diff_one(&c, &v[i], out)) < 0)
			err = cmd_fail(&c, e, BEE_STAGE_VFS, err, "'%s': %s", v[i].path, strerror(-err));
	if (!err) {
		char why[64];
		snprintf(why, sizeof(why), "%zu change%s", n, n == 1 ? "" : "s");
		bee_vfs_audit(&c.r, c.verb, true, why, c.o.warn, c.o.warn_ctx);
	}
	bee_vfs__changes_free(v, n);
	cmd_end(&c);
	return err;
}

int bee_vfs__snapshot(const char *sid, const char *tar_path, const struct bee_vfs_opts *opts, struct bee_error *e)
{
	struct vfs_cmd c;
	struct bee_vfs_change *v = NULL;
	size_t n = 0;
	char why[512] = "";
	int err = cmd_begin(&c, "snapshot", sid, opts, e);
	if (!err)
		err = cmd_changes(&c, &v, &n, e);
	if (!err && (err = bee_vfs_tar_write(c.state_dir, &c.r, v, n, tar_path, why, sizeof(why))) < 0)
		err = cmd_fail(&c, e, BEE_STAGE_VFS, err, "'%s': %s", tar_path, why[0] ? why : strerror(-err));
	if (!err) {
		snprintf(why, sizeof(why), "%zu change%s to '%s'", n, n == 1 ? "" : "s", tar_path);
		bee_vfs_audit(&c.r, c.verb, true, why, c.o.warn, c.o.warn_ctx);
	}
	bee_vfs__changes_free(v, n);
	cmd_end(&c);
	return err;
}

/* ---- reset, disable ----------------------------------------------------------------------- */

/* Every overlay of c's session without its changes: a live one's new
 * generation mounted over the old in the session (its tools' next lookup
 * sees the real tree), then the old layers removed. */
static int reset_all(struct vfs_cmd *c, struct bee_error *e)
{
	for (size_t i = 0; i < c->r.n; i++) {
		struct bee_vfs_ov *ov = &c->r.ov[i];
		unsigned gen = ov->gen + 1;
		int err = bee_vfs_layer_make(c->state_dir, c->r.sid, i, ov->dir, gen);
		if (err)
			return cmd_fail(c, e, BEE_STAGE_VFS, err, "overlay '%s': a new upper layer: %s", ov->dir,
					strerror(-err));
		if (c->live && ov->mounted && (err = bee_vfs_live_mount(c->state_dir, &c->r, i, gen)) < 0) {
			char p[PATH_MAX];
			bee_vfs_layer(p, sizeof(p), c->state_dir, c->r.sid, i, "upper", gen);
			bee_vfs_rm(p);
			bee_vfs_layer(p, sizeof(p), c->state_dir, c->r.sid, i, "work", gen);
			bee_vfs_rm(p);
			return cmd_fail(c, e, BEE_STAGE_VFS, err,
					"overlay '%s': cannot mount a fresh one in session %s (init pid %d): %s", ov->dir,
					c->r.sid, (int)c->r.init_pid, strerror(-err));
		}
		if (c->live && ov->mounted)
			ov->mounted++;
		char p[PATH_MAX];
		bee_vfs_layer(p, sizeof(p), c->state_dir, c->r.sid, i, "upper", ov->gen);
		bee_vfs_rm(p);
		bee_vfs_layer(p, sizeof(p), c->state_dir, c->r.sid, i, "work", ov->gen);
		bee_vfs_rm(p);
		ov->gen = gen;
	}
	c->r.touched_s = time(NULL);
	int err = bee_vfs_record_write(c->state_dir, &c->r);
	return err ? cmd_fail(c, e, BEE_STAGE_VFS, err, "its record: %s", strerror(-err)) : 0;
}

int bee_vfs__reset(const char *sid, const struct bee_vfs_opts *opts, struct bee_error *e)
{
	struct vfs_cmd c;
	int err = cmd_begin(&c, "reset", sid, opts, e);
	if (err)
		goto out;
	if (!c.live) {
		/* nothing runs that sees it: the session's overlays go */
		bee_vfs_audit(&c.r, c.verb, true, "the session ended: its overlays removed", c.o.warn, c.o.warn_ctx);
		if ((err = bee_vfs_remove(c.state_dir, sid, &c.r)) < 0)
			err = bee_fail(e, BEE_STAGE_VFS, err, "vfs reset: '%s/vfs/%s': %s", c.state_dir, sid,
				       strerror(-err));
		goto out;
	}
	if (!(err = reset_all(&c, e)))
		bee_vfs_audit(&c.r, c.verb, true, "changes dropped", c.o.warn, c.o.warn_ctx);
out:
	cmd_end(&c);
	return err;
}

int bee_vfs__disable(const char *sid, const struct bee_vfs_opts *opts, struct bee_error *e)
{
	struct vfs_cmd c;
	int err = cmd_begin(&c, "disable", sid, opts, e);
	if (err)
		goto out;
	if (!c.live) {
		err = cmd_fail(&c, e, BEE_STAGE_SESSION, -ESRCH, "session %s is not live: nothing to disable", sid);
		goto out;
	}
	for (size_t i = 0; i < c.r.n; i++) {
		if ((err = bee_vfs_live_unmount(&c.r, i)) < 0) {
			err = cmd_fail(&c, e, BEE_STAGE_VFS, err, "overlay '%s' in session %s: %s", c.r.ov[i].dir, sid,
				       strerror(-err));
			goto out;
		}
		c.r.ov[i].mounted = 0;
	}
	c.r.touched_s = time(NULL);
	if ((err = bee_vfs_record_write(c.state_dir, &c.r)) < 0)
		err = cmd_fail(&c, e, BEE_STAGE_VFS, err, "its record: %s", strerror(-err));
	else
		bee_vfs_audit(&c.r, c.verb, true, "later writes go to the real directories", c.o.warn, c.o.warn_ctx);
out:
	cmd_end(&c);
	return err;
}

/* ---- apply ---------------------------------------------------------------------------------- */

/* The directory rel's entry lies in, below dir, without symlinks or
 * other mounts on the way (O_PATH); -errno. */
static int parent_at(int dirfd, const char *rel, const char **base)
{
	char p[PATH_MAX];
	const char *slash = strrchr(rel, '/');
	*base = slash ? slash + 1 : rel;
	if (!slash) {
		int fd = openat(dirfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
		return fd < 0 ? -errno : fd;
	}
	snprintf(p, sizeof(p), "%.*s", (int)(slash - rel), rel);
	struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
				.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
					   RESOLVE_NO_XDEV };
	int fd = (int)syscall(SYS_openat2, dirfd, p, &how, sizeof(how));
	return fd < 0 ? -errno : fd;
}

/* The last directory parent_at opened, kept: changes come in path order,
 * so most lie in the directory of the one before. */
struct pcache {
	int dirfd;
	int fd;
	char rel[PATH_MAX];
};

static int parent_cached(struct pcache *pc, int dirfd, const char *rel, const char **base)
{
	const char *slash = strrchr(rel, '/');
	size_t n = slash ? (size_t)(slash - rel) : 0;
	*base = slash ? slash + 1 : rel;
	if (pc->fd >= 0 && pc->dirfd == dirfd && strlen(pc->rel) == n && strncmp(pc->rel, rel, n) == 0)
		return pc->fd;
	if (pc->fd >= 0)
		close(pc->fd);
	pc->fd = -1;
	int fd = parent_at(dirfd, rel, base);
	if (fd < 0 || n >= sizeof(pc->rel))
		return fd;
	pc->fd = fd;
	pc->dirfd = dirfd;
	memcpy(pc->rel, rel, n);
	pc->rel[n] = '\0';
	return fd;
}

static void pcache_drop(struct pcache *pc)
{
	if (pc->fd >= 0)
		close(pc->fd);
	pc->fd = -1;
}

static bool after(const struct stat *st, int64_t ref)
{
	return (int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec >= ref;
}

/* Why change x cannot be applied onto the real tree as it is now ("" when
 * it can): what it replaces and the directory it lies in must be as they
 * were (not changed since ref), an added path must still be missing. */
static int conflict(struct pcache *pc, const struct bee_vfs_change *x, const struct bee_vfs_change *v, size_t n,
		    int dirfd, int64_t ref, char *why, size_t size)
{
	const char *base;
	*why = '\0';
	int pfd = parent_cached(pc, dirfd, x->rel, &base);
	if (pfd < 0) {
		/* its directory is missing: fine when the apply adds it */
		for (size_t i = 0; i < n; i++)
			if (v[i].kind == BEE_VFS_ADDED && v[i].type == 'd' && strncmp(x->path, v[i].path, strlen(v[i].path)) == 0 &&
			    x->path[strlen(v[i].path)] == '/' && strchr(x->path + strlen(v[i].path) + 1, '/') == NULL)
				return 0;
		snprintf(why, size, "its directory cannot be reached in the real tree (%s)", strerror(-pfd));
		return 0;
	}
	struct stat ps, st;
	if (fstat(pfd, &ps) == 0 && after(&ps, ref))
		snprintf(why, size, "its directory changed since the session started or was last applied");
	bool has = fstatat(pfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0;
	if (!*why) {
		if (x->kind == BEE_VFS_ADDED && has)
			snprintf(why, size, "it now exists in the real tree");
		else if (x->kind != BEE_VFS_ADDED && !has)
			snprintf(why, size, "it no longer exists in the real tree");
		else if (has && after(&st, ref))
			snprintf(why, size, "it changed since the session started or was last applied");
		else if (has && x->kind != BEE_VFS_ADDED &&
			 type_of(st.st_mode) != (x->kind == BEE_VFS_DELETED ? x->type : x->was_type))
			snprintf(why, size, "its type changed in the real tree");
	}
	if (!*why && x->kind != BEE_VFS_DELETED && x->type == 'o')
		snprintf(why, size, "it is not a regular file, directory or symbolic link: bee applies none");
	return 0;
}

static int copy_file(int ufd, int dst)
{
	static char buf[1 << 16];
	for (;;) {
		ssize_t r = read(ufd, buf, sizeof(buf));
		if (r < 0)
			return -errno;
		if (r == 0)
			return 0;
		for (ssize_t off = 0; off < r;) {
			ssize_t w = write(dst, buf + off, (size_t)(r - off));
			if (w < 0)
				return -errno;
			off += w;
		}
	}
}

/* One file or symlink of the upper layer written over its place: a new
 * name beside it, owner, mode and time as in the upper, then renamed; a
 * name that did not exist (added) is made in place, O_EXCL. */
static int put_entry(int pfd, const char *base, int updir, const char *rel, const struct stat *us, bool added)
{
	char tmp[NAME_MAX + 1];
	static unsigned seq;
	if (added)
		snprintf(tmp, sizeof(tmp), "%s", base);
	else
		snprintf(tmp, sizeof(tmp), ".bee-apply-%d-%u", (int)getpid(), seq++);
	int err = 0;
	if (S_ISLNK(us->st_mode)) {
		char target[PATH_MAX];
		ssize_t n = readlinkat(updir, rel, target, sizeof(target) - 1);
		if (n < 0)
			return -errno;
		target[n] = '\0';
		if (symlinkat(target, pfd, tmp) < 0)
			return -errno;
		if (fchownat(pfd, tmp, us->st_uid, us->st_gid, AT_SYMLINK_NOFOLLOW) < 0)
			err = -errno;
	} else {
		struct open_how how = { .flags = O_RDONLY | O_NOFOLLOW | O_CLOEXEC,
					.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
		int src = (int)syscall(SYS_openat2, updir, rel, &how, sizeof(how));
		if (src < 0)
			return -errno;
		int dst = openat(pfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (dst < 0) {
			err = -errno;
			close(src);
			return err;
		}
		struct timespec ts[2] = { us->st_atim, us->st_mtim };
		err = copy_file(src, dst);
		if (!err && (fchown(dst, us->st_uid, us->st_gid) < 0 || fchmod(dst, us->st_mode & 07777) < 0 ||
			     futimens(dst, ts) < 0))
			err = -errno;
		close(src);
		if (close(dst) < 0 && !err)
			err = -errno;
	}
	if (!err && !added && renameat(pfd, tmp, pfd, base) < 0)
		err = -errno;
	if (err)
		unlinkat(pfd, tmp, 0);
	return err;
}

static int apply_one(struct pcache *pc, const struct bee_vfs_change *x, int phase, int dirfd, int updir)
{
	const char *base;
	struct stat us;
	/* phase 0: what goes away (deletions, a type that changes); 1: new
	 * directories; 2: files and symlinks; 3: a directory's mode and owner */
	bool now_dir = x->kind != BEE_VFS_DELETED && x->type == 'd';
	bool retype = x->kind == BEE_VFS_MODIFIED && x->type != x->was_type;
	bool work = phase == 0 ? x->kind == BEE_VFS_DELETED || retype
		  : phase == 1 ? now_dir && (x->kind == BEE_VFS_ADDED || retype)
		  : phase == 2 ? x->kind != BEE_VFS_DELETED && !now_dir
		  : now_dir && x->kind == BEE_VFS_MODIFIED && !retype;
	if (!work)
		return 0;
	/* a phase that removes or makes directories may change what a
	 * kept descriptor's path names: those open their own */
	if (phase != 2)
		pcache_drop(pc);
	int pfd = parent_cached(pc, dirfd, x->rel, &base), err = 0;
	if (pfd < 0)
		return pfd;
	if (x->kind != BEE_VFS_DELETED && fstatat(updir, x->rel, &us, AT_SYMLINK_NOFOLLOW) < 0) {
		err = -errno;
		goto out;
	}
	switch (phase) {
	case 0:
		if (x->kind == BEE_VFS_DELETED || retype)
			err = bee_vfs_rm_at(pfd, base);
		break;
	case 1:
		if (now_dir && (x->kind == BEE_VFS_ADDED || retype)) {
			if (mkdirat(pfd, base, 0700) < 0)
				err = -errno;
			else if (fchownat(pfd, base, us.st_uid, us.st_gid, AT_SYMLINK_NOFOLLOW) < 0 ||
				 fchmodat(pfd, base, us.st_mode & 07777, 0) < 0)
				err = -errno;
		}
		break;
	case 2:
		if (x->kind == BEE_VFS_DELETED || now_dir)
			break;
		if (x->kind == BEE_VFS_MODIFIED && !x->content && !retype) {
			/* the same bytes: owner and mode only */
			if (fchownat(pfd, base, us.st_uid, us.st_gid, AT_SYMLINK_NOFOLLOW) < 0 ||
			    (!S_ISLNK(us.st_mode) && fchmodat(pfd, base, us.st_mode & 07777, 0) < 0))
				err = -errno;
			break;
		}
		err = put_entry(pfd, base, updir, x->rel, &us, x->kind == BEE_VFS_ADDED);
		break;
	case 3:
		if (now_dir && x->kind == BEE_VFS_MODIFIED && !retype &&
		    (fchownat(pfd, base, us.st_uid, us.st_gid, AT_SYMLINK_NOFOLLOW) < 0 ||
		     fchmodat(pfd, base, us.st_mode & 07777, 0) < 0))
			err = -errno;
		break;
	}
out:
	if (phase != 2)
		pcache_drop(pc);
	return err;
}

int bee_vfs__apply(const char *sid, const struct bee_vfs_opts *opts, struct bee_error *e)
{
	struct vfs_cmd c;
	struct bee_vfs_change *v = NULL;
	size_t n = 0;
	int dirfd[BEE_VFS_MAX], updir[BEE_VFS_MAX];
	for (size_t i = 0; i < BEE_VFS_MAX; i++)
		dirfd[i] = updir[i] = -1;
	int err = cmd_begin(&c, "apply", sid, opts, e);
	if (!err)
		err = cmd_changes(&c, &v, &n, e);
	if (err)
		goto out;
	for (size_t i = 0; i < c.r.n; i++) {
		char up[PATH_MAX];
		bee_vfs_layer(up, sizeof(up), c.state_dir, sid, i, "upper", c.r.ov[i].gen);
		dirfd[i] = open(c.r.ov[i].dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		updir[i] = open(up, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (dirfd[i] < 0 || updir[i] < 0) {
			err = cmd_fail(&c, e, BEE_STAGE_VFS, -errno, "overlay '%s': %s", c.r.ov[i].dir, strerror(errno));
			goto out;
		}
	}
	/* every change checked before the first is written: all or nothing */
	struct pcache pc = { .fd = -1 };
	for (size_t i = 0; i < n; i++) {
		char why[256];
		conflict(&pc, &v[i], v, n, dirfd[v[i].overlay], c.r.ref_ns, why, sizeof(why));
		if (*why) {
			pcache_drop(&pc);
			err = cmd_fail(&c, e, BEE_STAGE_VFS, -ESTALE,
				       "'%s' changed underneath: %s; refusing, nothing applied", v[i].path, why);
			goto out;
		}
	}
	pcache_drop(&pc);
	for (int phase = 0; phase < 4; phase++) {
		/* removals and a directory's own mode deepest first */
		bool rev = phase == 0 || phase == 3;
		for (size_t k = 0; k < n; k++) {
			const struct bee_vfs_change *x = &v[rev ? n - 1 - k : k];
			if ((err = apply_one(&pc, x, phase, dirfd[x->overlay], updir[x->overlay])) < 0) {
				pcache_drop(&pc);
				err = cmd_fail(&c, e, BEE_STAGE_VFS, err, "'%s': %s (the changes before it are applied)",
					       x->path, strerror(-err));
				goto out;
			}
		}
	}
	pcache_drop(&pc);
	/* no syncfs: it would flush every file system's dirty pages of the
	 * machine's other writers too (seconds on a busy host); the files are
	 * written as cp writes them */
	/* the real tree now holds what was applied: the reference moves on */
	c.r.ref_ns = bee_vfs_coarse_ns();
	c.r.touched_s = time(NULL);
	if (!c.o.npaths && c.live) {
		/* the session sees the same tree over a fresh upper layer */
		if ((err = reset_all(&c, e)) < 0)
			goto out;
	} else if (!c.o.npaths) {
		for (size_t i = 0; i < c.r.n; i++) {
			char up[PATH_MAX];
			bee_vfs_layer(up, sizeof(up), c.state_dir, sid, i, "upper", c.r.ov[i].gen);
			int d = open(up, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			char **names;
			size_t nn;
			if (d >= 0 && names_of(d, &names, &nn) == 0) {
				for (size_t k = 0; k < nn; k++)
					bee_vfs_rm_at(d, names[k]);
				names_free(names, nn);
			}
			if (d >= 0)
				close(d);
		}
		err = bee_vfs_record_write(c.state_dir, &c.r);
	} else {
		err = bee_vfs_record_write(c.state_dir, &c.r);
	}
	if (err < 0) {
		err = cmd_fail(&c, e, BEE_STAGE_VFS, err, "its record: %s", strerror(-err));
		goto out;
	}
	char why[64];
	snprintf(why, sizeof(why), "%zu change%s applied", n, n == 1 ? "" : "s");
	bee_vfs_audit(&c.r, c.verb, true, why, c.o.warn, c.o.warn_ctx);
	err = (int)n;
out:
	for (size_t i = 0; i < BEE_VFS_MAX; i++) {
		if (dirfd[i] >= 0)
			close(dirfd[i]);
		if (updir[i] >= 0)
			close(updir[i]);
	}
	bee_vfs__changes_free(v, n);
	cmd_end(&c);
	return err;
}

/* ---- gc ----------------------------------------------------------------------------------- */

int bee_vfs__gc(const char *state_dir, unsigned long long max_age_s, bee_warn_fn warn, void *warn_ctx,
		struct bee_error *e)
{
	const char *sd = bee_state_dir(state_dir);
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/vfs", sd);
	int d = open(p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (d < 0)
		return errno == ENOENT ? 0 : bee_fail(e, BEE_STAGE_VFS, -errno, "'%s': %s", p, strerror(errno));
	char **ids;
	size_t n;
	int err = names_of(d, &ids, &n), removed = 0;
	close(d);
	if (err)
		return bee_fail(e, BEE_STAGE_VFS, err, "'%s': %s", p, strerror(-err));
	time_t now = time(NULL);
	for (size_t i = 0; i < n; i++) {
		struct vfs_cmd c;
		struct bee_error ce;
		struct bee_vfs_opts o = { .sz = sizeof(o), .state_dir = sd, .warn = warn, .warn_ctx = warn_ctx };
		if (cmd_begin(&c, "gc", ids[i], &o, &ce) == 0 && !c.live && now - c.r.touched_s >= (time_t)max_age_s) {
			char why[96];
			snprintf(why, sizeof(why), "unapplied changes older than %llu s removed", max_age_s);
			bee_vfs_audit(&c.r, c.verb, true, why, warn, warn_ctx);
			if (bee_vfs_remove(sd, ids[i], &c.r) == 0)
				removed++;
			else
				bee_warnf(warn, warn_ctx, "vfs gc: session %s: cannot remove its overlays", ids[i]);
		}
		cmd_end(&c);
	}
	names_free(ids, n);
	return removed;
}
