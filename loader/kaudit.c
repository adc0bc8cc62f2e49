/* SPDX-License-Identifier: GPL-2.0-only */
/* kaudit.c: what Landlock refused, from the kernel's audit stream.
 *
 * Under the landlock backend the file and exec decisions are Landlock's,
 * not a BPF program's, so they never reach the ring buffer. From ABI 7
 * Landlock writes each denial to the audit subsystem (when audit is
 * enabled) as
 *
 *   LANDLOCK_ACCESS (1423)  domain=1a32d1665 blockers=fs.read_file path="/etc/x" dev="vda" ino=733
 *   LANDLOCK_DOMAIN (1424)  domain=1a32d1665 status=allocated mode=enforcing pid=9709 ...
 *   SYSCALL (1300)          ... pid=9712 comm="cat" ...
 *   EOE (1320)              end of the event
 *
 * all with the same "audit(sec.msec:serial)" stamp. The session's domain
 * is the one whose LANDLOCK_DOMAIN record names the pid that called
 * landlock_restrict_self (the tool's first process); its ACCESS records
 * become audit lines with the SYSCALL record's pid and comm.
 *
 * Reading: a NETLINK_AUDIT socket bound to the read-only multicast group
 * (AUDIT_NLGRP_READLOG), which any number of readers may join and which
 * never takes auditd's place. Audit must be enabled for Landlock to log:
 * when it is off, bee turns it on for as long as a session needs it, with
 * a backlog of 8192 records (the kernel's default of 64 dropped denials
 * when 200 sessions were denied at once), and remembers that it did and
 * the limit before (STATE/kernel-audit/enabled-by-bee); each session
 * holds it with a file STATE/kernel-audit/ID (its bee-load's pid and start
 * time), and the last holder to leave (or gc, for a dead one) turns it off
 * again. A daemon that turned it on itself is never overruled.
 *
 * Completeness: Landlock logs in the denied system call, so every record
 * of a denial is queued before the call returns. To know that all of them
 * have been read, drain sends a user message (AUDIT_TRUSTED_APP) through
 * the same queue and reads until it comes back. Records the kernel
 * dropped (its backlog is small) are counted by the kernel in
 * audit_status.lost; an increase while the session ran is written as
 * "bee:kernel-audit-lost:N" (the count is the kernel's, for every audit
 * record, so it is an upper bound for this session).
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/netlink.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef AUDIT_LANDLOCK_ACCESS
#define AUDIT_LANDLOCK_ACCESS 1423
#define AUDIT_LANDLOCK_DOMAIN 1424
#endif
#define KA_MARKER_TYPE 1121   /* AUDIT_TRUSTED_APP */
#define KA_PENDING_MAX 128

struct ka_rec {
	int type;
	char *text;                 /* the body after "): " */
};

struct ka_event {
	unsigned long serial;
	int64_t ns;
	struct ka_rec *recs;
	size_t n;
};

struct bee_kaudit {
	int sock;                   /* multicast reader */
	char id[32];
	pid_t *pids;                /* the restricting pids: each tool of the session */
	size_t npids, cappids;
	char (*domains)[32];        /* theirs, as the kernel names them */
	size_t ndomains, capdomains;
	struct ka_event pending[KA_PENDING_MAX];
	size_t npending;
	uint32_t lost_at_start;
	bool held;                  /* this session's hold on audit (ka_hold) */
	unsigned marker_seq;
	bool marker_seen;
	bee_warn_fn warn;
	void *warn_ctx;
};

/* ---- the kernel's audit status -------------------------------------------------- */

static int ka_request(int type, const void *payload, size_t len, struct audit_status *st)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_AUDIT);
	if (fd < 0)
		return -errno;
	struct {
		struct nlmsghdr h;
		char body[sizeof(struct audit_status) + 512];
	} req = { 0 };
	int err = 0;
	req.h.nlmsg_len = (uint32_t)NLMSG_LENGTH(len);
	req.h.nlmsg_type = (uint16_t)type;
	req.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	req.h.nlmsg_seq = 1;
	memcpy(req.body, payload, len);
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	if (sendto(fd, &req, req.h.nlmsg_len, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		err = -errno;
		goto out;
	}
	/* an ACK (error 0 or not), and for AUDIT_GET the status, in any order */
	for (int got = 0; got < 2;) {
		char buf[8192];
		struct pollfd p = { .fd = fd, .events = POLLIN };
		if (poll(&p, 1, 1000) <= 0) {
			err = got ? 0 : -ETIMEDOUT;
			break;
		}
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0) {
			err = -errno;
			break;
		}
		for (struct nlmsghdr *h = (void *)buf; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = NLMSG_DATA(h);
				if (e->error) {
					err = e->error;
					goto out;
				}
				got++;
				if (type != AUDIT_GET)
					goto out;
			} else if (h->nlmsg_type == AUDIT_GET && st) {
				memcpy(st, NLMSG_DATA(h), sizeof(*st));
				got++;
			}
		}
	}
