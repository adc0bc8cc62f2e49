/* SPDX-License-Identifier: GPL-2.0-only */
/* beec: the bee policy compiler, a thin command line over libbeec.
 *
 * Exit status: README.md's table (the enum below): 0 done (query: Allow),
 * 1 the policy is not valid or cannot be read (query: Deny), 2 the command
 * line is wrong, 3 check: the child is not a subset of its parent, 4 diff
 * --fail-on-widen: NEW adds capabilities, 5 an output cannot be written,
 * 6 out of memory.
 */
#include "attenuate.h"
#include "config.h"
#include "diff.h"
#include "learn.h"
#include "libbeec.h"
#include "mem.h"
#include "pack_build.h"
#include "pack_write.h"
#include "query.h"
#include "show.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
	EXIT_POLICY = 1,  /* the policy is not valid, or an input cannot be read */
	EXIT_USAGE = 2,
	EXIT_WIDER = 3,   /* check: the child is not a subset */
	EXIT_WIDENED = 4, /* diff --fail-on-widen: NEW adds capabilities */
	EXIT_OUTPUT = 5,  /* an output cannot be written; nothing partial is left */
	EXIT_NOMEM = 6,   /* out of memory, or the --max-memory budget reached */
};

static const char usage_text[] =
	"usage: beec [-D NAME=VALUE]... FILE -o PACK\n"
	"       beec --dump=STAGE [-D NAME=VALUE]... FILE\n"
	"       beec COMMAND [ARGS]\n"
	"       beec --help | --version\n";

static const char help_text[] =
	"Compiles a bee TOML policy.\n"
	"\n"
	"Options:\n"
	"  --dump=STAGE       print the policy after STAGE as canonical text:\n"
	"                       toml     the parsed TOML document\n"
	"                       ir       the policy IR, one rule a line\n"
	"                       dfa      the fs, exec and env automata\n"
	"                       dfa-dot  the same automata as Graphviz graphs\n"
	"                       net      the network sets as LPM entries\n"
	"  -o PACK            compile FILE into the .bpfpack PACK (a policy that names\n"
	"                     a parent must be proved its subset first)\n"
	"  -D NAME=VALUE      expand ${NAME} in the policy's strings to VALUE (after the\n"
	"                     configuration's [beec] define table; -D wins per NAME)\n"
	"  -I DIR             look for include = [\"NAME\"] in DIR (after the policy's\n"
	"                     directory, before beec.abstractions and the installed ones)\n"
	"  --config FILE      a configuration file above .bee/config.toml (searched up to\n"
	"                     the repository's root), ~/.config/bee/config.toml and\n"
	"                     /etc/bee/config.toml (docs/config.md)\n"
	"  --max-states=N     refuse an automaton of more than N states (--limit states=N)\n"
	"  --limit NAME=N     raise or lower one of the limits below (also --limit=NAME=N)\n"
	"  --max-memory=BYTES stop (exit 6) before beec's heap holds more than BYTES\n"
	"                     (K, M, G suffixes; default 4G)\n"
	"  --max-input=SIZE   refuse an input file of more than SIZE bytes (K, M, G:\n"
	"                     KiB, MiB, GiB; default 16M)\n"
	"  --warnings=WHICH   'capped' (the default: ten of each kind, then how many\n"
	"                     more) or 'all'\n"
	"  -h, --help         print this help\n"
	"  --version          print the version\n"
	"\n"
	"FILE may be '-' for standard input.\n"
	"\n"
	"Commands:\n";

static const char help_tail[] =
	"\n"
	"Limits (a policy past one is refused with its name; docs/limits.md):\n"
	"%s"
	"\n"
	"Exit status: 0 done (query: Allow), 1 the policy is not valid or cannot\n"
	"be read (query: Deny), 2 the command line is wrong, 3 check: the child\n"
	"is not a subset of its parent, 4 diff --fail-on-widen: NEW adds capabilities,\n"
	"5 an output cannot be written (nothing partial is left), 6 out of memory or\n"
	"the --max-memory budget reached.\n";

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("beec: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputs("\n", stderr);
	va_end(ap);
	fputs("try 'beec --help'\n", stderr);
	return EXIT_USAGE;
}

/* --warnings=all: every warning printed, not ten of each kind (diag.h). */
static bool warnings_all;

static void beec_diag_init(struct diag_ctx *dc)
{
	diag_init(dc);
	dc->all_warnings = warnings_all;
}

/* What source_read_max's errors mean to the person who gave the path. */
static int read_error(const char *path, int err, size_t max)
{
	if (err == -ENOMEM)
		return EXIT_NOMEM;   /* main says so, once */
	if (err == -EFBIG)
		fprintf(stderr, "beec: cannot read '%s': larger than the input limit of %zu bytes "
			"(--max-input raises it)\n", path, max ? max : SOURCE_MAX_DEFAULT);
	else if (err == -ENODATA)
		fprintf(stderr, "beec: cannot read '%s': a FIFO with no writer\n", path);
	else
		fprintf(stderr, "beec: cannot read '%s': %s\n", path, strerror(-err));
	return EXIT_POLICY;
}

/* What pack_write_file's errors mean for the output path. */
static const char *write_cause(int err)
{
	switch (err) {
	case -ENXIO:
		return "a FIFO with no reader";
	case -ENOTSUP:
		return "not a regular file, character device or FIFO";
	default:
		return strerror(-err);
	}
}

/* Flushes stdout; output that did not get out is a failure of its own,
 * whatever the command found. */
