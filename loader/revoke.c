/* SPDX-License-Identifier: GPL-2.0-only */
/* revoke.c: taking a grant away from a live session.
 *
 * A revoke only narrows. Refused outright: a deny rule (taking it away
 * would widen), an [env] rule (the environment was fixed at launch), a
 * rule revoked already, and under the landlock backend any fs or exec
 * rule (a Landlock domain cannot be narrowed once it is enforced; [net]
 * rules still can, they live in the cgroup programs' maps).
 *
 * How. The session's own copy of its pack is compiled again with its
 * defines (decide.c proves that this gives every image of the pack byte
 * for byte), then lowered again without the revoked rules (this one and
 * every earlier revoke of the session):
 *
 *   fs, exec   The map value is rewritten in place while hooks walk it,
 *              so every write must be safe to read half-done: a walk that
 *              reads part of one table and part of another could land on
 *              any state. Three ways, the first that applies:
 *              1. Lower permission words only. The new permissions of a
 *                 live state are the AND, over the product of the live
 *                 automaton and the narrowed one, of the narrowed
 *                 automaton's permissions at every state paired with it.
 *                 When each live state is paired with one value this is
 *                 exact, and one write does it: a half-written word is
 *                 between the old and the new permissions.
 *              2. Otherwise (the live table merged strings that now
 *                 differ, e.g. two files read alike, one revoked), the
 *                 narrowed automaton replaces the table if it fits the
 *                 live layout (no more states, no more byte classes), in
 *                 three writes: every permission word to 0 (a walk gets
 *                 0 whatever it reads); the new table with the live state
 *                 count, permission words still 0 (the permission words
 *                 sit where they sat, all 0, so any mixture answers 0);
 *                 the new permission words (the table is whole; a word is
 *                 0 or new). For the microseconds between the first and
 *                 the last write the session is refused everything the
 *                 automaton decides: fail closed.
 *              3. Otherwise the AND of 1., narrower than the policy
 *                 without the rule, never wider; the result says which
 *                 string lost more.
 *   net        Each LPM entry keeps its key (deleting one would let its
 *              addresses fall through to a shorter prefix) and gets the
 *              ports of the rules that contain it (the pack's
 *              net_provenance) minus the revoked ones; the same
 *              computation without exclusions must give the pack's value
 *              first. An entry's value is replaced whole (the trie swaps
 *              nodes under RCU).
 *   pins       A revoked pinned exec rule's entries leave bee_pins.
 *
 * Every new value is checked to be a subset of the live one before it is
 * written; then bee_state.gen is bumped (the programs' cached "may map
 * executable" answers expire), the rule joins the session's revoked list,
 * and a record "bee:revoke:RULE" is appended to the session's audit log.
 */
#include "internal.h"

#include "bee_dfa.h"
#include "bee_net.h"
#include "bee_session.h"
#include "dfa.h"
#include "image.h"
#include "libbeec.h"
#include "lower.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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

int bee_narrow_dfa(const struct bee_dfa_hdr *live, const struct dfa *want, void *out,
		   struct bee_narrow_report *rep)
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

