/* SPDX-License-Identifier: GPL-2.0-only */
/* toml.h: the TOML 1.0 document tree that grammar/ builds.
 *
 * Every node keeps the location of its text. Tables keep their keys in
 * document order. Strings are byte strings with a length (TOML allows
 * "\u0000") and are also NUL-terminated for convenience.
 *
 * Ownership: a toml_doc owns every node, key and string in it through its
 * arena; toml_doc_free() releases all of it. The doc does not own its
 * source, which must outlive it.
 */
#ifndef BEE_TOML_H
#define BEE_TOML_H

#include "diag.h"
#include "beec_limits.h"
#include "mem.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define TOML_TYPES(X)                                   \
	X(STRING, "string")                             \
	X(INTEGER, "integer")                           \
	X(FLOAT, "float")                               \
	X(BOOL, "bool")                                 \
	X(DATETIME, "datetime")                         \
	X(DATETIME_LOCAL, "datetime-local")             \
	X(DATE_LOCAL, "date-local")                     \
	X(TIME_LOCAL, "time-local")                     \
	X(ARRAY, "array")                               \
	X(TABLE, "table")

enum toml_type {
#define X(name, str) TOML_##name,
	TOML_TYPES(X)
#undef X
};

const char *toml_type_name(enum toml_type t);

/* How a table came to be; the redefinition rules of TOML 1.0 hang on it. */
enum toml_table_origin {
	TOML_TABLE_IMPLICIT,   /* created as the parent in a [a.b] header */
	TOML_TABLE_HEADER,     /* defined by its own [header] or [[header]] */
	TOML_TABLE_DOTTED,     /* created by a dotted key a.b = 1 */
	TOML_TABLE_INLINE,     /* an inline table { ... }: closed for good */
	TOML_TABLE_ROOT,
};

struct toml_node;

struct toml_kv {
	const char *key;
	size_t keylen;
	struct loc key_loc;
	struct toml_node *val;
};

struct toml_node {
	enum toml_type type;
	/* levels below the document's root (tables from headers and dotted
	 * keys), or levels inside (arrays and inline tables, built bottom up):
	 * together they bound every recursion over the tree (limit 'depth') */
	uint16_t depth, height;
	struct loc loc;
	union {
		struct { const char *ptr; size_t len; } str;
		int64_t integer;
		double fp;
		bool boolean;
		/* date/time values, kept as their (validated) source text with
		 * 'T' and 'Z' upper-cased and a space separator turned into 'T' */
		const char *datetime;
		struct {
			struct toml_node **items;
			size_t n, cap;
			bool of_tables;        /* an array of tables [[x]] */
		} arr;
		struct {
			struct toml_kv *items;
			size_t n, cap;
			enum toml_table_origin origin;
			unsigned section;      /* the [header] section that created it */
		} tab;
	};
};

struct toml_doc {
	struct arena arena;
	const struct source *src;
	struct toml_node *root;
};

/* Parses src. On success returns 0 and *out (the caller frees it with
 * toml_doc_free). On any error queues diagnostics in dc, returns -1 and
 * *out is NULL. */
int toml_parse(const struct source *src, struct diag_ctx *dc, struct toml_doc **out);
/* The same within lim (NULL: the defaults): nesting depth, key and string
 * sizes, keys per table and in the document, items per array (beec_limits.h).
 * A limit hit is one error naming it, and ends the parse. */
int toml_parse_limits(const struct source *src, const struct beec_limits *lim, struct diag_ctx *dc,
		      struct toml_doc **out);
void toml_doc_free(struct toml_doc *doc);

/* The value of key in table t, or NULL. */
const struct toml_kv *toml_table_find(const struct toml_node *t, const char *key, size_t keylen);
const struct toml_node *toml_table_get(const struct toml_node *t, const char *key);

/* Tagged JSON of the toml-test conformance suite. */
int toml_dump_json(const struct toml_node *n, FILE *out);
/* Canonical TOML text: keys sorted bytewise, one table per section, every
 * scalar in one normal spelling. The same document always gives the same
 * bytes. */
int toml_dump_canonical(const struct toml_doc *doc, FILE *out);

#endif
