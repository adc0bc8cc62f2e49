/* SPDX-License-Identifier: GPL-2.0-only */
/* bee-load: runs a tool inside a bee session, a thin command line over
 * libbee (loader/libbee.h). Exit status: libbee.h's BEE_STAGES, the
 * README's "bee-load exit status" table. */
#include "libbee.h"
#include "libbeec.h"
/* the session service's client and the terminal relay, which the library
 * does not export (yet): bee-load links libbee.a */
#include "internal.h"
#include "pty.h"
#include "serve.h"
#include "unpriv.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#define GRACE_MS 2000   /* after forwarding SIGINT/SIGTERM, then SIGKILL */

static const char usage_text[] =
	"usage: bee-load check [--json]\n"
	"       bee-load run [--audit-log FILE] [--audit-detail] [--env NAME=VALUE]...\n"
	"                    [--backend auto|bpf-lsm|landlock] [--no-landlock-hardening]\n"
	"                    [--user USER|UID[:GID]] [--overlay DIR[:disk|:memory[=SIZE]]]...\n"
	"                    [--dns-upstream ADDR[:PORT]] [--dns-ttl-floor SECONDS]\n"
	"                    [--learn LOG] PACK -- CMD [ARGS]...\n"
	"       bee-load start [options of run] PACK\n"
	"       bee-load exec [-t] [--state-dir DIR] [--socket PATH] SESSION -- CMD [ARGS]...\n"
	"       bee-load stop [--state-dir DIR] [--socket PATH] SESSION\n"
	"       bee-load query PACK KIND ACTION RESOURCE\n"
	"       bee-load plan [--json] [--walk-entries N] [--walk-ms MS] PACK\n"
	"       bee-load revoke [--socket PATH] SESSION RULE\n"
	"       bee-load ls [--json] [--socket PATH]\n"
	"       bee-load serve [--socket PATH] [--group NAME] [--log FILE] [--state-dir DIR]\n"
	"       bee-load gc [--packs] [--vfs-age SECONDS]\n"
	"       bee-load vfs ls [--json] SESSION\n"
	"       bee-load vfs diff SESSION [PATH]...\n"
	"       bee-load vfs snapshot SESSION -o FILE.tar\n"
	"       bee-load vfs apply SESSION [PATH]...\n"
	"       bee-load vfs reset|disable SESSION\n"
	"       bee-load config [--json]\n"
	"       bee-load --help | --version\n";

static const char help_text[] =
	"\n"
	"Loads a .bpfpack (compiled by beec) at session start, scopes a cgroup with it\n"
	"and runs a tool inside, or refuses.\n"
	"\n"
	"Commands:\n"
	"  check     each kernel gate with its state and reason; exit 0 when the\n"
	"            bpf-lsm backend can enforce here, 65 when it cannot\n"
	"  run       run CMD in a new session of PACK; exits with CMD's status\n"
	"            (128+N when a signal N ended it or bee-load)\n"
	"  start     open a session of PACK that outlives the command: its supervisor\n"
	"            keeps it; prints the session id as the last line\n"
	"  exec      run CMD in live session SESSION, hardened as run's tool; exits\n"
	"            with CMD's status\n"
	"  stop      end live session SESSION: kill what remains, flush its audit,\n"
	"            tear it down (68 when audit records were lost)\n"
	"  query     decide KIND ACTION RESOURCE as PACK's policy does (fs read|write\n"
	"            PATH, exec execute PATH, env read NAME, net connect|bind ADDR:PORT);\n"
	"            exit 0 Allow, 1 Deny\n"
	"  plan      the rules the landlock backend gives Landlock for PACK on this host\n"
	"            (its walk of the real tree), with counts, time and each narrowing\n"
	"            with its rule and line\n"
	"  revoke    take grant RULE (its index or text, as `beec show` lists it) from\n"
	"            live session SESSION; it only narrows\n"
	"  ls        the registered sessions\n"
	"  gc        remove what sessions of a killed bee-load left behind, and the packs'\n"
	"            loads no session used for 10 minutes (--packs: every unused one now)\n"
	"  config    the resolved configuration, each key with where it came from\n"
	"  vfs       a session's copy-on-write overlays (--overlay): ls the changes\n"
	"            (added, modified, deleted), diff them, snapshot them to a tar\n"
	"            file, apply them to the real directories (refused, nothing\n"
	"            changed, when a directory changed underneath), reset (drop\n"
	"            them), disable (later writes go to the real directories)\n"
	"  serve     the session service (root): start, exec, stop, ls and revoke for\n"
	"            the members of group bee on a unix socket (docs/serve.md)\n"
	"\n"
	"Without root, start, exec, stop, ls and revoke go through the session service\n"
	"(--socket PATH, else $BEE_SOCKET, else " BEE_SERVE_SOCKET "); as root they work\n"
	"directly unless a socket is named.\n"
	"\n"
	"Options of run (and start):\n"
	"  --audit-log FILE      append one JSON line per decision to FILE\n"
	"  --audit-detail        add pid, comm, policy, session, source, reason after the five keys\n"
	"  --learn LOG           run only: learning mode, NOTHING IS DENIED; every access\n"
	"                        the policy would refuse goes to LOG with the rule that\n"
	"                        would decide, for `beec learn LOG -o NEW.toml`\n"
	"  --env NAME=VALUE      set NAME in the tool's environment (after [env] set)\n"
	"  --backend B           auto (bpf-lsm when check passes, else landlock, said on\n"
	"                        stderr; refused when the configuration says fallback =\n"
	"                        false), bpf-lsm, or landlock (fs and exec by Landlock,\n"
	"                        [net] by cgroup programs; the tree is walked at start:\n"
	"                        bee-load plan)\n"
	"  --quiet               landlock: leave out the line that sums up the narrowings\n"
	"  --walk-entries N, --walk-ms MS\n"
	"                        landlock: the bounds of the walk at start (default\n"
	"                        2000000 entries, 60000 ms); passing one is an error\n"
	"                        naming the rule\n"
	"  --dns-upstream ADDR[:PORT]\n"
	"                        a policy with host names: the resolver the session's DNS\n"
	"                        stub asks (default: /etc/resolv.conf's first nameserver)\n"
	"  --dns-ttl-floor SECONDS\n"
	"                        an answered address of a policy's name stays admitted at\n"
	"                        least this long (default 30)\n"
	"  --no-landlock-hardening\n"
	"                        bpf-lsm: run without the Landlock ruleset that confines\n"
	"                        link, rename, unlink, mkdir and truncate to the trees the\n"
	"                        write rules name (else refused, 74, without Landlock)\n"
	"  -t, --tty             a fresh pseudo-terminal for the tool (the default when\n"
	"                        stdin is a terminal; run and exec)\n"
	"  --allow-weaker NAME   (repeatable) landlock: run although this kernel's Landlock\n"
	"                        ABI leaves the right NAME open (truncate, ioctl-dev, scope:\n"
	"                        bee-load plan); unprivileged run: NAME may be a rule\n"
	"                        (index or text) to enforce as far as Landlock can\n"
	"                        (docs/unprivileged.md) instead of refusing\n"
	"  --user USER|UID[:GID] the tool's user (default: SUDO_UID/SUDO_GID when set, else\n"
	"                        65534:65534, nobody; 'root' keeps uid 0 and says what it\n"
	"                        costs); without root the tool keeps bee-load's user\n"
	"  --overlay DIR[:MODE]  (repeatable) DIR copy-on-write in the session: writes land\n"
	"                        in the session's upper layer, on disk under the state\n"
	"                        directory (disk, the default) or in a tmpfs of SIZE\n"
	"                        (memory, memory=SIZE, K/M/G, default 64M), until\n"
	"                        'vfs apply'\n"
	"  --bpffs DIR           the bpf file system to pin under (default: from mountinfo,\n"
	"                        else bee-load mounts one at STATE-DIR/bpffs)\n"
	"  --state-dir DIR       the session registry (default " BEE_STATE_DIR ")\n"
	"  --config FILE         a configuration file above the project's, the user's and\n"
	"                        the system's (run, start, exec, stop, revoke, ls, gc,\n"
	"                        config; docs/config.md)\n"
	"\n"
	"Exit status of run:\n";

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("bee-load: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputs("\ntry 'bee-load --help'\n", stderr);
	va_end(ap);
	return bee_stage__exit_status(BEE_STAGE_USAGE, 0);
}

