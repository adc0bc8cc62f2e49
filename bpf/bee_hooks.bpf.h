/* SPDX-License-Identifier: GPL-2.0-only */
/* bee_hooks.bpf.h: the hook programs, compiled once into bee's one BPF
 * object.
 *
 * bpf/bee_hooks.bpf.c includes this file; the build compiles it once
 * (clang -target bpf, a build-time tool only) into build/bpf/bee_hooks.bpf.o,
 * which libbeec embeds (compiler/hooks_object.h) and beec copies unchanged
 * into every pack. Nothing policy-specific is compiled in: the decisions
 * come from maps that the loader fills from the pack's images
 * (runtime/bee_dfa.h, runtime/bee_net.h) and at session start
 * (runtime/bee_session.h), and what differs between policies is carried
 * in the pack's manifest and applied by the loader with libbpf before
 * bpf_object__load (compiler/codegen.h lists the tables):
 *
 *   map sizes      bee_fs, bee_exec: value_size = the automaton's image
 *                  (declared with __uint(value_size), no BTF value type, so
 *                  bpf_map__set_value_size may change it); bee_net4/6,
 *                  bee_pins, bee_audit: max_entries. A map the manifest
 *                  does not list (bee_task without pins) is not created.
 *   programs       the manifest's hooks. bee_bprm_check is left out when
 *                  the policy pins no exec rule, bee_test_walk outside tests.
 *   constants      the const volatile globals below, in .rodata: the
 *                  loader writes each from the manifest's "constants"
 *                  (and refuses an object with one the manifest does not
 *                  set); the kernel freezes .rodata before verifying, so
 *                  the verifier reads them as known scalars: an image size
 *                  bounds the walks' table loads exactly as a #define did,
 *                  and a branch on the audit mode or on bee_pins_on is
 *                  dead code it never explores (which is what lets the
 *                  uncreated bee_task be referenced there).
 *
 *   bee_audit_mode        enum bee_audit_mode: which decisions are recorded
 *   bee_syscalls_allowed  bits of runtime/bee_syscalls.h's groups the policy
 *                         allows (only "bpf" matters here)
 *   bee_fs_image_size     bytes of the fs automaton's image (bee_fs's value)
 *   bee_exec_image_size   bytes of the exec automaton's image (bee_exec's value)
 *   bee_pins_on           1 when the policy pins an exec rule: file_open
 *                         records the exec for bee_bprm_check (bee_task)
 *
 * Programs (the loader attaches every one the manifest lists):
 *
 *   BPF LSM, attached per cgroup (BPF_LSM_CGROUP, kernel 6.0+):
 *   bee_file_open     lsm_cgroup/file_open            fs and exec by path
 *   bee_bprm_check    lsm_cgroup/bprm_check_security  pinned exec: the file
 *                                                     file_open checked
 *   bee_mmap_file     lsm_cgroup/mmap_file            PROT_EXEC file mappings
 *   bee_mprotect      lsm_cgroup/file_mprotect        PROT_EXEC added later
 *   bee_socket        lsm_cgroup/socket_create        families, types, protocols
 *   bee_listen        lsm_cgroup/socket_listen        inet listen: only on a port
 *                                                     bind gave (bind4|6 judged it)
 *   bee_unix_connect  lsm_cgroup/unix_stream_connect  AF_UNIX peers: sockets of the
 *                                                     session's own cgroup only
 *   bee_unix_send     lsm_cgroup/unix_may_send        the same for datagrams
 *   bee_userns        lsm_cgroup/userns_create        no new user namespace
 *   bee_ptrace        lsm_cgroup/ptrace_access_check  ptrace and /proc/PID of the
 *                                                     session's own cgroup only
 *
 *   BPF LSM, attached globally (BPF_LSM_MAC), acting only for the
 *   session's tasks: the metadata, descriptor, signal and bpf(2) hooks of
 *   bee_guard.bpf.h, which describes them.
 *
 *   cgroup programs, on any cgroup v2 kernel:
 *   bee_connect4/6    cgroup/connect4|6               [net] connect
 *   bee_sendmsg4/6    cgroup/sendmsg4|6               udp destinations: connect
 *   bee_bind4/6       cgroup/bind4|6                  [net] bind
 *   bee_sock_create   cgroup/sock_create              inet types and protocols
 *
 * The kernel attaches lsm_cgroup programs to at most 10 distinct hooks
 * system-wide (CGROUP_LSM_NUM): this file uses 9, 10 with pins, so a
 * pack with pins takes every slot (and cannot attach while anything else
 * holds one on another hook). A hook added here must be worth a slot and
 * needs one given back: compiler/tests/test_codegen.c holds the count.
 * (socket_listen took the slot of socket_post_create, which only tagged
 * the session's AF_UNIX sockets: the socket's own cgroup tells as much.)
 *
 * Returns: an lsm_cgroup program returns 1 to allow and 0 to deny; a deny
 * sets the errno with bpf_set_retval: EACCES for files, exec and mappings
 * (what a permission check of the VFS answers), EPERM for sockets,
 * namespaces and other processes. cgroup programs return 1/0 and the
 * kernel answers EPERM.
 *
 * Design notes (the "why" of each hook):
 *
 * file_open sees every open, exec included: execve, execveat and fexecve
 * open the file anew (do_open_execat, f_mode has FMODE_EXEC), and so do
 * the script interpreter, the ELF interpreter and uselib. So exec by fd,
 * of a memfd ("/memfd:x (deleted)") or of a deleted file is judged by the
 * path the kernel reports, which no grant names. An exec open needs EXEC
 * from the exec automaton, or EXEC_PINNED and the file's (dev, ino) in
 * bee_pins; it needs no fs grant ("running a binary needs an exec grant
 * only"). Other opens need READ for FMODE_READ, WRITE for FMODE_WRITE and
 * for O_TRUNC (which truncates after this hook even on O_RDONLY), and READ
 * for an open of neither (O_ACCMODE 3, used for device ioctls). bpf_d_path
 * gets BEE_PATH_MAX + 1 bytes: a path of BEE_PATH_MAX - 1 bytes or fewer
 * is walked; a failure or a path filling the buffer is denied as too long,
 * never matched on a prefix (exactly runtime/bee_dfa.h's bee_dfa_match).
 *
 * Mapping code. A library (or a program run as "ld.so /path/prog") is
 * opened for reading, then mapped PROT_EXEC, so mmap_file and
 * file_mprotect keep the exec list from being walked around. Rule: every
 * exec.allow grant also grants mapping (EXEC or a pinned EXEC_PINNED from
 * the exec automaton), so libraries are listed in exec.allow. bpf_d_path
 * is allowed in mmap_file (a sleepable-capable hook) but not in
 * file_mprotect, so:
 *   - an allowed exec open, and an allowed PROT_EXEC mmap, record in
 *     inode storage (bee_inode) that this inode may be mapped executable,
 *     tagged with bee_state.gen;
 *   - mmap_file with PROT_EXEC allows at once on a current record, else
 *     walks the exec automaton with the mapped file's path (and records
 *     an allow); a deny is never cached;
 *   - file_mprotect adding PROT_EXEC needs a current record: it cannot
 *     name the path. A file mapped without PROT_EXEC whose inode was
 *     never exec-opened or exec-mapped cannot be made executable later.
 *   Anonymous memory (no file) is not governed: JITs keep working.
 *   Hard links: the record belongs to the inode, so once a file has been
 *   exec-opened or exec-mapped through a granted path, it may be mapped
 *   executable through any of its names (it is the same code) until the
 *   inode leaves memory or the generation changes; a file reached only
 *   through names that no grant covers is never mapped executable.
 *
 * Pins. file_open already checks the pin against the very file the exec
 * runs (bprm->file is the file it opened), so a file renamed over a
 * pinned path fails there. bprm_check_security checks again that the file
 * being executed is the one file_open allowed for this task (task storage
 * written by the allowed exec open: dev, ino, whether only a pin allowed
 * it) and, for a pin, that it is still in bee_pins: an exec whose open was
 * never checked is refused instead of trusted.
 *
 * Sockets. cgroup/sock_create only runs for AF_INET and AF_INET6 sockets,
 * so socket_create refuses every other family in the LSM backend:
 * AF_NETLINK too (glibc's getaddrinfo works without it; the policy
 * language has no netlink grant), AF_PACKET, AF_VSOCK and the rest. In
 * AF_INET/AF_INET6 only stream sockets of TCP and datagram sockets of UDP
 * exist: raw sockets, ICMP "ping" sockets (whose sendto no cgroup hook
 * sees), SCTP and MPTCP are refused. AF_UNIX: a session may reach only
 * sockets created in its own cgroup; never a daemon's socket bound
 * outside it (container runtimes, D-Bus, ssh-agent, systemd).
 * unix_stream_connect and unix_may_send see the resolved peer socket,
 * which a symlink cannot redirect, so lsm/socket_connect (which sees only
 * the name) adds nothing. The kernel gives every socket its creator's
 * cgroup v2 at sk_alloc (cgroup_sk_alloc, sk->sk_cgrp_data.cgroup); the
 * hooks allow a peer whose cgroup id (sk_cgrp_data.cgroup->kn->id, read
 * by CO-RE: the pointer is the struct's first member from 5.15 on, and a
 * kernel without it fails closed) equals bpf_get_current_cgroup_id():
 * the very same cgroup, as for ptrace. So a nested session's tool cannot
 * reach its parent session's sockets, nor the parent's tool a nested
 * session's; a socket keeps the cgroup it was created in, whoever holds
 * it later. A refused peer is recorded as before: Network, Connect, the
 * peer's name, reason "named unix socket".
 *
 * Listening. bind4|6 judge the endpoint a socket binds, but listen(2) on
 * an unbound TCP socket picks a free port itself (inet_listen's
 * autobind) and no cgroup hook runs: the tool could accept inbound
 * connections on a port no [net] bind grant names. socket_listen refuses
 * (EPERM) listen on an AF_INET or AF_INET6 socket unless it has a local
 * port (sock_common.skc_num, by CO-RE) and is closed or listening
 * already: a closed socket with a port got it from bind, where bind4|6
 * decided (the port connect autobinds is released when the socket
 * closes, and refusing connected and connecting sockets, where listen
 * fails anyway, leaves no window for a disconnect between this hook and
 * inet_listen). Other families are not inet: AF_UNIX's autobind gives an
 * abstract name that only the session's cgroup may reach. A refusal is
 * recorded as kind Network, action Listen, the socket's local endpoint
 * (port 0 when unbound), reason "listen without bind"; an allowed listen
 * is not: bind recorded its endpoint. As for every hook whose first
 * argument is the socket, the kernel runs the programs of the socket's
 * cgroup, not current's: a socket created outside the session and passed
 * in is not the session's to judge.
 *
 * User namespaces. A new user namespace would give the tool
 * CAP_SYS_ADMIN over a mount namespace of its own, where a bind mount
 * makes any file appear under a granted path; path-based checks are only
 * sound without that, so userns_create is refused.
 *
 * Other processes. The tool keeps bee-load's uid, so without a hook it
 * could PTRACE_ATTACH (or read /proc/PID/mem of) any process of that uid
 * outside the session (Yama's ptrace_scope=0 lets it) and act with that
 * process's freedom. ptrace_access_check runs for the tracer, current,
 * which is in the session's cgroup (or a nested session's below it); it
 * allows only a target whose cgroup v2 id (task->cgroups->dfl_cgrp->kn->id,
 * read by CO-RE) equals bpf_get_current_cgroup_id(): the very same cgroup.
 * So a session's tool may trace its own session's processes only: not the
 * launcher's or the user's, not its parent session's, nor a nested
 * session's (which lives in a child cgroup) from the parent's tool. The
 * hook sees every mode, not only PTRACE_MODE_ATTACH: PTRACE_MODE_READ
 * checks are refused the same way, so /proc/PID/mem, environ, auxv, maps,
 * stack, the fd/, cwd, root and exe links, kcmp, pidfd_getfd and
 * process_vm_readv/writev (mm_access: ptrace_access_check too) of outside
 * processes are refused; the kernel answers EPERM or EACCES as its caller
 * chooses. Checks within one thread group never reach the hook
 * (__ptrace_may_access allows them first), so /proc/self stays open. What
 * ps needs still works: /proc/PID/stat asks with PTRACE_MODE_NOAUDIT and
 * only hides fields on a refusal; status and cmdline ask nothing. A
 * decision is recorded per the [audit] mode as kind Process, action Read,
 * resource "pid:N" (the target's thread group id in the initial pid
 * namespace), reason "process outside the session's cgroup", with the
 * PTRACE_MODE_* bits as the record's detail; a check with
 * PTRACE_MODE_NOAUDIT (the kernel's "probe, do not log", as for
 * /proc/PID/stat) is decided the same but never recorded. ptrace_traceme
 * (a session process asking its parent to trace it) has no program: it
 * lets a process outside act on the session, not the tool act outside,
 * and it would cost the last slot.
 *
 * Per-CPU scratch. The path buffer is per CPU; a program can be preempted
 * on a preemptible kernel and another one run on the same CPU, so every
 * user takes a sequence number and a decision made while the number moved
 * is denied (reason INTERNAL) rather than trusted.
 */
