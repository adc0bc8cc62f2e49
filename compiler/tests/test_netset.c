/* SPDX-License-Identifier: GPL-2.0-only */
/* [net] lowering: table-driven decisions, dumps, the range limit, determinism,
 * attenuation pairs, and two property tests against a brute-force evaluator
 * that reads the IR rules directly (no projection, no LPM):
 *
 *   allowed(dir, proto, addr, port) iff some grant of that direction and
 *   protocol contains addr and port, and no deny of that protocol does,
 *
 * in the one address space where a.b.c.d is ::ffff:a.b.c.d.
 * Random cases come from BEE_SEED (or the time), printed for replay. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "net_eval.h"
#include "netaddr.h"
#include "netset.h"
#include "seed.h"

typedef unsigned __int128 u128;

/* ---- rules from text ---------------------------------------------------------
 * The entries are read here rather than by compiler/netaddr, so these tests
 * depend only on the IR's promises: host bits zero, ::ffff:a.b.c.d/P (P >= 96)
 * stored as the IPv4 entry a.b.c.d/(P-96), tcp by default. */

/* "A.B.C.D[/P]:PORTS[/PROTO]" or "[IPV6][/P]:PORTS[/PROTO]"; PORTS is N,
 * LO-HI or '*'. Returns 0 or -1. */
static int entry_parse(const char *s, struct ir_net *n)
{
	char buf[128], *p, *addr;
	snprintf(buf, sizeof(buf), "%s", s);
	memset(n, 0, sizeof(*n));
	if (buf[0] == '[') {
		p = strchr(buf, ']');
		if (!p)
			return -1;
		*p++ = '\0';
		addr = buf + 1;
		n->family = IR_NET_IPV6;
		if (inet_pton(AF_INET6, addr, n->addr) != 1)
			return -1;
	} else {
		p = buf + strcspn(buf, "/:");
		char c = *p;
		*p = '\0';
		n->family = IR_NET_IPV4;
		if (inet_pton(AF_INET, buf, n->addr) != 1)
			return -1;
		*p = c;
	}
	unsigned w = n->family == IR_NET_IPV4 ? 32 : 128;
	n->prefix = (uint8_t)w;
	if (*p == '/')
		n->prefix = (uint8_t)strtoul(p + 1, &p, 10);
	if (*p++ != ':')
		return -1;
	if (*p == '*') {
		n->port_lo = 0;
		n->port_hi = 65535;
		p++;
	} else {
		n->port_lo = n->port_hi = (uint16_t)strtoul(p, &p, 10);
		if (*p == '-')
			n->port_hi = (uint16_t)strtoul(p + 1, &p, 10);
	}
	n->proto = IR_NET_TCP;
	if (strcmp(p, "/udp") == 0)
		n->proto = IR_NET_UDP;
	else if (*p && strcmp(p, "/tcp") != 0)
		return -1;
	for (unsigned b = n->prefix; b < w; b++)
		if (n->addr[b / 8] & (0x80u >> (b % 8)))
			return -1;
	static const uint8_t m[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	if (n->family == IR_NET_IPV6 && n->prefix >= 96 && memcmp(n->addr, m, 12) == 0) {
		memmove(n->addr, n->addr + 12, 4);
		memset(n->addr + 4, 0, 12);
		n->family = IR_NET_IPV4;
		n->prefix = (uint8_t)(n->prefix - 96);
	}
	return 0;
}

/* Each spec is "connect ENTRY", "bind ENTRY" or "deny ENTRY"; the specs
 * become one source, a line each, so diagnostics have locations. */

#define MAX_SPECS 40

struct fixture {
	struct source *src;
	struct ir_rule rules[MAX_SPECS];
	char *texts[MAX_SPECS];
	size_t n;
};

static void fixture_parse(struct fixture *fx, const char *const *specs)
{
	char text[8192];
	size_t len = 0, n = 0;
	while (specs[n])
		len += (size_t)snprintf(text + len, sizeof(text) - len, "%s\n", specs[n++]);
	assert_true(n <= MAX_SPECS);
	memset(fx, 0, sizeof(*fx));
	fx->src = source_new("policy.toml", text, len);
	fx->n = n;
	size_t off = 0;
	for (size_t i = 0; i < n; i++) {
		const char *line = fx->src->text + off, *sp = strchr(line, ' ');
		size_t linelen = strlen(specs[i]);
		assert_non_null(sp);
		struct ir_rule *r = &fx->rules[i];
		if (strncmp(line, "connect ", 8) == 0)
			r->kind = IR_RULE_NET_CONNECT;
		else if (strncmp(line, "bind ", 5) == 0)
			r->kind = IR_RULE_NET_BIND;
		else if (strncmp(line, "deny ", 5) == 0)
			r->kind = IR_RULE_NET_DENY;
		else
			fail_msg("bad spec '%s'", specs[i]);
		size_t eoff = (size_t)(sp + 1 - fx->src->text), elen = linelen - (eoff - off);
		fx->texts[i] = xstrndup(fx->src->text + eoff, elen);
		if (entry_parse(fx->texts[i], &r->net) < 0)
			fail_msg("bad entry in spec '%s'", specs[i]);
		r->index = (unsigned)i;
		r->loc = (struct loc){ fx->src, (uint32_t)eoff, (uint32_t)elen };
		r->text = fx->texts[i];
		off += linelen + 1;
	}
}

static void fixture_free(struct fixture *fx)
{
	for (size_t i = 0; i < fx->n; i++)
		free(fx->texts[i]);
	source_free(fx->src);
}

static struct netset *set_build(struct fixture *fx, const char *const *specs)
{
	struct diag_ctx dc;
	struct netset *set;
	fixture_parse(fx, specs);
	diag_init(&dc);
	int rc = netset_build(fx->rules, fx->n, NULL, &dc, &set);
	if (rc < 0)
		diag_print(&dc, stderr);
	assert_int_equal(rc, 0);
	diag_fini(&dc);
	return set;
}

static char *dump_string(const struct netset *set)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	netset_dump(set, f);
	fclose(f);
	return buf;
}

/* ---- queries from text: "connect 10.1.2.3:443/tcp", "bind [::1]:80/udp" ---- */

struct query {
	enum bee_net_dir dir;
	int family;
	uint8_t addr[16];
	uint16_t port;
	uint8_t proto;
};

static void query_parse(const char *s, struct query *q)
{
	char buf[128], *a = NULL, *end;
	snprintf(buf, sizeof(buf), "%s", s);
	memset(q, 0, sizeof(*q));
	if (strncmp(buf, "connect ", 8) == 0) {
		q->dir = BEE_NET_CONNECT;
		a = buf + 8;
	} else if (strncmp(buf, "bind ", 5) == 0) {
		q->dir = BEE_NET_BIND;
		a = buf + 5;
	} else {
		fail_msg("bad query '%s'", s);
	}
	if (*a == '[') {
		end = strchr(a, ']');
		*end = '\0';
		q->family = 6;
		assert_int_equal(inet_pton(AF_INET6, a + 1, q->addr), 1);
		end++;
	} else {
		end = strchr(a, ':');
		*end = '\0';
		q->family = 4;
		assert_int_equal(inet_pton(AF_INET, a, q->addr), 1);
		*end = ':';
	}
	assert_int_equal(*end, ':');
	q->port = (uint16_t)strtoul(end + 1, &end, 10);
	q->proto = strcmp(end, "/udp") == 0 ? BEE_NET_PROTO_UDP : BEE_NET_PROTO_TCP;
}

