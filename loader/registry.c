/* SPDX-License-Identifier: GPL-2.0-only */
/* registry.c: the sessions of this machine, one record each, so that
 * `bee-load ls` can list them, `bee-load revoke` can find a session's
 * pinned maps and `bee-load gc` (and every run, at its start) can clean
 * what a killed bee-load left behind.
 *
 *   STATE/lock              flock'ed around every change
 *   STATE/sessions/ID.json  the record: bee-load's pid and start time (a
 *                           reused pid is not taken for it), the cgroup,
 *                           the pin folder, the audit log, the revoked rules
 *   STATE/sessions/ID.sock  the supervisor's socket of a session of start
 *                           (supervisor.c), 0600
 *   STATE/sessions/ID.bpfpack  the session's own copy of its pack (revoke
 *                           reads this, not a file that may have changed)
 *
 * A record is written before the session creates anything in the kernel
 * and removed after everything is gone, so a session killed at any point
 * leaves a record that names all it may have left.
 *
 * The state directory is bee's alone: owned by bee-load's user (root),
 * 0700, and refused when someone else owns it or group or others may
 * write it (a planted record would point gc and revoke at files of its
 * choosing); what is in it is 0600.
 */
#include "internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

const char *bee_state_dir(const char *opt)
{
	return opt && *opt ? opt : BEE_STATE_DIR;
}

/* dir must be a directory (not a symbolic link) owned by this user that
 * neither group nor others may write; one they may read or search is
 * made 0700. */
static int dir_secure(const char *dir, struct bee_error *e)
{
	struct stat st;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), err = 0;
	if (fd < 0) {
		err = -errno;
		return bee_fail(e, BEE_STAGE_REGISTRY, err, "state directory '%s': %s", dir,
				err == -ELOOP || err == -ENOTDIR ? "not a directory (a symbolic link?)" : strerror(-err));
	}
	if (fstat(fd, &st) < 0)
		err = bee_fail(e, BEE_STAGE_REGISTRY, -errno, "state directory '%s': %s", dir, strerror(errno));
	else if (st.st_uid != geteuid())
		err = bee_fail(e, BEE_STAGE_REGISTRY, -EPERM,
			       "state directory '%s' is owned by uid %u, not by bee-load's uid %u: refusing it", dir,
			       (unsigned)st.st_uid, (unsigned)geteuid());
	else if (st.st_mode & (S_IWGRP | S_IWOTH))
		err = bee_fail(e, BEE_STAGE_REGISTRY, -EPERM,
			       "state directory '%s' is writable by group or others (mode %04o): refusing it", dir,
			       (unsigned)(st.st_mode & 07777));
	/* 0710: the session service's group may pass through to its socket
	 * (docs/serve.md); everything in here is root's 0600 or 0700 */
	else if ((st.st_mode & 07777) != 0700 && (st.st_mode & 07777) != 0710 && fchmod(fd, 0700) < 0)
		err = bee_fail(e, BEE_STAGE_REGISTRY, -errno, "state directory '%s': chmod 0700: %s", dir,
			       strerror(errno));
	close(fd);
	return err;
}

int bee_state_dir_secure(const char *state_dir, struct bee_error *e)
{
	char sub[PATH_MAX];
	int err = bee_mkdirs(state_dir, 0700);
	if (err)
		return bee_fail(e, BEE_STAGE_REGISTRY, err, "state directory '%s': cannot create it: %s", state_dir,
				strerror(-err));
	if ((err = dir_secure(state_dir, e)) < 0)
		return err;
	/* the folders bee made in it: sessions/, kernel-audit/ */
	static const char *const subs[] = { "sessions", "kernel-audit" };
	for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++) {
		snprintf(sub, sizeof(sub), "%s/%s", state_dir, subs[i]);
		if (access(sub, F_OK) == 0 && (err = dir_secure(sub, e)) < 0)
			return err;
	}
	return 0;
}

int bee_registry_lock(const char *state_dir)
{
	return bee_lock_dir(state_dir);
}

void bee_registry_unlock(int fd)
{
	if (fd >= 0)
		close(fd);
}

static void rec_path(const char *state_dir, const char *id, const char *ext, char *buf, size_t size)
{
	snprintf(buf, size, "%s/sessions/%s.%s", state_dir, id, ext);
}

char *bee_registry_pack_path(const char *state_dir, const char *id)
{
	char buf[PATH_MAX];
	rec_path(state_dir, id, "bpfpack", buf, sizeof(buf));
	return strdup(buf);
}

