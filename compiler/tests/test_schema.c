/* SPDX-License-Identifier: GPL-2.0-only */
/* Unit tests of the schema: table-driven rows of {policy, expected text in
 * the IR dump} and {policy, expected first error with its line and column},
 * plus the rule list itself, the error cap, warnings and the defines. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema.h"

/* The defines of every row. */
static const char *const defines[] = {
	"HOME=/home/u", "PROJECT=/p", "DOLLAR=${HOME}", "NAME=my-policy", "HOME=/home/u", "SLASH=/",
	"SYS=/sys/fs",
};

struct built {
	struct source *src;
	struct diag_ctx dc;
	struct toml_doc *doc;
	struct ir_policy *ir;
	int rc;
};

static void build(struct built *b, const char *text, const char *const *defs, size_t ndefs)
{
	memset(b, 0, sizeof(*b));
	b->src = source_new("t.toml", text, strlen(text));
	diag_init(&b->dc);
	if (toml_parse(b->src, &b->dc, &b->doc) < 0)
		fail_msg("not TOML: %s", text);
	struct schema_opts opts = { .sz = sizeof(opts), .defines = defs, .ndefines = ndefs };
	b->rc = schema_build(b->doc, &opts, &b->dc, &b->ir);
}

static void built_free(struct built *b)
{
	ir_policy_free(b->ir);
	toml_doc_free(b->doc);
	diag_fini(&b->dc);
	source_free(b->src);
}

static char *dump(const struct ir_policy *p)
{
	char *text;
	size_t len;
	FILE *f = open_memstream(&text, &len);
	ir_dump(p, f);
	fclose(f);
	return text;
}

static const struct diag *first(const struct diag_ctx *dc, enum diag_severity sev)
{
	for (size_t i = 0; i < dc->n; i++)
		if (dc->items[i].severity == sev)
			return &dc->items[i];
	return NULL;
}

#define HEAD "version = 1\nname = \"t\"\n"

/* A row that fails is reported and the rest still run. */
#define ROW_FAIL(...) (print_error(__VA_ARGS__), print_error("\n"), failures++)

