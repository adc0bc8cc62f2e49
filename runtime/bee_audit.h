/* SPDX-License-Identifier: GPL-2.0-only */
/* bee_audit.h: the audit records that the BPF programs write to the ring
 * buffer and the loader turns into JSON lines (DESIGN.md, "The loader and
 * the audit log").
 *
 * Shared by the BPF programs (bpf/bee_hooks.bpf.h), the compiler (which
 * sizes the maps) and the loader (which reads them); compiled by the host
 * compiler and by clang -target bpf, so fixed-width types only.
 *
 * Maps:
 *
 *   bee_audit  BPF_MAP_TYPE_RINGBUF: one record per decision that the
 *              policy's [audit] decisions mode asks for
 *   bee_lost   BPF_MAP_TYPE_PERCPU_ARRAY, one __u64 per CPU: records that
 *              did not fit (bpf_ringbuf_output failed). The loader sums the
 *              CPUs and writes an overrun record whenever the sum grows, so
 *              a loss is never silent.
 *
 * A record is struct bee_audit_event (80 bytes) followed by path_len bytes
 * of path (no NUL). Records are variable-sized: the ring buffer sample
 * size is sizeof(struct bee_audit_event) + path_len. The "path" is the
 * resource's text: a file's path, a socket's name, or for
 * ptrace_access_check (kind Process, action Read) "pid:N", N the target's
 * thread group id in the initial pid namespace.
 *
 * Time base: ktime_ns is CLOCK_BOOTTIME (bpf_ktime_get_boot_ns), which
 * counts suspend and never jumps. The loader converts it to UTC with an
 * offset it samples at session start, clock_gettime(CLOCK_REALTIME) minus
 * clock_gettime(CLOCK_BOOTTIME) read back to back (taking the pair with
 * the smallest gap of a few tries), and samples it again when the wall
 * clock is stepped. CLOCK_TAI was not chosen: its offset from UTC is
 * whatever adjtimex was told, often 0 on machines without a leap-second
 * aware NTP daemon.
 */
#ifndef BEE_AUDIT_H
#define BEE_AUDIT_H

#ifndef __bpf__
#include <linux/types.h>
#endif

/* The [audit] decisions modes, in the order of the IR's (ir.h), as the
 * per-policy program's BEE_AUDIT define. */
#define BEE_AUDIT_MODES(X)          \
	X(DENY, 0, "deny")          \
	X(ALL, 1, "all")            \
	X(NONE, 2, "none")

/* What the JSON "kind" says. Environment is written by the loader
 * (the launcher filters the environment); the kernel never sends it. */
#define BEE_AUDIT_KINDS(X)                        \
	X(FILESYSTEM, 0, "FileSystem")            \
	X(NETWORK, 1, "Network")                  \
	X(ENVIRONMENT, 2, "Environment")          \
	X(PROCESS, 3, "Process")

#define BEE_AUDIT_ACTIONS(X)        \
	X(READ, 0, "Read")          \
	X(WRITE, 1, "Write")        \
	X(CONNECT, 2, "Connect")    \
	X(LISTEN, 3, "Listen")      \
	X(EXECUTE, 4, "Execute")    \
	X(RESOLVE, 5, "Resolve")    /* a DNS query (the loader's stub: loader/dns.c) */

#define BEE_AUDIT_DECISIONS(X)      \
	X(ALLOW, 0, "Allow")        \
	X(DENY, 1, "Deny")

/* Why. The kernel sees a permission automaton whose states hold grants
 * minus denies, so a refused open cannot say "no rule grants it" or "a deny
 * rule took it": both are NOT_GRANTED. (The states of denied paths carry a
 * mark, which only the hiding hooks read: HIDDEN.) The loader names the rules: for a path
 * by asking the pack's policy (beec query runs the globs), for an
 * endpoint by the record's detail, the LPM entry whose provenance the
 * manifest lists (net_provenance). */
#define BEE_AUDIT_REASONS(X)                                           \
	X(GRANTED, 0, "granted")                                       \
	X(NOT_GRANTED, 1, "not granted")                               \
	X(TOO_LONG, 2, "path too long")       /* d_path failed or filled its buffer */ \
	X(NOT_PINNED, 3, "not the pinned file")  /* path matched pinned rules only */ \
	X(SOCKET_REFUSED, 4, "socket refused")   /* family, type or protocol */ \
	X(UNIX_PEER, 5, "named unix socket")     /* AF_UNIX connect/send to a name */ \
	X(NOT_MAPPED, 6, "not mapped through a granted path") /* mprotect(PROT_EXEC) */ \
	X(NOT_CHECKED, 7, "exec not checked at open")  /* bprm without its file_open */ \
	X(NAMESPACE, 8, "namespace refused")     /* a new user namespace */ \
	X(INTERNAL, 9, "internal error")         /* a map missing or a buffer raced: fail closed */ \
	X(OTHER_CGROUP, 10, "process outside the session's cgroup") /* ptrace, /proc/PID/mem */ \
	X(NOT_BOUND, 11, "listen without bind")  /* listen(2) on a socket bind gave no port */ \
	X(SYSCALL, 12, "system call not allowed") /* bpf(2) without [syscalls] allow = ["bpf"] */ \
	X(NO_MOUNT, 13, "mount point not known") /* a dentry whose superblock bee_sb lacks */ \
	X(HIDDEN, 14, "hidden by a deny rule")   /* stat, xattrs, marks of a denied path */