static int finish_output(int status)
{
	errno = 0;
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "beec: cannot write standard output: %s\n",
			errno ? strerror(errno) : "write error");
		return EXIT_OUTPUT;
	}
	return status;
}

/* ---- beec toml-json ---------------------------------------------------- */

static int cmd_toml_json(int argc, char **argv)
{
	if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		fputs("usage: beec toml-json [FILE]\n"
		      "Prints FILE ('-' or none: standard input) as the tagged JSON of the\n"
		      "toml-test suite, or its diagnostics and exit status 1.\n", stdout);
		return finish_output(0);
	}
	if (argc > 2)
		return usage_error("toml-json takes one FILE, got %d arguments", argc - 1);
	if (argc == 2 && argv[1][0] == '-' && argv[1][1] != '\0')
		return usage_error("unknown option '%s' for toml-json", argv[1]);
	const char *path = argc == 2 ? argv[1] : "-";
	struct beec_policy pol;
	struct diag_ctx dc;
	beec_diag_init(&dc);
	int err = beec_policy__read(&pol, path);
	if (err)
		return read_error(path, err, 0);
	int status = 0;
	if (beec_policy__parse(&pol, &dc) == 0) {
		toml_dump_json(pol.doc->root, stdout);
		fputc('\n', stdout);
	} else {
		status = EXIT_POLICY;
	}
	diag_print(&dc, stderr);
	diag_fini(&dc);
	beec_policy__fini(&pol);
	return finish_output(status);
}

/* ---- commands ---------------------------------------------------------- */

static int cmd_query(int argc, char **argv);
static int cmd_check(int argc, char **argv);
static int cmd_diff(int argc, char **argv);
static int cmd_show(int argc, char **argv);
static int cmd_config(int argc, char **argv);
static int cmd_learn(int argc, char **argv);

struct command {
	const char *name;
	const char *args;
	const char *summary;
	int (*run)(int argc, char **argv);
};

