/* SPDX-License-Identifier: GPL-2.0-only */
/* audit_log.c: the audit log's JSON lines.
 *
 *   {"ts":"2026-09-09T06:00:00.123Z","kind":"FileSystem","action":"Read",
 *    "resource":"/etc/passwd","decision":"Deny"}
 *
 * exactly these five keys in this order (DESIGN.md), then "count" for the
 * record that counts the repeats of a denial (bee_audit_relay), then with
 * --audit-detail: pid, comm, policy, session, source, reason, rule (when known).
 * Each line is written with one write(2) on a descriptor opened O_APPEND,
 * so lines of several writers (bee-load's relay, a revoke) never
 * interleave; the log is fsync'ed when it stops.
 *
 * Time: a ring-buffer record carries CLOCK_BOOTTIME (bee_audit.h); the
 * loader adds CLOCK_REALTIME - CLOCK_BOOTTIME sampled at session start
 * (and again whenever the wall clock is stepped: session.c watches a
 * TFD_TIMER_CANCEL_ON_SET timer) and prints UTC with milliseconds.
 */
#include "internal.h"

#include "bee_audit.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int64_t bee_boot_to_real(void)
{
	int64_t best = 0, gap = INT64_MAX;
	for (int i = 0; i < 5; i++) {
		int64_t b0 = bee_clock_ns(CLOCK_BOOTTIME);
		int64_t r = bee_clock_ns(CLOCK_REALTIME);
		int64_t b1 = bee_clock_ns(CLOCK_BOOTTIME);
		if (b1 - b0 < gap) {
			gap = b1 - b0;
			best = r - (b0 + (b1 - b0) / 2);
		}
	}
	return best;
}

/* A growing buffer for one line. */
struct jbuf {
	char *p;
	size_t n, cap;
	bool oom;
};

static void jb_put(struct jbuf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->n + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->n + n + 1)
			cap *= 2;
		char *np = realloc(b->p, cap);
		if (!np) {
			b->oom = true;
			return;
		}
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = '\0';
}

static void jb_puts(struct jbuf *b, const char *s)
{
	jb_put(b, s, strlen(s));
}

/* Length of the valid UTF-8 sequence at s (at most n bytes), 0 if none. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	size_t len;
	unsigned min;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2, min = 0x80;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3, min = 0x800;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4, min = 0x10000;
	else
		return 0;
	if (len > n)
		return 0;
	unsigned cp = c & (0xff >> (len + 1));
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

/* A JSON string: quotes, backslashes and controls escaped, invalid UTF-8
 * bytes replaced by U+FFFD. */
static void jb_string(struct jbuf *b, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	jb_put(b, "\"", 1);
	for (size_t i = 0; i < n;) {
		unsigned c = u[i];
		char esc[8];
		if (c == '"' || c == '\\') {
			esc[0] = '\\';
			esc[1] = (char)c;
			jb_put(b, esc, 2);
			i++;
		} else if (c < 0x20 || c == 0x7f) {
			snprintf(esc, sizeof(esc), "\\u%04x", c);
			jb_put(b, esc, 6);
			i++;
		} else {
			size_t l = utf8_seq(u + i, n - i);
			if (l == 0) {
				jb_put(b, "\xef\xbf\xbd", 3);
				i++;
			} else {
				jb_put(b, s + i, l);
				i += l;
			}
		}
	}
	jb_put(b, "\"", 1);
}

static void jb_key_str(struct jbuf *b, const char *key, const char *s, size_t n)
{
	jb_puts(b, ",\"");
	jb_puts(b, key);
	jb_puts(b, "\":");
	jb_string(b, s, n);
}

char *bee_audit_format(const struct bee_audit_line *l, const char *policy, bool detail, size_t *len)
{
	struct jbuf b = { 0 };
	char ts[40], num[32];
	bee_utc_iso(l->realtime_ns, ts, sizeof(ts));
	jb_puts(&b, "{\"ts\":");
	jb_string(&b, ts, strlen(ts));
	jb_key_str(&b, "kind", l->kind, strlen(l->kind));
	jb_key_str(&b, "action", l->action, strlen(l->action));
	jb_key_str(&b, "resource", l->resource, l->resource_len);
	jb_key_str(&b, "decision", l->decision, strlen(l->decision));
	if (l->count) {
		snprintf(num, sizeof(num), ",\"count\":%llu", (unsigned long long)l->count);
		jb_puts(&b, num);
	}
	if (detail) {
		if (l->pid >= 0) {
			snprintf(num, sizeof(num), ",\"pid\":%ld", l->pid);
			jb_puts(&b, num);
		}
		if (l->comm)
			jb_key_str(&b, "comm", l->comm, strlen(l->comm));
		if (policy)
			jb_key_str(&b, "policy", policy, strlen(policy));
		if (l->session)
			jb_key_str(&b, "session", l->session, strlen(l->session));
		if (l->source)
			jb_key_str(&b, "source", l->source, strlen(l->source));
		if (l->reason)
			jb_key_str(&b, "reason", l->reason, strlen(l->reason));
		if (l->rule >= 0) {
			snprintf(num, sizeof(num), ",\"rule\":%lld", l->rule);
			jb_puts(&b, num);
		}
	}
	jb_puts(&b, "}\n");
	if (b.oom) {
		free(b.p);
		return NULL;
	}
	*len = b.n;
	return b.p;
}

