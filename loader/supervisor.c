/* SPDX-License-Identifier: GPL-2.0-only */
/* supervisor.c: sessions that outlive a command (bee_session_start, _exec,
 * _stop; docs/bee-load.md "Sessions that outlive a command").
 *
 *   caller ── fork ── setsid, fork ── the supervisor: stdio on /dev/null, every
 *                                     other descriptor closed; it opens the
 *                                     session (cgroup, programs, Landlock
 *                                     ruleset, init, audit relay), listens on
 *                                     STATE/sessions/ID.sock (0600 in a 0700
 *                                     folder), says READY, then serves
 *
 * The start pipe carries the supervisor's warnings ("W text"), then its id
 * ("R id") or the launch's failure ("E stage err message"): start returns
 * with the status run would have had, and a failed open leaves nothing.
 *
 * The socket speaks newline-delimited JSON (jansson), version 1:
 *
 *   -> {"bee":1,"method":"exec","argv":[...],"env":[...],"cwd":"..."}
 *      with the client's stdin, stdout, stderr (SCM_RIGHTS, never copied)
 *   <- {"started":PID}, later {"status":N}; or {"error":{"stage","err","message"}}
 *   -> {"bee":1,"method":"signal","signal":N}   forwarded to the tool's group
 *   -> {"bee":1,"method":"stop"}
 *   <- {"stopped":true,"lost":N} once everything is torn down
 *
 * Peers are checked with SO_PEERCRED (root only for now), and the client
 * checks that the socket's peer is the pid the registry names. A client
 * that goes away takes its tool along (SIGKILL to the tool's group); what
 * else remains is killed at stop. A supervisor that dies takes init along
 * (PR_SET_PDEATHSIG), and with pid 1 the kernel kills the whole pid
 * namespace; gc cleans the rest and records the lost audit.
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
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

#define PROTO_VERSION 1
#define LINE_MAX_BYTES (8u << 20)   /* argv and env as JSON: execve's limit, escaped */
#define SYNC_MS 1000                /* the registry's counters at most this stale */

extern char **environ;

/* the signals an exec forwards (init's list) */
static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH };

void bee_supervisor_socket_path(const char *state_dir, const char *id, char *buf, size_t size)
{
	snprintf(buf, size, "%s/sessions/%s.sock", state_dir, id);
}

/* ---- lines of JSON ------------------------------------------------------------------- */

/* o as one line (taking it), with stdin, stdout and stderr attached
 * unless fds is NULL (bee_json_line_send). */
static int send_json_fds(int fd, json_t *o, const int fds[3])
{
	return bee_json_line_send(fd, o, fds, fds ? 3 : 0);
}

static int send_json(int fd, json_t *o)
{
	return send_json_fds(fd, o, NULL);
}

/* A reader of lines and the descriptors that come with them. */
struct line_in {
	char *buf;
	size_t len, cap;
	int fds[3];
	size_t nfds;
	bool extra_fds;             /* more than three came: refused */
};

static void line_in_fini(struct line_in *in)
{
	free(in->buf);
	for (size_t i = 0; i < in->nfds; i++)
		close(in->fds[i]);
	memset(in, 0, sizeof(*in));
}

/* One read: 1 when something came, 0 at EOF, -errno (-EAGAIN: nothing yet). */
static int line_read(int fd, struct line_in *in)
{
	if (in->cap - in->len < 65536) {
		size_t nc = in->cap ? in->cap * 2 : 65536;
		if (nc > LINE_MAX_BYTES + 65536)
			return -E2BIG;
		char *nb = realloc(in->buf, nc);
		if (!nb)
			return -ENOMEM;
		in->buf = nb;
		in->cap = nc;
	}
	ssize_t n = bee_recv_fds(fd, in->buf + in->len, in->cap - in->len - 1, MSG_DONTWAIT, in->fds, &in->nfds, &in->extra_fds);
	if (n < 0)
		return (int)n;
	if (n == 0)
		return 0;
	in->len += (size_t)n;
	in->buf[in->len] = '\0';
	return 1;
}

/* The first complete line as JSON (removed from the buffer), NULL when
 * none is there yet; *bad when it is not a JSON object. */
