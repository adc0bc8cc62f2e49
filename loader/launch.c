/* SPDX-License-Identifier: GPL-2.0-only */
/* launch.c: the tool's process tree.
 *
 *   bee-load ── clone3(CLONE_INTO_CGROUP | CLONE_PIDFD | CLONE_NEWPID | CLONE_NEWNS)
 *     └ init    pid 1 of the session's pid namespace, in a mount namespace of its own
 *         └ the tool
 *
 * init is in the session cgroup from its first instruction (no window in
 * which it runs outside it, nothing to hand over through cgroup.procs), and
 * bee-load holds a pidfd of it that cannot name a recycled pid. init:
 *
 *   every signal blocked (it waits for them with sigwaitinfo)
 *   PR_SET_PDEATHSIG SIGKILL    bee-load's death kills init, and with pid 1 the
 *                               kernel kills the whole pid namespace
 *   unshare(CLONE_NEWCGROUP)    rooted at the session cgroup it is already in
 *   vm.memfd_noexec = 2         no memfd of the pid namespace can be executed
 *                               (6.3+; Landlock never sees them)
 *   bee_mountns_enter           private mounts, a /proc of the new pid namespace,
 *                               bee's objects covered, the tree read-only
 *                               (mountns.c)
 *   forks the tool, forwards SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2
 *   and SIGWINCH to the tool's process group, reaps every orphan, and when
 *   the tool ends writes its raw wait status to a pipe and exits.
 *
 * The tool, in this order:
 *
 *   resets every signal disposition and unblocks every signal
 *   a first message on the report socket: its pid, translated by the kernel
 *                               into bee-load's pid namespace (SCM_CREDENTIALS)
 *   setsid()                    a new session: no controlling terminal
 *   umask(077)
 *   PR_SET_PDEATHSIG SIGKILL    the tool does not outlive init
 *   the user switch             setgroups, setresgid, setresuid (user.c chose)
 *   PR_SET_NO_NEW_PRIVS
 *   landlock_restrict_self      the landlock backend's ruleset (its rules on the
 *                               session's own /proc and cgroup2 added first, so
 *                               that /proc/self is the tool's), or bpf-lsm's
 *                               hardening one
 *   securebits locked (NOROOT, NO_SETUID_FIXUP, KEEP_CAPS, NO_CAP_AMBIENT_RAISE)
 *   every capability dropped from the bounding set, ambient cleared,
 *   permitted/effective/inheritable emptied (capset)
 *   the seccomp filter          last: nothing after it needs a refused call
 *   close_range(3, ~0)          every inherited descriptor above 2
 *   execve, over the tool's PATH when argv[0] has no '/'
 *
 * A failure in init or in the tool is written as (stage, errno, call) to a
 * socket that exec closes (SOCK_CLOEXEC; init closes its end once the tool
 * is forked), so bee-load knows whether the tool started, and why not: the
 * tool never "half starts". Everything the children need is prepared before
 * the clone; they only make system calls.
 */
#include "internal.h"

#include "bee_dfa.h"
#include "bee_names.h"
#include "eval.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <linux/securebits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
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
	const struct bee_pack_section_info *img = bee_pack_image(p, bee_map_name(BEE_MAP_ENV));
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
		bool allow = (vd.perms & BEE_PERM_READ) != 0;
		if (cb)
			cb(ctx, *v, (size_t)(eq - *v), allow);
		if (allow && (err = env_put(&envp, &n, &cap, *v)) < 0)
			goto fail;
	}
	for (size_t i = 0; i < m->nrules; i++) {
		const struct bee_mf_rule *r = &m->rules[i];
		if (r->rkind != BEE_RULE_ENV_SET)
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

/* ---- the children ------------------------------------------------------------------ */

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


struct child_report {
	int32_t stage;              /* enum bee_stage; REPORT_HELLO: the tool's first word */
	int32_t err;                /* errno */
	char what[24];              /* the call that failed */
};
#define REPORT_HELLO (-1)

/* What init and the tool need, prepared before the clone. */
struct child_plan {
	const struct bee_launch *l;
	const struct exec_plan *pl;
	int report;                 /* the children's end of the report socket */
	int report_parent;          /* bee-load's end (closed in init) */
	int status, status_parent;  /* the status pipe's ends */
	int last_cap;
	int memfd_noexec;           /* /proc/sys/vm/memfd_noexec, opened here; -1: none */
	bool fault_namespace;       /* test builds: BEE_FAULT=namespace */
};

/* The signals init passes on to the tool (bee-load's teardown sends the
 * first four; the rest are a terminal's and a job controller's). */
static const int forwarded[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH };

static void report_send(int fd, int stage, int err, const char *what)
{
	struct child_report r = { .stage = stage, .err = err };
	snprintf(r.what, sizeof(r.what), "%s", what);
	ssize_t w = send(fd, &r, sizeof(r), MSG_NOSIGNAL);
	(void)w;
}

__attribute__((noreturn))
static void child_fail(int fd, enum bee_stage st, const char *what)
{
	int err = errno;
	report_send(fd, st, err, what);
	_exit(st == BEE_STAGE_EXEC ? (err == ENOENT ? 127 : 126) : 125);
}

static void tool_user(const struct bee_user *u, int fd)
{
	if (!u || !u->change)
		return;
	if (setgroups(u->ngroups, u->groups) < 0)
		child_fail(fd, BEE_STAGE_USER, "setgroups");
	if (setresgid(u->gid, u->gid, u->gid) < 0)
		child_fail(fd, BEE_STAGE_USER, "setresgid");
	/* the capabilities survive the switch for the steps that drop them for good */
	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
		child_fail(fd, BEE_STAGE_USER, "keepcaps");
	if (setresuid(u->uid, u->uid, u->uid) < 0)
		child_fail(fd, BEE_STAGE_USER, "setresuid");
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];
	if (syscall(SYS_capget, &h, d) < 0)
		child_fail(fd, BEE_STAGE_USER, "capget");
	d[0].effective = d[0].permitted;
	d[1].effective = d[1].permitted;
	if (syscall(SYS_capset, &h, d) < 0)
		child_fail(fd, BEE_STAGE_USER, "capset");
}

