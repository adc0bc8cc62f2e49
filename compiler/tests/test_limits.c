/* SPDX-License-Identifier: GPL-2.0-only */
/* Every compiler limit of beec_limits.h (and the fixed ones of glob.h,
 * netset.h and diag.h), one row each: a generated pathological policy that
 * must stop at the limit with its exact error (message, line and column,
 * the note naming the limit), in well under two seconds, and a control
 * just under the limit that must get through the same stages cleanly.
 * The rows are the table of docs/limits.md, "Compiler limits". */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "attenuate.h"
#include "libbeec.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define HEAD "version = 1\nname = \"limits\"\n"
/* a pathological case must end (at its limit) within this */
#define MAX_SECONDS 2.0

/* ---- generated text ------------------------------------------------------ */

struct text {
	char *s;
	size_t n, cap;
};

static void put(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct text *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (t->n + (size_t)n + 1 > t->cap) {
		t->cap = (t->n + (size_t)n + 1) * 2;
		t->s = realloc(t->s, t->cap);
		assert_non_null(t->s);
	}
	va_start(ap, fmt);
	vsnprintf(t->s + t->n, (size_t)n + 1, fmt, ap);
	va_end(ap);
	t->n += (size_t)n;
}

static void put_rep(struct text *t, const char *s, size_t times)
{
	for (size_t i = 0; i < times; i++)
		put(t, "%s", s);
}

/* ---- running the pipeline ------------------------------------------------- */

enum stage { STAGE_PARSE, STAGE_BUILD, STAGE_LOWER };

struct run {
	struct beec_policy pol;
	struct diag_ctx dc;
	int rc;
	double seconds;
};

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Runs text through the stages up to last, within lim and defines. */
static void run(struct run *r, const char *text, size_t len, enum stage last,
		const struct beec_limits *lim, const char *const *defines, size_t ndefines)
{
	struct beec_opts o = { .sz = sizeof(o), .defines = defines, .ndefines = ndefines, .limits = lim };
	memset(r, 0, sizeof(*r));
	diag_init(&r->dc);
	r->pol.src = source_new("limits.toml", text, len);
	double t0 = now();
	r->rc = beec_policy__parse_opts(&r->pol, &o, &r->dc);
	if (r->rc == 0 && last >= STAGE_BUILD)
		r->rc = beec_policy__build(&r->pol, &o, &r->dc);
	if (r->rc == 0 && last >= STAGE_LOWER)
		r->rc = beec_policy__lower(&r->pol, &o, &r->dc);
	r->seconds = now() - t0;
}

static void run_fini(struct run *r)
{
	diag_fini(&r->dc);
	beec_policy__fini(&r->pol);
}

static void print_diags(const struct run *r)
{
	diag_print(&r->dc, stderr);
}

/* ---- the rows --------------------------------------------------------------- */

struct row {
	const char *name;
	enum beec_limit limit;       /* BEEC_LIMIT_COUNT: a fixed limit */
	unsigned value;              /* set for the row (0: the default) */
	enum stage stage;            /* the stage that must stop, and the control pass */
	/* the pathological text (over) or the control (!over) */
	void (*gen)(struct text *t, bool over);
	const char *msg;             /* the exact error */
	const char *at;              /* it points skip bytes past the first of these */
	size_t skip;
	const char *note;            /* the note naming the limit (NULL: any that names it) */
};

#define N_DEPTH 128

static void gen_depth_brackets(struct text *t, bool over)
{
	/* 'x' is one level; its brackets the rest */
	size_t n = over ? N_DEPTH + 1 : N_DEPTH - 1;
	put(t, HEAD "x = ");
	put_rep(t, "[", n);
	put_rep(t, "]", n);
	put(t, "\n");
}

static void gen_depth_dotted(struct text *t, bool over)
{
	size_t n = over ? N_DEPTH + 1 : N_DEPTH;
	put(t, HEAD);
	for (size_t i = 1; i <= n; i++)
		put(t, "%sk%zu", i > 1 ? "." : "", i);
	put(t, " = 1\n");
}

