/* SPDX-License-Identifier: GPL-2.0-only */
/* test_sessions: libbee's sessions that outlive a command, through the API
 * (bee_session_start, _exec, _stop) on this host's kernel, as root, with
 * the landlock backend (DESIGN.md: this host refuses BPF LSM programs).
 * tools/check-sessions drives the same through bee-load, at scale. Here:
 *
 *   - start relays the supervisor's warnings (auto falling back to
 *     landlock) and returns a live session: record, socket 0600, cgroup
 *   - exec: the descriptors given are the tool's stdin, stdout, stderr; the
 *     environment given is reduced by [env] allow, plus [env] set, plus the
 *     session's context (a variable outside the list absent, its denial in
 *     the audit log); the tool's status (exit code, 128+N); a command not
 *     found is stage exec (127) with *status -1; a non-UTF-8 argument is
 *     refused (usage), never dropped
 *   - an unknown id, and the stopped session, are stage session (77)
 *   - stop: 0, nothing left (record, socket, pack copy, pins, cgroup)
 *   - a start that fails (a bad pack) is the stage's failure and leaves
 *     no record
 *
 * Not root: SKIPPED (passes), unless CI is set, then FAILED.
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#define NOBODY 65534

static char tmp[64], proj[128], home[128], bpffs[128], state[128], pack[128], audit[128];
static char self_cg[4096], my_cg[4200];
static char warned[4096];

static void warn_keep(void *ctx, const char *msg)
{
	(void)ctx;
	size_t l = strlen(warned);
	snprintf(warned + l, sizeof(warned) - l, "%s\n", msg);
}

static int sh(const char *cmd)
{
	int st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static int setup(void **state_)
{
	(void)state_;
	char cmd[1024], d[256];
	snprintf(tmp, sizeof(tmp), "/tmp/test_sessions-XXXXXX");
	if (!mkdtemp(tmp) || chmod(tmp, 0755) < 0)
		return -1;
	unsetenv("SUDO_UID");
	unsetenv("SUDO_GID");
	snprintf(proj, sizeof(proj), "%s/proj", tmp);
	snprintf(home, sizeof(home), "%s/home", tmp);
	snprintf(bpffs, sizeof(bpffs), "%s/bpffs", tmp);
	snprintf(state, sizeof(state), "%s/state", tmp);
	snprintf(pack, sizeof(pack), "%s/demo.bpfpack", tmp);
	snprintf(audit, sizeof(audit), "%s/audit.jsonl", tmp);
	snprintf(d, sizeof(d), "%s/cfg", tmp);
	setenv("BEE_SYSCONFDIR", d, 1);
	setenv("XDG_CONFIG_HOME", d, 1);
	snprintf(d, sizeof(d), "%s/out", proj);
	if (bee_mkdirs(d, 0755) || bee_mkdirs(home, 0755) || bee_mkdirs(bpffs, 0700) || chown(d, NOBODY, NOBODY) < 0 ||
	    mount("bpf", bpffs, "bpf", 0, "mode=0700") < 0)
		return -1;
	snprintf(cmd, sizeof(cmd), "%s/beec -D HOME=%s -D PROJECT=%s policies/sandbox-demo.toml -o %s", BEE_BUILD_DIR,
		 home, proj, pack);
	if (sh(cmd) != 0)
		return -1;
	/* the sessions' cgroups below one of this test's own: no other suite's
	 * count of session cgroups sees them */
	if (bee_cgroup_self(self_cg, sizeof(self_cg)) < 0)
		return -1;
	snprintf(my_cg, sizeof(my_cg), "%s/test_sessions-%s", self_cg, tmp + strlen("/tmp/test_sessions-"));
	snprintf(d, sizeof(d), "%d", (int)getpid());
	char procs[4300];
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", my_cg);
	if (mkdir(my_cg, 0755) < 0 || bee_write_file(procs, d) < 0)
		return -1;
	return 0;
}

static struct bee_session_opts opts_of(const char *const *context, size_t n);

