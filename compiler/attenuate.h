/* SPDX-License-Identifier: GPL-2.0-only */
/* attenuate.h: proof that a child policy is a subset of its parent.
 *
 * Domain by domain, every permission the child grants on any path, binary,
 * variable name or (direction, address, port, protocol) must be granted by
 * the parent. The automata are compared through their product and the
 * network sets region by region, so the answer covers every input, not a
 * sample. When the child widens, the error points at the child rule with
 * a shortest concrete counterexample:
 *
 *   child.toml:7:11: error: child grants read on '/home/you/.ssh/id_rsa', parent does not
 *
 * Host names of [net] connect are a set of their own: a child's name (or
 * wildcard) with a port must be covered by a parent's name or wildcard of
 * the same protocol ("*.d" covers the names and wildcards below d), and
 * every parent deny that such a port meets must be a deny of the child
 * too, since the addresses a name admits are only known at run time. A
 * name never covers an address rule, nor an address a name.
 *
 * [env] set values are injected context, not access to the launcher's
 * environment, and [audit] says what is logged, not what is allowed; neither
 * takes part. [syscalls] allow is a set of names: the child's must be a
 * subset of the parent's.
 */
#ifndef BEE_ATTENUATE_H
#define BEE_ATTENUATE_H

#include "beec_limits.h"
#include "diag.h"
#include "lower.h"
#include "netset.h"

/* One domain's widening: a concrete input the child grants more on. */
struct attenuate_widening {
	enum ir_domain domain;
	uint32_t extra;                  /* fs/exec/env: bits the parent lacks */
	char example[4096 + 64];         /* fs/exec/env: the path or name */
	struct netset_cex net;           /* net: the endpoint */
	/* net: a host name the child grants beyond the parent's names (example
	 * holds "NAME:PORT/PROTO"; parent_rule is the parent's deny the name
	 * could cross, or NULL when no parent name covers it) */
	bool host;
	const struct ir_rule *child_rule;   /* the child rule that grants it */
	const struct ir_rule *parent_rule;  /* a parent rule about it, or NULL */
	uint32_t parent_perms;
	/* fs/exec/env: the proof could not be finished within 'search-states'
	 * (searched states were visited): counted as a widening, fail closed */
	bool too_large;
	size_t searched, limit;
};

/* Returns 1 and fills w when the child widens in domain d, else 0. */
int attenuate_domain(const struct lowered *child, const struct lowered *parent,
		     enum ir_domain d, struct attenuate_widening *w);
/* The same within lim (NULL: the defaults). */
int attenuate_domain_opts(const struct lowered *child, const struct lowered *parent,
			  enum ir_domain d, const struct beec_limits *lim, struct attenuate_widening *w);

/* Returns 0 when child is proved a subset of parent, 1 when it is not
 * (errors queued on dc, one per widening domain), -E2BIG when a proof
 * could not be finished within 'search-states' (then it is no subset
 * either: treat any non-zero as a refusal). */
int attenuate_check(const struct lowered *child, const struct lowered *parent, struct diag_ctx *dc);
int attenuate_check_opts(const struct lowered *child, const struct lowered *parent,
			 const struct beec_limits *lim, struct diag_ctx *dc);

/* "read", "write", "read and write", "execute", "execute (pinned)" */
const char *attenuate_perm_text(enum ir_domain d, uint32_t bits, char *buf, size_t len);

#endif