int bee_narrow_replace(const struct bee_dfa_hdr *live, size_t value_size, const struct bee_dfa_hdr *want,
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

int bee_narrow_plan(const struct bee_dfa_hdr *live, size_t vs, const struct dfa *want,
		    struct bee_narrow_plan *plan)
{
	size_t want_len;
	struct bee_dfa_hdr *wimg = NULL;
	int err = -ENOMEM;
	memset(plan, 0, sizeof(*plan));
	for (int i = 0; i < 3; i++)
		if (!(plan->writes[i] = calloc(1, vs)))
			goto fail;
	memcpy(plan->writes[0], live, live->size);
	err = bee_narrow_dfa(live, want, plan->writes[0], &plan->rep);
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
	if (bee_narrow_replace(live, vs, wimg, plan->writes[0], plan->writes[1], plan->writes[2]) == 0) {
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
	bee_narrow_plan_fini(plan);
	return err;
}

void bee_narrow_plan_fini(struct bee_narrow_plan *plan)
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

int bee_narrow_net_value(const struct ir_policy *ir, const unsigned *prov, size_t nprov, unsigned dir,
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
static bool net_subset(const struct bee_net_value *n, const struct bee_net_value *o)
{
	for (unsigned i = 0; i < n->nranges && i < BEE_NET_MAX_RANGES; i++) {
		bool in = false;
		for (unsigned j = 0; j < o->nranges && j < BEE_NET_MAX_RANGES; j++)
			in |= o->ranges[j].lo <= n->ranges[i].lo && n->ranges[i].hi <= o->ranges[j].hi;
		if (!in)
			return false;
	}
	return true;
}

/* ---- the revoke ------------------------------------------------------------------------- */

struct revoke {
	const char *state_dir;
	struct bee_registry_entry reg;
	struct bee_pack *pack;
	struct bee_manifest m;
	struct beec_policy pol;
	bool rebuilt;
	const struct bee_mf_rule *rule;
	bool *exclude;
	struct bee_revoke_result *res;
	struct bee_error *e;
	bee_warn_fn warn;
	void *warn_ctx;
};

static int pinned_map(struct revoke *rv, const char *name)
{
	char path[PATH_MAX + 128];
	snprintf(path, sizeof(path), "%s/" BEE_PIN_MAPS "/%s", rv->reg.bpffs, name);
	int fd = bpf_obj_get(path);
	if (fd < 0)
		return bee_fail(rv->e, BEE_STAGE_SESSION, -errno, "session %s: pinned map '%s': %s", rv->reg.id, path,
				strerror(errno));
	return fd;
}

/* Finds RULE by index or by its text. */
static int find_rule(struct revoke *rv, const char *spec)
{
	char buf[4300];
	const struct bee_mf_rule *hit = NULL;
	unsigned hits = 0;
	if (*spec && strspn(spec, "0123456789") == strlen(spec)) {
		unsigned long i = strtoul(spec, NULL, 10);
		hit = i < rv->m.nrules ? &rv->m.rules[i] : NULL;
		hits = hit != NULL;
	} else {
		for (size_t i = 0; i < rv->m.nrules; i++) {
			const struct bee_mf_rule *r = &rv->m.rules[i];
			bee_rule_format(r, buf, sizeof(buf));
			if (strcmp(spec, buf) == 0 || strcmp(spec, r->text) == 0) {
				hit = hit ? hit : r;
				hits++;
			}
		}
	}
	if (hits == 0)
		return bee_fail(rv->e, BEE_STAGE_REVOKE, -ENOENT, "policy '%s' has no rule '%s' (give its index or its text as `beec show` lists it)",
				rv->m.name, spec);
	if (hits > 1)
		return bee_fail(rv->e, BEE_STAGE_REVOKE, -EINVAL,
				"'%s' names %u rules of policy '%s': give the rule's index (`beec show`)", spec, hits,
				rv->m.name);
	rv->rule = hit;
	return 0;
}

/* What cannot be revoked, and why. */
static int revocable(struct revoke *rv)
{
	const struct bee_mf_rule *r = rv->rule;
	char t[4300];
	bee_rule_format(r, t, sizeof(t));
	if (strcmp(r->kind, "deny") == 0)
		return bee_fail(rv->e, BEE_STAGE_REVOKE, -EPERM,
				"rule %u '%s' is a deny: revoking it would widen the session, and a revoke only narrows",
				r->index, t);
	if (strcmp(r->domain, "env") == 0)
		return bee_fail(rv->e, BEE_STAGE_REVOKE, -EPERM,
				"rule %u '%s': the environment was fixed when the tool started; env rules cannot be revoked live",
				r->index, t);
	for (size_t i = 0; i < rv->reg.nrevoked; i++)
		if (rv->reg.revoked[i] == r->index)
			return bee_fail(rv->e, BEE_STAGE_REVOKE, -EALREADY, "rule %u '%s' is revoked already", r->index, t);
	if ((strcmp(r->domain, "fs") == 0 || strcmp(r->domain, "exec") == 0) &&
	    strcmp(rv->reg.backend, "landlock") == 0)
		return bee_fail(rv->e, BEE_STAGE_REVOKE, -EOPNOTSUPP,
				"rule %u '%s': session %s enforces fs and exec with Landlock, which cannot narrow a running "
				"domain; only [net] rules can be revoked under --backend landlock",
				r->index, t, rv->reg.id);
	return 0;
}

static int revoke_dfa(struct revoke *rv, enum ir_domain d, const char *map)
{
	struct lower_opts lo = { .sz = sizeof(lo), .exclude = rv->exclude };
	struct lowered *lw = NULL;
	struct diag_ctx dc;
	struct bee_narrow_plan plan = { 0 };
	uint8_t *live = NULL;
	struct bpf_map_info info = { 0 };
	uint32_t info_len = sizeof(info), zero = 0;
	int fd = -1, err;
	diag_init(&dc);
	if ((err = lower_policy(rv->pol.ir, &lo, &dc, &lw)) < 0) {
		err = err == -ENOMEM ? bee_fail(rv->e, BEE_STAGE_REVOKE, -ENOMEM, "out of memory lowering the policy "
						"without rule %u", rv->rule->index)
				     : bee_fail(rv->e, BEE_STAGE_REVOKE, -EINVAL, "the policy without rule %u does not "
						"lower", rv->rule->index);
		goto out;
	}
	if ((fd = err = pinned_map(rv, map)) < 0)
		goto out;
	if (bpf_obj_get_info_by_fd(fd, &info, &info_len) < 0 || info.key_size != 4 ||
	    info.value_size < sizeof(struct bee_dfa_hdr)) {
		err = bee_fail(rv->e, BEE_STAGE_REVOKE, -EINVAL, "map '%s' is not an automaton map", map);
		goto out;
	}
	if (!(live = malloc(info.value_size))) {
		err = bee_fail(rv->e, BEE_STAGE_REVOKE, -ENOMEM, "out of memory");
		goto out;
	}
	if (bpf_map_lookup_elem(fd, &zero, live) < 0) {
		err = bee_fail(rv->e, BEE_STAGE_REVOKE, -errno, "map '%s': %s", map, strerror(errno));
		goto out;
	}
	/* an earlier replacement may leave zero bytes after the image */
	const struct bee_dfa_hdr *lh = (const struct bee_dfa_hdr *)live;
	if (lh->size > info.value_size || bee_dfa_image_check(live, lh->size)) {
		err = bee_fail(rv->e, BEE_STAGE_REVOKE, -EINVAL, "map '%s' holds no well-formed automaton", map);
		goto out;
	}
	err = bee_narrow_plan(lh, info.value_size, lw->dfa[d], &plan);
	if (err) {
		bee_fail(rv->e, BEE_STAGE_REVOKE, err, "map '%s': %s", map,
			 err == -EINVAL ? "the policy without the rule would widen it: refused" : strerror(-err));
		goto out;
	}
	for (int i = 0; i < plan.nwrites && !err; i++)
		if (bpf_map_update_elem(fd, &zero, plan.writes[i], BPF_EXIST) < 0)
			err = bee_fail(rv->e, BEE_STAGE_REVOKE, -errno, "map '%s': %s%s", map, strerror(errno),
				       i ? " (it now refuses everything it decides: fail closed)" : "");
	if (err)
		goto out;
	rv->res->exact = plan.exact;
	if (plan.replaced)
		snprintf(rv->res->note, sizeof(rv->res->note),
			 "map '%s': the narrowed automaton replaced the live one (what it decides was refused "
			 "while the three writes ran)", map);
	else if (!plan.exact)
		snprintf(rv->res->note, sizeof(rv->res->note),
			 "map '%s': the narrowed automaton does not fit the live map, and the live one cannot tell "
			 "the rule's strings from others: %u of its states narrowed beyond the rule (e.g. '%s' lost "
			 "%s%s%s too)", map, plan.rep.states_over, plan.rep.example,
			 plan.rep.example_lost & 1 ? "read " : "", plan.rep.example_lost & 2 ? "write " : "",
			 plan.rep.example_lost & 12 ? "execute" : "");
out:
	if (fd >= 0)
		close(fd);
	free(live);
	bee_narrow_plan_fini(&plan);
	lowered_free(lw);
	diag_fini(&dc);
	return err;
}

static int revoke_pins(struct revoke *rv)
{
	int fd = pinned_map(rv, bee_map_name(BEE_MAP_PINS));
	struct bee_pin_key k, next;
	struct bee_pin_value v;
	if (fd < 0)
		return fd;
	void *prev = NULL;
	/* collect first: deleting while iterating may skip keys */
	struct bee_pin_key dels[64];
	size_t ndel = 0;
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		k = next;
		prev = &k;
		if (bpf_map_lookup_elem(fd, &k, &v) == 0 && v.rule == rv->rule->index && ndel < 64)
			dels[ndel++] = k;
	}
	for (size_t i = 0; i < ndel; i++)
		bpf_map_delete_elem(fd, &dels[i]);
	close(fd);
	return 0;
}

static int net_prov(struct revoke *rv, uint32_t prov, unsigned **out, size_t *n)
{
	const json_t *rec = json_array_get(rv->m.net_prov, prov);
	*n = json_array_size(rec);
	*out = calloc(*n + 1, sizeof(**out));
	if (!rec || !*out)
		return -EINVAL;
	for (size_t i = 0; i < *n; i++)
		(*out)[i] = (unsigned)json_integer_value(json_array_get(rec, i));
	return 0;
}

static int revoke_net_map(struct revoke *rv, const char *map)
{
	const struct bee_pack_section_info *s = bee_pack_image(rv->pack, map);
	const struct bee_mf_map *mm = bee_manifest_map(&rv->m, map);
	int fd, err = 0;
	if (!s || !mm || s->elem_count == 0)
		return 0;
	if ((fd = pinned_map(rv, map)) < 0)
		return fd;
	for (uint64_t i = 0; i < s->elem_count && !err; i++) {
		const uint8_t *rec = (const uint8_t *)s->data + i * s->elem_width;
		const uint8_t *key = rec;
		struct bee_net_value packv, live, nv;
		memcpy(&packv, rec + mm->key_size, sizeof(packv));
		unsigned dir = key[4], proto = key[5];
		unsigned *prov = NULL;
		size_t nprov = 0;
		if (net_prov(rv, packv.prov, &prov, &nprov) < 0) {
			err = bee_fail(rv->e, BEE_STAGE_PACK, -EINVAL, "map '%s': entry %llu has no provenance record",
				       map, (unsigned long long)i);
		} else if (bpf_map_lookup_elem(fd, key, &live) < 0) {
			err = bee_fail(rv->e, BEE_STAGE_REVOKE, -errno, "map '%s': entry %llu is gone from the live map",
				       map, (unsigned long long)i);
		} else {
			/* the method must give the pack's own value first */
			nv = packv;
			bee_narrow_net_value(rv->pol.ir, prov, nprov, dir, proto, NULL, &nv);
			if (memcmp(&nv, &packv, sizeof(nv)) != 0) {
				err = bee_fail(rv->e, BEE_STAGE_PACK, -EINVAL,
					       "map '%s': entry %llu is not what its rules give; cannot recompute it",
					       map, (unsigned long long)i);
			} else {
				nv = live;
				if (bee_narrow_net_value(rv->pol.ir, prov, nprov, dir, proto, rv->exclude, &nv) == 1)
					rv->res->exact = false;
				if (!net_subset(&nv, &live))
					err = bee_fail(rv->e, BEE_STAGE_REVOKE, -EINVAL,
						       "map '%s': entry %llu would widen: refused", map,
						       (unsigned long long)i);
				else if (memcmp(&nv, &live, sizeof(nv)) != 0 &&
					 bpf_map_update_elem(fd, key, &nv, BPF_EXIST) < 0)
					err = bee_fail(rv->e, BEE_STAGE_REVOKE, -errno, "map '%s': entry %llu: %s", map,
						       (unsigned long long)i, strerror(errno));
			}
		}
		free(prov);
	}
	close(fd);
	return err;
}

static int bump_gen(struct revoke *rv)
{
	int fd = pinned_map(rv, bee_map_name(BEE_MAP_STATE));
	uint32_t zero = 0;
	struct bee_state st;
	if (fd < 0)
		return fd;
	int err = 0;
	if (bpf_map_lookup_elem(fd, &zero, &st) < 0)
		err = -errno;
	st.gen++;
	if (!err && bpf_map_update_elem(fd, &zero, &st, BPF_EXIST) < 0)
		err = -errno;
	close(fd);
	if (err)
		return bee_fail(rv->e, BEE_STAGE_REVOKE, err, "map 'bee_state': %s", strerror(-err));
	return 0;
}

static void audit_record(struct revoke *rv)
{
	const struct bee_mf_rule *r = rv->rule;
	if (!*rv->reg.audit_log)
		return;
	struct bee_audit_log log = { .fd = -1, .detail = rv->reg.audit_detail, .policy = rv->m.name };
	int fd = open(rv->reg.audit_log, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		bee_warnf(rv->warn, rv->warn_ctx, "audit log '%s': %s: the revoke is not recorded there",
			  rv->reg.audit_log, strerror(errno));
		return;
	}
	log.fd = fd;
	char res[4400];
	snprintf(res, sizeof(res), "bee:revoke:%s", rv->res->text);
	struct bee_audit_line l = {
		.realtime_ns = bee_clock_ns(CLOCK_REALTIME), .decision = "Deny", .resource = res,
		.resource_len = strlen(res), .pid = getpid(), .comm = "bee-load", .source = "revoke",
		.reason = "revoked", .rule = r->index,
	};
	if (strcmp(r->domain, "fs") == 0) {
		l.kind = "FileSystem";
		l.action = strcmp(r->kind, "write") == 0 ? "Write" : "Read";
	} else if (strcmp(r->domain, "exec") == 0) {
		l.kind = "Process";
		l.action = "Execute";
	} else {
		l.kind = "Network";
		l.action = strcmp(r->kind, "bind") == 0 ? "Listen" : "Connect";
	}
	int err = bee_audit_write(&log, &l);
	if (err)
		bee_warnf(rv->warn, rv->warn_ctx, "audit log '%s': %s", rv->reg.audit_log, strerror(-err));
	fsync(fd);
	close(fd);
}

static int revoke_steps(struct revoke *rv, const char *id, const char *spec)
{
	int err = bee_registry_read(rv->state_dir, id, &rv->reg);
	if (err)
		return bee_fail(rv->e, BEE_STAGE_SESSION, err, "no session '%s' under '%s/sessions'", id,
				rv->state_dir);
	if (!bee_pid_alive(rv->reg.pid, rv->reg.starttime))
		return bee_fail(rv->e, BEE_STAGE_SESSION, -ESRCH,
				"session %s is not live (its bee-load, pid %d, is gone; gc removes it)", id,
				(int)rv->reg.pid);
	if ((err = bee_pack_load(rv->reg.pack, &rv->pack, &rv->m, rv->e)) < 0)
		return err;
	char hex[BEE_PACK_DIGEST_HEX_LEN + 1];
	bee_pack__digest_hex(rv->pack, hex);
	if (strcmp(hex, rv->reg.digest) != 0)
		return bee_fail(rv->e, BEE_STAGE_PACK, -EINVAL, "session %s: its pack copy '%s' is not the pack it loaded",
				id, rv->reg.pack);
	if ((err = find_rule(rv, spec)) < 0 || (err = revocable(rv)) < 0)
		return err;
	rv->res->rule = rv->rule->index;
	bee_rule_format(rv->rule, rv->res->text, sizeof(rv->res->text));
	rv->res->exact = true;
	if ((err = bee_policy_rebuild(rv->pack, &rv->m, &rv->pol, rv->e)) < 0)
		return err;
	rv->rebuilt = true;
	rv->exclude = calloc(rv->pol.ir->nrules + 1, sizeof(bool));
	if (!rv->exclude)
		return bee_fail(rv->e, BEE_STAGE_REVOKE, -ENOMEM, "out of memory");
	for (size_t i = 0; i < rv->reg.nrevoked; i++)
		if (rv->reg.revoked[i] < rv->pol.ir->nrules)
			rv->exclude[rv->reg.revoked[i]] = true;
	rv->exclude[rv->rule->index] = true;
	const char *dom = rv->rule->domain;
	if (strcmp(dom, "fs") == 0)
		err = revoke_dfa(rv, IR_DOMAIN_FS, bee_map_name(BEE_MAP_FS));
	else if (strcmp(dom, "exec") == 0) {
		if ((err = revoke_dfa(rv, IR_DOMAIN_EXEC, bee_map_name(BEE_MAP_EXEC))) == 0 && rv->rule->pinned)
			err = revoke_pins(rv);
	} else if (strcmp(dom, "net") == 0) {
		if ((err = revoke_net_map(rv, bee_map_name(BEE_MAP_NET4))) == 0)
			err = revoke_net_map(rv, bee_map_name(BEE_MAP_NET6));
	} else {
		err = bee_fail(rv->e, BEE_STAGE_REVOKE, -EINVAL, "rule %u: unknown domain '%s'", rv->rule->index, dom);
	}
	if (err)
		return err;
	if ((err = bump_gen(rv)) < 0)
		return err;
	unsigned *nr = realloc(rv->reg.revoked, (rv->reg.nrevoked + 1) * sizeof(*nr));
	if (!nr)
		return bee_fail(rv->e, BEE_STAGE_REGISTRY, -ENOMEM, "out of memory");
	rv->reg.revoked = nr;
	nr[rv->reg.nrevoked++] = rv->rule->index;
	if ((err = bee_registry_write(rv->state_dir, &rv->reg)) < 0)
		bee_warnf(rv->warn, rv->warn_ctx, "registry: the revoke is in force but not recorded: %s",
			  strerror(-err));
	audit_record(rv);
	return 0;
}

int bee_sessions__revoke(const char *id, const char *spec, const struct bee_revoke_opts *o,
			 struct bee_revoke_result *res, struct bee_error *e)
{
	struct revoke rv = { .e = e, .res = res };
	struct bee_revoke_opts oc;
	memset(res, 0, sizeof(*res));
	if (bee_opts_copy(&oc, sizeof(oc), o) < 0)
		return bee_fail(e, BEE_STAGE_USAGE, -EINVAL, "bee_revoke_opts: unknown fields set");
	rv.state_dir = bee_state_dir(oc.state_dir);
	rv.warn = oc.warn;
	rv.warn_ctx = oc.warn_ctx;
	/* one revoke at a time: each reads the revoked list the last one wrote */
	int lk = bee_registry_lock(rv.state_dir);
	if (lk < 0)
		return bee_fail(e, BEE_STAGE_REGISTRY, lk, "cannot lock '%s/lock': %s", rv.state_dir, strerror(-lk));
	int err = revoke_steps(&rv, id, spec);
	bee_registry_unlock(lk);
	if (rv.rebuilt)
		beec_policy__fini(&rv.pol);
	free(rv.exclude);
	bee_registry_entry_fini(&rv.reg);
	bee_manifest_fini(&rv.m);
	bee_pack__close(rv.pack);
	return err;
}
