/* SPDX-License-Identifier: GPL-2.0-only */
/* narrow.c: revoke's narrowing of a live session's tables (narrow.h).
 *
 * The loader's revoke (loader/revoke.c) takes a grant away from a running
 * session; what it writes to the live maps is computed here, next to the
 * automata and images it is computed from, and reached through
 * libbeec.h. Allocations are plain malloc with -ENOMEM, not the
 * compiler's funnel: these run outside a compile's trap. */
#include "narrow.h"
#include "dfa.h"
#include "image.h"
#include "ir.h"

#include "bee_dfa.h"
#include "bee_net.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* ---- fs and exec: permissions of the live states --------------------------------------- */

struct pair {
	uint32_t l, w;              /* live state, narrowed state */
	uint32_t parent;            /* index of the pair it was reached from */
	uint8_t byte;               /* over this byte */
};

struct pairset {
	struct pair *v;
	size_t n, cap;
	uint64_t *slots;            /* key + 1, 0 = empty */
	uint32_t *idx;
	size_t nslots;
};

static uint64_t pair_hash(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	return k;
}

static int pairset_grow(struct pairset *ps)
{
	size_t ns = ps->nslots ? ps->nslots * 2 : 1024;
	uint64_t *slots = calloc(ns, sizeof(*slots));
	uint32_t *idx = calloc(ns, sizeof(*idx));
	if (!slots || !idx) {
		free(slots);
		free(idx);
		return -ENOMEM;
	}
	for (size_t i = 0; i < ps->nslots; i++) {
		if (!ps->slots[i])
			continue;
		size_t h = pair_hash(ps->slots[i]) & (ns - 1);
		while (slots[h])
			h = (h + 1) & (ns - 1);
		slots[h] = ps->slots[i];
		idx[h] = ps->idx[i];
	}
	free(ps->slots);
	free(ps->idx);
	ps->slots = slots;
	ps->idx = idx;
	ps->nslots = ns;
	return 0;
}

