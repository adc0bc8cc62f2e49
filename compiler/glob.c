/* SPDX-License-Identifier: GPL-2.0-only */
/* glob.c: glob text -> tokens -> brace expansion -> linear item sequences.
 *
 * Three small stages: glob_lex turns the text into tokens (literal bytes,
 * '?', '*', classes, brace syntax) and validates classes and escapes;
 * glob_expand parses braces over the tokens and expands them into token
 * sequences; glob_lower_alt maps one sequence to items, deciding for each
 * run of stars whether it is a whole segment ('**') or a plain '*'.
 */
#include "glob.h"
#include "mem.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

const char *glob_item_kind_name(enum glob_item_kind k)
{
	switch (k) {
#define X(name, str) case GLOB_ITEM_##name: return str;
	GLOB_ITEM_KINDS(X)
#undef X
	}
	return "?";
}

enum glob_tok_kind {
	GLOB_TOK_BYTE,      /* a literal byte (escaped or not) */
	GLOB_TOK_SET,       /* '?' or a class: one byte of set */
	GLOB_TOK_STAR,      /* one '*' */
	GLOB_TOK_LBRACE,
	GLOB_TOK_COMMA,     /* a literal ',' outside braces */
	GLOB_TOK_RBRACE,
};

struct glob_tok {
	enum glob_tok_kind kind;
	uint8_t byte;
	struct glob_byteset set;
	uint32_t off, len;
};

struct glob_lexer {
	const char *text;
	struct glob_tok *toks;
	size_t n, cap;
	struct glob_error *err;
};

static int glob_error_set(struct glob_error *err, size_t off, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int glob_error_set(struct glob_error *err, size_t off, size_t len, const char *fmt, ...)
{
	va_list ap;
	err->off = off;
	err->len = len;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* Every byte a glob wildcard may match: all but NUL. */
static struct glob_byteset glob_byteset_nonnul(void)
{
	struct glob_byteset s = { { ~(uint64_t)1, ~(uint64_t)0, ~(uint64_t)0, ~(uint64_t)0 } };
	return s;
}

/* What '*', '?' and classes may match in pathname mode: all but NUL and '/'. */
static struct glob_byteset glob_byteset_segment(void)
{
	struct glob_byteset s = glob_byteset_nonnul();
	s.w['/' >> 6] &= ~((uint64_t)1 << ('/' & 63));
	return s;
}

static bool glob_byteset_empty(const struct glob_byteset *s)
{
	return !(s->w[0] | s->w[1] | s->w[2] | s->w[3]);
}

/* POSIX class predicates in the C locale, written out so that no locale
 * setting can change what a policy means. */
static bool glob_posix_has(const char *name, size_t len, unsigned b)
{
	bool upper = b >= 'A' && b <= 'Z', lower = b >= 'a' && b <= 'z';
	bool digit = b >= '0' && b <= '9';
	bool alpha = upper || lower, alnum = alpha || digit;
	bool graph = b >= 0x21 && b <= 0x7e;
#define IS(s) (len == sizeof(s) - 1 && memcmp(name, s, len) == 0)
	if (IS("alnum")) return alnum;
	if (IS("alpha")) return alpha;
	if (IS("blank")) return b == ' ' || b == '\t';
	if (IS("cntrl")) return b < 0x20 || b == 0x7f;
	if (IS("digit")) return digit;
	if (IS("graph")) return graph;
	if (IS("lower")) return lower;
	if (IS("print")) return graph || b == ' ';
	if (IS("punct")) return graph && !alnum;
	if (IS("space")) return b == ' ' || (b >= '\t' && b <= '\r');
	if (IS("upper")) return upper;
	if (IS("xdigit")) return digit || (b >= 'a' && b <= 'f') || (b >= 'A' && b <= 'F');
#undef IS
	return false;
}

static bool glob_posix_known(const char *name, size_t len)
{
	static const char *const names[] = { "alnum", "alpha", "blank", "cntrl", "digit", "graph",
					     "lower", "print", "punct", "space", "upper", "xdigit" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i]) == len && memcmp(names[i], name, len) == 0)
			return true;
	return false;
}

static struct glob_tok *glob_lex_push(struct glob_lexer *lx, enum glob_tok_kind kind, size_t off,
				      size_t len)
{
	struct glob_tok *t = VEC_PUSH(lx->toks, lx->n, lx->cap);
	memset(t, 0, sizeof(*t));
	t->kind = kind;
	t->off = (uint32_t)off;
	t->len = (uint32_t)len;
	return t;
}

