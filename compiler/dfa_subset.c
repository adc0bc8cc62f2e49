/* SPDX-License-Identifier: GPL-2.0-only */
/* dfa_subset.c: subset construction from a Thompson NFA, bounded; used on
 * one brace alternative of one rule at a time, and on chunks of
 * neighbouring rules when only permissions are wanted (dfa_fold.c).
 *
 * A subset state is the sorted set of "important" NFA states (those with a
 * byte edge or an accept) in an epsilon closure, after dropping threads that
 * a dominating thread of the same alternative covers (nfa.c). States are
 * built breadth-first, classes in order, so numbering is deterministic.
 */
#include "dfa_impl.h"
#include "mem.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

/* ---- interned u32 sequences ------------------------------------------------ */

void dfa_seqtab_init(struct dfa_seqtab *t)
{
	memset(t, 0, sizeof(*t));
	*VEC_PUSH(t->off, t->n, t->offcap) = 0;
	t->n = 0;
	t->nslots = 64;
	t->slots = xcalloc(t->nslots, sizeof(uint32_t));
}

void dfa_seqtab_fini(struct dfa_seqtab *t)
{
	free(t->pool);
	free(t->off);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

const uint32_t *dfa_seqtab_get(const struct dfa_seqtab *t, uint32_t id, size_t *len)
{
	*len = t->off[id + 1] - t->off[id];
	/* only empty sequences interned so far: no pool, and NULL + 0 is
	 * undefined in C (UBSan, fuzz_glob seed-01) */
	return t->pool ? t->pool + t->off[id] : NULL;
}

uint64_t dfa_seq_hash(const uint32_t *v, size_t n)
{
	return XXH3_64bits(v, n * sizeof(uint32_t));
}

static void dfa_seqtab_rehash(struct dfa_seqtab *t)
{
	free(t->slots);
	t->nslots *= 2;
	t->slots = xcalloc(t->nslots, sizeof(uint32_t));
	for (uint32_t id = 0; id < t->n; id++) {
		size_t len;
		const uint32_t *v = dfa_seqtab_get(t, id, &len);
		size_t h = (size_t)dfa_seq_hash(v, len) & (t->nslots - 1);
		while (t->slots[h])
			h = (h + 1) & (t->nslots - 1);
		t->slots[h] = id + 1;
	}
}

void dfa_seqtab_reserve(struct dfa_seqtab *t, size_t n, size_t words)
{
	size_t nslots = t->nslots;
	while (nslots < 2 * (t->n + n) + 2)
		nslots *= 2;
	if (nslots != t->nslots) {
		t->nslots = nslots / 2;   /* the rehash doubles it */
		dfa_seqtab_rehash(t);
	}
	mem_grow((void **)&t->pool, &t->poolcap, t->npool + words, sizeof(uint32_t));
	mem_grow((void **)&t->off, &t->offcap, t->n + n + 1, sizeof(uint32_t));
}

/* Returns the id of v[0..n), or UINT32_MAX when it is new and limit ids
 * exist already; *is_new says whether it was added. */
uint32_t dfa_seqtab_intern(struct dfa_seqtab *t, const uint32_t *v, size_t n, size_t limit,
			   bool *is_new)
{
	size_t h = (size_t)dfa_seq_hash(v, n) & (t->nslots - 1);
	*is_new = false;
	while (t->slots[h]) {
		size_t len;
		uint32_t id = t->slots[h] - 1;
		const uint32_t *w = dfa_seqtab_get(t, id, &len);
		if (len == n && (n == 0 || memcmp(v, w, n * sizeof(uint32_t)) == 0))
			return id;
		h = (h + 1) & (t->nslots - 1);
	}
	if (t->n >= limit)
		return UINT32_MAX;
	uint32_t id = (uint32_t)t->n;
	mem_grow((void **)&t->pool, &t->poolcap, t->npool + n, sizeof(uint32_t));
	if (n)
		memcpy(t->pool + t->npool, v, n * sizeof(uint32_t));
	t->npool += n;
	t->n++;
	mem_grow((void **)&t->off, &t->offcap, t->n + 1, sizeof(uint32_t));
	t->off[t->n] = (uint32_t)t->npool;
	t->slots[h] = id + 1;
	*is_new = true;
	if (t->n * 2 > t->nslots)
		dfa_seqtab_rehash(t);
	return id;
}

/* ---- subset construction ----------------------------------------------- */



int dfa_u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* Sorts v: Shell sort (Ciura's gaps) for the few threads most subset
 * states hold; glibc's qsort allocates, merges and calls back, a tenth of
 * a large compile. */
static void dfa_u32_sort(uint32_t *v, size_t n)
{
	static const size_t gaps[] = { 57, 23, 10, 4, 1 };
	/* a handful: the last gap alone, an insertion sort */
	for (size_t g = n <= 16 ? 4 : 0; g < sizeof(gaps) / sizeof(gaps[0]); g++) {
		size_t gap = gaps[g];
		for (size_t i = gap; i < n; i++) {
			uint32_t x = v[i];
			size_t j = i;
			for (; j >= gap && v[j - gap] > x; j -= gap)
				v[j] = v[j - gap];
			v[j] = x;
		}
	}
}

/* Sorts v, using tmp (n entries): the hundreds of threads near the start
 * of a chunk by three byte-wide counting passes (NFA state ids are below
 * 2^24: nfa.c's states are bounded by the build limits far below it), the
 * rest by dfa_u32_sort. */
static void dfa_u32_sort_big(uint32_t *v, uint32_t *tmp, size_t n)
{
	if (n <= 128) {
		dfa_u32_sort(v, n);
		return;
	}
	uint32_t *from = v, *to = tmp;
	for (unsigned shift = 0; shift < 32; shift += 8) {
		size_t cnt[257] = { 0 };
		for (size_t i = 0; i < n; i++)
			cnt[((from[i] >> shift) & 0xff) + 1]++;
		if (cnt[1] == n)
			continue;   /* this byte is 0 everywhere: already in order */
		for (unsigned b = 0; b < 256; b++)
			cnt[b + 1] += cnt[b];
		for (size_t i = 0; i < n; i++)
			to[cnt[(from[i] >> shift) & 0xff]++] = from[i];
		uint32_t *t = from;
		from = to;
		to = t;
	}
	if (from != v)
		memcpy(v, from, n * sizeof(uint32_t));
}

static uint32_t dfa_subset_stamp(struct dfa_subset *ss)
{
	if (++ss->gen == 0) {
		memset(ss->mark, 0, ss->nfa->n * sizeof(uint32_t));
		ss->gen = 1;
	}
	return ss->gen;
}

/* Drops the threads of ss->tmp (sorted) that a dominating state of the same
 * alternative also holds (see nfa.c): they can never add a match. Domination
 * points to lower ids only, so it is acyclic and the highest dominator of
 * every dropped state stays. */
static void dfa_subset_prune(struct dfa_subset *ss)
{
	uint32_t *v = ss->tmp;
	size_t n = ss->ntmp, out = 0;
	bool any = false;
	uint32_t gen = dfa_subset_stamp(ss);
	for (size_t i = 0; i < n; i++) {
		const struct nfa_state *st = &ss->nfa->st[v[i]];
		if (st->dom_lo == st->dom_hi)
			continue;
		/* members in [dom_lo, dom_hi): binary search the first */
		size_t lo = 0, hi = i;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (v[mid] < st->dom_lo)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (size_t k = lo; k < i && v[k] < st->dom_hi; k++) {
			ss->mark[v[k]] = gen;
			any = true;
		}
	}
	if (!any)
		return;
	for (size_t i = 0; i < n; i++)
		if (ss->mark[v[i]] != gen)
			v[out++] = v[i];
	ss->ntmp = out;
}

/* Epsilon closure of seeds, keeping only states with byte edges or an
 * accept: the others add nothing to a subset state. Sorted into ss->tmp. */
static void dfa_subset_closure(struct dfa_subset *ss, const uint32_t *seeds, size_t n)
{
	uint32_t gen = dfa_subset_stamp(ss);
	ss->nstack = ss->ntmp = 0;
	for (size_t i = 0; i < n; i++) {
		if (ss->mark[seeds[i]] != gen) {
			ss->mark[seeds[i]] = gen;
			*VEC_PUSH(ss->stack, ss->nstack, ss->stackcap) = seeds[i];
		}
	}
	while (ss->nstack) {
		uint32_t q = ss->stack[--ss->nstack];
		const struct nfa_state *st = &ss->nfa->st[q];
		if (nfa_state_important(st))
			*VEC_PUSH(ss->tmp, ss->ntmp, ss->tmpcap) = q;
		for (unsigned e = 0; e < st->neps; e++) {
			if (ss->mark[st->eps[e]] != gen) {
				ss->mark[st->eps[e]] = gen;
				*VEC_PUSH(ss->stack, ss->nstack, ss->stackcap) = st->eps[e];
			}
		}
	}
	/* the stack is empty now: its room is the sort's */
	mem_grow((void **)&ss->stack, &ss->stackcap, ss->ntmp, sizeof(uint32_t));
	dfa_u32_sort_big(ss->tmp, ss->stack, ss->ntmp);
	dfa_subset_prune(ss);
}

uint32_t dfa_rule_perms(const struct dfa_rule *rules, const uint32_t *entries, size_t n)
{
	uint32_t grant = 0, deny = 0;
	for (size_t i = 0; i < n; i++) {
		grant |= rules[entries[i]].grant;
		deny |= rules[entries[i]].deny;
	}
	return grant & ~deny;
}

/* The label of a new subset state: the rules it accepts for. */
static uint32_t dfa_subset_label(struct dfa_subset *ss, const uint32_t *set, size_t n)
{
	uint32_t *ents = NULL;
	size_t nents = 0, cap = 0;
	bool is_new;
	for (size_t i = 0; i < n; i++) {
		const struct nfa_state *st = &ss->nfa->st[set[i]];
		if (st->accept)
			*VEC_PUSH(ents, nents, cap) = st->entry;
	}
	dfa_u32_sort(ents, nents);
	size_t u = 0;
	for (size_t i = 0; i < nents; i++)
		if (u == 0 || ents[u - 1] != ents[i])
			ents[u++] = ents[i];
	uint32_t id = dfa_seqtab_intern(&ss->labels, ents, u, SIZE_MAX, &is_new);
	free(ents);
	return id;
}

/* The id of the subset state ss->tmp, adding it if new; UINT32_MAX at the limit. */
static uint32_t dfa_subset_state(struct dfa_subset *ss)
{
	bool is_new;
	uint32_t id;
	if (ss->sid) {
		/* by what its threads match from here on: a state that matches
		 * the same is the one already made (sigs and sets grow together) */
		mem_grow((void **)&ss->sig, &ss->sigcap, ss->ntmp, sizeof(uint32_t));
		for (size_t i = 0; i < ss->ntmp; i++)
			ss->sig[i] = ss->sid[ss->tmp[i]];
		/* the closure left the stack empty and as long as tmp */
		dfa_u32_sort_big(ss->sig, ss->stack, ss->ntmp);
		size_t m = 0;
		for (size_t i = 0; i < ss->ntmp; i++)
			if (m == 0 || ss->sig[m - 1] != ss->sig[i])
				ss->sig[m++] = ss->sig[i];
		id = dfa_seqtab_intern(&ss->sigs, ss->sig, m, ss->limit, &is_new);
		if (id == UINT32_MAX || !is_new)
			return id;
	}
	id = dfa_seqtab_intern(&ss->sets, ss->tmp, ss->ntmp, ss->limit, &is_new);
	if (id == UINT32_MAX || !is_new)
		return id;
	mem_grow((void **)&ss->trans, &ss->transcap, ss->sets.n * ss->k, sizeof(uint32_t));
	mem_grow((void **)&ss->label, &ss->labelcap, ss->sets.n, sizeof(uint32_t));
	ss->label[id] = dfa_subset_label(ss, ss->tmp, ss->ntmp);
	return id;
}

/* Builds every reachable subset state breadth-first, classes in order, so
 * creation order is deterministic. Returns -E2BIG at the limit. */
int dfa_subset_run(struct dfa_subset *ss)
{
	const struct nfa *nfa = ss->nfa;
	bool is_new;

	/* label 0 is "nothing matched" */
	dfa_seqtab_intern(&ss->labels, NULL, 0, SIZE_MAX, &is_new);
	dfa_subset_closure(ss, nfa->starts, nfa->nstarts);
	if (dfa_subset_state(ss) == UINT32_MAX)
		return -E2BIG;
	/* the empty set, where most classes of most states lead: interned
	 * once, not looked up per transition (it is not a state until some
	 * transition reaches it, so the numbering is what it always was) */
	uint32_t empty = UINT32_MAX;

	for (uint32_t i = 0; i < ss->sets.n; i++) {
		size_t len;
		const uint32_t *set = dfa_seqtab_get(&ss->sets, i, &len);
		for (uint32_t c = 0; c < ss->k; c++)
			ss->bucket[c].n = 0;
		for (size_t j = 0; j < len; j++) {
			const struct nfa_state *st = &nfa->st[set[j]];
			for (unsigned e = 0; e < st->nedge; e++) {
				uint32_t si = st->edge[e].set;
				for (uint32_t p = nfa->set_cls_off[si]; p < nfa->set_cls_off[si + 1]; p++) {
					struct dfa_bucket *bk = &ss->bucket[nfa->set_cls[p]];
					*VEC_PUSH(bk->v, bk->n, bk->cap) = st->edge[e].to;
				}
			}
		}
		uint32_t last = UINT32_MAX;   /* the last class whose closure was made */
		for (uint32_t c = 0; c < ss->k; c++) {
			const struct dfa_bucket *bc = &ss->bucket[c];
			if (bc->n == 0 && empty != UINT32_MAX) {
				ss->trans[(size_t)i * ss->k + c] = empty;
				continue;
			}
			/* the same seeds, the same target: a thread in '*' gives
			 * most classes of its state the one bucket */
			if (bc->n && last != UINT32_MAX && ss->bucket[last].n == bc->n &&
			    memcmp(ss->bucket[last].v, bc->v, bc->n * sizeof(uint32_t)) == 0) {
				ss->trans[(size_t)i * ss->k + c] = ss->trans[(size_t)i * ss->k + last];
				continue;
			}
			last = c;
			dfa_subset_closure(ss, ss->bucket[c].v, ss->bucket[c].n);
			uint32_t to = dfa_subset_state(ss);
			if (ss->bucket[c].n == 0)
				empty = to;
			if (to == UINT32_MAX)
				return -E2BIG;
			ss->trans[(size_t)i * ss->k + c] = to;
		}
	}
	return 0;
}

void dfa_subset_init(struct dfa_subset *ss, const struct nfa *nfa, const struct dfa_rule *rules,
		     size_t limit)
{
	memset(ss, 0, sizeof(*ss));
	ss->nfa = nfa;
	ss->rules = rules;
	ss->limit = limit;
	ss->k = nfa->nclasses;
	dfa_seqtab_init(&ss->sets);
	dfa_seqtab_init(&ss->labels);
	ss->mark = xcalloc(nfa->n ? nfa->n : 1, sizeof(uint32_t));
	ss->bucket = xcalloc(ss->k, sizeof(*ss->bucket));
}

/* Suffix ids: a state's id is that of its accept (with the rule's
 * permissions, not the rule), its edges (set and target, a loop marked as
 * one) and its epsilon targets. Every target but a loop is a later state
 * (nfa.c builds each chain forwards), so one pass backwards numbers them,
 * through a table of the keys seen (open addressing, id + 1). */
#define DFA_SID_KEY 10   /* 3 + 1 + 2 edges * 2 + 2 epsilons */

static void dfa_sid_key(const struct dfa_subset *ss, uint32_t q, uint32_t key[DFA_SID_KEY])
{
	const struct nfa_state *st = &ss->nfa->st[q];
	const struct dfa_rule *r = &ss->rules[st->entry];
	unsigned n = 0;
	bool later = true;
	memset(key, 0, DFA_SID_KEY * sizeof(uint32_t));
	for (unsigned e = 0; e < st->nedge; e++)
		later &= st->edge[e].to >= q;
	for (unsigned e = 0; e < st->neps; e++)
		later &= st->eps[e] > q;
	if (!later) {
		/* not a chain built forwards: a key of its own, shared with no
		 * other state (its subset states stay apart) */
		key[0] = 2;
		key[1] = q;
		return;
	}
	key[n++] = st->accept;
	key[n++] = st->accept ? r->grant : 0;
	key[n++] = st->accept ? r->deny : 0;
	key[n++] = (uint32_t)st->nedge << 8 | st->neps;
	for (unsigned e = 0; e < st->nedge; e++) {
		key[n++] = st->edge[e].set;
		key[n++] = st->edge[e].to == q ? UINT32_MAX : ss->sid[st->edge[e].to];
	}
	for (unsigned e = 0; e < st->neps; e++)
		key[n++] = ss->sid[st->eps[e]];
}

void dfa_subset_canonical(struct dfa_subset *ss)
{
	const struct nfa *nfa = ss->nfa;
	struct dfa_seqtab ids;
	bool is_new;
	dfa_seqtab_init(&ids);
	dfa_seqtab_reserve(&ids, nfa->n, nfa->n * DFA_SID_KEY);
	ss->sid = xmalloc((nfa->n ? nfa->n : 1) * sizeof(uint32_t));
	for (size_t q = nfa->n; q-- > 0;) {
		uint32_t key[DFA_SID_KEY];
		dfa_sid_key(ss, (uint32_t)q, key);
		ss->sid[q] = dfa_seqtab_intern(&ids, key, DFA_SID_KEY, SIZE_MAX, &is_new);
	}
	dfa_seqtab_fini(&ids);
	dfa_seqtab_init(&ss->sigs);
}

void dfa_subset_fini(struct dfa_subset *ss)
{
	if (ss->sid) {
		dfa_seqtab_fini(&ss->sigs);
		free(ss->sid);
		free(ss->sig);
	}
	dfa_seqtab_fini(&ss->sets);
	dfa_seqtab_fini(&ss->labels);
	free(ss->trans);
	free(ss->label);
	free(ss->mark);
	free(ss->stack);
	free(ss->tmp);
	for (uint32_t c = 0; c < ss->k; c++)
		free(ss->bucket[c].v);
	free(ss->bucket);
}