static json_t *line_next(struct line_in *in, bool *bad)
{
	*bad = false;
	char *nl = in->len ? memchr(in->buf, '\n', in->len) : NULL;
	if (!nl) {
		*bad = in->len > LINE_MAX_BYTES;
		return NULL;
	}
	*nl = '\0';
	json_error_t je;
	json_t *o = json_loads(in->buf, JSON_REJECT_DUPLICATES, &je);
	size_t used = (size_t)(nl - in->buf) + 1;
	memmove(in->buf, nl + 1, in->len - used);
	in->len -= used;
	in->buf[in->len] = '\0';
	if (!json_is_object(o)) {
		json_decref(o);
		*bad = true;
		return NULL;
	}
	return o;
}

static json_t *error_json(const struct bee_error *e)
{
	json_t *o = json_object(), *er = json_object();
	json_object_set_new(er, "stage", json_string(bee_stage__name(e->stage)));
	json_object_set_new(er, "err", json_integer(e->err));
	json_object_set_new(er, "message", json_string(e->msg));
	json_object_set_new(o, "error", er);
	return o;
}

/* NULL-terminated copy of an array of strings; NULL when it is not one. */
static const char **strv_of(json_t *a)
{
	if (!json_is_array(a))
		return NULL;
	size_t n = json_array_size(a);
	const char **v = calloc(n + 1, sizeof(char *));
	for (size_t i = 0; v && i < n; i++) {
		v[i] = json_string_value(json_array_get(a, i));
		if (!v[i] || strlen(v[i]) != json_string_length(json_array_get(a, i))) {
			free(v);
			return NULL;   /* not a string, or one with a NUL inside */
		}
	}
	return v;
}

static enum bee_stage stage_of(const char *name)
{
	for (int s = 0; s < BEE_STAGE_COUNT; s++)
		if (name && strcmp(name, bee_stage__name((enum bee_stage)s)) == 0)
			return (enum bee_stage)s;
	return BEE_STAGE_SESSION;
}

/* ---- the supervisor ---------------------------------------------------------------------- */

struct client {
	int fd;
	struct line_in in;
	uint32_t tool_id;
	pid_t tool_pid;
	bool running;               /* its tool runs */
	bool stop;                  /* it asked for the end */
	bool gone;                  /* to be closed */
};

struct sup {
	struct bee_session *s;
	char sock_path[PATH_MAX];
	int lfd, sfd;
	struct client *c;
	size_t n, cap;
	bool stopping, dirty;
	int ready_fd;               /* the start pipe until READY; -1 after */
};

static bool start_reply(int fd, char kind, const char *text)
{
	char line[BEE_ERRLEN + 64];
	int n = snprintf(line, sizeof(line), "%c%s", kind, text);
	for (int i = 1; i < n && i < (int)sizeof(line); i++)
		if (line[i] == '\n')
			line[i] = ' ';
	if (n >= (int)sizeof(line) - 1)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	return write(fd, line, (size_t)n) == (ssize_t)n;
}

static void sup_warn(void *ctx, const char *msg)
{
	struct sup *u = ctx;
	if (!u || u->ready_fd < 0)
		return;   /* after READY no one reads them: stderr is /dev/null */
	start_reply(u->ready_fd, 'W', msg);
}

static void client_close(struct sup *u, struct client *c)
{
	if (c->running)
		bee_session_tool_signal(u->s, c->tool_id, SIGKILL);   /* a tool outlives no client */
	c->running = false;
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	line_in_fini(&c->in);
	c->gone = true;
}

static void on_tool_end(void *ctx, uint32_t id, int status)
{
	struct sup *u = ctx;
	u->dirty = true;
	/* init is gone (killed from outside): no tool can start any more, the
	 * session ends rather than half work */
	if (id == 0)
		u->stopping = true;
	for (size_t i = 0; i < u->n; i++) {
		struct client *c = &u->c[i];
		if (!c->running || (id && c->tool_id != id))
			continue;
		json_t *o = json_object();
		json_object_set_new(o, "status", json_integer(status));
		send_json(c->fd, o);
		c->running = false;
		client_close(u, c);
	}
}

static void client_error(struct sup *u, struct client *c, const struct bee_error *e)
{
	send_json(c->fd, error_json(e));
	client_close(u, c);
}

