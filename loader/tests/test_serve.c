/* SPDX-License-Identifier: GPL-2.0-only */
/* test_serve: the session service's request decoder (loader/serve_proto.c)
 * and its interface description.
 *
 *   - a table of requests, good and bad: each bad one is refused with its
 *     named error (and a message), each good one decoded into its method
 *     and fields; the malformed, oversized and hostile cases of docs/serve.md
 *   - the interface description (describe) lists every method with its
 *     fields and every error, and docs/serve.md documents each of them
 *
 * No root, no socket: tools/check-serve runs the service itself.
 */
#include "serve.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

struct row {
	const char *line;
	size_t nfds;
	int err;                    /* -1: decoded; else the error expected */
	int method;                 /* when decoded */
};

#define OK(line, nfds, m) { line, nfds, -1, BEE_SERVE_##m }
#define BAD(line, nfds, e) { line, nfds, BEE_SERVE_E_##e, 0 }

static const struct row rows[] = {
	OK("{\"bee\":1,\"method\":\"ls\"}", 0, LS),
	OK("{\"method\":\"describe\",\"bee\":1}", 0, DESCRIBE),
	OK("{\"bee\":1,\"method\":\"exec\",\"session\":\"0123456789abcdef\"}", 0, EXEC),
	OK("{\"bee\":1,\"method\":\"stop\",\"session\":\"0123456789abcdef\"}", 0, STOP),
	OK("{\"bee\":1,\"method\":\"revoke\",\"session\":\"ab12\",\"rule\":\"3\"}", 0, REVOKE),
	OK("{\"bee\":1,\"method\":\"start\",\"backend\":\"landlock\",\"env\":[\"A=1\",\"B=\"],"
	   "\"audit_detail\":true,\"no_landlock_hardening\":false}", 1, START),
	OK("{\"bee\":1,\"method\":\"vfs\",\"session\":\"ab\",\"args\":[\"diff\"]}", 0, VFS),
	/* not JSON, not one object, not one line */
	BAD("", 0, PROTOCOL),
	BAD("hello", 0, PROTOCOL),
	BAD("[1,2]", 0, PROTOCOL),
	BAD("\"ls\"", 0, PROTOCOL),
	BAD("{\"bee\":1,\"method\":\"ls\"", 0, PROTOCOL),
	BAD("{\"bee\":1,\"method\":\"ls\"} {}", 0, PROTOCOL),
	BAD("{\"bee\":1,\"method\":\"ls\",\"method\":\"ls\"}", 0, PROTOCOL),
	/* the version */
	BAD("{\"method\":\"ls\"}", 0, VERSION),
	BAD("{\"bee\":2,\"method\":\"ls\"}", 0, VERSION),
	BAD("{\"bee\":\"1\",\"method\":\"ls\"}", 0, VERSION),
	BAD("{\"bee\":1.0,\"method\":\"ls\"}", 0, VERSION),
	/* the method */
	BAD("{\"bee\":1}", 0, METHOD),
	BAD("{\"bee\":1,\"method\":\"reboot\"}", 0, METHOD),
	BAD("{\"bee\":1,\"method\":[\"ls\"]}", 0, METHOD),
	BAD("{\"bee\":1,\"method\":\"LS\"}", 0, METHOD),
	/* fields */
	BAD("{\"bee\":1,\"method\":\"ls\",\"session\":\"ab\"}", 0, FIELD),
	BAD("{\"bee\":1,\"method\":\"exec\"}", 0, FIELD),
	BAD("{\"bee\":1,\"method\":\"exec\",\"session\":\"../../etc/passwd\"}", 0, FIELD),
	BAD("{\"bee\":1,\"method\":\"exec\",\"session\":\"a/b\"}", 0, FIELD),
	BAD("{\"bee\":1,\"method\":\"exec\",\"session\":\"\"}", 0, FIELD),
	BAD("{\"bee\":1,\"method\":\"exec\",\"session\":7}", 0, FIELD),
	/* jansson refuses a NUL in a string (no JSON_ALLOW_NUL): not JSON */
	BAD("{\"bee\":1,\"method\":\"exec\",\"session\":\"ab\\u0000cd\"}", 0, PROTOCOL),
	BAD("{\"bee\":1,\"method\":\"exec\",\"session\":\"0123456789abcdef0123456789abcdef\"}", 0, FIELD),
	BAD("{\"bee\":1,\"method\":\"exec\",\"session\":\"ab\",\"argv\":[\"sh\"]}", 0, FIELD),
	BAD("{\"bee\":1,\"method\":\"revoke\",\"session\":\"ab\"}", 0, FIELD),
	BAD("{\"bee\":1,\"method\":\"start\",\"env\":\"A=1\"}", 1, FIELD),
	BAD("{\"bee\":1,\"method\":\"start\",\"env\":[\"=1\"]}", 1, FIELD),
	BAD("{\"bee\":1,\"method\":\"start\",\"env\":[\"NOVALUE\"]}", 1, FIELD),
	BAD("{\"bee\":1,\"method\":\"start\",\"env\":[1]}", 1, FIELD),
	BAD("{\"bee\":1,\"method\":\"start\",\"audit_detail\":\"yes\"}", 1, FIELD),
	BAD("{\"bee\":1,\"method\":\"start\",\"audit_log\":\"/etc/shadow\"}", 1, FIELD),
	BAD("{\"bee\":1,\"method\":\"start\",\"pack\":\"/root/secret.bpfpack\"}", 1, FIELD),
	/* descriptors */
	BAD("{\"bee\":1,\"method\":\"start\"}", 0, DESCRIPTORS),
	BAD("{\"bee\":1,\"method\":\"start\"}", 2, DESCRIPTORS),
	BAD("{\"bee\":1,\"method\":\"ls\"}", 3, DESCRIPTORS),
	BAD("{\"bee\":1,\"method\":\"exec\",\"session\":\"ab\"}", 3, DESCRIPTORS),
};

