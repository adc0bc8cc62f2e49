/* SPDX-License-Identifier: GPL-2.0-only */
/* serve.c: the session service, `bee-load serve` (docs/serve.md), and the
 * client side that bee-load's start, exec, stop, ls and revoke use
 * without root.
 *
 *   accept ── SO_PEERCRED (uid, gid, pid) + SO_PEERGROUPS + a pidfd: root, or
 *             a member of the service's group; a client inside a session
 *             only when its policy grants 'fs.write SOCKET', and then as
 *             that session's child (its starts proved subsets of it)
 *   one request a connection, decoded by serve_proto.c, answered by one line:
 *     exec, stop   the owner's check, then a connection to the session's
 *                  supervisor (bee_session_connect) handed to the client
 *                  (SCM_RIGHTS): the client speaks the supervisor's protocol
 *                  itself, so its descriptors and signals go straight to the
 *                  tool and nothing is copied through the service
 *     ls, describe answered at once
 *     start, revoke  in a worker process (they take a while): start reads the
 *                  pack from the descriptor the client sent (opened by the
 *                  client: the service never opens a path for it), starts the
 *                  session as the client's user and records its owner
 *
 * Owners live in STATE/serve/owners/ID.json ({"uid","gid","parent"}), so a
 * restarted service finds its sessions again. Every request is a line of
 * the requests' log: who (uid, gid, pid), what (method, session) and the
 * result. A client that dies, or a request that fails, affects no session.
 */
#include "internal.h"
#include "serve.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WORKERS_MAX 64
#define CLIENTS_MAX 1024
#define IDLE_MS 10000              /* a client that sends no request in this long is dropped */
#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD_ 77
#else
#define SO_PEERPIDFD_ SO_PEERPIDFD
#endif

/* ---- lines with descriptors -------------------------------------------------------- */

/* One line (o taken) with up to one descriptor. */
static int line_send(int fd, json_t *o, int pass)
{
	return bee_json_line_send(fd, o, pass >= 0 ? &pass : NULL, pass >= 0);
}

struct inbuf {
	char buf[BEE_SERVE_LINE_MAX];
	size_t len;
	int fds[4];
	size_t nfds;
	bool extra;                 /* more descriptors than fit: refused */
};

static void inbuf_close_fds(struct inbuf *in)
{
	for (size_t i = 0; i < in->nfds; i++)
		close(in->fds[i]);
	in->nfds = 0;
}

/* One read. 1: something came; 0: EOF; -errno (-EAGAIN: nothing yet;
 * -E2BIG: a line longer than the limit). */
static int inbuf_read(int fd, struct inbuf *in, int flags)
{
	if (in->len >= sizeof(in->buf) - 1)
		return -E2BIG;
	ssize_t n = bee_recv_fds(fd, in->buf + in->len, sizeof(in->buf) - 1 - in->len, flags, in->fds, &in->nfds, &in->extra);
	if (n < 0)
		return (int)n;
	if (n == 0)
		return 0;
	in->len += (size_t)n;
	in->buf[in->len] = '\0';
	return 1;
}

static json_t *error_reply(enum bee_serve_error which, const char *msg, const struct bee_error *e)
{
	json_t *o = json_object(), *er = json_object();
	json_object_set_new(er, "name", json_string(bee_serve_error_name(which)));
	json_object_set_new(er, "message", json_string(msg));
	if (e) {
		json_object_set_new(er, "stage", json_string(bee_stage__name(e->stage)));
		json_object_set_new(er, "err", json_integer(e->err));
	}
	json_object_set_new(o, "bee", json_integer(BEE_SERVE_PROTO));
	json_object_set_new(o, "error", er);
	return o;
}

static json_t *ok_reply(void)
{
	json_t *o = json_object();
	json_object_set_new(o, "bee", json_integer(BEE_SERVE_PROTO));
	return o;
}

/* ---- the service's state ------------------------------------------------------------- */

struct peer {
	uid_t uid;
	gid_t gid;
	pid_t pid;
	char parent[32];            /* the session the client runs inside; "" for none */
	int64_t t0;                 /* CLOCK_MONOTONIC ns: accepted, then the request read (the log's "us") */
};

struct client {
	int fd;
	struct peer p;
	struct inbuf *in;
	int64_t since;              /* accepted, CLOCK_MONOTONIC ns */
};

struct serve {
	char socket[PATH_MAX], state_dir[PATH_MAX], owners[PATH_MAX], uploads[PATH_MAX], log[PATH_MAX];
	gid_t gid;
	int lfd, sfd, logfd;
	bool inherited;             /* the socket is systemd's: left in place */
	struct client c[CLIENTS_MAX];
	size_t n;
	size_t workers;
	bee_warn_fn warn;
	void *warn_ctx;
};

/* ---- the requests' log --------------------------------------------------------------- */

static void log_request(struct serve *s, const struct peer *p, const char *method, const char *sid, const char *result,
			const char *msg)
{
	if (s->logfd < 0)
		return;
	char ts[40];
	bee_utc_iso(bee_clock_ns(CLOCK_REALTIME), ts, sizeof(ts));
	json_t *o = json_object();
	json_object_set_new(o, "ts", json_string(ts));
	json_object_set_new(o, "uid", json_integer(p->uid));
	json_object_set_new(o, "gid", json_integer(p->gid));
	json_object_set_new(o, "pid", json_integer(p->pid));
	if (p->parent[0])
		json_object_set_new(o, "inside", json_string(p->parent));
	json_object_set_new(o, "method", json_string(method ? method : "?"));
	if (sid)
		json_object_set_new(o, "session", json_string(sid));
	json_object_set_new(o, "result", json_string(result));
	if (p->t0)
		json_object_set_new(o, "us", json_integer((bee_clock_ns(CLOCK_MONOTONIC) - p->t0) / 1000));
	if (msg)
		json_object_set_new(o, "message", json_string(msg));
	char *text = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
	if (!text)
		return;
	size_t len = strlen(text);
	char *line = realloc(text, len + 2);
	if (!line) {
		free(text);
		return;
	}
	line[len++] = '\n';
	/* O_APPEND and one write a line: the workers' lines never interleave */
	if (write(s->logfd, line, len) != (ssize_t)len)
		bee_warnf(s->warn, s->warn_ctx, "requests' log '%s': %s", s->log, strerror(errno));
	free(line);
}

