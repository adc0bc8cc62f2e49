/* SPDX-License-Identifier: GPL-2.0-only */
/* The TOML front end against the toml-test corpus (TOML 1.0.0 cases):
 * every valid case must decode to its tagged JSON, every invalid case must
 * be rejected with at least one located diagnostic. The corpus is read in
 * place from the shared folder ($BEE_SHARED, default ../shared). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "toml.h"

static char corpus[4096];

/* Datetimes compare after normalising what the spec leaves free: 't'/'z'
 * case, ' ' as separator, trailing fractional zeros, and Z for +00:00. */
static void datetime_norm(const char *in, char *out, size_t n)
{
	size_t j = 0;
	for (size_t i = 0; in[i] && j + 1 < n; i++) {
		char c = in[i];
		if (c == 't' || c == ' ')
			c = 'T';
		if (c == 'z')
			c = 'Z';
		out[j++] = c;
	}
	out[j] = '\0';
	char *dot = strchr(out, '.');
	if (dot) {
		char *end = dot + 1;
		while (*end >= '0' && *end <= '9')
			end++;
		char *z = end;
		while (z > dot + 1 && z[-1] == '0')
			z--;
		if (z == dot + 1)
			z = dot;
		memmove(z, end, strlen(end) + 1);
	}
	size_t len = strlen(out);
	if (len > 6 && (strcmp(out + len - 6, "+00:00") == 0 || strcmp(out + len - 6, "-00:00") == 0))
		strcpy(out + len - 6, "Z");
}

static int scalar_equal(json_t *a, json_t *b)
{
	const char *ta = json_string_value(json_object_get(a, "type"));
	const char *tb = json_string_value(json_object_get(b, "type"));
	const char *va = json_string_value(json_object_get(a, "value"));
	const char *vb = json_string_value(json_object_get(b, "value"));
	if (!ta || !tb || !va || !vb || strcmp(ta, tb) != 0)
		return 0;
	if (strcmp(ta, "integer") == 0)
		return strtoll(va, NULL, 10) == strtoll(vb, NULL, 10);
	if (strcmp(ta, "float") == 0) {
		double x = strtod(va, NULL), y = strtod(vb, NULL);
		return (isnan(x) && isnan(y)) || x == y;
	}
	if (strncmp(ta, "date", 4) == 0 || strncmp(ta, "time", 4) == 0) {
		char na[128], nb[128];
		datetime_norm(va, na, sizeof(na));
		datetime_norm(vb, nb, sizeof(nb));
		return strcmp(na, nb) == 0;
	}
	size_t la = json_string_length(json_object_get(a, "value"));
	return la == json_string_length(json_object_get(b, "value")) && memcmp(va, vb, la) == 0;
}

static int is_scalar(json_t *j)
{
	return json_is_object(j) && json_object_size(j) == 2 &&
	       json_is_string(json_object_get(j, "type")) && json_is_string(json_object_get(j, "value"));
}

static int tagged_equal(json_t *a, json_t *b)
{
	if (is_scalar(a) || is_scalar(b))
		return is_scalar(a) && is_scalar(b) && scalar_equal(a, b);
	if (json_is_array(a)) {
		if (!json_is_array(b) || json_array_size(a) != json_array_size(b))
			return 0;
		for (size_t i = 0; i < json_array_size(a); i++)
			if (!tagged_equal(json_array_get(a, i), json_array_get(b, i)))
				return 0;
		return 1;
	}
	if (!json_is_object(a) || !json_is_object(b) || json_object_size(a) != json_object_size(b))
		return 0;
	/* keys may hold NUL ("\u0000"): look them up by length */
	for (void *it = json_object_iter(a); it; it = json_object_iter_next(a, it)) {
		json_t *w = json_object_getn(b, json_object_iter_key(it), json_object_iter_key_len(it));
		if (!w || !tagged_equal(json_object_iter_value(it), w))
			return 0;
	}
	return 1;
}

/* jansson refuses NUL in object keys; both sides get U+2400 (the symbol
 * for NUL) in place of every escaped NUL, which keeps them comparable. */
