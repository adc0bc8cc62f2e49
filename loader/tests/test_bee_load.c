/* SPDX-License-Identifier: GPL-2.0-only */
/* test_bee_load: bee-load end to end on this host's kernel, as root.
 *
 * What the host can do decides what is tested here (DESIGN.md): BPF LSM
 * programs are refused, so sessions run with --backend landlock, whose
 * [net] is the cgroup programs' as in every backend. The suite runs the
 * built binaries from the repository root:
 *
 *   bee-load, bee-load-fault (test build: BEE_FAULT=STAGE fails
 *   that stage), beec, loader/tests/bee-probe, all under BEE_BUILD_DIR
 *
 * on policies/sandbox-demo.toml compiled for a private project directory,
 * with a private bpffs mount and registry, and loopback listeners of its
 * own (one port the policy grants, one it does not). It checks:
 *
 *   - check: exit 65 naming the gate that fails, exactly when the kernel
 *     refuses a BPF_LSM_CGROUP program (probed here independently); --json
 *   - a session: allowed read and write, denied read (EACCES), exec outside
 *     the list, connect outside [net] (EPERM) and inside it, env outside
 *     [env] allow absent, set and --env present, the hardening; each denial
 *     in the audit log as the exact five-key line
 *   - a deny inside a grant runs (the landlock walk), its narrowings
 *     summed up unless --quiet; a bound of the walk refused, the rule named
 *   - teardown (no cgroup, no pin folder, no registry record) after a normal
 *     exit, a tool killed by a signal, SIGTERM to bee-load; gc after SIGKILL
 *   - every failure class: its status, no tool run, nothing left behind
 *   - the specialisation (bpf_load.c): a pack whose manifest leaves out a
 *     hook, a constant or a map, sets a constant the object lacks, or
 *     gives a map other flags is refused at stage pack with the name, no
 *     tool run; the same pack rewritten with its own manifest runs
 *   - 100,000 denied connects: lines plus overrun counts add up exactly,
 *     with the relay keeping up and with it stalled (test build)
 *   - kernel audit: a landlock session with an audit log turns it on with
 *     a backlog of 8192 (the control sets 64 first) and off at its end with
 *     the limit from before; a limit set meanwhile stays (with audit on
 *     already, an audit daemon's: SKIPPED, unless CI is set, then FAILED)
 *   - revoke: a connect that succeeded fails after it; what would widen,
 *     env, and Landlock's fs are refused; the revoke is in the audit log
 *   - nesting: bee-load run from a launcher the test puts in a live
 *     session's cgroup starts a pack proved a subset of the session's (in a
 *     cgroup below it) and refuses one that is not (status 78, the session
 *     and the first counterexample named, no tool run, nothing created),
 *     refuses when the session's own pack cannot be read (fail closed), and
 *     proves against what the session grants now (a revoked grant)
 *   - configuration: `bee-load config` shows each layer's value with its
 *     file and line (system, user, project, --config, flag); a bad file is
 *     refused with status 64 and its located diagnostic (its control runs);
 *     --backend auto falls back to landlock saying so once, and refuses
 *     (65) when the configuration says fallback = false
 *   - no bpffs: in a mount namespace where every bpf mount is unmounted,
 *     run mounts its own at STATE/bpffs and confines as usual (a denial and
 *     an allowed read), and nothing is mounted outside that namespace
 *
 * Not root: SKIPPED (passes), unless CI is set, then FAILED.
 */
#include "internal.h"
#include "pack_write.h"

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <grp.h>
#include <jansson.h>
#include <netinet/in.h>
#include <pwd.h>
#include <regex.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "repack.h"

#define NOBODY 65534                  /* the tool's user by default */

static char secret[160];               /* world-readable, outside the policy: Landlock's denial */
static char tmp[64], proj[128], home[128], bpffs[128], state[128], pack[128], probe[160];
static char cgparent[4096];
static int port_ok, port_no;          /* listeners: granted, not granted */
static char *before[256];             /* session cgroups that were there before */
static size_t nbefore;
static pid_t started[64];             /* what a failed test may leave running */
static size_t nstarted;
static int64_t kaudit_was = -1;       /* test_kaudit_backlog: the audit backlog limit to give back */
static const char *start_cgroup;      /* start() puts the process in this cgroup first */
static int lsock_ok = -1, lsock_no = -1;
static void unmount_all(void);          /* the tmpfs mounts of test_hostile */
static void run_row(const char *what, const char *pk, const char *audit, const char *const *cmd, int want,
		    const char *want_err, const char *marker, bool want_ran);

/* ---- running things --------------------------------------------------------------- */

struct run {
	int status;                 /* shell style */
	char *out, *err;
};

static void run_fini(struct run *r)
{
	free(r->out);
	free(r->err);
	memset(r, 0, sizeof(*r));
}

static char *slurp(const char *path)
{
	char *t = NULL;
	if (bee_read_file(path, &t, NULL) < 0)
		t = strdup("");
	return t;
}

static int wait_status(pid_t pid, int timeout_ms)
{
	int st = 0;
	for (int waited = 0;; waited += 5) {
		pid_t r = waitpid(pid, &st, WNOHANG);
		if (r == pid)
			break;
		if (waited >= timeout_ms) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			fail_msg("pid %d did not end within %d ms", (int)pid, timeout_ms);
		}
		usleep(5000);
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* A started command: its pid and where its stdout and stderr go. */
struct job {
	pid_t pid;
	char out[256], err[256];
};

/* Starts argv with stdout and stderr to files of its own; env adds
 * NAME=VALUE entries. */
static struct job start(const char *const argv[], const char *const env[])
{
	static unsigned seq;
	struct job j;
	snprintf(j.out, sizeof(j.out), "%s/out.%u", tmp, seq);
	snprintf(j.err, sizeof(j.err), "%s/err.%u", tmp, seq++);
	j.pid = fork();
	assert_true(j.pid >= 0);
	if (j.pid == 0) {
		int fo = open(j.out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int fe = open(j.err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		dup2(fo, 1);
		dup2(fe, 2);
		if (start_cgroup) {
			char procs[4200];
			snprintf(procs, sizeof(procs), "%s/cgroup.procs", start_cgroup);
			if (bee_write_file(procs, "0") < 0)
				_exit(98);
		}
		for (const char *const *v = env; v && *v; v++)
			putenv((char *)*v);
		execv(argv[0], (char *const *)argv);
		_exit(99);
	}
	if (nstarted < sizeof(started) / sizeof(started[0]))
		started[nstarted++] = j.pid;
	return j;
}

static void finish(const struct job *j, struct run *r, int timeout_ms)
{
	r->status = wait_status(j->pid, timeout_ms);
	/* ended: off the list, which holds what is still running */
	for (size_t i = 0; i < nstarted; i++)
		if (started[i] == j->pid)
			started[i] = started[--nstarted];
	r->out = slurp(j->out);
	r->err = slurp(j->err);
	unlink(j->out);
	unlink(j->err);
}

static void run(struct run *r, const char *const argv[], const char *const env[], int timeout_ms)
{
	struct job j = start(argv, env);
	finish(&j, r, timeout_ms);
}

/* Gone, or a zombie nobody reaped yet (an orphan's parent is init). */
static bool process_gone(pid_t pid)
{
	return bee_pid_starttime(pid) == 0;
}

/* ---- what a session leaves ---------------------------------------------------------- */

/* Names in dir starting with prefix that are not in skip[0..nskip) and do
 * not start with keep (NULL: none). */
static int count_entries_but(const char *dir, const char *prefix, char **skip, size_t nskip, const char *keep)
{
	DIR *d = opendir(dir);
	int n = 0;
	struct dirent *de;
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		bool old = keep && strncmp(de->d_name, keep, strlen(keep)) == 0;
		for (size_t i = 0; i < nskip; i++)
			old |= strcmp(skip[i], de->d_name) == 0;
		if (de->d_name[0] != '.' && strncmp(de->d_name, prefix, strlen(prefix)) == 0 && !old) {
			fprintf(stderr, "left behind: %s/%s\n", dir, de->d_name);
			n++;
		}
	}
	closedir(d);
	return n;
}

static int count_entries(const char *dir, const char *prefix, char **skip, size_t nskip)
{
	return count_entries_but(dir, prefix, skip, nskip, NULL);
}

/* The records of the pack loads this suite's registry holds
 * (STATE/packs/KEY.json): how many, and below their cgroups the entries
 * starting with prefix (NULL: none counted). */
static int pack_records(const char *prefix, int *below)
{
	char d[512], p[1024], **keys = NULL;
	size_t n = 0;
	snprintf(d, sizeof(d), "%s/packs", state);
	if (bee_dir_json_names(d, &keys, &n) < 0)
		return 0;
	*below = 0;
	for (size_t i = 0; i < n; i++) {
		char *text;
		size_t len;
		snprintf(p, sizeof(p), "%s/%s.json", d, keys[i]);
		if (prefix && bee_read_file(p, &text, &len) == 0) {
			json_t *o = json_loads(text, 0, NULL);
			const char *cg = json_string_value(json_object_get(o, "cgroup"));
			if (cg)
				*below += count_entries(cg, prefix, NULL, 0);
			json_decref(o);
			free(text);
		}
		free(keys[i]);
	}
	free(keys);
	return (int)n;
}

/* Session cgroups starting with prefix in the pack loads' cgroups. */
static int count_in_packs(const char *prefix)
{
	int below;
	pack_records(prefix, &below);
	return below;
}

/* Pack loads that this suite's registry still records. */
static int count_pack_loads(void)
{
	int below;
	return pack_records(NULL, &below);
}

/* No new session cgroup of the demo policy (another session of it on this
 * machine may run), no session pin folder (the pack's load, pack-*, stays
 * for the next session), no record. */
static void assert_clean(void)
{
	char d[256];
	snprintf(d, sizeof(d), "%s/bee", bpffs);
	assert_int_equal(count_entries(cgparent, "bee-sandbox-demo-", before, nbefore), 0);
	assert_int_equal(count_in_packs("bee-sandbox-demo-"), 0);
	assert_int_equal(count_entries_but(d, "", NULL, 0, "pack-"), 0);
	snprintf(d, sizeof(d), "%s/sessions", state);
	assert_int_equal(count_entries(d, "", NULL, 0), 0);
}

/* The records of n registered sessions once all their tools run, in no
 * particular order. */
static void wait_sessions(struct bee_registry_entry *r, size_t n)
{
	for (int i = 0; i < 500; i++) {
		char **ids = NULL;
		size_t k = 0, good = 0;
		bee_registry_ids(state, &ids, &k);
		for (size_t x = 0; x < k; x++) {
			if (k == n && good == x) {
				if (bee_registry_read(state, ids[x], &r[x]) == 0 && r[x].tool_pid > 0)
					good++;
				else
					bee_registry_entry_fini(&r[x]);
			}
			free(ids[x]);
		}
		free(ids);
		if (good == n)
			return;
		for (size_t x = 0; x < good; x++)
			bee_registry_entry_fini(&r[x]);
		usleep(10000);
	}
	fail_msg("%zu live sessions did not appear in %s", n, state);
}

/* The registered session's record once its tool runs. */
static void wait_session(struct bee_registry_entry *r)
{
	for (int i = 0; i < 500; i++) {
		memset(r, 0, sizeof(*r));
		char **ids = NULL;
		size_t n = 0;
		bee_registry_ids(state, &ids, &n);
		bool ok = n == 1 && bee_registry_read(state, ids[0], r) == 0 && r->tool_pid > 0;
		for (size_t k = 0; k < n; k++)
			free(ids[k]);
		free(ids);
		if (ok)
			return;
		bee_registry_entry_fini(r);
		usleep(10000);
	}
	fail_msg("no live session appeared in %s", state);
}

/* ---- the audit log ------------------------------------------------------------------- */

/* Every line has exactly the five keys, in order, with the time format
 * (detail keys after them only when detail); returns the lines. */
static char **audit_lines(const char *path, size_t *n, bool detail)
{
	char *text = slurp(path);
	char **v = calloc(strlen(text) / 20 + 2, sizeof(char *));
	regex_t re;
	assert_int_equal(regcomp(&re, "^\\{\"ts\":\"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z\","
				      "\"kind\":\"(FileSystem|Network|Environment|Process)\","
				      "\"action\":\"(Read|Write|Connect|Listen|Execute)\",\"resource\":\"",
			     REG_EXTENDED | REG_NOSUB),
			 0);
	*n = 0;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		assert_int_equal(regexec(&re, line, 0, NULL, 0), 0);
		json_error_t je;
		json_t *o = json_loads(line, 0, &je);
		assert_non_null(o);
		static const char *const keys[] = { "ts", "kind", "action", "resource", "decision" };
		size_t i = 0;
		for (void *it = json_object_iter(o); it; it = json_object_iter_next(o, it), i++)
			if (i < 5)
				assert_string_equal(json_object_iter_key(it), keys[i]);
		/* "count" (a summary or repeats) is the one key after the five without detail */
		bool counted = json_object_get(o, "count") != NULL;
		if (detail)
			assert_true(i > 5);
		else
			assert_int_equal(i, 5 + counted);
		const char *dec = json_string_value(json_object_get(o, "decision"));
		assert_true(strcmp(dec, "Allow") == 0 || strcmp(dec, "Deny") == 0);
		json_decref(o);
		v[(*n)++] = strdup(line);
	}
	regfree(&re);
	free(text);
	return v;
}

static void lines_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* The number of lines that are exactly this record, but for ts. */
static size_t count_record(char **v, size_t n, const char *kind, const char *action, const char *resource,
			   const char *decision)
{
	char want[4400];
	snprintf(want, sizeof(want), "\",\"kind\":\"%s\",\"action\":\"%s\",\"resource\":\"%s\",\"decision\":\"%s\"}",
		 kind, action, resource, decision);
	size_t c = 0;
	for (size_t i = 0; i < n; i++) {
		/* {"ts":"2026-09-09T06:00:00.123Z" is 32 bytes, its last the quote */
		if (strlen(v[i]) > 32 && strcmp(v[i] + 31, want) == 0)
			c++;
	}
	return c;
}

/* The environment's summary records of decision (one per tool start):
 * how many there are, and whether name is in one's list of names. */
static size_t env_summary(char **v, size_t n, const char *decision, const char *name, bool *has)
{
	char dec[64];
	size_t c = 0;
	snprintf(dec, sizeof(dec), "\"decision\":\"%s\"", decision);
	*has = false;
	for (size_t i = 0; i < n; i++) {
		const char *r = strstr(v[i], "\"kind\":\"Environment\",\"action\":\"Read\",\"resource\":\"");
		if (!r || !strstr(v[i], dec))
			continue;
		c++;
		r += strlen("\"kind\":\"Environment\",\"action\":\"Read\",\"resource\":\"");
		size_t len = strcspn(r, "\"");
		for (const char *p = r; p < r + len;) {
			size_t k = strcspn(p, ",\"");
			*has |= k == strlen(name) && strncmp(p, name, k) == 0;
			p += k + 1;
		}
	}
	return c;
}

/* ---- setup --------------------------------------------------------------------------- */

static int listen_on(int port, int *fd)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((unsigned short)port) };
	socklen_t len = sizeof(sa);
	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	*fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (*fd < 0 || bind(*fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(*fd, 4096) < 0) {
		if (*fd >= 0)
			close(*fd);
		*fd = -1;
		return -1;
	}
	getsockname(*fd, (struct sockaddr *)&sa, &len);
	return ntohs(sa.sin_port);
}

