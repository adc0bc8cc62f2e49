/* SPDX-License-Identifier: GPL-2.0-only */
/* bee_types.h: the kernel types that bee's BPF programs use, written by hand.
 *
 * BPF programs include this instead of a generated vmlinux.h (never
 * committed) or <linux/types.h> (which needs the host's asm/ headers that
 * clang -target bpf does not search). It holds:
 *
 *   - the fixed-width types (__u8 .. __s64, __be16, __be32, __wsum) that
 *     runtime/ layouts and libbpf's bpf_helper_defs.h are written in;
 *   - the few UAPI constants and context structs the programs name, with
 *     their UAPI values and layout (the verifier rewrites context accesses
 *     by these offsets, so they must be exact);
 *   - the kernel-internal structs the hooks read, cut down to the fields
 *     they read and marked preserve_access_index, so libbpf relocates each
 *     access against the running kernel's BTF (CO-RE).
 *
 * Add a field only when a program reads it; nothing here is a kernel ABI
 * promise beyond the UAPI part.
 */
#ifndef BEE_TYPES_H
#define BEE_TYPES_H

/* ---- fixed-width types (as <asm-generic/int-ll64.h>) ------------------- */

typedef signed char __s8;
typedef unsigned char __u8;
typedef signed short __s16;
typedef unsigned short __u16;
typedef signed int __s32;
typedef unsigned int __u32;
typedef signed long long __s64;
typedef unsigned long long __u64;

typedef __u16 __be16;
typedef __u32 __be32;
typedef __u32 __wsum;

_Static_assert(sizeof(__u8) == 1 && sizeof(__u16) == 2, "bee_types: __u8/__u16");
_Static_assert(sizeof(__u32) == 4 && sizeof(__u64) == 8, "bee_types: __u32/__u64");

/* ---- UAPI constants (values from <linux/bpf.h>) ------------------------ */

enum bpf_map_type {
	BPF_MAP_TYPE_ARRAY = 2,
	BPF_MAP_TYPE_PERCPU_HASH = 5,
	BPF_MAP_TYPE_PERCPU_ARRAY = 6,
	BPF_MAP_TYPE_LPM_TRIE = 11,
	BPF_MAP_TYPE_ARRAY_OF_MAPS = 12,
	BPF_MAP_TYPE_HASH_OF_MAPS = 13,
	BPF_MAP_TYPE_RINGBUF = 27,
};

enum {
	BPF_ANY = 0,
	BPF_NOEXIST = 1,
	BPF_EXIST = 2,
};

enum {
	BPF_F_NO_PREALLOC = 1U << 0,   /* required by BPF_MAP_TYPE_LPM_TRIE */
	BPF_F_RDONLY_PROG = 1U << 7,
};

/* Address families, as bpf_sock_addr.user_family reports them. */
#define BEE_AF_INET 2
#define BEE_AF_INET6 10

/* ---- UAPI context structs (exact layout) ------------------------------- */

#define __bpf_md_ptr(type, name) \
	union {                  \
		type name;       \
		__u64 : 64;      \
	} __attribute__((aligned(8)))

struct bpf_sock;

/* The context of cgroup/connect4|6, sendmsg4|6 and bind4|6 programs. */
struct bpf_sock_addr {
	__u32 user_family;
	__u32 user_ip4;        /* network byte order */
	__u32 user_ip6[4];     /* network byte order */
	__u32 user_port;       /* network byte order, in the low 16 bits */
	__u32 family;
	__u32 type;
	__u32 protocol;
	__u32 msg_src_ip4;
	__u32 msg_src_ip6[4];
	__bpf_md_ptr(struct bpf_sock *, sk);
};

_Static_assert(sizeof(struct bpf_sock_addr) == 72, "bpf_sock_addr size");
_Static_assert(__builtin_offsetof(struct bpf_sock_addr, user_port) == 24, "bpf_sock_addr.user_port");
_Static_assert(__builtin_offsetof(struct bpf_sock_addr, protocol) == 36, "bpf_sock_addr.protocol");

/* The context of XDP programs; the tests run one with a query as packet. */
struct xdp_md {
	__u32 data;
	__u32 data_end;
	__u32 data_meta;
	__u32 ingress_ifindex;
	__u32 rx_queue_index;
	__u32 egress_ifindex;
};

_Static_assert(sizeof(struct xdp_md) == 24, "xdp_md size");

enum xdp_action {
	XDP_ABORTED = 0,
	XDP_DROP,
	XDP_PASS,
	XDP_TX,
	XDP_REDIRECT,
};

/* ---- kernel-internal structs, relocated by CO-RE ----------------------- */

#pragma clang attribute push(__attribute__((preserve_access_index)), apply_to = record)

struct super_block {
	__u32 s_dev;               /* dev_t */
	unsigned long s_flags;     /* SB_* */
};

struct inode {
	__u16 i_mode;              /* umode_t */
	unsigned long i_ino;
	struct super_block *i_sb;
};

struct dentry;
struct vfsmount;

struct path {
	struct vfsmount *mnt;
	struct dentry *dentry;
};

struct file {
	struct path f_path;
	struct inode *f_inode;
	__u32 f_mode;              /* fmode_t: FMODE_READ, FMODE_WRITE, FMODE_EXEC */
	__u32 f_flags;
};

struct linux_binprm {
	struct file *file;
	const char *filename;
};

#pragma clang attribute pop

/* f_mode bits (include/linux/fs.h) */
#define BEE_FMODE_READ 0x1u
#define BEE_FMODE_WRITE 0x2u
#define BEE_FMODE_EXEC 0x20u
/* __FMODE_EXEC in f_flags: do_open_execat opens with it, and 6.1 sets
 * FMODE_EXEC in f_mode only after security_file_open has run */
#define BEE_FFLAGS_EXEC 0x20u

#endif
