/* SPDX-License-Identifier: GPL-2.0-only */
/* dfa_widen.c: does a child automaton grant anything its parent does not?
 *
 * Breadth-first search over the product of the two automata, over byte
 * classes that refine both alphabets. The first product state reached
 * where child_perms & ~parent_perms != 0 (marks aside: they grant nothing)
 * gives a shortest witness.
 *
 * Two phases: the first walks only strings shaped like the domain's strings
 * (a mode per search node tracks the shape), the second, run only when the
 * first finds nothing, walks every string. A widening on malformed strings
 * is still a widening: attenuation must fail closed.
 */
#include "beec_limits.h"
#include "dfa_impl.h"
#include "mem.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Where a search node is in the shape of a string. A path is well formed
 * when it is "/" or '/'-separated non-empty segments that are not "." or
 * ".." (what d_path gives); a name when it is non-empty without '='. */
enum dfa_shape {
	DFA_SHAPE_START,     /* nothing read yet */
	DFA_SHAPE_ROOT,      /* path: read "/" */
	DFA_SHAPE_SLASH,     /* path: just read a '/' after a segment */
	DFA_SHAPE_DOT1,      /* path: the segment so far is "." */
	DFA_SHAPE_DOT2,      /* path: the segment so far is ".." */
	DFA_SHAPE_SEG,       /* inside a proper segment (path) or a name */
	DFA_SHAPE_FREE,      /* second phase: anything goes */
	DFA_SHAPE_BAD,       /* not a move */
};

/* A class of bytes that neither automaton tells apart, and the bytes that
 * may stand for it: the most readable one, the most readable one that is
 * neither '/' nor '.', and '/' itself when the class holds it (the shape of
 * a path depends on those two bytes). */
struct dfa_pclass {
	uint16_t cc, cp;         /* child's and parent's class */
	int cand[3];             /* candidate bytes, best first; -1 when none */
};

struct dfa_move {
	uint8_t byte;
	uint8_t to;              /* enum dfa_shape */
};

struct dfa_node {
	uint16_t sc, sp;
	uint8_t shape, byte;
	uint32_t parent;         /* UINT32_MAX at the root */
};

struct dfa_search {
	const struct dfa *child, *parent;
	struct dfa_pclass *pcls;
	unsigned npcls;
	unsigned *order;         /* product classes, most readable first */
	struct dfa_node *nodes;
	size_t nnodes, nodecap;
	uint64_t *keys;          /* visited: key + 1, 0 = empty */
	size_t limit;            /* nodes a phase may visit */
	bool over;               /* a phase hit the limit */
	size_t nslots, nused;
};

static bool dfa_shape_done(enum dfa_kind kind, enum dfa_shape s)
{
	switch (s) {
	case DFA_SHAPE_START:
	case DFA_SHAPE_SLASH:
	case DFA_SHAPE_DOT1:
	case DFA_SHAPE_DOT2:
	case DFA_SHAPE_BAD:
		return false;
	case DFA_SHAPE_ROOT:
		return kind == DFA_KIND_PATH;
	case DFA_SHAPE_SEG:
	case DFA_SHAPE_FREE:
		return true;
	}
	return false;
}

/* The shape after reading byte b, or DFA_SHAPE_BAD. */
static enum dfa_shape dfa_shape_next(enum dfa_kind kind, enum dfa_shape s, uint8_t b)
{
	if (s == DFA_SHAPE_FREE)
		return DFA_SHAPE_FREE;
	if (kind == DFA_KIND_NAME)
		return b == '=' ? DFA_SHAPE_BAD : DFA_SHAPE_SEG;
	switch (s) {
	case DFA_SHAPE_START:
		return b == '/' ? DFA_SHAPE_ROOT : DFA_SHAPE_BAD;
	case DFA_SHAPE_ROOT:
	case DFA_SHAPE_SLASH:
		return b == '/' ? DFA_SHAPE_BAD : b == '.' ? DFA_SHAPE_DOT1 : DFA_SHAPE_SEG;
	case DFA_SHAPE_DOT1:
		return b == '/' ? DFA_SHAPE_BAD : b == '.' ? DFA_SHAPE_DOT2 : DFA_SHAPE_SEG;
	case DFA_SHAPE_DOT2:
		return b == '/' ? DFA_SHAPE_BAD : DFA_SHAPE_SEG;
	case DFA_SHAPE_SEG:
		return b == '/' ? DFA_SHAPE_SLASH : DFA_SHAPE_SEG;
	case DFA_SHAPE_FREE:
	case DFA_SHAPE_BAD:
		break;
	}
	return DFA_SHAPE_BAD;
}

static int dfa_pclass_rank_cmp(const void *a, const void *b, void *arg)
{
	const struct dfa_pclass *p = arg;
	const struct dfa_pclass *x = &p[*(const unsigned *)a], *y = &p[*(const unsigned *)b];
	unsigned rx = dfa_byte_rank((uint8_t)x->cand[0]), ry = dfa_byte_rank((uint8_t)y->cand[0]);
	return rx < ry ? -1 : rx > ry;
}

