/* SPDX-License-Identifier: GPL-2.0-only */
/* netset.c: [net] rules -> LPM entries, their dump and image, and the
 * attenuation check between two sets. See netset.h for the semantics. */
#include "netset.h"
#include "bee_names.h"
#include "mem.h"

#include "netaddr.h"

#include <stdlib.h>
#include <string.h>

typedef unsigned __int128 u128;

/* ---- prefixes ----------------------------------------------------------------
 * An address is a number of width 32 or 128 bits; a prefix is its first
 * address and length. */

struct pfx {
	u128 base;
	unsigned len;
};

static unsigned family_width(enum ir_net_family f)
{
	switch (f) {
	case IR_NET_IPV4:
		return 32;
	case IR_NET_IPV6:
		return 128;
	}
	return 0;
}

static u128 host_mask(unsigned width, unsigned len)
{
	unsigned host = width - len;
	return host >= 128 ? ~(u128)0 : (((u128)1 << host) - 1);
}

static u128 pfx_last(struct pfx p, unsigned width)
{
	return p.base | host_mask(width, p.len);
}

static bool pfx_contains(struct pfx outer, struct pfx inner, unsigned width)
{
	return outer.len <= inner.len && (inner.base & ~host_mask(width, outer.len)) == outer.base;
}

/* Pre-order of the prefix tree: by first address, then shorter first. */
static int pfx_cmp(struct pfx a, struct pfx b)
{
	if (a.base != b.base)
		return a.base < b.base ? -1 : 1;
	return a.len < b.len ? -1 : a.len > b.len;
}

static u128 addr_load(const uint8_t *a, unsigned width)
{
	u128 v = 0;
	for (unsigned i = 0; i < width / 8; i++)
		v = v << 8 | a[i];
	return v;
}

static void addr_store(u128 v, unsigned width, uint8_t out[16])
{
	memset(out, 0, 16);
	for (unsigned i = width / 8; i-- > 0; v >>= 8)
		out[i] = (uint8_t)v;
}

/* ::ffff:0:0/96, where the IPv4 addresses sit in the IPv6 space */
static const struct pfx mapped96 = { (u128)0xffff << 32, 96 };

/* In a pre-order list of distinct prefixes, the first address of ps[i] that
 * no longer prefix of the list covers; false when they cover all of it. */
static bool region_first(const struct pfx *ps, size_t n, size_t i, unsigned width, u128 *first)
{
	u128 cursor = ps[i].base, last = pfx_last(ps[i], width);
	for (size_t j = i + 1; j < n && pfx_contains(ps[i], ps[j], width); j++) {
		if (ps[j].base < cursor)
			continue;   /* inside a child already passed */
		if (ps[j].base > cursor)
			break;      /* a gap before this child */
		u128 jlast = pfx_last(ps[j], width);
		if (jlast == last)
			return false;
		cursor = jlast + 1;
	}
	*first = cursor;
	return true;
}

/* ---- port range sets -------------------------------------------------------- */

struct rng {
	uint32_t lo, hi;
};

struct rset {
	struct rng *v;
	size_t n, cap;
};

static int rng_cmp(const void *a, const void *b)
{
	const struct rng *x = a, *y = b;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->hi < y->hi ? -1 : x->hi > y->hi;
}

static void rset_add(struct rset *s, uint32_t lo, uint32_t hi)
{
	*VEC_PUSH(s->v, s->n, s->cap) = (struct rng){ lo, hi };
}

/* Sorts and merges overlapping and adjacent ranges. */
static void rset_normalize(struct rset *s)
{
	if (s->n == 0)
		return;
	qsort(s->v, s->n, sizeof(s->v[0]), rng_cmp);
	size_t k = 0;
	for (size_t i = 1; i < s->n; i++) {
		if (s->v[i].lo <= s->v[k].hi + 1) {
			if (s->v[i].hi > s->v[k].hi)
				s->v[k].hi = s->v[i].hi;
		} else {
			s->v[++k] = s->v[i];
		}
	}
	s->n = k + 1;
}

/* out = a minus b, both normalised; out stays normalised. */
static void rset_subtract(const struct rset *a, const struct rset *b, struct rset *out)
{
	out->n = 0;
	size_t j = 0;
	for (size_t i = 0; i < a->n; i++) {
		uint32_t lo = a->v[i].lo, hi = a->v[i].hi;
		while (j < b->n && b->v[j].hi < lo)
			j++;
		for (size_t k = j; k < b->n && b->v[k].lo <= hi && lo <= hi; k++) {
			if (b->v[k].lo > lo)
				rset_add(out, lo, b->v[k].lo - 1);
			lo = b->v[k].hi + 1;
		}
		if (lo <= hi)
			rset_add(out, lo, hi);
	}
}