static const struct {
	const char *toml, *want;   /* want: a part of the IR dump */
} good_rows[] = {
	{ HEAD, "version 1\nname t\nparent none\naudit deny\nsyscalls none\nrules 0\n" },
	/* syscalls: table order whatever the policy's, ${NAME} expanded */
	{ HEAD "[syscalls]\nallow = [\"io_uring\", \"bpf\"]", "syscalls bpf io_uring\nrules 0\n" },
	{ HEAD "[syscalls]\nallow = []", "syscalls none\n" },
	{ HEAD "syscalls.allow = [\"keyring\", \"mount\", \"handles\"]", "syscalls keyring mount handles\n" },
	{ HEAD "parent = \"up/parent.toml\"", "parent \"up/parent.toml\"" },
	{ HEAD "[audit]\ndecisions = \"all\"", "audit all" },
	{ HEAD "[audit]\ndecisions = \"none\"", "audit none" },
	{ "name = \"${NAME}\"\nversion = 1", "name my-policy" },
	/* ${NAME}, "$$", and values that are not expanded again */
	{ HEAD "[fs]\nread = [\"${HOME}/**\"]", "fs.read      /home/u/**" },
	{ HEAD "[fs]\nread = [\"${PROJECT}/src${HOME}\"]", "/p/src/home/u" },
	{ HEAD "[fs]\nread = [\"/a/$$b\"]", "fs.read      /a/$b" },
	{ HEAD "[fs]\nread = [\"/x/${DOLLAR}\"]", "fs.read      /x/${HOME}" },
	/* path forms */
	{ HEAD "[fs]\nread = [\"/\"]", "fs.read      /  " },
	{ HEAD "[fs]\ndeny = [\"**/*.pem\"]", "fs.deny      /**/*.pem" },
	{ HEAD "[fs]\nread = ['/a/\\*b', \"/c/[!x]{d,e}?\"]", "/a/\\*b" },
	{ HEAD "[fs]\nread = [\"/a/{b}\", \"/a/[]x]\", \"/a/[^x]\", \"/a/[[:digit:]]\"]", "/a/[[:digit:]]" },
	{ HEAD "[fs]\nread = [\"/a b/c\"]", "fs.read      \"/a b/c\"" },
	{ HEAD "[exec]\nallow = [\"!/usr/bin/git\", \"/usr/bin/*\"]", "exec.allow   !/usr/bin/git" },
	/* a pin's text is its file's literal path */
	{ HEAD "[exec]\nallow = ['!/usr/bin/a\\*b']", "exec.allow   !/usr/bin/a*b" },
	{ HEAD "[exec]\nallow = [\"!/usr/{bin}/g\\\\it\"]", "exec.allow   !/usr/bin/git" },
	/* write grants next to, but not into, the protected interfaces */
	{ HEAD "[fs]\nwrite = [\"/proc/sysrq-trigger\"]", "fs.write" },
	{ HEAD "[fs]\nwrite = [\"/sys/fs/bpfx\", \"/sys/fs/cgroupx/y\"]", "/sys/fs/cgroupx/y" },
	{ HEAD "[fs]\nwrite = [\"/sys/*\"]", "fs.write     /sys/*" },
	{ HEAD "[fs]\nwrite = [\"/sys/fs/[!c]group/**\"]", "fs.write" },
	{ HEAD "[fs]\nwrite = [\"/proc/[0-9]*/**\"]", "fs.write" },
	{ HEAD "[fs]\nwrite = [\"/sys/kernel/debug/**\"]", "fs.write" },
	{ HEAD "[fs]\nwrite = [\"/proc/sy\"]", "fs.write" },
	/* net */
	{ HEAD "[net]\nconnect = [\"10.0.0.0/8:443\"]", "net.connect  10.0.0.0/8:443/tcp" },
	{ HEAD "[net]\nbind = [\"[::1]:0/udp\"]", "net.bind     [::1]/128:0/udp" },
	{ HEAD "[net]\ndeny = [\"169.254.169.254:*\"]",
	  "net.deny     169.254.169.254/32:*/tcp  @ 4:9\n  1  net.deny     169.254.169.254/32:*/udp  @ 4:9" },
	{ HEAD "[net]\ndeny = [\"10.0.0.1:22/tcp\"]", "rules 1\n" },
	{ HEAD "[net]\nconnect = [\"[::ffff:${PROJECT}]:1\"]", NULL },   /* "/p" is no address */
	/* env */
	{ HEAD "[env]\nallow = [\"PATH\", \"LC_*\", \"[A-Z]?\", \"_X\"]", "env.allow    [A-Z]?" },
	{ HEAD "[env]\nset = { A = \"1\", B_2 = \"${HOME}\" }", "env.set      B_2=\"/home/u\"" },
	{ HEAD "[env.set]\nQ = 'say \"hi\"'", "env.set      Q=\"say \\\"hi\\\"\"" },
	/* the same tables written as dotted keys and inline tables */
	{ HEAD "fs.read = [\"/a\"]", "fs.read      /a" },
	{ HEAD "exec = { allow = [\"/b\"] }", "exec.allow   /b" },
	{ HEAD "[fs]\nread = []\n[exec]\n[net]\n[env]\n[audit]", "rules 0\n" },
	/* rules keep source order across tables */
	{ HEAD "[fs]\nwrite = [\"/w\"]\nread = [\"/r\"]\n[env]\nallow = [\"A\"]",
	  "  0  fs.write     /w  @ 4:10\n  1  fs.read      /r  @ 5:9\n  2  env.allow    A   @ 7:10\n" },
};

static void test_good(void **state)
{
	(void)state;
	int failures = 0;
	for (size_t i = 0; i < sizeof(good_rows) / sizeof(good_rows[0]); i++) {
		struct built b;
		build(&b, good_rows[i].toml, defines, sizeof(defines) / sizeof(defines[0]));
		bool want_ok = good_rows[i].want != NULL;
		if ((b.rc == 0) != want_ok) {
			const struct diag *d = first(&b.dc, DIAG_ERROR);
			ROW_FAIL("row %zu: rc %d (%s)\n%s", i, b.rc, d ? d->msg : "no error",
				 good_rows[i].toml);
		} else if (want_ok) {
			char *text = dump(b.ir);
			if (!strstr(text, good_rows[i].want))
				ROW_FAIL("row %zu: dump lacks '%s':\n%s", i, good_rows[i].want, text);
			free(text);
			if (first(&b.dc, DIAG_WARNING))
				ROW_FAIL("row %zu: unexpected warning '%s'", i,
					 first(&b.dc, DIAG_WARNING)->msg);
		}
		built_free(&b);
	}
	assert_int_equal(failures, 0);
}