static void gen_depth_header(struct text *t, bool over)
{
	/* [[a]] puts its table two levels down: the header's parts add 127 */
	size_t n = over ? N_DEPTH - 1 : N_DEPTH - 2;
	put(t, HEAD "[[a]]\n[a");
	for (size_t i = 1; i <= n; i++)
		put(t, ".h%zu", i);
	put(t, "]\n");
}

static void gen_depth_inline(struct text *t, bool over)
{
	/* x (1) + 100 dotted parts + an inline table of 27 (28 over) parts */
	size_t inner = over ? 28 : 27;
	put(t, HEAD "x = { ");
	for (size_t i = 1; i <= 100; i++)
		put(t, "%so%zu", i > 1 ? "." : "", i);
	put(t, " = { ");
	for (size_t i = 1; i <= inner; i++)
		put(t, "%si%zu", i > 1 ? "." : "", i);
	put(t, " = 1 } }\n");
}

static void gen_key_bytes(struct text *t, bool over)
{
	put(t, HEAD "\"");
	put_rep(t, "k", over ? 1025 : 1024);
	put(t, "\" = 1\n");
}

static void gen_string_bytes(struct text *t, bool over)
{
	put(t, HEAD "[env]\nset = { A = \"");
	put_rep(t, "s", over ? 131073 : 131072);
	put(t, "\" }\n");
}

static void gen_expansion(struct text *t, bool over)
{
	/* 33 copies of a 4000-byte -D value pass 131072 bytes; 32 do not */
	put(t, HEAD "[env]\nset = { A = \"");
	put_rep(t, "${X}", over ? 33 : 32);
	put(t, "\" }\n");
}

static void gen_table_keys(struct text *t, bool over)
{
	put(t, HEAD "[env.set]\n");
	for (size_t i = 0; i < (over ? 4097u : 4096u); i++)
		put(t, "V%zu = \"x\"\n", i);
}

static void gen_keys(struct text *t, bool over)
{
	/* limit 50: version, name, env, 46 variables and set; an inline
	 * table's keys come before its own, so with 47 'set' is the 51st */
	put(t, HEAD "[env]\nset = {");
	for (size_t i = 0; i < (over ? 47u : 46u); i++)
		put(t, "%s V%zu = \"x\"", i ? "," : "", i);
	put(t, " }\n");
}

static void gen_array_items(struct text *t, bool over)
{
	put(t, HEAD "[fs]\nread = [\n");
	for (size_t i = 0; i < (over ? 1001u : 1000u); i++)
		put(t, "  \"/data/f%zu\",\n", i);
	put(t, "]\n");
}

static void gen_rules(struct text *t, bool over)
{
	put(t, HEAD "[fs]\nread = [\n");
	for (size_t i = 0; i < 600; i++)
		put(t, "  \"/data/f%zu\",\n", i);
	put(t, "]\n[exec]\nallow = [\n");
	for (size_t i = 0; i < (over ? 401u : 400u); i++)
		put(t, "  \"/usr/bin/t%zu\",\n", i);
	put(t, "]\n");
}

static void gen_states(struct text *t, bool over)
{
	/* the minimal automaton of this glob has a few hundred states */
	put(t, HEAD "[fs]\nread = [\"/x/*a%s\"]\n", over ? "???????" : "?");
}

static void gen_build_states(struct text *t, bool over)
{
	/* determinising '*a' then 13 '?' tracks every position of the 'a' */
	put(t, HEAD "[fs]\nread = [\"/etc/passwd\", \"/x/*a%s\"]\n", over ? "?????????????" : "??");
}

static void gen_build_total(struct text *t, bool over)
{
	/* each rule's automaton is small; together they pass the budget */
	put(t, HEAD "[fs]\nread = [\n");
	for (size_t i = 0; i < (over ? 100u : 10u); i++)
		put(t, "  \"/data/d%zu/*.txt\",\n", i);
	put(t, "]\n");
}

static void gen_glob_items(struct text *t, bool over)
{
	/* 1024 alternatives of 65 (over) or 64 items: '/', 10 letters, '/' and
	 * the classes */
	put(t, HEAD "[fs]\nread = [\"/");
	put_rep(t, "{a,b}", 10);
	put(t, "/");
	put_rep(t, "[a-z]", over ? 53 : 52);
	put(t, "\"]\n");
}

