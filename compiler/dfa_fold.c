/* SPDX-License-Identifier: GPL-2.0-only */
/* dfa_fold.c: rule automata, and combining them.
 *
 * Subset construction over all rules at once tracks every thread of every
 * rule in every state: brace alternatives of one rule and independent rules
 * (every .pem anywhere, every name holding "token" anywhere) multiply the
 * states far beyond the minimal automaton. So each brace alternative (a
 * linear pattern) is determinised alone, the alternatives are folded into
 * the rule's minimal DFA, and the rule DFAs are combined:
 *
 * - with provenance, as one product of all of them (a state is the tuple of
 *   the rules still alive and their states), minimised once: its size is
 *   essentially the answer's, since provenance keeps every rule apart;
 * - by permissions, folded in one at a time, each product minimised by what
 *   later rules can still change: the pair (G & ~D, D) of bits granted and
 *   not denied, and bits denied. A denied bit stays denied whatever comes
 *   later, so states with equal pairs and equal futures are interchangeable,
 *   and the intermediate automata stay near the final size.
 */
#include "dfa_impl.h"
#include "mem.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void dfa_tab_fini(struct dfa_tab *t)
{
	free(t->trans);
	free(t->label);
	memset(t, 0, sizeof(*t));
}

/* ---- pairs of states ----------------------------------------------------- */

/* Pairs (a, b) numbered in order of first visit; a breadth-first queue. */
struct dfa_pairs {
	uint32_t *a, *b;
	size_t n, acap, bcap;
	uint64_t *keys;          /* (a << 32 | b) + 1; 0 = empty */
	uint32_t *ids;
	size_t nslots;
};

static void dfa_pairs_init(struct dfa_pairs *p)
{
	memset(p, 0, sizeof(*p));
	p->nslots = 256;
	p->keys = xcalloc(p->nslots, sizeof(uint64_t));
	p->ids = xcalloc(p->nslots, sizeof(uint32_t));
}

static void dfa_pairs_fini(struct dfa_pairs *p)
{
	free(p->a);
	free(p->b);
	free(p->keys);
	free(p->ids);
	memset(p, 0, sizeof(*p));
}

static size_t dfa_pairs_slot(const uint64_t *keys, size_t nslots, uint64_t key)
{
	/* mix every bit of both halves into the low bits: a product alone
	 * leaves bits 17..31 depending on b only, so pairs sharing b collide */
	uint64_t h = key;
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	size_t i = (size_t)h & (nslots - 1);
	while (keys[i] && keys[i] != key)
		i = (i + 1) & (nslots - 1);
	return i;
}

/* The id of (a, b), added at the end of the queue if new. */
static uint32_t dfa_pairs_get(struct dfa_pairs *p, uint32_t a, uint32_t b)
{
	uint64_t key = ((uint64_t)a << 32 | b) + 1;
	size_t i = dfa_pairs_slot(p->keys, p->nslots, key);
	if (p->keys[i])
		return p->ids[i];
	uint32_t id = (uint32_t)p->n;
	size_t n = p->n;
	*VEC_PUSH(p->a, n, p->acap) = a;
	n = p->n;
	*VEC_PUSH(p->b, n, p->bcap) = b;
	p->n = n;
	p->keys[i] = key;
	p->ids[i] = id;
	if (p->n * 2 > p->nslots) {
		size_t on = p->nslots;
		uint64_t *ok = p->keys;
		uint32_t *oi = p->ids;
		p->nslots *= 2;
		p->keys = xcalloc(p->nslots, sizeof(uint64_t));
		p->ids = xcalloc(p->nslots, sizeof(uint32_t));
		for (size_t j = 0; j < on; j++) {
			if (!ok[j])
				continue;
			size_t k = dfa_pairs_slot(p->keys, p->nslots, ok[j]);
			p->keys[k] = ok[j];
			p->ids[k] = oi[j];
		}
		free(ok);
		free(oi);
	}
	return id;
}

/* Empties p; a table grown large by one use is made small again. */
static void dfa_pairs_clear(struct dfa_pairs *p)
{
	if (p->nslots > 4096) {
		dfa_pairs_fini(p);
		dfa_pairs_init(p);
		return;
	}
	memset(p->keys, 0, p->nslots * sizeof(*p->keys));
	p->n = 0;
}

/* Classes refining two class maps: writes class_of and, per new class, the
 * two old classes; returns the count. At most 256 pairs occur, so a small
 * hash of them does (a table over all 65536 pairs cost 128 KiB to clear on
 * every product: most of the time of a 100,000-rule policy). */
static uint32_t dfa_pair_classes(const uint8_t *ca, const uint8_t *cb, uint8_t *class_of,
				 uint32_t *ra, uint32_t *rb)
{
	uint32_t key[512];      /* (ca << 8 | cb) + 1; 0 = empty */
	uint16_t cls[512];
	uint32_t k = 0;
	memset(key, 0, sizeof(key));
	for (unsigned byte = 0; byte < 256; byte++) {
		uint32_t kk = ((uint32_t)ca[byte] << 8 | cb[byte]) + 1;
		uint32_t h = (kk * 2654435761u) >> 23;
		while (key[h] && key[h] != kk)
			h = (h + 1) & 511;
		if (!key[h]) {
			key[h] = kk;
			cls[h] = (uint16_t)k;
			ra[k] = ca[byte];
			rb[k] = cb[byte];
			k++;
		}
		class_of[byte] = (uint8_t)cls[h];
	}
	return k;
}

/* ---- the fold ------------------------------------------------------------- */

/* Labels: with provenance, the sorted set of input positions matched; by
 * permissions, the pair (G & ~D, D). Label 0, the empty sequence, is
 * "nothing" in both. */
struct dfa_fold {
	bool prov;
	struct dfa_seqtab labels;
	struct dfa_pairs memo;       /* (la, lb) -> memo_val[id]: combining is hot */
	uint32_t *memo_val;
	size_t memo_cap;
	size_t limit;
	size_t peak;
	size_t reached;          /* states when a build stopped at the limit */
	size_t spent, budget;    /* states built in all, and how many may be */
	bool over_budget;
};

