/* SPDX-License-Identifier: GPL-2.0-only */
/* The host evaluator of the network maps: the kernel's LPM-trie semantics,
 * the port scan shared with BPF, the IPv4-mapped lookup, and the checks a
 * loader runs on map images. Entries are written by hand here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "net_eval.h"

static struct bee_net_key4 key4(uint8_t dir, uint8_t proto, const char *addr, unsigned prefix)
{
	struct bee_net_key4 k;
	memset(&k, 0, sizeof(k));
	k.prefixlen = BEE_NET_HDR_BITS + prefix;
	k.dir = dir;
	k.proto = proto;
	assert_int_equal(inet_pton(AF_INET, addr, k.addr), 1);
	return k;
}

static struct bee_net_key6 key6(uint8_t dir, uint8_t proto, const char *addr, unsigned prefix)
{
	struct bee_net_key6 k;
	memset(&k, 0, sizeof(k));
	k.prefixlen = BEE_NET_HDR_BITS + prefix;
	k.dir = dir;
	k.proto = proto;
	assert_int_equal(inet_pton(AF_INET6, addr, k.addr), 1);
	return k;
}

/* A value from "lo-hi" pairs; lo == hi for one port. */
static struct bee_net_value value(uint32_t prov, unsigned n, const uint16_t *lohi)
{
	struct bee_net_value v;
	memset(&v, 0, sizeof(v));
	v.prov = prov;
	v.nranges = (uint16_t)n;
	for (unsigned i = 0; i < n; i++)
		v.ranges[i] = (struct bee_net_range){ lohi[2 * i], lohi[2 * i + 1] };
	return v;
}

struct maps {
	struct bee_net_key4 k4[8];
	struct bee_net_value v4[8];
	struct bee_net_key6 k6[8];
	struct bee_net_value v6[8];
	struct net_eval_maps m;
};

/* bee_net4: 10/8 tcp connect 443; 10.1/16 none (a deny's hole), given
 * AFTER a longer one to show order does not matter; 10.1.2/24 80,443;
 * 0/0 udp connect 53; 127.0.0.1 bind 0.
 * bee_net6: ::/0 connect 443; 2001:db8::/32 connect none. */
static void maps_init(struct maps *s)
{
	static const uint16_t p443[] = { 443, 443 }, p53[] = { 53, 53 }, p0[] = { 0, 0 },
			      p80_443[] = { 80, 80, 443, 443 };
	memset(s, 0, sizeof(*s));
	s->k4[0] = key4(BEE_NET_CONNECT, BEE_NET_PROTO_TCP, "10.1.2.0", 24);
	s->v4[0] = value(2, 2, p80_443);
	s->k4[1] = key4(BEE_NET_CONNECT, BEE_NET_PROTO_TCP, "10.0.0.0", 8);
	s->v4[1] = value(0, 1, p443);
	s->k4[2] = key4(BEE_NET_CONNECT, BEE_NET_PROTO_TCP, "10.1.0.0", 16);
	s->v4[2] = value(1, 0, NULL);
	s->k4[3] = key4(BEE_NET_CONNECT, BEE_NET_PROTO_UDP, "0.0.0.0", 0);
	s->v4[3] = value(3, 1, p53);
	s->k4[4] = key4(BEE_NET_BIND, BEE_NET_PROTO_TCP, "127.0.0.1", 32);
	s->v4[4] = value(4, 1, p0);
	s->k6[0] = key6(BEE_NET_CONNECT, BEE_NET_PROTO_TCP, "::", 0);
	s->v6[0] = value(5, 1, p443);
	s->k6[1] = key6(BEE_NET_CONNECT, BEE_NET_PROTO_TCP, "2001:db8::", 32);
	s->v6[1] = value(6, 0, NULL);
	s->m = (struct net_eval_maps){ s->k4, s->v4, 5, s->k6, s->v6, 2 };
}

struct decide_row {
	const char *dir, *addr;
	uint16_t port;
	uint8_t proto;
	int allow;
	uint32_t prov;       /* BEE_NET_PROV_NONE when no entry matches */
	int map_family;
};