static void gen_glob_alts(struct text *t, bool over)
{
	put(t, HEAD "[fs]\nread = [\"/");
	put_rep(t, "{a,b}", over ? 11 : 10);
	put(t, "\"]\n");
}

static void gen_path_bytes(struct text *t, bool over)
{
	put(t, HEAD "[fs]\nread = [\"/");
	put_rep(t, "p", over ? 4096 : 4095);
	put(t, "\"]\n");
}

static void gen_net_ranges(struct text *t, bool over)
{
	/* every even port carved out of 1-65535: k holes leave k + 1 ranges */
	size_t holes = over ? 16 : 15;
	put(t, HEAD "[net]\nconnect = [\"0.0.0.0/0:1-65535\"]\ndeny = [");
	for (size_t i = 1; i <= holes; i++)
		put(t, "%s\"0.0.0.0/0:%zu/tcp\"", i > 1 ? ", " : "", 2 * i);
	put(t, "]\n");
}

static const struct row rows[] = {
	{ "depth (brackets)", BEEC_LIMIT_depth, 0, STAGE_PARSE, gen_depth_brackets,
	  "arrays and inline tables nested 129 deep, more than the limit of 128", "[]", 0,
	  "the limit 'depth' (levels of tables and arrays below the document's top) is 128, "
	  "the most beec allows" },
	{ "depth (dotted key)", BEEC_LIMIT_depth, 0, STAGE_PARSE, gen_depth_dotted,
	  "key nested 129 levels deep, more than the limit of 128", "k129", 0, NULL },
	{ "depth (table header)", BEEC_LIMIT_depth, 0, STAGE_PARSE, gen_depth_header,
	  "table nested 129 levels deep, more than the limit of 128", "[a.h1", 1, NULL },
	{ "depth (inline tables)", BEEC_LIMIT_depth, 0, STAGE_PARSE, gen_depth_inline,
	  "key nested 129 levels deep, more than the limit of 128", "x = {", 0, NULL },
	{ "key-bytes", BEEC_LIMIT_key_bytes, 0, STAGE_PARSE, gen_key_bytes,
	  "key of 1025 bytes, more than the limit of 1024", "\"kkk", 0,
	  "the limit 'key-bytes' (bytes of one key) is 1024; raise it with --limit key-bytes=N" },
	{ "string-bytes", BEEC_LIMIT_string_bytes, 0, STAGE_LOWER, gen_string_bytes,
	  "string of 131073 bytes, more than the limit of 131072", "\"sss", 0,
	  "the limit 'string-bytes' (bytes of one string, as written and after ${NAME} expansion) "
	  "is 131072; raise it with --limit string-bytes=N" },
	{ "string-bytes (${NAME})", BEEC_LIMIT_string_bytes, 0, STAGE_LOWER, gen_expansion,
	  "string of 131073 bytes once '${X}' is expanded, more than the limit of 131072", "${X}", 32 * 4,
	  NULL },
	{ "table-keys", BEEC_LIMIT_table_keys, 0, STAGE_LOWER, gen_table_keys,
	  "table with 4097 keys, more than the limit of 4096", "V4096 =", 0,
	  "the limit 'table-keys' (keys of one table) is 4096; raise it with --limit table-keys=N" },
	{ "keys", BEEC_LIMIT_keys, 50, STAGE_LOWER, gen_keys,
	  "document with 51 keys, more than the limit of 50", "set = {", 0, NULL },
	{ "array-items", BEEC_LIMIT_array_items, 1000, STAGE_LOWER, gen_array_items,
	  "array of 1001 items, more than the limit of 1000", "\"/data/f1000\"", 0,
	  "the limit 'array-items' (items of one array (one rule list)) is 1000; raise it with "
	  "--limit array-items=N" },
	{ "rules", BEEC_LIMIT_rules, 1000, STAGE_LOWER, gen_rules,
	  "policy of 1001 rules, more than the limit of 1000", "\"/usr/bin/t400\"", 0,
	  "the limit 'rules' (rules of one policy) is 1000; raise it with --limit rules=N" },
	{ "states", BEEC_LIMIT_states, 100, STAGE_LOWER, gen_states,
	  "the path automaton is too large: its minimal form has 260 states, more than the limit of 100",
	  "\"/x/", 0, "the limit 'states' (states of one minimal automaton (--max-states)) is 100; "
		      "raise it with --limit states=N" },
	{ "build-states", BEEC_LIMIT_build_states, 1000, STAGE_LOWER, gen_build_states,
	  "the path automaton is too large: building it reached 1001 states, more than the limit of 1000",
	  "\"/x/", 0, "the limit 'build-states' (states of any automaton built on the way to it) is "
		      "1000; raise it with --limit build-states=N" },
	{ "build-total", BEEC_LIMIT_build_total, 1000, STAGE_LOWER, gen_build_total,
	  "the path automaton is too large: building it took 1014 states, more than the limit of 1000",
	  "\"/data/d10/", 0, "the limit 'build-total' (states of all automata built for one domain "
			   "together) is 1000; raise it with --limit build-total=N" },
	{ "glob items (fixed)", BEEC_LIMIT_COUNT, 0, STAGE_BUILD, gen_glob_items,
	  "braces expand to 66560 pattern items, more than the limit of 65536", "\"/{", 1, NULL },
	{ "glob alternatives (fixed)", BEEC_LIMIT_COUNT, 0, STAGE_BUILD, gen_glob_alts,
	  "braces expand to more than 1024 alternatives", "{a,b}", 50, NULL },
	{ "path bytes (fixed)", BEEC_LIMIT_COUNT, 0, STAGE_LOWER, gen_path_bytes,
	  "path is 4097 bytes long, more than 4096", "\"/ppp", 1, NULL },
	{ "net port ranges (fixed)", BEEC_LIMIT_COUNT, 0, STAGE_LOWER, gen_net_ranges,
	  "net entry 'connect 0.0.0.0/0/tcp' needs 17 port ranges, more than the limit of 16; "
	  "17 rules make it, this one first", "\"0.0.0.0/0:1-65535", 0, NULL },
};