int bee_registry_write(const char *state_dir, const struct bee_registry_entry *r)
{
	char path[PATH_MAX], dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s/sessions", state_dir);
	int err = bee_mkdirs(dir, 0700);
	if (err)
		return err;
	json_t *o = json_object(), *rev = json_array();
	json_object_set_new(o, "id", json_string(r->id));
	json_object_set_new(o, "pid", json_integer(r->pid));
	json_object_set_new(o, "starttime", json_integer((json_int_t)r->starttime));
	json_object_set_new(o, "tool_pid", json_integer(r->tool_pid));
	json_object_set_new(o, "policy", json_string(r->policy));
	json_object_set_new(o, "backend", json_string(r->backend));
	json_object_set_new(o, "digest", json_string(r->digest));
	json_object_set_new(o, "started", json_string(r->started));
	json_object_set_new(o, "cgroup", json_string(r->cgroup));
	json_object_set_new(o, "bpffs", json_string(r->bpffs));
	json_object_set_new(o, "pack_load", json_string(r->cache));
	json_object_set_new(o, "audit_log", json_string(r->audit_log));
	json_object_set_new(o, "pack", json_string(r->pack));
	json_object_set_new(o, "audit_detail", json_boolean(r->audit_detail));
	json_object_set_new(o, "socket", json_string(r->socket));
	json_object_set_new(o, "commands", json_integer((json_int_t)r->commands));
	json_object_set_new(o, "audit_written", json_integer((json_int_t)r->audit_written));
	json_object_set_new(o, "audit_lost", json_integer((json_int_t)r->audit_lost));
	for (size_t i = 0; i < r->nrevoked; i++)
		json_array_append_new(rev, json_integer(r->revoked[i]));
	json_object_set_new(o, "revoked", rev);
	char *text = json_dumps(o, JSON_SORT_KEYS | JSON_INDENT(1));
	json_decref(o);
	if (!text)
		return -ENOMEM;
	rec_path(state_dir, r->id, "json", path, sizeof(path));
	err = bee_write_atomic(path, text, strlen(text));
	free(text);
	return err;
}

static void copy_str(json_t *o, const char *key, char *dst, size_t size)
{
	const char *s = json_string_value(json_object_get(o, key));
	snprintf(dst, size, "%s", s ? s : "");
}

int bee_registry_read(const char *state_dir, const char *id, struct bee_registry_entry *r)
{
	char path[PATH_MAX];
	memset(r, 0, sizeof(*r));
	/* ids are hex: anything else cannot name a record (and no path escapes) */
	if (!*id || strspn(id, "0123456789abcdef") != strlen(id) || strlen(id) >= sizeof(r->id))
		return -ENOENT;
	rec_path(state_dir, id, "json", path, sizeof(path));
	json_error_t je;
	json_t *o = json_load_file(path, 0, &je);
	if (!o)
		return access(path, F_OK) == 0 ? -EINVAL : -ENOENT;
	copy_str(o, "id", r->id, sizeof(r->id));
	r->pid = (pid_t)json_integer_value(json_object_get(o, "pid"));
	r->starttime = (unsigned long long)json_integer_value(json_object_get(o, "starttime"));
	r->tool_pid = (pid_t)json_integer_value(json_object_get(o, "tool_pid"));
	copy_str(o, "policy", r->policy, sizeof(r->policy));
	copy_str(o, "backend", r->backend, sizeof(r->backend));
	copy_str(o, "digest", r->digest, sizeof(r->digest));
	copy_str(o, "started", r->started, sizeof(r->started));
	copy_str(o, "cgroup", r->cgroup, sizeof(r->cgroup));
	copy_str(o, "bpffs", r->bpffs, sizeof(r->bpffs));
	copy_str(o, "pack_load", r->cache, sizeof(r->cache));
	copy_str(o, "audit_log", r->audit_log, sizeof(r->audit_log));
	copy_str(o, "pack", r->pack, sizeof(r->pack));
	r->audit_detail = json_is_true(json_object_get(o, "audit_detail"));
	copy_str(o, "socket", r->socket, sizeof(r->socket));
	r->commands = (unsigned long long)json_integer_value(json_object_get(o, "commands"));
	r->audit_written = (unsigned long long)json_integer_value(json_object_get(o, "audit_written"));
	r->audit_lost = (unsigned long long)json_integer_value(json_object_get(o, "audit_lost"));
	json_t *rev = json_object_get(o, "revoked");
	r->nrevoked = json_array_size(rev);
	r->revoked = calloc(r->nrevoked + 1, sizeof(*r->revoked));
	for (size_t i = 0; r->revoked && i < r->nrevoked; i++)
		r->revoked[i] = (unsigned)json_integer_value(json_array_get(rev, i));
	json_decref(o);
	if (!r->revoked)
		return -ENOMEM;
	return strcmp(r->id, id) == 0 ? 0 : -EINVAL;
}

