/* SPDX-License-Identifier: GPL-2.0-only */
/* glob_prefix.h: the literal prefixes of a glob, part of libbeec's public
 * API (libbeec.h includes it). */
#ifndef BEE_GLOB_PREFIX_H
#define BEE_GLOB_PREFIX_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

struct beec_prefix {
	char path[PATH_MAX];
	bool literal;               /* the whole glob is this path (no metacharacter) */
};

/* The literal prefixes of a glob, braces expanded: for a glob with a
 * metacharacter the directory before it ("/a/b/ **" -> "/a/b", "/tmp/x-*"
 * -> "/tmp"), for a literal the path itself. Returns how many (distinct),
 * or -EINVAL (not absolute), -E2BIG (more than max), -ENAMETOOLONG,
 * -ENOMEM. */
int beec_glob__write_prefixes(const char *glob, struct beec_prefix *out, size_t max);

#endif
