/* SPDX-License-Identifier: GPL-2.0-only */
/* dfa_impl.h: internals shared by the dfa*.c and nfa.c files; not an API.
 *
 * nfa.c        globs -> one Thompson NFA with byte-set edges, byte classes,
 *              and running the NFA over a string
 * dfa_subset.c subset construction (bounded) of one brace alternative
 * dfa_min.c    Hopcroft minimisation, merging byte classes
 * dfa_fold.c   rule automata, combined with or without provenance
 * dfa.c        the driver, numbering the tables, queries
 * dfa_widen.c  product search for attenuation
 * dfa_dump.c   text and Graphviz dumps
 */
#ifndef BEE_DFA_IMPL_H
#define BEE_DFA_IMPL_H

#include "dfa.h"
#include "glob.h"

#include <stdbool.h>
#include <stdint.h>

/* ---- NFA ------------------------------------------------------------------ */

struct nfa_edge {
	uint32_t set;            /* index into nfa.sets */
	uint32_t to;
};

/* A state has at most two byte edges and two epsilon edges; epsilon edges
 * only point forward, so closures never loop. */
struct nfa_state {
	struct nfa_edge edge[2];
	uint32_t eps[2];
	uint8_t nedge, neps;
	bool accept;             /* the alternative is complete here */
	uint32_t entry;          /* position of the owning rule in the input */
	/* States [dom_lo, dom_hi) of the same alternative match no more than
	 * this one does (their languages are subsets of its language), so a
	 * subset state holding this one may drop them; empty when lo == hi. */
	uint32_t dom_lo, dom_hi;
};

struct nfa {
	struct nfa_state *st;
	size_t n, cap;
	struct glob_byteset *sets;   /* distinct edge sets */
	size_t nsets, setcap;
	uint32_t *starts;            /* one start state per alternative */
	size_t nstarts, startcap;

	/* byte classes: the coarsest partition that every edge set respects,
	 * numbered by smallest byte */
	uint8_t class_of[256];
	unsigned nclasses;
	uint32_t *set_cls_off;       /* [nsets + 1] into set_cls */
	uint8_t *set_cls;            /* the classes inside each edge set */
};

void nfa_init(struct nfa *nfa);
void nfa_fini(struct nfa *nfa);
void nfa_glob_add(struct nfa *nfa, const struct glob *g, uint32_t entry);
void nfa_classes_compute(struct nfa *nfa);
/* Runs the NFA over bytes; sets matched[entry] for every accepting entry. */
void nfa_match(const struct nfa *nfa, const void *bytes, size_t len, bool *matched);
static inline bool nfa_state_important(const struct nfa_state *s)
{
	return s->nedge || s->accept;
}

/* ---- interned u32 sequences, subset construction (dfa_subset.c) ------- */

/* Sequences of u32 numbered in order of first appearance; used for subset
 * states (sets of NFA states) and for labels (sets of matching rules). */
struct dfa_seqtab {
	uint32_t *pool;
	size_t npool, poolcap;
	uint32_t *off;           /* [n + 1] */
	size_t n, offcap;
	uint32_t *slots;         /* open addressing: id + 1, 0 = empty */
	size_t nslots;
};

void dfa_seqtab_init(struct dfa_seqtab *t);
void dfa_seqtab_fini(struct dfa_seqtab *t);
const uint32_t *dfa_seqtab_get(const struct dfa_seqtab *t, uint32_t id, size_t *len);
/* The id of v[0..n), added if new unless limit ids exist (then UINT32_MAX). */
uint32_t dfa_seqtab_intern(struct dfa_seqtab *t, const uint32_t *v, size_t n, size_t limit,
			   bool *is_new);
/* Room for n more sequences of words u32 in all: no rehash while they come. */
void dfa_seqtab_reserve(struct dfa_seqtab *t, size_t n, size_t words);
uint64_t dfa_seq_hash(const uint32_t *v, size_t n);
int dfa_u32_cmp(const void *a, const void *b);

struct dfa_bucket {
	uint32_t *v;
	size_t n, cap;
};

struct dfa_subset {
	const struct nfa *nfa;
	const struct dfa_rule *rules;
	size_t limit;
	uint32_t k;
	struct dfa_seqtab sets;      /* subset states */
	struct dfa_seqtab labels;    /* label 0: nothing matched */
	uint32_t *trans;             /* [sets.n * k] */
	size_t transcap;
	uint32_t *label;             /* [sets.n] */
	size_t labelcap;
	uint32_t *mark;              /* closure stamps, per NFA state */
	uint32_t gen;
	uint32_t *stack, *tmp;
	size_t nstack, stackcap, ntmp, tmpcap;
	struct dfa_bucket *bucket;   /* per class */
	/* dfa_subset_canonical: per NFA state the id of what it matches from
	 * there on (its suffix), and per subset state the sorted suffix ids of
	 * its threads, numbered as sets is */
	uint32_t *sid;
	struct dfa_seqtab sigs;
	uint32_t *sig;
	size_t sigcap;
};

/* Sets up ss over nfa (classes computed) for rules; limit bounds the states. */
void dfa_subset_init(struct dfa_subset *ss, const struct nfa *nfa, const struct dfa_rule *rules,
		     size_t limit);
/* Makes ss build one state for subset states whose threads match the same
 * from there on, with the same rules' permissions (the threads of two
 * directories laid out alike): a smaller automaton with the same
 * permissions, whose labels then name some of the rules, not all. */