static int teardown(void **state_)
{
	(void)state_;
	char procs[4200], d[32], cmd[256];
	/* a failed test's sessions: stopped, or their supervisor told to stop */
	char **ids = NULL;
	size_t n = 0;
	bee_registry_ids(state, &ids, &n);
	for (size_t i = 0; i < n; i++) {
		struct bee_session_opts o = opts_of(NULL, 0);
		struct bee_registry_entry r = { 0 };
		if (bee_session_stop(ids[i], &o, NULL) < 0 && bee_registry_read(state, ids[i], &r) == 0 &&
		    bee_pid_alive(r.pid, r.starttime)) {
			kill(r.pid, SIGTERM);
			for (int k = 0; k < 300 && bee_pid_alive(r.pid, r.starttime); k++)
				usleep(10000);
		}
		bee_registry_entry_fini(&r);
		free(ids[i]);
	}
	free(ids);
	bee_sessions__gc(state, NULL, NULL, NULL);
	struct bee_error pe;
	int np = bee_packs__gc(state, 0, NULL, NULL, &pe);   /* the packs' loads, and their cgroups */
	if (np < 0)
		fprintf(stderr, "test_sessions: packs gc: %s\n", pe.msg);
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", self_cg);
	snprintf(d, sizeof(d), "%d", (int)getpid());
	bee_write_file(procs, d);
	rmdir(my_cg);
	umount2(bpffs, MNT_DETACH);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	if (sh(cmd) != 0)
		fprintf(stderr, "test_sessions: cannot remove %s\n", tmp);
	return 0;
}

static struct bee_session_opts opts_of(const char *const *context, size_t n)
{
	return (struct bee_session_opts){
		.sz = sizeof(struct bee_session_opts), .backend = BEE_BACKEND_AUTO, .landlock_fallback = true,
		.context = context, .ncontext = n, .audit_log = audit, .bpffs = bpffs, .state_dir = state,
		.warn = warn_keep,
	};
}

/* Runs argv in sid with stdin's text, stdout and stderr to a file; returns
 * the call's result, *status, and what came out (malloc'ed). */
static int exec_capture(const char *sid, const char *const argv[], const char *const env[], const char *in,
			int *status, char **out, struct bee_error *e)
{
	char path[256], inpath[256];
	snprintf(path, sizeof(path), "%s/out.txt", tmp);
	snprintf(inpath, sizeof(inpath), "%s/in.txt", tmp);
	assert_int_equal(bee_write_atomic(inpath, in, strlen(in)), 0);
	int fi = open(inpath, O_RDONLY | O_CLOEXEC);
	int fo = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	assert_true(fi >= 0 && fo >= 0);
	/* the tool (nobody) writes it through the descriptor, not by name */
	int fds[3] = { fi, fo, fo };
	struct bee_session_opts o = opts_of(NULL, 0);
	int r = bee_session_exec(sid, argv, env, fds, &o, status, e);
	close(fi);
	close(fo);
	assert_int_equal(bee_read_file(path, out, NULL), 0);
	return r;
}

