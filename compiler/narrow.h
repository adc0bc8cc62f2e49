/* SPDX-License-Identifier: GPL-2.0-only */
/* narrow.h: what a revoke writes to a live session's maps (narrow.c),
 * part of libbeec's public API (libbeec.h includes it).
 *
 * A revoke only narrows, and the maps are rewritten while the hooks walk
 * them, so every write must be safe to read half-done; loader/revoke.c
 * says which of the three ways below applies when.
 */
#ifndef BEE_NARROW_H
#define BEE_NARROW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bee_dfa_hdr;
struct bee_net_value;
struct dfa;
struct ir_policy;

struct beec_narrow_report {
	bool exact;                 /* every state kept its strings' new permissions */
	unsigned states_lowered;    /* states whose permissions changed */
	unsigned states_over;       /* states lowered beyond the new policy */
	char example[256];          /* a string that lost more than the rule gave */
	uint32_t example_lost;      /* the permission bits it lost too */
};

/* New permissions for the live image's states from the automaton of the
 * policy without the revoked rules: for each state, the permissions every
 * string reaching it keeps (the AND over the product of the two automata).
 * The table and its size stay; only permission words go down (a torn
 * update read by a walk is never wider than the old image). Writes the
 * new image to out (size bytes, as live). -EINVAL when the new automaton
 * widens anywhere (never from a revoke), -ENOMEM. */
int beec_narrow__dfa(const struct bee_dfa_hdr *live, const struct dfa *want, void *out,
		     struct beec_narrow_report *rep);

/* The exact narrowed automaton want (an image) written over the live one
 * in three updates that are each safe to read half-written: p1 = live
 * with every permission word 0; p2 = want's table laid out with live's
 * state count (unused states lead to the dead state) and every
 * permission word 0; p3 = p2 with want's permissions. Each is value_size
 * bytes. -E2BIG when want has more states or byte classes than live (its
 * table would not fit the layout). */
int beec_narrow__replace(const struct bee_dfa_hdr *live, size_t value_size, const struct bee_dfa_hdr *want,
			 void *p1, void *p2, void *p3);

/* What revoke writes to an automaton map, in order: one image (the
 * lowered permission words, exact or not) or three (a replacement). */
struct beec_narrow_plan {
	int nwrites;
	uint8_t *writes[3];         /* value_size bytes each, malloc'ed */
	bool exact;                 /* the map then decides as want does */
	bool replaced;              /* by three writes */
	struct beec_narrow_report rep;
};
/* Returns 0, -EINVAL (want widens live) or -ENOMEM; the plan is released
 * with beec_narrow__plan_fini, also after a failure. */
int beec_narrow__plan(const struct bee_dfa_hdr *live, size_t value_size, const struct dfa *want,
		      struct beec_narrow_plan *plan);
void beec_narrow__plan_fini(struct beec_narrow_plan *plan);

/* The value of one LPM entry from the rules that contain it (prov: policy
 * rule indices), leaving out excluded rules; rules are the IR's. Returns
 * 0, or 1 when more than BEE_NET_MAX_RANGES ranges were needed and the
 * value was narrowed to the first ones; -EINVAL for an index past the
 * policy's rules. */
int beec_narrow__net_value(const struct ir_policy *ir, const unsigned *prov, size_t nprov, unsigned dir,
			   unsigned proto, const bool *exclude, struct bee_net_value *out);

#endif
