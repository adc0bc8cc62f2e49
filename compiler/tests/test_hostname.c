/* SPDX-License-Identifier: GPL-2.0-only */
/* Unit tests of host names in [net] connect: the name rules (IDNA2008's
 * checks on the text, Punycode both ways), the entries' normal forms and
 * errors, the matcher the DNS stub runs, and attenuation with names. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attenuate.h"
#include "bee_hosts.h"
#include "hostname.h"
#include "lower.h"
#include "netaddr.h"
#include "schema.h"
#include "toml.h"

static const struct {
	const char *entry, *normal;
} good_rows[] = {
	{ "api.github.com:443", "api.github.com:443/tcp" },
	{ "API.GitHub.COM:443", "api.github.com:443/tcp" },
	{ "*.githubusercontent.com:443", "*.githubusercontent.com:443/tcp" },
	{ "registry.npmjs.org:1-1024/udp", "registry.npmjs.org:1-1024/udp" },
	{ "a.b:*", "a.b:*/tcp" },
	{ "x-y.z9:80", "x-y.z9:80/tcp" },
	{ "localhost.localdomain:80", "localhost.localdomain:80/tcp" },
	{ "1.2.3.example:80", "1.2.3.example:80/tcp" },
	{ "host:22", "host:22/tcp" },                                  /* one label */
	{ "xn--bcher-kva.example:443", "xn--bcher-kva.example:443/tcp" },   /* bücher */
	{ "xn--mnchen-3ya.de:443", "xn--mnchen-3ya.de:443/tcp" },           /* münchen */
	{ "*.xn--fiqs8s:443", "*.xn--fiqs8s:443/tcp" },                     /* 中国 */
};

static void test_good(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(good_rows) / sizeof(good_rows[0]); i++) {
		const char *s = good_rows[i].entry;
		char name[HOSTNAME_BUFLEN], text[IR_HOST_STRLEN];
		struct ir_host h;
		struct netaddr_err e;
		assert_true(netaddr_is_host(s, strlen(s)));
		if (netaddr_parse_host(s, strlen(s), name, &h, NULL, &e) < 0)
			fail_msg("'%s': %s", s, e.msg);
		ir_host_format(&h, text);
		assert_string_equal(text, good_rows[i].normal);
	}
}

static const struct {
	const char *entry, *msg;   /* msg: a part of the message */
	size_t off, len;           /* the bad part */
	const char *note;          /* a part of the note, or NULL */
} bad_rows[] = {
	{ "a..b:443", "empty label", 2, 0, NULL },
	{ ".a.b:443", "empty label", 0, 0, NULL },
	{ "a.b.:443", "ends with '.'", 3, 1, "final dot" },
	{ "a.*.b:443", "whole leftmost label", 2, 1, NULL },
	{ "*a.b:443", "whole leftmost label", 0, 1, NULL },
	{ "a*.b:443", "whole leftmost label", 1, 1, NULL },
	{ "*.*.b:443", "whole leftmost label", 2, 1, NULL },
	{ "-a.b:443", "starts with '-'", 0, 1, NULL },
	{ "a-.b:443", "ends with '-'", 1, 1, NULL },
	{ "a_b.c:443", "'_' is not allowed", 1, 1, "letters, digits" },
	{ "ab--c.d:443", "IDNA reserves", 0, 5, NULL },
	{ "xn--zzzz-.example:443", "ends with '-'", 8, 1, NULL },
	{ "xn--abc.example:443", "IDNA disallows", 0, 7, NULL },              /* a C1 control */
	{ "xn--abc-.example:443", "ends with '-'", 7, 1, NULL },
	{ "xn--ab-.example:443", "ends with '-'", 6, 1, NULL },
	{ "xn--99999999999.example:443", "not a valid A-label", 0, 15, NULL }, /* overflow */
	{ "b\xc3\xbc" "cher.example:443", "is not ASCII", 0, 15, "xn--bcher-kva.example" },
	{ "\xff.example:443", "is not ASCII", 0, 9, "not UTF-8" },
	{ "a.b.123:443", "all digits", 4, 3, NULL },
	{ "api.github.com", "missing port", 14, 0, NULL },
	{ "api.github.com/24:443", "no prefix length", 14, 1, NULL },
	{ "api.github.com:443/icmp", "unknown protocol", 19, 4, NULL },
	{ "a.b:99999", "out of range", 4, 5, NULL },
	{ "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.b:1", "longer than DNS", 0, 64, NULL },
};

