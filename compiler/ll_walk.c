/* SPDX-License-Identifier: GPL-2.0-only */
/* ll_walk.c: the landlock backend's walk of the real tree (ll_walk.h).
 *
 * A mixed directory is listed, or, where few names can get anything, has
 * those names looked up instead (see "a directory decided by looking
 * names up" below): on ext2/3/4, tmpfs, btrfs and overlayfs, in a
 * directory that neither folds case nor is encrypted, when the lookups
 * cost less than the listing; anywhere else, or when a lookup fails other
 * than with ENOENT, it is listed. Both give the same plan. */
#include "ll_walk.h"
#include "glob_prefix.h"
#include "mem.h"

#include "bee_dfa.h"
#include "bee_names.h"
#include "manifest.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#define LL_FILE_RIGHTS (BEEC_LL_READ | BEEC_LL_WRITE | BEEC_LL_EXEC)
#define LL_ALL (LL_FILE_RIGHTS | BEEC_LL_LIST)

static const char *const narrow_names[] = {
#define BEEC_LL_X(id, name, text) name,
	BEEC_LL_NARROWINGS(BEEC_LL_X)
#undef BEEC_LL_X
};

static const char *const narrow_texts[] = {
#define BEEC_LL_X(id, name, text) text,
	BEEC_LL_NARROWINGS(BEEC_LL_X)
#undef BEEC_LL_X
};

const char *beec_ll__narrow_name(enum beec_ll_narrow_kind k)
{
	return k < BEEC_LL_N_COUNT ? narrow_names[k] : "?";
}

const char *beec_ll__narrow_text(enum beec_ll_narrow_kind k)
{
	return k < BEEC_LL_N_COUNT ? narrow_texts[k] : "?";
}

/* ---- the automata ---------------------------------------------------------------------
 *
 * For each state the rights that every state reachable from it grants
 * (all) and that some state reachable from it grants (any): a right in
 * all is uniform granted below, one outside any uniform refused, the rest
 * mixed. Reachable over every byte but NUL (no name holds one), so the
 * answer covers every name a file could be given, and more ("//"): the
 * more only makes a right mixed, never uniform, which is the safe side. */
struct ll_auto {
	const struct bee_dfa_hdr *h;
	const uint16_t *next;
	uint32_t *own, *all, *any;   /* BEEC_LL_* of each state */
};

static uint32_t ll_rights_of(uint32_t perms, bool exec)
{
	if (exec)
		return (perms & (BEE_PERM_EXEC | BEE_PERM_EXEC_PINNED)) ? BEEC_LL_EXEC : 0;
	return perms & (BEEC_LL_READ | BEEC_LL_WRITE);
}

static void ll_auto_init(struct ll_auto *a, const struct bee_dfa_hdr *h, bool exec)
{
	unsigned n = h->nstates, nc = h->nclasses;
	a->h = h;
	a->next = bee_dfa_next(h);
	a->own = xcalloc(n, sizeof(*a->own));
	a->all = xcalloc(n, sizeof(*a->all));
	a->any = xcalloc(n, sizeof(*a->any));
	bool nul_alone = true;   /* NUL's class holds no other byte */
	for (unsigned b = 1; b < 256; b++)
		nul_alone &= h->class_of[b] != h->class_of[0];
	for (unsigned s = 0; s < n; s++)
		a->own[s] = a->all[s] = a->any[s] = ll_rights_of(bee_dfa_perms(h)[s], exec);
	/* a fixpoint: all only loses bits, any only gains them. States are
	 * numbered from the start outwards, so most edges go to a higher
	 * number: taken from the last state down, one pass carries most
	 * answers back and the next one finds nothing changed */
	for (bool changed = true; changed;) {
		changed = false;
		for (unsigned s = n; s-- > 0;) {
			uint32_t all = a->all[s], any = a->any[s];
			for (unsigned c = 0; c < nc; c++) {
				if (nul_alone && c == h->class_of[0])
					continue;
				unsigned t = a->next[(size_t)s * nc + c];
				all &= a->all[t];
				any |= a->any[t];
			}
			if (all != a->all[s] || any != a->any[s]) {
				a->all[s] = all;
				a->any[s] = any;
				changed = true;
			}
		}
	}
}

static void ll_auto_fini(struct ll_auto *a)
{
	free(a->own);
	free(a->all);
	free(a->any);
}

static unsigned ll_step(const struct ll_auto *a, unsigned s, const char *p, size_t len)
{
	for (size_t i = 0; i < len && s != a->h->dead; i++)
		s = a->next[(size_t)s * a->h->nclasses + a->h->class_of[(unsigned char)p[i]]];
	return s;
}

/* ---- the walk -------------------------------------------------------------------------- */

/* The decision for a mixed directory whose "D/" states are f1, x1 with
 * pending: list it, or look up its n names (names, each NUL-ended, in
 * strcmp order). */
struct ll_lookup {
	unsigned f1, x1;
	uint32_t pending;
	bool list;
	char *names;
	size_t n;
};

struct ll_search;

#define LL_NO_CLASS 0xffffu

struct ll_walk {
	struct ll_auto fs, ex;
	/* the bytes a name holds (not NUL, not '/') in the classes both
	 * automata agree on: jc_of[b] (LL_NO_CLASS for the others), and for
	 * each its class in fs, in exec and its number of bytes */
	uint16_t jc_of[256], jc_f[256], jc_x[256], jc_n[256];
	uint64_t jc_bytes[256][4];     /* each class's bytes, a bit each */
	unsigned njc;
	bool list_all;                 /* opts->list_all: no lookups */
	struct ll_lookup *lookups;     /* the decisions made, kept for the walk */
	size_t nlookups, lookups_cap;
	struct ll_search *search;      /* the search's space, reused */
	const struct beec_ll_seed *seeds;
	char **seed_paths;             /* sorted; seed_of[i] its seed */
	size_t *seed_of, nseed_paths;
	const struct beec_ll_opts *o;
	uint64_t max_entries, deadline;
	beec_ll_rule_fn fn;
	void *ctx;
	struct beec_ll_plan *plan;
	size_t narrow_cap;
	char path[PATH_MAX];
	size_t len;
	bool in_spine;                 /* the directory listed holds a writable place (opts.ro) */
	unsigned *listing_of;          /* by fd: its listing (beec_ll_rule.listing) */
	size_t nlisting_of;
	unsigned listings;
};

