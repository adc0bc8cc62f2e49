/* SPDX-License-Identifier: GPL-2.0-only */
/* dfa.c: rules -> per-rule automata -> combined -> minimised -> numbered
 * tables; and the queries on the result.
 *
 * dfa_build shows the pipeline; the stages live in the files dfa_impl.h
 * lists, the numbering (dfa_quotient) here.
 */
#include "dfa_impl.h"
#include "beec_limits.h"
#include "mem.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

const char *dfa_kind_name(enum dfa_kind k)
{
	switch (k) {
#define X(name, str) case DFA_KIND_##name: return str;
	DFA_KINDS(X)
#undef X
	}
	return "?";
}

/* ---- assembling the minimal automaton -------------------------------------- */

static int dfa_rule_id_cmp(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
	return x < y ? -1 : x > y;
}

/* See dfa_impl.h. */
uint32_t *dfa_quotient(struct dfa *d, uint32_t n, uint32_t k, const uint32_t *trans,
		       const uint32_t *label, const uint8_t *class_of, uint32_t *old_to_new)
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
	if (old_to_new)
		for (uint32_t s = 0; s < n; s++)
			old_to_new[s] = id[block[s]];
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

void dfa_stats_count(struct dfa *d)
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

struct dfa *dfa_alloc(enum dfa_kind kind, const struct dfa_rule *rules, size_t n)
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

void dfa_perms_label(const uint32_t *perms, uint32_t n, uint32_t *label)
{
	uint32_t *v = xmalloc((n ? n : 1) * sizeof(uint32_t));
	memcpy(v, perms, n * sizeof(uint32_t));
	qsort(v, n, sizeof(uint32_t), dfa_u32_cmp);
	size_t u = 0;
	for (uint32_t i = 0; i < n; i++)
		if (u == 0 || v[u - 1] != v[i])
			v[u++] = v[i];
	/* v[0] is 0 when some state has no permissions, which keeps label 0 */
	uint32_t base = u && v[0] == 0 ? 0 : 1;
	for (uint32_t s = 0; s < n; s++) {
		size_t lo = 0, hi = u;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (v[mid] < perms[s])
				lo = mid + 1;
			else
				hi = mid;
		}
		label[s] = (uint32_t)lo + base;
	}
	free(v);
}

/* Per-state rules from a bitset per state over input positions (words
 * 64-bit words a state): entry_ids get the positions, rule_ids their rule
 * ids ascending without repeats. */
void dfa_rules_fill(struct dfa *d, const uint64_t *bits, size_t words)
{
	size_t nrid = 0, ridcap = 0, neid = 0, eidcap = 0;
	d->rule_off = xcalloc(d->nstates + 1, sizeof(uint32_t));
	d->entry_off = xcalloc(d->nstates + 1, sizeof(uint32_t));
	for (uint32_t s = 0; s < d->nstates; s++) {
		size_t first = nrid;
		for (size_t e = 0; e < d->nrules; e++) {
			if (!((bits[s * words + e / 64] >> (e % 64)) & 1))
				continue;
			*VEC_PUSH(d->entry_ids, neid, eidcap) = (uint32_t)e;
			*VEC_PUSH(d->rule_ids, nrid, ridcap) = d->rules[e].rule;
		}
		if (nrid - first > 1)
			qsort(d->rule_ids + first, nrid - first, sizeof(unsigned), dfa_rule_id_cmp);
		size_t u = first;
		for (size_t i = first; i < nrid; i++)
			if (u == first || d->rule_ids[u - 1] != d->rule_ids[i])
				d->rule_ids[u++] = d->rule_ids[i];
		nrid = u;
		d->rule_off[s + 1] = (uint32_t)nrid;
		d->entry_off[s + 1] = (uint32_t)neid;
	}
}

static int dfa_u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* See dfa_impl.h. The same lists as dfa_rules_fill's, in time and memory
 * of the pairs rather than of states times rules (which at 100,000 rules
 * was most of the compile and 0.7 GB of bitmap). */
