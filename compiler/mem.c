#include "mem.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long fail_after = -1;

void mem_fail_after(long n)
{
	fail_after = n;
}

static void *mem_check(void *p, size_t n)
{
	if (fail_after == 0)
		p = NULL;
	else if (fail_after > 0)
		fail_after--;
	if (!p && n) {
		fprintf(stderr, "beec: out of memory allocating %zu bytes\n", n);
		abort();
	}
	return p;
}

void *xmalloc(size_t n)
{
	return mem_check(malloc(n ? n : 1), n ? n : 1);
}

void *xcalloc(size_t nmemb, size_t size)
{
	if (size && nmemb > SIZE_MAX / size)
		return mem_check(NULL, SIZE_MAX);
	return mem_check(calloc(nmemb ? nmemb : 1, size ? size : 1), 1);
}

void *xrealloc(void *p, size_t n)
{
	return mem_check(realloc(p, n ? n : 1), n ? n : 1);
}

char *xstrndup(const char *s, size_t n)
{
	char *d = xmalloc(n + 1);
	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

char *xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	char *s = xmalloc((size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return s;
}

void mem_grow(void **items, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return;
	size_t c = *cap ? *cap : 8;
	while (c < need)
		c *= 2;
	if (c > SIZE_MAX / elem)
		mem_check(NULL, SIZE_MAX);
	*items = xrealloc(*items, c * elem);
	*cap = c;
}

/* ---- arena --------------------------------------------------------------- */

struct arena_block {
	struct arena_block *next;
	size_t used, size;
	_Alignas(16) unsigned char data[];
};

#define ARENA_BLOCK 65536

void *arena_alloc(struct arena *a, size_t n)
{
	n = (n + 15) & ~(size_t)15;
	struct arena_block *b = a->head;
	if (!b || b->size - b->used < n) {
		size_t size = n > ARENA_BLOCK / 4 ? n : ARENA_BLOCK;
		b = xmalloc(sizeof(*b) + size);
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

char *arena_strndup(struct arena *a, const char *s, size_t n)
{
	char *d = arena_alloc(a, n + 1);
	memcpy(d, s, n);
	return d;
}

char *arena_strdup(struct arena *a, const char *s)
{
	return arena_strndup(a, s, strlen(s));
}

char *arena_printf(struct arena *a, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	char *s = arena_alloc(a, (size_t)n + 1);
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