static int set_decide(const struct netset *set, const struct query *q)
{
	struct netset_image img;
	struct net_eval_decision d;
	char err[256];
	netset_image_build(set, &img);
	struct net_eval_maps m = netset_image_maps(&img);
	if (net_eval_maps_check(&m, err, sizeof(err)) < 0)
		fail_msg("bad maps: %s", err);
	assert_int_equal(net_eval_decide(&m, q->dir, q->family, q->addr, q->port, q->proto, &d), 0);
	netset_image_free(&img);
	return d.allow;
}

/* ---- table: decisions ------------------------------------------------------------ */

struct decide_case {
	const char *name;
	const char *rules[12];
	struct {
		const char *q;
		int allow;
	} qs[16];
};

static const struct decide_case decide_cases[] = {
	{ "single grant",
	  { "connect 10.0.0.0/8:443" },
	  { { "connect 10.1.2.3:443/tcp", 1 }, { "connect 10.0.0.0:443/tcp", 1 },
	    { "connect 10.255.255.255:443/tcp", 1 }, { "connect 11.0.0.0:443/tcp", 0 },
	    { "connect 9.255.255.255:443/tcp", 0 }, { "connect 10.1.2.3:442/tcp", 0 },
	    { "connect 10.1.2.3:444/tcp", 0 }, { "connect 10.1.2.3:443/udp", 0 },
	    { "bind 10.1.2.3:443/tcp", 0 } } },
	{ "overlapping prefixes add ports",
	  { "connect 10.0.0.0/8:443", "connect 10.1.0.0/16:80" },
	  { { "connect 10.1.2.3:443/tcp", 1 }, { "connect 10.1.2.3:80/tcp", 1 },
	    { "connect 10.2.0.0:80/tcp", 0 }, { "connect 10.2.0.0:443/tcp", 1 } } },
	{ "deny carves a hole",
	  { "connect 10.0.0.0/8:*", "deny 10.1.0.0/16:*" },
	  { { "connect 10.0.255.255:1/tcp", 1 }, { "connect 10.1.0.0:1/tcp", 0 },
	    { "connect 10.1.255.255:65535/tcp", 0 }, { "connect 10.2.0.0:0/tcp", 1 },
	    { "connect 10.1.2.3:443/tcp", 0 } } },
	{ "deny beats a more specific grant",
	  { "connect 10.0.0.0/8:443", "deny 10.1.0.0/16:*", "connect 10.1.2.0/24:443" },
	  { { "connect 10.1.2.3:443/tcp", 0 }, { "connect 10.2.2.3:443/tcp", 1 } } },
	{ "deny splits port ranges",
	  { "connect 0.0.0.0/0:1-1024", "deny 0.0.0.0/0:100-200" },
	  { { "connect 1.2.3.4:0/tcp", 0 }, { "connect 1.2.3.4:1/tcp", 1 },
	    { "connect 1.2.3.4:99/tcp", 1 }, { "connect 1.2.3.4:100/tcp", 0 },
	    { "connect 1.2.3.4:200/tcp", 0 }, { "connect 1.2.3.4:201/tcp", 1 },
	    { "connect 1.2.3.4:1024/tcp", 1 }, { "connect 1.2.3.4:1025/tcp", 0 } } },
	{ "adjacent ranges merge",
	  { "connect 1.2.3.4:80", "connect 1.2.3.4:81-90", "connect 1.2.3.0/24:91" },
	  { { "connect 1.2.3.4:79/tcp", 0 }, { "connect 1.2.3.4:80/tcp", 1 },
	    { "connect 1.2.3.4:85/tcp", 1 }, { "connect 1.2.3.4:91/tcp", 1 },
	    { "connect 1.2.3.4:92/tcp", 0 }, { "connect 1.2.3.5:90/tcp", 0 },
	    { "connect 1.2.3.5:91/tcp", 1 } } },
	{ "udp and tcp are apart",
	  { "connect 0.0.0.0/0:53/udp", "connect 8.8.8.8:53", "deny 169.254.169.254:*" },
	  { { "connect 1.1.1.1:53/udp", 1 }, { "connect 1.1.1.1:53/tcp", 0 },
	    { "connect 8.8.8.8:53/tcp", 1 }, { "connect 169.254.169.254:53/udp", 1 },
	    { "connect 169.254.169.254:53/tcp", 0 } } },
	{ "ipv6 grant and deny",
	  { "connect [2001:db8::]/32:443", "deny [2001:db8:1::]/48:*" },
	  { { "connect [2001:db8::1]:443/tcp", 1 }, { "connect [2001:db8:1::5]:443/tcp", 0 },
	    { "connect [2001:db8:2::]:443/tcp", 1 }, { "connect [2001:db9::]:443/tcp", 0 },
	    { "connect [2001:db8:ffff:ffff:ffff:ffff:ffff:ffff]:443/tcp", 1 },
	    { "connect 32.1.13.184:443/tcp", 0 } } },
	{ "mapped addresses are ipv4",
	  { "connect 10.0.0.0/8:443", "connect [::ffff:192.168.0.0]/112:80" },
	  { { "connect [::ffff:10.1.2.3]:443/tcp", 1 }, { "connect [::ffff:11.0.0.1]:443/tcp", 0 },
	    { "connect 192.168.3.4:80/tcp", 1 }, { "connect [::ffff:192.168.3.4]:80/tcp", 1 },
	    { "connect [::10.1.2.3]:443/tcp", 0 }, { "connect [::fffe:a01:203]:443/tcp", 0 } } },
	{ "[::]/0 covers ipv4 too",
	  { "connect [::]/0:443" },
	  { { "connect 1.2.3.4:443/tcp", 1 }, { "connect [::ffff:1.2.3.4]:443/tcp", 1 },
	    { "connect [2001::1]:443/tcp", 1 }, { "connect 1.2.3.4:80/tcp", 0 } } },
	{ "an ipv6 deny over the mapped space denies ipv4",
	  { "connect 0.0.0.0/0:*", "deny [::]/0:22" },
	  { { "connect 1.2.3.4:22/tcp", 0 }, { "connect 1.2.3.4:23/tcp", 1 },
	    { "connect [::ffff:1.2.3.4]:22/tcp", 0 }, { "connect [2001::1]:23/tcp", 0 } } },
	{ "ipv6 outside the mapped space leaves ipv4 alone",
	  { "connect [2001:db8::]/32:*", "deny [2001:db8::]/32:*/udp" },
	  { { "connect 1.2.3.4:80/tcp", 0 }, { "connect [2001:db8::1]:80/tcp", 1 },
	    { "connect [2001:db8::1]:80/udp", 0 } } },
	{ "a /95 around the mapped space",
	  { "connect [::fffe:0:0]/95:443" },
	  { { "connect 1.2.3.4:443/tcp", 1 }, { "connect [::fffe:102:304]:443/tcp", 1 },
	    { "connect [::1:0:0:0]:443/tcp", 0 }, { "connect [::fffd:ffff:ffff]:443/tcp", 0 } } },
	{ "deny applies to bind",
	  { "bind 0.0.0.0/0:*", "deny 127.0.0.1:22" },
	  { { "bind 127.0.0.1:22/tcp", 0 }, { "bind 127.0.0.1:23/tcp", 1 },
	    { "bind 127.0.0.2:22/tcp", 1 }, { "connect 127.0.0.1:23/tcp", 0 } } },
	{ "bind and connect are apart",
	  { "bind 127.0.0.1:8080", "connect 127.0.0.1:80" },
	  { { "connect 127.0.0.1:8080/tcp", 0 }, { "bind 127.0.0.1:8080/tcp", 1 },
	    { "bind 127.0.0.1:80/tcp", 0 }, { "connect 127.0.0.1:80/tcp", 1 } } },
	{ "no rules deny everything",
	  { NULL },
	  { { "connect 127.0.0.1:80/tcp", 0 }, { "bind [::]:0/udp", 0 } } },
	{ "a deny equal to its grant",
	  { "connect 10.0.0.0/8:443", "deny 10.0.0.0/8:443" },
	  { { "connect 10.0.0.1:443/tcp", 0 } } },
	{ "the ends of the spaces",
	  { "connect 255.255.255.255:65535", "connect 0.0.0.0:0",
	    "connect [ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:65535", "connect [::]:0" },
	  { { "connect 255.255.255.255:65535/tcp", 1 }, { "connect 255.255.255.254:65535/tcp", 0 },
	    { "connect 0.0.0.0:0/tcp", 1 }, { "connect 0.0.0.1:0/tcp", 0 },
	    { "connect [ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:65535/tcp", 1 },
	    { "connect [ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe]:65535/tcp", 0 },
	    { "connect [::]:0/tcp", 1 }, { "connect [::1]:0/tcp", 0 },
	    { "connect [::ffff:0.0.0.0]:0/tcp", 1 } } },
	{ "the design's example",
	  { "connect 127.0.0.1:8080", "connect 10.0.0.0/8:443", "connect [::1]:1-1024",
	    "connect 0.0.0.0/0:53/udp", "bind 127.0.0.1:0", "deny 169.254.169.254/32:*" },
	  { { "connect 127.0.0.1:8080/tcp", 1 }, { "connect 10.9.9.9:443/tcp", 1 },
	    { "connect [::1]:1024/tcp", 1 }, { "connect [::1]:1025/tcp", 0 },
	    { "connect 169.254.169.254:53/udp", 1 }, { "bind 127.0.0.1:0/tcp", 1 },
	    { "bind 127.0.0.1:1/tcp", 0 }, { "connect 169.254.169.254:80/tcp", 0 } } },
};