static const struct decide_row decide_rows[] = {
	{ "connect", "10.9.9.9", 443, 6, 1, 0, 4 },
	{ "connect", "10.9.9.9", 80, 6, 0, 0, 4 },
	{ "connect", "10.1.9.9", 443, 6, 0, 1, 4 },
	{ "connect", "10.1.2.255", 80, 6, 1, 2, 4 },
	{ "connect", "10.1.2.255", 443, 6, 1, 2, 4 },
	{ "connect", "10.1.2.255", 442, 6, 0, 2, 4 },
	{ "connect", "11.0.0.0", 443, 6, 0, BEE_NET_PROV_NONE, 4 },
	{ "connect", "11.0.0.0", 53, 17, 1, 3, 4 },
	{ "connect", "11.0.0.0", 53, 1, 0, BEE_NET_PROV_NONE, 4 },   /* icmp */
	{ "bind", "10.9.9.9", 443, 6, 0, BEE_NET_PROV_NONE, 4 },
	{ "bind", "127.0.0.1", 0, 6, 1, 4, 4 },
	{ "bind", "127.0.0.1", 1, 6, 0, 4, 4 },
	{ "connect", "::ffff:10.9.9.9", 443, 6, 1, 0, 4 },
	{ "connect", "::ffff:10.1.2.3", 80, 6, 1, 2, 4 },
	{ "connect", "::ffff:11.0.0.0", 443, 6, 0, BEE_NET_PROV_NONE, 4 },
	{ "connect", "::10.9.9.9", 443, 6, 1, 5, 6 },          /* not mapped */
	{ "connect", "2001:db8::1", 443, 6, 0, 6, 6 },
	{ "connect", "2001:db9::1", 443, 6, 1, 5, 6 },
	{ "connect", "2001:db9::1", 444, 6, 0, 5, 6 },
	{ "bind", "::1", 443, 6, 0, BEE_NET_PROV_NONE, 6 },
};

static void test_decide(void **state)
{
	(void)state;
	struct maps s;
	maps_init(&s);
	char err[128];
	assert_int_equal(net_eval_maps_check(&s.m, err, sizeof(err)), 0);
	for (size_t i = 0; i < sizeof(decide_rows) / sizeof(decide_rows[0]); i++) {
		const struct decide_row *r = &decide_rows[i];
		uint8_t a[16];
		int family = strchr(r->addr, ':') ? 6 : 4;
		assert_int_equal(inet_pton(family == 6 ? AF_INET6 : AF_INET, r->addr, a), 1);
		enum bee_net_dir dir = strcmp(r->dir, "bind") == 0 ? BEE_NET_BIND : BEE_NET_CONNECT;
		struct net_eval_decision d;
		assert_int_equal(net_eval_decide(&s.m, dir, family, a, r->port, r->proto, &d), 0);
		if (d.allow != r->allow || d.prov != r->prov || d.map_family != r->map_family)
			fail_msg("row %zu (%s %s:%u/%u): got allow %d prov %u map %d", i, r->dir, r->addr,
				 r->port, r->proto, d.allow, d.prov, d.map_family);
		assert_int_equal(d.entry < 0, r->prov == BEE_NET_PROV_NONE);
	}
}

static void test_decide_bad_args(void **state)
{
	(void)state;
	struct maps s;
	maps_init(&s);
	uint8_t a[16] = { 10 };
	struct net_eval_decision d;
	assert_int_equal(net_eval_decide(&s.m, (enum bee_net_dir)2, 4, a, 443, 6, &d), -EINVAL);
	assert_int_equal(net_eval_decide(&s.m, BEE_NET_CONNECT, 5, a, 443, 6, &d), -EINVAL);
	struct net_eval_maps empty = { 0 };
	assert_int_equal(net_eval_decide(&empty, BEE_NET_CONNECT, 4, a, 443, 6, &d), 0);
	assert_int_equal(d.allow, 0);
	assert_int_equal(d.entry, -1);
}

/* The kernel's rule: an entry matches when its prefixlen is within the
 * lookup's and its first prefixlen bits are the lookup's; the longest wins. */