static int compile(const char *policy, const char *out)
{
	char dh[200], dp[200];
	snprintf(dh, sizeof(dh), "HOME=%s", home);
	snprintf(dp, sizeof(dp), "PROJECT=%s", proj);
	const char *argv[] = { BEE_BUILD_DIR "/beec", "-D", dh, "-D", dp, policy, "-o", out, NULL };
	struct run r;
	run(&r, argv, NULL, 60000);
	int st = r.status;
	if (st)
		fprintf(stderr, "beec: %s", r.err);
	run_fini(&r);
	return st;
}

static int setup(void **state_)
{
	(void)state_;
	snprintf(tmp, sizeof(tmp), "/tmp/test_bee_load-XXXXXX");
	if (!mkdtemp(tmp) || chmod(tmp, 0755) < 0)
		return -1;
	/* the tool runs as nobody (bee-load's default for root without SUDO_UID):
	 * the trees it reads are world-readable, the one it writes is nobody's */
	unsetenv("SUDO_UID");
	unsetenv("SUDO_GID");
	snprintf(proj, sizeof(proj), "%s/proj", tmp);
	snprintf(home, sizeof(home), "%s/home", tmp);
	snprintf(bpffs, sizeof(bpffs), "%s/bpffs", tmp);
	snprintf(state, sizeof(state), "%s/state", tmp);
	snprintf(pack, sizeof(pack), "%s/demo.bpfpack", tmp);
	snprintf(probe, sizeof(probe), "%s/bin/bee-probe", proj);
	char d[256];
	/* every bee-load of the suite: no configuration of this machine's */
	snprintf(d, sizeof(d), "%s/cfg/etc", tmp);
	setenv("BEE_SYSCONFDIR", d, 1);
	snprintf(d, sizeof(d), "%s/cfg/xdg", tmp);
	setenv("XDG_CONFIG_HOME", d, 1);
	snprintf(d, sizeof(d), "%s/out", proj);
	if (bee_mkdirs(d, 0755) || bee_mkdirs(home, 0755) || bee_mkdirs(bpffs, 0700) ||
	    mount("bpf", bpffs, "bpf", 0, "mode=0700") < 0) {
		perror("test_bee_load: setup");
		return -1;
	}
	snprintf(d, sizeof(d), "%s/out", proj);
	if (chown(d, NOBODY, NOBODY) < 0)
		return -1;
	snprintf(d, sizeof(d), "%s/bin", proj);
	mkdir(d, 0755);
	char *bin;
	size_t len;
	if (bee_read_file(BEE_BUILD_DIR "/loader/tests/bee-probe", &bin, &len) < 0) {
		fprintf(stderr, "test_bee_load: build/loader/tests/bee-probe is missing\n");
		return -1;
	}
	int fd = open(probe, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	if (fd < 0 || write(fd, bin, len) != (ssize_t)len)
		return -1;
	close(fd);
	free(bin);
	snprintf(d, sizeof(d), "%s/in.txt", proj);
	bee_write_atomic(d, "hello\n", 6);
	chmod(d, 0644);
	snprintf(secret, sizeof(secret), "%s/secret.txt", tmp);
	bee_write_atomic(secret, "hunter2\n", 8);
	chmod(secret, 0644);
	if (compile("policies/sandbox-demo.toml", pack))
		return -1;
	if (bee_cgroup_self(cgparent, sizeof(cgparent)) < 0)
		return -1;
	DIR *cg = opendir(cgparent);
	struct dirent *de;
	while (cg && (de = readdir(cg)) && nbefore < sizeof(before) / sizeof(before[0]))
		if (strncmp(de->d_name, "bee-sandbox-demo-", 17) == 0)
			before[nbefore++] = strdup(de->d_name);
	if (cg)
		closedir(cg);
	/* a granted port of 47000-47009 that is free, and any port outside */
	for (int p = 47000; p <= 47009 && port_ok <= 0; p++)
		port_ok = listen_on(p, &lsock_ok);
	port_no = listen_on(0, &lsock_no);
	if (port_ok <= 0 || port_no <= 0 || (port_no >= 47000 && port_no <= 47009)) {
		fprintf(stderr, "test_bee_load: no loopback ports to listen on\n");
		return -1;
	}
	return 0;
}

static int teardown(void **state_)
{
	(void)state_;
	if (lsock_ok >= 0)
		close(lsock_ok);
	if (lsock_no >= 0)
		close(lsock_no);
	/* a failed test may have left its bee-load running: end it, it tears down */
	for (size_t i = 0; i < nstarted; i++) {
		if (waitpid(started[i], NULL, WNOHANG) != 0)
			continue;
		kill(started[i], SIGTERM);
		for (int k = 0; k < 300 && waitpid(started[i], NULL, WNOHANG) == 0; k++)
			usleep(10000);
		if (kill(started[i], SIGKILL) == 0)
			waitpid(started[i], NULL, 0);
	}
	bee_sessions__gc(state, NULL, NULL, NULL);
	if (kaudit_was >= 0)
		bee_kaudit_set(0, (uint32_t)kaudit_was);
	/* the packs' loads: their links are pinned in the bpffs below (state2:
	 * test_objects' second registry) */
	char state2[300];
	snprintf(state2, sizeof(state2), "%s/state2", tmp);
	bee_packs__gc(state2, 0, NULL, NULL, NULL);
	int loads = bee_packs__gc(state, 0, NULL, NULL, NULL), left = count_pack_loads();
	if (loads < 0 || left > 0)
		fprintf(stderr, "test_bee_load: %d pack loads left behind\n", left);
	unmount_all();
	umount2(bpffs, MNT_DETACH);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	if (system(cmd) != 0)
		fprintf(stderr, "test_bee_load: cannot remove %s\n", tmp);
	return loads < 0 || left > 0 ? -1 : 0;
}

/* Writes tmp/rel (0644), making its directories. */
static void put_config(const char *rel, const char *text)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", tmp, rel);
	char *slash = strrchr(path, '/');
	*slash = '\0';
	assert_int_equal(bee_mkdirs(path, 0755), 0);
	*slash = '/';
	assert_int_equal(bee_write_atomic(path, text, strlen(text)), 0);
	assert_int_equal(chmod(path, 0644), 0);
}

/* bee-load run --backend landlock with the private bpffs and registry. */
#define RUN_ARGS(bin) bin, "run", "--backend", "landlock", "--bpffs", bpffs, "--state-dir", state

/* ---- check ---------------------------------------------------------------------------- */

/* Whether this kernel loads a BPF_LSM_CGROUP program, asked directly. */
static bool kernel_loads_lsm_cgroup(void)
{
	struct btf *btf = btf__load_vmlinux_btf();
	if (libbpf_get_error(btf))
		return false;
	int id = btf__find_by_name_kind(btf, "bpf_lsm_file_open", BTF_KIND_FUNC);
	btf__free(btf);
	if (id < 0)
		return false;
	struct bpf_insn insns[] = { { .code = 0xb7, .imm = 1 }, { .code = 0x95 } };
	LIBBPF_OPTS(bpf_prog_load_opts, o, .expected_attach_type = BPF_LSM_CGROUP, .attach_btf_id = (__u32)id);
	int fd = bpf_prog_load(BPF_PROG_TYPE_LSM, "t", "GPL", insns, 2, &o);
	if (fd >= 0)
		close(fd);
	return fd >= 0;
}

static void test_check(void **state_)
{
	(void)state_;
	bool lsm = kernel_loads_lsm_cgroup();
	struct run r;
	const char *argv[] = { BEE_BUILD_DIR "/bee-load", "check", NULL };
	run(&r, argv, NULL, 10000);
	if (!lsm) {
		/* this project's host: the LSM gate fails, by name */
		assert_int_equal(r.status, 65);
		assert_non_null(strstr(r.out, "lsm_cgroup  FAIL"));
		assert_non_null(strstr(r.out, "backend bpf-lsm:  unavailable: lsm_cgroup: "));
	}
	int text_status = r.status;
	run_fini(&r);
	const char *argj[] = { BEE_BUILD_DIR "/bee-load", "check", "--json", NULL };
	run(&r, argj, NULL, 10000);
	assert_int_equal(r.status, text_status);
	json_error_t je;
	json_t *o = json_loads(r.out, 0, &je);
	assert_non_null(o);
	json_t *gates = json_object_get(o, "gates");
	assert_int_equal(json_array_size(gates), BEE_GATE_COUNT);
	bool lsm_gate_ok = false;
	for (size_t i = 0; i < json_array_size(gates); i++) {
		json_t *g = json_array_get(gates, i);
		const char *name = json_string_value(json_object_get(g, "name"));
		const char *st = json_string_value(json_object_get(g, "state"));
		assert_non_null(name);
		assert_true(strcmp(st, "ok") == 0 || strcmp(st, "fail") == 0);
		assert_true(json_string_length(json_object_get(g, "reason")) > 0);
		if (strcmp(name, "lsm_cgroup") == 0)
			lsm_gate_ok = strcmp(st, "ok") == 0;
	}
	assert_int_equal(lsm_gate_ok, lsm);
	json_t *b = json_object_get(json_object_get(o, "backends"), "bpf-lsm");
	assert_int_equal(json_is_true(json_object_get(b, "usable")), r.status == 0);
	assert_int_equal(json_integer_value(json_object_get(o, "exit")), r.status);
	json_decref(o);
	run_fini(&r);
}

/* ---- a session ----------------------------------------------------------------------- */

static void test_session(void **state_)
{
	(void)state_;
	char audit[256], script[4096], ok[16], no[16], res[64];
	snprintf(audit, sizeof(audit), "%s/audit.jsonl", tmp);
	snprintf(ok, sizeof(ok), "%d", port_ok);
	snprintf(no, sizeof(no), "%d", port_no);
	snprintf(script, sizeof(script),
		 "P=%s; $P read %s/in.txt; $P write %s/out/w.txt; $P read %s; $P exec /usr/bin/id; "
		 "$P connect 127.0.0.1 %s; $P connect 127.0.0.1 %s; $P env SECRET_TOKEN; $P env DEMO_SANDBOX; "
		 "$P env DEMO_CTX; $P env PATH; $P hardening",
		 probe, proj, proj, secret, ok, no);
	const char *argv[] = { RUN_ARGS(BEE_BUILD_DIR "/bee-load"), "--audit-log", audit, "--env", "DEMO_CTX=given",
			       pack, "--", "/usr/bin/sh", "-c", script, NULL };
	const char *env[] = { "SECRET_TOKEN=hunter2", "PATH=/usr/bin:/bin", NULL };
	struct run r;
	run(&r, argv, env, 20000);
	if (r.status)
		fprintf(stderr, "%s%s", r.out, r.err);
	assert_int_equal(r.status, 0);
	static const char *const want[] = {
		"ok", "ok", "EACCES", "EACCES", "ok", "EPERM", "absent", "1", "given", "/usr/bin:/bin",
	};
	char *line = r.out;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		char *nl = strchr(line, '\n');
		assert_non_null(nl);
		*nl = '\0';
		assert_string_equal(line, want[i]);
		line = nl + 1;
	}
	/* no_new_privs, no capability anywhere, umask 077, no inherited fd */
	assert_non_null(strstr(line, "nnp=1 eff=0,0 prm=0,0 inh=0,0 bnd=0 amb=0 umask=077"));
	assert_non_null(strstr(line, "fds=0"));
	run_fini(&r);
	assert_clean();

	size_t n;
	char **v = audit_lines(audit, &n, false);
	assert_int_equal(count_record(v, n, "FileSystem", "Read", secret, "Deny"), 1);
	assert_int_equal(count_record(v, n, "Process", "Execute", "/usr/bin/id", "Deny"), 1);
	snprintf(res, sizeof(res), "127.0.0.1:%d", port_no);
	assert_int_equal(count_record(v, n, "Network", "Connect", res, "Deny"), 1);
	/* the scrub is one record: the names, never a value */
	bool has;
	assert_int_equal(env_summary(v, n, "Deny", "SECRET_TOKEN", &has), 1);
	assert_true(has);
	assert_int_equal(env_summary(v, n, "Deny", "PATH", &has), 1);
	assert_false(has);
	/* [audit] decisions = "deny": what was allowed is not logged */
	snprintf(res, sizeof(res), "127.0.0.1:%d", port_ok);
	assert_int_equal(count_record(v, n, "Network", "Connect", res, "Allow"), 0);
	assert_int_equal(count_record(v, n, "Environment", "Read", "PATH", "Allow"), 0);
	for (size_t i = 0; i < n; i++)
		assert_null(strstr(v[i], "\"Allow\""));
	lines_free(v, n);
}

/* --audit-detail: pid, comm, policy, session after the five keys */
static void test_audit_detail(void **state_)
{
	(void)state_;
	char audit[256];
	snprintf(audit, sizeof(audit), "%s/detail.jsonl", tmp);
	const char *argv[] = { RUN_ARGS(BEE_BUILD_DIR "/bee-load"), "--audit-log", audit, "--audit-detail", pack, "--",
			       probe, "read", secret, NULL };
	struct run r;
	run(&r, argv, NULL, 20000);
	assert_int_equal(r.status, 1);
	run_fini(&r);
	size_t n;
	char **v = audit_lines(audit, &n, true);
	bool found = false;
	char res[300];
	snprintf(res, sizeof(res), "\"resource\":\"%s\",\"decision\":\"Deny\",\"pid\":", secret);
	for (size_t i = 0; i < n; i++)
		found |= strstr(v[i], res) &&
			 strstr(v[i], "\"comm\":\"bee-probe\",\"policy\":\"sandbox-demo\",\"session\":\"") &&
			 strstr(v[i], "\",\"source\":\"landlock\"");
	assert_true(found);
	lines_free(v, n);
}

/* A deny inside a grant runs under the landlock backend (the walk at
 * start), with its narrowings summed up on stderr unless --quiet; a bound
 * of the walk passed refuses the launch (74) naming the rule. */
static void test_walk(void **state_)
{
	(void)state_;
	char pol[256], pk[256], marker[256], text[1024];
	snprintf(pol, sizeof(pol), "%s/walk.toml", tmp);
	snprintf(pk, sizeof(pk), "%s/walk.bpfpack", tmp);
	snprintf(marker, sizeof(marker), "%s/out/ran", proj);
	snprintf(text, sizeof(text),
		 "version = 1\nname = \"walk\"\n[fs]\nread = [\"/usr/**\"]\nwrite = [\"%s/out/**\"]\n"
		 "deny = [\"/usr/share/secret/**\"]\n[exec]\nallow = [\"/usr/bin/touch\", "
		 "\"/usr/lib/x86_64-linux-gnu/**\"]\n",
		 proj);
	assert_int_equal(bee_write_atomic(pol, text, strlen(text)), 0);
	assert_int_equal(compile(pol, pk), 0);
	struct run r;
	/* control: it runs, and says what it narrows */
	unlink(marker);
	const char *ok[] = { RUN_ARGS(BEE_BUILD_DIR "/bee-load"), pk, "--", "/usr/bin/touch", marker, NULL };
	run(&r, ok, NULL, 60000);
	if (r.status)
		fprintf(stderr, "walk: %s", r.err);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.err, "bee-load: landlock: "));
	assert_non_null(strstr(r.err, "bee-load plan lists them"));
	assert_int_equal(access(marker, F_OK), 0);
	run_fini(&r);
	/* --quiet: the same without the line */
	unlink(marker);
	const char *quiet[] = { RUN_ARGS(BEE_BUILD_DIR "/bee-load"), "--quiet", pk, "--", "/usr/bin/touch", marker,
				NULL };
	run(&r, quiet, NULL, 60000);
	assert_int_equal(r.status, 0);
	assert_null(strstr(r.err, "bee-load: landlock: "));
	assert_int_equal(access(marker, F_OK), 0);
	run_fini(&r);
	/* a bound passed: refused, the rule named, nothing ran */
	unlink(marker);
	const char *bound[] = { RUN_ARGS(BEE_BUILD_DIR "/bee-load"), "--walk-entries", "10", pk, "--",
				"/usr/bin/touch", marker, NULL };
	run(&r, bound, NULL, 60000);
	assert_int_equal(r.status, 74);
	assert_non_null(strstr(r.err, "bee-load: landlock: policy 'walk': rule 0 'fs.read /usr/**' (line 4): "
				      "the walk passed its bound of entries at '/usr"));
	assert_int_equal(access(marker, F_OK), -1);
	run_fini(&r);
	assert_clean();
}

