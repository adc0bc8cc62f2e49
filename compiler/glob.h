/* SPDX-License-Identifier: GPL-2.0-only */
/* glob.h: policy globs, parsed into linear patterns for the automaton.
 *
 * Semantics (git's wildmatch in pathname mode, plus shell braces):
 *
 *   {a,b}   alternation; may nest, may be empty ({,x}) and may hold '/' and
 *           any other glob syntax. Braces expand first, as in a shell, and
 *           every alternative is then matched by the rules below; so
 *           whether a '**' is a whole segment is decided per alternative.
 *           '{a}' is a group of one. A stray '}' is an error; a ',' outside
 *           braces is a literal.
 *   *       any run of bytes within one segment (never '/')
 *   ?       any one byte but '/'
 *   [a-z] [!x] [^x] [[:alpha:]]
 *           one byte of (or not of) the class; never '/' (pathname mode);
 *           ']' first in the class is a member; '-' first or last is a
 *           member; a reversed range is an error.
 *   **      a run of two or more '*' is a whole segment when it is at the
 *           start or after a literal '/', and at the end or before a
 *           literal '/'. Then '**' followed by '/' matches zero or more
 *           whole segments ("/a/" "**" "/b" matches /a/b and /a/x/y/b);
 *           '**' at the end matches any rest, '/' included. Elsewhere a
 *           run of stars acts as a single '*'.
 *   \c      the byte c, literally.
 *
 * Following git, "/dir/" "**" matches everything below /dir but not /dir
 * itself: the '/' before '**' is literal. (It matches "/dir/" too, which a
 * normalised path never is.)
 *
 * No glob matches a NUL byte: paths and names end at NUL in the kernel.
 * Nothing here assumes a leading '/', so environment-variable names use the
 * same globs; in a name '/' is an ordinary byte, yet '*', '?' and classes
 * still never match it (so "*" passes no name holding a '/').
 *
 * A parsed glob is a list of alternatives (its brace expansion, at most
 * GLOB_MAX_ALTS), each a sequence of items over byte sets.
 *
 * Ownership: glob_parse fills a struct glob that the caller releases with
 * glob_fini.
 */
#ifndef BEE_GLOB_H
#define BEE_GLOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* A brace expansion larger than this is refused rather than lowered. */
#define GLOB_MAX_ALTS 1024
/* Nor may its alternatives hold more items together: 1024 alternatives of
 * a 4 KiB path would be 4 million items, and as many automaton states to
 * fold one alternative at a time. */
#define GLOB_MAX_ITEMS 65536

/* A set of bytes, bit b of w[b / 64]. */
struct glob_byteset {
	uint64_t w[4];
};

static inline bool glob_byteset_has(const struct glob_byteset *s, unsigned b)
{
	return (s->w[b >> 6] >> (b & 63)) & 1;
}

static inline void glob_byteset_add(struct glob_byteset *s, unsigned b)
{
	s->w[b >> 6] |= (uint64_t)1 << (b & 63);
}

/* Item kinds: (name, dump text). */
#define GLOB_ITEM_KINDS(X)                                                  \
	X(BYTE, "byte")   /* exactly one byte of set */                     \
	X(STAR, "star")   /* zero or more bytes of set (set excludes '/') */ \
	X(ANY, "any")     /* zero or more of any byte but NUL: trailing ** */ \
	X(DIRS, "dirs")   /* nothing, or any bytes ending with '/': '**' '/' */

enum glob_item_kind {
#define X(name, str) GLOB_ITEM_##name,
	GLOB_ITEM_KINDS(X)
#undef X
};

const char *glob_item_kind_name(enum glob_item_kind k);

struct glob_item {
	enum glob_item_kind kind;
	struct glob_byteset set;   /* BYTE and STAR only */
};

/* One brace-free alternative: its items in order. */
struct glob_alt {
	struct glob_item *items;
	size_t n;
};

struct glob {
	struct glob_alt *alts;
	size_t nalts;
};

/* Where the glob text is wrong: a byte span of it and a message. */
struct glob_error {
	size_t off, len;
	char msg[128];
};

/* Parses the NUL-terminated text. Returns 0, or -EINVAL with *err filled
 * (and *out left empty). */
int glob_parse(const char *text, struct glob *out, struct glob_error *err);
void glob_fini(struct glob *g);

/* "Hidden means hidden" (docs/decisions.md): for each alternative that
 * ends in a whole-segment '/' '**' (everything below a directory) adds one
 * that matches the directory itself ("/a/" "**" also "/a"; "/" "**" also
 * "/"). Lowering applies it to [fs] deny rules only. */
void glob_cover_dir(struct glob *g);

/* One line per alternative: its items, e.g. "byte '/' star [^/] dirs". */
void glob_dump(const struct glob *g, FILE *out);

/* Writes a byte set as ranges ("'a'-'z' '_'"), as "^" and the complement
 * when that is shorter ("^'/'": any byte but '/' and NUL), or "any" for every
 * byte but NUL; returns the length of the whole text (snprintf-style). */
int glob_byteset_format(const struct glob_byteset *s, char *buf, size_t size);

#endif
