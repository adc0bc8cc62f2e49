/* SPDX-License-Identifier: GPL-2.0-only */
/* glob_prefix.c: the literal directory prefixes of a glob (glob_prefix.h).
 *
 * bee-load starts both the bpf-lsm Landlock hardening and the mount
 * namespace's writable binds from these; the glob syntax they read is the
 * compiler's (glob.h), so they live here. Plain malloc with -ENOMEM, not
 * the compile funnel: the loader calls them outside a compile. */
#include "glob_prefix.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

struct prefix_ctx {
	struct beec_prefix *out;
	size_t max, n;
	int err;
};

static void prefix_emit(struct prefix_ctx *c, const char *lit, size_t len, bool literal)
{
	char path[PATH_MAX];
	if (c->err)
		return;
	if (!literal) {
		/* the directory part: up to the last '/' before the metacharacter */
		while (len > 0 && lit[len - 1] != '/')
			len--;
		if (len > 1)
			len--;          /* "/a/b/" -> "/a/b", "/" stays */
	}
	if (len == 0 || lit[0] != '/') {
		c->err = -EINVAL;   /* not an absolute path */
		return;
	}
	if (len >= sizeof(path)) {
		c->err = -ENAMETOOLONG;
		return;
	}
	memcpy(path, lit, len);
	path[len] = '\0';
	for (size_t i = 0; i < c->n; i++)
		if (c->out[i].literal == literal && strcmp(c->out[i].path, path) == 0)
			return;
	if (c->n >= c->max) {
		c->err = -E2BIG;
		return;
	}
	memcpy(c->out[c->n].path, path, len + 1);
	c->out[c->n].literal = literal;
	c->n++;
}

/* lit: the literal bytes so far (unescaped); rest: the glob still to read. */
static void prefix_walk(struct prefix_ctx *c, char *lit, size_t len, const char *rest, int depth)
{
	for (const char *p = rest; !c->err; p++) {
		if (len + 2 >= PATH_MAX) {
			c->err = -ENAMETOOLONG;
			return;
		}
		switch (*p) {
		case '\0':
			prefix_emit(c, lit, len, true);
			return;
		case '*':
		case '?':
		case '[':
			prefix_emit(c, lit, len, false);
			return;
		case '\\':
			if (p[1])
				p++;
			lit[len++] = *p;
			break;
		case '{': {
			/* the group's end, and its top-level commas */
			const char *q = p + 1, *alt = p + 1;
			int nest = 0;
			for (; *q && !(*q == '}' && nest == 0); q++) {
				if (*q == '\\' && q[1])
					q++;
				else if (*q == '{')
					nest++;
				else if (*q == '}')
					nest--;
			}
			if (!*q || depth >= 8) {
				/* unbalanced (the compiler refuses it) or too deep: cut here */
				prefix_emit(c, lit, len, false);
				return;
			}
			const char *end = q;
			nest = 0;
			for (q = p + 1; q <= end && !c->err; q++) {
				if (*q == '\\' && q < end - 1) {
					q++;
					continue;
				}
				if (*q == '{')
					nest++;
				else if (*q == '}' && q != end)
					nest--;
				if ((*q == ',' && nest == 0) || q == end) {
					size_t al = (size_t)(q - alt), rl = strlen(end + 1);
					char *next = malloc(al + rl + 1);
					char *copy = malloc(PATH_MAX);
					if (!next || !copy) {
						free(next);
						free(copy);
						c->err = -ENOMEM;
						return;
					}
					memcpy(next, alt, al);
					memcpy(next + al, end + 1, rl + 1);
					memcpy(copy, lit, len);
					prefix_walk(c, copy, len, next, depth + 1);
					free(next);
					free(copy);
					alt = q + 1;
				}
			}
			return;
		}
		default:
			lit[len++] = *p;
			break;
		}
	}
}

int beec_glob__write_prefixes(const char *glob, struct beec_prefix *out, size_t max)
{
	struct prefix_ctx c = { .out = out, .max = max };
	char *lit = malloc(PATH_MAX);
	if (!lit)
		return -ENOMEM;
	prefix_walk(&c, lit, 0, glob, 0);
	free(lit);
	return c.err ? c.err : (int)c.n;
}