int bee_audit_write(struct bee_audit_log *log, const struct bee_audit_line *l)
{
	if (log->fd < 0)
		return 0;
	size_t len;
	struct bee_audit_line with = *l;
	if (!with.session)
		with.session = log->session;
	char *line = bee_audit_format(&with, log->policy, log->detail, &len);
	if (!line) {
		log->lost++;
		if (!log->lost_err)
			log->lost_err = -ENOMEM;
		return -ENOMEM;
	}
	int err = 0;
	ssize_t n;
	do
		n = write(log->fd, line, len);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		err = -errno;
	else if ((size_t)n != len)
		err = -ENOSPC;   /* a short write on a regular file: disk full */
	free(line);
	if (err) {
		log->lost++;
		if (!log->lost_err)
			log->lost_err = err;
	} else {
		log->written++;
	}
	return err;
}

/* A denial relayed once; repeats counts the identical ones since. */
struct bee_audit_rep {
	char *resource;             /* NULL: a free slot */
	size_t resource_len;
	const char *kind, *action;  /* the line's static names */
	uint64_t hash, repeats;
	long pid;
	const char *source;
};

#define REPS_SLOTS (2 * BEE_AUDIT_REPS)

static uint64_t rep_hash(const struct bee_audit_line *l)
{
	uint64_t h = 1469598103934665603ull;
	const char *parts[2] = { l->kind, l->action };
	for (int i = 0; i < 2; i++)
		for (const char *p = parts[i]; *p; p++)
			h = (h ^ (unsigned char)*p) * 1099511628211ull;
	for (size_t i = 0; i < l->resource_len; i++)
		h = (h ^ (unsigned char)l->resource[i]) * 1099511628211ull;
	return h;
}

/* 1: a repeat, counted; 0: the first (kept when there is room). */
static int rep_seen(struct bee_audit_log *log, const struct bee_audit_line *l)
{
	/* bee's own records ("bee:audit-lost:N") are counts already */
	if (strcmp(l->decision, "Deny") != 0 || l->count || (l->resource_len >= 4 && memcmp(l->resource, "bee:", 4) == 0))
		return 0;
	if (!log->reps && !(log->reps = calloc(REPS_SLOTS, sizeof(*log->reps))))
		return 0;
	uint64_t h = rep_hash(l);
	size_t i = h % REPS_SLOTS;
	for (struct bee_audit_rep *r; (r = &log->reps[i])->resource; i = (i + 1) % REPS_SLOTS)
		if (r->hash == h && r->resource_len == l->resource_len && strcmp(r->kind, l->kind) == 0 &&
		    strcmp(r->action, l->action) == 0 && memcmp(r->resource, l->resource, l->resource_len) == 0) {
			r->repeats++;
			return 1;
		}
	if (log->nreps >= BEE_AUDIT_REPS)
		return 0;
	struct bee_audit_rep *r = &log->reps[i];
	if (!(r->resource = malloc(l->resource_len + 1)))
		return 0;
	memcpy(r->resource, l->resource, l->resource_len);
	r->resource[l->resource_len] = '\0';
	r->resource_len = l->resource_len;
	r->kind = l->kind;
	r->action = l->action;
	r->hash = h;
	r->pid = l->pid;
	r->source = l->source;
	log->nreps++;
	return 0;
}

/* One record per denial that repeated, its count the repeats; then the
 * table goes. */
static void reps_flush(struct bee_audit_log *log)
{
	for (size_t i = 0; log->reps && i < REPS_SLOTS; i++) {
		struct bee_audit_rep *r = &log->reps[i];
		if (r->resource && r->repeats) {
			struct bee_audit_line l = {
				.realtime_ns = bee_clock_ns(CLOCK_REALTIME), .kind = r->kind, .action = r->action,
				.resource = r->resource, .resource_len = r->resource_len, .decision = "Deny",
				.pid = r->pid, .source = r->source, .reason = "repeated (counted)", .rule = -1,
				.count = r->repeats,
			};
			bee_audit_write(log, &l);
		}
		free(r->resource);
	}
	free(log->reps);
	log->reps = NULL;
	log->nreps = 0;
}

