/* SPDX-License-Identifier: GPL-2.0-only */
/* launch.c: the tool's process tree.
 *
 *   bee-load ── clone3(CLONE_INTO_CGROUP | CLONE_PIDFD | CLONE_NEWPID [| CLONE_VM])
 *     └ init    pid 1 of the session's pid namespace, in a mount namespace of its own
 *         └ the tool
 *
 * On x86-64 init shares bee-load's address space, on a stack and memory
 * of its own (struct init_mem), and runs on raw system calls alone
 * (sys.h); elsewhere it gets a copy, as fork makes.
 *
 * init is made when the session opens (bee_init_start), right after its
 * cgroup, so that what it sets up overlaps bee-load's loading of the BPF
 * programs. It is in the session cgroup from its first instruction (no
 * window in which it runs outside it, nothing to hand over through
 * cgroup.procs), and bee-load holds a pidfd of it that cannot name a
 * recycled pid. init:
 *
 *   every signal blocked (it reads them from a signalfd)
 *   PR_SET_PDEATHSIG SIGKILL    bee-load's death kills init, and with pid 1 the
 *                               kernel kills the whole pid namespace
 *   every disposition default   none of bee-load's (an ignored signal would
 *                               stay ignored across a tool's exec)
 *   the bounding set emptied    for every tool, which inherits it (init never
 *                               execs)
 *   close_range                 nothing of bee-load's stays open in init
 *   unshare(CLONE_NEWNS | CLONE_NEWCGROUP)
 *                               its own mount namespace (a copy of bee-load's,
 *                               made here so that the clone is short), and a
 *                               cgroup namespace rooted at the session cgroup
 *                               it is already in
 *   vm.memfd_noexec = 2         no memfd of the pid namespace can be executed
 *                               (6.3+; Landlock never sees them)
 *   bee_mountns_enter           private mounts, a /proc of the new pid namespace,
 *                               bee's objects covered, the tree read-only
 *                               (mountns.c)
 *   the seccomp filter          on init itself, after its last mount: every
 *                               tool inherits it at its clone; nothing init or
 *                               a tool before its exec calls is refused
 *   READY on the report socket, then waits for bee-load's go
 *
 * bee_launch writes a tool's command into the arena (memory init shares,
 * mapped before the clone: the same address in both) and sends a go on the
 * control socket with the tool's report socket, its stdio (an exec
 * client's) and the Landlock ruleset (SCM_RIGHTS). init serves many tools,
 * one launch at a time: it clones each, forwards SIGTERM, SIGINT, SIGHUP,
 * SIGQUIT, SIGUSR1, SIGUSR2 and SIGWINCH to every tool's process group
 * and a signal bee-load names to one tool's, reaps every orphan, and when
 * a tool ends writes its id and raw wait status (and whether anything else
 * still ran) to the status pipe. It exits at the control socket's EOF,
 * which ends the pid namespace.
 *
 * The tool, in this order:
 *
 *   resets init's signal handlers (every other disposition is at its
 *   default in init already) and unblocks every signal
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
 *   ambient cleared, permitted/effective/inheritable emptied (capset); the
 *   bounding set is empty from init (below)
 *   close_range(3, ~0)          every inherited descriptor above 2
 *   execve, over the tool's PATH when argv[0] has no '/'
 *
 * A failure in init is written as (stage, errno, call) to the control
 * socket before READY; a failure in the tool to the tool's own report
 * socket, which exec closes (SOCK_CLOEXEC; init closes its copy once the
 * tool is cloned), so bee-load knows whether the tool started, and why
 * not: the tool never "half starts". init and the tool before its exec
 * only make system calls (bee_sys), and write only init_mem, the stack
 * they run on, and the kernel's side of those calls.
 */
#include "internal.h"
#include "sys.h"

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
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
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
	int32_t stage;              /* enum bee_stage, or REPORT_HELLO / REPORT_READY */
	int32_t err;                /* errno */
	char what[24];              /* the call that failed */
};
#define REPORT_HELLO (-1)       /* the tool's first word: its pid rides along (SCM_CREDENTIALS) */
#define REPORT_READY (-2)       /* init's: namespaces, mounts and the filter are in place */

/* init's word on the status pipe when a tool ends: the tool's id (the
 * plan's), its raw wait status, and whether anything else still ran in
 * the pid namespace then (other tools, orphans). When nothing did and
 * bee-load closes the control socket, init ends recording nothing, so
 * bee-load need not kill the cgroup before it reads the last records.
 * 12 bytes, below PIPE_BUF: the words of tools that end together never
 * interleave. */
struct tool_end {
	uint32_t id;
	int32_t status;
	int32_t alone;
};

/* bee-load's word to init: a tool's plan is in the arena. The attached
 * descriptors (SCM_RIGHTS), in this order: the tool's report socket, its
 * stdin, stdout and stderr (INIT_GO_STDIO), its Landlock ruleset
 * (INIT_GO_RULESET). */
struct init_go {
	uint32_t magic;
	uint32_t flags;
	uint32_t id;                /* INIT_SIGNAL: the tool */
	int32_t sig;                /* INIT_SIGNAL: the signal */
};
#define INIT_GO 0x62656567u     /* "beeg" */
/* bee-load's other word: a signal for one tool's process group, sent from
 * inside the pid namespace (a pid there names nothing outside it, even
 * once the tool is gone and its number reused); no descriptors */
#define INIT_SIGNAL 0x62656573u /* "bees" */
#define INIT_GO_STDIO 1u
#define INIT_GO_RULESET 2u
/* the session ends with this tool (run's): init leaves as soon as it has
 * said the tool's end with nothing else left, without waiting for
 * bee-load to read it and close the control socket, so that its
 * namespaces are torn down while bee-load reads the last records */
#define INIT_GO_LAST 4u
#define INIT_GO_MAXFDS 5
_Static_assert(INIT_GO_MAXFDS <= BEE_SEND_FDS_MAX, "a go message's descriptors fit bee_send_fds");
/* the tools one init runs at once; one more is refused (stage LAUNCH) */
#define INIT_TOOLS_MAX 1024

/* The tool's command, written by bee-load into the arena (init's too: a
 * mapping made before its clone, so at the same address in both) once
 * it is known; every pointer in it points into the arena. */
struct tool_plan {
	struct bee_launch l;
	struct exec_plan pl;
	uint32_t id;                /* named in the tool's tool_end */
};