/* Counts n states built; -E2BIG once the total passes the budget: many
 * constructions each under the bound may still take minutes together. */
static int dfa_fold_spend(struct dfa_fold *f, size_t n)
{
	f->spent += n;
	if (f->spent <= f->budget)
		return 0;
	f->reached = f->spent;
	f->over_budget = true;
	return -E2BIG;
}

static uint32_t dfa_fold_intern(struct dfa_fold *f, const uint32_t *v, size_t n)
{
	bool is_new;
	return dfa_seqtab_intern(&f->labels, v, n, SIZE_MAX, &is_new);
}

/* The label of a state matching the rule at input position e. */
static uint32_t dfa_fold_rule_label(struct dfa_fold *f, const struct dfa_rule *r, uint32_t e)
{
	uint32_t pair[2] = { r->grant & ~r->deny, r->deny };
	if (f->prov)
		return dfa_fold_intern(f, &e, 1);
	/* a rule that grants and denies nothing changes nothing */
	return pair[0] | pair[1] ? dfa_fold_intern(f, pair, 2) : 0;
}

static uint32_t dfa_fold_combine(struct dfa_fold *f, uint32_t la, uint32_t lb)
{
	if (la == lb || lb == 0)
		return la;
	if (la == 0)
		return lb;
	size_t before = f->memo.n;
	uint32_t id = dfa_pairs_get(&f->memo, la, lb);
	if (f->memo.n == before)
		return f->memo_val[id];
	size_t nx, ny;
	const uint32_t *x = dfa_seqtab_get(&f->labels, la, &nx);
	const uint32_t *y = dfa_seqtab_get(&f->labels, lb, &ny);
	uint32_t r;
	if (f->prov) {
		/* union of two sorted sets */
		uint32_t *u = xmalloc((nx + ny) * sizeof(uint32_t));
		size_t i = 0, j = 0, n = 0;
		while (i < nx || j < ny) {
			if (j == ny || (i < nx && x[i] < y[j]))
				u[n++] = x[i++];
			else if (i == nx || y[j] < x[i])
				u[n++] = y[j++];
			else {
				u[n++] = x[i++];
				j++;
			}
		}
		r = dfa_fold_intern(f, u, n);
		free(u);
	} else {
		uint32_t dn = x[1] | y[1];
		uint32_t v[2] = { (x[0] | y[0]) & ~dn, dn };
		r = dfa_fold_intern(f, v, 2);
	}
	mem_grow((void **)&f->memo_val, &f->memo_cap, id + 1, sizeof(uint32_t));
	f->memo_val[id] = r;
	return r;
}

/* Minimises t in place by label: the start stays 0, other states follow in
 * order of their first member, and classes no state tells apart merge. */
static void dfa_tab_minimize(struct dfa_tab *t)
{
	uint32_t n = t->n, k = t->k;
	uint32_t *block = xmalloc(n * sizeof(uint32_t));
	uint32_t nb = dfa_min_partition(n, k, t->trans, t->label, block);
	uint32_t *id = xmalloc(nb * sizeof(uint32_t)), *rep = xmalloc(nb * sizeof(uint32_t));
	for (uint32_t b = 0; b < nb; b++)
		id[b] = UINT32_MAX;
	uint32_t m = 0;
	for (uint32_t s = 0; s < n; s++) {
		if (id[block[s]] == UINT32_MAX) {
			id[block[s]] = m;
			rep[m++] = s;
		}
	}
	uint32_t *qtrans = xmalloc((size_t)nb * k * sizeof(uint32_t));
	for (uint32_t b = 0; b < nb; b++)
		for (uint32_t c = 0; c < k; c++)
			qtrans[(size_t)b * k + c] = id[block[t->trans[(size_t)rep[b] * k + c]]];
	uint32_t *newcls = xmalloc(k * sizeof(uint32_t)), *crep = xmalloc(k * sizeof(uint32_t));
	uint32_t k2 = dfa_classes_merge(qtrans, nb, k, newcls, crep);
	uint32_t *trans = xmalloc((size_t)nb * k2 * sizeof(uint32_t));
	uint32_t *label = xmalloc(nb * sizeof(uint32_t));
	for (uint32_t b = 0; b < nb; b++) {
		label[b] = t->label[rep[b]];
		for (uint32_t c = 0; c < k2; c++)
			trans[(size_t)b * k2 + c] = qtrans[(size_t)b * k + crep[c]];
	}
	for (unsigned byte = 0; byte < 256; byte++)
		t->class_of[byte] = (uint8_t)newcls[t->class_of[byte]];
	free(t->trans);
	free(t->label);
	t->trans = trans;
	t->label = label;
	t->n = nb;
	t->k = k2;
	free(block);
	free(id);
	free(rep);
	free(qtrans);
	free(newcls);
	free(crep);
}

/* The product of a and b over the reachable pairs, labels combined. */
static int dfa_tab_product(struct dfa_fold *f, const struct dfa_tab *a, const struct dfa_tab *b,
			   struct dfa_tab *out)
{
	uint32_t ra[256], rb[256];
	struct dfa_pairs p;
	size_t cap = 0, lcap = 0, nl = 0;
	memset(out, 0, sizeof(*out));
	out->k = dfa_pair_classes(a->class_of, b->class_of, out->class_of, ra, rb);
	dfa_pairs_init(&p);
	dfa_pairs_get(&p, 0, 0);
	for (size_t i = 0; i < p.n; i++) {
		uint32_t sa = p.a[i], sb = p.b[i];
		mem_grow((void **)&out->trans, &cap, (i + 1) * out->k, sizeof(uint32_t));
		/* most classes of a path automaton's state lead where the one
		 * before did (to the dead state, or round a '*'): no lookup */
		uint32_t la = UINT32_MAX, lb = UINT32_MAX, lid = 0;
		for (uint32_t c = 0; c < out->k; c++) {
			uint32_t ta = a->trans[(size_t)sa * a->k + ra[c]];
			uint32_t tb = b->trans[(size_t)sb * b->k + rb[c]];
			if (ta != la || tb != lb) {
				la = ta;
				lb = tb;
				lid = dfa_pairs_get(&p, ta, tb);
			}
			out->trans[i * out->k + c] = lid;
			/* stop at the first state past the bound, not a row later */
			if (p.n > f->limit) {
				f->reached = p.n;
				dfa_pairs_fini(&p);
				dfa_tab_fini(out);
				return -E2BIG;
			}
		}
		*VEC_PUSH(out->label, nl, lcap) = dfa_fold_combine(f, a->label[sa], b->label[sb]);
	}
	out->n = (uint32_t)p.n;
	if (p.n > f->peak)
		f->peak = p.n;
	dfa_pairs_fini(&p);
	if (dfa_fold_spend(f, out->n) < 0) {
		dfa_tab_fini(out);
		return -E2BIG;
	}
	return 0;
}