/* ---- owners -------------------------------------------------------------------------- */

struct owner {
	uid_t uid;
	gid_t gid;
	char parent[32];
};

static int owner_path(const struct serve *s, const char *sid, char *buf, size_t size)
{
	return snprintf(buf, size, "%s/%s.json", s->owners, sid) >= (int)size ? -ENAMETOOLONG : 0;
}

static int owner_read(const struct serve *s, const char *sid, struct owner *o)
{
	char path[PATH_MAX];
	json_error_t je;
	int err = owner_path(s, sid, path, sizeof(path));
	if (err)
		return err;
	json_t *j = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
	if (!j)
		return -ENOENT;
	json_t *u = json_object_get(j, "uid"), *g = json_object_get(j, "gid");
	const char *par = json_string_value(json_object_get(j, "parent"));
	err = json_is_integer(u) && json_is_integer(g) && par ? 0 : -EINVAL;
	if (!err) {
		o->uid = (uid_t)json_integer_value(u);
		o->gid = (gid_t)json_integer_value(g);
		snprintf(o->parent, sizeof(o->parent), "%s", par);
	}
	json_decref(j);
	return err;
}

static int owner_write(const struct serve *s, const char *sid, const struct peer *p)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8];
	int err = owner_path(s, sid, path, sizeof(path));
	if (err)
		return err;
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	json_t *j = json_object();
	json_object_set_new(j, "uid", json_integer(p->uid));
	json_object_set_new(j, "gid", json_integer(p->gid));
	json_object_set_new(j, "parent", json_string(p->parent));
	err = json_dump_file(j, tmp, JSON_COMPACT | JSON_PRESERVE_ORDER) < 0 ? -EIO : 0;
	json_decref(j);
	if (!err && rename(tmp, path) < 0)
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

/* May p control session sid? root: every session; others: the sessions
 * they started (and their tools started through the service); a client
 * inside a session: the sessions it started from there, never its own
 * session or a sibling. */
static bool owner_allows(const struct serve *s, const struct peer *p, const char *sid)
{
	struct owner o;
	if (p->uid == 0 && !p->parent[0])
		return true;
	if (owner_read(s, sid, &o) < 0)
		return false;
	/* outside any session, a user's are all it started, its tools' too */
	return o.uid == p->uid && (!p->parent[0] || strcmp(o.parent, p->parent) == 0);
}

/* Owner records whose session is gone (gc removed its record): removed. */
static void owners_prune(struct serve *s)
{
	char **ids = NULL;
	size_t n = 0;
	DIR *d = opendir(s->owners);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		if (len < 6 || strcmp(de->d_name + len - 5, ".json") != 0)
			continue;
		char sid[64];
		snprintf(sid, sizeof(sid), "%.*s", (int)(len - 5), de->d_name);
		struct bee_registry_entry r;
		int err = bee_registry_read(s->state_dir, sid, &r);
		bee_registry_entry_fini(&r);
		if (err != -ENOENT)
			continue;
		char **nv = realloc(ids, (n + 1) * sizeof(char *));
		if (!nv)
			break;
		ids = nv;
		ids[n++] = strdup(de->d_name);
	}
	closedir(d);
	for (size_t i = 0; i < n; i++) {
		char path[PATH_MAX];
		if (ids[i] && snprintf(path, sizeof(path), "%s/%s", s->owners, ids[i]) < (int)sizeof(path))
			unlink(path);
		free(ids[i]);
	}
	free(ids);
}

/* ---- who the client is --------------------------------------------------------------- */

static bool in_group(int fd, gid_t primary, gid_t want)
{
	if (primary == want)
		return true;
	gid_t g[256];
	socklen_t len = sizeof(g);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, g, &len) < 0)
		return false;
	for (size_t i = 0; i < len / sizeof(gid_t); i++)
		if (g[i] == want)
			return true;
	return false;
}

/* The live session whose cgroup holds cgroup cg (the innermost), into sid;
 * 0 when none. */
static int session_around(const struct serve *s, const char *cg, char *sid, size_t size, char *pack, size_t psize)
{
	char **ids = NULL;
	size_t n = 0, best = 0;
	sid[0] = '\0';
	if (!strstr(cg, "/bee-"))
		return 0;
	int err = bee_registry_ids(s->state_dir, &ids, &n);
	if (err)
		return err == -ENOENT ? 0 : err;
	for (size_t i = 0; i < n; i++) {
		struct bee_registry_entry r;
		if (bee_registry_read(s->state_dir, ids[i], &r) == 0) {
			size_t len = strlen(r.cgroup);
			if (len && len > best && strncmp(cg, r.cgroup, len) == 0 && (cg[len] == '/' || !cg[len])) {
				best = len;
				snprintf(sid, size, "%s", r.id);
				snprintf(pack, psize, "%s", r.pack);
			}
		}
		bee_registry_entry_fini(&r);
		free(ids[i]);
	}
	free(ids);
	/* a cgroup named like a session's that no record explains (a session
	 * of another state directory): refused, never taken as outside */
	return best ? 0 : -EACCES;
}