out:
	close(fd);
	return err;
}

static int ka_status(struct audit_status *st)
{
	memset(st, 0, sizeof(*st));
	return ka_request(AUDIT_GET, "", 0, st);
}

int bee_kaudit_status(uint32_t *enabled, uint32_t *backlog_limit)
{
	struct audit_status st;
	int err = ka_status(&st);
	if (err)
		return err;
	*enabled = st.enabled;
	*backlog_limit = st.backlog_limit;
	return 0;
}

static int ka_set_enabled(uint32_t on)
{
	struct audit_status st = { .mask = AUDIT_STATUS_ENABLED, .enabled = on };
	return ka_request(AUDIT_SET, &st, sizeof(st), NULL);
}

int bee_kaudit_set(uint32_t enabled, uint32_t backlog_limit)
{
	struct audit_status st = { .mask = AUDIT_STATUS_ENABLED | AUDIT_STATUS_BACKLOG_LIMIT, .enabled = enabled,
				   .backlog_limit = backlog_limit };
	return ka_request(AUDIT_SET, &st, sizeof(st), NULL);
}

/* ---- holds ------------------------------------------------------------------------- */

#define KA_DIR BEE_STATE_DIR "/kernel-audit"
#define KA_MARK KA_DIR "/enabled-by-bee"   /* "backlog_limit N": the limit before */
#define KA_BACKLOG 8192   /* the backlog while bee holds audit on (auditd's usual) */

static int ka_lock(void)
{
	return bee_lock_dir(KA_DIR);
}

/* Live holders other than skip. */
static int ka_live_holders(const char *skip)
{
	int n = 0;
	char **ids = NULL;
	size_t nids = 0;
	if (bee_dir_json_names(KA_DIR, &ids, &nids) < 0)
		return 0;
	for (size_t i = 0; i < nids; i++) {
		char path[PATH_MAX], *text = NULL;
		int pid = 0;
		unsigned long long st = 0;
		snprintf(path, sizeof(path), KA_DIR "/%s.json", ids[i]);
		if (strcmp(ids[i], skip) != 0 && bee_read_file(path, &text, NULL) == 0 &&
		    sscanf(text, "{\"pid\":%d,\"starttime\":%llu}", &pid, &st) == 2 && bee_pid_alive(pid, st))
			n++;
		else if (strcmp(ids[i], skip) != 0)
			unlink(path);   /* a dead holder */
		free(text);
		free(ids[i]);
	}
	free(ids);
	return n;
}

/* Drops id's hold; the last holder turns audit off if bee turned it on,
 * and gives the backlog its limit from before (the mark holds it; one
 * that someone changed meanwhile is theirs and stays). */
static void ka_release(const char *id, bee_warn_fn warn, void *ctx)
{
	int lk = ka_lock();
	char path[PATH_MAX], *mark = NULL;
	snprintf(path, sizeof(path), KA_DIR "/%s.json", id);
	unlink(path);
	if (ka_live_holders(id) == 0 && bee_read_file(KA_MARK, &mark, NULL) == 0) {
		struct audit_status st;
		unsigned before;
		uint32_t limit = 0;
		if (sscanf(mark, "backlog_limit %u", &before) == 1 && ka_status(&st) == 0)
			limit = st.backlog_limit == KA_BACKLOG ? before : st.backlog_limit;
		int err = limit ? bee_kaudit_set(0, limit) : ka_set_enabled(0);
		if (err)
			bee_warnf(warn, ctx, "kernel audit: cannot turn it off again: %s", strerror(-err));
		else
			unlink(KA_MARK);
	}
	free(mark);
	if (lk >= 0)
		close(lk);
}

void bee_kaudit_release(const char *id)
{
	ka_release(id, NULL, NULL);
}