/* One alternative's minimal DFA; matching states get label lab. */
static int dfa_tab_of_alt(struct dfa_fold *f, const struct dfa_rule *r, struct glob_alt *alt,
			  uint32_t lab, struct dfa_tab *t)
{
	struct glob one = { .alts = alt, .nalts = 1 };
	struct nfa nfa;
	struct dfa_subset ss;
	nfa_init(&nfa);
	nfa_glob_add(&nfa, &one, 0);
	nfa_classes_compute(&nfa);
	dfa_subset_init(&ss, &nfa, r, f->limit);
	int rc = dfa_subset_run(&ss);
	if (rc == -E2BIG)
		f->reached = ss.sets.n + 1;   /* the state it refused to add */
	if (rc == 0)
		rc = dfa_fold_spend(f, ss.sets.n);
	if (rc == 0) {
		t->n = (uint32_t)ss.sets.n;
		t->k = ss.k;
		t->trans = xmalloc((size_t)t->n * t->k * sizeof(uint32_t));
		memcpy(t->trans, ss.trans, (size_t)t->n * t->k * sizeof(uint32_t));
		t->label = xmalloc(t->n * sizeof(uint32_t));
		for (uint32_t s = 0; s < t->n; s++)
			t->label[s] = ss.label[s] ? lab : 0;
		memcpy(t->class_of, nfa.class_of, sizeof(t->class_of));
		if (t->n > f->peak)
			f->peak = t->n;
		dfa_tab_minimize(t);
	}
	dfa_subset_fini(&ss);
	nfa_fini(&nfa);
	return rc;
}

/* One rule's minimal DFA, its brace alternatives folded one by one: each
 * alone is a linear pattern whose subset construction stays small, where
 * all at once their threads would multiply. */
static int dfa_tab_of_rule(struct dfa_fold *f, const struct dfa_rule *r, uint32_t lab,
			   struct dfa_tab *t)
{
	struct glob g;
	struct glob_error ge;
	int rc = dfa_rule_glob(r, &g, &ge);
	if (rc)
		return rc;
	memset(t, 0, sizeof(*t));
	for (size_t a = 0; a < g.nalts && rc == 0; a++) {
		struct dfa_tab alt, prod;
		rc = dfa_tab_of_alt(f, r, &g.alts[a], lab, &alt);
		if (rc)
			break;
		if (a == 0) {
			*t = alt;
			continue;
		}
		rc = dfa_tab_product(f, t, &alt, &prod);
		dfa_tab_fini(&alt);
		if (rc)
			break;
		dfa_tab_minimize(&prod);
		dfa_tab_fini(t);
		*t = prod;
	}
	if (rc)
		dfa_tab_fini(t);
	glob_fini(&g);
	return rc;
}

static uint32_t dfa_tab_dead(const struct dfa_tab *t);

/* Marks in bits (words a state) the states of d that some string matching
 * the rule at position e ends in: a walk of d paired with the rule's DFA. */
static int dfa_fold_may(struct dfa_fold *f, const struct dfa *d, const struct dfa_tab *rt, size_t e,
			uint64_t *bits, size_t words)
{
	uint32_t ra[256], rb[256];
	uint8_t class_of[256];
	uint32_t k = dfa_pair_classes(d->class_of, rt->class_of, class_of, ra, rb);
	struct dfa_pairs p;
	/* once the rule's automaton is dead nothing more can be marked: not
	 * expanding those pairs keeps this from walking all of d per rule */
	uint32_t dead = dfa_tab_dead(rt);
	dfa_pairs_init(&p);
	dfa_pairs_get(&p, 0, 0);
	for (size_t i = 0; i < p.n; i++) {
		uint32_t s = p.a[i], q = p.b[i];
		if (rt->label[q])
			bits[(size_t)s * words + e / 64] |= (uint64_t)1 << (e % 64);
		if (q == dead)
			continue;
		for (uint32_t c = 0; c < k; c++)
			dfa_pairs_get(&p, d->next[(size_t)s * d->nclasses + ra[c]],
				      rt->trans[(size_t)q * rt->k + rb[c]]);
	}
	size_t walked = p.n;
	dfa_pairs_fini(&p);
	/* a rule that may match anywhere walks all of d: these walks count */
	return dfa_fold_spend(f, walked);
}

/* The dead state of t (nothing matched, no way out), or UINT32_MAX. */
static uint32_t dfa_tab_dead(const struct dfa_tab *t)
{
	for (uint32_t s = 0; s < t->n; s++) {
		bool closed = t->label[s] == 0;
		for (uint32_t c = 0; c < t->k && closed; c++)
			closed = t->trans[(size_t)s * t->k + c] == s;
		if (closed)
			return s;
	}
	return UINT32_MAX;
}

/* With provenance: every rule automaton at once. A state is the tuple of
 * the rules still alive with their states, as (rule, state) pairs in rule
 * order; its label the set of rules whose state matches. No intermediate
 * minimising: one Hopcroft at the end is cheaper than one per rule when
 * the result is large, as provenance makes it. On -E2BIG, alive[r] says in
 * how many tuples rule r took part. */
