/* SPDX-License-Identifier: GPL-2.0-only */
/* Unit tests of [net] entry parsing: table-driven rows of {entry, normal
 * form} and {entry, error message part, byte span of the bad part, note}. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "netaddr.h"

static const struct {
	const char *entry, *normal;
} good_rows[] = {
	/* IPv4 */
	{ "127.0.0.1:8080", "127.0.0.1/32:8080/tcp" },
	{ "10.0.0.0/8:443", "10.0.0.0/8:443/tcp" },
	{ "0.0.0.0/0:53/udp", "0.0.0.0/0:53/udp" },
	{ "1.2.3.4:*", "1.2.3.4/32:*/tcp" },
	{ "1.2.3.4:0-65535", "1.2.3.4/32:*/tcp" },
	{ "1.2.3.4:1-1024/tcp", "1.2.3.4/32:1-1024/tcp" },
	{ "1.2.3.4:80-80", "1.2.3.4/32:80/tcp" },
	{ "127.0.0.1:0", "127.0.0.1/32:0/tcp" },
	{ "255.255.255.255/32:65535/udp", "255.255.255.255/32:65535/udp" },
	{ "192.168.0.0/16:*", "192.168.0.0/16:*/tcp" },
	{ "0.0.0.0/0:0", "0.0.0.0/0:0/tcp" },
	/* IPv6, every RFC 4291 text form, printed per RFC 5952 */
	{ "[::1]:1-1024", "[::1]/128:1-1024/tcp" },
	{ "[::]/0:443", "[::]/0:443/tcp" },
	{ "[::]:1", "[::]/128:1/tcp" },
	{ "[2001:db8::]/32:443", "[2001:db8::]/32:443/tcp" },
	{ "[2001:DB8:0:0:0:0:0:1]:443", "[2001:db8::1]/128:443/tcp" },
	{ "[2001:0db8:0000:0000:0000:0000:0000:0001]:443", "[2001:db8::1]/128:443/tcp" },
	{ "[2001:db8:0:0:1:0:0:1]:1", "[2001:db8::1:0:0:1]/128:1/tcp" },   /* first of two equal runs */
	{ "[2001:0:0:1:0:0:0:1]:1", "[2001:0:0:1::1]/128:1/tcp" },         /* the longest run */
	{ "[1:0:2:3:4:5:6:7]:1", "[1:0:2:3:4:5:6:7]/128:1/tcp" },           /* one zero group stays */
	{ "[1:2:3:4:5:6:7::]:1", "[1:2:3:4:5:6:7:0]/128:1/tcp" },
	{ "[::2:3:4:5:6:7:8]:1", "[0:2:3:4:5:6:7:8]/128:1/tcp" },
	{ "[1::]:1", "[1::]/128:1/tcp" },
	{ "[1:2:3:4:5:6:1.2.3.4]:1", "[1:2:3:4:5:6:102:304]/128:1/tcp" },
	{ "[::1.2.3.4]:1", "[::102:304]/128:1/tcp" },                      /* "compatible": stays IPv6 */
	{ "[fe80::]/10:22/udp", "[fe80::]/10:22/udp" },
	{ "[fd00:ec2::254]/128:*", "[fd00:ec2::254]/128:*/tcp" },
	/* IPv4-mapped: the IPv4 entry it maps */
	{ "[::ffff:10.1.2.3]:443", "10.1.2.3/32:443/tcp" },
	{ "[::ffff:10.0.0.0]/104:443", "10.0.0.0/8:443/tcp" },
	{ "[::ffff:0:0]/96:*", "0.0.0.0/0:*/tcp" },
	{ "[::FFFF:a01:203]:1/udp", "10.1.2.3/32:1/udp" },
	{ "[0:0:0:0:0:ffff:7f00:1]:80", "127.0.0.1/32:80/tcp" },
};

/* A row that fails is reported and the rest still run. */
#define ROW_FAIL(...) (print_error(__VA_ARGS__), print_error("\n"), failures++)

static void test_good(void **state)
{
	(void)state;
	int failures = 0;
	for (size_t i = 0; i < sizeof(good_rows) / sizeof(good_rows[0]); i++) {
		const char *e = good_rows[i].entry;
		struct ir_net net;
		struct netaddr_err err;
		char buf[IR_NET_STRLEN];
		if (netaddr_parse(e, strlen(e), &net, NULL, &err) != 0) {
			ROW_FAIL("'%s': unexpected error '%s'", e, err.msg);
			continue;
		}
		ir_net_format(&net, buf);
		if (strcmp(buf, good_rows[i].normal) != 0)
			ROW_FAIL("'%s': got '%s', want '%s'", e, buf, good_rows[i].normal);
		/* the normal form reads back as itself */
		struct ir_net again;
		if (netaddr_parse(buf, strlen(buf), &again, NULL, &err) != 0 ||
		    memcmp(&again, &net, sizeof(net)) != 0)
			ROW_FAIL("'%s': normal form '%s' does not read back", e, buf);
	}
	assert_int_equal(failures, 0);
}

