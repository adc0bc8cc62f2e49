/* dfa.c: rules -> NFA -> subset construction -> minimise -> numbered tables.
 *
 * dfa_build shows the pipeline; each stage is a function below it.
 */
#include "dfa_impl.h"
#include "mem.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

const char *dfa_kind_name(enum dfa_kind k)
{
	switch (k) {
#define X(name, str) case DFA_KIND_##name: return str;
	DFA_KINDS(X)
#undef X
	}
	return "?";
}

/* ---- interned u32 sequences ------------------------------------------------ */

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

static void dfa_seqtab_init(struct dfa_seqtab *t)
{
	memset(t, 0, sizeof(*t));
	*VEC_PUSH(t->off, t->n, t->offcap) = 0;
	t->n = 0;
	t->nslots = 64;
	t->slots = xcalloc(t->nslots, sizeof(uint32_t));
}

static void dfa_seqtab_fini(struct dfa_seqtab *t)
{
	free(t->pool);
	free(t->off);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

static const uint32_t *dfa_seqtab_get(const struct dfa_seqtab *t, uint32_t id, size_t *len)
{
	*len = t->off[id + 1] - t->off[id];
	return t->pool + t->off[id];
}

static uint64_t dfa_seq_hash(const uint32_t *v, size_t n)
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

/* Returns the id of v[0..n), or UINT32_MAX when it is new and limit ids
 * exist already; *is_new says whether it was added. */
static uint32_t dfa_seqtab_intern(struct dfa_seqtab *t, const uint32_t *v, size_t n, size_t limit,
				  bool *is_new)
{
	size_t h = (size_t)dfa_seq_hash(v, n) & (t->nslots - 1);
	*is_new = false;
	while (t->slots[h]) {
		size_t len;
		uint32_t id = t->slots[h] - 1;
		const uint32_t *w = dfa_seqtab_get(t, id, &len);
		if (len == n && memcmp(v, w, n * sizeof(uint32_t)) == 0)
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
};

static int dfa_u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
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
	qsort(ss->tmp, ss->ntmp, sizeof(uint32_t), dfa_u32_cmp);
	dfa_subset_prune(ss);
}

static uint32_t dfa_rule_perms(const struct dfa_rule *rules, const uint32_t *entries, size_t n)
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
	qsort(ents, nents, sizeof(uint32_t), dfa_u32_cmp);
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
	uint32_t id = dfa_seqtab_intern(&ss->sets, ss->tmp, ss->ntmp, ss->limit, &is_new);
	if (id == UINT32_MAX || !is_new)
		return id;
	mem_grow((void **)&ss->trans, &ss->transcap, ss->sets.n * ss->k, sizeof(uint32_t));
	mem_grow((void **)&ss->label, &ss->labelcap, ss->sets.n, sizeof(uint32_t));
	ss->label[id] = dfa_subset_label(ss, ss->tmp, ss->ntmp);
	return id;
}

/* Builds every reachable subset state breadth-first, classes in order, so
 * creation order is deterministic. Returns -E2BIG at the limit. */
static int dfa_subset_run(struct dfa_subset *ss)
{
	const struct nfa *nfa = ss->nfa;
	bool is_new;

	/* label 0 is "nothing matched" */
	dfa_seqtab_intern(&ss->labels, NULL, 0, SIZE_MAX, &is_new);
	dfa_subset_closure(ss, nfa->starts, nfa->nstarts);
	if (dfa_subset_state(ss) == UINT32_MAX)
		return -E2BIG;

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
		for (uint32_t c = 0; c < ss->k; c++) {
			dfa_subset_closure(ss, ss->bucket[c].v, ss->bucket[c].n);
			uint32_t to = dfa_subset_state(ss);
			if (to == UINT32_MAX)
				return -E2BIG;
			ss->trans[(size_t)i * ss->k + c] = to;
		}
	}
	return 0;
}

