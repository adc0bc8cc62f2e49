/* SPDX-License-Identifier: GPL-2.0-only */
/* fuzz_audit.c: libFuzzer target for the audit event decoder,
 * bee_audit_event_line() in loader/audit_log.c: a ring-buffer record
 * (struct bee_audit_event, then path_len bytes of path) into the fields of
 * a JSON line, then the line itself (bee_audit_format), plain and with
 * detail. The input is one record, exactly as bpf_ringbuf_output sized it.
 *
 * What must hold: a record is refused (-EINVAL) or decoded; a decoded
 * resource lies within res and is what the line says; every line is one
 * JSON object that begins with the five keys of DESIGN.md, in order. */
#include "internal.h"

#include "bee_audit.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* CLOCK_REALTIME - CLOCK_BOOTTIME on a machine booted in November 2023 */
#define FUZZ_BOOT_TO_REAL 1700000000000000000LL

static void fuzz_require(bool ok)
{
	if (!ok)
		abort();
}

static void fuzz_audit_line(const struct bee_audit_line *l, bool detail)
{
	size_t len;
	char *line = bee_audit_format(l, "fuzz-policy", detail, &len);
	fuzz_require(line != NULL && len == strlen(line) && len > 0 && line[len - 1] == '\n');
	fuzz_require(strncmp(line, "{\"ts\":\"", 7) == 0);
	json_error_t err;
	/* "\u0000" is valid JSON (an abstract unix socket's name starts with NUL) */
	json_t *j = json_loadb(line, len, JSON_ALLOW_NUL, &err);
	fuzz_require(json_is_object(j));
	static const char *const keys[] = { "ts", "kind", "action", "resource", "decision" };
	const char *prev = line;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		fuzz_require(json_is_string(json_object_get(j, keys[i])));
		/* in the order of DESIGN.md: each key's text after the one before */
		char quoted[16];
		snprintf(quoted, sizeof(quoted), "\"%s\":", keys[i]);
		const char *at = strstr(prev, quoted);
		fuzz_require(at != NULL);
		prev = at;
	}
	json_decref(j);
	free(line);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* the record in a buffer of its own size, so ASan sees any read past it */
	uint8_t *rec = malloc(size ? size : 1);
	fuzz_require(rec != NULL);
	memcpy(rec, data, size);
	static char res[4200];
	char comm[17];
	struct bee_audit_line l;
	int rc = bee_audit_event_line(rec, size, FUZZ_BOOT_TO_REAL, &l, res, sizeof(res), comm);
	fuzz_require(rc == 0 || rc == -EINVAL);
	if (rc == 0) {
		fuzz_require(l.kind && l.action && l.decision && l.resource);
		fuzz_require(l.resource == res && l.resource_len < sizeof(res));
		fuzz_audit_line(&l, false);
		fuzz_audit_line(&l, true);
	}
	free(rec);
	return 0;
}
