/* SPDX-License-Identifier: GPL-2.0-only */
/* bpffs.c: a bpf file system for the session's pins when none is mounted.
 *
 * A fresh machine often has none at /sys/fs/bpf (systemd mounts one, a
 * container or a minimal image may not). bee-load then mounts one of its
 * own at STATE/bpffs (mode 0700, nosuid, nodev, noexec) in its own mount
 * namespace, and leaves it mounted: pinned links keep a session confined
 * if bee-load dies, and gc, revoke and ls of later runs find the pins
 * there through the session records, as they would under /sys/fs/bpf.
 * The mount is made under the registry's lock, so two bee-loads starting
 * at once mount it once (a second mount on top would hide the first
 * one's pins).
 */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>

#define BEE_BPFFS_SUBDIR "bpffs"

int bee_bpffs_private(const char *state_dir, char *out, size_t size, bee_warn_fn warn, void *warn_ctx,
		      struct bee_error *e)
{
	if (bee_bpffs_find(out, size) == 0)
		return 0;
	char dir[PATH_MAX];
	if (snprintf(dir, sizeof(dir), "%s/" BEE_BPFFS_SUBDIR, state_dir) >= (int)sizeof(dir))
		return bee_fail(e, BEE_STAGE_GATE, -ENAMETOOLONG, "the state directory '%s' is too long", state_dir);
	/* bee's own, mounted by an earlier session */
	if (bee_is_bpffs(dir)) {
		snprintf(out, size, "%s", dir);
		return 0;
	}
	int lk = bee_registry_lock(state_dir);
	if (lk < 0)
		return bee_fail(e, BEE_STAGE_GATE, lk,
				"no bpf file system is mounted, and '%s' cannot be locked to mount one: %s", state_dir,
				strerror(-lk));
	int err = 0;
	/* another bee-load may have mounted it while this one waited */
	if (bee_bpffs_find(out, size) == 0)
		goto out;
	if (bee_is_bpffs(dir)) {
		snprintf(out, size, "%s", dir);
		goto out;
	}
	if ((err = bee_mkdirs(dir, 0700)) < 0) {
		bee_fail(e, BEE_STAGE_GATE, err, "no bpf file system is mounted, and '%s' cannot be made: %s", dir,
			 strerror(-err));
		goto out;
	}
	if (mount("bpf", dir, "bpf", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0700") < 0) {
		err = -errno;
		bee_fail(e, BEE_STAGE_GATE, err,
			 "no bpf file system is mounted, and mounting one at '%s' failed: %s (mount -t bpf bpf "
			 "/sys/fs/bpf, or --bpffs DIR)",
			 dir, strerror(errno));
		goto out;
	}
	snprintf(out, size, "%s", dir);
	bee_warnf(warn, warn_ctx, "no bpf file system was mounted: mounted one at '%s' for bee's pins (it stays "
		  "for later sessions)", dir);
out:
	bee_registry_unlock(lk);
	return err;
}
