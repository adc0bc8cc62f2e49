/* SPDX-License-Identifier: GPL-2.0-only */
/* dfa.h: the rules of one domain lowered into one minimised DFA over bytes.
 *
 * Input: rules, each a glob (see glob.h) with the permission bits it grants
 * and the bits it denies. For a string s the automaton answers
 *
 *   perms(s) = (union of grant over rules matching s)
 *              & ~(union of deny over rules matching s)
 *
 * A grant bit that no rule denies is a mark: a deny rule that "grants" one
 * leaves it on every string it matches (dfa_build_opts.marks).
 *
 * and which rules matched s (provenance: "which rules decided this").
 *
 * Pipeline (dfa_build): each rule's glob -> its brace alternatives, each a
 * Thompson NFA -> subset construction (bounded by max_build_states) ->
 * Hopcroft; the alternatives' DFAs folded into the rule's minimal DFA by
 * product and Hopcroft. Then the rules are combined:
 *
 *   with provenance (the default): the product of all rule DFAs at once,
 *   minimised by Hopcroft with the initial partition keyed by the set of
 *   matching rules, so every state knows exactly which rules its strings
 *   match. The price: each rule's progress is tracked on its own, so
 *   independent rules ("**" "/" patterns) multiply the states.
 *
 *   perms_only: each rule DFA folded into the product of the rules before
 *   it, minimising in between by what later rules can still change, and at
 *   the end by permissions alone: the smallest table that answers every
 *   string the same (dfa_perms_reduce of the provenance automaton gives the
 *   identical one). States carry the rules that may match; exact
 *   provenance for one string stays available (dfa_string_rules).
 *
 * Then byte classes that no state tells apart merge, and states are numbered
 * breadth-first from the start (0) in class order, the dead state last.
 *
 * Measured here on a realistic fs policy: 27 rules give 7726 states with
 * provenance (0.02 s) and 340 by permissions; 39 rules 58594 (0.2 s) and
 * 469; 55 rules pass 262144 states with provenance (refused in 0.9 s) and
 * give 551 by permissions (0.16 s). Tables for map images should be built
 * by permissions.
 *
 * Either way the same rules give the same tables, whatever their order.
 *
 * Tables for the map image: class_of[256] (u8), next[state * nclasses + class]
 * (u16), perms[state] (u32). A walk is one class lookup and one 16-bit load
 * per byte. No glob matches NUL, so byte 0 always leads to the dead state,
 * which therefore exists in every automaton (and is numbered last).
 *
 * Ownership: dfa_build returns a dfa that the caller releases with dfa_free;
 * every pointer that an accessor returns is owned by the dfa and lives as
 * long as it does.
 */
#ifndef BEE_DFA_H
#define BEE_DFA_H

#include "diag.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* State ids are u16 in the map image; 0xffff is "none". */
#define DFA_MAX_STATES 65535u
#define DFA_STATE_NONE 0xffffu
/* Building may need more states than the minimal automaton has; this bounds
 * its memory (about 0.5 KiB a state) and time. */
#define DFA_DEFAULT_BUILD_STATES 262144u
/* ... and all of them together: a policy of many rules each just under the
 * bound would otherwise take minutes */
#define DFA_DEFAULT_BUILD_TOTAL 16777216u

/* What strings a domain holds; only changes which counterexample reads best. */
#define DFA_KINDS(X)                                                   \
	X(PATH, "path")   /* absolute, normalised paths: "/a/b" */     \
	X(NAME, "name")   /* environment-variable names: "CARGO_HOME" */

enum dfa_kind {
#define X(name, str) DFA_KIND_##name,
	DFA_KINDS(X)
#undef X
};

const char *dfa_kind_name(enum dfa_kind k);

struct dfa_rule {
	const char *glob;    /* NUL-terminated glob text */
	uint32_t grant;      /* permission bits granted; for a deny rule only
			      * marks (dfa_build_opts.marks), if any */
	uint32_t deny;       /* permission bits denied */
	unsigned rule;       /* provenance: the policy rule's index */
	struct loc loc;      /* where the glob is written (LOC_NONE if nowhere) */
	bool cover_dir;      /* a trailing '/' '**' matches the directory too
			      * (glob_cover_dir: [fs] deny rules) */
};