void bee_registry_entry_fini(struct bee_registry_entry *r)
{
	free(r->revoked);
	r->revoked = NULL;
	r->nrevoked = 0;
}

int bee_registry_remove(const char *state_dir, const char *id)
{
	char path[PATH_MAX];
	rec_path(state_dir, id, "bpfpack", path, sizeof(path));
	unlink(path);
	rec_path(state_dir, id, "sock", path, sizeof(path));
	unlink(path);
	rec_path(state_dir, id, "json", path, sizeof(path));
	return unlink(path) < 0 && errno != ENOENT ? -errno : 0;
}

int bee_dir_json_names(const char *dir, char ***out, size_t *n)
{
	DIR *d = opendir(dir);
	*out = NULL;
	*n = 0;
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	size_t cap = 0;
	struct dirent *de;
	int err = 0;
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		if (l <= 5 || strcmp(de->d_name + l - 5, ".json") != 0)
			continue;
		if (*n + 1 >= cap) {
			size_t nc = cap ? cap * 2 : 16;
			char **np = realloc(*out, nc * sizeof(*np));
			if (!np) {
				err = -ENOMEM;
				break;
			}
			*out = np;
			cap = nc;
		}
		if (!((*out)[*n] = strndup(de->d_name, l - 5))) {
			err = -ENOMEM;
			break;
		}
		(*n)++;
	}
	closedir(d);
	return err;
}

int bee_registry_ids(const char *state_dir, char ***ids, size_t *n)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s/sessions", state_dir);
	return bee_dir_json_names(dir, ids, n);
}

/* One record in the dead session's audit log that its launcher died: what
 * the programs decided after that reached no one. The form of the
 * overrun record ("bee:audit-lost:N"), with the word for a count no one
 * can know. */
static void record_launcher_lost(const struct bee_registry_entry *r, bee_warn_fn warn, void *ctx)
{
	char why[128], reason[96];
	if (!*r->audit_log)
		return;
	struct bee_audit_log log = { .fd = -1, .detail = r->audit_detail, .policy = r->policy };
	if ((log.fd = bee_audit_fd_open(r->audit_log, false, why, sizeof(why))) < 0) {
		bee_warnf(warn, ctx, "gc: session %s: audit log '%s': %s: its loss is not recorded there", r->id,
			  r->audit_log, why);
		return;
	}
	snprintf(reason, sizeof(reason), "the session's bee-load (pid %d) died", (int)r->pid);
	static const char res[] = BEE_AUDIT_LAUNCHER_LOST;
	struct bee_audit_line l = {
		.realtime_ns = bee_clock_ns(CLOCK_REALTIME), .kind = "Process", .action = "Read",
		.resource = res, .resource_len = sizeof(res) - 1, .decision = "Deny", .pid = -1,
		.source = "loader", .reason = reason, .rule = -1,
	};
	int err = bee_audit_write(&log, &l);
	if (err < 0)
		bee_warnf(warn, ctx, "gc: session %s: audit log '%s': %s", r->id, r->audit_log, strerror(-err));
	close(log.fd);
}

int bee_registry_clean(const char *state_dir, const struct bee_registry_entry *r, bee_warn_fn warn,
		       void *ctx)
{
	int err, first = 0;
	/* the cgroup emptied first, while the pinned links still confine it:
	 * nothing a dead session left runs on unconfined for a moment */
	struct stat st;
	bool cg = *r->cgroup && stat(r->cgroup, &st) == 0;
	if (cg && (err = bee_cgroup_kill_wait(r->cgroup, 2000)) < 0)
		bee_warnf(warn, ctx, "gc: session %s: cannot empty '%s': %s", r->id, r->cgroup, strerror(-err));
	/* its entries in its pack's maps, found by its cgroup's id */
	if (cg && *r->cache)
		bee_cache_forget(r->cache, st.st_ino);
	if (*r->bpffs && (err = bee_bpf_unpin_dir(r->bpffs)) < 0) {
		bee_warnf(warn, ctx, "gc: session %s: pins '%s': %s", r->id, r->bpffs, strerror(-err));
		first = first ? first : err;
	}
	if (cg && (err = bee_cgroup_remove(r->cgroup, 2000)) < 0) {
		bee_warnf(warn, ctx, "gc: session %s: cannot remove '%s': %s", r->id, r->cgroup, strerror(-err));
		first = first ? first : err;
	}
	bee_kaudit_release(r->id);
	if (first)
		return first;   /* keep the record: the next gc tries again */
	record_launcher_lost(r, warn, ctx);
	return bee_registry_remove(state_dir, r->id);
}