/* Grants on /proc and cgroup2 reach the session's own mounts of them
 * (init mounts both anew: their rules are added in the tool, so that
 * /proc/self is the tool's); what they do not grant stays refused. */
static void test_session_mounts(void **state_)
{
	(void)state_;
	char pol[256], pk[256], mnt[256], root[256], cg[600];
	assert_int_equal(bee_cgroup2_mount(mnt, sizeof(mnt), root, sizeof(root)), 0);
	snprintf(pol, sizeof(pol), "%s/procgrant.toml", tmp);
	snprintf(pk, sizeof(pk), "%s/procgrant.bpfpack", tmp);
	char text[1024];
	snprintf(text, sizeof(text),
		 "version = 1\nname = \"procgrant\"\n[fs]\nread = [\"/usr/**\", \"/etc/ld.so.cache\", \"%s/**\", "
		 "\"/proc/self/**\", \"%s/**\"]\n[exec]\nallow = [\"/usr/bin/{sh,dash}\", "
		 "\"/usr/lib/x86_64-linux-gnu/**\", \"%s/bin/**\"]\n",
		 proj, mnt, proj);
	assert_int_equal(bee_write_atomic(pol, text, strlen(text)), 0);
	assert_int_equal(compile(pol, pk), 0);
	/* in the session's cgroup namespace, the mount's root is the session's cgroup */
	snprintf(cg, sizeof(cg), "%s/cgroup.procs", mnt);
	char script[1024];
	/* the shell reads /proc/self itself: it is the tool, whose entry the
	 * rule names (a child of it has an entry of its own) */
	snprintf(script, sizeof(script),
		 "P=%s; if read l </proc/self/status; then echo ok; else echo no; fi; $P read /proc/1/status; "
		 "$P read %s", probe, cg);
	const char *argv[] = { RUN_ARGS(BEE_BUILD_DIR "/bee-load"), pk, "--", "/usr/bin/sh", "-c", script, NULL };
	struct run r;
	run(&r, argv, NULL, 20000);
	if (r.status)
		fprintf(stderr, "%s%s", r.out, r.err);
	assert_int_equal(r.status, 0);
	/* the session's cgroup.procs; not init's /proc entry, and not its own
	 * either: /proc/self is a symlink, and a grant through a symlink's
	 * name grants nothing (the kernel resolves it to /proc/PID, which no
	 * rule names: so bpf-lsm decides too; docs/bee-load.md, "symlink") */
	assert_string_equal(r.out, "no\nEACCES\nok\n");
	run_fini(&r);
	assert_clean();
}

/* ---- teardown on every path -------------------------------------------------------------- */

static void test_teardown_signals(void **state_)
{
	(void)state_;
	struct run r;
	/* the tool killed by a signal: 128 + 9 */
	const char *a1[] = { RUN_ARGS(BEE_BUILD_DIR "/bee-load"), pack, "--", "/usr/bin/sh", "-c", "kill -9 $$", NULL };
	run(&r, a1, NULL, 20000);
	assert_int_equal(r.status, 137);
	run_fini(&r);
	assert_clean();
	/* the tool's own status */
	const char *a2[] = { RUN_ARGS(BEE_BUILD_DIR "/bee-load"), pack, "--", "/usr/bin/sh", "-c", "exit 3", NULL };
	run(&r, a2, NULL, 20000);
	assert_int_equal(r.status, 3);
	run_fini(&r);
	assert_clean();
	/* SIGTERM and SIGINT to bee-load: forwarded, torn down, 128 + the signal */
	static const int sigs[] = { SIGTERM, SIGINT };
	for (size_t i = 0; i < 2; i++) {
		const char *a3[] = { RUN_ARGS(BEE_BUILD_DIR "/bee-load"), pack, "--", "/usr/bin/sleep", "30", NULL };
		struct job j = start(a3, NULL);
		struct bee_registry_entry e;
		wait_session(&e);
		assert_int_equal(e.pid, j.pid);
		assert_int_equal(kill(j.pid, sigs[i]), 0);
		finish(&j, &r, 10000);
		assert_int_equal(r.status, 128 + sigs[i]);
		assert_true(process_gone(e.tool_pid));
		bee_registry_entry_fini(&e);
		run_fini(&r);
		assert_clean();
	}
}

/* ---- the process tree: user, pid namespace, seccomp ------------------------------------------ */

/* A uid and gid no passwd or group entry names (SUDO_UID and UID:GID rows). */
static void unnamed_ids(unsigned *uid, unsigned *gid)
{
	for (*uid = 42420; getpwuid(*uid); (*uid)++)
		;
	for (*gid = 43430; getgrgid(*gid); (*gid)++)
		;
}

static void test_user(void **state_)
{
	(void)state_;
	unsigned uid, gid;
	unnamed_ids(&uid, &gid);
	char spec[64], sudo_uid[64], sudo_gid[64], want_sudo[128], want_spec[128];
	snprintf(spec, sizeof(spec), "%u:%u", uid, gid);
	snprintf(sudo_uid, sizeof(sudo_uid), "SUDO_UID=%u", uid);
	snprintf(sudo_gid, sizeof(sudo_gid), "SUDO_GID=%u", gid);
	snprintf(want_sudo, sizeof(want_sudo), "uid=%u,%u,%u gid=%u,%u,%u groups=%u\n", uid, uid, uid, gid, gid, gid, gid);
	snprintf(want_spec, sizeof(want_spec), "%s", want_sudo);
	static const char nobody[] = "uid=65534,65534,65534 gid=65534,65534,65534 groups=65534\n";
	struct {
		const char *what, *user, *env, *want, *err;
	} rows[] = {
		{ "default: nobody", NULL, NULL, nobody, NULL },
		{ "SUDO_UID and SUDO_GID", NULL, sudo_uid, want_sudo, NULL },
		{ "SUDO_UID=0 is not asked for: nobody", NULL, "SUDO_UID=0", nobody, NULL },
		{ "--user UID:GID", spec, NULL, want_spec, NULL },
		{ "--user wins over SUDO_UID", "nobody", sudo_uid, nobody, NULL },
		{ "--user root", "root", NULL, "uid=0,0,0 gid=0,0,0 groups=",
		  "bee-load: --user root: the tool runs as uid 0: it owns every root-owned file" },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const char *with[] = { RUN_ARGS(BEE_BUILD_DIR "/bee-load"), "--user", rows[i].user, pack, "--", probe, "ids",
				       NULL };
		const char *without[] = { RUN_ARGS(BEE_BUILD_DIR "/bee-load"), pack, "--", probe, "ids", NULL };
		const char *const *argv = rows[i].user ? with : without;
		const char *env[] = { rows[i].env, rows[i].env == sudo_uid ? sudo_gid : NULL, NULL };
		struct run r;
		run(&r, argv, env, 20000);
		if (r.status || strncmp(r.out, rows[i].want, strlen(rows[i].want)) != 0)
			fprintf(stderr, "%s: status %d: %s%s", rows[i].what, r.status, r.out, r.err);
		assert_int_equal(r.status, 0);
		assert_int_equal(strncmp(r.out, rows[i].want, strlen(rows[i].want)), 0);
		if (rows[i].err)
			assert_non_null(strstr(r.err, rows[i].err));
		else
			assert_null(strstr(r.err, "uid 0"));
		run_fini(&r);
		assert_clean();
	}
}

/* The tool is pid 2 of a pid namespace of its own below init (pid 1):
 * those two are all a signal finds, bee-load's pid names nothing there (ESRCH, even
 * for a tool running as root), and a session process can be signalled
 * (the control). */
static void test_pid_namespace(void **state_)
{
	(void)state_;
	struct run r;
	const char *a1[] = { RUN_ARGS(BEE_BUILD_DIR "/bee-load"), pack, "--", probe, "pids", NULL };
	run(&r, a1, NULL, 20000);
	assert_int_equal(r.status, 0);
	/* init and the tool; /proc is the session's own (mountns.c), which the
	 * policy does not grant */
	assert_string_equal(r.out, "pid=2 ppid=1 procs=-1 alive=2\n");
	run_fini(&r);
	assert_clean();

	/* bee-load's pid (written once it runs) and this process's, both outside */
	char pidfile[256], script[1024], env_pid[64], text[32];
	snprintf(pidfile, sizeof(pidfile), "%s/out/launcher.pid", proj);
	snprintf(script, sizeof(script),
		 "P=%s; $P wait %s 10 >/dev/null; L=$(/usr/bin/cat %s); $P kill $L; $P kill $L 9; $P kill $DEMO_PID 9; "
		 "$P kill $$ 0",
		 probe, pidfile, pidfile);
	snprintf(env_pid, sizeof(env_pid), "DEMO_PID=%d", (int)getpid());
	const char *a2[] = { RUN_ARGS(BEE_BUILD_DIR "/bee-load"), "--user", "root", pack, "--", "/usr/bin/sh", "-c", script,
			     NULL };
	const char *env[] = { env_pid, NULL };
	struct job j = start(a2, env);
	snprintf(text, sizeof(text), "%d", (int)j.pid);
	assert_int_equal(bee_write_atomic(pidfile, text, strlen(text)), 0);
	assert_int_equal(chmod(pidfile, 0644), 0);
	finish(&j, &r, 20000);
	if (r.status)
		fprintf(stderr, "%s%s", r.out, r.err);
	assert_int_equal(r.status, 0);
	/* the control outside: both are there, and root may signal them */
	assert_int_equal(kill(getpid(), 0), 0);
	assert_string_equal(r.out, "ESRCH\nESRCH\nESRCH\nok\n");
	unlink(pidfile);
	run_fini(&r);
	assert_clean();
}

static int64_t now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* run's session ends with its tool: alone, init leaves by itself (the
 * control), and with a child of the tool left, bee-load's kill of the
 * cgroup ends it; either way run gives the tool's status at once and
 * leaves nothing */
static void test_tool_end(void **state_)
{
	(void)state_;
	const char *scripts[] = { "exit 5", "/usr/bin/sleep 30 & exit 5" };
	for (size_t i = 0; i < 2; i++) {
		struct run r;
		const char *a[] = { RUN_ARGS(BEE_BUILD_DIR "/bee-load"), pack, "--", "/usr/bin/sh", "-c", scripts[i],
				    NULL };
		int64_t t0 = now_ms();
		run(&r, a, NULL, 20000);
		int64_t ms = now_ms() - t0;
		if (r.status != 5)
			fprintf(stderr, "%s%s", r.out, r.err);
		assert_int_equal(r.status, 5);
		assert_true(ms < 10000);
		run_fini(&r);
		assert_clean();
	}
}

struct mnt_seen {
	const char *want;
	int n, found;
};

static int mnt_count(const char *mnt, const char *fstype, void *ctx)
{
	struct mnt_seen *m = ctx;
	(void)fstype;
	m->n++;
	m->found += strcmp(mnt, m->want) == 0;
	return 0;
}

/* The mount table is read once per process and again only when it
 * changed (sysinfo.c): in a child of its own mount namespace (the host's
 * table untouched), a mount made after a first reading is in the next,
 * and a reading with nothing changed gives the same table (the control);
 * the child, a fork of a process that had read it, reads its own. */
static void test_mount_table(void **state_)
{
	(void)state_;
	char dir[256];
	snprintf(dir, sizeof(dir), "%s/mnt-table", tmp);
	assert_int_equal(mkdir(dir, 0700), 0);
	struct mnt_seen first = { .want = dir };
	assert_int_equal(bee_mountinfo_each(NULL, mnt_count, &first), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct mnt_seen a = { .want = dir }, b = { .want = dir }, c = { .want = dir };
		if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
		    bee_mountinfo_each(NULL, mnt_count, &a) != 0 || bee_mountinfo_each(NULL, mnt_count, &b) != 0)
			_exit(10);
		if (a.n != first.n || a.found || b.n != a.n || b.found)
			_exit(11);
		if (mount("tmpfs", dir, "tmpfs", 0, "size=4k") < 0 || bee_mountinfo_each(NULL, mnt_count, &c) != 0)
			_exit(12);
		_exit(c.n == a.n + 1 && c.found == 1 ? 0 : 13);
	}
	assert_int_equal(wait_status(pid, 10000), 0);
	struct mnt_seen after = { .want = dir };
	assert_int_equal(bee_mountinfo_each(NULL, mnt_count, &after), 0);
	assert_int_equal(after.n, first.n);
	assert_int_equal(after.found, 0);
	assert_int_equal(rmdir(dir), 0);
}

/* Runs sh -c script as nobody outside any session: the control of the
 * seccomp rows (what the same calls give without the filter). */
static void run_nobody(struct run *r, const char *script)
{
	char out[256];
	snprintf(out, sizeof(out), "%s/nobody.out", tmp);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fo = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		gid_t g = NOBODY;
		if (fo < 0 || dup2(fo, 1) < 0 || setgroups(1, &g) < 0 || setresgid(NOBODY, NOBODY, NOBODY) < 0 ||
		    setresuid(NOBODY, NOBODY, NOBODY) < 0)
			_exit(98);
		execl("/usr/bin/sh", "sh", "-c", script, (char *)NULL);
		_exit(99);
	}
	r->status = wait_status(pid, 20000);
	r->out = slurp(out);
	r->err = strdup("");
	unlink(out);
}

