/* SPDX-License-Identifier: GPL-2.0-only */
/* mem.c: the allocation funnel, its traps, accounting and arenas (mem.h). */
#include "mem.h"

#include <jansson.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Per thread: a compile runs on one thread, and its budget is its own. */
static _Thread_local struct mem_trap *trap_top;
static _Thread_local struct mem_stats stats;
static _Thread_local uint64_t budget;
static _Thread_local uint64_t next_sample; /* stats.bytes at the next heap reading */
static _Thread_local long fail_after = -1;
static _Thread_local void (*on_alloc)(uint64_t k, const char *where, void *ctx);
static _Thread_local void *on_alloc_ctx;

void mem_on_alloc(void (*fn)(uint64_t k, const char *where, void *ctx), void *ctx)
{
	on_alloc = fn;
	on_alloc_ctx = ctx;
}

void mem_fail_after(long n)
{
	fail_after = n;
}

void mem_budget_set(uint64_t bytes)
{
	budget = bytes;
	next_sample = stats.bytes;
}

/* Under a sanitizer its allocator holds the heap, and says how much. */
size_t __sanitizer_get_current_allocated_bytes(void) __attribute__((weak));

uint64_t mem_heap_in_use(void)
{
	if (__sanitizer_get_current_allocated_bytes)
		return __sanitizer_get_current_allocated_bytes();
	struct mallinfo2 mi = mallinfo2();
	return (uint64_t)mi.uordblks + mi.hblkhd;
}

/* The heap is read once the bytes handed out since the last reading pass
 * half the headroom the reading left (at least MEM_SAMPLE): the heap cannot
 * grow by more than what is handed out, so it cannot pass the budget
 * unseen by more than MEM_SAMPLE, and a compile far from its budget reads
 * rarely. A reading walks malloc's free chunks: reading once per MiB, or
 * before every block of a MiB, was a quarter of a 10,000-rule compile. */
#define MEM_SAMPLE (1u << 20)

/* Would n more bytes take the process's heap past the budget? */
static bool mem_over_budget(size_t n)
{
	if (n > budget)
		return true;
	if (stats.bytes + n <= next_sample)
		return false;
	uint64_t in_use = mem_heap_in_use();
	if (in_use > stats.peak)
		stats.peak = in_use;
	if (in_use > budget - n)
		return true;
	uint64_t room = (budget - n - in_use) / 2;
	next_sample = stats.bytes + n + (room > MEM_SAMPLE ? room : MEM_SAMPLE);
	return false;
}

void mem_stats_get(struct mem_stats *s)
{
	*s = stats;
}

void mem_stats_reset(void)
{
	memset(&stats, 0, sizeof(stats));
}

/* ---- traps ------------------------------------------------------------------ */

void mem_trap_push(struct mem_trap *t, const char *where)
{
	t->prev = trap_top;
	t->where = where;
	t->exhausted = false;
	trap_top = t;
}

bool mem_trap_pop(struct mem_trap *t)
{
	trap_top = t->prev;
	return t->exhausted;
}

/* Marks the innermost trap and every one enclosing it: exhaustion is sticky. */
static void mem_mark_exhausted(void)
{
	for (struct mem_trap *t = trap_top; t; t = t->prev)
		t->exhausted = true;
}

bool mem_exhausted(void)
{
	return trap_top && trap_top->exhausted;
}

_Noreturn void mem_raise(const char *where)
{
	struct mem_trap *t = trap_top;
	if (!t) {
		fprintf(stderr, "libbeec: out of memory in '%s', outside any protected call (a programming "
			"error: call it through a libbeec entry point)\n", where);
		fflush(stderr);   /* a host may have made stderr buffered: abort flushes nothing */
		abort();
	}
	mem_mark_exhausted();
	siglongjmp(t->jb, 1);
}

/* ---- the gate every allocation passes --------------------------------------------- */

static void mem_failed(enum mem_failure why, size_t n)
{
	if (stats.failure == MEM_FAIL_NONE) {
		stats.failure = why;
		stats.failed_size = n;
	}
	mem_mark_exhausted();
}

/* May n more bytes be handed out? Records why not. */
static bool mem_admit(size_t n)
{
	if (fail_after == 0) {
		mem_failed(MEM_FAIL_INJECTED, n);
		return false;
	}
	if (budget && mem_over_budget(n)) {
		mem_failed(MEM_FAIL_BUDGET, n);
		return false;
	}
	return true;
}

static void *mem_counted(void *p, size_t n, const char *where)
{
	if (!p) {
		mem_failed(MEM_FAIL_SYSTEM, n);
		return NULL;
	}
	if (fail_after > 0)
		fail_after--;
	if (on_alloc)
		on_alloc(stats.allocs, where, on_alloc_ctx);
	stats.allocs++;
	stats.bytes += n;
	return p;
}

