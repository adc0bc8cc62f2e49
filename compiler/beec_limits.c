/* SPDX-License-Identifier: GPL-2.0-only */
/* beec_limits.c: the compiler's limits table (beec_limits.h). */
#include "beec_limits.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
	const char *name;
	unsigned def, max;
	const char *what;
	size_t off;
} limits[] = {
#define X(field, name, def, max, what) { name, def, max, what, offsetof(struct beec_limits, field) },
	BEEC_LIMITS(X)
#undef X
};

static unsigned *field_of(struct beec_limits *lim, enum beec_limit l)
{
	return (unsigned *)((char *)lim + limits[l].off);
}

struct beec_limits beec_limits_resolve(const struct beec_limits *lim)
{
	struct beec_limits r = { .sz = sizeof(r) };
	if (lim)
		memcpy(&r, lim, lim->sz < sizeof(r) ? lim->sz : sizeof(r));
	r.sz = sizeof(r);
	for (unsigned l = 0; l < BEEC_LIMIT_COUNT; l++) {
		unsigned *v = field_of(&r, l);
		if (*v == 0)
			*v = limits[l].def;
		else if (*v > limits[l].max)
			*v = limits[l].max;
	}
	return r;
}

const char *beec_limit_name(enum beec_limit l)
{
	return limits[l].name;
}

unsigned beec_limit_default(enum beec_limit l)
{
	return limits[l].def;
}

unsigned beec_limit_max(enum beec_limit l)
{
	return limits[l].max;
}

const char *beec_limit_what(enum beec_limit l)
{
	return limits[l].what;
}

unsigned beec_limit_get(const struct beec_limits *lim, enum beec_limit l)
{
	return *field_of((struct beec_limits *)lim, l);
}

int beec_limit_parse(struct beec_limits *lim, const char *arg, char *err, size_t errlen)
{
	const char *eq = strchr(arg, '=');
	size_t n = eq ? (size_t)(eq - arg) : strlen(arg);
	const char *names[BEEC_LIMIT_COUNT + 1];
	for (unsigned l = 0; l < BEEC_LIMIT_COUNT; l++) {
		names[l] = limits[l].name;
		if (strlen(limits[l].name) != n || strncmp(arg, limits[l].name, n) != 0)
			continue;
		char *end;
		errno = 0;
		unsigned long v = eq ? strtoul(eq + 1, &end, 10) : 0;
		if (!eq || errno || end == eq + 1 || *end || eq[1] == '-' || v < 1 || v > limits[l].max) {
			snprintf(err, errlen, "limit '%s' is a number from 1 to %u, got '%s'",
				 limits[l].name, limits[l].max, eq ? eq + 1 : "");
			return -EINVAL;
		}
		lim->sz = sizeof(*lim);
		*field_of(lim, l) = (unsigned)v;
		return 0;
	}
	names[BEEC_LIMIT_COUNT] = NULL;
	char word[64];
	snprintf(word, sizeof(word), "%.*s", (int)(n < 63 ? n : 63), arg);
	const char *near = diag_suggest(word, names);
	if (near)
		snprintf(err, errlen, "unknown limit '%s'; did you mean '%s'?", word, near);
	else
		snprintf(err, errlen, "unknown limit '%s'; see 'beec --help'", word);
	return -EINVAL;
}

void beec_limit_note(struct diag_ctx *dc, enum beec_limit l, unsigned v)
{
	if (v >= limits[l].max)
		diag_note(dc, LOC_NONE, "the limit '%s' (%s) is %u, the most beec allows",
			  limits[l].name, limits[l].what, v);
	else
		diag_note(dc, LOC_NONE, "the limit '%s' (%s) is %u; raise it with --limit %s=N",
			  limits[l].name, limits[l].what, v, limits[l].name);
}