__attribute__((noreturn))
static void tool_main(const struct child_plan *cp)
{
	const struct bee_launch *l = cp->l;
	int errfd = cp->report;
	sigset_t none;
	sigemptyset(&none);
	for (int s = 1; s < NSIG; s++)
		signal(s, SIG_DFL);
	sigprocmask(SIG_SETMASK, &none, NULL);
	close(cp->status);
	report_send(errfd, REPORT_HELLO, 0, "");

	if (setsid() < 0)
		child_fail(errfd, BEE_STAGE_LAUNCH, "setsid");
	umask(077);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		child_fail(errfd, BEE_STAGE_LAUNCH, "pdeathsig");
	if (getppid() != 1) {
		errno = ESRCH;
		child_fail(errfd, BEE_STAGE_LAUNCH, "init gone");
	}
	tool_user(l->user, errfd);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		child_fail(errfd, BEE_STAGE_LAUNCH, "no_new_privs");
	if (l->ruleset_fd >= 0) {
		/* the rules on init's /proc and cgroup2, added here so that
		 * /proc/self is the tool's own */
		const char *what = "landlock";
		int err = bee_landlock_late_add(l->ruleset_fd, l->ll_late, &what);
		if (err) {
			errno = -err;
			child_fail(errfd, BEE_STAGE_LANDLOCK, what);
		}
		if (syscall(__NR_landlock_restrict_self, l->ruleset_fd, l->ll_flags) < 0)
			child_fail(errfd, BEE_STAGE_LANDLOCK, "landlock_restrict_self");
		close(l->ruleset_fd);
	}
	if (prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
					     SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
					     SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED,
		  0, 0, 0) < 0)
		child_fail(errfd, BEE_STAGE_LAUNCH, "securebits");
	for (int c = 0; c <= cp->last_cap; c++)
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL)
			child_fail(errfd, BEE_STAGE_LAUNCH, "capbset_drop");
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
		child_fail(errfd, BEE_STAGE_LAUNCH, "ambient");
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];
	memset(d, 0, sizeof(d));
	if (syscall(SYS_capset, &h, d) < 0)
		child_fail(errfd, BEE_STAGE_LAUNCH, "capset");
	if (l->seccomp && prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, l->seccomp, 0, 0) < 0)
		child_fail(errfd, BEE_STAGE_SECCOMP, "seccomp");
	/* every descriptor above 2, but the report socket (closed by exec) */
	int lo = errfd >= 3 ? errfd + 1 : 3;
	if (errfd > 3 && syscall(SYS_close_range, 3, errfd - 1, 0) < 0)
		child_fail(errfd, BEE_STAGE_LAUNCH, "close_range");
	if (syscall(SYS_close_range, lo, ~0U, 0) < 0)
		child_fail(errfd, BEE_STAGE_LAUNCH, "close_range");

	int first = 0;
	for (size_t i = 0; i < cp->pl->n; i++) {
		execve(cp->pl->paths[i], (char *const *)l->argv, l->envp);
		/* as execvp: a missing entry tries the next; a refusal is remembered */
		if (errno == EACCES)
			first = EACCES;
		else if (errno != ENOENT && errno != ENOTDIR)
			break;
		errno = first ? first : errno;
	}
	child_fail(errfd, BEE_STAGE_EXEC, "execve");
}

