/* SPDX-License-Identifier: GPL-2.0-only */
/* beec learn (learn.c) and include = [...] (include.c), table driven: a
 * log of Deny records in, the policy text's lines that must and must not
 * be there out; every learned policy compiles; an include resolves,
 * merges, records itself and fails where it must. The paths live in a
 * temporary tree, since learn looks at what exists (a directory, a file
 * made and gone). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "learn.h"
#include "libbeec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmp[64];

static void put_file(const char *rel, const char *text)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", tmp, rel);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void mk(const char *rel)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", tmp, rel);
	assert_int_equal(mkdir(p, 0755), 0);
}

/* A Deny record of KIND ACTION for tmp/REL (a path "/REL" or a network
 * endpoint as it is). */
static void rec(FILE *f, const char *kind, const char *action, const char *rel)
{
	bool as_is = rel[0] == '/' || strcmp(kind, "Network") == 0;
	fprintf(f, "{\"ts\":\"2026-01-01T00:00:00.000Z\",\"kind\":\"%s\",\"action\":\"%s\",\"resource\":\"%s%s%s\","
		   "\"decision\":\"Deny\",\"source\":\"fanotify\"}\n",
		kind, action, as_is ? "" : tmp, as_is ? "" : "/", rel);
}

/* learn_run over log with -D W=tmp; the text, which must compile. */
static char *learn(const char *log, const char *base_text)
{
	char def[96], lp[256], bp[256];
	snprintf(def, sizeof(def), "W=%s", tmp);
	snprintf(lp, sizeof(lp), "%s/%s", tmp, log);
	const char *defs[] = { def };
	const char *logs[] = { lp };
	struct beec_opts bo = { .sz = sizeof(bo), .defines = defs, .ndefines = 1 };
	struct beec_policy base = { 0 };
	struct diag_ctx dc;
	diag_init(&dc);
	if (base_text) {
		snprintf(bp, sizeof(bp), "%s/base.toml", tmp);
		put_file("base.toml", base_text);
		assert_int_equal(beec_policy__load(&base, bp, &bo, &dc), 0);
		assert_int_equal(beec_policy__lower(&base, &bo, &dc), 0);
	}
	struct learn_opts o = { .logs = logs, .nlogs = 1, .defines = defs, .ndefines = 1,
				.base = base_text ? &base : NULL, .name = base_text ? NULL : "t" };
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	FILE *warn = fopen("/dev/null", "w");
	assert_int_equal(learn_run(&o, out, warn, &dc), 0);
	fclose(out);
	fclose(warn);
	/* what it wrote compiles */
	struct beec_policy p = { .src = source_new("learned.toml", text, len) };
	int err = beec_policy__parse(&p, &dc);
	if (!err)
		err = beec_policy__build(&p, &bo, &dc);
	if (!err)
		err = beec_policy__lower(&p, &bo, &dc);
	if (err) {
		diag_print(&dc, stderr);
		fputs(text, stderr);
	}
	assert_int_equal(err, 0);
	beec_policy__fini(&p);
	beec_policy__fini(&base);
	diag_fini(&dc);
	return text;
}