/* The "0::" line of /proc/PID/cgroup: the path below the cgroup v2 root,
 * read without mountinfo (the common case: no session anywhere in it). */
static int cgroup_rel(pid_t pid, char *out, size_t size)
{
	char path[64], buf[PATH_MAX + 64];
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	int err = n < 0 ? -errno : 0;
	close(fd);
	if (err)
		return err;
	buf[n] = '\0';
	for (char *line = buf, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (strncmp(line, "0::", 3) == 0)
			return snprintf(out, size, "%s", line + 3) >= (int)size ? -ENAMETOOLONG : 0;
	}
	return -ENOENT;
}

/* Who connected on fd; -1 with msg when refused. */
static int peer_identify(struct serve *s, int fd, struct peer *p, char *msg, size_t size)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);
	int64_t t0 = p->t0;
	memset(p, 0, sizeof(*p));
	p->t0 = t0;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0) {
		snprintf(msg, size, "cannot read the client's credentials: %s", strerror(errno));
		return -1;
	}
	p->uid = cr.uid;
	p->gid = cr.gid;
	p->pid = cr.pid;
	if (cr.uid != 0 && !in_group(fd, cr.gid, s->gid)) {
		snprintf(msg, size, "uid %u is neither root nor in the service's group (gid %u)", (unsigned)cr.uid,
			 (unsigned)s->gid);
		return -1;
	}
	/* the pid names the same process from here to the check below: the
	 * kernel's pidfd of the connecting process where it has one (6.5),
	 * which a pid reused after the client died cannot stand for */
	int pidfd = -1;
	socklen_t plen = sizeof(pidfd);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD_, &pidfd, &plen) < 0)
		pidfd = (int)syscall(SYS_pidfd_open, cr.pid, 0);
	if (pidfd < 0) {
		snprintf(msg, size, "the client (pid %d) is gone", (int)cr.pid);
		return -1;
	}
	char cg[PATH_MAX], pack[PATH_MAX] = "";
	int err = cgroup_rel(cr.pid, cg, sizeof(cg));
	/* a session's cgroup is named bee-POLICY-ID: only then the registry */
	if (!err && strstr(cg, "/bee-") && !(err = bee_cgroup_of(cr.pid, cg, sizeof(cg))))
		err = session_around(s, cg, p->parent, sizeof(p->parent), pack, sizeof(pack));
	if (!err && syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) < 0)
		err = -ESRCH;
	close(pidfd);
	if (err) {
		snprintf(msg, size, "cannot tell whether the client (pid %d) runs inside a session: %s", (int)cr.pid,
			 strerror(-err));
		return -1;
	}
	if (!p->parent[0])
		return 0;
	/* inside a session: only with a grant of the socket, as a subset */
	struct bee_decision d;
	struct bee_error e;
	if (!pack[0] || bee_decision__query(pack, "fs", "write", s->socket, &d, &e) < 0) {
		snprintf(msg, size, "the client runs inside session %s, whose policy cannot be read: %.200s", p->parent,
			 pack[0] ? e.msg : "no pack");
		return -1;
	}
	bool allow = d.allow;
	bee_decision__fini(&d);
	if (!allow) {
		snprintf(msg, size, "the client runs inside session %s, whose policy does not grant 'fs.write %.200s'",
			 p->parent, s->socket);
		return -1;
	}
	return 0;
}

/* ---- the methods --------------------------------------------------------------------- */

/* exec and stop: a connection to the supervisor, handed over. */
static void do_connect(struct serve *s, struct client *c, const struct bee_serve_req *r)
{
	struct bee_error e;
	const char *m = bee_serve_method_name(r->method);
	if (!owner_allows(s, &c->p, r->session)) {
		/* never says whether someone else's session exists */
		char msg[128];
		snprintf(msg, sizeof(msg), "no session '%s' of yours", r->session);
		line_send(c->fd, error_reply(BEE_SERVE_E_NO_SESSION, msg, NULL), -1);
		log_request(s, &c->p, m, r->session, "refused", msg);
		return;
	}
	int sfd;
	if (bee_session_connect(s->state_dir, r->session, &sfd, &e) < 0) {
		line_send(c->fd, error_reply(BEE_SERVE_E_FAILED, e.msg, &e), -1);
		log_request(s, &c->p, m, r->session, "failed", e.msg);
		return;
	}
	json_t *o = ok_reply();
	json_object_set_new(o, "connected", json_string(r->session));
	int err = line_send(c->fd, o, sfd);
	close(sfd);
	log_request(s, &c->p, m, r->session, err ? "failed" : "connected", err ? strerror(-err) : NULL);
}

