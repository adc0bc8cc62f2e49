/* SPDX-License-Identifier: GPL-2.0-only */
/* policy_text.h: a policy compiled from a string, lowered, for the tests
 * that hold the compiler library against something (narrowing, libbee's
 * revoke). Include after cmocka.h. */
#ifndef BEE_TESTS_POLICY_TEXT_H
#define BEE_TESTS_POLICY_TEXT_H

#include "diag.h"
#include "libbeec.h"

#include <stdio.h>
#include <string.h>

struct policy {
	struct beec_policy p;
	struct diag_ctx dc;
};

/* text with HOME=/home/dev and PROJECT=/home/dev/src/app, parsed, built
 * and lowered; a diagnostic fails the test. */
static inline void policy_text(struct policy *pol, const char *text)
{
	static const char *const defs[] = { "HOME=/home/dev", "PROJECT=/home/dev/src/app" };
	struct beec_opts o = { .sz = sizeof(o), .defines = defs, .ndefines = 2 };
	memset(pol, 0, sizeof(*pol));
	diag_init(&pol->dc);
	pol->p.src = source_new("t.toml", text, strlen(text));
	int err = beec_policy__parse(&pol->p, &pol->dc);
	if (!err)
		err = beec_policy__build(&pol->p, &o, &pol->dc);
	if (!err)
		err = beec_policy__lower(&pol->p, &o, &pol->dc);
	if (err)
		diag_print(&pol->dc, stderr);
	assert_int_equal(err, 0);
}

static inline void policy_free(struct policy *pol)
{
	beec_policy__fini(&pol->p);
	diag_fini(&pol->dc);
}

#endif
