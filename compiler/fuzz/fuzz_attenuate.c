/* SPDX-License-Identifier: GPL-2.0-only */
/* fuzz_attenuate.c: libFuzzer target for the attenuation check
 * (attenuate.h): two policies from one input, the parent before a line
 * "---" and the child after it, both loaded and lowered, then the child
 * checked against the parent.
 *
 * What must hold: a policy is a subset of itself; a widening's example,
 * walked through both automata, gives the child exactly the extra bits
 * the parent lacks; and a check that fails has said why. */
#include "fuzz_policy.h"

#include "attenuate.h"

#include <string.h>

static void fuzz_widening_check(const struct lowered *child, const struct lowered *parent)
{
	for (int d = 0; d < IR_DOMAIN_COUNT; d++) {
		struct attenuate_widening w;
		if (!attenuate_domain(child, parent, (enum ir_domain)d, &w))
			continue;
		fuzz_require(w.domain == (enum ir_domain)d);
		fuzz_require(w.child_rule == NULL || w.child_rule->index < child->ir->nrules);
		if (d == IR_DOMAIN_NET || !child->dfa[d])
			continue;
		fuzz_require(w.extra != 0 && memchr(w.example, '\0', sizeof(w.example)) != NULL);
		uint32_t cp = 0, pp = 0, marks = dfa_marks_get(child->dfa[d]);
		size_t len = strlen(w.example);
		dfa_match(child->dfa[d], w.example, len, &cp, NULL);
		if (parent->dfa[d])
			dfa_match(parent->dfa[d], w.example, len, &pp, NULL);
		if (parent->dfa[d])
			marks |= dfa_marks_get(parent->dfa[d]);
		fuzz_require((cp & ~pp & ~marks) == w.extra);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct beec_policy parent, child;
	int rp, rc;
	fuzz_policy_load_pair(&parent, "parent.toml", &rp, &child, "child.toml", &rc, data, size);
	if (rp == 0) {
		struct diag_ctx dc;
		diag_init(&dc);
		fuzz_require(attenuate_check(parent.lw, parent.lw, &dc) == 0 && dc.errors == 0);
		diag_fini(&dc);
	}
	if (rp == 0 && rc == 0) {
		struct diag_ctx dc;
		diag_init(&dc);
		int r = attenuate_check(child.lw, parent.lw, &dc);
		fuzz_require((r == 0 && dc.errors == 0) || (r == 1 && dc.errors > 0));
		diag_print(&dc, fuzz_null());
		diag_fini(&dc);
		fuzz_widening_check(child.lw, parent.lw);
	}
	beec_policy__fini(&child);
	beec_policy__fini(&parent);
	return 0;
}