static int fail(const struct bee_error *e)
{
	fprintf(stderr, "bee-load: %s\n", e->msg);
	return bee_stage__exit_status(e->stage, e->err);
}

static void warn_stderr(void *ctx, const char *msg)
{
	(void)ctx;
	fprintf(stderr, "bee-load: %s\n", msg);
}

static int finish_output(int status)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "bee-load: cannot write output: %s\n", strerror(errno));
		return 1;
	}
	return status;
}

/* Options shared by the commands; each says which it takes. */
enum { OPT_JSON = 256, OPT_AUDIT_LOG, OPT_AUDIT_DETAIL, OPT_ENV, OPT_BACKEND, OPT_BPFFS, OPT_STATE_DIR,
       OPT_NO_LL_HARDENING, OPT_CONFIG, OPT_USER, OPT_PACKS, OPT_QUIET, OPT_WALK_ENTRIES, OPT_WALK_MS,
       OPT_OVERLAY, OPT_VFS_AGE, OPT_OUTPUT, OPT_DNS_UPSTREAM, OPT_DNS_TTL_FLOOR,
       OPT_LEARN, OPT_SOCKET, OPT_GROUP, OPT_LOG, OPT_TTY, OPT_ALLOW_WEAKER };

struct args {
	bool json, audit_detail, no_ll_hardening, packs, quiet, tty;
	uint64_t walk_entries, walk_ms;
	const char *audit_log, *bpffs, *state_dir, *backend, *config, *user, *vfs_age, *output,
		   *dns_upstream, *learn, *socket, *group, *log;
	unsigned dns_ttl_floor;
	const char **env;
	size_t nenv;
	const char **overlays;      /* as many slots as env */
	size_t noverlays;
	const char **weaker;        /* --allow-weaker RULE, run's (as many as argc) */
	size_t nweaker;
};

/* 1 when word is one of the space-separated words of list ("log" is not
 * "audit-log"). */
static bool word_of(const char *list, const char *word)
{
	size_t n = strlen(word);
	for (const char *p = strstr(list, word); p; p = strstr(p + 1, word))
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
			return true;
	return false;
}

static int parse_args(int argc, char **argv, struct args *a, const char *allowed)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, OPT_JSON },
		{ "audit-log", required_argument, NULL, OPT_AUDIT_LOG },
		{ "audit-detail", no_argument, NULL, OPT_AUDIT_DETAIL },
		{ "env", required_argument, NULL, OPT_ENV },
		{ "backend", required_argument, NULL, OPT_BACKEND },
		{ "bpffs", required_argument, NULL, OPT_BPFFS },
		{ "state-dir", required_argument, NULL, OPT_STATE_DIR },
		{ "no-landlock-hardening", no_argument, NULL, OPT_NO_LL_HARDENING },
		{ "config", required_argument, NULL, OPT_CONFIG },
		{ "user", required_argument, NULL, OPT_USER },
		{ "packs", no_argument, NULL, OPT_PACKS },
		{ "quiet", no_argument, NULL, OPT_QUIET },
		{ "walk-entries", required_argument, NULL, OPT_WALK_ENTRIES },
		{ "walk-ms", required_argument, NULL, OPT_WALK_MS },
		{ "overlay", required_argument, NULL, OPT_OVERLAY },
		{ "vfs-age", required_argument, NULL, OPT_VFS_AGE },
		{ "output", required_argument, NULL, OPT_OUTPUT },
		{ "dns-upstream", required_argument, NULL, OPT_DNS_UPSTREAM },
		{ "dns-ttl-floor", required_argument, NULL, OPT_DNS_TTL_FLOOR },
		{ "learn", required_argument, NULL, OPT_LEARN },
		{ "socket", required_argument, NULL, OPT_SOCKET },
		{ "group", required_argument, NULL, OPT_GROUP },
		{ "log", required_argument, NULL, OPT_LOG },
		{ "tty", no_argument, NULL, OPT_TTY },
		{ "allow-weaker", required_argument, NULL, OPT_ALLOW_WEAKER },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const names[] = { "json", "audit-log", "audit-detail", "env", "backend", "bpffs",
					     "state-dir", "no-landlock-hardening", "config", "user", "packs",
					     "quiet", "walk-entries", "walk-ms", "overlay", "vfs-age", "output",
					     "dns-upstream", "dns-ttl-floor", "learn",
					     "socket", "group", "log", "tty", "allow-weaker" };
	int c;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+:o:t", longopts, NULL)) != -1) {
		if (c == ':')
			return usage_error("option '%s' needs a value", argv[optind - 1]);
		if (c == 'o')
			c = OPT_OUTPUT;
		if (c == 't')
			c = OPT_TTY;
		if (c < OPT_JSON)
			return usage_error("unknown option '%s' for '%s'", argv[optind - 1], argv[0]);
		if (!word_of(allowed, names[c - OPT_JSON]))
			return usage_error("'--%s' is not an option of '%s'", names[c - OPT_JSON], argv[0]);
		switch (c) {
		case OPT_JSON:
			a->json = true;
			break;
		case OPT_AUDIT_LOG:
			a->audit_log = optarg;
			break;
		case OPT_AUDIT_DETAIL:
			a->audit_detail = true;
			break;
		case OPT_ENV:
			if (!strchr(optarg, '=') || optarg[0] == '=')
				return usage_error("--env expects NAME=VALUE, got '%s'", optarg);
			a->env[a->nenv++] = optarg;
			break;
		case OPT_BACKEND: {
			enum bee_backend b;
			if (bee_backend__parse(optarg, &b) < 0)
				return usage_error("--backend expects auto, bpf-lsm or landlock, got '%s'", optarg);
			a->backend = optarg;
			break;
		}
		case OPT_CONFIG:
			a->config = optarg;
			break;
		case OPT_BPFFS:
			a->bpffs = optarg;
			break;
		case OPT_STATE_DIR:
			a->state_dir = optarg;
			break;
		case OPT_PACKS:
			a->packs = true;
			break;
		case OPT_OVERLAY:
			a->overlays[a->noverlays++] = optarg;
			break;
		case OPT_VFS_AGE:
			a->vfs_age = optarg;
			break;
		case OPT_OUTPUT:
			a->output = optarg;
			break;
		case OPT_LEARN:
			a->learn = optarg;
			break;
		case OPT_SOCKET:
			a->socket = optarg;
			break;
		case OPT_GROUP:
			a->group = optarg;
			break;
		case OPT_LOG:
			a->log = optarg;
			break;
		case OPT_TTY:
			a->tty = true;
			break;
		case OPT_ALLOW_WEAKER:
			if (!a->weaker)
				return usage_error("'--allow-weaker' is an option of 'run'");
			a->weaker[a->nweaker++] = optarg;
			break;
		case OPT_NO_LL_HARDENING:
			a->no_ll_hardening = true;
			break;
		case OPT_QUIET:
			a->quiet = true;
			break;
		case OPT_WALK_ENTRIES:
		case OPT_WALK_MS: {
			char *end;
			errno = 0;
			unsigned long long v = strtoull(optarg, &end, 10);
			if (errno || end == optarg || *end || v == 0 || optarg[0] == '-')
				return usage_error("--%s expects a positive number, got '%s'", names[c - OPT_JSON],
						   optarg);
			*(c == OPT_WALK_MS ? &a->walk_ms : &a->walk_entries) = v;
			break;
		}
		case OPT_DNS_UPSTREAM:
			a->dns_upstream = optarg;
			break;
		case OPT_DNS_TTL_FLOOR: {
			char *end;
			unsigned long v = strtoul(optarg, &end, 10);
			if (!*optarg || *end || v < 1 || v > 86400)
				return usage_error("--dns-ttl-floor expects seconds from 1 to 86400, got '%s'", optarg);
			a->dns_ttl_floor = (unsigned)v;
			break;
		}
		case OPT_USER:
			if (!config_user_ok(optarg))
				return usage_error("--user expects USER, UID, USER:GROUP or UID:GID, got '%s'", optarg);
			a->user = optarg;
			break;
		}
	}
	return -1;
}

/* ---- configuration ------------------------------------------------------------------ */

/* The configuration files with the command's flags on top (docs/config.md).
 * Returns -1 when the caller should go on (and config_fini's c), or an
 * exit status: a bad file is refused with its diagnostics, never ignored. */