static uint64_t ll_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void ll_narrow(struct ll_walk *w, size_t seed, enum beec_ll_narrow_kind k, uint32_t rights)
{
	const struct beec_ll_seed *sd = &w->seeds[seed];
	struct beec_ll_plan *p = w->plan;
	for (size_t i = 0; i < p->nnarrow; i++) {
		struct beec_ll_narrowing *n = &p->narrow[i];
		if (n->rule == sd->rule && n->kind == k) {
			n->count++;
			n->rights |= rights;
			return;
		}
	}
	struct beec_ll_narrowing *n = VEC_PUSH(p->narrow, p->nnarrow, w->narrow_cap);
	*n = (struct beec_ll_narrowing){ .rule = sd->rule, .line = sd->line, .what = xstrdup(sd->what),
					 .glob = xstrdup(sd->glob),
					 .kind = k, .rights = rights, .count = 1, .path = xstrdup(w->path) };
}

/* Whether a is b or below it. */
static bool path_within(const char *a, const char *b)
{
	size_t n = strlen(b);
	if (!strcmp(b, "/"))
		return true;
	return !strncmp(a, b, n) && (a[n] == '\0' || a[n] == '/');
}

/* fd is open on a directory of its own from now on: its rules' listing. */
static void ll_listing_new(struct ll_walk *w, int fd)
{
	if ((size_t)fd >= w->nlisting_of) {
		size_t n = (size_t)fd + 64;
		w->listing_of = xrealloc(w->listing_of, n * sizeof(*w->listing_of));
		memset(w->listing_of + w->nlisting_of, 0, (n - w->nlisting_of) * sizeof(*w->listing_of));
		w->nlisting_of = n;
	}
	w->listing_of[fd] = ++w->listings;
}

/* Where w->path lies against the session's writable places (opts.ro). */
enum ll_ro { LL_RO_OUT, LL_RO_ABOVE, LL_RO_IN };

static enum ll_ro ll_ro_of(const struct ll_walk *w)
{
	enum ll_ro r = LL_RO_OUT;
	for (size_t i = 0; i < w->o->nrw; i++) {
		if (path_within(w->path, w->o->rw[i]))
			return LL_RO_IN;
		if (path_within(w->o->rw[i], w->path))
			r = LL_RO_ABOVE;
	}
	return r;
}

static int ll_emit(struct ll_walk *w, size_t seed, uint32_t rights, bool dir, bool late, int dirfd,
		   const char *name)
{
	if (w->o && w->o->ro && !late && ll_ro_of(w) == LL_RO_OUT)
		rights |= BEEC_LL_TRUNC;
	struct beec_ll_rule r = { .path = w->path, .rights = rights, .dir = dir, .late = late,
				  .rule = w->seeds[seed].rule,
				  .listing = dirfd >= 0 && (size_t)dirfd < w->nlisting_of ? w->listing_of[dirfd] : 0 };
	if (late)
		w->plan->late_rules++;
	else if (dir)
		w->plan->dir_rules++;
	else
		w->plan->file_rules++;
	return w->fn ? w->fn(w->ctx, &r, late ? -1 : dirfd, name) : 0;
}

static int ll_budget(struct ll_walk *w, size_t seed)
{
	struct beec_ll_plan *p = w->plan;
	bool entries = p->entries > w->max_entries;
	if (!entries && ((p->entries & 1023) || ll_now() <= w->deadline))
		return 0;
	const struct beec_ll_seed *sd = &w->seeds[seed];
	snprintf(p->err, sizeof(p->err),
		 "rule %u '%s %.200s' (line %u): the walk passed %s at '%.300s': make the subtree uniform "
		 "(a deny inside the grant, such as '**/*.pem', or a glob that is not a whole directory "
		 "makes every directory below it be walked entry by entry), or raise the bound "
		 "(--walk-entries, --walk-ms)",
		 sd->rule, sd->what, sd->glob, sd->line,
		 entries ? "its bound of entries" : "its bound of time", w->path);
	return -E2BIG;
}

struct ll_ent {
	const char *name;     /* in the directory's buffer (ll_read_dir) */
	unsigned char type;   /* d_type */
};

static int ent_cmp(const void *a, const void *b)
{
	return strcmp(((const struct ll_ent *)a)->name, ((const struct ll_ent *)b)->name);
}

/* The records of getdents64 (the kernel's struct linux_dirent64). */
struct ll_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

/* The entries of the directory open as dfd but . and .., sorted by name,
 * in *ents (n of them; -1: unreadable). getdents64 straight into one
 * buffer, *buf, which holds the names and which the caller frees with
 * *ents: no DIR (whose fdopendir costs a dup, an fstat and an fcntl per
 * directory) and no allocation per entry, which a walk of every
 * directory of /usr pays 17,000 and 170,000 times. */
static ssize_t ll_read_dir(int dfd, char **buf, struct ll_ent **ents)
{
	size_t cap = 32768, len = 0;
	char *b = xmalloc(cap);
	for (;;) {
		if (cap - len < 8192) {
			cap *= 2;
			b = xrealloc(b, cap);
		}
		long got = getdents64(dfd, b + len, cap - len);
		if (got < 0) {
			free(b);
			*buf = NULL;
			*ents = NULL;
			return -1;
		}
		if (got == 0)
			break;
		len += (size_t)got;
	}
	size_t n = 0;
	for (size_t off = 0; off < len; off += ((struct ll_dirent64 *)(b + off))->d_reclen)
		n++;
	struct ll_ent *v = xmalloc((n ? n : 1) * sizeof(*v));
	n = 0;
	for (size_t off = 0; off < len;) {
		struct ll_dirent64 *de = (struct ll_dirent64 *)(b + off);
		off += de->d_reclen;
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		v[n++] = (struct ll_ent){ de->d_name, de->d_type };
	}
	/* sorted: the plan and its first examples do not depend on readdir */
	if (n > 1)
		qsort(v, n, sizeof(*v), ent_cmp);
	*buf = b;
	*ents = v;
	return (ssize_t)n;
}