/* Adds (l, w) unless present. Returns 1 when added, 0 when present. */
static int pairset_add(struct pairset *ps, uint32_t l, uint32_t w, uint32_t parent, uint8_t byte)
{
	if ((ps->n + 1) * 2 > ps->nslots && pairset_grow(ps) < 0)
		return -ENOMEM;
	uint64_t key = ((uint64_t)l << 32 | w) + 1;
	size_t h = pair_hash(key) & (ps->nslots - 1);
	while (ps->slots[h]) {
		if (ps->slots[h] == key)
			return 0;
		h = (h + 1) & (ps->nslots - 1);
	}
	if (ps->n == ps->cap) {
		size_t nc = ps->cap ? ps->cap * 2 : 1024;
		struct pair *nv = realloc(ps->v, nc * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		ps->v = nv;
		ps->cap = nc;
	}
	ps->slots[h] = key;
	ps->idx[h] = (uint32_t)ps->n;
	ps->v[ps->n++] = (struct pair){ l, w, parent, byte };
	return 1;
}

static void pairset_fini(struct pairset *ps)
{
	free(ps->v);
	free(ps->slots);
	free(ps->idx);
}

/* The string that reaches pair i, its bytes made readable where a class
 * allows it (the path from the start, shortest first by BFS). */
static void pair_string(const struct pairset *ps, size_t i, char *buf, size_t size)
{
	char rev[256];
	size_t n = 0;
	while (i != 0 && n < sizeof(rev)) {
		rev[n++] = (char)ps->v[i].byte;
		i = ps->v[i].parent;
	}
	size_t k = 0;
	for (; n > 0 && k + 1 < size; n--)
		buf[k++] = rev[n - 1];
	buf[k] = '\0';
}

int beec_narrow__dfa(const struct bee_dfa_hdr *live, const struct dfa *want, void *out,
		   struct beec_narrow_report *rep)
{
	struct dfa_tables t;
	struct pairset ps = { 0 };
	const __u32 *lperms = bee_dfa_perms(live);
	const __u16 *lnext = bee_dfa_next(live);
	uint32_t nl = live->nstates, ncl = live->nclasses;
	uint32_t *newp = NULL;
	uint8_t *mixed = NULL;
	int err = 0;
	memset(rep, 0, sizeof(*rep));
	rep->exact = true;
	dfa_tables_get(want, &t);
	newp = malloc(nl * sizeof(*newp));
	mixed = calloc(nl, 1);
	if (!newp || !mixed) {
		err = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < nl; i++)
		newp[i] = 0;
	/* one byte per (live class, narrowed class), the most readable; NUL
	 * never occurs in a path a hook walks */
	bool rep_byte[256] = { false };
	for (int b = 1; b < 256; b++) {
		rep_byte[b] = true;
		for (int c = 1; c < 256 && rep_byte[b]; c++) {
			if (c == b || live->class_of[c] != live->class_of[b] || t.class_of[c] != t.class_of[b])
				continue;
			unsigned rc = dfa_byte_rank((uint8_t)c), rb = dfa_byte_rank((uint8_t)b);
			if (rc < rb || (rc == rb && c < b))
				rep_byte[b] = false;
		}
	}
	if ((err = pairset_add(&ps, 0, t.start, 0, 0)) < 0)
		goto out;
	err = 0;
	bool *seen = calloc(nl, sizeof(bool));
	if (!seen) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < ps.n; i++) {
		uint32_t l = ps.v[i].l, w = ps.v[i].w;
		uint32_t wp = t.perms[w];
		if (wp & ~lperms[l]) {
			/* the narrowed policy grants something the live one does not */
			err = -EINVAL;
			break;
		}
		if (!seen[l]) {
			seen[l] = true;
			newp[l] = wp;
		} else if (newp[l] != wp) {
			mixed[l] = 1;
			newp[l] &= wp;
		}
		/* a walk stops at the live dead state, which keeps permissions 0
		 * after it; following it on finds a narrowed automaton that would
		 * grant more there */
		for (int b = 1; b < 256; b++) {
			if (!rep_byte[b])
				continue;
			uint32_t nl2 = lnext[(size_t)l * ncl + live->class_of[b]];
			uint32_t nw2 = t.next[(size_t)w * t.nclasses + t.class_of[b]];
			if (pairset_add(&ps, nl2, nw2, (uint32_t)i, (uint8_t)b) < 0) {
				err = -ENOMEM;
				break;
			}
		}
		if (err)
			break;
	}
	free(seen);
	if (err)
		goto out;
	/* what the live states lose, and the first string that loses too much */
	for (uint32_t l = 0; l < nl; l++) {
		rep->states_lowered += newp[l] != lperms[l];
		rep->states_over += mixed[l];
	}
	rep->exact = rep->states_over == 0;
	for (size_t i = 0; !rep->exact && i < ps.n; i++) {
		uint32_t extra = t.perms[ps.v[i].w] & ~newp[ps.v[i].l];
		if (extra) {
			pair_string(&ps, i, rep->example, sizeof(rep->example));
			rep->example_lost = extra;
			break;
		}
	}
	memcpy(out, live, live->size);
	memcpy((uint8_t *)out + sizeof(*live), newp, nl * sizeof(*newp));
out:
	pairset_fini(&ps);
	free(newp);
	free(mixed);
	return err;
}

int beec_narrow__replace(const struct bee_dfa_hdr *live, size_t value_size, const struct bee_dfa_hdr *want,
		       void *p1, void *p2, void *p3)
{
	uint32_t nl = live->nstates, nw = want->nstates, nc = want->nclasses;
	if (nw > nl || nc > live->nclasses || bee_dfa_image_size(nl, nc) > value_size || live->size > value_size)
		return -E2BIG;
	/* 1: the live table with every permission word 0 */
	memset(p1, 0, value_size);
	memcpy(p1, live, live->size);
	memset((uint8_t *)p1 + sizeof(*live), 0, (size_t)nl * 4);
	/* 2: want's table with nl states; states nw..nl-1 are unreachable and
	 * lead to the dead state (or to themselves when there is none) */
	struct bee_dfa_hdr *h = p2;
	memset(p2, 0, value_size);
	memcpy(h, want, sizeof(*h));
	h->nstates = (__u16)nl;
	h->hops = 0;    /* the replacement walks next[] alone (bee_dfa.h) */
	h->size = bee_dfa_image_size(nl, nc);
	__u16 *next = (__u16 *)((uint8_t *)p2 + sizeof(*h) + (size_t)nl * 4);
	memcpy(next, bee_dfa_next(want), (size_t)nw * nc * 2);
	for (uint32_t st = nw; st < nl; st++)
		for (uint32_t c = 0; c < nc; c++)
			next[(size_t)st * nc + c] = want->dead != BEE_DFA_NONE ? want->dead : (__u16)st;
	/* 3: and want's permissions */
	memcpy(p3, p2, value_size);
	memcpy((uint8_t *)p3 + sizeof(*h), bee_dfa_perms(want), (size_t)nw * 4);
	return 0;
}