static int config_read(struct config *c, const struct args *a)
{
	struct config_opts o = { .sz = sizeof(o), .file = a->config };
	struct diag_ctx dc;
	char err[4400];
	diag_init(&dc);
	int rc = config_load(c, &o, &dc, err, sizeof(err));
	diag_print(&dc, stderr);
	diag_fini(&dc);
	const struct { enum config_key k; const char *v; } flags[] = {
		{ CONFIG_BACKEND, a->backend }, { CONFIG_STATE_DIR, a->state_dir },
		{ CONFIG_BPFFS, a->bpffs }, { CONFIG_AUDIT_LOG, a->audit_log }, { CONFIG_USER, a->user },
	};
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]) && rc == 0; i++)
		if (flags[i].v)
			rc = config_set_flag(c, flags[i].k, flags[i].v);
	if (rc == 0 && a->audit_detail)
		rc = config_set_flag_bool(c, CONFIG_AUDIT_DETAIL, true);
	if (rc == 0)
		return -1;
	if (rc == -EINVAL && !*err)
		fprintf(stderr, "bee-load: config: refused: the configuration above is not valid\n");
	else
		fprintf(stderr, "bee-load: config: %s\n", *err ? err : strerror(-rc));
	config_fini(c);
	return bee_stage__exit_status(BEE_STAGE_CONFIG, rc);
}

static int cmd_config(int argc, char **argv)
{
	struct args a = { 0 };
	int st = parse_args(argc, argv, &a, "json config backend state-dir bpffs audit-log audit-detail user");
	if (st >= 0)
		return st;
	if (optind != argc)
		return usage_error("config takes no arguments");
	struct config c;
	if ((st = config_read(&c, &a)) >= 0)
		return st;
	int err = config_dump(&c, a.json, stdout);
	config_fini(&c);
	if (err) {
		fprintf(stderr, "bee-load: config: %s\n", strerror(-err));
		return 1;
	}
	return finish_output(0);
}

/* ---- check --------------------------------------------------------------------------- */

/* Which way bee runs here, and why: root (the backends above), the
 * session service (a socket that answers), or unprivileged (unpriv.c). */
static void check_mode(const struct bee_check_report *r, char *mode, size_t msize, char *why, size_t wsize)
{
	const char *sock = bee_serve_socket_path(NULL);
	int fd = -1;
	bool unpriv = bee_unpriv_wanted();
	bool service = unpriv && bee_serve_connect(sock, &fd, NULL) == 0;
	if (fd >= 0)
		close(fd);
	if (!unpriv) {
		snprintf(mode, msize, "root");
		snprintf(why, wsize, "the host's root: run, start and exec directly, with the backends above");
	} else if (service) {
		snprintf(mode, msize, "service");
		snprintf(why, wsize, "not the host's root, and the session service answers on '%s': start, exec, "
			 "stop, ls and revoke go through it; run is unprivileged", sock);
	} else if (r->landlock_abi >= 4) {
		snprintf(mode, msize, "unprivileged");
		snprintf(why, wsize, "%s, no session service at '%s': run works with Landlock ABI %d and seccomp "
			 "(files, exec, TCP ports); a policy with addresses, UDP or a network deny is refused",
			 geteuid() ? "not root" : "root of a user namespace", sock, r->landlock_abi);
	} else {
		snprintf(mode, msize, "none");
		snprintf(why, wsize, "%s, no session service at '%s', and Landlock %s: nothing can confine a tool here",
			 geteuid() ? "not root" : "root of a user namespace", sock,
			 r->landlock_abi ? "has no network rules (ABI < 4)" : "is not enabled");
	}
}

static int cmd_check(int argc, char **argv)
{
	struct args a = { 0 };
	int st = parse_args(argc, argv, &a, "json");
	if (st >= 0)
		return st;
	if (optind != argc)
		return usage_error("check takes no arguments");
	struct bee_check_report r;
	bee_check__run(&r);
	int status = r.bpf_lsm ? 0 : bee_stage__exit_status(BEE_STAGE_GATE, 0);
	char mode[64], why[512];
	check_mode(&r, mode, sizeof(mode), why, sizeof(why));
	if (a.json) {
		json_t *o = json_object(), *gates = json_array(), *be = json_object();
		for (int i = 0; i < BEE_GATE_COUNT; i++) {
			json_t *g = json_object();
			json_object_set_new(g, "name", json_string(r.gates[i].name));
			json_object_set_new(g, "state", json_string(r.gates[i].ok ? "ok" : "fail"));
			json_object_set_new(g, "reason", json_string(r.gates[i].reason));
			json_array_append_new(gates, g);
		}
		json_t *l = json_object(), *ll = json_object();
		json_object_set_new(l, "usable", json_boolean(r.bpf_lsm));
		json_object_set_new(l, "reason", json_string(r.bpf_lsm_reason));
		json_object_set_new(ll, "usable", json_boolean(r.landlock));
		json_object_set_new(ll, "reason", json_string(r.landlock_reason));
		json_object_set_new(ll, "abi", json_integer(r.landlock_abi));
		json_object_set_new(be, "bpf-lsm", l);
		json_object_set_new(be, "landlock", ll);
		json_object_set_new(o, "gates", gates);
		json_object_set_new(o, "backends", be);
		json_t *md = json_object();
		json_object_set_new(md, "name", json_string(mode));
		json_object_set_new(md, "reason", json_string(why));
		json_object_set_new(o, "mode", md);
		json_object_set_new(o, "exit", json_integer(status));
		json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		fputc('\n', stdout);
		json_decref(o);
		return finish_output(status);
	}
	for (int i = 0; i < BEE_GATE_COUNT; i++)
		printf("%-11s %-5s %s\n", r.gates[i].name, r.gates[i].ok ? "ok" : "FAIL", r.gates[i].reason);
	printf("\nbackend bpf-lsm:  %s%s%s\n", r.bpf_lsm ? "usable" : "unavailable", r.bpf_lsm ? "" : ": ",
	       r.bpf_lsm ? "" : r.bpf_lsm_reason);
	printf("backend landlock: %s%s%s\n", r.landlock ? "usable (--backend landlock; [net] by cgroup programs)"
						       : "unavailable",
	       r.landlock ? "" : ": ", r.landlock ? "" : r.landlock_reason);
	printf("mode:             %s: %s\n", mode, why);
	return finish_output(status);
}

/* ---- run ----------------------------------------------------------------------------------- */

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The options run and start take. */
#define SESSION_OPTIONS \
	"audit-log audit-detail env backend bpffs state-dir no-landlock-hardening config user quiet walk-entries " \
	"walk-ms overlay dns-upstream dns-ttl-floor tty socket"

/* The options of a session that run and start open, from the command
 * line and the configuration. */
static struct bee_session_opts session_opts(const struct args *a, const struct config *c)
{
	enum bee_backend backend;
	/* checked: a flag by parse_args, a file's by the configuration's schema */
	bee_backend__parse(config_str(c, CONFIG_BACKEND), &backend);
	return (struct bee_session_opts){
		.sz = sizeof(struct bee_session_opts), .backend = backend, .context = a->env, .ncontext = a->nenv,
		.audit_log = config_str(c, CONFIG_AUDIT_LOG), .audit_detail = config_bool(c, CONFIG_AUDIT_DETAIL),
		.bpffs = config_str(c, CONFIG_BPFFS), .state_dir = config_str(c, CONFIG_STATE_DIR),
		.warn = warn_stderr, .no_landlock_hardening = a->no_ll_hardening,
		.landlock_fallback = config_bool(c, CONFIG_FALLBACK), .user = config_str(c, CONFIG_USER),
		.walk_entries = a->walk_entries, .walk_ms = a->walk_ms, .quiet = a->quiet,
		.overlays = a->overlays, .noverlays = a->noverlays,
		.dns_upstream = a->dns_upstream, .dns_ttl_floor = a->dns_ttl_floor,
		.learn = a->learn, .weaker = a->weaker, .nweaker = a->nweaker,
	};
}

/* Learning denies nothing: said so that nobody mistakes it for a session. */
static void learn_banner(const char *pack, const char *log)
{
	fprintf(stderr,
		"bee-load: ************************************************************\n"
		"bee-load: LEARNING MODE: policy '%s' is NOT ENFORCED in this session.\n"
		"bee-load: Nothing is denied; what it would deny is recorded in '%s'.\n"
		"bee-load: Run only tools you trust this far; then: beec learn %s -o NEW.toml\n"
		"bee-load: ************************************************************\n",
		pack, log, log);
}