static int ka_hold(const char *id, uint32_t *lost, struct bee_error *e)
{
	int lk = ka_lock();
	if (lk < 0)
		return bee_fail(e, BEE_STAGE_AUDIT, lk, "kernel audit: cannot lock '%s': %s", KA_DIR,
				strerror(-lk));
	char path[PATH_MAX], text[96];
	struct audit_status st;
	int n, err = ka_status(&st);
	if (err) {
		bee_fail(e, BEE_STAGE_AUDIT, err, "kernel audit: cannot read its status: %s", strerror(-err));
		goto out;
	}
	*lost = st.lost;
	if (st.enabled == 0) {
		/* with a backlog of its own: the kernel's default (64) drops
		 * records when many sessions are denied at once (0 has none) */
		uint32_t limit = st.backlog_limit && st.backlog_limit < KA_BACKLOG ? KA_BACKLOG : st.backlog_limit;
		err = bee_kaudit_set(1, limit);
		if (err) {
			bee_fail(e, BEE_STAGE_AUDIT, err,
				 "kernel audit is off and cannot be turned on (Landlock logs its denials only there): %s",
				 strerror(-err));
			goto out;
		}
		n = snprintf(text, sizeof(text), "backlog_limit %u\n", st.backlog_limit);
		if ((err = bee_write_atomic(KA_MARK, text, (size_t)n)) < 0) {
			/* without the mark nothing would turn it off again */
			bee_kaudit_set(0, st.backlog_limit);
			bee_fail(e, BEE_STAGE_AUDIT, err, "kernel audit: cannot write '%s': %s", KA_MARK,
				 strerror(-err));
			goto out;
		}
	}
	snprintf(path, sizeof(path), KA_DIR "/%s.json", id);
	n = snprintf(text, sizeof(text), "{\"pid\":%d,\"starttime\":%llu}\n", (int)getpid(),
		     bee_pid_starttime(getpid()));
	err = bee_write_atomic(path, text, (size_t)n);
	if (err)
		bee_fail(e, BEE_STAGE_AUDIT, err, "kernel audit: cannot write '%s': %s", path, strerror(-err));
out:
	close(lk);
	return err;
}

/* ---- the stream -------------------------------------------------------------------- */

int bee_kaudit_open(const char *id, struct bee_kaudit **out, bee_warn_fn warn, void *ctx,
		    struct bee_error *e)
{
	struct bee_kaudit *k = calloc(1, sizeof(*k));
	int err;
	*out = NULL;
	if (!k)
		return bee_fail(e, BEE_STAGE_AUDIT, -ENOMEM, "kernel audit: out of memory");
	snprintf(k->id, sizeof(k->id), "%s", id);
	k->warn = warn;
	k->warn_ctx = ctx;
	/* subscribe first, so that nothing logged once audit is on is missed */
	k->sock = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_AUDIT);
	if (k->sock < 0) {
		err = -errno;
		bee_fail(e, BEE_STAGE_AUDIT, err, "kernel audit: netlink socket: %s", strerror(-err));
		goto fail;
	}
	int rcv = 8 << 20;
	setsockopt(k->sock, SOL_SOCKET, SO_RCVBUFFORCE, &rcv, sizeof(rcv));
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = 1u << (AUDIT_NLGRP_READLOG - 1) };
	if (bind(k->sock, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		err = -errno;
		bee_fail(e, BEE_STAGE_AUDIT, err, "kernel audit: cannot join the read-only log group: %s",
			 strerror(-err));
		goto fail;
	}
	err = ka_hold(id, &k->lost_at_start, e);
	if (err)
		goto fail;
	k->held = true;
	*out = k;
	return 0;
fail:
	if (k->sock >= 0)
		close(k->sock);
	free(k->pids);
	free(k->domains);
	free(k);
	return err;
}

struct bee_kaudit *bee_kaudit_detached(void)
{
	struct bee_kaudit *k = calloc(1, sizeof(*k));
	if (k)
		k->sock = -1;
	return k;
}

int bee_kaudit_fd(const struct bee_kaudit *k)
{
	return k->sock;
}

static bool ka_field(const char *body, const char *key, char *out, size_t size);