static void client_exec(struct sup *u, struct client *c, json_t *req)
{
	struct bee_error e;
	const char **argv = strv_of(json_object_get(req, "argv"));
	json_t *jenv = json_object_get(req, "env");
	const char **env = jenv ? strv_of(jenv) : NULL;
	const char *cwd = json_string_value(json_object_get(req, "cwd"));
	if (c->running || c->tool_id) {
		bee_fail(&e, BEE_STAGE_USAGE, -EBUSY, "one exec a connection");
	} else if (!argv || !argv[0] || (jenv && !env)) {
		bee_fail(&e, BEE_STAGE_USAGE, -EINVAL, "exec: 'argv' (and 'env') must be arrays of strings, argv not empty");
	} else if (c->in.nfds != 3 || c->in.extra_fds) {
		bee_fail(&e, BEE_STAGE_USAGE, -EINVAL, "exec: the client's stdin, stdout and stderr must come with it");
	} else {
		static const char *const none[] = { NULL };
		struct bee_exec x = { .argv = argv, .env = env ? env : none, .stdio = c->in.fds, .cwd = cwd };
		int err = bee_session_tool_start(u->s, &x, &c->tool_id, &c->tool_pid, &e);
		u->dirty = true;
		if (!err) {
			c->running = true;
			json_t *o = json_object();
			json_object_set_new(o, "started", json_integer(c->tool_pid));
			send_json(c->fd, o);
		}
		/* the tool has its copies now (or failed): the supervisor holds none */
		for (size_t i = 0; i < c->in.nfds; i++)
			close(c->in.fds[i]);
		c->in.nfds = 0;
		free(argv);
		free(env);
		if (err)
			client_error(u, c, &e);
		return;
	}
	free(argv);
	free(env);
	client_error(u, c, &e);
}

static void client_request(struct sup *u, struct client *c, json_t *req)
{
	const char *m = json_string_value(json_object_get(req, "method"));
	json_int_t ver = json_integer_value(json_object_get(req, "bee"));
	struct bee_error e;
	if (ver != PROTO_VERSION) {
		bee_fail(&e, BEE_STAGE_USAGE, -EPROTO, "protocol version %lld, this supervisor speaks %d",
			 (long long)ver, PROTO_VERSION);
		client_error(u, c, &e);
	} else if (m && strcmp(m, "exec") == 0) {
		client_exec(u, c, req);
	} else if (m && strcmp(m, "signal") == 0) {
		json_int_t sig = json_integer_value(json_object_get(req, "signal"));
		bool ok = false;
		for (size_t i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
			ok |= sig == forwarded[i];
		if (ok && c->running)
			bee_session_tool_signal(u->s, c->tool_id, (int)sig);
	} else if (m && strcmp(m, "stop") == 0) {
		c->stop = true;
		u->stopping = true;
	} else {
		bee_fail(&e, BEE_STAGE_USAGE, -EINVAL, "unknown method '%s' (exec, signal, stop)", m ? m : "");
		client_error(u, c, &e);
	}
}

static void client_input(struct sup *u, struct client *c)
{
	int r = line_read(c->fd, &c->in);
	if (r == -EAGAIN)
		return;
	if (r <= 0) {
		client_close(u, c);   /* gone: its tool goes too */
		return;
	}
	for (;;) {
		bool bad;
		json_t *req = line_next(&c->in, &bad);
		if (bad) {
			struct bee_error e;
			bee_fail(&e, BEE_STAGE_USAGE, -EPROTO, "a request that is not one JSON object a line");
			client_error(u, c, &e);
			return;
		}
		if (!req)
			return;
		client_request(u, c, req);
		json_decref(req);
		if (c->gone || u->stopping)
			return;
	}
}

static void client_accept(struct sup *u)
{
	int fd = accept4(u->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0)
		return;
	struct ucred cr;
	socklen_t len = sizeof(cr);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0 || cr.uid != 0) {
		struct bee_error e;
		bee_fail(&e, BEE_STAGE_SESSION, -EPERM, "session %s: only root may use its socket (peer uid %u)",
			 bee_session__id(u->s), (unsigned)cr.uid);
		send_json(fd, error_json(&e));
		close(fd);
		return;
	}
	if (u->n == u->cap) {
		size_t nc = u->cap ? u->cap * 2 : 16;
		struct client *np = realloc(u->c, nc * sizeof(*np));
		if (!np) {
			close(fd);
			return;
		}
		u->c = np;
		u->cap = nc;
	}
	u->c[u->n++] = (struct client){ .fd = fd };
}

/* Drops the closed clients. */
static void clients_compact(struct sup *u)
{
	size_t k = 0;
	for (size_t i = 0; i < u->n; i++)
		if (!u->c[i].gone)
			u->c[k++] = u->c[i];
	u->n = k;
}