#ifndef BEE_HOOKS_BPF_H
#define BEE_HOOKS_BPF_H

#include "bee_types.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "bee_kernel.h"

#include "bee_audit.h"
#include "bee_dfa.h"
#include "bee_net.h"
#include "bee_names.h"
#include "bee_net_decide.h"
#include "bee_session.h"

char LICENSE[] SEC("license") = "GPL";

/* The automata's permission bits (BEE_PERM_*), the maps', programs' and
 * constants' names: runtime/bee_names.h. */

/* bpf_d_path's buffer: one byte more than the longest path walked plus its
 * NUL, so that "fits" and "too long" are told apart by the length. */
#define BEE_DPATH_SIZE (BEE_PATH_MAX + 1)
#define BEE_DPATH_BUF ((BEE_DPATH_SIZE + 7) & ~7)

/* ---- what the loader sets ---------------------------------------------------- */

/* The placeholders below are never used: the loader sets every one from
 * the manifest (see the top of this file). */
const volatile __u32 bee_audit_mode = BEE_AUDIT_MODE_DENY;
const volatile __u32 bee_syscalls_allowed = 0;
const volatile __u32 bee_fs_image_size = sizeof(struct bee_dfa_hdr);
const volatile __u32 bee_exec_image_size = sizeof(struct bee_dfa_hdr);
const volatile __u32 bee_pins_on = 0;
/* each a constant of runtime/bee_names.h, under that name */
BEE_CONSTS_DECLARED()

/* Set by the loader when it loads the object for a pack (not from the
 * manifest: it depends on where the pack's cgroup is): the depth below
 * the cgroup2 root of the sessions' cgroups, the children of the pack's
 * cgroup that the programs are attached to (loader/cache.c). A task's
 * ancestor at this depth is its session: the key of every per-session
 * map below. */
const volatile __u32 bee_session_level = 0;
BEE_LOADER_CONSTS_DECLARED()

#define BEE_AUDIT bee_audit_mode
#define BEE_SYSCALLS_ALLOWED bee_syscalls_allowed
#define BEE_FS_IMAGE_SIZE bee_fs_image_size
#define BEE_EXEC_IMAGE_SIZE bee_exec_image_size

/* ---- maps ------------------------------------------------------------------ */

