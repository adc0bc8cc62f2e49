/* SPDX-License-Identifier: GPL-2.0-only */
/* query.h: one decision asked of a lowered policy, answered with the same
 * walk the kernel does (runtime/eval.h) over the map images, and explained
 * by the rules that decided it.
 *
 *   fs read|write PATH        exec execute PATH
 *   env read NAME             net connect|bind ADDR:PORT[/tcp|/udp]
 */
#ifndef BEE_QUERY_H
#define BEE_QUERY_H

#include "diag.h"
#include "lower.h"

#include <stdbool.h>
#include <stdio.h>

struct query {
	enum ir_domain domain;
	uint32_t want;              /* the permission bit asked for */
	const char *kind, *action;  /* as given */
	const char *resource;
	struct ir_net net;          /* IR_DOMAIN_NET: one address and port */
	bool bind;                  /* IR_DOMAIN_NET: bind, not connect */
};

/* Parses a query; on failure returns -1 with a message in err. */
int query_parse(const char *kind, const char *action, const char *resource,
		struct query *q, char *err, size_t errlen);

/* What a query decided (libbeec.h's beec_policy__query gives it too). */
struct beec_answer {
	bool allow;
	bool too_long;              /* a path over the kernel's bound: denied */
	bool pinned;                /* allowed only as the pinned file */
	bool injected;              /* env: the policy sets it */
	unsigned rules[16];         /* the rules that decided, ascending */
	size_t nrules;
};

int query_run(const struct lowered *lw, const struct query *q, struct beec_answer *r);

/* "Allow fs read /x" on out, then each deciding rule as a note with its
 * source line on notes (a diag_ctx the caller prints). */
int query_explain(const struct lowered *lw, const struct query *q,
		   const struct beec_answer *r, FILE *out, struct diag_ctx *notes);

#endif
