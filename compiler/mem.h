/* mem.h: the one allocation funnel of the compiler, and a per-compile arena.
 *
 * Every compiler allocation goes through xmalloc/xcalloc/xrealloc, which
 * abort on exhaustion instead of returning NULL, so callers never test for
 * it. Tests may make the funnel fail on demand with mem_fail_after().
 *
 * An arena owns everything allocated from it; arena_free() releases it all
 * at once. IR and document trees live in arenas.
 */
#ifndef BEE_MEM_H
#define BEE_MEM_H

#include <stddef.h>

void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
/* printf into a new xmalloc'ed string; the caller frees it */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* After n further successful allocations the funnel aborts (tests only);
 * a negative n switches this off. */
void mem_fail_after(long n);

/* Grow *items (of elem bytes each) so that it holds at least need elements. */
void mem_grow(void **items, size_t *cap, size_t need, size_t elem);
#define VEC_PUSH(items, n, cap) \
	(mem_grow((void **)&(items), &(cap), (n) + 1, sizeof(*(items))), &(items)[(n)++])

struct arena_block;
struct arena {
	struct arena_block *head;
};

void *arena_alloc(struct arena *a, size_t n);     /* zeroed, 16-byte aligned */
char *arena_strndup(struct arena *a, const char *s, size_t n);
char *arena_strdup(struct arena *a, const char *s);
char *arena_printf(struct arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void arena_free(struct arena *a);

#endif
