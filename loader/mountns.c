/* SPDX-License-Identifier: GPL-2.0-only */
/* mountns.c: the session's mount namespace (internal.h says what it holds).
 *
 * Not built yet beyond its first step: entering makes every mount private
 * and mounts a /proc of the session's pid namespace. */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/mount.h>

struct bee_mountns {
	int unused;
};

int bee_mountns_plan(const struct bee_manifest *m, const char *state_dir, struct bee_mountns **out,
		     struct bee_error *e)
{
	(void)m;
	(void)state_dir;
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return bee_fail(e, BEE_STAGE_NAMESPACE, -ENOMEM, "out of memory");
	return 0;
}

int bee_mountns_enter(const struct bee_mountns *ns, const char **what)
{
	(void)ns;
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		*what = "mount / private";
		return -errno;
	}
	if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0) {
		*what = "mount /proc";
		return -errno;
	}
	return 0;
}

void bee_mountns_free(struct bee_mountns *ns)
{
	free(ns);
}