static void test_seccomp(void **state_)
{
	(void)state_;
	static const struct {
		const char *call, *inside;
		bool refused;          /* a refusal: the control outside gives something else */
	} rows[] = {
		{ "bpf", "EPERM", true },
		{ "perf_event_open", "EPERM", true },
		{ "personality 400000", "EPERM", true },      /* READ_IMPLIES_EXEC */
		{ "personality 0040000", "EPERM", true },     /* ADDR_NO_RANDOMIZE */
		{ "socket 40", "EPERM", true },               /* AF_VSOCK */
		{ "socket 16", "EPERM", true },               /* AF_NETLINK */
		{ "socketpair 16", "EPERM", true },
		{ "unshare 10000000", "EPERM", true },        /* CLONE_NEWUSER */
		{ "unshare 10020000", "EPERM", true },        /* CLONE_NEWUSER | CLONE_NEWNS */
		{ "clone 10000000", "EPERM", true },
		{ "clone3", "ENOSYS", true },
		{ "io_uring_setup", "EPERM", true },
		{ "keyctl", "EPERM", true },
		/* controls inside: what every tool needs stays */
		{ "personality ffffffff", "ok", false },      /* the query */
		{ "personality 0", "ok", false },
		{ "socket 1", "ok", false },
		{ "socket 2", "ok", false },
		{ "socket 10", "ok", false },
		{ "socketpair 1", "ok", false },
		{ "unshare 0", "ok", false },
		{ "clone 0", "ok", false },                   /* fork */
	};
	char script[8192] = "";
	size_t off = 0;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		off += (size_t)snprintf(script + off, sizeof(script) - off, "%s sys %s; ", probe, rows[i].call);
	struct run in, out;
	/* as root too: the filter, not the missing capabilities, refuses.
	 * Pass 0 builds the filter and keeps it in the state directory, pass
	 * 1 reads it back; before pass 2 a filter that lets everything
	 * through is planted in its place, writable by anyone: bee-load must
	 * not take it, and writes its own again. */
	for (int pass = 0; pass < 3; pass++) {
		bool as_root = pass == 1;
		char cache[512] = "";
		DIR *d = opendir(state);   /* made by the first session */
		assert_true(d || pass == 0);
		for (struct dirent *de; d && (de = readdir(d));)
			if (strncmp(de->d_name, "seccomp-", 8) == 0)
				snprintf(cache, sizeof(cache), "%s/%s", state, de->d_name);
		if (d)
			closedir(d);
		struct stat cs;
		if (pass > 0) {
			assert_true(cache[0]);
			assert_int_equal(stat(cache, &cs), 0);
			assert_int_equal(cs.st_mode & 0777, 0600);
			assert_int_equal(cs.st_uid, 0);
			assert_int_equal(cs.st_size % 8, 0);
		}
		if (pass == 2) {
			const unsigned char allow[8] = { 0x06, 0, 0, 0, 0, 0, 0xff, 0x7f };   /* RET ALLOW */
			int fd = open(cache, O_WRONLY | O_TRUNC);
			assert_true(fd >= 0);
			assert_int_equal(write(fd, allow, sizeof(allow)), (ssize_t)sizeof(allow));
			close(fd);
			assert_int_equal(chmod(cache, 0666), 0);
		}
		const char *argv[] = { RUN_ARGS(BEE_BUILD_DIR "/bee-load"), "--user", as_root ? "root" : "nobody", pack, "--",
				       "/usr/bin/sh", "-c", script, NULL };
		run(&in, argv, NULL, 20000);
		if (pass == 2) {
			assert_int_equal(stat(cache, &cs), 0);
			assert_int_equal(cs.st_mode & 0777, 0600);
			assert_true(cs.st_size > 8);
		}
		assert_int_equal(in.status, 0);
		run_nobody(&out, script);
		assert_int_equal(out.status, 0);
		char *li = in.out, *lo = out.out;
		for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
			char *ni = strchr(li, '\n'), *no = strchr(lo, '\n');
			assert_non_null(ni);
			assert_non_null(no);
			*ni = *no = '\0';
			if (strcmp(li, rows[i].inside) != 0 || (rows[i].refused && strcmp(lo, rows[i].inside) == 0))
				fprintf(stderr, "sys %s: inside %s (want %s), outside %s\n", rows[i].call, li,
					rows[i].inside, lo);
			assert_string_equal(li, rows[i].inside);
			if (rows[i].refused)
				assert_string_not_equal(lo, rows[i].inside);
			li = ni + 1;
			lo = no + 1;
		}
		run_fini(&in);
		run_fini(&out);
		assert_clean();
	}
}

/* A signal to bee-load reaches the tool through init; bee-load still
 * exits 128 + 15. */
static void test_signal_forwarded(void **state_)
{
	(void)state_;
	char marker[256], script[1024];
	snprintf(marker, sizeof(marker), "%s/out/got-term", proj);
	unlink(marker);
	snprintf(script, sizeof(script), "trap '/usr/bin/touch %s; exit 7' TERM; /usr/bin/touch %s.up; "
		 "while :; do /usr/bin/sleep 0.05; done", marker, marker);
	const char *argv[] = { RUN_ARGS(BEE_BUILD_DIR "/bee-load"), pack, "--", "/usr/bin/sh", "-c", script, NULL };
	struct job j = start(argv, NULL);
	struct bee_registry_entry e;
	wait_session(&e);
	char up[300];
	snprintf(up, sizeof(up), "%s.up", marker);
	for (int i = 0; i < 500 && access(up, F_OK) < 0; i++)
		usleep(10000);
	assert_int_equal(access(up, F_OK), 0);
	assert_int_equal(kill(j.pid, SIGTERM), 0);
	struct run r;
	finish(&j, &r, 10000);
	assert_int_equal(r.status, 128 + SIGTERM);
	assert_int_equal(access(marker, F_OK), 0);   /* the tool's trap ran */
	assert_true(process_gone(e.tool_pid));
	unlink(marker);
	unlink(up);
	bee_registry_entry_fini(&e);
	run_fini(&r);
	assert_clean();
}

/* pid's pid namespace is not this process's (a session of the launch's
 * init runs in one) */
static bool own_pid_ns(pid_t pid)
{
	char p[64];
	struct stat a, b;
	snprintf(p, sizeof(p), "/proc/%d/ns/pid", (int)pid);
	return stat(p, &a) == 0 && stat("/proc/self/ns/pid", &b) == 0 && a.st_ino != b.st_ino;
}

/* kill -9 of bee-load: a tool that forked a grandchild is gone (at once
 * when the session has its own pid namespace, the launch's init dying
 * with bee-load; else by gc's cgroup.kill), gc says per session that its
 * launcher died and writes that in its audit log, and nothing is left */
static void test_gc(void **state_)
{
	(void)state_;
	char audit[256], gpid[256], script[600];
	snprintf(audit, sizeof(audit), "%s/gc.jsonl", tmp);
	snprintf(gpid, sizeof(gpid), "%s/out/grandchild", proj);
	unlink(audit);
	unlink(gpid);
	snprintf(script, sizeof(script), "/usr/bin/sleep 30 & echo $! > %s; exec /usr/bin/sleep 30", gpid);
	const char *argv[] = { RUN_ARGS(BEE_BUILD_DIR "/bee-load"), "--audit-log", audit, pack, "--",
			       "/usr/bin/sh", "-c", script, NULL };
	struct job j = start(argv, NULL);
	struct bee_registry_entry e;
	wait_session(&e);
	char *g = NULL;
	for (int i = 0; i < 200 && (!g || !*g); i++) {
		free(g);
		g = slurp(gpid);
		usleep(10000);
	}
	/* the pids are the launcher's view: the registry's, and the shell's
	 * $! (in a pid namespace of the session's own, that is not ours) */
	bool ns = own_pid_ns(e.tool_pid);
	pid_t grandchild = ns ? 0 : (pid_t)atoi(g);
	free(g);
	assert_true(ns || grandchild > 0);
	assert_false(process_gone(e.tool_pid));
	assert_int_equal(kill(j.pid, SIGKILL), 0);
	waitpid(j.pid, NULL, 0);
	if (ns) {
		/* init dies with bee-load, and the kernel kills the namespace */
		int ms = 0;
		while (bee_cgroup_populated(e.cgroup) > 0 && ms < 1000) {
			usleep(10000);
			ms += 10;
		}
		assert_int_equal(bee_cgroup_populated(e.cgroup), 0);
		fprintf(stderr, "test_gc: the session's processes were gone %d ms after kill -9 of bee-load\n", ms);
	} else {
		fprintf(stderr, "test_gc: the session has no pid namespace of its own (no init): its processes end "
				"at gc\n");
	}
	/* what it left: the record, the pins, the cgroup */
	assert_int_equal(access(e.cgroup, F_OK), 0);
	assert_int_equal(access(e.bpffs, F_OK), 0);
	struct run r;
	const char *ls[] = { BEE_BUILD_DIR "/bee-load", "ls", "--state-dir", state, NULL };
	run(&r, ls, NULL, 10000);
	assert_non_null(strstr(r.out, e.id));
	assert_non_null(strstr(r.out, "stale"));
	run_fini(&r);
	const char *gc[] = { BEE_BUILD_DIR "/bee-load", "gc", "--state-dir", state, NULL };
	run(&r, gc, NULL, 10000);
	assert_int_equal(r.status, 0);
	char want[1024];
	snprintf(want, sizeof(want),
		 "gc: session %s (policy 'sandbox-demo'): its launcher, bee-load pid %d, died; its audit may be "
		 "incomplete (recorded in '%s')\ngc: removed 1 stale session\n",
		 e.id, (int)j.pid, audit);
	assert_string_equal(r.out, want);
	run_fini(&r);
	assert_true(process_gone(e.tool_pid));
	if (grandchild > 0)
		assert_true(process_gone(grandchild));
	assert_int_equal(access(e.cgroup, F_OK), -1);
	bee_registry_entry_fini(&e);
	assert_clean();
	size_t n;
	char **v = audit_lines(audit, &n, false);
	assert_int_equal(count_record(v, n, "Process", "Read", BEE_AUDIT_LAUNCHER_LOST, "Deny"), 1);
	lines_free(v, n);
	/* a second gc finds nothing and says so */
	run(&r, gc, NULL, 10000);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "gc: removed 0 stale sessions\n");
	run_fini(&r);

	/* the next run cleans a stale session too */
	const char *sleeper[] = { RUN_ARGS(BEE_BUILD_DIR "/bee-load"), pack, "--", "/usr/bin/sleep", "30", NULL };
	j = start(sleeper, NULL);
	wait_session(&e);
	kill(j.pid, SIGKILL);
	waitpid(j.pid, NULL, 0);
	const char *again[] = { RUN_ARGS(BEE_BUILD_DIR "/bee-load"), pack, "--", "/usr/bin/true", NULL };
	run(&r, again, NULL, 20000);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.err, e.id));
	run_fini(&r);
	bee_registry_entry_fini(&e);
	assert_clean();
}

/* Records not yet read in each of a load's rings (the pool, pins
 * DIR/rings/N): what its producer wrote past its consumer, summed. */
static uint64_t rings_unread(const char *dir)
{
	char path[4400];
	uint64_t sum = 0;
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	for (int n = 0;; n++) {
		snprintf(path, sizeof(path), "%s/rings/%d", dir, n);
		int fd = bpf_obj_get(path);
		if (fd < 0)
			break;
		uint64_t *cons = mmap(NULL, pg, PROT_READ, MAP_SHARED, fd, 0);
		uint64_t *prod = mmap(NULL, pg, PROT_READ, MAP_SHARED, fd, (off_t)pg);
		assert_true(cons != MAP_FAILED && prod != MAP_FAILED);
		sum += __atomic_load_n(prod, __ATOMIC_ACQUIRE) - __atomic_load_n(cons, __ATOMIC_ACQUIRE);
		munmap(cons, pg);
		munmap(prod, pg);
		close(fd);
	}
	return sum;
}

/* A session that died with records in its ring (its bee-load stopped,
 * then killed): gc collects it, and the next session, given the same
 * ring, drops them unread: its audit log holds none of the dead one's.
 * The control: the records were there, unread, before it. */
static void test_ring_leftovers(void **state_)
{
	(void)state_;
	char audit[2][256], go[256], done[256], script[1024], no[16], res[64];
	snprintf(no, sizeof(no), "%d", port_no);
	snprintf(res, sizeof(res), "127.0.0.1:%d", port_no);
	snprintf(go, sizeof(go), "%s/out/go-ring", proj);
	snprintf(done, sizeof(done), "%s/out/done-ring", proj);
	unlink(go);
	unlink(done);
	for (int i = 0; i < 2; i++) {
		snprintf(audit[i], sizeof(audit[i]), "%s/ring%d.jsonl", tmp, i);
		unlink(audit[i]);
	}
	snprintf(script, sizeof(script),
		 "P=%s; $P wait %s 20; for i in 1 2 3 4 5 6 7 8; do $P connect 127.0.0.1 %s; done; : > %s; "
		 "exec /usr/bin/sleep 30", probe, go, no, done);
	const char *first[] = { RUN_ARGS(BEE_BUILD_DIR "/bee-load"), "--audit-log", audit[0], pack, "--",
				"/usr/bin/sh", "-c", script, NULL };
	struct job j = start(first, NULL);
	struct bee_registry_entry e;
	wait_session(&e);
	/* its bee-load stopped, the tool's denials stay in the ring */
	assert_int_equal(kill(j.pid, SIGSTOP), 0);
	assert_int_equal(bee_write_atomic(go, "", 0), 0);
	for (int i = 0; i < 500 && access(done, F_OK) < 0; i++)
		usleep(10000);
	assert_int_equal(access(done, F_OK), 0);
	assert_int_equal(kill(j.pid, SIGKILL), 0);
	waitpid(j.pid, NULL, 0);
	struct run r;
	const char *gc[] = { BEE_BUILD_DIR "/bee-load", "gc", "--state-dir", state, NULL };
	run(&r, gc, NULL, 10000);
	assert_int_equal(r.status, 0);
	run_fini(&r);
	assert_true(rings_unread(e.cache) > 0);
	/* the next session: its own log, none of the dead one's records */
	const char *next[] = { RUN_ARGS(BEE_BUILD_DIR "/bee-load"), "--audit-log", audit[1], pack, "--",
			       "/usr/bin/true", NULL };
	run(&r, next, NULL, 20000);
	assert_int_equal(r.status, 0);
	run_fini(&r);
	assert_int_equal(rings_unread(e.cache), 0);
	size_t n;
	char **v = audit_lines(audit[1], &n, false);
	assert_int_equal(count_record(v, n, "Network", "Connect", res, "Deny"), 0);
	lines_free(v, n);
	bee_registry_entry_fini(&e);
	unlink(go);
	unlink(done);
	assert_clean();
}

/* ---- bee's objects on disk ------------------------------------------------------------------ */

static unsigned mode_of(const char *path)
{
	struct stat st;
	assert_int_equal(lstat(path, &st), 0);
	assert_int_equal(st.st_uid, 0);
	return st.st_mode & 07777;
}

/* bee-load run --state-dir SD PK -- touch MARKER: status and stderr */
static void run_state(const char *sd, int want, const char *want_err, const char *marker)
{
	const char *argv[] = { BEE_BUILD_DIR "/bee-load", "run", "--backend", "landlock", "--bpffs", bpffs,
			       "--state-dir", sd, pack, "--", "/usr/bin/touch", marker, NULL };
	struct run r;
	unlink(marker);
	run(&r, argv, NULL, 20000);
	if (r.status != want || !strstr(r.err, want_err))
		fprintf(stderr, "state dir '%s': status %d, expected %d with '%s':\n%s", sd, r.status, want, want_err,
			r.err);
	assert_int_equal(r.status, want);
	assert_non_null(strstr(r.err, want_err));
	assert_int_equal(access(marker, F_OK), want ? -1 : 0);
	run_fini(&r);
	unlink(marker);
}

/* root-owned, 0700 and 0600: the state directory and what is in it, the
 * pin folder, the audit log; a state directory or an audit log someone
 * else could have planted is refused (each with a control that runs) */