/* The hook that decided; the loader may print it as a detail. */
#define BEE_AUDIT_HOOKS(X)                          \
	X(FILE_OPEN, 0, "file_open")                \
	X(BPRM_CHECK, 1, "bprm_check_security")     \
	X(MMAP_FILE, 2, "mmap_file")                \
	X(FILE_MPROTECT, 3, "file_mprotect")        \
	X(SOCKET_CREATE, 4, "socket_create")        \
	X(UNIX_STREAM_CONNECT, 5, "unix_stream_connect") \
	X(UNIX_MAY_SEND, 6, "unix_may_send")        \
	X(USERNS_CREATE, 7, "userns_create")        \
	X(CONNECT4, 8, "connect4")                  \
	X(CONNECT6, 9, "connect6")                  \
	X(SENDMSG4, 10, "sendmsg4")                 \
	X(SENDMSG6, 11, "sendmsg6")                 \
	X(BIND4, 12, "bind4")                       \
	X(BIND6, 13, "bind6")                       \
	X(SOCK_CREATE, 14, "sock_create")           \
	X(PTRACE_ACCESS_CHECK, 15, "ptrace_access_check") \
	X(SOCKET_LISTEN, 16, "socket_listen")      \
	X(PATH_CHMOD, 17, "path_chmod")            \
	X(PATH_CHOWN, 18, "path_chown")            \
	X(PATH_TRUNCATE, 19, "path_truncate")      \
	X(INODE_SETATTR, 20, "inode_setattr")      \
	X(INODE_SETXATTR, 21, "inode_setxattr")    \
	X(INODE_REMOVEXATTR, 22, "inode_removexattr") \
	X(FILE_RECEIVE, 23, "file_receive")        \
	X(TASK_KILL, 24, "task_kill")              \
	X(BPF, 25, "bpf")                           \
	X(INODE_GETATTR, 26, "inode_getattr")      \
	X(INODE_GETXATTR, 27, "inode_getxattr")    \
	X(INODE_LISTXATTR, 28, "inode_listxattr")  \
	X(PATH_NOTIFY, 29, "path_notify")

/* Which member of the resource union, and whether path bytes follow. */
#define BEE_AUDIT_RESOURCES(X)                                         \
	X(NONE, 0, "none")                                             \
	X(PATH, 1, "path")       /* path bytes ("pid:N" from ptrace_access_check); file = (dev, ino) when known */ \
	X(FILE, 2, "file")       /* file = (dev, ino) only: no path in this hook */ \
	X(INET, 3, "inet")       /* endpoint = family, address, port, protocol */ \
	X(UNIX, 4, "unix")       /* path bytes: the socket name, '@' for abstract */ \
	X(SOCKET, 5, "socket")   /* endpoint = family, type, protocol */

#define BEE_AUDIT_ENUM(prefix, name, value, str) prefix##name = value,
#define BEE_AUDIT_X_MODE(name, value, str) BEE_AUDIT_ENUM(BEE_AUDIT_MODE_, name, value, str)
#define BEE_AUDIT_X_KIND(name, value, str) BEE_AUDIT_ENUM(BEE_AUDIT_KIND_, name, value, str)
#define BEE_AUDIT_X_ACTION(name, value, str) BEE_AUDIT_ENUM(BEE_AUDIT_ACTION_, name, value, str)
#define BEE_AUDIT_X_DECISION(name, value, str) BEE_AUDIT_ENUM(BEE_AUDIT_, name, value, str)
#define BEE_AUDIT_X_REASON(name, value, str) BEE_AUDIT_ENUM(BEE_AUDIT_REASON_, name, value, str)
#define BEE_AUDIT_X_HOOK(name, value, str) BEE_AUDIT_ENUM(BEE_AUDIT_HOOK_, name, value, str)
#define BEE_AUDIT_X_RESOURCE(name, value, str) BEE_AUDIT_ENUM(BEE_AUDIT_RES_, name, value, str)

enum bee_audit_mode { BEE_AUDIT_MODES(BEE_AUDIT_X_MODE) };
enum bee_audit_kind { BEE_AUDIT_KINDS(BEE_AUDIT_X_KIND) };
enum bee_audit_action { BEE_AUDIT_ACTIONS(BEE_AUDIT_X_ACTION) };
enum bee_audit_decision { BEE_AUDIT_DECISIONS(BEE_AUDIT_X_DECISION) };
enum bee_audit_reason { BEE_AUDIT_REASONS(BEE_AUDIT_X_REASON) };
enum bee_audit_hook { BEE_AUDIT_HOOKS(BEE_AUDIT_X_HOOK) };
enum bee_audit_resource { BEE_AUDIT_RESOURCES(BEE_AUDIT_X_RESOURCE) };

