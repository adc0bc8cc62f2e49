/* SPDX-License-Identifier: GPL-2.0-only */
/* cgroup.c: the session cgroup. It is created under the caller's own
 * cgroup v2 node, the tool is created directly inside it (clone3
 * CLONE_INTO_CGROUP, launch.c), programs are attached to it alone, and at
 * the end whatever still runs in it is killed (cgroup.kill) before it is
 * removed. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int bee_cgroup_create(const char *path, int *fd, struct bee_error *e)
{
	int err = bee_fault(BEE_STAGE_CGROUP);
	*fd = -1;
	if (err)
		return bee_fail(e, BEE_STAGE_CGROUP, err, "'%s': injected fault", path);
	if (mkdir(path, 0755) < 0) {
		err = -errno;
		return bee_fail(e, BEE_STAGE_CGROUP, err, "cannot create '%s': %s", path, strerror(errno));
	}
	*fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (*fd < 0) {
		err = -errno;
		rmdir(path);
		return bee_fail(e, BEE_STAGE_CGROUP, err, "cannot open '%s': %s", path, strerror(-err));
	}
	return 0;
}

int bee_cgroup_populated(const char *path)
{
	char file[PATH_MAX], *text = NULL;
	snprintf(file, sizeof(file), "%s/cgroup.events", path);
	int r = bee_read_file(file, &text, NULL);
	if (r)
		return r;
	const char *p = strstr(text, "populated ");
	r = p ? p[10] == '1' : -EINVAL;
	free(text);
	return r;
}

static int64_t mono_ms(void)
{
	return bee_clock_ns(CLOCK_MONOTONIC) / 1000000;
}

int bee_cgroup_kill_wait(const char *path, int timeout_ms)
{
	char file[PATH_MAX];
	int r = bee_cgroup_populated(path);
	if (r <= 0)
		return r;
	snprintf(file, sizeof(file), "%s/cgroup.kill", path);
	r = bee_write_file(file, "1");
	if (r)
		return r;
	/* cgroup.events raises POLLPRI when "populated" changes */
	snprintf(file, sizeof(file), "%s/cgroup.events", path);
	int fd = open(file, O_RDONLY | O_CLOEXEC);
	int64_t end = mono_ms() + timeout_ms;
	for (;;) {
		r = bee_cgroup_populated(path);
		if (r <= 0)
			break;
		int64_t left = end - mono_ms();
		if (left <= 0) {
			r = -ETIMEDOUT;
			break;
		}
		if (fd >= 0) {
			struct pollfd p = { .fd = fd, .events = POLLPRI };
			poll(&p, 1, left > 50 ? 50 : (int)left);
		} else {
			usleep(1000);
		}
	}
	if (fd >= 0)
		close(fd);
	return r;
}

int bee_cgroup_remove(const char *path, int timeout_ms)
{
	int64_t end = mono_ms() + timeout_ms;
	for (;;) {
		if (rmdir(path) == 0 || errno == ENOENT)
			return 0;
		/* a task that has exited may still be counted for a moment */
		if (errno != EBUSY || mono_ms() >= end)
			return -errno;
		usleep(1000);
	}
}