static void on_signal(int sig)
{
	(void)sig;
}

/* init's life after the fork: forward, reap, report the tool's end. */
__attribute__((noreturn))
static void init_wait(pid_t tool, int status_fd)
{
	sigset_t waitset;
	sigemptyset(&waitset);
	sigaddset(&waitset, SIGCHLD);
	for (size_t i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
		sigaddset(&waitset, forwarded[i]);
	for (;;) {
		siginfo_t si;
		int sig = sigwaitinfo(&waitset, &si);
		if (sig < 0)
			continue;
		if (sig != SIGCHLD) {
			/* the tool leads its process group (setsid), unless it has not got there yet */
			if (kill(-tool, sig) < 0)
				kill(tool, sig);
			continue;
		}
		int st;
		pid_t p;
		while ((p = waitpid(-1, &st, WNOHANG)) > 0) {
			if (p != tool)
				continue;   /* an orphan reparented to pid 1 */
			ssize_t w = write(status_fd, &st, sizeof(st));
			(void)w;
			/* pid 1 leaving kills whatever else runs in the namespace */
			_exit(0);
		}
	}
}

/* the tool's stack until it execs (it runs in init's memory) */
static char tool_stack[256 * 1024] __attribute__((aligned(64)));

static int tool_entry(void *cp)
{
	tool_main(cp);
}

__attribute__((noreturn))
static void init_main(const struct child_plan *cp)
{
	int fd = cp->report;
	sigset_t all;
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	close(cp->report_parent);
	close(cp->status_parent);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		child_fail(fd, BEE_STAGE_LAUNCH, "pdeathsig");
	/* bee-load gone before the line above: its end of the socket is closed */
	struct pollfd p = { .fd = fd, .events = POLLOUT };
	if (poll(&p, 1, 0) < 0 || (p.revents & (POLLHUP | POLLERR))) {
		errno = ESRCH;
		child_fail(fd, BEE_STAGE_LAUNCH, "parent gone");
	}
	if (cp->fault_namespace) {
		errno = EIO;
		child_fail(fd, BEE_STAGE_NAMESPACE, "injected fault");
	}
	if (unshare(CLONE_NEWCGROUP) < 0)
		child_fail(fd, BEE_STAGE_NAMESPACE, "unshare cgroup");
	/* memfds of this pid namespace cannot be executed (vm.memfd_noexec 2,
	 * kernel 6.3+, a setting of the writer's pid namespace): Landlock
	 * never checks the kernel's internal mounts where they live. Before
	 * 6.3 only bpf-lsm's bprm hook refuses them. The file was opened in
	 * bee-load: init runs under the session's hooks, which would refuse
	 * the open. */
	if (cp->memfd_noexec >= 0) {
		ssize_t w = pwrite(cp->memfd_noexec, "2", 1, 0);
		if (w != 1)
			child_fail(fd, BEE_STAGE_NAMESPACE, "memfd_noexec");
		close(cp->memfd_noexec);
	}
	if (cp->l->mountns) {
		const char *what = "mount namespace";
		int err = bee_mountns_enter(cp->l->mountns, &what);
		if (err) {
			errno = -err;
			child_fail(fd, BEE_STAGE_NAMESPACE, what);
		}
	}
	/* a handler, so that no signal from outside is dropped for pid 1 */
	struct sigaction sa = { .sa_handler = on_signal };
	for (size_t i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
		sigaction(forwarded[i], &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);
	/* As posix_spawn does: the tool shares init's memory on a stack of its
	 * own until it execs (CLONE_VM | CLONE_VFORK: init waits meanwhile),
	 * so the launcher's address space is not copied a second time. Its
	 * signal handlers, descriptors, credentials and file-system context
	 * are its own; every signal is still blocked (init's mask) until it
	 * has reset the handlers. */
	long tool = clone(tool_entry, tool_stack + sizeof(tool_stack), CLONE_VM | CLONE_VFORK | SIGCHLD,
			  (void *)cp);
	if (tool < 0)
		child_fail(fd, BEE_STAGE_LAUNCH, "clone");
	close(fd);
	init_wait((pid_t)tool, cp->status);
}

/* One message from the report socket; the sender's pid (in this pid
 * namespace) in *pid. Returns its size, 0 at EOF, or -errno. */
static ssize_t report_recv(int fd, struct child_report *r, pid_t *pid)
{
	union {
		char buf[CMSG_SPACE(sizeof(struct ucred))];
		struct cmsghdr align;
	} cm;
	struct iovec iov = { .iov_base = r, .iov_len = sizeof(*r) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cm.buf,
			     .msg_controllen = sizeof(cm.buf) };
	ssize_t n;
	do
		n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS) {
			struct ucred uc;
			memcpy(&uc, CMSG_DATA(c), sizeof(uc));
			*pid = uc.pid;
		}
	}
	return n;
}