/* An endpoint (resource INET) or a refused socket (resource SOCKET). */
struct bee_audit_endpoint {
	__u16 family;            /* AF_INET 2, AF_INET6 10, or the refused family */
	__u16 port;              /* host byte order; 0 for SOCKET */
	__u8 proto;              /* IP protocol number (6 tcp, 17 udp, ...) */
	__u8 type;               /* SOCK_* of a refused socket, else 0 */
	__u16 reserved;
	__u8 addr[16];           /* network byte order; IPv4 in addr[0..3] */
};

/* The file a decision was about, as the pin map keys it (bee_session.h). */
struct bee_audit_file {
	__u64 ino;
	__u32 dev;               /* kernel dev_t: major << 20 | minor */
	__u32 reserved;
	__u64 reserved2;
};

struct bee_audit_event {
	__u64 ktime_ns;          /* CLOCK_BOOTTIME, see above */
	__u32 pid;               /* thread group id (what user space calls the pid) */
	__u32 tid;
	__u8 comm[16];           /* the task's comm, NUL-padded */
	__u8 kind;               /* enum bee_audit_kind */
	__u8 action;             /* enum bee_audit_action */
	__u8 decision;           /* enum bee_audit_decision */
	__u8 reason;             /* enum bee_audit_reason */
	__u8 hook;               /* enum bee_audit_hook */
	__u8 resource;           /* enum bee_audit_resource */
	__u16 path_len;          /* bytes after the event: 0..BEE_AUDIT_PATH_MAX */
	__u32 want;              /* permission bits asked (ir.h IR_PERM_*), 0 for net */
	__u32 have;              /* permission bits the policy gives that resource */
	__u32 detail;            /* automaton state (fs, exec), LPM provenance record (net),
	                          * the PTRACE_MODE_* bits (ptrace_access_check), the
	                          * signal (task_kill), the command (bpf), or ~0 */
	__u32 reserved;
	union {
		struct bee_audit_endpoint net;
		struct bee_audit_file file;
	};
};

/* Path bytes a record carries at most: the longest path a hook walks. */
#define BEE_AUDIT_PATH_MAX 4095
#define BEE_AUDIT_DETAIL_NONE 0xffffffffu
#define BEE_AUDIT_RECORD_MAX (sizeof(struct bee_audit_event) + BEE_AUDIT_PATH_MAX)

_Static_assert(sizeof(struct bee_audit_endpoint) == 24, "bee_audit_endpoint size");
_Static_assert(sizeof(struct bee_audit_file) == 24, "bee_audit_file size");
_Static_assert(sizeof(struct bee_audit_event) == 80, "bee_audit_event size");
_Static_assert(__builtin_offsetof(struct bee_audit_event, pid) == 8, "bee_audit_event.pid");
_Static_assert(__builtin_offsetof(struct bee_audit_event, comm) == 16, "bee_audit_event.comm");
_Static_assert(__builtin_offsetof(struct bee_audit_event, kind) == 32, "bee_audit_event.kind");
_Static_assert(__builtin_offsetof(struct bee_audit_event, path_len) == 38, "bee_audit_event.path_len");
_Static_assert(__builtin_offsetof(struct bee_audit_event, want) == 40, "bee_audit_event.want");
_Static_assert(__builtin_offsetof(struct bee_audit_event, detail) == 48, "bee_audit_event.detail");
_Static_assert(__builtin_offsetof(struct bee_audit_event, net) == 56, "bee_audit_event.net");
_Static_assert(__builtin_offsetof(struct bee_audit_event, file) == 56, "bee_audit_event.file");

#ifndef __bpf__
/* Names as the JSON lines spell them; NULL for a value no enumerator has. */
#define BEE_AUDIT_X_CASE(name, value, str) case value: return str;
static inline const char *bee_audit_kind_name(__u32 v)
{
	switch (v) { BEE_AUDIT_KINDS(BEE_AUDIT_X_CASE) }
	return (const char *)0;
}
static inline const char *bee_audit_action_name(__u32 v)
{
	switch (v) { BEE_AUDIT_ACTIONS(BEE_AUDIT_X_CASE) }
	return (const char *)0;
}
static inline const char *bee_audit_decision_name(__u32 v)
{
	switch (v) { BEE_AUDIT_DECISIONS(BEE_AUDIT_X_CASE) }
	return (const char *)0;
}
static inline const char *bee_audit_reason_name(__u32 v)
{
	switch (v) { BEE_AUDIT_REASONS(BEE_AUDIT_X_CASE) }
	return (const char *)0;
}
static inline const char *bee_audit_hook_name(__u32 v)
{
	switch (v) { BEE_AUDIT_HOOKS(BEE_AUDIT_X_CASE) }
	return (const char *)0;
}
static inline const char *bee_audit_resource_name(__u32 v)
{
	switch (v) { BEE_AUDIT_RESOURCES(BEE_AUDIT_X_CASE) }
	return (const char *)0;
}
static inline const char *bee_audit_mode_name(__u32 v)
{
	switch (v) { BEE_AUDIT_MODES(BEE_AUDIT_X_CASE) }
	return (const char *)0;
}
#undef BEE_AUDIT_X_CASE
#endif

#endif
