/* SPDX-License-Identifier: GPL-2.0-only */
/* diag.h: sources, locations and compiler-grade diagnostics.
 *
 * A location is a byte span in a source; line and column are computed only
 * when a message is printed. Diagnostics are queued records (severity, a
 * primary location, a message, then notes with their own locations) and
 * printed like a compiler:
 *
 *   policy.toml:12:9: error: unknown key 'raed' in table 'fs'
 *      12 | raed = ["/usr/lib"]
 *         | ^~~~
 *   policy.toml:12:9: note: did you mean 'read'?
 *
 * A failing check returns diag_error(...), which queues and returns -1.
 * After DIAG_MAX_ERRORS errors the context says it is full (diag_full) so
 * that callers stop early; the printout then ends with a line saying so.
 */
#ifndef BEE_DIAG_H
#define BEE_DIAG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define DIAG_MAX_ERRORS 10
/* Warnings are capped per kind (the format string that made them): the
 * first DIAG_MAX_WARNINGS_KIND of a kind are queued, the rest counted and
 * said in one line after the last one shown ("N more warnings of this
 * kind"), so a policy of 100,000 duplicate entries neither queues nor
 * prints 100,000 records. Past DIAG_MAX_WARNINGS in all, or past
 * DIAG_WARNING_KINDS kinds, warnings are counted only. all_warnings
 * lifts both caps (beec --warnings=all). */
#define DIAG_MAX_WARNINGS_KIND 10
#define DIAG_MAX_WARNINGS 100
#define DIAG_WARNING_KINDS 16

/* A named text held in memory. Owns name, text and lines. text is
 * NUL-terminated one byte past len (the text itself may contain NUL bytes).
 * lines[i] is the offset where line i + 1 starts (lines[0] is 0), made once
 * with the source: a location's line is then a binary search, so a policy
 * of many rules does not rescan its text for each one it locates. */
struct source {
	char *name;
	char *text;
	size_t len;
	uint32_t *lines;
	size_t nlines;
};

struct source *source_new(const char *name, const char *text, size_t len);
/* The default bound of an input file, and the most it may be raised to
 * (a location holds a 32-bit offset). */
#define SOURCE_MAX_DEFAULT ((size_t)16 << 20)
#define SOURCE_MAX_LIMIT   ((size_t)UINT32_MAX)

/* Reads a file ("-" is standard input) of at most max bytes (0: the
 * default). Returns 0 or a negative errno: -EFBIG more than max bytes,
 * -EISDIR a directory, -ENODATA a FIFO without a writer (refused rather
 * than waited on; a FIFO whose writer has not written yet is waited for),
 * or what open(2) or read(2) said. */
int source_read_max(const char *path, size_t max, struct source **out);
/* source_read_max(path, SOURCE_MAX_DEFAULT, out) */
int source_read(const char *path, struct source **out);
void source_free(struct source *src);

/* A byte span [off, off + len) of src; src == NULL means "no location". */
struct loc {
	const struct source *src;
	uint32_t off;
	uint32_t len;
};

#define LOC_NONE ((struct loc){ 0 })
struct loc loc_span(struct loc a, struct loc b);   /* from a's start to b's end */
/* 1-based line and column (column counts bytes) of loc's start; lines end
 * at '\n' only. O(log lines). */
void loc_linecol(struct loc l, unsigned *line, unsigned *col);

enum diag_severity { DIAG_ERROR, DIAG_WARNING, DIAG_NOTE };

struct diag_note {
	struct loc loc;
	char *msg;
};

struct diag {
	enum diag_severity severity;
	struct loc loc;
	char *msg;
	struct diag_note notes[3];
	unsigned nnotes;
	size_t more;         /* warnings of its kind dropped after it */
};

/* One kind of warning: its format, how many were queued, the last one. */
struct diag_kind {
	const char *fmt;
	unsigned queued;
	size_t last;
};

struct diag_ctx {
	struct diag *items;
	size_t n, cap;
	unsigned errors;
	bool truncated;      /* errors were dropped past DIAG_MAX_ERRORS */
	unsigned warnings;
	size_t warnings_dropped;  /* every warning dropped, by kind or in all */
	size_t warnings_unsaid;   /* those no record's 'more' counts */
	struct diag_kind kinds[DIAG_WARNING_KINDS];
	unsigned nkinds;
	bool all_warnings;   /* no caps on warnings (set after diag_init) */
	bool dropped_last;   /* the last record was dropped: so are its notes */
};

void diag_init(struct diag_ctx *dc);
void diag_fini(struct diag_ctx *dc);

int diag_error(struct diag_ctx *dc, struct loc loc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void diag_warning(struct diag_ctx *dc, struct loc loc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void diag_vwarning(struct diag_ctx *dc, struct loc loc, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));
/* Attaches a note to the last queued diagnostic (up to three). */
void diag_note(struct diag_ctx *dc, struct loc loc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
bool diag_full(const struct diag_ctx *dc);
/* Queues a record of any severity; notes queued this way print with their
 * source line, like errors (beec query uses them to show deciding rules). */
void diag_add(struct diag_ctx *dc, enum diag_severity sev, struct loc loc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Prints every queued diagnostic in queue order. */
void diag_print(const struct diag_ctx *dc, FILE *out);

/* Text quoted in a message, into buf (size bytes, at least 8): bytes that
 * do not print become '?' (with ascii, bytes above 0x7e too: a lone byte
 * of a UTF-8 sequence must not reach a terminal), and a long text is cut
 * with "...". Returns buf. */
const char *diag_quote(char *buf, size_t size, const char *s, size_t n, bool ascii);

/* "did you mean": the candidate nearest to word by edit distance, if it is
 * close enough to be a plausible typo; NULL otherwise. cands ends with NULL. */
const char *diag_suggest(const char *word, const char *const *cands);

#endif