/* The session's end: no new clients, everything killed, audit flushed,
 * everything torn down; then the stop clients hear how it went. */
__attribute__((noreturn))
static void sup_stop(struct sup *u)
{
	if (u->lfd >= 0)
		close(u->lfd);
	unlink(u->sock_path);
	uint64_t lost = bee_session__end(u->s);
	for (size_t i = 0; i < u->n; i++) {
		struct client *c = &u->c[i];
		if (c->running) {
			/* killed with everything else */
			json_t *o = json_object();
			json_object_set_new(o, "status", json_integer(128 + SIGKILL));
			send_json(c->fd, o);
			c->running = false;
		}
	}
	bee_session__close(u->s);
	for (size_t i = 0; i < u->n; i++) {
		struct client *c = &u->c[i];
		if (c->stop && !c->gone) {
			json_t *o = json_object();
			json_object_set_new(o, "stopped", json_true());
			json_object_set_new(o, "lost", json_integer((json_int_t)lost));
			send_json(c->fd, o);
		}
		if (!c->gone)
			client_close(u, c);
	}
	_exit(0);
}

static int64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

__attribute__((noreturn))
static void sup_serve(struct sup *u)
{
	int64_t synced = mono_ms();
	struct pollfd *p = NULL;
	size_t pcap = 0;
	for (;;) {
		if (u->stopping)
			sup_stop(u);
		if (pcap < u->n + 3) {
			pcap = (u->n + 3) * 2;
			struct pollfd *np = realloc(p, pcap * sizeof(*np));
			if (!np)
				sup_stop(u);   /* cannot serve: end cleanly */
			p = np;
		}
		p[0] = (struct pollfd){ .fd = bee_session__fd(u->s), .events = POLLIN };
		p[1] = (struct pollfd){ .fd = u->lfd, .events = POLLIN };
		p[2] = (struct pollfd){ .fd = u->sfd, .events = POLLIN };
		for (size_t i = 0; i < u->n; i++)
			p[3 + i] = (struct pollfd){ .fd = u->c[i].fd, .events = POLLIN };
		size_t np = u->n;
		int n = poll(p, 3 + np, u->dirty ? SYNC_MS : -1);
		if (n < 0 && errno != EINTR)
			sup_stop(u);
		int r = bee_session__poll(u->s, 0);
		if (r < 0)
			sup_stop(u);   /* the session can no longer be watched: end it */
		if (p[2].revents & POLLIN) {
			struct signalfd_siginfo si;
			while (read(u->sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
				u->stopping = true;   /* SIGTERM, SIGINT, SIGHUP, SIGQUIT: stop */
		}
		for (size_t i = 0; i < np && !u->stopping; i++)
			if (!u->c[i].gone && (p[3 + i].revents & (POLLIN | POLLHUP | POLLERR)))
				client_input(u, &u->c[i]);
		if (!u->stopping && (p[1].revents & POLLIN))
			client_accept(u);
		clients_compact(u);
		if (u->dirty && mono_ms() - synced >= SYNC_MS) {
			bee_session_registry_sync(u->s, NULL, NULL);
			synced = mono_ms();
			u->dirty = false;
		}
	}
}

static int sup_listen(struct sup *u, const char *state_dir, struct bee_error *e)
{
	int err = bee_fault(BEE_STAGE_SUPERVISOR);
	if (err)
		return bee_fail(e, BEE_STAGE_SUPERVISOR, err, "injected fault");
	const char *id = bee_session__id(u->s);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	bee_supervisor_socket_path(state_dir, id, u->sock_path, sizeof(u->sock_path));
	if (strlen(u->sock_path) >= sizeof(sa.sun_path))
		return bee_fail(e, BEE_STAGE_SUPERVISOR, -ENAMETOOLONG,
				"socket '%s': longer than a unix socket's %zu bytes (a shorter --state-dir)",
				u->sock_path, sizeof(sa.sun_path) - 1);
	memcpy(sa.sun_path, u->sock_path, strlen(u->sock_path) + 1);
	u->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	unlink(u->sock_path);   /* a dead session's of the same id: ids are random, never */
	if (u->lfd < 0 || bind(u->lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || chmod(u->sock_path, 0600) < 0 ||
	    listen(u->lfd, 256) < 0)
		return bee_fail(e, BEE_STAGE_SUPERVISOR, -errno, "socket '%s': %s", u->sock_path, strerror(errno));
	return bee_session_registry_sync(u->s, u->sock_path, e);
}

/* The supervisor's whole life; ready_fd is the start pipe. */
__attribute__((noreturn))
static void sup_main(const char *pack_path, const struct bee_session_opts *opts, int ready_fd)
{
	struct sup u = { .lfd = -1, .sfd = -1, .ready_fd = ready_fd };
	struct bee_error e;
	char text[BEE_ERRLEN + 64];
	/* nothing of the caller's: stdio on /dev/null, every other descriptor closed */
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0) {
		bee_fail(&e, BEE_STAGE_SUPERVISOR, -errno, "/dev/null: %s", strerror(errno));
		goto fail;
	}
	if (ready_fd > 3)
		syscall(SYS_close_range, 3, (unsigned)ready_fd - 1, 0);
	syscall(SYS_close_range, (unsigned)ready_fd + 1, ~0U, 0);
	umask(077);
	/* nothing of the caller's signal handling: a SIGCHLD it ignores would
	 * reap init behind the session's back */
	for (int sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	sigset_t sigs;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGHUP);
	sigaddset(&sigs, SIGQUIT);
	sigprocmask(SIG_SETMASK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);
	u.sfd = signalfd(-1, &sigs, SFD_CLOEXEC | SFD_NONBLOCK);
	struct bee_session_opts o = *opts;
	o.warn = sup_warn;
	o.warn_ctx = &u;
	if (bee_session__open(pack_path, &o, &u.s, &e) < 0)
		goto fail;
	bee_session_tool_watch(u.s, on_tool_end, &u);
	if (u.sfd < 0) {
		bee_fail(&e, BEE_STAGE_SUPERVISOR, -errno, "signalfd: %s", strerror(errno));
		goto fail_close;
	}
	if (sup_listen(&u, bee_state_dir(opts->state_dir), &e) < 0)
		goto fail_close;
	if (chdir("/") < 0) {
		/* harmless: the tools get the client's directory */
	}
	bool told = start_reply(ready_fd, 'R', bee_session__id(u.s));
	close(ready_fd);
	u.ready_fd = -1;
	if (!told)
		sup_stop(&u);   /* the caller is gone: no one knows the session, it ends */
	sup_serve(&u);
fail_close:
	if (u.lfd >= 0) {
		close(u.lfd);
		unlink(u.sock_path);
	}
	bee_session__close(u.s);
fail:
	snprintf(text, sizeof(text), "%s %d %s", bee_stage__name(e.stage), e.err, e.msg);
	start_reply(ready_fd, 'E', text);
	_exit(0);
}

/* ---- the caller's side -------------------------------------------------------------------- */

static const char *opts_state_dir(const struct bee_session_opts *opts)
{
	return bee_state_dir(opts ? opts->state_dir : NULL);
}

int bee_session_start(const char *pack_path, const struct bee_session_opts *opts, char sid[32],
		      struct bee_error *e)
{
	struct bee_session_opts o;
	int p[2];
	sid[0] = '\0';
	if (bee_opts_copy(&o, sizeof(o), opts) < 0)
		return bee_fail(e, BEE_STAGE_USAGE, -EINVAL, "bee_session_opts: unknown fields set");
	/* the record keeps the log's path for revoke and gc, which run
	 * elsewhere: an absolute one */
	char logpath[PATH_MAX];
	if (o.audit_log && o.audit_log[0] != '/') {
		char cwd[PATH_MAX];
		if (!getcwd(cwd, sizeof(cwd)) ||
		    snprintf(logpath, sizeof(logpath), "%s/%s", cwd, o.audit_log) >= (int)sizeof(logpath))
			return bee_fail(e, BEE_STAGE_AUDIT, -ENAMETOOLONG, "audit log '%s': cannot make its path absolute",
					o.audit_log);
		o.audit_log = logpath;
	}
	if (pipe2(p, O_CLOEXEC) < 0)
		return bee_fail(e, BEE_STAGE_SUPERVISOR, -errno, "pipe: %s", strerror(errno));
	/* above 2: the supervisor puts /dev/null on 0, 1 and 2 (a caller with
	 * its stdio closed would have the pipe there) */
	for (int i = 0; i < 2; i++) {
		if (p[i] >= 3)
			continue;
		int hi = fcntl(p[i], F_DUPFD_CLOEXEC, 3);
		close(p[i]);
		p[i] = hi;
	}
	if (p[0] < 0 || p[1] < 0) {
		int err = -errno;
		if (p[0] >= 0)
			close(p[0]);
		if (p[1] >= 0)
			close(p[1]);
		return bee_fail(e, BEE_STAGE_SUPERVISOR, err, "pipe: %s", strerror(-err));
	}
	fflush(NULL);   /* nothing the caller buffered is written twice */
	pid_t a = fork();
	if (a < 0) {
		int err = -errno;
		close(p[0]);
		close(p[1]);
		return bee_fail(e, BEE_STAGE_SUPERVISOR, err, "fork: %s", strerror(-err));
	}
	if (a == 0) {
		/* a new session, and a grandchild: the caller's terminal and its
		 * wait() are not the supervisor's */
		close(p[0]);
		setsid();
		pid_t b = fork();
		if (b != 0)
			_exit(b < 0 ? 1 : 0);
		sup_main(pack_path, &o, p[1]);
	}
	close(p[1]);
	int st;
	while (waitpid(a, &st, 0) < 0 && errno == EINTR)
		;
	FILE *f = fdopen(p[0], "r");
	if (!f) {
		close(p[0]);
		return bee_fail(e, BEE_STAGE_SUPERVISOR, -ENOMEM, "out of memory");
	}
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int err = bee_fail(e, BEE_STAGE_SUPERVISOR, -EIO, "the session's supervisor ended before it was ready");
	while ((n = getline(&line, &cap, f)) > 0) {
		if (line[n - 1] == '\n')
			line[--n] = '\0';
		if (line[0] == 'W') {
			if (o.warn)
				o.warn(o.warn_ctx, line + 1);
		} else if (line[0] == 'R') {
			snprintf(sid, 32, "%s", line + 1);
			err = 0;
			break;
		} else if (line[0] == 'E') {
			char stage[32] = "";
			int eno = -EIO, used = 0;
			if (sscanf(line + 1, "%31s %d %n", stage, &eno, &used) >= 2 && used > 0) {
				err = eno < 0 ? eno : -EIO;
				/* the message is "stage: ..." already */
				if (e) {
					e->stage = stage_of(stage);
					e->err = err;
					snprintf(e->msg, sizeof(e->msg), "%s", line + 1 + used);
				}
			}
			break;
		}
	}
	free(line);
	fclose(f);
	return err;
}

/* A connection to the live supervisor of sid, checked both ways. */
int bee_session_connect(const char *state_dir, const char *sid, int *out, struct bee_error *e)
{
	struct bee_registry_entry r;
	char path[PATH_MAX];
	*out = -1;
	int err = bee_state_dir_secure(state_dir, e);
	if (err)
		return err;
	err = bee_registry_read(state_dir, sid, &r);
	bee_registry_entry_fini(&r);
	if (err)
		return bee_fail(e, BEE_STAGE_SESSION, err == -ENOENT ? -ENOENT : err, "no session '%s' under '%s/sessions'%s",
				sid, state_dir, err == -ENOENT ? "" : " (its record is unreadable)");
	if (!r.socket[0])
		return bee_fail(e, BEE_STAGE_SESSION, -ENOTSUP,
				"session %s is one of 'bee-load run': it has no supervisor to exec into or stop", sid);
	bee_supervisor_socket_path(state_dir, sid, path, sizeof(path));
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof(sa.sun_path))
		return bee_fail(e, BEE_STAGE_SESSION, -ENAMETOOLONG, "session %s: socket '%s': name too long", sid, path);
	memcpy(sa.sun_path, path, strlen(path) + 1);
	/* the socket first: a supervisor that is gone listens no more, and
	 * one that answers is alive (its pid checked below), so its start
	 * time is read only to say why a connect failed */
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		err = -errno;
		if (fd >= 0)
			close(fd);
		if (!bee_pid_alive(r.pid, r.starttime))
			return bee_fail(e, BEE_STAGE_SESSION, -ESRCH,
					"session %s: its supervisor (pid %d) is gone; 'bee-load gc' cleans up what it left",
					sid, (int)r.pid);
		return bee_fail(e, BEE_STAGE_SESSION, err, "session %s: socket '%s': %s%s", sid, path, strerror(-err),
				err == -ECONNREFUSED || err == -ENOENT ? " (a stale socket: the supervisor is gone)" : "");
	}
	struct ucred cr;
	socklen_t len = sizeof(cr);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0 || cr.pid != r.pid || cr.uid != 0) {
		close(fd);
		return bee_fail(e, BEE_STAGE_SESSION, -EPERM,
				"session %s: socket '%s' is held by pid %d uid %u, not by its supervisor (pid %d, root)", sid,
				path, (int)cr.pid, (unsigned)cr.uid, (int)r.pid);
	}
	*out = fd;
	return 0;
}

