/* SPDX-License-Identifier: GPL-2.0-only */
/* bee_net.h: the network maps shared by the compiler, the loader and the BPF
 * programs, and the port-range scan that both the host evaluator and BPF run.
 *
 * This header is compiled by the host compiler and by clang -target bpf, so
 * it uses only the kernel's fixed-width types and no libc. A BPF includer
 * provides __u8/__u16/__u32 (from <linux/types.h> or the project's CO-RE
 * type header) before including it.
 *
 * Two BPF_MAP_TYPE_LPM_TRIE maps, one per address family:
 *
 *   bee_net4: key struct bee_net_key4 (12 bytes), value struct bee_net_value
 *   bee_net6: key struct bee_net_key6 (24 bytes), value struct bee_net_value
 *
 * The trie data (the bytes after prefixlen) is one header word, then the
 * address in network byte order:
 *
 *   [dir 8][proto 8][zero 16][address 32 or 128]
 *
 * and an entry's prefixlen is BEE_NET_HDR_BITS (32) + the address prefix.
 * Direction and protocol are whole bytes at the front, so one trie holds all
 * four (direction, protocol) slices and a lookup can never cross slices. The
 * 16 zero bits keep the address word-aligned, so a BPF program copies
 * bpf_sock_addr.user_ip4/user_ip6[] into the key with plain 32-bit stores;
 * they are zero in every entry and every lookup, so they always match.
 *
 * Meaning of an entry: for an address whose longest matching entry is E,
 * the (direction, protocol, port) is allowed iff the port lies in one of
 * E's ranges. No matching entry means deny. The compiler (compiler/netset.c)
 * computes each entry's ranges from every rule whose prefix contains the
 * entry's prefix (grants of that direction and protocol, minus every [net]
 * deny of that protocol: a deny beats both connect and bind), so the
 * longest match alone decides.
 *
 * Address families. An IPv4 address a.b.c.d and the IPv4-mapped IPv6
 * address ::ffff:a.b.c.d are the same endpoint (a v6 socket may connect to
 * either): every lookup of a mapped address goes to bee_net4 with the low
 * 32 bits. An IPv6 rule that overlaps ::ffff:0:0/96 is projected by the
 * compiler into bee_net4 (as 0.0.0.0/0 when it contains the whole /96), and
 * bee_net6 holds no entry inside ::ffff:0:0/96.
 *
 * Ports in a value are in host byte order, sorted, disjoint and not
 * adjacent; a BPF program converts bpf_sock_addr.user_port with bpf_ntohs.
 */
#ifndef BEE_NET_H
#define BEE_NET_H

#ifndef __bpf__
#include <linux/types.h>
#endif

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

/* Directions: which hook asks. */
enum bee_net_dir {
	BEE_NET_CONNECT = 0,   /* connect(2), and sendmsg(2) destinations for udp */
	BEE_NET_BIND = 1,      /* bind(2) */
};
#define BEE_NET_DIR_COUNT 2

/* Protocols are IP protocol numbers, as in bpf_sock_addr.protocol. */
#define BEE_NET_PROTO_TCP 6
#define BEE_NET_PROTO_UDP 17

/* Bits of the key header (dir, proto, zero) that every prefixlen includes. */
#define BEE_NET_HDR_BITS 32
#define BEE_NET4_MAX_PREFIXLEN (BEE_NET_HDR_BITS + 32)
#define BEE_NET6_MAX_PREFIXLEN (BEE_NET_HDR_BITS + 128)

/* Port ranges a value can hold; the compiler refuses an entry needing more
 * (naming the rules responsible) rather than truncate it. */
#define BEE_NET_MAX_RANGES 16

/* Provenance index of an entry that no record describes (never emitted). */
#define BEE_NET_PROV_NONE 0xffffffffu
/* A decision's provenance (never an entry's): a DNS query sent to the
 * session's stub (bpf/bee_hooks.bpf.h, bee_dns_redirect). */
#define BEE_NET_PROV_DNS 0xfffffffeu
/* An entry the session's DNS stub made for a host name: the low bits are
 * the stub's index of the admission (loader/dns.c), which names the host
 * in the audit record. */
#define BEE_NET_PROV_HOST 0x80000000u

struct bee_net_key4 {
	__u32 prefixlen;         /* BEE_NET_HDR_BITS + address prefix (0..32) */
	__u8 dir;                /* enum bee_net_dir */
	__u8 proto;              /* BEE_NET_PROTO_* */
	__u16 zero;              /* always 0 */
	union {
		__u8 addr[4];    /* network byte order, host bits zero */
		__u32 addr_be;   /* as bpf_sock_addr.user_ip4 */
	};
};