static void test_decode(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *w = &rows[i];
		struct bee_serve_req r;
		enum bee_serve_error err = BEE_SERVE_E_COUNT;
		char msg[256] = "";
		int rc = bee_serve_req_parse(w->line, strlen(w->line), w->nfds, &r, &err, msg, sizeof(msg));
		if (w->err < 0) {
			if (rc != 0)
				fail_msg("row %zu '%s': refused (%s: %s)", i, w->line, bee_serve_error_name(err), msg);
			assert_int_equal(r.method, w->method);
		} else {
			if (rc != -1 || (int)err != w->err)
				fail_msg("row %zu '%s': got %d %s (%s), expected %s", i, w->line, rc,
					 rc ? bee_serve_error_name(err) : "decoded", msg,
					 bee_serve_error_name((enum bee_serve_error)w->err));
			assert_true(msg[0] != '\0');
		}
		bee_serve_req_fini(&r);
	}
}

static void test_fields(void **state)
{
	(void)state;
	const char *line = "{\"bee\":1,\"method\":\"start\",\"backend\":\"landlock\",\"env\":[\"A=1\",\"B=2\"],"
			   "\"user\":\"nobody\",\"audit_detail\":true}";
	struct bee_serve_req r;
	enum bee_serve_error err;
	char msg[256];
	assert_int_equal(bee_serve_req_parse(line, strlen(line), 1, &r, &err, msg, sizeof(msg)), 0);
	assert_string_equal(r.backend, "landlock");
	assert_string_equal(r.user, "nobody");
	assert_int_equal(r.nenv, 2);
	assert_string_equal(r.env[1], "B=2");
	assert_null(r.env[2]);
	assert_true(r.audit_detail);
	assert_false(r.no_landlock_hardening);
	bee_serve_req_fini(&r);
}