/* At the limit: for every rule, in how many subset states its NFA states
 * take part; fills the report with the three largest. */
static void dfa_subset_blame(struct dfa_subset *ss, size_t nrules, struct dfa_limit_report *rep)
{
	size_t *count = xcalloc(nrules ? nrules : 1, sizeof(size_t));
	uint32_t *seen = xcalloc(nrules ? nrules : 1, sizeof(uint32_t));
	for (uint32_t i = 0; i < ss->sets.n; i++) {
		size_t len;
		const uint32_t *set = dfa_seqtab_get(&ss->sets, i, &len);
		for (size_t j = 0; j < len; j++) {
			uint32_t e = ss->nfa->st[set[j]].entry;
			if (seen[e] != i + 1) {
				seen[e] = i + 1;
				count[e]++;
			}
		}
	}
	memset(rep, 0, sizeof(*rep));
	rep->built = rep->subset = ss->sets.n;
	for (unsigned slot = 0; slot < 3; slot++) {
		size_t best = SIZE_MAX;
		for (size_t e = 0; e < nrules; e++) {
			if (!count[e])
				continue;
			bool taken = false;
			for (unsigned j = 0; j < rep->nrules; j++)
				taken |= rep->rules[j] == ss->rules[e].rule;
			if (taken)
				continue;
			if (best == SIZE_MAX || count[e] > count[best])
				best = e;
		}
		if (best == SIZE_MAX)
			break;
		rep->rules[rep->nrules] = ss->rules[best].rule;
		rep->states[rep->nrules] = count[best];
		rep->nrules++;
	}
	free(count);
	free(seen);
}