/* run without the host's root (unpriv.c): Landlock and seccomp only, a
 * policy that needs more refused naming the rule. */
static int run_unprivileged(const struct args *a, const struct config *c, const char *pack, const char *const *cmd)
{
	enum bee_backend b;
	bee_backend__parse(config_str(c, CONFIG_BACKEND), &b);
	if (b == BEE_BACKEND_BPF_LSM) {
		fprintf(stderr, "bee-load: gate: the bpf-lsm backend needs root (unprivileged here: %s)\n",
			geteuid() ? "not uid 0" : "uid 0 of a user namespace");
		return bee_stage__exit_status(BEE_STAGE_GATE, -EPERM);
	}
	if (a->user)
		return usage_error("'--user': without root the tool runs as this user");
	fprintf(stderr, "bee-load: unprivileged mode (%s): Landlock and seccomp, files, exec and TCP ports "
		"(docs/unprivileged.md)\n", geteuid() ? "not root" : "root of a user namespace");
	struct bee_unpriv_opts o = {
		.audit_log = config_str(c, CONFIG_AUDIT_LOG), .context = a->env, .ncontext = a->nenv,
		.weaker = a->weaker, .nweaker = a->nweaker, .warn = warn_stderr,
	};
	struct bee_error e;
	int status;
	struct bee_pty pty;
	int use[3];
	if (bee_pty_open(&pty, a->tty, use, &e) < 0) {
		bee_pty_close(&pty);
		return fail(&e);
	}
	if (pty.master >= 0) {
		o.stdio = use;
		if (bee_pty_relay_start(&pty, &e) < 0) {
			bee_pty_close(&pty);
			return fail(&e);
		}
	}
	int st = bee_unpriv_run(pack, cmd, &o, &status, &e);
	bee_pty_close(&pty);
	return st < 0 ? fail(&e) : status;
}

static int cmd_run(int argc, char **argv)
{
	struct args a = { 0 };
	struct config c;
	bool have_config = false;
	a.env = calloc((size_t)argc, sizeof(char *));
	a.overlays = calloc((size_t)argc, sizeof(char *));
	a.weaker = calloc((size_t)argc, sizeof(char *));
	if (!a.env || !a.overlays || !a.weaker) {
		free(a.env);
		free(a.overlays);
		free(a.weaker);
		return 1;
	}
	int status = parse_args(argc, argv, &a, SESSION_OPTIONS " learn allow-weaker");
	if (status >= 0)
		goto out;
	if (a.learn && a.audit_log) {
		status = usage_error("--learn LOG is the session's audit log: it does not go with --audit-log");
		goto out;
	}
	if (optind >= argc) {
		status = usage_error("run needs PACK -- CMD [ARGS]...");
		goto out;
	}
	const char *pack = argv[optind++];
	if (optind < argc && strcmp(argv[optind], "--") == 0)
		optind++;
	if (optind >= argc) {
		status = usage_error("run needs a command after PACK --");
		goto out;
	}
	const char *const *cmd = (const char *const *)&argv[optind];
	if ((status = config_read(&c, &a)) >= 0)
		goto out;
	have_config = true;
	status = 0;
	if (bee_unpriv_wanted()) {
		status = run_unprivileged(&a, &c, pack, cmd);
		goto out;
	}
	for (size_t i = 0; i < a.nweaker; i++)
		if (!bee_landlock_weaker_find(a.weaker[i])) {
			status = usage_error("'--allow-weaker %s': with root it names a right the host's Landlock ABI "
					     "may leave open (truncate, ioctl-dev, scope: bee-load plan); rules are "
					     "named so in the unprivileged mode only (docs/unprivileged.md)",
					     a.weaker[i]);
			goto out;
		}
	/* signals are read from a signalfd, between audit events */
	sigset_t sigs;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGHUP);
	sigaddset(&sigs, SIGQUIT);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);
	int sfd = signalfd(-1, &sigs, SFD_CLOEXEC | SFD_NONBLOCK);

	struct bee_session_opts o = session_opts(&a, &c);
	struct bee_session *s;
	struct bee_error e;
	if (o.learn) {
		o.audit_log = NULL;
		learn_banner(pack, o.learn);
	}
	if (bee_session__open(pack, &o, &s, &e) < 0) {
		status = fail(&e);
		goto out;
	}
	int got = 0;
	struct signalfd_siginfo si;
	/* a signal that came while the session was set up: never start the tool */
	if (sfd >= 0 && read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		bee_session__close(s);
		status = 128 + (int)si.ssi_signo;
		goto out;
	}
	/* a terminal of its own for an interactive tool (pty.c) */
	struct bee_pty pty;
	int use[3];
	if (bee_pty_open(&pty, a.tty, use, &e) < 0 || bee_pty_relay_start(&pty, &e) < 0 ||
	    bee_session_spawn_stdio(s, cmd, NULL, pty.master >= 0 ? use : NULL, &e) < 0) {
		bee_pty_close(&pty);
		status = fail(&e);
		bee_session__close(s);
		goto out;
	}
	int64_t deadline = -1;
	for (;;) {
		struct pollfd p[2] = { { .fd = bee_session__fd(s), .events = POLLIN },
				       { .fd = sfd, .events = POLLIN } };
		int timeout = deadline < 0 ? -1 : (int)(deadline - now_ms() > 0 ? deadline - now_ms() : 0);
		poll(p, sfd >= 0 ? 2 : 1, timeout);
		if (sfd >= 0 && read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
			if (!got) {
				/* forward once, then give the tool a grace period */
				got = (int)si.ssi_signo;
				bee_session__kill(s, got);
				deadline = now_ms() + GRACE_MS;
			} else {
				bee_session__kill(s, SIGKILL);
			}
		}
		if (deadline >= 0 && now_ms() >= deadline) {
			bee_session__kill(s, SIGKILL);
			deadline = -1;
		}
		int r = bee_session__poll(s, 0);
		if (r < 0) {
			/* the session can no longer be watched: end it */
			bee_pty_close(&pty);
			fprintf(stderr, "bee-load: audit relay: %s: killing the tool\n", strerror(-r));
			bee_session__kill(s, SIGKILL);
			bee_session__close(s);
			status = bee_stage__exit_status(BEE_STAGE_AUDIT, r);
			goto out;
		}
		if (r == 1)
			break;
	}
	bee_pty_close(&pty);
	status = got ? 128 + got : bee_session__exit_status(s);
	/* a run whose audit log lost records never reads as a success: a tool
	 * that succeeded gives way to the audit stage's status (the count and
	 * its cause are on stderr already); a failing tool's status is kept */
	if (bee_session__end(s) > 0 && status == 0) {
		fprintf(stderr, "bee-load: audit: the tool exited 0 but its audit log is incomplete\n");
		status = bee_stage__exit_status(BEE_STAGE_AUDIT, 0);
	}
	bee_session__close(s);
out:
	if (have_config)
		config_fini(&c);
	free(a.env);
	free(a.overlays);
	free(a.weaker);
	return status;
}

/* ---- through the session service ---------------------------------------------------------- */

/* One request to the service; 0 with its reply (and handed descriptor),
 * else the exit status. */
static int serve_ask(const struct args *a, json_t *req, int pass, json_t **reply, int *rfd)
{
	struct bee_error e;
	int fd;
	*reply = NULL;
	if (bee_serve_connect(bee_serve_socket_path(a->socket), &fd, &e) < 0) {
		json_decref(req);
		return fail(&e);
	}
	int err = bee_serve_call(fd, req, &pass, pass >= 0 ? 1 : 0, reply, rfd, &e);
	close(fd);
	/* the warnings of a start, whether it worked or not */
	json_t *w = *reply ? json_object_get(*reply, "warnings") : NULL;
	for (size_t i = 0; i < json_array_size(w); i++)
		fprintf(stderr, "bee-load: %s\n", json_string_value(json_array_get(w, i)));
	if (err < 0) {
		json_decref(*reply);
		*reply = NULL;
		return fail(&e);
	}
	return 0;
}

