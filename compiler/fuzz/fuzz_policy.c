/* SPDX-License-Identifier: GPL-2.0-only */
/* fuzz_policy.c: the pipeline as the compiler's fuzz targets run it. */
#include "fuzz_policy.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void fuzz_require(bool ok)
{
	if (!ok)
		abort();
}

FILE *fuzz_null(void)
{
	static FILE *null;
	if (!null)
		null = fopen("/dev/null", "w");
	fuzz_require(null != NULL);
	return null;
}

const struct beec_opts *fuzz_opts(void)
{
	static const char *const defines[] = { "HOME=/home/you", "PROJECT=/home/you/project" };
	static const struct beec_opts opts = {
		.sz = sizeof(opts),
		.defines = defines,
		.ndefines = 2,
		.max_states = FUZZ_MAX_STATES,
	};
	return &opts;
}

/* The promises of diag.h about a stage's result (a stage runs only after
 * the ones before it queued no error). */
static void fuzz_diag_check(struct diag_ctx *dc, int rc)
{
	if (rc == 0)
		fuzz_require(dc->errors == 0);
	else
		fuzz_require(rc == -EINVAL && dc->errors > 0);
	fuzz_require(dc->errors <= DIAG_MAX_ERRORS);
}

int fuzz_policy_load(struct beec_policy *p, const char *name, const uint8_t *data, size_t size,
		     enum fuzz_stage upto)
{
	struct diag_ctx dc;
	diag_init(&dc);
	memset(p, 0, sizeof(*p));
	p->src = source_new(name, (const char *)data, size);
	int rc = beec_policy__parse(p, &dc);
	fuzz_diag_check(&dc, rc);
	fuzz_require((rc == 0) == (p->doc != NULL));
	if (rc == 0 && upto >= FUZZ_BUILD) {
		rc = beec_policy__build(p, fuzz_opts(), &dc);
		fuzz_diag_check(&dc, rc);
		fuzz_require((rc == 0) == (p->ir != NULL));
	}
	if (rc == 0 && upto >= FUZZ_LOWER) {
		rc = beec_policy__lower(p, fuzz_opts(), &dc);
		fuzz_diag_check(&dc, rc);
		fuzz_require((rc == 0) == (p->lw != NULL));
	}
	diag_print(&dc, fuzz_null());
	diag_fini(&dc);
	return rc;
}

void fuzz_policy_load_pair(struct beec_policy *a, const char *aname, int *ra, struct beec_policy *b,
			   const char *bname, int *rb, const uint8_t *data, size_t size)
{
	const size_t seplen = strlen(FUZZ_SEPARATOR);
	const uint8_t *sep = size ? memmem(data, size, FUZZ_SEPARATOR, seplen) : NULL;
	/* the newline before "---" ends a's last line */
	size_t alen = sep ? (size_t)(sep - data) + 1 : size;
	size_t boff = sep ? (size_t)(sep - data) + seplen : size;
	*ra = fuzz_policy_load(a, aname, data, alen, FUZZ_LOWER);
	*rb = fuzz_policy_load(b, bname, data + boff, size - boff, FUZZ_LOWER);
}