static void dfa_subset_fini(struct dfa_subset *ss)
{
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

/* ---- assembling the minimal automaton -------------------------------------- */

/* Merges classes whose columns agree in the quotient automaton; writes the
 * new class of each old class (numbered by smallest byte); returns the count. */
static uint32_t dfa_classes_merge(const uint32_t *qtrans, uint32_t nb, uint32_t k, uint32_t *newcls,
				  uint32_t *rep)
{
	uint64_t *hash = xmalloc(k * sizeof(uint64_t));
	uint32_t *col = xmalloc((nb ? nb : 1) * sizeof(uint32_t));
	uint32_t k2 = 0;
	for (uint32_t c = 0; c < k; c++) {
		for (uint32_t b = 0; b < nb; b++)
			col[b] = qtrans[(size_t)b * k + c];
		hash[c] = dfa_seq_hash(col, nb);
		newcls[c] = UINT32_MAX;
		for (uint32_t d = 0; d < c && newcls[c] == UINT32_MAX; d++) {
			if (hash[d] != hash[c] || rep[newcls[d]] != d)
				continue;
			bool same = true;
			for (uint32_t b = 0; b < nb && same; b++)
				same = qtrans[(size_t)b * k + c] == qtrans[(size_t)b * k + d];
			if (same)
				newcls[c] = newcls[d];
		}
		if (newcls[c] == UINT32_MAX) {
			rep[k2] = c;
			newcls[c] = k2++;
		}
	}
	free(hash);
	free(col);
	return k2;
}

static int dfa_rule_id_cmp(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
	return x < y ? -1 : x > y;
}

/* The minimal automaton of (n states, k classes, trans, label) as d's
 * tables: class_of[256] maps bytes to the input's classes. Label 0 means
 * "nothing matched"; the dead block is the one with label 0 and no way out.
 * Fills d->nstates, nclasses, dead, class_of and next; returns, for every
 * new state, one input state it stands for (the caller takes labels from it). */
static uint32_t *dfa_quotient(struct dfa *d, uint32_t n, uint32_t k, const uint32_t *trans,
			      const uint32_t *label, const uint8_t *class_of)
{
	uint32_t *block = xmalloc(n * sizeof(uint32_t));
	uint32_t nb = dfa_min_partition(n, k, trans, label, block);

	/* quotient: each block's transitions from its first state */
	uint32_t *brep = xmalloc(nb * sizeof(uint32_t));
	for (uint32_t b = 0; b < nb; b++)
		brep[b] = UINT32_MAX;
	for (uint32_t s = 0; s < n; s++)
		if (brep[block[s]] == UINT32_MAX)
			brep[block[s]] = s;
	uint32_t *qtrans = xmalloc((size_t)nb * k * sizeof(uint32_t));
	for (uint32_t b = 0; b < nb; b++)
		for (uint32_t c = 0; c < k; c++)
			qtrans[(size_t)b * k + c] = block[trans[(size_t)brep[b] * k + c]];

	/* the dead block: nothing matched and no way out (at most one exists) */
	uint32_t dead = UINT32_MAX;
	for (uint32_t b = 0; b < nb && dead == UINT32_MAX; b++) {
		if (label[brep[b]] != 0)
			continue;
		bool closed = true;
		for (uint32_t c = 0; c < k && closed; c++)
			closed = qtrans[(size_t)b * k + c] == b;
		if (closed)
			dead = b;
	}

	uint32_t *newcls = xmalloc(k * sizeof(uint32_t)), *crep = xmalloc(k * sizeof(uint32_t));
	uint32_t k2 = dfa_classes_merge(qtrans, nb, k, newcls, crep);

	/* number breadth-first from the start in class order; dead last */
	uint32_t *id = xmalloc(nb * sizeof(uint32_t)), *order = xmalloc(nb * sizeof(uint32_t));
	for (uint32_t b = 0; b < nb; b++)
		id[b] = UINT32_MAX;
	uint32_t norder = 0;
	id[block[0]] = norder;
	order[norder++] = block[0];
	for (uint32_t h = 0; h < norder; h++) {
		uint32_t b = order[h];
		for (uint32_t c = 0; c < k2; c++) {
			uint32_t t = qtrans[(size_t)b * k + crep[c]];
			if (t != dead && id[t] == UINT32_MAX) {
				id[t] = norder;
				order[norder++] = t;
			}
		}
	}
	if (dead != UINT32_MAX && id[dead] == UINT32_MAX) {
		id[dead] = norder;
		order[norder++] = dead;
	}

	d->nstates = norder;
	d->nclasses = k2;
	d->dead = dead == UINT32_MAX ? DFA_STATE_NONE : id[dead];
	for (unsigned b = 0; b < 256; b++)
		d->class_of[b] = (uint8_t)newcls[class_of[b]];
	/* ids beyond u16 are refused by the caller before anyone reads next */
	d->next = xmalloc((size_t)norder * k2 * sizeof(uint16_t));
	uint32_t *rep = xmalloc(norder * sizeof(uint32_t));
	for (uint32_t s = 0; s < norder; s++) {
		uint32_t b = order[s];
		rep[s] = brep[b];
		for (uint32_t c = 0; c < k2; c++)
			d->next[(size_t)s * k2 + c] = (uint16_t)id[qtrans[(size_t)b * k + crep[c]]];
	}

	free(block);
	free(brep);
	free(qtrans);
	free(newcls);
	free(crep);
	free(id);
	free(order);
	return rep;
}

static void dfa_stats_count(struct dfa *d)
{
	d->stats.states = d->nstates;
	d->stats.classes = d->nclasses;
	d->stats.accepting = d->stats.transitions = 0;
	for (uint32_t s = 0; s < d->nstates; s++) {
		if (d->perms_only ? d->perms[s] != 0 : d->rule_off[s + 1] > d->rule_off[s])
			d->stats.accepting++;
		for (uint32_t c = 0; c < d->nclasses; c++)
			d->stats.transitions += d->next[(size_t)s * d->nclasses + c] != d->dead;
	}
}

/* Minimises the subset automaton into d, with per-state rules and perms. */
static void dfa_assemble(struct dfa *d, struct dfa_subset *ss)
{
	uint32_t *rep = dfa_quotient(d, (uint32_t)ss->sets.n, ss->k, ss->trans, ss->label,
				     ss->nfa->class_of);
	d->perms = xmalloc(d->nstates * sizeof(uint32_t));
	d->rule_off = xcalloc(d->nstates + 1, sizeof(uint32_t));
	d->entry_off = xcalloc(d->nstates + 1, sizeof(uint32_t));
	size_t nrid = 0, ridcap = 0, neid = 0, eidcap = 0;
	for (uint32_t s = 0; s < d->nstates; s++) {
		size_t len;
		const uint32_t *lab = dfa_seqtab_get(&ss->labels, ss->label[rep[s]], &len);
		d->perms[s] = dfa_rule_perms(ss->rules, lab, len);
		size_t first = nrid;
		for (size_t i = 0; i < len; i++) {
			*VEC_PUSH(d->entry_ids, neid, eidcap) = lab[i];
			*VEC_PUSH(d->rule_ids, nrid, ridcap) = ss->rules[lab[i]].rule;
		}
		qsort(d->rule_ids + first, nrid - first, sizeof(unsigned), dfa_rule_id_cmp);
		size_t u = first;
		for (size_t i = first; i < nrid; i++)
			if (u == first || d->rule_ids[u - 1] != d->rule_ids[i])
				d->rule_ids[u++] = d->rule_ids[i];
		nrid = u;
		d->rule_off[s + 1] = (uint32_t)nrid;
		d->entry_off[s + 1] = (uint32_t)neid;
	}
	free(rep);
	d->stats.subset_states = (unsigned)ss->sets.n;
	dfa_stats_count(d);
}

static struct dfa *dfa_alloc(enum dfa_kind kind, const struct dfa_rule *rules, size_t n)
{
	struct dfa *d = xcalloc(1, sizeof(*d));
	d->kind = kind;
	d->nrules = n;
	d->rules = xcalloc(n ? n : 1, sizeof(*d->rules));
	for (size_t i = 0; i < n; i++) {
		d->rules[i] = rules[i];
		d->rules[i].glob = xstrdup(rules[i].glob);
	}
	return d;
}

int dfa_perms_reduce(const struct dfa *d, struct dfa **out)
{
	uint32_t n = d->nstates, k = d->nclasses;
	uint32_t *trans = xmalloc((size_t)n * k * sizeof(uint32_t));
	uint32_t *label = xmalloc(n * sizeof(uint32_t));
	for (size_t i = 0; i < (size_t)n * k; i++)
		trans[i] = d->next[i];
	/* labels: distinct permission sets, 0 for none */
	uint32_t *seen = xmalloc(n * sizeof(uint32_t));
	uint32_t nseen = 0;
	for (uint32_t s = 0; s < n; s++) {
		uint32_t l = 0;
		if (d->perms[s]) {
			for (l = 1; l <= nseen && seen[l - 1] != d->perms[s]; l++)
				;
			if (l > nseen)
				seen[nseen++] = d->perms[s];
		}
		label[s] = l;
	}
	struct dfa *r = dfa_alloc(d->kind, d->rules, d->nrules);
	r->perms_only = true;
	uint32_t *rep = dfa_quotient(r, n, k, trans, label, d->class_of);
	r->perms = xmalloc(r->nstates * sizeof(uint32_t));
	r->rule_off = xcalloc(r->nstates + 1, sizeof(uint32_t));
	r->entry_off = xcalloc(r->nstates + 1, sizeof(uint32_t));
	for (uint32_t s = 0; s < r->nstates; s++)
		r->perms[s] = d->perms[rep[s]];
	r->stats = d->stats;
	dfa_stats_count(r);
	free(rep);
	free(seen);
	free(trans);
	free(label);
	*out = r;
	return 0;
}

/* ---- the driver ---------------------------------------------------------- */

/* The glob's own text inside loc, when loc spans exactly the quoted glob
 * (no escapes, no ${NAME}); narrows a diagnostic to the bad part. */
static struct loc dfa_glob_loc(const struct dfa_rule *r, const struct glob_error *ge)
{
	struct loc l = r->loc;
	size_t glen = strlen(r->glob);
	if (l.src && l.len == glen + 2 && (size_t)l.off + l.len <= l.src->len &&
	    memcmp(l.src->text + l.off + 1, r->glob, glen) == 0) {
		l.off += 1 + (uint32_t)ge->off;
		l.len = ge->len ? (uint32_t)ge->len : 1;
	}
	return l;
}

static void dfa_limit_diag(struct diag_ctx *dc, const struct dfa_rule *rules, size_t n,
			   enum dfa_kind kind, const char *stage, size_t limit,
			   const struct dfa_limit_report *rep)
{
	const struct dfa_rule *top[3] = { NULL, NULL, NULL };
	for (unsigned j = 0; j < rep->nrules; j++)
		for (size_t i = 0; i < n && !top[j]; i++)
			if (rules[i].rule == rep->rules[j])
				top[j] = &rules[i];
	diag_error(dc, top[0] ? top[0]->loc : LOC_NONE,
		   "the %s automaton is too large: %s more than %zu states", dfa_kind_name(kind),
		   stage, limit);
	for (unsigned j = 0; j < rep->nrules; j++)
		diag_note(dc, top[j]->loc, "glob '%s' takes part in %zu of the %zu states built",
			  top[j]->glob, rep->states[j], rep->subset);
}

int dfa_build(const struct dfa_rule *rules, size_t n, const struct dfa_build_opts *opts,
	      struct dfa **out, struct diag_ctx *dc)
{
	struct dfa_build_opts o = { .sz = sizeof(o), .kind = DFA_KIND_PATH };
	struct dfa_limit_report rep;
	struct nfa nfa;
	struct dfa_subset ss;
	struct dfa *d = NULL;
	int rc = 0;

	if (opts)
		memcpy(&o, opts, opts->sz < sizeof(o) ? opts->sz : sizeof(o));
	if (o.max_states == 0 || o.max_states > DFA_MAX_STATES)
		o.max_states = DFA_MAX_STATES;
	if (o.max_build_states == 0)
		o.max_build_states = DFA_DEFAULT_BUILD_STATES;
	*out = NULL;
	nfa_init(&nfa);
	memset(&ss, 0, sizeof(ss));

	/* 1. globs -> NFA, every bad glob reported */
	for (size_t i = 0; i < n; i++) {
		struct glob g;
		struct glob_error ge;
		if (glob_parse(rules[i].glob, &g, &ge)) {
			if (dc)
				diag_error(dc, dfa_glob_loc(&rules[i], &ge), "invalid glob '%s': %s",
					   rules[i].glob, ge.msg);
			rc = -EINVAL;
			continue;
		}
		nfa_glob_add(&nfa, &g, (uint32_t)i);
		glob_fini(&g);
	}
	if (rc)
		goto out;

	/* 2. byte classes, 3. subset construction */
	nfa_classes_compute(&nfa);
	ss.nfa = &nfa;
	ss.rules = rules;
	ss.limit = o.max_build_states;
	ss.k = nfa.nclasses;
	dfa_seqtab_init(&ss.sets);
	dfa_seqtab_init(&ss.labels);
	ss.mark = xcalloc(nfa.n ? nfa.n : 1, sizeof(uint32_t));
	ss.bucket = xcalloc(ss.k, sizeof(*ss.bucket));
	rc = dfa_subset_run(&ss);
	if (rc) {
		dfa_subset_blame(&ss, n, &rep);
		if (o.limit)
			*o.limit = rep;
		if (dc)
			dfa_limit_diag(dc, rules, n, o.kind, "building it takes", ss.limit, &rep);
		goto out;
	}

	/* 4. minimise, merge classes, number states */
	d = dfa_alloc(o.kind, rules, n);
	dfa_assemble(d, &ss);
	d->stats.nfa_states = (unsigned)nfa.n;
	if (d->nstates > o.max_states) {
		dfa_subset_blame(&ss, n, &rep);
		rep.built = d->nstates;
		if (o.limit)
			*o.limit = rep;
		if (dc)
			dfa_limit_diag(dc, rules, n, o.kind, "its minimal form has", o.max_states, &rep);
		dfa_free(d);
		d = NULL;
		rc = -E2BIG;
		goto out;
	}
	if (o.perms_only) {
		struct dfa *r;
		dfa_perms_reduce(d, &r);
		dfa_free(d);
		d = r;
	}
	*out = d;
out:
	if (ss.nfa)
		dfa_subset_fini(&ss);
	nfa_fini(&nfa);
	return rc;
}

void dfa_free(struct dfa *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->nrules; i++)
		free((char *)d->rules[i].glob);
	free(d->rules);
	free(d->next);
	free(d->perms);
	free(d->rule_off);
	free(d->rule_ids);
	free(d->entry_off);
	free(d->entry_ids);
	free(d);
}

