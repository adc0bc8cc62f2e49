/* SPDX-License-Identifier: GPL-2.0-only */
/* seccomp.c: the session's system call filter.
 *
 * Built in bee-load before the clone with libseccomp from the groups of
 * runtime/bee_syscalls.h that the policy does not allow, and exported as
 * classic BPF into a buffer, which the session's init loads on itself
 * (prctl(PR_SET_SECCOMP)) once its mounts are made: every tool inherits it
 * at its clone. The default action allows:
 * the filter is a list of what no confined tool needs, not a whitelist
 * (Landlock and the BPF LSM programs decide the rest).
 *
 *   a refused group            every call of it -> EPERM (names this
 *                              architecture lacks are skipped)
 *   personality                allowed for PER_LINUX (0) and the query
 *                              (0xffffffff) only
 *   namespaces                 unshare and clone with a CLONE_NEW* flag,
 *                              setns -> EPERM; clone3 -> ENOSYS (its flags
 *                              sit in memory the filter cannot read, and
 *                              libc falls back to clone on ENOSYS)
 *   socket, socketpair         a family other than AF_UNIX, AF_INET and
 *                              AF_INET6 -> EPERM, whatever the policy says
 *   ioctl TIOCSTI, TIOCLINUX   -> EPERM: no typing into a terminal's input
 *                              (the tool's own pty is all it could reach,
 *                              pty.c; this holds on hosts with
 *                              dev.tty.legacy_tiocsti = 1 too)
 *   another architecture       (int 0x80, x32) the process is killed
 *
 * An argument test is one comparison per rule (libseccomp takes no two on
 * the same argument), so "not one of these values" becomes the gaps
 * between the values, each gap as aligned power-of-two blocks (masked
 * compares, as a CIDR prefix list covers a range) and the top gap as one
 * "greater than".
 */
#include "internal.h"

#include "bee_syscalls.h"

#include <errno.h>
#include <linux/filter.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

/* the namespace flags of clone and unshare; clone's low byte is the exit
 * signal, so CLONE_NEWTIME (0x80) is unshare's (and clone3's) only */
static const uint64_t ns_flags[] = { CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC,
				     CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWTIME };

static const uint64_t families_allowed[] = BEE_SOCKET_FAMILIES_ALLOWED;
static const uint64_t personas_allowed[] = { 0 /* PER_LINUX */, 0xffffffff /* the query */ };
static const uint32_t ioctls_refused[] = { TIOCSTI, TIOCLINUX };

static int rule_errno(scmp_filter_ctx ctx, int nr, int err, unsigned n, const struct scmp_arg_cmp *cmp)
{
	return seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO((uint32_t)err), nr, n, cmp);
}

/* EPERM when argument arg lies in [lo, hi] (hi < UINT64_MAX). */
static int refuse_range(scmp_filter_ctx ctx, int nr, unsigned arg, uint64_t lo, uint64_t hi)
{
	while (lo <= hi) {
		/* the largest aligned block starting at lo that stays within hi */
		uint64_t size = lo ? lo & -lo : (uint64_t)1 << 63;
		while (size > hi - lo + 1)
			size >>= 1;
		struct scmp_arg_cmp c = { .arg = arg, .op = SCMP_CMP_MASKED_EQ, .datum_a = ~(size - 1),
					  .datum_b = lo };
		int err = rule_errno(ctx, nr, EPERM, 1, &c);
		if (err)
			return err;
		if (hi - lo + 1 == size)
			break;
		lo += size;
	}
	return 0;
}

/* EPERM unless argument arg is one of ok[] (ascending). */
static int refuse_outside(scmp_filter_ctx ctx, int nr, unsigned arg, const uint64_t *ok, size_t n)
{
	uint64_t lo = 0;
	int err;
	for (size_t i = 0; i < n; i++) {
		if (ok[i] > lo && (err = refuse_range(ctx, nr, arg, lo, ok[i] - 1)) < 0)
			return err;
		lo = ok[i] + 1;
	}
	struct scmp_arg_cmp top = { .arg = arg, .op = SCMP_CMP_GT, .datum_a = ok[n - 1] };
	return rule_errno(ctx, nr, EPERM, 1, &top);
}

/* EPERM when argument arg has any of flags[]. */
static int refuse_flags(scmp_filter_ctx ctx, int nr, unsigned arg, const uint64_t *flags, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct scmp_arg_cmp c = { .arg = arg, .op = SCMP_CMP_MASKED_EQ, .datum_a = flags[i],
					  .datum_b = flags[i] };
		int err = rule_errno(ctx, nr, EPERM, 1, &c);
		if (err)
			return err;
	}
	return 0;
}