/* out = a union b, both normalised; out stays normalised. */
static void rset_union(const struct rset *a, const struct rset *b, struct rset *out)
{
	out->n = 0;
	for (size_t i = 0, j = 0; i < a->n || j < b->n;) {
		struct rng r = j == b->n || (i < a->n && a->v[i].lo <= b->v[j].lo) ? a->v[i++]
										: b->v[j++];
		if (out->n > 0 && r.lo <= out->v[out->n - 1].hi + 1) {
			if (r.hi > out->v[out->n - 1].hi)
				out->v[out->n - 1].hi = r.hi;
		} else {
			rset_add(out, r.lo, r.hi);
		}
	}
}

/* The lowest port of a that b lacks (both sorted and disjoint), or -1. */
static long ranges_first_missing(const struct bee_net_range *a, unsigned na,
				 const struct bee_net_range *b, unsigned nb)
{
	unsigned j = 0;
	for (unsigned i = 0; i < na; i++) {
		uint32_t x = a[i].lo;
		while (x <= a[i].hi) {
			while (j < nb && b[j].hi < x)
				j++;
			if (j == nb || b[j].lo > x)
				return x;
			x = (uint32_t)b[j].hi + 1;
		}
	}
	return -1;
}

/* ---- rules of a map ----------------------------------------------------------- */

static bool rule_is_net(enum ir_rule_kind k)
{
	switch (k) {
	case IR_RULE_NET_CONNECT:
	case IR_RULE_NET_BIND:
	case IR_RULE_NET_DENY:
		return true;
	case IR_RULE_NET_HOST:     /* the DNS stub's, never the tries' */
	case IR_RULE_FS_READ:
	case IR_RULE_FS_WRITE:
	case IR_RULE_FS_DENY:
	case IR_RULE_EXEC_ALLOW:
	case IR_RULE_ENV_ALLOW:
	case IR_RULE_ENV_SET:
	case IR_RULE_KIND_COUNT:
		break;
	}
	return false;
}

/* The grant kind of a direction. */
static enum ir_rule_kind dir_grant_kind(enum bee_net_dir d)
{
	switch (d) {
	case BEE_NET_CONNECT:
		return IR_RULE_NET_CONNECT;
	case BEE_NET_BIND:
		return IR_RULE_NET_BIND;
	}
	return IR_RULE_KIND_COUNT;
}

const char *netset_dir_name(enum bee_net_dir dir)
{
	switch (dir) {
	case BEE_NET_CONNECT:
		return "connect";
	case BEE_NET_BIND:
		return "bind";
	}
	return "?";
}

static const char *proto_name(enum ir_net_proto p)
{
	switch (p) {
	case IR_NET_TCP:
		return "tcp";
	case IR_NET_UDP:
		return "udp";
	}
	return "?";
}

static const enum ir_net_family families[] = { IR_NET_IPV4, IR_NET_IPV6 };
static const enum bee_net_dir dirs[] = { BEE_NET_CONNECT, BEE_NET_BIND };
static const enum ir_net_proto protos[] = { IR_NET_TCP, IR_NET_UDP };
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* A rule as it stands in one map: its prefix there (projected for an IPv6
 * rule in bee_net4). */
struct mrule {
	unsigned pos;      /* in netset.rules */
	struct pfx p;
};

static struct pfx rule_pfx(const struct ir_rule *r)
{
	unsigned w = family_width(r->net.family);
	return (struct pfx){ addr_load(r->net.addr, w), r->net.prefix };
}

/* The rule's prefix in the map of family f; false when it has none there. */
static bool rule_in_map(const struct ir_rule *r, enum ir_net_family f, struct pfx *out)
{
	struct pfx p = rule_pfx(r);
	switch (f) {
	case IR_NET_IPV4:
		if (r->net.family == IR_NET_IPV4) {
			*out = p;
			return true;
		}
		if (pfx_contains(p, mapped96, 128)) {
			*out = (struct pfx){ 0, 0 };
			return true;
		}
		if (pfx_contains(mapped96, p, 128)) {
			*out = (struct pfx){ p.base & 0xffffffffu, p.len - 96 };
			return true;
		}
		return false;
	case IR_NET_IPV6:
		if (r->net.family != IR_NET_IPV6 || pfx_contains(mapped96, p, 128))
			return false;
		*out = p;
		return true;
	}
	return false;
}