int beec_narrow__plan(const struct bee_dfa_hdr *live, size_t vs, const struct dfa *want,
		    struct beec_narrow_plan *plan)
{
	size_t want_len;
	struct bee_dfa_hdr *wimg = NULL;
	int err = -ENOMEM;
	memset(plan, 0, sizeof(*plan));
	for (int i = 0; i < 3; i++)
		if (!(plan->writes[i] = calloc(1, vs)))
			goto fail;
	memcpy(plan->writes[0], live, live->size);
	err = beec_narrow__dfa(live, want, plan->writes[0], &plan->rep);
	if (err)
		goto fail;
	plan->nwrites = 1;
	plan->exact = plan->rep.exact;
	if (plan->exact)
		return 0;
	wimg = image_dfa_write(want, &want_len);
	if (!wimg) {
		err = -ENOMEM;
		goto fail;
	}
	/* the lowered image stays the fallback in writes[0] until this fits */
	uint8_t *lowered = plan->writes[0];
	plan->writes[0] = malloc(vs);
	if (!plan->writes[0]) {
		plan->writes[0] = lowered;
		err = -ENOMEM;
		goto fail;
	}
	if (beec_narrow__replace(live, vs, wimg, plan->writes[0], plan->writes[1], plan->writes[2]) == 0) {
		free(lowered);
		plan->nwrites = 3;
		plan->exact = plan->replaced = true;
	} else {
		free(plan->writes[0]);
		plan->writes[0] = lowered;
	}
	free(wimg);
	return 0;
fail:
	free(wimg);
	beec_narrow__plan_fini(plan);
	return err;
}

void beec_narrow__plan_fini(struct beec_narrow_plan *plan)
{
	for (int i = 0; i < 3; i++)
		free(plan->writes[i]);
	memset(plan, 0, sizeof(*plan));
}

/* ---- net: an entry's ports from its rules ------------------------------------------------ */

#define PORT_WORDS (65536 / 64)

static void ports_set(uint64_t *bm, unsigned lo, unsigned hi, bool on)
{
	for (unsigned p = lo; p <= hi; p++) {
		if (on)
			bm[p / 64] |= 1ULL << (p % 64);
		else
			bm[p / 64] &= ~(1ULL << (p % 64));
	}
}

int beec_narrow__net_value(const struct ir_policy *ir, const unsigned *prov, size_t nprov, unsigned dir,
			 unsigned proto, const bool *exclude, struct bee_net_value *out)
{
	uint64_t grant[PORT_WORDS] = { 0 }, deny[PORT_WORDS] = { 0 };
	enum ir_rule_kind want = dir == BEE_NET_BIND ? IR_RULE_NET_BIND : IR_RULE_NET_CONNECT;
	for (size_t i = 0; i < nprov; i++) {
		if (prov[i] >= ir->nrules)
			return -EINVAL;
		const struct ir_rule *r = &ir->rules[prov[i]];
		if (r->net.proto != proto)
			continue;
		if (r->kind == IR_RULE_NET_DENY)
			ports_set(deny, r->net.port_lo, r->net.port_hi, true);
		else if (r->kind == want && !(exclude && exclude[prov[i]]))
			ports_set(grant, r->net.port_lo, r->net.port_hi, true);
	}
	int truncated = 0;
	out->nranges = 0;
	memset(out->ranges, 0, sizeof(out->ranges));
	for (unsigned p = 0; p < 65536;) {
		bool on = (grant[p / 64] & ~deny[p / 64]) >> (p % 64) & 1;
		if (!on) {
			p++;
			continue;
		}
		unsigned lo = p;
		while (p < 65536 && ((grant[p / 64] & ~deny[p / 64]) >> (p % 64) & 1))
			p++;
		if (out->nranges == BEE_NET_MAX_RANGES) {
			truncated = 1;   /* narrower still: never wider */
			break;
		}
		out->ranges[out->nranges].lo = (uint16_t)lo;
		out->ranges[out->nranges].hi = (uint16_t)(p - 1);
		out->nranges++;
	}
	return truncated;
}

/* Every port new allows, old allows. */
