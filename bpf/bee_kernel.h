/* SPDX-License-Identifier: GPL-2.0-only */
/* bee_kernel.h: the kernel types and constants that the hook programs
 * (bee_hooks.bpf.h) name beyond bee_types.h, written by hand.
 *
 * The kernel-internal structs are cut down to the fields the hooks read
 * and marked preserve_access_index, so libbpf relocates every access
 * against the running kernel's BTF (CO-RE); nothing here is a layout
 * promise except struct bpf_sock, which is UAPI (<linux/bpf.h>) and must
 * be exact because the verifier rewrites context accesses by its offsets.
 * Include after bee_types.h.
 */
#ifndef BEE_KERNEL_H
#define BEE_KERNEL_H

/* ---- UAPI: the context of cgroup/sock_create ---------------------------- */

struct bpf_sock {
	__u32 bound_dev_if;
	__u32 family;
	__u32 type;
	__u32 protocol;
	__u32 mark;
	__u32 priority;
	__u32 src_ip4;
	__u32 src_ip6[4];
	__u32 src_port;
	__be16 dst_port;
	__u16 : 16;
	__u32 dst_ip4;
	__u32 dst_ip6[4];
	__u32 state;
	__s32 rx_queue_mapping;
};

_Static_assert(sizeof(struct bpf_sock) == 80, "bpf_sock size");
_Static_assert(__builtin_offsetof(struct bpf_sock, family) == 4, "bpf_sock.family");
_Static_assert(__builtin_offsetof(struct bpf_sock, type) == 8, "bpf_sock.type");
_Static_assert(__builtin_offsetof(struct bpf_sock, protocol) == 12, "bpf_sock.protocol");

/* Map types beyond bee_types.h's enum (values of enum bpf_map_type). */
#define BEE_MAP_TYPE_HASH 1
#define BEE_MAP_TYPE_SK_STORAGE 24
#define BEE_MAP_TYPE_INODE_STORAGE 28
#define BEE_MAP_TYPE_TASK_STORAGE 29

/* bpf_{inode,task,sk}_storage_get flags: create a missing value */
#define BEE_LOCAL_STORAGE_GET_F_CREATE 1

/* ---- kernel-internal structs, relocated by CO-RE ----------------------- */

#pragma clang attribute push(__attribute__((preserve_access_index)), apply_to = record)

struct vm_area_struct {
	unsigned long vm_flags;
	struct file *vm_file;
};

/* A socket's cgroup v2, set to its creator's at sk_alloc (cgroup_sk_alloc;
 * 5.15+ with CONFIG_SOCK_CGROUP_DATA: the cgroup pointer is a member of its
 * own, the v1 classid and prioidx follow it). */
struct sock_cgroup_data {
	struct cgroup *cgroup;
};

struct in6_addr {
	__u32 s6_addr32[4];
};

/* struct sock_common's fields are in anonymous unions and structs in the
 * kernel; CO-RE finds them by name through those. */
struct sock_common {
	__u32 skc_rcv_saddr;       /* __be32: the bound IPv4 address */
	__u16 skc_num;             /* the local port, host order; 0 while unbound */
	unsigned short skc_family;
	unsigned char skc_state;   /* TCP_* */
	struct in6_addr skc_v6_rcv_saddr;
};

struct sock {
	struct sock_common __sk_common;
	__u16 sk_protocol;
	struct sock_cgroup_data sk_cgrp_data;
};

struct socket {
	short type;
	struct sock *sk;
};

/* The kernel's struct sockaddr: a family, then at least 14 bytes. */
struct sockaddr {
	unsigned short sa_family;
	char sa_data[14];
};

struct sockaddr_un {
	unsigned short sun_family;
	char sun_path[108];
};

/* A bound AF_UNIX name: len bytes of name (family included). */
struct unix_address {
	int len;
	struct sockaddr_un name[];
};