void bee_kaudit_set_pid(struct bee_kaudit *k, pid_t pid)
{
	for (size_t i = 0; i < k->npids; i++)
		if (k->pids[i] == pid)
			return;
	if (k->npids == k->cappids) {
		size_t nc = k->cappids ? k->cappids * 2 : 8;
		pid_t *np = realloc(k->pids, nc * sizeof(*np));
		if (!np)
			return;   /* its domain's records are not recognised: said as lost below */
		k->pids = np;
		k->cappids = nc;
	}
	k->pids[k->npids++] = pid;
}

static bool ka_pid_ours(const struct bee_kaudit *k, long pid)
{
	for (size_t i = 0; i < k->npids; i++)
		if (k->pids[i] == pid)
			return true;
	return false;
}

static void ka_domain_add(struct bee_kaudit *k, const char *body)
{
	if (k->ndomains == k->capdomains) {
		size_t nc = k->capdomains ? k->capdomains * 2 : 8;
		char(*nd)[32] = realloc(k->domains, nc * sizeof(*nd));
		if (!nd)
			return;
		k->domains = nd;
		k->capdomains = nc;
	}
	if (ka_field(body, "domain", k->domains[k->ndomains], sizeof(k->domains[0])))
		k->ndomains++;
}

/* The value of key in an audit body: quoted text, hex for an untrusted
 * string that needed it, or a bare word. */
static bool ka_field(const char *body, const char *key, char *out, size_t size)
{
	size_t kl = strlen(key);
	for (const char *p = body; (p = strstr(p, key)); p += kl) {
		if ((p != body && p[-1] != ' ') || p[kl] != '=')
			continue;
		const char *v = p + kl + 1;
		size_t n = 0;
		if (*v == '"') {
			const char *end = strchr(v + 1, '"');
			if (!end)
				return false;
			n = (size_t)(end - v - 1);
			if (n >= size)
				n = size - 1;
			memcpy(out, v + 1, n);
		} else {
			size_t len = strcspn(v, " ");
			bool hex = len % 2 == 0 && len > 0 && strspn(v, "0123456789ABCDEF") == len &&
				   strcmp(key, "path") == 0;
			if (hex) {
				for (size_t i = 0; i + 1 < len && n + 1 < size; i += 2) {
					char h[3] = { v[i], v[i + 1], 0 };
					out[n++] = (char)strtoul(h, NULL, 16);
				}
			} else {
				n = len < size ? len : size - 1;
				memcpy(out, v, n);
			}
		}
		out[n] = '\0';
		return true;
	}
	return false;
}

int bee_kaudit_parse_access(const char *text, struct bee_kaudit_access *a)
{
	memset(a, 0, sizeof(*a));
	if (!ka_field(text, "domain", a->domain, sizeof(a->domain)) ||
	    !ka_field(text, "blockers", a->blockers, sizeof(a->blockers)))
		return -EINVAL;
	a->has_path = ka_field(text, "path", a->path, sizeof(a->path));
	if (!a->has_path) {
		char v[64];
		if (ka_field(text, "opid", v, sizeof(v))) {
			snprintf(a->path, sizeof(a->path), "pid:%s", v);
			a->has_path = true;
		} else if (ka_field(text, "daddr", v, sizeof(v))) {
			char port[16] = "?";
			ka_field(text, "dest", port, sizeof(port));
			snprintf(a->path, sizeof(a->path), "%s:%s", v, port);
			a->has_path = true;
		}
	}
	return 0;
}

static bool has_blocker(const char *list, const char *b)
{
	size_t n = strlen(b);
	for (const char *p = list; (p = strstr(p, b)); p += n)
		if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
			return true;
	return false;
}

void bee_kaudit_blockers(const char *blockers, const char **kind, const char **action)
{
	if (has_blocker(blockers, "fs.execute")) {
		*kind = "Process";
		*action = "Execute";
	} else if (has_blocker(blockers, "fs.read_file") || has_blocker(blockers, "fs.read_dir")) {
		*kind = "FileSystem";
		*action = "Read";
	} else if (strncmp(blockers, "fs.", 3) == 0) {
		*kind = "FileSystem";
		*action = "Write";
	} else if (has_blocker(blockers, "net.bind_tcp")) {
		*kind = "Network";
		*action = "Listen";
	} else if (strncmp(blockers, "net.", 4) == 0 || has_blocker(blockers, "scope.abstract_unix_socket")) {
		*kind = "Network";
		*action = "Connect";
	} else if (has_blocker(blockers, "ptrace")) {
		*kind = "Process";
		*action = "Read";
	} else {
		*kind = "Process";     /* scope.signal and anything newer */
		*action = "Write";
	}
}