struct bee_net_key6 {
	__u32 prefixlen;         /* BEE_NET_HDR_BITS + address prefix (0..128) */
	__u8 dir;
	__u8 proto;
	__u16 zero;
	union {
		__u8 addr[16];
		__u32 addr_be32[4];  /* as bpf_sock_addr.user_ip6[] */
	};
};

struct bee_net_range {
	__u16 lo, hi;            /* inclusive, host byte order */
};

struct bee_net_value {
	__u16 nranges;           /* 0..BEE_NET_MAX_RANGES; 0 = every port denied */
	__u16 flags;             /* reserved, 0 */
	__u32 prov;              /* provenance record: the rules that decided it */
	struct bee_net_range ranges[BEE_NET_MAX_RANGES];
};

_Static_assert(sizeof(struct bee_net_key4) == 12, "bee_net_key4 size");
_Static_assert(__builtin_offsetof(struct bee_net_key4, dir) == 4, "bee_net_key4 dir");
_Static_assert(__builtin_offsetof(struct bee_net_key4, proto) == 5, "bee_net_key4 proto");
_Static_assert(__builtin_offsetof(struct bee_net_key4, addr) == 8, "bee_net_key4 addr");
_Static_assert(sizeof(struct bee_net_key6) == 24, "bee_net_key6 size");
_Static_assert(__builtin_offsetof(struct bee_net_key6, dir) == 4, "bee_net_key6 dir");
_Static_assert(__builtin_offsetof(struct bee_net_key6, proto) == 5, "bee_net_key6 proto");
_Static_assert(__builtin_offsetof(struct bee_net_key6, addr) == 8, "bee_net_key6 addr");
_Static_assert(sizeof(struct bee_net_range) == 4, "bee_net_range size");
_Static_assert(sizeof(struct bee_net_value) == 8 + 4 * BEE_NET_MAX_RANGES, "bee_net_value size");
_Static_assert(__builtin_offsetof(struct bee_net_value, prov) == 4, "bee_net_value prov");
_Static_assert(__builtin_offsetof(struct bee_net_value, ranges) == 8, "bee_net_value ranges");
/* the trie's data size is the key minus prefixlen; max_prefixlen fills it */
_Static_assert((sizeof(struct bee_net_key4) - 4) * 8 == BEE_NET4_MAX_PREFIXLEN, "key4 bits");
_Static_assert((sizeof(struct bee_net_key6) - 4) * 8 == BEE_NET6_MAX_PREFIXLEN, "key6 bits");

/* 1 when port lies in one of v's ranges. Ranges are sorted, so the scan
 * stops at the first range that starts above the port; the loop bound is a
 * constant for the verifier. */
static __always_inline int bee_net_ports_allow(const struct bee_net_value *v, __u16 port)
{
	__u32 n = v->nranges;
	for (__u32 i = 0; i < BEE_NET_MAX_RANGES; i++) {
		if (i >= n || port < v->ranges[i].lo)
			return 0;
		if (port <= v->ranges[i].hi)
			return 1;
	}
	return 0;
}

/* 1 when the IPv6 address (as four network-order words) is ::ffff:a.b.c.d;
 * such an address is looked up in bee_net4 with its last word. */
static __always_inline int bee_net_addr6_is_v4mapped(const __u32 a[4])
{
	/* 0x0000ffff in network byte order, whatever the host order */
	const union { __u8 b[4]; __u32 w; } ffff = { .b = { 0, 0, 0xff, 0xff } };
	return a[0] == 0 && a[1] == 0 && a[2] == ffff.w;
}

/* A lookup key for one address (full prefixlen). */
static __always_inline void bee_net_key4_init(struct bee_net_key4 *k, __u8 dir, __u8 proto,
					      __u32 addr_be)
{
	k->prefixlen = BEE_NET4_MAX_PREFIXLEN;
	k->dir = dir;
	k->proto = proto;
	k->zero = 0;
	k->addr_be = addr_be;
}

static __always_inline void bee_net_key6_init(struct bee_net_key6 *k, __u8 dir, __u8 proto,
					      const __u32 addr_be32[4])
{
	k->prefixlen = BEE_NET6_MAX_PREFIXLEN;
	k->dir = dir;
	k->proto = proto;
	k->zero = 0;
	k->addr_be32[0] = addr_be32[0];
	k->addr_be32[1] = addr_be32[1];
	k->addr_be32[2] = addr_be32[2];
	k->addr_be32[3] = addr_be32[3];
}

#endif
