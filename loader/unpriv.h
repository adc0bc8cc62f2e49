/* SPDX-License-Identifier: GPL-2.0-only */
/* unpriv.h: run without root and without the session service (unpriv.c,
 * docs/unprivileged.md). */
#ifndef BEE_UNPRIV_H
#define BEE_UNPRIV_H

#include "libbee.h"

#include <stdbool.h>
#include <stddef.h>

struct bee_unpriv_opts {
	const char *audit_log;
	const char *const *context;         /* NAME=VALUE, after [env] set */
	size_t ncontext;
	const char *const *weaker;          /* --allow-weaker: rule indices or texts */
	size_t nweaker;
	const int *stdio;                   /* [3], the tool's (a pty's slave); NULL: bee-load's */
	bee_warn_fn warn;
	void *warn_ctx;
};

/* Whether this process lacks the host's root: not uid 0, or uid 0 of a
 * user namespace other than the initial one (unshare -Ur, a container). */
bool bee_unpriv_wanted(void);

/* Runs argv in pack's policy with what Landlock and seccomp give without
 * privileges; *status as run's. A policy that needs more is refused before
 * anything runs (stage LANDLOCK, naming the rule) unless weaker names the
 * rule. */
int bee_unpriv_run(const char *pack, const char *const argv[], const struct bee_unpriv_opts *o, int *status,
		   struct bee_error *e);

#endif
