/* SPDX-License-Identifier: GPL-2.0-only */
/* bee_session.h: the maps that the loader fills at session start (and
 * changes on revoke), shared with the BPF programs.
 *
 * One loaded object serves every session of a pack (loader/cache.c); the
 * maps below are per session, keyed by the session's cgroup id (a hash of
 * maps whose inner map is what is described here, or a hash of these
 * values): one session's entry is what the manifest describes. The image
 * maps hold the pack's images at BEE_SESSION_SHARED for every session that
 * has no copy of its own.
 *
 * Compiled by the host compiler and by clang -target bpf: fixed-width
 * types only.
 *
 *   bee_pins   BPF_MAP_TYPE_HASH, struct bee_pin_key -> struct bee_pin_value,
 *              max_entries = the policy's pinned exec rules (at least 1).
 *              For each pinned [exec] rule ("!/path") the loader stats the
 *              rule's literal path at session start and inserts the file's
 *              (dev, ino). A pinned rule whose file is missing gets no entry,
 *              so it grants nothing (fail closed).
 *   bee_state  one struct bee_state per session. The loader
 *              increments gen after every change of bee_exec or bee_pins
 *              (a revoke): the programs cache "this inode may be mapped
 *              executable" per inode, tagged with gen, and ignore a cached
 *              answer of another generation. flags holds BEE_STATE_LEARN
 *              for a learning session: the policy's hooks record what they
 *              would deny and allow it (the global hooks of bee_guard.bpf.h
 *              keep denying). ring is the index of its ring buffer in
 *              bee_audit (the load's pool: loader/cache.c).
 *
 * The global BPF LSM programs (bpf/bee_guard.bpf.h, bpf-lsm backend only):
 *
 *   bee_self_cg  BPF_MAP_TYPE_CGROUP_ARRAY of one entry: the pack's
 *              cgroup's fd, whose children are the pack's sessions. A program
 *              acts only when bpf_current_task_under_cgroup says current is
 *              below it; an empty entry acts for nobody. task_kill compares
 *              a target's ancestor at the sessions' depth with current's.
 *   bee_sb     BPF_MAP_TYPE_HASH, superblock dev_t -> struct bee_sb_mount:
 *              where each file system is mounted, from bee-load's
 *              /proc/self/mountinfo when the pack is loaded and again at each
 *              session's start, for the hooks that get
 *              a dentry but no mount (inode_setattr, inode_setxattr,
 *              inode_removexattr). Only a superblock with exactly one mount
 *              of its root ("/") gets an entry; a dentry of another one has
 *              no path and is refused (fail closed).
 */
#ifndef BEE_SESSION_H
#define BEE_SESSION_H

/* The key of the pack's own images in the per-session image maps: the
 * entry every session decides with until a revoke gives it one of its own
 * (no cgroup has id 0). */
#define BEE_SESSION_SHARED 0

#ifndef __bpf__
#include <linux/types.h>
#endif

/* A file as the kernel names it: the superblock's dev_t and the inode
 * number of file->f_inode. dev is the KERNEL encoding (MKDEV: major << 20
 * | minor), not stat(2)'s st_dev: the loader converts with
 * bee_pin_dev(major(st.st_dev), minor(st.st_dev)). On btrfs subvolumes and
 * overlayfs, stat(2) reports another device than the file's superblock:
 * such a pin never matches (fail closed); pin files on plain file
 * systems. */
struct bee_pin_key {
	__u64 ino;
	__u32 dev;
	__u32 zero;              /* always 0 */
};

struct bee_pin_value {
	__u32 rule;              /* the pinned rule's index in the policy */
	__u32 reserved;
};

/* bee_state.flags */
#define BEE_STATE_LEARN 1u       /* complain mode (bee-load run --learn): a denial is
				  * recorded, whatever [audit] says, and then allowed */

/* A session's state. The DNS stub's address is set by the loader when the
 * session's policy names hosts (loader/dns.c): the connect and sendmsg
 * programs send every query of the session to port 53 there. */
struct bee_state {
	__u32 gen;               /* generation of bee_exec and bee_pins */
	__u32 dns_addr4;         /* the stub's IPv4 address, network order */
	__u16 dns_port4;         /* its port there, network order; 0: no stub */
	__u16 dns_port6;         /* its port on [::1], network order; 0: none */
	__u32 flags;             /* BEE_STATE_*; revoke keeps them */
	__u32 ring;              /* its ring buffer: the index in bee_audit */
};

/* Per socket (sk storage): where a query redirected to the stub was sent,
 * so that recvmsg gives the answer that source back (a resolver drops an
 * answer from an address it did not ask). */
struct bee_dns_orig {
	__u32 addr[4];           /* network order; IPv4 in addr[0] */
	__u16 port;              /* network order */
	__u8 family;             /* 4 or 6 */
	__u8 reserved;
};

#define BEE_DNS_PORT 53

/* The mount point of a superblock's root; a path's first bytes. */
#define BEE_SB_PATH_MAX 256
#define BEE_SB_MAX 256           /* entries of bee_sb; more mounts are left out */

struct bee_sb_mount {
	__u32 len;               /* bytes of path, no NUL; 1 for "/" */
	__u32 reserved;
	__u8 path[BEE_SB_PATH_MAX];
};

_Static_assert(sizeof(struct bee_sb_mount) == 8 + BEE_SB_PATH_MAX, "bee_sb_mount size");
_Static_assert(sizeof(struct bee_pin_key) == 16, "bee_pin_key size");
_Static_assert(__builtin_offsetof(struct bee_pin_key, dev) == 8, "bee_pin_key.dev");
_Static_assert(sizeof(struct bee_pin_value) == 8, "bee_pin_value size");
_Static_assert(sizeof(struct bee_state) == 20, "bee_state size");
_Static_assert(__builtin_offsetof(struct bee_state, dns_port4) == 8, "bee_state.dns_port4");
_Static_assert(sizeof(struct bee_dns_orig) == 20, "bee_dns_orig size");

/* The kernel's dev_t of (major, minor), as i_sb->s_dev holds it. */
static inline __u32 bee_pin_dev(__u32 major, __u32 minor)
{
	return (major << 20) | (minor & 0xfffffu);
}

#endif