/* Checks what the IR promises, so that a broken IR cannot widen a set. */
static int rule_check(const struct ir_rule *r, struct diag_ctx *dc)
{
	unsigned w = family_width(r->net.family);
	if (w == 0)
		return diag_error(dc, r->loc, "internal: net rule %u has an unknown family %d",
				  r->index, (int)r->net.family);
	if (r->net.prefix > w)
		return diag_error(dc, r->loc, "internal: net rule %u has prefix /%u beyond %u bits",
				  r->index, r->net.prefix, w);
	if (r->net.port_lo > r->net.port_hi)
		return diag_error(dc, r->loc, "internal: net rule %u has a reversed port range",
				  r->index);
	if (r->net.proto != IR_NET_TCP && r->net.proto != IR_NET_UDP)
		return diag_error(dc, r->loc, "internal: net rule %u has an unknown protocol %d",
				  r->index, (int)r->net.proto);
	return 0;
}

/* ---- build -------------------------------------------------------------------- */

struct build {
	struct netset *set;
	const struct netset_limits *lim;
	struct diag_ctx *dc;
	int rc;
	struct netset_entry *ents;   /* of the map being built */
	size_t nents, cap;
	/* scratch */
	struct rset grants, denies, ports;
};

/* A candidate: one distinct prefix and the slice rules that have it. */
struct cand {
	struct pfx p;
	size_t r0, r1;        /* its rules: mr[r0..r1) */
	bool pseudo;          /* ::ffff:0:0/96 in bee_net6: covers, never an entry */
};

static int mrule_cmp(const void *a, const void *b)
{
	const struct mrule *x = a, *y = b;
	int c = pfx_cmp(x->p, y->p);
	return c ? c : (x->pos > y->pos) - (x->pos < y->pos);
}

static void entry_name(const struct netset_entry *e, char *buf, size_t len)
{
	char a[NETADDR_ADDRSTRLEN];
	netaddr_format_addr(e->family, e->addr, a);
	snprintf(buf, len, "%s %s/%u/%s", netset_dir_name(e->dir), a, e->prefix,
		 proto_name(e->proto));
}

/* Reports an entry needing more port ranges than a value holds, at the rules
 * that contain it. */
static void build_report_ranges(struct build *b, const struct netset_entry *e, size_t need,
				const unsigned *prov, size_t nprov)
{
	char name[NETADDR_ADDRSTRLEN + 32];
	entry_name(e, name, sizeof(name));
	const struct ir_rule *first = &b->set->rules[prov[0]];
	b->rc = diag_error(b->dc, first->loc,
			   "net entry '%s' needs %zu port ranges, more than the limit of %u; "
			   "%zu rules make it, this one first",
			   name, need, b->lim->max_ranges, nprov);
	for (size_t i = 1; i < nprov && i <= 3; i++) {
		const struct ir_rule *r = &b->set->rules[prov[i]];
		if (i == 3 && nprov > 4) {
			diag_note(b->dc, r->loc, "'%s' and %zu more rule%s add or carve ports too",
				  r->text ? r->text : "?", nprov - 4, nprov - 4 == 1 ? "" : "s");
			break;
		}
		diag_note(b->dc, r->loc, "'%s' %s it", r->text ? r->text : "?",
			  r->kind == IR_RULE_NET_DENY ? "carves ports out of" : "adds ports to");
	}
}

/* What the candidates containing a prefix (itself included) add up to. */
struct level {
	struct rset grants, denies;   /* unions of their rules' port ranges, normalised */
	unsigned *prov;               /* their rules' positions, ascending */
	size_t nprov, provcap;
	bool kept;                    /* one of them is an entry */
	bool overflowed;              /* one of them needs too many ranges */
};

/* lv = up (NULL at the top) plus the rules of candidate c. */
static void level_derive(struct build *b, struct level *lv, const struct level *up,
			 const struct cand *c, const struct mrule *mr)
{
	static const struct level none;
	if (!up)
		up = &none;
	b->grants.n = b->denies.n = 0;
	lv->nprov = 0;
	size_t j = 0;
	for (size_t k = c->r0; k < c->r1; k++) {
		const struct ir_rule *r = &b->set->rules[mr[k].pos];
		rset_add(r->kind == IR_RULE_NET_DENY ? &b->denies : &b->grants, r->net.port_lo,
			 r->net.port_hi);
		/* merge: a rule has one prefix, so the two lists are disjoint */
		while (j < up->nprov && up->prov[j] < mr[k].pos)
			*VEC_PUSH(lv->prov, lv->nprov, lv->provcap) = up->prov[j++];
		*VEC_PUSH(lv->prov, lv->nprov, lv->provcap) = mr[k].pos;
	}
	while (j < up->nprov)
		*VEC_PUSH(lv->prov, lv->nprov, lv->provcap) = up->prov[j++];
	rset_normalize(&b->grants);
	rset_normalize(&b->denies);
	rset_union(&up->grants, &b->grants, &lv->grants);
	rset_union(&up->denies, &b->denies, &lv->denies);
	lv->kept = up->kept;
	lv->overflowed = up->overflowed;
}