void bee_audit_relay(struct bee_audit_log *log, const struct bee_audit_line *l, bee_warn_fn warn,
		     void *warn_ctx)
{
	if (log->fd >= 0 && rep_seen(log, l))
		return;
	int err = bee_audit_write(log, l);
	if (err && log->lost == 1)   /* said once; the session gives the count */
		bee_warnf(warn, warn_ctx, "audit log '%s': %s: records are lost from here on (counted)",
			  log->path ? log->path : "?", strerror(-err));
}

/* The user bee-load runs for: its real uid, or sudo's caller. */
static bool audit_owner_ok(uid_t uid)
{
	const char *su = getenv("SUDO_UID");
	char *end;
	unsigned long v = su && *su ? strtoul(su, &end, 10) : 0;
	bool sudo = su && *su && !*end && v == uid;
	return uid == 0 || uid == geteuid() || uid == getuid() || sudo;
}

int bee_audit_fd_open(const char *path, bool create, char *why, size_t whysize)
{
	struct stat st;
	int err;
	/* what is there is looked at before it is opened: opening a FIFO for
	 * writing may block. A character device (/dev/null, /dev/full) is
	 * fine: only root makes one; open says what else is wrong (EISDIR). */
	if (lstat(path, &st) == 0 && (S_ISLNK(st.st_mode) || S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))) {
		snprintf(why, whysize, "%s", S_ISLNK(st.st_mode) ? "it is a symbolic link" : "it is not a regular file");
		return -EPERM;
	}
	/* O_NOFOLLOW: a symbolic link planted since is refused, never followed
	 * to a file of the link's choosing; O_NONBLOCK: a FIFO planted since
	 * does not block (fstat below refuses it) */
	int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK | (create ? O_CREAT : 0),
		      0600);
	if (fd < 0) {
		err = -errno;
		snprintf(why, whysize, "%s", err == -ELOOP ? "it is a symbolic link" : strerror(-err));
		return err;
	}
	if (fstat(fd, &st) < 0) {
		err = -errno;
		snprintf(why, whysize, "%s", strerror(-err));
	} else if (!S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode)) {
		err = -EPERM;
		snprintf(why, whysize, "it is not a regular file");
	} else if (S_ISREG(st.st_mode) && st.st_nlink != 1) {
		/* a hard link to a file bee must not write (another user's, /etc's) */
		err = -EPERM;
		snprintf(why, whysize, "it has %lu hard links", (unsigned long)st.st_nlink);
	} else if (!audit_owner_ok(st.st_uid)) {
		err = -EPERM;
		snprintf(why, whysize, "it is owned by uid %u, neither root nor the invoking user", (unsigned)st.st_uid);
	} else if (fcntl(fd, F_SETFL, O_APPEND) < 0) {
		err = -errno;
		snprintf(why, whysize, "%s", strerror(-err));
	} else {
		return fd;
	}
	close(fd);
	return err;
}

int bee_audit_open(struct bee_audit_log *log, const char *path, struct bee_error *e)
{
	char why[128];
	int err = bee_fault(BEE_STAGE_AUDIT);
	if (err)
		return bee_fail(e, BEE_STAGE_AUDIT, err, "audit log '%s': injected fault", path);
	int fd = bee_audit_fd_open(path, true, why, sizeof(why));
	if (fd < 0)
		return bee_fail(e, BEE_STAGE_AUDIT, fd, "audit log '%s': cannot open for appending: %s", path, why);
	char *copy = strdup(path);
	if (!copy) {
		close(fd);
		return bee_fail(e, BEE_STAGE_AUDIT, -ENOMEM, "audit log '%s': out of memory", path);
	}
	bee_audit_close(log);
	log->fd = fd;
	log->path = copy;
	log->lost = 0;
	log->lost_err = 0;
	log->written = 0;
	return 0;
}

int bee_audit_close(struct bee_audit_log *log)
{
	int err = 0;
	if (log->fd >= 0)
		reps_flush(log);
	if (log->fd >= 0) {
		/* fsync of a pipe or a terminal says EINVAL: nothing to make durable */
		if (fsync(log->fd) < 0 && errno != EINVAL && errno != EROFS)
			err = -errno;
		close(log->fd);
	}
	log->fd = -1;
	free(log->path);
	log->path = NULL;
	return err;
}