static const struct command commands[] = {
	{ "toml-json", "[FILE]", "print FILE as the tagged JSON of the toml-test suite", cmd_toml_json },
	{ "query", "[--backend B] POLICY KIND ACTION RESOURCE", "decide one access as the kernel will: fs read|write PATH,\n"
	  "                     exec execute PATH, net connect|bind ADDR:PORT[/udp], env read NAME;\n"
	  "                     exit 0 for Allow, 1 for Deny; --backend landlock: as that backend\n"
	  "                     will on this host, narrowings included; RESOURCE '-': one a line\n"
	  "                     from stdin", cmd_query },
	{ "check", "[--parent P] CHILD | --backend landlock POLICY", "prove CHILD a subset of P (default: its parent key);\n"
	  "                     exit 3 with a counterexample when it is not; --backend landlock:\n"
	  "                     the landlock backend's plan on this host and its narrowings", cmd_check },
	{ "show", "PACK|POLICY", "the canonical review text of a pack (a policy is compiled first)", cmd_show },
	{ "diff", "[--json] [--fail-on-widen] OLD NEW", "capabilities NEW adds and removes, with examples;\n"
	  "                     --fail-on-widen: exit 4 when it adds any", cmd_diff },
	{ "config", "[--json] [-D NAME=VALUE]...", "the resolved configuration, each key with where it came from",
	  cmd_config },
	{ "learn", "[--base P] [-D N=V]... LOG... -o NEW", "a policy granting what LOGs (of bee-load run --learn)\n"
	  "                     show denied, generalised and commented; secrets never granted", cmd_learn },
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static int help(void)
{
	/* one write at the end, so that its error (ENOSPC on /dev/full) is the
	 * one finish_output reports: the help is longer than stdio's buffer */
	static char buf[32768];
	setvbuf(stdout, buf, _IOFBF, sizeof(buf));
	fputs(usage_text, stdout);
	fputc('\n', stdout);
	fputs(help_text, stdout);
	for (size_t i = 0; i < NCOMMANDS; i++) {
		char head[64];
		snprintf(head, sizeof(head), "%s %s", commands[i].name, commands[i].args);
		printf("  %-18s %s\n", head, commands[i].summary);
	}
	char lines[2048];
	size_t k = 0;
	for (unsigned l = 0; l < BEEC_LIMIT_COUNT && k < sizeof(lines); l++)
		k += (size_t)snprintf(lines + k, sizeof(lines) - k, "  %-14s %9u  %s\n", beec_limit_name(l),
				      beec_limit_default(l), beec_limit_what(l));
	printf(help_tail, lines);
	return finish_output(0);
}

/* ---- beec --dump=STAGE FILE ---------------------------------------------- */

#define DUMP_STAGES(X)          \
	X(TOML, "toml")         \
	X(IR, "ir")             \
	X(DFA, "dfa")           \
	X(DFA_DOT, "dfa-dot")   \
	X(NET, "net")

enum dump_stage {
	DUMP_NONE,
#define X(name, str) DUMP_##name,
	DUMP_STAGES(X)
#undef X
};

static const char *const dump_stage_names[] = {
#define X(name, str) str,
	DUMP_STAGES(X)
#undef X
	NULL,
};

static int parse_dump(const char *arg, enum dump_stage *out)
{
	for (size_t i = 0; dump_stage_names[i]; i++) {
		if (strcmp(arg, dump_stage_names[i]) == 0) {
			*out = (enum dump_stage)(i + 1);
			return 0;
		}
	}
	const char *near = diag_suggest(arg, dump_stage_names);
	if (near)
		return usage_error("unknown dump stage '%s'; did you mean '%s'?", arg, near);
	return usage_error("unknown dump stage '%s'; expected toml, ir, dfa, dfa-dot or net", arg);
}

static bool valid_define(const char *d)
{
	const char *eq = strchr(d, '=');
	if (!eq || eq == d)
		return false;
	for (const char *c = d; c < eq; c++) {
		bool alpha = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || *c == '_';
		if (!alpha && !(c > d && *c >= '0' && *c <= '9'))
			return false;
	}
	return true;
}

static const enum ir_domain dfa_domains[] = { IR_DOMAIN_FS, IR_DOMAIN_EXEC, IR_DOMAIN_ENV };

static void dump_automata(const struct lowered *lw, bool dot)
{
	for (size_t i = 0; i < sizeof(dfa_domains) / sizeof(dfa_domains[0]); i++) {
		const struct dfa *d = lw->dfa[dfa_domains[i]];
		if (dot) {
			dfa_dump_dot(d, stdout);
		} else {
			printf("%s# domain %s\n", i ? "\n" : "", ir_domain_name(dfa_domains[i]));
			dfa_dump(d, stdout);
		}
	}
}

/* Reads, parses, builds and (for the stages after the IR) lowers. */
static int load_to(struct beec_policy *pol, const char *path, enum dump_stage stage,
		   const struct beec_opts *opts, struct diag_ctx *dc)
{
	int err = beec_policy__read_any(pol, path, opts, dc);
	if (err == -EINVAL && pol->src)
		return EXIT_POLICY;
	if (err)
		return read_error(path, err, opts->max_input);
	if (beec_policy__parse_opts(pol, opts, dc) < 0)
		return EXIT_POLICY;
	if (stage == DUMP_TOML)
		return 0;
	if (beec_policy__build(pol, opts, dc) < 0)
		return EXIT_POLICY;
	if (stage == DUMP_IR)
		return 0;
	if (beec_policy__lower(pol, opts, dc) < 0)
		return EXIT_POLICY;
	return 0;
}

static int run_dump(enum dump_stage stage, const char *path, const struct beec_opts *opts)
{
	struct beec_policy pol;
	struct diag_ctx dc;
	beec_diag_init(&dc);
	int status = load_to(&pol, path, stage, opts, &dc);
	if (status == 0) {
		switch (stage) {
		case DUMP_TOML:
			toml_dump_canonical(pol.doc, stdout);
			break;
		case DUMP_IR:
			ir_dump(pol.ir, stdout);
			break;
		case DUMP_DFA:
		case DUMP_DFA_DOT:
			dump_automata(pol.lw, stage == DUMP_DFA_DOT);
			break;
		case DUMP_NET:
			netset_dump(pol.lw->net, stdout);
			break;
		case DUMP_NONE:
			break;
		}
	}
	diag_print(&dc, stderr);
	diag_fini(&dc);
	beec_policy__fini(&pol);
	return finish_output(status);
}

/* Options every policy-reading command takes: -D, --max-states, --max-input. */
struct policy_args {
	const char **defines;    /* the configuration's, then -D's */
	size_t ndefines;
	const char **include_dirs;   /* -I's, then the configuration's beec.abstractions */
	size_t ninclude_dirs;
	char **config_defines;   /* the configuration's strings, owned here */
	size_t nconfig_defines;
	unsigned max_states;
	size_t max_input;
	struct beec_limits limits;  /* --limit NAME=N; 0: the default */
	const char *parent;      /* check --parent */
	const char *config;      /* --config */
	const char *output;      /* -o */
	enum dump_stage stage;   /* --dump */
	bool json;               /* diff --json */
	bool fail_on_widen;      /* diff --fail-on-widen */
	const char *backend;     /* query, check --backend: NULL, "landlock", "bpf-lsm" */
};

enum {
	OPT_MAX_STATES = 256, OPT_MAX_MEMORY, OPT_MAX_INPUT, OPT_LIMIT, OPT_PARENT, OPT_DUMP, OPT_VERSION,
	OPT_JSON, OPT_FAIL_ON_WIDEN, OPT_CONFIG, OPT_WARNINGS, OPT_BACKEND,
};

static int parse_max_states(const char *arg, unsigned *out)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(arg, &end, 10);
	if (errno || *end || end == arg || v < 2 || v > DFA_MAX_STATES)
		return usage_error("--max-states expects a number from 2 to %u, got '%s'",
				   DFA_MAX_STATES, arg);
	*out = (unsigned)v;
	return 0;
}

/* The --max-memory budget: the heap beec may hold (mem.h). A generated
 * policy of 100,000 fs rules peaks at 0.55 GB; a sixth of this machine's
 * 24 GiB leaves room for more and for the machine. */
#define BEEC_MAX_MEMORY_DEFAULT (4ull << 30)
static uint64_t max_memory = BEEC_MAX_MEMORY_DEFAULT;

/* --OPTION=SIZE: bytes, or K, M, G for KiB, MiB, GiB, from 1 to max. */
static int parse_size(const char *option, const char *arg, uint64_t max, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(arg, &end, 10);
	unsigned shift = 0;
	if (end != arg && (*end == 'K' || *end == 'k'))
		shift = 10, end++;
	else if (end != arg && (*end == 'M' || *end == 'm'))
		shift = 20, end++;
	else if (end != arg && (*end == 'G' || *end == 'g'))
		shift = 30, end++;
	if (errno || *end || end == arg || arg[0] == '-' || v == 0 || v > (max >> shift))
		return usage_error("--%s expects a size from 1 to %llu bytes (or with K, M, G), got '%s'",
				   option, (unsigned long long)max, arg);
	*out = (uint64_t)v << shift;
	return 0;
}

