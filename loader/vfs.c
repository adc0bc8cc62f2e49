/* SPDX-License-Identifier: GPL-2.0-only */
/* vfs.c: a session's copy-on-write overlays (--overlay DIR[:mode]) and the
 * vfs commands on them (docs/bee-load.md "The session's copy-on-write
 * overlay").
 *
 * On disk, for session ID, under bee's state directory (0700, root's):
 *
 *   STATE/vfs/ID/vfs.json     the record: each overlay's DIR, mode, the
 *                             generation of its upper layer and how many of
 *                             bee's overlays are stacked on DIR in the
 *                             session; the reference time of apply; init's
 *                             pid and start time (what "live" means); the
 *                             audit log
 *   STATE/vfs/ID/lock         every vfs command holds it (flock)
 *   STATE/vfs/ID/N/           overlay N (a tmpfs of the cap for :memory)
 *   STATE/vfs/ID/N/upper.G    its upper layer, generation G
 *   STATE/vfs/ID/N/work.G     overlayfs's work directory beside it
 *
 * In the session (mountns.c) each DIR is an overlayfs mounted by init whose
 * lower layer is the real DIR and whose upper layer is upper.G; init keeps
 * a descriptor of the real DIR and one of a clone of STATE/vfs/ID for the
 * session's life, so that reset can mount a new overlay over the old one
 * from outside (setns into the session's mount namespace: paths under
 * /proc/1/fd there). The tool cannot reach them: init is root with every
 * capability, the tool has none (ptrace access is refused).
 *
 * The changes are what the upper layer holds compared with the real DIR as
 * it is now: whiteouts (0/0 character devices) are deletions, an opaque
 * directory (trusted.overlay.opaque "y") deletes what the real one held
 * and the upper does not; a file copied up whose bytes, mode and owner
 * equal the real one's is no change. */
#include "internal.h"
#include "vfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <linux/magic.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#ifndef OVERLAYFS_SUPER_MAGIC
#define OVERLAYFS_SUPER_MAGIC 0x794c7630
#endif

#define VFS_MEMORY_DEFAULT (64ULL << 20)

/* ---- specs and the record ---------------------------------------------------------------- */

static int parse_size(const char *s, unsigned long long *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || s[0] == '-')
		return -EINVAL;
	unsigned shift = 0;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case '\0': break;
	default: return -EINVAL;
	}
	if (*end || v == 0 || v > (ULLONG_MAX >> shift))
		return -EINVAL;
	*out = v << shift;
	return 0;
}