int bee_launch_status(int *status_fd, int init_status)
{
	int st, n = -1;
	if (*status_fd >= 0) {
		do
			n = (int)read(*status_fd, &st, sizeof(st));
		while (n < 0 && errno == EINTR);
		close(*status_fd);
		*status_fd = -1;
	}
	if (n != (int)sizeof(st))
		return init_status;   /* init ended before the tool did (killed) */
	return WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : init_status;
}

int bee_launch(const struct bee_launch *l, struct bee_launched *out, struct bee_error *e)
{
	struct exec_plan pl;
	int sv[2] = { -1, -1 }, sp[2] = { -1, -1 }, pidfd = -1, err, one = 1;
	*out = (struct bee_launched){ .pid = -1, .pidfd = -1, .status_fd = -1 };
	if ((err = bee_fault(BEE_STAGE_LAUNCH)) < 0)
		return bee_fail(e, BEE_STAGE_LAUNCH, err, "injected fault");
	err = exec_plan_build(l->argv[0], l->envp, &pl);
	if (err) {
		exec_plan_fini(&pl);
		return bee_fail(e, err == -ENOENT ? BEE_STAGE_EXEC : BEE_STAGE_LAUNCH, err,
				"'%s': %s", l->argv[0], strerror(-err));
	}
	struct child_plan cp = { .l = l, .pl = &pl, .last_cap = cap_last(),
				 .memfd_noexec = open("/proc/sys/vm/memfd_noexec", O_WRONLY | O_CLOEXEC),
				 .fault_namespace = bee_fault(BEE_STAGE_NAMESPACE) < 0 };
	if (cp.memfd_noexec < 0 && errno != ENOENT) {
		err = bee_fail(e, BEE_STAGE_NAMESPACE, -errno, "/proc/sys/vm/memfd_noexec: %s", strerror(errno));
		goto out;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0 ||
	    setsockopt(sv[0], SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) < 0 || pipe2(sp, O_CLOEXEC) < 0) {
		err = bee_fail(e, BEE_STAGE_LAUNCH, -errno, "report socket: %s", strerror(errno));
		goto out;
	}
	cp.report = sv[1];
	cp.report_parent = sv[0];
	cp.status = sp[1];
	cp.status_parent = sp[0];
	struct clone_args ca = {
		.flags = CLONE_INTO_CGROUP | CLONE_PIDFD | CLONE_NEWPID | CLONE_NEWNS,
		.pidfd = (uint64_t)(uintptr_t)&pidfd,
		.exit_signal = SIGCHLD,
		.cgroup = (uint64_t)l->cgroup_fd,
	};
	long pid = syscall(SYS_clone3, &ca, sizeof(ca));
	if (pid < 0) {
		int en = errno;
		err = bee_fail(e, en == EPERM || en == EINVAL || en == ENOSPC || en == EUSERS ? BEE_STAGE_NAMESPACE
											    : BEE_STAGE_LAUNCH,
			       -en, "clone3 into the session cgroup with new pid and mount namespaces: %s",
			       strerror(en));
		goto out;
	}
	if (pid == 0)
		init_main(&cp);
	/* also on failure: what the kernel logged of the child names this pid */
	out->pid = (pid_t)pid;
	close(sv[1]);
	close(sp[1]);
	sv[1] = sp[1] = -1;
	struct child_report r;
	ssize_t n;
	for (;;) {
		pid_t from = 0;
		n = report_recv(sv[0], &r, &from);
		if (n == (ssize_t)sizeof(r) && r.stage == REPORT_HELLO) {
			out->tool_pid = from;
			continue;
		}
		break;
	}
	if (n == 0) {
		/* EOF: exec closed the socket, the tool runs */
		out->pidfd = pidfd;
		out->status_fd = sp[0];
		pidfd = sp[0] = -1;
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
	for (int i = 0; i < 2; i++) {
		if (sv[i] >= 0)
			close(sv[i]);
		if (sp[i] >= 0)
			close(sp[i]);
	}
	if (pidfd >= 0)
		close(pidfd);
	if (cp.memfd_noexec >= 0)
		close(cp.memfd_noexec);
	exec_plan_fini(&pl);
	return err;
}