/* What init has from its clone on. */
struct init_plan {
	const struct bee_mountns *mountns;   /* copies in init_mem */
	const struct sock_fprog *filter;
	int report;                 /* init's end of the control socket */
	int status;                 /* the status pipe's writing end */
	int memfd_noexec;           /* /proc/sys/vm/memfd_noexec, opened by bee-load; -1: none */
	bool fault_namespace;       /* test builds: BEE_FAULT=namespace */
	int last_cap;               /* /proc/sys/kernel/cap_last_cap */
	const struct tool_plan *tp;
};

/* The tool's view: the plan, and what init adds to it (its descriptors).
 * In init's memory, which the tool shares until its exec. */
struct tool_ctx {
	const struct tool_plan *tp;
	int report, status;         /* the tool's report socket, init's status pipe */
	int ruleset_fd;             /* -1: no Landlock */
	int stdio[3];               /* the client's stdin, stdout, stderr; -1: init's own */
};

/* init's memory: one private mapping for each init, made by bee-load
 * before the clone and unmapped only once init is reaped (bee_init_fini).
 *
 *   guard page | init's stack | guard page | the tools' stack | init_mem
 *
 * On x86-64 init shares bee-load's address space (CLONE_VM: the clone
 * copies no page table, bee-load's pages do not fault again after it, and
 * init's exit tears nothing down; 0.8 ms of CPU of a warm run here). Everything init
 * and a tool before its exec write is here or on the kernel's side of a
 * system call; what they read is here, in the arena, or bee-load's code
 * and constants; none of it does bee-load write while init lives. The
 * mount plan and the filter are copied here whole at the clone: bee-load
 * frees its own when it likes. Elsewhere init gets a copy of it all, as
 * fork makes, and the layout is the same. */
#define INIT_STACK (128u << 10)
#define TOOL_STACK (128u << 10)
#define STACK_HOT (16u << 10)       /* what of each stack is used (bee_init_start) */

struct init_mem {
	struct init_plan ip;
	char *tool_stack;           /* the tools' stack's top */
	struct tool_ctx tc;         /* the tool being cloned (CLONE_VFORK: one at a time) */
	/* the tools init runs: pid (in the session's pid namespace) and id;
	 * last: a go said INIT_GO_LAST */
	pid_t tool_pid[INIT_TOOLS_MAX];
	uint32_t tool_id[INIT_TOOLS_MAX];
	size_t ntools;
	bool last;
	struct tool_end ends[INIT_TOOLS_MAX];
	struct sock_fprog filter;
	_Alignas(16) char data[];   /* the mount plan, then the filter's instructions */
};

static size_t page_size(void)
{
	long p = sysconf(_SC_PAGESIZE);
	return p > 0 ? (size_t)p : 4096;
}

/* The signals init passes on to the tool (bee-load's teardown sends the
 * first four; the rest are a terminal's and a job controller's). */
static const int forwarded[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH };

/* ---- init and the tool before its exec: bee_sys alone (sys.h) ---------------------- */

static uint64_t sig_bit(int sig)
{
	return 1ull << (sig - 1);
}

/* The kernel's struct sigaction as x86-64 has it (sig_handle), and its
 * 64-bit mask. sig_default leaves every field but the handler zero, so
 * it means the same where the layout after the handler differs. */
struct ksigaction {
	void (*handler)(int);
	unsigned long flags;
	void (*restorer)(void);
	uint64_t mask;
};
#ifndef SA_RESTORER
#define SA_RESTORER 0x04000000
#endif

static int sig_default(int sig)
{
	struct ksigaction ka = { .handler = SIG_DFL };
	return (int)bee_sys(SYS_rt_sigaction, sig, &ka, NULL, sizeof(ka.mask));
}

static int sig_mask_set(uint64_t mask)
{
	return (int)bee_sys(SYS_rt_sigprocmask, SIG_SETMASK, &mask, NULL, sizeof(mask));
}

static void on_signal(int sig)
{
	(void)sig;
}

#if BEE_SYS_SHARED_VM
/* The return from a handler that x86-64 wants named (SA_RESTORER). init's
 * handlers never run: their signals stay blocked and are read from a
 * signalfd. */
__attribute__((visibility("hidden"))) void init_sigreturn(void);
__asm__(".text\n"
	".align 16\n"
	".type init_sigreturn, @function\n"
	"init_sigreturn:\n\t"
	"mov $15, %rax\n\t"   /* rt_sigreturn */
	"syscall\n\t"
	"ud2\n"
	".size init_sigreturn, .-init_sigreturn\n");

static int sig_handle(int sig)
{
	struct ksigaction ka = { .handler = on_signal, .flags = SA_RESTORER, .restorer = init_sigreturn };
	return (int)bee_sys(SYS_rt_sigaction, sig, &ka, NULL, sizeof(ka.mask));
}
#else
static int sig_handle(int sig)
{
	struct sigaction sa = { .sa_handler = on_signal };
	return sigaction(sig, &sa, NULL) < 0 ? -errno : 0;
}
#endif

__attribute__((noreturn))
static void sys_exit(int code)
{
	for (;;)
		bee_sys(SYS_exit_group, code);
}

static void report_send(int fd, int stage, int err, const char *what)
{
	struct child_report r = { .stage = stage, .err = err };
	for (size_t i = 0; what[i] && i + 1 < sizeof(r.what); i++)
		r.what[i] = what[i];
	bee_sys(SYS_sendto, fd, &r, sizeof(r), MSG_NOSIGNAL, NULL, 0);
}

/* ret: the failed call's -errno */
__attribute__((noreturn))
static void child_fail(int fd, enum bee_stage st, long ret, const char *what)
{
	int err = (int)-ret;
	report_send(fd, st, err, what);
	sys_exit(st == BEE_STAGE_EXEC ? (err == ENOENT ? 127 : 126) : 125);
}

/* Closes every descriptor above 2 but keep[0..n) (ascending). 0 or -errno. */
static int close_others(const int *keep, size_t n)
{
	unsigned lo = 3;
	long r;
	for (size_t i = 0; i < n; i++) {
		if (keep[i] < 3)
			continue;
		if ((unsigned)keep[i] > lo && (r = bee_sys(SYS_close_range, lo, (unsigned)keep[i] - 1, 0)) < 0)
			return (int)r;
		lo = (unsigned)keep[i] + 1;
	}
	return (int)bee_sys(SYS_close_range, lo, ~0U, 0);
}