static void test_objects(void **state_)
{
	(void)state_;
	char audit[256], p[512], marker[256], sd[256];
	snprintf(audit, sizeof(audit), "%s/objects.jsonl", tmp);
	snprintf(marker, sizeof(marker), "%s/out/ran", proj);
	unlink(audit);
	const char *argv[] = { RUN_ARGS(BEE_BUILD_DIR "/bee-load"), "--audit-log", audit, pack, "--",
			       "/usr/bin/sleep", "30", NULL };
	struct job j = start(argv, NULL);
	struct bee_registry_entry e;
	wait_session(&e);
	assert_int_equal(mode_of(state), 0700);
	snprintf(p, sizeof(p), "%s/sessions", state);
	assert_int_equal(mode_of(p), 0700);
	snprintf(p, sizeof(p), "%s/sessions/%s.json", state, e.id);
	assert_int_equal(mode_of(p), 0600);
	assert_int_equal(mode_of(e.pack), 0600);
	snprintf(p, sizeof(p), "%s/lock", state);
	assert_int_equal(mode_of(p), 0600);
	/* the pin folder opens to no mode bit at all (bpf_load.c), its parent 0700 */
	assert_int_equal(mode_of(e.bpffs), 0);
	snprintf(p, sizeof(p), "%s/bee", bpffs);
	assert_int_equal(mode_of(p), 0700);
	assert_int_equal(mode_of(audit), 0600);
	bee_registry_entry_fini(&e);
	kill(j.pid, SIGTERM);
	struct run r;
	finish(&j, &r, 10000);
	run_fini(&r);
	assert_clean();

	/* state directories: the control runs, then the refusals */
	snprintf(sd, sizeof(sd), "%s/state2", tmp);
	run_state(sd, 0, "", marker);
	assert_int_equal(mode_of(sd), 0700);
	assert_int_equal(chmod(sd, 0755), 0);   /* readable by others: made 0700 */
	run_state(sd, 0, "", marker);
	assert_int_equal(mode_of(sd), 0700);
	assert_int_equal(chmod(sd, 0777), 0);
	snprintf(p, sizeof(p), "bee-load: registry: state directory '%s' is writable by group or others (mode 0777): "
			       "refusing it", sd);
	run_state(sd, 67, p, marker);
	assert_int_equal(chmod(sd, 0700), 0);
	assert_int_equal(chown(sd, 65534, 65534), 0);
	snprintf(p, sizeof(p), "bee-load: registry: state directory '%s' is owned by uid 65534, not by bee-load's "
			       "uid 0: refusing it", sd);
	run_state(sd, 67, p, marker);
	const char *gc[] = { BEE_BUILD_DIR "/bee-load", "gc", "--state-dir", sd, NULL };
	run(&r, gc, NULL, 10000);
	assert_int_equal(r.status, 67);
	assert_non_null(strstr(r.err, p));
	run_fini(&r);
	snprintf(p, sizeof(p), "%s/state-link", tmp);
	assert_int_equal(symlink(state, p), 0);
	run_state(p, 67, "(a symbolic link?)", marker);

	/* audit logs: an existing one of root's is appended to (the control),
	 * a planted link, another user's file, a second hard link and a FIFO
	 * are refused before the tool runs */
	const char *touch[] = { "/usr/bin/touch", marker, NULL };
	snprintf(p, sizeof(p), "%s/planted", tmp);
	assert_int_equal(bee_write_atomic(p, "x\n", 2), 0);
	char lnk[256];
	snprintf(lnk, sizeof(lnk), "%s/audit-link.jsonl", tmp);
	assert_int_equal(symlink(p, lnk), 0);
	run_row("symlink", pack, lnk, touch, 68, "cannot open for appending: it is a symbolic link", marker, false);
	snprintf(lnk, sizeof(lnk), "%s/audit-hard.jsonl", tmp);
	assert_int_equal(link(p, lnk), 0);
	run_row("hard link", pack, lnk, touch, 68, "cannot open for appending: it has 2 hard links", marker, false);
	unlink(lnk);
	assert_int_equal(chown(p, 65534, 65534), 0);
	run_row("owner", pack, p, touch, 68, "it is owned by uid 65534, neither root nor the invoking user", marker,
		false);
	snprintf(lnk, sizeof(lnk), "%s/audit-fifo", tmp);
	assert_int_equal(mkfifo(lnk, 0600), 0);
	run_row("fifo", pack, lnk, touch, 68, "cannot open for appending: it is not a regular file", marker, false);
	char *before_text = slurp(audit);
	run_row("control", pack, audit, touch, 0, "", marker, true);
	char *after_text = slurp(audit);
	assert_int_equal(strncmp(before_text, after_text, strlen(before_text)), 0);
	free(before_text);
	free(after_text);
	assert_int_equal(mode_of(audit), 0600);
}

/* ---- every failure class -------------------------------------------------------------------- */

static void test_failures(void **state_)
{
	(void)state_;
	char marker[256], audit[256], bad[256], f[64];
	snprintf(marker, sizeof(marker), "%s/out/ran", proj);
	snprintf(audit, sizeof(audit), "%s/fault.jsonl", tmp);
	static const struct {
		const char *stage;
		int status;
	} faults[] = {
		{ "pack", 66 }, { "gate", 65 }, { "registry", 67 }, { "audit", 68 }, { "cgroup", 69 },
		{ "load", 70 }, { "maps", 71 }, { "pin", 72 }, { "attach", 73 }, { "landlock", 74 },
		{ "launch", 75 }, { "nesting", 78 }, { "user", 79 }, { "namespace", 80 }, { "seccomp", 81 },
		{ "exec", 126 },
	};
	struct run r;
	for (size_t i = 0; i < sizeof(faults) / sizeof(faults[0]); i++) {
		snprintf(f, sizeof(f), "BEE_FAULT=%s", faults[i].stage);
		const char *env[] = { f, NULL };
		/* --quiet: the stage's message is the first line */
		const char *argv[] = { RUN_ARGS(BEE_BUILD_DIR "/bee-load-fault"), "--quiet", "--audit-log", audit, pack,
				       "--", "/usr/bin/touch", marker, NULL };
		run(&r, argv, env, 20000);
		if (r.status != faults[i].status)
			fprintf(stderr, "fault %s: %d %s", faults[i].stage, r.status, r.err);
		assert_int_equal(r.status, faults[i].status);
		char prefix[64];
		snprintf(prefix, sizeof(prefix), "bee-load: %s: ", faults[i].stage);
		assert_int_equal(strncmp(r.err, prefix, strlen(prefix)), 0);
		assert_int_equal(access(marker, F_OK), -1);
		run_fini(&r);
		assert_clean();
	}
	/* real failures: a corrupted pack, an audit log that cannot be written,
	 * a backend this host cannot give, commands that do not run */
	snprintf(bad, sizeof(bad), "%s/bad.bpfpack", tmp);
	char *bytes;
	size_t len;
	assert_int_equal(bee_read_file(pack, &bytes, &len), 0);
	bytes[len / 2] ^= 0x55;
	assert_int_equal(bee_write_atomic(bad, bytes, len), 0);
	free(bytes);
	char noaudit[256];
	snprintf(noaudit, sizeof(noaudit), "%s/no/such/dir/a.jsonl", tmp);
	static const struct {
		const char *what;
		int status;
		const char *err;
	} rows[] = {
		{ "pack", 66, "bee-load: pack: " },
		{ "audit", 68, "bee-load: audit: audit log '" },
		{ "auto", 65, "forbids the fallback to landlock (fallback = false)" },
		{ "missing", 127, "bee-load: exec: 'no-such-command': No such file or directory" },
		{ "denied", 126, "bee-load: exec: '/usr/bin/id': Permission denied" },
		{ "user", 79, "bee-load: user: --user 'no-such-user-bee': no such user" },
	};
	/* auto: the system's configuration forbids the fallback */
	char sysconf[200];
	snprintf(sysconf, sizeof(sysconf), "BEE_SYSCONFDIR=%s/cfg/nofallback", tmp);
	put_config("cfg/nofallback/bee/config.toml", "[bee-load]\nfallback = false\n");
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const char *w = rows[i].what;
		const char *p = strcmp(w, "pack") == 0 ? bad : pack;
		const char *backend = strcmp(w, "auto") == 0 ? "auto" : "landlock";
		const char *cmd = strcmp(w, "missing") == 0 ? "no-such-command" : strcmp(w, "denied") == 0 ? "/usr/bin/id" : "/usr/bin/touch";
		const char *user = strcmp(w, "user") == 0 ? "no-such-user-bee" : "nobody";
		const char *argv[] = { BEE_BUILD_DIR "/bee-load", "run", "--backend", backend, "--bpffs", bpffs, "--state-dir", state,
				       "--audit-log", strcmp(w, "audit") == 0 ? noaudit : audit, "--user", user, p, "--",
				       cmd, marker, NULL };
		const char *env[] = { "PATH=/usr/bin", strcmp(w, "auto") == 0 ? sysconf : NULL, NULL };
		run(&r, argv, env, 20000);
		if (r.status != rows[i].status || !strstr(r.err, rows[i].err))
			fprintf(stderr, "%s: %d %s", w, r.status, r.err);
		assert_int_equal(r.status, rows[i].status);
		assert_non_null(strstr(r.err, rows[i].err));
		assert_int_equal(access(marker, F_OK), -1);
		run_fini(&r);
		assert_clean();
	}
	/* an exec that Landlock refused is in the audit log too */
	size_t n;
	char **v = audit_lines(audit, &n, false);
	assert_int_equal(count_record(v, n, "Process", "Execute", "/usr/bin/id", "Deny"), 1);
	lines_free(v, n);
}

/* ---- hostile inputs ------------------------------------------------------------------------ */

/* A tmpfs of its own at dir (opts as mount(8)'s); removed by unmount_all. */
static char mounts[4][256];
static size_t nmounts;

static void mount_tmpfs(const char *dir, const char *opts)
{
	assert_int_equal(bee_mkdirs(dir, 0755), 0);
	assert_int_equal(mount("bee-test", dir, "tmpfs", 0, opts), 0);
	assert_true(nmounts < sizeof(mounts) / sizeof(mounts[0]));
	snprintf(mounts[nmounts++], sizeof(mounts[0]), "%s", dir);
}

static void unmount_all(void)
{
	while (nmounts)
		umount2(mounts[--nmounts], MNT_DETACH);
}

/* bee-load run [--audit-log A] PK -- CMD..., its status and stderr in r; the
 * marker must exist exactly when want_ran, and nothing may be left. */
static void run_row(const char *what, const char *pk, const char *audit, const char *const *cmd,
		    int want, const char *want_err, const char *marker, bool want_ran)
{
	const char *argv[64] = { RUN_ARGS(BEE_BUILD_DIR "/bee-load") };
	size_t n = 0;
	while (argv[n])
		n++;
	if (audit) {
		argv[n++] = "--audit-log";
		argv[n++] = audit;
	}
	argv[n++] = pk;
	argv[n++] = "--";
	for (; *cmd && n < 63; cmd++)
		argv[n++] = *cmd;
	argv[n] = NULL;
	const char *env[] = { "PATH=/usr/bin", NULL };
	struct run r;
	unlink(marker);
	run(&r, argv, env, 20000);
	if (r.status != want || !strstr(r.err, want_err))
		fprintf(stderr, "%s: status %d, expected %d with '%s':\n%s", what, r.status, want, want_err, r.err);
	assert_int_equal(r.status, want);
	assert_non_null(strstr(r.err, want_err));
	assert_int_equal(access(marker, F_OK), want_ran ? 0 : -1);
	run_fini(&r);
	unlink(marker);
	assert_clean();
}

/* A copy of the pack with one change: cut to len bytes, or with byte off
 * set to val. */
static void pack_variant(const char *out, size_t cut, size_t off, int val)
{
	char *bytes;
	size_t len;
	assert_int_equal(bee_read_file(pack, &bytes, &len), 0);
	if (val >= 0)
		bytes[off] = (char)val;
	assert_int_equal(bee_write_atomic(out, bytes, cut ? cut : len), 0);
	free(bytes);
}

static void test_hostile(void **state_)
{
	(void)state_;
	char marker[256], audit[256], pk[256], d[256];
	snprintf(marker, sizeof(marker), "%s/out/ran", proj);
	snprintf(audit, sizeof(audit), "%s/hostile.jsonl", tmp);
	const char *touch[] = { "/usr/bin/touch", marker, NULL };

	/* the control: this command runs and leaves its marker */
	run_row("control", pack, audit, touch, 0, "", marker, true);

	/* packs: truncated (at the header, in the sections), a foreign format version */
	snprintf(pk, sizeof(pk), "%s/cut.bpfpack", tmp);
	pack_variant(pk, 40, 0, -1);
	run_row("pack cut in its header", pk, audit, touch, 66, "bee-load: pack: ", marker, false);
	pack_variant(pk, 1000, 0, -1);
	run_row("pack cut in its sections", pk, audit, touch, 66, "bee-load: pack: ", marker, false);
	pack_variant(pk, 0, 8, 2);   /* header.version, little-endian: 2 */
	run_row("pack of format version 2", pk, audit, touch, 66, "format version 2 is not supported", marker, false);
	snprintf(pk, sizeof(pk), "%s/empty.bpfpack", tmp);
	assert_int_equal(bee_write_atomic(pk, "", 0), 0);
	run_row("empty pack", pk, audit, touch, 66, "bee-load: pack: ", marker, false);
	run_row("pack is a directory", tmp, audit, touch, 66, "bee-load: pack: ", marker, false);

	/* commands: a directory, a script without the execute bit */
	const char *dir_cmd[] = { "/usr/bin", marker, NULL };
	run_row("command is a directory", pack, audit, dir_cmd, 126, "bee-load: exec: '/usr/bin': Permission denied",
		marker, false);
	char script[256], body[512];
	snprintf(script, sizeof(script), "%s/bin/noexec.sh", proj);
	snprintf(body, sizeof(body), "#!/usr/bin/sh\n/usr/bin/touch '%s'\n", marker);
	assert_int_equal(bee_write_atomic(script, body, strlen(body)), 0);
	assert_int_equal(chmod(script, 0644), 0);
	const char *noexec[] = { script, NULL };
	run_row("command without the execute bit", pack, audit, noexec, 126, "Permission denied", marker, false);
	assert_int_equal(chmod(script, 0755), 0);
	run_row("the same command executable (control)", pack, audit, noexec, 0, "", marker, true);

	/* a command line that fits bee-load's execve but not the tool's: the
	 * policy's [env] set adds 256 KiB to the tool's environment */
	char policy[256], bigpack[256];
	snprintf(policy, sizeof(policy), "%s/bigenv.toml", tmp);
	snprintf(bigpack, sizeof(bigpack), "%s/bigenv.bpfpack", tmp);
	char *src;
	size_t slen;
	assert_int_equal(bee_read_file("policies/sandbox-demo.toml", &src, &slen), 0);
	size_t cap = slen + 64 * 4100 + 64;
	char *big = malloc(cap), *w = big;
	assert_non_null(big);
	char *set = strstr(src, "set = { DEMO_SANDBOX = \"1\" }");
	assert_non_null(set);
	w += sprintf(w, "%.*sset = { DEMO_SANDBOX = \"1\"", (int)(set - src), src);
	for (int i = 0; i < 64; i++) {
		w += sprintf(w, ", DEMO_BIG%d = \"", i);
		memset(w, 'x', 4000);
		w += 4000;
		*w++ = '"';
	}
	w += sprintf(w, " }%s", set + strlen("set = { DEMO_SANDBOX = \"1\" }"));
	assert_int_equal(bee_write_atomic(policy, big, (size_t)(w - big)), 0);
	free(big);
	free(src);
	assert_int_equal(compile(policy, bigpack), 0);
	long argmax = sysconf(_SC_ARG_MAX);
	assert_true(argmax > 512 * 1024);
	size_t nargs = (size_t)(argmax - 160 * 1024) / 100000;
	char **huge = calloc(nargs + 3, sizeof(char *));
	assert_non_null(huge);
	huge[0] = "/usr/bin/touch";
	huge[1] = marker;
	for (size_t i = 0; i < nargs; i++) {
		huge[2 + i] = malloc(100000);
		assert_non_null(huge[2 + i]);
		memset(huge[2 + i], 'a', 99999);
		huge[2 + i][99999] = '\0';
	}
	/* run_row takes up to 50 words: pass the command through a larger argv here */
	{
		const char *argv[64 + 64] = { RUN_ARGS(BEE_BUILD_DIR "/bee-load"), "--audit-log", audit, bigpack, "--" };
		size_t n = 0;
		while (argv[n])
			n++;
		for (size_t i = 0; huge[i]; i++)
			argv[n++] = huge[i];
		argv[n] = NULL;
		const char *env[] = { "PATH=/usr/bin", NULL };
		struct run r;
		run(&r, argv, env, 20000);
		if (r.status != 126)
			fprintf(stderr, "huge argv: %d %s", r.status, r.err);
		assert_int_equal(r.status, 126);
		assert_non_null(strstr(r.err, "bee-load: exec: '/usr/bin/touch': Argument list too long"));
		assert_int_equal(access(marker, F_OK), -1);
		run_fini(&r);
		assert_clean();
	}
	for (size_t i = 0; i < nargs; i++)
		free(huge[2 + i]);
	free(huge);
	run_row("the same pack, a short command line (control)", bigpack, audit, touch, 0, "", marker, true);

	/* audit logs that cannot be opened: refused before the tool runs */
	snprintf(d, sizeof(d), "%s/auditdir", tmp);
	mkdir(d, 0700);
	run_row("audit log is a directory", pack, d, touch, 68, "cannot open for appending: Is a directory", marker,
		false);
	snprintf(d, sizeof(d), "%s/ro", tmp);
	mount_tmpfs(d, "size=64k,mode=0755");
	assert_int_equal(mount(NULL, d, NULL, MS_REMOUNT | MS_RDONLY, NULL), 0);
	snprintf(d, sizeof(d), "%s/ro/a.jsonl", tmp);
	run_row("audit log on a read-only file system", pack, d, touch, 68,
		"cannot open for appending: Read-only file system", marker, false);
	snprintf(d, sizeof(d), "%s/noinode", tmp);
	mount_tmpfs(d, "size=64k,nr_inodes=1,mode=0755");
	snprintf(d, sizeof(d), "%s/noinode/a.jsonl", tmp);
	run_row("audit log on a file system without a free inode", pack, d, touch, 68,
		"cannot open for appending: No space left on device", marker, false);

	/* audit logs that fail once the tool runs: each lost record counted,
	 * the count said at the end, and a tool's 0 becomes the audit status */
	const char *denied[] = { "/usr/bin/sh", "-c", NULL, NULL };
	char line[512];
	snprintf(line, sizeof(line), "/usr/bin/cat %s 2>/dev/null; /usr/bin/touch '%s'", secret, marker);
	denied[2] = line;
	snprintf(d, sizeof(d), "%s/full", tmp);
	mount_tmpfs(d, "size=16k,mode=0755");
	snprintf(d, sizeof(d), "%s/full/filler", tmp);
	int fd = open(d, O_WRONLY | O_CREAT, 0600);
	assert_true(fd >= 0);
	char blk[4096] = { 0 };
	while (write(fd, blk, sizeof(blk)) > 0)
		;
	close(fd);
	snprintf(d, sizeof(d), "%s/full/a.jsonl", tmp);
	run_row("audit log on a full file system", pack, d, denied, 68, "records lost (No space left on device)",
		marker, true);
	run_row("audit log /dev/full", pack, "/dev/full", denied, 68, "records lost (No space left on device)", marker,
		true);
	struct stat st;
	assert_int_equal(stat("/dev/full", &st), 0);
	assert_true(S_ISCHR(st.st_mode));
	unmount_all();
	/* the control: the same denial into a log with room is one line */
	snprintf(d, sizeof(d), "%s/roomy.jsonl", tmp);
	run_row("audit log with room (control)", pack, d, denied, 0, "", marker, true);
	size_t n;
	char **v = audit_lines(d, &n, false);
	assert_int_equal(count_record(v, n, "FileSystem", "Read", secret, "Deny"), 1);
	lines_free(v, n);
}

