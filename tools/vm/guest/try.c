/* SPDX-License-Identifier: GPL-2.0-only */
/* try.c: the words bee-try's operations print, and the AF_UNIX set-up
 * several operations share (try.h). */
#include "try.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

const char *try_errname(int err, char *buf, unsigned size)
{
	const char *name = strerrorname_np(err);
	if (name)
		return name;
	snprintf(buf, size, "E%d", err);
	return buf;
}

int try_answer(int err)
{
	char buf[16];
	puts(err ? try_errname(err, buf, sizeof(buf)) : "OK");
	return err ? 1 : 0;
}

int try_setup_failed(int err)
{
	char buf[16];
	printf("SETUP:%s\n", try_errname(err, buf, sizeof(buf)));
	return 1;
}

int try_unix_addr(const char *path, struct sockaddr_un *a)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(a->sun_path))
		return -ENAMETOOLONG;
	strcpy(a->sun_path, path);
	return 0;
}

int try_unix_listen(const char *path, int *fd)
{
	struct sockaddr_un a;
	*fd = -1;
	if (try_unix_addr(path, &a) < 0)
		return ENAMETOOLONG;
	unlink(path);
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return errno;
	if (bind(s, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(s, 1) < 0) {
		int err = errno;
		close(s);
		return err;
	}
	*fd = s;
	return 0;
}