static void tool_user(const struct bee_user *u, int fd)
{
	long r;
	if (!u || !u->change)
		return;
	/* the kernel's calls: they change this process alone (glibc's would
	 * signal every thread it knows of, bee-load's) */
	if ((r = bee_sys(SYS_setgroups, u->ngroups, u->groups)) < 0)
		child_fail(fd, BEE_STAGE_USER, r, "setgroups");
	if ((r = bee_sys(SYS_setresgid, u->gid, u->gid, u->gid)) < 0)
		child_fail(fd, BEE_STAGE_USER, r, "setresgid");
	/* the capabilities survive the switch for the steps that drop them for good */
	if ((r = bee_sys(SYS_prctl, PR_SET_KEEPCAPS, 1, 0, 0, 0)) < 0)
		child_fail(fd, BEE_STAGE_USER, r, "keepcaps");
	if ((r = bee_sys(SYS_setresuid, u->uid, u->uid, u->uid)) < 0)
		child_fail(fd, BEE_STAGE_USER, r, "setresuid");
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];
	if ((r = bee_sys(SYS_capget, &h, d)) < 0)
		child_fail(fd, BEE_STAGE_USER, r, "capget");
	d[0].effective = d[0].permitted;
	d[1].effective = d[1].permitted;
	if ((r = bee_sys(SYS_capset, &h, d)) < 0)
		child_fail(fd, BEE_STAGE_USER, r, "capset");
}

__attribute__((noreturn))
static void tool_main(const struct tool_ctx *c)
{
	const struct bee_launch *l = &c->tp->l;
	int errfd = c->report;
	long r;
	/* init's handlers (every other signal is at its default in init already) */
	for (size_t i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
		sig_default(forwarded[i]);
	sig_default(SIGCHLD);
	sig_mask_set(0);
	/* Until its exec the tool runs in init's memory, which is bee-load's
	 * on x86-64: no process of the tool's user may ptrace it or open its
	 * /proc/PID/mem meanwhile (the flag is the memory's; the exec gives
	 * the tool memory of its own, dumpable as after any exec) */
	if ((r = bee_sys(SYS_prctl, PR_SET_DUMPABLE, 0, 0, 0, 0)) < 0)
		child_fail(errfd, BEE_STAGE_LAUNCH, r, "dumpable");
	bee_sys_close(c->status);
	report_send(errfd, REPORT_HELLO, 0, "");

	/* the client's descriptors as 0, 1, 2 (moved above 2 first: one of
	 * them may have come in as a low number) */
	if (c->stdio[0] >= 0) {
		int hi[3];
		for (int i = 0; i < 3; i++)
			if ((r = hi[i] = (int)bee_sys(SYS_fcntl, c->stdio[i], F_DUPFD_CLOEXEC, 3)) < 0)
				child_fail(errfd, BEE_STAGE_LAUNCH, r, "stdio");
		for (int i = 0; i < 3; i++)
			if ((r = bee_sys(SYS_dup3, hi[i], i, 0)) < 0)
				child_fail(errfd, BEE_STAGE_LAUNCH, r, "stdio");
	}
	if ((r = bee_sys(SYS_setsid)) < 0)
		child_fail(errfd, BEE_STAGE_LAUNCH, r, "setsid");
	/* a terminal on stdin that no session holds (the fresh pty of pty.c)
	 * becomes the tool's controlling terminal, for job control; one
	 * another session controls stays theirs (no force) */
	struct termios t;
	if (bee_sys(SYS_ioctl, 0, TCGETS, &t) == 0)
		bee_sys(SYS_ioctl, 0, TIOCSCTTY, 0);
	bee_sys(SYS_umask, 077);
	if ((r = bee_sys(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0)) < 0)
		child_fail(errfd, BEE_STAGE_LAUNCH, r, "pdeathsig");
	if (bee_sys(SYS_getppid) != 1)
		child_fail(errfd, BEE_STAGE_LAUNCH, -ESRCH, "init gone");
	tool_user(l->user, errfd);
	/* the client's working directory, in the session's mount namespace
	 * and as the tool's user (a path: a descriptor would be the host's) */
	if (l->cwd && (r = bee_sys(SYS_chdir, l->cwd)) < 0)
		child_fail(errfd, BEE_STAGE_LAUNCH, r, "chdir");
	if ((r = bee_sys(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) < 0)
		child_fail(errfd, BEE_STAGE_LAUNCH, r, "no_new_privs");
	if (c->ruleset_fd >= 0) {
		/* the rules on init's /proc and cgroup2, added here so that
		 * /proc/self is the tool's own */
		const char *what = "landlock";
		int err = bee_landlock_late_add(c->ruleset_fd, l->ll_late, &what);
		if (err)
			child_fail(errfd, BEE_STAGE_LANDLOCK, err, what);
		if ((r = bee_sys(SYS_landlock_restrict_self, c->ruleset_fd, l->ll_flags)) < 0)
			child_fail(errfd, BEE_STAGE_LANDLOCK, r, "landlock_restrict_self");
		bee_sys_close(c->ruleset_fd);
	}
	if ((r = bee_sys(SYS_prctl, PR_SET_SECUREBITS,
			 SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP | SECBIT_NO_SETUID_FIXUP_LOCKED |
				 SECBIT_KEEP_CAPS_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED,
			 0, 0, 0)) < 0)
		child_fail(errfd, BEE_STAGE_LAUNCH, r, "securebits");
	/* the bounding set is empty already: init emptied its own (init_main) */
	if ((r = bee_sys(SYS_prctl, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)) < 0)
		child_fail(errfd, BEE_STAGE_LAUNCH, r, "ambient");
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];
	memset(d, 0, sizeof(d));
	if ((r = bee_sys(SYS_capset, &h, d)) < 0)
		child_fail(errfd, BEE_STAGE_LAUNCH, r, "capset");
	/* the system call filter is init's, inherited at the clone (init_main) */
	/* every descriptor above 2, but the report socket (closed by exec) */
	if ((r = close_others(&errfd, 1)) < 0)
		child_fail(errfd, BEE_STAGE_LAUNCH, r, "close_range");

	long first = 0;
	r = -ENOENT;
	for (size_t i = 0; i < c->tp->pl.n; i++) {
		r = bee_sys(SYS_execve, c->tp->pl.paths[i], l->argv, l->envp);
		/* as execvp: a missing entry tries the next; a refusal is remembered */
		if (r == -EACCES)
			first = r;
		else if (r != -ENOENT && r != -ENOTDIR)
			break;
		r = first ? first : r;
	}
	child_fail(errfd, BEE_STAGE_EXEC, r, "execve");
}

static int tool_entry(void *c)
{
	tool_main(c);
}

/* bee-load's go (0), EOF (1: the session is closing), or -1. fds[] gets
 * the descriptors that came with it (init_go's order), -1 for the rest. */
static int init_go_recv(int fd, struct init_go *go, int fds[INIT_GO_MAXFDS])
{
	union {
		char buf[CMSG_SPACE(INIT_GO_MAXFDS * sizeof(int))];
		struct cmsghdr align;
	} cm;
	struct iovec iov = { .iov_base = go, .iov_len = sizeof(*go) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cm.buf,
			     .msg_controllen = sizeof(cm.buf) };
	long n;
	size_t nfds = 0;
	for (int i = 0; i < INIT_GO_MAXFDS; i++)
		fds[i] = -1;
	do
		n = bee_sys(SYS_recvmsg, fd, &mh, MSG_CMSG_CLOEXEC);
	while (n == -EINTR);
	if (n == 0)
		return 1;
	/* what came (SCM_RIGHTS), more than a go carries closed */
	for (struct cmsghdr *c = n > 0 ? CMSG_FIRSTHDR(&mh) : NULL; c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
			int f;
			memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (nfds < INIT_GO_MAXFDS)
				fds[nfds++] = f;
			else
				bee_sys_close(f);
		}
	}
	size_t want = go->magic == INIT_SIGNAL ? 0
						: 1 + ((go->flags & INIT_GO_STDIO) ? 3 : 0) + ((go->flags & INIT_GO_RULESET) ? 1 : 0);
	if (n != (long)sizeof(*go) || (go->magic != INIT_GO && go->magic != INIT_SIGNAL) || nfds != want ||
	    (mh.msg_flags & MSG_CTRUNC))
		return -1;
	return 0;
}