/* Per-session maps. One loaded object serves every session of a pack
 * (loader/cache.c): what differs between sessions lives in maps keyed by
 * the session, the id of the task's cgroup at bee_session_level (bee_sess).
 * A hash of maps holds, per session, a map of the shape the manifest gives
 * (the inner map below). The images (bee_fs, bee_exec, bee_net4/6) are the
 * pack's, at key BEE_SESSION_SHARED (0, which no cgroup has), for every
 * session without an entry of its own, which only a revoke gives it (its
 * narrowed copy: loader/revoke.c); a session's state (its generation and
 * its ring buffer's index in bee_audit), lost count and pins are its entries, made before any of its tasks
 * runs. A task of a session without them records nothing. The
 * loader sets each outer map's max_entries: the sessions one loaded pack
 * may serve at once. The inner maps give sizes, not BTF types: clang
 * describes a type reached only through the inner map's pointer as a
 * forward declaration, whose size libbpf cannot know. */
#define BEE_PER_SESSION(inner)                      \
	__uint(type, BPF_MAP_TYPE_HASH_OF_MAPS);    \
	__uint(max_entries, 1);                     \
	__type(key, __u64);                         \
	__array(values, inner)

/* The automata: one image in one value, so a walk is one dependent load a
 * byte. Read-only to the programs; the loader writes them. The value is a
 * byte array of the policy's size: value_size, not a BTF type, so that the
 * loader may resize it. */
struct bee_image_map {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_RDONLY_PROG);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct bee_dfa_hdr));   /* set by the loader */
};

struct {
	BEE_PER_SESSION(struct bee_image_map);
} bee_fs SEC(".maps");

struct {
	BEE_PER_SESSION(struct bee_image_map);
} bee_exec SEC(".maps");

/* max_entries of these four are the loader's too: the entries (at least 1) */
struct bee_net4_map {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_NO_PREALLOC | BPF_F_RDONLY_PROG);
	__uint(key_size, sizeof(struct bee_net_key4));
	__uint(value_size, sizeof(struct bee_net_value));
};

struct bee_net6_map {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_NO_PREALLOC | BPF_F_RDONLY_PROG);
	__uint(key_size, sizeof(struct bee_net_key6));
	__uint(value_size, sizeof(struct bee_net_value));
};

struct {
	BEE_PER_SESSION(struct bee_net4_map);
} bee_net4 SEC(".maps");

struct {
	BEE_PER_SESSION(struct bee_net6_map);
} bee_net6 SEC(".maps");

/* a session's own: the pinned files are stat'ed when it starts */
struct bee_pins_map {
	__uint(type, BEE_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_RDONLY_PROG);
	__uint(key_size, sizeof(struct bee_pin_key));
	__uint(value_size, sizeof(struct bee_pin_value));
};

struct {
	BEE_PER_SESSION(struct bee_pins_map);
} bee_pins SEC(".maps");

struct {
	__uint(type, BEE_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_RDONLY_PROG);
	__type(key, __u64);
	__type(value, struct bee_state);
} bee_state SEC(".maps");

/* the server a query redirected to the session's DNS stub was sent to */
struct {
	__uint(type, BEE_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct bee_dns_orig);
} bee_dns_orig SEC(".maps");

/* "this inode may be mapped executable" (see the design notes) */
#define BEE_INODE_MAP_EXEC 0x1u
struct bee_inode_rec {
	__u64 sess;              /* the session that recorded it */
	__u32 gen;               /* its bee_state.gen then */
	__u32 flags;             /* BEE_INODE_MAP_EXEC */
};

struct {
	__uint(type, BEE_MAP_TYPE_INODE_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct bee_inode_rec);
} bee_inode SEC(".maps");

/* The exec open that file_open allowed last, for bprm_check_security;
 * created only for a policy with pins. */
#define BEE_TASK_PINNED 0x1u     /* only a pin allowed it */
struct bee_task_rec {
	__u64 ino;
	__u32 dev;
	__u32 flags;
};

struct {
	__uint(type, BEE_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct bee_task_rec);
} bee_task SEC(".maps");

/* A record under construction, its path right behind it (the ring buffer
 * record is the two, contiguous), and the sequence number that detects a
 * preempting user of the same CPU's buffer. */
struct bee_scratch {
	struct bee_audit_event ev;
	__u8 path[BEE_DPATH_BUF];
	__u64 seq;
};

_Static_assert(__builtin_offsetof(struct bee_scratch, path) == sizeof(struct bee_audit_event),
	       "a record's path follows its event");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bee_scratch);
} bee_scratch SEC(".maps");

/* each session's own ring buffer, which its bee-load reads: the load's
 * pool of them, ring N at index N, and the session's bee_state.ring
 * naming its own. Taking a ring of the pool writes only the session's
 * bee_state entry: an entry of a map of maps, made or deleted, costs the
 * writer an RCU grace period (milliseconds), paid here once per ring for
 * the load's life, not once per session. */
struct bee_audit_map {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 << 10);   /* set by the loader */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);          /* set by the loader: the pool's size */
	__type(key, __u32);
	__array(values, struct bee_audit_map);
} bee_audit SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 1);
	__type(key, __u64);
	__type(value, __u64);
} bee_lost SEC(".maps");

/* ---- the walks ------------------------------------------------------------- */

/* What a walk reads: the type fixes the size the verifier checks. */
struct bee_path_bytes {
	__u8 b[BEE_PATH_MAX];
};

/* A walk's answer: state in the high word, permission bits in the low. */
#define BEE_WALK_STATE(r) ((__u32)((r) >> 32))
#define BEE_WALK_PERMS(r) ((__u32)(r))
#define BEE_WALK_NONE (((__u64)BEE_DFA_STATE_INVALID) << 32)

/* The image session sess decides with: its own copy (a revoke's), or the
 * pack's at key BEE_SESSION_SHARED. Both are inner maps of the same outer
 * map, so to the verifier the two are one pointer: the walk after it is
 * checked once. */
static __always_inline void *bee_session_image(void *outer, __u64 sess)
{
	__u64 shared = BEE_SESSION_SHARED;
	void *img = bpf_map_lookup_elem(outer, &sess);

	return img ? img : bpf_map_lookup_elem(outer, &shared);
}

/* Global (not static, not inlined) functions: the verifier checks each
 * once, whatever calls it, instead of once per call site and path; the
 * 4095-step walk is most of a program's verification. p may be NULL to
 * the verifier; len > BEE_PATH_MAX - 1 walks nothing (bee_dfa_match). */
__attribute__((noinline)) __u64 bee_walk_fs(struct bee_path_bytes *p, __u32 len, __u64 sess)
{
	__u32 zero = 0;
	struct bee_dfa_answer a = { .state = BEE_DFA_STATE_INVALID };
	void *img = bee_session_image(&bee_fs, sess);
	const struct bee_dfa_hdr *h = img ? bpf_map_lookup_elem(img, &zero) : 0;

	if (!p || !h)
		return BEE_WALK_NONE;
	bee_dfa_match(h, BEE_FS_IMAGE_SIZE, p->b, len, &a);
	return ((__u64)a.state << 32) | a.perms;
}

__attribute__((noinline)) __u64 bee_walk_exec(struct bee_path_bytes *p, __u32 len, __u64 sess)
{
	__u32 zero = 0;
	struct bee_dfa_answer a = { .state = BEE_DFA_STATE_INVALID };
	void *img = bee_session_image(&bee_exec, sess);
	const struct bee_dfa_hdr *h = img ? bpf_map_lookup_elem(img, &zero) : 0;

	if (!p || !h)
		return BEE_WALK_NONE;
	bee_dfa_match(h, BEE_EXEC_IMAGE_SIZE, p->b, len, &a);
	return ((__u64)a.state << 32) | a.perms;
}

/* ---- helpers --------------------------------------------------------------- */

/* current's session: its cgroup's ancestor at the sessions' depth (0 for a
 * task above it, which no map has: denied) */
