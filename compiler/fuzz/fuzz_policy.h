/* SPDX-License-Identifier: GPL-2.0-only */
/* fuzz_policy.h: what the compiler's libFuzzer targets share (tools/fuzz).
 *
 * A target turns its input into one or two policies the way beec would
 * (the source as bytes, -D HOME and PROJECT defined, small limits so that
 * the fuzzer looks for crashes rather than waiting on big automata) and
 * checks the library's promises about the result: a stage that fails has
 * queued an error, one that succeeds has queued none, and every queued
 * diagnostic prints. A broken promise aborts, which libFuzzer reports.
 */
#ifndef BEE_FUZZ_POLICY_H
#define BEE_FUZZ_POLICY_H

#include "libbeec.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* States per automaton in the harnesses: beec's default allows 65535 (and
 * far more while building), which makes a unit take seconds. */
#define FUZZ_MAX_STATES 4096

/* The separator line of two-policy inputs (attenuate, diff): not TOML, so
 * it never occurs inside a valid policy. */
#define FUZZ_SEPARATOR "\n---\n"

void fuzz_require(bool ok);
/* A stream that discards what is written (diagnostics, dumps). */
FILE *fuzz_null(void);
/* The options every harness compiles with. */
const struct beec_opts *fuzz_opts(void);

enum fuzz_stage { FUZZ_PARSE, FUZZ_BUILD, FUZZ_LOWER };

/* Runs the pipeline on the bytes up to stage (included) into p, which the
 * caller releases with beec_policy__fini. Returns 0 when every stage
 * passed, else -EINVAL; diagnostics are checked and printed (to
 * fuzz_null) either way and dc is left empty. */
int fuzz_policy_load(struct beec_policy *p, const char *name, const uint8_t *data, size_t size,
		     enum fuzz_stage upto);

/* The two-policy inputs (attenuate, diff): data split at the first
 * FUZZ_SEPARATOR (without one, the whole input is a and b is empty), each
 * half loaded and lowered by fuzz_policy_load into a and b, whose results
 * go to *ra and *rb. The caller releases both with beec_policy__fini. */
void fuzz_policy_load_pair(struct beec_policy *a, const char *aname, int *ra, struct beec_policy *b,
			   const char *bname, int *rb, const uint8_t *data, size_t size);

#endif
