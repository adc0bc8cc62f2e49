/* SPDX-License-Identifier: GPL-2.0-only */
/* beec_limits.h: every bound the compiler puts on what a policy can make it
 * spend, in one table.
 *
 * A policy is read from other people's pull requests: each resource it can
 * grow (nesting, sizes, counts, automaton states) stops at a limit, and
 * hitting one is a located error naming what was hit, the count reached and
 * the limit, with a note on how to raise it (beec --limit NAME=N). The
 * defaults let a generated policy of 100,000 rules compile, and stop every
 * pathological input known to docs/limits.md in well under a second.
 *
 * Each row: (field, name on the command line, default, most allowed, what
 * it bounds). The most allowed is where raising it further would break a
 * representation (nesting stacks, 16-bit state ids) or invite quadratic
 * work.
 */
#ifndef BEE_LIMITS_H
#define BEE_LIMITS_H

#include "diag.h"

#include <stdbool.h>
#include <stddef.h>

#define BEEC_LIMITS(X)                                                                  \
	X(depth, "depth", 128, 128, "levels of tables and arrays below the document's top") \
	X(key_bytes, "key-bytes", 1024, 65536, "bytes of one key")                      \
	X(string_bytes, "string-bytes", 131072, 16777216,                               \
	  "bytes of one string, as written and after ${NAME} expansion")                \
	X(table_keys, "table-keys", 4096, 65536, "keys of one table")                   \
	X(keys, "keys", 65536, 16777216, "keys in the whole document")                  \
	X(array_items, "array-items", 262144, 16777216, "items of one array (one rule list)") \
	X(rules, "rules", 262144, 16777216, "rules of one policy")                      \
	X(states, "states", 65535, 65535, "states of one minimal automaton (--max-states)") \
	X(build_states, "build-states", 262144, 16777216,                               \
	  "states of any automaton built on the way to it")                             \
	X(build_total, "build-total", 16777216, 1073741824,                             \
	  "states of all automata built for one domain together")                      \
	X(search_states, "search-states", 4194304, 268435456,                           \
	  "product states searched to prove a child a subset of its parent")

enum beec_limit {
#define X(field, name, def, max, what) BEEC_LIMIT_##field,
	BEEC_LIMITS(X)
#undef X
	BEEC_LIMIT_COUNT
};

/* sz-prefixed like every option struct; a field left 0 takes its default. */
struct beec_limits {
	size_t sz;               /* sizeof(struct beec_limits) */
#define X(field, name, def, max, what) unsigned field;
	BEEC_LIMITS(X)
#undef X
};

/* lim with every field filled: the caller's value where given (lim may be
 * NULL or older and shorter), the default elsewhere. */
struct beec_limits beec_limits_resolve(const struct beec_limits *lim);

const char *beec_limit_name(enum beec_limit l);
unsigned beec_limit_default(enum beec_limit l);
unsigned beec_limit_max(enum beec_limit l);
const char *beec_limit_what(enum beec_limit l);
unsigned beec_limit_get(const struct beec_limits *lim, enum beec_limit l);

/* Parses "NAME=N" into lim (and sets lim->sz). Returns 0, or -EINVAL with a message in err
 * ("unknown limit 'x'; did you mean 'keys'?", "limit 'depth' is from 1 to
 * 128, got '500'"). */
int beec_limit_parse(struct beec_limits *lim, const char *arg, char *err, size_t errlen);

/* The note under a limit's error: how to raise it, or that it cannot be. */
void beec_limit_note(struct diag_ctx *dc, enum beec_limit l, unsigned value);

#endif