static void test_decide_table(void **state)
{
	(void)state;
	for (size_t c = 0; c < sizeof(decide_cases) / sizeof(decide_cases[0]); c++) {
		const struct decide_case *tc = &decide_cases[c];
		struct fixture fx;
		struct netset *set = set_build(&fx, tc->rules);
		for (size_t i = 0; i < 16 && tc->qs[i].q; i++) {
			struct query q;
			query_parse(tc->qs[i].q, &q);
			int got = set_decide(set, &q);
			if (got != tc->qs[i].allow)
				fail_msg("%s: '%s': got %s, want %s", tc->name, tc->qs[i].q,
					 got ? "allow" : "deny", tc->qs[i].allow ? "allow" : "deny");
		}
		netset_free(set);
		fixture_free(&fx);
	}
}

/* ---- table: dumps -------------------------------------------------------------- */

struct dump_case {
	const char *rules[12];
	const char *dump;
};

static const struct dump_case dump_cases[] = {
	{ { NULL },
	  "# bee net (schema 1)\n"
	  "# an address's longest matching entry decides; no match denies\n"
	  "bee_net4 0 entries\n"
	  "bee_net6 0 entries\n" },
	{ { "connect 10.0.0.0/8:443", "connect 10.0.0.0/8:8000-8080", "deny 10.1.0.0/16:*",
	    "connect 10.1.2.0/24:80", "deny 192.168.0.0/16:*", "connect [::1]:1-1024",
	    "connect 0.0.0.0/0:53/udp", "bind 127.0.0.1:0" },
	  "# bee net (schema 1)\n"
	  "# an address's longest matching entry decides; no match denies\n"
	  "bee_net4 5 entries\n"
	  "  0  connect tcp  10.0.0.0/8    443,8000-8080  grant 0 1\n"
	  "  1  connect tcp  10.1.0.0/16   none           grant 0 1  deny 2\n"
	  "  2  connect tcp  10.1.2.0/24   none           grant 0 1 3  deny 2\n"
	  "  3  connect udp  0.0.0.0/0     53             grant 6\n"
	  "  4  bind    tcp  127.0.0.1/32  0              grant 7\n"
	  "bee_net6 1 entry\n"
	  "  5  connect tcp  ::1/128       1-1024         grant 5\n" },
	/* [::]/0 is projected into bee_net4 as 0.0.0.0/0; the /1 halves shadow it
	 * in bee_net6, and the /96 counts as covered there */
	{ { "connect [::]/0:*", "connect [::]/1:443", "connect [8000::]/1:443", "deny 10.0.0.0/8:*" },
	  "# bee net (schema 1)\n"
	  "# an address's longest matching entry decides; no match denies\n"
	  "bee_net4 2 entries\n"
	  "  0  connect tcp  0.0.0.0/0   *     grant 0 1\n"
	  "  1  connect tcp  10.0.0.0/8  none  grant 0 1  deny 3\n"
	  "bee_net6 2 entries\n"
	  "  2  connect tcp  ::/1        *     grant 0 1\n"
	  "  3  connect tcp  8000::/1    *     grant 0 2\n" },
	/* the /95's other half is ::ffff:0:0/96, which bee_net4 decides: in
	 * bee_net6 the /95 is shadowed and dropped; the bind entries allow no
	 * port and nothing is above them, so absence says the same */
	{ { "connect [::fffe:0:0]/95:443", "connect [::fffe:0:0]/96:80", "bind [::]/0:0/udp",
	    "deny [::]/0:*/udp" },
	  "# bee net (schema 1)\n"
	  "# an address's longest matching entry decides; no match denies\n"
	  "bee_net4 1 entry\n"
	  "  0  connect tcp  0.0.0.0/0      443     grant 0\n"
	  "bee_net6 1 entry\n"
	  "  1  connect tcp  ::fffe:0:0/96  80,443  grant 0 1\n" },
};