/* Reads one class member byte at *i (honouring '\'); advances *i. */
static int glob_lex_class_byte(struct glob_lexer *lx, size_t open, size_t *i, unsigned *b)
{
	const char *s = lx->text;
	if (s[*i] == '\\') {
		if (s[*i + 1] == '\0')
			return glob_error_set(lx->err, *i, 1, "trailing '\\' in class");
		(*i)++;
	}
	if (s[*i] == '\0')
		return glob_error_set(lx->err, open, 1, "unterminated '['");
	*b = (uint8_t)s[*i];
	(*i)++;
	return 0;
}

/* Lexes the class that opens at text[open] == '['. */
static int glob_lex_class(struct glob_lexer *lx, size_t open, size_t *end)
{
	const char *s = lx->text;
	size_t i = open + 1;
	bool negate = false, first = true;
	struct glob_byteset set = { { 0 } };

	if (s[i] == '!' || s[i] == '^') {
		negate = true;
		i++;
	}
	for (;;) {
		if (s[i] == '\0')
			return glob_error_set(lx->err, open, 1, "unterminated '['");
		if (s[i] == ']' && !first)
			break;
		first = false;
		if (s[i] == '[' && s[i + 1] == ':') {
			/* git: "[:" up to the next ']' is a POSIX class when ":]" ends it,
			 * else the '[' is a plain member */
			const char *close = strchr(s + i + 2, ']');
			if (!close)
				return glob_error_set(lx->err, open, 1, "unterminated '['");
			size_t nlen = (size_t)(close - (s + i + 2));
			if (nlen >= 1 && close[-1] == ':') {
				nlen--;
				if (!glob_posix_known(s + i + 2, nlen))
					return glob_error_set(lx->err, i, nlen + 4,
							      "unknown character class '[:%.*s:]'",
							      (int)nlen, s + i + 2);
				for (unsigned b = 1; b < 256; b++)
					if (glob_posix_has(s + i + 2, nlen, b))
						glob_byteset_add(&set, b);
				i += nlen + 4;
				continue;
			}
		}
		size_t at = i;
		unsigned lo, hi;
		int err = glob_lex_class_byte(lx, open, &i, &lo);
		if (err)
			return err;
		hi = lo;
		if (s[i] == '-' && s[i + 1] != ']' && s[i + 1] != '\0') {
			i++;
			err = glob_lex_class_byte(lx, open, &i, &hi);
			if (err)
				return err;
			if (hi < lo)
				return glob_error_set(lx->err, at, i - at, "reversed range '%.*s' in class",
						      (int)(i - at), s + at);
		}
		for (unsigned b = lo; b <= hi; b++)
			glob_byteset_add(&set, b);
	}
	*end = i + 1;
	if (negate)
		for (unsigned w = 0; w < 4; w++)
			set.w[w] = ~set.w[w];
	struct glob_byteset seg = glob_byteset_segment();
	for (unsigned w = 0; w < 4; w++)
		set.w[w] &= seg.w[w];
	if (glob_byteset_empty(&set))
		return glob_error_set(lx->err, open, *end - open,
				      "class '%.*s' matches no byte (a class never matches '/')",
				      (int)(*end - open), s + open);
	struct glob_tok *t = glob_lex_push(lx, GLOB_TOK_SET, open, *end - open);
	t->set = set;
	return 0;
}

static int glob_lex(struct glob_lexer *lx)
{
	const char *s = lx->text;
	int depth = 0;
	size_t i = 0;

	while (s[i]) {
		struct glob_tok *t;
		switch (s[i]) {
		case '\\':
			if (s[i + 1] == '\0')
				return glob_error_set(lx->err, i, 1, "trailing '\\'");
			t = glob_lex_push(lx, GLOB_TOK_BYTE, i, 2);
			t->byte = (uint8_t)s[i + 1];
			i += 2;
			break;
		case '?':
			t = glob_lex_push(lx, GLOB_TOK_SET, i, 1);
			t->set = glob_byteset_segment();
			i++;
			break;
		case '*':
			glob_lex_push(lx, GLOB_TOK_STAR, i, 1);
			i++;
			break;
		case '[': {
			size_t end = i;
			int err = glob_lex_class(lx, i, &end);
			if (err)
				return err;
			i = end;
			break;
		}
		case '{':
			glob_lex_push(lx, GLOB_TOK_LBRACE, i, 1);
			depth++;
			i++;
			break;
		case '}':
			if (depth == 0)
				return glob_error_set(lx->err, i, 1,
						      "unmatched '}' (write '\\}' for a literal brace)");
			glob_lex_push(lx, GLOB_TOK_RBRACE, i, 1);
			depth--;
			i++;
			break;
		case ',':
			t = glob_lex_push(lx, depth ? GLOB_TOK_COMMA : GLOB_TOK_BYTE, i, 1);
			t->byte = ',';
			i++;
			break;
		default:
			t = glob_lex_push(lx, GLOB_TOK_BYTE, i, 1);
			t->byte = (uint8_t)s[i];
			i++;
			break;
		}
	}
	if (depth) {
		/* name the innermost '{' left open */
		size_t open = 0;
		int d = 0;
		for (size_t k = lx->n; k-- > 0;) {
			if (lx->toks[k].kind == GLOB_TOK_RBRACE)
				d++;
			else if (lx->toks[k].kind == GLOB_TOK_LBRACE && d-- == 0) {
				open = lx->toks[k].off;
				break;
			}
		}
		return glob_error_set(lx->err, open, 1, "unterminated '{'");
	}
	return 0;
}

