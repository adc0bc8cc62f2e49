/* bee-try: attempt one operation and print what the kernel answered.
 *
 *   bee-try open PATH [r|w|rw|wt]     open(2) with that access ("wt" adds O_TRUNC)
 *   bee-try exec PATH [ARG...]        fork, execve(2) PATH; the child's output goes to stderr
 *   bee-try connect ADDR:PORT [tcp|udp]
 *   bee-try sendto ADDR:PORT          one UDP datagram without connect(2)
 *
 * ADDR is an IPv4 address or an IPv6 address in brackets ("[::1]:80").
 * Prints exactly one word on stdout, "OK" or the errno's name ("EACCES"),
 * so a guest test compares words, never message texts. Exit status: 0 OK,
 * 1 the kernel refused, 2 bad usage (with a message on stderr).
 *
 * "OK" for connect means the connect got past every policy hook: a TCP
 * connect to a port nobody listens on answers ECONNREFUSED from the stack,
 * which is printed as such; a test that wants "allowed" accepts both.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static int answer(int err)
{
	if (err == 0) {
		puts("OK");
		return 0;
	}
	const char *name = strerrorname_np(err);
	if (name)
		puts(name);
	else
		printf("E%d\n", err);
	return 1;
}

static int usage(const char *why)
{
	fprintf(stderr, "bee-try: %s\n"
		"usage: bee-try open PATH [r|w|rw|wt]\n"
		"       bee-try exec PATH [ARG...]\n"
		"       bee-try connect ADDR:PORT [tcp|udp]\n"
		"       bee-try sendto ADDR:PORT\n", why);
	return 2;
}

static int try_open(const char *path, const char *mode)
{
	int flags;
	if (!strcmp(mode, "r"))
		flags = O_RDONLY;
	else if (!strcmp(mode, "w"))
		flags = O_WRONLY;
	else if (!strcmp(mode, "rw"))
		flags = O_RDWR;
	else if (!strcmp(mode, "wt"))
		flags = O_WRONLY | O_TRUNC;
	else
		return usage("open: mode must be r, w, rw or wt");
	int fd = open(path, flags | O_CLOEXEC);
	if (fd < 0)
		return answer(errno);
	close(fd);
	return answer(0);
}

/* The child reports a failed execve through a close-on-exec pipe: a
 * successful exec closes it with nothing written. */
static int try_exec(char **argv)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0) {
		perror("bee-try: exec: pipe");
		return 2;
	}
	pid_t pid = fork();
	if (pid < 0) {
		perror("bee-try: exec: fork");
		return 2;
	}
	if (pid == 0) {
		close(p[0]);
		dup2(STDERR_FILENO, STDOUT_FILENO);
		execv(argv[0], argv);
		int err = errno;
		if (write(p[1], &err, sizeof(err)) != sizeof(err))
			_exit(127);
		_exit(127);
	}
	close(p[1]);
	int err = 0;
	ssize_t n;
	do
		n = read(p[0], &err, sizeof(err));
	while (n < 0 && errno == EINTR);
	close(p[0]);
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return answer(n == (ssize_t)sizeof(err) ? err : 0);
}

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

static int try_net(const char *what, const char *endpoint, const char *proto)
{
	struct sockaddr_storage ss;
	socklen_t len;
	if (parse_endpoint(endpoint, &ss, &len) < 0)
		return usage("bad endpoint: want ADDR:PORT or [ADDR6]:PORT");
	int type;
	if (!strcmp(proto, "tcp"))
		type = SOCK_STREAM;
	else if (!strcmp(proto, "udp"))
		type = SOCK_DGRAM;
	else
		return usage("protocol must be tcp or udp");
	int fd = socket(ss.ss_family, type | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return answer(errno);
	int rc;
	if (!strcmp(what, "sendto"))
		rc = (int)sendto(fd, "bee", 3, 0, (struct sockaddr *)&ss, len);
	else
		rc = connect(fd, (struct sockaddr *)&ss, len);
	int err = rc < 0 ? errno : 0;
	close(fd);
	return answer(err);
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return usage("missing arguments");
	const char *op = argv[1];
	if (!strcmp(op, "open") && argc <= 4)
		return try_open(argv[2], argc == 4 ? argv[3] : "r");
	if (!strcmp(op, "exec"))
		return try_exec(argv + 2);
	if (!strcmp(op, "connect") && argc <= 4)
		return try_net(op, argv[2], argc == 4 ? argv[3] : "tcp");
	if (!strcmp(op, "sendto") && argc == 3)
		return try_net(op, argv[2], "udp");
	return usage("unknown operation or wrong number of arguments");
}