/* Filled when a state limit stops a build, naming the rules most likely
 * responsible, most first. */
struct dfa_limit_report {
	bool minimal;            /* the minimal automaton has over max_states;
				  * else building it went over max_build_states */
	bool total;              /* building went over max_build_total states in
				  * all (then built is that total) */
	unsigned nrules;
	unsigned rules[3];       /* dfa_rule.rule */
	size_t states[3];        /* per rule, the states it accounts for: a rule
				  * whose own automaton or fold broke the bound
				  * comes first, with the bound; then, with
				  * provenance while building, the states the
				  * rule is alive in; else the size of its own
				  * automaton */
	size_t built;            /* states of the automaton that broke the limit:
				  * with minimal, its size; else the count
				  * reached when building stopped (the bound
				  * plus one) */
	unsigned crowd;          /* rules that may match after any prefix (or,
				  * with provenance while building, are alive in
				  * over half the states): several mean no one
				  * rule is to blame, their partial matches
				  * multiply */
};

struct dfa_build_opts {
	size_t sz;               /* sizeof(struct dfa_build_opts) */
	enum dfa_kind kind;
	unsigned max_states;       /* of the minimal automaton; 0 or more: DFA_MAX_STATES */
	unsigned max_build_states; /* of any automaton built on the way (a brace
				    * alternative's, a product); 0: default */
	/* Minimise by permissions alone: far smaller tables, built rule by rule
	 * (which scales with the number of rules); dfa_state_rules then gives
	 * the rules that match some string ending in the state, and
	 * dfa_string_rules the exact ones for a string. */
	bool perms_only;
	struct dfa_limit_report *limit;   /* optional, filled on -E2BIG */
	/* of every automaton built on the way together, and the walks that
	 * find each state's rules; 0: DFA_DEFAULT_BUILD_TOTAL */
	unsigned max_build_total;
	/* Bits of grant that mark a state rather than grant anything (no rule
	 * denies them: the fs domain's IR_PERM_DENIED, which deny rules
	 * "grant"). The tables carry them like permissions; a widening never
	 * counts them (dfa_widening_find). */
	uint32_t marks;
};

struct dfa;

/* Builds the automaton of rules[0..n). Errors are queued on dc (which may be
 * NULL) with the rule's location: a bad glob gives -EINVAL; a construction
 * over max_build_states or a minimal automaton over max_states gives -E2BIG
 * and names the rules responsible. */
int dfa_build(const struct dfa_rule *rules, size_t n, const struct dfa_build_opts *opts,
	      struct dfa **out, struct diag_ctx *dc);
void dfa_free(struct dfa *d);

/* The smallest automaton giving every string the same permissions as d
 * (d minimised again, by permissions alone): what a map image needs, as
 * perms_only gives. Returns 0; *out is the caller's to free. */
int dfa_perms_reduce(const struct dfa *d, struct dfa **out);

struct dfa_stats {
	unsigned states;         /* in the minimised automaton */
	unsigned classes;        /* byte classes */
	unsigned transitions;    /* (state, class) pairs not leading to the dead state */
	unsigned accepting;      /* states with a non-empty rule set */
	unsigned nfa_states;     /* of the combined NFA */
	unsigned subset_states;  /* the largest automaton built on the way,
				  * before minimising it */
};

void dfa_stats_get(const struct dfa *d, struct dfa_stats *st);
enum dfa_kind dfa_kind_get(const struct dfa *d);
/* dfa_build_opts.marks of the build that made d. */
uint32_t dfa_marks_get(const struct dfa *d);

/* The rules a state's strings matched: rule ids ascending, no repeats. */
struct dfa_rules {
	const unsigned *ids;
	size_t n;
};

/* Walks bytes[0..len) from the start state; returns the state reached and
 * sets *perms and *rules (either may be NULL) from it. */
unsigned dfa_match(const struct dfa *d, const void *bytes, size_t len, uint32_t *perms,
		   struct dfa_rules *rules);

