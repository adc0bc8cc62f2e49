/* SPDX-License-Identifier: GPL-2.0-only */
/* schema.c: TOML document -> policy IR (schema version 1).
 *
 * One walk over the document in source order. Every string is first
 * expanded (${NAME} from the defines, "$$" for a literal '$', any other '$'
 * is an error), keeping for each expanded byte the span of the source text
 * it came from, so that an error inside a string points at its exact
 * column. Each value is then checked by its kind: paths and globs, net
 * entries (netaddr), environment names and patterns. A check that fails
 * queues a diagnostic and the walk goes on with the next value, so that one
 * run reports many errors; it stops once the diagnostic queue overflows.
 */
#include "schema.h"

#include "glob.h"
#include "hostname.h"
#include "netaddr.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#define SCHEMA_NAME_MAX       64
#define SCHEMA_PATH_MAX       4096

/* Kernel interfaces that no write grant may reach: writing them would let
 * the confined tool escape or disable its own confinement. */
static const char *const protected_paths[] = {
	"/sys/fs/cgroup", "/sys/fs/bpf", "/proc/sys", "/sys/kernel/security", NULL,
};

struct schema {
	struct diag_ctx *dc;
	const struct source *src;
	const char *const *defines;
	size_t ndefines;
	struct ir_policy *pol;
	struct ir_rule *rules;       /* built here, copied into the arena at the end */
	size_t nrules, cap;
	uint32_t *slots;             /* rules by content, for duplicates: index + 1 */
	size_t nslots;
	struct beec_limits lim;
	bool limit_hit;              /* a limit stopped the walk */
	bool failed;
	bool seen_version, seen_name;
};

/* ---- diagnostics ------------------------------------------------------- */