/* The configuration files (config.h) under the flags: their [beec] define
 * table goes before the -D flags, so a flag wins per NAME (the schema
 * takes the last). A bad file is refused like a bad policy (exit 1). The
 * configuration lives as long as the process (beec runs one command). */
static struct config beec_config;

static int config_read(const struct policy_args *pa)
{
	struct config_opts o = { .sz = sizeof(o), .file = pa->config };
	struct diag_ctx dc;
	char err[4400];
	beec_diag_init(&dc);
	int rc = config_load(&beec_config, &o, &dc, err, sizeof(err));
	diag_print(&dc, stderr);
	diag_fini(&dc);
	if (rc == -ENOMEM)
		mem_raise("config_load");
	if (rc == -EINVAL && !*err)
		fprintf(stderr, "beec: config: refused: the configuration above is not valid\n");
	else if (rc)
		fprintf(stderr, "beec: config: %s\n", err);
	return rc ? EXIT_POLICY : -1;
}

static void policy_args_fini(struct policy_args *pa)
{
	free(pa->defines);
	free(pa->include_dirs);
	config_defines_free(pa->config_defines, pa->nconfig_defines);
}

static int config_apply(struct policy_args *pa)
{
	int st = config_read(pa);
	if (st >= 0)
		return st;
	size_t n;
	char **cd = config_defines(&beec_config, &n);
	if (!cd)
		mem_raise("config_defines");
	pa->config_defines = cd;   /* policy_args_fini frees them */
	pa->nconfig_defines = n;
	const char **all = xcalloc(n + pa->ndefines + 1, sizeof(char *));
	memcpy(all, cd, n * sizeof(char *));
	memcpy(all + n, pa->defines, pa->ndefines * sizeof(char *));
	for (size_t i = 0; i < pa->ndefines; i++)
		if (config_define_flag(&beec_config, pa->defines[i]) < 0)
			mem_raise("config_define_flag");
	free(pa->defines);
	pa->defines = all;
	pa->ndefines += n;
	/* include = ["NAME"]: -I's directories, then the configuration's */
	const struct config_value *ab = &beec_config.v[CONFIG_ABSTRACTIONS];
	for (size_t i = 0; i < ab->n; i++) {
		pa->include_dirs = xrealloc(pa->include_dirs, (pa->ninclude_dirs + 1) * sizeof(char *));
		pa->include_dirs[pa->ninclude_dirs++] = ab->list[i];
	}
	return -1;
}

/* Parses argv[1..] with getopt; returns -1 when the caller should go on,
 * or an exit status. allow says which long options the command takes. */
static int policy_args_parse(int argc, char **argv, struct policy_args *pa, bool dump, bool parent)
{
	bool diff = strcmp(argv[0], "diff") == 0;
	static const struct option longopts[] = {
		{ "dump", required_argument, NULL, OPT_DUMP },
		{ "max-states", required_argument, NULL, OPT_MAX_STATES },
		{ "max-memory", required_argument, NULL, OPT_MAX_MEMORY },
		{ "max-input", required_argument, NULL, OPT_MAX_INPUT },
		{ "limit", required_argument, NULL, OPT_LIMIT },
		{ "parent", required_argument, NULL, OPT_PARENT },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "fail-on-widen", no_argument, NULL, OPT_FAIL_ON_WIDEN },
		{ "config", required_argument, NULL, OPT_CONFIG },
		{ "warnings", required_argument, NULL, OPT_WARNINGS },
		{ "backend", required_argument, NULL, OPT_BACKEND },
		{ NULL, 0, NULL, 0 },
	};
	bool config = strcmp(argv[0], "config") == 0;
	int c;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, dump ? ":D:I:ho:" : "+:D:I:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'I':
			pa->include_dirs = xrealloc(pa->include_dirs, (pa->ninclude_dirs + 1) * sizeof(char *));
			pa->include_dirs[pa->ninclude_dirs++] = optarg;
			break;
		case 'o':
			pa->output = optarg;
			break;
		case OPT_DUMP:
			if (!dump)
				return usage_error("--dump is not an option of '%s'", argv[0]);
			if (parse_dump(optarg, &pa->stage) != 0)
				return EXIT_USAGE;
			break;
		case OPT_PARENT:
			if (!parent)
				return usage_error("--parent is an option of 'check' only");
			pa->parent = optarg;
			break;
		case OPT_CONFIG:
			pa->config = optarg;
			break;
		case OPT_BACKEND:
			if (strcmp(argv[0], "query") && strcmp(argv[0], "check"))
				return usage_error("--backend is an option of 'query' and 'check' only");
			if (strcmp(optarg, "landlock") && strcmp(optarg, "bpf-lsm"))
				return usage_error("--backend expects landlock or bpf-lsm, got '%s'", optarg);
			pa->backend = optarg;
			break;
		case OPT_WARNINGS:
			if (strcmp(optarg, "all") != 0 && strcmp(optarg, "capped") != 0)
				return usage_error("--warnings expects 'all' or 'capped', got '%s'", optarg);
			warnings_all = strcmp(optarg, "all") == 0;
			break;
		case OPT_JSON:
			if (config) {
				pa->json = true;
				break;
			}
			/* fall through */
		case OPT_FAIL_ON_WIDEN:
			if (!diff)
				return usage_error("'%s' is an option of 'diff' only", argv[optind - 1]);
			if (c == OPT_JSON)
				pa->json = true;
			else
				pa->fail_on_widen = true;
			break;
		case OPT_MAX_STATES:
			if (parse_max_states(optarg, &pa->max_states) != 0)
				return EXIT_USAGE;
			break;
		case OPT_MAX_MEMORY:
			if (parse_size("max-memory", optarg, UINT64_MAX, &max_memory) != 0)
				return EXIT_USAGE;
			mem_budget_set(max_memory);
			break;
		case OPT_MAX_INPUT: {
			uint64_t v;
			if (parse_size("max-input", optarg, SOURCE_MAX_LIMIT, &v) != 0)
				return EXIT_USAGE;
			pa->max_input = (size_t)v;
			break;
		}
		case OPT_LIMIT: {
			char err[160];
			if (beec_limit_parse(&pa->limits, optarg, err, sizeof(err)) < 0)
				return usage_error("--limit: %s", err);
			break;
		}
		case 'D':
			if (!valid_define(optarg))
				return usage_error("-D expects NAME=VALUE, got '%s'", optarg);
			pa->defines[pa->ndefines++] = optarg;
			break;
		case 'h':
			return help();
		case OPT_VERSION:
			printf("beec %s (policy schema %d)\n", BEEC_VERSION, IR_SCHEMA_VERSION);
			return finish_output(0);
		case ':':
			return usage_error("option '%s' needs a value", argv[optind - 1]);
		default:
			return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	return config_apply(pa);
}

