/* SPDX-License-Identifier: GPL-2.0-only */
/* Unit tests of the TOML scanner and parser: table-driven rows of
 * {input, expected tagged JSON} and {input, expected first diagnostic with
 * its line and column}, plus the canonical dump. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "toml.h"

struct parsed {
	struct source *src;
	struct diag_ctx dc;
	struct toml_doc *doc;
	int rc;
};

static void parse(struct parsed *p, const char *text)
{
	p->src = source_new("t.toml", text, strlen(text));
	diag_init(&p->dc);
	p->rc = toml_parse(p->src, &p->dc, &p->doc);
}

static void parsed_free(struct parsed *p)
{
	toml_doc_free(p->doc);
	diag_fini(&p->dc);
	source_free(p->src);
}

static char *capture_json(const struct toml_node *n)
{
	char *text;
	size_t len;
	FILE *f = open_memstream(&text, &len);
	toml_dump_json(n, f);
	fclose(f);
	return text;
}

static const struct {
	const char *toml, *json;
} valid_rows[] = {
	{ "", "{}" },
	{ "a = 1", "{\"a\":{\"type\":\"integer\",\"value\":\"1\"}}" },
	{ "1.2 = 3", "{\"1\":{\"2\":{\"type\":\"integer\",\"value\":\"3\"}}}" },
	{ "a = 1.5", "{\"a\":{\"type\":\"float\",\"value\":\"1.5\"}}" },
	{ "a = -0x1", NULL },
	{ "a = 0xDEAD_beef", "{\"a\":{\"type\":\"integer\",\"value\":\"3735928559\"}}" },
	{ "a = 0o755", "{\"a\":{\"type\":\"integer\",\"value\":\"493\"}}" },
	{ "a = 0b1010", "{\"a\":{\"type\":\"integer\",\"value\":\"10\"}}" },
	{ "a = 1_000", "{\"a\":{\"type\":\"integer\",\"value\":\"1000\"}}" },
	{ "a = 9223372036854775807", "{\"a\":{\"type\":\"integer\",\"value\":\"9223372036854775807\"}}" },
	{ "a = -9223372036854775808", "{\"a\":{\"type\":\"integer\",\"value\":\"-9223372036854775808\"}}" },
	{ "a = 1e3", "{\"a\":{\"type\":\"float\",\"value\":\"1000\"}}" },
	{ "a = -inf", "{\"a\":{\"type\":\"float\",\"value\":\"-inf\"}}" },
	{ "a = nan", "{\"a\":{\"type\":\"float\",\"value\":\"nan\"}}" },
	{ "a = true\nb = false", "{\"a\":{\"type\":\"bool\",\"value\":\"true\"},\"b\":{\"type\":\"bool\",\"value\":\"false\"}}" },
	{ "a = \"\\u00e9\\U0001F600\"", "{\"a\":{\"type\":\"string\",\"value\":\"\xc3\xa9\xf0\x9f\x98\x80\"}}" },
	{ "a = 'C:\\x'", "{\"a\":{\"type\":\"string\",\"value\":\"C:\\\\x\"}}" },
	{ "a = \"\"\"\nx\\\n   y\"\"\"", "{\"a\":{\"type\":\"string\",\"value\":\"xy\"}}" },
	{ "a = \"\"\"q\"\"\"\"\"", "{\"a\":{\"type\":\"string\",\"value\":\"q\\\"\\\"\"}}" },
	{ "a = '''\nl\nm'''", "{\"a\":{\"type\":\"string\",\"value\":\"l\\nm\"}}" },
	{ "a = 1979-05-27 07:32:00z", "{\"a\":{\"type\":\"datetime\",\"value\":\"1979-05-27T07:32:00Z\"}}" },
	{ "a = 2024-02-29", "{\"a\":{\"type\":\"date-local\",\"value\":\"2024-02-29\"}}" },
	{ "a = 23:59:60.5", "{\"a\":{\"type\":\"time-local\",\"value\":\"23:59:60.5\"}}" },
	{ "a = [1, 'x', [2], {b = 3},]", "{\"a\":[{\"type\":\"integer\",\"value\":\"1\"},{\"type\":\"string\",\"value\":\"x\"},[{\"type\":\"integer\",\"value\":\"2\"}],{\"b\":{\"type\":\"integer\",\"value\":\"3\"}}]}" },
	{ "a = [\n 1, # one\n 2\n]", "{\"a\":[{\"type\":\"integer\",\"value\":\"1\"},{\"type\":\"integer\",\"value\":\"2\"}]}" },
	{ "a = {b.c = 1, b.d = 2}", "{\"a\":{\"b\":{\"c\":{\"type\":\"integer\",\"value\":\"1\"},\"d\":{\"type\":\"integer\",\"value\":\"2\"}}}}" },
	{ "[a.b]\n[a]\nc = 1", "{\"a\":{\"b\":{},\"c\":{\"type\":\"integer\",\"value\":\"1\"}}}" },
	{ "[[t]]\nx = 1\n[[t]]\nx = 2", "{\"t\":[{\"x\":{\"type\":\"integer\",\"value\":\"1\"}},{\"x\":{\"type\":\"integer\",\"value\":\"2\"}}]}" },
	{ "[[t]]\n[t.u]\nx = 1", "{\"t\":[{\"u\":{\"x\":{\"type\":\"integer\",\"value\":\"1\"}}}]}" },
	{ "[f]\napple.color = 'red'\n[f.apple.texture]\nsmooth = true", "{\"f\":{\"apple\":{\"color\":{\"type\":\"string\",\"value\":\"red\"},\"texture\":{\"smooth\":{\"type\":\"bool\",\"value\":\"true\"}}}}}" },
	{ "\"a.b\" = 1\n'' = 2", "{\"a.b\":{\"type\":\"integer\",\"value\":\"1\"},\"\":{\"type\":\"integer\",\"value\":\"2\"}}" },
	{ "\xef\xbb\xbf" "a = 1", "{\"a\":{\"type\":\"integer\",\"value\":\"1\"}}" },
	{ "a = 1\r\nb = 2\r\n", "{\"a\":{\"type\":\"integer\",\"value\":\"1\"},\"b\":{\"type\":\"integer\",\"value\":\"2\"}}" },
};

static void test_valid(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(valid_rows) / sizeof(valid_rows[0]); i++) {
		struct parsed p;
		parse(&p, valid_rows[i].toml);
		if (!valid_rows[i].json) {
			if (p.rc == 0)
				fail_msg("row %zu: accepted '%s'", i, valid_rows[i].toml);
			parsed_free(&p);
			continue;
		}
		if (p.rc != 0) {
			diag_print(&p.dc, stderr);
			fail_msg("row %zu: rejected '%s'", i, valid_rows[i].toml);
		}
		char *got = capture_json(p.doc->root);
		if (strcmp(got, valid_rows[i].json) != 0)
			fail_msg("row %zu: '%s'\n got  %s\n want %s", i, valid_rows[i].toml, got, valid_rows[i].json);
		free(got);
		parsed_free(&p);
	}
}

static const struct {
	const char *toml;
	unsigned line, col, len;
	const char *msg;
} invalid_rows[] = {
	{ "a = ", 1, 5, 0, "unexpected end of file, expected value, '[' or '{'" },
	{ "a = 1 b = 2", 1, 7, 1, "unexpected key, expected end of file or newline" },
	{ "a = 1\na = 2", 2, 1, 1, "duplicate key 'a'" },
	{ "a.b = 1\n[a]", 2, 1, 3, "table 'a' is defined twice" },
	{ "[a]\n[a]", 2, 1, 3, "table 'a' is defined twice" },
	{ "a = {b = 1}\n[a.c]", 2, 2, 1, "cannot extend inline table 'a'" },
	{ "a = {b = 1}\na.c = 2", 2, 1, 1, "cannot add keys to table 'a' here: it was defined as an inline table" },
	{ "[a.b.c]\nz = 9\n[a]\nb.c.t = 1", 4, 1, 3, "cannot add keys to table 'a.b.c' here: it was defined by a table header" },
	{ "a = [1]\n[[a]]", 2, 1, 5, "cannot define 'a' as an array of tables: it is already an array" },
	{ "[[a]]\n[a]", 2, 1, 3, "cannot define table 'a': the key already holds an array of tables" },
	{ "a = 1\n[a.b]", 2, 2, 1, "key 'a' holds an integer, not a table" },
	{ "a = \"x", 1, 5, 2, "unterminated string" },
	{ "a = \"\"\"x", 1, 5, 3, "unterminated multi-line string" },
	{ "a = \"\\q\"", 1, 6, 2, "invalid escape sequence '\\q'" },
	{ "a = \"\\uD800\"", 1, 6, 6, "escape '\\uD800' is not a Unicode scalar value" },
	{ "a = \"\\U00110000\"", 1, 6, 10, "escape '\\U00110000' is not a Unicode scalar value" },
	{ "a = \"x\ty\x01\"", 1, 9, 1, "control character U+0001 is not allowed in a string" },
	{ "# \x7f\n", 1, 3, 1, "control character U+007F is not allowed in a comment" },
	{ "a = 1\rb = 2", 1, 6, 1, "carriage return without a line feed" },
	{ "a = \xff", 1, 5, 1, "invalid UTF-8 byte 0xff: a policy must be UTF-8 text" },
	{ "a = \xed\xa0\x80", 1, 5, 1, "invalid UTF-8 byte 0xed: a policy must be UTF-8 text" },
	{ "a = 9223372036854775808", 1, 5, 19, "integer '9223372036854775808' is out of range (64-bit signed)" },
	{ "a = 0x8000000000000000", 1, 5, 18, "integer '0x8000000000000000' is out of range (64-bit signed)" },
	{ "a = 01", 1, 5, 2, "leading zeros are not allowed in '01'" },
	{ "a = 1__0", 1, 5, 4, "invalid value '1__0'" },
	{ "a = .5", 1, 5, 2, "invalid value '.5'" },
	{ "a = deny", 1, 5, 4, "invalid value 'deny'" },
	{ "a = 2023-02-29", 1, 5, 10, "invalid date '2023-02-29': day 29 is out of range" },
	{ "a = 2023-13-01", 1, 5, 10, "invalid date '2023-13-01': month 13 is out of range" },
	{ "a = 24:00:00", 1, 5, 8, "invalid time '24:00:00'" },
	{ "a = 1979-05-27T07:32Z", 1, 5, 17, "invalid value '1979-05-27T07:32Z'" },
	{ "a = {b = 1,}", 1, 12, 1, "unexpected '}', expected key" },
	{ "a = {b = 1\n}", 1, 11, 1, "unexpected newline, expected ',' or '}'" },
	{ "[a", 1, 3, 0, "unexpected end of file, expected '.' or ']'" },
	{ "[[a]", 1, 4, 1, "unexpected ']', expected '.' or ']]'" },
	{ "a = [1 2]", 1, 8, 1, "unexpected value, expected ',' or ']'" },
	{ "\xc3\xa9 = 1", 1, 1, 2, "unexpected character '\xc3\xa9'" },
	{ "a = \f", 1, 5, 1, "unexpected control character U+000C" },
};

static void test_invalid(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(invalid_rows) / sizeof(invalid_rows[0]); i++) {
		struct parsed p;
		parse(&p, invalid_rows[i].toml);
		if (p.rc == 0)
			fail_msg("row %zu: accepted '%s'", i, invalid_rows[i].toml);
		assert_true(p.dc.n > 0);
		const struct diag *d = &p.dc.items[0];
		unsigned line, col;
		loc_linecol(d->loc, &line, &col);
		if (strncmp(d->msg, invalid_rows[i].msg, strlen(invalid_rows[i].msg)) != 0 ||
		    line != invalid_rows[i].line || col != invalid_rows[i].col || d->loc.len != invalid_rows[i].len) {
			diag_print(&p.dc, stderr);
			fail_msg("row %zu: got %u:%u+%u '%s', want %u:%u+%u '%s'", i, line, col, d->loc.len,
				 d->msg, invalid_rows[i].line, invalid_rows[i].col, invalid_rows[i].len,
				 invalid_rows[i].msg);
		}
		parsed_free(&p);
	}
}

/* Several errors in one document are all reported, up to the cap. */
static void test_error_recovery(void **state)
{
	(void)state;
	struct parsed p;
	parse(&p, "a = \nb = 1\nc = ]\nd = 2\nd = 3\n");
	assert_int_equal(p.rc, -1);
	assert_int_equal(p.dc.errors, 3);
	parsed_free(&p);

	char many[1024] = "";
	for (int i = 0; i < 30; i++)
		strcat(many, "x = \n");
	parse(&p, many);
	assert_int_equal(p.dc.errors, DIAG_MAX_ERRORS);
	parsed_free(&p);
}

