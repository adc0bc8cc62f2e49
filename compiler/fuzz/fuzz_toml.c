/* SPDX-License-Identifier: GPL-2.0-only */
/* fuzz_toml.c: libFuzzer target for the TOML front end (grammar/, toml.h).
 *
 * The input is a policy source as bytes. A document that parses must dump
 * (tagged JSON, canonical TOML), and its canonical text must parse again to
 * the same canonical text: the dump is what golden files and `beec show`
 * hold, so it has to be TOML that reads back as itself. */
#include "fuzz_policy.h"

#include <stdlib.h>
#include <string.h>

/* The canonical text of doc, malloc'ed, NUL-terminated. */
static char *fuzz_canonical(const struct toml_doc *doc, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	fuzz_require(f != NULL);
	toml_dump_canonical(doc, f);
	fuzz_require(fclose(f) == 0);
	return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct beec_policy p;
	if (fuzz_policy_load(&p, "fuzz.toml", data, size, FUZZ_PARSE) == 0) {
		toml_dump_json(p.doc->root, fuzz_null());
		size_t len;
		char *canon = fuzz_canonical(p.doc, &len);
		struct beec_policy again;
		fuzz_require(fuzz_policy_load(&again, "canonical.toml", (const uint8_t *)canon, len,
					      FUZZ_PARSE) == 0);
		size_t len2;
		char *canon2 = fuzz_canonical(again.doc, &len2);
		fuzz_require(len == len2 && memcmp(canon, canon2, len) == 0);
		free(canon2);
		beec_policy__fini(&again);
		free(canon);
	}
	beec_policy__fini(&p);
	return 0;
}