static struct beec_opts policy_args_opts(const struct policy_args *pa)
{
	return (struct beec_opts){
		.sz = sizeof(struct beec_opts),
		.defines = pa->defines,
		.ndefines = pa->ndefines,
		.max_states = pa->max_states,
		.max_input = pa->max_input,
		.limits = &pa->limits,
		.include_dirs = pa->include_dirs,
		.ninclude_dirs = pa->ninclude_dirs,
	};
}

/* ---- beec query POLICY KIND ACTION RESOURCE ------------------------------ */

/* The landlock backend's answer to q from the collected plan rs: what
 * Landlock will do. Only fs and exec differ from the policy's meaning
 * (net is the cgroup programs', env is decided at launch). */
static bool landlock_answer(const struct beec_ll_rules *rs, const struct query *q, bool meaning)
{
	if (q->domain == IR_DOMAIN_EXEC)
		return beec_ll__allows(rs, q->resource, BEEC_LL_EXEC);
	if (q->domain == IR_DOMAIN_FS)
		return beec_ll__allows(rs, q->resource, q->want == IR_PERM_WRITE ? BEEC_LL_WRITE : BEEC_LL_READ);
	return meaning;
}

/* One query; RESOURCE "-" reads one resource a line from stdin and prints
 * one verdict a line (exit 0 when every one is Allow). */
static int query_one(struct beec_policy *pol, const struct beec_ll_rules *rs, const char *kind,
		     const char *action, const char *resource, bool batch, struct diag_ctx *notes)
{
	struct query q;
	char err[256];
	if (query_parse(kind, action, resource, &q, err, sizeof(err)) < 0)
		return usage_error("%s", err);
	struct beec_answer r;
	if (query_run(pol->lw, &q, &r) < 0) {
		fprintf(stderr, "beec: query failed\n");
		return EXIT_POLICY;
	}
	bool allow = rs ? landlock_answer(rs, &q, r.allow) : r.allow;
	if (batch) {
		printf("%s %s\n", allow ? "Allow" : "Deny", resource);
	} else if (rs && allow != r.allow) {
		printf("%s %s %s %s (landlock)\n", allow ? "Allow" : "Deny", kind, action, resource);
		printf("  the policy %s it: the landlock backend narrows it (beec check --backend landlock)\n",
		       r.allow ? "allows" : "denies");
	} else {
		query_explain(pol->lw, &q, &r, stdout, notes);
		diag_print(notes, stdout);
	}
	return allow ? 0 : EXIT_POLICY;
}

static int cmd_query(int argc, char **argv)
{
	struct policy_args pa = { .defines = xcalloc((size_t)argc, sizeof(char *)) };
	int status = policy_args_parse(argc, argv, &pa, false, false);
	if (status >= 0)
		goto out;
	if (argc - optind != 4) {
		status = usage_error("query takes POLICY KIND ACTION RESOURCE, got %d arguments",
				     argc - optind);
		goto out;
	}
	const char *kind = argv[optind + 1], *action = argv[optind + 2], *resource = argv[optind + 3];
	bool batch = strcmp(resource, "-") == 0;
	struct query q0;
	char err[256];
	if (query_parse(kind, action, batch ? "/" : resource, &q0, err, sizeof(err)) < 0) {
		status = usage_error("%s", err);
		goto out;
	}
	struct beec_opts opts = policy_args_opts(&pa);
	struct beec_policy pol;
	struct diag_ctx dc, notes;
	beec_diag_init(&dc);
	beec_diag_init(&notes);
	struct beec_ll_rules rs = { 0 };
	bool landlock = pa.backend && !strcmp(pa.backend, "landlock");
	status = load_to(&pol, argv[optind], DUMP_NET, &opts, &dc);
	if (status == 0 && landlock) {
		struct beec_ll_opts wo = { .sz = sizeof(wo) };
		struct beec_ll_plan plan;
		if (beec_policy__ll_walk(&pol, &wo, beec_ll__collect, &rs, &plan) < 0) {
			fprintf(stderr, "beec: landlock: %s\n", *plan.err ? plan.err : "the walk failed");
			status = EXIT_POLICY;
		}
		beec_ll_plan__fini(&plan);
		beec_ll_rules__sort(&rs);
	}
	if (status == 0 && !batch) {
		status = query_one(&pol, landlock ? &rs : NULL, kind, action, resource, false, &notes);
	} else if (status == 0) {
		char *line = NULL;
		size_t cap = 0;
		ssize_t n;
		while ((n = getline(&line, &cap, stdin)) > 0) {
			if (line[n - 1] == '\n')
				line[--n] = '\0';
			if (!n)
				continue;
			int st = query_one(&pol, landlock ? &rs : NULL, kind, action, line, true, &notes);
			if (st != 0 && status == 0)
				status = st;
		}
		free(line);
	}
	beec_ll_rules__fini(&rs);
	diag_print(&dc, stderr);
	diag_fini(&dc);
	diag_fini(&notes);
	beec_policy__fini(&pol);
	status = finish_output(status);
out:
	policy_args_fini(&pa);
	return status;
}

