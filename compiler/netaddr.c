/* SPDX-License-Identifier: GPL-2.0-only */
/* netaddr.c: [net] entry text -> struct ir_net, with errors that point at
 * the exact bad part of the entry. */
#include "netaddr.h"
#include "hostname.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

struct parser {
	const char *s;
	size_t n;
	struct netaddr_err *err;
};

static void err_set(struct parser *p, size_t off, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void err_note(struct parser *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void err_set(struct parser *p, size_t off, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	p->err->off = off;
	p->err->len = len;
	vsnprintf(p->err->msg, sizeof(p->err->msg), fmt, ap);
	p->err->note[0] = '\0';
	va_end(ap);
}

static void err_note(struct parser *p, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p->err->note, sizeof(p->err->note), fmt, ap);
	va_end(ap);
}

#define SHOWLEN 64
static const char *show(char buf[SHOWLEN], const char *s, size_t n)
{
	return diag_quote(buf, SHOWLEN, s, n, true);
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static bool is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* Reads a decimal number of at most 6 digits at *i. Returns the number of
 * digits (0 when there is none) and the value in *v. */
static size_t read_decimal(struct parser *p, size_t *i, unsigned long *v)
{
	size_t start = *i;
	*v = 0;
	while (*i < p->n && is_digit(p->s[*i])) {
		if (*i - start < 6)
			*v = *v * 10 + (unsigned long)(p->s[*i] - '0');
		(*i)++;
	}
	if (*i - start > 6)
		*v = ~0ul;
	return *i - start;
}

/* Exactly s[start..end) as a dotted quad. */
static int parse_ipv4(struct parser *p, size_t start, size_t end, uint8_t out[4])
{
	char b1[SHOWLEN], b2[SHOWLEN];
	size_t i = start;
	for (int part = 0; part < 4; part++) {
		if (part > 0) {
			if (i >= end || p->s[i] != '.') {
				if (i < end) {
					err_set(p, i, 1, "unexpected '%s' in IPv4 address '%s'",
						show(b1, p->s + i, 1), show(b2, p->s + start, end - start));
					return -1;
				}
				err_set(p, start, end - start, "IPv4 address '%s' has %d parts, expected 4",
					show(b1, p->s + start, end - start), part);
				err_note(p, "bee does not read shortened forms; write all four parts, as in '10.0.0.1'");
				return -1;
			}
			i++;
		}
		size_t d0 = i;
		unsigned long v;
		size_t nd = read_decimal(p, &i, &v);
		if (i < end && p->s[i] != '.') {
			err_set(p, i, 1, "unexpected '%s' in IPv4 address '%s'",
				show(b1, p->s + i, 1), show(b2, p->s + start, end - start));
			return -1;
		}
		if (nd == 0) {
			err_set(p, i, i < end ? 1 : 0, "missing number in IPv4 address '%s'",
				show(b1, p->s + start, end - start));
			return -1;
		}
		if (v > 255) {
			err_set(p, d0, nd, "'%s' is out of range for a part of an IPv4 address (0-255)",
				show(b1, p->s + d0, nd));
			return -1;
		}
		if (nd > 1 && p->s[d0] == '0') {
			err_set(p, d0, nd, "'%s' in an IPv4 address has a leading zero",
				show(b1, p->s + d0, nd));
			err_note(p, "some tools read a leading zero as octal; write it as '%lu'", v);
			return -1;
		}
		out[part] = (uint8_t)v;
	}
	if (i != end) {
		if (p->s[i] == '.')
			err_set(p, start, end - start, "IPv4 address '%s' has more than 4 parts",
				show(b1, p->s + start, end - start));
		else
			err_set(p, i, 1, "unexpected '%s' in IPv4 address '%s'",
				show(b1, p->s + i, 1), show(b2, p->s + start, end - start));
		return -1;
	}
	return 0;
}

/* Exactly s[start..end) as an RFC 4291 text address. */
static int parse_ipv6(struct parser *p, size_t start, size_t end, uint8_t out[16])
{
	char b1[SHOWLEN], b2[SHOWLEN];
	const char *whole = show(b2, p->s + start, end - start);
	uint16_t w[8];
	int nw = 0, gap = -1;
	size_t i = start;

	if (start == end) {
		err_set(p, start - 1, 2, "empty IPv6 address");
		err_note(p, "write '[::]/0' for any IPv6 address");
		return -1;
	}
	if (p->s[i] == ':') {
		if (i + 1 < end && p->s[i + 1] == ':') {
			gap = 0;
			i += 2;
		} else {
			err_set(p, i, 1, "IPv6 address '%s' starts with a single ':'", whole);
			return -1;
		}
	}
	while (i < end) {
		size_t g = i;
		unsigned v = 0;
		while (i < end && hex_value(p->s[i]) >= 0) {
			if (i - g < 4)
				v = v * 16 + (unsigned)hex_value(p->s[i]);
			i++;
		}
		if (i < end && p->s[i] == '.') {
			uint8_t q[4];
			if (nw > 6) {
				err_set(p, start, end - start, "IPv6 address '%s' has more than 8 groups", whole);
				return -1;
			}
			if (parse_ipv4(p, g, end, q) < 0)
				return -1;
			w[nw++] = (uint16_t)(q[0] << 8 | q[1]);
			w[nw++] = (uint16_t)(q[2] << 8 | q[3]);
			i = end;
			break;
		}
		if (i == g) {
			/* only a third ':' or a stray character gets here */
			err_set(p, i, 1, "unexpected '%s' in IPv6 address '%s'",
				show(b1, p->s + i, 1), whole);
			return -1;
		}
		if (i - g > 4) {
			err_set(p, g, i - g, "group '%s' of an IPv6 address has more than 4 hex digits",
				show(b1, p->s + g, i - g));
			return -1;
		}
		if (nw == 8) {
			err_set(p, start, end - start, "IPv6 address '%s' has more than 8 groups", whole);
			return -1;
		}
		w[nw++] = (uint16_t)v;
		if (i == end)
			break;
		if (p->s[i] != ':') {
			err_set(p, i, 1, "unexpected '%s' in IPv6 address '%s'", show(b1, p->s + i, 1), whole);
			return -1;
		}
		i++;
		if (i < end && p->s[i] == ':') {
			if (gap >= 0) {
				err_set(p, i - 1, 2, "'::' appears twice in IPv6 address '%s'", whole);
				return -1;
			}
			gap = nw;
			i++;
		} else if (i == end) {
			err_set(p, i - 1, 1, "IPv6 address '%s' ends with a single ':'", whole);
			return -1;
		}
	}
	if (gap < 0 && nw != 8) {
		err_set(p, start, end - start, "IPv6 address '%s' has %d groups, expected 8", whole, nw);
		err_note(p, "write '::' for a run of zero groups, as in '2001:db8::1'");
		return -1;
	}
	if (gap >= 0 && nw > 7) {
		err_set(p, start, end - start,
			"IPv6 address '%s' has 8 groups and a '::', which stands for at least one more",
			whole);
		return -1;
	}
	int fill = 8 - nw;
	uint16_t full[8];
	int k = 0;
	for (int j = 0; j < nw; j++) {
		if (j == gap)
			for (int z = 0; z < fill; z++)
				full[k++] = 0;
		full[k++] = w[j];
	}
	if (gap == nw)
		for (int z = 0; z < fill; z++)
			full[k++] = 0;
	for (int j = 0; j < 8; j++) {
		out[2 * j] = (uint8_t)(full[j] >> 8);
		out[2 * j + 1] = (uint8_t)full[j];
	}
	return 0;
}

static bool is_mapped(const uint8_t a[16])
{
	static const uint8_t pfx[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	return memcmp(a, pfx, sizeof(pfx)) == 0;
}

void netaddr_format_addr(enum ir_net_family family, const uint8_t a[16], char *buf)
{
	switch (family) {
	case IR_NET_IPV4:
		sprintf(buf, "%u.%u.%u.%u", a[0], a[1], a[2], a[3]);
		return;
	case IR_NET_IPV6:
		break;
	}
	if (is_mapped(a)) {
		sprintf(buf, "::ffff:%u.%u.%u.%u", a[12], a[13], a[14], a[15]);
		return;
	}
	unsigned w[8];
	for (int i = 0; i < 8; i++)
		w[i] = (unsigned)a[2 * i] << 8 | a[2 * i + 1];
	/* RFC 5952: the longest run of two or more zero groups, the first one
	 * on a tie, becomes "::" */
	int best = -1, bestlen = 0;
	for (int i = 0; i < 8;) {
		if (w[i] != 0) {
			i++;
			continue;
		}
		int j = i;
		while (j < 8 && w[j] == 0)
			j++;
		if (j - i > bestlen && j - i >= 2) {
			best = i;
			bestlen = j - i;
		}
		i = j;
	}
	char *o = buf;
	for (int i = 0; i < 8;) {
		if (i == best) {
			o += sprintf(o, "::");
			i += bestlen;
			continue;
		}
		if (i > 0 && !(best >= 0 && i == best + bestlen))
			*o++ = ':';
		o += sprintf(o, "%x", w[i]);
		i++;
	}
	*o = '\0';
}

/* Where an unbracketed host ends: at the first ':' or '/'. */
static size_t host_end(const struct parser *p)
{
	size_t i = 0;
	while (i < p->n && p->s[i] != ':' && p->s[i] != '/')
		i++;
	return i;
}

/* Explains an unbracketed host that is not a dotted quad. */
static int bad_host(struct parser *p, size_t hend)
{
	char b1[SHOWLEN];
	size_t colons = 0;
	bool alpha = false, hexish = true;
	for (size_t i = 0; i < p->n; i++)
		colons += p->s[i] == ':';
	for (size_t i = 0; i < hend; i++) {
		char c = p->s[i];
		if (is_alpha(c) || c == '-' || c == '_')
			alpha = true;
		if (hex_value(c) < 0)
			hexish = false;
	}
	if (hend == 1 && p->s[0] == '*') {
		err_set(p, 0, 1, "'*' is not an address");
		err_note(p, "write '0.0.0.0/0' and '[::]/0' for any address");
		return -1;
	}
	if (colons >= 2 && hexish) {
		err_set(p, 0, p->n, "IPv6 address must be written in brackets");
		err_note(p, "write '[ADDRESS]:PORT' or '[ADDRESS]/PREFIX:PORT', as in '[::1]:443'");
		return -1;
	}
	if (hend == 0) {
		err_set(p, 0, 0, "missing address");
		err_note(p, "write '0.0.0.0/0' and '[::]/0' for any address");
		return -1;
	}
	if (alpha) {
		err_set(p, 0, hend, "'%s' is a host name, not an address", show(b1, p->s, hend));
		if (hend == 9 && memcmp(p->s, "localhost", 9) == 0)
			err_note(p, "write '127.0.0.1' or '[::1]' for the loopback interface");
		else
			err_note(p, "host names are for [net] connect only (the session's DNS admits their "
				    "addresses); write the address or a CIDR range");
		return -1;
	}
	for (size_t i = 0; i < hend; i++) {
		if (!is_digit(p->s[i]) && p->s[i] != '.') {
			err_set(p, i, 1, "unexpected '%s' in address", show(b1, p->s + i, 1));
			return -1;
		}
	}
	return 0;
}

static int parse_port(struct parser *p, size_t *i, uint16_t *port)
{
	char b1[SHOWLEN];
	size_t start = *i;
	unsigned long v;
	size_t nd = read_decimal(p, i, &v);
	if (nd == 0) {
		if (*i < p->n)
			err_set(p, *i, 1, "expected a port number, '*' or a range 'LO-HI', found '%s'",
				show(b1, p->s + *i, 1));
		else
			err_set(p, *i, 0, "expected a port number, '*' or a range 'LO-HI'");
		return -1;
	}
	if (v > 65535) {
		err_set(p, start, nd, "port %s is out of range (0-65535)", show(b1, p->s + start, nd));
		return -1;
	}
	if (nd > 1 && p->s[start] == '0') {
		err_set(p, start, nd, "port '%s' has a leading zero", show(b1, p->s + start, nd));
		err_note(p, "write it as '%lu'", v);
		return -1;
	}
	*port = (uint16_t)v;
	return 0;
}

/* ":PORTS[/PROTO]" from s[i] to the end of the entry into net. */
static int parse_ports_proto(struct parser *p, size_t i, struct ir_net *out, bool *proto_given)
{
	const char *s = p->s;
	size_t len = p->n;
	char b1[SHOWLEN], b2[SHOWLEN];
	bool given = false;
	struct ir_net net = *out;
	/* the ports */
	if (i == len) {
		err_set(p, len, 0, "missing port after '%s'", show(b1, s, len));
		err_note(p, "write ':PORT', ':LO-HI' or ':*' after the address, as in '%s:443'",
			 show(b1, s, len));
		return -1;
	}
	if (s[i] != ':') {
		err_set(p, i, 1, "unexpected '%s' after the address; expected ':' and a port",
			show(b1, s + i, 1));
		return -1;
	}
	i++;
	if (i < len && s[i] == '*') {
		net.port_lo = 0;
		net.port_hi = 65535;
		i++;
	} else {
		size_t p0 = i;
		if (parse_port(p, &i, &net.port_lo) < 0)
			return -1;
		net.port_hi = net.port_lo;
		if (i < len && s[i] == '-') {
			i++;
			size_t h0 = i;
			if (parse_port(p, &i, &net.port_hi) < 0)
				return -1;
			if (net.port_hi < net.port_lo) {
				err_set(p, p0, i - p0, "port range '%s' is empty", show(b1, s + p0, i - p0));
				err_note(p, "did you mean '%s-%.*s'?", show(b2, s + h0, i - h0),
					 (int)(h0 - 1 - p0), s + p0);
				return -1;
			}
		}
	}

	/* the protocol */
	net.proto = IR_NET_TCP;
	if (i < len && s[i] == '/') {
		size_t w0 = ++i;
		given = true;
		while (i < len && s[i] != '/' && s[i] != ':')
			i++;
		size_t wl = i - w0;
		if (wl == 3 && memcmp(s + w0, "tcp", 3) == 0) {
			net.proto = IR_NET_TCP;
		} else if (wl == 3 && memcmp(s + w0, "udp", 3) == 0) {
			net.proto = IR_NET_UDP;
		} else if (wl == 0) {
			err_set(p, w0, i < len ? 1 : 0, "expected 'tcp' or 'udp' after '/'");
			return -1;
		} else {
			/* only a change of case gets a suggestion: "tcp" is no typo of "icmp" */
			char word[4] = { 0 };
			for (size_t k = 0; k < 3 && wl == 3; k++)
				word[k] = (char)(s[w0 + k] >= 'A' && s[w0 + k] <= 'Z' ? s[w0 + k] - 'A' + 'a' : s[w0 + k]);
			err_set(p, w0, wl, "unknown protocol '%s'", show(b1, s + w0, wl));
			if (strcmp(word, "tcp") == 0 || strcmp(word, "udp") == 0)
				err_note(p, "did you mean '%s'?", word);
			else
				err_note(p, "bee enforces 'tcp' and 'udp'");
			return -1;
		}
	}
	if (i < len) {
		err_set(p, i, len - i, "unexpected '%s' after the port", show(b1, s + i, len - i));
		return -1;
	}

	*out = net;
	*proto_given = given;
	return 0;
}

int netaddr_parse(const char *s, size_t len, struct ir_net *out, bool *proto_given,
		  struct netaddr_err *err)
{
	bool given = false;
	struct parser p = { .s = s, .n = len, .err = err };
	char b1[SHOWLEN], b2[SHOWLEN];
	struct ir_net net;
	memset(&net, 0, sizeof(net));
	memset(err, 0, sizeof(*err));

	if (len == 0) {
		err_set(&p, 0, 0, "empty net entry");
		err_note(&p, "write ADDRESS[/PREFIX]:PORTS[/PROTO], as in '10.0.0.0/8:443'");
		return -1;
	}
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c <= 0x20 || c >= 0x7f) {
			err_set(&p, i, 1, c == ' ' ? "unexpected space in net entry"
						   : "unexpected byte 0x%02x in net entry", c);
			return -1;
		}
	}

	/* the address */
	size_t i, addr_start = 0, addr_end;
	unsigned maxp;
	if (s[0] == '[') {
		size_t rb = 1;
		while (rb < len && s[rb] != ']')
			rb++;
		if (rb == len) {
			err_set(&p, 0, 1, "missing ']' after IPv6 address");
			return -1;
		}
		for (size_t k = 1; k < rb; k++) {
			if (s[k] == '%') {
				err_set(&p, k, rb - k, "zone index '%s' is not supported",
					show(b1, s + k, rb - k));
				err_note(&p, "bee matches addresses, not interfaces; drop the zone index");
				return -1;
			}
			if (s[k] == '/') {
				err_set(&p, k, rb - k, "the prefix length goes after the brackets");
				err_note(&p, "did you mean '[%s]%s'?", show(b1, s + 1, k - 1),
					 show(b2, s + k, rb - k));
				return -1;
			}
		}
		if (parse_ipv6(&p, 1, rb, net.addr) < 0)
			return -1;
		net.family = IR_NET_IPV6;
		maxp = 128;
		i = addr_end = rb + 1;
	} else {
		size_t hend = host_end(&p);
		if (bad_host(&p, hend) < 0)
			return -1;
		if (parse_ipv4(&p, 0, hend, net.addr) < 0)
			return -1;
		net.family = IR_NET_IPV4;
		maxp = 32;
		i = addr_end = hend;
	}

	/* the prefix */
	net.prefix = (uint8_t)maxp;
	if (i < len && s[i] == '/') {
		size_t d0 = ++i;
		unsigned long v;
		size_t nd = read_decimal(&p, &i, &v);
		if (nd == 0) {
			err_set(&p, d0, i < len ? 1 : 0, "expected a prefix length after '/'");
			return -1;
		}
		if (v > maxp) {
			err_set(&p, d0, nd, "prefix length %s is out of range for %s (0-%u)",
				show(b1, s + d0, nd), maxp == 32 ? "IPv4" : "IPv6", maxp);
			return -1;
		}
		if (nd > 1 && s[d0] == '0') {
			err_set(&p, d0, nd, "prefix length '%s' has a leading zero", show(b1, s + d0, nd));
			return -1;
		}
		net.prefix = (uint8_t)v;
		addr_end = i;
	}

	if (parse_ports_proto(&p, i, &net, &given) < 0)
		return -1;

	/* host bits beyond the prefix */
	unsigned bits = net.family == IR_NET_IPV4 ? 32 : 128;
	uint8_t masked[16];
	memcpy(masked, net.addr, sizeof(masked));
	for (unsigned b = net.prefix; b < bits; b++)
		masked[b / 8] &= (uint8_t)~(0x80u >> (b % 8));
	if (memcmp(masked, net.addr, sizeof(masked)) != 0) {
		char a[NETADDR_ADDRSTRLEN];
		netaddr_format_addr(net.family, masked, a);
		err_set(&p, addr_start, addr_end - addr_start,
			"address has host bits set beyond /%u; did you mean '%s%s%s/%u'?",
			net.prefix, net.family == IR_NET_IPV6 ? "[" : "", a,
			net.family == IR_NET_IPV6 ? "]" : "", net.prefix);
		return -1;
	}

	/* ::ffff:a.b.c.d/P (P >= 96) is the IPv4 entry a.b.c.d/(P-96) */
	if (net.family == IR_NET_IPV6 && net.prefix >= 96 && is_mapped(net.addr)) {
		uint8_t v4[4];
		memcpy(v4, net.addr + 12, 4);
		memset(net.addr, 0, sizeof(net.addr));
		memcpy(net.addr, v4, 4);
		net.family = IR_NET_IPV4;
		net.prefix = (uint8_t)(net.prefix - 96);
	}
	*out = net;
	if (proto_given)
		*proto_given = given;
	return 0;
}

bool netaddr_is_host(const char *s, size_t len)
{
	size_t hend = 0;
	bool name = false;
	if (len && s[0] == '[')
		return false;
	while (hend < len && s[hend] != ':' && s[hend] != '/')
		hend++;
	if (hend == 9 && memcmp(s, "localhost", 9) == 0)
		return false;
	for (size_t i = 0; i < hend; i++) {
		unsigned char c = (unsigned char)s[i];
		name |= is_alpha((char)c) || c >= 0x80 || (c == '*' && i + 1 < hend && s[i + 1] == '.');
	}
	return name;
}

int netaddr_parse_host(const char *s, size_t len, char *name, struct ir_host *out, bool *proto_given,
		       struct netaddr_err *err)
{
	struct parser p = { .s = s, .n = len, .err = err };
	struct ir_net net;
	bool given = false;
	memset(&net, 0, sizeof(net));
	memset(err, 0, sizeof(*err));
	size_t hend = host_end(&p);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c <= 0x20 || c == 0x7f || (c >= 0x80 && i >= hend)) {
			err_set(&p, i, 1, c == ' ' ? "unexpected space in net entry"
						   : "unexpected byte 0x%02x in net entry", c);
			return -1;
		}
	}
	if (hostname_check(s, hend, name, err) < 0)
		return -1;
	if (hend < len && s[hend] == '/') {
		err_set(&p, hend, 1, "a host name has no prefix length");
		err_note(&p, "write 'NAME:PORTS', as in 'api.github.com:443'");
		return -1;
	}
	if (parse_ports_proto(&p, hend, &net, &given) < 0)
		return -1;
	*out = (struct ir_host){ .name = name, .port_lo = net.port_lo, .port_hi = net.port_hi, .proto = net.proto };
	if (proto_given)
		*proto_given = given;
	return 0;
}
