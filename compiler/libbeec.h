/* SPDX-License-Identifier: GPL-2.0-only */
/* libbeec.h: the policy compiler as a library; beec is a thin command line
 * over it.
 *
 * A policy goes through the pipeline one stage at a time, each stage filling
 * one field of struct beec_policy:
 *
 *   beec_policy__read     file -> source
 *   beec_policy__parse    source -> TOML document      (grammar/, toml.h)
 *   beec_policy__build    document -> policy IR        (schema.h, ir.h)
 *   beec_policy__lower    policy IR -> automata and network sets (lower.h)
 *
 * beec_policy__load runs all of them. Diagnostics go to the caller's
 * diag_ctx and point into the policy's source, so the policy must outlive
 * their printing. Nothing here prints or exits.
 *
 * Ownership: a beec_policy owns its source, document and IR;
 * beec_policy__fini releases them.
 *
 * This is the one header through which bee-load (loader/) reaches the
 * compiler: besides the pipeline it declares what the loader asks of a
 * compiled policy (the pack's images given again, a query, a subset
 * proof, the policy without some rules), and it includes the public
 * module headers whose types those calls take: config.h (the
 * configuration files of beec and bee-load), narrow.h (revoke's
 * narrowing of live maps), glob_prefix.h (the literal prefixes of a
 * write glob) and ll_walk.h (the landlock backend's walk of the real tree
 * at session start). tools/check-names fails when loader/ includes any other.
 */
#ifndef BEE_LIBBEEC_H
#define BEE_LIBBEEC_H

#include "beec_limits.h"
#include "config.h"
#include "diag.h"
#include "glob_prefix.h"
#include "ll_walk.h"
#include "ir.h"
#include "lower.h"
#include "narrow.h"
#include "query.h"
#include "toml.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct bee_pack;

#define BEEC_VERSION "0.1.0"

struct beec_opts {
	size_t sz;                       /* sizeof(struct beec_opts) */
	const char *const *defines;      /* "NAME=VALUE": ${NAME} in the policy */
	size_t ndefines;
	unsigned max_states;             /* per automaton; 0: the default */
	size_t max_input;                /* bytes of one input file; 0: SOURCE_MAX_DEFAULT */
	/* every other bound (beec_limits.h); NULL: the defaults. A max_states
	 * given above wins over limits->states. */
	const struct beec_limits *limits;
	/* where include = ["NAME"] looks after the policy's directory (then
	 * /usr/local/share/bee/abstractions, /usr/share/bee/abstractions) */
	const char *const *include_dirs;
	size_t ninclude_dirs;
};

struct beec_policy {
	struct source *src;
	/* when read from a .bpfpack: the -D values its manifest recorded,
	 * used by beec_policy__build in place of the caller's */
	char **pack_defines;
	size_t npack_defines;
	struct toml_doc *doc;
	struct ir_policy *ir;
	struct lowered *lw;
	/* sources besides src that diagnostics may point into: the includer's
	 * own text and its included files, once includes are merged (src is
	 * then the merged policy: include.h) */
	struct source **kept;
	size_t nkept;
};

/* Reads path ("-" is standard input), of at most opts->max_input bytes. A
 * .bpfpack is read as the policy source it holds, with the defines its
 * manifest recorded, so a pack and its policy compare equal. Returns 0 or
 * a negative errno (source_read_max's; -EINVAL with the reason queued on
 * dc for a malformed pack). opts may be NULL. */
int beec_policy__read_any(struct beec_policy *p, const char *path, const struct beec_opts *opts,
			  struct diag_ctx *dc);
/* Reads path ("-" is standard input). Returns 0 or a negative errno;
 * queues nothing. */
