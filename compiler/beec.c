/* beec: the bee policy compiler, a thin command line over libbeec.
 *
 * Exit status: 0 done, 1 the policy is not valid or cannot be read,
 * 2 the command line is wrong.
 */
#include "libbeec.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { EXIT_POLICY = 1, EXIT_USAGE = 2 };

static const char usage_text[] =
	"usage: beec --dump=STAGE [-D NAME=VALUE]... FILE\n"
	"       beec COMMAND [ARGS]\n"
	"       beec --help | --version\n";

static const char help_text[] =
	"Compiles a bee TOML policy.\n"
	"\n"
	"Options:\n"
	"  --dump=STAGE       print the policy after STAGE as canonical text:\n"
	"                       toml  the parsed TOML document\n"
	"                       ir    the policy IR, one rule a line\n"
	"  -D NAME=VALUE      expand ${NAME} in the policy's strings to VALUE\n"
	"  -h, --help         print this help\n"
	"  --version          print the version\n"
	"\n"
	"FILE may be '-' for standard input.\n"
	"\n"
	"Commands:\n";

static const char help_tail[] =
	"\n"
	"Exit status: 0 done, 1 the policy is not valid or cannot be read,\n"
	"2 the command line is wrong.\n";

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

static int read_error(const char *path, int err)
{
	fprintf(stderr, "beec: cannot read '%s': %s\n", path, strerror(-err));
	return EXIT_POLICY;
}

/* Flushes stdout; output that did not get out is a failure. */
static int finish_output(int status)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "beec: cannot write output: %s\n", strerror(errno));
		return EXIT_POLICY;
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
	diag_init(&dc);
	int err = beec_policy__read(&pol, path);
	if (err)
		return read_error(path, err);
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

struct command {
	const char *name;
	const char *args;
	const char *summary;
	int (*run)(int argc, char **argv);
};

static const struct command commands[] = {
	{ "toml-json", "[FILE]", "print FILE as the tagged JSON of the toml-test suite", cmd_toml_json },
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static int help(void)
{
	fputs(usage_text, stdout);
	fputc('\n', stdout);
	fputs(help_text, stdout);
	for (size_t i = 0; i < NCOMMANDS; i++) {
		char head[64];
		snprintf(head, sizeof(head), "%s %s", commands[i].name, commands[i].args);
		printf("  %-18s %s\n", head, commands[i].summary);
	}
	fputs(help_tail, stdout);
	return finish_output(0);
}

/* ---- beec --dump=STAGE FILE ---------------------------------------------- */

#define DUMP_STAGES(X)   \
	X(TOML, "toml")  \
	X(IR, "ir")

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
	return usage_error("unknown dump stage '%s'; expected 'toml' or 'ir'", arg);
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

static int run_dump(enum dump_stage stage, const char *path, const struct beec_opts *opts)
{
	struct beec_policy pol;
	struct diag_ctx dc;
	int status = 0;
	diag_init(&dc);

	int err = beec_policy__read(&pol, path);
	if (err)
		return read_error(path, err);
	switch (stage) {
	case DUMP_TOML:
		if (beec_policy__parse(&pol, &dc) == 0)
			toml_dump_canonical(pol.doc, stdout);
		else
			status = EXIT_POLICY;
		break;
	case DUMP_IR:
		if (beec_policy__parse(&pol, &dc) == 0 && beec_policy__build(&pol, opts, &dc) == 0)
			ir_dump(pol.ir, stdout);
		else
			status = EXIT_POLICY;
		break;
	case DUMP_NONE:
		break;
	}
	diag_print(&dc, stderr);
	diag_fini(&dc);
	beec_policy__fini(&pol);
	return finish_output(status);
}

static int cmd_compile(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "dump", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	enum dump_stage stage = DUMP_NONE;
	const char **defines = xcalloc((size_t)argc, sizeof(*defines));
	size_t ndefines = 0;
	int status, c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":D:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			if (parse_dump(optarg, &stage) != 0) {
				status = EXIT_USAGE;
				goto out;
			}
			break;
		case 'D':
			if (!valid_define(optarg)) {
				status = usage_error("-D expects NAME=VALUE, got '%s'", optarg);
				goto out;
			}
			defines[ndefines++] = optarg;
			break;
		case 'h':
			status = help();
			goto out;
		case 'V':
			printf("beec %s (policy schema %d)\n", BEEC_VERSION, IR_SCHEMA_VERSION);
			status = finish_output(0);
			goto out;
		case ':':
			status = usage_error("option '%s' needs a value", argv[optind - 1]);
			goto out;
		default:
			status = usage_error("unknown option '%s'", argv[optind - 1]);
			goto out;
		}
	}
	if (optind == argc) {
		status = usage_error("missing policy FILE");
		goto out;
	}
	if (argc - optind > 1) {
		status = usage_error("one policy FILE at a time, got %d", argc - optind);
		goto out;
	}
	if (stage == DUMP_NONE) {
		status = usage_error("nothing to do; write --dump=toml or --dump=ir");
		goto out;
	}
	struct beec_opts opts = { .sz = sizeof(opts), .defines = defines, .ndefines = ndefines };
	status = run_dump(stage, argv[optind], &opts);
out:
	free(defines);
	return status;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fputs(usage_text, stderr);
		return EXIT_USAGE;
	}
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (strcmp(argv[1], commands[i].name) == 0)
			return commands[i].run(argc - 1, argv + 1);
	return cmd_compile(argc, argv);
}
