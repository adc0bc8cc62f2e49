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

void fuzz_split(const uint8_t *data, size_t size, size_t *alen, size_t *boff)
{
	const size_t seplen = strlen(FUZZ_SEPARATOR);
	const uint8_t *sep = size ? memmem(data, size, FUZZ_SEPARATOR, seplen) : NULL;
	if (!sep) {
		*alen = size;
		*boff = size;
		return;
	}
	/* the newline before "---" ends a's last line */
	*alen = (size_t)(sep - data) + 1;
	*boff = (size_t)(sep - data) + seplen;
}

/* The promises of diag.h about a stage's result. */
static void fuzz_diag_check(struct diag_ctx *dc, int rc, unsigned errors_before)
{
	if (rc == 0)
		fuzz_require(dc->errors == errors_before);
	else
		fuzz_require(rc == -EINVAL && dc->errors > errors_before);
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
	fuzz_diag_check(&dc, rc, 0);
	fuzz_require((rc == 0) == (p->doc != NULL));
	if (rc == 0 && upto >= FUZZ_BUILD) {
		rc = beec_policy__build(p, fuzz_opts(), &dc);
		fuzz_diag_check(&dc, rc, 0);
		fuzz_require((rc == 0) == (p->ir != NULL));
	}
	if (rc == 0 && upto >= FUZZ_LOWER) {
		rc = beec_policy__lower(p, fuzz_opts(), &dc);
		fuzz_diag_check(&dc, rc, 0);
		fuzz_require((rc == 0) == (p->lw != NULL));
	}
	diag_print(&dc, fuzz_null());
	diag_fini(&dc);
	return rc;
}