static void test_bad(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bad_rows) / sizeof(bad_rows[0]); i++) {
		const char *s = bad_rows[i].entry;
		char name[HOSTNAME_BUFLEN];
		struct ir_host h;
		struct netaddr_err e;
		if (netaddr_parse_host(s, strlen(s), name, &h, NULL, &e) == 0)
			fail_msg("'%s' was accepted as '%s'", s, name);
		if (!strstr(e.msg, bad_rows[i].msg))
			fail_msg("'%s': message '%s' lacks '%s'", s, e.msg, bad_rows[i].msg);
		if (e.off != bad_rows[i].off || e.len != bad_rows[i].len)
			fail_msg("'%s': span %zu+%zu, expected %zu+%zu (%s)", s, e.off, e.len, bad_rows[i].off,
				 bad_rows[i].len, e.msg);
		if (bad_rows[i].note && !strstr(e.note, bad_rows[i].note))
			fail_msg("'%s': note '%s' lacks '%s'", s, e.note, bad_rows[i].note);
	}
}

/* A name too long in all (254 bytes) is refused, 253 is fine. */
static void test_length(void **state)
{
	(void)state;
	char s[300], name[HOSTNAME_BUFLEN];
	struct netaddr_err e;
	/* 63 + 1 + 63 + 1 + 63 + 1 + 61 = 253 */
	memset(s, 'a', 253);
	s[63] = s[127] = s[191] = '.';
	s[253] = '\0';
	assert_int_equal(hostname_check(s, 253, name, &e), 0);
	assert_int_equal(strlen(name), 253);
	memset(s, 'a', 254);
	s[63] = s[127] = s[191] = '.';
	assert_int_equal(hostname_check(s, 254, name, &e), -1);
	assert_non_null(strstr(e.msg, "more than DNS allows"));
}

/* Addresses stay addresses: they go to netaddr_parse, not here. */
static void test_is_host(void **state)
{
	(void)state;
	static const char *const addrs[] = { "10.0.0.0/8:443", "[::1]:1", "1.2.3.4:*", "*:443", "localhost:80",
					     ":443", "1.2.3:80" };
	for (size_t i = 0; i < sizeof(addrs) / sizeof(addrs[0]); i++)
		if (netaddr_is_host(addrs[i], strlen(addrs[i])))
			fail_msg("'%s' read as a host name", addrs[i]);
}

/* RFC 3492 section 7.1 samples and round trips. */
static void test_punycode(void **state)
{
	(void)state;
	static const struct {
		unsigned cp[16];
		size_t n;
		const char *pc;
	} rows[] = {
		{ { 0x0062, 0x00fc, 0x0063, 0x0068, 0x0065, 0x0072 }, 6, "bcher-kva" },
		{ { 'm', 0x00fc, 'n', 'c', 'h', 'e', 'n' }, 7, "mnchen-3ya" },
		/* RFC 3492 7.1 (L): 3<nen>B<gumi><kinpachi><sensei> */
		{ { 0x0033, 0x5E74, 0x0042, 0x7D44, 0x91D1, 0x516B, 0x5148, 0x751F }, 8, "3B-ww4c5e180e575a65lsy2b" },
		{ { 0x4e2d, 0x56fd }, 2, "fiqs8s" },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char out[128];
		unsigned back[64];
		assert_int_equal(hostname_punycode_encode(rows[i].cp, rows[i].n, out, sizeof(out)), 0);
		assert_string_equal(out, rows[i].pc);
		long n = hostname_punycode_decode(out, strlen(out), back, 64);
		assert_int_equal(n, (long)rows[i].n);
		assert_memory_equal(back, rows[i].cp, rows[i].n * sizeof(unsigned));
	}
	unsigned cp[4];
	assert_int_equal(hostname_punycode_decode("a!", 2, cp, 4), -1);
	char small[4];
	assert_int_equal(hostname_punycode_encode(rows[0].cp, rows[0].n, small, sizeof(small)), -1);
}