static void test_shapes(void **state)
{
	(void)state;
	mk("proj");
	mk("proj/src");
	put_file("proj/src/a.c", "a");
	put_file("proj/src/b.c", "b");
	put_file("proj/src/c.c", "c");
	put_file("proj/README", "r");
	mk("home");
	mk("home/.ssh");
	put_file("home/.ssh/id_ed25519", "key");
	put_file("proj/.env", "TOKEN=1");
	mk("out");
	char lp[256];
	snprintf(lp, sizeof(lp), "%s/log.jsonl", tmp);
	FILE *f = fopen(lp, "w");
	assert_non_null(f);
	rec(f, "FileSystem", "Read", "proj/src/a.c");
	rec(f, "FileSystem", "Read", "proj/src/b.c");
	rec(f, "FileSystem", "Read", "proj/src/c.c");
	rec(f, "FileSystem", "Read", "proj/src/c.c");
	rec(f, "FileSystem", "Read", "proj/README");
	rec(f, "FileSystem", "Read", "home/.ssh/id_ed25519");
	rec(f, "FileSystem", "Read", "proj/.env");
	rec(f, "FileSystem", "Write", "out");            /* a file made in out */
	rec(f, "FileSystem", "Write", "out/made.o");
	rec(f, "FileSystem", "Write", "gone.tmp");       /* a temporary, gone */
	rec(f, "FileSystem", "Execute", "/usr/bin/true");
	rec(f, "Network", "Connect", "127.0.0.1:8080");
	rec(f, "Network", "Connect", "10.0.0.1:53");
	fputs("{\"ts\":\"2026-01-01T00:00:00.000Z\",\"kind\":\"Environment\",\"action\":\"Read\","
	      "\"resource\":\"AWS_SECRET,LANG\",\"decision\":\"Deny\",\"count\":2}\n", f);
	fputs("{\"ts\":\"2026-01-01T00:00:00.000Z\",\"kind\":\"Process\",\"action\":\"Execute\","
	      "\"resource\":\"bee:learning:landlock\",\"decision\":\"Allow\"}\n", f);
	fclose(f);
	static const struct {
		const char *line;
		bool present;
	} rows[] = {
		{ "\"${W}/proj/src/**\",   # read 4 times, first ", true },   /* three files: the directory */
		{ "\"${W}/proj/README\",   # read 1 time", true },
		{ "\"${W}/out/**\",   # written", true },                     /* made there: its tree */
		{ "\"${W}/**\"", false },                                    /* never up to a secret */
		{ "#   read ${W}/home/.ssh/id_ed25519   (1 time)", true },    /* listed */
		{ "\"${W}/home/.ssh/**\",   # secret-looking", true },        /* and denied */
		{ "\"${W}/proj/.env\",   # secret-looking", true },
		{ "\"/usr/bin/true\",   # run 1 time", true },
		{ "\"/usr/bin/true\",   # read 1 time", true },               /* what runs is read too */
		{ "\"127.0.0.1:8080\",   # connected 1 time", true },
		{ "\"10.0.0.1:53/udp\"", true },
		{ "#   AWS_SECRET LANG", true },                              /* names listed */
		{ "allow = [\"LANG\"", false },                                /* never granted */
		{ "bee:learning", false },
		{ "\"/dev/null\",   # every learned policy", true },
	};
	char *text = learn("log.jsonl", NULL);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		bool has = strstr(text, rows[i].line) != NULL;
		if (has != rows[i].present)
			fprintf(stderr, "row %zu: '%s' %s in:\n%s", i, rows[i].line, has ? "is" : "is not", text);
		assert_true(has == rows[i].present);
	}
	/* deterministic */
	char *again = learn("log.jsonl", NULL);
	assert_string_equal(text, again);
	free(again);
	free(text);
	/* --base: its rules kept, what it allows not added */
	text = learn("log.jsonl", "version = 1\nname = \"b\"\n[fs]\nread = [\"${W}/proj/**\"]\n"
				  "[env]\nallow = [\"LANG\"]\n");
	assert_non_null(strstr(text, "name = \"b\""));
	assert_non_null(strstr(text, "# from the base policy\n    \"${W}/proj/**\",\n"));
	assert_null(strstr(text, "\"${W}/proj/src/**\""));
	assert_null(strstr(text, "\"${W}/proj/README\""));
	assert_non_null(strstr(text, "allow = [\"LANG\"]"));
	free(text);
}

/* ---- include ------------------------------------------------------------------------ */

static int compile(const char *rel, struct beec_policy *p, struct diag_ctx *dc, const char *inc_dir)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", tmp, rel);
	const char *dirs[] = { inc_dir };
	struct beec_opts bo = { .sz = sizeof(bo), .include_dirs = dirs, .ninclude_dirs = inc_dir ? 1 : 0 };
	int err = beec_policy__load(p, path, &bo, dc);
	return err ? err : beec_policy__lower(p, &bo, dc);
}