int bee_vfs_spec_parse(const char *arg, struct bee_vfs_spec *sp, struct bee_error *e)
{
	char dir[PATH_MAX];
	const char *colon = strrchr(arg, ':');
	memset(sp, 0, sizeof(*sp));
	size_t dlen = strlen(arg);
	if (colon) {
		const char *m = colon + 1;
		if (strcmp(m, "disk") == 0) {
			dlen = (size_t)(colon - arg);
		} else if (strcmp(m, "memory") == 0 || strncmp(m, "memory=", 7) == 0) {
			sp->memory = true;
			sp->size = VFS_MEMORY_DEFAULT;
			if (m[6] == '=' && parse_size(m + 7, &sp->size) < 0)
				return bee_fail(e, BEE_STAGE_USAGE, -EINVAL,
						"--overlay '%s': '%s' is not a size (a number with K, M or G)", arg, m + 7);
			if (sp->size < 1ULL << 20)
				return bee_fail(e, BEE_STAGE_USAGE, -EINVAL,
						"--overlay '%s': a memory overlay needs at least 1M", arg);
			dlen = (size_t)(colon - arg);
		}
	}
	if (dlen == 0 || dlen >= sizeof(dir) || arg[0] != '/')
		return bee_fail(e, BEE_STAGE_USAGE, -EINVAL, "--overlay '%s': DIR must be an absolute path", arg);
	memcpy(dir, arg, dlen);
	dir[dlen] = '\0';
	struct stat st;
	if (!realpath(dir, sp->dir) || stat(sp->dir, &st) < 0)
		return bee_fail(e, BEE_STAGE_USAGE, -errno, "--overlay '%s': '%s': %s", arg, dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return bee_fail(e, BEE_STAGE_USAGE, -ENOTDIR, "--overlay '%s': '%s' is not a directory", arg, dir);
	if (strcmp(sp->dir, "/") == 0)
		return bee_fail(e, BEE_STAGE_USAGE, -EINVAL, "--overlay '%s': the root directory cannot be overlaid",
				arg);
	return 0;
}

bool bee_vfs_path_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	if (strcmp(dir, "/") == 0)
		return true;
	return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static void vfs_path(char *buf, size_t size, const char *state_dir, const char *sid, const char *tail)
{
	/* too long: "", which every call then fails on */
	if (snprintf(buf, size, "%s/vfs/%s%s%s", state_dir, sid, tail ? "/" : "", tail ? tail : "") >= (int)size)
		*buf = '\0';
}

void bee_vfs_record_fini(struct bee_vfs_record *r)
{
	free(r->ov);
	memset(r, 0, sizeof(*r));
}

static const char *jstr(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : "";
}

int bee_vfs_record_read(const char *state_dir, const char *sid, struct bee_vfs_record *r)
{
	char path[PATH_MAX];
	memset(r, 0, sizeof(*r));
	vfs_path(path, sizeof(path), state_dir, sid, "vfs.json");
	json_error_t je;
	json_t *o = json_load_file(path, 0, &je);
	if (!o)
		return access(path, F_OK) < 0 ? -ENOENT : -EINVAL;
	int err = 0;
	json_t *ovs = json_object_get(o, "overlays");
	if (json_integer_value(json_object_get(o, "version")) != 1 || !json_is_array(ovs) ||
	    json_array_size(ovs) == 0 || json_array_size(ovs) > BEE_VFS_MAX) {
		err = -EINVAL;
		goto out;
	}
	snprintf(r->sid, sizeof(r->sid), "%s", sid);
	snprintf(r->policy, sizeof(r->policy), "%s", jstr(o, "policy"));
	snprintf(r->audit_log, sizeof(r->audit_log), "%s", jstr(o, "audit_log"));
	snprintf(r->started, sizeof(r->started), "%s", jstr(o, "started"));
	r->audit_detail = json_is_true(json_object_get(o, "audit_detail"));
	r->ref_ns = json_integer_value(json_object_get(o, "ref_ns"));
	r->touched_s = json_integer_value(json_object_get(o, "touched_s"));
	r->init_pid = (pid_t)json_integer_value(json_object_get(o, "init_pid"));
	r->init_start = (unsigned long long)json_integer_value(json_object_get(o, "init_start"));
	r->n = json_array_size(ovs);
	if (!(r->ov = calloc(r->n, sizeof(*r->ov)))) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < r->n; i++) {
		json_t *v = json_array_get(ovs, i);
		struct bee_vfs_ov *ov = &r->ov[i];
		snprintf(ov->dir, sizeof(ov->dir), "%s", jstr(v, "dir"));
		ov->memory = strcmp(jstr(v, "mode"), "memory") == 0;
		ov->size = (unsigned long long)json_integer_value(json_object_get(v, "size"));
		ov->gen = (unsigned)json_integer_value(json_object_get(v, "gen"));
		ov->mounted = (unsigned)json_integer_value(json_object_get(v, "mounted"));
		ov->writable = json_is_true(json_object_get(v, "writable"));
		if (ov->dir[0] != '/') {
			err = -EINVAL;
			goto out;
		}
	}
out:
	json_decref(o);
	if (err)
		bee_vfs_record_fini(r);
	return err;
}

