/* SPDX-License-Identifier: GPL-2.0-only */
/* mem.h: the one allocation funnel of the compiler, a per-compile arena,
 * and the protected calls that turn exhaustion into -ENOMEM.
 *
 * The out-of-memory contract (Lua's luaD_rawrunprotected, lmem.c):
 *
 *  - Compiler code allocates with xmalloc & co and never tests for NULL.
 *  - Every public entry point of libbeec (libbeec.h, and the entries of
 *    attenuate.h, diff.h, query.h, show.h, pack_build.h, lower.h, image.h,
 *    netset.h that beec and libbee call) runs its body under a trap:
 *    MEM_PROTECT. When an allocation fails, the funnel longjmps to the
 *    innermost trap and that entry returns -ENOMEM (NULL where it returns
 *    a pointer). Traps nest, and exhaustion is sticky: every enclosing
 *    entry returns -ENOMEM too, whatever its body made of the inner error.
 *  - Outputs: an entry assigns its outputs only once they are whole, so
 *    after -ENOMEM they are empty (or as they were) and the matching fini
 *    (beec_policy__fini, diff_fini, ...) releases them.
 *  - What the unwinding loses: the transient heap blocks of the interrupted
 *    stage (a half-built document, IR, automaton or jansson tree; flex's
 *    and bison's buffers) are not freed. The host has been told -ENOMEM
 *    and is expected to end or to retry with less; the loss is at most
 *    what that one stage had allocated. Files, directories, descriptors
 *    and child processes are never lost: code that holds one across an
 *    allocation allocates with mem_try_* (NULL, never a longjmp) or runs
 *    under a nested trap of its own that releases it.
 *  - A funnel call outside any trap aborts with a message naming the
 *    function that made it: a host calling an internal function directly
 *    is a programming error. That message is the only thing printed here.
 *  - Only command-line front ends (beec, bee-load) decide to exit.
 *
 * Accounting: the funnel counts the allocations and the bytes it hands out
 * (arena blocks, xmalloc/xrealloc, jansson once routed), cumulatively, per
 * thread. mem_budget_set() bounds the heap the process holds: once per MiB
 * handed out (and before any block of a MiB or more) the funnel reads the
 * heap in use (malloc's, or the sanitizer allocator's) and fails the
 * allocation that would take it past the budget. It bounds memory, not
 * churn: a compile may hand out many times its peak (a generated policy of
 * 100,000 fs rules is handed 39.9 GB with a peak of 0.55 GB).
 * Tests fail the funnel on demand with mem_fail_after().
 *
 * jansson: mem_json_route() makes jansson allocate through the funnel's
 * counting and failing path. It changes a process-global setting, so only
 * host programs call it (beec and bee-load in main, tests), never the
 * library behind its host's back. jansson's allocations fail by returning
 * NULL, never by a longjmp through jansson's frames; a failure also marks
 * the innermost trap exhausted, so even an unchecked result ends in -ENOMEM
 * at the entry, and jsonx.h's checks raise in the compiler's own frame.
 *
 * An arena owns everything allocated from it; arena_free() releases it all
 * at once. IR and document trees live in arenas.
 */
#ifndef BEE_MEM_H
#define BEE_MEM_H

#include <errno.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- the funnel: never returns NULL ---------------------------------------- */