int beec_policy__read(struct beec_policy *p, const char *path);
/* Returns 0, or -EINVAL with diagnostics queued in dc. */
int beec_policy__parse(struct beec_policy *p, struct diag_ctx *dc);
/* The same within opts->limits (opts may be NULL). */
int beec_policy__parse_opts(struct beec_policy *p, const struct beec_opts *opts, struct diag_ctx *dc);
int beec_policy__build(struct beec_policy *p, const struct beec_opts *opts, struct diag_ctx *dc);

/* Read, parse and build. Returns 0; a negative errno when the file cannot
 * be read (then p->src is NULL and nothing is queued); or -EINVAL with
 * diagnostics queued when the policy is not valid. Warnings may be queued
 * on success too. */
int beec_policy__load(struct beec_policy *p, const char *path, const struct beec_opts *opts,
		      struct diag_ctx *dc);

/* Returns 0, or -EINVAL with diagnostics queued (a limit hit names the
 * rules responsible). */
int beec_policy__lower(struct beec_policy *p, const struct beec_opts *opts, struct diag_ctx *dc);

/* The .bpfpack of a lowered policy (pack_build.h): an xmalloc'ed buffer.
 * Returns 0, or a negative errno with diagnostics queued. */
int beec_policy__pack(struct beec_policy *p, const struct beec_opts *opts, struct diag_ctx *dc,
		      uint8_t **buf, size_t *len);

/* The parent a policy names with `parent = "..."`, resolved against the
 * directory of the policy's file; NULL when it names none. The caller
 * frees the string. */
char *beec_policy__parent_path(const struct beec_policy *p);

void beec_policy__fini(struct beec_policy *p);

/* ---- what the loader asks of a compiled policy -------------------------------------------- */

/* The lowered policy p leaves every image of pack as it is: 0 when it
 * gives each automaton and LPM image byte for byte, 1 when it does not
 * (*image names the first map image that differs), -ENOMEM. */
int beec_policy__pack_differs(const struct beec_policy *p, const struct bee_pack *pack, const char **image);

/* p (built) lowered again without the rules exclude marks (an array of
 * p->ir->nrules flags) into *lw, which borrows p's IR; free it with
 * beec_lowered__free. 0, -ENOMEM, or -EINVAL with diagnostics queued. */
int beec_policy__lower_without(const struct beec_policy *p, const bool *exclude, struct diag_ctx *dc,
			       struct lowered **lw);
void beec_lowered__free(struct lowered *lw);

/* Whether child grants only what parent grants (attenuate.h): 0 when it
 * is a subset, 1 when it widens (one error queued per domain that
 * widens, at the child rule responsible), -ENOMEM. */
int beec_lowered__check_subset(const struct lowered *child, const struct lowered *parent, struct diag_ctx *dc);

/* A query as `beec query KIND ACTION RESOURCE` takes it: struct
 * beec_answer (query.h). */
/* 0 when the query is well formed; otherwise -EINVAL and why in msg. */
int beec_query__check(const char *kind, const char *action, const char *resource, char *msg, size_t msglen);
/* Answers the query from p's automata and network sets as beec query
 * does, and writes its explanation (the verdict, then a note with the
 * source line of each rule that decided) to explain (NULL: none). 0; -EINVAL with msg
 * when the query is malformed; -EDOM when p cannot answer it; -ENOMEM. */
int beec_policy__query(const struct beec_policy *p, const char *kind, const char *action, const char *resource,
		       struct beec_answer *a, FILE *explain, char *msg, size_t msglen);

/* The landlock backend's walk of the real tree (ll_walk.h) for p
 * (lowered), as bee-load makes it at session start from p's pack. 0 or
 * beec_ll__walk's error, with plan filled (beec_ll_plan__fini). */
int beec_policy__ll_walk(const struct beec_policy *p, const struct beec_ll_opts *o, beec_ll_rule_fn fn, void *ctx,
			 struct beec_ll_plan *plan);

/* Makes jansson allocate through the compiler's funnel (mem.h): for a
 * program's main, never called by the library itself. */
void beec_mem__route_json(void);

#endif