/* The next reply line, waiting (and forwarding signals of sfd, when >= 0);
 * NULL at EOF or on error. */
static json_t *reply_next(int fd, int sfd, struct line_in *in)
{
	for (;;) {
		bool bad;
		json_t *o = line_next(in, &bad);
		if (o || bad)
			return o;
		struct pollfd p[2] = { { .fd = fd, .events = POLLIN }, { .fd = sfd, .events = POLLIN } };
		if (poll(p, sfd >= 0 ? 2 : 1, -1) < 0 && errno != EINTR)
			return NULL;
		if (sfd >= 0 && (p[1].revents & POLLIN)) {
			struct signalfd_siginfo si;
			while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
				json_t *s = json_object();
				json_object_set_new(s, "bee", json_integer(PROTO_VERSION));
				json_object_set_new(s, "method", json_string("signal"));
				json_object_set_new(s, "signal", json_integer(si.ssi_signo));
				send_json(fd, s);
			}
		}
		if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			int r = line_read(fd, in);
			if (r == 0 || (r < 0 && r != -EAGAIN))
				return NULL;
		}
	}
}

static int reply_error(json_t *o, const char *sid, struct bee_error *e)
{
	json_t *er = json_object_get(o, "error");
	const char *msg = json_string_value(json_object_get(er, "message"));
	int err = (int)json_integer_value(json_object_get(er, "err"));
	enum bee_stage st = stage_of(json_string_value(json_object_get(er, "stage")));
	if (err >= 0)
		err = -EIO;
	if (e) {
		e->stage = st;
		e->err = err;
		snprintf(e->msg, sizeof(e->msg), "%s", msg ? msg : "session: an error without a message");
	}
	(void)sid;
	return err;
}