static void nul_escapes_replace(char *text, size_t len)
{
	for (size_t i = 0; i + 1 < len; i++) {
		if (text[i] != '\\')
			continue;
		if (i + 5 < len && memcmp(text + i + 1, "u0000", 5) == 0)
			memcpy(text + i + 1, "u2400", 5);
		i++;
	}
}

static json_t *json_load_nul(char *text, size_t len)
{
	json_error_t err;
	nul_escapes_replace(text, len);
	return json_loadb(text, len, 0, &err);
}

static int run_valid(const char *rel)
{
	char path[8192], jpath[8192];
	snprintf(path, sizeof(path), "%s/%s", corpus, rel);
	snprintf(jpath, sizeof(jpath), "%.*s.json", (int)(strlen(path) - 5), path);
	struct source *src;
	if (source_read(path, &src) < 0) {
		fprintf(stderr, "cannot read %s\n", path);
		return 0;
	}
	struct diag_ctx dc;
	diag_init(&dc);
	struct toml_doc *doc;
	int ok = 0;
	if (toml_parse(src, &dc, &doc) < 0) {
		fprintf(stderr, "FAIL valid %s: rejected\n", rel);
		diag_print(&dc, stderr);
	} else {
		char *text;
		size_t len;
		FILE *mem = open_memstream(&text, &len);
		toml_dump_json(doc->root, mem);
		fclose(mem);
		struct source *expect = NULL;
		json_t *got = json_load_nul(text, len);
		json_t *want = source_read(jpath, &expect) == 0 ? json_load_nul(expect->text, expect->len) : NULL;
		source_free(expect);
		ok = got && want && tagged_equal(got, want);
		if (!ok)
			fprintf(stderr, "FAIL valid %s: got %s\n", rel, text);
		json_decref(got);
		json_decref(want);
		free(text);
		toml_doc_free(doc);
	}
	diag_fini(&dc);
	source_free(src);
	return ok;
}

static int run_invalid(const char *rel)
{
	char path[8192];
	snprintf(path, sizeof(path), "%s/%s", corpus, rel);
	struct source *src;
	if (source_read(path, &src) < 0) {
		fprintf(stderr, "cannot read %s\n", path);
		return 0;
	}
	struct diag_ctx dc;
	diag_init(&dc);
	struct toml_doc *doc;
	int rejected = toml_parse(src, &dc, &doc) < 0;
	int ok = rejected && dc.n > 0 && dc.items[0].loc.src == src;
	if (!ok) {
		fprintf(stderr, "FAIL invalid %s: %s\n", rel,
			rejected ? "rejected without a located diagnostic" : "accepted");
		if (!rejected)
			toml_doc_free(doc);
	}
	diag_fini(&dc);
	source_free(src);
	return ok;
}

static void test_corpus(void **state)
{
	(void)state;
	char list[8192];
	snprintf(list, sizeof(list), "%s/files-toml-1.0.0", corpus);
	FILE *f = fopen(list, "r");
	if (!f)
		fail_msg("cannot open the toml-test corpus list %s", list);
	char line[4096];
	unsigned valid = 0, invalid = 0, failed = 0;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		size_t n = strlen(line);
		if (n < 5 || strcmp(line + n - 5, ".toml") != 0)
			continue;
		if (strncmp(line, "valid/", 6) == 0) {
			valid++;
			failed += !run_valid(line);
		} else if (strncmp(line, "invalid/", 8) == 0) {
			invalid++;
			failed += !run_invalid(line);
		}
	}
	fclose(f);
	printf("toml-test: %u valid and %u invalid cases, %u failed\n", valid, invalid, failed);
	assert_true(valid >= 200 && invalid >= 400);
	assert_int_equal(failed, 0);
}

int main(void)
{
	const char *shared = getenv("BEE_SHARED");
	snprintf(corpus, sizeof(corpus), "%s/testsuites/toml-test", shared ? shared : "../shared");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_corpus),
	};
	return cmocka_run_group_tests_name("toml-conformance", tests, NULL, NULL);
}