/* The deepest seed at or above the path walked now (its attribution). */
static size_t ll_seed_here(const struct ll_walk *w, size_t cur)
{
	size_t lo = 0, hi = w->nseed_paths;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(w->seed_paths[mid], w->path);
		if (c == 0)
			return w->seed_of[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return cur;
}

/* ---- a directory decided by looking names up --------------------------------------------
 *
 * A mixed directory whose entries mostly get nothing ("/usr/bin/{sh,cat}"
 * below a read of "/usr/ **": 18 names in 1,500) need not be listed. From
 * the directory's "D/" states, an entry whose name ends in the pair of
 * states (f2, x2) is quiet when ll_entry gives it nothing whatever it is:
 * no rule and no narrowing as a file, as a directory that cannot be
 * opened, and as one that can (whose ll_dir then adds nothing and reads
 * nothing). When the names that do not end quiet are finitely many and
 * few, each is looked up (fstatat) in sorted order instead of listing the
 * directory, and what exists is decided by ll_entry as the listing would
 * decide it: the same rules and narrowings in the same order, since the
 * listing's other entries would get nothing.
 *
 * The names come from a search over the pairs reachable from "D/" over
 * the bytes a name holds (not NUL, not '/'), grouped into the classes
 * both automata agree on: a pair is live when a pair that is not quiet is
 * reachable from it; a live pair on a cycle means endless names, and the
 * directory is listed, as it is when the search meets too many pairs or
 * finds too many names. Strongly connected components (Tarjan) give each
 * pair's liveness and its count of names in one pass. The decision
 * depends on (f1, x1, pending) alone and is kept for the walk. */
#define LL_LOOKUP_NAMES 128   /* more names than this: listing is cheaper anyway */
#define LL_LOOKUP_PAIRS 512   /* a search that meets more pairs gives up (lists) */

/* The rights an entry whose name ends in states (f2, x2) may be given: its
 * own, and any below it ("NAME/..."), never those of longer names that
 * start with its name (another entry's: "bash" is not below "b"). */
static uint32_t ll_entry_any(const struct ll_walk *w, unsigned f2, unsigned x2)
{
	unsigned f1 = ll_step(&w->fs, f2, "/", 1), x1 = ll_step(&w->ex, x2, "/", 1);
	return w->fs.own[f2] | w->ex.own[x2] | w->fs.any[f1] | w->ex.any[x1];
}

/* Whether an entry in states (f2, x2), reached with pending, gets nothing
 * from ll_entry, whatever its type (each branch of it and of ll_dir). */
static bool ll_quiet(const struct ll_walk *w, unsigned f2, unsigned x2, uint32_t pending)
{
	/* its own rights and those below it (ll_entry_any, here with the
	 * states of "NAME/" at hand) cover a file's own rule, a directory
	 * that cannot be opened, and the rights granted or mixed below one */
	unsigned f1 = ll_step(&w->fs, f2, "/", 1), x1 = ll_step(&w->ex, x2, "/", 1);
	uint32_t own = w->fs.own[f2] | w->ex.own[x2], any = w->fs.any[f1] | w->ex.any[x1];
	if ((own | any) & pending & LL_FILE_RIGHTS)
		return false;
	/* a file (or an entry fstatat cannot type) that may run unread */
	if ((w->ex.own[x2] & BEEC_LL_EXEC) && !(w->fs.own[f2] & BEEC_LL_READ))
		return false;
	/* a directory: what ll_dir would narrow, or list (all[] is within own[]) */
	if ((any & BEEC_LL_EXEC) && !(any & BEEC_LL_READ))
		return false;
	if ((pending & BEEC_LL_LIST) && ((any | own) & BEEC_LL_READ))
		return false;   /* a listing granted, narrowed or left to the directories below */
	return true;
}

/* The search's graph: pairs of states, each with its successor over each
 * joint byte class, created as met. */
struct ll_search {
	const struct ll_walk *w;
	uint32_t pending;
	size_t n;
	uint16_t f[LL_LOOKUP_PAIRS], x[LL_LOOKUP_PAIRS];
	uint32_t slot[2 * LL_LOOKUP_PAIRS];   /* hash of (f, x): node + 1, 0 empty */
	uint16_t *succ;                       /* LL_LOOKUP_PAIRS * njc */
	int index[LL_LOOKUP_PAIRS], low[LL_LOOKUP_PAIRS], next_index;
	int stack[LL_LOOKUP_PAIRS], sp;
	bool on_stack[LL_LOOKUP_PAIRS], quiet[LL_LOOKUP_PAIRS], live[LL_LOOKUP_PAIRS];
	uint32_t count[LL_LOOKUP_PAIRS];      /* names from here ending not quiet, capped */
	char *names;
	size_t len, cap, nnames;
	char name[NAME_MAX + 1];
};

/* The node of pair (f, x), added when new; -1 when the graph is full. */
static int ll_search_node(struct ll_search *s, unsigned f, unsigned x)
{
	uint32_t key = (uint32_t)f << 16 | x, h = (key * 2654435761u) >> 22;   /* 10 bits */
	for (;; h = (h + 1) & (2 * LL_LOOKUP_PAIRS - 1)) {
		uint32_t v = s->slot[h];
		if (!v)
			break;
		if (((uint32_t)s->f[v - 1] << 16 | s->x[v - 1]) == key)
			return (int)v - 1;
	}
	if (s->n == LL_LOOKUP_PAIRS)
		return -1;
	s->f[s->n] = (uint16_t)f;
	s->x[s->n] = (uint16_t)x;
	s->index[s->n] = -1;
	s->quiet[s->n] = ll_quiet(s->w, f, x, s->pending);
	s->slot[h] = (uint32_t)++s->n;
	return (int)s->n - 1;
}

static uint32_t ll_count_add(uint32_t a, uint64_t b)
{
	return a + b > LL_LOOKUP_NAMES ? LL_LOOKUP_NAMES + 1 : (uint32_t)(a + b);
}

/* Tarjan's step at node u: -1 to give up (too many pairs, or endless
 * names: a live component with a cycle). A component is closed when all
 * it reaches outside it is closed, so its liveness and counts are final. */
static int ll_search_scc(struct ll_search *s, int u)
{
	const struct ll_walk *w = s->w;
	s->index[u] = s->low[u] = s->next_index++;
	s->stack[s->sp++] = u;
	s->on_stack[u] = true;
	for (unsigned c = 0; c < w->njc; c++) {
		unsigned f = w->fs.next[(size_t)s->f[u] * w->fs.h->nclasses + w->jc_f[c]];
		unsigned x = w->ex.next[(size_t)s->x[u] * w->ex.h->nclasses + w->jc_x[c]];
		int v = ll_search_node(s, f, x);
		if (v < 0)
			return -1;
		s->succ[(size_t)u * w->njc + c] = (uint16_t)v;
		if (s->index[v] < 0) {
			if (ll_search_scc(s, v) < 0)
				return -1;
			if (s->low[v] < s->low[u])
				s->low[u] = s->low[v];
		} else if (s->on_stack[v] && s->index[v] < s->low[u]) {
			s->low[u] = s->index[v];
		}
	}
	if (s->low[u] != s->index[u])
		return 0;
	/* u roots a component: the nodes above it on the stack */
	int top = s->sp;
	while (s->stack[--s->sp] != u)
		;
	bool live = false, cycle = top - s->sp > 1;
	for (int i = s->sp; i < top; i++) {
		int m = s->stack[i];
		live |= !s->quiet[m];
		for (unsigned c = 0; c < w->njc; c++) {
			int v = s->succ[(size_t)m * w->njc + c];
			cycle |= v == m;
			live |= !s->on_stack[v] && s->live[v];
		}
	}
	if (live && cycle)
		return -1;
	for (int i = s->sp; i < top; i++) {
		s->on_stack[s->stack[i]] = false;
		s->live[s->stack[i]] = live;
	}
	if (live) {   /* acyclic: u alone */
		uint32_t n = !s->quiet[u];
		for (unsigned c = 0; c < w->njc; c++) {
			int v = s->succ[(size_t)u * w->njc + c];
			if (s->live[v])
				n = ll_count_add(n, (uint64_t)w->jc_n[c] * s->count[v]);
		}
		s->count[u] = n;
	}
	return 0;
}

/* The names below node u (the first depth bytes of s->name spelled),
 * in byte order, which is strcmp's: a name before its extensions. Only
 * the bytes of the classes that lead to a live node are tried. */
static int ll_search_names(struct ll_search *s, int u, size_t depth)
{
	const struct ll_walk *w = s->w;
	uint64_t bytes[4] = { 0 };
	for (unsigned c = 0; c < w->njc; c++)
		if (s->live[s->succ[(size_t)u * w->njc + c]])
			for (unsigned i = 0; i < 4; i++)
				bytes[i] |= w->jc_bytes[c][i];
	for (unsigned i = 0; i < 4; i++) {
		for (uint64_t m = bytes[i]; m; m &= m - 1) {
			unsigned b = i * 64 + (unsigned)__builtin_ctzll(m);
			int v = s->succ[(size_t)u * w->njc + w->jc_of[b]];
			if (!s->live[v])
				continue;   /* a byte of a live class leads where its class does */
			if (depth == NAME_MAX)
				return -1;   /* no entry has so long a name: left to the listing */
			s->name[depth] = (char)b;
			s->name[depth + 1] = '\0';
			if (!s->quiet[v] && strcmp(s->name, ".") && strcmp(s->name, "..")) {
				mem_grow((void **)&s->names, &s->cap, s->len + depth + 2, 1);
				memcpy(s->names + s->len, s->name, depth + 2);
				s->len += depth + 2;
				s->nnames++;
			}
			if (ll_search_names(s, v, depth + 1) < 0)
				return -1;
		}
	}
	return 0;
}

/* The decision for the "D/" states (f1, x1) with pending: a kept one, or
 * a new search's. */
static const struct ll_lookup *ll_lookup_of(struct ll_walk *w, unsigned f1, unsigned x1, uint32_t pending)
{
	for (size_t i = 0; i < w->nlookups; i++) {
		const struct ll_lookup *l = &w->lookups[i];
		if (l->f1 == f1 && l->x1 == x1 && l->pending == pending)
			return l;
	}
	struct ll_search *s = w->search;
	if (!s) {
		s = w->search = xmalloc(sizeof(*s));
		s->succ = xmalloc((size_t)LL_LOOKUP_PAIRS * (w->njc ? w->njc : 1) * sizeof(*s->succ));
	}
	s->w = w;
	s->pending = pending;
	s->n = 0;
	s->next_index = 0;
	s->sp = 0;
	memset(s->slot, 0, sizeof(s->slot));
	memset(s->on_stack, 0, sizeof(s->on_stack));
	s->names = NULL;
	s->len = s->cap = s->nnames = 0;
	int start = ll_search_node(s, f1, x1);
	bool ok = start >= 0 && ll_search_scc(s, start) == 0;
	uint32_t total = 0;
	for (unsigned c = 0; ok && c < w->njc; c++) {
		int v = s->succ[(size_t)start * w->njc + c];
		if (s->live[v])
			total = ll_count_add(total, (uint64_t)w->jc_n[c] * s->count[v]);
	}
	ok = ok && total <= LL_LOOKUP_NAMES && ll_search_names(s, start, 0) == 0;
	struct ll_lookup *l = VEC_PUSH(w->lookups, w->nlookups, w->lookups_cap);
	*l = (struct ll_lookup){ .f1 = f1, .x1 = x1, .pending = pending, .list = !ok };
	if (ok) {
		l->names = s->names;
		l->n = s->nnames;
	} else {
		free(s->names);
	}
	return l;
}

static int ll_dir(struct ll_walk *w, size_t seed, int dfd, dev_t dev, unsigned f, unsigned x, uint32_t pending,
		  bool late_fs, int parent, const char *name);
static int ll_dir_below(struct ll_walk *w, size_t seed, int dfd, dev_t dev, unsigned f1, unsigned x1,
			uint32_t child, bool late_fs);
static int ll_entry(struct ll_walk *w, size_t seed, int dfd, const char *name, unsigned char type,
		    unsigned f, unsigned x, uint32_t pending, dev_t dev);

/* Whether a lookup by name in the directory open as dfd finds what its
 * listing holds, no more: file systems that look names up as they store
 * them (not /proc, whose threads are found but not listed, nor one that
 * mounts on lookup), and a directory that neither folds case (ext4 and
 * tmpfs casefold: "SH" would find "sh") nor hides its names (fscrypt
 * without the key). Any other: listed. */
static bool ll_lookup_fs(int dfd)
{
	struct statfs sf;
	if (fstatfs(dfd, &sf) < 0)
		return false;
	switch ((uint32_t)sf.f_type) {
	case EXT4_SUPER_MAGIC:   /* ext2 and ext3 too */
	case TMPFS_MAGIC:
	case BTRFS_SUPER_MAGIC:
	case OVERLAYFS_SUPER_MAGIC:   /* refuses case-folding layers */
		break;
	default:
		return false;
	}
	int flags = 0;
	if (ioctl(dfd, FS_IOC_GETFLAGS, &flags) < 0)
		return errno == ENOTTY;   /* no flags at all (tmpfs before 6.0): none folds */
	return !(flags & (FS_CASEFOLD_FL | FS_ENCRYPT_FL));
}

/* Whether looking n names up in the directory open as dfd costs less
 * than listing it: a lookup of a name not there costs about what two
 * entries listed cost (fstatat 0.6 us; getdents, sorting and stepping an
 * entry 0.3 us), and the directory's size, in bytes, roughly counts its
 * entries (ext4 records of 12 bytes and more, tmpfs 20 a name, btrfs
 * twice the names' bytes). It changes what is counted, never the plan. */
static bool ll_lookup_pays(int dfd, size_t n)
{
	struct stat st;
	if (n <= 8)
		return true;
	return fstat(dfd, &st) == 0 && (uint64_t)st.st_size / 32 >= 2 * n;
}

/* Mixed directory w->path (open as dfd) decided by looking up l's names:
 * 1 when one cannot be looked up (then it is listed), else 0 or the
 * walk's error. Every lookup is made before any entry is decided, so
 * falling back to the listing repeats nothing. */
static int ll_lookup_dir(struct ll_walk *w, size_t seed, int dfd, dev_t dev, unsigned f1, unsigned x1,
			 uint32_t child, const struct ll_lookup *l)
{
	unsigned char type[LL_LOOKUP_NAMES];
	/* l is in w->lookups, which a directory below (ll_entry) may grow and
	 * move: its names (a buffer of their own) and count are read once */
	const char *const names = l->names;
	const size_t n = l->n;
	const char *nm = names;
	if (n > LL_LOOKUP_NAMES)   /* the search keeps no more */
		return 1;
	for (size_t i = 0; i < n; nm += strlen(nm) + 1, i++) {
		struct stat st;
		if (fstatat(dfd, nm, &st, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT) == 0)
			type[i] = S_ISDIR(st.st_mode) ? DT_DIR : S_ISLNK(st.st_mode) ? DT_LNK : DT_REG;
		else if (errno == ENOENT)
			type[i] = DT_UNKNOWN;   /* not there */
		else
			return 1;
	}
	w->plan->looked_up++;
	w->plan->lookups += n;
	int err = 0;
	nm = names;
	for (size_t i = 0; i < n && !err; nm += strlen(nm) + 1, i++) {
		if (type[i] == DT_UNKNOWN)
			continue;
		w->plan->entries++;
		if ((err = ll_budget(w, seed)) < 0)
			break;
		err = ll_entry(w, seed, dfd, nm, type[i], f1, x1, child, dev);
	}
	return err;
}

/* One entry of a mixed directory: its rights, for those pending. */
static int ll_entry(struct ll_walk *w, size_t seed, int dfd, const char *name, unsigned char type,
		    unsigned f, unsigned x, uint32_t pending, dev_t dev)
{
	size_t len = w->len, nl = strlen(name);
	if (len + 1 + nl >= sizeof(w->path))
		return 0;   /* no path the kernel hands a hook: nothing granted */
	if (len > 1)
		w->path[w->len++] = '/';
	memcpy(w->path + w->len, name, nl + 1);
	w->len += nl;
	unsigned f2 = ll_step(&w->fs, f, name, nl), x2 = ll_step(&w->ex, x, name, nl);
	int err = 0;
	if (type == DT_UNKNOWN) {
		struct stat st;
		type = fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 ? DT_UNKNOWN
		       : S_ISDIR(st.st_mode)				 ? DT_DIR
		       : S_ISLNK(st.st_mode)				 ? DT_LNK
									 : DT_REG;
	}
	if (type == DT_LNK) {
		w->plan->symlinks++;
	} else if (type == DT_DIR) {
		int cfd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		struct stat st;
		if (cfd < 0 || fstat(cfd, &st) < 0) {
			if (cfd >= 0)
				close(cfd);
			/* what it or a place below it is granted (not what a
			 * longer name beside it is) */
			uint32_t lost = ll_entry_any(w, f2, x2) & pending;
			if (lost)
				ll_narrow(w, seed, BEEC_LL_N_UNREADABLE, lost);
		} else {
			bool late = st.st_dev != dev && w->o && w->o->late && w->o->late(cfd);
			ll_listing_new(w, cfd);
			err = ll_dir(w, ll_seed_here(w, seed), cfd, st.st_dev, f2, x2, pending, late, dfd, name);
			close(cfd);
		}
	} else {
		uint32_t r = (w->fs.own[f2] | w->ex.own[x2]) & pending & LL_FILE_RIGHTS;
		/* whether a rule here or above gives the exec: it cannot run */
		if ((w->ex.own[x2] & BEEC_LL_EXEC) && !(w->fs.own[f2] & BEEC_LL_READ))
			ll_narrow(w, seed, BEEC_LL_N_EXEC_NO_READ, BEEC_LL_EXEC);
		if (r)
			err = ll_emit(w, seed, r, false, false, dfd, name);
		else if (w->in_spine && ll_ro_of(w) == LL_RO_OUT)
			err = ll_emit(w, seed, BEEC_LL_TRUNC, false, false, dfd, name);
	}
	w->len = len;
	w->path[len] = '\0';
	return err;
}

/* Directory w->path, open as dfd (on device dev), reached in states f and
 * x; pending: the rights no rule above decides for it. */
static int ll_dir(struct ll_walk *w, size_t seed, int dfd, dev_t dev, unsigned f, unsigned x, uint32_t pending,
		  bool late_fs, int parent, const char *name)
{
	uint32_t own = w->fs.own[f] | w->ex.own[x];
	/* the states of "D/": of "/" itself for the root */
	bool root = w->len == 1;
	unsigned f1 = root ? f : ll_step(&w->fs, f, "/", 1), x1 = root ? x : ll_step(&w->ex, x, "/", 1);
	uint32_t all = w->fs.all[f1] | w->ex.all[x1], any = w->fs.any[f1] | w->ex.any[x1];
	uint32_t mixed = any & ~all;
	uint32_t grant = all & pending & LL_FILE_RIGHTS;
	uint32_t child = (pending & mixed & LL_FILE_RIGHTS);
	int err = 0;

	if (pending & BEEC_LL_LIST) {
		if ((all & BEEC_LL_READ) && (own & BEEC_LL_READ)) {
			grant |= BEEC_LL_LIST;
		} else if (all & BEEC_LL_READ) {
			/* "D/ **": each directory below lists itself, new ones cannot */
			child |= BEEC_LL_LIST;
			ll_narrow(w, seed, BEEC_LL_N_NEW_DIRS, BEEC_LL_LIST);
		} else {
			if (own & BEEC_LL_READ)
				ll_narrow(w, seed, BEEC_LL_N_NO_LIST, BEEC_LL_LIST);
			if (any & BEEC_LL_READ)
				child |= BEEC_LL_LIST;
		}
	}
	/* exec granted below where nothing may be read: none of it runs */
	if ((any & BEEC_LL_EXEC) && !(any & BEEC_LL_READ))
		ll_narrow(w, seed, BEEC_LL_N_EXEC_NO_READ, BEEC_LL_EXEC);
	/* opts.ro: an entry of a directory that holds a writable place gets
	 * truncate of its own, where the directory's rule cannot have it */
	enum ll_ro ro = w->o && w->o->ro && !late_fs ? ll_ro_of(w) : LL_RO_IN;
	if (grant)
		err = ll_emit(w, seed, grant, true, late_fs, parent, name);
	else if (w->in_spine && ro == LL_RO_OUT)
		err = ll_emit(w, seed, BEEC_LL_TRUNC, true, false, parent, name);
	if (err || !child)
		return err;
	bool spine = w->in_spine;
	w->in_spine = ro == LL_RO_ABOVE;
	err = ll_dir_below(w, seed, dfd, dev, f1, x1, child, late_fs);
	w->in_spine = spine;
	return err;
}

/* The entries of directory w->path (ll_dir), for the rights child. */
static int ll_dir_below(struct ll_walk *w, size_t seed, int dfd, dev_t dev, unsigned f1, unsigned x1,
			uint32_t child, bool late_fs)
{
	int err;
	if (child & LL_FILE_RIGHTS)
		ll_narrow(w, seed, BEEC_LL_N_NEW_OBJECTS, child & LL_FILE_RIGHTS);
	if (late_fs) {
		/* init mounts it anew: the host's entries are not the tool's */
		ll_narrow(w, seed, BEEC_LL_N_LATE, child);
		return 0;
	}
	/* few names can get anything: look them up rather than list (not
	 * where every entry outside the writable places gets truncate) */
	const struct ll_lookup *l = w->list_all || w->in_spine ? NULL : ll_lookup_of(w, f1, x1, child);
	if (l && !l->list && ll_lookup_pays(dfd, l->n) && ll_lookup_fs(dfd) &&
	    (err = ll_lookup_dir(w, seed, dfd, dev, f1, x1, child, l)) != 1)
		return err;
	err = 0;   /* 1: a lookup failed, so listed after all */
	char *buf;
	struct ll_ent *v;
	ssize_t n = ll_read_dir(dfd, &buf, &v);
	if (n < 0) {
		ll_narrow(w, seed, BEEC_LL_N_UNREADABLE, child);
		return 0;
	}
	w->plan->dirs++;
	for (ssize_t i = 0; i < n && !err; i++) {
		w->plan->entries++;
		if ((err = ll_budget(w, seed)) < 0)
			break;
		err = ll_entry(w, seed, dfd, v[i].name, v[i].type, f1, x1, child, dev);
	}
	free(v);
	free(buf);
	return err;
}

/* One seed path: its own rule when a file, its walk when a directory. */
static int ll_seed(struct ll_walk *w, size_t seed, const char *path)
{
	size_t len = strlen(path);
	memcpy(w->path, path, len + 1);
	w->len = len;
	unsigned f = ll_step(&w->fs, 0, path, len), x = ll_step(&w->ex, 0, path, len);
	uint32_t any = w->fs.own[f] | w->ex.own[x] | w->fs.any[f] | w->ex.any[x];
	char real[PATH_MAX];
	if (!realpath(path, real)) {
		if (any)
			ll_narrow(w, seed, BEEC_LL_N_MISSING, any & LL_FILE_RIGHTS);
		return 0;
	}
	if (strcmp(real, path)) {
		if (any)
			ll_narrow(w, seed, BEEC_LL_N_SYMLINK, any & LL_FILE_RIGHTS);
		return 0;
	}
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_PATH);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		if (fd >= 0)
			close(fd);
		ll_narrow(w, seed, BEEC_LL_N_UNREADABLE, any & LL_FILE_RIGHTS);
		return 0;
	}
	bool late = w->o && w->o->late && w->o->late(fd);
	int err = 0;
	if (S_ISDIR(st.st_mode)) {
		close(fd);
		fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0) {
			ll_narrow(w, seed, BEEC_LL_N_UNREADABLE, any & LL_FILE_RIGHTS);
			return 0;
		}
		ll_listing_new(w, fd);
		err = ll_dir(w, seed, fd, st.st_dev, f, x, LL_ALL, late, AT_FDCWD, path);
	} else {
		uint32_t r = (w->fs.own[f] | w->ex.own[x]) & LL_FILE_RIGHTS;
		if ((r & BEEC_LL_EXEC) && !(r & BEEC_LL_READ))
			ll_narrow(w, seed, BEEC_LL_N_EXEC_NO_READ, BEEC_LL_EXEC);
		if (r)
			err = ll_emit(w, seed, r, false, late, AT_FDCWD, path);
	}
	close(fd);
	return err;
}