void *mem_xmalloc(size_t n, const char *where);
void *mem_xcalloc(size_t nmemb, size_t size, const char *where);
void *mem_xrealloc(void *p, size_t n, const char *where);
char *mem_xstrndup(const char *s, size_t n, const char *where);
char *mem_xasprintf(const char *where, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void mem_xgrow(void **items, size_t *cap, size_t need, size_t elem, const char *where);

/* where: the calling function, for the abort outside any trap */
#define xmalloc(n) mem_xmalloc((n), __func__)
#define xcalloc(nmemb, size) mem_xcalloc((nmemb), (size), __func__)
#define xrealloc(p, n) mem_xrealloc((p), (n), __func__)
#define xstrndup(s, n) mem_xstrndup((s), (n), __func__)
#define xstrdup(s) mem_xstrdup_at((s), __func__)
/* printf into a new xmalloc'ed string; the caller frees it */
#define xasprintf(...) mem_xasprintf(__func__, __VA_ARGS__)
char *mem_xstrdup_at(const char *s, const char *where);

/* Grow *items (of elem bytes each) so that it holds at least need elements. */
#define mem_grow(items, cap, need, elem) mem_xgrow((items), (cap), (need), (elem), __func__)
#define VEC_PUSH(items, n, cap) \
	(mem_grow((void **)&(items), &(cap), (n) + 1, sizeof(*(items))), &(items)[(n)++])

/* ---- allocations that may fail: NULL, counted, never a longjmp ---------------- */

void *mem_try_malloc_at(size_t n, const char *where);
void *mem_try_realloc_at(void *p, size_t n, const char *where);
#define mem_try_malloc(n) mem_try_malloc_at((n), __func__)
#define mem_try_realloc(p, n) mem_try_realloc_at((p), (n), __func__)

/* Raises exhaustion from the caller's own frame (after a NULL from
 * jansson): longjmps to the innermost trap, or aborts outside one. */
_Noreturn void mem_raise(const char *where);
/* True when an allocation failed inside the innermost trap. */
bool mem_exhausted(void);

/* ---- protected calls ------------------------------------------------------------ */

struct mem_trap {
	sigjmp_buf jb;
	struct mem_trap *prev;
	const char *where;
	bool exhausted;
};

void mem_trap_push(struct mem_trap *t, const char *where);
/* Pops t; true when an allocation failed while it was pushed. */
bool mem_trap_pop(struct mem_trap *t);

/* Evaluates call under a trap: its value, or fail when memory ran out
 * during it (also inside a nested protected call whose error the body
 * turned into something else). */
#define MEM_PROTECT(fail, call) __extension__({                          \
	struct mem_trap mem_trap_;                                        \
	volatile __typeof__(call) mem_ret_ = (fail);                      \
	mem_trap_push(&mem_trap_, __func__);                              \
	if (sigsetjmp(mem_trap_.jb, 0) == 0)                              \
		mem_ret_ = (call);                                        \
	mem_trap_pop(&mem_trap_) ? (__typeof__(call))(fail) : mem_ret_;   \
})

/* ---- accounting, budget and fault injection -------------------------------------- */

enum mem_failure {
	MEM_FAIL_NONE,
	MEM_FAIL_BUDGET,     /* the mem_budget_set total would be passed */
	MEM_FAIL_SYSTEM,     /* malloc returned NULL, or the size overflows */
	MEM_FAIL_INJECTED,   /* mem_fail_after */
};

struct mem_stats {
	uint64_t allocs;              /* successful allocations */
	uint64_t bytes;               /* cumulative bytes handed out */
	uint64_t peak;                /* the largest heap in use read for the budget */
	enum mem_failure failure;     /* the first failure since the reset */
	size_t failed_size;           /* the size that failed */
};

void mem_stats_get(struct mem_stats *s);
/* Zeroes the counts and forgets the failure (budget and injection stay). */
void mem_stats_reset(void);

/* Bounds the heap in use (mem_heap_in_use) of the process; 0: no bound
 * (the default). */
void mem_budget_set(uint64_t bytes);
/* The heap the process holds now, in bytes. */
uint64_t mem_heap_in_use(void);

/* After n further successful allocations every allocation fails, until
 * mem_fail_after(-1) (tests only). */
void mem_fail_after(long n);

/* Calls fn after each successful allocation with its number (from 0 since
 * the last mem_stats_reset) and the function that made it; NULL: none.
 * The allocation sweep uses it to find each allocation site (tests only). */
void mem_on_alloc(void (*fn)(uint64_t k, const char *where, void *ctx), void *ctx);

/* Routes jansson's allocations through mem_try_malloc (host programs only). */
void mem_json_route(void);

/* ---- arenas ------------------------------------------------------------------------- */

struct arena_block;
struct arena {
	struct arena_block *head;
};

void *mem_arena_alloc(struct arena *a, size_t n, const char *where);   /* zeroed, 16-byte aligned */
char *mem_arena_strndup(struct arena *a, const char *s, size_t n, const char *where);
char *mem_arena_printf(const char *where, struct arena *a, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void arena_free(struct arena *a);

#define arena_alloc(a, n) mem_arena_alloc((a), (n), __func__)
#define arena_strndup(a, s, n) mem_arena_strndup((a), (s), (n), __func__)
#define arena_strdup(a, s) mem_arena_strdup_at((a), (s), __func__)
#define arena_printf(...) mem_arena_printf(__func__, __VA_ARGS__)
char *mem_arena_strdup_at(struct arena *a, const char *s, const char *where);

#endif
