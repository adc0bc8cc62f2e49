/* dfa_impl.h: internals shared by the dfa*.c and nfa.c files; not an API.
 *
 * nfa.c      globs -> one Thompson NFA with byte-set edges, byte classes
 * dfa.c      subset construction, state limit, assembling the tables, walk
 * dfa_min.c  Hopcroft minimisation
 * dfa_widen.c  product search for attenuation
 * dfa_dump.c text and Graphviz dumps
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
static inline bool nfa_state_important(const struct nfa_state *s)
{
	return s->nedge || s->accept;
}

/* ---- minimisation ------------------------------------------------------- */

/* Coarsest partition of states [0, n) that refines label[] and is stable
 * under trans[s * k + c]. Writes block[s]; returns the number of blocks. */
uint32_t dfa_min_partition(uint32_t n, uint32_t k, const uint32_t *trans, const uint32_t *label,
			   uint32_t *block);

/* ---- the automaton ------------------------------------------------------ */

struct dfa {
	enum dfa_kind kind;
	bool perms_only;
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

#endif