static void test_canonical(void **state)
{
	(void)state;
	struct parsed p;
	parse(&p, "z = 1\n[b]\ny = 'x'\n[a]\nq = [1.0, 2e0]\nr = {k = true}\n[[c]]\n[[c]]\nn = 1\n\"sp ace\" = 0x10\n");
	assert_int_equal(p.rc, 0);
	char *text;
	size_t len;
	FILE *f = open_memstream(&text, &len);
	toml_dump_canonical(p.doc, f);
	fclose(f);
	assert_string_equal(text,
			    "z = 1\n"
			    "\n[a]\nq = [1.0, 2.0]\n"
			    "\n[a.r]\nk = true\n"
			    "\n[b]\ny = \"x\"\n"
			    "\n[[c]]\n"
			    "\n[[c]]\nn = 1\n\"sp ace\" = 16\n");
	/* the canonical text reads back, and is its own canonical text */
	struct parsed q;
	parse(&q, text);
	assert_int_equal(q.rc, 0);
	char *again;
	f = open_memstream(&again, &len);
	toml_dump_canonical(q.doc, f);
	fclose(f);
	assert_string_equal(text, again);
	free(again);
	free(text);
	parsed_free(&q);
	parsed_free(&p);
}

/* Locations survive into the tree: a value knows where it was written. */
static void test_locations(void **state)
{
	(void)state;
	struct parsed p;
	parse(&p, "[fs]\nread = [\n  \"/usr/**\",\n  '/etc'\n]\n");
	assert_int_equal(p.rc, 0);
	const struct toml_node *read = toml_table_get(toml_table_get(p.doc->root, "fs"), "read");
	assert_non_null(read);
	assert_int_equal(read->arr.n, 2);
	unsigned line, col;
	loc_linecol(read->arr.items[0]->loc, &line, &col);
	assert_int_equal(line, 3);
	assert_int_equal(col, 3);
	assert_int_equal(read->arr.items[0]->loc.len, 9);
	loc_linecol(read->arr.items[1]->loc, &line, &col);
	assert_int_equal(line, 4);
	assert_int_equal(read->arr.items[1]->loc.len, 6);
	parsed_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid),
		cmocka_unit_test(test_invalid),
		cmocka_unit_test(test_error_recovery),
		cmocka_unit_test(test_canonical),
		cmocka_unit_test(test_locations),
	};
	return cmocka_run_group_tests_name("toml", tests, NULL, NULL);
}
