/* SPDX-License-Identifier: GPL-2.0-only */
/* toml_parse.h: what grammar/toml.l, grammar/toml.y and compiler/toml.c
 * share while one document is parsed. Not a public interface. */
#ifndef BEE_TOML_PARSE_H
#define BEE_TOML_PARSE_H

#include "toml.h"

/* the most the 'depth' limit may be: the scanner's stack of open arrays */
#define TOML_MAX_DEPTH 128

/* One part of a dotted key. */
struct toml_key {
	const char *ptr;      /* arena-owned, NUL-terminated */
	size_t len;
	struct loc loc;
};

/* A dotted key a."b".c as written; xmalloc-owned (keypath_free). */
struct toml_keypath {
	size_t n, cap;
	struct toml_key *parts;
};

enum toml_lex_ctx { TOML_CTX_TOP, TOML_CTX_ARRAY, TOML_CTX_INLINE };

struct toml_parser {
	struct toml_doc *doc;
	struct diag_ctx *dc;
	const struct source *src;
	void *scanner;
	struct beec_limits lim;
	size_t nkeys;         /* keys in the document so far */
	bool limit_hit;       /* a limit stopped the parse */

	/* scanner state */
	uint32_t pos;                          /* byte offset of the next token */
	enum toml_lex_ctx ctx[TOML_MAX_DEPTH]; /* open arrays and inline tables */
	unsigned depth;
	bool scan_error;      /* the last token was an error already reported */
	bool recovering;      /* a syntax error: resynchronise at the next newline */
	char *buf;            /* string being decoded */
	size_t blen, bcap;
	uint32_t str_start;   /* offset of a multi-line string's opening quotes */
	bool ml_first;        /* just after the opening quotes of a multi-line string */

	/* builder state */
	struct toml_node *section;             /* the table of the current [header] */
	const char *section_name;              /* its dotted name, "" for the root */
	unsigned next_section;
	struct toml_node *inl[TOML_MAX_DEPTH]; /* inline tables being built */
	unsigned ninl;
};

/* scanner helpers (compiler/toml.c) */
/* Opens an array or inline table at at; -1 (error queued) past 'depth'. */
int toml_lex_open(struct toml_parser *p, enum toml_lex_ctx c, struct loc at);
void toml_lex_buf_reset(struct toml_parser *p);
void toml_lex_buf_add(struct toml_parser *p, const char *s, size_t n);
/* Decodes the escape at s (starting with '\\'); returns -1 after queuing
 * an error located at off. */
int toml_lex_escape(struct toml_parser *p, const char *s, size_t n, uint32_t off);
/* Checks s for control characters that TOML forbids (tab allowed). */
int toml_lex_check_controls(struct toml_parser *p, const char *s, size_t n,
			    uint32_t off, const char *where);
struct toml_node *toml_lex_string(struct toml_parser *p, const char *s, size_t n,
				  uint32_t off, uint32_t len, bool literal);
struct toml_node *toml_lex_buf_node(struct toml_parser *p, uint32_t off, uint32_t len);
struct toml_node *toml_lex_integer(struct toml_parser *p, const char *s, size_t n, struct loc l);
struct toml_node *toml_lex_float(struct toml_parser *p, const char *s, size_t n, struct loc l);
struct toml_node *toml_lex_datetime(struct toml_parser *p, enum toml_type t,
				    const char *s, size_t n, struct loc l);
struct toml_node *toml_lex_bool(struct toml_parser *p, bool v, struct loc l);

/* builders called from the grammar's actions */
struct toml_keypath *toml_keypath_new(struct toml_key k);
struct toml_keypath *toml_keypath_push(struct toml_keypath *kp, struct toml_key k);
void toml_keypath_free(struct toml_keypath *kp);
int toml_build_keyval(struct toml_parser *p, struct toml_keypath *kp, struct toml_node *val);
int toml_build_table(struct toml_parser *p, struct loc l, struct toml_keypath *kp, bool aot);
struct toml_node *toml_build_array(struct toml_parser *p, struct loc l);
int toml_build_array_push(struct toml_parser *p, struct toml_node *arr, struct toml_node *v);
void toml_build_inline_begin(struct toml_parser *p, struct loc l);
struct toml_node *toml_build_inline_end(struct toml_parser *p, struct loc l);
void toml_build_recover(struct toml_parser *p);

#endif