static void test_dump_table(void **state)
{
	(void)state;
	for (size_t c = 0; c < sizeof(dump_cases) / sizeof(dump_cases[0]); c++) {
		struct fixture fx;
		struct netset *set = set_build(&fx, dump_cases[c].rules);
		char *got = dump_string(set);
		if (strcmp(got, dump_cases[c].dump) != 0)
			fail_msg("dump case %zu:\n--- got\n%s--- want\n%s", c, got, dump_cases[c].dump);
		free(got);
		netset_free(set);
		fixture_free(&fx);
	}
}

/* ---- the range limit ------------------------------------------------------------ */

static void test_range_limit(void **state)
{
	(void)state;
	const char *specs[24];
	char bufs[20][40];
	for (int i = 0; i < 17; i++) {
		snprintf(bufs[i], sizeof(bufs[i]), "connect 10.0.0.0/8:%d", 100 + 2 * i);
		specs[i] = bufs[i];
	}
	specs[17] = "connect 10.1.0.0/16:1";   /* inherits the overflow: not reported again */
	specs[18] = NULL;

	struct fixture fx;
	fixture_parse(&fx, specs);
	struct diag_ctx dc;
	struct netset *set = (struct netset *)1;
	diag_init(&dc);
	assert_int_equal(netset_build(fx.rules, fx.n, NULL, &dc, &set), -1);
	assert_null(set);
	assert_int_equal(dc.errors, 1);
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	diag_print(&dc, f);
	fclose(f);
	const char *want =
		"policy.toml:1:9: error: net entry 'connect 10.0.0.0/8/tcp' needs 17 port ranges, "
		"more than the limit of 16; 17 rules make it, this one first\n"
		"    1 | connect 10.0.0.0/8:100\n"
		"      |         ^~~~~~~~~~~~~~\n"
		"policy.toml:2:9: note: '10.0.0.0/8:102' adds ports to it\n";
	if (strncmp(out, want, strlen(want)) != 0)
		fail_msg("got:\n%s", out);
	assert_non_null(strstr(out, "'10.0.0.0/8:106' and 13 more rules add or carve ports too"));
	free(out);
	diag_fini(&dc);

	/* 16 ranges fit */
	specs[16] = NULL;
	diag_init(&dc);
	fixture_free(&fx);
	fixture_parse(&fx, specs);
	assert_int_equal(netset_build(fx.rules, fx.n, NULL, &dc, &set), 0);
	assert_int_equal(set->entries[0].nranges, 16);
	netset_free(set);
	diag_fini(&dc);
	fixture_free(&fx);

	/* a deny that splits a range counts, and names both rules */
	const char *split[] = { "connect 10.0.0.0/8:1-100", "deny 10.1.0.0/16:50", NULL };
	struct netset_limits lim = { 1, 100 };
	fixture_parse(&fx, split);
	diag_init(&dc);
	assert_int_equal(netset_build(fx.rules, fx.n, &lim, &dc, &set), -1);
	assert_int_equal(dc.errors, 1);
	assert_non_null(strstr(dc.items[0].msg, "'connect 10.1.0.0/16/tcp' needs 2 port ranges"));
	assert_int_equal(dc.items[0].loc.off, fx.rules[0].loc.off);
	assert_int_equal(dc.items[0].nnotes, 1);
	assert_string_equal(dc.items[0].notes[0].msg, "'10.1.0.0/16:50' carves ports out of it");
	diag_fini(&dc);
	fixture_free(&fx);

	/* the entry limit */
	const char *many[] = { "connect 10.0.0.0/8:1", "connect 10.1.0.0/16:2", "connect 10.2.0.0/16:3",
			       NULL };
	struct netset_limits few = { BEE_NET_MAX_RANGES, 2 };
	fixture_parse(&fx, many);
	diag_init(&dc);
	assert_int_equal(netset_build(fx.rules, fx.n, &few, &dc, &set), -1);
	assert_non_null(strstr(dc.items[0].msg, "3 entries in map 'bee_net4', more than the limit of 2"));
	diag_fini(&dc);
	fixture_free(&fx);
}

/* ---- determinism ---------------------------------------------------------------- */

static void image_bytes(const struct netset *set, char **buf, size_t *len)
{
	struct netset_image img;
	netset_image_build(set, &img);
	FILE *f = open_memstream(buf, len);
	fwrite(img.keys4, sizeof(*img.keys4), img.n4, f);
	fwrite(img.values4, sizeof(*img.values4), img.n4, f);
	fwrite(img.keys6, sizeof(*img.keys6), img.n6, f);
	fwrite(img.values6, sizeof(*img.values6), img.n6, f);
	fclose(f);
	netset_image_free(&img);
}

static void test_determinism(void **state)
{
	(void)state;
	const char *a[] = { "connect 10.0.0.0/8:443", "deny 10.1.0.0/16:80-90", "connect [::]/0:1-1000",
			    "bind 127.0.0.1:0", "connect 10.1.0.0/16:80/udp", "deny [2001:db8::]/32:*",
			    "connect 10.1.0.0/16:85-100", NULL };
	/* the same rules in another order make the same maps */
	const char *b[] = { "connect 10.1.0.0/16:85-100", "bind 127.0.0.1:0", "deny [2001:db8::]/32:*",
			    "connect 10.1.0.0/16:80/udp", "connect [::]/0:1-1000", "deny 10.1.0.0/16:80-90",
			    "connect 10.0.0.0/8:443", NULL };
	struct fixture fa, fa2, fb;
	struct netset *sa = set_build(&fa, a), *sa2 = set_build(&fa2, a), *sb = set_build(&fb, b);
	char *da = dump_string(sa), *da2 = dump_string(sa2);
	assert_string_equal(da, da2);
	char *ia, *ib;
	size_t la, lb;
	image_bytes(sa, &ia, &la);
	image_bytes(sb, &ib, &lb);
	assert_true(la > 0);
	assert_int_equal(la, lb);
	assert_memory_equal(ia, ib, la);
	free(ia);
	free(ib);
	free(da);
	free(da2);
	netset_free(sa);
	netset_free(sa2);
	netset_free(sb);
	fixture_free(&fa);
	fixture_free(&fa2);
	fixture_free(&fb);
}

/* ---- attenuation pairs ------------------------------------------------------------ */

struct subset_case {
	const char *child[8];
	const char *parent[8];
	const char *cex;       /* NULL: the child is a subset */
	int child_rule;        /* index of the child grant named */
	int parent_deny;       /* index of the parent deny named, -1 for none */
};