/* Lowers one (map, direction, protocol) slice; appends its entries. */
static void build_slice(struct build *b, enum ir_net_family f, enum bee_net_dir d,
			enum ir_net_proto pr)
{
	const struct netset *set = b->set;
	unsigned width = family_width(f);
	enum ir_rule_kind gk = dir_grant_kind(d);
	struct mrule *mr = NULL;
	size_t nmr = 0, mrcap = 0;

	for (size_t i = 0; i < set->nrules; i++) {
		const struct ir_rule *r = &set->rules[i];
		struct pfx p;
		if (r->net.proto != pr || (r->kind != gk && r->kind != IR_RULE_NET_DENY))
			continue;
		if (rule_in_map(r, f, &p))
			*VEC_PUSH(mr, nmr, mrcap) = (struct mrule){ (unsigned)i, p };
	}
	if (nmr == 0)
		goto out;
	qsort(mr, nmr, sizeof(mr[0]), mrule_cmp);

	/* distinct prefixes in pre-order, with the /96 placeholder in bee_net6 */
	struct cand *cs = NULL;
	struct pfx *ps = NULL;
	size_t nc = 0, ccap = 0, pcap = 0, np = 0;
	bool pseudo_done = f != IR_NET_IPV6;
	for (size_t i = 0; i <= nmr; i++) {
		if (!pseudo_done && (i == nmr || pfx_cmp(mapped96, mr[i].p) < 0)) {
			*VEC_PUSH(cs, nc, ccap) = (struct cand){ mapped96, i, i, true };
			pseudo_done = true;
		}
		if (i == nmr)
			break;
		if (nc > 0 && !cs[nc - 1].pseudo && pfx_cmp(cs[nc - 1].p, mr[i].p) == 0)
			cs[nc - 1].r1 = i + 1;
		else
			*VEC_PUSH(cs, nc, ccap) = (struct cand){ mr[i].p, i, i + 1, false };
	}
	for (size_t i = 0; i < nc; i++)
		*VEC_PUSH(ps, np, pcap) = cs[i].p;

	/* walk the tree: the stack holds the candidates containing the current
	 * one, and levels[k] what the stack's first k + 1 of them add up to */
	size_t *stack = xmalloc(nc * sizeof(*stack));
	struct level *levels = xcalloc(nc, sizeof(*levels));
	size_t depth = 0;
	for (size_t i = 0; i < nc; i++) {
		while (depth > 0 && !pfx_contains(cs[stack[depth - 1]].p, cs[i].p, width))
			depth--;
		stack[depth++] = i;
		struct level *lv = &levels[depth - 1];
		level_derive(b, lv, depth > 1 ? &levels[depth - 2] : NULL, &cs[i], mr);
		if (cs[i].pseudo)
			continue;

		u128 first;
		if (!region_first(ps, np, i, width, &first))
			continue;   /* shadowed: every address has a longer match */

		rset_subtract(&lv->grants, &lv->denies, &b->ports);
		if (b->ports.n == 0 && !lv->kept)
			continue;   /* denies every port with nothing above: as absence does */
		lv->kept = true;

		struct netset_entry *e = VEC_PUSH(b->ents, b->nents, b->cap);
		memset(e, 0, sizeof(*e));
		e->family = f;
		e->dir = d;
		e->proto = pr;
		addr_store(cs[i].p.base, width, e->addr);
		e->prefix = (uint8_t)cs[i].p.len;
		if (b->ports.n > b->lim->max_ranges) {
			/* report where it starts, not again in every entry below it */
			if (!lv->overflowed && !diag_full(b->dc))
				build_report_ranges(b, e, b->ports.n, lv->prov, lv->nprov);
			lv->overflowed = true;
			b->rc = -1;
			b->nents--;
			continue;
		}
		e->nranges = (unsigned)b->ports.n;
		for (size_t k = 0; k < b->ports.n; k++)
			e->ranges[k] = (struct bee_net_range){ (uint16_t)b->ports.v[k].lo,
							       (uint16_t)b->ports.v[k].hi };
		e->nrules = (unsigned)lv->nprov;
		e->rules = arena_alloc(&b->set->arena, lv->nprov * sizeof(*e->rules));
		memcpy(e->rules, lv->prov, lv->nprov * sizeof(*e->rules));
	}
	for (size_t i = 0; i < nc; i++) {
		free(levels[i].grants.v);
		free(levels[i].denies.v);
		free(levels[i].prov);
	}
	free(levels);
	free(stack);
	free(ps);
	free(cs);
out:
	free(mr);
}