int bee_session_exec(const char *sid, const char *const argv[], const char *const env[], const int fds[3],
		     const struct bee_session_opts *opts, int *status, struct bee_error *e)
{
	struct bee_session_opts o;
	int fd = -1, err;
	*status = -1;
	if (bee_opts_copy(&o, sizeof(o), opts) < 0)
		return bee_fail(e, BEE_STAGE_USAGE, -EINVAL, "bee_session_opts: unknown fields set");
	if (!argv || !argv[0])
		return bee_fail(e, BEE_STAGE_USAGE, -EINVAL, "no command to run");
	/* a descriptor the caller has closed is /dev/null for the tool, taken
	 * before the socket is made: the socket never lands on 0, 1 or 2 and
	 * goes to the tool as its stdio (where it could speak for the client) */
	int use[3], nulls[3] = { -1, -1, -1 };
	for (int i = 0; i < 3; i++) {
		use[i] = fds ? fds[i] : i;
		if (fcntl(use[i], F_GETFD) < 0 && (nulls[i] = open("/dev/null", i ? O_WRONLY | O_CLOEXEC : O_RDONLY | O_CLOEXEC)) >= 0)
			use[i] = nulls[i];
	}
	if ((err = bee_session_connect(opts_state_dir(opts), sid, &fd, e)) < 0)
		goto close_nulls;
	err = bee_session_exec_fd(fd, sid, argv, env, use, status, e);
close_nulls:
	for (int i = 0; i < 3; i++)
		if (nulls[i] >= 0)
			close(nulls[i]);
	return err;
}

