/* SPDX-License-Identifier: GPL-2.0-only */
/* launch.c: the tool's process.
 *
 * It is created with clone3(CLONE_INTO_CGROUP | CLONE_PIDFD), so it is in
 * the session cgroup from its first instruction (no window in which it
 * runs outside it, and nothing to hand over through cgroup.procs), and
 * bee-load holds a pidfd that cannot name a recycled pid. The child then,
 * in this order:
 *
 *   resets every signal disposition and unblocks every signal
 *   setsid()                    a new session: no controlling terminal
 *   umask(077)
 *   PR_SET_PDEATHSIG SIGKILL    the tool does not outlive its observer
 *   PR_SET_NO_NEW_PRIVS
 *   landlock_restrict_self      the landlock backend's ruleset, or bpf-lsm's hardening one
 *   securebits locked (NOROOT, NO_SETUID_FIXUP, KEEP_CAPS, NO_CAP_AMBIENT_RAISE)
 *   every capability dropped from the bounding set, ambient cleared,
 *   permitted/effective/inheritable emptied (capset)
 *   close_range(3, ~0)          every inherited descriptor above 2
 *   execve, over the tool's PATH when argv[0] has no '/'
 *
 * A failure in the child is written as (stage, errno) to a pipe that
 * exec closes (O_CLOEXEC), so bee-load knows whether the tool started,
 * and why not: the tool never "half starts". Everything the child needs
 * is prepared before the clone; the child only makes system calls.
 */
#include "internal.h"

#include "bee_dfa.h"
#include "eval.h"
#include "ir.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/sched.h>
#include <linux/securebits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

/* ---- environment --------------------------------------------------------------------- */

static bool env_name_eq(const char *a, const char *b)
{
	size_t la = strcspn(a, "="), lb = strcspn(b, "=");
	return la == lb && memcmp(a, b, la) == 0;
}

/* Adds "K=V" to the list, replacing an entry of the same name. */
static int env_put(char ***envp, size_t *n, size_t *cap, const char *kv)
{
	char *copy = strdup(kv);
	if (!copy)
		return -ENOMEM;
	for (size_t i = 0; i < *n; i++) {
		if (env_name_eq((*envp)[i], kv)) {
			free((*envp)[i]);
			(*envp)[i] = copy;
			return 0;
		}
	}
	if (*n + 2 > *cap) {
		size_t nc = *cap ? *cap * 2 : 32;
		char **ne = realloc(*envp, nc * sizeof(*ne));
		if (!ne) {
			free(copy);
			return -ENOMEM;
		}
		*envp = ne;
		*cap = nc;
	}
	(*envp)[(*n)++] = copy;
	(*envp)[*n] = NULL;
	return 0;
}

void bee_env_free(char **envp)
{
	if (!envp)
		return;
	for (char **p = envp; *p; p++)
		free(*p);
	free(envp);
}

int bee_env_build(const struct bee_pack *p, const struct bee_manifest *m, const char *const launcher[],
		  const char *const context[], size_t ncontext, bee_env_decision_fn cb, void *ctx,
		  char ***out)
{
	const struct bee_pack_section_info *img = bee_pack_image(p, "bee_env");
	char **envp = calloc(1, sizeof(*envp));
	size_t n = 0, cap = 1;
	int err = 0;
	*out = NULL;
	if (!envp)
		return -ENOMEM;
	for (const char *const *v = launcher; v && *v; v++) {
		const char *eq = strchr(*v, '=');
		if (!eq)
			continue;
		struct bee_verdict vd;
		bee_eval_dfa(img->data, *v, (size_t)(eq - *v), &vd);
		bool allow = (vd.perms & IR_PERM_READ) != 0;
		if (cb)
			cb(ctx, *v, (size_t)(eq - *v), allow);
		if (allow && (err = env_put(&envp, &n, &cap, *v)) < 0)
			goto fail;
	}
	for (size_t i = 0; i < m->nrules; i++) {
		const struct bee_mf_rule *r = &m->rules[i];
		if (strcmp(r->domain, "env") != 0 || strcmp(r->kind, "set") != 0)
			continue;
		char *kv = malloc(strlen(r->text) + strlen(r->value) + 2);
		if (!kv) {
			err = -ENOMEM;
			goto fail;
		}
		sprintf(kv, "%s=%s", r->text, r->value);
		err = env_put(&envp, &n, &cap, kv);
		free(kv);
		if (err)
			goto fail;
	}
	for (size_t i = 0; i < ncontext; i++) {
		if (!strchr(context[i], '=') || context[i][0] == '=') {
			err = -EINVAL;
			goto fail;
		}
		if ((err = env_put(&envp, &n, &cap, context[i])) < 0)
			goto fail;
	}
	*out = envp;
	return 0;
fail:
	bee_env_free(envp);
	return err;
}