static void test_lpm_semantics(void **state)
{
	(void)state;
	struct bee_net_key4 ks[4] = {
		key4(BEE_NET_CONNECT, 6, "10.0.0.0", 8),
		key4(BEE_NET_CONNECT, 6, "10.128.0.0", 9),
		key4(BEE_NET_CONNECT, 6, "10.0.0.0", 7),   /* 10.0.0.0/7 = 10.0.0.0-11.255.255.255 */
		key4(BEE_NET_CONNECT, 6, "0.0.0.0", 0),
	};
	struct bee_net_key4 l = key4(BEE_NET_CONNECT, 6, "10.200.0.1", 32);
	assert_int_equal(net_eval_lpm_lookup(ks, sizeof(ks[0]), 4, &l), 1);
	l = key4(BEE_NET_CONNECT, 6, "10.1.0.1", 32);
	assert_int_equal(net_eval_lpm_lookup(ks, sizeof(ks[0]), 4, &l), 0);
	l = key4(BEE_NET_CONNECT, 6, "11.1.0.1", 32);
	assert_int_equal(net_eval_lpm_lookup(ks, sizeof(ks[0]), 4, &l), 2);
	l = key4(BEE_NET_CONNECT, 6, "12.0.0.0", 32);
	assert_int_equal(net_eval_lpm_lookup(ks, sizeof(ks[0]), 4, &l), 3);
	/* another slice never matches: the header bits are part of every prefix */
	l = key4(BEE_NET_BIND, 6, "10.1.0.1", 32);
	assert_int_equal(net_eval_lpm_lookup(ks, sizeof(ks[0]), 4, &l), -1);
	l = key4(BEE_NET_CONNECT, 17, "10.1.0.1", 32);
	assert_int_equal(net_eval_lpm_lookup(ks, sizeof(ks[0]), 4, &l), -1);
	/* a shorter lookup prefix only sees entries within it */
	l = key4(BEE_NET_CONNECT, 6, "10.200.0.1", 8);
	assert_int_equal(net_eval_lpm_lookup(ks, sizeof(ks[0]), 4, &l), 0);
	/* a lookup prefixlen beyond the key is refused */
	l.prefixlen = BEE_NET4_MAX_PREFIXLEN + 1;
	assert_int_equal(net_eval_lpm_lookup(ks, sizeof(ks[0]), 4, &l), -1);
}

static void test_ports_allow(void **state)
{
	(void)state;
	uint16_t lohi[2 * BEE_NET_MAX_RANGES];
	for (unsigned i = 0; i < BEE_NET_MAX_RANGES; i++) {
		lohi[2 * i] = (uint16_t)(100 * i + 10);
		lohi[2 * i + 1] = (uint16_t)(100 * i + 20);
	}
	lohi[2 * BEE_NET_MAX_RANGES - 1] = 65535;
	struct bee_net_value v = value(0, BEE_NET_MAX_RANGES, lohi);
	assert_int_equal(bee_net_ports_allow(&v, 9), 0);
	assert_int_equal(bee_net_ports_allow(&v, 10), 1);
	assert_int_equal(bee_net_ports_allow(&v, 20), 1);
	assert_int_equal(bee_net_ports_allow(&v, 21), 0);
	assert_int_equal(bee_net_ports_allow(&v, 1515), 1);
	assert_int_equal(bee_net_ports_allow(&v, 1509), 0);
	assert_int_equal(bee_net_ports_allow(&v, 65535), 1);
	v.nranges = 3;   /* ranges past nranges are never read */
	assert_int_equal(bee_net_ports_allow(&v, 310), 0);
	assert_int_equal(bee_net_ports_allow(&v, 210), 1);
	v.nranges = 0;
	assert_int_equal(bee_net_ports_allow(&v, 10), 0);
	v.nranges = 0xffff;   /* a corrupt count cannot run past the array */
	assert_int_equal(bee_net_ports_allow(&v, 65535), 1);
}