static char x_value[4100];   /* -D X=<4000 bytes> */

/* Runs one side of a row; *off gets where its error must point. */
static void run_row(const struct row *r, bool over, struct run *out, size_t *off)
{
	struct text t = { 0 };
	struct beec_limits lim = { .sz = sizeof(lim) };
	if (r->value) {
		char arg[64];
		char err[160];
		snprintf(arg, sizeof(arg), "%s=%u", beec_limit_name(r->limit), r->value);
		assert_int_equal(beec_limit_parse(&lim, arg, err, sizeof(err)), 0);
	}
	r->gen(&t, over);
	const char *at = over ? strstr(t.s, r->at) : t.s;
	if (!at) {
		fprintf(stderr, "row '%s': '%s' is not in its text\n", r->name, r->at);
		fail();
	}
	*off = (size_t)(at - t.s) + r->skip;
	const char *defs[] = { x_value };
	run(out, t.s, t.n, r->stage, &lim, defs, 1);
	free(t.s);
}

static const struct diag *first_error(const struct run *r)
{
	for (size_t i = 0; i < r->dc.n; i++)
		if (r->dc.items[i].severity == DIAG_ERROR)
			return &r->dc.items[i];
	return NULL;
}

static void test_rows(void **state)
{
	(void)state;
	memcpy(x_value, "X=", 2);
	memset(x_value + 2, 'v', 4000);
	x_value[4002] = '\0';
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		struct run over, ctl;
		size_t off;
		run_row(r, true, &over, &off);
		const struct diag *d = first_error(&over);
		if (!d || strcmp(d->msg, r->msg) != 0) {
			fprintf(stderr, "row '%s': expected error '%s', got:\n", r->name, r->msg);
			print_diags(&over);
			fail();
		}
		assert_int_not_equal(over.rc, 0);
		/* one error: a limit stops the stage instead of piling up */
		assert_int_equal(over.dc.errors, 1);
		if (!d->loc.src || d->loc.off != off) {
			fprintf(stderr, "row '%s': points at byte %u, expected %zu:\n", r->name,
				d->loc.src ? d->loc.off : 0, off);
			print_diags(&over);
			fail();
		}
		bool named = r->limit == BEEC_LIMIT_COUNT;
		for (unsigned j = 0; j < d->nnotes && !named; j++)
			named = r->note ? strcmp(d->notes[j].msg, r->note) == 0
					: strstr(d->notes[j].msg, beec_limit_name(r->limit)) != NULL;
		if (!named) {
			fprintf(stderr, "row '%s': no note naming the limit\n", r->name);
			print_diags(&over);
			fail();
		}
		fprintf(stderr, "  %-28s stopped in %.3f s\n", r->name, over.seconds);
		if (over.seconds > MAX_SECONDS) {
			fprintf(stderr, "row '%s': took %.2f s\n", r->name, over.seconds);
			fail();
		}
		run_fini(&over);

		run_row(r, false, &ctl, &off);
		if (ctl.rc != 0 || ctl.dc.errors) {
			fprintf(stderr, "row '%s': the control just under the limit fails:\n", r->name);
			print_diags(&ctl);
			fail();
		}
		run_fini(&ctl);
	}
}

