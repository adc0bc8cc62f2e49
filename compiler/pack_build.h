/* SPDX-License-Identifier: GPL-2.0-only */
/* pack_build.h: a compiled policy as a .bpfpack.
 *
 * Sections (runtime/pack_format.h):
 *   manifest      JSON: policy, defines, compiler, hooks, maps, constants,
 *                 automata, rules (for audit and revoke), Landlock plan
 *   bpf           bee's BPF object, the same in every pack; the manifest's
 *                 hooks, maps and constants specialise it (codegen.h)
 *   bee_fs        MAP_IMAGE: the fs automaton (runtime/bee_dfa.h), 1 value
 *   bee_exec      MAP_IMAGE: the exec automaton, 1 value
 *   bee_net4/6    MAP_IMAGE: LPM entries, each key then value
 *   bee_env       MAP_IMAGE: the env automaton, walked by the launcher
 *   policy.toml   SOURCE: the policy as written (with the defines in the
 *                 manifest it compiles to this pack again)
 *
 * Determinism: the same policy, defines and beec give the same bytes;
 * nothing from the clock or the host goes in, and no compiler runs.
 */
#ifndef BEE_PACK_BUILD_H
#define BEE_PACK_BUILD_H

#include "codegen.h"
#include "diag.h"
#include "lower.h"

#include <stddef.h>
#include <stdint.h>

struct pack_build_opts {
	size_t sz;                       /* sizeof(struct pack_build_opts) */
	const char *const *defines;      /* as given to beec -D, recorded */
	size_t ndefines;
	const struct codegen_opts *codegen;   /* NULL: defaults */
};

/* Builds the pack of a lowered policy whose source is src. Returns 0 and
 * an xmalloc'ed *buf of *len bytes, or a negative errno with an error on dc. */
int pack_build(const struct lowered *lw, const struct source *src, const struct pack_build_opts *o,
	       struct diag_ctx *dc, uint8_t **buf, size_t *len);

#endif