/* ---- 100,000 denied connects ------------------------------------------------------------------- */

static void flood(const char *bin, const char *fault)
{
	char audit[256], no[16], res[64], f[64];
	snprintf(audit, sizeof(audit), "%s/flood-%s.jsonl", tmp, fault ? fault : "none");
	snprintf(no, sizeof(no), "%d", port_no);
	snprintf(res, sizeof(res), "127.0.0.1:%d", port_no);
	snprintf(f, sizeof(f), "BEE_FAULT=%s", fault ? fault : "");
	const char *env[] = { f, NULL };
	const char *argv[] = { RUN_ARGS(bin), "--audit-log", audit, pack, "--", probe, "connect", "127.0.0.1", no,
			       "100000", NULL };
	struct run r;
	run(&r, argv, env, 120000);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "ok 0 denied 100000 other 0\n");
	run_fini(&r);
	size_t n;
	char **v = audit_lines(audit, &n, false);
	size_t lines = count_record(v, n, "Network", "Connect", res, "Deny"), lost = 0, overruns = 0, counted = 0;
	char rep[128];
	/* identical denials: the first a line, the others one record's count */
	snprintf(rep, sizeof(rep), "\"resource\":\"%s\",\"decision\":\"Deny\",\"count\":", res);
	for (size_t i = 0; i < n; i++) {
		const char *p = strstr(v[i], "\"resource\":\"bee:audit-lost:");
		if (p) {
			lost += strtoul(p + strlen("\"resource\":\"bee:audit-lost:"), NULL, 10);
			overruns++;
		}
		if ((p = strstr(v[i], rep)))
			counted += strtoul(p + strlen(rep), NULL, 10);
	}
	printf("  %s: %zu lines + %zu counted + %zu lost in %zu overrun records = %zu\n",
	       fault ? fault : "relay keeping up", lines, counted, lost, overruns, lines + counted + lost);
	assert_int_equal(lines, lost < 100000 ? 1 : 0);
	assert_int_equal(lines + counted + lost, 100000);
	if (fault)
		assert_true(overruns > 0 && lost > 0);
	lines_free(v, n);
	assert_clean();
}

static void test_flood(void **state_)
{
	(void)state_;
	flood(BEE_BUILD_DIR "/bee-load", NULL);
	/* the relay stalled until the tool ends: the ring buffer overruns */
	flood(BEE_BUILD_DIR "/bee-load-fault", "relay-stall");
}

/* ---- revoke ------------------------------------------------------------------------------------------ */

static void test_revoke(void **state_)
{
	(void)state_;
	char audit[256], go[256], script[1024], ok[16];
	snprintf(audit, sizeof(audit), "%s/revoke.jsonl", tmp);
	snprintf(go, sizeof(go), "%s/out/go", proj);
	snprintf(ok, sizeof(ok), "%d", port_ok);
	snprintf(script, sizeof(script), "P=%s; $P connect 127.0.0.1 %s; $P wait %s 20; $P connect 127.0.0.1 %s", probe,
		 ok, go, ok);
	const char *argv[] = { RUN_ARGS(BEE_BUILD_DIR "/bee-load"), "--audit-log", audit, pack, "--", "/usr/bin/sh", "-c",
			       script, NULL };
	struct job j = start(argv, NULL);
	struct bee_registry_entry e;
	wait_session(&e);
	struct run r;
	static const struct {
		const char *id, *rule;
		int status;
		const char *err;
	} refused[] = {
		{ NULL, "fs.deny /home", 76, "is a deny: revoking it would widen" },
		{ NULL, "PATH", 76, "env rules cannot be revoked live" },
		{ NULL, "DEMO_SANDBOX", 76, "env rules cannot be revoked live" },
		{ NULL, "0", 76, "Landlock, which cannot narrow a running domain" },
		{ NULL, "no such rule", 76, "has no rule 'no such rule'" },
		{ "ffffffffffffffff", "0", 77, "no session 'ffffffffffffffff'" },
	};
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		char rule[300];
		/* the deny rule's text holds the test's own HOME */
		if (strncmp(refused[i].rule, "fs.deny", 7) == 0)
			snprintf(rule, sizeof(rule), "fs.deny %s/.ssh/**", home);
		else
			snprintf(rule, sizeof(rule), "%s", refused[i].rule);
		const char *rv[] = { BEE_BUILD_DIR "/bee-load", "revoke", "--state-dir", state, refused[i].id ? refused[i].id : e.id,
				     rule, NULL };
		run(&r, rv, NULL, 10000);
		if (r.status != refused[i].status || !strstr(r.err, refused[i].err))
			fprintf(stderr, "revoke %s: %d %s", rule, r.status, r.err);
		assert_int_equal(r.status, refused[i].status);
		assert_non_null(strstr(r.err, refused[i].err));
		run_fini(&r);
	}
	const char *rv[] = { BEE_BUILD_DIR "/bee-load", "revoke", "--state-dir", state, e.id, "net.connect 127.0.0.1/32:47000-47009/tcp",
			     NULL };
	run(&r, rv, NULL, 10000);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "revoked rule"));
	run_fini(&r);
	/* twice is refused */
	run(&r, rv, NULL, 10000);
	assert_int_equal(r.status, 76);
	run_fini(&r);
	assert_int_equal(bee_write_atomic(go, "", 0), 0);
	finish(&j, &r, 20000);
	assert_int_equal(r.status, 1);
	assert_string_equal(r.out, "ok\nok\nEPERM\n");
	run_fini(&r);
	bee_registry_entry_fini(&e);
	unlink(go);
	assert_clean();
	size_t n;
	char res[64];
	char **v = audit_lines(audit, &n, false);
	assert_int_equal(count_record(v, n, "Network", "Connect", "bee:revoke:net.connect 127.0.0.1/32:47000-47009/tcp",
				      "Deny"),
			 1);
	snprintf(res, sizeof(res), "127.0.0.1:%d", port_ok);
	assert_int_equal(count_record(v, n, "Network", "Connect", res, "Deny"), 1);
	lines_free(v, n);
}

/* ---- nesting ---------------------------------------------------------------------------------------- */

/* Session cgroups (bee-*) directly below dir. */
static int count_sessions_below(const char *dir)
{
	return count_entries(dir, "bee-", NULL, 0);
}

/* bee-load run PK -- touch MARKER from a launcher the test (root) puts in
 * cgroup cg, as an agent runtime starting a subagent for that session would:
 * the session's tool itself holds no capability to start one. */
static void run_in(const char *cg, const char *pk, const char *marker, struct run *r)
{
	const char *argv[] = { RUN_ARGS(BEE_BUILD_DIR "/bee-load"), pk, "--", "/usr/bin/touch", marker, NULL };
	start_cgroup = cg;
	struct job j = start(argv, NULL);
	start_cgroup = NULL;
	finish(&j, r, 20000);
}

static void test_nesting(void **state_)
{
	(void)state_;
	char sub[256], subpk[256], wide[256], widepk[256], marker[256], expect[8192], copy[256];
	snprintf(sub, sizeof(sub), "%s/nest-sub.toml", tmp);
	snprintf(subpk, sizeof(subpk), "%s/nest-sub.bpfpack", tmp);
	snprintf(wide, sizeof(wide), "%s/nest-wide.toml", tmp);
	snprintf(widepk, sizeof(widepk), "%s/nest-wide.bpfpack", tmp);
	snprintf(marker, sizeof(marker), "%s/out/nested-ran", proj);
	/* a subagent of sandbox-demo: fewer files, programs, ports, names */
	const char *body = "[fs]\nread = [\"/usr/**\", \"/etc/ld.so.cache\", \"${PROJECT}/**\"%s]\n"
			   "write = [\"${PROJECT}/out/**\"]\n"
			   "[exec]\nallow = [\"/usr/bin/touch\", \"/usr/lib/x86_64-linux-gnu/**\"]\n"
			   "[net]\nconnect = [\"127.0.0.1:47000\"]\n[env]\nallow = [\"PATH\"]\n";
	char text[1024], fs[64];
	snprintf(fs, sizeof(fs), "%s", "");
	snprintf(text, sizeof(text), "version = 1\nname = \"nest-sub\"\n");
	snprintf(text + strlen(text), sizeof(text) - strlen(text), body, fs);
	assert_int_equal(bee_write_atomic(sub, text, strlen(text)), 0);
	/* the same, plus a file of HOME, which sandbox-demo does not grant */
	snprintf(fs, sizeof(fs), "%s", ", \"${HOME}/wide.txt\"");
	snprintf(text, sizeof(text), "version = 1\nname = \"nest-wide\"\n");
	snprintf(text + strlen(text), sizeof(text) - strlen(text), body, fs);
	assert_int_equal(bee_write_atomic(wide, text, strlen(text)), 0);
	assert_int_equal(compile(sub, subpk), 0);
	assert_int_equal(compile(wide, widepk), 0);

	/* not nested: both start (nothing changes outside a session) */
	struct run r;
	const char *plain[] = { RUN_ARGS(BEE_BUILD_DIR "/bee-load"), widepk, "--", "/usr/bin/touch", marker, NULL };
	run(&r, plain, NULL, 20000);
	assert_int_equal(r.status, 0);
	assert_int_equal(access(marker, F_OK), 0);
	unlink(marker);
	run_fini(&r);

	/* the parent session */
	const char *argv[] = { RUN_ARGS(BEE_BUILD_DIR "/bee-load"), pack, "--", "/usr/bin/sleep", "30", NULL };
	struct job j = start(argv, NULL);
	struct bee_registry_entry e;
	wait_session(&e);

	/* (a) a proved subset starts, in a cgroup below the parent's */
	run_in(e.cgroup, subpk, marker, &r);
	if (r.status)
		fprintf(stderr, "nested subset: %d %s", r.status, r.err);
	assert_int_equal(r.status, 0);
	assert_int_equal(access(marker, F_OK), 0);
	unlink(marker);
	run_fini(&r);
	assert_int_equal(count_sessions_below(e.cgroup), 0);

	/* (b) not a subset: refused before launch, the parent and the first
	 * counterexample named, nothing created */
	run_in(e.cgroup, widepk, marker, &r);
	snprintf(expect, sizeof(expect),
		 "bee-load: nesting: pack 'nest-wide' is not a subset of session %s ('sandbox-demo'): child grants "
		 "read on path '%s/wide.txt', parent does not (nest-wide.toml:4:",
		 e.id, home);
	if (r.status != 78 || strncmp(r.err, expect, strlen(expect)) != 0)
		fprintf(stderr, "nested non-subset: %d %s", r.status, r.err);
	assert_int_equal(r.status, 78);
	assert_int_equal(strncmp(r.err, expect, strlen(expect)), 0);
	assert_ptr_equal(strchr(r.err, '\n'), r.err + strlen(r.err) - 1);   /* one line */
	assert_int_equal(access(marker, F_OK), -1);
	run_fini(&r);
	assert_int_equal(count_sessions_below(e.cgroup), 0);
	/* no record, pin folder or cgroup but the parent's */
	char d[256], recs[2][300];
	char *mine[] = { recs[0], recs[1] };
	snprintf(recs[0], sizeof(recs[0]), "%s.json", e.id);
	snprintf(recs[1], sizeof(recs[1]), "%s.bpfpack", e.id);
	snprintf(d, sizeof(d), "%s/sessions", state);
	assert_int_equal(count_entries(d, "", mine, 2), 0);
	snprintf(recs[0], sizeof(recs[0]), "%s", e.id);
	snprintf(d, sizeof(d), "%s/bee", bpffs);
	assert_int_equal(count_entries_but(d, "", mine, 1, "pack-"), 0);
	/* the nested session's pack load went with it (cache.c) */
	assert_int_equal(count_entries(d, "pack-nest-sub-", NULL, 0), 0);

	/* the parent's pack cannot be read: refused (fail closed), the subset too */
	snprintf(copy, sizeof(copy), "%s/parent-copy.bpfpack", tmp);
	assert_int_equal(rename(e.pack, copy), 0);
	run_in(e.cgroup, subpk, marker, &r);
	snprintf(expect, sizeof(expect), "bee-load: nesting: pack 'nest-sub' runs inside session %s ('sandbox-demo'), "
					 "whose pack '%s' cannot be read (",
		 e.id, e.pack);
	if (r.status != 78 || strncmp(r.err, expect, strlen(expect)) != 0)
		fprintf(stderr, "parent pack unreadable: %d %s", r.status, r.err);
	assert_int_equal(r.status, 78);
	assert_int_equal(strncmp(r.err, expect, strlen(expect)), 0);
	assert_int_equal(access(marker, F_OK), -1);
	run_fini(&r);
	assert_int_equal(rename(copy, e.pack), 0);
	assert_int_equal(count_sessions_below(e.cgroup), 0);

	/* the parent's [net] grant revoked live: the child is proved against
	 * what the parent grants now, and its 127.0.0.1:47000 is no longer in it */
	const char *rv[] = { BEE_BUILD_DIR "/bee-load", "revoke", "--state-dir", state, e.id,
			     "net.connect 127.0.0.1/32:47000-47009/tcp", NULL };
	run(&r, rv, NULL, 10000);
	assert_int_equal(r.status, 0);
	run_fini(&r);
	run_in(e.cgroup, subpk, marker, &r);
	snprintf(expect, sizeof(expect),
		 "bee-load: nesting: pack 'nest-sub' is not a subset of session %s ('sandbox-demo'): child allows ",
		 e.id);
	if (r.status != 78 || strncmp(r.err, expect, strlen(expect)) != 0 || !strstr(r.err, "127.0.0.1"))
		fprintf(stderr, "parent revoked: %d %s", r.status, r.err);
	assert_int_equal(r.status, 78);
	assert_int_equal(strncmp(r.err, expect, strlen(expect)), 0);
	assert_non_null(strstr(r.err, "127.0.0.1"));
	assert_int_equal(access(marker, F_OK), -1);
	run_fini(&r);
	assert_int_equal(count_sessions_below(e.cgroup), 0);

	/* the parent ends as always */
	assert_int_equal(kill(j.pid, SIGTERM), 0);
	finish(&j, &r, 10000);
	assert_int_equal(r.status, 128 + SIGTERM);
	run_fini(&r);
	bee_registry_entry_fini(&e);
	assert_clean();
}

