/* SPDX-License-Identifier: GPL-2.0-only */
/* net_eval.h: the host evaluator of the network maps.
 *
 * It answers a decision for (direction, family, address, port, protocol)
 * from the bee_net4/bee_net6 entries exactly as the BPF programs do in the
 * kernel: a BPF_MAP_TYPE_LPM_TRIE lookup (the entry with the longest
 * prefixlen whose first prefixlen key bits equal the lookup key's), then
 * bee_net_ports_allow() on its value. An IPv4-mapped IPv6 address
 * (::ffff:a.b.c.d) is looked up in bee_net4. `beec query ... net` and the
 * tests use it; see runtime/bee_net.h for the layout and its meaning.
 *
 * Nothing here allocates or prints; the caller owns the entry arrays.
 */
#ifndef BEE_NET_EVAL_H
#define BEE_NET_EVAL_H

#include "bee_net.h"

#include <stddef.h>
#include <stdint.h>

/* The two maps as arrays of (key, value) pairs, in any order. */
struct net_eval_maps {
	const struct bee_net_key4 *keys4;
	const struct bee_net_value *values4;
	size_t n4;
	const struct bee_net_key6 *keys6;
	const struct bee_net_value *values6;
	size_t n6;
};

struct net_eval_decision {
	int allow;           /* 1 allow, 0 deny */
	int map_family;      /* 4 or 6: the map that was asked (4 for mapped v6) */
	long entry;          /* index of the longest match in that map, -1 if none */
	uint32_t prefixlen;  /* its prefixlen (with BEE_NET_HDR_BITS), 0 if none */
	uint32_t prov;       /* its provenance record, BEE_NET_PROV_NONE if none */
};

/* family is 4 (addr[0..3]) or 6 (addr[0..15]), addresses in network byte
 * order; proto an IP protocol number (any other than tcp/udp is denied).
 * Returns 0 and fills *out, or -EINVAL for a bad direction or family. */
int net_eval_decide(const struct net_eval_maps *m, enum bee_net_dir dir, int family,
		    const uint8_t *addr, uint16_t port, uint8_t proto,
		    struct net_eval_decision *out);

/* The longest-prefix match of one lookup key among n keys of key_size bytes
 * (prefixlen first, then data), with the kernel's semantics. Returns the
 * index of the match or -1. */
long net_eval_lpm_lookup(const void *keys, size_t key_size, size_t n, const void *lookup);

/* Checks that the maps are well formed: headers and prefixlens in range,
 * host bits and reserved fields zero, ranges sorted and disjoint, no two
 * entries with the same key, no bee_net6 entry inside ::ffff:0:0/96.
 * Returns 0, or -EINVAL with a message naming the entry in err. */
int net_eval_maps_check(const struct net_eval_maps *m, char *err, size_t errlen);

#endif