static const struct {
	const char *toml, *msg;      /* msg: a part of the first error */
	unsigned line, col, len;     /* where it points; len 0: not checked */
} bad_rows[] = {
	/* the header */
	{ "", "missing required key 'version'", 1, 1, 0 },
	{ "version = 1", "missing required key 'name'", 1, 1, 0 },
	{ "version = 2\nname = \"t\"", "unsupported policy version 2", 1, 11, 1 },
	{ "version = \"1\"\nname = \"t\"", "'version' must be an integer, found string", 1, 11, 3 },
	{ "version = 1\nname = 7", "'name' must be a string, found integer", 2, 8, 1 },
	{ "version = 1\nname = \"\"", "policy name is empty", 2, 8, 2 },
	{ "version = 1\nname = \"a/b\"", "invalid character '/' in policy name 'a/b'", 2, 10, 1 },
	{ "version = 1\nname = '${HOME}'", "invalid character '/'", 2, 9, 7 },
	{ "version = 1\nname = \"0123456789012345678901234567890123456789012345678901234567890123X\"",
	  "policy name is 65 bytes long, more than 64", 2, 73, 1 },
	{ HEAD "parent = []", "'parent' must be a string, found array", 3, 10, 2 },
	/* keys and types */
	{ HEAD "nmae = 1", "unknown key 'nmae'", 3, 1, 4 },
	{ HEAD "[fs]\nwirte = []", "unknown key 'wirte' in [fs]", 4, 1, 5 },
	{ HEAD "[fs.extra]", "unknown table [fs.extra]", 3, 5, 5 },
	{ HEAD "[files]", "unknown table [files]", 3, 2, 5 },
	{ HEAD "[audit]\nlevel = 1", "unknown key 'level' in [audit]", 4, 1, 5 },
	{ HEAD "[syscalls]\ndeny = []", "unknown key 'deny' in [syscalls]", 4, 1, 4 },
	{ HEAD "[syscalls]\nallow = [\"bpf\", \"ptrace\"]", "unknown system call group 'ptrace'", 4, 18, 6 },
	{ HEAD "[syscalls]\nallow = [\"BPF\"]", "unknown system call group 'BPF'", 4, 11, 3 },
	{ HEAD "[syscalls]\nallow = \"bpf\"", "'syscalls.allow' must be an array of strings, found string", 4, 9, 5 },
	{ HEAD "[syscalls]\nallow = [true]", "entries of 'syscalls.allow' must be strings, found bool", 4, 10, 4 },
	{ HEAD "syscalls = 1", "'syscalls' must be a table, found integer", 3, 12, 1 },
	{ HEAD "fs = 1", "'fs' must be a table, found integer", 3, 6, 1 },
	{ HEAD "[[net]]", "'net' must be a table, found array of tables", 3, 1, 7 },
	{ HEAD "[fs]\nread = \"/a\"", "'fs.read' must be an array of strings, found string", 4, 8, 4 },
	{ HEAD "[fs]\nread = [[\"/a\"]]", "entries of 'fs.read' must be strings, found array", 4, 9, 6 },
	{ HEAD "[fs.read]", "'fs.read' must be an array of strings, found table", 3, 1, 0 },
	{ HEAD "[audit]\ndecisions = \"nonee\"", "unknown audit mode 'nonee'", 4, 14, 5 },
	{ HEAD "[audit]\ndecisions = 1", "'audit.decisions' must be a string, found integer", 4, 13, 1 },
	/* paths, pointing inside the string */
	{ HEAD "[fs]\nread = [\"a/b\"]", "path 'a/b' is not absolute", 4, 10, 3 },
	{ HEAD "[fs]\nread = [\"/a//b\"]", "empty segment '//' in path '/a//b'", 4, 12, 2 },
	{ HEAD "[fs]\nread = [\"/a/./b\"]", "'.' segment in path '/a/./b'", 4, 13, 1 },
	{ HEAD "[fs]\nread = [\"/a/..\"]", "'..' is not allowed in a path", 4, 13, 2 },
	{ HEAD "[fs]\nread = [\"/a/\"]", "path '/a/' ends with '/'", 4, 12, 1 },
	{ HEAD "[fs]\nread = [\"\"]", "empty path", 4, 10, 0 },
	{ HEAD "[fs]\nread = ['/x', '/a/[bc']", "unterminated '['", 4, 19, 1 },
	{ HEAD "[fs]\nread = [\"/a/{b,c\"]", "unterminated '{'", 4, 13, 1 },
	{ HEAD "[fs]\nread = [\"/a/b}\"]", "unmatched '}'", 4, 14, 1 },
	{ HEAD "[fs]\nread = [\"/a/[z-a]\"]", "reversed range 'z-a'", 4, 14, 3 },
	{ HEAD "[fs]\nread = [\"/a[/]b\"]", "matches no byte", 4, 12, 3 },
	{ HEAD "[fs]\nread = ['/a\\']", "trailing '\\'", 4, 12, 1 },
	/* after ${NAME}: the error maps back to the text that made it */
	{ HEAD "[fs]\nread = [\"${PROJECT}/../x\"]", "'..' is not allowed in a path", 4, 21, 2 },
	{ HEAD "[fs]\nread = [\"/x${PROJECT}/\"]", "path '/x/p/' ends with '/'", 4, 22, 1 },
	{ HEAD "[fs]\nread = [\"/x${SLASH}${SLASH}y\"]", "empty segment '//'", 4, 12, 16 },
	/* with escapes or on several lines the whole string is the location */
	{ HEAD "[fs]\nread = [\"/a/\\u0062/../c\"]", "'..' is not allowed", 4, 9, 16 },
	{ HEAD "[fs]\nread = [\"\"\"/a/b/\"\"\"]", "ends with '/'", 4, 9, 11 },
	/* ${NAME} itself */
	{ HEAD "[fs]\nread = [\"/a/${NOPE}\"]", "undefined variable 'NOPE'", 4, 13, 7 },
	{ HEAD "[fs]\nread = [\"/a/$b\"]", "'$' does not start a variable", 4, 13, 1 },
	{ HEAD "[fs]\nread = [\"/a/${b\"]", "unterminated '${'", 4, 13, 2 },
	{ HEAD "[fs]\nread = [\"/a/${}\"]", "empty variable name", 4, 13, 3 },
	{ HEAD "[fs]\nread = [\"/a/${9}\"]", "invalid variable name '9'", 4, 13, 4 },
	{ HEAD "[fs]\nread = [\"/a/${A-B}\"]", "invalid variable name 'A-B'", 4, 13, 6 },
	/* pins */
	{ HEAD "[fs]\nwrite = [\"!/a\"]", "inode pins ('!') are only valid in [exec], not in 'fs.write'", 4, 11, 1 },
	{ HEAD "[env]\nallow = [\"!A\"]", "only valid in [exec], not in 'env.allow'", 4, 11, 1 },
	{ HEAD "[exec]\nallow = [\"!/a/{b,c}\"]", "an inode pin needs one file, not a glob", 4, 12, 8 },
	{ HEAD "[exec]\nallow = [\"!a\"]", "path 'a' is not absolute", 4, 12, 1 },
	/* protected kernel interfaces */
	{ HEAD "[fs]\nwrite = [\"/**\"]", "can reach protected kernel interface '/sys/fs/cgroup'", 4, 11, 3 },
	{ HEAD "[fs]\nwrite = [\"/sys/**\"]", "'/sys/fs/cgroup'", 4, 11, 7 },
	{ HEAD "[fs]\nwrite = [\"/sys/*/cgroup/**\"]", "'/sys/fs/cgroup'", 4, 11, 0 },
	{ HEAD "[fs]\nwrite = [\"/sys/fs/cgroup\"]", "'/sys/fs/cgroup'", 4, 11, 0 },
	{ HEAD "[fs]\nwrite = [\"/sys/fs/c*\"]", "'/sys/fs/cgroup'", 4, 11, 0 },
	{ HEAD "[fs]\nwrite = [\"/sys/fs/cgroup*\"]", "'/sys/fs/cgroup'", 4, 11, 0 },
	{ HEAD "[fs]\nwrite = [\"/sys/fs/[a-c]group/x\"]", "'/sys/fs/cgroup'", 4, 11, 0 },
	{ HEAD "[fs]\nwrite = [\"/sys/**/x\"]", "'/sys/fs/cgroup'", 4, 11, 0 },
	{ HEAD "[fs]\nwrite = [\"/sys/fs/bpf/pinned\"]", "'/sys/fs/bpf'", 4, 11, 0 },
	{ HEAD "[fs]\nwrite = [\"/sys/{x,fs}/b?f\"]", "'/sys/fs/bpf'", 4, 11, 0 },
	{ HEAD "[fs]\nwrite = [\"/proc/sys\"]", "'/proc/sys'", 4, 11, 0 },
	{ HEAD "[fs]\nwrite = [\"/proc/*/kernel/x\"]", "'/proc/sys'", 4, 11, 0 },
	{ HEAD "[fs]\nwrite = [\"/proc/s[xy]s/vm/**\"]", "'/proc/sys'", 4, 11, 0 },
	{ HEAD "[fs]\nwrite = [\"/**/security/x\"]", "'/sys/fs/cgroup'", 4, 11, 0 },
	{ HEAD "[fs]\nwrite = [\"/sys/kernel/security\"]", "'/sys/kernel/security'", 4, 11, 0 },
	{ HEAD "[fs]\nwrite = [\"**/x\"]", "'/sys/fs/cgroup'", 4, 11, 0 },
	{ HEAD "[fs]\nwrite = [\"${PROJECT}\", \"${SYS}/bpf/x\"]", "'/sys/fs/bpf'", 4, 25, 12 },
	/* net, pointing inside the entry */
	{ HEAD "[net]\nconnect = [\"10.1.2.3/8:443\"]", "did you mean '10.0.0.0/8'?", 4, 13, 10 },
	{ HEAD "[net]\nbind = [\"example.com:443\"]", "'net.bind' takes addresses, not host names", 4, 10, 11 },
	{ HEAD "[net]\nconnect = [\"example..com:443\"]", "empty label", 4, 21, 0 },
	{ HEAD "[net]\nbind = [\"10.0.0.1\"]", "missing port after '10.0.0.1'", 4, 18, 0 },
	{ HEAD "[net]\ndeny = [\"${PROJECT}:1\"]", "missing address", 4, 10, 0 },
	{ HEAD "[net]\nconnect = [\"!1.2.3.4:1\"]", "not in 'net.connect'", 4, 13, 1 },
	{ HEAD "[net]\nconnect = 1", "'net.connect' must be an array of strings, found integer", 4, 11, 1 },
	/* env */
	{ HEAD "[env]\nallow = [\"A=B\"]", "invalid character '='", 4, 12, 1 },
	{ HEAD "[env]\nallow = [\"9A\"]", "do not start with a digit", 4, 11, 1 },
	{ HEAD "[env]\nallow = [\"A.B\"]", "invalid character '.'", 4, 12, 1 },
	{ HEAD "[env]\nallow = [\"A{B,C}\"]", "invalid character '{'", 4, 12, 1 },
	{ HEAD "[env]\nallow = [\"A[B\"]", "unterminated '['", 4, 12, 1 },
	{ HEAD "[env]\nallow = [\"\"]", "empty environment variable pattern", 4, 11, 0 },
	{ HEAD "[env]\nset = { \"A B\" = \"1\" }", "invalid environment variable name 'A B'", 4, 9, 5 },
	{ HEAD "[env]\nset = { A = 1.5 }", "'env.set.A' must be a string, found float", 4, 13, 3 },
	{ HEAD "[env]\nset = { A = \"a\\u0000b\" }", "value of 'A' contains a NUL byte", 4, 13, 0 },
	{ HEAD "[env]\nset = [\"A=1\"]", "'env.set' must be a table of strings, found array", 4, 7, 7 },
};

