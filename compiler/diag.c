/* SPDX-License-Identifier: GPL-2.0-only */
#include "diag.h"
#include "mem.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static struct source *source_new_body(const char *name, const char *text, size_t len)
{
	struct source *s = xmalloc(sizeof(*s));
	s->name = xstrdup(name);
	s->text = xmalloc(len + 1);
	memcpy(s->text, text, len);
	s->text[len] = '\0';
	s->len = len;
	/* the line index: one pass of memchr, counted first so it is exact */
	size_t n = 1;
	for (const char *p = s->text, *end = s->text + len; (p = memchr(p, '\n', (size_t)(end - p))); p++)
		n++;
	s->lines = xmalloc(n * sizeof(*s->lines));
	s->lines[0] = 0;
	s->nlines = 1;
	for (const char *p = s->text, *end = s->text + len; (p = memchr(p, '\n', (size_t)(end - p))); p++)
		s->lines[s->nlines++] = (uint32_t)(p + 1 - s->text);
	return s;
}

struct source *source_new(const char *name, const char *text, size_t len)
{
	return MEM_PROTECT(NULL, source_new_body(name, text, len));
}

/* Clears O_NONBLOCK: 0 or a negative errno. */
static int fd_set_blocking(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0)
		return -errno;
	return 0;
}

/* Opens path for source_read_max: a FIFO is opened without blocking (open
 * of a FIFO for reading waits for a writer) and must have a writer by now. */
static int source_open(const char *path, size_t max, bool *fifo)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct stat st;
	int err = 0;
	if (fstat(fd, &st) < 0)
		err = -errno;
	else if (S_ISDIR(st.st_mode))
		err = -EISDIR;
	else if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > max)
		err = -EFBIG;   /* said before a byte is read */
	*fifo = !err && S_ISFIFO(st.st_mode);
	if (!err && !*fifo)
		err = fd_set_blocking(fd);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

int source_read_max(const char *path, size_t max, struct source **out)
{
	bool std_in = strcmp(path, "-") == 0, fifo = false;
	if (max == 0 || max > SOURCE_MAX_LIMIT)
		max = max ? SOURCE_MAX_LIMIT : SOURCE_MAX_DEFAULT;
	int fd = std_in ? STDIN_FILENO : source_open(path, max, &fifo);
	if (fd < 0)
		return fd;
	/* allocations that return NULL, not raise: the descriptor must be closed */
	size_t len = 0, cap = 4096;
	char *buf = mem_try_malloc(cap);
	int err = buf ? 0 : -ENOMEM;
	for (bool first = true; !err; first = false) {
		if (len == cap) {
			char *bigger = mem_try_realloc(buf, cap * 2);
			if (!bigger) {
				err = -ENOMEM;
				break;
			}
			buf = bigger;
			cap *= 2;
		}
		/* one byte past max is enough to know the input is too large */
		size_t want = cap - len;
		if (want > max + 1 - len)
			want = max + 1 - len;
		ssize_t r = read(fd, buf + len, want);
		if (r < 0 && errno == EAGAIN && fifo) {
			/* a writer that has not written yet: from now on, wait for it */
			if ((err = fd_set_blocking(fd)) < 0)
				break;
			fifo = false;
			continue;
		}
		if (r < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
		}
		if (r == 0) {
			/* a FIFO that ends before its first byte had no writer: refused,
			 * so that a FIFO nobody feeds never hangs the compiler */
			if (first && fifo)
				err = -ENODATA;
			break;
		}
		len += (size_t)r;
		if (len > max) {
			err = -EFBIG;
			break;
		}
	}
	if (!std_in)
		close(fd);
	if (err) {
		free(buf);
		return err;
	}
	struct source *s = source_new(std_in ? "<stdin>" : path, buf, len);
	free(buf);
	if (!s)
		return -ENOMEM;
	*out = s;
	return 0;
}

int source_read(const char *path, struct source **out)
{
	return source_read_max(path, SOURCE_MAX_DEFAULT, out);
}

void source_free(struct source *src)
{
	if (!src)
		return;
	free(src->name);
	free(src->text);
	free(src->lines);
	free(src);
}

struct loc loc_span(struct loc a, struct loc b)
{
	if (!a.src)
		return b;
	if (!b.src || b.off + b.len < a.off)
		return a;
	a.len = b.off + b.len - a.off;
	return a;
}

void loc_linecol(struct loc l, unsigned *line, unsigned *col)
{
	/* the last line start at or before off (a location past the end, as
	 * the end-of-input one, counts from the last line like the scan did) */
	size_t off = l.off < l.src->len ? l.off : l.src->len;
	size_t lo = 0, hi = l.src->nlines;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (l.src->lines[mid] <= off)
			lo = mid;
		else
			hi = mid;
	}
	*line = (unsigned)lo + 1;
	*col = (unsigned)(l.off - l.src->lines[lo]) + 1;
}