/* The joint byte classes of a name's bytes (ll_walk.jc_*). */
static void ll_classes_init(struct ll_walk *w)
{
	const uint8_t *cf = w->fs.h->class_of, *cx = w->ex.h->class_of;
	w->njc = 0;
	memset(w->jc_bytes, 0, sizeof(w->jc_bytes));
	for (unsigned b = 0; b < 256; b++) {
		w->jc_of[b] = LL_NO_CLASS;
		if (b == 0 || b == '/')
			continue;
		unsigned c = 0;
		while (c < w->njc && !(w->jc_f[c] == cf[b] && w->jc_x[c] == cx[b]))
			c++;
		if (c == w->njc) {
			w->jc_f[c] = cf[b];
			w->jc_x[c] = cx[b];
			w->jc_n[c] = 0;
			w->njc++;
		}
		w->jc_of[b] = (uint16_t)c;
		w->jc_n[c]++;
		w->jc_bytes[c][b / 64] |= 1ull << (b % 64);
	}
}

static int narrow_cmp(const void *a, const void *b)
{
	const struct beec_ll_narrowing *x = a, *y = b;
	if (x->rule != y->rule)
		return x->rule < y->rule ? -1 : 1;
	return (x->kind > y->kind) - (x->kind < y->kind);
}

static int ll_walk_body(const struct bee_dfa_hdr *fs, const struct bee_dfa_hdr *exec,
			const struct beec_ll_seed *seeds, size_t nseeds, const struct beec_ll_opts *opts,
			beec_ll_rule_fn fn, void *ctx, struct beec_ll_plan *plan)
{
	uint64_t t0 = ll_now();
	struct ll_walk w = { .seeds = seeds, .o = opts, .fn = fn, .ctx = ctx, .plan = plan };
	w.max_entries = opts && opts->max_entries ? opts->max_entries : BEEC_LL_MAX_ENTRIES;
	w.deadline = t0 + (opts && opts->max_ms ? opts->max_ms : BEEC_LL_MAX_MS) * 1000000u;
	/* the literal prefixes of every grant, each with its seed */
	struct beec_prefix *px = xcalloc(64, sizeof(*px));
	char **paths = NULL;
	size_t *of = NULL, np = 0, cap = 0, ocap = 0;
	int err = 0;
	for (size_t i = 0; i < nseeds; i++) {
		int n;
		if (seeds[i].pinned) {
			snprintf(px[0].path, sizeof(px[0].path), "%s", seeds[i].glob);
			n = 1;
		} else if ((n = beec_glob__write_prefixes(seeds[i].glob, px, 64)) < 0) {
			snprintf(plan->err, sizeof(plan->err), "rule %u '%s %.300s' (line %u): no literal prefix: %s",
				 seeds[i].rule, seeds[i].what, seeds[i].glob, seeds[i].line, strerror(-n));
			err = n == -ENOMEM ? -ENOMEM : -EINVAL;
			goto out;
		}
		for (int k = 0; k < n; k++) {
			size_t m = np;
			*VEC_PUSH(paths, np, cap) = xstrdup(px[k].path);
			*VEC_PUSH(of, m, ocap) = i;
		}
	}
	/* sort (path, seed) pairs together: an index sort keeps them paired */
	size_t *idx = xcalloc(np + 1, sizeof(*idx));
	for (size_t i = 0; i < np; i++)
		idx[i] = i;
	for (size_t i = 1; i < np; i++)   /* insertion sort: seeds are few, and stable */
		for (size_t j = i; j > 0 && strcmp(paths[idx[j - 1]], paths[idx[j]]) > 0; j--) {
			size_t t = idx[j];
			idx[j] = idx[j - 1];
			idx[j - 1] = t;
		}
	w.seed_paths = xcalloc(np + 1, sizeof(*w.seed_paths));
	w.seed_of = xcalloc(np + 1, sizeof(*w.seed_of));
	for (size_t i = 0; i < np; i++) {
		size_t j = idx[i];
		if (w.nseed_paths && !strcmp(w.seed_paths[w.nseed_paths - 1], paths[j]))
			continue;   /* the first rule of a path names it */
		w.seed_paths[w.nseed_paths] = paths[j];
		w.seed_of[w.nseed_paths++] = of[j];
	}
	free(idx);
	ll_auto_init(&w.fs, fs, false);
	ll_auto_init(&w.ex, exec, true);
	ll_classes_init(&w);
	w.list_all = opts && opts->sz >= offsetof(struct beec_ll_opts, list_all) + sizeof(opts->list_all) &&
		     opts->list_all;
	/* walk the outermost seeds: one below another is walked from it */
	const char *top = NULL;
	for (size_t i = 0; i < w.nseed_paths && !err; i++) {
		if (top && path_within(w.seed_paths[i], top))
			continue;
		top = w.seed_paths[i];
		err = ll_seed(&w, w.seed_of[i], top);
	}
	ll_auto_fini(&w.fs);
	ll_auto_fini(&w.ex);
	for (size_t i = 0; i < w.nlookups; i++)
		free(w.lookups[i].names);
	free(w.lookups);
	if (w.search)
		free(w.search->succ);
	free(w.search);
	free(w.seed_paths);
	free(w.seed_of);
	free(w.listing_of);
out:
	for (size_t i = 0; i < np; i++)
		free(paths[i]);
	free(paths);
	free(of);
	free(px);
	if (plan->nnarrow)
		qsort(plan->narrow, plan->nnarrow, sizeof(*plan->narrow), narrow_cmp);
	plan->ns = ll_now() - t0;
	return err;
}

