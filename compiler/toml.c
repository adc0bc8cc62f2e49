/* SPDX-License-Identifier: GPL-2.0-only */
/* toml.c: TOML 1.0 documents: value decoding for the scanner, the builders
 * behind the grammar (with the spec's rules on defining tables and keys),
 * the parse driver and the two dumps. */
#include "toml_parse.h"
#include "mem.h"
#include "toml.tab.h"
#include "toml.lex.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static const char *const toml_type_names[] = {
#define X(name, str) [TOML_##name] = str,
	TOML_TYPES(X)
#undef X
};

const char *toml_type_name(enum toml_type t)
{
	return toml_type_names[t];
}

static struct toml_node *node_new(struct toml_parser *p, enum toml_type t, struct loc l)
{
	struct toml_node *n = arena_alloc(&p->doc->arena, sizeof(*n));
	n->type = t;
	n->loc = l;
	return n;
}

static struct loc loc_at(struct toml_parser *p, uint32_t off, uint32_t len)
{
	return (struct loc){ p->src, off, len };
}

/* ---- UTF-8 ------------------------------------------------------------ */

/* Length of the well-formed UTF-8 sequence at s (RFC 3629: no overlongs,
 * no surrogates, nothing above U+10FFFF), or 0 when it is not one. */
static size_t utf8_seq(const unsigned char *s, size_t n, uint32_t *cp)
{
	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	size_t len;
	uint32_t min, c;
	if ((s[0] & 0xe0) == 0xc0) {
		len = 2, min = 0x80, c = s[0] & 0x1f;
	} else if ((s[0] & 0xf0) == 0xe0) {
		len = 3, min = 0x800, c = s[0] & 0x0f;
	} else if ((s[0] & 0xf8) == 0xf0) {
		len = 4, min = 0x10000, c = s[0] & 0x07;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return len;
}

static int utf8_validate(struct toml_parser *p)
{
	const unsigned char *s = (const unsigned char *)p->src->text;
	size_t n = p->src->len;
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		size_t len = utf8_seq(s + i, n - i, &cp);
		if (!len)
			return diag_error(p->dc, loc_at(p, (uint32_t)i, 1),
					  "invalid UTF-8 byte 0x%02x: a policy must be UTF-8 text", s[i]);
		i += len;
	}
	return 0;
}

static size_t utf8_put(char *out, uint32_t cp)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | cp >> 6);
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | cp >> 12);
		out[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | cp >> 18);
	out[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	out[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* ---- scanner helpers -------------------------------------------------- */

void toml_lex_buf_reset(struct toml_parser *p)
{
	p->blen = 0;
}

void toml_lex_buf_add(struct toml_parser *p, const char *s, size_t n)
{
	if (p->blen + n + 1 > p->bcap)
		mem_grow((void **)&p->buf, &p->bcap, p->blen + n + 1, 1);
	memcpy(p->buf + p->blen, s, n);
	p->blen += n;
}

int toml_lex_check_controls(struct toml_parser *p, const char *s, size_t n,
			    uint32_t off, const char *where)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return diag_error(p->dc, loc_at(p, off + (uint32_t)i, 1),
					  "control character U+%04X is not allowed in a %s", c, where);
	}
	return 0;
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
}

int toml_lex_escape(struct toml_parser *p, const char *s, size_t n, uint32_t off)
{
	char out[4];
	switch (s[1]) {
	case 'b': toml_lex_buf_add(p, "\b", 1); return 0;
	case 't': toml_lex_buf_add(p, "\t", 1); return 0;
	case 'n': toml_lex_buf_add(p, "\n", 1); return 0;
	case 'f': toml_lex_buf_add(p, "\f", 1); return 0;
	case 'r': toml_lex_buf_add(p, "\r", 1); return 0;
	case '"': toml_lex_buf_add(p, "\"", 1); return 0;
	case '\\': toml_lex_buf_add(p, "\\", 1); return 0;
	case 'u':
	case 'U': {
		size_t digits = s[1] == 'u' ? 4 : 8;
		if (n < 2 + digits)
			break;
		uint32_t cp = 0;
		for (size_t i = 0; i < digits; i++) {
			if (!strchr("0123456789abcdefABCDEF", s[2 + i]) || !s[2 + i])
				return diag_error(p->dc, loc_at(p, off, (uint32_t)(2 + i + 1)),
						  "invalid escape sequence '%.*s': expected %zu hex digits",
						  (int)(2 + i + 1), s, digits);
			if (cp > 0x10ffff)
				break;
			cp = cp << 4 | (uint32_t)hexval(s[2 + i]);
		}
		if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return diag_error(p->dc, loc_at(p, off, (uint32_t)(2 + digits)),
					  "escape '%.*s' is not a Unicode scalar value",
					  (int)(2 + digits), s);
		toml_lex_buf_add(p, out, utf8_put(out, cp));
		return 0;
	}
	default:
		break;
	}
	uint32_t cp = (unsigned char)s[1];
	size_t len = n > 1 ? utf8_seq((const unsigned char *)s + 1, n - 1, &cp) : 0;
	return diag_error(p->dc, loc_at(p, off, (uint32_t)(1 + (len ? len : 1))),
			  "invalid escape sequence '\\%.*s'", (int)(len ? len : 1), s + 1);
}

