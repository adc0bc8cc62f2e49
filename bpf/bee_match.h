/* SPDX-License-Identifier: GPL-2.0-only */
/* bee_match.h: the queries of the matcher test programs (bpf/match.bpf.c).
 *
 * These programs are never attached: a test runs them through
 * BPF_PROG_TEST_RUN with one of these structs as the syscall program's
 * context or as the XDP program's packet, and the kernel copies it back
 * with the outputs filled in. Shared by the BPF side and
 * runtime/tests/test_bpf_match.c, so fixed-width types only.
 */
#ifndef BEE_BPF_MATCH_H
#define BEE_BPF_MATCH_H

#ifndef __bpf__
#include <linux/types.h>
#endif

#include "bee_dfa.h"

/* One path against the automaton in map bee_dfa. */
struct bee_match_path_ctx {
	__u32 len;                 /* in: path bytes; > BEE_PATH_MAX - 1 is too long */
	__u32 state;               /* out: the state reached */
	__u32 perms;               /* out: its permission bits */
	__u32 too_long;            /* out: 1 when len > BEE_PATH_MAX - 1 */
	__u64 walk_ns;             /* out: bpf_ktime_get_ns() around the match */
	__u8 path[BEE_PATH_MAX];   /* in: path[0..min(len, BEE_PATH_MAX)) */
};

_Static_assert(sizeof(struct bee_match_path_ctx) == 24 + BEE_PATH_MAX, "bee_match_path_ctx size");
_Static_assert(__builtin_offsetof(struct bee_match_path_ctx, path) == 24, "bee_match_path_ctx.path");

/* One endpoint against maps bee_net4/bee_net6 (the XDP test packet). */
struct bee_match_net_ctx {
	__u32 family;              /* in: 4 or 6 */
	__u32 dir;                 /* in: enum bee_net_dir */
	__u32 proto;               /* in: IP protocol number */
	__u32 port_be;             /* in: network byte order, low 16 bits (as user_port) */
	__u32 addr_be32[4];        /* in: network order; IPv4 in addr_be32[0] */
	__u32 allow;               /* out: 1 allow, 0 deny */
	__u32 map_family;          /* out: 4 or 6, the map asked; 0 for a bad input */
	__u32 prov;                /* out: provenance of the match, BEE_NET_PROV_NONE if none */
	__u32 reserved;
};

_Static_assert(sizeof(struct bee_match_net_ctx) == 48, "bee_match_net_ctx size");

#endif