static int serve_start(const struct args *a, const struct bee_session_opts *o, const char *pack)
{
	if (o->audit_log)
		return usage_error("start through the session service: --audit-log is not supported yet (the service "
				   "opens no path for a client; docs/serve.md)");
	/* the client opens the pack: the service reads what this user may read */
	int pfd = open(pack, O_RDONLY | O_CLOEXEC);
	if (pfd < 0) {
		fprintf(stderr, "bee-load: pack '%s': %s\n", pack, strerror(errno));
		return bee_stage__exit_status(BEE_STAGE_PACK, -errno);
	}
	json_t *req = bee_serve_request("start"), *env = json_array(), *reply;
	for (size_t i = 0; i < a->nenv; i++)
		json_array_append_new(env, json_string(a->env[i]));
	if (a->nenv)
		json_object_set_new(req, "env", env);
	else
		json_decref(env);
	if (a->backend)
		json_object_set_new(req, "backend", json_string(a->backend));
	if (o->audit_detail)
		json_object_set_new(req, "audit_detail", json_true());
	if (a->no_ll_hardening)
		json_object_set_new(req, "no_landlock_hardening", json_true());
	if (a->user)
		json_object_set_new(req, "user", json_string(a->user));
	int st = serve_ask(a, req, pfd, &reply, NULL);
	close(pfd);
	if (st)
		return st;
	printf("%s\n", json_string_value(json_object_get(reply, "session")));
	json_decref(reply);
	return finish_output(0);
}

/* A connection to session sid's supervisor: from the service, or made here. */
static int session_fd(const struct args *a, const char *method, const char *sid, const char *state_dir, int *fd)
{
	struct bee_error e;
	if (!bee_serve_wanted(a->socket))
		return bee_session_connect(bee_state_dir(state_dir), sid, fd, &e) < 0 ? fail(&e) : 0;
	json_t *req = bee_serve_request(method), *reply;
	json_object_set_new(req, "session", json_string(sid));
	int st = serve_ask(a, req, -1, &reply, fd);
	json_decref(reply);
	if (!st && *fd < 0) {
		fprintf(stderr, "bee-load: session service: no connection came with the answer\n");
		return bee_stage__exit_status(BEE_STAGE_SESSION, -EPROTO);
	}
	return st;
}

static int cmd_serve(int argc, char **argv)
{
	struct args a = { 0 };
	int st = parse_args(argc, argv, &a, "socket group log state-dir config");
	if (st >= 0)
		return st;
	if (optind != argc)
		return usage_error("serve takes no arguments");
	struct config c;
	if ((st = config_read(&c, &a)) >= 0)
		return st;
	struct bee_serve_opts o = { .sz = sizeof(o), .socket = a.socket, .group = a.group, .log = a.log,
				    .state_dir = config_str(&c, CONFIG_STATE_DIR), .warn = warn_stderr };
	struct bee_error e;
	st = bee_serve_run(&o, &e);
	config_fini(&c);
	return st < 0 ? fail(&e) : 0;
}

/* ---- start, exec, stop ------------------------------------------------------------------ */

static int cmd_start(int argc, char **argv)
{
	struct args a = { 0 };
	struct config c;
	bool have_config = false;
	a.env = calloc((size_t)argc, sizeof(char *));
	a.overlays = calloc((size_t)argc, sizeof(char *));
	if (!a.env || !a.overlays) {
		free(a.env);
		free(a.overlays);
		return 1;
	}
	int status = parse_args(argc, argv, &a, SESSION_OPTIONS);
	if (status >= 0)
		goto out;
	if (argc - optind != 1) {
		status = usage_error("start takes PACK, got %d arguments", argc - optind);
		goto out;
	}
	if (a.tty) {
		status = usage_error("'--tty' is an option of each exec, not of 'start'");
		goto out;
	}
	if ((status = config_read(&c, &a)) >= 0)
		goto out;
	have_config = true;
	struct bee_session_opts o = session_opts(&a, &c);
	char sid[32];
	struct bee_error e;
	if (bee_serve_wanted(a.socket)) {
		status = serve_start(&a, &o, argv[optind]);
		goto out;
	}
	if (bee_session_start(argv[optind], &o, sid, &e) < 0) {
		status = fail(&e);
		goto out;
	}
	printf("%s\n", sid);
	status = finish_output(0);
out:
	if (have_config)
		config_fini(&c);
	free(a.env);
	free(a.overlays);
	return status;
}

static int cmd_exec(int argc, char **argv)
{
	struct args a = { 0 };
	int st = parse_args(argc, argv, &a, "state-dir config socket tty");
	if (st >= 0)
		return st;
	if (optind >= argc)
		return usage_error("exec needs SESSION -- CMD [ARGS]...");
	const char *sid = argv[optind++];
	if (optind < argc && strcmp(argv[optind], "--") == 0)
		optind++;
	if (optind >= argc)
		return usage_error("exec needs a command after SESSION --");
	struct config c;
	if ((st = config_read(&c, &a)) >= 0)
		return st;
	struct bee_session_opts o = { .sz = sizeof(o), .state_dir = config_str(&c, CONFIG_STATE_DIR) };
	struct bee_error e;
	int status, fd = -1, use[3];
	struct bee_pty pty;
	const char *const *cmd = (const char *const *)&argv[optind];
	signal(SIGPIPE, SIG_IGN);
	/* a descriptor the caller closed is /dev/null for the tool, taken
	 * before the pty and the supervisor's connection are made: neither
	 * lands on 0, 1 or 2 and goes to the tool as its stdio (a connection
	 * there would speak for the client) */
	for (int i = 0; i < 3; i++) {
		if (fcntl(i, F_GETFD) >= 0)
			continue;
		int n = open("/dev/null", i ? O_WRONLY : O_RDONLY);
		if (n >= 0 && n != i) {
			close(n);
			n = -1;
		}
		if (n < 0) {
			config_fini(&c);
			fprintf(stderr, "bee-load: exec: /dev/null for a closed descriptor %d: %s\n", i, strerror(errno));
			return bee_stage__exit_status(BEE_STAGE_LAUNCH, -EBADF);
		}
	}
	if (bee_pty_open(&pty, a.tty, use, &e) < 0) {
		bee_pty_close(&pty);
		config_fini(&c);
		return fail(&e);
	}
	if (pty.master < 0 && !bee_serve_wanted(a.socket)) {
		/* as before: libbee's exec, which puts /dev/null where stdio is closed */
		st = bee_session_exec(sid, cmd, NULL, NULL, &o, &status, &e);
		config_fini(&c);
		return st < 0 ? fail(&e) : status;
	}
	if ((st = session_fd(&a, "exec", sid, o.state_dir, &fd)) != 0) {
		bee_pty_close(&pty);
		config_fini(&c);
		return st;
	}
	config_fini(&c);
	if (bee_pty_relay_start(&pty, &e) < 0) {
		close(fd);
		bee_pty_close(&pty);
		return fail(&e);
	}
	st = bee_session_exec_fd(fd, sid, cmd, NULL, use, &status, &e);
	bee_pty_close(&pty);
	return st < 0 ? fail(&e) : status;
}

static int cmd_stop(int argc, char **argv)
{
	struct args a = { 0 };
	int st = parse_args(argc, argv, &a, "state-dir config socket");
	if (st >= 0)
		return st;
	if (argc - optind != 1)
		return usage_error("stop takes SESSION, got %d arguments", argc - optind);
	struct config c;
	if ((st = config_read(&c, &a)) >= 0)
		return st;
	struct bee_session_opts o = { .sz = sizeof(o), .state_dir = config_str(&c, CONFIG_STATE_DIR) };
	struct bee_error e;
	signal(SIGPIPE, SIG_IGN);
	if (bee_serve_wanted(a.socket)) {
		int fd = -1;
		st = session_fd(&a, "stop", argv[optind], o.state_dir, &fd);
		config_fini(&c);
		if (st)
			return st;
		return bee_session_stop_fd(fd, argv[optind], &e) < 0 ? fail(&e) : 0;
	}
	st = bee_session_stop(argv[optind], &o, &e);
	config_fini(&c);
	return st < 0 ? fail(&e) : 0;
}

/* ---- query, revoke, ls, gc ------------------------------------------------------------------ */

/* ---- plan --------------------------------------------------------------------------- */

/* "read,list,write,exec" of a plan rule's rights. */
static const char *ll_rights_text(uint32_t r, char *buf, size_t size)
{
	snprintf(buf, size, "%s%s%s%s%s", r & BEEC_LL_READ ? ",read" : "", r & BEEC_LL_LIST ? ",list" : "",
		 r & BEEC_LL_WRITE ? ",write" : "", r & BEEC_LL_EXEC ? ",exec" : "",
		 r & BEEC_LL_TRUNC ? ",truncate" : "");
	return *buf ? buf + 1 : "none";
}