static void do_ls(struct serve *s, struct client *c)
{
	struct bee_session_info *v;
	size_t n;
	struct bee_error e;
	owners_prune(s);
	if (bee_sessions__list(s->state_dir, &v, &n, &e) < 0) {
		line_send(c->fd, error_reply(BEE_SERVE_E_FAILED, e.msg, &e), -1);
		log_request(s, &c->p, "ls", NULL, "failed", e.msg);
		return;
	}
	json_t *o = ok_reply(), *a = json_array();
	for (size_t i = 0; i < n; i++) {
		if (!owner_allows(s, &c->p, v[i].id))
			continue;
		json_t *j = json_object();
		json_object_set_new(j, "id", json_string(v[i].id));
		json_object_set_new(j, "live", json_boolean(v[i].live));
		json_object_set_new(j, "pid", json_integer(v[i].pid));
		json_object_set_new(j, "tool_pid", json_integer(v[i].tool_pid));
		json_object_set_new(j, "policy", json_string(v[i].policy));
		json_object_set_new(j, "backend", json_string(v[i].backend));
		json_object_set_new(j, "started", json_string(v[i].started));
		json_object_set_new(j, "cgroup", json_string(v[i].cgroup));
		json_object_set_new(j, "bpffs", json_string(v[i].bpffs));
		json_object_set_new(j, "audit_log", json_string(v[i].audit_log));
		json_object_set_new(j, "revoked", json_integer(v[i].nrevoked));
		json_object_set_new(j, "digest", json_string(v[i].digest));
		json_object_set_new(j, "supervised", json_boolean(v[i].supervised));
		json_object_set_new(j, "commands", json_integer((json_int_t)v[i].commands));
		json_object_set_new(j, "audit_written", json_integer((json_int_t)v[i].audit_written));
		json_object_set_new(j, "audit_lost", json_integer((json_int_t)v[i].audit_lost));
		struct owner ow;
		if (owner_read(s, v[i].id, &ow) == 0)
			json_object_set_new(j, "owner", json_integer(ow.uid));
		json_array_append_new(a, j);
	}
	free(v);
	json_object_set_new(o, "sessions", a);
	line_send(c->fd, o, -1);
	log_request(s, &c->p, "ls", NULL, "ok", NULL);
}

/* The client's pack, from its descriptor, into a file of the service's. */
static int upload_pack(struct serve *s, int in, char *path, size_t size, struct bee_error *e)
{
	struct stat st;
	if (fstat(in, &st) < 0 || !S_ISREG(st.st_mode))
		return bee_fail(e, BEE_STAGE_PACK, -EINVAL, "start: the pack's descriptor is not a regular file");
	if (st.st_size > (off_t)BEE_SERVE_PACK_MAX)
		return bee_fail(e, BEE_STAGE_PACK, -EFBIG, "start: a pack of %lld bytes, more than %u",
				(long long)st.st_size, BEE_SERVE_PACK_MAX);
	if (snprintf(path, size, "%s/%d.bpfpack", s->uploads, (int)getpid()) >= (int)size)
		return bee_fail(e, BEE_STAGE_PACK, -ENAMETOOLONG, "start: '%s': too long", s->uploads);
	int out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (out < 0)
		return bee_fail(e, BEE_STAGE_PACK, -errno, "start: '%s': %s", path, strerror(errno));
	char buf[65536];
	off_t total = 0;
	ssize_t n;
	int err = 0;
	while ((n = pread(in, buf, sizeof(buf), total)) > 0) {
		total += n;
		if (total > (off_t)BEE_SERVE_PACK_MAX || write(out, buf, (size_t)n) != n) {
			err = total > (off_t)BEE_SERVE_PACK_MAX ? -EFBIG : -EIO;
			break;
		}
	}
	if (n < 0)
		err = -errno;
	close(out);
	if (err) {
		unlink(path);
		return bee_fail(e, BEE_STAGE_PACK, err, "start: cannot read the pack: %s", strerror(-err));
	}
	return 0;
}

/* The tool's user: the client's own (by name, for its groups), unless root
 * asks for another; "" for root's default (bee-load's: SUDO_UID, else nobody). */
static int start_user(const struct peer *p, const struct bee_serve_req *r, char *buf, size_t size,
		      struct bee_error *e)
{
	if (r->user) {
		if (p->uid != 0)
			return bee_fail(e, BEE_STAGE_USER, -EPERM, "start: only root may name the tool's user");
		snprintf(buf, size, "%s", r->user);
		return 0;
	}
	if (p->uid == 0) {
		buf[0] = '\0';   /* root's session: bee-load's default user, as without the service */
		return 0;
	}
	struct passwd *pw = getpwuid(p->uid);
	if (pw && pw->pw_gid == p->gid)
		snprintf(buf, size, "%s", pw->pw_name);
	else
		snprintf(buf, size, "%u:%u", (unsigned)p->uid, (unsigned)p->gid);
	return 0;
}

static void worker_warn(void *ctx, const char *msg)
{
	json_array_append_new(ctx, json_string(msg));
}

static void do_start(struct serve *s, struct client *c, const struct bee_serve_req *r, int packfd)
{
	struct bee_error e;
	char path[PATH_MAX] = "", user[300], sid[32];
	json_t *warnings = json_array();
	enum bee_backend be = BEE_BACKEND_AUTO;
	if (r->backend && bee_backend__parse(r->backend, &be) < 0) {
		bee_fail(&e, BEE_STAGE_USAGE, -EINVAL, "start: 'backend' must be auto, bpf-lsm or landlock");
		goto fail;
	}
	if (start_user(&c->p, r, user, sizeof(user), &e) < 0 || upload_pack(s, packfd, path, sizeof(path), &e) < 0)
		goto fail;
	/* a client inside a session starts only a subset of it */
	if (c->p.parent[0]) {
		char cg[PATH_MAX];
		int err = bee_cgroup_of(c->p.pid, cg, sizeof(cg));
		if (err) {
			bee_fail(&e, BEE_STAGE_NESTING, err, "start: the client's cgroup: %s", strerror(-err));
			goto fail;
		}
		if (bee_nesting_check_file_at(path, s->state_dir, cg, worker_warn, warnings, &e) < 0)
			goto fail;
	}
	struct bee_session_opts o = {
		.sz = sizeof(o), .backend = be, .context = r->env, .ncontext = r->nenv,
		.audit_detail = r->audit_detail, .state_dir = s->state_dir, .warn = worker_warn, .warn_ctx = warnings,
		.no_landlock_hardening = r->no_landlock_hardening, .landlock_fallback = true,
		.user = user[0] ? user : NULL,
	};
	if (bee_session_start(path, &o, sid, &e) < 0)
		goto fail;
	unlink(path);
	if (owner_write(s, sid, &c->p) < 0) {
		/* a session no one may reach but root: ended rather than kept */
		bee_session_stop(sid, &o, NULL);
		bee_fail(&e, BEE_STAGE_REGISTRY, -EIO, "start: cannot record the session's owner under '%s'", s->owners);
		goto fail;
	}
	json_t *ok = ok_reply();
	json_object_set_new(ok, "session", json_string(sid));
	json_object_set_new(ok, "warnings", warnings);
	line_send(c->fd, ok, -1);
	log_request(s, &c->p, "start", sid, "ok", NULL);
	return;
fail:
	if (path[0])
		unlink(path);
	json_t *er = error_reply(BEE_SERVE_E_FAILED, e.msg, &e);
	json_object_set_new(er, "warnings", warnings);
	line_send(c->fd, er, -1);
	log_request(s, &c->p, "start", NULL, "failed", e.msg);
}