void bee_audit_endpoint(int family, const uint8_t *addr, unsigned port, char *buf, size_t size)
{
	char a[INET6_ADDRSTRLEN] = "?";
	if (family == AF_INET) {
		inet_ntop(AF_INET, addr, a, sizeof(a));
		snprintf(buf, size, "%s:%u", a, port);
	} else {
		inet_ntop(AF_INET6, addr, a, sizeof(a));
		snprintf(buf, size, "[%s]:%u", a, port);
	}
}

static const char *family_name(unsigned f)
{
	switch (f) {
	case AF_UNIX: return "AF_UNIX";
	case AF_INET: return "AF_INET";
	case AF_INET6: return "AF_INET6";
	case AF_NETLINK: return "AF_NETLINK";
	case AF_PACKET: return "AF_PACKET";
	case 40: return "AF_VSOCK";
	}
	return NULL;
}

static const char *socktype_name(unsigned t)
{
	switch (t) {
	case SOCK_STREAM: return "SOCK_STREAM";
	case SOCK_DGRAM: return "SOCK_DGRAM";
	case SOCK_RAW: return "SOCK_RAW";
	case SOCK_SEQPACKET: return "SOCK_SEQPACKET";
	}
	return NULL;
}

int bee_audit_event_line(const void *data, size_t size, int64_t boot_to_real, struct bee_audit_line *l,
			 char *res, size_t ressize, char *comm)
{
	const struct bee_audit_event *ev = data;
	if (size < sizeof(*ev) || ev->path_len > size - sizeof(*ev) || ev->path_len > BEE_AUDIT_PATH_MAX)
		return -EINVAL;
	memset(l, 0, sizeof(*l));
	l->kind = bee_audit_kind_name(ev->kind);
	l->action = bee_audit_action_name(ev->action);
	l->decision = bee_audit_decision_name(ev->decision);
	if (!l->kind || !l->action || !l->decision)
		return -EINVAL;
	/* a boot time no kernel reaches (a corrupt record) must not overflow
	 * the sum: the line then says the latest time there is (fuzz_audit) */
	if (ev->ktime_ns > INT64_MAX ||
	    __builtin_add_overflow((int64_t)ev->ktime_ns, boot_to_real, &l->realtime_ns))
		l->realtime_ns = INT64_MAX;
	l->pid = ev->pid;
	memcpy(comm, ev->comm, 16);
	comm[16] = '\0';
	l->comm = comm;
	l->source = "bpf";
	l->reason = bee_audit_reason_name(ev->reason);
	l->rule = -1;
	const char *path = (const char *)(ev + 1);
	switch (ev->resource) {
	case BEE_AUDIT_RES_PATH:
	case BEE_AUDIT_RES_UNIX:
		if (ev->path_len) {
			size_t n = ev->path_len < ressize ? ev->path_len : ressize - 1;
			memcpy(res, path, n);
			res[n] = '\0';
			l->resource = res;
			l->resource_len = n;
			return 0;
		}
		if (ev->resource == BEE_AUDIT_RES_UNIX) {
			snprintf(res, ressize, "unix:unnamed");
			break;
		}
		/* no path: name the file */
		__attribute__((fallthrough));
	case BEE_AUDIT_RES_FILE:
		snprintf(res, ressize, "inode:%u:%u:%llu", ev->file.dev >> 20, ev->file.dev & 0xfffff,
			 (unsigned long long)ev->file.ino);
		break;
	case BEE_AUDIT_RES_INET:
		bee_audit_endpoint(ev->net.family, ev->net.addr, ev->net.port, res, ressize);
		break;
	case BEE_AUDIT_RES_SOCKET: {
		const char *f = family_name(ev->net.family), *t = socktype_name(ev->net.type);
		char fb[16], tb[16];
		if (!f)
			snprintf(fb, sizeof(fb), "%u", ev->net.family), f = fb;
		if (!t)
			snprintf(tb, sizeof(tb), "%u", ev->net.type), t = tb;
		snprintf(res, ressize, "socket:%s/%s/%u", f, t, ev->net.proto);
		break;
	}
	case BEE_AUDIT_RES_NONE:
		snprintf(res, ressize, "%s",
			 ev->hook == BEE_AUDIT_HOOK_USERNS_CREATE ? "userns"
			 : ev->hook == BEE_AUDIT_HOOK_BPF         ? "bpf"
								  : "none");
		break;
	default:
		return -EINVAL;
	}
	l->resource = res;
	l->resource_len = strlen(res);
	return 0;
}