/* One call of a refused group. */
static int refuse_call(scmp_filter_ctx ctx, const char *name)
{
	int nr = seccomp_syscall_resolve_name(name);
	if (nr < 0)     /* unknown here (__NR_SCMP_ERROR) or not a call of this architecture */
		return 0;
	if (strcmp(name, "personality") == 0)
		return refuse_outside(ctx, nr, 0, personas_allowed, sizeof(personas_allowed) / sizeof(uint64_t));
	if (strcmp(name, "clone") == 0)
		return refuse_flags(ctx, nr, 0, ns_flags, sizeof(ns_flags) / sizeof(ns_flags[0]) - 1);
	if (strcmp(name, "unshare") == 0)
		return refuse_flags(ctx, nr, 0, ns_flags, sizeof(ns_flags) / sizeof(ns_flags[0]));
	if (strcmp(name, "clone3") == 0)
		return rule_errno(ctx, nr, ENOSYS, 0, NULL);
	return rule_errno(ctx, nr, EPERM, 0, NULL);
}

static int build_rules(scmp_filter_ctx ctx, uint32_t allowed)
{
	int err;
	if ((err = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS)) < 0 ||
	    (err = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0)) < 0 ||   /* the tool sets it itself */
	    /* a binary search over the call numbers: an allowed call (most of
	     * them) passes a handful of comparisons, not one per refused call */
	    (err = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2)) < 0)
		return err;
	for (int g = 0; g < BEE_SYSCALLS_COUNT; g++) {
		if (allowed & (1U << g))
			continue;
		char calls[512];
		snprintf(calls, sizeof(calls), "%s", bee_syscall_groups[g].calls);
		for (char *save, *c = strtok_r(calls, " ", &save); c; c = strtok_r(NULL, " ", &save))
			if ((err = refuse_call(ctx, c)) < 0)
				return err;
	}
	int ioctl_nr = seccomp_syscall_resolve_name("ioctl");
	for (size_t i = 0; ioctl_nr >= 0 && i < sizeof(ioctls_refused) / sizeof(ioctls_refused[0]); i++) {
		/* the request is an unsigned int: its low 32 bits */
		struct scmp_arg_cmp c = SCMP_A1_32(SCMP_CMP_EQ, ioctls_refused[i]);
		if ((err = rule_errno(ctx, ioctl_nr, EPERM, 1, &c)) < 0)
			return err;
	}
	static const char *const sockets[] = { "socket", "socketpair" };
	for (size_t i = 0; i < 2; i++) {
		int nr = seccomp_syscall_resolve_name(sockets[i]);
		if (nr >= 0 && (err = refuse_outside(ctx, nr, 0, families_allowed,
						     sizeof(families_allowed) / sizeof(uint64_t))) < 0)
			return err;
	}
	return 0;
}

int bee_seccomp_build(uint32_t allowed, struct bee_seccomp *out, struct bee_error *e)
{
	memset(out, 0, sizeof(*out));
	int err = bee_fault(BEE_STAGE_SECCOMP);
	if (err)
		return bee_fail(e, BEE_STAGE_SECCOMP, err, "injected fault");
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int fd = -1;
	if (!ctx)
		return bee_fail(e, BEE_STAGE_SECCOMP, -ENOMEM, "libseccomp: cannot create a filter");
	if ((err = build_rules(ctx, allowed)) < 0) {
		bee_fail(e, BEE_STAGE_SECCOMP, err, "libseccomp: cannot add a rule: %s", strerror(-err));
		goto out;
	}
	/* libseccomp 2.5 exports to a descriptor only: a memfd, read back */
	fd = memfd_create("bee-seccomp", MFD_CLOEXEC);
	if (fd < 0) {
		err = bee_fail(e, BEE_STAGE_SECCOMP, -errno, "memfd: %s", strerror(errno));
		goto out;
	}
	if ((err = seccomp_export_bpf(ctx, fd)) < 0) {
		bee_fail(e, BEE_STAGE_SECCOMP, err, "libseccomp: cannot export the filter: %s", strerror(-err));
		goto out;
	}
	off_t size = lseek(fd, 0, SEEK_END);
	if (size <= 0 || size % (off_t)sizeof(struct sock_filter) || size / (off_t)sizeof(struct sock_filter) > BPF_MAXINSNS) {
		err = bee_fail(e, BEE_STAGE_SECCOMP, -EINVAL, "libseccomp: the filter has %lld bytes",
			       (long long)size);
		goto out;
	}
	struct sock_filter *insns = malloc((size_t)size);
	if (!insns) {
		err = bee_fail(e, BEE_STAGE_SECCOMP, -ENOMEM, "out of memory");
		goto out;
	}
	if (pread(fd, insns, (size_t)size, 0) != size) {
		free(insns);
		err = bee_fail(e, BEE_STAGE_SECCOMP, -EIO, "cannot read the exported filter back");
		goto out;
	}
	out->prog.filter = insns;
	out->prog.len = (unsigned short)(size / (off_t)sizeof(*insns));
	err = 0;
out:
	if (fd >= 0)
		close(fd);
	seccomp_release(ctx);
	return err;
}