void dfa_rules_fill_pairs(struct dfa *d, uint64_t *pairs, size_t n)
{
	size_t nrid = 0, ridcap = 0, neid = 0, eidcap = 0, i = 0;
	if (n > 1)   /* no rules at all: pairs is NULL */
		qsort(pairs, n, sizeof(*pairs), dfa_u64_cmp);
	d->rule_off = xcalloc(d->nstates + 1, sizeof(uint32_t));
	d->entry_off = xcalloc(d->nstates + 1, sizeof(uint32_t));
	for (uint32_t s = 0; s < d->nstates; s++) {
		size_t first = nrid;
		for (; i < n && pairs[i] >> 32 == s; i++) {
			if (i > 0 && pairs[i] == pairs[i - 1])
				continue;
			uint32_t e = (uint32_t)pairs[i];
			*VEC_PUSH(d->entry_ids, neid, eidcap) = e;
			*VEC_PUSH(d->rule_ids, nrid, ridcap) = d->rules[e].rule;
		}
		if (nrid - first > 1)
			qsort(d->rule_ids + first, nrid - first, sizeof(unsigned), dfa_rule_id_cmp);
		size_t u = first;
		for (size_t j = first; j < nrid; j++)
			if (u == first || d->rule_ids[u - 1] != d->rule_ids[j])
				d->rule_ids[u++] = d->rule_ids[j];
		nrid = u;
		d->rule_off[s + 1] = (uint32_t)nrid;
		d->entry_off[s + 1] = (uint32_t)neid;
	}
}

int dfa_perms_reduce(const struct dfa *d, struct dfa **out)
{
	uint32_t n = d->nstates, k = d->nclasses;
	uint32_t *trans = xmalloc((size_t)n * k * sizeof(uint32_t));
	uint32_t *label = xmalloc(n * sizeof(uint32_t));
	uint32_t *map = xmalloc(n * sizeof(uint32_t));
	for (size_t i = 0; i < (size_t)n * k; i++)
		trans[i] = d->next[i];
	dfa_perms_label(d->perms, n, label);
	struct dfa *r = dfa_alloc(d->kind, d->rules, d->nrules);
	r->perms_only = true;
	r->marks = d->marks;
	uint32_t *rep = dfa_quotient(r, n, k, trans, label, d->class_of, map);
	r->perms = xmalloc(r->nstates * sizeof(uint32_t));
	for (uint32_t s = 0; s < r->nstates; s++)
		r->perms[s] = d->perms[rep[s]];

	/* a merged state may match what any of its old states matched */
	size_t words = (d->nrules + 63) / 64;
	uint64_t *bits = xcalloc((size_t)r->nstates * (words ? words : 1), sizeof(uint64_t));
	for (uint32_t s = 0; s < n; s++)
		for (uint32_t i = d->entry_off[s]; i < d->entry_off[s + 1]; i++)
			bits[map[s] * words + d->entry_ids[i] / 64] |= (uint64_t)1 << (d->entry_ids[i] % 64);
	dfa_rules_fill(r, bits, words);
	r->stats = d->stats;
	dfa_stats_count(r);
	free(bits);
	free(rep);
	free(map);
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
			   const struct dfa_build_opts *o, const struct dfa_limit_report *rep)
{
	const struct dfa_rule *top[3] = { NULL, NULL, NULL };
	for (unsigned j = 0; j < rep->nrules; j++)
		for (size_t i = 0; i < n && !top[j]; i++)
			if (rules[i].rule == rep->rules[j])
				top[j] = &rules[i];
	unsigned bound = rep->minimal ? o->max_states : rep->total ? o->max_build_total : o->max_build_states;
	diag_error(dc, top[0] ? top[0]->loc : LOC_NONE,
		   "the %s automaton is too large: %s %zu states, more than the limit of %u",
		   dfa_kind_name(o->kind),
		   rep->minimal ? "its minimal form has" : rep->total ? "building it took" : "building it reached",
		   rep->built, bound);
	/* a diagnostic holds three notes: the last says how to raise the limit */
	bool crowd = rep->crowd > 3 && rep->nrules > 2;
	unsigned named = crowd ? 1 : rep->nrules > 2 ? 2 : rep->nrules;
	for (unsigned j = 0; j < named; j++)
		diag_note(dc, top[j]->loc, "glob '%s' accounts for %zu states", top[j]->glob,
			  rep->states[j]);
	if (crowd)
		diag_note(dc, LOC_NONE,
			  "%u globs take part in most states: patterns that may match anywhere "
			  "(such as '**/...') multiply each other's states",
			  rep->crowd);
	beec_limit_note(dc, rep->minimal ? BEEC_LIMIT_states
			    : rep->total ? BEEC_LIMIT_build_total : BEEC_LIMIT_build_states, bound);
}

int dfa_build(const struct dfa_rule *rules, size_t n, const struct dfa_build_opts *opts,
	      struct dfa **out, struct diag_ctx *dc)
{
	struct dfa_build_opts o = { .sz = sizeof(o), .kind = DFA_KIND_PATH };
	struct dfa_limit_report rep;
	struct nfa nfa;
	struct glob *globs = NULL;
	struct dfa *d = NULL;
	int rc = 0;

