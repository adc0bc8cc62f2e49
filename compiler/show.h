/* SPDX-License-Identifier: GPL-2.0-only */
/* show.h: the canonical review text of a pack (beec show).
 *
 * Everything printed comes from the pack's own sections: the manifest (the
 * policy's rules in normal form, hooks, maps, the Landlock verdict), the
 * map images (automaton sizes, the network entries with the rules behind
 * them) and the digest. `beec show POLICY` compiles the policy into a pack
 * in memory and prints that, so a policy and its pack read the same.
 */
#ifndef BEE_SHOW_H
#define BEE_SHOW_H

#include <stddef.h>
#include <stdio.h>

/* Returns 0, or -EINVAL with a one-line message in err (a bad pack). */
int show_pack(const void *buf, size_t len, FILE *out, char *err, size_t errlen);

#endif
