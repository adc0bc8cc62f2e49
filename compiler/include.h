/* SPDX-License-Identifier: GPL-2.0-only */
/* include.h: a policy's include = [...] resolved and merged at compile
 * time (include.c says how).
 */
#ifndef BEE_INCLUDE_H
#define BEE_INCLUDE_H

#include "diag.h"

struct beec_policy;
struct beec_opts;

#define INCLUDE_MAX 32   /* includes of one policy */
#define INCLUDE_DEPTH 8  /* included policies that include others */

/* p built, with includes: each included policy loaded, then p's source
 * replaced by the merged policy's TOML (p's doc and IR freed: parse and
 * build it again). The sources read are kept in p for its diagnostics.
 * 0, or -EINVAL with errors queued on dc. */
int include_merge(struct beec_policy *p, const struct beec_opts *opts, struct diag_ctx *dc);

#endif