static void do_revoke(struct serve *s, struct client *c, const struct bee_serve_req *r)
{
	struct bee_error e;
	struct bee_revoke_result res;
	if (!owner_allows(s, &c->p, r->session)) {
		char msg[128];
		snprintf(msg, sizeof(msg), "no session '%s' of yours", r->session);
		line_send(c->fd, error_reply(BEE_SERVE_E_NO_SESSION, msg, NULL), -1);
		log_request(s, &c->p, "revoke", r->session, "refused", msg);
		return;
	}
	struct bee_revoke_opts o = { .sz = sizeof(o), .state_dir = s->state_dir };
	if (bee_sessions__revoke(r->session, r->rule, &o, &res, &e) < 0) {
		line_send(c->fd, error_reply(BEE_SERVE_E_FAILED, e.msg, &e), -1);
		log_request(s, &c->p, "revoke", r->session, "failed", e.msg);
		return;
	}
	json_t *ok = ok_reply(), *rv = json_object();
	json_object_set_new(rv, "rule", json_integer(res.rule));
	json_object_set_new(rv, "text", json_string(res.text));
	json_object_set_new(rv, "exact", json_boolean(res.exact));
	json_object_set_new(rv, "note", json_string(res.note));
	json_object_set_new(ok, "revoked", rv);
	line_send(c->fd, ok, -1);
	log_request(s, &c->p, "revoke", r->session, "ok", res.text);
}

/* start and revoke in a process of their own: the service keeps serving. */
static void run_worker(struct serve *s, struct client *c, const struct bee_serve_req *r)
{
	if (s->workers >= WORKERS_MAX) {
		line_send(c->fd, error_reply(BEE_SERVE_E_BUSY, "too many starts and revokes at once", NULL), -1);
		log_request(s, &c->p, bee_serve_method_name(r->method), r->session, "refused", "busy");
		return;
	}
	pid_t w = fork();
	if (w < 0) {
		line_send(c->fd, error_reply(BEE_SERVE_E_BUSY, strerror(errno), NULL), -1);
		return;
	}
	if (w > 0) {
		s->workers++;
		return;
	}
	/* the worker: the service's signals back to normal, its descriptors
	 * but this client's and the log closed (the supervisor closes the rest) */
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	close(s->lfd);
	close(s->sfd);
	for (size_t i = 0; i < s->n; i++)
		if (&s->c[i] != c)
			close(s->c[i].fd);
	if (r->method == BEE_SERVE_START)
		do_start(s, c, r, c->in->fds[0]);
	else
		do_revoke(s, c, r);
	_exit(0);
}

static void client_request(struct serve *s, struct client *c, const char *line, size_t len)
{
	struct bee_serve_req r;
	enum bee_serve_error which;
	char msg[256];
	size_t nfds = c->in->extra ? 99 : c->in->nfds;
	if (bee_serve_req_parse(line, len, nfds, &r, &which, msg, sizeof(msg)) < 0) {
		line_send(c->fd, error_reply(which, msg, NULL), -1);
		log_request(s, &c->p, r.doc ? json_string_value(json_object_get(r.doc, "method")) : NULL, NULL,
			    "refused", msg);
		bee_serve_req_fini(&r);
		return;
	}
	switch (r.method) {
	case BEE_SERVE_EXEC:
	case BEE_SERVE_STOP:
		do_connect(s, c, &r);
		break;
	case BEE_SERVE_LS:
		do_ls(s, c);
		break;
	case BEE_SERVE_START:
	case BEE_SERVE_REVOKE:
		run_worker(s, c, &r);
		break;
	case BEE_SERVE_VFS:
		line_send(c->fd,
			  error_reply(BEE_SERVE_E_UNSUPPORTED, "vfs: this service has no overlay sessions yet (bee-load vfs)",
				      NULL),
			  -1);
		log_request(s, &c->p, "vfs", r.session, "refused", "unsupported");
		break;
	case BEE_SERVE_DESCRIBE: {
		json_t *o = ok_reply();
		json_object_set_new(o, "describe", bee_serve_describe());
		line_send(c->fd, o, -1);
		log_request(s, &c->p, "describe", NULL, "ok", NULL);
		break;
	}
	case BEE_SERVE_METHOD_COUNT:
		break;
	}
	bee_serve_req_fini(&r);
}

static void client_drop(struct serve *s, size_t i)
{
	struct client *c = &s->c[i];
	close(c->fd);
	inbuf_close_fds(c->in);
	free(c->in);
	s->c[i] = s->c[--s->n];
}