/* ---- the child ----------------------------------------------------------------------- */

struct child_report {
	int32_t stage;              /* enum bee_stage */
	int32_t err;                /* errno */
	char what[24];              /* the call that failed */
};

__attribute__((noreturn))
static void child_fail(int fd, enum bee_stage st, const char *what)
{
	struct child_report r = { .stage = st, .err = errno };
	snprintf(r.what, sizeof(r.what), "%s", what);
	ssize_t w = write(fd, &r, sizeof(r));
	(void)w;
	_exit(st == BEE_STAGE_EXEC ? (r.err == ENOENT ? 127 : 126) : 125);
}

/* Candidate paths for argv[0], as execvp would try them. */
struct exec_plan {
	char **paths;
	size_t n;
};

static const char *env_get(char *const envp[], const char *name)
{
	size_t l = strlen(name);
	for (char *const *p = envp; *p; p++)
		if (strncmp(*p, name, l) == 0 && (*p)[l] == '=')
			return *p + l + 1;
	return NULL;
}

static int exec_plan_build(const char *file, char *const envp[], struct exec_plan *pl)
{
	memset(pl, 0, sizeof(*pl));
	if (!*file)
		return -ENOENT;
	if (strchr(file, '/')) {
		pl->paths = calloc(2, sizeof(char *));
		if (!pl->paths || !(pl->paths[0] = strdup(file)))
			return -ENOMEM;
		pl->n = 1;
		return 0;
	}
	const char *path = env_get(envp, "PATH");
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	size_t cap = 1;
	for (const char *c = path; *c; c++)
		cap += *c == ':';
	pl->paths = calloc(cap + 1, sizeof(char *));
	if (!pl->paths)
		return -ENOMEM;
	for (const char *s = path;;) {
		size_t l = strcspn(s, ":");
		char *full = malloc(l + strlen(file) + 3);
		if (!full)
			return -ENOMEM;
		/* an empty entry is the current directory, as execvp has it */
		sprintf(full, "%.*s%s%s", (int)l, l ? s : ".", "/", file);
		pl->paths[pl->n++] = full;
		if (!s[l])
			break;
		s += l + 1;
	}
	return 0;
}

static void exec_plan_fini(struct exec_plan *pl)
{
	for (size_t i = 0; i < pl->n; i++)
		free(pl->paths[i]);
	free(pl->paths);
}

static int cap_last(void)
{
	char *t = NULL;
	int last = 40;
	if (bee_read_file("/proc/sys/kernel/cap_last_cap", &t, NULL) == 0)
		last = atoi(t);
	free(t);
	return last;
}

__attribute__((noreturn))
static void child_main(const struct bee_launch *l, const struct exec_plan *pl, int errfd, pid_t parent,
		       int last_cap)
{
	sigset_t all;
	sigemptyset(&all);
	for (int s = 1; s < NSIG; s++)
		signal(s, SIG_DFL);
	sigprocmask(SIG_SETMASK, &all, NULL);

	if (setsid() < 0)
		child_fail(errfd, BEE_STAGE_LAUNCH, "setsid");
	umask(077);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		child_fail(errfd, BEE_STAGE_LAUNCH, "pdeathsig");
	if (getppid() != parent) {
		errno = ESRCH;
		child_fail(errfd, BEE_STAGE_LAUNCH, "parent gone");
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		child_fail(errfd, BEE_STAGE_LAUNCH, "no_new_privs");
	if (l->ruleset_fd >= 0) {
		if (syscall(__NR_landlock_restrict_self, l->ruleset_fd, l->ll_flags) < 0)
			child_fail(errfd, BEE_STAGE_LANDLOCK, "landlock_restrict_self");
		close(l->ruleset_fd);
	}
	if (prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
					     SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
					     SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED,
		  0, 0, 0) < 0)
		child_fail(errfd, BEE_STAGE_LAUNCH, "securebits");
	for (int c = 0; c <= last_cap; c++)
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL)
			child_fail(errfd, BEE_STAGE_LAUNCH, "capbset_drop");
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
		child_fail(errfd, BEE_STAGE_LAUNCH, "ambient");
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];
	memset(d, 0, sizeof(d));
	if (syscall(SYS_capset, &h, d) < 0)
		child_fail(errfd, BEE_STAGE_LAUNCH, "capset");
	/* every descriptor above 2, but the report pipe (closed by exec) */
	int lo = errfd >= 3 ? errfd + 1 : 3;
	if (errfd > 3 && syscall(SYS_close_range, 3, errfd - 1, 0) < 0)
		child_fail(errfd, BEE_STAGE_LAUNCH, "close_range");
	if (syscall(SYS_close_range, lo, ~0U, 0) < 0)
		child_fail(errfd, BEE_STAGE_LAUNCH, "close_range");

	int first = 0;
	for (size_t i = 0; i < pl->n; i++) {
		execve(pl->paths[i], (char *const *)l->argv, l->envp);
		/* as execvp: a missing entry tries the next; a refusal is remembered */
		if (errno == EACCES)
			first = EACCES;
		else if (errno != ENOENT && errno != ENOTDIR)
			break;
		errno = first ? first : errno;
	}
	child_fail(errfd, BEE_STAGE_EXEC, "execve");
}