/* An AF_UNIX socket: struct sock first, then its bound address (NULL
 * while unnamed: a socketpair end, or a socket that never bound). */
struct unix_sock {
	struct unix_address *addr;
};

/* A task's cgroup v2 id, as bpf_get_current_cgroup_id reads current's:
 * task->cgroups->dfl_cgrp->kn->id (6.1: kernfs_node.id is a u64). */
struct kernfs_node {
	__u64 id;
};

/* A cgroup's own css links it to its parent cgroup's (css.parent is the
 * parent's self): the same on 6.1 and later, unlike the ancestor arrays
 * (6.1 ancestor_ids[], 6.2+ ancestors[]). */
struct cgroup_subsys_state {
	struct cgroup_subsys_state *parent;
};

struct cgroup {
	struct cgroup_subsys_state self;
	struct kernfs_node *kn;
	int level;                 /* depth below the root, which is 0 */
};

struct css_set {
	struct cgroup *dfl_cgrp;
};

/* include/linux/pid.h: a task's pid, numbered in each pid namespace from
 * the root's (0) to its own (level) */
struct upid {
	int nr;
	void *ns;
};

struct pid {
	unsigned int level;
	struct upid numbers[1];
};

struct task_struct {
	int tgid;                  /* pid_t */
	struct css_set *cgroups;   /* __rcu */
	struct pid *thread_pid;
};

/* ---- the path walk of the global programs (bee_guard.bpf.h) ---------- */

struct qstr {
	__u32 len;                 /* in the kernel's union with hash */
	const unsigned char *name;
};

struct dentry {
	struct dentry *d_parent;
	struct qstr d_name;
	struct inode *d_inode;
	struct super_block *d_sb;
};

struct vfsmount {
	struct dentry *mnt_root;
	struct super_block *mnt_sb;
};

/* fs/mount.h: a vfsmount lives inside its struct mount */
struct mount {
	struct mount *mnt_parent;
	struct dentry *mnt_mountpoint;
	struct vfsmount mnt;
};

/* what notify_change is asked to change (include/linux/fs.h) */
struct iattr {
	unsigned int ia_valid;
};

#pragma clang attribute pop

struct cred;
struct kernel_siginfo;

/* iattr.ia_valid bits */
#define BEE_ATTR_MODE 0x1u
#define BEE_ATTR_UID 0x2u
#define BEE_ATTR_GID 0x4u
#define BEE_ATTR_SIZE 0x8u
#define BEE_ATTR_ATIME 0x10u
#define BEE_ATTR_MTIME 0x20u

/* super_block.s_flags: mounted by the kernel for itself (pipes, sockets,
 * anonymous inodes, memfd's shmem): no path a policy could name */
#define BEE_SB_KERNMOUNT (1u << 22)

/* ---- constants (include/linux/socket.h, net.h, mman.h, fcntl.h, errno) --- */

#define BEE_AF_UNSPEC 0
#define BEE_AF_UNIX 1
#define BEE_AF_NETLINK 16
#define BEE_AF_PACKET 17

#define BEE_SOCK_STREAM 1
#define BEE_SOCK_DGRAM 2
#define BEE_SOCK_RAW 3

/* sock_common.skc_state (include/net/tcp_states.h) */
#define BEE_TCP_CLOSE 7
#define BEE_TCP_LISTEN 10

#define BEE_PROT_EXEC 0x4ul
#define BEE_O_TRUNC 01000u          /* asm-generic: x86 and arm64 */

#define BEE_EPERM 1
#define BEE_EACCES 13

/* ptrace_access_check's mode bits (include/linux/ptrace.h) */
#define BEE_PTRACE_MODE_READ 0x01u
#define BEE_PTRACE_MODE_ATTACH 0x02u
#define BEE_PTRACE_MODE_NOAUDIT 0x04u

/* Bytes of sockaddr_un.sun_path. */
#define BEE_UNIX_PATH_MAX 108

#endif