static void test_bad(void **state)
{
	(void)state;
	int failures = 0;
	for (size_t i = 0; i < sizeof(bad_rows) / sizeof(bad_rows[0]); i++) {
		struct built b;
		build(&b, bad_rows[i].toml, defines, sizeof(defines) / sizeof(defines[0]));
		const struct diag *d = first(&b.dc, DIAG_ERROR);
		if (b.rc == 0 || !d || b.ir) {
			ROW_FAIL("row %zu: compiled, want '%s'\n%s", i, bad_rows[i].msg, bad_rows[i].toml);
			built_free(&b);
			continue;
		}
		unsigned line = 0, col = 0;
		if (d->loc.src)
			loc_linecol(d->loc, &line, &col);
		if (!strstr(d->msg, bad_rows[i].msg))
			ROW_FAIL("row %zu: error '%s', want '%s'", i, d->msg, bad_rows[i].msg);
		else if (line != bad_rows[i].line || col != bad_rows[i].col)
			ROW_FAIL("row %zu: '%s' at %u:%u, want %u:%u", i, d->msg, line, col,
				 bad_rows[i].line, bad_rows[i].col);
		else if (bad_rows[i].len && d->loc.len != bad_rows[i].len)
			ROW_FAIL("row %zu: '%s' spans %u bytes, want %u", i, d->msg, d->loc.len,
				 bad_rows[i].len);
		built_free(&b);
	}
	assert_int_equal(failures, 0);
}

