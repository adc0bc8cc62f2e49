/* SPDX-License-Identifier: GPL-2.0-only */
/* nfa.c: parsed globs -> one Thompson NFA over byte sets, and the byte
 * classes that the NFA's edge sets induce.
 *
 * Each alternative of each glob becomes a chain of states, one per item:
 *
 *   byte S   s --S--> t
 *   star S   s --S--> s, s --eps--> t
 *   any      s --all--> s, s --eps--> t            (all = every byte but NUL)
 *   dirs     s --eps--> t, s --eps--> j, j --all--> j, j --'/'--> t
 *
 * and the last state of the chain accepts for the glob's rule.
 *
 * States are numbered along the chain, so "the states before item k" is an
 * id range. Three kinds of state match at least what every state before
 * them (in a range) matches, which lets subset construction drop those
 * threads (without it, "**" "/" and trailing "**" make subset states that
 * differ only in dead-weight threads, exponentially many):
 *
 *   star S at k     dominates items q..k-1 when none of them can match '/'
 *                   (each word they match is in S*, and S* S* = S*)
 *   any at k        dominates every earlier item (it matches everything)
 *   dirs at k       (its loop state j) dominates every earlier item when
 *                   item k-1 is the byte '/': their words end with '/', and
 *                   j matches exactly "anything ending with '/'" then the rest
 */
#include "dfa_impl.h"
#include "mem.h"

#include <stdlib.h>
#include <string.h>

void nfa_init(struct nfa *nfa)
{
	memset(nfa, 0, sizeof(*nfa));
}

void nfa_fini(struct nfa *nfa)
{
	free(nfa->st);
	free(nfa->sets);
	free(nfa->starts);
	free(nfa->set_cls_off);
	free(nfa->set_cls);
	memset(nfa, 0, sizeof(*nfa));
}

static uint32_t nfa_state_new(struct nfa *nfa, uint32_t entry)
{
	struct nfa_state *s = VEC_PUSH(nfa->st, nfa->n, nfa->cap);
	memset(s, 0, sizeof(*s));
	s->entry = entry;
	return (uint32_t)(nfa->n - 1);
}

/* Edge sets are shared: few distinct sets keep the class computation cheap. */
static uint32_t nfa_set_intern(struct nfa *nfa, const struct glob_byteset *set)
{
	for (size_t i = 0; i < nfa->nsets; i++)
		if (memcmp(&nfa->sets[i], set, sizeof(*set)) == 0)
			return (uint32_t)i;
	*VEC_PUSH(nfa->sets, nfa->nsets, nfa->setcap) = *set;
	return (uint32_t)(nfa->nsets - 1);
}

static void nfa_edge_add(struct nfa *nfa, uint32_t from, const struct glob_byteset *set, uint32_t to)
{
	uint32_t si = nfa_set_intern(nfa, set);
	struct nfa_state *s = &nfa->st[from];
	s->edge[s->nedge].set = si;
	s->edge[s->nedge].to = to;
	s->nedge++;
}

static void nfa_eps_add(struct nfa *nfa, uint32_t from, uint32_t to)
{
	struct nfa_state *s = &nfa->st[from];
	s->eps[s->neps++] = to;
}

static bool nfa_item_is_slash(const struct glob_item *it)
{
	struct glob_byteset slash = { { 0 } };
	glob_byteset_add(&slash, '/');
	return it->kind == GLOB_ITEM_BYTE && memcmp(&it->set, &slash, sizeof(slash)) == 0;
}

static bool nfa_item_may_slash(const struct glob_item *it)
{
	switch (it->kind) {
	case GLOB_ITEM_BYTE:
	case GLOB_ITEM_STAR:
		return glob_byteset_has(&it->set, '/');
	case GLOB_ITEM_ANY:
	case GLOB_ITEM_DIRS:
		return true;
	}
	return true;
}

static void nfa_dominate(struct nfa *nfa, uint32_t s, uint32_t lo, uint32_t hi)
{
	nfa->st[s].dom_lo = lo;
	nfa->st[s].dom_hi = hi;
}