void diag_init(struct diag_ctx *dc)
{
	memset(dc, 0, sizeof(*dc));
}

void diag_fini(struct diag_ctx *dc)
{
	for (size_t i = 0; i < dc->n; i++) {
		free(dc->items[i].msg);
		for (unsigned j = 0; j < dc->items[i].nnotes; j++)
			free(dc->items[i].notes[j].msg);
	}
	free(dc->items);
	memset(dc, 0, sizeof(*dc));
}

static char *vformat(const char *fmt, va_list ap)
{
	va_list aq;
	va_copy(aq, ap);
	int n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	char *s = xmalloc((size_t)n + 1);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	return s;
}

static void diag_vqueue(struct diag_ctx *dc, enum diag_severity sev, struct loc loc,
			const char *fmt, va_list ap)
{
	dc->dropped_last = true;
	if (sev == DIAG_ERROR) {
		if (dc->errors >= DIAG_MAX_ERRORS) {
			dc->truncated = true;
			return;
		}
		dc->errors++;
	}
	struct diag_kind *kind = NULL;
	if (sev == DIAG_WARNING && !dc->all_warnings) {
		for (unsigned i = 0; i < dc->nkinds && !kind; i++)
			if (strcmp(dc->kinds[i].fmt, fmt) == 0)
				kind = &dc->kinds[i];
		if (!kind && dc->nkinds < DIAG_WARNING_KINDS) {
			kind = &dc->kinds[dc->nkinds++];
			*kind = (struct diag_kind){ .fmt = fmt };
		}
		if (kind && kind->queued >= DIAG_MAX_WARNINGS_KIND) {
			dc->items[kind->last].more++;
			dc->warnings_dropped++;
			return;
		}
		if (!kind || dc->warnings >= DIAG_MAX_WARNINGS) {
			dc->warnings_dropped++;
			dc->warnings_unsaid++;
			return;
		}
	}
	if (sev == DIAG_WARNING)
		dc->warnings++;
	/* room first, then the text, then the record: exhaustion at either
	 * step leaves the queue as it was */
	mem_grow((void **)&dc->items, &dc->cap, dc->n + 1, sizeof(*dc->items));
	char *msg = vformat(fmt, ap);
	dc->dropped_last = false;
	struct diag *d = &dc->items[dc->n++];
	memset(d, 0, sizeof(*d));
	d->severity = sev;
	d->loc = loc;
	d->msg = msg;
	if (kind) {
		kind->queued++;
		kind->last = dc->n - 1;
	}
}

int diag_error(struct diag_ctx *dc, struct loc loc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	diag_vqueue(dc, DIAG_ERROR, loc, fmt, ap);
	va_end(ap);
	return -1;
}

void diag_warning(struct diag_ctx *dc, struct loc loc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	diag_vqueue(dc, DIAG_WARNING, loc, fmt, ap);
	va_end(ap);
}

void diag_vwarning(struct diag_ctx *dc, struct loc loc, const char *fmt, va_list ap)
{
	diag_vqueue(dc, DIAG_WARNING, loc, fmt, ap);
}

void diag_add(struct diag_ctx *dc, enum diag_severity sev, struct loc loc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	diag_vqueue(dc, sev, loc, fmt, ap);
	va_end(ap);
}

void diag_note(struct diag_ctx *dc, struct loc loc, const char *fmt, ...)
{
	if (dc->n == 0 || dc->truncated || dc->dropped_last)
		return;
	struct diag *d = &dc->items[dc->n - 1];
	if (d->nnotes == 3)
		return;
	va_list ap;
	va_start(ap, fmt);
	d->notes[d->nnotes].loc = loc;
	d->notes[d->nnotes].msg = vformat(fmt, ap);
	d->nnotes++;
	va_end(ap);
}

bool diag_full(const struct diag_ctx *dc)
{
	return dc->errors >= DIAG_MAX_ERRORS;
}

static const char *const severity_name[] = {
	[DIAG_ERROR] = "error", [DIAG_WARNING] = "warning", [DIAG_NOTE] = "note",
};

/* The widest piece of a source line a diagnostic shows: a hostile policy's
 * one-line megabyte string must not become a megabyte of stderr. */
#define DIAG_LINE_SHOWN 160
#define DIAG_LINE_BEFORE 40

/* The source line of loc with a caret span under it. Tabs are kept in the
 * gutter so the caret lines up; bytes that do not print become '?'. A long
 * line is cut to the part around the span, "..." marking each cut. Each
 * line goes out in one write (stderr is unbuffered). */