/* --max-states (beec_opts.max_states) is the same limit as 'states', and
 * wins over it both ways; the automaton needs more than 100 states and
 * fewer than 1000. */
static void test_max_states_option(void **state)
{
	(void)state;
	const char *text = HEAD "[fs]\nread = [\"/x/*a???????\"]\n";
	static const struct {
		unsigned max_states, states; /* 0: not given */
		bool refused;
	} cases[] = {
		{ 100, 1000, true },    /* the option, lower, wins */
		{ 1000, 100, false },   /* the option, higher, wins */
		{ 0, 100, true },       /* 'states' alone */
		{ 1000, 1000, false },  /* the control */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct beec_limits lim = { .sz = sizeof(lim), .states = cases[i].states };
		struct beec_opts o = { .sz = sizeof(o), .max_states = cases[i].max_states, .limits = &lim };
		struct beec_policy p = { 0 };
		struct diag_ctx dc;
		diag_init(&dc);
		p.src = source_new("limits.toml", text, strlen(text));
		assert_int_equal(beec_policy__parse_opts(&p, &o, &dc), 0);
		assert_int_equal(beec_policy__build(&p, &o, &dc), 0);
		int rc = beec_policy__lower(&p, &o, &dc);
		if (cases[i].refused) {
			assert_int_not_equal(rc, 0);
			assert_non_null(strstr(dc.items[0].msg, "more than the limit of 100"));
		} else {
			assert_int_equal(rc, 0);
		}
		diag_fini(&dc);
		beec_policy__fini(&p);
	}
}

/* The proof of a subset searches the product of two automata: past
 * 'search-states' it gives up, and giving up is a refusal. */
static void test_search_states(void **state)
{
	(void)state;
	const char *child = HEAD "[fs]\nread = [\"/usr/**\", \"/home/x/**\"]\n";
	const char *parent = HEAD "[fs]\nread = [\"/usr/**\", \"/home/**\"]\n";
	for (int pass = 0; pass < 2; pass++) {
		struct run c, p;
		run(&c, child, strlen(child), STAGE_LOWER, NULL, NULL, 0);
		run(&p, parent, strlen(parent), STAGE_LOWER, NULL, NULL, 0);
		assert_int_equal(c.rc, 0);
		assert_int_equal(p.rc, 0);
		struct beec_limits lim = { .sz = sizeof(lim), .search_states = pass ? 0 : 5 };
		struct diag_ctx dc;
		diag_init(&dc);
		double t0 = now();
		int rc = attenuate_check_opts(c.pol.lw, p.pol.lw, &lim, &dc);
		assert_true(now() - t0 < MAX_SECONDS);
		if (pass == 0) {
			assert_int_equal(rc, -E2BIG);
			assert_int_equal(dc.errors, 1);
			assert_string_equal(dc.items[0].msg,
					    "cannot prove [fs] of the child a subset of its parent: the search "
					    "reached 6 states, more than the limit of 5");
			assert_string_equal(dc.items[0].notes[0].msg,
					    "the limit 'search-states' (product states searched to prove a child "
					    "a subset of its parent) is 5; raise it with --limit search-states=N");
			/* the parent is no subset of the child, and says so within the bound too */
		} else {
			assert_int_equal(rc, 0);
			assert_int_equal(dc.n, 0);
			assert_int_equal(attenuate_check_opts(p.pol.lw, c.pol.lw, &lim, &dc), 1);
		}
		diag_fini(&dc);
		run_fini(&c);
		run_fini(&p);
	}
}