/* ---- one load of a pack for its sessions ------------------------------------------------- */

/* The parent directory of path (a session's cgroup: its pack's cgroup). */
static void parent_of(const char *path, char *out, size_t size)
{
	snprintf(out, size, "%s", path);
	char *slash = strrchr(out, '/');
	if (slash)
		*slash = '\0';
}

static void test_pack_load(void **state_)
{
	(void)state_;
	char go[2][256], script[2][1024], audit[2][256], ok[16], pcg[2][4200];
	snprintf(ok, sizeof(ok), "%d", port_ok);
	struct job j[2];
	for (int i = 0; i < 2; i++) {
		snprintf(go[i], sizeof(go[i]), "%s/out/go%d", proj, i);
		snprintf(audit[i], sizeof(audit[i]), "%s/load%d.jsonl", tmp, i);
		snprintf(script[i], sizeof(script[i]), "P=%s; $P connect 127.0.0.1 %s; $P wait %s 20; $P connect 127.0.0.1 %s",
			 probe, ok, go[i], ok);
		const char *argv[] = { RUN_ARGS(BEE_BUILD_DIR "/bee-load"), "--audit-log", audit[i], pack, "--",
				       "/usr/bin/sh", "-c", script[i], NULL };
		j[i] = start(argv, NULL);
	}
	struct bee_registry_entry e[2];
	wait_sessions(e, 2);
	if (e[0].pid != j[0].pid) {   /* the records in launch order */
		struct bee_registry_entry t = e[0];
		e[0] = e[1];
		e[1] = t;
	}
	assert_int_equal(e[0].pid, j[0].pid);
	/* one load: both sessions are children of one pack cgroup, whose links
	 * both records name */
	parent_of(e[0].cgroup, pcg[0], sizeof(pcg[0]));
	parent_of(e[1].cgroup, pcg[1], sizeof(pcg[1]));
	assert_string_equal(pcg[0], pcg[1]);
	assert_non_null(strstr(pcg[0], "/bee-pack-sandbox-demo-"));
	assert_string_equal(e[0].cache, e[1].cache);
	assert_int_equal(count_pack_loads() >= 1, 1);
	/* a revoke in the first is seen by it alone */
	const char *rv[] = { BEE_BUILD_DIR "/bee-load", "revoke", "--state-dir", state, e[0].id,
			     "net.connect 127.0.0.1/32:47000-47009/tcp", NULL };
	struct run r;
	run(&r, rv, NULL, 10000);
	assert_int_equal(r.status, 0);
	run_fini(&r);
	/* the revoked session's own copy, in its own pin folder; the pack's image unchanged */
	char own[4300];
	snprintf(own, sizeof(own), "%s/maps/bee_net4", e[0].bpffs);
	assert_int_equal(access(own, F_OK), 0);
	snprintf(own, sizeof(own), "%s/maps/bee_net4", e[1].bpffs);
	assert_int_equal(access(own, F_OK), -1);
	assert_int_equal(bee_write_atomic(go[1], "", 0), 0);
	finish(&j[1], &r, 20000);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "ok\nok\nok\n");
	run_fini(&r);
	assert_int_equal(bee_write_atomic(go[0], "", 0), 0);
	finish(&j[0], &r, 20000);
	assert_int_equal(r.status, 1);
	assert_string_equal(r.out, "ok\nok\nEPERM\n");
	run_fini(&r);
	/* each audit log holds its own session's records only */
	char res[64];
	snprintf(res, sizeof(res), "127.0.0.1:%d", port_ok);
	size_t n;
	char **v = audit_lines(audit[0], &n, false);
	assert_int_equal(count_record(v, n, "Network", "Connect", res, "Deny"), 1);
	lines_free(v, n);
	v = audit_lines(audit[1], &n, false);
	assert_int_equal(count_record(v, n, "Network", "Connect", res, "Deny"), 0);
	assert_int_equal(count_record(v, n, "Network", "Connect", "bee:revoke:net.connect 127.0.0.1/32:47000-47009/tcp",
				      "Deny"), 0);
	lines_free(v, n);
	for (int i = 0; i < 2; i++) {
		bee_registry_entry_fini(&e[i]);
		unlink(go[i]);
	}
	assert_clean();

	/* the next session finds the load as it was: in the same cgroup, the
	 * revoke of a session that ended not in it */
	const char *argv[] = { RUN_ARGS(BEE_BUILD_DIR "/bee-load"), pack, "--", "/usr/bin/sh", "-c", script[0], NULL };
	j[0] = start(argv, NULL);
	wait_sessions(e, 1);
	parent_of(e[0].cgroup, pcg[1], sizeof(pcg[1]));
	assert_string_equal(pcg[0], pcg[1]);
	assert_int_equal(bee_write_atomic(go[0], "", 0), 0);
	finish(&j[0], &r, 20000);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "ok\nok\nok\n");
	run_fini(&r);
	bee_registry_entry_fini(&e[0]);
	unlink(go[0]);

	/* gc --packs: the unused load goes, its cgroup and pins with it */
	char pins[4200];
	snprintf(pins, sizeof(pins), "%s", e[0].cache);
	const char *gc[] = { BEE_BUILD_DIR "/bee-load", "gc", "--packs", "--state-dir", state, NULL };
	run(&r, gc, NULL, 10000);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "unused pack load"));
	run_fini(&r);
	assert_int_equal(access(pcg[0], F_OK), -1);
	assert_int_equal(count_pack_loads(), 0);
	/* and the next session loads the pack anew (the control: it runs) */
	const char *again[] = { RUN_ARGS(BEE_BUILD_DIR "/bee-load"), pack, "--", probe, "connect", "127.0.0.1", ok, NULL };
	run(&r, again, NULL, 20000);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "ok\n");
	run_fini(&r);
	assert_int_equal(count_pack_loads(), 1);
	assert_clean();
}

/* The GNU build id of the ELF file at path (libelf), its length or 0. */
static size_t file_build_id(const char *path, uint8_t id[64])
{
	size_t len = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	elf_version(EV_CURRENT);
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	Elf_Scn *scn = NULL;
	while (elf && !len && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		size_t off = 0, name, desc;
		GElf_Nhdr nh;
		while (d && !len && (off = gelf_getnote(d, off, &nh, &name, &desc)) > 0)
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_descsz <= 64 &&
			    memcmp((char *)d->d_buf + name, "GNU", 4) == 0) {
				memcpy(id, (char *)d->d_buf + desc, nh.n_descsz);
				len = nh.n_descsz;
			}
	}
	elf_end(elf);
	close(fd);
	return len;
}

/* The manifest's image (runtime/manifest.h): written by a session of the
 * pack once its tool runs, and read by the next instead of the JSON (a
 * record names the image's policy when the image names another: the
 * control that it is read at all); one that is not whole, or one under the
 * key of another build of bee-load, is parsed past and written anew; it
 * goes with the pack's load at gc --packs. */
