/* SPDX-License-Identifier: GPL-2.0-only */
/* bee-fdsend: the outside end of the descriptor-passing escapes (bee-try
 * fdrecv and fdrecv-connect): a process outside any session that opens a
 * file (as root, so it may) and hands the descriptor over SCM_RIGHTS.
 *
 *   bee-fdsend SOCK FILE        connect to SOCK (retrying for 10 s while it
 *                               does not exist yet), send FILE's descriptor
 *                               (opened read-only), print SENT, exit
 *   bee-fdsend --listen SOCK    listen on SOCK, print READY, then for each
 *                               connection read one line (a path), open it
 *                               read-only and send its descriptor, until killed
 *
 * Exit status 1 with a message when the socket or the file cannot be had.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static int send_fd(int c, int fd)
{
	char byte = 'F';
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} u;
	memset(&u, 0, sizeof(u));
	struct iovec iov = { &byte, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			    .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *h = CMSG_FIRSTHDR(&m);
	h->cmsg_level = SOL_SOCKET;
	h->cmsg_type = SCM_RIGHTS;
	h->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(h), &fd, sizeof(fd));
	return sendmsg(c, &m, 0) < 0 ? -errno : 0;
}

static int addr_of(const char *path, struct sockaddr_un *a)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(a->sun_path)) {
		fprintf(stderr, "bee-fdsend: '%s': path too long\n", path);
		return -1;
	}
	strcpy(a->sun_path, path);
	return 0;
}

static int connect_send(const char *sock, const char *file)
{
	struct sockaddr_un a;
	if (addr_of(sock, &a) < 0)
		return 1;
	int fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "bee-fdsend: cannot open '%s': %s\n", file, strerror(errno));
		return 1;
	}
	for (int i = 0; i < 100; i++) {
		int c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (c < 0)
			break;
		if (connect(c, (struct sockaddr *)&a, sizeof(a)) == 0) {
			int r = send_fd(c, fd);
			if (r == 0)
				puts("SENT");
			else
				fprintf(stderr, "bee-fdsend: sendmsg to '%s': %s\n", sock, strerror(-r));
			char b;
			(void)!read(c, &b, 1);   /* until the receiver is done */
			close(c);
			return r ? 1 : 0;
		}
		close(c);
		usleep(100000);
	}
	fprintf(stderr, "bee-fdsend: cannot connect to '%s': %s\n", sock, strerror(errno));
	return 1;
}

static int listen_send(const char *sock)
{
	struct sockaddr_un a;
	if (addr_of(sock, &a) < 0)
		return 1;
	unlink(sock);
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(s, 8) < 0 ||
	    chmod(sock, 0777) < 0) {
		fprintf(stderr, "bee-fdsend: cannot listen on '%s': %s\n", sock, strerror(errno));
		return 1;
	}
	puts("READY");
	fflush(stdout);
	for (;;) {
		int c = accept4(s, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0)
			continue;
		char path[256];
		ssize_t n = read(c, path, sizeof(path) - 1);
		if (n > 0) {
			path[n] = '\0';
			path[strcspn(path, "\n")] = '\0';
			int fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd >= 0) {
				send_fd(c, fd);
				close(fd);
			}
		}
		close(c);
	}
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--listen"))
		return listen_send(argv[2]);
	if (argc == 3)
		return connect_send(argv[1], argv[2]);
	fprintf(stderr, "usage: bee-fdsend SOCK FILE | bee-fdsend --listen SOCK\n");
	return 2;
}