/* Warnings are capped per kind: DIAG_MAX_WARNINGS_KIND duplicates are
 * queued, the rest counted on the last one queued and said in one line;
 * with all_warnings every one is queued. A dropped warning's note does not
 * land on the one before. */
static void test_warning_cap(void **state)
{
	(void)state;
	static const struct {
		size_t dups;
		bool all;
		size_t queued, dropped;
		const char *line;    /* in the printout, or NULL: no such line */
	} cases[] = {
		{ DIAG_MAX_WARNINGS_KIND, false, DIAG_MAX_WARNINGS_KIND, 0, NULL },
		{ DIAG_MAX_WARNINGS_KIND + 1, false, DIAG_MAX_WARNINGS_KIND, 1,
		  "beec: 1 more warning of this kind not shown (--warnings=all shows them)\n" },
		{ DIAG_MAX_WARNINGS_KIND + 50, false, DIAG_MAX_WARNINGS_KIND, 50,
		  "beec: 50 more warnings of this kind not shown (--warnings=all shows them)\n" },
		{ DIAG_MAX_WARNINGS + 50, true, DIAG_MAX_WARNINGS + 50, 0, NULL },
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct text t = { 0 };
		put(&t, HEAD "[fs]\nread = [\"/a\"");
		for (size_t i = 0; i < cases[c].dups; i++)
			put(&t, ", \"/a\"");
		put(&t, "]\n");
		struct beec_opts o = { .sz = sizeof(o) };
		struct beec_policy pol = { 0 };
		struct diag_ctx dc;
		diag_init(&dc);
		dc.all_warnings = cases[c].all;
		pol.src = source_new("limits.toml", t.s, t.n);
		free(t.s);
		assert_int_equal(beec_policy__parse_opts(&pol, &o, &dc), 0);
		assert_int_equal(beec_policy__build(&pol, &o, &dc), 0);   /* the schema: duplicates */
		assert_int_equal(dc.n, cases[c].queued);
		assert_int_equal(dc.warnings_dropped, cases[c].dropped);
		for (size_t i = 0; i < dc.n; i++)
			assert_int_equal(dc.items[i].nnotes, 1);
		char *out;
		size_t len;
		FILE *f = open_memstream(&out, &len);
		diag_print(&dc, f);
		fclose(f);
		const char *more = strstr(out, "more warning");
		if (cases[c].line) {
			const char *at = strstr(out, cases[c].line);
			assert_non_null(at);
			/* once, and last: after the last warning queued and its note */
			assert_string_equal(at, cases[c].line);
		} else {
			assert_null(more);
		}
		free(out);
		diag_fini(&dc);
		beec_policy__fini(&pol);
	}
}

/* A diagnostic on a megabyte line shows a window of it, not the megabyte. */
static void test_long_line(void **state)
{
	(void)state;
	struct text t = { 0 };
	put(&t, HEAD "[fs]\nread = [\"/");
	put_rep(&t, "a", 1000000);
	put(&t, "\"]\n");
	struct run r;
	run(&r, t.s, t.n, STAGE_LOWER, NULL, NULL, 0);
	free(t.s);
	assert_int_not_equal(r.rc, 0);
	char *out;
	size_t len;
	FILE *f = open_memstream(&out, &len);
	double t0 = now();
	diag_print(&r.dc, f);
	fclose(f);
	assert_true(now() - t0 < MAX_SECONDS);
	assert_true(len < 1024);
	assert_non_null(strstr(out, "limits.toml:4:9: error: string of 1000001 bytes, more than the limit of 131072\n"
				   "    4 | read = [\"/aaaa"));
	assert_non_null(strstr(out, "aaa...\n      |         ^~~~"));
	free(out);
	run_fini(&r);

	/* the control: a short line prints whole */
	const char *bad = HEAD "[fs]\nread = [\"relative\"]\n";
	run(&r, bad, strlen(bad), STAGE_LOWER, NULL, NULL, 0);
	f = open_memstream(&out, &len);
	diag_print(&r.dc, f);
	fclose(f);
	assert_non_null(strstr(out, "    4 | read = [\"relative\"]\n      |          ^~~~~~~~\n"));
	free(out);
	run_fini(&r);
}