static const struct netset_limits limits_default = NETSET_LIMITS_DEFAULT;

int netset_build(const struct ir_rule *rules, size_t nrules, const struct netset_limits *limits,
		 struct diag_ctx *dc, struct netset **out)
{
	struct netset_limits lim = limits ? *limits : limits_default;
	if (lim.max_ranges > BEE_NET_MAX_RANGES)
		lim.max_ranges = BEE_NET_MAX_RANGES;

	struct netset *set = xcalloc(1, sizeof(*set));
	struct build b = { .set = set, .lim = &lim, .dc = dc };
	size_t rcap = 0;

	*out = NULL;
	for (size_t i = 0; i < nrules; i++) {
		if (!rule_is_net(rules[i].kind))
			continue;
		if (rule_check(&rules[i], dc) < 0) {
			b.rc = -1;
			continue;
		}
		struct ir_rule *r = VEC_PUSH(set->rules, set->nrules, rcap);
		*r = rules[i];
		/* host bits are zero by the IR's promise; make the set exact anyway */
		unsigned w = family_width(r->net.family);
		struct pfx p = rule_pfx(r);
		addr_store(p.base & ~host_mask(w, p.len), w, r->net.addr);
	}
	if (b.rc < 0)
		goto fail;

	for (size_t fi = 0; fi < ARRAY_LEN(families); fi++) {
		b.ents = NULL;
		b.nents = b.cap = 0;
		for (size_t di = 0; di < ARRAY_LEN(dirs); di++)
			for (size_t pi = 0; pi < ARRAY_LEN(protos); pi++)
				build_slice(&b, families[fi], dirs[di], protos[pi]);
		if (b.nents > lim.max_entries && b.rc == 0)
			b.rc = diag_error(dc, LOC_NONE,
					  "net rules need %zu entries in map '%s', more than the limit of %u",
					  b.nents, bee_map_name(families[fi] == IR_NET_IPV4 ? BEE_MAP_NET4 : BEE_MAP_NET6),
					  lim.max_entries);
		size_t cap = set->nentries;
		mem_grow((void **)&set->entries, &cap, set->nentries + b.nents, sizeof(*set->entries));
		if (b.nents)
			memcpy(set->entries + set->nentries, b.ents, b.nents * sizeof(*b.ents));
		set->nentries += b.nents;
		if (families[fi] == IR_NET_IPV4)
			set->n4 = set->nentries;
		free(b.ents);
	}
	if (b.rc < 0)
		goto fail;
	free(b.grants.v);
	free(b.denies.v);
	free(b.ports.v);
	*out = set;
	return 0;
fail:
	free(b.grants.v);
	free(b.denies.v);
	free(b.ports.v);
	netset_free(set);
	return -1;
}

void netset_free(struct netset *set)
{
	if (!set)
		return;
	arena_free(&set->arena);
	free(set->entries);
	free(set->rules);
	free(set);
}

/* ---- dump --------------------------------------------------------------------
 *
 *   # bee net (schema 1)
 *   # an address's longest matching entry decides; no match denies
 *   bee_net4 2 entries
 *     0  connect tcp  10.0.0.0/8   443,8000-8080  grant 1 4
 *     1  connect tcp  10.1.0.0/16  none           grant 1 4  deny 5
 *   bee_net6 1 entry
 *     2  connect tcp  ::1/128      1-1024         grant 2
 *
 * The first column is the entry's prov record; rules are policy indices.
 */