/* beec check --backend landlock POLICY: what the walk of this host's tree
 * gives Landlock, and each narrowing at its rule's line. */
static int check_landlock(const char *path, const struct beec_opts *opts)
{
	struct beec_policy pol;
	struct diag_ctx dc;
	beec_diag_init(&dc);
	int status = load_to(&pol, path, DUMP_NET, opts, &dc);
	if (status == 0) {
		struct beec_ll_opts wo = { .sz = sizeof(wo) };
		struct beec_ll_plan p;
		if (beec_policy__ll_walk(&pol, &wo, NULL, NULL, &p) < 0) {
			fprintf(stderr, "%s: error: landlock: %s\n", path, *p.err ? p.err : "the walk failed");
			status = EXIT_POLICY;
		} else {
			printf("%s: landlock: %llu rules on directories, %llu on files, %llu late; walk: %llu "
			       "entries, %llu symlinks (not followed), %.1f ms; %zu narrowing%s\n",
			       path, (unsigned long long)p.dir_rules, (unsigned long long)p.file_rules,
			       (unsigned long long)p.late_rules, (unsigned long long)p.entries,
			       (unsigned long long)p.symlinks, (double)p.ns / 1e6, p.nnarrow, p.nnarrow == 1 ? "" : "s");
			for (size_t i = 0; i < p.nnarrow; i++) {
				const struct beec_ll_narrowing *n = &p.narrow[i];
				printf("%s:%u: narrowing: rule %u '%s %s': %s (%llu place%s, first '%s'): %s\n", path,
				       n->line, n->rule, n->what, n->glob, beec_ll__narrow_name(n->kind),
				       (unsigned long long)n->count, n->count == 1 ? "" : "s", n->path,
				       beec_ll__narrow_text(n->kind));
			}
		}
		beec_ll_plan__fini(&p);
	}
	diag_print(&dc, stderr);
	diag_fini(&dc);
	beec_policy__fini(&pol);
	return finish_output(status);
}

/* Proves p a subset of the parent it names, if it names one. */
static int check_named_parent(struct beec_policy *p, const struct beec_opts *opts, struct diag_ctx *dc)
{
	char *path = beec_policy__parent_path(p);
	if (!path)
		return 0;
	struct beec_policy parent = { 0 };
	int status = load_to(&parent, path, DUMP_NET, opts, dc);
	int proof = status == 0 ? attenuate_check_opts(p->lw, parent.lw, opts->limits, dc) : 0;
	if (proof < 0)
		status = EXIT_POLICY;
	if (proof > 0) {
		diag_note(dc, p->ir->parent_loc, "'%s' names '%s' as its parent and must be its subset",
			  p->src->name, path);
		status = EXIT_WIDER;
	}
	beec_policy__fini(&parent);
	free(path);
	return status;
}

/* Compiles a pack in memory: the policy, its parent proof, the pack. */
static int compile_pack(struct beec_policy *pol, const char *path, const struct beec_opts *opts,
			struct diag_ctx *dc, uint8_t **buf, size_t *len)
{
	int status = load_to(pol, path, DUMP_NET, opts, dc);
	if (status == 0)
		status = check_named_parent(pol, opts, dc);
	if (status == 0 && beec_policy__pack(pol, opts, dc, buf, len) < 0)
		status = EXIT_POLICY;
	return status;
}

static int run_compile(const char *path, const char *output, const struct beec_opts *opts)
{
	struct beec_policy pol = { 0 };
	struct diag_ctx dc;
	beec_diag_init(&dc);
	uint8_t *buf = NULL;
	size_t len = 0;
	int status = compile_pack(&pol, path, opts, &dc, &buf, &len);
	if (status == 0) {
		int err = pack_write_file(output, buf, len);
		if (err < 0) {
			diag_error(&dc, LOC_NONE, "cannot write '%s': %s", output, write_cause(err));
			status = EXIT_OUTPUT;
		}
	}
	free(buf);
	diag_print(&dc, stderr);
	diag_fini(&dc);
	beec_policy__fini(&pol);
	return finish_output(status);
}

/* ---- beec show PACK|POLICY ------------------------------------------------ */

