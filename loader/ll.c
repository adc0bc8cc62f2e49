/* ll.c: the Landlock backend's ruleset, built from the plan in the pack's
 * manifest (compiler/landlock.h says when a policy has one).
 *
 * Rights. The ruleset handles every file-system right the running ABI
 * knows, so anything not granted is denied:
 *
 *   policy read     READ_FILE, and beneath a directory READ_DIR
 *   policy write    WRITE_FILE, TRUNCATE (ABI 3), and beneath a directory
 *                   MAKE_REG, MAKE_DIR, MAKE_SYM, MAKE_SOCK, MAKE_FIFO,
 *                   REMOVE_FILE, REMOVE_DIR, REFER (ABI 2)
 *   read or write   IOCTL_DEV (ABI 5): ioctls on devices it may open
 *   policy exec     EXECUTE
 *
 * MAKE_CHAR and MAKE_BLOCK are handled and never granted (and the tool
 * has no CAP_MKNOD). From ABI 6 the ruleset also scopes abstract UNIX
 * sockets and signals to the session's own domain. Network rights are
 * not handled: [net] is the cgroup programs' in this backend too.
 *
 * Each rule is bound to the inode its path names at launch. A literal
 * file rule whose path is a directory is refused (Landlock would grant
 * the whole tree beneath it: fail closed); a "/dir/ **" rule whose path is
 * a file, or a path that does not exist, grants nothing (the glob
 * matches nothing there either) and is reported as a warning.
 */
#include "internal.h"

#include "ir.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Newer than the installed UAPI header (Debian 12: 6.1). */
#define LL_FS_TRUNCATE (1ULL << 14)       /* ABI 3 */
#define LL_FS_IOCTL_DEV (1ULL << 15)      /* ABI 5 */
#define LL_SCOPE_ABSTRACT_UNIX (1ULL << 0) /* ABI 6 */
#define LL_SCOPE_SIGNAL (1ULL << 1)        /* ABI 6 */
#define LL_RESTRICT_LOG_NEW_EXEC_ON (1U << 1)   /* ABI 7 */
#define LL_RULE_PATH_BENEATH 1

/* landlock_ruleset_attr as of ABI 6; the size passed says which fields. */
struct ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
	uint64_t scoped;
};