/* 1 when the client is done (answered, or gone). */
static int client_input(struct serve *s, struct client *c)
{
	int r = inbuf_read(c->fd, c->in, MSG_DONTWAIT);
	if (r == -EAGAIN)
		return 0;
	if (r == -E2BIG) {
		line_send(c->fd, error_reply(BEE_SERVE_E_PROTOCOL, "a request longer than 65535 bytes", NULL), -1);
		log_request(s, &c->p, NULL, NULL, "refused", "too long");
		return 1;
	}
	if (r <= 0)
		return 1;
	char *nl = memchr(c->in->buf, '\n', c->in->len);
	if (!nl)
		return 0;
	c->p.t0 = bee_clock_ns(CLOCK_MONOTONIC);
	client_request(s, c, c->in->buf, (size_t)(nl - c->in->buf));
	return 1;   /* one request a connection */
}

static void client_accept(struct serve *s)
{
	int fd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0)
		return;
	struct client c = { .fd = fd, .p.t0 = bee_clock_ns(CLOCK_MONOTONIC), .since = bee_clock_ns(CLOCK_MONOTONIC) };
	char msg[512];
	if (peer_identify(s, fd, &c.p, msg, sizeof(msg)) < 0) {
		line_send(fd, error_reply(BEE_SERVE_E_DENIED, msg, NULL), -1);
		log_request(s, &c.p, NULL, NULL, "refused", msg);
		close(fd);
		return;
	}
	if (s->n == CLIENTS_MAX || !(c.in = calloc(1, sizeof(*c.in)))) {
		line_send(fd, error_reply(BEE_SERVE_E_BUSY, "too many clients at once", NULL), -1);
		close(fd);
		return;
	}
	s->c[s->n++] = c;
}

/* ---- setup ---------------------------------------------------------------------------- */

/* A folder of bee's own, root's with mode and group gid: made when
 * missing; an existing one is changed only when mine says it is bee's (the
 * state directory, its serve/ folders), else it must be so already: the
 * service never chmods a folder such as /run or /tmp that --socket names. */
