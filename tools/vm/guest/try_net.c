/* SPDX-License-Identifier: GPL-2.0-only */
/* try_net.c: bee-try's socket operations (try.h).
 *
 *   connect ADDR:PORT [tcp|udp]   socket, connect(2)
 *   sendto ADDR:PORT              one UDP datagram without connect(2)
 *   csendto CONN SEND             a UDP socket connected to CONN sends one
 *                                 datagram to SEND with an explicit address
 *   bind ADDR:PORT [tcp|udp]      socket, bind(2)
 *   listen                        a TCP socket that listen(2)s without a bind
 *                                 (the kernel picks a port: no bind hook runs)
 *   socket FAMILY TYPE PROTO      socket(2); FAMILY inet, inet6, unix, packet,
 *                                 netlink or a number; TYPE stream, dgram, raw
 *                                 or a number; PROTO a number
 *   unix-connect PATH             connect to the AF_UNIX stream socket at PATH
 *   unix-self PATH                bind a stream socket at PATH, listen, connect
 *                                 to it from a second socket of our own
 *
 * ADDR is an IPv4 address or an IPv6 address in brackets ("[::1]:80").
 * "OK" for connect means the connect got past every policy hook: a TCP
 * connect to a port nobody listens on answers ECONNREFUSED from the stack,
 * which is printed as such.
 */
#include "try.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int parse_endpoint(const char *text, struct sockaddr_storage *ss, socklen_t *len)
{
	char host[64];
	const char *colon;
	memset(ss, 0, sizeof(*ss));
	if (text[0] == '[') {
		const char *close_br = strchr(text, ']');
		if (!close_br || close_br[1] != ':' || (size_t)(close_br - text - 1) >= sizeof(host))
			return -1;
		memcpy(host, text + 1, close_br - text - 1);
		host[close_br - text - 1] = '\0';
		colon = close_br + 1;
	} else {
		colon = strrchr(text, ':');
		if (!colon || (size_t)(colon - text) >= sizeof(host))
			return -1;
		memcpy(host, text, colon - text);
		host[colon - text] = '\0';
	}
	char *end;
	long port = strtol(colon + 1, &end, 10);
	if (*end || port < 0 || port > 65535 || end == colon + 1)
		return -1;
	struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
	if (inet_pton(AF_INET, host, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons((uint16_t)port);
		*len = sizeof(*in4);
		return 0;
	}
	if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		*len = sizeof(*in6);
		return 0;
	}
	return -1;
}

static int bad_endpoint(const char *text)
{
	fprintf(stderr, "bee-try: bad endpoint '%s': want ADDR:PORT or [ADDR6]:PORT\n", text);
	puts("USAGE");
	return 2;
}

static int proto_type(const char *proto)
{
	if (!strcmp(proto, "tcp"))
		return SOCK_STREAM;
	if (!strcmp(proto, "udp"))
		return SOCK_DGRAM;
	return -1;
}