struct ll_path_beneath {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

#define LL_FS_ABI1                                                                            \
	(LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_FILE | \
	 LANDLOCK_ACCESS_FS_READ_DIR | LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE | \
	 LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |   \
	 LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK | \
	 LANDLOCK_ACCESS_FS_MAKE_SYM)
#define LL_FS_REFER (1ULL << 13)

/* Rights that may be granted on a file (the rest only beneath a directory). */
#define LL_FS_FILE_RIGHTS                                                                     \
	(LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_FILE | \
	 LL_FS_TRUNCATE | LL_FS_IOCTL_DEV)

static uint64_t ll_handled(int abi)
{
	uint64_t h = LL_FS_ABI1;
	if (abi >= 2)
		h |= LL_FS_REFER;
	if (abi >= 3)
		h |= LL_FS_TRUNCATE;
	if (abi >= 5)
		h |= LL_FS_IOCTL_DEV;
	return h;
}

static uint64_t ll_rights(uint32_t perms, bool dir)
{
	uint64_t a = 0;
	if (perms & IR_PERM_READ)
		a |= LANDLOCK_ACCESS_FS_READ_FILE | (dir ? LANDLOCK_ACCESS_FS_READ_DIR : 0);
	if (perms & IR_PERM_WRITE) {
		a |= LANDLOCK_ACCESS_FS_WRITE_FILE | LL_FS_TRUNCATE;
		if (dir)
			a |= LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_DIR |
			     LANDLOCK_ACCESS_FS_MAKE_SYM | LANDLOCK_ACCESS_FS_MAKE_SOCK |
			     LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_REMOVE_FILE |
			     LANDLOCK_ACCESS_FS_REMOVE_DIR | LL_FS_REFER;
	}
	if (perms & (IR_PERM_READ | IR_PERM_WRITE))
		a |= LL_FS_IOCTL_DEV;
	if (perms & IR_PERM_EXEC)
		a |= LANDLOCK_ACCESS_FS_EXECUTE;
	return a;
}

unsigned bee_landlock_restrict_flags(int abi)
{
	/* without it, Landlock logs only what the launcher itself is denied,
	 * never the tool it executes */
	return abi >= 7 ? LL_RESTRICT_LOG_NEW_EXEC_ON : 0;
}

int bee_landlock_ruleset(const struct bee_manifest *m, int abi, int *out, bee_warn_fn warn,
			 void *warn_ctx, struct bee_error *e)
{
	int err = bee_fault(BEE_STAGE_LANDLOCK);
	int rfd = -1, pfd = -1;
	*out = -1;
	if (err)
		return bee_fail(e, BEE_STAGE_LANDLOCK, err, "injected fault");
	if (abi < 1)
		return bee_fail(e, BEE_STAGE_LANDLOCK, -EOPNOTSUPP, "Landlock is not enabled in this kernel");
	if (!m->ll_expressible)
		return bee_fail(e, BEE_STAGE_LANDLOCK, -EINVAL,
				"policy '%s' cannot be enforced by Landlock: %s", m->name, m->ll_reason);
	uint64_t handled = ll_handled(abi);
	struct ll_ruleset_attr attr = { .handled_access_fs = handled };
	size_t size = sizeof(attr.handled_access_fs);
	if (abi >= 4)
		size = offsetof(struct ll_ruleset_attr, scoped);
	if (abi >= 6) {
		attr.scoped = LL_SCOPE_ABSTRACT_UNIX | LL_SCOPE_SIGNAL;
		size = sizeof(attr);
	}
	rfd = (int)syscall(__NR_landlock_create_ruleset, &attr, size, 0);
	if (rfd < 0) {
		err = -errno;
		return bee_fail(e, BEE_STAGE_LANDLOCK, err, "landlock_create_ruleset (ABI %d): %s", abi,
				strerror(-err));
	}
	for (size_t i = 0; i < m->nll; i++) {
		const struct bee_mf_ll_rule *r = &m->ll_rules[i];
		struct stat st;
		pfd = open(r->path, O_PATH | O_CLOEXEC);
		if (pfd < 0 || fstat(pfd, &st) < 0) {
			bee_warnf(warn, warn_ctx, "landlock: rule %u '%s%s': %s at launch: it grants nothing",
				  r->rule, r->path, r->beneath ? "/**" : "", strerror(errno));
			if (pfd >= 0)
				close(pfd);
			pfd = -1;
			continue;
		}
		bool dir = S_ISDIR(st.st_mode);
		if (!r->beneath && dir) {
			err = bee_fail(e, BEE_STAGE_LANDLOCK, -EISDIR,
				       "rule %u '%s': a file rule names a directory, which Landlock would grant whole",
				       r->rule, r->path);
			goto fail;
		}
		if (r->beneath && !dir) {
			bee_warnf(warn, warn_ctx, "landlock: rule %u '%s/**': '%s' is not a directory: it grants nothing",
				  r->rule, r->path, r->path);
			close(pfd);
			pfd = -1;
			continue;
		}
		struct ll_path_beneath pb = {
			.allowed_access = ll_rights(r->perms, dir) & handled & (dir ? ~0ULL : LL_FS_FILE_RIGHTS),
			.parent_fd = pfd,
		};
		if (pb.allowed_access &&
		    syscall(__NR_landlock_add_rule, rfd, LL_RULE_PATH_BENEATH, &pb, 0) < 0) {
			err = -errno;
			bee_fail(e, BEE_STAGE_LANDLOCK, err, "rule %u '%s': landlock_add_rule: %s", r->rule,
				 r->path, strerror(-err));
			goto fail;
		}
		close(pfd);
		pfd = -1;
	}
	*out = rfd;
	return 0;
fail:
	if (pfd >= 0)
		close(pfd);
	close(rfd);
	return err;
}