int bee_vfs_record_write(const char *state_dir, const struct bee_vfs_record *r)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8];
	vfs_path(path, sizeof(path), state_dir, r->sid, "vfs.json");
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	json_t *o = json_object(), *ovs = json_array();
	json_object_set_new(o, "version", json_integer(1));
	json_object_set_new(o, "session", json_string(r->sid));
	json_object_set_new(o, "policy", json_string(r->policy));
	json_object_set_new(o, "started", json_string(r->started));
	json_object_set_new(o, "audit_log", json_string(r->audit_log));
	json_object_set_new(o, "audit_detail", json_boolean(r->audit_detail));
	json_object_set_new(o, "ref_ns", json_integer(r->ref_ns));
	json_object_set_new(o, "touched_s", json_integer(r->touched_s));
	json_object_set_new(o, "init_pid", json_integer(r->init_pid));
	json_object_set_new(o, "init_start", json_integer((json_int_t)r->init_start));
	for (size_t i = 0; i < r->n; i++) {
		json_t *v = json_object();
		json_object_set_new(v, "dir", json_string(r->ov[i].dir));
		json_object_set_new(v, "mode", json_string(r->ov[i].memory ? "memory" : "disk"));
		json_object_set_new(v, "size", json_integer((json_int_t)r->ov[i].size));
		json_object_set_new(v, "gen", json_integer(r->ov[i].gen));
		json_object_set_new(v, "mounted", json_integer(r->ov[i].mounted));
		json_object_set_new(v, "writable", json_boolean(r->ov[i].writable));
		json_array_append_new(ovs, v);
	}
	json_object_set_new(o, "overlays", ovs);
	char *text = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(o);
	if (!text)
		return -ENOMEM;
	int err = 0;
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	size_t len = strlen(text);
	/* no fsync: the record must survive bee-load, not the machine (the
	 * state directory is a tmpfs by default) */
	if (write(fd, text, len) != (ssize_t)len || write(fd, "\n", 1) != 1)
		err = errno ? -errno : -EIO;
	if (close(fd) < 0 && !err)
		err = -errno;
	if (!err && rename(tmp, path) < 0)
		err = -errno;
	if (err)
		unlink(tmp);
out:
	free(text);
	return err;
}

void bee_vfs_layer(char *buf, size_t size, const char *state_dir, const char *sid, size_t i, const char *what,
		   unsigned gen)
{
	char tail[64];
	snprintf(tail, sizeof(tail), "%zu/%s.%u", i, what, gen);
	vfs_path(buf, size, state_dir, sid, tail);
}

bool bee_vfs_record_live(const struct bee_vfs_record *r)
{
	return r->init_pid > 0 && bee_pid_alive(r->init_pid, r->init_start) == 1;
}

int64_t bee_vfs_coarse_ns(void)
{
	return bee_clock_ns(CLOCK_REALTIME_COARSE);
}

/* ---- audit ------------------------------------------------------------------------------- */

void bee_vfs_audit(const struct bee_vfs_record *r, const char *verb, bool allow, const char *reason,
		   bee_warn_fn warn, void *warn_ctx)
{
	char why[128], res[160];
	if (!r->audit_log[0])
		return;
	struct bee_audit_log log = { .fd = -1, .detail = r->audit_detail, .policy = r->policy };
	if ((log.fd = bee_audit_fd_open(r->audit_log, false, why, sizeof(why))) < 0) {
		bee_warnf(warn, warn_ctx, "vfs %s: audit log '%s': %s: not recorded there", verb, r->audit_log, why);
		return;
	}
	int n = snprintf(res, sizeof(res), "bee:vfs:%s:%s", verb, r->sid);
	bool reads = strcmp(verb, "ls") == 0 || strcmp(verb, "diff") == 0 || strcmp(verb, "snapshot") == 0;
	struct bee_audit_line l = {
		.realtime_ns = bee_clock_ns(CLOCK_REALTIME), .kind = "FileSystem", .action = reads ? "Read" : "Write",
		.resource = res, .resource_len = (size_t)n, .decision = allow ? "Allow" : "Deny", .pid = getpid(),
		.comm = "bee-load", .source = "vfs", .reason = reason, .rule = -1,
	};
	int err = bee_audit_write(&log, &l);
	if (err < 0)
		bee_warnf(warn, warn_ctx, "vfs %s: audit log '%s': %s", verb, r->audit_log, strerror(-err));
	close(log.fd);
}

/* ---- the session's side: made at open, read by init --------------------------------------- */

struct bee_vfs {
	char *state_dir;
	struct bee_vfs_record rec;
	char root[PATH_MAX];        /* STATE/vfs/ID */
	bool made;                  /* root exists: close removes it when nothing changed */
	bee_warn_fn warn;
	void *warn_ctx;
};