static const struct {
	const char *entry, *msg;
	size_t off, len;
	const char *note;   /* part of the note, or NULL for no note */
} bad_rows[] = {
	{ "", "empty net entry", 0, 0, "ADDRESS[/PREFIX]:PORTS" },
	{ "example.com:443", "'example.com' is a host name", 0, 11, "for [net] connect only" },
	{ "db-1:5432", "'db-1' is a host name", 0, 4, "for [net] connect only" },
	{ "localhost:80", "'localhost' is a host name", 0, 9, "127.0.0.1" },
	{ "*:80", "'*' is not an address", 0, 1, "0.0.0.0/0" },
	{ ":80", "missing address", 0, 0, "0.0.0.0/0" },
	{ "10.1.2.3/8:443", "address has host bits set beyond /8; did you mean '10.0.0.0/8'?", 0, 10, NULL },
	{ "10.0.0.1/31:1", "did you mean '10.0.0.0/31'?", 0, 11, NULL },
	{ "[2001:db8::1]/32:1", "did you mean '[2001:db8::]/32'?", 0, 16, NULL },
	{ "[::ffff:10.1.0.0]/104:1", "beyond /104; did you mean '[::ffff:10.0.0.0]/104'?", 0, 21, NULL },
	{ "[::ffff:0:0]/80:1", "did you mean '[::]/80'?", 0, 15, NULL },
	{ "10.0.0.0/8", "missing port after '10.0.0.0/8'", 10, 0, "'10.0.0.0/8:443'" },
	{ "10.0.0.1:", "expected a port number", 9, 0, NULL },
	{ "10.0.0.1:x", "expected a port number, '*' or a range 'LO-HI', found 'x'", 9, 1, NULL },
	{ "10.0.0.1:8080-80", "port range '8080-80' is empty", 9, 7, "did you mean '80-8080'?" },
	{ "10.0.0.1:70000", "port 70000 is out of range (0-65535)", 9, 5, NULL },
	{ "10.0.0.1:1-9999999", "port 9999999 is out of range", 11, 7, NULL },
	{ "10.0.0.1:08", "port '08' has a leading zero", 9, 2, "'8'" },
	{ "10.0.0.1:80x", "unexpected 'x' after the port", 11, 1, NULL },
	{ "10.0.0.1:53/UDP", "unknown protocol 'UDP'", 12, 3, "did you mean 'udp'?" },
	{ "10.0.0.1:0/icmp", "unknown protocol 'icmp'", 11, 4, "'tcp' and 'udp'" },
	{ "10.0.0.1:53/", "expected 'tcp' or 'udp' after '/'", 12, 0, NULL },
	{ "10.0.0.1:53/tcp/x", "unexpected '/x' after the port", 15, 2, NULL },
	{ "10.0.0.0/33:1", "prefix length 33 is out of range for IPv4 (0-32)", 9, 2, NULL },
	{ "[::]/129:1", "prefix length 129 is out of range for IPv6 (0-128)", 5, 3, NULL },
	{ "10.0.0.0/:1", "expected a prefix length after '/'", 9, 1, NULL },
	{ "10.0.0.0/08:1", "prefix length '08' has a leading zero", 9, 2, NULL },
	{ "10.0.0.0/8x:1", "unexpected 'x' after the address", 10, 1, NULL },
	{ "10.1.1:1", "IPv4 address '10.1.1' has 3 parts, expected 4", 0, 6, "all four parts" },
	{ "1.2.3.4.5:1", "IPv4 address '1.2.3.4.5' has more than 4 parts", 0, 9, NULL },
	{ "1.2.3.256:1", "'256' is out of range for a part of an IPv4 address", 6, 3, NULL },
	{ "10.0.0.010:1", "'010' in an IPv4 address has a leading zero", 7, 3, "octal" },
	{ "1..2.3:1", "missing number in IPv4 address '1..2.3'", 2, 1, NULL },
	{ "1.2.3.4 :80", "unexpected space in net entry", 7, 1, NULL },
	{ "1.2.3.4\t:80", "unexpected byte 0x09 in net entry", 7, 1, NULL },
	{ "2001:db8::1:443", "IPv6 address must be written in brackets", 0, 15, "'[::1]:443'" },
	{ "::1:443", "IPv6 address must be written in brackets", 0, 7, "[ADDRESS]:PORT" },
	{ "[::1:1", "missing ']' after IPv6 address", 0, 1, NULL },
	{ "[]:1", "empty IPv6 address", 0, 2, "'[::]/0'" },
	{ "[2001:db8::/32]:443", "the prefix length goes after the brackets", 11, 3, "did you mean '[2001:db8::]/32'?" },
	{ "[fe80::1%eth0]:22", "zone index '%eth0' is not supported", 8, 5, "not interfaces" },
	{ "[2001::db8::1]:443", "'::' appears twice", 10, 2, NULL },
	{ "[1:2:3:4:5:6:7:8:9]:1", "has more than 8 groups", 1, 17, NULL },
	{ "[1:2:3]:1", "IPv6 address '1:2:3' has 3 groups, expected 8", 1, 5, "'::'" },
	{ "[1:2:3:4:5:6:7:8::]:1", "has 8 groups and a '::'", 1, 17, NULL },
	{ "[12345::]:1", "group '12345' of an IPv6 address has more than 4 hex digits", 1, 5, NULL },
	{ "[::g]:1", "unexpected 'g' in IPv6 address '::g'", 3, 1, NULL },
	{ "[:::1]:1", "unexpected ':' in IPv6 address ':::1'", 3, 1, NULL },
	{ "[:1]:1", "starts with a single ':'", 1, 1, NULL },
	{ "[1:]:1", "ends with a single ':'", 2, 1, NULL },
	{ "[::ffff:1.2.3]:1", "IPv4 address '1.2.3' has 3 parts", 8, 5, "all four parts" },
	{ "[1:2:3:4:5:6:7:1.2.3.4]:1", "has more than 8 groups", 1, 21, NULL },
	{ "[::1]x:1", "unexpected 'x' after the address", 5, 1, NULL },
	{ "[::1]", "missing port after '[::1]'", 5, 0, "'[::1]:443'" },
};