/* The rule list itself: kinds, texts, payloads and indexes. */
static void test_rules(void **state)
{
	(void)state;
	struct built b;
	build(&b, HEAD "[exec]\nallow = [\"!/bin/x\", \"/bin/y\"]\n"
		       "[net]\nconnect = [\"[::ffff:10.0.0.0]/104:80-90/udp\"]\n"
		       "[env]\nset = { K = \"v${PROJECT}\" }",
	      defines, 3);
	assert_int_equal(b.rc, 0);
	assert_int_equal(b.ir->nrules, 4);
	const struct ir_rule *r = b.ir->rules;
	assert_int_equal(r[0].kind, IR_RULE_EXEC_ALLOW);
	assert_string_equal(r[0].text, "/bin/x");
	assert_true(r[0].exec.pinned);
	assert_false(r[1].exec.pinned);
	assert_int_equal(r[2].kind, IR_RULE_NET_CONNECT);
	assert_string_equal(r[2].text, "[::ffff:10.0.0.0]/104:80-90/udp");
	assert_int_equal(r[2].net.family, IR_NET_IPV4);
	assert_int_equal(r[2].net.prefix, 8);
	assert_int_equal(r[2].net.port_lo, 80);
	assert_int_equal(r[2].net.port_hi, 90);
	assert_int_equal(r[2].net.proto, IR_NET_UDP);
	assert_int_equal(r[3].kind, IR_RULE_ENV_SET);
	assert_string_equal(r[3].text, "K");
	assert_string_equal(r[3].env_set.value, "v/p");
	for (unsigned i = 0; i < 4; i++) {
		assert_int_equal(r[i].index, i);
		assert_ptr_equal(r[i].loc.src, b.src);
	}
	unsigned line, col;
	loc_linecol(r[3].loc, &line, &col);   /* an env.set rule points at its key */
	assert_int_equal(line, 8);
	assert_int_equal(col, 9);
	assert_string_equal(b.ir->name, "t");
	assert_int_equal(b.ir->version, 1);
	assert_null(b.ir->parent);
	assert_int_equal(b.ir->audit, IR_AUDIT_DENY);
	built_free(&b);
}