int beec_ll__walk(const struct bee_dfa_hdr *fs, const struct bee_dfa_hdr *exec, const struct beec_ll_seed *seeds,
		  size_t nseeds, const struct beec_ll_opts *opts, beec_ll_rule_fn fn, void *ctx,
		  struct beec_ll_plan *plan)
{
	memset(plan, 0, sizeof(*plan));
	return MEM_PROTECT(-ENOMEM, ll_walk_body(fs, exec, seeds, nseeds, opts, fn, ctx, plan));
}

static int ll_prefixes_body(const struct bee_dfa_hdr *fs, const struct bee_dfa_hdr *exec,
			    const struct beec_ll_seed *seeds, size_t nseeds,
			    void (*fn)(void *, const struct beec_ll_seed *, const char *, uint32_t, uint32_t, uint32_t),
			    void *ctx)
{
	struct ll_auto a, x;
	ll_auto_init(&a, fs, false);
	ll_auto_init(&x, exec, true);
	struct beec_prefix *px = xcalloc(64, sizeof(*px));
	int err = 0;
	for (size_t i = 0; i < nseeds && !err; i++) {
		int n = 1;
		if (seeds[i].pinned)
			snprintf(px[0].path, sizeof(px[0].path), "%s", seeds[i].glob);
		else if ((n = beec_glob__write_prefixes(seeds[i].glob, px, 64)) < 0)
			err = n == -ENOMEM ? -ENOMEM : -EINVAL;
		for (int k = 0; k < n && !err; k++) {
			const char *p = px[k].path;
			bool again = false;
			for (int j = 0; j < k; j++)
				again |= !strcmp(px[j].path, p);
			if (again)
				continue;
			size_t len = strlen(p);
			unsigned f = ll_step(&a, 0, p, len), e = ll_step(&x, 0, p, len);
			unsigned f1 = len == 1 ? f : ll_step(&a, f, "/", 1), e1 = len == 1 ? e : ll_step(&x, e, "/", 1);
			uint32_t all = a.all[f1] | x.all[e1], any = a.any[f1] | x.any[e1];
			fn(ctx, &seeds[i], p, a.own[f] | x.own[e], all, any & ~all);
		}
	}
	free(px);
	ll_auto_fini(&a);
	ll_auto_fini(&x);
	return err;
}

