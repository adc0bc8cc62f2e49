/* SPDX-License-Identifier: GPL-2.0-only */
/* diff.h: what a policy change adds and removes, from the automata and the
 * network sets (never from the text), with a concrete example each.
 *
 * Each entry is one widening found by the attenuation search with OLD as
 * the parent and NEW as the child ("added"), or the other way round
 * ("removed"). After each one the NEW (or OLD) rule responsible is set
 * aside and the search runs again, so every rule that adds something gets
 * its own entry. A change that only reorders or respells rules adds and
 * removes nothing. A [syscalls] group allowed by NEW only is added, one
 * allowed by OLD only removed; they come after the domains.
 */
#ifndef BEE_DIFF_H
#define BEE_DIFF_H

#include "attenuate.h"
#include "lower.h"

#include <stdbool.h>
#include <stdio.h>

#define DIFF_MAX_PER_DOMAIN 32

struct diff_entry {
	bool added;                      /* false: removed */
	struct attenuate_widening w;     /* child_rule points into the side that has it */
	/* a [syscalls] group allowed on one side only (then w is unused):
	 * its index in runtime/bee_syscalls.h and where that side names it */
	bool syscall;
	unsigned group;
	struct loc group_loc;
};

struct diff {
	struct diff_entry *entries;
	size_t n, cap;
	size_t nadded, nremoved;
};

/* Compares two lowered policies; lowering again with rules set aside may
 * queue diagnostics on dc (it cannot fail for rules that lowered once).
 * Returns 0 or -1. */
int diff_policies(const struct lowered *old, const struct lowered *new_, const struct lower_opts *lo,
		  struct diag_ctx *dc, struct diff *out);
void diff_fini(struct diff *d);

int diff_print_text(const struct diff *d, FILE *out);
int diff_print_json(const struct diff *d, FILE *out);

#endif