/* One run reports every bad value, and stops after DIAG_MAX_ERRORS. */
static void test_many_errors(void **state)
{
	(void)state;
	struct built b;
	build(&b, HEAD "[fs]\nread = [\"a\", \"/b//\"]\n[net]\nconnect = [\"x..y:1\"]\n[audit]\ndecisions = \"x\"",
	      defines, 3);
	assert_int_equal(b.rc, -1);
	assert_int_equal(b.dc.errors, 4);
	assert_false(b.dc.truncated);
	built_free(&b);

	char text[4096] = HEAD "[fs]\nread = [";
	for (int i = 0; i < 30; i++)
		strcat(text, "\"rel\", ");
	strcat(text, "]\n");
	build(&b, text, defines, 3);
	assert_int_equal(b.rc, -1);
	assert_int_equal(b.dc.errors, DIAG_MAX_ERRORS);
	assert_true(b.dc.truncated);
	built_free(&b);
}

/* Duplicates within a list warn and are dropped; the policy compiles. */
static void test_duplicates(void **state)
{
	(void)state;
	struct built b;
	build(&b, HEAD "[fs]\nread = [\"/a\", \"/b\", \"/a\"]\nwrite = [\"/a\"]\n"
		       "[net]\nconnect = [\"1.2.3.4:1\", \"1.2.3.4/32:1/tcp\", \"1.2.3.4:1/udp\"]",
	      defines, 3);
	assert_int_equal(b.rc, 0);
	assert_int_equal(b.dc.errors, 0);
	assert_int_equal(b.ir->nrules, 5);   /* /a /b, write /a, two connects */
	size_t warnings = 0;
	for (size_t i = 0; i < b.dc.n; i++) {
		if (b.dc.items[i].severity != DIAG_WARNING)
			continue;
		warnings++;
		assert_non_null(strstr(b.dc.items[i].msg, "duplicate entry"));
		assert_int_equal(b.dc.items[i].nnotes, 1);
		assert_string_equal(b.dc.items[i].notes[0].msg, "first listed here");
	}
	assert_int_equal(warnings, 2);
	built_free(&b);
}