static void ports_format(const struct netset_entry *e, char *buf, size_t len)
{
	size_t n = 0;
	buf[0] = '\0';
	if (e->nranges == 0) {
		snprintf(buf, len, "none");
		return;
	}
	for (unsigned i = 0; i < e->nranges && n < len; i++) {
		const struct bee_net_range *r = &e->ranges[i];
		const char *sep = i ? "," : "";
		if (r->lo == 0 && r->hi == 65535)
			n += (size_t)snprintf(buf + n, len - n, "%s*", sep);
		else if (r->lo == r->hi)
			n += (size_t)snprintf(buf + n, len - n, "%s%u", sep, r->lo);
		else
			n += (size_t)snprintf(buf + n, len - n, "%s%u-%u", sep, r->lo, r->hi);
	}
}

#define PORTS_STRLEN (BEE_NET_MAX_RANGES * 12 + 8)

/* Widths of the prefix and ports columns over every entry, so both maps
 * line up. */
static void dump_widths(const struct netset *set, int *aw, int *pw)
{
	*aw = *pw = 0;
	for (size_t i = 0; i < set->nentries; i++) {
		char a[NETADDR_ADDRSTRLEN], ports[PORTS_STRLEN];
		const struct netset_entry *e = &set->entries[i];
		netaddr_format_addr(e->family, e->addr, a);
		int l = (int)strlen(a) + snprintf(NULL, 0, "/%u", e->prefix);
		*aw = l > *aw ? l : *aw;
		ports_format(e, ports, sizeof(ports));
		*pw = (int)strlen(ports) > *pw ? (int)strlen(ports) : *pw;
	}
}

static void dump_map(const struct netset *set, size_t from, size_t to, const char *map, int aw,
		     int pw, FILE *out)
{
	size_t n = to - from;
	fprintf(out, "%s %zu %s\n", map, n, n == 1 ? "entry" : "entries");
	int iw = 1;
	for (size_t k = set->nentries; k >= 10; k /= 10)
		iw++;
	for (size_t i = from; i < to; i++) {
		char a[NETADDR_ADDRSTRLEN], pfx[NETADDR_ADDRSTRLEN + 8], ports[PORTS_STRLEN];
		const struct netset_entry *e = &set->entries[i];
		netaddr_format_addr(e->family, e->addr, a);
		snprintf(pfx, sizeof(pfx), "%s/%u", a, e->prefix);
		ports_format(e, ports, sizeof(ports));
		fprintf(out, "  %*zu  %-7s %s  %-*s  %-*s  grant", iw, i, netset_dir_name(e->dir),
			proto_name(e->proto), aw, pfx, pw, ports);
		for (unsigned k = 0; k < e->nrules; k++)
			if (set->rules[e->rules[k]].kind != IR_RULE_NET_DENY)
				fprintf(out, " %u", set->rules[e->rules[k]].index);
		bool any_deny = false;
		for (unsigned k = 0; k < e->nrules; k++)
			if (set->rules[e->rules[k]].kind == IR_RULE_NET_DENY) {
				fprintf(out, "%s %u", any_deny ? "" : "  deny", set->rules[e->rules[k]].index);
				any_deny = true;
			}
		fputc('\n', out);
	}
}

static void netset_dump_body(const struct netset *set, FILE *out)
{
	int aw, pw;
	dump_widths(set, &aw, &pw);
	fprintf(out, "# bee net (schema %d)\n", IR_SCHEMA_VERSION);
	fputs("# an address's longest matching entry decides; no match denies\n", out);
	dump_map(set, 0, set->n4, bee_map_name(BEE_MAP_NET4), aw, pw, out);
	dump_map(set, set->n4, set->nentries, bee_map_name(BEE_MAP_NET6), aw, pw, out);
}

int netset_dump(const struct netset *set, FILE *out)
{
	return MEM_PROTECT(-ENOMEM, (netset_dump_body(set, out), 0));
}

/* ---- image --------------------------------------------------------------------- */

static void value_fill(const struct netset_entry *e, uint32_t prov, struct bee_net_value *v)
{
	memset(v, 0, sizeof(*v));
	v->nranges = (uint16_t)e->nranges;
	v->prov = prov;
	memcpy(v->ranges, e->ranges, e->nranges * sizeof(e->ranges[0]));
}