/* Queues the error of a limit hit at l and stops the parse; returns -1. */
static int limit_error(struct toml_parser *p, struct loc l, enum beec_limit which, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int limit_error(struct toml_parser *p, struct loc l, enum beec_limit which, const char *fmt, ...)
{
	char msg[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	diag_error(p->dc, l, "%s, more than the limit of %u", msg, beec_limit_get(&p->lim, which));
	beec_limit_note(p->dc, which, beec_limit_get(&p->lim, which));
	p->limit_hit = true;
	return -1;
}

struct toml_node *toml_lex_buf_node(struct toml_parser *p, uint32_t off, uint32_t len)
{
	if (p->blen > p->lim.string_bytes) {
		limit_error(p, loc_at(p, off, len), BEEC_LIMIT_string_bytes, "string of %zu bytes", p->blen);
		return NULL;
	}
	struct toml_node *n = node_new(p, TOML_STRING, loc_at(p, off, len));
	n->str.ptr = arena_strndup(&p->doc->arena, p->buf ? p->buf : "", p->blen);
	n->str.len = p->blen;
	return n;
}

/* A one-line string's body s (quotes stripped) at offset off. */
struct toml_node *toml_lex_string(struct toml_parser *p, const char *s, size_t n,
				  uint32_t off, uint32_t len, bool literal)
{
	toml_lex_buf_reset(p);
	if (toml_lex_check_controls(p, s, n, off, "string") < 0)
		return NULL;
	if (literal) {
		toml_lex_buf_add(p, s, n);
	} else {
		for (size_t i = 0; i < n;) {
			if (s[i] != '\\') {
				size_t j = i;
				while (j < n && s[j] != '\\')
					j++;
				toml_lex_buf_add(p, s + i, j - i);
				i = j;
				continue;
			}
			size_t esc = s[i + 1] == 'u' ? 6 : s[i + 1] == 'U' ? 10 : 2;
			if (esc > n - i)
				esc = n - i;
			if (toml_lex_escape(p, s + i, esc, off + (uint32_t)i) < 0)
				return NULL;
			i += esc;
		}
	}
	return toml_lex_buf_node(p, off - 1, len);
}

struct toml_node *toml_lex_bool(struct toml_parser *p, bool v, struct loc l)
{
	struct toml_node *n = node_new(p, TOML_BOOL, l);
	n->boolean = v;
	return n;
}

/* Copies s without its '_' separators into buf (size >= n + 1). */
static void strip_underscores(const char *s, size_t n, char *buf)
{
	size_t j = 0;
	for (size_t i = 0; i < n; i++)
		if (s[i] != '_')
			buf[j++] = s[i];
	buf[j] = '\0';
}

struct toml_node *toml_lex_integer(struct toml_parser *p, const char *s, size_t n, struct loc l)
{
	char buf[128];
	if (n >= sizeof(buf)) {
		diag_error(p->dc, l, "integer '%.*s' is out of range", (int)n, s);
		return NULL;
	}
	strip_underscores(s, n, buf);
	int base = 10;
	const char *digits = buf;
	if (buf[0] == '0' && (buf[1] == 'x' || buf[1] == 'o' || buf[1] == 'b')) {
		base = buf[1] == 'x' ? 16 : buf[1] == 'o' ? 8 : 2;
		digits = buf + 2;
	}
	errno = 0;
	int64_t v;
	if (base == 10) {
		v = strtoll(digits, NULL, 10);
	} else {
		unsigned long long u = strtoull(digits, NULL, base);
		if (!errno && u > INT64_MAX)
			errno = ERANGE;
		v = (int64_t)u;
	}
	if (errno) {
		diag_error(p->dc, l, "integer '%.*s' is out of range (64-bit signed)", (int)n, s);
		return NULL;
	}
	struct toml_node *node = node_new(p, TOML_INTEGER, l);
	node->integer = v;
	return node;
}

struct toml_node *toml_lex_float(struct toml_parser *p, const char *s, size_t n, struct loc l)
{
	char buf[512];
	if (n >= sizeof(buf)) {
		diag_error(p->dc, l, "float '%.*s' is too long", (int)n, s);
		return NULL;
	}
	strip_underscores(s, n, buf);
	const char *t = buf + (buf[0] == '+' || buf[0] == '-');
	double v;
	if (strcmp(t, "inf") == 0)
		v = INFINITY;
	else if (strcmp(t, "nan") == 0)
		v = NAN;
	else
		v = strtod(t, NULL);
	if (buf[0] == '-')
		v = -v;
	struct toml_node *node = node_new(p, TOML_FLOAT, l);
	node->fp = v;
	return node;
}

static unsigned num2(const char *s)
{
	return (unsigned)(s[0] - '0') * 10 + (unsigned)(s[1] - '0');
}

static int days_in_month(unsigned y, unsigned m)
{
	static const int days[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	if (m == 2 && y % 4 == 0 && (y % 100 != 0 || y % 400 == 0))
		return 29;
	return days[m - 1];
}

/* The regular expressions fixed the shape; check the ranges. */
struct toml_node *toml_lex_datetime(struct toml_parser *p, enum toml_type t,
				    const char *s, size_t n, struct loc l)
{
	const char *time = s;
	if (t != TOML_TIME_LOCAL) {
		unsigned y = num2(s) * 100 + num2(s + 2), m = num2(s + 5), d = num2(s + 8);
		if (m < 1 || m > 12) {
			diag_error(p->dc, l, "invalid date '%.10s': month %02u is out of range", s, m);
			return NULL;
		}
		if (d < 1 || (int)d > days_in_month(y, m)) {
			diag_error(p->dc, l, "invalid date '%.10s': day %02u is out of range", s, d);
			return NULL;
		}
		time = s + 11;
	}
	if (t != TOML_DATE_LOCAL) {
		if (num2(time) > 23 || num2(time + 3) > 59 || num2(time + 6) > 60) {
			diag_error(p->dc, l, "invalid time '%.8s'", time);
			return NULL;
		}
	}
	char *text = arena_strndup(&p->doc->arena, s, n);
	if (t == TOML_DATETIME) {
		char *off = text + n - 1;
		if (*off == 'z' || *off == 'Z') {
			*off = 'Z';
		} else {
			off = text + n - 6;
			if (num2(off + 1) > 23 || num2(off + 4) > 59) {
				diag_error(p->dc, l, "invalid time offset '%s'", off);
				return NULL;
			}
		}
	}
	if (t == TOML_DATETIME || t == TOML_DATETIME_LOCAL)
		text[10] = 'T';
	struct toml_node *node = node_new(p, t, l);
	node->datetime = text;
	return node;
}

int toml_lex_open(struct toml_parser *p, enum toml_lex_ctx c, struct loc at)
{
	/* brackets open inside each other are levels of the tree: the check
	 * on the tree (toml_build_*) would come too late for the stack here */
	if (p->depth >= p->lim.depth)
		return limit_error(p, at, BEEC_LIMIT_depth, "arrays and inline tables nested %u deep",
				   p->depth + 1);
	p->ctx[p->depth++] = c;
	return 0;
}

/* ---- tables and keys -------------------------------------------------- */

struct toml_keypath *toml_keypath_new(struct toml_key k)
{
	struct toml_keypath *kp = xcalloc(1, sizeof(*kp));
	return toml_keypath_push(kp, k);
}

struct toml_keypath *toml_keypath_push(struct toml_keypath *kp, struct toml_key k)
{
	*VEC_PUSH(kp->parts, kp->n, kp->cap) = k;
	return kp;
}

void toml_keypath_free(struct toml_keypath *kp)
{
	if (!kp)
		return;
	free(kp->parts);
	free(kp);
}

static bool key_is_bare(const char *k, size_t n)
{
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-", k[i]) || !k[i])
			return false;
	return true;
}

/* The dotted key parts[0..n) as a person would write it, into the arena. */
static const char *keypath_text(struct toml_parser *p, const struct toml_key *parts, size_t n)
{
	size_t cap = 1;
	for (size_t i = 0; i < n; i++)
		cap += parts[i].len * 6 + 3;
	char *out = arena_alloc(&p->doc->arena, cap), *o = out;
	for (size_t i = 0; i < n; i++) {
		if (i)
			*o++ = '.';
		if (key_is_bare(parts[i].ptr, parts[i].len)) {
			memcpy(o, parts[i].ptr, parts[i].len);
			o += parts[i].len;
			continue;
		}
		*o++ = '"';
		for (size_t j = 0; j < parts[i].len; j++) {
			unsigned char c = (unsigned char)parts[i].ptr[j];
			if (c == '"' || c == '\\')
				o += sprintf(o, "\\%c", c);
			else if (c < 0x20 || c == 0x7f)
				o += sprintf(o, "\\u%04X", c);
			else
				*o++ = (char)c;
		}
		*o++ = '"';
	}
	*o = '\0';
	return out;
}

const struct toml_kv *toml_table_find(const struct toml_node *t, const char *key, size_t keylen)
{
	for (size_t i = 0; i < t->tab.n; i++) {
		const struct toml_kv *kv = &t->tab.items[i];
		if (kv->keylen == keylen && memcmp(kv->key, key, keylen) == 0)
			return kv;
	}
	return NULL;
}

const struct toml_node *toml_table_get(const struct toml_node *t, const char *key)
{
	const struct toml_kv *kv = toml_table_find(t, key, strlen(key));
	return kv ? kv->val : NULL;
}

/* Grows an arena-held vector by doubling: the old copy stays in the arena. */
static void *arena_grow(struct toml_parser *p, void *items, size_t n, size_t *cap, size_t elem)
{
	if (n < *cap)
		return items;
	size_t c = *cap ? *cap * 2 : 4;
	void *fresh = arena_alloc(&p->doc->arena, c * elem);
	if (n)
		memcpy(fresh, items, n * elem);
	*cap = c;
	return fresh;
}

/* Adds k = val to t; -1 (error queued) past 'table-keys' or 'keys'. */
static int table_add(struct toml_parser *p, struct toml_node *t, const struct toml_key *k,
		     struct toml_node *val)
{
	/* lookups in a table are linear: its size bounds their cost */
	if (t->tab.n >= p->lim.table_keys)
		return limit_error(p, k->loc, BEEC_LIMIT_table_keys, "table with %zu keys", t->tab.n + 1);
	if (p->nkeys >= p->lim.keys)
		return limit_error(p, k->loc, BEEC_LIMIT_keys, "document with %zu keys", p->nkeys + 1);
	p->nkeys++;
	t->tab.items = arena_grow(p, t->tab.items, t->tab.n, &t->tab.cap, sizeof(*t->tab.items));
	struct toml_kv *kv = &t->tab.items[t->tab.n++];
	kv->key = k->ptr;
	kv->keylen = k->len;
	kv->key_loc = k->loc;
	kv->val = val;
	return 0;
}

static struct toml_node *table_new(struct toml_parser *p, struct loc l,
				   enum toml_table_origin origin, unsigned section)
{
	struct toml_node *t = node_new(p, TOML_TABLE, l);
	t->tab.origin = origin;
	t->tab.section = section;
	return t;
}

static const char *const origin_what[] = {
	[TOML_TABLE_IMPLICIT] = "as a parent table",
	[TOML_TABLE_HEADER] = "by a table header",
	[TOML_TABLE_DOTTED] = "by dotted keys",
	[TOML_TABLE_INLINE] = "as an inline table",
	[TOML_TABLE_ROOT] = "as the document",
};

static int error_not_table(struct toml_parser *p, const struct toml_keypath *kp, size_t i,
			   const struct toml_kv *kv, const char *name)
{
	diag_error(p->dc, loc_span(kp->parts[0].loc, kp->parts[i].loc),
		   "key '%s' holds %s %s, not a table", name,
		   kv->val->type == TOML_ARRAY || kv->val->type == TOML_INTEGER ? "an" : "a",
		   toml_type_name(kv->val->type));
	diag_note(p->dc, kv->key_loc, "'%s' is defined here", name);
	return -1;
}

/* A key of a key/value line named from the document root, as a person
 * looks for it: inside [a], "b.c" is 'a.b.c'. */
static const char *keyval_name(struct toml_parser *p, const struct toml_keypath *kp, size_t n)
{
	const char *rel = keypath_text(p, kp->parts, n);
	if (p->ninl || !p->section_name[0])
		return rel;
	return arena_printf(&p->doc->arena, "%s.%s", p->section_name, rel);
}

/* Checks the size of each part of kp and that a value of height h under
 * kp, from a table at depth base, stays within 'depth'. */
static int keypath_check(struct toml_parser *p, const struct toml_keypath *kp, size_t base, size_t h)
{
	for (size_t i = 0; i < kp->n; i++)
		if (kp->parts[i].len > p->lim.key_bytes)
			return limit_error(p, kp->parts[i].loc, BEEC_LIMIT_key_bytes, "key of %zu bytes",
					   kp->parts[i].len);
	if (base + kp->n + h > p->lim.depth) {
		size_t at = p->lim.depth >= base ? p->lim.depth - base : 0;
		struct loc l = at < kp->n ? loc_span(kp->parts[at].loc, kp->parts[kp->n - 1].loc)
					  : kp->parts[kp->n - 1].loc;
		return limit_error(p, l, BEEC_LIMIT_depth, "key nested %zu levels deep", base + kp->n + h);
	}
	return 0;
}

static size_t value_height(const struct toml_node *v)
{
	return v->type == TOML_ARRAY || v->type == TOML_TABLE ? v->height : 0;
}

int toml_build_keyval(struct toml_parser *p, struct toml_keypath *kp, struct toml_node *val)
{
	struct toml_node *t = p->ninl ? p->inl[p->ninl - 1] : p->section;
	unsigned section = t->tab.section;
	/* an inline table grows from the bottom: its height; a section knows
	 * its depth from the top */
	size_t base = p->ninl ? 0 : t->depth;
	int ret = keypath_check(p, kp, base, value_height(val));
	if (ret < 0)
		goto out;
	if (p->ninl && kp->n + value_height(val) > t->height)
		t->height = (uint16_t)(kp->n + value_height(val));
	for (size_t i = 0; i + 1 < kp->n; i++) {
		const struct toml_kv *kv = toml_table_find(t, kp->parts[i].ptr, kp->parts[i].len);
		if (!kv) {
			struct toml_node *sub = table_new(p, kp->parts[i].loc, TOML_TABLE_DOTTED, section);
			sub->depth = (uint16_t)(base + i + 1);
			if ((ret = table_add(p, t, &kp->parts[i], sub)) < 0)
				goto out;
			t = sub;
			continue;
		}
		struct toml_node *sub = kv->val;
		if (sub->type != TOML_TABLE) {
			ret = error_not_table(p, kp, i, kv, keyval_name(p, kp, i + 1));
			goto out;
		}
		if (sub->tab.origin == TOML_TABLE_IMPLICIT) {
			sub->tab.origin = TOML_TABLE_DOTTED;
			sub->tab.section = section;
		} else if (sub->tab.origin != TOML_TABLE_DOTTED || sub->tab.section != section) {
			ret = diag_error(p->dc, loc_span(kp->parts[0].loc, kp->parts[i].loc),
					 "cannot add keys to table '%s' here: it was defined %s",
					 keyval_name(p, kp, i + 1), origin_what[sub->tab.origin]);
			diag_note(p->dc, sub->loc, "'%s' is defined here", keyval_name(p, kp, i + 1));
			goto out;
		}
		t = sub;
	}
	const struct toml_key *last = &kp->parts[kp->n - 1];
	const struct toml_kv *dup = toml_table_find(t, last->ptr, last->len);
	if (dup) {
		ret = diag_error(p->dc, loc_span(kp->parts[0].loc, last->loc), "duplicate key '%s'",
				 keyval_name(p, kp, kp->n));
		diag_note(p->dc, dup->key_loc, "first defined here");
		goto out;
	}
	ret = table_add(p, t, last, val);
out:
	toml_keypath_free(kp);
	return ret;
}

int toml_build_table(struct toml_parser *p, struct loc l, struct toml_keypath *kp, bool aot)
{
	struct toml_node *t = p->doc->root;
	unsigned section = ++p->next_section;
	/* the sizes and the depth as written; tables of arrays of tables on
	 * the way add their level below, checked once the walk is done */
	int ret = keypath_check(p, kp, 0, aot);
	if (ret < 0)
		goto out;
	for (size_t i = 0; i + 1 < kp->n; i++) {
		const struct toml_kv *kv = toml_table_find(t, kp->parts[i].ptr, kp->parts[i].len);
		if (!kv) {
			struct toml_node *sub = table_new(p, kp->parts[i].loc, TOML_TABLE_IMPLICIT, 0);
			sub->depth = (uint16_t)(t->depth + 1);
			if ((ret = table_add(p, t, &kp->parts[i], sub)) < 0)
				goto out;
			t = sub;
			continue;
		}
		struct toml_node *sub = kv->val;
		if (sub->type == TOML_ARRAY && sub->arr.of_tables) {
			t = sub->arr.items[sub->arr.n - 1];
			continue;
		}
		if (sub->type != TOML_TABLE) {
			ret = error_not_table(p, kp, i, kv, keypath_text(p, kp->parts, i + 1));
			goto out;
		}
		if (sub->tab.origin == TOML_TABLE_INLINE) {
			ret = diag_error(p->dc, loc_span(kp->parts[0].loc, kp->parts[i].loc),
					 "cannot extend inline table '%s'", keypath_text(p, kp->parts, i + 1));
			diag_note(p->dc, sub->loc, "an inline table is complete where it is written");
			goto out;
		}
		t = sub;
	}
	const struct toml_key *last = &kp->parts[kp->n - 1];
	if ((size_t)t->depth + 1 + aot > p->lim.depth) {
		ret = limit_error(p, loc_span(kp->parts[0].loc, last->loc), BEEC_LIMIT_depth,
				  "table nested %zu levels deep", (size_t)t->depth + 1 + aot);
		goto out;
	}
	const struct toml_kv *kv = toml_table_find(t, last->ptr, last->len);
	const char *name = keypath_text(p, kp->parts, kp->n);
	struct toml_node *fresh;
	if (aot) {
		struct toml_node *arr;
		if (!kv) {
			arr = node_new(p, TOML_ARRAY, l);
			arr->arr.of_tables = true;
			arr->depth = (uint16_t)(t->depth + 1);
			if ((ret = table_add(p, t, last, arr)) < 0)
				goto out;
		} else if (kv->val->type == TOML_ARRAY && kv->val->arr.of_tables) {
			arr = kv->val;
		} else {
			ret = diag_error(p->dc, l, "cannot define '%s' as an array of tables: it is already %s %s",
					 name, kv->val->type == TOML_ARRAY ? "an" : "a",
					 kv->val->type == TOML_ARRAY ? "array" : toml_type_name(kv->val->type));
			diag_note(p->dc, kv->key_loc, "'%s' is defined here", name);
			goto out;
		}
		fresh = table_new(p, l, TOML_TABLE_HEADER, section);
		fresh->depth = (uint16_t)(t->depth + 2);
		if ((ret = toml_build_array_push(p, arr, fresh)) < 0)
			goto out;
	} else if (!kv) {
		fresh = table_new(p, l, TOML_TABLE_HEADER, section);
		fresh->depth = (uint16_t)(t->depth + 1);
		if ((ret = table_add(p, t, last, fresh)) < 0)
			goto out;
	} else if (kv->val->type == TOML_TABLE && kv->val->tab.origin == TOML_TABLE_IMPLICIT) {
		fresh = kv->val;
		fresh->tab.origin = TOML_TABLE_HEADER;
		fresh->tab.section = section;
		fresh->loc = l;
	} else {
		if (kv->val->type == TOML_TABLE)
			ret = diag_error(p->dc, l, "table '%s' is defined twice", name);
		else
			ret = diag_error(p->dc, l, "cannot define table '%s': the key already holds %s %s",
					 name, kv->val->type == TOML_ARRAY || kv->val->type == TOML_INTEGER ? "an" : "a",
					 kv->val->type == TOML_ARRAY && kv->val->arr.of_tables
						 ? "array of tables" : toml_type_name(kv->val->type));
		diag_note(p->dc, kv->val->type == TOML_TABLE ? kv->val->loc : kv->key_loc,
			  "first defined here");
		goto out;
	}
	p->section = fresh;
	p->section_name = name;
out:
	if (ret < 0) {
		/* keys up to the next header go into a scratch table, so that one
		 * bad header does not turn every key after it into an error */
		p->section = table_new(p, l, TOML_TABLE_HEADER, section);
	}
	toml_keypath_free(kp);
	return ret;
}

struct toml_node *toml_build_array(struct toml_parser *p, struct loc l)
{
	return node_new(p, TOML_ARRAY, l);
}

int toml_build_array_push(struct toml_parser *p, struct toml_node *arr, struct toml_node *v)
{
	if (arr->arr.n >= p->lim.array_items)
		return limit_error(p, v->loc, BEEC_LIMIT_array_items, "array of %zu items", arr->arr.n + 1);
	if (value_height(v) + 1 > arr->height)
		arr->height = (uint16_t)(value_height(v) + 1);
	arr->arr.items = arena_grow(p, arr->arr.items, arr->arr.n, &arr->arr.cap, sizeof(*arr->arr.items));
	arr->arr.items[arr->arr.n++] = v;
	return 0;
}

void toml_build_inline_begin(struct toml_parser *p, struct loc l)
{
	/* the scanner bounds the nesting at TOML_MAX_DEPTH */
	p->inl[p->ninl++] = table_new(p, l, TOML_TABLE_INLINE, ++p->next_section);
}

struct toml_node *toml_build_inline_end(struct toml_parser *p, struct loc l)
{
	struct toml_node *t = p->inl[--p->ninl];
	t->loc = l;
	return t;
}

void toml_build_recover(struct toml_parser *p)
{
	p->ninl = 0;
}

/* ---- driver ----------------------------------------------------------- */

int toml_parse(const struct source *src, struct diag_ctx *dc, struct toml_doc **out)
{
	return toml_parse_limits(src, NULL, dc, out);
}

int toml_parse_limits(const struct source *src, const struct beec_limits *lim, struct diag_ctx *dc,
		      struct toml_doc **out)
{
	*out = NULL;
	struct toml_doc *doc = xcalloc(1, sizeof(*doc));
	doc->src = src;
	struct toml_parser p = { .doc = doc, .dc = dc, .src = src, .lim = beec_limits_resolve(lim) };
	if (p.lim.depth > TOML_MAX_DEPTH)
		p.lim.depth = TOML_MAX_DEPTH;
	doc->root = table_new(&p, (struct loc){ src, 0, 0 }, TOML_TABLE_ROOT, 0);
	p.section = doc->root;
	p.section_name = "";
	unsigned errors = dc->errors;
	bool trunc = dc->truncated;

	if (utf8_validate(&p) == 0) {
		size_t skip = src->len >= 3 && memcmp(src->text, "\xef\xbb\xbf", 3) == 0 ? 3 : 0;
		p.pos = (uint32_t)skip;
		yyscan_t scanner;
		toml_yylex_init_extra(&p, &scanner);
		p.scanner = scanner;
		YY_BUFFER_STATE b = toml_yy_scan_bytes(src->text + skip, (int)(src->len - skip), scanner);
		yyparse(&p);
		toml_yy_delete_buffer(b, scanner);
		toml_yylex_destroy(scanner);
	}
	free(p.buf);
	if (dc->errors != errors || dc->truncated != trunc) {
		toml_doc_free(doc);
		return -1;
	}
	*out = doc;
	return 0;
}

void toml_doc_free(struct toml_doc *doc)
{
	if (!doc)
		return;
	arena_free(&doc->arena);
	free(doc);
}

/* ---- output ----------------------------------------------------------- */

static void put_json_string(const char *s, size_t n, FILE *out)
{
	fputc('"', out);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		switch (c) {
		case '"': fputs("\\\"", out); break;
		case '\\': fputs("\\\\", out); break;
		case '\b': fputs("\\b", out); break;
		case '\f': fputs("\\f", out); break;
		case '\n': fputs("\\n", out); break;
		case '\r': fputs("\\r", out); break;
		case '\t': fputs("\\t", out); break;
		default:
			if (c < 0x20 || c == 0x7f)
				fprintf(out, "\\u%04x", c);
			else
				fputc(c, out);
		}
	}
	fputc('"', out);
}

/* The shortest decimal text that reads back as v. */
static void format_float(double v, char *buf, size_t n)
{
	if (isnan(v)) {
		snprintf(buf, n, "nan");
		return;
	}
	if (isinf(v)) {
		snprintf(buf, n, v < 0 ? "-inf" : "inf");
		return;
	}
	int prec = 1;
	for (; prec <= 17; prec++) {
		snprintf(buf, n, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	/* plain digits read better than an exponent for everyday magnitudes;
	 * the exponent is the printed one (no libm: bee-load links this file,
	 * and one more shared library is dear at each of its starts) */
	double mag = fabs(v);
	const char *e = strchr(buf, 'e');
	if (e && mag >= 1e-5 && mag < 1e16) {
		int exp10 = atoi(e + 1);
		int decimals = prec - 1 - exp10;
		snprintf(buf, n, "%.*f", decimals > 0 ? decimals : 0, v);
	}
}

static void put_scalar_text(const struct toml_node *n, FILE *out, bool toml)
{
	char buf[64];
	switch (n->type) {
	case TOML_STRING:
		put_json_string(n->str.ptr, n->str.len, out);
		break;
	case TOML_INTEGER:
		fprintf(out, "%" PRId64, n->integer);
		break;
	case TOML_FLOAT:
		format_float(n->fp, buf, sizeof(buf));
		/* TOML needs a '.' or an exponent to read a float back */
		if (toml && !strpbrk(buf, ".eni"))
			strcat(buf, ".0");
		fputs(buf, out);
		break;
	case TOML_BOOL:
		fputs(n->boolean ? "true" : "false", out);
		break;
	case TOML_DATETIME:
	case TOML_DATETIME_LOCAL:
	case TOML_DATE_LOCAL:
	case TOML_TIME_LOCAL:
		fputs(n->datetime, out);
		break;
	case TOML_ARRAY:
	case TOML_TABLE:
		break;
	}
}

static void toml_dump_json_body(const struct toml_node *n, FILE *out)
{
	switch (n->type) {
	case TOML_ARRAY:
		fputc('[', out);
		for (size_t i = 0; i < n->arr.n; i++) {
			if (i)
				fputc(',', out);
			toml_dump_json_body(n->arr.items[i], out);
		}
		fputc(']', out);
		return;
	case TOML_TABLE:
		fputc('{', out);
		for (size_t i = 0; i < n->tab.n; i++) {
			if (i)
				fputc(',', out);
			put_json_string(n->tab.items[i].key, n->tab.items[i].keylen, out);
			fputc(':', out);
			toml_dump_json_body(n->tab.items[i].val, out);
		}
		fputc('}', out);
		return;
	case TOML_STRING:
	case TOML_INTEGER:
	case TOML_FLOAT:
	case TOML_BOOL:
	case TOML_DATETIME:
	case TOML_DATETIME_LOCAL:
	case TOML_DATE_LOCAL:
	case TOML_TIME_LOCAL:
		break;
	}
	fprintf(out, "{\"type\":\"%s\",\"value\":", toml_type_name(n->type));
	if (n->type == TOML_STRING) {
		put_json_string(n->str.ptr, n->str.len, out);
	} else {
		fputc('"', out);
		put_scalar_text(n, out, false);
		fputc('"', out);
	}
	fputc('}', out);
}

int toml_dump_json(const struct toml_node *n, FILE *out)
{
	return MEM_PROTECT(-ENOMEM, (toml_dump_json_body(n, out), 0));
}

/* ---- canonical TOML --------------------------------------------------- */

static int kv_cmp(const void *a, const void *b)
{
	const struct toml_kv *x = *(const struct toml_kv *const *)a;
	const struct toml_kv *y = *(const struct toml_kv *const *)b;
	size_t n = x->keylen < y->keylen ? x->keylen : y->keylen;
	int c = memcmp(x->key, y->key, n);
	return c ? c : (x->keylen > y->keylen) - (x->keylen < y->keylen);
}

static const struct toml_kv **sorted_keys(const struct toml_node *t)
{
	const struct toml_kv **v = xcalloc(t->tab.n + 1, sizeof(*v));
	for (size_t i = 0; i < t->tab.n; i++)
		v[i] = &t->tab.items[i];
	qsort(v, t->tab.n, sizeof(*v), kv_cmp);
	return v;
}

static void put_key(const char *k, size_t n, FILE *out)
{
	if (key_is_bare(k, n))
		fwrite(k, 1, n, out);
	else
		put_json_string(k, n, out);   /* a TOML basic string is JSON's */
}

static bool is_section(const struct toml_node *v)
{
	return v->type == TOML_TABLE || (v->type == TOML_ARRAY && v->arr.of_tables);
}

static void put_inline(const struct toml_node *n, FILE *out)
{
	switch (n->type) {
	case TOML_ARRAY:
		fputc('[', out);
		for (size_t i = 0; i < n->arr.n; i++) {
			fputs(i ? ", " : "", out);
			put_inline(n->arr.items[i], out);
		}
		fputc(']', out);
		return;
	case TOML_TABLE: {
		const struct toml_kv **kvs = sorted_keys(n);
		fputc('{', out);
		for (size_t i = 0; i < n->tab.n; i++) {
			fputs(i ? ", " : " ", out);
			put_key(kvs[i]->key, kvs[i]->keylen, out);
			fputs(" = ", out);
			put_inline(kvs[i]->val, out);
		}
		fputs(n->tab.n ? " }" : "}", out);
		free(kvs);
		return;
	}
	case TOML_STRING:
	case TOML_INTEGER:
	case TOML_FLOAT:
	case TOML_BOOL:
	case TOML_DATETIME:
	case TOML_DATETIME_LOCAL:
	case TOML_DATE_LOCAL:
	case TOML_TIME_LOCAL:
		put_scalar_text(n, out, true);
		return;
	}
}

struct keystack {
	const struct toml_kv *parts[TOML_MAX_DEPTH * 2];
	size_t n;
};

static void put_header(const struct keystack *ks, bool aot, FILE *out)
{
	fputs(aot ? "\n[[" : "\n[", out);
	for (size_t i = 0; i < ks->n; i++) {
		if (i)
			fputc('.', out);
		put_key(ks->parts[i]->key, ks->parts[i]->keylen, out);
	}
	fputs(aot ? "]]\n" : "]\n", out);
}

static void put_table(const struct toml_node *t, struct keystack *ks, FILE *out)
{
	const struct toml_kv **kvs = sorted_keys(t);
	for (size_t i = 0; i < t->tab.n; i++) {
		if (is_section(kvs[i]->val))
			continue;
		put_key(kvs[i]->key, kvs[i]->keylen, out);
		fputs(" = ", out);
		put_inline(kvs[i]->val, out);
		fputc('\n', out);
	}
	for (size_t i = 0; i < t->tab.n; i++) {
		const struct toml_node *v = kvs[i]->val;
		if (!is_section(v) || ks->n == sizeof(ks->parts) / sizeof(ks->parts[0]))
			continue;
		ks->parts[ks->n++] = kvs[i];
		if (v->type == TOML_TABLE) {
			put_header(ks, false, out);
			put_table(v, ks, out);
		} else {
			for (size_t j = 0; j < v->arr.n; j++) {
				put_header(ks, true, out);
				put_table(v->arr.items[j], ks, out);
			}
		}
		ks->n--;
	}
	free(kvs);
}

static void toml_dump_canonical_body(const struct toml_doc *doc, FILE *out)
{
	struct keystack ks = { .n = 0 };
	put_table(doc->root, &ks, out);
}

int toml_dump_canonical(const struct toml_doc *doc, FILE *out)
{
	return MEM_PROTECT(-ENOMEM, (toml_dump_canonical_body(doc, out), 0));
}