/* ---- brace expansion --------------------------------------------------- */

/* A token sequence: indices into the token array. */
struct glob_seq {
	uint32_t *idx;
	size_t n, cap;
};

struct glob_seqs {
	struct glob_seq *v;
	size_t n, cap;
};

static void glob_seqs_fini(struct glob_seqs *ss)
{
	for (size_t i = 0; i < ss->n; i++)
		free(ss->v[i].idx);
	free(ss->v);
	memset(ss, 0, sizeof(*ss));
}

static void glob_seq_append(struct glob_seq *dst, const struct glob_seq *src)
{
	for (size_t i = 0; i < src->n; i++)
		*VEC_PUSH(dst->idx, dst->n, dst->cap) = src->idx[i];
}

static size_t glob_brace_close(const struct glob_tok *t, size_t open)
{
	int depth = 0;
	for (size_t i = open;; i++) {
		if (t[i].kind == GLOB_TOK_LBRACE)
			depth++;
		else if (t[i].kind == GLOB_TOK_RBRACE && --depth == 0)
			return i;
	}
}

static size_t glob_seqs_len(const struct glob_seqs *ss)
{
	size_t n = 0;
	for (size_t i = 0; i < ss->n; i++)
		n += ss->v[i].n;
	return n;
}

static int glob_error_items(const struct glob_lexer *lx, size_t off, size_t len, size_t items)
{
	return glob_error_set(lx->err, off, len,
			      "braces expand to %zu pattern items, more than the limit of %d", items,
			      GLOB_MAX_ITEMS);
}