void dfa_subset_canonical(struct dfa_subset *ss);
/* Builds every reachable subset state; -E2BIG past the limit. Label 0 of
 * ss->labels is "nothing matched"; others are sorted input positions. */
int dfa_subset_run(struct dfa_subset *ss);
void dfa_subset_fini(struct dfa_subset *ss);
/* grant & ~deny over the rules at the given input positions */
uint32_t dfa_rule_perms(const struct dfa_rule *rules, const uint32_t *entries, size_t n);

/* ---- minimisation ------------------------------------------------------- */

/* Coarsest partition of states [0, n) that refines label[] and is stable
 * under trans[s * k + c]. Writes block[s]; returns the number of blocks. */
uint32_t dfa_min_partition(uint32_t n, uint32_t k, const uint32_t *trans, const uint32_t *label,
			   uint32_t *block);

/* Merges classes whose columns agree in trans (nb states, k classes); writes
 * the new class of each old class (by smallest byte) and, per new class, an
 * old class standing for it (rep); returns the new count. */
uint32_t dfa_classes_merge(const uint32_t *trans, uint32_t nb, uint32_t k, uint32_t *newcls,
			   uint32_t *rep);

/* ---- the automaton ------------------------------------------------------ */

struct dfa {
	enum dfa_kind kind;
	bool perms_only;
	uint32_t marks;              /* dfa_build_opts.marks */
	unsigned nstates, nclasses;
	unsigned dead;               /* DFA_STATE_NONE when none */
	uint8_t class_of[256];
	uint16_t *next;              /* [nstates * nclasses] */
	uint32_t *perms;             /* [nstates] */
	uint32_t *rule_off;          /* [nstates + 1] into rule_ids */
	unsigned *rule_ids;
	uint32_t *entry_off;         /* [nstates + 1] into entry_ids */
	uint32_t *entry_ids;         /* matching input positions per state */
	struct dfa_rule *rules;      /* copy of the input; the dfa owns each glob */
	size_t nrules;
	struct dfa_stats stats;
};

/* Minimal automaton of (n, k, trans, label) into d's tables, states numbered
 * breadth-first (dead last); class_of maps bytes to the input's classes.
 * Returns, per new state, an input state it stands for (caller frees); if
 * old_to_new is not NULL it receives every input state's new state. */
uint32_t *dfa_quotient(struct dfa *d, uint32_t n, uint32_t k, const uint32_t *trans,
		       const uint32_t *label, const uint8_t *class_of, uint32_t *old_to_new);
struct dfa *dfa_alloc(enum dfa_kind kind, const struct dfa_rule *rules, size_t n);
void dfa_stats_count(struct dfa *d);
/* Labels for minimising by permissions: 0 for none, equal for equal. */
void dfa_perms_label(const uint32_t *perms, uint32_t n, uint32_t *label);
/* Per-state rules from bits[state * words ...] over input positions. */
void dfa_rules_fill(struct dfa *d, const uint64_t *bits, size_t words);
/* The same from (state << 32 | input position) pairs, in any order and
 * with repeats (sorts them). */
void dfa_rules_fill_pairs(struct dfa *d, uint64_t *pairs, size_t n);

/* ---- building rule by rule (dfa_fold.c) -------------------------------- */

/* An automaton between stages: n states (start 0), k classes. */
struct dfa_tab {
	uint32_t n, k;
	uint32_t *trans;         /* [n * k] */
	uint32_t *label;         /* [n]; 0 means nothing matched */
	uint8_t class_of[256];
};

void dfa_tab_fini(struct dfa_tab *t);

/* The automaton of rules[0..n), built one rule at a time: each rule's own
 * minimal DFA (its brace alternatives folded the same way) is folded into
 * the product of those before it, and the product minimised by what later
 * rules can still change: with provenance (prov) the set of rules matched,
 * else the pair (granted and not denied, denied). Fills d's tables,
 * permissions and per-state rules (exact with provenance; else those that
 * may match: some string ending in the state matches them). -E2BIG (with
 * rep) past max_build states built at once or max_states in the result. */
int dfa_fold_build(struct dfa *d, const struct dfa_rule *rules, size_t n, bool prov,
		   size_t max_build, size_t max_total, size_t max_states, struct dfa_limit_report *rep);

/* By permissions only, the automaton dfa_fold_build makes, built from
 * chunks of neighbouring rules (in their globs' order): each chunk by one
 * subset construction, the chunks' minimal automata folded pairwise. Where
 * rules sit under their own directories a chunk's threads stay few, and
 * this is several times faster than a fold of one automaton per rule.
 * globs are the rules' parsed globs, all the NFA of all of them (classes
 * computed), which gives each state the rules it may match. -E2BIG (d
 * left empty) past a bound; the caller then builds by rules, which
 * reports what was too large. */
int dfa_fold_build_chunked(struct dfa *d, const struct dfa_rule *rules, const struct glob *globs, size_t n,
			   const struct nfa *all, size_t max_build, size_t max_total, size_t max_states);

/* The rule's glob parsed, with glob_cover_dir when the rule says so:
 * every stage that reads a rule's glob reads it through this. */
int dfa_rule_glob(const struct dfa_rule *r, struct glob *g, struct glob_error *ge);

/* Which input rules s matches, by running their globs' NFA: sets matched[i]
 * (the globs must parse). */
void dfa_rules_simulate(const struct dfa_rule *rules, size_t n, const void *bytes, size_t len,
			bool *matched);

#endif