/* Oversized: a line at the limit, and bytes a line cannot hold. */
static void test_limits(void **state)
{
	(void)state;
	size_t n = BEE_SERVE_LINE_MAX;
	char *big = malloc(n + 1);
	assert_non_null(big);
	memset(big, ' ', n);
	memcpy(big, "{\"bee\":1,\"method\":\"ls\"}", 23);
	big[n] = '\0';
	struct bee_serve_req r;
	enum bee_serve_error err;
	char msg[256];
	assert_int_equal(bee_serve_req_parse(big, n, 0, &r, &err, msg, sizeof(msg)), -1);
	assert_int_equal(err, BEE_SERVE_E_PROTOCOL);
	bee_serve_req_fini(&r);
	/* one byte shorter: whitespace after the object is still one object */
	assert_int_equal(bee_serve_req_parse(big, n - 1, 0, &r, &err, msg, sizeof(msg)), 0);
	bee_serve_req_fini(&r);
	free(big);
	static const char nul[] = "{\"bee\":1,\"method\":\"ls\"}\0x";
	assert_int_equal(bee_serve_req_parse(nul, sizeof(nul) - 1, 0, &r, &err, msg, sizeof(msg)), -1);
	assert_int_equal(err, BEE_SERVE_E_PROTOCOL);
	bee_serve_req_fini(&r);
	static const char two[] = "{\"bee\":1,\"method\":\"ls\"}\n{\"bee\":1,\"method\":\"ls\"}";
	assert_int_equal(bee_serve_req_parse(two, sizeof(two) - 1, 0, &r, &err, msg, sizeof(msg)), -1);
	bee_serve_req_fini(&r);
}

static char *read_doc(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	char *buf = malloc(1 << 20);
	size_t n = buf ? fread(buf, 1, (1 << 20) - 1, f) : 0;
	fclose(f);
	if (buf)
		buf[n] = '\0';
	return buf;
}

/* The description names every method, field and error, and docs/serve.md
 * documents each: "| `name` |" rows of its tables, fields as `name`. */
static void test_describe(void **state)
{
	(void)state;
	json_t *d = bee_serve_describe();
	char *doc = read_doc("docs/serve.md");
	if (!doc)
		fail_msg("docs/serve.md: cannot read it (run from the source tree)");
	assert_int_equal(json_integer_value(json_object_get(d, "bee")), BEE_SERVE_PROTO);
	json_t *ms = json_object_get(d, "methods"), *es = json_object_get(d, "errors");
	assert_int_equal(json_array_size(ms), BEE_SERVE_METHOD_COUNT);
	assert_int_equal(json_array_size(es), BEE_SERVE_E_COUNT);
	char want[128];
	for (size_t i = 0; i < json_array_size(ms); i++) {
		json_t *m = json_array_get(ms, i);
		const char *name = json_string_value(json_object_get(m, "name"));
		assert_string_equal(name, bee_serve_method_name((enum bee_serve_method)i));
		snprintf(want, sizeof(want), "| `%s` |", name);
		if (!strstr(doc, want))
			fail_msg("docs/serve.md does not document method '%s' (a row '%s')", name, want);
		json_t *f = json_object_get(m, "fields");
		for (size_t k = 0; k < json_array_size(f); k++) {
			snprintf(want, sizeof(want), "`%s`", json_string_value(json_array_get(f, k)));
			if (!strstr(doc, want))
				fail_msg("docs/serve.md does not document field %s of '%s'", want, name);
		}
	}
	for (size_t i = 0; i < json_array_size(es); i++) {
		const char *name = json_string_value(json_object_get(json_array_get(es, i), "name"));
		snprintf(want, sizeof(want), "| `%s` |", name);
		if (!strstr(doc, want))
			fail_msg("docs/serve.md does not document error '%s'", name);
	}
	free(doc);
	json_decref(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode),
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_describe),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