static void nfa_alt_add(struct nfa *nfa, const struct glob_alt *alt, uint32_t entry)
{
	struct glob_byteset all = { { ~(uint64_t)1, ~(uint64_t)0, ~(uint64_t)0, ~(uint64_t)0 } };
	struct glob_byteset slash = { { 0 } };
	glob_byteset_add(&slash, '/');

	uint32_t s = nfa_state_new(nfa, entry);
	uint32_t first = s;        /* id of the chain's first state */
	uint32_t run = s;          /* first state after the last item that may match '/' */
	*VEC_PUSH(nfa->starts, nfa->nstarts, nfa->startcap) = s;
	for (size_t i = 0; i < alt->n; i++) {
		const struct glob_item *it = &alt->items[i];
		uint32_t t = s, j;
		switch (it->kind) {
		case GLOB_ITEM_BYTE:
			t = nfa_state_new(nfa, entry);
			nfa_edge_add(nfa, s, &it->set, t);
			break;
		case GLOB_ITEM_STAR:
			nfa_edge_add(nfa, s, &it->set, s);
			t = nfa_state_new(nfa, entry);
			nfa_eps_add(nfa, s, t);
			if (!glob_byteset_has(&it->set, '/'))
				nfa_dominate(nfa, s, run, s);
			break;
		case GLOB_ITEM_ANY:
			nfa_edge_add(nfa, s, &all, s);
			t = nfa_state_new(nfa, entry);
			nfa_eps_add(nfa, s, t);
			nfa_dominate(nfa, s, first, s);
			break;
		case GLOB_ITEM_DIRS:
			j = nfa_state_new(nfa, entry);
			t = nfa_state_new(nfa, entry);
			nfa_eps_add(nfa, s, t);
			nfa_eps_add(nfa, s, j);
			nfa_edge_add(nfa, j, &all, j);
			nfa_edge_add(nfa, j, &slash, t);
			if (i > 0 && nfa_item_is_slash(&alt->items[i - 1]))
				nfa_dominate(nfa, j, first, s);
			break;
		}
		if (nfa_item_may_slash(it))
			run = t;
		s = t;
	}
	nfa->st[s].accept = true;
}

void nfa_glob_add(struct nfa *nfa, const struct glob *g, uint32_t entry)
{
	for (size_t a = 0; a < g->nalts; a++)
		nfa_alt_add(nfa, &g->alts[a], entry);
}

void nfa_classes_compute(struct nfa *nfa)
{
	unsigned ncls = 1;
	uint16_t remap[512];

	memset(nfa->class_of, 0, sizeof(nfa->class_of));
	for (size_t i = 0; i < nfa->nsets; i++) {
		/* split every class by membership; renumber in byte order so that
		 * classes stay numbered by their smallest byte */
		unsigned next = 0;
		memset(remap, 0xff, sizeof(remap));
		for (unsigned b = 0; b < 256; b++) {
			unsigned key = nfa->class_of[b] * 2u + glob_byteset_has(&nfa->sets[i], b);
			if (remap[key] == 0xffff)
				remap[key] = (uint16_t)next++;
			nfa->class_of[b] = (uint8_t)remap[key];
		}
		ncls = next;
	}
	nfa->nclasses = ncls;

	nfa->set_cls_off = xcalloc(nfa->nsets + 1, sizeof(*nfa->set_cls_off));
	size_t total = 0, cap = 0;
	for (size_t i = 0; i < nfa->nsets; i++) {
		bool seen[256] = { false };
		nfa->set_cls_off[i] = (uint32_t)total;
		for (unsigned b = 0; b < 256; b++) {
			uint8_t c = nfa->class_of[b];
			if (glob_byteset_has(&nfa->sets[i], b) && !seen[c]) {
				seen[c] = true;
				*VEC_PUSH(nfa->set_cls, total, cap) = c;
			}
		}
	}
	nfa->set_cls_off[nfa->nsets] = (uint32_t)total;
}

/* Adds q and its epsilon closure to set (stamped with gen). */
static void nfa_closure_add(const struct nfa *nfa, uint32_t q, uint32_t *stamp, uint32_t gen,
			    uint32_t *set, size_t *n, uint32_t *stack)
{
	size_t top = 0;
	if (stamp[q] == gen)
		return;
	stamp[q] = gen;
	stack[top++] = q;
	while (top) {
		uint32_t s = stack[--top];
		set[(*n)++] = s;
		for (unsigned e = 0; e < nfa->st[s].neps; e++) {
			uint32_t t = nfa->st[s].eps[e];
			if (stamp[t] != gen) {
				stamp[t] = gen;
				stack[top++] = t;
			}
		}
	}
}

void nfa_match(const struct nfa *nfa, const void *bytes, size_t len, bool *matched)
{
	const uint8_t *p = bytes;
	size_t n = nfa->n ? nfa->n : 1;
	uint32_t *stamp = xcalloc(n, sizeof(uint32_t));
	uint32_t *cur = xmalloc(n * sizeof(uint32_t)), *next = xmalloc(n * sizeof(uint32_t));
	uint32_t *stack = xmalloc(n * sizeof(uint32_t));
	size_t ncur = 0, nnext;
	uint32_t gen = 1;
	for (size_t i = 0; i < nfa->nstarts; i++)
		nfa_closure_add(nfa, nfa->starts[i], stamp, gen, cur, &ncur, stack);
	for (size_t i = 0; i < len; i++) {
		gen++;
		nnext = 0;
		for (size_t j = 0; j < ncur; j++) {
			const struct nfa_state *st = &nfa->st[cur[j]];
			for (unsigned e = 0; e < st->nedge; e++)
				if (glob_byteset_has(&nfa->sets[st->edge[e].set], p[i]))
					nfa_closure_add(nfa, st->edge[e].to, stamp, gen, next, &nnext, stack);
		}
		uint32_t *t = cur;
		cur = next;
		next = t;
		ncur = nnext;
	}
	for (size_t j = 0; j < ncur; j++)
		if (nfa->st[cur[j]].accept)
			matched[nfa->st[cur[j]].entry] = true;
	free(stamp);
	free(cur);
	free(next);
	free(stack);
}