static int dfa_tab_product_all(struct dfa_fold *f, const struct dfa_tab *rt, size_t n,
			       struct dfa_tab *out, size_t *alive)
{
	uint32_t ra[256], rb[256], k = 1;
	uint8_t rep_byte[256];
	memset(out, 0, sizeof(*out));
	for (size_t r = 0; r < n; r++) {
		uint8_t next[256];
		k = dfa_pair_classes(out->class_of, rt[r].class_of, next, ra, rb);
		memcpy(out->class_of, next, sizeof(next));
	}
	for (int b = 255; b >= 0; b--)
		rep_byte[out->class_of[b]] = (uint8_t)b;
	out->k = k;
	uint32_t *cr = xmalloc((n ? n : 1) * k * sizeof(uint32_t));
	uint32_t *dead = xmalloc((n ? n : 1) * sizeof(uint32_t));
	for (size_t r = 0; r < n; r++) {
		dead[r] = dfa_tab_dead(&rt[r]);
		for (uint32_t c = 0; c < k; c++)
			cr[r * k + c] = rt[r].class_of[rep_byte[c]];
	}

	struct dfa_seqtab tuples;
	uint32_t *cur = xmalloc((2 * n + 2) * sizeof(uint32_t));
	uint32_t *next = xmalloc((2 * n + 2) * sizeof(uint32_t));
	uint32_t *ents = xmalloc((n + 1) * sizeof(uint32_t));
	size_t transcap = 0, labelcap = 0, nlabel = 0;
	bool is_new;
	int rc = 0;
	dfa_seqtab_init(&tuples);
	size_t len = 0;
	for (size_t r = 0; r < n; r++) {
		if (dead[r] != 0) {
			next[len++] = (uint32_t)r;
			next[len++] = 0;
		}
	}
	dfa_seqtab_intern(&tuples, next, len, f->limit, &is_new);
	for (uint32_t i = 0; i < tuples.n; i++) {
		const uint32_t *t = dfa_seqtab_get(&tuples, i, &len);
		if (len)
			memcpy(cur, t, len * sizeof(uint32_t));
		size_t ne = 0;
		for (size_t j = 0; j < len; j += 2)
			if (rt[cur[j]].label[cur[j + 1]])
				ents[ne++] = cur[j];
		*VEC_PUSH(out->label, nlabel, labelcap) = dfa_fold_intern(f, ents, ne);
		mem_grow((void **)&out->trans, &transcap, ((size_t)i + 1) * k, sizeof(uint32_t));
		for (uint32_t c = 0; c < k; c++) {
			size_t nl = 0;
			for (size_t j = 0; j < len; j += 2) {
				uint32_t r = cur[j];
				uint32_t q = rt[r].trans[(size_t)cur[j + 1] * rt[r].k + cr[(size_t)r * k + c]];
				if (q != dead[r]) {
					next[nl++] = r;
					next[nl++] = q;
				}
			}
			uint32_t to = dfa_seqtab_intern(&tuples, next, nl, f->limit, &is_new);
			if (to == UINT32_MAX) {
				f->reached = tuples.n + 1;
				rc = -E2BIG;
				goto out;
			}
			out->trans[(size_t)i * k + c] = to;
		}
	}
	out->n = (uint32_t)tuples.n;
	if (tuples.n > f->peak)
		f->peak = tuples.n;
	rc = dfa_fold_spend(f, tuples.n);
out:
	if (rc) {
		for (uint32_t i = 0; i < tuples.n; i++) {
			const uint32_t *t = dfa_seqtab_get(&tuples, i, &len);
			for (size_t j = 0; j < len; j += 2)
				alive[t[j]]++;
		}
		dfa_tab_fini(out);
	}
	dfa_seqtab_fini(&tuples);
	free(cur);
	free(next);
	free(ents);
	free(cr);
	free(dead);
	return rc;
}

/* The three rules (by rule id, no repeats) with the largest count. */
static void dfa_fold_blame(const struct dfa_rule *rules, size_t n, const size_t *count,
			   struct dfa_limit_report *rep)
{
	for (unsigned slot = rep->nrules; slot < 3; slot++) {
		size_t best = SIZE_MAX;
		for (size_t e = 0; e < n; e++) {
			bool taken = false;
			for (unsigned j = 0; j < rep->nrules; j++)
				taken |= rep->rules[j] == rules[e].rule;
			if (!taken && count[e] && (best == SIZE_MAX || count[e] > count[best]))
				best = e;
		}
		if (best == SIZE_MAX)
			break;
		rep->rules[rep->nrules] = rules[best].rule;
		rep->states[rep->nrules] = count[best];
		rep->nrules++;
	}
}

/* Whether a rule may match after any prefix: its DFA never dies except on
 * NUL. Such rules keep their partial matches alive in every state, so
 * together they multiply the states. */
static bool dfa_tab_anywhere(const struct dfa_tab *t)
{
	uint32_t nul = t->class_of[0];
	bool *seen = xcalloc(t->n, sizeof(bool));
	uint32_t *queue = xmalloc(t->n * sizeof(uint32_t));
	size_t nq = 0;
	bool alive = true;
	seen[0] = true;
	queue[nq++] = 0;
	for (size_t h = 0; h < nq && alive; h++) {
		uint32_t s = queue[h];
		bool closed = t->label[s] == 0;
		for (uint32_t c = 0; c < t->k && closed; c++)
			closed = t->trans[(size_t)s * t->k + c] == s;
		if (closed) {
			alive = false;
			break;
		}
		for (uint32_t c = 0; c < t->k; c++) {
			uint32_t to = t->trans[(size_t)s * t->k + c];
			if (c != nul && !seen[to]) {
				seen[to] = true;
				queue[nq++] = to;
			}
		}
	}
	free(seen);
	free(queue);
	return alive;
}