static const struct subset_case subset_cases[] = {
	{ { "connect 10.0.0.0/8:443" }, { "connect 10.0.0.0/8:443" }, NULL, 0, -1 },
	{ { "connect 10.1.0.0/16:443" }, { "connect 10.0.0.0/8:443" }, NULL, 0, -1 },
	{ { "connect 10.0.0.0/8:443" }, { "connect 10.1.0.0/16:443" }, "connect 10.0.0.0:443/tcp", 0, -1 },
	{ { "connect 10.0.0.0/8:400-500" }, { "connect 10.0.0.0/8:443" }, "connect 10.0.0.0:400/tcp", 0, -1 },
	{ { "connect 10.0.0.0/8:443" }, { "connect 10.0.0.0/8:1-1024" }, NULL, 0, -1 },
	{ { "connect 10.0.0.0/8:443-444" }, { "connect 10.0.0.0/8:443" }, "connect 10.0.0.0:444/tcp", 0, -1 },
	{ { "connect 10.0.0.0/8:53/udp" }, { "connect 10.0.0.0/8:53" }, "connect 10.0.0.0:53/udp", 0, -1 },
	{ { "bind 127.0.0.1:8080" }, { "connect 127.0.0.1:8080" }, "bind 127.0.0.1:8080/tcp", 0, -1 },
	{ { "connect 10.0.0.0/8:443" }, { "connect 10.0.0.0/8:443", "deny 10.1.0.0/16:*" },
	  "connect 10.1.0.0:443/tcp", 0, 1 },
	{ { "connect 10.0.0.0/8:443", "deny 10.1.0.0/16:*" },
	  { "connect 10.0.0.0/8:443", "deny 10.1.0.0/16:*" }, NULL, 0, -1 },
	{ { "connect 10.0.0.0/8:443", "deny 10.1.2.0/24:*" },
	  { "connect 10.0.0.0/8:443", "deny 10.1.0.0/16:*" }, "connect 10.1.0.0:443/tcp", 0, 1 },
	{ { "connect 10.0.0.0/8:443", "deny 10.1.0.0/24:*" },
	  { "connect 10.0.0.0/8:443", "deny 10.1.0.0/16:*" }, "connect 10.1.1.0:443/tcp", 0, 1 },
	{ { NULL }, { "connect 10.0.0.0/8:443" }, NULL, 0, -1 },
	{ { "connect 127.0.0.1:80" }, { NULL }, "connect 127.0.0.1:80/tcp", 0, -1 },
	{ { NULL }, { NULL }, NULL, 0, -1 },
	{ { "connect [::]/0:443" }, { "connect 0.0.0.0/0:443" }, "connect [::]:443/tcp", 0, -1 },
	{ { "connect 0.0.0.0/0:443" }, { "connect [::]/0:443" }, NULL, 0, -1 },
	{ { "connect 1.2.3.4:443" }, { "connect [::]/0:443", "deny 0.0.0.0/0:*" },
	  "connect 1.2.3.4:443/tcp", 0, 1 },
	{ { "connect [2001:db8::]/32:443" }, { "connect [2001:db8::]/31:443" }, NULL, 0, -1 },
	{ { "connect [2001:db8::]/32:*" }, { "connect [2001:db8::]/33:*" },
	  "connect [2001:db8:8000::]:0/tcp", 0, -1 },
	{ { "connect [::]/0:443" }, { "connect [::]/1:443", "connect [8000::]/1:443" }, NULL, 0, -1 },
	{ { "connect [::]/0:443" }, { "connect [::]/1:443" }, "connect [8000::]:443/tcp", 0, -1 },
	{ { "connect [::]/0:443" }, { "connect [::]/0:443", "deny [::ffff:0:0]/96:*" },
	  "connect 0.0.0.0:443/tcp", 0, 1 },
	{ { "connect 10.0.0.0/8:80", "connect 10.0.0.0/8:81-90" }, { "connect 10.0.0.0/8:80-90" }, NULL, 0, -1 },
	{ { "connect 10.0.0.0/8:443" }, { "connect 10.0.0.0/9:443", "connect 10.128.0.0/9:443" }, NULL, 0, -1 },
	{ { "connect 10.0.0.0/8:443" }, { "connect 10.0.0.0/9:443", "connect 10.128.0.0/10:443" },
	  "connect 10.192.0.0:443/tcp", 0, -1 },
	{ { "connect 0.0.0.0/0:53/udp", "connect 0.0.0.0/0:53" }, { "connect 0.0.0.0/0:53/udp" },
	  "connect 0.0.0.0:53/tcp", 1, -1 },
	{ { "bind 127.0.0.1:5353/udp" }, { "bind 0.0.0.0/0:*/udp" }, NULL, 0, -1 },
	{ { "connect 10.0.0.0/8:443", "deny 0.0.0.0/0:22" }, { "connect 10.0.0.0/8:443" }, NULL, 0, -1 },
	{ { "connect 10.0.0.0/8:1-1024", "deny 10.0.0.0/8:1-442", "deny 10.0.0.0/8:444-1024" },
	  { "connect 10.0.0.0/8:443" }, NULL, 0, -1 },
	{ { "connect 10.0.0.0/8:80", "connect 10.0.0.0/8:443" }, { "connect 10.0.0.0/8:443" },
	  "connect 10.0.0.0:80/tcp", 0, -1 },
	{ { "connect 10.0.0.0/8:443", "connect 10.0.0.0/8:80" }, { "connect 10.0.0.0/8:443" },
	  "connect 10.0.0.0:80/tcp", 1, -1 },
	{ { "connect 10.1.0.0/16:443", "connect 10.0.0.0/8:80" }, { "connect 10.0.0.0/8:443" },
	  "connect 10.0.0.0:80/tcp", 1, -1 },
	{ { "connect [2001:db8::]/32:443", "connect 11.0.0.0/8:443" }, { NULL },
	  "connect 11.0.0.0:443/tcp", 1, -1 },
	{ { "bind 0.0.0.0/0:80", "connect 10.0.0.0/8:80" }, { NULL }, "connect 10.0.0.0:80/tcp", 1, -1 },
	{ { "connect 10.0.0.0/8:65535" }, { "connect 10.0.0.0/8:1-65534" }, "connect 10.0.0.0:65535/tcp", 0, -1 },
	{ { "connect 10.0.0.0/8:0-1" }, { "connect 10.0.0.0/8:1" }, "connect 10.0.0.0:0/tcp", 0, -1 },
	{ { "connect [::]/0:443" }, { "connect [::]/0:443", "deny 10.0.0.0/8:443" },
	  "connect 10.0.0.0:443/tcp", 0, 1 },
	{ { "connect 10.0.0.0/8:443", "deny 10.0.0.0/9:*" },
	  { "connect 10.128.0.0/9:443" }, NULL, 0, -1 },
	{ { "connect 10.0.0.0/8:443", "deny 10.0.0.0/9:*" },
	  { "connect 10.128.0.0/9:443", "deny 10.200.0.0/16:443" }, "connect 10.200.0.0:443/tcp", 0, 1 },
	{ { "bind [::1]:8000-8010" }, { "bind [::1]:8000-8009", "bind [::]/0:8011" }, "bind [::1]:8010/tcp", 0, -1 },
	{ { "connect [::ffff:10.0.0.0]/104:443" }, { "connect 10.0.0.0/8:443" }, NULL, 0, -1 },
};

