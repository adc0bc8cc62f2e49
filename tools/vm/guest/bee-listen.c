/* SPDX-License-Identifier: GPL-2.0-only */
/* bee-listen: the guest's servers, so that an allowed connect really
 * connects and the same connect from outside a session succeeds.
 *
 *   bee-listen ENDPOINT...
 *
 * ENDPOINT is ADDR:PORT (TCP; an IPv6 address in brackets) or unix:PATH
 * (an AF_UNIX stream socket). Binds and listens on every one, prints
 * "READY" on stdout once all are listening, then accepts and closes
 * connections until killed. Exit status 1, with a message naming the
 * endpoint, when one cannot be bound.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define MAX_ENDPOINTS 64

static int listen_on(const char *text)
{
	struct sockaddr_storage ss;
	socklen_t len;
	memset(&ss, 0, sizeof(ss));
	if (!strncmp(text, "unix:", 5)) {
		struct sockaddr_un *un = (struct sockaddr_un *)&ss;
		if (strlen(text + 5) >= sizeof(un->sun_path))
			return -ENAMETOOLONG;
		un->sun_family = AF_UNIX;
		strcpy(un->sun_path, text + 5);
		unlink(text + 5);
		len = sizeof(*un);
	} else {
		char host[64];
		const char *colon;
		if (text[0] == '[') {
			const char *br = strchr(text, ']');
			if (!br || br[1] != ':' || (size_t)(br - text - 1) >= sizeof(host))
				return -EINVAL;
			memcpy(host, text + 1, br - text - 1);
			host[br - text - 1] = '\0';
			colon = br + 1;
		} else {
			colon = strrchr(text, ':');
			if (!colon || (size_t)(colon - text) >= sizeof(host))
				return -EINVAL;
			memcpy(host, text, colon - text);
			host[colon - text] = '\0';
		}
		int port = atoi(colon + 1);
		struct sockaddr_in *in4 = (struct sockaddr_in *)&ss;
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
		if (inet_pton(AF_INET, host, &in4->sin_addr) == 1) {
			in4->sin_family = AF_INET;
			in4->sin_port = htons((uint16_t)port);
			len = sizeof(*in4);
		} else if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
			in6->sin6_family = AF_INET6;
			in6->sin6_port = htons((uint16_t)port);
			len = sizeof(*in6);
		} else {
			return -EINVAL;
		}
	}
	int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	int one = 1;
	if (ss.ss_family != AF_UNIX)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ss.ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len) < 0 || listen(fd, 64) < 0) {
		int err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

int main(int argc, char **argv)
{
	struct pollfd p[MAX_ENDPOINTS];
	int n = 0;
	if (argc < 2 || argc - 1 > MAX_ENDPOINTS) {
		fprintf(stderr, "usage: bee-listen ENDPOINT... (ADDR:PORT, [ADDR6]:PORT or unix:PATH; at most %d)\n",
			MAX_ENDPOINTS);
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		int fd = listen_on(argv[i]);
		if (fd < 0) {
			fprintf(stderr, "bee-listen: '%s': cannot listen: %s\n", argv[i], strerror(-fd));
			return 1;
		}
		p[n].fd = fd;
		p[n].events = POLLIN;
		n++;
	}
	puts("READY");
	fflush(stdout);
	for (;;) {
		if (poll(p, (nfds_t)n, -1) < 0 && errno != EINTR)
			return 1;
		for (int i = 0; i < n; i++) {
			if (!(p[i].revents & POLLIN))
				continue;
			int c = accept4(p[i].fd, NULL, NULL, SOCK_CLOEXEC);
			if (c >= 0)
				close(c);
		}
	}
}