int bee_launch(const struct bee_launch *l, pid_t *pid_out, int *pidfd_out, struct bee_error *e)
{
	struct exec_plan pl;
	int pipefd[2] = { -1, -1 }, pidfd = -1, err;
	*pid_out = -1;
	*pidfd_out = -1;
	if ((err = bee_fault(BEE_STAGE_LAUNCH)) < 0)
		return bee_fail(e, BEE_STAGE_LAUNCH, err, "injected fault");
	err = exec_plan_build(l->argv[0], l->envp, &pl);
	if (err) {
		exec_plan_fini(&pl);
		return bee_fail(e, err == -ENOENT ? BEE_STAGE_EXEC : BEE_STAGE_LAUNCH, err,
				"'%s': %s", l->argv[0], strerror(-err));
	}
	int last_cap = cap_last();
	if (pipe2(pipefd, O_CLOEXEC) < 0) {
		err = bee_fail(e, BEE_STAGE_LAUNCH, -errno, "pipe: %s", strerror(errno));
		goto out;
	}
	pid_t parent = getpid();
	struct clone_args ca = {
		.flags = CLONE_INTO_CGROUP | CLONE_PIDFD,
		.pidfd = (uint64_t)(uintptr_t)&pidfd,
		.exit_signal = SIGCHLD,
		.cgroup = (uint64_t)l->cgroup_fd,
	};
	long pid = syscall(SYS_clone3, &ca, sizeof(ca));
	if (pid < 0) {
		err = bee_fail(e, BEE_STAGE_LAUNCH, -errno, "clone3 into the session cgroup: %s",
			       strerror(errno));
		goto out;
	}
	if (pid == 0)
		child_main(l, &pl, pipefd[1], parent, last_cap);
	/* also on failure: what the kernel logged of the child names this pid */
	*pid_out = (pid_t)pid;
	close(pipefd[1]);
	pipefd[1] = -1;
	struct child_report r;
	ssize_t n;
	do
		n = read(pipefd[0], &r, sizeof(r));
	while (n < 0 && errno == EINTR);
	if (n == 0) {
		/* EOF: exec closed the pipe, the tool runs */
		*pidfd_out = pidfd;
		pidfd = -1;
		err = 0;
		goto out;
	}
	int status;
	while (waitpid((pid_t)pid, &status, 0) < 0 && errno == EINTR)
		;
	if (n != (ssize_t)sizeof(r)) {
		err = bee_fail(e, BEE_STAGE_LAUNCH, -EIO, "the tool's process ended before exec (status %d)",
			       status);
		goto out;
	}
	r.what[sizeof(r.what) - 1] = '\0';
	err = -r.err;
	if (r.stage == BEE_STAGE_EXEC)
		bee_fail(e, BEE_STAGE_EXEC, err, "'%s': %s", l->argv[0], strerror(r.err));
	else
		bee_fail(e, (enum bee_stage)r.stage, err, "the tool's process: %s: %s", r.what, strerror(r.err));
out:
	if (pipefd[0] >= 0)
		close(pipefd[0]);
	if (pipefd[1] >= 0)
		close(pipefd[1]);
	if (pidfd >= 0)
		close(pidfd);
	exec_plan_fini(&pl);
	return err;
}