int beec_ll__prefixes(const struct bee_dfa_hdr *fs, const struct bee_dfa_hdr *exec, const struct beec_ll_seed *seeds,
		      size_t nseeds,
		      void (*fn)(void *ctx, const struct beec_ll_seed *s, const char *prefix, uint32_t own, uint32_t all,
				 uint32_t mixed),
		      void *ctx)
{
	return MEM_PROTECT(-ENOMEM, ll_prefixes_body(fs, exec, seeds, nseeds, fn, ctx));
}

void beec_ll_plan__fini(struct beec_ll_plan *plan)
{
	for (size_t i = 0; i < plan->nnarrow; i++) {
		free(plan->narrow[i].path);
		free(plan->narrow[i].what);
		free(plan->narrow[i].glob);
	}
	free(plan->narrow);
	memset(plan, 0, sizeof(*plan));
}

/* ---- a collected plan, and Landlock's answer from it ------------------------------------ */

int beec_ll__collect(void *ctx, const struct beec_ll_rule *r, int dirfd, const char *name)
{
	struct beec_ll_rules *rs = ctx;
	(void)dirfd;
	(void)name;
	struct beec_ll_rule *v = VEC_PUSH(rs->v, rs->n, rs->cap);
	*v = *r;
	v->path = xstrdup(r->path);
	return 0;
}