static void plan_text(const char *pack, int abi, const struct beec_ll_rules *rs, const struct beec_ll_plan *p)
{
	char buf[64];
	printf("landlock plan of '%s' on this host (Landlock ABI %d)\n", pack, abi);
	printf("walk: %llu entries, %llu directories read, %llu looked up by %llu names, %llu symlinks (not "
	       "followed), %.1f ms\n",
	       (unsigned long long)p->entries, (unsigned long long)p->dirs, (unsigned long long)p->looked_up,
	       (unsigned long long)p->lookups, (unsigned long long)p->symlinks, (double)p->ns / 1e6);
	printf("rules: %llu on directories, %llu on files, %llu late (added by the session's init on its own "
	       "/proc or cgroup2)\n",
	       (unsigned long long)p->dir_rules, (unsigned long long)p->file_rules,
	       (unsigned long long)p->late_rules);
	for (size_t i = 0; i < rs->n; i++) {
		const struct beec_ll_rule *r = &rs->v[i];
		printf("  %-4s %s%s  %s  (walk of rule %u)\n", r->dir ? "dir" : "file", r->path, r->late ? " [late]" : "",
		       ll_rights_text(r->rights, buf, sizeof(buf)), r->rule);
	}
	printf("narrowings: %zu\n", p->nnarrow);
	for (size_t i = 0; i < p->nnarrow; i++) {
		const struct beec_ll_narrowing *n = &p->narrow[i];
		printf("  rule %u '%s %s' (line %u): %s, %llu place%s, first '%s': %s (%s)\n", n->rule, n->what,
		       n->glob, n->line, beec_ll__narrow_name(n->kind), (unsigned long long)n->count,
		       n->count == 1 ? "" : "s", n->path, beec_ll__narrow_text(n->kind),
		       ll_rights_text(n->rights, buf, sizeof(buf)));
	}
	printf("symlinks: never followed; a symlink gets no rule, and its target is granted exactly where "
	       "the target's own path is\n");
	int weaker = 0;
	for (size_t i = 0; i < bee_ll_nweaker; i++)
		if (abi < bee_ll_weaker[i].abi) {
			const struct bee_ll_weaker *w = &bee_ll_weaker[i];
			if (!weaker++)
				printf("outside this ABI, not restricted (the launch is refused unless "
				       "--allow-weaker names each):\n");
			printf("  '%s' (ABI %d) stays open: %s\n", w->name, w->abi, w->open);
		}
	if (abi < 2)
		printf("refer (ABI 2): not in this ABI; Landlock denies every move and link to another "
		       "directory (narrower than the policy)\n");
	if (!weaker)
		printf("abi: every right bee uses is handled\n");
}

