/* SPDX-License-Identifier: GPL-2.0-only */
/* learn.h: `beec learn`, a policy written from audit logs (those of
 * `bee-load run --learn`, or any audit log): what was denied is granted,
 * generalised the way a person writes it, commented with its evidence;
 * secret-looking objects are never granted (docs/writing-policies.md).
 *
 * Ownership: nothing returned; the policy text goes to out, warnings to
 * warn. Deterministic: the same logs and options give the same bytes.
 */
#ifndef BEE_LEARN_H
#define BEE_LEARN_H

#include "diag.h"

#include <stdio.h>

struct beec_policy;

struct learn_opts {
	const char *const *logs;         /* JSON lines files */
	size_t nlogs;
	const char *const *defines;      /* "NAME=VALUE": VALUE written back as ${NAME} */
	size_t ndefines;
	const struct beec_policy *base;  /* lowered; NULL: none */
	const char *base_parent;         /* the base's parent, resolved; NULL: none */
	const char *name;                /* the policy's name; NULL: the base's, or "learned" */
};

/* 0; -EINVAL with an error queued on dc (a log that cannot be read, a
 * line that is not JSON: file:line). */
int learn_run(const struct learn_opts *o, FILE *out, FILE *warn, struct diag_ctx *dc);

#endif