	if (opts)
		memcpy(&o, opts, opts->sz < sizeof(o) ? opts->sz : sizeof(o));
	if (o.max_states == 0 || o.max_states > DFA_MAX_STATES)
		o.max_states = DFA_MAX_STATES;
	if (o.max_build_states == 0)
		o.max_build_states = DFA_DEFAULT_BUILD_STATES;
	if (o.max_build_total == 0)
		o.max_build_total = DFA_DEFAULT_BUILD_TOTAL;
	*out = NULL;
	nfa_init(&nfa);

	/* 1. every glob parsed, every bad one reported; the NFA of all of
	 * them gives the rules each state may match, and by permissions the
	 * chunks are built from the parsed globs */
	globs = xcalloc(n ? n : 1, sizeof(*globs));
	for (size_t i = 0; i < n; i++) {
		struct glob_error ge;
		if (dfa_rule_glob(&rules[i], &globs[i], &ge)) {
			if (dc)
				diag_error(dc, dfa_glob_loc(&rules[i], &ge), "invalid glob '%s': %s",
					   rules[i].glob, ge.msg);
			rc = -EINVAL;
			continue;
		}
		nfa_glob_add(&nfa, &globs[i], (uint32_t)i);
	}
	if (rc)
		goto out;

	/* 2. each rule's own minimal DFA, combined: by permissions folded in
	 * one at a time and minimised as it goes, or with provenance all at
	 * once; 3. minimise, merge classes, number states */
	d = dfa_alloc(o.kind, rules, n);
	d->perms_only = o.perms_only;
	d->marks = o.marks;
	d->stats.nfa_states = (unsigned)nfa.n;
	if (o.perms_only) {
		/* by permissions, first all rules in one subset construction,
		 * bounded by the NFA's size: where threads do not multiply that
		 * is linear, where they do (patterns that may match anywhere)
		 * it stops early and the fold below builds the same automaton
		 * (the minimal one is unique, and so is its numbering) */
		nfa_classes_compute(&nfa);
		rc = dfa_fold_build_chunked(d, rules, globs, n, &nfa, o.max_build_states,
					    o.max_build_total, o.max_states);
		if (rc != -E2BIG)
			goto built;
	}
	rc = dfa_fold_build(d, rules, n, !o.perms_only, o.max_build_states, o.max_build_total,
			    o.max_states, &rep);
	if (rc == -E2BIG) {
		if (o.limit)
			*o.limit = rep;
		if (dc)
			dfa_limit_diag(dc, rules, n, &o, &rep);
	}
built:
	if (rc) {
		dfa_free(d);
		d = NULL;
	}
	*out = d;
out:
	for (size_t i = 0; globs && i < n; i++)
		glob_fini(&globs[i]);
	free(globs);
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

int dfa_rule_glob(const struct dfa_rule *r, struct glob *g, struct glob_error *ge)
{
	int rc = glob_parse(r->glob, g, ge);
	if (rc == 0 && r->cover_dir)
		glob_cover_dir(g);
	return rc;
}

void dfa_rules_simulate(const struct dfa_rule *rules, size_t n, const void *bytes, size_t len,
			bool *matched)
{
	struct nfa nfa;
	nfa_init(&nfa);
	for (size_t i = 0; i < n; i++) {
		struct glob g;
		struct glob_error ge;
		matched[i] = false;
		if (dfa_rule_glob(&rules[i], &g, &ge) == 0) {
			nfa_glob_add(&nfa, &g, (uint32_t)i);
			glob_fini(&g);
		}
	}
	nfa_match(&nfa, bytes, len, matched);
	nfa_fini(&nfa);
}

size_t dfa_string_rules(const struct dfa *d, const void *bytes, size_t len, unsigned **ids)
{
	bool *matched = xcalloc(d->nrules ? d->nrules : 1, sizeof(bool));
	unsigned *v = xmalloc((d->nrules ? d->nrules : 1) * sizeof(unsigned));
	size_t n = 0;
	dfa_rules_simulate(d->rules, d->nrules, bytes, len, matched);
	for (size_t i = 0; i < d->nrules; i++)
		if (matched[i])
			v[n++] = d->rules[i].rule;
	qsort(v, n, sizeof(unsigned), dfa_rule_id_cmp);
	size_t u = 0;
	for (size_t i = 0; i < n; i++)
		if (u == 0 || v[u - 1] != v[i])
			v[u++] = v[i];
	free(matched);
	*ids = v;
	return u;
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

uint32_t dfa_marks_get(const struct dfa *d)
{
	return d->marks;
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
