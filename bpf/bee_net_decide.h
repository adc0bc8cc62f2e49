/* SPDX-License-Identifier: GPL-2.0-only */
/* bee_net_decide.h: the network decision as a BPF program makes it.
 *
 * The longest match in the family's LPM trie (runtime/bee_net.h), then the
 * port scan of its value; an IPv4-mapped IPv6 address asks bee_net4 with
 * its low word. runtime/net_eval.c is the host's copy of this and the tests
 * hold the two equal. The caller includes bee_types.h, bpf_helpers.h and
 * bee_net.h first.
 */
#ifndef BEE_NET_DECIDE_H
#define BEE_NET_DECIDE_H

struct bee_net_answer {
	__u32 allow;        /* 1 allow, 0 deny */
	__u32 map_family;   /* 4 or 6: the map asked */
	__u32 prov;         /* the match's provenance record, BEE_NET_PROV_NONE if none */
};

/* family is 4 (address in addr_be32[0]) or 6; port in host byte order.
 * net4 and net6 are the two LPM trie maps. */
static __always_inline void bee_net_decide(void *net4, void *net6, __u8 dir, __u8 proto,
					   __u32 family, const __u32 addr_be32[4], __u16 port,
					   struct bee_net_answer *a)
{
	const struct bee_net_value *v;

	if (family == 6 && !bee_net_addr6_is_v4mapped(addr_be32)) {
		struct bee_net_key6 k6;
		bee_net_key6_init(&k6, dir, proto, addr_be32);
		v = bpf_map_lookup_elem(net6, &k6);
		a->map_family = 6;
	} else {
		struct bee_net_key4 k4;
		/* a mapped address is the IPv4 endpoint of its low word */
		bee_net_key4_init(&k4, dir, proto, family == 6 ? addr_be32[3] : addr_be32[0]);
		v = bpf_map_lookup_elem(net4, &k4);
		a->map_family = 4;
	}
	a->prov = v ? v->prov : BEE_NET_PROV_NONE;
	a->allow = v ? (__u32)bee_net_ports_allow(v, port) : 0;
}

#endif