static int info_cmp(const void *a, const void *b)
{
	const struct bee_session_info *x = a, *y = b;
	int c = strcmp(x->started, y->started);
	return c ? c : strcmp(x->id, y->id);
}

int bee_sessions__list(const char *state_dir, struct bee_session_info **out, size_t *nout,
		       struct bee_error *e)
{
	const char *sd = bee_state_dir(state_dir);
	char **ids = NULL;
	size_t n = 0, k = 0;
	*out = NULL;
	*nout = 0;
	int err = bee_registry_ids(sd, &ids, &n);
	if (err)
		return bee_fail(e, BEE_STAGE_REGISTRY, err, "'%s/sessions': %s", sd, strerror(-err));
	struct bee_session_info *v = calloc(n + 1, sizeof(*v));
	if (!v) {
		err = bee_fail(e, BEE_STAGE_REGISTRY, -ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		struct bee_registry_entry r;
		if (bee_registry_read(sd, ids[i], &r) < 0) {
			bee_registry_entry_fini(&r);
			continue;
		}
		struct bee_session_info *s = &v[k++];
		snprintf(s->id, sizeof(s->id), "%s", r.id);
		s->pid = r.pid;
		s->tool_pid = r.tool_pid;
		s->live = bee_pid_alive(r.pid, r.starttime);
		snprintf(s->policy, sizeof(s->policy), "%s", r.policy);
		snprintf(s->backend, sizeof(s->backend), "%s", r.backend);
		snprintf(s->started, sizeof(s->started), "%s", r.started);
		snprintf(s->cgroup, sizeof(s->cgroup), "%s", r.cgroup);
		snprintf(s->bpffs, sizeof(s->bpffs), "%s", r.bpffs);
		snprintf(s->audit_log, sizeof(s->audit_log), "%s", r.audit_log);
		s->nrevoked = (unsigned)r.nrevoked;
		snprintf(s->digest, sizeof(s->digest), "%s", r.digest);
		s->supervised = r.socket[0] != '\0';
		s->commands = r.commands;
		s->audit_written = r.audit_written;
		s->audit_lost = r.audit_lost;
		bee_registry_entry_fini(&r);
	}
	qsort(v, k, sizeof(*v), info_cmp);
	*out = v;
	*nout = k;
out:
	for (size_t i = 0; i < n; i++)
		free(ids[i]);
	free(ids);
	return err;
}

int bee_sessions__gc(const char *state_dir, bee_warn_fn warn, void *ctx, struct bee_error *e)
{
	const char *sd = bee_state_dir(state_dir);
	int err = bee_state_dir_secure(sd, e);
	if (err)
		return err;
	int lk = bee_registry_lock(sd);
	if (lk < 0)
		return bee_fail(e, BEE_STAGE_REGISTRY, lk, "cannot lock '%s/lock': %s", sd, strerror(-lk));
	char **ids = NULL;
	size_t n = 0;
	int cleaned = 0;
	err = bee_registry_ids(sd, &ids, &n);
	if (err) {
		bee_fail(e, BEE_STAGE_REGISTRY, err, "'%s/sessions': %s", sd, strerror(-err));
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		struct bee_registry_entry r;
		int rr = bee_registry_read(sd, ids[i], &r);
		if (rr == 0 && bee_pid_alive(r.pid, r.starttime)) {
			bee_registry_entry_fini(&r);
			continue;
		}
		if (rr < 0) {
			bee_warnf(warn, ctx, "gc: session %s: unreadable record: %s", ids[i], strerror(-rr));
		} else if (bee_registry_clean(sd, &r, warn, ctx) == 0) {
			bee_warnf(warn, ctx, "gc: removed stale session %s (policy '%s', bee-load pid %d)", r.id,
				  r.policy, (int)r.pid);
			cleaned++;
		}
		bee_registry_entry_fini(&r);
	}
out:
	for (size_t i = 0; i < n; i++)
		free(ids[i]);
	free(ids);
	bee_registry_unlock(lk);
	/* then the packs' loads no session has used for a while */
	if (!err)
		bee_packs__gc(sd, BEE_PACK_IDLE_S, warn, ctx, NULL);
	return err ? err : cleaned;
}