/* Undefined variables say how to define them and suggest a near name;
 * a malformed define is refused without a location. */
static void test_defines(void **state)
{
	(void)state;
	struct built b;
	build(&b, HEAD "[fs]\nread = [\"${PROJET}/x\"]", defines, 3);
	const struct diag *d = first(&b.dc, DIAG_ERROR);
	assert_non_null(d);
	assert_int_equal(d->nnotes, 2);
	assert_string_equal(d->notes[0].msg, "define it on the command line: beec -D PROJET=VALUE");
	assert_string_equal(d->notes[1].msg, "did you mean '${PROJECT}'?");
	built_free(&b);

	static const char *const broken[] = { "HOME=/h", "NOVALUE" };
	build(&b, HEAD, broken, 2);
	d = first(&b.dc, DIAG_ERROR);
	assert_int_equal(b.rc, -1);
	assert_non_null(d);
	assert_null(d->loc.src);
	assert_string_equal(d->msg, "invalid define 'NOVALUE': expected NAME=VALUE");
	built_free(&b);

	/* no opts at all: a policy without ${NAME} still compiles */
	b.src = source_new("t.toml", HEAD, strlen(HEAD));
	diag_init(&b.dc);
	assert_int_equal(toml_parse(b.src, &b.dc, &b.doc), 0);
	assert_int_equal(schema_build(b.doc, NULL, &b.dc, &b.ir), 0);
	built_free(&b);
}

/* The dump in full: the format the golden files hold. */
static void test_dump(void **state)
{
	(void)state;
	struct built b;
	build(&b, "version = 1\nname = \"d\"\nparent = \"p q.toml\"\n[audit]\ndecisions = \"all\"\n"
		  "[fs]\nread = [\"/usr/**\", \"/a\\tb\"]\n[exec]\nallow = [\"!/bin/sh\"]\n"
		  "[net]\nconnect = [\"[2001:db8::1]:443\"]\n[env]\nset = { E = \"\" }",
	      defines, 3);
	assert_int_equal(b.rc, 0);
	char *text = dump(b.ir);
	assert_string_equal(text,
		"# bee policy ir (schema 1)\n"
		"version 1\n"
		"name d\n"
		"parent \"p q.toml\"\n"
		"audit all\n"
		"syscalls none\n"
		"rules 5\n"
		"  0  fs.read      /usr/**                    @ 7:9\n"
		"  1  fs.read      \"/a\\tb\"                    @ 7:20\n"
		"  2  exec.allow   !/bin/sh                   @ 9:10\n"
		"  3  net.connect  [2001:db8::1]/128:443/tcp  @ 11:12\n"
		"  4  env.set      E=\"\"                       @ 13:9\n");
	free(text);
	built_free(&b);
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(ir_domain_name(IR_DOMAIN_FS), "fs");
	assert_string_equal(ir_domain_name(IR_DOMAIN_ENV), "env");
	assert_string_equal(ir_rule_kind_key(IR_RULE_NET_BIND), "bind");
	assert_string_equal(ir_rule_kind_key(IR_RULE_ENV_SET), "set");
	assert_int_equal(ir_rule_kind_domain(IR_RULE_EXEC_ALLOW), IR_DOMAIN_EXEC);
	assert_int_equal(ir_rule_kind_domain(IR_RULE_NET_DENY), IR_DOMAIN_NET);
	assert_string_equal(ir_audit_mode_name(IR_AUDIT_NONE), "none");
	assert_string_equal(ir_domain_name(IR_DOMAIN_COUNT), "?");
	assert_string_equal(ir_rule_kind_key(IR_RULE_KIND_COUNT), "?");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_rules),
		cmocka_unit_test(test_many_errors),
		cmocka_unit_test(test_duplicates),
		cmocka_unit_test(test_defines),
		cmocka_unit_test(test_dump),
		cmocka_unit_test(test_names),
	};
	return cmocka_run_group_tests_name("schema", tests, NULL, NULL);
}