static void netset_image_build_body(const struct netset *set, struct netset_image *img)
{
	memset(img, 0, sizeof(*img));
	img->n4 = set->n4;
	img->n6 = set->nentries - set->n4;
	img->keys4 = xcalloc(img->n4 ? img->n4 : 1, sizeof(*img->keys4));
	img->values4 = xcalloc(img->n4 ? img->n4 : 1, sizeof(*img->values4));
	img->keys6 = xcalloc(img->n6 ? img->n6 : 1, sizeof(*img->keys6));
	img->values6 = xcalloc(img->n6 ? img->n6 : 1, sizeof(*img->values6));
	for (size_t i = 0; i < set->nentries; i++) {
		const struct netset_entry *e = &set->entries[i];
		if (i < set->n4) {
			struct bee_net_key4 *k = &img->keys4[i];
			k->prefixlen = BEE_NET_HDR_BITS + e->prefix;
			k->dir = (uint8_t)e->dir;
			k->proto = (uint8_t)e->proto;
			memcpy(k->addr, e->addr, 4);
			value_fill(e, (uint32_t)i, &img->values4[i]);
		} else {
			struct bee_net_key6 *k = &img->keys6[i - set->n4];
			k->prefixlen = BEE_NET_HDR_BITS + e->prefix;
			k->dir = (uint8_t)e->dir;
			k->proto = (uint8_t)e->proto;
			memcpy(k->addr, e->addr, 16);
			value_fill(e, (uint32_t)i, &img->values6[i - set->n4]);
		}
	}
}

int netset_image_build(const struct netset *set, struct netset_image *img)
{
	return MEM_PROTECT(-ENOMEM, (netset_image_build_body(set, img), 0));
}

void netset_image_free(struct netset_image *img)
{
	free(img->keys4);
	free(img->values4);
	free(img->keys6);
	free(img->values6);
	memset(img, 0, sizeof(*img));
}

struct net_eval_maps netset_image_maps(const struct netset_image *img)
{
	return (struct net_eval_maps){ img->keys4, img->values4, img->n4,
				       img->keys6, img->values6, img->n6 };
}

/* ---- attenuation ----------------------------------------------------------------- */

/* The entries of one slice: [*from, *to). Entries are sorted by slice. */
static void slice_span(const struct netset *s, enum ir_net_family f, enum bee_net_dir d,
		       enum ir_net_proto pr, size_t *from, size_t *to)
{
	size_t lo = f == IR_NET_IPV4 ? 0 : s->n4, hi = f == IR_NET_IPV4 ? s->n4 : s->nentries;
	while (lo < hi && (s->entries[lo].dir != d || s->entries[lo].proto != pr))
		lo++;
	size_t end = lo;
	while (end < hi && s->entries[end].dir == d && s->entries[end].proto == pr)
		end++;
	*from = lo;
	*to = end;
}

/* A node of the merged tree of a child's and a parent's slice. */
struct mnode {
	struct pfx p;
	long ce, pe;      /* the child's / parent's entry with exactly this prefix, or -1 */
	bool pseudo;
};

static int mnode_cmp(const void *a, const void *b)
{
	const struct mnode *x = a, *y = b;
	return pfx_cmp(x->p, y->p);
}

static struct pfx entry_pfx(const struct netset_entry *e)
{
	unsigned w = family_width(e->family);
	return (struct pfx){ addr_load(e->addr, w), e->prefix };
}

/* Does the rule contain this endpoint? In the one address space of
 * netset.h: an IPv4 address or rule is its ::ffff:0:0/96 form. */
static bool rule_has(const struct ir_rule *r, enum ir_net_family f, const uint8_t addr[16],
		     uint16_t port, enum ir_net_proto pr)
{
	if (r->net.proto != pr || port < r->net.port_lo || port > r->net.port_hi)
		return false;
	struct pfx rp = rule_pfx(r);
	if (r->net.family == IR_NET_IPV4)
		rp = (struct pfx){ mapped96.base | rp.base, rp.len + 96 };
	u128 a = addr_load(addr, family_width(f));
	if (f == IR_NET_IPV4)
		a |= mapped96.base;
	return pfx_contains(rp, (struct pfx){ a, 128 }, 128);
}

/* The lowest-index rule of kind k that contains the endpoint, or NULL. */
static const struct ir_rule *rules_find(const struct netset *s, enum ir_rule_kind k,
					const struct netset_cex *c)
{
	for (size_t i = 0; i < s->nrules; i++)
		if (s->rules[i].kind == k && rule_has(&s->rules[i], c->family, c->addr, c->port, c->proto))
			return &s->rules[i];
	return NULL;
}

/* Finds the lowest offending address of one slice; false when there is none. */
static bool subset_slice(const struct netset *child, const struct netset *parent,
			 enum ir_net_family f, enum bee_net_dir d, enum ir_net_proto pr,
			 struct netset_cex *cex)
{
	unsigned width = family_width(f);
	size_t c0, c1, p0, p1;
	slice_span(child, f, d, pr, &c0, &c1);
	slice_span(parent, f, d, pr, &p0, &p1);
	if (c0 == c1)
		return false;

