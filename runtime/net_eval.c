/* SPDX-License-Identifier: GPL-2.0-only */
/* net_eval.c: LPM-trie lookups and the port scan, as the kernel does them. */
#include "net_eval.h"
#include "bee_names.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Bit i (0 = most significant of byte 0) of data. */
static unsigned data_bit(const uint8_t *data, uint32_t i)
{
	return (data[i / 8] >> (7 - i % 8)) & 1u;
}

/* 1 when the first bits of a and b are equal. */
static int data_prefix_equal(const uint8_t *a, const uint8_t *b, uint32_t bits)
{
	uint32_t bytes = bits / 8;
	if (memcmp(a, b, bytes) != 0)
		return 0;
	if (bits % 8 == 0)
		return 1;
	uint8_t mask = (uint8_t)(0xff00u >> (bits % 8));
	return ((a[bytes] ^ b[bytes]) & mask) == 0;
}

long net_eval_lpm_lookup(const void *keys, size_t key_size, size_t n, const void *lookup)
{
	const uint8_t *lk = lookup;
	uint32_t lplen;
	memcpy(&lplen, lk, sizeof(lplen));
	uint32_t max_bits = (uint32_t)(key_size - sizeof(uint32_t)) * 8;
	if (lplen > max_bits)
		return -1;   /* the kernel refuses such a lookup key */

	long best = -1;
	uint32_t best_len = 0;
	for (size_t i = 0; i < n; i++) {
		const uint8_t *k = (const uint8_t *)keys + i * key_size;
		uint32_t plen;
		memcpy(&plen, k, sizeof(plen));
		/* an entry matches when its whole prefix is within the lookup's */
		if (plen > lplen || plen > max_bits)
			continue;
		if (best >= 0 && plen <= best_len)
			continue;
		if (!data_prefix_equal(k + sizeof(uint32_t), lk + sizeof(uint32_t), plen))
			continue;
		best = (long)i;
		best_len = plen;
	}
	return best;
}

int net_eval_decide(const struct net_eval_maps *m, enum bee_net_dir dir, int family,
		    const uint8_t *addr, uint16_t port, uint8_t proto,
		    struct net_eval_decision *out)
{
	/* dir comes from outside: not every int is a direction */
	if ((dir != BEE_NET_CONNECT && dir != BEE_NET_BIND) || (family != 4 && family != 6))
		return -EINVAL;

	uint32_t a6[4];
	if (family == 6) {
		memcpy(a6, addr, sizeof(a6));
		if (bee_net_addr6_is_v4mapped(a6))
			family = 4;   /* the same endpoint as a.b.c.d */
	} else {
		memcpy(&a6[3], addr, sizeof(a6[3]));
	}

	const struct bee_net_value *v = NULL;
	long at;
	uint32_t plen = 0;
	if (family == 4) {
		struct bee_net_key4 k;
		bee_net_key4_init(&k, (uint8_t)dir, proto, a6[3]);
		at = net_eval_lpm_lookup(m->keys4, sizeof(k), m->n4, &k);
		if (at >= 0) {
			v = &m->values4[at];
			plen = m->keys4[at].prefixlen;
		}
	} else {
		struct bee_net_key6 k;
		bee_net_key6_init(&k, (uint8_t)dir, proto, a6);
		at = net_eval_lpm_lookup(m->keys6, sizeof(k), m->n6, &k);
		if (at >= 0) {
			v = &m->values6[at];
			plen = m->keys6[at].prefixlen;
		}
	}

	out->map_family = family;
	out->entry = at;
	out->prefixlen = plen;
	out->prov = v ? v->prov : BEE_NET_PROV_NONE;
	out->allow = v ? bee_net_ports_allow(v, port) : 0;
	return 0;
}

/* ---- check ---------------------------------------------------------------- */

