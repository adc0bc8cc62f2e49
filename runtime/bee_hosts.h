/* SPDX-License-Identifier: GPL-2.0-only */
/* bee_hosts.h: the host names of a policy's [net] connect, as the pack
 * carries them for the session's DNS stub (loader/dns.c).
 *
 * The image bee_hosts (runtime/bee_names.h: an image without a BPF map)
 * holds fixed records of struct bee_host_rec, in the policy's order:
 *
 *   BEE_HOST_NAME  a host name grant: the name in canonical form (lower
 *                  case A-labels, no final dot; "*.example.com" for a
 *                  wildcard), a protocol and one port range, and the
 *                  index of the rule that wrote it
 *   BEE_HOST_DENY  a [net] deny of the policy (its address, prefix,
 *                  protocol and ports): the stub takes these out of what a
 *                  name admits, as the compiler takes them out of every
 *                  address grant, so a deny beats a name too
 *
 * A wildcard "*.d" matches every name of one or more labels below d, never
 * d itself (docs/decisions.md, "Host names"). Names compare byte for byte
 * after the stub lowers the asked name's ASCII letters: both sides are in
 * canonical form.
 *
 * Compiled by the host compiler only (the BPF programs never read names).
 */
#ifndef BEE_HOSTS_H
#define BEE_HOSTS_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#define BEE_HOST_NAME_MAX 253       /* a DNS name's text without the final dot */
#define BEE_HOST_LABEL_MAX 63

/* What the compiler refuses above (a limit hit is an error naming the rule). */
#define BEE_HOSTS_MAX 256

enum bee_host_kind {
	BEE_HOST_NAME = 1,
	BEE_HOST_DENY = 2,
};

struct bee_host_rec {
	__u8 kind;                  /* enum bee_host_kind */
	__u8 proto;                 /* BEE_NET_PROTO_* */
	__u8 family;                /* deny: 4 or 6; name: 0 */
	__u8 prefix;                /* deny: 0..32 or 0..128 */
	__u16 port_lo, port_hi;     /* inclusive, host byte order */
	__u32 rule;                 /* the policy rule's index */
	__u8 addr[16];              /* deny: network byte order (IPv4 in addr[0..3]) */
	char name[BEE_HOST_NAME_MAX + 3];   /* name: NUL-terminated and NUL-padded */
};

_Static_assert(sizeof(struct bee_host_rec) == 284, "bee_host_rec size");
_Static_assert(__builtin_offsetof(struct bee_host_rec, rule) == 8, "bee_host_rec rule");
_Static_assert(__builtin_offsetof(struct bee_host_rec, addr) == 12, "bee_host_rec addr");
_Static_assert(__builtin_offsetof(struct bee_host_rec, name) == 28, "bee_host_rec name");

/* 1 when the canonical name (len bytes, no final dot) matches the
 * canonical pattern pat (a name, or "*." and a name). */
static inline bool bee_host_match(const char *pat, const char *name, size_t len)
{
	size_t pl = strlen(pat);
	if (pl >= 2 && pat[0] == '*' && pat[1] == '.') {
		/* one label or more before ".suffix" */
		size_t sl = pl - 1;     /* ".suffix" */
		return len > sl && memcmp(name + len - sl, pat + 1, sl) == 0 && name[len - sl - 1] != '.';
	}
	return pl == len && memcmp(pat, name, len) == 0;
}

/* 1 when every name pattern b matches, pattern a matches too. */
static inline bool bee_host_covers(const char *a, const char *b)
{
	size_t bl = strlen(b);
	if (b[0] == '*' && b[1] == '.') {
		if (!(a[0] == '*' && a[1] == '.'))
			return false;
		/* *.x covers *.x and *.y.x: b's suffix is a or below it */
		return strcmp(a, b) == 0 || bee_host_match(a, b + 2, bl - 2);
	}
	return bee_host_match(a, b, bl);
}

#endif
