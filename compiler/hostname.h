/* SPDX-License-Identifier: GPL-2.0-only */
/* hostname.h: a host name of [net] connect, checked by the rules of
 * IDNA2008 that a name's text can be checked by, into its canonical form.
 *
 *   NAME            labels of letters, digits and '-' (LDH), 1 to 63 bytes
 *                   each, no '-' at either end, 253 bytes in all; ASCII
 *                   upper case is lowered; a label with "--" in its third
 *                   and fourth places must be an A-label ("xn--" and
 *                   Punycode, RFC 3492, that decodes to a label with a
 *                   character beyond ASCII and encodes back to itself)
 *   *.NAME          the wildcard: the whole leftmost label, and only there;
 *                   it matches names of one or more labels below NAME
 *
 * A name written in Unicode (a U-label) is refused with its A-label as the
 * suggestion: beec does not apply UTS #46 mapping or normalisation, so the
 * author confirms the A-label. No empty label, no final dot, no '_', no
 * all-numeric last label (that would read as an address).
 *
 * Nothing here allocates; errors go to a caller-owned record.
 */
#ifndef BEE_HOSTNAME_H
#define BEE_HOSTNAME_H

#include "netaddr.h"

#include "bee_hosts.h"

#include <stdbool.h>
#include <stddef.h>

#define HOSTNAME_BUFLEN 256   /* a canonical name and its NUL */
#define BEE_HOSTNAME_CP_MAX 256   /* code points of one label, decoded */

/* Checks s[0..len) (the host part of an entry; err offsets are into it)
 * and writes its canonical form into out. Returns 0 or -1 with *err. */
int hostname_check(const char *s, size_t len, char out[HOSTNAME_BUFLEN], struct netaddr_err *err);

/* Punycode (RFC 3492) of the n code points cp into out (cap bytes with
 * the NUL): 0, or -1 when it does not fit. */
int hostname_punycode_encode(const unsigned *cp, size_t n, char *out, size_t cap);
/* Decodes the Punycode s[0..len) into cp (cap code points): their count,
 * or -1 when s is not Punycode. */
long hostname_punycode_decode(const char *s, size_t len, unsigned *cp, size_t cap);

#endif