static int cmd_show(int argc, char **argv)
{
	struct policy_args pa = { .defines = xcalloc((size_t)argc, sizeof(char *)) };
	int status = policy_args_parse(argc, argv, &pa, false, false);
	if (status >= 0)
		goto out;
	if (argc - optind != 1) {
		status = usage_error("show takes one PACK or POLICY, got %d", argc - optind);
		goto out;
	}
	const char *path = argv[optind];
	struct source *file;
	int err = source_read_max(path, pa.max_input, &file);
	if (err < 0) {
		status = read_error(path, err, pa.max_input);
		goto out;
	}
	struct beec_opts opts = policy_args_opts(&pa);
	struct beec_policy pol = { 0 };
	struct diag_ctx dc;
	beec_diag_init(&dc);
	uint8_t *buf = NULL;
	size_t len = 0;
	bool is_pack = file->len >= 8 && memcmp(file->text, "BEEPACK", 8) == 0;
	status = 0;
	if (is_pack) {
		buf = xmalloc(file->len);
		memcpy(buf, file->text, file->len);
		len = file->len;
	} else {
		status = compile_pack(&pol, path, &opts, &dc, &buf, &len);
	}
	if (status == 0) {
		char msg[512];
		if (show_pack(buf, len, stdout, msg, sizeof(msg)) < 0) {
			fprintf(stderr, "beec: '%s': %s\n", path, msg);
			status = EXIT_POLICY;
		}
	}
	free(buf);
	source_free(file);
	diag_print(&dc, stderr);
	diag_fini(&dc);
	beec_policy__fini(&pol);
	status = finish_output(status);
out:
	policy_args_fini(&pa);
	return status;
}

/* ---- beec diff [--json] [--fail-on-widen] OLD NEW ------------------------ */

static int cmd_diff(int argc, char **argv)
{
	struct policy_args pa = { .defines = xcalloc((size_t)argc, sizeof(char *)) };
	int status = policy_args_parse(argc, argv, &pa, false, false);
	if (status >= 0)
		goto out;
	if (argc - optind != 2) {
		status = usage_error("diff takes OLD and NEW, got %d arguments", argc - optind);
		goto out;
	}
	struct beec_opts opts = policy_args_opts(&pa);
	struct beec_policy old = { 0 }, new_ = { 0 };
	struct diag_ctx dc;
	beec_diag_init(&dc);
	status = load_to(&old, argv[optind], DUMP_NET, &opts, &dc);
	if (status == 0)
		status = load_to(&new_, argv[optind + 1], DUMP_NET, &opts, &dc);
	if (status == 0) {
		struct lower_opts lo = { .sz = sizeof(lo), .max_states = pa.max_states, .limits = &pa.limits };
		struct diff d;
		if (diff_policies(old.lw, new_.lw, &lo, &dc, &d) < 0) {
			status = EXIT_POLICY;
		} else {
			if (pa.json)
				diff_print_json(&d, stdout);
			else
				diff_print_text(&d, stdout);
			if (pa.fail_on_widen && d.nadded)
				status = EXIT_WIDENED;
		}
		diff_fini(&d);
	}
	diag_print(&dc, stderr);
	diag_fini(&dc);
	beec_policy__fini(&old);
	beec_policy__fini(&new_);
	status = finish_output(status);
out:
	policy_args_fini(&pa);
	return status;
}

/* ---- beec check [--parent PARENT] CHILD ---------------------------------- */

static int cmd_check(int argc, char **argv)
{
	struct policy_args pa = { .defines = xcalloc((size_t)argc, sizeof(char *)) };
	int status = policy_args_parse(argc, argv, &pa, false, true);
	if (status >= 0)
		goto out;
	if (argc - optind != 1) {
		status = usage_error("check takes one CHILD policy, got %d", argc - optind);
		goto out;
	}
	struct beec_opts opts = policy_args_opts(&pa);
	if (pa.backend && !strcmp(pa.backend, "landlock")) {
		status = check_landlock(argv[optind], &opts);
		goto out;
	}
	struct beec_policy child, parent = { 0 };
	struct diag_ctx dc;
	beec_diag_init(&dc);
	char *parent_path = NULL;
	status = load_to(&child, argv[optind], DUMP_NET, &opts, &dc);
	if (status == 0) {
		parent_path = pa.parent ? xstrdup(pa.parent) : beec_policy__parent_path(&child);
		if (!parent_path) {
			diag_error(&dc, LOC_NONE, "'%s' names no parent: give --parent PARENT", argv[optind]);
			status = EXIT_POLICY;
		}
	}
	if (status == 0)
		status = load_to(&parent, parent_path, DUMP_NET, &opts, &dc);
	if (status == 0) {
		int proof = attenuate_check_opts(child.lw, parent.lw, &pa.limits, &dc);
		if (proof == 0) {
			printf("%s is a subset of %s\n", argv[optind], parent_path);
		} else if (proof < 0) {
			status = EXIT_POLICY;   /* no proof either way: a limit, with its error */
		} else {
			printf("%s is not a subset of %s\n", argv[optind], parent_path);
			status = EXIT_WIDER;
		}
	}
	diag_print(&dc, stderr);
	diag_fini(&dc);
	beec_policy__fini(&child);
	beec_policy__fini(&parent);
	free(parent_path);
	status = finish_output(status);
out:
	policy_args_fini(&pa);
	return status;
}

static int cmd_compile(int argc, char **argv)
{
	struct policy_args pa = { .defines = xcalloc((size_t)argc, sizeof(char *)) };
	int status = policy_args_parse(argc, argv, &pa, true, false);
	if (status >= 0)
		goto out;
	if (optind == argc) {
		status = usage_error("missing policy FILE");
		goto out;
	}
	if (argc - optind > 1) {
		status = usage_error("one policy FILE at a time, got %d", argc - optind);
		goto out;
	}
	if (pa.stage == DUMP_NONE && !pa.output) {
		status = usage_error("nothing to do; write -o PACK or --dump=STAGE");
		goto out;
	}
	if (pa.stage != DUMP_NONE && pa.output) {
		status = usage_error("-o and --dump do not go together");
		goto out;
	}
	struct beec_opts opts = policy_args_opts(&pa);
	status = pa.output ? run_compile(argv[optind], pa.output, &opts) : run_dump(pa.stage, argv[optind], &opts);
out:
	policy_args_fini(&pa);
	return status;
}