static void print_caret(struct loc l, FILE *out)
{
	unsigned line, col;
	loc_linecol(l, &line, &col);
	const char *text = l.src->text;
	size_t bol = l.off - (col - 1), eol = bol;
	/* lines end at '\n' only, as loc_linecol counts them (a bare '\r' is
	 * a byte of the line: fuzz_toml found a caret run past the buffer when
	 * it ended the line before the location); a CRLF's '\r' is not shown */
	while (eol < l.src->len && text[eol] != '\n')
		eol++;
	if (eol < l.src->len && eol > l.off && text[eol - 1] == '\r')
		eol--;
	size_t from = bol, to = eol;
	if (eol - bol > DIAG_LINE_SHOWN) {
		from = l.off - bol > DIAG_LINE_BEFORE ? l.off - DIAG_LINE_BEFORE : bol;
		to = from + DIAG_LINE_SHOWN < eol ? from + DIAG_LINE_SHOWN : eol;
	}
	const char *pre = from > bol ? "..." : "", *post = to < eol ? "..." : "";
	char buf[DIAG_LINE_SHOWN + 32];
	size_t k = 0;
	for (size_t i = from; i < to; i++) {
		unsigned char c = (unsigned char)text[i];
		buf[k++] = c == '\t' || c >= 0x20 ? (char)c : '?';
	}
	fprintf(out, "%5u | %s%.*s%s\n", line, pre, (int)k, buf, post);
	k = 0;
	for (size_t i = 0; i < strlen(pre); i++)
		buf[k++] = ' ';
	for (size_t i = from; i < l.off && i < to; i++)
		buf[k++] = text[i] == '\t' ? '\t' : ' ';
	size_t end = l.off + (l.len ? l.len : 1);
	if (end > eol)
		end = eol > l.off ? eol : l.off + 1;
	if (end > to && to > l.off)
		end = to;
	buf[k++] = '^';
	for (size_t i = l.off + 1; i < end; i++) {
		/* one mark per character, not per UTF-8 continuation byte */
		if (((unsigned char)text[i] & 0xc0) != 0x80)
			buf[k++] = '~';
	}
	fprintf(out, "      | %.*s\n", (int)k, buf);
}

static void print_one(struct loc loc, const char *sev, const char *msg, FILE *out)
{
	if (loc.src) {
		unsigned line, col;
		loc_linecol(loc, &line, &col);
		fprintf(out, "%s:%u:%u: %s: %s\n", loc.src->name, line, col, sev, msg);
		print_caret(loc, out);
	} else {
		fprintf(out, "beec: %s: %s\n", sev, msg);
	}
}

void diag_print(const struct diag_ctx *dc, FILE *out)
{
	for (size_t i = 0; i < dc->n; i++) {
		const struct diag *d = &dc->items[i];
		print_one(d->loc, severity_name[d->severity], d->msg, out);
		for (unsigned j = 0; j < d->nnotes; j++) {
			const struct diag_note *n = &d->notes[j];
			if (n->loc.src) {
				unsigned line, col;
				loc_linecol(n->loc, &line, &col);
				fprintf(out, "%s:%u:%u: note: %s\n", n->loc.src->name, line, col, n->msg);
			} else {
				fprintf(out, "      = note: %s\n", n->msg);
			}
		}
		if (d->more)
			fprintf(out, "beec: %zu more warning%s of this kind not shown (--warnings=all shows them)\n",
				d->more, d->more == 1 ? "" : "s");
	}
	if (dc->warnings_unsaid)
		fprintf(out, "beec: %zu more warning%s not shown (--warnings=all shows them)\n",
			dc->warnings_unsaid, dc->warnings_unsaid == 1 ? "" : "s");
	if (dc->truncated)
		fprintf(out, "beec: too many errors (stopped after %d)\n", DIAG_MAX_ERRORS);
}

const char *diag_quote(char *buf, size_t size, const char *s, size_t n, bool ascii)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (k == size - 4) {
			memcpy(buf + k, "...", 3);
			k += 3;
			break;
		}
		unsigned char c = (unsigned char)s[i];
		bool prints = c >= 0x20 && c != 0x7f && (!ascii || c < 0x7f);
		buf[k++] = prints ? (char)c : '?';
	}
	buf[k] = '\0';
	return buf;
}

static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 64 || lb > 64)
		return SIZE_MAX;
	size_t row[65];
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

const char *diag_suggest(const char *word, const char *const *cands)
{
	const char *best = NULL;
	size_t best_d = SIZE_MAX;
	for (const char *const *c = cands; *c; c++) {
		size_t d = edit_distance(word, *c);
		if (d < best_d) {
			best_d = d;
			best = *c;
		}
	}
	size_t len = strlen(word);
	size_t limit = len <= 3 ? 1 : len <= 6 ? 2 : 3;
	return best_d <= limit ? best : NULL;
}