static void test_subset_table(void **state)
{
	(void)state;
	for (size_t c = 0; c < sizeof(subset_cases) / sizeof(subset_cases[0]); c++) {
		const struct subset_case *tc = &subset_cases[c];
		struct fixture fc, fp;
		struct netset *child = set_build(&fc, tc->child), *parent = set_build(&fp, tc->parent);
		struct netset_cex cex;
		bool ok = netset_subset(child, parent, &cex);
		if (!tc->cex) {
			if (!ok) {
				char got[NETSET_CEX_STRLEN];
				netset_cex_format(&cex, got);
				fail_msg("pair %zu: want subset, got counterexample %s", c, got);
			}
		} else {
			if (ok)
				fail_msg("pair %zu: want %s, got subset", c, tc->cex);
			char got[NETSET_CEX_STRLEN];
			netset_cex_format(&cex, got);
			if (strcmp(got, tc->cex) != 0)
				fail_msg("pair %zu: want %s, got %s", c, tc->cex, got);
			assert_non_null(cex.child_rule);
			if ((int)cex.child_rule->index != tc->child_rule)
				fail_msg("pair %zu: want child rule %d, got %u", c, tc->child_rule,
					 cex.child_rule->index);
			int pd = cex.parent_deny ? (int)cex.parent_deny->index : -1;
			if (pd != tc->parent_deny)
				fail_msg("pair %zu: want parent deny %d, got %d", c, tc->parent_deny, pd);
		}
		/* a set is always a subset of itself */
		assert_true(netset_subset(child, child, NULL));
		assert_true(netset_subset(parent, parent, NULL));
		netset_free(child);
		netset_free(parent);
		fixture_free(&fc);
		fixture_free(&fp);
	}
}

/* ---- random rules and the brute-force evaluator ------------------------------------ */

static uint64_t rng_state;

static uint64_t rnd(void)
{
	return test_rng_next(&rng_state);
}

static unsigned rnd_below(unsigned n)
{
	return (unsigned)(rnd() % n);
}

static void seed_init(void)
{
	static bool done;
	if (done)
		return;
	rng_state = test_seed("test_netset", 0);
	done = true;
}

/* A unified address (IPv6 bytes; IPv4 as ::ffff:a.b.c.d) as a number, and back. */
static u128 u_load(const uint8_t a[16])
{
	u128 v = 0;
	for (int i = 0; i < 16; i++)
		v = v << 8 | a[i];
	return v;
}

static void u_store(u128 v, uint8_t a[16])
{
	for (int i = 15; i >= 0; i--, v >>= 8)
		a[i] = (uint8_t)v;
}

/* The rule's prefix in the unified space, as bytes and length. */
static void oracle_rule_prefix(const struct ir_rule *r, uint8_t a[16], unsigned *len)
{
	memset(a, 0, 16);
	if (r->net.family == IR_NET_IPV4) {
		a[10] = a[11] = 0xff;
		memcpy(a + 12, r->net.addr, 4);
		*len = 96u + r->net.prefix;
	} else {
		memcpy(a, r->net.addr, 16);
		*len = r->net.prefix;
	}
}

static bool oracle_rule_has(const struct ir_rule *r, const uint8_t u[16], uint16_t port,
			    enum ir_net_proto proto)
{
	if (r->net.proto != proto || port < r->net.port_lo || port > r->net.port_hi)
		return false;
	uint8_t a[16];
	unsigned len;
	oracle_rule_prefix(r, a, &len);
	for (unsigned b = 0; b < len; b++)
		if (((a[b / 8] ^ u[b / 8]) >> (7 - b % 8)) & 1)
			return false;
	return true;
}

static bool oracle_allows(const struct ir_rule *rules, size_t n, enum bee_net_dir dir,
			  const uint8_t u[16], uint16_t port, enum ir_net_proto proto)
{
	enum ir_rule_kind gk = dir == BEE_NET_CONNECT ? IR_RULE_NET_CONNECT : IR_RULE_NET_BIND;
	bool granted = false;
	for (size_t i = 0; i < n; i++) {
		if (!oracle_rule_has(&rules[i], u, port, proto))
			continue;
		if (rules[i].kind == IR_RULE_NET_DENY)
			return false;
		if (rules[i].kind == gk)
			granted = true;
	}
	return granted;
}