/* Fills rep for a rule that broke the bound (first) or, with first ==
 * SIZE_MAX, for a minimal automaton over max_states; own[j] is the size of
 * rule j's own automaton (0 when not built), anywhere[j] dfa_tab_anywhere. */
static void dfa_fold_report(const struct dfa_rule *rules, size_t n, const size_t *own,
			    const bool *anywhere, size_t first, size_t built,
			    struct dfa_limit_report *rep)
{
	size_t *count = xcalloc(n ? n : 1, sizeof(size_t));
	memset(rep, 0, sizeof(*rep));
	if (first != SIZE_MAX) {
		rep->rules[0] = rules[first].rule;
		rep->states[0] = built;
		rep->nrules = 1;
	}
	for (size_t j = 0; j < n; j++) {
		if (j == first)
			continue;
		count[j] = own[j];
		rep->crowd += anywhere[j];
	}
	dfa_fold_blame(rules, n, count, rep);
	rep->minimal = first == SIZE_MAX;
	rep->built = built;
	free(count);
}

static int dfa_fold_glob_cmp(const void *a, const void *b, void *arg)
{
	const struct dfa_rule *rules = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	int c = strcmp(rules[x].glob, rules[y].glob);
	return c ? c : (x > y) - (x < y);
}

/* The positions of rules[0..n) in the order of their globs' text (caller
 * frees): rules under one directory side by side. */
static uint32_t *dfa_fold_glob_order(const struct dfa_rule *rules, size_t n)
{
	uint32_t *order = xmalloc((n ? n : 1) * sizeof(*order));
	for (size_t j = 0; j < n; j++)
		order[j] = (uint32_t)j;
	qsort_r(order, n, sizeof(*order), dfa_fold_glob_cmp, (void *)rules);
	return order;
}

/* Folds rt[order[0..n)] into *acc (which holds the one-state automaton of
 * no rule on entry) by pairwise products, minimising each; rt is left
 * intact.
 *
 * The callers put the leaves in the order of their globs' text, so that
 * rules under one directory meet first: their product shares the
 * directory's path and minimises to little more than either, and each
 * level holds fewer states than the one below. The result does not depend
 * on the order: it is the minimal automaton of the union, and combining
 * labels is associative and commutative. */
static int dfa_fold_balanced(struct dfa_fold *f, const uint32_t *order, const struct dfa_tab *rt,
			     size_t n, struct dfa_tab *acc)
{
	struct dfa_tab *level = xcalloc(n ? n : 1, sizeof(*level));
	bool *owned = xcalloc(n ? n : 1, sizeof(*owned));
	size_t m = n;
	int rc = 0;
	for (size_t j = 0; j < n; j++)
		level[j] = rt[order[j]];   /* borrowed: rt keeps ownership */
	while (m > 1 && rc == 0) {
		size_t k = 0, j = 0;
		for (; j + 1 < m; j += 2) {
			struct dfa_tab prod;
			rc = dfa_tab_product(f, &level[j], &level[j + 1], &prod);
			if (rc)
				break;
			dfa_tab_minimize(&prod);
			if (owned[j])
				dfa_tab_fini(&level[j]);
			if (owned[j + 1])
				dfa_tab_fini(&level[j + 1]);
			level[k] = prod;
			owned[k++] = true;
		}
		if (rc) {
			for (size_t x = 0; x < k; x++)
				dfa_tab_fini(&level[x]);
			for (size_t x = j; x < m; x++)
				if (owned[x])
					dfa_tab_fini(&level[x]);
			m = 0;
			break;
		}
		if (j < m) {
			level[k] = level[j];
			owned[k++] = owned[j];
		}
		m = k;
	}
	if (rc == 0 && m == 1) {
		/* one more product with the empty automaton gives acc its own copy */
		struct dfa_tab prod;
		rc = dfa_tab_product(f, acc, &level[0], &prod);
		if (owned[0])
			dfa_tab_fini(&level[0]);
		if (rc == 0) {
			dfa_tab_minimize(&prod);
			dfa_tab_fini(acc);
			*acc = prod;
		}
	}
	free(level);
	free(owned);
	return rc;
}

