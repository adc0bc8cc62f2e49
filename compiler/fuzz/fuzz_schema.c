/* SPDX-License-Identifier: GPL-2.0-only */
/* fuzz_schema.c: libFuzzer target for the schema lowering, TOML -> policy
 * IR (schema.h), with -D HOME and -D PROJECT defined as beec would pass
 * them. A policy that builds must dump (--dump=ir), and every rule must
 * point into the source it came from: diagnostics of later stages print
 * that span. */
#include "fuzz_policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct beec_policy p;
	if (fuzz_policy_load(&p, "fuzz.toml", data, size, FUZZ_BUILD) == 0) {
		ir_dump(p.ir, fuzz_null());
		for (size_t i = 0; i < p.ir->nrules; i++) {
			const struct ir_rule *r = &p.ir->rules[i];
			fuzz_require(r->index == i);
			fuzz_require(r->loc.src == NULL ||
				     (r->loc.off <= size && r->loc.len <= size - r->loc.off));
		}
	}
	beec_policy__fini(&p);
	return 0;
}