static int plan_json(const char *pack, int abi, const struct beec_ll_rules *rs, const struct beec_ll_plan *p)
{
	char buf[64];
	json_t *root = json_object(), *rules = json_array(), *narrow = json_array(), *weaker = json_array();
	json_object_set_new(root, "pack", json_string(pack));
	json_object_set_new(root, "abi", json_integer(abi));
	json_object_set_new(root, "entries", json_integer((json_int_t)p->entries));
	json_object_set_new(root, "dirs", json_integer((json_int_t)p->dirs));
	json_object_set_new(root, "looked_up", json_integer((json_int_t)p->looked_up));
	json_object_set_new(root, "lookups", json_integer((json_int_t)p->lookups));
	json_object_set_new(root, "symlinks", json_integer((json_int_t)p->symlinks));
	json_object_set_new(root, "ms", json_real((double)p->ns / 1e6));
	json_object_set_new(root, "dir_rules", json_integer((json_int_t)p->dir_rules));
	json_object_set_new(root, "file_rules", json_integer((json_int_t)p->file_rules));
	json_object_set_new(root, "late_rules", json_integer((json_int_t)p->late_rules));
	for (size_t i = 0; i < rs->n; i++) {
		const struct beec_ll_rule *r = &rs->v[i];
		json_array_append_new(rules, json_pack("{s:s,s:b,s:b,s:s,s:i}", "path", r->path, "dir", r->dir,
						       "late", r->late, "rights",
						       ll_rights_text(r->rights, buf, sizeof(buf)), "rule", r->rule));
	}
	for (size_t i = 0; i < p->nnarrow; i++) {
		const struct beec_ll_narrowing *n = &p->narrow[i];
		json_array_append_new(narrow,
				      json_pack("{s:i,s:s,s:s,s:i,s:s,s:I,s:s,s:s,s:s}", "rule", n->rule, "domain_kind",
						n->what, "text", n->glob, "line", n->line, "kind",
						beec_ll__narrow_name(n->kind), "count", (json_int_t)n->count, "path",
						n->path, "rights", ll_rights_text(n->rights, buf, sizeof(buf)), "what",
						beec_ll__narrow_text(n->kind)));
	}
	for (size_t i = 0; i < bee_ll_nweaker; i++)
		if (abi < bee_ll_weaker[i].abi)
			json_array_append_new(weaker, json_string(bee_ll_weaker[i].name));
	json_object_set_new(root, "rules", rules);
	json_object_set_new(root, "narrowings", narrow);
	json_object_set_new(root, "outside_abi", weaker);
	int rc = json_dumpf(root, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	putchar('\n');
	json_decref(root);
	return rc;
}

static int cmd_plan(int argc, char **argv)
{
	struct args a = { 0 };
	int st = parse_args(argc, argv, &a, "json walk-entries walk-ms");
	if (st >= 0)
		return st;
	if (argc - optind != 1)
		return usage_error("plan takes PACK, got %d arguments", argc - optind);
	struct beec_ll_opts o = { .sz = sizeof(o), .max_entries = a.walk_entries, .max_ms = a.walk_ms };
	struct beec_ll_rules rs = { 0 };
	struct beec_ll_plan p;
	struct bee_error e;
	int abi;
	int status = 0;
	if (bee_landlock__plan(argv[optind], &o, beec_ll__collect, &rs, &p, &abi, &e) < 0) {
		status = fail(&e);
	} else {
		beec_ll_rules__sort(&rs);
		if (a.json)
			plan_json(argv[optind], abi, &rs, &p);
		else
			plan_text(argv[optind], abi, &rs, &p);
	}
	beec_ll_rules__fini(&rs);
	beec_ll_plan__fini(&p);
	return finish_output(status);
}

static int cmd_query(int argc, char **argv)
{
	struct args a = { 0 };
	int st = parse_args(argc, argv, &a, "");
	if (st >= 0)
		return st;
	if (argc - optind != 4)
		return usage_error("query takes PACK KIND ACTION RESOURCE, got %d arguments", argc - optind);
	struct bee_decision d;
	struct bee_error e;
	if (bee_decision__query(argv[optind], argv[optind + 1], argv[optind + 2], argv[optind + 3], &d, &e) < 0) {
		if (e.stage == BEE_STAGE_USAGE)
			return usage_error("%s", e.msg + strlen("usage: "));
		return fail(&e);
	}
	fputs(d.text ? d.text : "", stdout);
	int status = d.allow ? 0 : 1;
	bee_decision__fini(&d);
	return finish_output(status);
}

static int cmd_revoke(int argc, char **argv)
{
	struct args a = { 0 };
	int st = parse_args(argc, argv, &a, "state-dir config socket");
	if (st >= 0)
		return st;
	if (argc - optind != 2)
		return usage_error("revoke takes SESSION RULE, got %d arguments", argc - optind);
	if (bee_serve_wanted(a.socket)) {
		json_t *req = bee_serve_request("revoke"), *reply;
		json_object_set_new(req, "session", json_string(argv[optind]));
		json_object_set_new(req, "rule", json_string(argv[optind + 1]));
		if ((st = serve_ask(&a, req, -1, &reply, NULL)) != 0)
			return st;
		json_t *rv = json_object_get(reply, "revoked");
		const char *note = json_string_value(json_object_get(rv, "note"));
		printf("revoked rule %lld '%s' in session %s\n", (long long)json_integer_value(json_object_get(rv, "rule")),
		       json_string_value(json_object_get(rv, "text")), argv[optind]);
		if (!json_is_true(json_object_get(rv, "exact")))
			printf("note: %s\n", note && *note ? note : "some other grants narrowed too");
		json_decref(reply);
		return finish_output(0);
	}
	struct config c;
	if ((st = config_read(&c, &a)) >= 0)
		return st;
	struct bee_revoke_opts o = { .sz = sizeof(o), .state_dir = config_str(&c, CONFIG_STATE_DIR),
				     .warn = warn_stderr };
	struct bee_revoke_result r;
	struct bee_error e;
	st = bee_sessions__revoke(argv[optind], argv[optind + 1], &o, &r, &e);
	config_fini(&c);
	if (st < 0)
		return fail(&e);
	printf("revoked rule %u '%s' in session %s\n", r.rule, r.text, argv[optind]);
	if (!r.exact)
		printf("note: %s\n", r.note[0] ? r.note : "some other grants narrowed too");
	return finish_output(0);
}

/* Seconds since an ISO 8601 UTC time of bee_utc_iso ("2026-09-09T06:00:00.123Z"). */
static long long age_s(const char *started)
{
	struct tm tm = { 0 };
	if (!strptime(started, "%Y-%m-%dT%H:%M:%S", &tm))
		return 0;
	time_t t = timegm(&tm);
	time_t now = time(NULL);
	return now > t ? (long long)(now - t) : 0;
}

/* The sessions the service shows this user, as bee_sessions__list gives them. */
static int serve_ls(const struct args *a, struct bee_session_info **out, size_t *n)
{
	json_t *reply;
	int st = serve_ask(a, bee_serve_request("ls"), -1, &reply, NULL);
	*out = NULL;
	*n = 0;
	if (st)
		return st;
	json_t *arr = json_object_get(reply, "sessions");
	struct bee_session_info *v = calloc(json_array_size(arr) + 1, sizeof(*v));
	if (!v) {
		json_decref(reply);
		return 1;
	}
	for (size_t i = 0; i < json_array_size(arr); i++) {
		json_t *j = json_array_get(arr, i);
		struct bee_session_info *x = &v[i];
#define STR(f) snprintf(x->f, sizeof(x->f), "%s", json_string_value(json_object_get(j, #f)) ?: "")
#define INT(f) x->f = json_integer_value(json_object_get(j, #f))
		STR(id); STR(policy); STR(backend); STR(started); STR(cgroup); STR(bpffs); STR(audit_log); STR(digest);
		INT(pid); INT(tool_pid); INT(commands); INT(audit_written); INT(audit_lost);
		x->nrevoked = (unsigned)json_integer_value(json_object_get(j, "revoked"));
		x->live = json_is_true(json_object_get(j, "live"));
		x->supervised = json_is_true(json_object_get(j, "supervised"));
#undef STR
#undef INT
	}
	*n = json_array_size(arr);
	*out = v;
	json_decref(reply);
	return 0;
}

static int cmd_ls(int argc, char **argv)
{
	struct args a = { 0 };
	int st = parse_args(argc, argv, &a, "json state-dir config socket");
	if (st >= 0)
		return st;
	if (optind != argc)
		return usage_error("ls takes no arguments");
	struct config c;
	if ((st = config_read(&c, &a)) >= 0)
		return st;
	struct bee_session_info *v;
	size_t n;
	struct bee_error e;
	if (bee_serve_wanted(a.socket)) {
		config_fini(&c);
		if ((st = serve_ls(&a, &v, &n)) != 0)
			return st;
	} else {
		st = bee_sessions__list(config_str(&c, CONFIG_STATE_DIR), &v, &n, &e);
		config_fini(&c);
		if (st < 0)
			return fail(&e);
	}
	if (a.json) {
		json_t *arr = json_array();
		for (size_t i = 0; i < n; i++) {
			json_t *o = json_object();
			json_object_set_new(o, "id", json_string(v[i].id));
			json_object_set_new(o, "live", json_boolean(v[i].live));
			json_object_set_new(o, "pid", json_integer(v[i].pid));
			json_object_set_new(o, "tool_pid", json_integer(v[i].tool_pid));
			json_object_set_new(o, "policy", json_string(v[i].policy));
			json_object_set_new(o, "backend", json_string(v[i].backend));
			json_object_set_new(o, "started", json_string(v[i].started));
			json_object_set_new(o, "cgroup", json_string(v[i].cgroup));
			json_object_set_new(o, "bpffs", json_string(v[i].bpffs));
			json_object_set_new(o, "audit_log", json_string(v[i].audit_log));
			json_object_set_new(o, "revoked", json_integer(v[i].nrevoked));
			json_object_set_new(o, "digest", json_string(v[i].digest));
			json_object_set_new(o, "supervised", json_boolean(v[i].supervised));
			json_object_set_new(o, "age", json_integer(age_s(v[i].started)));
			json_object_set_new(o, "commands", json_integer((json_int_t)v[i].commands));
			json_object_set_new(o, "audit_written", json_integer((json_int_t)v[i].audit_written));
			json_object_set_new(o, "audit_lost", json_integer((json_int_t)v[i].audit_lost));
			json_array_append_new(arr, o);
		}
		json_dumpf(arr, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		fputc('\n', stdout);
		json_decref(arr);
	} else {
		if (n)
			printf("%-16s  %-5s  %7s  %-20s  %-8s  %-24s  %8s  %-12s  %6s  %8s  %6s  %s\n", "SESSION", "STATE",
			       "PID", "POLICY", "BACKEND", "STARTED", "AGE", "DIGEST", "CMDS", "WRITTEN", "LOST",
			       "AUDIT LOG");
		for (size_t i = 0; i < n; i++) {
			char age[32];
			long long t = age_s(v[i].started);
			if (t >= 86400)
				snprintf(age, sizeof(age), "%lldd%02lldh", t / 86400, t % 86400 / 3600);
			else if (t >= 3600)
				snprintf(age, sizeof(age), "%lldh%02lldm", t / 3600, t % 3600 / 60);
			else
				snprintf(age, sizeof(age), "%lldm%02llds", t / 60, t % 60);
			printf("%-16s  %-5s  %7d  %-20s  %-8s  %-24s  %8s  %-12.12s  %6llu  %8llu  %6llu  %s\n", v[i].id,
			       v[i].live ? "live" : "stale", (int)v[i].pid, v[i].policy, v[i].backend, v[i].started, age,
			       v[i].digest[0] ? v[i].digest : "-", v[i].commands, v[i].audit_written, v[i].audit_lost,
			       v[i].audit_log[0] ? v[i].audit_log : "-");
		}
	}
	free(v);
	return finish_output(0);
}

/* "N", "Ns", "Nm", "Nh", "Nd" in seconds */
static int duration_s(const char *s, unsigned long long *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || s[0] == '-')
		return -1;
	unsigned long long mul = *end == 'd' ? 86400 : *end == 'h' ? 3600 : *end == 'm' ? 60 : 1;
	if (*end && strchr("smhd", *end))
		end++;
	if (*end || v > ULLONG_MAX / mul)
		return -1;
	*out = v * mul;
	return 0;
}

static int cmd_gc(int argc, char **argv)
{
	struct args a = { 0 };
	int st = parse_args(argc, argv, &a, "state-dir config packs vfs-age");
	if (st >= 0)
		return st;
	if (optind != argc)
		return usage_error("gc takes no arguments");
	unsigned long long vfs_age = 0;
	if (a.vfs_age && duration_s(a.vfs_age, &vfs_age) < 0)
		return usage_error("--vfs-age expects a number of seconds, or with m, h or d, got '%s'", a.vfs_age);
	struct config c;
	if ((st = config_read(&c, &a)) >= 0)
		return st;
	struct bee_error e;
	const char *sd = config_str(&c, CONFIG_STATE_DIR);
	/* the stale sessions before, to say per session what gc removed: a
	 * stale session's launcher died, so what its programs decided after
	 * that may be missing from its audit log */
	struct bee_session_info *was = NULL, *now = NULL;
	size_t nwas = 0, nnow = 0;
	bee_sessions__list(sd, &was, &nwas, NULL);
	int n = bee_sessions__gc(sd, warn_stderr, NULL, &e);
	if (n >= 0)
		bee_sessions__list(sd, &now, &nnow, NULL);
	for (size_t i = 0; n >= 0 && i < nwas; i++) {
		bool kept = was[i].live;
		for (size_t k = 0; !kept && k < nnow; k++)
			kept = strcmp(now[k].id, was[i].id) == 0;
		if (kept)
			continue;
		printf("gc: session %s (policy '%s'): its launcher, bee-load pid %d, died; its audit may be "
		       "incomplete",
		       was[i].id, was[i].policy, (int)was[i].pid);
		if (was[i].audit_log[0])
			printf(" (recorded in '%s')", was[i].audit_log);
		printf("\n");
	}
	free(was);
	free(now);
	int p = n >= 0 && a.packs ? bee_packs__gc(sd, 0, warn_stderr, NULL, &e) : 0;
	int v = n >= 0 && p >= 0 && a.vfs_age ? bee_vfs__gc(sd, vfs_age, warn_stderr, NULL, &e) : 0;
	config_fini(&c);
	if (n < 0 || p < 0 || v < 0)
		return fail(&e);
	printf("gc: removed %d stale session%s\n", n, n == 1 ? "" : "s");
	if (a.packs)
		printf("gc: removed %d unused pack load%s\n", p, p == 1 ? "" : "s");
	if (a.vfs_age)
		printf("gc: removed the overlays of %d ended session%s unchanged for %llu s or more\n", v,
		       v == 1 ? "" : "s", vfs_age);
	return finish_output(0);
}

/* ---- vfs ------------------------------------------------------------------------------------ */

static const char *const vfs_kind_name[] = { "added", "modified", "deleted" };

static void vfs_ls_print(const struct bee_vfs_change *v, size_t n, bool json)
{
	if (json) {
		json_t *arr = json_array();
		for (size_t i = 0; i < n; i++) {
			json_t *o = json_object();
			char mode[8];
			json_object_set_new(o, "path", json_string(v[i].path));
			json_object_set_new(o, "kind", json_string(vfs_kind_name[v[i].kind]));
			json_object_set_new(o, "type", json_stringn(&v[i].type, 1));
			json_object_set_new(o, "size", json_integer((json_int_t)v[i].size));
			snprintf(mode, sizeof(mode), "%04o", v[i].mode);
			json_object_set_new(o, "mode", json_string(mode));
			if (v[i].kind == BEE_VFS_MODIFIED) {
				json_object_set_new(o, "was_type", json_stringn(&v[i].was_type, 1));
				json_object_set_new(o, "was_size", json_integer((json_int_t)v[i].was_size));
				snprintf(mode, sizeof(mode), "%04o", v[i].was_mode);
				json_object_set_new(o, "was_mode", json_string(mode));
				json_object_set_new(o, "content", json_boolean(v[i].content));
			}
			json_array_append_new(arr, o);
		}
		json_dumpf(arr, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		fputc('\n', stdout);
		json_decref(arr);
		return;
	}
	/* KIND TYPE MODE SIZE PATH; a modified entry's SIZE is was->now */
	for (size_t i = 0; i < n; i++) {
		const struct bee_vfs_change *x = &v[i];
		char size[48];
		if (x->kind == BEE_VFS_MODIFIED && x->size != x->was_size)
			snprintf(size, sizeof(size), "%llu->%llu", (unsigned long long)x->was_size,
				 (unsigned long long)x->size);
		else
			snprintf(size, sizeof(size), "%llu", (unsigned long long)x->size);
		printf("%-8s  %c  %04o  %12s  %s\n", vfs_kind_name[x->kind], x->type, x->mode, size, x->path);
	}
}

static int cmd_vfs(int argc, char **argv)
{
	static const struct {
		const char *name, *options;
		bool paths;
	} subs[] = {
		{ "ls", "json state-dir config", false },        { "diff", "state-dir config", true },
		{ "snapshot", "state-dir config output", false }, { "apply", "state-dir config", true },
		{ "reset", "state-dir config", false },          { "disable", "state-dir config", false },
	};
	if (argc < 2)
		return usage_error("vfs needs ls, diff, snapshot, apply, reset or disable");
	size_t k = 0;
	while (k < sizeof(subs) / sizeof(subs[0]) && strcmp(subs[k].name, argv[1]) != 0)
		k++;
	if (k == sizeof(subs) / sizeof(subs[0]))
		return usage_error("unknown vfs command '%s'", argv[1]);
	/* options before or after SESSION (vfs snapshot SID -o F): moved in
	 * front of the arguments, up to a "--" */
	char **av = calloc((size_t)argc + 1, sizeof(char *));
	if (!av)
		return 1;
	int na = 0, npos = 0;
	char **pos = calloc((size_t)argc + 1, sizeof(char *));
	if (!pos) {
		free(av);
		return 1;
	}
	av[na++] = argv[1];
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			while (++i < argc)
				pos[npos++] = argv[i];
			break;
		}
		if (argv[i][0] == '-' && argv[i][1]) {
			av[na++] = argv[i];
			bool valued = strcmp(argv[i], "-o") == 0 || strcmp(argv[i], "--output") == 0 ||
				      strcmp(argv[i], "--state-dir") == 0 || strcmp(argv[i], "--config") == 0;
			if (valued && i + 1 < argc)
				av[na++] = argv[++i];
		} else {
			pos[npos++] = argv[i];
		}
	}
	av[na++] = "--";
	for (int i = 0; i < npos; i++)
		av[na++] = pos[i];
	free(pos);
	struct args a = { 0 };
	int st = parse_args(na, av, &a, subs[k].options);
	if (st >= 0) {
		free(av);
		return st;
	}
	argc = na, argv = av;
	if (optind >= argc)
		st = usage_error("vfs %s needs SESSION", subs[k].name);
	else if (!subs[k].paths && optind + 1 != argc)
		st = usage_error("vfs %s takes SESSION only, got %d more arguments", subs[k].name, argc - optind - 1);
	else if (k == 2 && !a.output)
		st = usage_error("vfs snapshot needs -o FILE.tar");
	struct config c;
	if (st >= 0 || (st = config_read(&c, &a)) >= 0) {
		free(av);
		return st;
	}
	const char *sid = argv[optind++];
	struct bee_vfs_opts o = { .sz = sizeof(o), .state_dir = config_str(&c, CONFIG_STATE_DIR),
				  .paths = (const char *const *)&argv[optind], .npaths = (size_t)(argc - optind),
				  .out_fd = 1, .warn = warn_stderr };
	struct bee_error e;
	struct bee_vfs_change *v = NULL;
	size_t n = 0;
	fflush(stdout);
	switch (k) {
	case 0:
		if ((st = bee_vfs__list(sid, &o, &v, &n, &e)) == 0)
			vfs_ls_print(v, n, a.json);
		bee_vfs__changes_free(v, n);
		break;
	case 1:
		st = bee_vfs__diff(sid, &o, &e);
		break;
	case 2:
		st = bee_vfs__snapshot(sid, a.output, &o, &e);
		break;
	case 3:
		if ((st = bee_vfs__apply(sid, &o, &e)) >= 0)
			printf("vfs apply: session %s: %d change%s written\n", sid, st, st == 1 ? "" : "s");
		break;
	case 4:
		st = bee_vfs__reset(sid, &o, &e);
		break;
	case 5:
		st = bee_vfs__disable(sid, &o, &e);
		break;
	}
	config_fini(&c);
	free(av);
	return st < 0 ? fail(&e) : finish_output(0);
}