/* connect and bind: socket of the endpoint's family, then the call. */
static int addr_call(int argc, char **argv, int (*call)(int, const struct sockaddr *, socklen_t))
{
	struct sockaddr_storage ss;
	socklen_t len;
	if (parse_endpoint(argv[1], &ss, &len) < 0)
		return bad_endpoint(argv[1]);
	int type = proto_type(argc > 2 ? argv[2] : "tcp");
	if (type < 0) {
		fprintf(stderr, "bee-try: protocol must be tcp or udp\n");
		puts("USAGE");
		return 2;
	}
	int fd = socket(ss.ss_family, type | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return try_setup_failed(errno);
	int err = call(fd, (struct sockaddr *)&ss, len) < 0 ? errno : 0;
	close(fd);
	return try_answer(err);
}

int try_connect(int argc, char **argv)
{
	return addr_call(argc, argv, connect);
}

int try_bind(int argc, char **argv)
{
	return addr_call(argc, argv, bind);
}

int try_sendto(int argc, char **argv)
{
	(void)argc;
	struct sockaddr_storage ss;
	socklen_t len;
	if (parse_endpoint(argv[1], &ss, &len) < 0)
		return bad_endpoint(argv[1]);
	int fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return try_setup_failed(errno);
	int err = sendto(fd, "bee", 3, 0, (struct sockaddr *)&ss, len) < 0 ? errno : 0;
	close(fd);
	return try_answer(err);
}

int try_csendto(int argc, char **argv)
{
	(void)argc;
	struct sockaddr_storage c, s;
	socklen_t clen, slen;
	if (parse_endpoint(argv[1], &c, &clen) < 0)
		return bad_endpoint(argv[1]);
	if (parse_endpoint(argv[2], &s, &slen) < 0)
		return bad_endpoint(argv[2]);
	int fd = socket(c.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return try_setup_failed(errno);
	if (connect(fd, (struct sockaddr *)&c, clen) < 0) {
		int err = errno;
		close(fd);
		return try_setup_failed(err);
	}
	int err = sendto(fd, "bee", 3, 0, (struct sockaddr *)&s, slen) < 0 ? errno : 0;
	close(fd);
	return try_answer(err);
}

int try_listen(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return try_setup_failed(errno);
	int err = listen(fd, 1) < 0 ? errno : 0;
	if (!err) {
		struct sockaddr_in a;
		socklen_t l = sizeof(a);
		if (getsockname(fd, (struct sockaddr *)&a, &l) == 0)
			fprintf(stderr, "bee-try: listening on port %u without a bind\n", ntohs(a.sin_port));
	}
	close(fd);
	return try_answer(err);
}

static int name_or_number(const char *text, const char *const names[], const int values[], int n)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(text, names[i]))
			return values[i];
	char *end;
	long v = strtol(text, &end, 0);
	return *end || end == text ? -1 : (int)v;
}

int try_socket(int argc, char **argv)
{
	(void)argc;
	static const char *const fnames[] = { "inet", "inet6", "unix", "packet", "netlink" };
	static const int fvalues[] = { AF_INET, AF_INET6, AF_UNIX, AF_PACKET, AF_NETLINK };
	static const char *const tnames[] = { "stream", "dgram", "raw", "seqpacket" };
	static const int tvalues[] = { SOCK_STREAM, SOCK_DGRAM, SOCK_RAW, SOCK_SEQPACKET };
	int family = name_or_number(argv[1], fnames, fvalues, 5);
	int type = name_or_number(argv[2], tnames, tvalues, 4);
	int proto = name_or_number(argv[3], NULL, NULL, 0);
	if (family < 0 || type < 0 || proto < 0) {
		fprintf(stderr, "bee-try: socket FAMILY TYPE PROTO: bad family, type or protocol\n");
		puts("USAGE");
		return 2;
	}
	int fd = socket(family, type | SOCK_CLOEXEC, proto);
	if (fd < 0)
		return try_answer(errno);
	close(fd);
	return try_answer(0);
}

int try_unix_connect(int argc, char **argv)
{
	(void)argc;
	struct sockaddr_un a;
	if (try_unix_addr(argv[1], &a) < 0)
		return try_setup_failed(ENAMETOOLONG);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return try_setup_failed(errno);
	int err = connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ? errno : 0;
	close(fd);
	return try_answer(err);
}

int try_unix_self(int argc, char **argv)
{
	(void)argc;
	struct sockaddr_un a;
	if (try_unix_addr(argv[1], &a) < 0)
		return try_setup_failed(ENAMETOOLONG);
	int srv, lerr = try_unix_listen(argv[1], &srv);
	if (lerr)
		return try_setup_failed(lerr);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int err = fd < 0 ? errno : connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ? errno : 0;
	if (fd >= 0)
		close(fd);
	close(srv);
	unlink(argv[1]);
	return try_answer(err);
}