void bee_seccomp_fini(struct bee_seccomp *f)
{
	free(f->prog.filter);
	memset(f, 0, sizeof(*f));
}

/* ---- the cache ---------------------------------------------------------------------- */

/* What the filter is made of: the groups let through, the refused calls
 * and arguments of this build, the architecture and libseccomp's version.
 * Equal keys give equal filters. */
static uint64_t filter_key(uint32_t allowed)
{
	XXH3_state_t *st = XXH3_createState();
	uint64_t k = 0;
	if (!st)
		return 0;
	const struct scmp_version *v = seccomp_version();
	uint32_t arch = seccomp_arch_native();
	XXH3_64bits_reset(st);
	XXH3_64bits_update(st, BEE_LOAD_VERSION, sizeof(BEE_LOAD_VERSION));
	XXH3_64bits_update(st, &allowed, sizeof(allowed));
	XXH3_64bits_update(st, &arch, sizeof(arch));
	if (v)
		XXH3_64bits_update(st, v, sizeof(*v));
	for (int g = 0; g < BEE_SYSCALLS_COUNT; g++)
		XXH3_64bits_update(st, bee_syscall_groups[g].calls, strlen(bee_syscall_groups[g].calls) + 1);
	XXH3_64bits_update(st, ns_flags, sizeof(ns_flags));
	XXH3_64bits_update(st, families_allowed, sizeof(families_allowed));
	XXH3_64bits_update(st, personas_allowed, sizeof(personas_allowed));
	XXH3_64bits_update(st, ioctls_refused, sizeof(ioctls_refused));
	k = XXH3_64bits_digest(st);
	XXH3_freeState(st);
	return k;
}

/* The cached filter at path: this user's own regular file that no one
 * else may write, a whole number of instructions. 0, or -errno (then it
 * is built again). */
static int cache_read(const char *path, struct bee_seccomp *out)
{
	struct stat sb;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int err = -EINVAL;
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) || sb.st_uid != geteuid() || (sb.st_mode & 022) ||
	    sb.st_size <= 0 || sb.st_size % (off_t)sizeof(struct sock_filter) ||
	    sb.st_size / (off_t)sizeof(struct sock_filter) > BPF_MAXINSNS)
		goto out;
	struct sock_filter *insns = malloc((size_t)sb.st_size);
	if (!insns) {
		err = -ENOMEM;
		goto out;
	}
	if (pread(fd, insns, (size_t)sb.st_size, 0) != sb.st_size) {
		free(insns);
		goto out;
	}
	out->prog.filter = insns;
	out->prog.len = (unsigned short)(sb.st_size / (off_t)sizeof(*insns));
	err = 0;
out:
	close(fd);
	return err;
}

int bee_seccomp_get(const char *state_dir, uint32_t allowed, struct bee_seccomp *out, struct bee_error *e)
{
	memset(out, 0, sizeof(*out));
	int err = bee_fault(BEE_STAGE_SECCOMP);
	if (err)
		return bee_fail(e, BEE_STAGE_SECCOMP, err, "injected fault");
	char path[PATH_MAX];
	uint64_t key = filter_key(allowed);
	bool cached = key && snprintf(path, sizeof(path), "%s/seccomp-%016llx.bpf", state_dir,
				      (unsigned long long)key) < (int)sizeof(path);
	if (cached && cache_read(path, out) == 0)
		return 0;
	if ((err = bee_seccomp_build(allowed, out, e)) < 0)
		return err;
	/* kept for the next session; a cache that cannot be written only
	 * costs the next one the build again */
	if (cached)
		bee_write_atomic(path, (const char *)out->prog.filter, out->prog.len * sizeof(struct sock_filter));
	return 0;
}