static bool ka_ours(struct bee_kaudit *k, const char *domain)
{
	for (size_t i = 0; i < k->ndomains; i++)
		if (strcmp(k->domains[i], domain) == 0)
			return true;
	return false;
}

static void ka_event_free(struct ka_event *ev)
{
	for (size_t i = 0; i < ev->n; i++)
		free(ev->recs[i].text);
	free(ev->recs);
	memset(ev, 0, sizeof(*ev));
}

/* Writes an event's ACCESS records that belong to the session. */
static void ka_flush(struct bee_kaudit *k, struct ka_event *ev, struct bee_audit_log *log)
{
	long pid = -1;
	char comm[64] = "", v[64];
	for (size_t i = 0; i < ev->n; i++) {
		const char *t = ev->recs[i].text;
		if (ev->recs[i].type == AUDIT_LANDLOCK_DOMAIN && strstr(t, "status=allocated") &&
		    ka_field(t, "pid", v, sizeof(v)) && ka_pid_ours(k, atol(v)))
			ka_domain_add(k, t);
		if (ev->recs[i].type == AUDIT_SYSCALL) {
			if (ka_field(t, "pid", v, sizeof(v)))
				pid = atol(v);
			ka_field(t, "comm", comm, sizeof(comm));
		}
	}
	for (size_t i = 0; i < ev->n; i++) {
		struct bee_kaudit_access a;
		if (ev->recs[i].type != AUDIT_LANDLOCK_ACCESS ||
		    bee_kaudit_parse_access(ev->recs[i].text, &a) < 0 ||
		    !ka_ours(k, a.domain))
			continue;
		struct bee_audit_line l = {
			.realtime_ns = ev->ns, .decision = "Deny", .pid = pid,
			.comm = *comm ? comm : NULL, .source = "landlock", .reason = a.blockers, .rule = -1,
		};
		bee_kaudit_blockers(a.blockers, &l.kind, &l.action);
		l.resource = a.has_path ? a.path : "unknown";
		l.resource_len = strlen(l.resource);
		bee_audit_relay(log, &l, k->warn, k->warn_ctx);
	}
	ka_event_free(ev);
}

/* "audit(1795977705.688:2): body" */
static int ka_stamp(const char *text, int64_t *ns, unsigned long *serial, const char **body)
{
	unsigned long long sec;
	unsigned ms;
	int off = 0;
	if (sscanf(text, "audit(%llu.%u:%lu): %n", &sec, &ms, serial, &off) < 3 || off == 0)
		return -1;
	*ns = (int64_t)sec * 1000000000 + (int64_t)ms * 1000000;
	*body = text + off;
	return 0;
}

void bee_kaudit_record(struct bee_kaudit *k, int type, const char *text, size_t len, struct bee_audit_log *log)
{
	char *t = strndup(text, len);
	int64_t ns;
	unsigned long serial;
	const char *body;
	if (!t || ka_stamp(t, &ns, &serial, &body) < 0) {
		free(t);
		return;
	}
	if (type == KA_MARKER_TYPE) {
		char want[64];
		snprintf(want, sizeof(want), "bee-load drain %s %u", k->id, k->marker_seq);
		if (strstr(body, want))
			k->marker_seen = true;
		free(t);
		return;
	}
	struct ka_event *ev = NULL;
	for (size_t i = 0; i < k->npending; i++)
		if (k->pending[i].serial == serial)
			ev = &k->pending[i];
	if (type == AUDIT_EOE) {
		if (ev) {
			ka_flush(k, ev, log);
			*ev = k->pending[--k->npending];
		}
		free(t);
		return;
	}
	/* an event starts with what it may need: not with a domain's end,
	 * which comes alone (no EOE) whenever any Landlock domain of the
	 * machine is freed, and would fill the pending events */
	if (!ev && ((type != AUDIT_LANDLOCK_ACCESS && type != AUDIT_LANDLOCK_DOMAIN && type != AUDIT_SYSCALL) ||
		    (type == AUDIT_LANDLOCK_DOMAIN && !strstr(body, "status=allocated")))) {
		free(t);
		return;
	}
	if (!ev) {
		if (k->npending == KA_PENDING_MAX) {
			/* the oldest one (serials grow) will never see its EOE;
			 * never the newest, whose records are still coming */
			size_t o = 0;
			for (size_t i = 1; i < k->npending; i++)
				if (k->pending[i].serial < k->pending[o].serial)
					o = i;
			ka_flush(k, &k->pending[o], log);
			k->pending[o] = k->pending[--k->npending];
		}
		ev = &k->pending[k->npending++];
		memset(ev, 0, sizeof(*ev));
		ev->serial = serial;
		ev->ns = ns;
	}
	struct ka_rec *nr = realloc(ev->recs, (ev->n + 1) * sizeof(*nr));
	if (!nr) {
		free(t);
		return;
	}
	ev->recs = nr;
	memmove(t, body, strlen(body) + 1);
	ev->recs[ev->n].type = type;
	ev->recs[ev->n].text = t;
	ev->n++;
}

