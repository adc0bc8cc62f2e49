/* SPDX-License-Identifier: GPL-2.0-only */
/* util.c: errors, the stage and backend tables, fault injection, files,
 * clocks and session ids. */
#include "internal.h"

#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

const char *bee_stage__name(enum bee_stage s)
{
	switch (s) {
#define BEE_STAGE_NAME(name, status, text, doc) case BEE_STAGE_##name: return text;
	BEE_STAGES(BEE_STAGE_NAME)
#undef BEE_STAGE_NAME
	case BEE_STAGE_COUNT:
		break;
	}
	return "unknown";
}

const char *bee_stage__doc(enum bee_stage s)
{
	switch (s) {
#define BEE_STAGE_DOC(name, status, text, doc) case BEE_STAGE_##name: return doc;
	BEE_STAGES(BEE_STAGE_DOC)
#undef BEE_STAGE_DOC
	case BEE_STAGE_COUNT:
		break;
	}
	return "";
}

int bee_stage__exit_status(enum bee_stage s, int err)
{
	if (s == BEE_STAGE_EXEC && (err == -ENOENT || err == -ENOTDIR))
		return BEE_EXIT_NOT_FOUND;
	switch (s) {
#define BEE_STAGE_STATUS(name, status, text, doc) case BEE_STAGE_##name: return status;
	BEE_STAGES(BEE_STAGE_STATUS)
#undef BEE_STAGE_STATUS
	case BEE_STAGE_COUNT:
		break;
	}
	return 1;
}

const char *bee_backend__name(enum bee_backend b)
{
	switch (b) {
#define BEE_BACKEND_NAME(name, text) case BEE_BACKEND_##name: return text;
	BEE_BACKENDS(BEE_BACKEND_NAME)
#undef BEE_BACKEND_NAME
	}
	return "unknown";
}

int bee_backend__parse(const char *name, enum bee_backend *out)
{
#define BEE_BACKEND_PARSE(n, text)          \
	if (strcmp(name, text) == 0) {      \
		*out = BEE_BACKEND_##n;     \
		return 0;                   \
	}
	BEE_BACKENDS(BEE_BACKEND_PARSE)
#undef BEE_BACKEND_PARSE
	return -EINVAL;
}

int bee_fail(struct bee_error *e, enum bee_stage st, int err, const char *fmt, ...)
{
	if (!e)
		return err;
	e->stage = st;
	e->err = err;
	int n = snprintf(e->msg, sizeof(e->msg), "%s: ", bee_stage__name(st));
	if (n < 0 || (size_t)n >= sizeof(e->msg))
		n = 0;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e->msg + n, sizeof(e->msg) - (size_t)n, fmt, ap);
	va_end(ap);
	/* one line: a message quoting the kernel or libbpf must stay one */
	for (char *p = e->msg; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	return err;
}

void bee_warnf(bee_warn_fn warn, void *ctx, const char *fmt, ...)
{
	if (!warn)
		return;
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	warn(ctx, buf);
}

int bee_opts_copy(void *dst, size_t size, const void *src)
{
	memset(dst, 0, size);
	if (!src)
		return 0;
	size_t sz = *(const size_t *)src;
	if (sz < sizeof(size_t))
		return -EINVAL;
	for (size_t i = size; i < sz; i++)
		if (((const uint8_t *)src)[i])
			return -EINVAL;
	memcpy(dst, src, sz < size ? sz : size);
	*(size_t *)dst = size;
	return 0;
}

#ifdef BEE_FAULT_INJECTION
int bee_fault(enum bee_stage st)
{
	const char *f = getenv("BEE_FAULT");
	return f && strcmp(f, bee_stage__name(st)) == 0 ? -EIO : 0;
}
#endif

int bee_write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t len = strlen(text);
	ssize_t n = write(fd, text, len);
	int err = n < 0 ? -errno : (size_t)n != len ? -EIO : 0;
	close(fd);
	return err;
}

int bee_read_file(const char *path, char **out, size_t *len)
{
	int err = 0;
	size_t cap = 4096, n = 0;
	char *buf = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	buf = malloc(cap);
	if (!buf) {
		err = -ENOMEM;
		goto out;
	}
	for (;;) {
		if (n + 1 >= cap) {
			char *nb = realloc(buf, cap * 2);
			if (!nb) {
				err = -ENOMEM;
				goto out;
			}
			buf = nb;
			cap *= 2;
		}
		ssize_t r = read(fd, buf + n, cap - n - 1);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			goto out;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	*out = buf;
	buf = NULL;
	if (len)
		*len = n;
out:
	free(buf);
	close(fd);
	return err;
}

int bee_write_atomic(const char *path, const char *text, size_t len)
{
	char tmp[PATH_MAX];
	int err = 0;
	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid()) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	size_t off = 0;
	while (off < len) {
		ssize_t w = write(fd, text + off, len - off);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			goto out;
		}
		off += (size_t)w;
	}
	/* no fsync: the registry describes kernel objects that a reboot removes
	 * anyway; the rename alone keeps it whole when a process dies. Over an
	 * old copy the two names trade places and the old one is unlinked: a
	 * rename over a file makes ext4 write the new one's blocks out first
	 * (auto_da_alloc), which costs a session's record about a millisecond
	 * here, once at the update and again at its unlink. Where exchange is
	 * not had (no old copy, or a file system without it), a rename. */
	if (renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_EXCHANGE) == 0)
		unlink(tmp);
	else if (rename(tmp, path) < 0)
		err = -errno;
out:
	close(fd);
	if (err)
		unlink(tmp);
	return err;
}