/* The stub's matcher and the proof's covering. */
static void test_match(void **state)
{
	(void)state;
	static const struct {
		const char *pat, *name;
		bool match;
	} rows[] = {
		{ "api.github.com", "api.github.com", true },
		{ "api.github.com", "github.com", false },
		{ "api.github.com", "x.api.github.com", false },
		{ "*.github.com", "api.github.com", true },
		{ "*.github.com", "a.b.github.com", true },
		{ "*.github.com", "github.com", false },
		{ "*.github.com", "xgithub.com", false },
		{ "*.github.com", "evilgithub.com", false },
		{ "*.github.com", ".github.com", false },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		if (bee_host_match(rows[i].pat, rows[i].name, strlen(rows[i].name)) != rows[i].match)
			fail_msg("'%s' vs '%s'", rows[i].pat, rows[i].name);
	assert_true(bee_host_covers("*.github.com", "*.github.com"));
	assert_true(bee_host_covers("*.github.com", "*.api.github.com"));
	assert_true(bee_host_covers("*.github.com", "api.github.com"));
	assert_false(bee_host_covers("api.github.com", "*.github.com"));
	assert_false(bee_host_covers("*.api.github.com", "*.github.com"));
	assert_false(bee_host_covers("*.github.com", "github.com"));
}

/* ---- attenuation ----------------------------------------------------------------------- */

struct compiled {
	struct source *src;
	struct toml_doc *doc;
	struct ir_policy *ir;
	struct lowered *lw;
};

static int compile(const char *net, struct compiled *c)
{
	static char text[BEE_HOSTS_MAX * 16 + 128];
	snprintf(text, sizeof(text), "version = 1\nname = \"t\"\n[net]\n%s\n", net);
	memset(c, 0, sizeof(*c));
	struct diag_ctx dc;
	diag_init(&dc);
	c->src = source_new("t.toml", text, strlen(text));
	struct schema_opts so = { .sz = sizeof(so) };
	int rc = toml_parse(c->src, &dc, &c->doc) == 0 && schema_build(c->doc, &so, &dc, &c->ir) == 0 &&
			 lower_policy(c->ir, NULL, &dc, &c->lw) == 0
		 ? 0
		 : -1;
	if (rc < 0)
		diag_print(&dc, stderr);
	diag_fini(&dc);
	return rc;
}

static void compiled_free(struct compiled *c)
{
	lowered_free(c->lw);
	ir_policy_free(c->ir);
	toml_doc_free(c->doc);
	source_free(c->src);
}

static const struct {
	const char *parent, *child;
	bool subset;
	const char *example;   /* the widening's example, when not a subset */
} att_rows[] = {
	{ "connect = [\"api.github.com:443\"]", "connect = [\"api.github.com:443\"]", true, NULL },
	{ "connect = [\"*.github.com:443\"]", "connect = [\"api.github.com:443\", \"*.x.github.com:443\"]", true, NULL },
	{ "connect = [\"*.github.com:1-1024\"]", "connect = [\"api.github.com:443\"]", true, NULL },
	{ "connect = [\"*.github.com:1-100\", \"*.github.com:101-200\"]", "connect = [\"a.github.com:50-150\"]", true, NULL },
	{ "connect = [\"api.github.com:443\"]", "connect = [\"*.github.com:443\"]", false, "*.github.com:443/tcp" },
	{ "connect = [\"api.github.com:443\"]", "connect = [\"api.github.com:80-443\"]", false, "api.github.com:80/tcp" },
	{ "connect = [\"api.github.com:443\"]", "connect = [\"api.github.com:443/udp\"]", false, "api.github.com:443/udp" },
	{ "connect = [\"*.github.com:443\"]", "connect = [\"github.com:443\"]", false, "github.com:443/tcp" },
	/* a name never matches an address rule, nor the reverse */
	{ "connect = [\"0.0.0.0/0:443\", \"[::]/0:443\"]", "connect = [\"api.github.com:443\"]", false, "api.github.com:443/tcp" },
	{ "connect = [\"*.github.com:*\"]", "connect = [\"140.82.112.3:443\"]", false, NULL },
	/* a parent deny the name could cross must be the child's too */
	{ "connect = [\"*.github.com:443\"]\ndeny = [\"10.0.0.0/8:*\"]", "connect = [\"api.github.com:443\"]", false, "api.github.com:443/tcp" },
	{ "connect = [\"*.github.com:443\"]\ndeny = [\"10.0.0.0/8:*\"]", "connect = [\"api.github.com:443\"]\ndeny = [\"10.0.0.0/7:*\"]", true, NULL },
	{ "connect = [\"*.github.com:443\"]\ndeny = [\"10.0.0.0/8:22\"]", "connect = [\"api.github.com:443\"]", true, NULL },
};

static void test_attenuate(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(att_rows) / sizeof(att_rows[0]); i++) {
		struct compiled p, c;
		assert_int_equal(compile(att_rows[i].parent, &p), 0);
		assert_int_equal(compile(att_rows[i].child, &c), 0);
		struct attenuate_widening w;
		int wide = attenuate_domain(c.lw, p.lw, IR_DOMAIN_NET, &w);
		if (wide == att_rows[i].subset)
			fail_msg("row %zu: parent '%s' child '%s': %s", i, att_rows[i].parent, att_rows[i].child,
				 wide ? "widens" : "proved a subset");
		if (wide && att_rows[i].example) {
			assert_true(w.host);
			assert_string_equal(w.example, att_rows[i].example);
		}
		compiled_free(&c);
		compiled_free(&p);
	}
}