__attribute__((format(printf, 3, 4)))
static int check_fail(char *err, size_t errlen, const char *fmt, ...)
{
	if (err && errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static int value_check(const struct bee_net_value *v, const char *map, size_t i, char *err,
		       size_t errlen)
{
	if (v->nranges > BEE_NET_MAX_RANGES)
		return check_fail(err, errlen, "%s entry %zu: %u port ranges, more than %u", map, i,
				  v->nranges, BEE_NET_MAX_RANGES);
	if (v->flags != 0)
		return check_fail(err, errlen, "%s entry %zu: reserved flags 0x%x set", map, i,
				  v->flags);
	for (unsigned r = 0; r < v->nranges; r++) {
		if (v->ranges[r].lo > v->ranges[r].hi)
			return check_fail(err, errlen, "%s entry %zu: port range %u is reversed",
					  map, i, r);
		if (r > 0 && (uint32_t)v->ranges[r - 1].hi + 1 >= v->ranges[r].lo)
			return check_fail(err, errlen,
					  "%s entry %zu: port range %u is not sorted and apart from the one before",
					  map, i, r);
	}
	for (unsigned r = v->nranges; r < BEE_NET_MAX_RANGES; r++)
		if (v->ranges[r].lo || v->ranges[r].hi)
			return check_fail(err, errlen, "%s entry %zu: unused port range %u is not zero",
					  map, i, r);
	return 0;
}

/* Checks one key's header, prefixlen and host bits (addr of abits bits). */
static int key_check(uint32_t plen, uint8_t dir, uint8_t proto, uint16_t zero,
		     const uint8_t *addr, unsigned abits, const char *map, size_t i, char *err,
		     size_t errlen)
{
	if (plen < BEE_NET_HDR_BITS || plen > BEE_NET_HDR_BITS + abits)
		return check_fail(err, errlen, "%s entry %zu: prefixlen %u outside %u..%u", map, i,
				  plen, BEE_NET_HDR_BITS, BEE_NET_HDR_BITS + abits);
	if (dir != BEE_NET_CONNECT && dir != BEE_NET_BIND)
		return check_fail(err, errlen, "%s entry %zu: unknown direction %u", map, i, dir);
	if (proto != BEE_NET_PROTO_TCP && proto != BEE_NET_PROTO_UDP)
		return check_fail(err, errlen, "%s entry %zu: unknown protocol %u", map, i, proto);
	if (zero != 0)
		return check_fail(err, errlen, "%s entry %zu: reserved key bits set", map, i);
	for (unsigned b = plen - BEE_NET_HDR_BITS; b < abits; b++)
		if (data_bit(addr, b))
			return check_fail(err, errlen, "%s entry %zu: address bit %u set beyond /%u",
					  map, i, b, plen - BEE_NET_HDR_BITS);
	return 0;
}

int net_eval_maps_check(const struct net_eval_maps *m, char *err, size_t errlen)
{
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	int rc;

	for (size_t i = 0; i < m->n4; i++) {
		const struct bee_net_key4 *k = &m->keys4[i];
		rc = key_check(k->prefixlen, k->dir, k->proto, k->zero, k->addr, 32, bee_map_name(BEE_MAP_NET4), i,
			       err, errlen);
		if (rc < 0)
			return rc;
		rc = value_check(&m->values4[i], bee_map_name(BEE_MAP_NET4), i, err, errlen);
		if (rc < 0)
			return rc;
		for (size_t j = 0; j < i; j++)
			if (memcmp(&m->keys4[j], k, sizeof(*k)) == 0)
				return check_fail(err, errlen, "%s entry %zu: same key as entry %zu",
						  bee_map_name(BEE_MAP_NET4), i, j);
	}
	for (size_t i = 0; i < m->n6; i++) {
		const struct bee_net_key6 *k = &m->keys6[i];
		rc = key_check(k->prefixlen, k->dir, k->proto, k->zero, k->addr, 128, bee_map_name(BEE_MAP_NET6), i,
			       err, errlen);
		if (rc < 0)
			return rc;
		rc = value_check(&m->values6[i], bee_map_name(BEE_MAP_NET6), i, err, errlen);
		if (rc < 0)
			return rc;
		/* lookups of mapped addresses go to bee_net4: such an entry is dead */
		if (k->prefixlen >= BEE_NET_HDR_BITS + 96 && memcmp(k->addr, mapped, 12) == 0)
			return check_fail(err, errlen,
					  "%s entry %zu: inside ::ffff:0:0/96, which %s decides",
					  bee_map_name(BEE_MAP_NET6), i, bee_map_name(BEE_MAP_NET4));
		for (size_t j = 0; j < i; j++)
			if (memcmp(&m->keys6[j], k, sizeof(*k)) == 0)
				return check_fail(err, errlen, "%s entry %zu: same key as entry %zu",
						  bee_map_name(BEE_MAP_NET6), i, j);
	}
	return 0;
}
