/* SPDX-License-Identifier: GPL-2.0-only */
/* cgroup.c: the session cgroup. It is created under the caller's own
 * cgroup v2 node, the tool is created directly inside it (clone3
 * CLONE_INTO_CGROUP, launch.c), programs are attached to it alone, and at
 * the end whatever still runs in it is killed (cgroup.kill) before it is
 * removed. */
#include "internal.h"

#include <dirent.h>
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

int bee_cgroup_create(const char *path, mode_t mode, int *fd, struct bee_error *e)
{
	int err = bee_fault(BEE_STAGE_CGROUP);
	*fd = -1;
	if (err)
		return bee_fail(e, BEE_STAGE_CGROUP, err, "'%s': injected fault", path);
	if (mkdir(path, mode) < 0) {
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

/* The cgroups below path, deepest first: what a session inside the session
 * left (a nested bee-load's pack load, whose records and pins went with
 * the session's mount namespace), all of it empty once path is. */
static void remove_below(const char *path, int depth)
{
	DIR *d = depth < 32 ? opendir(path) : NULL;
	struct dirent *de;
	char sub[PATH_MAX];
	while (d && (de = readdir(d))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		if (snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name) >= (int)sizeof(sub))
			continue;
		remove_below(sub, depth + 1);
		rmdir(sub);
	}
	if (d)
		closedir(d);
}

int bee_cgroup_remove(const char *path, int timeout_ms)
{
	int64_t end = mono_ms() + timeout_ms;
	for (;;) {
		if (rmdir(path) == 0 || errno == ENOENT)
			return 0;
		if (errno == EBUSY)
			remove_below(path, 0);
		if (rmdir(path) == 0 || errno == ENOENT)
			return 0;
		/* a task that has exited may still be counted for a moment */
		if (errno != EBUSY || mono_ms() >= end)
			return -errno;
		usleep(1000);
	}
}
/* A cgroup's depth below the cgroup2 root: "..", "../..", ...
 * until the file system changes (or a directory is its own parent, at a
 * root of its own). fstatat, never an open: a nested bee-load runs under
 * its parent session's file_open, which need not grant the cgroup tree. */
int bee_cgroup_level(int cgroup_fd, uint32_t *level)
{
	char rel[3 * 256] = "..";
	struct stat st, up;
	*level = 0;
	if (fstat(cgroup_fd, &st) < 0)
		return -errno;
	for (size_t n = 2; n + 3 < sizeof(rel); n += 3) {
		if (fstatat(cgroup_fd, rel, &up, 0) < 0)
			return -errno;
		if (up.st_dev != st.st_dev || up.st_ino == st.st_ino)
			return 0;
		st = up;
		++*level;
		memcpy(rel + n, "/..", 4);
	}
	return -ELOOP;
}