static __always_inline __u64 bee_sess(void)
{
	return bpf_get_current_ancestor_cgroup_id((int)bee_session_level);
}

static __always_inline struct bee_scratch *bee_scratch_get(void)
{
	__u32 zero = 0;
	return bpf_map_lookup_elem(&bee_scratch, &zero);
}

/* Takes this CPU's buffer: a preempting user bumps seq after us. */
static __always_inline __u64 bee_scratch_claim(struct bee_scratch *sc)
{
	__u64 s = *(volatile __u64 *)&sc->seq + 1;
	*(volatile __u64 *)&sc->seq = s;
	return s;
}

static __always_inline int bee_scratch_intact(struct bee_scratch *sc, __u64 s)
{
	return *(volatile __u64 *)&sc->seq == s;
}

static __always_inline __u32 bee_gen(__u64 sess)
{
	struct bee_state *st = bpf_map_lookup_elem(&bee_state, &sess);
	return st ? st->gen : 0;
}

/* 1 in a learning session (bee_session.h, BEE_STATE_LEARN): looked up
 * on the way to a denial only, so enforcing sessions pay nothing more. */
static __always_inline int bee_learning(void)
{
	__u64 sess = bee_sess();
	struct bee_state *st = bpf_map_lookup_elem(&bee_state, &sess);

	return st && (st->flags & BEE_STATE_LEARN);
}

/* 1 when the policy's audit mode records this decision; a learning
 * session records every denial. */
static __always_inline int bee_audit_wanted(__u32 decision)
{
	if (BEE_AUDIT == BEE_AUDIT_MODE_ALL)
		return 1;
	if (decision != BEE_AUDIT_DENY)
		return 0;
	return BEE_AUDIT == BEE_AUDIT_MODE_DENY || bee_learning();
}

/* The who and when of a record. */
static __always_inline void bee_audit_stamp(struct bee_audit_event *ev)
{
	__u64 id = bpf_get_current_pid_tgid();

	ev->ktime_ns = bpf_ktime_get_boot_ns();
	ev->pid = (__u32)(id >> 32);
	ev->tid = (__u32)id;
	bpf_get_current_comm(ev->comm, sizeof(ev->comm));
}

/* Sends a record of size bytes; a full ring buffer is counted, never
 * silent. */
static __always_inline void bee_audit_send(void *rec, __u64 size)
{
	__u64 sess = bee_sess();
	struct bee_state *st = bpf_map_lookup_elem(&bee_state, &sess);
	void *rb = NULL;

	if (st) {
		__u32 ring = st->ring;
		rb = bpf_map_lookup_elem(&bee_audit, &ring);
	}
	if (!rb || bpf_ringbuf_output(rb, rec, size, 0) < 0) {
		__u64 *lost = bpf_map_lookup_elem(&bee_lost, &sess);
		if (lost)
			__sync_fetch_and_add(lost, 1);
	}
}

/* Sends the scratch record with its path_len path bytes. */
static __always_inline void bee_audit_send_scratch(struct bee_scratch *sc)
{
	__u64 n = sc->ev.path_len;

	if (n > BEE_AUDIT_PATH_MAX)
		n = 0;
	bee_dfa_barrier_var(n);
	bee_audit_send(sc, sizeof(struct bee_audit_event) + (n & BEE_AUDIT_PATH_MAX));
}

static __always_inline void bee_event_init(struct bee_audit_event *ev, __u8 hook, __u8 kind,
					   __u8 action, __u8 resource)
{
	ev->hook = hook;
	ev->kind = kind;
	ev->action = action;
	ev->resource = resource;
	ev->decision = BEE_AUDIT_DENY;
	ev->reason = BEE_AUDIT_REASON_INTERNAL;
	ev->path_len = 0;
	ev->want = 0;
	ev->have = 0;
	ev->detail = BEE_AUDIT_DETAIL_NONE;
	ev->reserved = 0;
	ev->file.ino = 0;
	ev->file.dev = 0;
	ev->file.reserved = 0;
	ev->file.reserved2 = 0;
}

/* Ends an LSM decision: 1 allows; 0 denies with errno err (a learning
 * session's denial, recorded already, is allowed). */
static __always_inline int bee_lsm_return(int allow, int err)
{
	if (allow || bee_learning())
		return 1;
	bpf_set_retval(-err);
	return 0;
}

/* d_path of f into the scratch buffer. Returns the path's length, or -1
 * when it failed or filled the buffer (too long: denied, never walked). */
static __always_inline int bee_path_of(struct file *f, struct bee_scratch *sc)
{
	long n = bpf_d_path(&f->f_path, (char *)sc->path, BEE_DPATH_SIZE);

	if (n <= 0 || n > BEE_PATH_MAX)
		return -1;
	return (int)(n - 1);   /* without the NUL; at most BEE_PATH_MAX - 1 */
}

static __always_inline void bee_file_id(struct inode *inode, struct bee_audit_event *ev)
{
	ev->file.ino = inode->i_ino;
	ev->file.dev = inode->i_sb->s_dev;
}

/* 1 when (dev, ino) is a pinned file of this session. */
static __always_inline int bee_pinned(const struct bee_audit_event *ev)
{
	struct bee_pin_key k = { .ino = ev->file.ino, .dev = ev->file.dev, .zero = 0 };
	__u64 sess = bee_sess();
	void *pins = bpf_map_lookup_elem(&bee_pins, &sess);
	return pins && bpf_map_lookup_elem(pins, &k) != 0;
}

/* Records that inode may be mapped executable in this session and
 * generation. */
static __always_inline void bee_inode_allow_map(struct inode *inode, __u64 sess, __u32 gen)
{
	struct bee_inode_rec *r =
		bpf_inode_storage_get(&bee_inode, inode, 0, BEE_LOCAL_STORAGE_GET_F_CREATE);
	if (r) {
		r->sess = sess;
		r->gen = gen;
		r->flags = BEE_INODE_MAP_EXEC;
	}
}

static __always_inline int bee_inode_may_map(struct inode *inode, __u64 sess, __u32 gen)
{
	struct bee_inode_rec *r = bpf_inode_storage_get(&bee_inode, inode, 0, 0);
	return r && r->sess == sess && r->gen == gen && (r->flags & BEE_INODE_MAP_EXEC);
}

/* Records the exec open ev allowed for bee_bprm_check: the file, and
 * whether only a pin allowed it. */
static __always_inline void bee_task_record(const struct bee_audit_event *ev)
{
	struct bee_task_rec *t = bpf_task_storage_get(&bee_task, bpf_get_current_task_btf(), 0,
						      BEE_LOCAL_STORAGE_GET_F_CREATE);
	if (t) {
		t->ino = ev->file.ino;
		t->dev = ev->file.dev;
		t->flags = (ev->have & BEE_PERM_EXEC) ? 0 : BEE_TASK_PINNED;
	}
}

/* The exec automaton's answer for the scratch path of length len and the
 * file in ev->file: EXEC allows; EXEC_PINNED allows the pinned file only.
 * Fills want/have/detail/reason/decision; returns 1 to allow. */
static __always_inline int bee_exec_decide(struct bee_scratch *sc, int len)
{
	struct bee_audit_event *ev = &sc->ev;
	__u64 r;
	__u32 perms;

	ev->want = BEE_PERM_EXEC;
	if (len < 0) {
		ev->reason = BEE_AUDIT_REASON_TOO_LONG;
		return 0;
	}
	ev->path_len = (__u16)len;
	r = bee_walk_exec((struct bee_path_bytes *)sc->path, (__u32)len, bee_sess());
	perms = BEE_WALK_PERMS(r);
	ev->have = perms;
	ev->detail = BEE_WALK_STATE(r);
	if (perms & BEE_PERM_EXEC) {
		ev->reason = BEE_AUDIT_REASON_GRANTED;
	} else if ((perms & BEE_PERM_EXEC_PINNED) && bee_pinned(ev)) {
		ev->reason = BEE_AUDIT_REASON_GRANTED;
	} else {
		ev->reason = (perms & BEE_PERM_EXEC_PINNED) ? BEE_AUDIT_REASON_NOT_PINNED
							    : BEE_AUDIT_REASON_NOT_GRANTED;
		return 0;
	}
	ev->decision = BEE_AUDIT_ALLOW;
	return 1;
}