static void test_bad(void **state)
{
	(void)state;
	int failures = 0;
	for (size_t i = 0; i < sizeof(bad_rows) / sizeof(bad_rows[0]); i++) {
		const char *e = bad_rows[i].entry;
		struct ir_net net;
		struct netaddr_err err;
		if (netaddr_parse(e, strlen(e), &net, NULL, &err) == 0) {
			ROW_FAIL("'%s': parsed, want error '%s'", e, bad_rows[i].msg);
			continue;
		}
		if (!strstr(err.msg, bad_rows[i].msg))
			ROW_FAIL("'%s': error '%s', want '%s'", e, err.msg, bad_rows[i].msg);
		if (err.off != bad_rows[i].off || err.len != bad_rows[i].len)
			ROW_FAIL("'%s': span %zu+%zu, want %zu+%zu", e, err.off, err.len,
				 bad_rows[i].off, bad_rows[i].len);
		if (bad_rows[i].note ? !strstr(err.note, bad_rows[i].note) : err.note[0] != '\0')
			ROW_FAIL("'%s': note '%s', want '%s'", e, err.note,
				 bad_rows[i].note ? bad_rows[i].note : "");
	}
	assert_int_equal(failures, 0);
}

/* Only the protocol says whether it was written; the default is tcp. */
static void test_proto_given(void **state)
{
	(void)state;
	static const struct {
		const char *entry;
		bool given;
		enum ir_net_proto proto;
	} rows[] = {
		{ "1.2.3.4:1", false, IR_NET_TCP },
		{ "1.2.3.4:1/tcp", true, IR_NET_TCP },
		{ "1.2.3.4:1/udp", true, IR_NET_UDP },
		{ "[::1]:*", false, IR_NET_TCP },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct ir_net net;
		struct netaddr_err err;
		bool given = !rows[i].given;
		assert_int_equal(netaddr_parse(rows[i].entry, strlen(rows[i].entry), &net, &given, &err), 0);
		assert_int_equal(given, rows[i].given);
		assert_int_equal(net.proto, rows[i].proto);
	}
}

/* The parsed fields, not only their text. */
static void test_fields(void **state)
{
	(void)state;
	struct ir_net net;
	struct netaddr_err err;
	const char *e = "[2001:db8::ff00:42:8329]/128:1000-2000/udp";
	assert_int_equal(netaddr_parse(e, strlen(e), &net, NULL, &err), 0);
	static const uint8_t want[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0,
					  0, 0, 0xff, 0x00, 0x00, 0x42, 0x83, 0x29 };
	assert_int_equal(net.family, IR_NET_IPV6);
	assert_memory_equal(net.addr, want, 16);
	assert_int_equal(net.prefix, 128);
	assert_int_equal(net.port_lo, 1000);
	assert_int_equal(net.port_hi, 2000);
	assert_int_equal(net.proto, IR_NET_UDP);

	e = "[::ffff:192.0.2.128]/121:443";
	assert_int_equal(netaddr_parse(e, strlen(e), &net, NULL, &err), 0);
	static const uint8_t want4[16] = { 192, 0, 2, 128 };
	assert_int_equal(net.family, IR_NET_IPV4);
	assert_memory_equal(net.addr, want4, 16);
	assert_int_equal(net.prefix, 25);

	/* an entry need not be NUL-terminated: only len bytes are read */
	assert_int_equal(netaddr_parse("10.0.0.1:443junk", 12, &net, NULL, &err), 0);
	assert_int_equal(net.port_lo, 443);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_proto_given),
		cmocka_unit_test(test_fields),
	};
	return cmocka_run_group_tests_name("netaddr", tests, NULL, NULL);
}