/* An exec over fd, a connection to sid's supervisor (bee_session_connect's,
 * or one the session service handed over: serve.c); takes fd. */
int bee_session_exec_fd(int fd, const char *sid, const char *const argv[], const char *const env[],
			const int use[3], int *status, struct bee_error *e)
{
	int sfd = -1, err;
	*status = -1;
	if (fd < 3) {
		int hi = fcntl(fd, F_DUPFD_CLOEXEC, 3);
		close(fd);
		if ((fd = hi) < 0) {
			return bee_fail(e, BEE_STAGE_SESSION, -errno, "session %s: socket: %s", sid, strerror(errno));
		}
	}
	json_t *req = json_object(), *a = json_array(), *v = json_array();
	for (size_t i = 0; argv[i]; i++) {
		json_t *s = json_string(argv[i]);
		if (!s) {
			/* never a shorter command than asked for */
			json_decref(req);
			json_decref(a);
			json_decref(v);
			close(fd);
			return bee_fail(e, BEE_STAGE_USAGE, -EINVAL, "argument %zu of the command is not UTF-8", i);
		}
		json_array_append_new(a, s);
	}
	for (const char *const *p = env ? env : (const char *const *)environ; *p; p++) {
		json_t *s = json_string(*p);
		if (s)   /* not UTF-8: not passed (the policy could not have named it either way) */
			json_array_append_new(v, s);
	}
	json_object_set_new(req, "bee", json_integer(PROTO_VERSION));
	json_object_set_new(req, "method", json_string("exec"));
	json_object_set_new(req, "argv", a);
	json_object_set_new(req, "env", v);
	char cwd[PATH_MAX];
	if (getcwd(cwd, sizeof(cwd)))
		json_object_set_new(req, "cwd", json_string(cwd));
	/* signals to forward: blocked in this thread, read from a signalfd */
	sigset_t sigs, old;
	sigemptyset(&sigs);
	for (size_t i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
		sigaddset(&sigs, forwarded[i]);
	pthread_sigmask(SIG_BLOCK, &sigs, &old);
	sfd = signalfd(-1, &sigs, SFD_CLOEXEC | SFD_NONBLOCK);
	struct line_in in = { 0 };
	err = send_json_fds(fd, req, use);
	if (err < 0) {
		bee_fail(e, BEE_STAGE_SESSION, err, "session %s: cannot send the command: %s", sid, strerror(-err));
		goto out;
	}
	err = bee_fail(e, BEE_STAGE_SESSION, -EPIPE, "session %s: its supervisor ended before the tool did", sid);
	json_t *r;
	while ((r = reply_next(fd, sfd, &in))) {
		if (json_object_get(r, "error")) {
			err = reply_error(r, sid, e);
			json_decref(r);
			break;
		}
		json_t *stj = json_object_get(r, "status");
		if (json_is_integer(stj)) {
			*status = (int)json_integer_value(stj);
			err = 0;
			json_decref(r);
			break;
		}
		json_decref(r);   /* "started" */
	}
out:
	line_in_fini(&in);
	if (sfd >= 0)
		close(sfd);
	/* the signals that came are forwarded; the caller's mask as it was */
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	close(fd);
	return err;
}

int bee_session_stop(const char *sid, const struct bee_session_opts *opts, struct bee_error *e)
{
	struct bee_session_opts o;
	int fd, err;
	if (bee_opts_copy(&o, sizeof(o), opts) < 0)
		return bee_fail(e, BEE_STAGE_USAGE, -EINVAL, "bee_session_opts: unknown fields set");
	if ((err = bee_session_connect(opts_state_dir(opts), sid, &fd, e)) < 0)
		return err;
	return bee_session_stop_fd(fd, sid, e);
}

/* A stop over fd (as bee_session_exec_fd's); takes fd. */
int bee_session_stop_fd(int fd, const char *sid, struct bee_error *e)
{
	int err;
	json_t *req = json_object();
	json_object_set_new(req, "bee", json_integer(PROTO_VERSION));
	json_object_set_new(req, "method", json_string("stop"));
	struct line_in in = { 0 };
	if ((err = send_json(fd, req)) < 0) {
		bee_fail(e, BEE_STAGE_SESSION, err, "session %s: cannot ask for the end: %s", sid, strerror(-err));
		goto out;
	}
	json_t *r = reply_next(fd, -1, &in);
	if (!r) {
		err = bee_fail(e, BEE_STAGE_SESSION, -EPIPE, "session %s: its supervisor ended without saying how", sid);
	} else if (json_object_get(r, "error")) {
		err = reply_error(r, sid, e);
	} else {
		json_int_t lost = json_integer_value(json_object_get(r, "lost"));
		err = lost > 0 ? bee_fail(e, BEE_STAGE_AUDIT, -EIO, "session %s: %lld audit records were lost", sid,
					  (long long)lost)
			       : 0;
	}
	json_decref(r);
out:
	line_in_fini(&in);
	close(fd);
	return err;
}