/* Read-only view of the tables, for map images. */
struct dfa_tables {
	unsigned nstates, nclasses;
	unsigned start;          /* always 0 */
	unsigned dead;           /* the state with no way out; DFA_STATE_NONE never
				  * occurs today (NUL always leads to it) but
				  * readers should allow it */
	const uint8_t *class_of; /* [256] */
	const uint16_t *next;    /* [nstates * nclasses] */
	const uint32_t *perms;   /* [nstates] */
};

void dfa_tables_get(const struct dfa *d, struct dfa_tables *t);
unsigned dfa_next(const struct dfa *d, unsigned state, unsigned cls);
uint32_t dfa_state_perms(const struct dfa *d, unsigned state);
/* The rules that match some string ending in state. In the provenance
 * automaton (not perms_only) every such string matches exactly these. */
struct dfa_rules dfa_state_rules(const struct dfa *d, unsigned state);
/* Exactly the rules that bytes[0..len) matches, found by running the globs
 * themselves (any automaton): rule ids ascending, no repeats, in *ids (the
 * caller frees it); returns how many. */
size_t dfa_string_rules(const struct dfa *d, const void *bytes, size_t len, unsigned **ids);

/* The input rules, as given to dfa_build (indexable by position). */
size_t dfa_rule_count(const struct dfa *d);
const struct dfa_rule *dfa_rule_get(const struct dfa *d, size_t i);   /* glob and loc copied */

/* How readable a byte is in an example string, lower is better: letters,
 * digits, '_' '-' '.', other printable, space, high bytes, controls; NUL is
 * never used (UINT_MAX). */
unsigned dfa_byte_rank(uint8_t b);
/* The most readable byte of a class, or -1 when the class is only NUL. */
int dfa_class_example(const struct dfa *d, unsigned cls);

/* Attenuation: a shortest string that the child grants more on than the
 * parent, if there is one; "none" proves the child a subset for every
 * string, since the search covers the whole product of the automata.
 * Strings that look like the domain's strings are preferred (for PATH: "/"
 * or absolute with no empty, "." or ".." segment; for NAME: non-empty, no
 * '='); only when every witness is malformed is a malformed one returned,
 * since a child policy must not widen anywhere. Among equally short
 * witnesses the first in breadth-first order over byte classes ranked by
 * their most readable byte (dfa_byte_rank) wins, so the answer is
 * deterministic and reads well. The rules named are exact for the example
 * (found by running the globs), for any kind of automaton. */
struct dfa_widening {
	bool found;
	char *example;           /* NUL-terminated; never holds NUL */
	size_t len;
	uint32_t extra;          /* child_perms & ~parent_perms, non-zero, marks
				  * of either automaton left out */
	uint32_t child_perms, parent_perms;
	unsigned *child_rules;   /* child rules granting a bit of extra, ascending */
	size_t nchild_rules;
	unsigned *parent_rules;  /* every parent rule matching the example */
	size_t nparent_rules;
	bool well_formed;        /* the example is a well-formed path/name */
	size_t searched;         /* product states visited, in the last phase */
};

/* Returns 0 (with w->found saying whether the child widens) or -EINVAL when
 * the kinds differ. Release w with dfa_widening_fini. */
int dfa_widening_find(const struct dfa *child, const struct dfa *parent, struct dfa_widening *w);
/* The same, giving up with -E2BIG (w->searched = max_states + 1) once one
 * phase would visit more than max_states product states (0: the default of
 * the 'search-states' limit): the product of two large automata can hold
 * billions. An unfinished search proves nothing: callers fail closed. */
int dfa_widening_find_bounded(const struct dfa *child, const struct dfa *parent, size_t max_states,
			      struct dfa_widening *w);
void dfa_widening_fini(struct dfa_widening *w);

/* Deterministic text (--dump=dfa): classes, then every state with its
 * permissions, rules and transitions (the dead state's are left out). */
int dfa_dump(const struct dfa *d, FILE *out);
/* Graphviz (--dump=dfa-dot), accepting states labelled with rules. */
int dfa_dump_dot(const struct dfa *d, FILE *out);

#endif