static bool dfa_byte_better(unsigned b, int than)
{
	return than < 0 || dfa_byte_rank((uint8_t)b) < dfa_byte_rank((uint8_t)than);
}

static void dfa_search_classes(struct dfa_search *s)
{
	uint16_t *map = xmalloc(65536 * sizeof(uint16_t));
	int best[256], plain[256];
	bool slash[256] = { false };
	memset(map, 0xff, 65536 * sizeof(uint16_t));
	s->pcls = xcalloc(256, sizeof(*s->pcls));
	s->npcls = 0;
	for (unsigned b = 1; b < 256; b++) {
		uint16_t cc = s->child->class_of[b], cp = s->parent->class_of[b];
		unsigned key = (unsigned)cc << 8 | cp;
		if (map[key] == 0xffff) {
			map[key] = (uint16_t)s->npcls;
			s->pcls[s->npcls].cc = cc;
			s->pcls[s->npcls].cp = cp;
			best[s->npcls] = plain[s->npcls] = -1;
			s->npcls++;
		}
		unsigned pc = map[key];
		if (dfa_byte_better(b, best[pc]))
			best[pc] = (int)b;
		if (b == '/')
			slash[pc] = true;
		else if (b != '.' && dfa_byte_better(b, plain[pc]))
			plain[pc] = (int)b;
	}
	free(map);
	for (unsigned pc = 0; pc < s->npcls; pc++) {
		/* candidates by rank, no repeats */
		int c[3] = { best[pc], plain[pc], slash[pc] ? '/' : -1 };
		int *out = s->pcls[pc].cand;
		unsigned n = 0;
		out[0] = out[1] = out[2] = -1;
		for (unsigned i = 0; i < 3; i++) {
			if (c[i] < 0)
				continue;
			bool dup = false;
			for (unsigned j = 0; j < n; j++)
				dup |= out[j] == c[i];
			if (!dup)
				out[n++] = c[i];
		}
		for (unsigned i = 1; i < n; i++)
			for (unsigned j = i; j > 0 && dfa_byte_better((unsigned)out[j], out[j - 1]); j--) {
				int t = out[j];
				out[j] = out[j - 1];
				out[j - 1] = t;
			}
	}
	s->order = xmalloc(s->npcls * sizeof(unsigned));
	for (unsigned i = 0; i < s->npcls; i++)
		s->order[i] = i;
	qsort_r(s->order, s->npcls, sizeof(unsigned), dfa_pclass_rank_cmp, s->pcls);
}

/* The moves a node of this shape may take through class p: one per shape
 * reachable, by its most readable byte, best first. */
static unsigned dfa_search_moves(enum dfa_kind kind, enum dfa_shape shape,
				 const struct dfa_pclass *p, struct dfa_move mv[3])
{
	unsigned n = 0;
	for (unsigned i = 0; i < 3 && p->cand[i] >= 0; i++) {
		enum dfa_shape to = dfa_shape_next(kind, shape, (uint8_t)p->cand[i]);
		if (to == DFA_SHAPE_BAD)
			continue;
		bool dup = false;
		for (unsigned j = 0; j < n; j++)
			dup |= mv[j].to == to;
		if (!dup)
			mv[n++] = (struct dfa_move){ (uint8_t)p->cand[i], (uint8_t)to };
	}
	return n;
}

static uint64_t dfa_search_key(unsigned sc, unsigned sp, unsigned shape)
{
	return ((uint64_t)shape << 32 | (uint64_t)sp << 16 | sc) + 1;
}

static size_t dfa_search_slot(const struct dfa_search *s, uint64_t key)
{
	uint64_t h = key * 0x9e3779b97f4a7c15ull;
	size_t i = (size_t)(h >> 20) & (s->nslots - 1);
	while (s->keys[i] && s->keys[i] != key)
		i = (i + 1) & (s->nslots - 1);
	return i;
}

/* Adds a node unless its (states, shape) was seen. */
static void dfa_search_visit(struct dfa_search *s, unsigned sc, unsigned sp, unsigned shape,
			     uint8_t byte, uint32_t parent)
{
	uint64_t key = dfa_search_key(sc, sp, shape);
	size_t i = dfa_search_slot(s, key);
	if (s->keys[i] || s->over)
		return;
	if (s->nnodes >= s->limit) {
		s->over = true;
		return;
	}
	s->keys[i] = key;
	struct dfa_node *n = VEC_PUSH(s->nodes, s->nnodes, s->nodecap);
	*n = (struct dfa_node){ (uint16_t)sc, (uint16_t)sp, (uint8_t)shape, byte, parent };
	if (++s->nused * 2 > s->nslots) {
		uint64_t *ok = s->keys;
		size_t on = s->nslots;
		s->nslots *= 2;
		s->keys = xcalloc(s->nslots, sizeof(uint64_t));
		for (size_t j = 0; j < on; j++) {
			if (!ok[j])
				continue;
			size_t k = dfa_search_slot(s, ok[j]);
			s->keys[k] = ok[j];
		}
		free(ok);
	}
}

/* Breadth-first from the start in one phase; the index of the first
 * witness node, or UINT32_MAX. */