static void test_include(void **state)
{
	(void)state;
	char abs[128];
	snprintf(abs, sizeof(abs), "%s/abs", tmp);
	mk("abs");
	put_file("abs/lib.toml", "version = 1\nname = \"lib\"\ninclude = [\"core\"]\n[fs]\nread = [\"/usr/lib/**\"]\n");
	put_file("abs/core.toml", "version = 1\nname = \"core\"\n[fs]\nread = [\"/etc/ld.so.cache\"]\n"
				  "[exec]\nallow = [\"/usr/bin/true\"]\n");
	put_file("local.toml", "version = 1\nname = \"local\"\n[fs]\nread = [\"/etc/hostname\"]\n");
	put_file("top.toml", "version = 1\nname = \"top\"\ninclude = [\"lib\", \"local.toml\"]\n"
			     "[fs]\nread = [\"/etc/ld.so.cache\", \"/srv/**\"]\n");
	struct beec_policy p = { 0 };
	struct diag_ctx dc;
	diag_init(&dc);
	assert_int_equal(compile("top.toml", &p, &dc, abs), 0);
	/* every rule once: the includer's, the includes', nested too */
	static const char *const want[] = { "/etc/ld.so.cache", "/srv/**", "/usr/lib/**", "/etc/hostname",
					    "/usr/bin/true" };
	assert_int_equal(p.ir->nrules, sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		bool found = false;
		for (size_t k = 0; k < p.ir->nrules; k++)
			found |= strcmp(p.ir->rules[k].text, want[i]) == 0;
		assert_true(found);
	}
	assert_string_equal(p.ir->name, "top");
	/* recorded: lib, what lib included, local */
	assert_int_equal(p.ir->nincluded, 3);
	assert_int_equal(strncmp(p.ir->included[0], "lib ", 4), 0);
	assert_int_equal(strncmp(p.ir->included[1], "core ", 5), 0);
	assert_int_equal(strncmp(p.ir->included[2], "local.toml ", 11), 0);
	assert_non_null(strstr(p.ir->included[0], " xxh3:"));
	/* the merged source compiles again to the same rules (what a pack holds) */
	struct beec_policy again = { .src = source_new("again", p.src->text, p.src->len) };
	assert_int_equal(beec_policy__parse(&again, &dc), 0);
	assert_int_equal(beec_policy__build(&again, NULL, &dc), 0);
	assert_int_equal(again.ir->nrules, p.ir->nrules);
	assert_int_equal(again.ir->nincludes, 0);
	beec_policy__fini(&again);
	beec_policy__fini(&p);
	diag_fini(&dc);

	/* fail closed: not found (with where it looked), a parent in an include, a cycle */
	static const struct {
		const char *text, *error;
	} bad[] = {
		{ "include = [\"nope\"]\n", "include 'nope' not found" },
		{ "include = [\"withparent.toml\"]\n", "names a parent: an included policy may not" },
		{ "include = [\"cycle.toml\"]\n", "includes nest more than 8 deep" },
		{ "include = \"lib\"\n", "'include' must be an array of strings" },
	};
	put_file("withparent.toml", "version = 1\nname = \"wp\"\nparent = \"top.toml\"\n");
	put_file("cycle.toml", "version = 1\nname = \"cycle\"\ninclude = [\"cycle.toml\"]\n");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char text[256];
		snprintf(text, sizeof(text), "version = 1\nname = \"bad\"\n%s", bad[i].text);
		put_file("bad.toml", text);
		struct beec_policy b = { 0 };
		diag_init(&dc);
		assert_int_not_equal(compile("bad.toml", &b, &dc, abs), 0);
		char *msgs = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&msgs, &len);
		diag_print(&dc, m);
		fclose(m);
		if (!strstr(msgs, bad[i].error))
			fprintf(stderr, "row %zu: want '%s' in:\n%s", i, bad[i].error, msgs);
		assert_non_null(strstr(msgs, bad[i].error));
		free(msgs);
		beec_policy__fini(&b);
		diag_fini(&dc);
	}
}

static int setup(void **state)
{
	(void)state;
	snprintf(tmp, sizeof(tmp), "/tmp/test_learn-XXXXXX");
	return mkdtemp(tmp) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shapes),
		cmocka_unit_test(test_include),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