static int rule_cmp(const void *a, const void *b)
{
	const struct beec_ll_rule *x = a, *y = b;
	return strcmp(x->path, y->path);
}

void beec_ll_rules__sort(struct beec_ll_rules *rs)
{
	if (rs->n)
		qsort(rs->v, rs->n, sizeof(*rs->v), rule_cmp);
}

void beec_ll_rules__fini(struct beec_ll_rules *rs)
{
	for (size_t i = 0; i < rs->n; i++)
		free((char *)rs->v[i].path);
	free(rs->v);
	memset(rs, 0, sizeof(*rs));
}

/* The rights the rules give on the inode at path (its own file rule and
 * every directory rule at or above it); a late rule counts as the others. */
static uint32_t ll_rights_at(const struct beec_ll_rules *rs, const char *path, bool self)
{
	uint32_t r = 0;
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s", path);
	for (;;) {
		struct beec_ll_rule key = { .path = p };
		const struct beec_ll_rule *hit = rs->n ? bsearch(&key, rs->v, rs->n, sizeof(*rs->v), rule_cmp) : NULL;
		if (hit && (hit->dir || self))
			r |= hit->rights;
		self = false;
		char *slash = strrchr(p, '/');
		if (!slash || !strcmp(p, "/"))
			break;
		if (slash == p)
			p[1] = '\0';
		else
			*slash = '\0';
	}
	return r;
}

