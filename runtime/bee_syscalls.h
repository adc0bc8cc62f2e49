/* SPDX-License-Identifier: GPL-2.0-only */
/* bee_syscalls.h: the system calls a session refuses unless its policy
 * names their group.
 *
 * One table for everyone: the compiler validates `[syscalls] allow` against
 * the group names and writes the allowed ones into the manifest (key
 * "syscalls", an array of names in table order); the loader builds the
 * session's seccomp filter from the groups not allowed; bee-load's docs and
 * bee-policy(5) list them. The refusal is EPERM, as a missing capability
 * answers (clone3 answers ENOSYS under "namespaces", so that libc falls back
 * to clone, whose flags the filter can see).
 *
 * A group is a bit (1 << its index); the order is part of the pack format:
 * append, never reorder.
 */
#ifndef BEE_SYSCALLS_H
#define BEE_SYSCALLS_H

/* X(NAME_ENUM, "name", "what it is", "syscall names, space-separated") */
#define BEE_SYSCALL_GROUPS(X)                                                                    \
	X(BPF, "bpf", "bpf(2): maps, programs, links and pins", "bpf")                           \
	X(PERF, "perf_event_open", "perf_event_open(2): counters, kprobes and tracepoints",       \
	  "perf_event_open")                                                                     \
	X(PERSONALITY, "personality",                                                            \
	  "personality(2) with any persona other than PER_LINUX (READ_IMPLIES_EXEC, ADDR_NO_RANDOMIZE...)", \
	  "personality")                                                                         \
	X(KEYRING, "keyring", "the kernel keyrings", "add_key request_key keyctl")               \
	X(USERFAULTFD, "userfaultfd", "userfaultfd(2)", "userfaultfd")                           \
	X(NAMESPACES, "namespaces", "new namespaces: unshare, setns, clone with namespace flags, clone3", \
	  "unshare setns clone clone3")                                                          \
	X(MOUNT, "mount", "mounting: the old and the new mount API",                             \
	  "mount umount2 pivot_root fsopen fsconfig fsmount fspick move_mount open_tree mount_setattr") \
	X(HANDLES, "handles", "file handles: open_by_handle_at reaches a file by its inode",     \
	  "open_by_handle_at name_to_handle_at")                                                 \
	X(KERNEL, "kernel", "the machine itself: modules, kexec, reboot, swap, accounting, quotas, ports", \
	  "init_module finit_module delete_module kexec_load kexec_file_load reboot swapon swapoff " \
	  "acct quotactl quotactl_fd syslog iopl ioperm lookup_dcookie uselib vhangup")             \
	X(IO_URING, "io_uring", "io_uring: its operations (sockets among them) bypass this filter", \
	  "io_uring_setup io_uring_enter io_uring_register")

enum bee_syscall_group {
#define BEE_SYSCALL_GROUP_ENUM(e, name, doc, calls) BEE_SYSCALLS_##e,
	BEE_SYSCALL_GROUPS(BEE_SYSCALL_GROUP_ENUM)
#undef BEE_SYSCALL_GROUP_ENUM
	BEE_SYSCALLS_COUNT
};

struct bee_syscall_group_info {
	const char *name;        /* as `[syscalls] allow` and the manifest spell it */
	const char *doc;
	const char *calls;       /* syscall names, space-separated */
};

static const struct bee_syscall_group_info bee_syscall_groups[BEE_SYSCALLS_COUNT] = {
#define BEE_SYSCALL_GROUP_INFO(e, n, d, c) [BEE_SYSCALLS_##e] = { .name = n, .doc = d, .calls = c },
	BEE_SYSCALL_GROUPS(BEE_SYSCALL_GROUP_INFO)
#undef BEE_SYSCALL_GROUP_INFO
};

/* The socket families a session may create whatever its policy says:
 * AF_UNIX, AF_INET, AF_INET6 (the policy language grants no other; under
 * bpf-lsm socket_create refuses the rest as well). */
#define BEE_SOCKET_FAMILIES_ALLOWED { 1 /* AF_UNIX */, 2 /* AF_INET */, 10 /* AF_INET6 */ }

#endif