int dfa_fold_build(struct dfa *d, const struct dfa_rule *rules, size_t n, bool prov,
		   size_t max_build, size_t max_total, size_t max_states, struct dfa_limit_report *rep)
{
	struct dfa_fold f = { .prov = prov, .limit = max_build, .budget = max_total };
	struct dfa_tab acc = { .n = 1, .k = 1 };
	struct dfa_tab *rt = xcalloc(n ? n : 1, sizeof(*rt));
	size_t *own = xcalloc(n ? n : 1, sizeof(size_t));
	bool *anywhere = xcalloc(n ? n : 1, sizeof(bool));
	int rc = 0;

	memset(rep, 0, sizeof(*rep));
	dfa_seqtab_init(&f.labels);
	dfa_fold_intern(&f, NULL, 0);
	dfa_pairs_init(&f.memo);
	acc.trans = xcalloc(1, sizeof(uint32_t));
	acc.label = xcalloc(1, sizeof(uint32_t));
	for (size_t i = 0; i < n; i++) {
		uint32_t lab = dfa_fold_rule_label(&f, &rules[i], (uint32_t)i);
		rc = dfa_tab_of_rule(&f, &rules[i], lab, &rt[i]);
		if (rc == 0) {
			own[i] = rt[i].n;
			anywhere[i] = dfa_tab_anywhere(&rt[i]);
		}
		if (rc == -E2BIG) {
			/* this rule broke the bound (over the budget, no one rule is
			 * over); then the largest rule automata so far */
			dfa_fold_report(rules, i, own, anywhere, f.over_budget ? SIZE_MAX : i, f.reached, rep);
			goto out;
		}
		if (rc)
			goto out;
	}
	if (!prov) {
		/* by permissions: fold the rules pairwise, level by level, each
		 * product minimised: O(n log n) products of balanced sizes, where
		 * folding one rule at a time into a growing automaton is O(n^2) */
		uint32_t *order = dfa_fold_glob_order(rules, n);
		rc = dfa_fold_balanced(&f, order, rt, n, &acc);
		free(order);
		if (rc == -E2BIG) {
			dfa_fold_report(rules, n, own, anywhere, SIZE_MAX, f.reached, rep);
			rep->minimal = false;   /* a product on the way broke the bound */
			goto out;
		}
		if (rc)
			goto out;
	}
	if (prov) {
		/* with provenance: all at once, minimised once below */
		size_t *alive = xcalloc(n ? n : 1, sizeof(size_t));
		dfa_tab_fini(&acc);
		rc = dfa_tab_product_all(&f, rt, n, &acc, alive);
		if (rc == -E2BIG) {
			dfa_fold_report(rules, n, alive, anywhere, SIZE_MAX, f.reached, rep);
			rep->minimal = false;
			rep->crowd = 0;
			for (size_t j = 0; j < n; j++)
				rep->crowd += alive[j] * 2 > max_build;
		}
		free(alive);
		if (rc)
			goto out;
	}

	/* by permissions only the granted bits matter now; with provenance
	 * the labels already are the sets of rules */
	uint32_t *label = acc.label, *plabel = NULL, *perms = NULL;
	if (!prov) {
		plabel = xmalloc(acc.n * sizeof(uint32_t));
		perms = xmalloc(acc.n * sizeof(uint32_t));
		for (uint32_t s = 0; s < acc.n; s++) {
			size_t len;
			const uint32_t *pair = dfa_seqtab_get(&f.labels, acc.label[s], &len);
			perms[s] = len ? pair[0] : 0;
		}
		dfa_perms_label(perms, acc.n, plabel);
		label = plabel;
	}
	uint32_t *repst = dfa_quotient(d, acc.n, acc.k, acc.trans, label, acc.class_of, NULL);
	size_t words = (n + 63) / 64;
	uint64_t *bits = xcalloc((size_t)d->nstates * (words ? words : 1), sizeof(uint64_t));
	d->perms = xmalloc(d->nstates * sizeof(uint32_t));
	for (uint32_t s = 0; s < d->nstates; s++) {
		if (!prov) {
			d->perms[s] = perms[repst[s]];
			continue;
		}
		size_t len;
		const uint32_t *set = dfa_seqtab_get(&f.labels, acc.label[repst[s]], &len);
		d->perms[s] = dfa_rule_perms(rules, set, len);
		for (size_t i = 0; i < len; i++)
			bits[s * words + set[i] / 64] |= (uint64_t)1 << (set[i] % 64);
	}
	free(repst);
	free(plabel);
	free(perms);
	if (!prov && d->nstates <= max_states)
		for (size_t i = 0; i < n && rc == 0; i++)
			rc = dfa_fold_may(&f, d, &rt[i], i, bits, words);
	if (rc) {
		free(bits);
		dfa_fold_report(rules, n, own, anywhere, SIZE_MAX, f.reached, rep);
		goto out;
	}
	dfa_rules_fill(d, bits, words);
	free(bits);
	d->stats.subset_states = (unsigned)f.peak;
	dfa_stats_count(d);
	if (d->nstates > max_states) {
		dfa_fold_report(rules, n, own, anywhere, SIZE_MAX, d->nstates, rep);
		rc = -E2BIG;
	}
out:
	if (rc == -E2BIG && f.over_budget) {
		/* whichever stage went over the budget: the total is what broke */
		rep->total = true;
		rep->minimal = false;
	}
	for (size_t i = 0; i < n; i++)
		dfa_tab_fini(&rt[i]);
	free(rt);
	free(own);
	free(anywhere);
	dfa_tab_fini(&acc);
	dfa_seqtab_fini(&f.labels);
	dfa_pairs_fini(&f.memo);
	free(f.memo_val);
	return rc;
}

/* ---- by permissions, in chunks ------------------------------------------ */

/* Rules a chunk holds: enough that the chunk's own subset construction
 * does the work of many products, few enough that its threads stay few
 * (the chunk's rules share directories, being neighbours in glob order).
 * Since a chunk's subset states are made by what their threads match
 * (dfa_subset_canonical), directories laid out alike are built once and
 * a chunk is near its minimal size: on the generated sets of
 * tools/bench/vs-apparmor (callgrind, seed 12) 5,000 rules take 1,122 M
 * instructions with chunks of 1,024 rules, 667 M with 8,192; 10,000 rules
 * 1,602 M and 1,374 M; past 8,192 a chunk's subset construction and its
 * minimisation grow faster than the fold they save (100,000 rules: 4.1 s
 * of CPU with chunks of 8,192, 5.6 s with 65,536). */
#define DFA_CHUNK_RULES 8192

/* One chunk: the minimal form of its subset automaton, to fold. */
struct dfa_chunk {
	struct dfa_tab min;
};

/* The subset automaton of rules[order[0..n)], one state for threads that
 * match alike (dfa_subset_canonical), minimised, labelled by the fold's
 * (granted, denied) pairs. */
static int dfa_chunk_of_nfa(struct dfa_fold *f, const struct dfa_rule *rules, const struct nfa *nfa,
			    struct dfa_chunk *ch)
{
	struct dfa_subset ss;
	dfa_subset_init(&ss, nfa, rules, f->limit);
	dfa_subset_canonical(&ss);
	int rc = dfa_subset_run(&ss);
	if (rc == -E2BIG)
		f->reached = ss.sets.n + 1;
	if (rc == 0)
		rc = dfa_fold_spend(f, ss.sets.n);
	if (rc == 0) {
		struct dfa_tab *t = &ch->min;
		t->n = (uint32_t)ss.sets.n;
		t->k = ss.k;
		t->trans = xmalloc((size_t)t->n * t->k * sizeof(uint32_t));
		memcpy(t->trans, ss.trans, (size_t)t->n * t->k * sizeof(uint32_t));
		t->label = xmalloc(t->n * sizeof(uint32_t));
		for (uint32_t s = 0; s < t->n; s++) {
			size_t len;
			const uint32_t *set = dfa_seqtab_get(&ss.labels, ss.label[s], &len);
			uint32_t grant = 0, deny = 0;
			for (size_t i = 0; i < len; i++) {
				grant |= rules[set[i]].grant;
				deny |= rules[set[i]].deny;
			}
			uint32_t pair[2] = { grant & ~deny, deny };
			t->label[s] = pair[0] | pair[1] ? dfa_fold_intern(f, pair, 2) : 0;
		}
		memcpy(t->class_of, nfa->class_of, sizeof(t->class_of));
		if (t->n > f->peak)
			f->peak = t->n;
	}
	dfa_subset_fini(&ss);
	if (rc == 0)
		dfa_tab_minimize(&ch->min);
	return rc;
}