/* bind and deny take addresses only; the limit on names is an error. */
static void test_schema(void **state)
{
	(void)state;
	struct compiled c;
	assert_int_equal(compile("bind = [\"a.example:80\"]", &c), -1);
	compiled_free(&c);
	assert_int_equal(compile("deny = [\"a.example:80\"]", &c), -1);
	compiled_free(&c);
	char net[BEE_HOSTS_MAX * 16 + 64];
	size_t o = (size_t)snprintf(net, sizeof(net), "connect = [");
	for (int i = 0; i <= BEE_HOSTS_MAX; i++)
		o += (size_t)snprintf(net + o, sizeof(net) - o, "%s\"h%d.e:1\"", i ? "," : "", i);
	snprintf(net + o, sizeof(net) - o, "]");
	assert_int_equal(compile(net, &c), -1);
	compiled_free(&c);
	o = (size_t)snprintf(net, sizeof(net), "connect = [");
	for (int i = 0; i < BEE_HOSTS_MAX; i++)
		o += (size_t)snprintf(net + o, sizeof(net) - o, "%s\"h%d.e:1\"", i ? "," : "", i);
	snprintf(net + o, sizeof(net) - o, "]");
	assert_int_equal(compile(net, &c), 0);
	assert_int_equal(c.lw->nhosts, BEE_HOSTS_MAX);
	compiled_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),     cmocka_unit_test(test_bad),       cmocka_unit_test(test_length),
		cmocka_unit_test(test_is_host),  cmocka_unit_test(test_punycode),  cmocka_unit_test(test_match),
		cmocka_unit_test(test_attenuate), cmocka_unit_test(test_schema),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
