/* SPDX-License-Identifier: GPL-2.0-only */
/* jsonx.h: jansson calls whose failure is checked, for code under a trap.
 *
 * jansson reports an allocation failure by returning NULL or -1 (its
 * allocator, routed by mem_json_route, never longjmps through its frames);
 * these checks raise it from the compiler's own frame instead, so that the
 * entry returns -ENOMEM rather than a manifest with a key missing. A
 * failure that is not memory (a key that is not UTF-8) keeps jansson's
 * answer.
 */
#ifndef BEE_JSONX_H
#define BEE_JSONX_H

#include "mem.h"

#include <jansson.h>

static inline json_t *jx(json_t *v)
{
	if (!v && mem_exhausted())
		mem_raise("jansson");
	return v;
}

/* json_object_set_new: v is stolen also on failure */
static inline void jx_set(json_t *o, const char *key, json_t *v)
{
	if (json_object_set_new(o, key, v) < 0 && mem_exhausted())
		mem_raise("jansson");
}

static inline void jx_push(json_t *a, json_t *v)
{
	if (json_array_append_new(a, v) < 0 && mem_exhausted())
		mem_raise("jansson");
}

/* json_dumps of an object or array fails only when memory does */
static inline char *jx_dumps(const json_t *v, size_t flags)
{
	char *s = json_dumps(v, flags);
	if (!s)
		mem_raise("jansson");
	return s;
}

#endif