/* Expands tokens [lo, hi) into *out (every alternative in order). */
static int glob_expand(const struct glob_lexer *lx, size_t lo, size_t hi, struct glob_seqs *out)
{
	const struct glob_tok *t = lx->toks;
	struct glob_seqs cur = { 0 };
	VEC_PUSH(cur.v, cur.n, cur.cap);
	memset(&cur.v[0], 0, sizeof(cur.v[0]));

	/* room for every token of the span in the first alternative */
	mem_grow((void **)&cur.v[0].idx, &cur.v[0].cap, hi - lo, sizeof(uint32_t));
	for (size_t i = lo; i < hi; i++) {
		if (t[i].kind != GLOB_TOK_LBRACE) {
			for (size_t k = 0; k < cur.n; k++)
				*VEC_PUSH(cur.v[k].idx, cur.v[k].n, cur.v[k].cap) = (uint32_t)i;
			continue;
		}
		size_t close = glob_brace_close(t, i);
		struct glob_seqs alts = { 0 };
		size_t start = i + 1;
		int depth = 0;
		for (size_t j = i + 1; j <= close; j++) {
			if (t[j].kind == GLOB_TOK_LBRACE)
				depth++;
			else if (t[j].kind == GLOB_TOK_RBRACE && depth)
				depth--;
			else if ((t[j].kind == GLOB_TOK_COMMA && depth == 0) || j == close) {
				int err = glob_expand(lx, start, j, &alts);
				if (err) {
					glob_seqs_fini(&alts);
					glob_seqs_fini(&cur);
					return err;
				}
				start = j + 1;
			}
		}
		if (cur.n * alts.n > GLOB_MAX_ALTS) {
			glob_seqs_fini(&alts);
			glob_seqs_fini(&cur);
			return glob_error_set(lx->err, t[i].off, t[close].off + 1 - t[i].off,
					      "braces expand to more than %d alternatives",
					      GLOB_MAX_ALTS);
		}
		/* every alternative of cur followed by every one of alts */
		size_t items = alts.n * glob_seqs_len(&cur) + cur.n * glob_seqs_len(&alts);
		if (items > GLOB_MAX_ITEMS) {
			glob_seqs_fini(&alts);
			glob_seqs_fini(&cur);
			return glob_error_items(lx, t[i].off, t[close].off + 1 - t[i].off, items);
		}
		struct glob_seqs next = { 0 };
		for (size_t a = 0; a < cur.n; a++) {
			for (size_t b = 0; b < alts.n; b++) {
				struct glob_seq *s = VEC_PUSH(next.v, next.n, next.cap);
				memset(s, 0, sizeof(*s));
				glob_seq_append(s, &cur.v[a]);
				glob_seq_append(s, &alts.v[b]);
			}
		}
		glob_seqs_fini(&alts);
		glob_seqs_fini(&cur);
		cur = next;
		i = close;
	}
	if (out->n + cur.n > GLOB_MAX_ALTS) {
		glob_seqs_fini(&cur);
		return glob_error_set(lx->err, lo < hi ? t[lo].off : 0,
				      lo < hi ? t[hi - 1].off + t[hi - 1].len - t[lo].off : 0,
				      "braces expand to more than %d alternatives", GLOB_MAX_ALTS);
	}
	size_t items = glob_seqs_len(out) + glob_seqs_len(&cur);
	if (items > GLOB_MAX_ITEMS) {
		glob_seqs_fini(&cur);
		return glob_error_items(lx, lo < hi ? t[lo].off : 0,
					lo < hi ? t[hi - 1].off + t[hi - 1].len - t[lo].off : 0, items);
	}
	for (size_t k = 0; k < cur.n; k++)
		*VEC_PUSH(out->v, out->n, out->cap) = cur.v[k];
	free(cur.v);
	return 0;
}

/* ---- lowering one alternative to items ---------------------------------- */

static bool glob_tok_is_slash(const struct glob_tok *t)
{
	return t->kind == GLOB_TOK_BYTE && t->byte == '/';
}

static void glob_lower_alt(const struct glob_lexer *lx, const struct glob_seq *seq,
			   struct glob_alt *alt)
{
	/* an item per token at most */
	size_t cap = seq->n ? seq->n : 1;
	alt->items = xmalloc(cap * sizeof(*alt->items));
	alt->n = 0;
	for (size_t i = 0; i < seq->n;) {
		const struct glob_tok *t = &lx->toks[seq->idx[i]];
		struct glob_item it = { .kind = GLOB_ITEM_BYTE };
		switch (t->kind) {
		case GLOB_TOK_BYTE:
		case GLOB_TOK_COMMA:
			glob_byteset_add(&it.set, t->byte);
			i++;
			break;
		case GLOB_TOK_SET:
			it.set = t->set;
			i++;
			break;
		case GLOB_TOK_STAR: {
			size_t j = i;
			while (j < seq->n && lx->toks[seq->idx[j]].kind == GLOB_TOK_STAR)
				j++;
			bool before = i == 0 || glob_tok_is_slash(&lx->toks[seq->idx[i - 1]]);
			bool at_end = j == seq->n;
			bool after = at_end || glob_tok_is_slash(&lx->toks[seq->idx[j]]);
			if (j - i >= 2 && before && after) {
				/* a whole-segment '**': the '/' after it belongs to it */
				it.kind = at_end ? GLOB_ITEM_ANY : GLOB_ITEM_DIRS;
				i = at_end ? j : j + 1;
			} else {
				it.kind = GLOB_ITEM_STAR;
				it.set = glob_byteset_segment();
				i = j;
			}
			break;
		}
		case GLOB_TOK_LBRACE:
		case GLOB_TOK_RBRACE:
			/* expansion leaves no brace tokens in a sequence */
			i++;
			continue;
		}
		*VEC_PUSH(alt->items, alt->n, cap) = it;
	}
}