static int help(void)
{
	fputs(usage_text, stdout);
	fputs(help_text, stdout);
	for (int s = 0; s < BEE_STAGE_COUNT; s++)
		if (s != BEE_STAGE_OK)
			printf("  %3d  %-9s %s\n", bee_stage__exit_status((enum bee_stage)s, 0),
			       bee_stage__name((enum bee_stage)s), bee_stage__doc((enum bee_stage)s));
	return finish_output(0);
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int, char **);
	} cmds[] = {
		{ "check", cmd_check }, { "run", cmd_run }, { "start", cmd_start }, { "exec", cmd_exec },
		{ "stop", cmd_stop }, { "query", cmd_query }, { "plan", cmd_plan },
		{ "revoke", cmd_revoke }, { "ls", cmd_ls }, { "gc", cmd_gc }, { "config", cmd_config },
		{ "vfs", cmd_vfs },
		{ "serve", cmd_serve },
	};
	/* the host's choice, never libbee's: jansson's allocations counted and failed as libbeec's */
	beec_mem__route_json();
	if (argc < 2) {
		fputs(usage_text, stderr);
		return bee_stage__exit_status(BEE_STAGE_USAGE, 0);
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
		return help();
	if (strcmp(argv[1], "--version") == 0) {
		printf("bee-load %s\n", BEE_LOAD_VERSION);
		return finish_output(0);
	}
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (strcmp(argv[1], cmds[i].name) == 0)
			return cmds[i].fn(argc - 1, argv + 1);
	return usage_error("unknown command '%s'", argv[1]);
}