/* ---- beec config ------------------------------------------------------------ */

static int cmd_config(int argc, char **argv)
{
	struct policy_args pa = { .defines = xcalloc((size_t)argc, sizeof(char *)) };
	int status = policy_args_parse(argc, argv, &pa, false, false);
	if (status >= 0)
		goto out;
	if (optind != argc) {
		status = usage_error("config takes no arguments");
		goto out;
	}
	status = config_dump(&beec_config, pa.json, stdout) < 0 ? EXIT_NOMEM : 0;
	status = finish_output(status);
out:
	policy_args_fini(&pa);
	return status;
}

/* ---- beec learn [--base POLICY] [--name NAME] [-D NAME=VALUE]... LOG... -o NEW --------- */

static int cmd_learn(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "base", required_argument, NULL, 'b' },
		{ "name", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char **defines = xcalloc((size_t)argc + 1, sizeof(char *));
	const char *base_path = NULL, *name = NULL, *output = NULL;
	size_t ndefines = 0;
	int c, status = 0;
	opterr = 0;
	optind = 1;
	const char **idirs = xcalloc((size_t)argc + 1, sizeof(char *));
	size_t nidirs = 0;
	while ((c = getopt_long(argc, argv, ":D:I:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'I':
			idirs[nidirs++] = optarg;
			break;
		case 'b':
			base_path = optarg;
			break;
		case 'n':
			name = optarg;
			break;
		case 'o':
			output = optarg;
			break;
		case 'D':
			if (!valid_define(optarg)) {
				status = usage_error("-D expects NAME=VALUE, got '%s'", optarg);
				goto out;
			}
			defines[ndefines++] = optarg;
			break;
		case 'h':
			printf("usage: beec learn [--base POLICY] [--name NAME] [-D NAME=VALUE]... [-I DIR]... LOG... -o NEW.toml\n");
			status = finish_output(0);
			goto out;
		case ':':
			status = usage_error("option '%s' needs a value", argv[optind - 1]);
			goto out;
		default:
			status = usage_error("unknown option '%s' for learn", argv[optind - 1]);
			goto out;
		}
	}
	if (optind == argc || !output) {
		status = usage_error("learn needs LOG... and -o NEW.toml");
		goto out;
	}
	struct beec_opts opts = { .sz = sizeof(opts), .defines = defines, .ndefines = ndefines,
				  .include_dirs = idirs, .ninclude_dirs = nidirs };
	struct beec_policy base = { 0 };
	struct diag_ctx dc;
	beec_diag_init(&dc);
	char *parent = NULL;
	if (base_path) {
		status = load_to(&base, base_path, DUMP_NET, &opts, &dc);
		if (status) {
			diag_print(&dc, stderr);
			diag_fini(&dc);
			beec_policy__fini(&base);
			goto out;
		}
		parent = beec_policy__parent_path(&base);
	}
	struct learn_opts lo = {
		.logs = (const char *const *)&argv[optind], .nlogs = (size_t)(argc - optind), .defines = defines,
		.ndefines = ndefines, .base = base_path ? &base : NULL, .base_parent = parent, .name = name,
	};
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);
	int err = mem ? learn_run(&lo, mem, stderr, &dc) : -ENOMEM;
	if (mem)
		fclose(mem);
	if (err == -ENOMEM) {
		status = -ENOMEM;
	} else if (err < 0) {
		status = EXIT_POLICY;
	} else {
		int werr = pack_write_file(output, text, len);
		if (werr < 0) {
			diag_error(&dc, LOC_NONE, "cannot write '%s': %s", output, write_cause(werr));
			status = EXIT_OUTPUT;
		}
	}
	free(text);
	free(parent);
	diag_print(&dc, stderr);
	diag_fini(&dc);
	beec_policy__fini(&base);
	if (status >= 0)
		status = finish_output(status);
out:
	free(defines);
	free(idirs);
	return status;
}

static int run_command(int argc, char **argv)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (strcmp(argv[1], commands[i].name) == 0)
			return commands[i].run(argc - 1, argv + 1);
	return cmd_compile(argc, argv);
}

/* The libraries returned -ENOMEM; the front end says why and exits. */
static int nomem_error(void)
{
	struct mem_stats st;
	mem_stats_get(&st);
	fflush(stdout);
	if (st.failure == MEM_FAIL_BUDGET)
		fprintf(stderr, "beec: out of memory: the compile needed a heap of more than %llu bytes "
			"(--max-memory=%llu); raise it with --max-memory\n",
			(unsigned long long)max_memory, (unsigned long long)max_memory);
	else
		fprintf(stderr, "beec: out of memory: an allocation of %zu bytes failed\n", st.failed_size);
	return EXIT_NOMEM;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fputs(usage_text, stderr);
		return EXIT_USAGE;
	}
	/* the host's choices, not the library's: jansson through the funnel, the budget */
	mem_json_route();
	mem_budget_set(max_memory);
	/* the command's own allocations (options, messages) are protected too;
	 * exhaustion anywhere is sticky, so a command that made it an error of
	 * its own still ends here */
	int status = MEM_PROTECT(-ENOMEM, run_command(argc, argv));
	if (status == -ENOMEM)
		return nomem_error();
	if (getenv("BEEC_MEM_STATS")) {
		struct mem_stats st;
		mem_stats_get(&st);
		fprintf(stderr, "beec: %llu allocations, %llu bytes handed out, heap peak read %llu bytes\n",
			(unsigned long long)st.allocs, (unsigned long long)st.bytes,
			(unsigned long long)st.peak);
	}
	return status;
}
