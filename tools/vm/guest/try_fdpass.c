/* SPDX-License-Identifier: GPL-2.0-only */
/* try_fdpass.c: bee-try's descriptors from outside (try.h): a file that
 * the policy denies, opened by a process outside the session and passed
 * in over SCM_RIGHTS (bee-fdsend is the other end).
 *
 *   fdrecv SOCK               bind and listen on the AF_UNIX path SOCK,
 *                             accept one connection (10 s at most), receive
 *                             one descriptor and read it: READ:<first line>,
 *                             NOFD when the message came without it (the
 *                             kernel dropped it: MSG_CTRUNC), or the errno
 *   fdrecv-connect SOCK PATH  connect to SOCK (bee-fdsend --listen), ask for
 *                             PATH, receive and read it as fdrecv does
 */
#include "try.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* Receives one descriptor on c and reads it; prints the word. */
static int recv_and_read(int c)
{
	char data[8];
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} u;
	struct iovec iov = { data, sizeof(data) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			    .msg_controllen = sizeof(u.buf) };
	struct pollfd p = { c, POLLIN, 0 };
	if (poll(&p, 1, 10000) != 1)
		return try_setup_failed(ETIMEDOUT);
	ssize_t n = recvmsg(c, &m, MSG_CMSG_CLOEXEC);
	if (n < 0)
		return try_answer(errno);
	struct cmsghdr *h = CMSG_FIRSTHDR(&m);
	if (!h || h->cmsg_type != SCM_RIGHTS || h->cmsg_len < CMSG_LEN(sizeof(int))) {
		puts(m.msg_flags & MSG_CTRUNC ? "NOFD" : "SETUP:ENOMSG");
		return 1;
	}
	int fd;
	memcpy(&fd, CMSG_DATA(h), sizeof(fd));
	char buf[41];
	ssize_t r = read(fd, buf, sizeof(buf) - 1);
	int err = r < 0 ? errno : 0;
	close(fd);
	if (r < 0)
		return try_answer(err);
	buf[r] = '\0';
	buf[strcspn(buf, "\n \t")] = '\0';
	printf("READ:%s\n", buf);
	return 0;
}

int try_fdrecv(int argc, char **argv)
{
	(void)argc;
	int s, err = try_unix_listen(argv[1], &s);
	if (err)
		return try_setup_failed(err);
	struct pollfd p = { s, POLLIN, 0 };
	int c = poll(&p, 1, 10000) == 1 ? accept4(s, NULL, NULL, SOCK_CLOEXEC) : -1;
	err = errno;
	close(s);
	unlink(argv[1]);
	if (c < 0)
		return try_setup_failed(p.revents ? err : ETIMEDOUT);
	int r = recv_and_read(c);
	close(c);
	return r;
}

int try_fdrecv_connect(int argc, char **argv)
{
	(void)argc;
	struct sockaddr_un a;
	if (try_unix_addr(argv[1], &a) < 0)
		return try_setup_failed(ENAMETOOLONG);
	int c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c < 0)
		return try_setup_failed(errno);
	if (connect(c, (struct sockaddr *)&a, sizeof(a)) < 0) {
		int err = errno;
		close(c);
		return try_answer(err);
	}
	char line[256];
	int n = snprintf(line, sizeof(line), "%s\n", argv[2]);
	if (write(c, line, (size_t)n) != n) {
		int err = errno;
		close(c);
		return try_setup_failed(err);
	}
	int r = recv_and_read(c);
	close(c);
	return r;
}
