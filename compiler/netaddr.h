/* SPDX-License-Identifier: GPL-2.0-only */
/* netaddr.h: one [net] entry of a policy -> struct ir_net.
 *
 * The forms are
 *
 *   A.B.C.D[/P]:PORTS[/tcp|/udp]
 *   [IPv6][/P]:PORTS[/tcp|/udp]        any RFC 4291 text form, "::" and an
 *                                      embedded dotted quad included
 *
 * with PORTS one of N, LO-HI or '*'; the protocol defaults to tcp. An
 * IPv4-mapped address (::ffff:a.b.c.d) with a prefix of at least 96 becomes
 * the IPv4 entry it maps. An address with host bits set beyond its prefix,
 * a host name and an unbracketed IPv6 address are errors here; a host
 * name of [net] connect goes to netaddr_parse_host instead (the session's
 * DNS stub admits its addresses at run time: loader/dns.c).
 *
 * Nothing here allocates; errors are reported in a caller-owned record.
 */
#ifndef BEE_NETADDR_H
#define BEE_NETADDR_H

#include "ir.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NETADDR_MSGLEN 256

/* Why an entry was refused: the bad part as a byte span of the entry (len 0
 * means "at this position", e.g. a missing port at the end), a message and
 * an optional note (empty when there is nothing to add). */
struct netaddr_err {
	size_t off, len;
	char msg[NETADDR_MSGLEN];
	char note[NETADDR_MSGLEN];
};

/* Parses s[0..len). Returns 0 and fills *out (and *proto_given, when not
 * NULL: whether the entry named its protocol), or -1 and fills *err. */
int netaddr_parse(const char *s, size_t len, struct ir_net *out, bool *proto_given,
		  struct netaddr_err *err);

/* true when the entry's host part is a host name (it has a letter, a '*'
 * before a '.', or a byte beyond ASCII) rather than an address; "localhost"
 * and a lone '*' stay addresses, which netaddr_parse explains. */
bool netaddr_is_host(const char *s, size_t len);

/* Parses NAME:PORTS[/tcp|/udp] (compiler/hostname.h says what NAME may
 * be). The canonical name goes to name (HOSTNAME_BUFLEN bytes), which
 * out->name points at. Returns 0 or -1 with *err. */
int netaddr_parse_host(const char *s, size_t len, char *name, struct ir_host *out, bool *proto_given,
		       struct netaddr_err *err);

/* The address alone in its normal text form: dotted quad, or RFC 5952 IPv6
 * (lowercase, longest zero run as "::", ::ffff:a.b.c.d for mapped) without
 * brackets. buf holds at least NETADDR_ADDRSTRLEN bytes. */
#define NETADDR_ADDRSTRLEN 48
void netaddr_format_addr(enum ir_net_family family, const uint8_t addr[16], char *buf);

#endif