static uint32_t dfa_search_run(struct dfa_search *s, enum dfa_shape start)
{
	enum dfa_kind kind = s->child->kind;
	const struct dfa *c = s->child, *p = s->parent;
	/* a mark (a deny matched) grants nothing: never a widening */
	uint32_t marks = c->marks | p->marks;

	s->nnodes = 0;
	memset(s->keys, 0, s->nslots * sizeof(uint64_t));
	s->nused = 0;
	dfa_search_visit(s, 0, 0, start, 0, UINT32_MAX);
	for (size_t h = 0; h < s->nnodes && !s->over; h++) {
		struct dfa_node n = s->nodes[h];
		if ((c->perms[n.sc] & ~p->perms[n.sp] & ~marks) && dfa_shape_done(kind, n.shape))
			return (uint32_t)h;
		if (n.sc == c->dead)
			continue;
		for (unsigned o = 0; o < s->npcls; o++) {
			const struct dfa_pclass *pc = &s->pcls[s->order[o]];
			struct dfa_move mv[3];
			unsigned nm = dfa_search_moves(kind, n.shape, pc, mv);
			unsigned tc = dfa_next(c, n.sc, pc->cc), tp = dfa_next(p, n.sp, pc->cp);
			for (unsigned m = 0; m < nm; m++)
				dfa_search_visit(s, tc, tp, mv[m].to, mv[m].byte, (uint32_t)h);
		}
	}
	return UINT32_MAX;
}

static void dfa_widening_fill(struct dfa_widening *w, const struct dfa_search *s, uint32_t at)
{
	const struct dfa *c = s->child, *p = s->parent;
	const struct dfa_node *n = &s->nodes[at];
	size_t len = 0;
	for (uint32_t i = at; s->nodes[i].parent != UINT32_MAX; i = s->nodes[i].parent)
		len++;
	w->found = true;
	w->example = xmalloc(len + 1);
	w->example[len] = '\0';
	w->len = len;
	size_t k = len;
	for (uint32_t i = at; s->nodes[i].parent != UINT32_MAX; i = s->nodes[i].parent)
		w->example[--k] = (char)s->nodes[i].byte;
	w->well_formed = n->shape != DFA_SHAPE_FREE;
	w->child_perms = c->perms[n->sc];
	w->parent_perms = p->perms[n->sp];
	w->extra = w->child_perms & ~w->parent_perms & ~(c->marks | p->marks);

	/* the rules that match the example, exactly: the child's that grant a
	 * bit of extra, and all the parent's */
	bool *cm = xcalloc(c->nrules ? c->nrules : 1, sizeof(bool));
	size_t cap = 0;
	dfa_rules_simulate(c->rules, c->nrules, w->example, w->len, cm);
	for (size_t i = 0; i < c->nrules; i++) {
		const struct dfa_rule *r = &c->rules[i];
		if (!cm[i] || !(r->grant & w->extra))
			continue;
		bool dup = false;
		for (size_t j = 0; j < w->nchild_rules; j++)
			dup |= w->child_rules[j] == r->rule;
		if (!dup)
			*VEC_PUSH(w->child_rules, w->nchild_rules, cap) = r->rule;
	}
	free(cm);
	for (size_t i = 1; i < w->nchild_rules; i++)
		for (size_t j = i; j > 0 && w->child_rules[j - 1] > w->child_rules[j]; j--) {
			unsigned t = w->child_rules[j];
			w->child_rules[j] = w->child_rules[j - 1];
			w->child_rules[j - 1] = t;
		}
	unsigned *pids;
	w->nparent_rules = dfa_string_rules(p, w->example, w->len, &pids);
	w->parent_rules = pids;
}

int dfa_widening_find(const struct dfa *child, const struct dfa *parent, struct dfa_widening *w)
{
	return dfa_widening_find_bounded(child, parent, 0, w);
}

int dfa_widening_find_bounded(const struct dfa *child, const struct dfa *parent, size_t max_states,
			      struct dfa_widening *w)
{
	struct dfa_search s = { .child = child, .parent = parent };
	s.limit = max_states ? max_states : beec_limit_default(BEEC_LIMIT_search_states);
	memset(w, 0, sizeof(*w));
	if (child->kind != parent->kind)
		return -EINVAL;

	dfa_search_classes(&s);
	s.nslots = 1024;
	s.keys = xcalloc(s.nslots, sizeof(uint64_t));
	uint32_t at = dfa_search_run(&s, DFA_SHAPE_START);
	if (at == UINT32_MAX && !s.over)
		at = dfa_search_run(&s, DFA_SHAPE_FREE);
	w->searched = s.over ? s.limit + 1 : s.nnodes;
	if (at != UINT32_MAX && !s.over)
		dfa_widening_fill(w, &s, at);
	int rc = s.over ? -E2BIG : 0;

	free(s.pcls);
	free(s.order);
	free(s.nodes);
	free(s.keys);
	return rc;
}

void dfa_widening_fini(struct dfa_widening *w)
{
	free(w->example);
	free(w->child_rules);
	free(w->parent_rules);
	memset(w, 0, sizeof(*w));
}
