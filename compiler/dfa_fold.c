/* dfa_fold.c: the permission automaton, built one rule at a time.
 *
 * Subset construction over all rules at once tracks every rule's partial
 * match in every state, so independent rules (every .pem anywhere, every
 * name holding "token" anywhere) multiply the states. Here each rule
 * becomes its own minimal DFA and the
 * rules are folded in one by one: the product with the automaton so far,
 * then Hopcroft keyed by what later rules can still change. That is the pair
 * (G & ~D, D) of bits granted and not denied, and bits denied: a denied bit
 * stays denied whatever comes later, so states with equal pairs and equal
 * futures are interchangeable. After the last rule only G & ~D matters.
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
	size_t i = (size_t)((key * 0x9e3779b97f4a7c15ull) >> 17) & (nslots - 1);
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

/* Classes refining two class maps: writes class_of and, per new class, the
 * two old classes; returns the count. */
static uint32_t dfa_pair_classes(const uint8_t *ca, const uint8_t *cb, uint8_t *class_of,
				 uint32_t *ra, uint32_t *rb)
{
	uint16_t *map = xmalloc(65536 * sizeof(uint16_t));
	uint32_t k = 0;
	memset(map, 0xff, 65536 * sizeof(uint16_t));
	for (unsigned byte = 0; byte < 256; byte++) {
		unsigned key = (unsigned)ca[byte] << 8 | cb[byte];
		if (map[key] == 0xffff) {
			map[key] = (uint16_t)k;
			ra[k] = ca[byte];
			rb[k] = cb[byte];
			k++;
		}
		class_of[byte] = (uint8_t)map[key];
	}
	free(map);
	return k;
}

/* ---- the fold ------------------------------------------------------------- */

struct dfa_fold {
	struct dfa_seqtab labels;    /* (G & ~D, D) pairs; label 0 is (0, 0) */
	size_t limit;
	size_t peak;
};

static uint32_t dfa_fold_label(struct dfa_fold *f, uint32_t grant, uint32_t deny)
{
	uint32_t v[2] = { grant & ~deny, deny };
	bool is_new;
	return dfa_seqtab_intern(&f->labels, v, 2, SIZE_MAX, &is_new);
}

static uint32_t dfa_fold_combine(struct dfa_fold *f, uint32_t la, uint32_t lb)
{
	size_t len;
	const uint32_t *x = dfa_seqtab_get(&f->labels, la, &len);
	const uint32_t *y = dfa_seqtab_get(&f->labels, lb, &len);
	return dfa_fold_label(f, x[0] | y[0], x[1] | y[1]);
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

/* One rule's minimal DFA; matching states get label lab. */
static int dfa_tab_of_rule(struct dfa_fold *f, const struct dfa_rule *r, uint32_t lab,
			   struct dfa_tab *t)
{
	struct glob g;
	struct glob_error ge;
	struct nfa nfa;
	struct dfa_subset ss;
	int rc = glob_parse(r->glob, &g, &ge);
	if (rc)
		return rc;
	nfa_init(&nfa);
	nfa_glob_add(&nfa, &g, 0);
	glob_fini(&g);
	nfa_classes_compute(&nfa);
	dfa_subset_init(&ss, &nfa, r, f->limit);
	rc = dfa_subset_run(&ss);
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
		for (uint32_t c = 0; c < out->k; c++) {
			uint32_t ta = a->trans[(size_t)sa * a->k + ra[c]];
			uint32_t tb = b->trans[(size_t)sb * b->k + rb[c]];
			out->trans[i * out->k + c] = dfa_pairs_get(&p, ta, tb);
		}
		*VEC_PUSH(out->label, nl, lcap) = dfa_fold_combine(f, a->label[sa], b->label[sb]);
		if (p.n > f->limit) {
			dfa_pairs_fini(&p);
			dfa_tab_fini(out);
			return -E2BIG;
		}
	}
	out->n = (uint32_t)p.n;
	if (p.n > f->peak)
		f->peak = p.n;
	dfa_pairs_fini(&p);
	return 0;
}

/* Marks in bits (words a state) the states of d that some string matching
 * the rule at position e ends in: a walk of d paired with the rule's DFA. */