/* ---- queries ------------------------------------------------------------- */

void dfa_stats_get(const struct dfa *d, struct dfa_stats *st)
{
	*st = d->stats;
}

enum dfa_kind dfa_kind_get(const struct dfa *d)
{
	return d->kind;
}

unsigned dfa_match(const struct dfa *d, const void *bytes, size_t len, uint32_t *perms,
		   struct dfa_rules *rules)
{
	const uint8_t *p = bytes;
	unsigned s = 0, k = d->nclasses;
	for (size_t i = 0; i < len; i++)
		s = d->next[(size_t)s * k + d->class_of[p[i]]];
	if (perms)
		*perms = d->perms[s];
	if (rules)
		*rules = dfa_state_rules(d, s);
	return s;
}

void dfa_tables_get(const struct dfa *d, struct dfa_tables *t)
{
	t->nstates = d->nstates;
	t->nclasses = d->nclasses;
	t->start = 0;
	t->dead = d->dead;
	t->class_of = d->class_of;
	t->next = d->next;
	t->perms = d->perms;
}

unsigned dfa_next(const struct dfa *d, unsigned state, unsigned cls)
{
	return d->next[(size_t)state * d->nclasses + cls];
}

uint32_t dfa_state_perms(const struct dfa *d, unsigned state)
{
	return d->perms[state];
}

