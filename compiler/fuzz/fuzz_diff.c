/* SPDX-License-Identifier: GPL-2.0-only */
/* fuzz_diff.c: libFuzzer target for `beec diff` (diff.h): the old policy
 * before a line "---", the new one after it, both loaded and lowered,
 * then compared and printed as text and as JSON.
 *
 * What must hold: a policy compared with itself adds and removes nothing;
 * the counts match the entries; the JSON output is one valid JSON value. */
#include "fuzz_policy.h"

#include "diff.h"

#include <jansson.h>
#include <stdlib.h>

static void fuzz_diff_run(const struct lowered *old, const struct lowered *new_, bool same)
{
	struct lower_opts lo = { .sz = sizeof(lo), .max_states = FUZZ_MAX_STATES };
	struct diag_ctx dc;
	diag_init(&dc);
	struct diff d;
	/* rules that lowered once lower again with some set aside */
	fuzz_require(diff_policies(old, new_, &lo, &dc, &d) == 0);
	fuzz_require(d.nadded + d.nremoved == d.n);
	if (same)
		fuzz_require(d.n == 0);
	diff_print_text(&d, fuzz_null());
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	fuzz_require(f != NULL);
	diff_print_json(&d, f);
	fuzz_require(fclose(f) == 0);
	json_error_t jerr;
	json_t *j = json_loadb(buf, len, 0, &jerr);
	fuzz_require(j != NULL);
	json_decref(j);
	free(buf);
	diff_fini(&d);
	diag_print(&dc, fuzz_null());
	diag_fini(&dc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct beec_policy old, new_;
	int ro, rn;
	fuzz_policy_load_pair(&old, "old.toml", &ro, &new_, "new.toml", &rn, data, size);
	if (ro == 0)
		fuzz_diff_run(old.lw, old.lw, true);
	if (ro == 0 && rn == 0)
		fuzz_diff_run(old.lw, new_.lw, false);
	beec_policy__fini(&new_);
	beec_policy__fini(&old);
	return 0;
}