static int mkdir_owned(const char *path, mode_t mode, gid_t gid, bool mine)
{
	bool made = mkdir(path, mode) == 0;
	if (!made && errno != EEXIST)
		return -errno;
	struct stat st;
	if (lstat(path, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (!made && !mine && (st.st_uid != 0 || st.st_gid != gid || (st.st_mode & 07777) != mode))
		return -EPERM;
	if (chown(path, 0, gid) < 0 || chmod(path, mode) < 0)
		return -errno;
	return 0;
}

/* A socket systemd made (bee.socket): LISTEN_FDS=1 for this pid, fd 3. */
static int serve_inherited(void)
{
	const char *pid = getenv("LISTEN_PID"), *n = getenv("LISTEN_FDS");
	if (!pid || !n || atol(pid) != (long)getpid() || strcmp(n, "1") != 0)
		return -1;
	int type = 0;
	socklen_t len = sizeof(type);
	if (getsockopt(3, SOL_SOCKET, SO_TYPE, &type, &len) < 0 || type != SOCK_STREAM)
		return -1;
	fcntl(3, F_SETFD, FD_CLOEXEC);
	fcntl(3, F_SETFL, fcntl(3, F_GETFL) | O_NONBLOCK);
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	return 3;
}

static int serve_listen(struct serve *s, struct bee_error *e)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	if ((s->lfd = serve_inherited()) >= 0) {
		/* systemd made it, with the unit's mode and group; the path is
		 * still what nesting checks grants against */
		struct sockaddr_un got;
		socklen_t len = sizeof(got);
		if (getsockname(s->lfd, (struct sockaddr *)&got, &len) == 0 && got.sun_path[0])
			snprintf(s->socket, sizeof(s->socket), "%s", got.sun_path);
		s->inherited = true;
	}
	/* its folder: root's, the group may pass through it but not list it
	 * (/run/bee 0710 root:bee, the state directory by default) */
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s", s->socket);
	char *slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return bee_fail(e, BEE_STAGE_SUPERVISOR, -EINVAL, "serve: socket '%s': an absolute path in a folder of its own",
				s->socket);
	*slash = '\0';
	int err = mkdir_owned(dir, 0710, s->gid, strcmp(dir, s->state_dir) == 0);
	if (err)
		return bee_fail(e, BEE_STAGE_SUPERVISOR, err, "serve: folder '%s': %s%s", dir, strerror(-err),
				err == -EPERM ? " (the socket's folder: bee's state directory, a new one, or one that is "
						"0710 root:GROUP already)"
					      : "");
	if (s->inherited)
		return 0;
	if (strlen(s->socket) >= sizeof(sa.sun_path))
		return bee_fail(e, BEE_STAGE_SUPERVISOR, -ENAMETOOLONG, "serve: socket '%s': name too long", s->socket);
	memcpy(sa.sun_path, s->socket, strlen(s->socket) + 1);
	s->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s->lfd < 0)
		return bee_fail(e, BEE_STAGE_SUPERVISOR, -errno, "serve: socket: %s", strerror(errno));
	/* a live service on it is not replaced */
	if (connect(s->lfd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
		return bee_fail(e, BEE_STAGE_SUPERVISOR, -EADDRINUSE, "serve: '%s': a service answers there already",
				s->socket);
	close(s->lfd);
	s->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	unlink(s->socket);
	mode_t old = umask(0177);
	int r = s->lfd < 0 ? -1 : bind(s->lfd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (r < 0 || chown(s->socket, 0, s->gid) < 0 || chmod(s->socket, 0660) < 0 || listen(s->lfd, 512) < 0)
		return bee_fail(e, BEE_STAGE_SUPERVISOR, -errno, "serve: socket '%s': %s", s->socket, strerror(errno));
	return 0;
}

static int serve_setup(struct serve *s, const struct bee_serve_opts *o, struct bee_error *e)
{
	const char *gname = o->group ? o->group : BEE_SERVE_GROUP;
	struct group *gr = getgrnam(gname);
	int err;
	if (geteuid() != 0)
		return bee_fail(e, BEE_STAGE_SUPERVISOR, -EPERM, "serve: the session service runs as root");
	if (!gr)
		return bee_fail(e, BEE_STAGE_SUPERVISOR, -ENOENT, "serve: no group '%s' (addgroup --system %s)", gname,
				gname);
	s->gid = gr->gr_gid;
	snprintf(s->socket, sizeof(s->socket), "%s", o->socket ? o->socket : BEE_SERVE_SOCKET);
	snprintf(s->state_dir, sizeof(s->state_dir), "%s", bee_state_dir(o->state_dir));
	if ((err = bee_state_dir_secure(s->state_dir, e)) < 0)
		return err;
	char serve_dir[PATH_MAX];
	if (snprintf(serve_dir, sizeof(serve_dir), "%s/serve", s->state_dir) >= (int)sizeof(serve_dir) ||
	    snprintf(s->owners, sizeof(s->owners), "%s/owners", serve_dir) >= (int)sizeof(s->owners) ||
	    snprintf(s->uploads, sizeof(s->uploads), "%s/uploads", serve_dir) >= (int)sizeof(s->uploads))
		return bee_fail(e, BEE_STAGE_SUPERVISOR, -ENAMETOOLONG, "serve: state directory '%s': too long",
				s->state_dir);
	if ((err = mkdir_owned(serve_dir, 0700, 0, true)) < 0 || (err = mkdir_owned(s->owners, 0700, 0, true)) < 0 ||
	    (err = mkdir_owned(s->uploads, 0700, 0, true)) < 0)
		return bee_fail(e, BEE_STAGE_SUPERVISOR, err, "serve: '%s': %s", serve_dir, strerror(-err));
	if (o->log)
		snprintf(s->log, sizeof(s->log), "%s", o->log);
	else if (snprintf(s->log, sizeof(s->log), "%s/requests.jsonl", serve_dir) >= (int)sizeof(s->log))
		return bee_fail(e, BEE_STAGE_AUDIT, -ENAMETOOLONG, "serve: '%s': too long", serve_dir);
	s->logfd = open(s->log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (s->logfd < 0)
		return bee_fail(e, BEE_STAGE_AUDIT, -errno, "serve: requests' log '%s': %s", s->log, strerror(errno));
	owners_prune(s);
	return serve_listen(s, e);
}

int bee_serve_run(const struct bee_serve_opts *opts, struct bee_error *e)
{
	struct bee_serve_opts o = { 0 };
	if (bee_opts_copy(&o, sizeof(o), opts) < 0)
		return bee_fail(e, BEE_STAGE_USAGE, -EINVAL, "bee_serve_opts: unknown fields set");
	struct serve *s = calloc(1, sizeof(*s));
	if (!s)
		return bee_fail(e, BEE_STAGE_SUPERVISOR, -ENOMEM, "out of memory");
	s->lfd = s->sfd = s->logfd = -1;
	s->warn = o.warn;
	s->warn_ctx = o.warn_ctx;
	sigset_t sigs;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGCHLD);
	sigaddset(&sigs, SIGHUP);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);
	s->sfd = signalfd(-1, &sigs, SFD_CLOEXEC | SFD_NONBLOCK);
	int err = s->sfd < 0 ? bee_fail(e, BEE_STAGE_SUPERVISOR, -errno, "serve: signalfd: %s", strerror(errno))
			     : serve_setup(s, &o, e);
	bool quit = false;
	while (!err && !quit) {
		struct pollfd p[CLIENTS_MAX + 2];
		p[0] = (struct pollfd){ .fd = s->lfd, .events = POLLIN };
		p[1] = (struct pollfd){ .fd = s->sfd, .events = POLLIN };
		for (size_t i = 0; i < s->n; i++)
			p[i + 2] = (struct pollfd){ .fd = s->c[i].fd, .events = POLLIN };
		if (poll(p, s->n + 2, s->n ? 1000 : -1) < 0 && errno != EINTR) {
			err = bee_fail(e, BEE_STAGE_SUPERVISOR, -errno, "serve: poll: %s", strerror(errno));
			break;
		}
		struct signalfd_siginfo si;
		while (read(s->sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
			if (si.ssi_signo == SIGCHLD) {
				while (waitpid(-1, NULL, WNOHANG) > 0)
					s->workers--;
			} else if (si.ssi_signo != SIGHUP) {
				quit = true;
			}
		}
		/* from the end: client_drop moves the last one into i; a client
		 * that holds a connection without a request is dropped */
		int64_t now = bee_clock_ns(CLOCK_MONOTONIC);
		for (size_t i = s->n; i-- > 0;) {
			if (p[i + 2].revents && client_input(s, &s->c[i])) {
				client_drop(s, i);
			} else if (now - s->c[i].since > (int64_t)IDLE_MS * 1000000) {
				line_send(s->c[i].fd, error_reply(BEE_SERVE_E_PROTOCOL, "no request in 10 s", NULL), -1);
				log_request(s, &s->c[i].p, NULL, NULL, "refused", "idle");
				client_drop(s, i);
			}
		}
		if (p[0].revents & POLLIN)
			for (int k = 0; k < 64 && s->n < CLIENTS_MAX; k++) {
				size_t before = s->n;
				client_accept(s);
				if (s->n == before && errno == EAGAIN)
					break;
			}
	}
	/* the sessions outlive the service: their supervisors keep them, and
	 * a restarted service finds them by their owners' records */
	if (s->lfd >= 0) {
		close(s->lfd);
		if (!s->inherited)
			unlink(s->socket);
	}
	while (s->n)
		client_drop(s, s->n - 1);
	if (s->sfd >= 0)
		close(s->sfd);
	if (s->logfd >= 0)
		close(s->logfd);
	free(s);
	return err;
}

/* ---- the client ------------------------------------------------------------------------ */

const char *bee_serve_socket_path(const char *opt)
{
	if (opt && *opt)
		return opt;
	const char *env = getenv("BEE_SOCKET");
	return env && *env ? env : BEE_SERVE_SOCKET;
}

bool bee_serve_wanted(const char *opt)
{
	const char *env = getenv("BEE_SOCKET");
	return (opt && *opt) || (env && *env) || geteuid() != 0;
}

int bee_serve_connect(const char *path, int *out, struct bee_error *e)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	*out = -1;
	if (strlen(path) >= sizeof(sa.sun_path))
		return bee_fail(e, BEE_STAGE_SESSION, -ENAMETOOLONG, "session service '%s': name too long", path);
	memcpy(sa.sun_path, path, strlen(path) + 1);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int err = -errno;
		if (fd >= 0)
			close(fd);
		return bee_fail(e, BEE_STAGE_SESSION, err, "session service '%s': %s%s", path, strerror(-err),
				err == -EACCES ? " (not in group '" BEE_SERVE_GROUP "'?)"
				: err == -ENOENT || err == -ECONNREFUSED
					? " (is 'bee-load serve' running? without it, run bee-load as root)"
					: "");
	}
	struct ucred cr;
	socklen_t len = sizeof(cr);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0 || cr.uid != 0) {
		close(fd);
		return bee_fail(e, BEE_STAGE_SESSION, -EPERM, "session service '%s': held by uid %u, not by root", path,
				(unsigned)cr.uid);
	}
	/* above 2: it must never become a tool's stdio */
	if (fd < 3) {
		int hi = fcntl(fd, F_DUPFD_CLOEXEC, 3);
		close(fd);
		if ((fd = hi) < 0)
			return bee_fail(e, BEE_STAGE_SESSION, -errno, "session service: %s", strerror(errno));
	}
	*out = fd;
	return 0;
}