static void test_lifecycle(void **state_)
{
	(void)state_;
	static const char *const ctx[] = { "DEMO_CTX=7" };
	struct bee_session_opts o = opts_of(ctx, 1);
	struct bee_error e;
	char sid[32], path[4200];
	warned[0] = '\0';
	int r = bee_session_start(pack, &o, sid, &e);
	if (r < 0)
		fail_msg("start: %s", e.msg);
	assert_int_equal(strlen(sid), 16);
	/* the supervisor's warning reached the caller */
	assert_non_null(strstr(warned, "using the landlock backend"));
	struct stat st;
	bee_supervisor_socket_path(state, sid, path, sizeof(path));
	assert_int_equal(stat(path, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0600);
	struct bee_registry_entry reg;
	assert_int_equal(bee_registry_read(state, sid, &reg), 0);
	char cg[4096];
	snprintf(cg, sizeof(cg), "%s", reg.cgroup);
	assert_true(bee_pid_alive(reg.pid, reg.starttime));
	assert_int_not_equal(reg.pid, getpid());   /* a supervisor of its own */
	bee_registry_entry_fini(&reg);
	assert_int_equal(access(cg, F_OK), 0);

	/* the environment: given, reduced, set, context */
	static const char *const env[] = { "PATH=/usr/bin:/bin", "DEMO_X=1", "SECRET_TOKEN=2", NULL };
	static const char *const argv_env[] = { "/usr/bin/env", NULL };
	int status;
	char *out;
	r = exec_capture(sid, argv_env, env, "", &status, &out, &e);
	if (r < 0)
		fail_msg("exec env: %s", e.msg);
	assert_int_equal(status, 0);
	assert_non_null(strstr(out, "DEMO_X=1\n"));
	assert_non_null(strstr(out, "DEMO_SANDBOX=1\n"));
	assert_non_null(strstr(out, "DEMO_CTX=7\n"));
	assert_non_null(strstr(out, "PATH=/usr/bin:/bin\n"));
	assert_null(strstr(out, "SECRET_TOKEN"));
	free(out);

	/* the descriptors: stdin read, stdout and stderr written; the status */
	static const char *const argv_sh[] = { "/usr/bin/sh", "-c", "read x; echo got:$x; echo err >&2; exit 4", NULL };
	r = exec_capture(sid, argv_sh, env, "hi\n", &status, &out, &e);
	assert_int_equal(r, 0);
	assert_int_equal(status, 4);
	assert_string_equal(out, "got:hi\nerr\n");
	free(out);
	static const char *const argv_kill[] = { "/usr/bin/sh", "-c", "kill -USR1 $$", NULL };
	r = exec_capture(sid, argv_kill, env, "", &status, &out, &e);
	assert_int_equal(r, 0);
	assert_int_equal(status, 128 + SIGUSR1);
	free(out);

	/* the failures: stage exec (127), *status -1; a non-UTF-8 argument */
	static const char *const argv_none[] = { "/no/such/tool", NULL };
	r = exec_capture(sid, argv_none, env, "", &status, &out, &e);
	assert_true(r < 0);
	assert_int_equal(e.stage, BEE_STAGE_EXEC);
	assert_int_equal(bee_stage__exit_status(e.stage, e.err), 127);
	assert_int_equal(status, -1);
	free(out);
	static const char *const argv_bad[] = { "/usr/bin/echo", "\xff\xfe", NULL };
	r = exec_capture(sid, argv_bad, env, "", &status, &out, &e);
	assert_true(r < 0);
	assert_int_equal(e.stage, BEE_STAGE_USAGE);
	free(out);
	r = exec_capture("ffffffffffffffff", argv_env, env, "", &status, &out, &e);
	assert_true(r < 0);
	assert_int_equal(e.stage, BEE_STAGE_SESSION);
	assert_int_equal(bee_stage__exit_status(e.stage, e.err), 77);
	free(out);

	/* stop: nothing left; the id is gone */
	if (bee_session_stop(sid, &o, &e) < 0)
		fail_msg("stop: %s", e.msg);
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(bee_registry_read(state, sid, &reg), -ENOENT);
	bee_registry_entry_fini(&reg);
	assert_int_equal(access(cg, F_OK), -1);
	snprintf(path, sizeof(path), "%s/bee/%s", bpffs, sid);
	assert_int_equal(access(path, F_OK), -1);
	r = exec_capture(sid, argv_env, env, "", &status, &out, &e);
	assert_int_equal(e.stage, BEE_STAGE_SESSION);
	free(out);
	assert_int_equal(bee_session_stop(sid, &o, &e) < 0, 1);
	assert_int_equal(e.stage, BEE_STAGE_SESSION);

	/* the denied variable is in the log, flushed at stop */
	char *log;
	assert_int_equal(bee_read_file(audit, &log, NULL), 0);
	/* one summary record per exec: the names it scrubbed */
	const char *envrec = strstr(log, "\"kind\":\"Environment\",\"action\":\"Read\",\"resource\":\"");
	assert_non_null(envrec);
	const char *end = strstr(envrec, "\"decision\":\"Deny\"");
	const char *tok = strstr(envrec, "SECRET_TOKEN");
	assert_non_null(end);
	assert_true(tok && tok < end);
	assert_null(strstr(log, "\"resource\":\"DEMO_X\",\"decision\":\"Deny\""));
	free(log);
}

static void test_start_fails(void **state_)
{
	(void)state_;
	struct bee_session_opts o = opts_of(NULL, 0);
	struct bee_error e;
	char sid[32] = "x", bad[256];
	snprintf(bad, sizeof(bad), "%s/not-a-pack", tmp);
	assert_int_equal(bee_write_atomic(bad, "nonsense", 8), 0);
	assert_true(bee_session_start(bad, &o, sid, &e) < 0);
	assert_int_equal(e.stage, BEE_STAGE_PACK);
	assert_int_equal(bee_stage__exit_status(e.stage, e.err), 66);
	assert_string_equal(sid, "");
	char **ids;
	size_t n;
	assert_int_equal(bee_registry_ids(state, &ids, &n), 0);
	assert_int_equal(n, 0);
	free(ids);
}

int main(void)
{
	if (geteuid() != 0) {
		if (getenv("CI")) {
			fprintf(stderr, "test_sessions: FAILED: needs root\n");
			return 1;
		}
		printf("test_sessions: SKIPPED (needs root)\n");
		return 0;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lifecycle),
		cmocka_unit_test(test_start_fails),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