static void dfa_fold_may(const struct dfa *d, const struct dfa_tab *rt, size_t e, uint64_t *bits,
			 size_t words)
{
	uint32_t ra[256], rb[256];
	uint8_t class_of[256];
	uint32_t k = dfa_pair_classes(d->class_of, rt->class_of, class_of, ra, rb);
	struct dfa_pairs p;
	dfa_pairs_init(&p);
	dfa_pairs_get(&p, 0, 0);
	for (size_t i = 0; i < p.n; i++) {
		uint32_t s = p.a[i], q = p.b[i];
		if (rt->label[q])
			bits[(size_t)s * words + e / 64] |= (uint64_t)1 << (e % 64);
		for (uint32_t c = 0; c < k; c++)
			dfa_pairs_get(&p, d->next[(size_t)s * d->nclasses + ra[c]],
				      rt->trans[(size_t)q * rt->k + rb[c]]);
	}
	dfa_pairs_fini(&p);
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

int dfa_fold_build(struct dfa *d, const struct dfa_rule *rules, size_t n, size_t max_build,
		   size_t max_states, struct dfa_limit_report *rep)
{
	struct dfa_fold f = { .limit = max_build };
	struct dfa_tab acc = { .n = 1, .k = 1 };
	struct dfa_tab *rt = xcalloc(n ? n : 1, sizeof(*rt));
	size_t *count = xcalloc(n ? n : 1, sizeof(size_t));
	int rc = 0;

	memset(rep, 0, sizeof(*rep));
	dfa_seqtab_init(&f.labels);
	dfa_fold_label(&f, 0, 0);
	acc.trans = xcalloc(1, sizeof(uint32_t));
	acc.label = xcalloc(1, sizeof(uint32_t));
	for (size_t i = 0; i < n; i++) {
		struct dfa_tab prod;
		uint32_t lab = dfa_fold_label(&f, rules[i].grant, rules[i].deny);
		rc = dfa_tab_of_rule(&f, &rules[i], lab, &rt[i]);
		if (rc == 0)
			rc = dfa_tab_product(&f, &acc, &rt[i], &prod);
		if (rc == -E2BIG) {
			/* this rule broke the bound; then the largest rule automata */
			rep->rules[0] = rules[i].rule;
			rep->states[0] = max_build;
			rep->nrules = 1;
			for (size_t j = 0; j < i; j++)
				count[j] = rt[j].n;
			dfa_fold_blame(rules, i, count, rep);
			rep->built = max_build;
			goto out;
		}
		if (rc)
			goto out;
		dfa_tab_minimize(&prod);
		dfa_tab_fini(&acc);
		acc = prod;
	}

	/* only the granted bits matter now */
	uint32_t *plabel = xmalloc(acc.n * sizeof(uint32_t)), *perms = xmalloc(acc.n * sizeof(uint32_t));
	for (uint32_t s = 0; s < acc.n; s++) {
		size_t len;
		perms[s] = dfa_seqtab_get(&f.labels, acc.label[s], &len)[0];
	}
	dfa_perms_label(perms, acc.n, plabel);
	uint32_t *repst = dfa_quotient(d, acc.n, acc.k, acc.trans, plabel, acc.class_of, NULL);
	d->perms = xmalloc(d->nstates * sizeof(uint32_t));
	for (uint32_t s = 0; s < d->nstates; s++)
		d->perms[s] = perms[repst[s]];
	free(repst);
	free(plabel);
	free(perms);

	size_t words = (n + 63) / 64;
	uint64_t *bits = xcalloc((size_t)d->nstates * (words ? words : 1), sizeof(uint64_t));
	if (d->nstates <= max_states)
		for (size_t i = 0; i < n; i++)
			dfa_fold_may(d, &rt[i], i, bits, words);
	dfa_rules_fill(d, bits, words);
	free(bits);
	d->stats.subset_states = (unsigned)f.peak;
	dfa_stats_count(d);
	if (d->nstates > max_states) {
		/* the rules with the largest automata of their own */
		for (size_t j = 0; j < n; j++)
			count[j] = rt[j].n;
		dfa_fold_blame(rules, n, count, rep);
		rep->minimal = true;
		rep->built = d->nstates;
		rc = -E2BIG;
	}
out:
	for (size_t i = 0; i < n; i++)
		dfa_tab_fini(&rt[i]);
	free(rt);
	free(count);
	dfa_tab_fini(&acc);
	dfa_seqtab_fini(&f.labels);
	return rc;
}
