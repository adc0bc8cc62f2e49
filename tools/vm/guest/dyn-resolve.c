/* SPDX-License-Identifier: GPL-2.0-only */
/* dyn-resolve: what the DNS case (48-session-dns) runs inside a session,
 * dynamically linked so that glibc's own resolver (getaddrinfo, the
 * servers of /etc/resolv.conf, RES_OPTIONS) does the asking.
 *
 *   dyn-resolve NAME PORT [SECONDS]   resolve NAME (IPv4), then a TCP
 *                                     connect to its first address; with
 *                                     SECONDS, sleep and connect again
 *   dyn-resolve -a ADDR PORT          a connect only
 *
 * It prints one line: "ADDR R1 [R2]" (R: ok or the errno's name), or
 * "unresolved: WHY". Exit 0 whatever the connects said. */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static const char *try_connect(const char *addr, int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((unsigned short)port) };
	if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1)
		return "EINVAL";
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return strerror(errno);
	int e = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ? errno : 0;
	close(fd);
	return e == 0 ? "ok" : e == EPERM ? "EPERM" : e == ECONNREFUSED ? "ECONNREFUSED" : strerror(e);
}

int main(int argc, char **argv)
{
	char addr[64];
	if (argc == 4 && strcmp(argv[1], "-a") == 0) {
		printf("%s %s\n", argv[2], try_connect(argv[2], atoi(argv[3])));
		return 0;
	}
	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: dyn-resolve NAME PORT [SECONDS] | -a ADDR PORT\n");
		return 2;
	}
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *res = NULL;
	int g = getaddrinfo(argv[1], NULL, &hints, &res);
	if (g) {
		printf("unresolved: %s\n", gai_strerror(g));
		return 0;
	}
	inet_ntop(AF_INET, &((struct sockaddr_in *)res->ai_addr)->sin_addr, addr, sizeof(addr));
	freeaddrinfo(res);
	printf("%s %s", addr, try_connect(addr, atoi(argv[2])));
	if (argc == 4) {
		sleep((unsigned)atoi(argv[3]));
		printf(" %s", try_connect(addr, atoi(argv[2])));
	}
	printf("\n");
	return 0;
}
