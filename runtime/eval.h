/* SPDX-License-Identifier: GPL-2.0-only */
/* eval.h: the host evaluator. It answers decisions from the map images,
 * with the same walks the BPF programs do, so that `beec query` and the
 * tests see exactly what the kernel will decide.
 *
 * Paths: the kernel hands the hooks at most BEE_PATH_MAX - 1 bytes. A
 * longer path is denied and reported as too long; it is never matched on a
 * prefix.
 */
#ifndef BEE_EVAL_H
#define BEE_EVAL_H

#include "bee_dfa.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>


struct bee_verdict {
	uint32_t perms;      /* permission bits of the state reached */
	uint32_t state;      /* the state reached (provenance lookups use it) */
	bool too_long;       /* the input exceeded BEE_PATH_MAX - 1 bytes */
};

/* Walks s[0..len) through image h (checked with bee_dfa_image_check). */
void bee_eval_dfa(const struct bee_dfa_hdr *h, const char *s, size_t len, struct bee_verdict *v);

#endif
