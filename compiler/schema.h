/* SPDX-License-Identifier: GPL-2.0-only */
/* schema.h: TOML document -> policy IR (schema version 1).
 *
 * Validates every key, type and value of a policy and builds the IR with
 * each rule's source location. Unknown keys and enum values get a
 * "did you mean" note. ${NAME} in any string is expanded from the defines
 * (NAME=VALUE, as given to beec -D); an undefined name is an error.
 */
#ifndef BEE_SCHEMA_H
#define BEE_SCHEMA_H

#include "diag.h"
#include "ir.h"
#include "beec_limits.h"
#include "toml.h"

struct schema_opts {
	size_t sz;                       /* sizeof(struct schema_opts) */
	const char *const *defines;      /* "NAME=VALUE" strings */
	size_t ndefines;
	const struct beec_limits *limits;  /* 'rules', 'string-bytes'; NULL: defaults */
};

/* Returns 0 and *out (freed with ir_policy_free), or -1 with diagnostics
 * queued in dc and *out NULL. */
int schema_build(const struct toml_doc *doc, const struct schema_opts *opts,
		 struct diag_ctx *dc, struct ir_policy **out);

#endif
