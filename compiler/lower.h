/* SPDX-License-Identifier: GPL-2.0-only */
/* lower.h: policy IR -> the automata and network sets that the kernel walks.
 *
 *   fs    read/write/deny globs  -> one DFA, bits READ | WRITE
 *   exec  allow paths            -> one DFA, bits EXEC | EXEC_PINNED
 *   env   allow name globs       -> one DFA, bit READ
 *   net   connect/bind/deny      -> disjoint LPM entries (netset.h)
 *         connect host names     -> the list the DNS stub admits by
 *                                   (runtime/bee_hosts.h), at most
 *                                   BEE_HOSTS_MAX
 *
 * A deny in [fs] takes both READ and WRITE, and a deny of "X/" "**" takes
 * X itself too (glob_cover_dir: hidden means hidden). [env] set names are injected
 * by the launcher, not passed through, so they are not in the env DFA.
 *
 * Ownership: lower_policy returns a struct lowered that the caller frees
 * with lowered_free; it borrows the IR, which must outlive it.
 */
#ifndef BEE_LOWER_H
#define BEE_LOWER_H

#include "dfa.h"
#include "ir.h"
#include "beec_limits.h"
#include "netset.h"

struct lower_opts {
	size_t sz;              /* sizeof(struct lower_opts) */
	unsigned max_states;    /* per automaton; 0: DFA_DEFAULT_MAX_STATES */
	unsigned domains;       /* bit per enum ir_domain to lower; 0: all
				 * (diff re-lowers one domain at a time) */
	const bool *exclude;    /* [ir->nrules]: rules to leave out, or NULL
				 * (beec diff lowers a policy without the
				 * rules it has already explained) */
	/* 'states' (when max_states is 0) and 'build-states'; NULL: defaults */
	const struct beec_limits *limits;
};

struct lowered {
	const struct ir_policy *ir;
	struct dfa *dfa[IR_DOMAIN_COUNT];   /* NULL for IR_DOMAIN_NET and for
					     * domains lower_opts left out */
	struct netset *net;                 /* NULL when left out */
	/* the [net] connect host names, in policy order (the lowering's own
	 * array of IR rules; empty when net is left out) */
	const struct ir_rule **hosts;
	size_t nhosts;
};

int lower_policy(const struct ir_policy *ir, const struct lower_opts *opts,
		 struct diag_ctx *dc, struct lowered **out);
void lowered_free(struct lowered *lw);

/* The rule with index i (rule indices are positions in ir->rules). */
const struct ir_rule *lowered_rule(const struct lowered *lw, unsigned i);

#endif