/* The tool's clone: as posix_spawn does, it shares init's memory on a
 * stack of its own until it execs (CLONE_VM | CLONE_VFORK: init waits
 * meanwhile, so one context and one stack serve every tool in turn), and
 * nothing is copied. Its signal handlers, descriptors, credentials and
 * file-system context are its own; every signal is still blocked (init's
 * mask) until it has reset the handlers. clone, not clone3: init is under
 * the session's filter, which refuses clone3. */
static long tool_clone(struct init_mem *m)
{
#if BEE_SYS_SHARED_VM
	return bee_clone_run(SYS_clone, CLONE_VM | CLONE_VFORK | SIGCHLD, (long)m->tool_stack, tool_entry, &m->tc);
#else
	int pid = clone(tool_entry, m->tool_stack, CLONE_VM | CLONE_VFORK | SIGCHLD, &m->tc);
	return pid < 0 ? -errno : pid;
#endif
}

/* One tool from a go: cloned, then init's copies of its descriptors
 * closed. A tool that cannot be made is said on its report socket. */
static void init_tool_start(struct init_mem *m, const struct init_go *go, int fds[INIT_GO_MAXFDS])
{
	struct tool_ctx *c = &m->tc;
	*c = (struct tool_ctx){ .tp = m->ip.tp, .report = fds[0], .status = m->ip.status, .ruleset_fd = -1,
				.stdio = { -1, -1, -1 } };
	int k = 1;
	if (go->flags & INIT_GO_STDIO)
		for (int i = 0; i < 3; i++)
			c->stdio[i] = fds[k++];
	if (go->flags & INIT_GO_RULESET)
		c->ruleset_fd = fds[k++];
	if (m->ntools >= INIT_TOOLS_MAX) {
		report_send(c->report, BEE_STAGE_LAUNCH, EAGAIN, "too many tools");
	} else {
		long tool = tool_clone(m);
		if (tool < 0) {
			report_send(c->report, BEE_STAGE_LAUNCH, (int)-tool, "clone");
		} else {
			m->tool_pid[m->ntools] = (pid_t)tool;
			m->tool_id[m->ntools++] = m->ip.tp->id;
		}
	}
	for (int i = 0; i < INIT_GO_MAXFDS; i++)
		bee_sys_close(fds[i]);
}

/* Reaps every child that ended; each tool's end goes on the status pipe,
 * once every zombie is reaped (so that "alone" is known). */
static void init_reap(struct init_mem *m)
{
	size_t nends = 0;
	int st;
	long p;
	while ((p = bee_sys(SYS_wait4, -1, &st, WNOHANG, NULL)) > 0) {
		size_t i;
		for (i = 0; i < m->ntools && m->tool_pid[i] != p; i++)
			;
		if (i == m->ntools)
			continue;   /* an orphan reparented to pid 1 */
		m->ends[nends++] = (struct tool_end){ .id = m->tool_id[i], .status = st };
		m->tool_pid[i] = m->tool_pid[m->ntools - 1];
		m->tool_id[i] = m->tool_id[m->ntools - 1];
		m->ntools--;
	}
	/* no child left is nothing left at all: every process of the
	 * namespace is pid 1's descendant */
	bool none = p == -ECHILD;
	for (size_t k = 0; k < nends; k++) {
		m->ends[k].alone = none && m->ntools == 0;
		bee_sys(SYS_write, m->ip.status, &m->ends[k], sizeof(m->ends[k]));
	}
	if (m->last && nends && none && m->ntools == 0)
		sys_exit(0);
}

/* A signal for a tool's process group (each tool leads its own, setsid),
 * or for the tool alone when it has not got there yet. */
static void tool_kill(pid_t pid, int sig)
{
	if (bee_sys(SYS_kill, -pid, sig) < 0)
		bee_sys(SYS_kill, pid, sig);
}

static long poll_one(int fd, short events, long ms, short *revents)
{
	struct pollfd p = { .fd = fd, .events = events };
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = ms % 1000 * 1000000 };
	long n = bee_sys(SYS_ppoll, &p, 1, &ts, NULL, 0);
	*revents = p.revents;
	return n;
}

/* init's life once ready: a tool per go, each signal of forwarded passed
 * to every tool's process group, every child reaped and each tool's end
 * reported, until bee-load closes the control socket (the session ends;
 * pid 1 leaving kills whatever else runs in the namespace). */