/* The chunk of rules[order[0..n)] (their parsed globs). */
static int dfa_chunk_build(struct dfa_fold *f, const struct dfa_rule *rules, const struct glob *globs,
			   const uint32_t *order, size_t n, struct dfa_chunk *ch)
{
	struct nfa nfa;
	nfa_init(&nfa);
	for (size_t j = 0; j < n; j++)
		nfa_glob_add(&nfa, &globs[order[j]], order[j]);
	nfa_classes_compute(&nfa);
	int rc = dfa_chunk_of_nfa(f, rules, &nfa, ch);
	nfa_fini(&nfa);
	return rc;
}

/* The walk of d with the NFA of every rule (dfa_nfa_may). */
struct dfa_may {
	const struct dfa *d;
	const struct nfa *nfa;
	uint32_t k;
	bool nul_alone;          /* NUL is a class of d by itself */
	uint32_t *soff;          /* per edge set, its classes of d: scls[soff[si]..] */
	uint16_t *scls;
	bool *wide;              /* the set takes every class but NUL's alone */
	uint32_t *toff, *tlen;   /* per state of d, its targets over the wide classes */
	uint32_t *tl;
	size_t ntl, tlcap;
	uint32_t *seen, gen;     /* targets of one edge, each once */
	struct dfa_pairs p;
};

static void dfa_may_init(struct dfa_may *m, const struct dfa *d, const struct nfa *nfa)
{
	uint32_t n = d->nstates ? d->nstates : 1;
	memset(m, 0, sizeof(*m));
	m->d = d;
	m->nfa = nfa;
	m->k = d->nclasses;
	m->nul_alone = true;
	for (unsigned b = 1; b < 256; b++)
		m->nul_alone &= d->class_of[b] != d->class_of[0];
	m->soff = xmalloc((nfa->nsets + 1) * sizeof(uint32_t));
	m->scls = xmalloc((nfa->nsets ? nfa->nsets : 1) * 256 * sizeof(uint16_t));
	m->wide = xcalloc(nfa->nsets ? nfa->nsets : 1, sizeof(bool));
	m->soff[0] = 0;
	for (size_t si = 0; si < nfa->nsets; si++) {
		bool in[256] = { false };
		uint32_t others = 0;   /* classes in the set but NUL's alone */
		m->soff[si + 1] = m->soff[si];
		for (unsigned b = 0; b < 256; b++)
			if (glob_byteset_has(&nfa->sets[si], b) && !in[d->class_of[b]]) {
				in[d->class_of[b]] = true;
				m->scls[m->soff[si + 1]++] = d->class_of[b];
				others += !m->nul_alone || d->class_of[b] != d->class_of[0];
			}
		m->wide[si] = others == m->k - m->nul_alone;
	}
	m->toff = xmalloc(n * sizeof(uint32_t));
	m->tlen = xcalloc(n, sizeof(uint32_t));
	m->seen = xcalloc(n, sizeof(uint32_t));
	dfa_pairs_init(&m->p);
}

static void dfa_may_fini(struct dfa_may *m)
{
	free(m->soff);
	free(m->scls);
	free(m->wide);
	free(m->toff);
	free(m->tlen);
	free(m->tl);
	free(m->seen);
	dfa_pairs_fini(&m->p);
}

/* The targets of state s over the wide classes, made when first asked
 * for: a thread in '**' asks at every state it meets, and its many
 * classes lead to few states. */
static const uint32_t *dfa_may_wide(struct dfa_may *m, uint32_t s, uint32_t *len)
{
	if (!m->tlen[s]) {
		const uint16_t *row = m->d->next + (size_t)s * m->k;
		uint32_t nul = m->d->class_of[0];
		m->gen++;
		m->toff[s] = (uint32_t)m->ntl;
		for (uint32_t c = 0; c < m->k; c++)
			if ((!m->nul_alone || c != nul) && m->seen[row[c]] != m->gen) {
				m->seen[row[c]] = m->gen;
				*VEC_PUSH(m->tl, m->ntl, m->tlcap) = row[c];
			}
		m->tlen[s] = (uint32_t)m->ntl - m->toff[s];
	}
	*len = m->tlen[s];
	return m->tl + m->toff[s];
}

/* The pairs one rule's threads reach from the start states
 * starts[0..nstarts), as (state << 32 | rule position) where its NFA
 * accepts; returns how many pairs it walked. */
static size_t dfa_may_rule(struct dfa_may *m, const uint32_t *starts, size_t nstarts, uint64_t **pairs,
			   size_t *npairs, size_t *cap)
{
	const struct nfa *nfa = m->nfa;
	struct dfa_pairs *p = &m->p;
	for (size_t i = 0; i < nstarts; i++)
		dfa_pairs_get(p, 0, starts[i]);
	for (size_t i = 0; i < p->n; i++) {
		uint32_t s = p->a[i], q = p->b[i];
		const struct nfa_state *st = &nfa->st[q];
		const uint16_t *row = m->d->next + (size_t)s * m->k;
		if (st->accept)
			*VEC_PUSH(*pairs, *npairs, *cap) = (uint64_t)s << 32 | st->entry;
		for (unsigned e = 0; e < st->neps; e++)
			dfa_pairs_get(p, s, st->eps[e]);
		for (unsigned e = 0; e < st->nedge; e++) {
			uint32_t si = st->edge[e].set, to = st->edge[e].to;
			if (m->wide[si]) {
				uint32_t len;
				const uint32_t *t = dfa_may_wide(m, s, &len);
				/* a wide set of NUL and more also takes NUL's class */
				if (m->nul_alone && glob_byteset_has(&nfa->sets[si], 0))
					dfa_pairs_get(p, row[m->d->class_of[0]], to);
				for (uint32_t x = 0; x < len; x++)
					dfa_pairs_get(p, t[x], to);
				continue;
			}
			m->gen++;
			for (uint32_t x = m->soff[si]; x < m->soff[si + 1]; x++) {
				uint32_t t = row[m->scls[x]];
				if (m->seen[t] != m->gen) {
					m->seen[t] = m->gen;
					dfa_pairs_get(p, t, to);
				}
			}
		}
	}
	size_t walked = p->n;
	dfa_pairs_clear(p);
	return walked;
}