/* What an open that is not an exec asks for. */
static __always_inline __u32 bee_open_want(__u32 fmode, __u32 flags)
{
	__u32 want = 0;

	if (fmode & BEE_FMODE_READ)
		want |= BEE_PERM_READ;
	if ((fmode & BEE_FMODE_WRITE) || (flags & BEE_O_TRUNC))
		want |= BEE_PERM_WRITE;
	return want ? want : BEE_PERM_READ;
}

/* ---- file_open ------------------------------------------------------------- */

SEC("lsm_cgroup/file_open")
int BPF_PROG(bee_file_open, struct file *file)
{
	struct bee_scratch *sc = bee_scratch_get();
	struct bee_audit_event *ev;
	struct inode *inode;
	__u32 fmode, want;
	int len, allow;
	__u64 seq;

	if (!sc)
		return bee_lsm_return(0, BEE_EACCES);
	ev = &sc->ev;
	seq = bee_scratch_claim(sc);
	fmode = file->f_mode;
	inode = file->f_inode;
	len = bee_path_of(file, sc);

	if ((fmode & BEE_FMODE_EXEC) || (file->f_flags & BEE_FFLAGS_EXEC)) {
		bee_event_init(ev, BEE_AUDIT_HOOK_FILE_OPEN, BEE_AUDIT_KIND_PROCESS,
			       BEE_AUDIT_ACTION_EXECUTE, BEE_AUDIT_RES_PATH);
		bee_file_id(inode, ev);
		allow = bee_exec_decide(sc, len);
		if (allow) {
			__u64 sess = bee_sess();
			bee_inode_allow_map(inode, sess, bee_gen(sess));
			/* dead code to the verifier without pins: bee_task is not created */
			if (bee_pins_on)
				bee_task_record(ev);
		}
	} else {
		want = bee_open_want(fmode, file->f_flags);
		bee_event_init(ev, BEE_AUDIT_HOOK_FILE_OPEN, BEE_AUDIT_KIND_FILESYSTEM,
			       (want & BEE_PERM_WRITE) ? BEE_AUDIT_ACTION_WRITE : BEE_AUDIT_ACTION_READ,
			       BEE_AUDIT_RES_PATH);
		bee_file_id(inode, ev);
		ev->want = want;
		allow = 0;
		if (len < 0) {
			ev->reason = BEE_AUDIT_REASON_TOO_LONG;
		} else {
			__u64 r = bee_walk_fs((struct bee_path_bytes *)sc->path, (__u32)len, bee_sess());
			__u32 perms = BEE_WALK_PERMS(r);
			ev->path_len = (__u16)len;
			ev->have = perms;
			ev->detail = BEE_WALK_STATE(r);
			allow = (perms & want) == want;
			ev->reason = allow ? BEE_AUDIT_REASON_GRANTED : BEE_AUDIT_REASON_NOT_GRANTED;
			/* the action names the permission that was missing */
			if (!allow && (want & BEE_PERM_READ) && !(perms & BEE_PERM_READ))
				ev->action = BEE_AUDIT_ACTION_READ;
		}
	}
	if (!bee_scratch_intact(sc, seq)) {
		allow = 0;
		ev->reason = BEE_AUDIT_REASON_INTERNAL;
	}
	ev->decision = allow ? BEE_AUDIT_ALLOW : BEE_AUDIT_DENY;
	if (bee_audit_wanted(ev->decision)) {
		bee_audit_stamp(ev);
		bee_audit_send_scratch(sc);
	}
	return bee_lsm_return(allow, BEE_EACCES);
}

/* ---- bprm_check_security --------------------------------------------------- */

/* Loaded only for a policy with pins (see the design notes). */
SEC("lsm_cgroup/bprm_check_security")
int BPF_PROG(bee_bprm_check, struct linux_binprm *bprm)
{
	struct file *file = bprm->file;
	struct bee_scratch *sc = bee_scratch_get();
	struct bee_audit_event *ev;
	struct bee_task_rec *t;
	struct inode *inode;
	int allow = 0;
	__u64 seq;

	if (!sc || !file)
		return bee_lsm_return(0, BEE_EACCES);
	ev = &sc->ev;
	seq = bee_scratch_claim(sc);
	inode = file->f_inode;
	bee_event_init(ev, BEE_AUDIT_HOOK_BPRM_CHECK, BEE_AUDIT_KIND_PROCESS,
		       BEE_AUDIT_ACTION_EXECUTE, BEE_AUDIT_RES_PATH);
	bee_file_id(inode, ev);
	ev->want = BEE_PERM_EXEC;
	t = bpf_task_storage_get(&bee_task, bpf_get_current_task_btf(), 0, 0);
	if (!t || t->ino != ev->file.ino || t->dev != ev->file.dev) {
		ev->reason = BEE_AUDIT_REASON_NOT_CHECKED;
	} else if ((t->flags & BEE_TASK_PINNED) && !bee_pinned(ev)) {
		ev->reason = BEE_AUDIT_REASON_NOT_PINNED;
	} else {
		allow = 1;
		ev->reason = BEE_AUDIT_REASON_GRANTED;
	}
	if (!bee_scratch_intact(sc, seq)) {
		allow = 0;
		ev->reason = BEE_AUDIT_REASON_INTERNAL;
	}
	/* an allow confirms what file_open recorded already: only a deny is news */
	if (!allow && BEE_AUDIT != BEE_AUDIT_MODE_NONE) {
		int len = bee_path_of(file, sc);
		ev->path_len = len < 0 ? 0 : (__u16)len;
		bee_audit_stamp(ev);
		bee_audit_send_scratch(sc);
	}
	return bee_lsm_return(allow, BEE_EACCES);
}

/* ---- mmap_file, file_mprotect ---------------------------------------------- */

SEC("lsm_cgroup/mmap_file")
int BPF_PROG(bee_mmap_file, struct file *file, unsigned long reqprot, unsigned long prot,
	     unsigned long flags)
{
	struct bee_scratch *sc;
	struct bee_audit_event *ev;
	struct inode *inode;
	int allow, len;
	__u64 sess, seq;
	__u32 gen;

	/* anonymous memory and mappings without PROT_EXEC are not the exec list's */
	if (!file || !(prot & BEE_PROT_EXEC))
		return 1;
	inode = file->f_inode;
	sess = bee_sess();
	gen = bee_gen(sess);
	allow = bee_inode_may_map(inode, sess, gen);
	if (allow && BEE_AUDIT != BEE_AUDIT_MODE_ALL)
		return 1;
	sc = bee_scratch_get();
	if (!sc)
		return bee_lsm_return(allow, BEE_EACCES);
	ev = &sc->ev;
	seq = bee_scratch_claim(sc);
	bee_event_init(ev, BEE_AUDIT_HOOK_MMAP_FILE, BEE_AUDIT_KIND_PROCESS,
		       BEE_AUDIT_ACTION_EXECUTE, BEE_AUDIT_RES_PATH);
	bee_file_id(inode, ev);
	len = bee_path_of(file, sc);
	if (allow) {
		/* recorded already: the walk only names the path for the record */
		ev->want = BEE_PERM_EXEC;
		ev->path_len = len < 0 ? 0 : (__u16)len;
		ev->reason = BEE_AUDIT_REASON_GRANTED;
	} else {
		allow = bee_exec_decide(sc, len);
		if (allow)
			bee_inode_allow_map(inode, sess, gen);
	}
	if (!bee_scratch_intact(sc, seq)) {
		allow = 0;
		ev->reason = BEE_AUDIT_REASON_INTERNAL;
	}
	ev->decision = allow ? BEE_AUDIT_ALLOW : BEE_AUDIT_DENY;
	if (bee_audit_wanted(ev->decision)) {
		bee_audit_stamp(ev);
		bee_audit_send_scratch(sc);
	}
	return bee_lsm_return(allow, BEE_EACCES);
}