void *mem_try_malloc_at(size_t n, const char *where)
{
	n = n ? n : 1;
	return mem_admit(n) ? mem_counted(malloc(n), n, where) : NULL;
}

void *mem_try_realloc_at(void *p, size_t n, const char *where)
{
	n = n ? n : 1;
	return mem_admit(n) ? mem_counted(realloc(p, n), n, where) : NULL;
}

static void *mem_try_calloc(size_t nmemb, size_t size, const char *where)
{
	if (size && nmemb > SIZE_MAX / size) {
		mem_failed(MEM_FAIL_SYSTEM, SIZE_MAX);
		return NULL;
	}
	size_t n = nmemb * size;
	if (n == 0)
		n = 1;
	return mem_admit(n) ? mem_counted(calloc(n, 1), n, where) : NULL;
}

/* ---- the raising funnel ------------------------------------------------------------ */

void *mem_xmalloc(size_t n, const char *where)
{
	void *p = mem_try_malloc_at(n, where);
	if (!p)
		mem_raise(where);
	return p;
}

void *mem_xcalloc(size_t nmemb, size_t size, const char *where)
{
	void *p = mem_try_calloc(nmemb, size, where);
	if (!p)
		mem_raise(where);
	return p;
}

void *mem_xrealloc(void *p, size_t n, const char *where)
{
	/* on failure p stays valid and owned by the caller's structure */
	void *q = mem_try_realloc_at(p, n, where);
	if (!q)
		mem_raise(where);
	return q;
}

char *mem_xstrndup(const char *s, size_t n, const char *where)
{
	char *d = mem_xmalloc(n + 1, where);
	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

char *mem_xstrdup_at(const char *s, const char *where)
{
	return mem_xstrndup(s, strlen(s), where);
}

char *mem_xasprintf(const char *where, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	char *s = mem_xmalloc((size_t)n + 1, where);
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return s;
}

void mem_xgrow(void **items, size_t *cap, size_t need, size_t elem, const char *where)
{
	if (need <= *cap)
		return;
	size_t c = *cap ? *cap : 8;
	while (c < need && c <= SIZE_MAX / 2)
		c *= 2;
	if (c < need || c > SIZE_MAX / elem) {
		mem_failed(MEM_FAIL_SYSTEM, SIZE_MAX);
		mem_raise(where);
	}
	/* *items and *cap change together, only once the block is there */
	*items = mem_xrealloc(*items, c * elem, where);
	*cap = c;
}

/* ---- jansson ---------------------------------------------------------------------- */

static void *mem_json_malloc(size_t n)
{
	return mem_try_malloc_at(n, "jansson");
}

void mem_json_route(void)
{
	json_set_alloc_funcs(mem_json_malloc, free);
}

/* ---- arena ------------------------------------------------------------------------ */

struct arena_block {
	struct arena_block *next;
	size_t used, size;
	_Alignas(16) unsigned char data[];
};

#define ARENA_BLOCK 65536

void *mem_arena_alloc(struct arena *a, size_t n, const char *where)
{
	if (n > SIZE_MAX - 16 - sizeof(struct arena_block)) {
		mem_failed(MEM_FAIL_SYSTEM, n);
		mem_raise(where);
	}
	n = (n + 15) & ~(size_t)15;
	struct arena_block *b = a->head;
	if (!b || b->size - b->used < n) {
		size_t size = n > ARENA_BLOCK / 4 ? n : ARENA_BLOCK;
		b = mem_xmalloc(sizeof(*b) + size, where);
		b->used = 0;
		b->size = size;
		if (size == ARENA_BLOCK || !a->head) {
			b->next = a->head;
			a->head = b;
		} else {
			/* a large block goes behind the current one, which keeps its room */
			b->next = a->head->next;
			a->head->next = b;
		}
	}
	void *p = b->data + b->used;
	b->used += n;
	memset(p, 0, n);
	return p;
}

char *mem_arena_strndup(struct arena *a, const char *s, size_t n, const char *where)
{
	char *d = mem_arena_alloc(a, n + 1, where);
	memcpy(d, s, n);
	return d;
}

char *mem_arena_strdup_at(struct arena *a, const char *s, const char *where)
{
	return mem_arena_strndup(a, s, strlen(s), where);
}

char *mem_arena_printf(const char *where, struct arena *a, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	char *s = mem_arena_alloc(a, (size_t)n + 1, where);
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return s;
}

void arena_free(struct arena *a)
{
	struct arena_block *b = a->head;
	while (b) {
		struct arena_block *next = b->next;
		free(b);
		b = next;
	}
	a->head = NULL;
}