int bee_lock_dir(const char *dir)
{
	char path[PATH_MAX];
	int err = bee_mkdirs(dir, 0700);
	if (err)
		return err;
	snprintf(path, sizeof(path), "%s/lock", dir);
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	while (flock(fd, LOCK_EX) < 0) {
		if (errno != EINTR) {
			err = -errno;
			close(fd);
			return err;
		}
	}
	return fd;
}

int bee_mkdirs(const char *path, mode_t mode)
{
	char buf[PATH_MAX];
	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return -ENAMETOOLONG;
	/* the common case, the whole path there already: one call, not one
	 * per component (a launch makes sure of its folders eight times) */
	if (mkdir(buf, mode) == 0 || errno == EEXIST)
		return 0;
	if (errno != ENOENT)
		return -errno;
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, mode) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, mode) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

int64_t bee_clock_ns(int clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void bee_utc_iso(int64_t ns, char *buf, size_t size)
{
	/* floor division, so that times before 1970 still round down */
	int64_t sec = ns / 1000000000, rem = ns % 1000000000;
	if (rem < 0) {
		rem += 1000000000;
		sec--;
	}
	/* the civil date of a day count (H. Hinnant's civil_from_days, the
	 * inverse of days_from_civil): glibc's gmtime_r reads /etc/localtime
	 * once first, six system calls a launch does not need for a UTC time */
	int64_t days = sec / 86400, s = sec % 86400;
	if (s < 0) {
		s += 86400;
		days--;
	}
	int64_t z = days + 719468, era = (z >= 0 ? z : z - 146096) / 146097;
	int64_t doe = z - era * 146097;
	int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100), mp = (5 * doy + 2) / 153;
	int64_t day = doy - (153 * mp + 2) / 5 + 1, month = mp < 10 ? mp + 3 : mp - 9;
	int64_t year = yoe + era * 400 + (month <= 2);
	snprintf(buf, size, "%04lld-%02d-%02dT%02d:%02d:%02d.%03dZ", (long long)year, (int)month, (int)day,
		 (int)(s / 3600), (int)(s / 60 % 60), (int)(s % 60), (int)(rem / 1000000));
}

int bee_session_id_new(char out[17])
{
	uint8_t b[8];
	size_t got = 0;
	while (got < sizeof(b)) {
		ssize_t n = getrandom(b + got, sizeof(b) - got, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		got += (size_t)n;
	}
	/* its own digits: the audit fuzzer links this file without the pack reader */
	for (int i = 0; i < 8; i++)
		snprintf(out + 2 * i, 3, "%02x", b[i]);
	return 0;
}

size_t bee_scm_fds(struct msghdr *mh, int *fds, size_t have, size_t max, bool *extra)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++) {
			int f;
			memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (have < max) {
				fds[have++] = f;
			} else {
				close(f);
				if (extra)
					*extra = true;
			}
		}
	}
	return have;
}

/* One sendmsg of buf[0..len) with fds[0..nfds-1] (at most
 * BEE_SEND_FDS_MAX) as SCM_RIGHTS, again on EINTR: the bytes sent (maybe
 * fewer than len), or -errno. */
ssize_t bee_send_fds(int fd, const void *buf, size_t len, const int *fds, size_t nfds)
{
	union {
		char buf[CMSG_SPACE(BEE_SEND_FDS_MAX * sizeof(int))];
		struct cmsghdr align;
	} cm;
	if (nfds > BEE_SEND_FDS_MAX)
		return -EINVAL;
	memset(&cm, 0, sizeof(cm));
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	if (nfds) {
		mh.msg_control = cm.buf;
		mh.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(nfds * sizeof(int));
		memcpy(CMSG_DATA(c), fds, nfds * sizeof(int));
	}
	ssize_t w;
	while ((w = sendmsg(fd, &mh, MSG_NOSIGNAL)) < 0 && errno == EINTR)
		;
	return w < 0 ? -errno : w;
}

/* Sends o as one line (taking it), with fds[0..nfds-1] attached to its
 * first bytes: one sendmsg for the text and its newline, one wake-up. 0
 * or -errno. */
int bee_json_line_send(int fd, json_t *o, const int *fds, size_t nfds)
{
	char *text = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (!text)
		return -ENOMEM;
	size_t len = strlen(text);
	char *line = realloc(text, len + 2);
	if (!line) {
		free(text);
		return -ENOMEM;
	}
	line[len++] = '\n';
	int err = 0;
	for (size_t off = 0; off < len;) {
		/* the descriptors ride with the first bytes */
		ssize_t w = bee_send_fds(fd, line + off, len - off, off ? NULL : fds, off ? 0 : nfds);
		if (w < 0) {
			err = (int)w;
			break;
		}
		off += (size_t)w;
	}
	free(line);
	return err;
}

/* One recvmsg of up to len bytes into buf, its descriptors (at most 3
 * kept in fds[], *nfds counting them) taken: more, or a truncated control
 * message, set *extra. The bytes read, 0 at EOF, or -errno. */
ssize_t bee_recv_fds(int fd, char *buf, size_t len, int flags, int *fds, size_t *nfds, bool *extra)
{
	union {
		char buf[CMSG_SPACE(8 * sizeof(int))];
		struct cmsghdr align;
	} cm;
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cm.buf,
			     .msg_controllen = sizeof(cm.buf) };
	ssize_t n;
	do
		n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC | flags);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	*nfds = bee_scm_fds(&mh, fds, *nfds, 3, extra);
	if (mh.msg_flags & MSG_CTRUNC)
		*extra = true;
	return n;
}