static bool ll_allows(const struct beec_ll_rules *rs, const char *path, uint32_t want, int depth);

bool beec_ll__allows(const struct beec_ll_rules *rs, const char *path, uint32_t want)
{
	return ll_allows(rs, path, want, 0);
}

static bool ll_allows(const struct beec_ll_rules *rs, const char *path, uint32_t want, int depth)
{
	char real[PATH_MAX];
	struct stat st;
	if (realpath(path, real) && stat(real, &st) == 0) {
		uint32_t r = ll_rights_at(rs, real, true);
		if (S_ISDIR(st.st_mode))
			return want == BEEC_LL_READ && (r & BEEC_LL_LIST);
		if (want == BEEC_LL_EXEC)
			return (r & (BEEC_LL_EXEC | BEEC_LL_READ)) == (BEEC_LL_EXEC | BEEC_LL_READ);
		return (r & want) == want;
	}
	/* a new object: only created, by a write beneath a writable directory */
	if (want != BEEC_LL_WRITE)
		return false;
	char link[PATH_MAX];
	ssize_t n = readlink(path, link, sizeof(link) - 1);
	if (n > 0) {
		/* a dangling symlink: the open creates its target */
		link[n] = '\0';
		char target[PATH_MAX * 2];
		const char *slash = strrchr(path, '/');
		if (link[0] == '/' || !slash)
			snprintf(target, sizeof(target), "%s", link);
		else
			snprintf(target, sizeof(target), "%.*s/%s", (int)(slash - path), path, link);
		return depth < 40 && strlen(target) < PATH_MAX && ll_allows(rs, target, want, depth + 1);
	}
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	if (!slash)
		return false;
	if (slash == dir)
		slash[1] = '\0';
	else
		*slash = '\0';
	if (!realpath(dir, real) || stat(real, &st) < 0 || !S_ISDIR(st.st_mode))
		return false;
	return (ll_rights_at(rs, real, false) & BEEC_LL_WRITE) != 0;
}

struct beec_ll_seed *beec_ll__seeds(const struct bee_manifest *m, size_t *n)
{
	struct beec_ll_seed *v = calloc(m->nrules + 1, sizeof(*v));
	*n = 0;
	for (size_t i = 0; v && i < m->nrules; i++) {
		const struct bee_mf_rule *r = &m->rules[i];
		const char *what = r->rkind == BEE_RULE_FS_READ	  ? "fs.read"
				   : r->rkind == BEE_RULE_FS_WRITE  ? "fs.write"
				   : r->rkind == BEE_RULE_EXEC_ALLOW ? "exec.allow"
								     : NULL;
		if (what)
			v[(*n)++] = (struct beec_ll_seed){ .glob = r->text, .rule = r->index, .line = r->line,
							   .what = what, .pinned = r->pinned };
	}
	return v;
}