__attribute__((noreturn))
static void init_serve(struct init_mem *m)
{
	const struct init_plan *ip = &m->ip;
	uint64_t waitset = sig_bit(SIGCHLD);
	for (size_t i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
		waitset |= sig_bit(forwarded[i]);
	/* a handler, so that no signal from outside is dropped for pid 1
	 * (the kernel drops those whose action is the default); they stay
	 * blocked and are read from the signalfd */
	for (size_t i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
		sig_handle(forwarded[i]);
	sig_handle(SIGCHLD);
	long sfd = bee_sys(SYS_signalfd4, -1, &waitset, sizeof(waitset), SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0)
		child_fail(ip->report, BEE_STAGE_LAUNCH, sfd, "signalfd");
	for (;;) {
		struct pollfd p[2] = { { .fd = ip->report, .events = POLLIN }, { .fd = (int)sfd, .events = POLLIN } };
		if (bee_sys(SYS_ppoll, p, 2, NULL, NULL, 0) < 0)
			continue;
		struct signalfd_siginfo si;
		while (bee_sys(SYS_read, sfd, &si, sizeof(si)) == (long)sizeof(si)) {
			if (si.ssi_signo == SIGCHLD)
				continue;
			for (size_t i = 0; i < m->ntools; i++)
				tool_kill(m->tool_pid[i], (int)si.ssi_signo);
		}
		init_reap(m);
		if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			struct init_go go;
			int fds[INIT_GO_MAXFDS];
			int r = init_go_recv(ip->report, &go, fds);
			if (r != 0)
				sys_exit(r == 1 ? 0 : 125);   /* the session ends, or bee-load is confused: end it */
			if (go.magic == INIT_SIGNAL) {
				for (size_t i = 0; i < m->ntools; i++)
					if (m->tool_id[i] == go.id)
						tool_kill(m->tool_pid[i], go.sig);
				continue;
			}
			m->last |= (go.flags & INIT_GO_LAST) != 0;
			init_tool_start(m, &go, fds);
			init_reap(m);
		}
	}
}

static int init_main(void *arg)
{
	struct init_mem *m = arg;
	const struct init_plan *ip = &m->ip;
	int fd = ip->report;
	long r;
	sig_mask_set(~0ull);
	if ((r = bee_sys(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0)) < 0)
		child_fail(fd, BEE_STAGE_LAUNCH, r, "pdeathsig");
	/* What every tool would otherwise undo at each start, once here: no
	 * disposition of bee-load's (an ignored SIGPIPE would outlive the
	 * tool's exec), and an empty bounding set, which init never needs
	 * (it never execs) and every tool inherits (it is the cost of 41
	 * credential changes a tool, 65 us here) */
	for (int s = 1; s <= 64; s++)
		if (s != SIGKILL && s != SIGSTOP)
			sig_default(s);
	for (int cap = 0; cap <= ip->last_cap; cap++)
		if ((r = bee_sys(SYS_prctl, PR_CAPBSET_DROP, cap, 0, 0, 0)) < 0 && r != -EINVAL)
			child_fail(fd, BEE_STAGE_LAUNCH, r, "capbset_drop");
	/* init holds nothing of bee-load's: its maps, its audit log and its
	 * locks stay bee-load's alone */
	int keep[3] = { ip->report, ip->status, ip->memfd_noexec }, nkeep = ip->memfd_noexec >= 0 ? 3 : 2;
	for (int i = 1; i < nkeep; i++)   /* ascending, as close_others wants */
		for (int j = i; j > 0 && keep[j] < keep[j - 1]; j--) {
			int t = keep[j];
			keep[j] = keep[j - 1];
			keep[j - 1] = t;
		}
	if ((r = close_others(keep, (size_t)nkeep)) < 0)
		child_fail(fd, BEE_STAGE_LAUNCH, r, "close_range");
	/* bee-load gone before PDEATHSIG was set: its end of the socket is closed */
	short rev;
	if ((r = poll_one(fd, POLLOUT, 0, &rev)) < 0 || (rev & (POLLHUP | POLLERR)))
		child_fail(fd, BEE_STAGE_LAUNCH, r < 0 ? r : -ESRCH, "parent gone");
	if (ip->fault_namespace) {
		/* the race a failed setup meets, made certain: the first go
		 * is here, unread, when init leaves (init_ready) */
		poll_one(fd, POLLIN, 2000, &rev);
		child_fail(fd, BEE_STAGE_NAMESPACE, -EIO, "injected fault");
	}
	/* the mount namespace here rather than at the clone: its copy of the
	 * mount table is then init's work, done while bee-load walks the
	 * Landlock rules on the other core, and not bee-load's before its
	 * clone returns (up to 0.1 ms of a warm run here) */
	if ((r = bee_sys(SYS_unshare, CLONE_NEWNS | CLONE_NEWCGROUP)) < 0)
		child_fail(fd, BEE_STAGE_NAMESPACE, r, "unshare mount and cgroup");
	/* memfds of this pid namespace cannot be executed (vm.memfd_noexec 2,
	 * kernel 6.3+, a setting of the writer's pid namespace): Landlock
	 * never checks the kernel's internal mounts where they live. Before
	 * 6.3 only bpf-lsm's bprm hook refuses them. The file was opened in
	 * bee-load: init runs under the session's hooks, which would refuse
	 * the open. */
	if (ip->memfd_noexec >= 0) {
		if ((r = bee_sys(SYS_pwrite64, ip->memfd_noexec, "2", 1, 0)) != 1)
			child_fail(fd, BEE_STAGE_NAMESPACE, r < 0 ? r : -EIO, "memfd_noexec");
		bee_sys_close(ip->memfd_noexec);
	}
	if (ip->mountns) {
		const char *what = "mount namespace";
		int err = bee_mountns_enter(ip->mountns, &what);
		if (err)
			child_fail(fd, BEE_STAGE_NAMESPACE, err, what);
	}
	/* The system call filter, once for every tool: each inherits it at
	 * its clone, instead of building it (its JIT and the page permission
	 * changes that follow, about 80 us here) at each start. init needs
	 * nothing it refuses from here on (ppoll, recvmsg, clone without
	 * namespace flags, kill, wait4, write), nor does a tool before its
	 * exec (the user switch, prctl, Landlock, capset, close_range). */
	if (ip->filter && (r = bee_sys(SYS_prctl, PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ip->filter, 0, 0)) < 0)
		child_fail(fd, BEE_STAGE_SECCOMP, r, "seccomp");
	report_send(fd, REPORT_READY, 0, "");

	init_serve(m);
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

/* A wait status as a shell gives it: the exit code, or 128 + the signal. */
static int shell_status(int st)
{
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

int bee_init_wait(struct bee_init *in, bool block, struct bee_tool_end *out)
{
	/* only init holds the pipe's writing end (each tool closes its copy
	 * first thing): readable is a tool's end, or EOF when init is gone */
	if (in->status_fd < 0) {
		if (in->gone)
			return 2;
		return -ECHILD;
	}
	struct pollfd p = { .fd = in->status_fd, .events = POLLIN };
	int n;
	do
		n = poll(&p, 1, block ? -1 : 0);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return n < 0 ? -errno : 0;
	struct tool_end te;
	ssize_t r;
	do
		r = read(in->status_fd, &te, sizeof(te));
	while (r < 0 && errno == EINTR);
	if (r == (ssize_t)sizeof(te)) {
		*out = (struct bee_tool_end){ .id = te.id, .status = shell_status(te.status), .alone = te.alone != 0 };
		return 1;
	}
	/* no word: init ended (killed, or at the session's end) and took every
	 * tool still running along */
	close(in->status_fd);
	in->status_fd = -1;
	int st = 0;
	if (in->pid > 0) {
		while (waitpid(in->pid, &st, 0) < 0 && errno == EINTR)
			;
		in->pid = -1;
		in->gone_status = shell_status(st);
	}
	in->gone = true;
	*out = (struct bee_tool_end){ .status = in->gone_status };
	return 2;
}

void bee_init_reap(struct bee_init *in)
{
	/* the control socket's EOF ends init (and with it its namespace) */
	if (in->sock >= 0) {
		close(in->sock);
		in->sock = -1;
	}
	if (in->pid <= 0)
		return;
	int st;
	while (waitpid(in->pid, &st, 0) < 0 && errno == EINTR)
		;
	in->pid = -1;
	in->gone_status = shell_status(st);
}

/* ---- init, made when the session opens --------------------------------------------- */

static void init_kill(struct bee_init *in);

int bee_init_start(const struct bee_init_spec *spec, struct bee_init *in, struct bee_error *e)
{
	int sv[2] = { -1, -1 }, sp[2] = { -1, -1 }, pidfd = -1, err, one = 1;
	struct init_plan *ip = NULL;
	*in = (struct bee_init){ .pid = -1, .pidfd = -1, .sock = -1, .status_fd = -1 };
	/* the command and its environment fit in what execve takes, twice over */
	long argmax = sysconf(_SC_ARG_MAX);
	in->arena_size = (size_t)(argmax > 0 ? argmax : 2 << 20) * 2 + (1 << 20);
	/* shared with init: by its clone (CLONE_VM), or as a shared mapping
	 * where init gets a copy of the rest */
	void *arena = mmap(NULL, in->arena_size, PROT_READ | PROT_WRITE,
			   (BEE_SYS_SHARED_VM ? MAP_PRIVATE : MAP_SHARED) | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (arena == MAP_FAILED)
		return bee_fail(e, BEE_STAGE_LAUNCH, -errno, "the launch's shared memory: %s", strerror(errno));
	in->arena = arena;
	/* init's own memory (struct init_mem): its stacks, the tools' table,
	 * and the copies of its plans */
	size_t pg = page_size();
	size_t nsz = spec->mountns ? bee_mountns_size(spec->mountns) : 0;
	size_t fsz = spec->filter ? spec->filter->len * sizeof(struct sock_filter) : 0;
	size_t tail = sizeof(struct init_mem) + nsz + fsz;
	in->mem_size = 2 * pg + INIT_STACK + TOOL_STACK + (tail + pg - 1) / pg * pg;
	void *mem = mmap(NULL, in->mem_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (mem == MAP_FAILED) {
		err = bee_fail(e, BEE_STAGE_LAUNCH, -errno, "the session's init: its memory: %s", strerror(errno));
		goto out;
	}
	in->mem = mem;
	if (mprotect(mem, pg, PROT_NONE) < 0 || mprotect((char *)mem + pg + INIT_STACK, pg, PROT_NONE) < 0) {
		err = bee_fail(e, BEE_STAGE_LAUNCH, -errno, "the session's init: its stacks' guard pages: %s",
			       strerror(errno));
		goto out;
	}
	/* above the tools' stack, which grows down from it */
	struct init_mem *m = (struct init_mem *)(void *)((char *)mem + 2 * pg + INIT_STACK + TOOL_STACK);
	/* The pages init and the tools touch (the top of each stack, init_mem
	 * and its plans) made in one call each, not in a page fault each:
	 * faults are dear where bee runs in a virtual machine. Best effort
	 * (MADV_POPULATE_WRITE is Linux 5.14's): otherwise they fault in. */
	(void)madvise((char *)mem + pg + INIT_STACK - STACK_HOT, STACK_HOT, MADV_POPULATE_WRITE);
	(void)madvise((char *)m - STACK_HOT, (size_t)((char *)mem + in->mem_size - ((char *)m - STACK_HOT)),
		      MADV_POPULATE_WRITE);
	m->tool_stack = (char *)m;
	ip = &m->ip;
	/* its errno read at once: the initializer's other calls may set one */
	int memfd_noexec = open("/proc/sys/vm/memfd_noexec", O_WRONLY | O_CLOEXEC), memfd_err = errno;
	*ip = (struct init_plan){ .memfd_noexec = memfd_noexec, .fault_namespace = bee_fault(BEE_STAGE_NAMESPACE) < 0,
				  .last_cap = cap_last(), .tp = arena, .report = -1, .status = -1 };
	if (spec->mountns)
		ip->mountns = bee_mountns_copy(spec->mountns, m->data);
	if (spec->filter) {
		m->filter = (struct sock_fprog){ .len = spec->filter->len,
						 .filter = memcpy(m->data + nsz, spec->filter->filter, fsz) };
		ip->filter = &m->filter;
	}
	in->fault_namespace = ip->fault_namespace;
	if (ip->memfd_noexec < 0 && memfd_err != ENOENT) {
		err = bee_fail(e, BEE_STAGE_NAMESPACE, -memfd_err, "/proc/sys/vm/memfd_noexec: %s", strerror(memfd_err));
		goto out;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0 ||
	    setsockopt(sv[0], SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) < 0 || pipe2(sp, O_CLOEXEC) < 0) {
		err = bee_fail(e, BEE_STAGE_LAUNCH, -errno, "report socket: %s", strerror(errno));
		goto out;
	}
	ip->report = sv[1];
	ip->status = sp[1];
	struct clone_args ca = {
		.flags = CLONE_INTO_CGROUP | CLONE_PIDFD | CLONE_NEWPID,
		.pidfd = (uint64_t)(uintptr_t)&pidfd,
		.exit_signal = SIGCHLD,
		.cgroup = (uint64_t)spec->cgroup_fd,
	};
#if BEE_SYS_SHARED_VM
	ca.flags |= CLONE_VM;
	ca.stack = (uint64_t)(uintptr_t)((char *)mem + pg);
	ca.stack_size = INIT_STACK;
	long pid = bee_clone_run(SYS_clone3, (long)&ca, sizeof(ca), init_main, m);
	int en = pid < 0 ? (int)-pid : 0;
#else
	long pid = syscall(SYS_clone3, &ca, sizeof(ca));
	int en = errno;
	if (pid == 0)
		init_main(m);
#endif
	if (pid < 0) {
		err = bee_fail(e, en == EPERM || en == EINVAL || en == ENOSPC || en == EUSERS ? BEE_STAGE_NAMESPACE
											    : BEE_STAGE_LAUNCH,
			       -en, "clone3 into the session cgroup with a new pid namespace: %s",
			       strerror(en));
		goto out;
	}
	in->pid = (pid_t)pid;
	in->pidfd = pidfd;
	in->sock = sv[0];
	in->status_fd = sp[0];
	sv[0] = sp[0] = -1;
	err = 0;
out:
	for (int i = 0; i < 2; i++) {
		if (sv[i] >= 0)
			close(sv[i]);
		if (sp[i] >= 0)
			close(sp[i]);
	}
	if (ip && ip->memfd_noexec >= 0)
		close(ip->memfd_noexec);
	if (err)
		bee_init_fini(in);
	return err;
}

void bee_init_fini(struct bee_init *in)
{
	/* init runs on in->mem (its stack, its plans): gone before that goes */
	init_kill(in);
	if (in->sock >= 0)
		close(in->sock);
	if (in->pidfd >= 0)
		close(in->pidfd);
	if (in->status_fd >= 0)
		close(in->status_fd);
	if (in->arena)
		munmap(in->arena, in->arena_size);
	if (in->mem)
		munmap(in->mem, in->mem_size);
	*in = (struct bee_init){ .pid = -1, .pidfd = -1, .sock = -1, .status_fd = -1 };
}

/* ---- the tool's plan, copied into the arena ----------------------------------------- */

struct plan_arena {
	char *base;
	size_t size, used;
};

static void *plan_alloc(struct plan_arena *a, size_t n)
{
	n = (n + 15) & ~(size_t)15;
	if (!a->base || n > a->size - a->used) {
		a->base = NULL;     /* out of room: every later copy fails too */
		return NULL;
	}
	void *p = a->base + a->used;
	a->used += n;
	return p;
}

static char *plan_str(struct plan_arena *a, const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = plan_alloc(a, n);
	return d ? memcpy(d, s, n) : NULL;
}

/* n strings of v, or every string up to its NULL when n is SIZE_MAX; the
 * copy ends with NULL either way. */
static char **plan_strv(struct plan_arena *a, const char *const *v, size_t n)
{
	if (n == SIZE_MAX)
		for (n = 0; v[n]; n++)
			;
	char **d = plan_alloc(a, (n + 1) * sizeof(char *));
	for (size_t i = 0; d && i < n; i++)
		d[i] = plan_str(a, v[i]);
	if (d)
		d[n] = NULL;
	return a->base ? d : NULL;
}

/* l and its exec plan, deep, at the arena's start. 0 or -E2BIG. */
static int plan_copy(struct bee_init *in, const struct bee_launch *l, const struct exec_plan *pl)
{
	struct plan_arena a = { .base = in->arena, .size = in->arena_size };
	struct tool_plan *tp = plan_alloc(&a, sizeof(*tp));
	if (!tp)
		return -E2BIG;
	*tp = (struct tool_plan){ .l = *l };
	tp->l.argv = (const char *const *)plan_strv(&a, l->argv, SIZE_MAX);
	tp->l.envp = plan_strv(&a, (const char *const *)l->envp, SIZE_MAX);
	tp->l.ruleset_fd = -1;      /* travels with the go (SCM_RIGHTS) */
	tp->l.stdio = NULL;         /* so do these */
	tp->l.cwd = l->cwd ? plan_str(&a, l->cwd) : NULL;
	tp->pl.paths = plan_strv(&a, (const char *const *)pl->paths, pl->n);
	tp->pl.n = pl->n;
	if (l->user) {
		struct bee_user *u = plan_alloc(&a, sizeof(*u));
		gid_t *g = plan_alloc(&a, (l->user->ngroups + 1) * sizeof(gid_t));
		if (u && g) {
			*u = *l->user;
			u->groups = memcpy(g, l->user->groups ? l->user->groups : g, l->user->ngroups * sizeof(gid_t));
		}
		tp->l.user = u;
	}
	if (l->ll_late) {
		struct bee_ll_lates *ls = plan_alloc(&a, sizeof(*ls));
		struct bee_ll_late *v = plan_alloc(&a, (l->ll_late->n + 1) * sizeof(*v));
		for (size_t i = 0; ls && v && i < l->ll_late->n; i++) {
			v[i] = l->ll_late->v[i];
			v[i].path = plan_str(&a, l->ll_late->v[i].path);
		}
		if (ls && v)
			*ls = (struct bee_ll_lates){ .v = v, .n = l->ll_late->n };
		tp->l.ll_late = ls;
	}
	return a.base ? 0 : -E2BIG;
}

/* init's READY, or what went wrong there (its report, or its end). */
static int init_ready(struct bee_init *in, struct bee_error *e)
{
	struct child_report r;
	pid_t from = 0;
#ifdef BEE_FAULT_INJECTION
	/* the other half of that race: init gone before its word is read */
	siginfo_t si;
	if (in->fault_namespace)
		waitid(P_PID, (id_t)in->pid, &si, WEXITED | WNOWAIT);
#endif
	ssize_t n = report_recv(in->sock, &r, &from);
	/* an init that failed its setup left the first tool's go unread
	 * (bee_launch sends it before this): its end reports that as
	 * ECONNRESET once, ahead of the failure it wrote, which comes next */
	if (n == -ECONNRESET)
		n = report_recv(in->sock, &r, &from);
	if (n == (ssize_t)sizeof(r) && r.stage == REPORT_READY)
		return 0;
	int status;
	while (waitpid(in->pid, &status, 0) < 0 && errno == EINTR)
		;
	if (n != (ssize_t)sizeof(r))
		return bee_fail(e, BEE_STAGE_LAUNCH, -EIO, "the session's init ended before it was ready (status %d)",
				status);
	r.what[sizeof(r.what) - 1] = '\0';
	return bee_fail(e, r.stage >= 0 ? (enum bee_stage)r.stage : BEE_STAGE_LAUNCH, -r.err,
			"the session's init: %s: %s", r.what, strerror(r.err));
}

static int go_send(int sock, const struct init_go *go, const int *fds, size_t nfds)
{
	ssize_t w = bee_send_fds(sock, go, sizeof(*go), fds, nfds);
	return w == (ssize_t)sizeof(*go) ? 0 : w < 0 ? (int)w : -EIO;
}

int bee_init_signal(struct bee_init *in, uint32_t id, int sig)
{
	struct init_go go = { .magic = INIT_SIGNAL, .id = id, .sig = sig };
	if (in->sock < 0)
		return -ESRCH;
	return send(in->sock, &go, sizeof(go), MSG_NOSIGNAL) == (ssize_t)sizeof(go) ? 0 : -errno;
}

/* The session cannot go on without its init: killed and reaped. */
static void init_kill(struct bee_init *in)
{
	if (in->pid <= 0)
		return;
	int status;
	syscall(SYS_pidfd_send_signal, in->pidfd, SIGKILL, NULL, 0);
	while (waitpid(in->pid, &status, 0) < 0 && errno == EINTR)
		;
	in->pid = -1;
}

int bee_launch(struct bee_init *in, const struct bee_launch *l, struct bee_launched *out, struct bee_error *e)
{
	struct exec_plan pl;
	int err, sv[2] = { -1, -1 }, one = 1;
	*out = (struct bee_launched){ .pid = in->pid };
	if ((err = bee_fault(BEE_STAGE_LAUNCH)) < 0)
		return bee_fail(e, BEE_STAGE_LAUNCH, err, "injected fault");
	if (in->pid < 0 || in->sock < 0)
		return bee_fail(e, BEE_STAGE_LAUNCH, -ESRCH, "the session has no init to start the tool");
	err = exec_plan_build(l->argv[0], l->envp, &pl);
	if (err) {
		exec_plan_fini(&pl);
		return bee_fail(e, err == -ENOENT ? BEE_STAGE_EXEC : BEE_STAGE_LAUNCH, err,
				"'%s': %s", l->argv[0], strerror(-err));
	}
	/* init reads the arena only between a go and the tool's exec, which
	 * the report socket's end says: plans never overlap */
	err = plan_copy(in, l, &pl);
	exec_plan_fini(&pl);
	if (err)
		return bee_fail(e, BEE_STAGE_LAUNCH, err, "'%s': the command and its environment need more than %zu bytes",
				l->argv[0], in->arena_size);
	struct tool_plan *tp = in->arena;
	tp->id = out->id = ++in->next_id;
	/* the tool's own report socket: its first word, then EOF at exec */
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0 ||
	    setsockopt(sv[0], SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) < 0) {
		err = bee_fail(e, BEE_STAGE_LAUNCH, -errno, "the tool's report socket: %s", strerror(errno));
		goto out;
	}
	struct init_go go = { .magic = INIT_GO };
	int fds[INIT_GO_MAXFDS];
	size_t nfds = 0;
	fds[nfds++] = sv[1];
	if (l->stdio) {
		go.flags |= INIT_GO_STDIO;
		for (int i = 0; i < 3; i++)
			fds[nfds++] = l->stdio[i];
	}
	if (l->ruleset_fd >= 0) {
		go.flags |= INIT_GO_RULESET;
		fds[nfds++] = l->ruleset_fd;
	}
	if (l->last)
		go.flags |= INIT_GO_LAST;
	/* The first tool's go is sent before init has said it is ready: init
	 * reads it once its namespaces, mounts and filter are in place (it
	 * serves nothing before), and goes on to the tool without waiting
	 * for bee-load to wake up. A setup that failed is said instead (the
	 * go, refused or not, dies with init's socket): that is the error. */
	int gerr = go_send(in->sock, &go, fds, nfds);
	if (!in->ready) {
		if ((err = init_ready(in, e)) < 0) {
			in->pid = -1;   /* reaped */
			goto out;
		}
		in->ready = true;
	}
	if ((err = gerr) < 0) {
		bee_fail(e, BEE_STAGE_LAUNCH, err, "the session's init: %s", strerror(-err));
		init_kill(in);
		goto out;
	}
	close(sv[1]);
	sv[1] = -1;
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
		/* EOF: exec closed the socket and init its copy, the tool runs;
		 * or init died with it, and its end on the status pipe says so */
		err = out->tool_pid > 0 ? 0 : bee_fail(e, BEE_STAGE_LAUNCH, -EIO, "the session's init ended");
		goto out;
	}
	if (n != (ssize_t)sizeof(r)) {
		err = bee_fail(e, BEE_STAGE_LAUNCH, -EIO, "the tool's process ended before exec");
		goto out;
	}
	/* the tool failed and is gone (init reaps it, its end is not asked for) */
	r.what[sizeof(r.what) - 1] = '\0';
	err = -r.err;
	if (r.stage == BEE_STAGE_EXEC)
		bee_fail(e, BEE_STAGE_EXEC, err, "'%s': %s", l->argv[0], strerror(r.err));
	else
		bee_fail(e, r.stage >= 0 && r.stage < BEE_STAGE_COUNT ? (enum bee_stage)r.stage : BEE_STAGE_LAUNCH, err,
			 "the tool's process: %s: %s", r.what, strerror(r.err));
out:
	for (int i = 0; i < 2; i++)
		if (sv[i] >= 0)
			close(sv[i]);
	return err;
}