json_t *bee_serve_request(const char *method)
{
	json_t *o = json_object();
	json_object_set_new(o, "bee", json_integer(BEE_SERVE_PROTO));
	json_object_set_new(o, "method", json_string(method));
	return o;
}

static enum bee_stage stage_named(const char *name, enum bee_stage dflt)
{
	for (int s = 0; s < BEE_STAGE_COUNT; s++)
		if (name && strcmp(name, bee_stage__name((enum bee_stage)s)) == 0)
			return (enum bee_stage)s;
	return dflt;
}

int bee_serve_call(int fd, json_t *req, const int *fds, size_t nfds, json_t **reply, int *rfd,
		   struct bee_error *e)
{
	*reply = NULL;
	if (rfd)
		*rfd = -1;
	if (nfds > 1) {
		json_decref(req);
		return bee_fail(e, BEE_STAGE_USAGE, -EINVAL, "session service: one descriptor a request");
	}
	int err = line_send(fd, req, nfds ? fds[0] : -1);
	if (err)
		return bee_fail(e, BEE_STAGE_SESSION, err, "session service: cannot send the request: %s", strerror(-err));
	struct inbuf *in = calloc(1, sizeof(*in));
	if (!in)
		return bee_fail(e, BEE_STAGE_SESSION, -ENOMEM, "out of memory");
	char *nl = NULL;
	while (!nl) {
		int r = inbuf_read(fd, in, 0);
		if (r <= 0) {
			inbuf_close_fds(in);
			free(in);
			return bee_fail(e, BEE_STAGE_SESSION, r ? r : -EPIPE, "session service: no answer: %s",
					r ? strerror(-r) : "it closed the connection");
		}
		nl = memchr(in->buf, '\n', in->len);
	}
	json_error_t je;
	json_t *o = json_loadb(in->buf, (size_t)(nl - in->buf), 0, &je);
	if (!json_is_object(o)) {
		json_decref(o);
		inbuf_close_fds(in);
		free(in);
		return bee_fail(e, BEE_STAGE_SESSION, -EPROTO, "session service: an answer that is not a JSON object");
	}
	json_t *er = json_object_get(o, "error");
	if (er) {
		const char *name = json_string_value(json_object_get(er, "name"));
		const char *msg = json_string_value(json_object_get(er, "message"));
		json_int_t eno = json_integer_value(json_object_get(er, "err"));
		enum bee_stage dflt = name && (strcmp(name, "protocol") == 0 || strcmp(name, "field") == 0 ||
					       strcmp(name, "method") == 0 || strcmp(name, "version") == 0)
					      ? BEE_STAGE_USAGE
					      : BEE_STAGE_SESSION;
		enum bee_stage st = stage_named(json_string_value(json_object_get(er, "stage")), dflt);
		err = bee_fail(e, st, eno < 0 ? (int)eno : -EPERM, "session service: %s: %s", name ? name : "error",
			       msg ? msg : "");
		*reply = o;   /* warnings may ride along */
		inbuf_close_fds(in);
		free(in);
		return err;
	}
	if (rfd && in->nfds) {
		*rfd = in->fds[0];
		for (size_t i = 1; i < in->nfds; i++)
			close(in->fds[i]);
		in->nfds = 0;
	}
	inbuf_close_fds(in);
	free(in);
	*reply = o;
	return 0;
}