static void test_mapped_predicate(void **state)
{
	(void)state;
	uint32_t a[4];
	assert_int_equal(inet_pton(AF_INET6, "::ffff:1.2.3.4", a), 1);
	assert_int_equal(bee_net_addr6_is_v4mapped(a), 1);
	assert_int_equal(inet_pton(AF_INET6, "::ffff:0:0", a), 1);
	assert_int_equal(bee_net_addr6_is_v4mapped(a), 1);
	assert_int_equal(inet_pton(AF_INET6, "::1.2.3.4", a), 1);
	assert_int_equal(bee_net_addr6_is_v4mapped(a), 0);
	assert_int_equal(inet_pton(AF_INET6, "::fffe:1.2.3.4", a), 1);
	assert_int_equal(bee_net_addr6_is_v4mapped(a), 0);
	assert_int_equal(inet_pton(AF_INET6, "1::ffff:1.2.3.4", a), 1);
	assert_int_equal(bee_net_addr6_is_v4mapped(a), 0);
}

struct check_row {
	void (*spoil)(struct maps *s);
	const char *msg;
};

static void spoil_plen(struct maps *s) { s->k4[1].prefixlen = 16; }
static void spoil_plen6(struct maps *s) { s->k6[0].prefixlen = BEE_NET6_MAX_PREFIXLEN + 1; }
static void spoil_dir(struct maps *s) { s->k4[0].dir = 7; }
static void spoil_proto(struct maps *s) { s->k6[1].proto = 1; }
static void spoil_zero(struct maps *s) { s->k4[2].zero = 1; }
static void spoil_host(struct maps *s) { s->k4[1].addr[3] = 1; }
static void spoil_count(struct maps *s) { s->v4[0].nranges = BEE_NET_MAX_RANGES + 1; }
static void spoil_flags(struct maps *s) { s->v6[0].flags = 2; }
static void spoil_reversed(struct maps *s) { s->v4[1].ranges[0] = (struct bee_net_range){ 9, 8 }; }
static void spoil_order(struct maps *s) { s->v4[0].ranges[1] = (struct bee_net_range){ 81, 90 }; }
static void spoil_unused(struct maps *s) { s->v4[1].ranges[5].hi = 1; }
static void spoil_dup(struct maps *s) { s->k4[2] = s->k4[1]; }
static void spoil_mapped(struct maps *s)
{
	s->k6[1] = key6(BEE_NET_CONNECT, BEE_NET_PROTO_TCP, "::ffff:10.0.0.0", 104);
}

static const struct check_row check_rows[] = {
	{ spoil_plen, "bee_net4 entry 1: prefixlen 16 outside 32..64" },
	{ spoil_plen6, "bee_net6 entry 0: prefixlen 161 outside 32..160" },
	{ spoil_dir, "bee_net4 entry 0: unknown direction 7" },
	{ spoil_proto, "bee_net6 entry 1: unknown protocol 1" },
	{ spoil_zero, "bee_net4 entry 2: reserved key bits set" },
	{ spoil_host, "bee_net4 entry 1: address bit 31 set beyond /8" },
	{ spoil_count, "bee_net4 entry 0: 17 port ranges, more than 16" },
	{ spoil_flags, "bee_net6 entry 0: reserved flags 0x2 set" },
	{ spoil_reversed, "bee_net4 entry 1: port range 0 is reversed" },
	{ spoil_order, "bee_net4 entry 0: port range 1 is not sorted and apart from the one before" },
	{ spoil_unused, "bee_net4 entry 1: unused port range 5 is not zero" },
	{ spoil_dup, "bee_net4 entry 2: same key as entry 1" },
	{ spoil_mapped, "bee_net6 entry 1: inside ::ffff:0:0/96, which bee_net4 decides" },
};

static void test_maps_check(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(check_rows) / sizeof(check_rows[0]); i++) {
		struct maps s;
		char err[160] = "";
		maps_init(&s);
		check_rows[i].spoil(&s);
		assert_int_equal(net_eval_maps_check(&s.m, err, sizeof(err)), -EINVAL);
		assert_string_equal(err, check_rows[i].msg);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decide),
		cmocka_unit_test(test_decide_bad_args),
		cmocka_unit_test(test_lpm_semantics),
		cmocka_unit_test(test_ports_allow),
		cmocka_unit_test(test_mapped_predicate),
		cmocka_unit_test(test_maps_check),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