/* Adds to pairs (state << 32 | rule position) the rules that some string
 * ending in each state of d matches: the pairs (state of d, state of the
 * NFA of every rule) that some string reaches, a DFA times an NFA with no
 * subsets; a pair whose NFA state accepts for a rule puts the rule in the
 * state's set. Rule by rule (their threads never meet), so that one
 * rule's pairs sit in a table small enough to stay in the cache. */
static int dfa_nfa_may(struct dfa_fold *f, const struct dfa *d, const struct nfa *nfa, uint64_t **pairs,
		       size_t *npairs, size_t *cap)
{
	struct dfa_may m;
	size_t walked = 0, next;
	dfa_may_init(&m, d, nfa);
	/* a rule's alternatives start one after another */
	for (size_t first = 0; first < nfa->nstarts; first = next) {
		uint32_t entry = nfa->st[nfa->starts[first]].entry;
		for (next = first; next < nfa->nstarts && nfa->st[nfa->starts[next]].entry == entry; next++)
			;
		walked += dfa_may_rule(&m, nfa->starts + first, next - first, pairs, npairs, cap);
	}
	dfa_may_fini(&m);
	return dfa_fold_spend(f, walked);
}

int dfa_fold_build_chunked(struct dfa *d, const struct dfa_rule *rules, const struct glob *globs, size_t n,
			   const struct nfa *all, size_t max_build, size_t max_total, size_t max_states)
{
	struct dfa_fold f = { .prov = false, .limit = max_build, .budget = max_total };
	struct dfa_tab acc = { .n = 1, .k = 1 };
	size_t nch = (n + DFA_CHUNK_RULES - 1) / DFA_CHUNK_RULES;
	uint32_t *order = nch > 1 ? dfa_fold_glob_order(rules, n) : NULL;
	struct dfa_chunk *ch = xcalloc(nch ? nch : 1, sizeof(*ch));
	struct dfa_tab *mins = xcalloc(nch ? nch : 1, sizeof(*mins));
	uint32_t *ident = xmalloc((nch ? nch : 1) * sizeof(uint32_t));
	size_t built = 0;
	int rc = 0;

	dfa_seqtab_init(&f.labels);
	dfa_fold_intern(&f, NULL, 0);
	dfa_pairs_init(&f.memo);
	acc.trans = xcalloc(1, sizeof(uint32_t));
	acc.label = xcalloc(1, sizeof(uint32_t));
	for (; built < nch && rc == 0; built++) {
		size_t from = built * DFA_CHUNK_RULES;
		size_t len = n - from < DFA_CHUNK_RULES ? n - from : DFA_CHUNK_RULES;
		/* one chunk is all of them: the NFA of all is made already */
		rc = nch == 1 ? dfa_chunk_of_nfa(&f, rules, all, &ch[built])
			      : dfa_chunk_build(&f, rules, globs, order + from, len, &ch[built]);
		mins[built] = ch[built].min;
		ident[built] = (uint32_t)built;
	}
	if (rc == 0)
		rc = dfa_fold_balanced(&f, ident, mins, nch, &acc);
	for (size_t c = 0; c < built; c++)
		dfa_tab_fini(&ch[c].min);   /* folded */
	if (rc)
		goto out;

	uint32_t *plabel = xmalloc(acc.n * sizeof(uint32_t));
	uint32_t *perms = xmalloc(acc.n * sizeof(uint32_t));
	for (uint32_t s = 0; s < acc.n; s++) {
		size_t len;
		const uint32_t *pair = dfa_seqtab_get(&f.labels, acc.label[s], &len);
		perms[s] = len ? pair[0] : 0;
	}
	dfa_perms_label(perms, acc.n, plabel);
	uint32_t *repst = dfa_quotient(d, acc.n, acc.k, acc.trans, plabel, acc.class_of, NULL);
	d->perms = xmalloc(d->nstates * sizeof(uint32_t));
	for (uint32_t s = 0; s < d->nstates; s++)
		d->perms[s] = perms[repst[s]];
	free(repst);
	free(plabel);
	free(perms);
	if (d->nstates > max_states) {
		rc = -E2BIG;
		goto out;
	}
	uint64_t *pairs = NULL;
	size_t npairs = 0, paircap = 0;
	rc = dfa_nfa_may(&f, d, all, &pairs, &npairs, &paircap);
	if (rc == 0) {
		dfa_rules_fill_pairs(d, pairs, npairs);
		d->stats.subset_states = (unsigned)f.peak;
		dfa_stats_count(d);
	}
	free(pairs);
out:
	if (rc) {
		/* the caller builds again by rules, which says what was too large */
		free(d->next);
		free(d->perms);
		d->next = NULL;
		d->perms = NULL;
		d->nstates = d->nclasses = 0;
	}
	for (size_t c = 0; c < built; c++)
		dfa_tab_fini(&ch[c].min);
	free(ch);
	free(mins);
	free(ident);
	free(order);
	dfa_tab_fini(&acc);
	dfa_seqtab_fini(&f.labels);
	dfa_pairs_fini(&f.memo);
	free(f.memo_val);
	return rc;
}