static bool u_is_mapped(const uint8_t u[16])
{
	static const uint8_t m[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	return memcmp(u, m, 12) == 0;
}

/* Addresses that rules share, so that random prefixes overlap. */
static const char *const pool4[] = { "0.0.0.0", "10.0.0.0", "10.1.0.0", "10.1.2.0", "10.1.2.3",
				     "10.128.0.0", "127.0.0.1", "192.168.1.1", "255.255.255.255" };
static const char *const pool6[] = { "::", "::1", "2001:db8::", "2001:db8:1::", "2001:db8:1::80",
				     "fe80::", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
				     "::fffe:0:0", "::ffff:0:0", "::ffff:a01:203", "::1:0:0:0" };
static const unsigned lens4[] = { 0, 1, 8, 9, 16, 24, 31, 32 };
static const unsigned lens6[] = { 0, 1, 32, 48, 64, 94, 95, 96, 97, 104, 120, 127, 128 };
static const uint16_t ports[] = { 0, 1, 22, 53, 80, 443, 444, 1024, 8080, 65534, 65535 };

static void random_rule(struct ir_rule *r, unsigned index)
{
	memset(r, 0, sizeof(*r));
	unsigned k = rnd_below(10);
	r->kind = k < 5 ? IR_RULE_NET_CONNECT : k < 7 ? IR_RULE_NET_BIND : IR_RULE_NET_DENY;
	r->index = index;
	r->text = "random";
	struct ir_net *n = &r->net;
	n->proto = rnd_below(4) ? IR_NET_TCP : IR_NET_UDP;
	unsigned w;
	if (rnd_below(2)) {
		n->family = IR_NET_IPV4;
		w = 32;
		if (rnd_below(4))
			inet_pton(AF_INET, pool4[rnd_below(sizeof(pool4) / sizeof(pool4[0]))], n->addr);
		else
			for (int i = 0; i < 4; i++)
				n->addr[i] = (uint8_t)rnd();
		n->prefix = (uint8_t)(rnd_below(4) ? lens4[rnd_below(sizeof(lens4) / sizeof(lens4[0]))]
						   : rnd_below(33));
	} else {
		n->family = IR_NET_IPV6;
		w = 128;
		if (rnd_below(4))
			inet_pton(AF_INET6, pool6[rnd_below(sizeof(pool6) / sizeof(pool6[0]))], n->addr);
		else
			for (int i = 0; i < 16; i++)
				n->addr[i] = (uint8_t)rnd();
		n->prefix = (uint8_t)(rnd_below(4) ? lens6[rnd_below(sizeof(lens6) / sizeof(lens6[0]))]
						   : rnd_below(129));
		/* mostly what the IR makes of a mapped prefix >= 96; sometimes left
		 * as IPv6 to exercise the projection of such a rule */
		if (n->prefix >= 96 && u_is_mapped(n->addr) && rnd_below(4)) {
			uint8_t v4[4];
			memcpy(v4, n->addr + 12, 4);
			memset(n->addr, 0, 16);
			memcpy(n->addr, v4, 4);
			n->family = IR_NET_IPV4;
			n->prefix = (uint8_t)(n->prefix - 96);
			w = 32;
		}
	}
	for (unsigned b = n->prefix; b < w; b++)
		n->addr[b / 8] &= (uint8_t)~(0x80u >> (b % 8));
	unsigned pk = rnd_below(8);
	if (pk == 0) {
		n->port_lo = 0;
		n->port_hi = 65535;
	} else {
		uint16_t a = ports[rnd_below(sizeof(ports) / sizeof(ports[0]))];
		uint16_t b = pk < 4 ? a : ports[rnd_below(sizeof(ports) / sizeof(ports[0]))];
		if (pk == 7)
			b = (uint16_t)(a + rnd_below(5));
		n->port_lo = a < b ? a : b;
		n->port_hi = a < b ? b : a;
	}
}

/* A query biased to land on the boundaries of the rules. */
static void random_query(const struct ir_rule *rules, size_t n, uint8_t u[16], uint16_t *port,
			 enum bee_net_dir *dir, enum ir_net_proto *proto)
{
	const struct ir_rule *r = n && rnd_below(8) ? &rules[rnd_below((unsigned)n)] : NULL;
	*dir = rnd_below(2) ? BEE_NET_CONNECT : BEE_NET_BIND;
	*proto = rnd_below(4) ? IR_NET_TCP : IR_NET_UDP;
	if (!r) {
		for (int i = 0; i < 16; i++)
			u[i] = (uint8_t)rnd();
		if (rnd_below(2))
			memcpy(u, (const uint8_t[12]){ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff }, 12);
		*port = (uint16_t)rnd();
		return;
	}
	if (rnd_below(4))
		*proto = r->net.proto;
	if (rnd_below(4))
		*dir = r->kind == IR_RULE_NET_BIND ? BEE_NET_BIND
			: r->kind == IR_RULE_NET_CONNECT ? BEE_NET_CONNECT : *dir;
	uint8_t a[16];
	unsigned len;
	oracle_rule_prefix(r, a, &len);
	u128 first = u_load(a);
	u128 span = len == 0 ? ~(u128)0 : (((u128)1 << (128 - len)) - 1);
	u128 last = first | span, x;
	switch (rnd_below(6)) {
	case 0:
		x = first;
		break;
	case 1:
		x = last;
		break;
	case 2:
		x = first - 1;
		break;
	case 3:
		x = last + 1;
		break;
	default: {
		u128 rr = (u128)rnd() << 64 | rnd();
		x = first | (rr & span);
	}
	}
	u_store(x, u);
	switch (rnd_below(6)) {
	case 0:
		*port = (uint16_t)(r->net.port_lo - 1);
		break;
	case 1:
		*port = r->net.port_lo;
		break;
	case 2:
		*port = r->net.port_hi;
		break;
	case 3:
		*port = (uint16_t)(r->net.port_hi + 1);
		break;
	default:
		*port = (uint16_t)(r->net.port_lo + rnd_below(r->net.port_hi - r->net.port_lo + 1u));
	}
}

static struct netset *random_set_build(const struct ir_rule *rules, size_t n)
{
	struct diag_ctx dc;
	struct netset *set;
	diag_init(&dc);
	int rc = netset_build(rules, n, NULL, &dc, &set);
	if (rc < 0)
		diag_print(&dc, stderr);
	assert_int_equal(rc, 0);
	diag_fini(&dc);
	return set;
}

#define PROPERTY_CASES 200000

static void test_property_lpm(void **state)
{
	(void)state;
	seed_init();
	unsigned long n4 = 0, n6 = 0, nmapped = 0, sets = 0;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (n4 < PROPERTY_CASES || n6 < PROPERTY_CASES || nmapped < PROPERTY_CASES) {
		struct ir_rule rules[40];
		/* mostly small sets, where boundaries meet often; sometimes deep ones */
		size_t n = rnd_below(8) ? rnd_below(13) : rnd_below(41);
		for (size_t i = 0; i < n; i++)
			random_rule(&rules[i], (unsigned)i);
		struct netset *set = random_set_build(rules, n);
		struct netset_image img;
		netset_image_build(set, &img);
		struct net_eval_maps m = netset_image_maps(&img);
		char err[256];
		if (net_eval_maps_check(&m, err, sizeof(err)) < 0)
			fail_msg("set %lu: bad maps: %s", sets, err);
		for (int qi = 0; qi < 16; qi++) {
			uint8_t u[16];
			uint16_t port;
			enum bee_net_dir dir;
			enum ir_net_proto proto;
			random_query(rules, n, u, &port, &dir, &proto);
			bool want = oracle_allows(rules, n, dir, u, port, proto);
			struct net_eval_decision d;
			bool mapped = u_is_mapped(u);
			/* the IPv6 form: mapped or not */
			assert_int_equal(net_eval_decide(&m, dir, 6, u, port, (uint8_t)proto, &d), 0);
			bool bad = d.allow != (int)want;
			if (mapped) {
				nmapped++;
				struct net_eval_decision d4;
				assert_int_equal(net_eval_decide(&m, dir, 4, u + 12, port, (uint8_t)proto, &d4), 0);
				bad |= d4.allow != (int)want;
				n4++;
			} else {
				n6++;
			}
			if (bad) {
				char a[NETADDR_ADDRSTRLEN];
				netaddr_format_addr(IR_NET_IPV6, u, a);
				fprintf(stderr, "rules:\n");
				for (size_t i = 0; i < n; i++) {
					char t[IR_NET_STRLEN];
					ir_net_format(&rules[i].net, t);
					fprintf(stderr, "  %s %s\n", ir_rule_kind_key(rules[i].kind), t);
				}
				netset_dump(set, stderr);
				fail_msg("set %lu: %s [%s]:%u/%s: brute force says %s", sets,
					 netset_dir_name(dir), a, port, proto == IR_NET_TCP ? "tcp" : "udp",
					 want ? "allow" : "deny");
			}
		}
		netset_image_free(&img);
		netset_free(set);
		sets++;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("test_netset: lpm vs brute force: %lu sets, %lu ipv4 + %lu mapped + %lu ipv6 cases in %.2fs\n",
	       sets, n4, nmapped, n6, (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
}

/* ---- random attenuation, checked exactly ------------------------------------------
 * The allowed sets are boolean combinations of boxes (prefix x port range),
 * so they are constant on the cells cut by every prefix's first address and
 * last + 1 (and the /96's) and every range's lo and hi + 1. Trying the first
 * corner of every cell decides subset exactly and finds the lowest offender. */

static void corners_add(u128 *xs, size_t *nx, u128 x)
{
	for (size_t i = 0; i < *nx; i++)
		if (xs[i] == x)
			return;
	xs[(*nx)++] = x;
}

static int u128_cmp(const void *a, const void *b)
{
	u128 x = *(const u128 *)a, y = *(const u128 *)b;
	return (x > y) - (x < y);
}

static int u16_cmp(const void *a, const void *b)
{
	return (int)*(const uint16_t *)a - (int)*(const uint16_t *)b;
}

static void random_child(const struct ir_rule *parent, size_t np, struct ir_rule *child, size_t *nc)
{
	*nc = 0;
	for (size_t i = 0; i < np; i++) {
		if (rnd_below(3) == 0)
			continue;
		struct ir_rule r = parent[i];
		r.index = (unsigned)*nc;
		if (r.kind != IR_RULE_NET_DENY && rnd_below(3) == 0) {
			/* narrow it: a longer prefix, a smaller range */
			unsigned w = r.net.family == IR_NET_IPV4 ? 32 : 128;
			if (r.net.prefix < w && rnd_below(2)) {
				unsigned b = r.net.prefix;
				r.net.prefix++;
				if (rnd_below(2))
					r.net.addr[b / 8] |= (uint8_t)(0x80u >> (b % 8));
			}
			if (r.net.port_lo < r.net.port_hi && rnd_below(2))
				r.net.port_lo++;
		}
		child[(*nc)++] = r;
	}
	unsigned extra = rnd_below(3);
	for (unsigned i = 0; i < extra; i++) {
		random_rule(&child[*nc], (unsigned)*nc);
		(*nc)++;
	}
}

static void test_property_subset(void **state)
{
	(void)state;
	seed_init();
	static const enum bee_net_dir dirs[] = { BEE_NET_CONNECT, BEE_NET_BIND };
	static const enum ir_net_proto protos[] = { IR_NET_TCP, IR_NET_UDP };
	unsigned long pairs = 0, subsets = 0;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (; pairs < 20000; pairs++) {
		struct ir_rule pr[8], cr[16];
		size_t np = rnd_below(9), nc;
		for (size_t i = 0; i < np; i++)
			random_rule(&pr[i], (unsigned)i);
		random_child(pr, np, cr, &nc);
		struct netset *parent = random_set_build(pr, np), *child = random_set_build(cr, nc);
		struct netset_cex cex;
		bool got = netset_subset(child, parent, &cex);

		/* the cell corners */
		u128 xs[2 * 24 + 4];
		uint16_t ys[2 * 24 + 2];
		size_t nx = 0, ny = 0;
		corners_add(xs, &nx, 0);
		corners_add(xs, &nx, (u128)0xffff << 32);
		corners_add(xs, &nx, (u128)0x10000 << 32);
		ys[ny++] = 0;
		for (size_t i = 0; i < np + nc; i++) {
			const struct ir_rule *r = i < np ? &pr[i] : &cr[i - np];
			uint8_t a[16];
			unsigned len;
			oracle_rule_prefix(r, a, &len);
			u128 first = u_load(a);
			u128 last = first | (len == 0 ? ~(u128)0 : (((u128)1 << (128 - len)) - 1));
			corners_add(xs, &nx, first);
			if (last != ~(u128)0)
				corners_add(xs, &nx, last + 1);
			ys[ny++] = r->net.port_lo;
			if (r->net.port_hi < 65535)
				ys[ny++] = (uint16_t)(r->net.port_hi + 1);
		}
		qsort(xs, nx, sizeof(xs[0]), u128_cmp);
		qsort(ys, ny, sizeof(ys[0]), u16_cmp);

		/* the first offender in the order netset_subset promises */
		bool want = true;
		u128 wx = 0;
		uint16_t wy = 0;
		enum bee_net_dir wd = BEE_NET_CONNECT;
		enum ir_net_proto wp = IR_NET_TCP;
		for (int part = 0; part < 2 && want; part++)
			for (size_t di = 0; di < 2 && want; di++)
				for (size_t pi = 0; pi < 2 && want; pi++)
					for (size_t xi = 0; xi < nx && want; xi++) {
						uint8_t u[16];
						u_store(xs[xi], u);
						if (u_is_mapped(u) != (part == 0))
							continue;
						for (size_t yi = 0; yi < ny && want; yi++)
							if (oracle_allows(cr, nc, dirs[di], u, ys[yi], protos[pi]) &&
							    !oracle_allows(pr, np, dirs[di], u, ys[yi], protos[pi])) {
								want = false;
								wx = xs[xi];
								wy = ys[yi];
								wd = dirs[di];
								wp = protos[pi];
							}
					}
		if (got != want)
			fail_msg("pair %lu: netset_subset says %d, the corners say %d", pairs, got, want);
		if (!want) {
			uint8_t u[16];
			if (cex.family == IR_NET_IPV4) {
				memset(u, 0, 16);
				u[10] = u[11] = 0xff;
				memcpy(u + 12, cex.addr, 4);
			} else {
				memcpy(u, cex.addr, 16);
			}
			if (u_load(u) != wx || cex.port != wy || cex.dir != wd || cex.proto != wp) {
				char g[NETSET_CEX_STRLEN], a[NETADDR_ADDRSTRLEN];
				netset_cex_format(&cex, g);
				u_store(wx, u);
				netaddr_format_addr(IR_NET_IPV6, u, a);
				fail_msg("pair %lu: counterexample %s, the corners say %s [%s]:%u/%u", pairs,
					 g, netset_dir_name(wd), a, wy, wp);
			}
			assert_true(oracle_allows(cr, nc, cex.dir, u, cex.port, cex.proto));
			assert_false(oracle_allows(pr, np, cex.dir, u, cex.port, cex.proto));
			/* the named child rule grants it; the named parent deny refuses it,
			 * and without one no parent grant has it */
			assert_non_null(cex.child_rule);
			assert_true(oracle_rule_has(cex.child_rule, u, cex.port, cex.proto));
			assert_int_equal(cex.child_rule->kind,
					 cex.dir == BEE_NET_CONNECT ? IR_RULE_NET_CONNECT : IR_RULE_NET_BIND);
			if (cex.parent_deny) {
				assert_int_equal(cex.parent_deny->kind, IR_RULE_NET_DENY);
				assert_true(oracle_rule_has(cex.parent_deny, u, cex.port, cex.proto));
			} else {
				struct ir_rule only[8];
				size_t k = 0;
				for (size_t i = 0; i < np; i++)
					if (pr[i].kind != IR_RULE_NET_DENY)
						only[k++] = pr[i];
				assert_false(oracle_allows(only, k, cex.dir, u, cex.port, cex.proto));
			}
		} else {
			subsets++;
		}
		netset_free(parent);
		netset_free(child);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("test_netset: subset vs cell corners: %lu pairs (%lu subsets) in %.2fs\n", pairs, subsets,
	       (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decide_table),
		cmocka_unit_test(test_dump_table),
		cmocka_unit_test(test_range_limit),
		cmocka_unit_test(test_determinism),
		cmocka_unit_test(test_subset_table),
		cmocka_unit_test(test_property_lpm),
		cmocka_unit_test(test_property_subset),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