static int mkdir_own(const char *path, mode_t mode)
{
	if (mkdir(path, mode) < 0 && errno != EEXIST)
		return -errno;
	struct stat st;
	if (lstat(path, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid())
		return -EPERM;
	return (st.st_mode & 07777) != mode && chmod(path, mode) < 0 ? -errno : 0;
}

/* A new upper and work directory of generation gen for overlay i: the
 * upper's root takes the real DIR's mode and owner, which the merged
 * root shows. */
int bee_vfs_layer_make(const char *state_dir, const char *sid, size_t i, const char *dir, unsigned gen)
{
	char up[PATH_MAX], wk[PATH_MAX];
	struct stat st;
	if (stat(dir, &st) < 0)
		return -errno;
	bee_vfs_layer(up, sizeof(up), state_dir, sid, i, "upper", gen);
	bee_vfs_layer(wk, sizeof(wk), state_dir, sid, i, "work", gen);
	if (mkdir(up, 0700) < 0 || mkdir(wk, 0700) < 0)
		return -errno;
	if (chown(up, st.st_uid, st.st_gid) < 0 || chmod(up, st.st_mode & 07777) < 0)
		return -errno;
	return 0;
}

/* rm -r below dfd's name, never following a symbolic link */
int bee_vfs_rm_at(int dfd, const char *name)
{
	if (unlinkat(dfd, name, 0) == 0 || errno == ENOENT)
		return 0;
	if (errno != EISDIR && errno != EPERM)
		return -errno;
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	int err = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		int r = bee_vfs_rm_at(dirfd(d), de->d_name);
		err = err ? err : r;
	}
	closedir(d);
	if (unlinkat(dfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
		err = err ? err : -errno;
	return err;
}

int bee_vfs_rm(const char *path)
{
	return bee_vfs_rm_at(AT_FDCWD, path);
}

/* Removes session sid's overlays from the state directory: a memory
 * overlay's tmpfs unmounted (MNT_DETACH: a live session keeps its own
 * copy of the mount until it ends). */
int bee_vfs_remove(const char *state_dir, const char *sid, const struct bee_vfs_record *r)
{
	char p[PATH_MAX];
	for (size_t i = 0; r && i < r->n; i++) {
		if (!r->ov[i].memory)
			continue;
		char tail[32];
		snprintf(tail, sizeof(tail), "%zu", i);
		vfs_path(p, sizeof(p), state_dir, sid, tail);
		umount2(p, MNT_DETACH | UMOUNT_NOFOLLOW);
	}
	vfs_path(p, sizeof(p), state_dir, sid, NULL);
	return bee_vfs_rm(p);
}

int bee_vfs_open(const char *state_dir, const char *sid, const struct bee_vfs_open_opts *o, struct bee_vfs **out,
		 struct bee_error *e)
{
	char p[PATH_MAX];
	int err;
	*out = NULL;
	if (o->n > BEE_VFS_MAX)
		return bee_fail(e, BEE_STAGE_USAGE, -E2BIG, "--overlay: at most %d overlays, got %zu", BEE_VFS_MAX,
				o->n);
	/* resolved: a supervisor works from '/' */
	char real_state[PATH_MAX];
	if (!realpath(state_dir, real_state))
		return bee_fail(e, BEE_STAGE_VFS, -errno, "state directory '%s': %s", state_dir, strerror(errno));
	state_dir = real_state;
	struct bee_vfs *v = calloc(1, sizeof(*v));
	if (!v || !(v->state_dir = strdup(state_dir)) || !(v->rec.ov = calloc(o->n, sizeof(*v->rec.ov)))) {
		err = bee_fail(e, BEE_STAGE_VFS, -ENOMEM, "out of memory");
		goto fail;
	}
	v->warn = o->warn;
	v->warn_ctx = o->warn_ctx;
	v->rec.n = o->n;
	for (size_t i = 0; i < o->n; i++) {
		struct bee_vfs_spec sp;
		if ((err = bee_vfs_spec_parse(o->specs[i], &sp, e)) < 0)
			goto fail;
		/* the upper layer may lie neither in the lower nor above it */
		if (bee_vfs_path_under(real_state, sp.dir) || bee_vfs_path_under(sp.dir, real_state)) {
			err = bee_fail(e, BEE_STAGE_USAGE, -EINVAL,
				       "--overlay '%s': '%s' and the state directory '%s' overlap", o->specs[i], sp.dir,
				       real_state);
			goto fail;
		}
		for (size_t k = 0; k < i; k++) {
			if (bee_vfs_path_under(sp.dir, v->rec.ov[k].dir) || bee_vfs_path_under(v->rec.ov[k].dir, sp.dir)) {
				err = bee_fail(e, BEE_STAGE_USAGE, -EINVAL, "--overlay '%s': '%s' overlaps overlay '%s'",
					       o->specs[i], sp.dir, v->rec.ov[k].dir);
				goto fail;
			}
		}
		struct bee_vfs_ov *ov = &v->rec.ov[i];
		snprintf(ov->dir, sizeof(ov->dir), "%s", sp.dir);
		ov->memory = sp.memory;
		ov->size = sp.size;
		ov->mounted = 1;
	}
	if ((err = bee_fault(BEE_STAGE_VFS)) < 0) {
		err = bee_fail(e, BEE_STAGE_VFS, err, "injected fault");
		goto fail;
	}
	if (snprintf(p, sizeof(p), "%s/vfs", state_dir) >= (int)sizeof(p))
		*p = '\0';
	vfs_path(v->root, sizeof(v->root), state_dir, sid, NULL);
	if ((err = mkdir_own(p, 0700)) < 0 || (err = mkdir_own(v->root, 0700)) < 0) {
		err = bee_fail(e, BEE_STAGE_VFS, err, "'%s': %s", v->root, strerror(-err));
		goto fail;
	}
	v->made = true;
	snprintf(v->rec.sid, sizeof(v->rec.sid), "%s", sid);
	snprintf(v->rec.policy, sizeof(v->rec.policy), "%s", o->policy ? o->policy : "");
	/* resolved: the vfs commands run from anywhere */
	if (!o->audit_log || !realpath(o->audit_log, v->rec.audit_log))
		snprintf(v->rec.audit_log, sizeof(v->rec.audit_log), "%s", o->audit_log ? o->audit_log : "");
	v->rec.audit_detail = o->audit_detail;
	bee_utc_iso(bee_clock_ns(CLOCK_REALTIME), v->rec.started, sizeof(v->rec.started));
	v->rec.ref_ns = bee_vfs_coarse_ns();
	v->rec.touched_s = time(NULL);
	for (size_t i = 0; i < o->n; i++) {
		struct bee_vfs_ov *ov = &v->rec.ov[i];
		char tail[32];
		snprintf(tail, sizeof(tail), "%zu", i);
		vfs_path(p, sizeof(p), state_dir, sid, tail);
		if ((err = mkdir_own(p, 0700)) < 0) {
			err = bee_fail(e, BEE_STAGE_VFS, err, "'%s': %s", p, strerror(-err));
			goto fail;
		}
		if (ov->memory) {
			char opts[64];
			snprintf(opts, sizeof(opts), "mode=0700,size=%llu", ov->size);
			/* not noexec: the tool may run what it built there, as the policy allows */
			if (mount("bee-vfs", p, "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0) {
				err = bee_fail(e, BEE_STAGE_VFS, -errno, "overlay '%s': tmpfs of %llu bytes on '%s': %s",
					       ov->dir, ov->size, p, strerror(errno));
				goto fail;
			}
			/* a mount of the host's, under bee's own directory only:
			 * never propagated to other namespaces */
			mount(NULL, p, NULL, MS_PRIVATE, NULL);
		}
		if ((err = bee_vfs_layer_make(state_dir, sid, i, ov->dir, 0)) < 0) {
			err = bee_fail(e, BEE_STAGE_VFS, err, "overlay '%s': its upper layer in '%s': %s", ov->dir, p,
				       strerror(-err));
			goto fail;
		}
	}
	if ((err = bee_vfs_record_write(state_dir, &v->rec)) < 0) {
		err = bee_fail(e, BEE_STAGE_VFS, err, "'%s/vfs.json': %s", v->root, strerror(-err));
		goto fail;
	}
	*out = v;
	return 0;
fail:
	if (v && v->made)
		bee_vfs_remove(state_dir, sid, &v->rec);
	if (v) {
		v->made = false;
		bee_vfs_close(v);
	}
	return err;
}

size_t bee_vfs_count(const struct bee_vfs *v)
{
	return v ? v->rec.n : 0;
}

const char *bee_vfs_dir(const struct bee_vfs *v, size_t i)
{
	return v->rec.ov[i].dir;
}

const char *bee_vfs_root(const struct bee_vfs *v)
{
	return v->root;
}

void bee_vfs_set_writable(struct bee_vfs *v, size_t i, bool w)
{
	v->rec.ov[i].writable = w;
}

int bee_vfs_started(struct bee_vfs *v, pid_t init_pid)
{
	if (!v)
		return 0;
	v->rec.init_pid = init_pid;
	v->rec.init_start = bee_pid_starttime(init_pid);
	return bee_vfs_record_write(v->state_dir, &v->rec);
}

void bee_vfs_started_audit(const struct bee_vfs *v)
{
	char why[PATH_MAX + 64];
	for (size_t i = 0; v && i < v->rec.n; i++) {
		const struct bee_vfs_ov *ov = &v->rec.ov[i];
		if (ov->memory)
			snprintf(why, sizeof(why), "overlay on '%s' (memory, %llu bytes)", ov->dir, ov->size);
		else
			snprintf(why, sizeof(why), "overlay on '%s' (disk)", ov->dir);
		bee_vfs_audit(&v->rec, "overlay", true, why, v->warn, v->warn_ctx);
	}
}

/* true when overlay i's upper layer holds nothing */
static bool upper_empty(const char *state_dir, const struct bee_vfs_record *r, size_t i)
{
	char up[PATH_MAX];
	bee_vfs_layer(up, sizeof(up), state_dir, r->sid, i, "upper", r->ov[i].gen);
	DIR *d = opendir(up);
	if (!d)
		return errno == ENOENT;
	struct dirent *de;
	bool empty = true;
	while (empty && (de = readdir(d)))
		empty = strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0;
	closedir(d);
	return empty;
}

void bee_vfs_close(struct bee_vfs *v)
{
	if (!v)
		return;
	if (v->made) {
		/* the record as vfs commands left it (they may have reset or
		 * disabled it meanwhile); a session that changed nothing leaves
		 * nothing behind */
		struct bee_vfs_record r;
		if (bee_vfs_record_read(v->state_dir, v->rec.sid, &r) == 0) {
			bool empty = true;
			for (size_t i = 0; i < r.n; i++)
				empty &= upper_empty(v->state_dir, &r, i);
			if (empty)
				bee_vfs_remove(v->state_dir, v->rec.sid, &r);
			bee_vfs_record_fini(&r);
		}
	}
	free(v->state_dir);
	bee_vfs_record_fini(&v->rec);
	free(v);
}

/* ---- the overlay's mount: system calls only (init, and reset's child) --------------------- */

int bee_vfs_overlay_mount(const char *lower, const char *upper, const char *work, bool rdonly, const char *target)
{
	/* no redirects, no metadata-only copies, no index: every change is a
	 * whole file in the upper layer, which is what ls reads */
	const char *const opts[] = { "lowerdir", lower, "upperdir", upper, "workdir", work, "redirect_dir", "off",
				     "metacopy", "off", "index", "off", NULL };
	return bee_mount_new("overlay", target, opts,
			     MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (rdonly ? MOUNT_ATTR_RDONLY : 0));
}

/* ---- the live session, from outside -------------------------------------------------------- */

/* init's descriptors of the real dir and of STATE/vfs/ID (its clone):
 * found by device and inode among /proc/PID/fd. */
static int init_fd_of(pid_t pid, const struct stat *want)
{
	char p[64];
	snprintf(p, sizeof(p), "/proc/%d/fd", (int)pid);
	DIR *d = opendir(p);
	if (!d)
		return -errno;
	struct dirent *de;
	int found = -ENOENT;
	while (found < 0 && (de = readdir(d))) {
		char f[64 + NAME_MAX + 2];
		struct stat st;
		if (de->d_name[0] == '.')
			continue;
		snprintf(f, sizeof(f), "%s/%s", p, de->d_name);
		int fd = open(f, O_PATH | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode) && st.st_dev == want->st_dev && st.st_ino == want->st_ino)
			found = atoi(de->d_name);
		close(fd);
	}
	closedir(d);
	return found;
}

enum ns_op { NS_MOUNT, NS_UNMOUNT };

struct ns_job {
	enum ns_op op;
	char lower[64], upper[128], work[128];
	const char *target;
	bool rdonly;
	unsigned count;             /* NS_UNMOUNT: how many of bee's overlays */
};

/* In a child: enters the session's mount namespace and mounts (or takes
 * away) an overlay on target there. Exits with an errno. */
__attribute__((noreturn))
static void ns_child(int nsfd, const struct ns_job *j)
{
	if (setns(nsfd, CLONE_NEWNS) < 0)
		_exit(errno);
	if (j->op == NS_MOUNT) {
		int err = bee_vfs_overlay_mount(j->lower, j->upper, j->work, j->rdonly, j->target);
		_exit(err ? -err : 0);
	}
	for (unsigned i = 0; i < j->count; i++) {
		struct statfs sf;
		if (statfs(j->target, &sf) < 0)
			_exit(errno);
		if (sf.f_type != OVERLAYFS_SUPER_MAGIC)
			_exit(i ? 0 : EINVAL);
		if (umount2(j->target, MNT_DETACH | UMOUNT_NOFOLLOW) < 0)
			_exit(errno);
	}
	_exit(0);
}

static int ns_run(pid_t init_pid, const struct ns_job *j)
{
	char p[64];
	snprintf(p, sizeof(p), "/proc/%d/ns/mnt", (int)init_pid);
	int nsfd = open(p, O_RDONLY | O_CLOEXEC);
	if (nsfd < 0)
		return -errno;
	pid_t c = fork();
	if (c < 0) {
		int err = -errno;
		close(nsfd);
		return err;
	}
	if (c == 0)
		ns_child(nsfd, j);
	close(nsfd);
	int st;
	while (waitpid(c, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (!WIFEXITED(st))
		return -EINTR;
	return -WEXITSTATUS(st);
}

/* Mounts a new overlay of generation gen over overlay i in live session r. */
int bee_vfs_live_mount(const char *state_dir, const struct bee_vfs_record *r, size_t i, unsigned gen)
{
	struct stat lower, root;
	char vroot[PATH_MAX];
	vfs_path(vroot, sizeof(vroot), state_dir, r->sid, NULL);
	if (stat(r->ov[i].dir, &lower) < 0 || stat(vroot, &root) < 0)
		return -errno;
	int lfd = init_fd_of(r->init_pid, &lower), vfd = init_fd_of(r->init_pid, &root);
	if (lfd < 0 || vfd < 0)
		return lfd < 0 ? lfd : vfd;
	struct ns_job j = { .op = NS_MOUNT, .target = r->ov[i].dir, .rdonly = !r->ov[i].writable };
	/* paths of the session's own /proc, where init is pid 1 */
	snprintf(j.lower, sizeof(j.lower), "/proc/1/fd/%d", lfd);
	snprintf(j.upper, sizeof(j.upper), "/proc/1/fd/%d/%zu/upper.%u", vfd, i, gen);
	snprintf(j.work, sizeof(j.work), "/proc/1/fd/%d/%zu/work.%u", vfd, i, gen);
	return ns_run(r->init_pid, &j);
}

int bee_vfs_live_unmount(const struct bee_vfs_record *r, size_t i)
{
	struct ns_job j = { .op = NS_UNMOUNT, .target = r->ov[i].dir, .count = r->ov[i].mounted };
	return r->ov[i].mounted ? ns_run(r->init_pid, &j) : 0;
}