	size_t n = 0, cap = 0;
	struct mnode *ns = NULL;
	for (size_t i = c0; i < c1; i++)
		*VEC_PUSH(ns, n, cap) = (struct mnode){ entry_pfx(&child->entries[i]), (long)i, -1, false };
	for (size_t i = p0; i < p1; i++)
		*VEC_PUSH(ns, n, cap) = (struct mnode){ entry_pfx(&parent->entries[i]), -1, (long)i, false };
	if (f == IR_NET_IPV6)
		*VEC_PUSH(ns, n, cap) = (struct mnode){ mapped96, -1, -1, true };
	qsort(ns, n, sizeof(ns[0]), mnode_cmp);
	size_t k = 0;   /* merge equal prefixes */
	for (size_t i = 0; i < n; i++) {
		if (k > 0 && pfx_cmp(ns[k - 1].p, ns[i].p) == 0) {
			ns[k - 1].ce = ns[i].ce >= 0 ? ns[i].ce : ns[k - 1].ce;
			ns[k - 1].pe = ns[i].pe >= 0 ? ns[i].pe : ns[k - 1].pe;
			ns[k - 1].pseudo |= ns[i].pseudo;
		} else {
			ns[k++] = ns[i];
		}
	}
	n = k;
	struct pfx *ps = xmalloc(n * sizeof(*ps));
	for (size_t i = 0; i < n; i++)
		ps[i] = ns[i].p;

	/* stack entries carry the nearest child and parent entry above them */
	struct frame {
		size_t node;
		long ce, pe;
	} *stack = xmalloc(n * sizeof(*stack));
	size_t depth = 0;
	bool found = false;
	u128 best = 0;
	for (size_t i = 0; i < n; i++) {
		while (depth > 0 && !pfx_contains(ns[stack[depth - 1].node].p, ns[i].p, width))
			depth--;
		struct frame fr = { i, -1, -1 };
		if (depth > 0) {
			fr.ce = stack[depth - 1].ce;
			fr.pe = stack[depth - 1].pe;
		}
		if (ns[i].ce >= 0)
			fr.ce = ns[i].ce;
		if (ns[i].pe >= 0)
			fr.pe = ns[i].pe;
		stack[depth++] = fr;
		if (ns[i].pseudo || fr.ce < 0)
			continue;

		u128 first;
		if (!region_first(ps, n, i, width, &first) || (found && first >= best))
			continue;
		const struct netset_entry *ce = &child->entries[fr.ce];
		const struct netset_entry *pe = fr.pe >= 0 ? &parent->entries[fr.pe] : NULL;
		long port = ranges_first_missing(ce->ranges, ce->nranges, pe ? pe->ranges : NULL,
						 pe ? pe->nranges : 0);
		if (port < 0)
			continue;
		found = true;
		best = first;
		cex->port = (uint16_t)port;
	}
	if (found) {
		cex->dir = d;
		cex->family = f;
		cex->proto = pr;
		addr_store(best, width, cex->addr);
	}
	free(stack);
	free(ps);
	free(ns);
	return found;
}

bool netset_subset(const struct netset *child, const struct netset *parent,
		   struct netset_cex *cex)
{
	struct netset_cex c;
	memset(&c, 0, sizeof(c));
	for (size_t fi = 0; fi < ARRAY_LEN(families); fi++)
		for (size_t di = 0; di < ARRAY_LEN(dirs); di++)
			for (size_t pi = 0; pi < ARRAY_LEN(protos); pi++) {
				if (!subset_slice(child, parent, families[fi], dirs[di], protos[pi], &c))
					continue;
				c.child_rule = rules_find(child, dir_grant_kind(c.dir), &c);
				c.parent_deny = rules_find(parent, IR_RULE_NET_DENY, &c);
				if (cex)
					*cex = c;
				return false;
			}
	return true;
}

void netset_cex_format(const struct netset_cex *cex, char *buf)
{
	char a[NETADDR_ADDRSTRLEN];
	netaddr_format_addr(cex->family, cex->addr, a);
	if (cex->family == IR_NET_IPV6)
		snprintf(buf, NETSET_CEX_STRLEN, "%s [%s]:%u/%s", netset_dir_name(cex->dir), a,
			 cex->port, proto_name(cex->proto));
	else
		snprintf(buf, NETSET_CEX_STRLEN, "%s %s:%u/%s", netset_dir_name(cex->dir), a,
			 cex->port, proto_name(cex->proto));
}