static void test_manifest_image(void **state_)
{
	(void)state_;
	char img[4300], go[256], script[600], err[BEE_PACK_ERRLEN];
	struct bee_pack *p;
	struct bee_manifest m, t;
	struct run r;
	struct stat st;
	assert_int_equal(bee_pack__open_file(pack, &p, err, sizeof(err)), 0);
	/* the key bee-load reads and writes it under: the pack's digest and
	 * bee-load's build id; and one of another build */
	uint8_t id[64], key[BEE_PACK_DIGEST_LEN], other[BEE_PACK_DIGEST_LEN];
	size_t idlen = file_build_id(BEE_BUILD_DIR "/bee-load", id);
	assert_true(idlen > 0);
	assert_int_equal(bee_manifest_image_key(bee_pack__digest(p), id, idlen, key), 0);
	id[0] ^= 1;
	assert_int_equal(bee_manifest_image_key(bee_pack__digest(p), id, idlen, other), 0);
	assert_int_equal(bee_manifest_image_path(img, sizeof(img), state, bee_pack__digest(p), key), 0);
	snprintf(go, sizeof(go), "%s/out/go-image", proj);
	snprintf(script, sizeof(script), "%s wait %s 20", probe, go);
	unlink(img);
	const char *once[] = { RUN_ARGS(BEE_BUILD_DIR "/bee-load"), pack, "--", "/bin/true", NULL };
	run(&r, once, NULL, 20000);
	assert_int_equal(r.status, 0);
	run_fini(&r);
	/* root's alone, and the pack's manifest */
	assert_int_equal(stat(img, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(st.st_uid, geteuid());
	char *bytes;
	size_t len;
	assert_int_equal(bee_read_file(img, &bytes, &len), 0);
	assert_int_equal(bee_manifest_thaw(bytes, len, other, &t), -EINVAL);
	assert_int_equal(bee_manifest_thaw(bytes, len, key, &t), 0);
	assert_string_equal(t.name, "sandbox-demo");
	assert_true(t.nhooks > 0 && t.nrules > 0);
	bee_manifest_fini(&t);

	/* an image that names another policy: the next session is of it */
	assert_int_equal(bee_manifest_read(p, &m, err, sizeof(err)), 0);
	m.name = "from-image";
	void *frozen, *stale;
	size_t slen;
	assert_int_equal(bee_manifest_freeze(&m, key, &frozen, &len), 0);
	assert_int_equal(bee_manifest_freeze(&m, other, &stale, &slen), 0);
	bee_manifest_fini(&m);
	/* first the other build's: parsed past */
	assert_int_equal(bee_write_atomic(img, stale, slen), 0);
	free(stale);
	const char *wait[] = { RUN_ARGS(BEE_BUILD_DIR "/bee-load"), pack, "--", "/usr/bin/sh", "-c", script, NULL };
	struct bee_registry_entry e;
	for (int round = 0; round < 3; round++) {
		if (round == 1)
			assert_int_equal(bee_write_atomic(img, frozen, len), 0);
		struct job j = start(wait, NULL);
		wait_sessions(&e, 1);
		assert_string_equal(e.policy, round == 1 ? "from-image" : "sandbox-demo");
		bee_registry_entry_fini(&e);
		assert_int_equal(bee_write_atomic(go, "", 0), 0);
		finish(&j, &r, 20000);
		assert_int_equal(r.status, 0);
		run_fini(&r);
		unlink(go);
		/* then one byte of it changed: parsed past, the pack's own name */
		if (round == 1) {
			((uint8_t *)frozen)[len / 2] ^= 1;
			assert_int_equal(bee_write_atomic(img, frozen, len), 0);
		}
	}
	free(frozen);
	/* and written anew, whole */
	assert_int_equal(bee_read_file(img, &bytes, &len), 0);
	assert_int_equal(bee_manifest_thaw(bytes, len, key, &t), 0);
	assert_string_equal(t.name, "sandbox-demo");
	bee_manifest_fini(&t);
	assert_clean();

	/* gc --packs: the image goes with the load */
	const char *gc[] = { BEE_BUILD_DIR "/bee-load", "gc", "--packs", "--state-dir", state, NULL };
	run(&r, gc, NULL, 10000);
	assert_int_equal(r.status, 0);
	run_fini(&r);
	assert_int_equal(access(img, F_OK), -1);
	bee_pack__close(p);
}

/* Kernel audit turned on by a landlock session with an audit log: with a
 * backlog of 8192 (64, the kernel's default, dropped denials of 200
 * sessions at once), and off again at its end with the limit from before;
 * a limit someone set meanwhile stays. */
static void test_kaudit_backlog(void **state_)
{
	(void)state_;
	uint32_t on, limit, was;
	const char *ci = getenv("CI"), *why = NULL;
	if (bee_kaudit_status(&on, &was) < 0)
		why = "the kernel's audit status cannot be read here";
	else if (on)
		why = "kernel audit is on (an audit daemon's): bee leaves it alone";
	if (why && ci && *ci)
		fail_msg("test_kaudit_backlog: %s, and CI is set", why);
	if (why) {
		fprintf(stderr, "test_kaudit_backlog: SKIPPED: %s\n", why);
		return;
	}
	/* the control: a limit below bee's, which the session must raise */
	kaudit_was = was;
	assert_int_equal(bee_kaudit_set(0, 64), 0);
	char audit[300], go[256], script[600];
	snprintf(audit, sizeof(audit), "%s/backlog.jsonl", tmp);
	snprintf(go, sizeof(go), "%s/out/go-backlog", proj);
	snprintf(script, sizeof(script), "%s wait %s 20", probe, go);
	const char *argv[] = { RUN_ARGS(BEE_BUILD_DIR "/bee-load"), "--audit-log", audit, pack, "--",
			       "/usr/bin/sh", "-c", script, NULL };
	for (int round = 0; round < 2; round++) {
		struct run r;
		struct bee_registry_entry e;
		unlink(go);
		struct job j = start(argv, NULL);
		wait_sessions(&e, 1);
		bee_registry_entry_fini(&e);
		for (int i = 0; i < 1000 && bee_kaudit_status(&on, &limit) == 0 && !on; i++)
			usleep(10000);
		assert_int_equal(on, 1);
		assert_int_equal(limit, 8192);
		/* the second time someone sets a limit of their own meanwhile */
		if (round == 1)
			assert_int_equal(bee_kaudit_set(1, 5000), 0);
		assert_int_equal(bee_write_atomic(go, "", 0), 0);
		finish(&j, &r, 20000);
		assert_int_equal(r.status, 0);
		run_fini(&r);
		assert_int_equal(bee_kaudit_status(&on, &limit), 0);
		assert_int_equal(on, 0);
		assert_int_equal(limit, round == 0 ? 64 : 5000);
		assert_clean();
	}
	unlink(go);
	unlink(audit);
	assert_int_equal(bee_kaudit_set(0, was), 0);
	kaudit_was = -1;
}

static void test_query(void **state_)
{
	(void)state_;
	struct run r;
	const char *a[] = { BEE_BUILD_DIR "/bee-load", "query", pack, "fs", "read", "/etc/shadow", NULL };
	run(&r, a, NULL, 10000);
	assert_int_equal(r.status, 1);
	assert_int_equal(strncmp(r.out, "Deny fs read /etc/shadow", 24), 0);
	run_fini(&r);
	char res[32];
	snprintf(res, sizeof(res), "127.0.0.1:%d", port_ok);
	const char *b[] = { BEE_BUILD_DIR "/bee-load", "query", pack, "net", "connect", res, NULL };
	run(&r, b, NULL, 10000);
	assert_int_equal(r.status, 0);
	assert_int_equal(strncmp(r.out, "Allow net connect", 17), 0);
	run_fini(&r);
}

/* ---- configuration ------------------------------------------------------------------------- */

static size_t count_str(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* `bee-load ARGS...` run by sh from directory dir, with env added. */
static void run_from(struct run *r, const char *dir, const char *args, const char *const env[])
{
	char cmd[2048];
	char *abs = realpath(BEE_BUILD_DIR, NULL);
	snprintf(cmd, sizeof(cmd), "cd '%s' && exec '%s/bee-load' %s", dir, abs, args);
	free(abs);
	const char *argv[] = { "/bin/sh", "-c", cmd, NULL };
	run(r, argv, env, 20000);
}

static void test_config(void **state_)
{
	(void)state_;
	char line[1024], dir[256];
	/* a project two directories below its repository's root */
	snprintf(dir, sizeof(dir), "%s/cfg/repo/a/b", tmp);
	assert_int_equal(bee_mkdirs(dir, 0755), 0);
	snprintf(line, sizeof(line), "%s/cfg/repo/.git", tmp);
	assert_int_equal(bee_mkdirs(line, 0755), 0);
	put_config("cfg/etc/bee/config.toml", "[bee-load]\nstate-dir = \"/s/system\"\naudit-detail = true\n");
	put_config("cfg/xdg/bee/config.toml", "# user\n[bee-load]\nstate-dir = \"/s/user\"\n");
	put_config("cfg/repo/.bee/config.toml", "[bee-load]\n\n\nbackend = \"landlock\"\n");
	put_config("cfg/explicit.toml", "[bee-load]\nbpffs = \"/s/bpffs\"\n");
	struct run r;
	run_from(&r, dir, "config --config ../../../explicit.toml --state-dir /s/flag", NULL);
	assert_int_equal(r.status, 0);
	static const char *const want[] = {
		"bee-load.backend = \"landlock\"               # %s/cfg/repo/.bee/config.toml:4\n",
		"bee-load.state-dir = \"/s/flag\"              # flag\n",
		"bee-load.bpffs = \"/s/bpffs\"                 # ../../../explicit.toml:2\n",
		"bee-load.audit-detail = true                # %s/cfg/etc/bee/config.toml:3\n",
		"bee-load.fallback = true                    # default\n",
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		snprintf(line, sizeof(line), want[i], tmp);
		if (!strstr(r.out, line))
			fail_msg("no line '%s' in:\n%s", line, r.out);
	}
	run_fini(&r);
	/* without the flag the user's layer wins over the system's */
	run_from(&r, dir, "config --json", NULL);
	assert_int_equal(r.status, 0);
	json_error_t je;
	json_t *o = json_loads(r.out, 0, &je);
	assert_non_null(o);
	json_t *sd = json_object_get(json_object_get(o, "keys"), "bee-load.state-dir");
	assert_string_equal(json_string_value(json_object_get(sd, "value")), "/s/user");
	snprintf(line, sizeof(line), "%s/cfg/xdg/bee/config.toml", tmp);
	assert_string_equal(json_string_value(json_object_get(sd, "file")), line);
	assert_int_equal(json_integer_value(json_object_get(sd, "line")), 3);
	json_decref(o);
	run_fini(&r);

	/* a bad file: refused before anything runs, 64, located */
	char marker[256], cmd[1024];
	snprintf(marker, sizeof(marker), "%s/out/config-ran", proj);
	put_config("cfg/repo/.bee/config.toml", "[bee-load]\n\n\nbackend = \"landlok\"\n");
	snprintf(cmd, sizeof(cmd), "run --bpffs %s --state-dir %s %s -- /usr/bin/touch %s", bpffs, state, pack, marker);
	run_from(&r, dir, cmd, NULL);
	assert_int_equal(r.status, 64);
	snprintf(line, sizeof(line),
		 "%s/cfg/repo/.bee/config.toml:4:11: error: unknown backend 'landlok'\n"
		 "    4 | backend = \"landlok\"\n"
		 "      |           ^~~~~~~~~\n"
		 "%s/cfg/repo/.bee/config.toml:4:11: note: did you mean 'landlock'?\n"
		 "bee-load: config: refused: the configuration above is not valid\n",
		 tmp, tmp);
	assert_string_equal(r.err, line);
	assert_int_equal(access(marker, F_OK), -1);
	run_fini(&r);
	/* the control: spelt right, the configuration's backend runs it */
	put_config("cfg/repo/.bee/config.toml", "[bee-load]\n\n\nbackend = \"landlock\"\n");
	run_from(&r, dir, cmd, NULL);
	if (r.status)
		fprintf(stderr, "%s", r.err);
	assert_int_equal(r.status, 0);
	assert_int_equal(access(marker, F_OK), 0);
	assert_null(strstr(r.err, "bpf-lsm is unavailable"));
	unlink(marker);
	run_fini(&r);
	assert_clean();

	/* auto (no backend anywhere): bpf-lsm where it loads, else landlock, said once */
	put_config("cfg/repo/.bee/config.toml", "# nothing\n");
	run_from(&r, dir, cmd, NULL);
	if (r.status)
		fprintf(stderr, "%s", r.err);
	assert_int_equal(r.status, 0);
	assert_int_equal(access(marker, F_OK), 0);
	if (!kernel_loads_lsm_cgroup()) {
		assert_int_equal(count_str(r.err, "bee-load: bpf-lsm is unavailable here (lsm_cgroup: "), 1);
		assert_int_equal(count_str(r.err, "); using the landlock backend\n"), 1);
	}
	unlink(marker);
	run_fini(&r);
	assert_clean();
	/* fallback = false in the project: refused as before, 65 */
	put_config("cfg/repo/.bee/config.toml", "[bee-load]\nfallback = false\n");
	run_from(&r, dir, cmd, NULL);
	if (!kernel_loads_lsm_cgroup()) {
		assert_int_equal(r.status, 65);
		assert_non_null(strstr(r.err, "forbids the fallback to landlock (fallback = false)"));
		assert_int_equal(access(marker, F_OK), -1);
	}
	unlink(marker);
	run_fini(&r);
	assert_clean();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s/cfg'", tmp);
	assert_int_equal(system(cmd), 0);
}

/* ---- no bpffs mounted ----------------------------------------------------------------------- */

static int count_bpf_mounts(void)
{
	char *mi = slurp("/proc/self/mountinfo");
	int n = (int)count_str(mi, " - bpf ");
	free(mi);
	return n;
}

/* In the mount namespace of its own that the caller made: every bpf mount
 * unmounted, then bee-load run with neither --bpffs nor a mounted bpffs.
 * Exits with bee-load's status, or 90 + N when the namespace was not as it
 * must be (N: what). */
static void no_bpffs_child(const char *out, const char *err, const char *state_dir, const char *script)
{
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		_exit(91);
	char mnt[4096];
	for (int i = 0; bee_bpffs_find(mnt, sizeof(mnt)) == 0; i++)
		if (i > 64 || umount2(mnt, MNT_DETACH) < 0)
			_exit(92);
	pid_t pid = fork();
	if (pid == 0) {
		int fo = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600), fe = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		dup2(fo, 1);
		dup2(fe, 2);
		const char *argv[] = { BEE_BUILD_DIR "/bee-load", "run", "--backend", "landlock", "--state-dir", state_dir,
				       pack, "--", "/usr/bin/sh", "-c", script, NULL };
		execv(argv[0], (char *const *)argv);
		_exit(99);
	}
	int st;
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		_exit(93);
	/* bee-load's own bpffs is there, in this namespace */
	snprintf(mnt, sizeof(mnt), "%s/bpffs", state_dir);
	if (!bee_is_bpffs(mnt))
		_exit(94);
	/* the pack's load, pinned there, goes with what it holds */
	if (bee_packs__gc(state_dir, 0, NULL, NULL, NULL) != 1)
		_exit(96);
	_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 95);
}


/* The element of array a whose key is value. */
static size_t array_find(json_t *a, const char *key, const char *value)
{
	size_t i;
	json_t *o;
	json_array_foreach(a, i, o) {
		const char *v = json_string_value(json_object_get(o, key));
		if (v && strcmp(v, value) == 0)
			return i;
	}
	fail_msg("no %s '%s' in the manifest", key, value);
	return 0;
}

static void drop_file_open(json_t *m, void *ctx)
{
	(void)ctx;
	json_t *h = json_object_get(m, "hooks");
	json_array_remove(h, array_find(h, "program", "bee_file_open"));
}

static void drop_connect4(json_t *m, void *ctx)
{
	(void)ctx;
	json_t *h = json_object_get(m, "hooks");
	json_array_remove(h, array_find(h, "program", "bee_connect4"));
}

static void drop_fs_size(json_t *m, void *ctx)
{
	(void)ctx;
	json_object_del(json_object_get(m, "constants"), "bee_fs_image_size");
}

static void extra_const(json_t *m, void *ctx)
{
	(void)ctx;
	json_object_set_new(json_object_get(m, "constants"), "bee_no_such_global", json_integer(1));
}

static void big_const(json_t *m, void *ctx)
{
	(void)ctx;
	json_object_set_new(json_object_get(m, "constants"), "bee_audit_mode", json_integer(1ll << 32));
}

static void net4_flags(json_t *m, void *ctx)
{
	(void)ctx;
	json_t *a = json_object_get(m, "maps");
	json_object_set_new(json_array_get(a, array_find(a, "name", "bee_net4")), "flags", json_integer(0));
}

/* What specialises bee's object is checked: nothing is left out that
 * could loosen the policy, and no placeholder reaches the kernel. */
static void test_specialise(void **state_)
{
	(void)state_;
	static const struct {
		const char *what;
		void (*edit)(json_t *m, void *ctx);
		const char *err;        /* NULL: runs */
	} rows[] = {
		{ "unchanged", NULL, NULL },
		{ "no file_open", drop_file_open, "prog 'bee_file_open': in the BPF object but not in the manifest's hooks" },
		{ "no connect4", drop_connect4, "prog 'bee_connect4': in the BPF object but not in the manifest's hooks" },
		{ "no fs size", drop_fs_size, "constant 'bee_fs_image_size': in the BPF object but not in the manifest" },
		{ "extra constant", extra_const, "the manifest sets 6 constants, the BPF object has 5 of them" },
		{ "constant past 32 bits", big_const, "constant 'bee_audit_mode' is not a 32-bit unsigned integer" },
		{ "map flags", net4_flags, "map 'bee_net4': the object has lpm_trie key 12 flags 0x81, the manifest lpm_trie 12 0" },
	};
	char marker[256], edited[256];
	snprintf(marker, sizeof(marker), "%s/out/spec-ran", proj);
	snprintf(edited, sizeof(edited), "%s/edited.bpfpack", tmp);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct run r;
		test_repack(pack, edited, rows[i].edit, NULL);
		unlink(marker);
		const char *argv[] = { RUN_ARGS(BEE_BUILD_DIR "/bee-load"), edited, "--", "/usr/bin/touch", marker, NULL };
		run(&r, argv, NULL, 20000);
		if (!rows[i].err) {
			if (r.status != 0)
				fail_msg("%s: status %d: %s", rows[i].what, r.status, r.err);
			assert_int_equal(access(marker, F_OK), 0);
		} else {
			if (r.status != 66 || strncmp(r.err, "bee-load: pack: ", 16) != 0 || !strstr(r.err, rows[i].err))
				fail_msg("%s: status %d, want 66 and '%s': %s", rows[i].what, r.status, rows[i].err, r.err);
			assert_int_equal(access(marker, F_OK), -1);
		}
		run_fini(&r);
		assert_clean();
	}
	unlink(marker);
	unlink(edited);
}

static void test_no_bpffs(void **state_)
{
	(void)state_;
	char out[256], err[256], sd[256], script[1024], mnt[300];
	snprintf(out, sizeof(out), "%s/nobpffs.out", tmp);
	snprintf(err, sizeof(err), "%s/nobpffs.err", tmp);
	snprintf(sd, sizeof(sd), "%s/state-nobpffs", tmp);
	snprintf(mnt, sizeof(mnt), "%s/bpffs", sd);
	snprintf(script, sizeof(script), "P=%s; $P read %s; $P read %s/in.txt", probe, secret, proj);
	int before_mounts = count_bpf_mounts();
	assert_true(before_mounts >= 1);   /* this suite's own, at least */
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		no_bpffs_child(out, err, sd, script);
	int status = wait_status(pid, 30000);
	char *o = slurp(out), *e = slurp(err);
	if (status)
		fprintf(stderr, "no bpffs: status %d\n%s%s", status, o, e);
	assert_int_equal(status, 0);
	/* confined as usual: the allowed read and the denial */
	assert_string_equal(o, "EACCES\nok\n");
	assert_non_null(strstr(e, "bee-load: no bpf file system was mounted: mounted one at '"));
	free(o);
	free(e);
	/* nothing mounted out here: the namespace took its mount with it */
	assert_int_equal(count_bpf_mounts(), before_mounts);
	assert_false(bee_is_bpffs(mnt));
	/* the session's pins went there, and its teardown removed them */
	char d[400];
	snprintf(d, sizeof(d), "%s/sessions", sd);
	assert_int_equal(count_entries(d, "", NULL, 0), 0);
}

int main(void)
{
	if (geteuid() != 0) {
		const char *ci = getenv("CI");
		if (ci && *ci) {
			fprintf(stderr, "test_bee_load: FAILED: needs root (cgroups, BPF, Landlock), and CI is set\n");
			return 1;
		}
		fprintf(stderr, "test_bee_load: SKIPPED: needs root (cgroups, BPF, Landlock)\n");
		return 0;
	}
	/* BEE_TEST_ONLY=PATTERN runs the tests whose names match (cmocka's filter) */
	const char *only = getenv("BEE_TEST_ONLY");
	if (only && *only)
		cmocka_set_test_filter(only);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check),
		cmocka_unit_test(test_session),
		cmocka_unit_test(test_audit_detail),
		cmocka_unit_test(test_walk),
		cmocka_unit_test(test_session_mounts),
		cmocka_unit_test(test_teardown_signals),
		cmocka_unit_test(test_user),
		cmocka_unit_test(test_pid_namespace),
		cmocka_unit_test(test_tool_end),
		cmocka_unit_test(test_mount_table),
		cmocka_unit_test(test_seccomp),
		cmocka_unit_test(test_signal_forwarded),
		cmocka_unit_test(test_gc),
		cmocka_unit_test(test_ring_leftovers),
		cmocka_unit_test(test_objects),
		cmocka_unit_test(test_failures),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_flood),
		cmocka_unit_test(test_revoke),
		cmocka_unit_test(test_pack_load),
		cmocka_unit_test(test_manifest_image),
		cmocka_unit_test(test_kaudit_backlog),
		cmocka_unit_test(test_query),
		cmocka_unit_test(test_nesting),
		cmocka_unit_test(test_config),
		cmocka_unit_test(test_no_bpffs),
		cmocka_unit_test(test_specialise),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