/* Under AddressSanitizer every allocation costs ten times more: the same
 * policy, a quarter of it, still shows that nothing is quadratic. */
#if defined(__SANITIZE_ADDRESS__)
#define MANY_RULES 25000
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MANY_RULES 25000
#endif
#endif
#ifndef MANY_RULES
#define MANY_RULES 100000
#endif

/* The default limits let a generated policy of 100,000 rules compile. */
static void test_many_rules(void **state)
{
	(void)state;
	struct text t = { 0 };
	put(&t, HEAD "[fs]\nread = [\n");
	for (size_t i = 0; i < MANY_RULES; i++)
		put(&t, "  \"/data/d%zu/f%zu\",\n", i / 100, i);
	put(&t, "]\n");
	struct run r;
	run(&r, t.s, t.n, STAGE_LOWER, NULL, NULL, 0);
	free(t.s);
	if (r.rc != 0)
		print_diags(&r);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.pol.ir->nrules, MANY_RULES);
	char last[64];
	int n = snprintf(last, sizeof(last), "/data/d%d/f%d", (MANY_RULES - 1) / 100, MANY_RULES - 1);
	uint32_t perms;
	dfa_match(r.pol.lw->dfa[IR_DOMAIN_FS], last, (size_t)n, &perms, NULL);
	assert_int_equal(perms, IR_PERM_READ);
	last[n++] = 'x';
	dfa_match(r.pol.lw->dfa[IR_DOMAIN_FS], last, (size_t)n, &perms, NULL);
	assert_int_equal(perms, 0);
	fprintf(stderr, "%d rules compiled in %.2f s\n", MANY_RULES, r.seconds);
	run_fini(&r);
}

/* --limit NAME=N: names, ranges and "did you mean". */
static void test_limit_parse(void **state)
{
	(void)state;
	static const struct {
		const char *arg;
		const char *err;   /* NULL: accepted */
	} cases[] = {
		{ "rules=500000", NULL },
		{ "depth=128", NULL },
		{ "depth=129", "limit 'depth' is a number from 1 to 128, got '129'" },
		{ "states=0", "limit 'states' is a number from 1 to 65535, got '0'" },
		{ "rules=-1", "limit 'rules' is a number from 1 to 16777216, got '-1'" },
		{ "rules=", "limit 'rules' is a number from 1 to 16777216, got ''" },
		{ "rules", "limit 'rules' is a number from 1 to 16777216, got ''" },
		{ "rulez=5", "unknown limit 'rulez'; did you mean 'rules'?" },
		{ "frobnicate=5", "unknown limit 'frobnicate'; see 'beec --help'" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct beec_limits lim = { 0 };
		char err[160] = "";
		int rc = beec_limit_parse(&lim, cases[i].arg, err, sizeof(err));
		if (!cases[i].err) {
			assert_int_equal(rc, 0);
			assert_int_equal(lim.sz, sizeof(lim));
		} else {
			assert_int_equal(rc, -EINVAL);
			assert_string_equal(err, cases[i].err);
		}
	}
	struct beec_limits lim = { 0 };
	char err[160];
	assert_int_equal(beec_limit_parse(&lim, "rules=500000", err, sizeof(err)), 0);
	struct beec_limits r = beec_limits_resolve(&lim);
	assert_int_equal(r.rules, 500000);
	assert_int_equal(r.depth, beec_limit_default(BEEC_LIMIT_depth));
	r = beec_limits_resolve(NULL);
	assert_int_equal(r.rules, beec_limit_default(BEEC_LIMIT_rules));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_max_states_option),
		cmocka_unit_test(test_search_states),
		cmocka_unit_test(test_warning_cap),
		cmocka_unit_test(test_long_line),
		cmocka_unit_test(test_limit_parse),
		cmocka_unit_test(test_many_rules),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