SEC("lsm_cgroup/file_mprotect")
int BPF_PROG(bee_mprotect, struct vm_area_struct *vma, unsigned long reqprot, unsigned long prot)
{
	struct bee_audit_event ev;
	struct file *file;
	struct inode *inode;
	__u64 sess;
	int allow;

	if (!(prot & BEE_PROT_EXEC))
		return 1;
	file = vma->vm_file;
	if (!file)
		return 1;
	inode = file->f_inode;
	/* no bpf_d_path here: only a record of an allowed exec open or map counts */
	sess = bee_sess();
	allow = bee_inode_may_map(inode, sess, bee_gen(sess));
	if (bee_audit_wanted(allow ? BEE_AUDIT_ALLOW : BEE_AUDIT_DENY)) {
		bee_event_init(&ev, BEE_AUDIT_HOOK_FILE_MPROTECT, BEE_AUDIT_KIND_PROCESS,
			       BEE_AUDIT_ACTION_EXECUTE, BEE_AUDIT_RES_FILE);
		bee_file_id(inode, &ev);
		ev.want = BEE_PERM_EXEC;
		ev.decision = allow ? BEE_AUDIT_ALLOW : BEE_AUDIT_DENY;
		ev.reason = allow ? BEE_AUDIT_REASON_GRANTED : BEE_AUDIT_REASON_NOT_MAPPED;
		bee_audit_stamp(&ev);
		bee_audit_send(&ev, sizeof(ev));
	}
	return bee_lsm_return(allow, BEE_EACCES);
}

/* ---- sockets --------------------------------------------------------------- */

/* The sockets a session may create: AF_UNIX of any type; in AF_INET and
 * AF_INET6 TCP streams and UDP datagrams (protocol 0 picks those). */
static __always_inline int bee_socket_ok(__u32 family, __u32 type, __u32 protocol)
{
	if (family == BEE_AF_UNIX)
		return 1;
	if (family != BEE_AF_INET && family != BEE_AF_INET6)
		return 0;
	if (type == BEE_SOCK_STREAM)
		return protocol == 0 || protocol == BEE_NET_PROTO_TCP;
	if (type == BEE_SOCK_DGRAM)
		return protocol == 0 || protocol == BEE_NET_PROTO_UDP;
	return 0;
}

/* A refused socket's record: only refusals are recorded (a socket that
 * is allowed is judged again where it connects or binds). */
static __always_inline void bee_socket_refused(__u8 hook, __u32 family, __u32 type, __u32 protocol)
{
	struct bee_audit_event ev;

	if (!bee_audit_wanted(BEE_AUDIT_DENY))
		return;
	bee_event_init(&ev, hook, BEE_AUDIT_KIND_NETWORK, BEE_AUDIT_ACTION_CONNECT,
		       BEE_AUDIT_RES_SOCKET);
	ev.reason = BEE_AUDIT_REASON_SOCKET_REFUSED;
	ev.net.family = (__u16)family;
	ev.net.type = (__u8)type;
	ev.net.proto = (__u8)protocol;
	bee_audit_stamp(&ev);
	bee_audit_send(&ev, sizeof(ev));
}

SEC("lsm_cgroup/socket_create")
int BPF_PROG(bee_socket, int family, int type, int protocol, int kern)
{
	/* sockets the kernel makes for itself are not the tool's */
	if (kern || bee_socket_ok((__u32)family, (__u32)type, (__u32)protocol))
		return 1;
	bee_socket_refused(BEE_AUDIT_HOOK_SOCKET_CREATE, (__u32)family, (__u32)type,
			   (__u32)protocol);
	return bee_lsm_return(0, BEE_EPERM);
}

SEC("cgroup/sock_create")
int bee_sock_create(struct bpf_sock *sk)
{
	__u32 family = sk->family, type = sk->type, protocol = sk->protocol;

	if (bee_socket_ok(family, type, protocol))
		return 1;
	bee_socket_refused(BEE_AUDIT_HOOK_SOCK_CREATE, family, type, protocol);
	return bee_learning();
}

/* ---- listen ---------------------------------------------------------------- */

/* An AF_INET/AF_INET6 socket may listen only when bind gave it its port
 * (where cgroup/bind4|6 judged the endpoint) and it is neither connected
 * nor connecting (see the design notes). Only a refusal is recorded: an
 * allowed listen's endpoint was recorded at bind. */
SEC("lsm_cgroup/socket_listen")
int BPF_PROG(bee_listen, struct socket *sock, int backlog)
{
	struct sock *sk = sock->sk;
	struct bee_audit_event ev;
	__u16 family, num;
	__u8 state;

	if (!sk)
		return bee_lsm_return(0, BEE_EPERM);
	family = BPF_CORE_READ(sk, __sk_common.skc_family);
	if (family != BEE_AF_INET && family != BEE_AF_INET6)
		return 1;   /* AF_UNIX: its peers are checked at connect and send */
	num = BPF_CORE_READ(sk, __sk_common.skc_num);
	state = BPF_CORE_READ(sk, __sk_common.skc_state);
	if (num != 0 && (state == BEE_TCP_CLOSE || state == BEE_TCP_LISTEN))
		return 1;
	if (bee_audit_wanted(BEE_AUDIT_DENY)) {
		bee_event_init(&ev, BEE_AUDIT_HOOK_SOCKET_LISTEN, BEE_AUDIT_KIND_NETWORK,
			       BEE_AUDIT_ACTION_LISTEN, BEE_AUDIT_RES_INET);
		ev.reason = BEE_AUDIT_REASON_NOT_BOUND;
		__builtin_memset(&ev.net, 0, sizeof(ev.net));
		ev.net.family = family;
		ev.net.port = num;
		ev.net.proto = (__u8)BPF_CORE_READ(sk, sk_protocol);
		if (family == BEE_AF_INET)
			BPF_CORE_READ_INTO(&ev.net.addr, sk, __sk_common.skc_rcv_saddr);
		else
			BPF_CORE_READ_INTO(&ev.net.addr, sk, __sk_common.skc_v6_rcv_saddr);
		bee_audit_stamp(&ev);
		bee_audit_send(&ev, sizeof(ev));
	}
	return bee_lsm_return(0, BEE_EPERM);
}

/* ---- AF_UNIX peers ----------------------------------------------------------- */

/* The peer's bound name into the scratch path ('@' for an abstract one). */
static __always_inline __u16 bee_unix_name(struct sock *peer, struct bee_scratch *sc)
{
	struct unix_address *ua = BPF_CORE_READ((struct unix_sock *)peer, addr);
	int len;

	if (!ua)
		return 0;
	len = BPF_CORE_READ(ua, len) - (int)sizeof(unsigned short);
	if (len <= 0)
		return 0;
	if (len > BEE_UNIX_PATH_MAX)
		len = BEE_UNIX_PATH_MAX;
	bee_dfa_barrier_var(len);
	if (bpf_core_read(sc->path, len & 127, &ua->name[0].sun_path) < 0)
		return 0;
	if (sc->path[0] == 0)
		sc->path[0] = '@';
	return (__u16)len;
}

/* 1 when sk was created in current's very cgroup (cgroup_sk_alloc gave
 * it its creator's cgroup v2). A kernel without the cgroup pointer in
 * sock_cgroup_data (before 5.15) answers 0: fail closed. */