int glob_parse(const char *text, struct glob *out, struct glob_error *err)
{
	struct glob_lexer lx = { .text = text, .err = err };
	struct glob_seqs seqs = { 0 };
	int rc;

	memset(out, 0, sizeof(*out));
	if (text[0] == '\0') {
		rc = glob_error_set(err, 0, 0, "empty glob");
		goto out;
	}
	/* a token per byte at most: one allocation, no growth */
	lx.cap = strlen(text) + 1;
	lx.toks = xmalloc(lx.cap * sizeof(*lx.toks));
	rc = glob_lex(&lx);
	if (rc)
		goto out;
	rc = glob_expand(&lx, 0, lx.n, &seqs);
	if (rc)
		goto out;
	out->alts = xcalloc(seqs.n, sizeof(*out->alts));
	out->nalts = seqs.n;
	for (size_t i = 0; i < seqs.n; i++)
		glob_lower_alt(&lx, &seqs.v[i], &out->alts[i]);
out:
	glob_seqs_fini(&seqs);
	free(lx.toks);
	return rc;
}

void glob_cover_dir(struct glob *g)
{
	size_t n = g->nalts, cap = n;
	for (size_t a = 0; a < n; a++) {
		const struct glob_alt *alt = &g->alts[a];
		if (alt->n < 2 || alt->items[alt->n - 1].kind != GLOB_ITEM_ANY ||
		    alt->items[alt->n - 2].kind != GLOB_ITEM_BYTE)
			continue;
		struct glob_byteset slash = { { 0 } };
		glob_byteset_add(&slash, '/');
		if (memcmp(&alt->items[alt->n - 2].set, &slash, sizeof(slash)) != 0)
			continue;
		/* the directory: without "/" and "**", or "/" itself for "/" "**" */
		size_t keep = alt->n == 2 ? 1 : alt->n - 2;
		struct glob_alt dir = { .items = xmalloc(keep * sizeof(*dir.items)), .n = keep };
		memcpy(dir.items, alt->items, keep * sizeof(*dir.items));
		*VEC_PUSH(g->alts, g->nalts, cap) = dir;
	}
}

void glob_fini(struct glob *g)
{
	for (size_t i = 0; i < g->nalts; i++)
		free(g->alts[i].items);
	free(g->alts);
	memset(g, 0, sizeof(*g));
}

/* ---- text forms -------------------------------------------------------- */

static int glob_byte_format(unsigned b, char *buf, size_t size)
{
	if (b >= 0x21 && b <= 0x7e && b != '\'' && b != '\\')
		return snprintf(buf, size, "'%c'", (char)b);
	return snprintf(buf, size, "\\x%02x", b);
}

static int glob_ranges_format(const struct glob_byteset *s, char *buf, size_t size)
{
	int n = 0;
	if (size)
		buf[0] = '\0';
	for (unsigned b = 0; b < 256;) {
		if (!glob_byteset_has(s, b)) {
			b++;
			continue;
		}
		unsigned e = b;
		while (e + 1 < 256 && glob_byteset_has(s, e + 1))
			e++;
		char lo[8], hi[8];
		glob_byte_format(b, lo, sizeof(lo));
		glob_byte_format(e, hi, sizeof(hi));
		size_t at = (size_t)n < size ? (size_t)n : size;
		if (e == b)
			n += snprintf(buf + at, size - at, "%s%s", n ? " " : "", lo);
		else
			n += snprintf(buf + at, size - at, "%s%s-%s", n ? " " : "", lo, hi);
		b = e + 1;
	}
	return n;
}

int glob_byteset_format(const struct glob_byteset *s, char *buf, size_t size)
{
	struct glob_byteset c;
	unsigned in = 0;
	for (unsigned w = 0; w < 4; w++) {
		c.w[w] = ~s->w[w];
		in += (unsigned)__builtin_popcountll(s->w[w]);
	}
	/* NUL never matches, so leave it out of a complement's text */
	c.w[0] &= ~(uint64_t)1;
	if (glob_byteset_empty(&c))
		return snprintf(buf, size, "any");
	if (in > 128) {
		if (size)
			buf[0] = '^';
		int n = glob_ranges_format(&c, size > 1 ? buf + 1 : buf, size > 1 ? size - 1 : 0);
		return n + 1;
	}
	return glob_ranges_format(s, buf, size);
}

void glob_dump(const struct glob *g, FILE *out)
{
	for (size_t a = 0; a < g->nalts; a++) {
		const struct glob_alt *alt = &g->alts[a];
		fprintf(out, "alt %zu:", a);
		for (size_t i = 0; i < alt->n; i++) {
			const struct glob_item *it = &alt->items[i];
			fprintf(out, " %s", glob_item_kind_name(it->kind));
			if (it->kind == GLOB_ITEM_BYTE || it->kind == GLOB_ITEM_STAR) {
				char buf[1200];
				glob_byteset_format(&it->set, buf, sizeof(buf));
				fprintf(out, "[%s]", buf);
			}
		}
		fputc('\n', out);
	}
}