static int serr(struct schema *s, struct loc loc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void swarn(struct schema *s, struct loc loc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static char *vfmt(const char *fmt, va_list ap)
{
	va_list aq;
	va_copy(aq, ap);
	int n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	char *m = xmalloc((size_t)n + 1);
	vsnprintf(m, (size_t)n + 1, fmt, ap);
	return m;
}

static int serr(struct schema *s, struct loc loc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *m = vfmt(fmt, ap);
	va_end(ap);
	s->failed = true;
	diag_error(s->dc, loc, "%s", m);
	free(m);
	return -1;
}

static void swarn(struct schema *s, struct loc loc, const char *fmt, ...)
{
	/* the format itself goes on: it is the warning's kind, which the
	 * caps count by */
	va_list ap;
	va_start(ap, fmt);
	diag_vwarning(s->dc, loc, fmt, ap);
	va_end(ap);
}

/* Stop once an error past the cap was dropped: the printout then says so. */
static bool stop(const struct schema *s)
{
	return s->dc->truncated || s->limit_hit;
}

/* A limit hit at loc: one error naming it, and the walk stops. */
static int limit_error(struct schema *s, struct loc loc, enum beec_limit which, const char *what)
{
	serr(s, loc, "%s, more than the limit of %u", what, beec_limit_get(&s->lim, which));
	beec_limit_note(s->dc, which, beec_limit_get(&s->lim, which));
	s->limit_hit = true;
	return -1;
}

#define SHOWLEN 96
static const char *show(char buf[SHOWLEN], const char *s, size_t n)
{
	return diag_quote(buf, SHOWLEN, s, n, false);
}

static const char *node_type(const struct toml_node *n)
{
	if (n->type == TOML_ARRAY && n->arr.of_tables)
		return "array of tables";
	return toml_type_name(n->type);
}

static bool key_is(const struct toml_kv *kv, const char *word)
{
	size_t n = strlen(word);
	return kv->keylen == n && memcmp(kv->key, word, n) == 0;
}

/* A location at the very start of the policy, for what is missing. */
static struct loc loc_start(const struct schema *s)
{
	return (struct loc){ .src = s->src, .off = 0, .len = 0 };
}

/* ---- ${NAME} expansion ------------------------------------------------- */

/* A string value after expansion. lo[i]..hi[i] is the span, as byte offsets
 * into the string's decoded text, that produced expanded byte i: the byte
 * itself, or the whole ${NAME} for bytes of its value. */
struct xstr {
	const struct toml_node *node;
	bool simple;        /* the decoded text sits verbatim between the quotes */
	char *s;
	size_t n, cap;
	uint32_t *lo, *hi;
	size_t spancap;
};

static void xs_push(struct xstr *x, char c, size_t lo, size_t hi)
{
	mem_grow((void **)&x->s, &x->cap, x->n + 2, 1);
	size_t want = x->n + 1;
	if (want > x->spancap) {
		size_t cap = x->spancap;
		mem_grow((void **)&x->lo, &cap, want, sizeof(*x->lo));
		x->hi = xrealloc(x->hi, cap * sizeof(*x->hi));
		x->spancap = cap;
	}
	x->s[x->n] = c;
	x->lo[x->n] = (uint32_t)lo;
	x->hi[x->n] = (uint32_t)hi;
	x->n++;
	x->s[x->n] = '\0';
}

static void xs_fini(struct xstr *x)
{
	free(x->s);
	free(x->lo);
	free(x->hi);
	memset(x, 0, sizeof(*x));
}

/* Location of decoded bytes [off, off + len) of the string. A string with
 * escapes or on several lines cannot be mapped byte for byte: then the
 * whole string is the location. */
static struct loc raw_loc(const struct xstr *x, size_t off, size_t len)
{
	struct loc l = x->node->loc;
	if (!x->simple)
		return l;
	l.off += (uint32_t)(1 + off);
	l.len = (uint32_t)len;
	return l;
}

/* Location of expanded bytes [off, off + len); len 0 is a position. */
static struct loc xs_loc(const struct xstr *x, size_t off, size_t len)
{
	size_t raw_n = x->node->str.len;
	size_t a = off < x->n ? x->lo[off] : raw_n;
	size_t b = a;
	if (len > 0)
		b = off + len <= x->n ? x->hi[off + len - 1] : raw_n;
	return raw_loc(x, a, b > a ? b - a : 0);
}

static bool is_simple_string(const struct schema *s, const struct toml_node *n)
{
	const struct loc *l = &n->loc;
	if (!l->src || l->src != s->src || (size_t)l->off + l->len > s->src->len)
		return false;
	const char *t = s->src->text + l->off;
	return l->len == n->str.len + 2 && (t[0] == '"' || t[0] == '\'') &&
	       t[l->len - 1] == t[0] && memcmp(t + 1, n->str.ptr, n->str.len) == 0;
}

static bool is_name_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_name_char(char c)
{
	return is_name_start(c) || (c >= '0' && c <= '9');
}

static bool valid_name(const char *t, size_t n)
{
	if (n == 0 || !is_name_start(t[0]))
		return false;
	for (size_t i = 1; i < n; i++)
		if (!is_name_char(t[i]))
			return false;
	return true;
}

/* The value of define NAME (the last one given wins), or NULL. */
static const char *define_lookup(const struct schema *s, const char *name, size_t n)
{
	for (size_t i = s->ndefines; i-- > 0;) {
		const char *d = s->defines[i];
		if (strncmp(d, name, n) == 0 && d[n] == '=')
			return d + n + 1;
	}
	return NULL;
}

static void note_define_suggestion(struct schema *s, struct loc at, const char *name)
{
	const char **names = xcalloc(s->ndefines + 1, sizeof(*names));
	size_t k = 0;
	for (size_t i = 0; i < s->ndefines; i++) {
		const char *eq = strchr(s->defines[i], '=');
		names[k++] = xstrndup(s->defines[i], (size_t)(eq - s->defines[i]));
	}
	const char *near = diag_suggest(name, names);
	if (near)
		diag_note(s->dc, at, "did you mean '${%s}'?", near);
	for (size_t i = 0; i < k; i++)
		free((char *)names[i]);
	free(names);
}

/* Expands string node n into x. Returns 0, or -1 with an error queued. */
static int expand(struct schema *s, const struct toml_node *n, struct xstr *x)
{
	char b1[SHOWLEN];
	memset(x, 0, sizeof(*x));
	x->node = n;
	x->simple = is_simple_string(s, n);
	const char *r = n->str.ptr;
	size_t len = n->str.len;
	mem_grow((void **)&x->s, &x->cap, 1, 1);
	x->s[0] = '\0';

	for (size_t i = 0; i < len;) {
		if (x->n >= s->lim.string_bytes) {
			char what[96];
			snprintf(what, sizeof(what), "string of %zu bytes after ${NAME} expansion", x->n + 1);
			return limit_error(s, n->loc, BEEC_LIMIT_string_bytes, what);
		}
		if (r[i] != '$') {
			xs_push(x, r[i], i, i + 1);
			i++;
			continue;
		}
		if (i + 1 < len && r[i + 1] == '$') {
			xs_push(x, '$', i, i + 2);
			i += 2;
			continue;
		}
		if (i + 1 == len || r[i + 1] != '{') {
			serr(s, raw_loc(x, i, 1), "'$' does not start a variable");
			diag_note(s->dc, LOC_NONE, "write '${NAME}' for a variable and '$$' for a literal '$'");
			return -1;
		}
		size_t j = i + 2;
		while (j < len && r[j] != '}' && r[j] != '$' && r[j] != '/')
			j++;
		if (j == len || r[j] != '}') {
			serr(s, raw_loc(x, i, 2), "unterminated '${'");
			diag_note(s->dc, LOC_NONE, "write '${NAME}' for a variable and '$$' for a literal '$'");
			return -1;
		}
		const char *name = r + i + 2;
		size_t nl = j - i - 2;
		struct loc ref = raw_loc(x, i, j + 1 - i);
		if (nl == 0)
			return serr(s, ref, "empty variable name in '${}'");
		if (!valid_name(name, nl)) {
			serr(s, ref, "invalid variable name '%s'", show(b1, name, nl));
			diag_note(s->dc, LOC_NONE, "a name is a letter or '_' followed by letters, digits or '_'");
			return -1;
		}
		const char *val = define_lookup(s, name, nl);
		if (!val) {
			char *nm = xstrndup(name, nl);
			serr(s, ref, "undefined variable '%s'", nm);
			diag_note(s->dc, LOC_NONE, "define it on the command line: beec -D %s=VALUE", nm);
			note_define_suggestion(s, ref, nm);
			free(nm);
			return -1;
		}
		/* each ${NAME} may multiply the string: bound it as it grows */
		for (const char *v = val; *v; v++) {
			if (x->n >= s->lim.string_bytes) {
				char what[160];
				snprintf(what, sizeof(what), "string of %zu bytes once '${%.*s}' is expanded",
					 x->n + 1, (int)(nl < 64 ? nl : 64), name);
				return limit_error(s, ref, BEEC_LIMIT_string_bytes, what);
			}
			xs_push(x, *v, i, j + 1);
		}
		i = j + 1;
	}
	return 0;
}

/* ---- globs ------------------------------------------------------------
 *
 * The glob grammar is glob.h's, the one the automaton is built from: a
 * policy is checked against exactly what will be enforced.
 */

/* Parses x->s[start..] as a glob into *g; on error points at the bad part. */
static int glob_check(struct schema *s, const struct xstr *x, size_t start, struct glob *g)
{
	struct glob_error e;
	if (glob_parse(x->s + start, g, &e) < 0)
		return serr(s, xs_loc(x, start + e.off, e.len), "%s", e.msg);
	return 0;
}

/* Does g match exactly one string (a file, not a pattern)? */
static bool glob_is_literal(const struct glob *g)
{
	if (g->nalts != 1)
		return false;
	for (size_t i = 0; i < g->alts[0].n; i++) {
		const struct glob_item *it = &g->alts[0].items[i];
		if (it->kind != GLOB_ITEM_BYTE)
			return false;
		unsigned bits = 0;
		for (unsigned w = 0; w < 4; w++)
			bits += (unsigned)__builtin_popcountll(it->set.w[w]);
		if (bits != 1)
			return false;
	}
	return true;
}

/* The one string a literal glob matches (its escapes resolved). */
static char *glob_literal_text(const struct glob *g, struct arena *a)
{
	const struct glob_alt *alt = &g->alts[0];
	char *t = arena_alloc(a, alt->n + 1), *o = t;
	for (size_t i = 0; i < alt->n; i++)
		for (unsigned b = 1; b < 256; b++)
			if (glob_byteset_has(&alt->items[i].set, b))
				*o++ = (char)b;
	*o = '\0';
	return t;
}

static int env_bad_char(struct schema *s, const struct xstr *x, size_t i)
{
	char b1[SHOWLEN], b2[SHOWLEN];
	serr(s, xs_loc(x, i, 1), "invalid character '%s' in environment variable pattern '%s'",
	     show(b1, x->s + i, 1), show(b2, x->s, x->n));
	if (x->s[i] == '=')
		diag_note(s->dc, LOC_NONE, "to give a variable a value, write it under 'env.set'");
	else
		diag_note(s->dc, LOC_NONE, "a pattern holds letters, digits, '_', '*', '?' and classes '[...]'");
	return -1;
}

/* An [env] allow entry: a variable name with the wildcards '*', '?' and
 * classes; no braces, no escapes. */
static int env_pattern_check(struct schema *s, const struct xstr *x)
{
	bool in_class = false;
	if (x->n == 0)
		return serr(s, xs_loc(x, 0, 0), "empty environment variable pattern");
	for (size_t i = 0; i < x->n; i++) {
		char c = x->s[i];
		if (is_name_char(c) || c == '*' || c == '?')
			continue;
		if (c == '[' && !in_class) {
			in_class = true;
			continue;
		}
		if (c == ']' || (in_class && (c == '!' || c == '^' || c == '-' || c == ':' || c == '['))) {
			if (c == ']')
				in_class = false;
			continue;
		}
		return env_bad_char(s, x, i);
	}
	if (x->s[0] >= '0' && x->s[0] <= '9')
		return serr(s, xs_loc(x, 0, 1), "environment variable names do not start with a digit");
	struct glob g;
	if (glob_check(s, x, 0, &g) < 0)
		return -1;
	glob_fini(&g);
	return 0;
}

/* ---- paths ------------------------------------------------------------- */

/* path with "//" collapsed, "/./" dropped and a trailing '/' removed: what
 * the writer most likely meant; the caller frees it */
static char *path_tidy(const char *t, size_t n)
{
	char *o = xmalloc(n + 2);
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (t[i] == '/' && k > 0 && o[k - 1] == '/')
			continue;
		if (t[i] == '.' && k > 0 && o[k - 1] == '/' && (i + 1 == n || t[i + 1] == '/')) {
			i++;   /* skip "./" */
			continue;
		}
		o[k++] = t[i];
	}
	while (k > 1 && o[k - 1] == '/')
		k--;
	o[k] = '\0';
	return o;
}

/* Checks x->s[start..] as an absolute, normalised path glob and parses it
 * into *g. A path may start with "**" + "/": that segment covers the root. */
static int check_path(struct schema *s, const struct xstr *x, size_t start, struct glob *g)
{
	char b1[SHOWLEN];
	const char *t = x->s + start;
	size_t n = x->n - start;

	if (n == 0)
		return serr(s, xs_loc(x, start, 0), start ? "empty path after '!'" : "empty path");
	const char *nul = memchr(t, '\0', n);
	if (nul)
		return serr(s, xs_loc(x, start + (size_t)(nul - t), 1), "path contains a NUL byte");
	bool any_root = n >= 3 && memcmp(t, "**/", 3) == 0;
	if (t[0] != '/' && !any_root) {
		serr(s, xs_loc(x, start, n), "path '%s' is not absolute", show(b1, t, n));
		if (t[0] == '~')
			diag_note(s->dc, LOC_NONE, "'~' is not expanded; write '${HOME}' and pass -D HOME=...");
		else
			diag_note(s->dc, LOC_NONE, "bee matches the absolute paths the kernel sees; start it with '/'");
		return -1;
	}
	if (n > SCHEMA_PATH_MAX)
		return serr(s, xs_loc(x, start, n), "path is %zu bytes long, more than %d", n, SCHEMA_PATH_MAX);

	/* each segment starts after a '/' */
	for (size_t i = any_root ? 2 : 0; i < n; i++) {
		if (t[i] != '/')
			continue;
		size_t e = i + 1;
		while (e < n && t[e] != '/')
			e++;
		size_t seg = e - i - 1;
		if (seg == 0 && e < n) {
			serr(s, xs_loc(x, start + i, 2), "empty segment '//' in path '%s'", show(b1, t, n));
		} else if (seg == 0 && n > 1) {
			serr(s, xs_loc(x, start + i, 1), "path '%s' ends with '/'", show(b1, t, n));
			char *tidy = path_tidy(t, n);
			diag_note(s->dc, LOC_NONE,
				  "write '%s/**' for everything below the directory, or '%s' for the directory itself",
				  tidy, tidy);
			free(tidy);
			return -1;
		} else if (seg == 1 && t[i + 1] == '.') {
			serr(s, xs_loc(x, start + i + 1, 1), "'.' segment in path '%s'", show(b1, t, n));
		} else if (seg == 2 && t[i + 1] == '.' && t[i + 2] == '.') {
			serr(s, xs_loc(x, start + i + 1, 2), "'..' is not allowed in a path");
			diag_note(s->dc, LOC_NONE,
				  "bee matches the path the kernel resolves; write it without '..'");
			return -1;
		} else {
			continue;
		}
		char *tidy = path_tidy(t, n);
		diag_note(s->dc, LOC_NONE, "did you mean '%s'?", tidy);
		free(tidy);
		return -1;
	}
	return glob_check(s, x, start, g);
}

/* ---- protected paths ----------------------------------------------------
 *
 * Can a path glob match a protected path itself or anything below it?
 * Each alternative of the parsed glob is walked over the bytes of the
 * protected path; once those are used up, what is left of the glob must be
 * able to match the empty string or something that starts with '/'. A
 * '**' met on the way can always go on below the protected path. Where a
 * walk cannot be sure it says yes: a write grant is refused when in doubt.
 */

struct reach {
	const struct glob_item *it;
	size_t n;
	const char *p;       /* the protected path */
	size_t pn;
	unsigned char *memo; /* (item, byte) -> 0 unknown, 1 no, 2 yes */
};

/* With the protected path used up: can items [ii..] match "" or "/..."? */
static bool reach_tail(const struct reach *r, size_t ii)
{
	for (; ii < r->n; ii++) {
		const struct glob_item *it = &r->it[ii];
		switch (it->kind) {
		case GLOB_ITEM_BYTE:
			return glob_byteset_has(&it->set, '/');
		case GLOB_ITEM_STAR:
			/* it must match nothing: a byte it took would not be '/' */
			if (glob_byteset_has(&it->set, '/'))
				return true;
			continue;
		case GLOB_ITEM_ANY:
		case GLOB_ITEM_DIRS:
			return true;
		}
	}
	return true;
}

static bool reach_at(struct reach *r, size_t ii, size_t si)
{
	if (si == r->pn)
		return reach_tail(r, ii);
	if (ii == r->n)
		return false;
	unsigned char *m = &r->memo[ii * (r->pn + 1) + si];
	if (*m)
		return *m == 2;
	const struct glob_item *it = &r->it[ii];
	bool yes = false;
	switch (it->kind) {
	case GLOB_ITEM_BYTE:
		yes = glob_byteset_has(&it->set, (unsigned char)r->p[si]) && reach_at(r, ii + 1, si + 1);
		break;
	case GLOB_ITEM_STAR:
		if (glob_byteset_has(&it->set, '/')) {
			yes = true;
			break;
		}
		for (size_t k = si;; k++) {
			if (reach_at(r, ii + 1, k)) {
				yes = true;
				break;
			}
			if (k == r->pn || !glob_byteset_has(&it->set, (unsigned char)r->p[k]))
				break;
		}
		break;
	case GLOB_ITEM_ANY:
	case GLOB_ITEM_DIRS:
		/* it can take the rest of the protected path, a '/' and more */
		yes = true;
		break;
	}
	*m = yes ? 2 : 1;
	return yes;
}

/* The first protected path that g can match or reach below, or NULL. */
static const char *protected_reach(const struct glob *g)
{
	for (const char *const *pp = protected_paths; *pp; pp++) {
		for (size_t a = 0; a < g->nalts; a++) {
			struct reach r = {
				.it = g->alts[a].items, .n = g->alts[a].n, .p = *pp, .pn = strlen(*pp),
			};
			r.memo = xcalloc((r.n + 1) * (r.pn + 1), 1);
			bool hit = reach_at(&r, 0, 0);
			free(r.memo);
			if (hit)
				return *pp;
		}
	}
	return NULL;
}

/* ---- rules ------------------------------------------------------------- */

static const char *kind_name(enum ir_rule_kind k, char buf[32])
{
	snprintf(buf, 32, "%s.%s", ir_domain_name(ir_rule_kind_domain(k)), ir_rule_kind_key(k));
	return buf;
}

static bool same_rule(const struct ir_rule *a, const struct ir_rule *b)
{
	if (a->kind != b->kind)
		return false;
	switch (a->kind) {
	case IR_RULE_FS_READ:
	case IR_RULE_FS_WRITE:
	case IR_RULE_FS_DENY:
	case IR_RULE_ENV_ALLOW:
	case IR_RULE_ENV_SET:
		return strcmp(a->text, b->text) == 0;
	case IR_RULE_EXEC_ALLOW:
		return a->exec.pinned == b->exec.pinned && strcmp(a->text, b->text) == 0;
	case IR_RULE_NET_CONNECT:
	case IR_RULE_NET_BIND:
	case IR_RULE_NET_DENY:
		return a->net.family == b->net.family && a->net.prefix == b->net.prefix &&
		       memcmp(a->net.addr, b->net.addr, sizeof(a->net.addr)) == 0 &&
		       a->net.port_lo == b->net.port_lo && a->net.port_hi == b->net.port_hi &&
		       a->net.proto == b->net.proto;
	case IR_RULE_NET_HOST:
		return strcmp(a->host.name, b->host.name) == 0 && a->host.port_lo == b->host.port_lo &&
		       a->host.port_hi == b->host.port_hi && a->host.proto == b->host.proto;
	case IR_RULE_KIND_COUNT:
		break;
	}
	return false;
}

/* A hash of what same_rule compares (equal rules, equal hashes). */
static uint64_t rule_hash(const struct ir_rule *r)
{
	switch (r->kind) {
	case IR_RULE_FS_READ:
	case IR_RULE_FS_WRITE:
	case IR_RULE_FS_DENY:
	case IR_RULE_ENV_ALLOW:
	case IR_RULE_ENV_SET:
	case IR_RULE_EXEC_ALLOW:
		return XXH3_64bits_withSeed(r->text, strlen(r->text), r->kind);
	case IR_RULE_NET_CONNECT:
	case IR_RULE_NET_BIND:
	case IR_RULE_NET_DENY: {
		uint8_t key[24];
		memcpy(key, r->net.addr, 16);
		memcpy(key + 16, &r->net.port_lo, 2);
		memcpy(key + 18, &r->net.port_hi, 2);
		key[20] = r->net.prefix;
		key[21] = (uint8_t)r->net.proto;
		key[22] = (uint8_t)r->net.family;
		key[23] = 0;
		return XXH3_64bits_withSeed(key, sizeof(key), r->kind);
	}
	case IR_RULE_NET_HOST:
		return XXH3_64bits_withSeed(r->host.name, strlen(r->host.name),
					    r->kind ^ ((uint64_t)r->host.port_lo << 8) ^ ((uint64_t)r->host.port_hi << 24) ^
					    ((uint64_t)r->host.proto << 40));
	case IR_RULE_KIND_COUNT:
		break;
	}
	return 0;
}

/* The slot of r's content: where an equal rule sits, or an empty one. */
static size_t rule_slot(const struct schema *s, const struct ir_rule *r)
{
	size_t i = (size_t)rule_hash(r) & (s->nslots - 1);
	while (s->slots[i] && !same_rule(&s->rules[s->slots[i] - 1], r))
		i = (i + 1) & (s->nslots - 1);
	return i;
}

/* Adds r unless the same rule is already in its list (then warns). A hash
 * of the rules finds duplicates: a policy of many rules stays linear. */
static void rule_add(struct schema *s, const struct ir_rule *r, const char *shown)
{
	char kb[32], b1[SHOWLEN];
	if (s->nrules * 2 >= s->nslots) {
		free(s->slots);
		s->nslots = s->nslots ? s->nslots * 2 : 256;
		s->slots = xcalloc(s->nslots, sizeof(*s->slots));
		for (size_t i = 0; i < s->nrules; i++)
			s->slots[rule_slot(s, &s->rules[i])] = (uint32_t)(i + 1);
	}
	size_t slot = rule_slot(s, r);
	if (s->slots[slot]) {
		const struct ir_rule *first = &s->rules[s->slots[slot] - 1];
		swarn(s, r->loc, "duplicate entry '%s' in '%s'", show(b1, shown, strlen(shown)),
		      kind_name(r->kind, kb));
		diag_note(s->dc, first->loc, "first listed here");
		return;
	}
	if (s->nrules >= s->lim.rules) {
		char what[64];
		snprintf(what, sizeof(what), "policy of %zu rules", s->nrules + 1);
		limit_error(s, r->loc, BEEC_LIMIT_rules, what);
		return;
	}
	struct ir_rule *d = VEC_PUSH(s->rules, s->nrules, s->cap);
	*d = *r;
	d->index = (unsigned)(s->nrules - 1);
	s->slots[slot] = (uint32_t)s->nrules;
}

static int pin_outside_exec(struct schema *s, const struct xstr *x, enum ir_rule_kind kind)
{
	char kb[32];
	serr(s, xs_loc(x, 0, 1), "inode pins ('!') are only valid in [exec], not in '%s'",
	     kind_name(kind, kb));
	diag_note(s->dc, LOC_NONE, "'!' pins the file an [exec] path names when the policy is loaded");
	return -1;
}

static void add_path_rule(struct schema *s, const struct xstr *x, enum ir_rule_kind kind)
{
	char b1[SHOWLEN];
	size_t start = 0;
	bool pinned = false;
	struct glob g;
	if (x->n && x->s[0] == '!') {
		if (kind != IR_RULE_EXEC_ALLOW) {
			pin_outside_exec(s, x, kind);
			return;
		}
		pinned = true;
		start = 1;
	}
	if (check_path(s, x, start, &g) < 0)
		return;
	const char *t = x->s + start;
	/* "**" + "/..." covers the root: its normal form starts with '/' */
	const char *text = t[0] == '/' ? arena_strdup(&s->pol->arena, t)
				       : arena_printf(&s->pol->arena, "/%s", t);
	if (pinned && !glob_is_literal(&g)) {
		serr(s, xs_loc(x, start, x->n - start), "an inode pin needs one file, not a glob");
		diag_note(s->dc, LOC_NONE, "'!' pins the inode of one file when the policy is loaded; "
					   "name the file or drop the '!'");
		goto out;
	}
	/* a pin's text is the file's own path, escapes resolved: the loader
	 * opens it, and lowering matches it literally */
	if (pinned)
		text = glob_literal_text(&g, &s->pol->arena);
	if (kind == IR_RULE_FS_WRITE) {
		const char *prot = protected_reach(&g);
		if (prot) {
			serr(s, xs_loc(x, 0, x->n), "write grant '%s' can reach protected kernel interface '%s'",
			     show(b1, text, strlen(text)), prot);
			diag_note(s->dc, LOC_NONE, "bee never grants write below /sys/fs/cgroup, /sys/fs/bpf, "
						   "/proc/sys or /sys/kernel/security; narrow the pattern");
			goto out;
		}
	}
	struct ir_rule r = { .kind = kind, .loc = x->node->loc, .text = text };
	if (kind == IR_RULE_EXEC_ALLOW)
		r.exec.pinned = pinned;
	rule_add(s, &r, x->s);
out:
	glob_fini(&g);
}

/* A host name: only a connect grant may name one (bind takes a local
 * address; a deny of a name would be a deny the kernel cannot keep, since
 * the name's addresses are learnt at run time) */
static void add_host_rule(struct schema *s, const struct xstr *x, enum ir_rule_kind kind)
{
	struct netaddr_err e;
	char name[HOSTNAME_BUFLEN], kb[32];
	struct ir_rule r = { .kind = IR_RULE_NET_HOST, .loc = x->node->loc };
	if (netaddr_parse_host(x->s, x->n, name, &r.host, NULL, &e) < 0) {
		serr(s, xs_loc(x, e.off, e.len), "%s", e.msg);
		if (e.note[0])
			diag_note(s->dc, LOC_NONE, "%s", e.note);
		return;
	}
	if (kind != IR_RULE_NET_CONNECT) {
		size_t hl = strcspn(x->s, ":/");
		serr(s, xs_loc(x, 0, hl), "'%s' takes addresses, not host names", kind_name(kind, kb));
		diag_note(s->dc, LOC_NONE, kind == IR_RULE_NET_DENY
			  ? "a name's addresses are learnt while the session runs; deny the addresses or a CIDR range"
			  : "bind to a local address, as in '127.0.0.1:8080'");
		return;
	}
	r.text = arena_strdup(&s->pol->arena, x->s);
	r.host.name = arena_strdup(&s->pol->arena, name);
	char shown[IR_HOST_STRLEN];
	ir_host_format(&r.host, shown);
	rule_add(s, &r, shown);
}

static void add_net_rule(struct schema *s, const struct xstr *x, enum ir_rule_kind kind)
{
	struct netaddr_err e;
	struct ir_net net;
	bool proto_given;
	if (x->n && x->s[0] == '!') {
		pin_outside_exec(s, x, kind);
		return;
	}
	if (netaddr_is_host(x->s, x->n)) {
		add_host_rule(s, x, kind);
		return;
	}
	if (netaddr_parse(x->s, x->n, &net, &proto_given, &e) < 0) {
		serr(s, xs_loc(x, e.off, e.len), "%s", e.msg);
		if (e.note[0])
			diag_note(s->dc, LOC_NONE, "%s", e.note);
		return;
	}
	struct ir_rule r = {
		.kind = kind, .loc = x->node->loc, .text = arena_strdup(&s->pol->arena, x->s), .net = net,
	};
	char shown[IR_NET_STRLEN];
	ir_net_format(&net, shown);
	rule_add(s, &r, shown);
	/* A grant without a protocol is tcp only, the narrower reading; a deny
	 * without one is for tcp and udp alike, so that it cannot leave a hole. */
	if (kind == IR_RULE_NET_DENY && !proto_given) {
		r.net.proto = IR_NET_UDP;
		ir_net_format(&r.net, shown);
		rule_add(s, &r, shown);
	}
}

static void add_env_allow(struct schema *s, const struct xstr *x)
{
	if (x->n && x->s[0] == '!') {
		pin_outside_exec(s, x, IR_RULE_ENV_ALLOW);
		return;
	}
	if (env_pattern_check(s, x) < 0)
		return;
	struct ir_rule r = {
		.kind = IR_RULE_ENV_ALLOW, .loc = x->node->loc, .text = arena_strdup(&s->pol->arena, x->s),
	};
	rule_add(s, &r, x->s);
}

/* key = ["...", ...] of rules of one kind */
static void rule_list(struct schema *s, const struct toml_kv *kv, enum ir_rule_kind kind)
{
	char kb[32], b1[SHOWLEN];
	const struct toml_node *v = kv->val;
	const char *what = kind_name(kind, kb);
	if (v->type != TOML_ARRAY || v->arr.of_tables) {
		serr(s, v->loc, "'%s' must be an array of strings, found %s", what, node_type(v));
		if (v->type == TOML_STRING)
			diag_note(s->dc, LOC_NONE, "write a list: %s = [\"%s\"]", ir_rule_kind_key(kind),
				  show(b1, v->str.ptr, v->str.len));
		return;
	}
	for (size_t i = 0; i < v->arr.n && !stop(s); i++) {
		const struct toml_node *it = v->arr.items[i];
		if (it->type != TOML_STRING) {
			serr(s, it->loc, "entries of '%s' must be strings, found %s", what, node_type(it));
			continue;
		}
		struct xstr x;
		if (expand(s, it, &x) == 0) {
			switch (kind) {
			case IR_RULE_FS_READ:
			case IR_RULE_FS_WRITE:
			case IR_RULE_FS_DENY:
			case IR_RULE_EXEC_ALLOW:
				add_path_rule(s, &x, kind);
				break;
			case IR_RULE_NET_CONNECT:
			case IR_RULE_NET_BIND:
			case IR_RULE_NET_DENY:
			case IR_RULE_NET_HOST:
				add_net_rule(s, &x, kind);
				break;
			case IR_RULE_ENV_ALLOW:
				add_env_allow(s, &x);
				break;
			case IR_RULE_ENV_SET:
			case IR_RULE_KIND_COUNT:
				break;
			}
		}
		xs_fini(&x);
	}
}

/* env.set = { NAME = "value", ... } */
static void env_set(struct schema *s, const struct toml_kv *kv)
{
	char b1[SHOWLEN], b2[SHOWLEN];
	const struct toml_node *v = kv->val;
	if (v->type != TOML_TABLE) {
		serr(s, v->loc, "'env.set' must be a table of strings, found %s", node_type(v));
		diag_note(s->dc, LOC_NONE, "write it as set = { NAME = \"value\" }");
		return;
	}
	for (size_t i = 0; i < v->tab.n && !stop(s); i++) {
		const struct toml_kv *e = &v->tab.items[i];
		const char *key = show(b1, e->key, e->keylen);
		if (!valid_name(e->key, e->keylen)) {
			serr(s, e->key_loc, "invalid environment variable name '%s'", key);
			diag_note(s->dc, LOC_NONE, "a name is a letter or '_' followed by letters, digits or '_'");
			continue;
		}
		const struct toml_node *val = e->val;
		if (val->type != TOML_STRING) {
			serr(s, val->loc, "'env.set.%s' must be a string, found %s", key, node_type(val));
			if (val->type == TOML_INTEGER)
				diag_note(s->dc, LOC_NONE, "environment values are text; write %s = \"%lld\"",
					  key, (long long)val->integer);
			else if (val->type == TOML_BOOL)
				diag_note(s->dc, LOC_NONE, "environment values are text; write %s = \"%s\"",
					  key, val->boolean ? "true" : "false");
			continue;
		}
		struct xstr x;
		if (expand(s, val, &x) == 0) {
			const char *nul = memchr(x.s, '\0', x.n);
			if (nul) {
				serr(s, xs_loc(&x, (size_t)(nul - x.s), 1), "value of '%s' contains a NUL byte", key);
			} else {
				struct ir_rule r = {
					.kind = IR_RULE_ENV_SET, .loc = e->key_loc,
					.text = arena_strndup(&s->pol->arena, e->key, e->keylen),
					.env_set.value = arena_strdup(&s->pol->arena, x.s),
				};
				rule_add(s, &r, show(b2, e->key, e->keylen));
			}
		}
		xs_fini(&x);
	}
}

/* ---- tables ------------------------------------------------------------ */

/* diag_suggest, or else the one candidate that shares its first three
 * letters with word ("denied" -> "deny") */
static const char *suggest_word(const char *word, const char *const *cands)
{
	const char *near = diag_suggest(word, cands), *prefix = NULL;
	if (near || strlen(word) < 3)
		return near;
	for (const char *const *c = cands; *c; c++) {
		if (strncmp(*c, word, 3) == 0) {
			if (prefix)
				return NULL;
			prefix = *c;
		}
	}
	return prefix;
}

static void unknown_key(struct schema *s, const struct toml_kv *kv, const char *table,
			const char *const *keys)
{
	char b1[SHOWLEN];
	const char *key = show(b1, kv->key, kv->keylen);
	bool header = kv->val->type == TOML_TABLE && (kv->val->tab.origin == TOML_TABLE_HEADER ||
						       kv->val->tab.origin == TOML_TABLE_IMPLICIT);
	if (header && table)
		serr(s, kv->key_loc, "unknown table [%s.%s]", table, key);
	else if (header)
		serr(s, kv->key_loc, "unknown table [%s]", key);
	else if (table)
		serr(s, kv->key_loc, "unknown key '%s' in [%s]", key, table);
	else
		serr(s, kv->key_loc, "unknown key '%s'", key);
	const char *near = suggest_word(key, keys);
	if (near) {
		diag_note(s->dc, kv->key_loc, "did you mean '%s'?", near);
		return;
	}
	if (table)
		return;
	/* a table's key written at the top, or a table under another name */
	static const struct { const char *word, *table; } aliases[] = {
		{ "filesystem", "fs" }, { "files", "fs" }, { "file", "fs" }, { "paths", "fs" },
		{ "network", "net" }, { "exe", "exec" }, { "process", "exec" }, { "programs", "exec" },
		{ "environment", "env" }, { "log", "audit" }, { "logging", "audit" },
		{ "seccomp", "syscalls" }, { "system-calls", "syscalls" },
	};
	for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++) {
		if (strcmp(key, aliases[i].word) == 0) {
			diag_note(s->dc, kv->key_loc, "did you mean '%s'?", aliases[i].table);
			return;
		}
	}
#define X(name, dom, k)                                                                 \
	if (strcmp(key, k) == 0) {                                                      \
		diag_note(s->dc, kv->key_loc, "'%s' belongs in a table, as in [%s]", k,  \
			  ir_domain_name(IR_DOMAIN_##dom));                             \
		return;                                                                 \
	}
	IR_RULE_KINDS(X)
#undef X
	if (strcmp(key, "decisions") == 0)
		diag_note(s->dc, kv->key_loc, "'decisions' belongs in a table, as in [audit]");
}

static bool expect_table(struct schema *s, const struct toml_kv *kv, const char *name)
{
	if (kv->val->type == TOML_TABLE)
		return true;
	serr(s, kv->val->loc, "'%s' must be a table, found %s", name, node_type(kv->val));
	if (kv->val->type == TOML_ARRAY && kv->val->arr.of_tables)
		diag_note(s->dc, LOC_NONE, "write [%s] once, not [[%s]]", name, name);
	return false;
}

/* [fs], [exec], [net] or [env] */
static void domain_table(struct schema *s, const struct toml_kv *kv, enum ir_domain dom)
{
	const char *tname = ir_domain_name(dom);
	if (!expect_table(s, kv, tname))
		return;
	const char *keys[IR_RULE_KIND_COUNT + 1];
	size_t nk = 0;
	for (unsigned k = 0; k < IR_RULE_KIND_COUNT; k++)
		if (ir_rule_kind_domain(k) == dom && k != IR_RULE_NET_HOST)   /* connect's key */
			keys[nk++] = ir_rule_kind_key(k);
	keys[nk] = NULL;

	const struct toml_node *t = kv->val;
	for (size_t i = 0; i < t->tab.n && !stop(s); i++) {
		const struct toml_kv *e = &t->tab.items[i];
		unsigned kind = IR_RULE_KIND_COUNT;
		for (unsigned k = 0; k < IR_RULE_KIND_COUNT; k++)
			if (kind == IR_RULE_KIND_COUNT && ir_rule_kind_domain(k) == dom &&
			    key_is(e, ir_rule_kind_key(k)))
				kind = k;   /* the first: connect, whose host names add_net_rule tells apart */
		if (kind == IR_RULE_KIND_COUNT)
			unknown_key(s, e, tname, keys);
		else if (kind == IR_RULE_ENV_SET)
			env_set(s, e);
		else
			rule_list(s, e, kind);
	}
}

static void audit_table(struct schema *s, const struct toml_kv *kv)
{
	char b1[SHOWLEN];
	static const char *const keys[] = { "decisions", NULL };
	static const char *const modes[] = {
#define X(name, str) str,
		IR_AUDIT_MODES(X)
#undef X
		NULL,
	};
	if (!expect_table(s, kv, "audit"))
		return;
	const struct toml_node *t = kv->val;
	for (size_t i = 0; i < t->tab.n && !stop(s); i++) {
		const struct toml_kv *e = &t->tab.items[i];
		if (!key_is(e, "decisions")) {
			unknown_key(s, e, "audit", keys);
			continue;
		}
		const struct toml_node *v = e->val;
		if (v->type != TOML_STRING) {
			serr(s, v->loc, "'audit.decisions' must be a string, found %s", node_type(v));
			diag_note(s->dc, LOC_NONE, "write one of \"deny\", \"all\" or \"none\"");
			continue;
		}
		struct xstr x;
		if (expand(s, v, &x) == 0) {
			bool found = false;
#define X(name, str)                                          \
			if (strcmp(x.s, str) == 0 && x.n == strlen(str)) { \
				s->pol->audit = IR_AUDIT_##name;      \
				found = true;                         \
			}
			IR_AUDIT_MODES(X)
#undef X
			if (!found) {
				const char *word = show(b1, x.s, x.n);
				serr(s, xs_loc(&x, 0, x.n), "unknown audit mode '%s'", word);
				char lower[SHOWLEN];
				size_t k = 0;
				for (; word[k]; k++)
					lower[k] = word[k] >= 'A' && word[k] <= 'Z' ? (char)(word[k] - 'A' + 'a') : word[k];
				lower[k] = '\0';
				const char *near = suggest_word(lower, modes);
				if (near)
					diag_note(s->dc, xs_loc(&x, 0, x.n), "did you mean '%s'?", near);
				diag_note(s->dc, LOC_NONE, "'deny' logs denied decisions, 'all' every decision, 'none' nothing");
			}
		}
		xs_fini(&x);
	}
}

/* [syscalls] allow = ["bpf", ...]: the groups of runtime/bee_syscalls.h
 * that the session's seccomp filter (and the bpf hook) let through. */
static void syscalls_allow(struct schema *s, const struct toml_kv *kv)
{
	char b1[SHOWLEN];
	const char *names[BEE_SYSCALLS_COUNT + 1];
	for (unsigned g = 0; g < BEE_SYSCALLS_COUNT; g++)
		names[g] = bee_syscall_groups[g].name;
	names[BEE_SYSCALLS_COUNT] = NULL;
	const struct toml_node *v = kv->val;
	if (v->type != TOML_ARRAY || v->arr.of_tables) {
		serr(s, v->loc, "'syscalls.allow' must be an array of strings, found %s", node_type(v));
		if (v->type == TOML_STRING)
			diag_note(s->dc, LOC_NONE, "write a list: allow = [\"%s\"]",
				  show(b1, v->str.ptr, v->str.len));
		return;
	}
	for (size_t i = 0; i < v->arr.n && !stop(s); i++) {
		const struct toml_node *it = v->arr.items[i];
		if (it->type != TOML_STRING) {
			serr(s, it->loc, "entries of 'syscalls.allow' must be strings, found %s", node_type(it));
			continue;
		}
		struct xstr x;
		if (expand(s, it, &x) == 0) {
			unsigned g = 0;
			while (g < BEE_SYSCALLS_COUNT && !(strlen(names[g]) == x.n && memcmp(names[g], x.s, x.n) == 0))
				g++;
			struct loc at = xs_loc(&x, 0, x.n);
			const char *word = show(b1, x.s, x.n);
			if (g == BEE_SYSCALLS_COUNT) {
				serr(s, at, "unknown system call group '%s'", word);
				const char *near = suggest_word(word, names);
				if (near)
					diag_note(s->dc, at, "did you mean '%s'?", near);
				else
					diag_note(s->dc, LOC_NONE, "the groups are listed in bee-policy(5), "
						  "section SYSCALLS");
			} else if (s->pol->syscalls & (1u << g)) {
				swarn(s, at, "duplicate entry '%s' in 'syscalls.allow'", word);
				diag_note(s->dc, s->pol->syscalls_loc[g], "first listed here");
			} else {
				s->pol->syscalls |= 1u << g;
				s->pol->syscalls_loc[g] = at;
			}
		}
		xs_fini(&x);
	}
}

static void syscalls_table(struct schema *s, const struct toml_kv *kv)
{
	static const char *const keys[] = { "allow", NULL };
	if (!expect_table(s, kv, "syscalls"))
		return;
	const struct toml_node *t = kv->val;
	for (size_t i = 0; i < t->tab.n && !stop(s); i++) {
		const struct toml_kv *e = &t->tab.items[i];
		if (key_is(e, "allow"))
			syscalls_allow(s, e);
		else
			unknown_key(s, e, "syscalls", keys);
	}
}

static void version_key(struct schema *s, const struct toml_kv *kv)
{
	const struct toml_node *v = kv->val;
	s->seen_version = true;
	if (v->type != TOML_INTEGER) {
		serr(s, v->loc, "'version' must be an integer, found %s", node_type(v));
		if (v->type == TOML_STRING)
			diag_note(s->dc, LOC_NONE, "write it without quotes: version = %d", IR_SCHEMA_VERSION);
		return;
	}
	if (v->integer != IR_SCHEMA_VERSION) {
		serr(s, v->loc, "unsupported policy version %lld", (long long)v->integer);
		diag_note(s->dc, LOC_NONE, "this beec reads policy version %d", IR_SCHEMA_VERSION);
		return;
	}
	s->pol->version = (unsigned)v->integer;
}

static bool name_char(char c)
{
	return is_name_char(c) || c == '.' || c == '-';
}

static void name_key(struct schema *s, const struct toml_kv *kv)
{
	char b1[SHOWLEN], b2[SHOWLEN];
	const struct toml_node *v = kv->val;
	s->seen_name = true;
	if (v->type != TOML_STRING) {
		serr(s, v->loc, "'name' must be a string, found %s", node_type(v));
		return;
	}
	struct xstr x;
	if (expand(s, v, &x) < 0)
		goto out;
	if (x.n == 0) {
		serr(s, v->loc, "policy name is empty");
		goto out;
	}
	if (x.n > SCHEMA_NAME_MAX) {
		serr(s, xs_loc(&x, SCHEMA_NAME_MAX, x.n - SCHEMA_NAME_MAX),
		     "policy name is %zu bytes long, more than %d", x.n, SCHEMA_NAME_MAX);
		goto out;
	}
	for (size_t i = 0; i < x.n; i++) {
		if (!name_char(x.s[i])) {
			serr(s, xs_loc(&x, i, 1), "invalid character '%s' in policy name '%s'",
			     show(b1, x.s + i, 1), show(b2, x.s, x.n));
			diag_note(s->dc, LOC_NONE, "a name holds letters, digits, '.', '_' and '-'");
			goto out;
		}
	}
	s->pol->name = arena_strdup(&s->pol->arena, x.s);
	s->pol->name_loc = v->loc;
out:
	xs_fini(&x);
}

static void parent_key(struct schema *s, const struct toml_kv *kv)
{
	const struct toml_node *v = kv->val;
	if (v->type != TOML_STRING) {
		serr(s, v->loc, "'parent' must be a string, found %s", node_type(v));
		diag_note(s->dc, LOC_NONE, "write the path of the parent policy, as in parent = \"parent.toml\"");
		return;
	}
	struct xstr x;
	if (expand(s, v, &x) < 0)
		goto out;
	if (x.n == 0) {
		serr(s, v->loc, "parent policy path is empty");
		goto out;
	}
	const char *nul = memchr(x.s, '\0', x.n);
	if (nul) {
		serr(s, xs_loc(&x, (size_t)(nul - x.s), 1), "parent policy path contains a NUL byte");
		goto out;
	}
	s->pol->parent = arena_strdup(&s->pol->arena, x.s);
	s->pol->parent_loc = v->loc;
out:
	xs_fini(&x);
}

/* include = ["python3", "local.toml"] (record: false), or the merge's
 * included = ["NAME PATH xxh3:HEX"] (record: true): arrays of non-empty
 * strings, kept as written after ${NAME} expansion. */
static void include_key(struct schema *s, const struct toml_kv *kv, bool record)
{
	const char *key = record ? "included" : "include";
	const struct toml_node *v = kv->val;
	if (v->type != TOML_ARRAY) {
		serr(s, v->loc, "'%s' must be an array of strings, found %s", key, node_type(v));
		if (v->type == TOML_STRING)
			diag_note(s->dc, LOC_NONE, "write a list: %s = [\"...\"]", key);
		return;
	}
	const char **names = arena_alloc(&s->pol->arena, (v->arr.n + 1) * sizeof(char *));
	struct loc *locs = arena_alloc(&s->pol->arena, (v->arr.n + 1) * sizeof(struct loc));
	size_t n = 0;
	for (size_t i = 0; i < v->arr.n && !stop(s); i++) {
		const struct toml_node *it = v->arr.items[i];
		if (it->type != TOML_STRING) {
			serr(s, it->loc, "entries of '%s' must be strings, found %s", key, node_type(it));
			continue;
		}
		struct xstr x;
		if (expand(s, it, &x) == 0) {
			if (x.n == 0 || memchr(x.s, '\0', x.n))
				serr(s, it->loc, "an entry of '%s' is empty or holds a NUL byte", key);
			else {
				names[n] = arena_strdup(&s->pol->arena, x.s);
				locs[n++] = it->loc;
			}
		}
		xs_fini(&x);
	}
	if (record) {
		s->pol->included = names;
		s->pol->nincluded = n;
	} else {
		s->pol->includes = names;
		s->pol->includes_loc = locs;
		s->pol->nincludes = n;
	}
}

static void top_level(struct schema *s, const struct toml_node *root)
{
	static const char *const keys[] = {
		"version", "name", "parent", "include", "fs", "exec", "net", "env", "audit", "syscalls", NULL,
	};
	for (size_t i = 0; i < root->tab.n && !stop(s); i++) {
		const struct toml_kv *kv = &root->tab.items[i];
		if (key_is(kv, "version"))
			version_key(s, kv);
		else if (key_is(kv, "name"))
			name_key(s, kv);
		else if (key_is(kv, "parent"))
			parent_key(s, kv);
		else if (key_is(kv, "include"))
			include_key(s, kv, false);
		else if (key_is(kv, "included"))
			include_key(s, kv, true);
		else if (key_is(kv, "audit"))
			audit_table(s, kv);
		else if (key_is(kv, "syscalls"))
			syscalls_table(s, kv);
		else {
			enum ir_domain dom = IR_DOMAIN_COUNT;
#define X(name, str) if (key_is(kv, str)) dom = IR_DOMAIN_##name;
			IR_DOMAINS(X)
#undef X
			if (dom == IR_DOMAIN_COUNT)
				unknown_key(s, kv, NULL, keys);
			else
				domain_table(s, kv, dom);
		}
	}
	if (stop(s))
		return;
	if (!s->seen_version) {
		serr(s, loc_start(s), "missing required key 'version'");
		diag_note(s->dc, LOC_NONE, "start the policy with 'version = %d'", IR_SCHEMA_VERSION);
	}
	if (!s->seen_name) {
		serr(s, loc_start(s), "missing required key 'name'");
		diag_note(s->dc, LOC_NONE, "name the policy, as in name = \"cargo-test\"");
	}
}

static int check_defines(struct schema *s)
{
	char b1[SHOWLEN];
	for (size_t i = 0; i < s->ndefines; i++) {
		const char *d = s->defines[i];
		const char *eq = strchr(d, '=');
		if (!eq || !valid_name(d, (size_t)(eq - d))) {
			serr(s, LOC_NONE, "invalid define '%s': expected NAME=VALUE", show(b1, d, strlen(d)));
			return -1;
		}
	}
	return 0;
}

int schema_build(const struct toml_doc *doc, const struct schema_opts *opts,
		 struct diag_ctx *dc, struct ir_policy **out)
{
	struct schema s = { .dc = dc, .src = doc->src };
	*out = NULL;
	if (opts && opts->sz >= offsetof(struct schema_opts, ndefines) + sizeof(opts->ndefines)) {
		s.defines = opts->defines;
		s.ndefines = opts->defines ? opts->ndefines : 0;
	}
	s.lim = beec_limits_resolve(opts && opts->sz >= offsetof(struct schema_opts, limits) +
						   sizeof(opts->limits) ? opts->limits : NULL);
	s.pol = xcalloc(1, sizeof(*s.pol));
	s.pol->src = doc->src;
	s.pol->audit = IR_AUDIT_DENY;

	if (check_defines(&s) == 0)
		top_level(&s, doc->root);

	free(s.slots);
	if (s.failed) {
		free(s.rules);
		ir_policy_free(s.pol);
		return -1;
	}
	s.pol->rules = arena_alloc(&s.pol->arena, s.nrules * sizeof(*s.rules));
	if (s.nrules)
		memcpy(s.pol->rules, s.rules, s.nrules * sizeof(*s.rules));
	s.pol->nrules = s.nrules;
	free(s.rules);
	*out = s.pol;
	return 0;
}