static __always_inline int bee_sock_same_cgroup(struct sock *sk)
{
	__u64 id;

	if (!bpf_core_field_exists(sk->sk_cgrp_data.cgroup))
		return 0;
	id = BPF_CORE_READ(sk, sk_cgrp_data.cgroup, kn, id);
	return id != 0 && id == bpf_get_current_cgroup_id();
}

static __always_inline int bee_unix_peer(struct sock *peer, __u8 hook)
{
	int allow = bee_sock_same_cgroup(peer);
	struct bee_scratch *sc;
	__u64 seq;

	if (!bee_audit_wanted(allow ? BEE_AUDIT_ALLOW : BEE_AUDIT_DENY))
		return allow;
	sc = bee_scratch_get();
	if (!sc)
		return allow;
	seq = bee_scratch_claim(sc);
	bee_event_init(&sc->ev, hook, BEE_AUDIT_KIND_NETWORK, BEE_AUDIT_ACTION_CONNECT,
		       BEE_AUDIT_RES_UNIX);
	sc->ev.net.family = BEE_AF_UNIX;
	sc->ev.decision = allow ? BEE_AUDIT_ALLOW : BEE_AUDIT_DENY;
	sc->ev.reason = allow ? BEE_AUDIT_REASON_GRANTED : BEE_AUDIT_REASON_UNIX_PEER;
	sc->ev.path_len = bee_unix_name(peer, sc);
	bee_audit_stamp(&sc->ev);
	/* a record raced by a preempting user is dropped, the decision stands */
	if (bee_scratch_intact(sc, seq))
		bee_audit_send_scratch(sc);
	return allow;
}

SEC("lsm_cgroup/unix_stream_connect")
int BPF_PROG(bee_unix_connect, struct sock *sock, struct sock *other, struct sock *newsk)
{
	return bee_lsm_return(bee_unix_peer(other, BEE_AUDIT_HOOK_UNIX_STREAM_CONNECT), BEE_EPERM);
}

SEC("lsm_cgroup/unix_may_send")
int BPF_PROG(bee_unix_send, struct socket *sock, struct socket *other)
{
	return bee_lsm_return(bee_unix_peer(other->sk, BEE_AUDIT_HOOK_UNIX_MAY_SEND), BEE_EPERM);
}

SEC("lsm_cgroup/userns_create")
int BPF_PROG(bee_userns, const struct cred *cred)
{
	struct bee_audit_event ev;

	if (bee_audit_wanted(BEE_AUDIT_DENY)) {
		bee_event_init(&ev, BEE_AUDIT_HOOK_USERNS_CREATE, BEE_AUDIT_KIND_PROCESS,
			       BEE_AUDIT_ACTION_EXECUTE, BEE_AUDIT_RES_NONE);
		ev.reason = BEE_AUDIT_REASON_NAMESPACE;
		bee_audit_stamp(&ev);
		bee_audit_send(&ev, sizeof(ev));
	}
	return bee_lsm_return(0, BEE_EPERM);
}

/* ---- ptrace_access_check --------------------------------------------------- */

/* "pid:N" into the scratch path; returns its length (5 to 14). */
static __always_inline __u16 bee_pid_text(struct bee_scratch *sc, __u32 pid)
{
	__u32 n = 1, v = pid, i;

	for (i = 0; i < 9 && v >= 10; i++) {
		v /= 10;
		n++;
	}
	sc->path[0] = 'p';
	sc->path[1] = 'i';
	sc->path[2] = 'd';
	sc->path[3] = ':';
	v = pid;
	for (i = 0; i < 10 && i < n; i++) {
		sc->path[(3 + n - i) & 15] = (__u8)('0' + v % 10);
		v /= 10;
	}
	return (__u16)(4 + n);
}

/* The tracer (current) is in the session; the target must be in the very
 * same cgroup (see the design notes). */
SEC("lsm_cgroup/ptrace_access_check")
int BPF_PROG(bee_ptrace, struct task_struct *child, unsigned int mode)
{
	__u64 target = BPF_CORE_READ(child, cgroups, dfl_cgrp, kn, id);
	int allow = target != 0 && target == bpf_get_current_cgroup_id();
	struct bee_scratch *sc;
	__u64 seq;

	/* the kernel's own "probe, do not log" (do_task_stat): decided, not recorded */
	if ((mode & BEE_PTRACE_MODE_NOAUDIT) ||
	    !bee_audit_wanted(allow ? BEE_AUDIT_ALLOW : BEE_AUDIT_DENY))
		return bee_lsm_return(allow, BEE_EPERM);
	sc = bee_scratch_get();
	if (!sc)
		return bee_lsm_return(allow, BEE_EPERM);
	seq = bee_scratch_claim(sc);
	bee_event_init(&sc->ev, BEE_AUDIT_HOOK_PTRACE_ACCESS_CHECK, BEE_AUDIT_KIND_PROCESS,
		       BEE_AUDIT_ACTION_READ, BEE_AUDIT_RES_PATH);
	sc->ev.decision = allow ? BEE_AUDIT_ALLOW : BEE_AUDIT_DENY;
	sc->ev.reason = allow ? BEE_AUDIT_REASON_GRANTED : BEE_AUDIT_REASON_OTHER_CGROUP;
	sc->ev.detail = mode;
	sc->ev.path_len = bee_pid_text(sc, (__u32)BPF_CORE_READ(child, tgid));
	bee_audit_stamp(&sc->ev);
	/* a record raced by a preempting user is dropped, the decision stands */
	if (bee_scratch_intact(sc, seq))
		bee_audit_send_scratch(sc);
	return bee_lsm_return(allow, BEE_EPERM);
}

/* ---- connect, sendmsg, bind ------------------------------------------------ */

/* Session DNS (loader/dns.c). When the session has a stub, every query
 * to port 53 (udp, and tcp: a connect) goes there whatever the address:
 * the stub answers every name and admits the answers of the policy's
 * names into the session's own bee_net4/6. The first destination is kept
 * with the socket for recvmsg. Returns 1 when ctx was redirected. The
 * stub is outside the session's cgroup, so its own queries upstream are
 * not caught. An IPv6 query goes to the stub's [::1] socket, or, from a
 * mapped address, to its IPv4 one; without a [::1] socket a native IPv6
 * query is left to the policy (the resolver tries its next server). */
static __always_inline int bee_dns_redirect(struct bpf_sock_addr *ctx, __u64 sess, __u32 family,
					    const __u32 addr[4], __u32 proto)
{
	struct bee_state *st = bpf_map_lookup_elem(&bee_state, &sess);
	struct bee_dns_orig *o;
	struct bpf_sock *sk;
	int mapped = family == 6 && bee_net_addr6_is_v4mapped(addr);

	if (!st || !st->dns_port4 || (proto != BEE_NET_PROTO_TCP && proto != BEE_NET_PROTO_UDP))
		return 0;
	if (family == 6 && !mapped && !st->dns_port6)
		return 0;
	sk = ctx->sk;
	if (!sk)
		return 0;
	o = bpf_sk_storage_get(&bee_dns_orig, sk, 0, BEE_LOCAL_STORAGE_GET_F_CREATE);
	if (!o)
		return 0;   /* no room to answer from the asked server: left to the policy */
	o->addr[0] = addr[0];
	o->addr[1] = addr[1];
	o->addr[2] = addr[2];
	o->addr[3] = addr[3];
	o->port = (__u16)ctx->user_port;
	o->family = (__u8)family;
	if (family == 4) {
		ctx->user_ip4 = st->dns_addr4;
		ctx->user_port = st->dns_port4;
	} else if (mapped) {
		ctx->user_ip6[3] = st->dns_addr4;
		ctx->user_port = st->dns_port4;
	} else {
		ctx->user_ip6[0] = 0;
		ctx->user_ip6[1] = 0;
		ctx->user_ip6[2] = 0;
		ctx->user_ip6[3] = bpf_htonl(1);
		ctx->user_port = st->dns_port6;
	}
	return 1;
}