struct dfa_rules dfa_state_rules(const struct dfa *d, unsigned state)
{
	struct dfa_rules r = { d->rule_ids + d->rule_off[state],
			       d->rule_off[state + 1] - d->rule_off[state] };
	return r;
}

size_t dfa_rule_count(const struct dfa *d)
{
	return d->nrules;
}

const struct dfa_rule *dfa_rule_get(const struct dfa *d, size_t i)
{
	return &d->rules[i];
}

unsigned dfa_byte_rank(uint8_t b)
{
	if (b >= 'a' && b <= 'z')
		return b - 'a';
	if (b >= 'A' && b <= 'Z')
		return 26 + (b - 'A');
	if (b >= '0' && b <= '9')
		return 52 + (b - '0');
	if (b == '_')
		return 62;
	if (b == '-')
		return 63;
	if (b == '.')
		return 64;
	if (b > 0x20 && b < 0x7f)
		return 100 + b;
	if (b == ' ')
		return 300;
	if (b >= 0x80)
		return 400 + b;
	if (b != 0)
		return 700 + b;
	return UINT32_MAX;
}

int dfa_class_example(const struct dfa *d, unsigned cls)
{
	int best = -1;
	for (unsigned b = 1; b < 256; b++)
		if (d->class_of[b] == cls && (best < 0 || dfa_byte_rank((uint8_t)b) < dfa_byte_rank((uint8_t)best)))
			best = (int)b;
	return best;
}