void bee_kaudit_lost(struct bee_kaudit *k, struct bee_audit_log *log, const char *what)
{
	char res[64];
	snprintf(res, sizeof(res), "bee:kernel-audit-lost:%s", what);
	struct bee_audit_line l = {
		.realtime_ns = bee_clock_ns(CLOCK_REALTIME), .kind = "Process", .action = "Read",
		.resource = res, .resource_len = strlen(res), .decision = "Deny", .pid = -1,
		.source = "loader", .rule = -1,
	};
	bee_audit_relay(log, &l, k->warn, k->warn_ctx);
}

int bee_kaudit_read(struct bee_kaudit *k, struct bee_audit_log *log)
{
	char buf[16384];
	for (;;) {
		ssize_t n = recv(k->sock, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			if (errno == ENOBUFS) {
				bee_kaudit_lost(k, log, "unknown");
				continue;
			}
			return -errno;
		}
		/* one record a datagram; nlmsg_len is not to be trusted (audit
		 * has set it without the header in some kernels) */
		if ((size_t)n <= NLMSG_HDRLEN)
			continue;
		struct nlmsghdr *h = (void *)buf;
		size_t len = (size_t)n - NLMSG_HDRLEN;
		bee_kaudit_record(k, h->nlmsg_type, NLMSG_DATA(h), strnlen(NLMSG_DATA(h), len), log);
	}
}

static int ka_send_marker(struct bee_kaudit *k)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_AUDIT);
	if (fd < 0)
		return -errno;
	struct {
		struct nlmsghdr h;
		char text[96];
	} req = { 0 };
	int n = snprintf(req.text, sizeof(req.text), "bee-load drain %s %u", k->id, ++k->marker_seq);
	req.h.nlmsg_len = (uint32_t)NLMSG_LENGTH((size_t)n + 1);
	req.h.nlmsg_type = KA_MARKER_TYPE;
	req.h.nlmsg_flags = NLM_F_REQUEST;
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	int err = sendto(fd, &req, req.h.nlmsg_len, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0 ? -errno : 0;
	close(fd);
	return err;
}

int bee_kaudit_drain(struct bee_kaudit *k, struct bee_audit_log *log, int timeout_ms)
{
	k->marker_seen = false;
	int err = ka_send_marker(k);
	int64_t end = bee_clock_ns(CLOCK_MONOTONIC) / 1000000 + timeout_ms;
	while (!err && !k->marker_seen) {
		int64_t left = end - bee_clock_ns(CLOCK_MONOTONIC) / 1000000;
		if (left <= 0) {
			err = -ETIMEDOUT;
			break;
		}
		struct pollfd p = { .fd = k->sock, .events = POLLIN };
		if (poll(&p, 1, (int)left) > 0)
			err = bee_kaudit_read(k, log);
	}
	/* events without an EOE (no syscall context) end here */
	while (k->npending)
		ka_flush(k, &k->pending[--k->npending], log);
	struct audit_status st;
	if (ka_status(&st) == 0 && st.lost > k->lost_at_start) {
		char n[16];
		snprintf(n, sizeof(n), "%u", st.lost - k->lost_at_start);
		bee_kaudit_lost(k, log, n);
		k->lost_at_start = st.lost;
	}
	return err;
}

void bee_kaudit_close(struct bee_kaudit *k)
{
	if (!k)
		return;
	while (k->npending)
		ka_event_free(&k->pending[--k->npending]);
	if (k->sock >= 0)
		close(k->sock);
	if (k->held)
		ka_release(k->id, k->warn, k->warn_ctx);
	free(k->pids);
	free(k->domains);
	free(k);
}
