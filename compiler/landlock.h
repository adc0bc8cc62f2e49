/* SPDX-License-Identifier: GPL-2.0-only */
/* landlock.h: whether a policy's file and exec rules can be enforced as
 * Landlock rules, and the plan when they can.
 *
 * Landlock grants rights on a file, or beneath a directory, and has no
 * deny. So a policy is expressible when every alternative of every fs and
 * exec grant is a literal path ("/etc/passwd") or a literal directory
 * followed by "/" "**" ("/usr/" "**"), and no deny takes away anything a
 * grant gives (a deny that meets no grant changes nothing and is fine).
 * Under Landlock a "/dir/" "**" rule also covers "/dir" itself (listing it),
 * and every rule is bound to the inode opened when the session starts, so
 * a literal file rule behaves like a pin. bee-load refuses a literal path
 * that turns out to be a directory.
 *
 * Ownership: the plan owns its rule array and strings; landlock_plan_fini.
 */
#ifndef BEE_LANDLOCK_H
#define BEE_LANDLOCK_H

#include "lower.h"

#include <stdbool.h>
#include <stdint.h>

struct landlock_rule {
	char *path;          /* literal, no trailing '/' (but "/" itself) */
	bool beneath;        /* the rule was "path/" "**" */
	uint32_t perms;      /* IR_PERM_READ | IR_PERM_WRITE | IR_PERM_EXEC */
	unsigned rule;       /* the policy rule's index */
};

struct landlock_plan {
	bool expressible;
	const struct ir_rule *culprit;   /* when not: the rule that is not */
	char reason[512];
	struct landlock_rule *rules;     /* sorted by path, then beneath */
	size_t n;
};

/* Always succeeds (returns 0); out->expressible says whether the plan holds. */
int landlock_plan_build(const struct lowered *lw, struct landlock_plan *out);
void landlock_plan_fini(struct landlock_plan *plan);

#endif