/* One [net] decision. family is a constant after inlining, so each
 * program reads only the context fields its attach type may read. */
static __always_inline int bee_net_hook(struct bpf_sock_addr *ctx, __u8 dir, __u32 family,
					__u8 hook)
{
	struct bee_net_answer a = { .allow = 0, .map_family = 0, .prov = BEE_NET_PROV_NONE };
	__u32 addr[4] = { 0, 0, 0, 0 };
	__u32 proto = ctx->protocol;
	__u16 port = bpf_ntohs((__u16)ctx->user_port);
	struct bee_audit_event ev;
	void *net4, *net6;
	__u64 sess;

	if (family == 4) {
		addr[0] = ctx->user_ip4;
	} else {
		addr[0] = ctx->user_ip6[0];
		addr[1] = ctx->user_ip6[1];
		addr[2] = ctx->user_ip6[2];
		addr[3] = ctx->user_ip6[3];
	}
	/* only tcp and udp sockets get this far (socket_create); others match nothing */
	sess = bee_sess();
	if (dir == BEE_NET_CONNECT && port == BEE_DNS_PORT && bee_dns_redirect(ctx, sess, family, addr, proto)) {
		/* to the session's stub: allowed, and recorded as the query it is */
		a.allow = 1;
		a.prov = BEE_NET_PROV_DNS;
	} else {
		net4 = bee_session_image(&bee_net4, sess);
		net6 = bee_session_image(&bee_net6, sess);
		if (proto <= 255 && net4 && net6)
			bee_net_decide(net4, net6, dir, (__u8)proto, family, addr, port, &a);
	}
	if (bee_audit_wanted(a.allow ? BEE_AUDIT_ALLOW : BEE_AUDIT_DENY)) {
		bee_event_init(&ev, hook, BEE_AUDIT_KIND_NETWORK,
			       dir == BEE_NET_BIND ? BEE_AUDIT_ACTION_LISTEN : BEE_AUDIT_ACTION_CONNECT,
			       BEE_AUDIT_RES_INET);
		ev.decision = a.allow ? BEE_AUDIT_ALLOW : BEE_AUDIT_DENY;
		ev.reason = a.allow ? BEE_AUDIT_REASON_GRANTED : BEE_AUDIT_REASON_NOT_GRANTED;
		ev.detail = a.prov;
		ev.net.family = family == 4 ? BEE_AF_INET : BEE_AF_INET6;
		ev.net.port = port;
		ev.net.proto = (__u8)proto;
		__builtin_memcpy(ev.net.addr, addr, sizeof(addr));
		bee_audit_stamp(&ev);
		bee_audit_send(&ev, sizeof(ev));
	}
	return a.allow || bee_learning() ? 1 : 0;
}

SEC("cgroup/connect4")
int bee_connect4(struct bpf_sock_addr *ctx)
{
	return bee_net_hook(ctx, BEE_NET_CONNECT, 4, BEE_AUDIT_HOOK_CONNECT4);
}

SEC("cgroup/connect6")
int bee_connect6(struct bpf_sock_addr *ctx)
{
	return bee_net_hook(ctx, BEE_NET_CONNECT, 6, BEE_AUDIT_HOOK_CONNECT6);
}

/* an unconnected udp send names its destination here: the connect direction */
SEC("cgroup/sendmsg4")
int bee_sendmsg4(struct bpf_sock_addr *ctx)
{
	return bee_net_hook(ctx, BEE_NET_CONNECT, 4, BEE_AUDIT_HOOK_SENDMSG4);
}

SEC("cgroup/sendmsg6")
int bee_sendmsg6(struct bpf_sock_addr *ctx)
{
	return bee_net_hook(ctx, BEE_NET_CONNECT, 6, BEE_AUDIT_HOOK_SENDMSG6);
}

/* An answer from the session's stub to a redirected query: its source is
 * the server the query was sent to (bee_dns_redirect). Everything else is
 * left as it is; recvmsg programs may only return 1. */
static __always_inline int bee_dns_answer(struct bpf_sock_addr *ctx, __u32 family)
{
	__u64 sess = bee_sess();
	struct bee_state *st = bpf_map_lookup_elem(&bee_state, &sess);
	struct bee_dns_orig *o;
	struct bpf_sock *sk;
	__u16 port = (__u16)ctx->user_port;

	if (!st || !st->dns_port4)
		return 1;
	if (family == 4) {
		if (ctx->user_ip4 != st->dns_addr4 || port != st->dns_port4)
			return 1;
	} else {
		__u32 a[4] = { ctx->user_ip6[0], ctx->user_ip6[1], ctx->user_ip6[2], ctx->user_ip6[3] };
		int mapped = bee_net_addr6_is_v4mapped(a);
		int lo = a[0] == 0 && a[1] == 0 && a[2] == 0 && a[3] == bpf_htonl(1);
		if (!((mapped && a[3] == st->dns_addr4 && port == st->dns_port4) ||
		      (lo && st->dns_port6 && port == st->dns_port6)))
			return 1;
	}
	sk = ctx->sk;
	if (!sk)
		return 1;
	o = bpf_sk_storage_get(&bee_dns_orig, sk, 0, 0);
	if (!o || o->family != family)
		return 1;
	if (family == 4) {
		ctx->user_ip4 = o->addr[0];
	} else {
		ctx->user_ip6[0] = o->addr[0];
		ctx->user_ip6[1] = o->addr[1];
		ctx->user_ip6[2] = o->addr[2];
		ctx->user_ip6[3] = o->addr[3];
	}
	ctx->user_port = o->port;
	return 1;
}

SEC("cgroup/recvmsg4")
int bee_recvmsg4(struct bpf_sock_addr *ctx)
{
	return bee_dns_answer(ctx, 4);
}

SEC("cgroup/recvmsg6")
int bee_recvmsg6(struct bpf_sock_addr *ctx)
{
	return bee_dns_answer(ctx, 6);
}

SEC("cgroup/bind4")
int bee_bind4(struct bpf_sock_addr *ctx)
{
	return bee_net_hook(ctx, BEE_NET_BIND, 4, BEE_AUDIT_HOOK_BIND4);
}

SEC("cgroup/bind6")
int bee_bind6(struct bpf_sock_addr *ctx)
{
	return bee_net_hook(ctx, BEE_NET_BIND, 6, BEE_AUDIT_HOOK_BIND6);
}

/* ---- global programs: the session's tasks only (bee_guard.bpf.h) ----------- */

#include "bee_guard.bpf.h"

/* every map of runtime/bee_names.h is declared above, under that name */
BEE_MAPS_DECLARED()

/* ---- tests only ------------------------------------------------------------ */

#include "bee_hooks_test.h"

/* The hooks' walks on a path from the test (bee_hooks_test.h). Never in a
 * pack's hooks, so never loaded by bee-load. */
SEC("syscall")
int bee_test_walk(struct bee_test_walk *q)
{
	struct bee_scratch *sc = bee_scratch_get();
	__u32 len = q->len;
	__u64 r;

	if (!sc)
		return 1;
	if (len > BEE_PATH_MAX - 1)
		return 2;
	if (bpf_probe_read_kernel(sc->path, len, q->path) < 0)
		return 3;
	r = bee_walk_fs((struct bee_path_bytes *)sc->path, len, q->sess);
	q->fs_state = BEE_WALK_STATE(r);
	q->fs_perms = BEE_WALK_PERMS(r);
	r = bee_walk_exec((struct bee_path_bytes *)sc->path, len, q->sess);
	q->exec_state = BEE_WALK_STATE(r);
	q->exec_perms = BEE_WALK_PERMS(r);
	return 0;
}

#endif
