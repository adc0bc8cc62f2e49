/* SPDX-License-Identifier: GPL-2.0-only */
/* unpriv.c: `bee-load run` without root and without the session service
 * (docs/unprivileged.md): in a container without CAP_BPF, under
 * `unshare -Ur` or bubblewrap, or for a user with no sudo.
 *
 *   pack -> Landlock ABI -> the plan: [fs] and [exec] as the landlock backend
 *   has them (ll.c), [net] as Landlock's TCP port rules (ABI 4) where a rule
 *   names every address of both families; anything else (an address, UDP, a
 *   deny) refused before launch naming the rule, unless --allow-weaker names
 *   it -> environment -> the tool: no_new_privs, the fs ruleset, the net and
 *   scope ruleset (signals and abstract sockets, ABI 6), the session's
 *   system call filter and one refusing inet sockets other than TCP,
 *   descriptors above 2 closed, exec
 *
 * What this mode lacks next to root's: no cgroup (no per-session network
 * programs, no cgroup.kill: the tool's process group is killed at the end),
 * no pid or mount namespace (the tool sees the host's /proc as far as the
 * policy grants it), no audit of Landlock's denials (the kernel's audit
 * needs CAP_AUDIT_READ): the audit log gets the launcher's own decisions
 * (environment) and a record saying so.
 */
#include "internal.h"
#include "unpriv.h"

#include "bee_audit.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* Landlock's network rules and scopes (ABI 4 and 6), named here: the
 * build's kernel headers may predate them */
#define UP_RULE_NET_PORT 2
#define UP_NET_BIND_TCP (1ULL << 0)
#define UP_NET_CONNECT_TCP (1ULL << 1)
#define UP_SCOPE_ABSTRACT_UNIX (1ULL << 0)
#define UP_SCOPE_SIGNAL (1ULL << 1)

struct up_ruleset_attr {
	uint64_t handled_access_fs, handled_access_net, scoped;
};

struct up_net_port {
	uint64_t allowed_access, port;
} __attribute__((packed));

#define UP_PORTS_MAX 1024           /* port rules a policy may need here */

bool bee_unpriv_wanted(void)
{
	if (geteuid() != 0)
		return true;
	/* root of a user namespace (unshare -Ur, a container): not the host's */
	char *map = NULL;
	/* unreadable: root confined by a session's file policy (a launcher
	 * that joined a parent session's cgroup). Taken as the host's root:
	 * if it is not, the privileged path's own bpf() and cgroup calls fail
	 * with EPERM, closed, as they did before this mode existed */
	if (bee_read_file("/proc/self/uid_map", &map, NULL) < 0)
		return false;
	unsigned a = 1, b = 1;
	unsigned long n = 0;
	bool init_ns = sscanf(map, "%u %u %lu", &a, &b, &n) == 3 && a == 0 && b == 0 && n == 4294967295UL;
	free(map);
	return !init_ns;
}

/* ---- the network plan ------------------------------------------------------------------ */

struct port_range {
	unsigned lo, hi;
	bool v4, v6;                /* granted for every address of the family */
	unsigned rule4, rule6;
};

struct net_plan {
	struct port_range connect[64], bind[64];
	size_t nconnect, nbind;
};

/* Is rule r named by --allow-weaker (its index or its text)? */
static bool weaker_ok(const struct bee_unpriv_opts *o, const struct bee_mf_rule *r)
{
	char idx[16], full[4200];
	snprintf(idx, sizeof(idx), "%u", r->index);
	snprintf(full, sizeof(full), "%s.%s %s", r->domain, r->kind, r->text);
	for (size_t i = 0; i < o->nweaker; i++)
		if (strcmp(o->weaker[i], idx) == 0 || strcmp(o->weaker[i], full) == 0 ||
		    strcmp(o->weaker[i], r->text) == 0)
			return true;
	return false;
}

static int refuse_rule(const struct bee_manifest *m, const struct bee_mf_rule *r, const char *why, struct bee_error *e)
{
	return bee_fail(e, BEE_STAGE_LANDLOCK, -EOPNOTSUPP,
			"policy '%s': rule %u '%s.%s %s' (line %u): %s without root; unprivileged mode enforces "
			"files, exec and TCP ports only (--allow-weaker %u runs it with the rule widened to what "
			"Landlock can say, docs/unprivileged.md)",
			m->name, r->index, r->domain, r->kind, r->text, r->line, why, r->index);
}

/* "ADDR/PREFIX:PORTS/PROTO": whether the address is every one of its
 * family, the family, the ports, the protocol. */
static int net_text_parse(const char *text, bool *any, bool *v6, unsigned *lo, unsigned *hi, bool *tcp)
{
	const char *colon = strrchr(text, ':'), *proto = strrchr(text, '/');
	if (!colon || !proto || proto < colon)
		return -EINVAL;
	*tcp = strcmp(proto, "/tcp") == 0;
	*v6 = text[0] == '[';
	size_t alen = (size_t)(colon - text);
	*any = (alen == 9 && strncmp(text, "0.0.0.0/0", 9) == 0) || (alen == 6 && strncmp(text, "[::]/0", 6) == 0);
	const char *ports = colon + 1;
	if (ports[0] == '*') {
		*lo = 0;
		*hi = 65535;
		return 0;
	}
	char *end;
	unsigned long a = strtoul(ports, &end, 10), b = a;
	if (*end == '-')
		b = strtoul(end + 1, &end, 10);
	if (end != proto || a > 65535 || b > 65535 || b < a)
		return -EINVAL;
	*lo = (unsigned)a;
	*hi = (unsigned)b;
	return 0;
}

static int plan_add(struct port_range *v, size_t *n, unsigned lo, unsigned hi, bool v6, unsigned rule)
{
	for (size_t i = 0; i < *n; i++) {
		if (v[i].lo == lo && v[i].hi == hi) {
			if (v6) {
				v[i].v6 = true;
				v[i].rule6 = rule;
			} else {
				v[i].v4 = true;
				v[i].rule4 = rule;
			}
			return 0;
		}
	}
	if (*n == 64)
		return -E2BIG;
	v[*n] = (struct port_range){ .lo = lo, .hi = hi, .v4 = !v6, .v6 = v6, .rule4 = rule, .rule6 = rule };
	(*n)++;
	return 0;
}

static int net_plan(const struct bee_manifest *m, const struct bee_unpriv_opts *o, int abi, struct net_plan *p,
		    bee_warn_fn warn, void *ctx, struct bee_error *e)
{
	memset(p, 0, sizeof(*p));
	for (size_t i = 0; i < m->nrules; i++) {
		const struct bee_mf_rule *r = &m->rules[i];
		if (strcmp(r->domain, "net") != 0)
			continue;
		bool weak = weaker_ok(o, r);
		bool any, v6, tcp;
		unsigned lo, hi;
		if (strcmp(r->kind, "deny") == 0) {
			/* nothing that a deny takes out of a grant can be said by
			 * port rules; a deny that only repeats the default denies */
			if (!weak)
				return refuse_rule(m, r, "a network deny", e);
			bee_warnf(warn, ctx, "unprivileged: rule %u 'net.deny %s' is not enforced (--allow-weaker)", r->index,
				  r->text);
			continue;
		}
		if (net_text_parse(r->text, &any, &v6, &lo, &hi, &tcp) < 0)
			return refuse_rule(m, r, "a network rule this mode cannot read", e);
		if (!tcp) {
			if (!weak)
				return refuse_rule(m, r, "a UDP rule (Landlock has no UDP rules; this mode refuses UDP)", e);
			bee_warnf(warn, ctx, "unprivileged: rule %u '%s.%s %s' grants nothing: UDP stays refused",
				  r->index, r->domain, r->kind, r->text);
			continue;
		}
		if (abi < 4)
			return refuse_rule(m, r, "a TCP rule, and this kernel's Landlock (ABI < 4) has no network rules", e);
		if (!any) {
			if (!weak)
				return refuse_rule(m, r, "an address rule (Landlock's network rules name ports, not addresses)", e);
			bee_warnf(warn, ctx, "unprivileged: rule %u '%s.%s %s' is widened to its ports on every address",
				  r->index, r->domain, r->kind, r->text);
			any = true;
		}
		bool bind = strcmp(r->kind, "bind") == 0;
		int err = plan_add(bind ? p->bind : p->connect, bind ? &p->nbind : &p->nconnect, lo, hi, v6, r->index);
		if (err)
			return bee_fail(e, BEE_STAGE_LANDLOCK, err, "policy '%s': rule %u: more than 64 port ranges", m->name,
					r->index);
		if (weak) {
			/* the other family too: Landlock's port rules are for both */
			plan_add(bind ? p->bind : p->connect, bind ? &p->nbind : &p->nconnect, lo, hi, !v6, r->index);
		}
	}
	/* a port rule grants both families: one that the policy grants for
	 * one family only would widen */
	struct {
		struct port_range *v;
		size_t n;
	} sets[2] = { { p->connect, p->nconnect }, { p->bind, p->nbind } };
	for (int s = 0; s < 2; s++) {
		for (size_t i = 0; i < sets[s].n; i++) {
			struct port_range *x = &sets[s].v[i];
			if (x->v4 && x->v6)
				continue;
			const struct bee_mf_rule *r = bee_manifest_rule(m, x->v4 ? x->rule4 : x->rule6);
			if (r && !weaker_ok(o, r))
				return refuse_rule(m, r,
						   x->v4 ? "a rule for IPv4 only (Landlock's port rules grant IPv6 too)"
							 : "a rule for IPv6 only (Landlock's port rules grant IPv4 too)",
						   e);
		}
	}
	return 0;
}

/* The net and scope ruleset: every TCP connect and bind refused but the
 * plan's ports; signals and abstract sockets kept inside (ABI 6). */
static int net_ruleset(const struct net_plan *p, int abi, int *out, struct bee_error *e)
{
	struct up_ruleset_attr a = { 0 };
	size_t size = 8;
	*out = -1;
	if (abi >= 4) {
		a.handled_access_net = UP_NET_BIND_TCP | UP_NET_CONNECT_TCP;
		size = 16;
	}
	if (abi >= 6) {
		a.scoped = UP_SCOPE_ABSTRACT_UNIX | UP_SCOPE_SIGNAL;
		size = 24;
	}
	if (size == 8)
		return 0;   /* nothing to handle: no network rights before ABI 4 */
	int fd = (int)syscall(__NR_landlock_create_ruleset, &a, size, 0);
	if (fd < 0)
		return bee_fail(e, BEE_STAGE_LANDLOCK, -errno, "landlock_create_ruleset (network, ABI %d): %s", abi,
				strerror(errno));
	size_t nrules = 0;
	const struct {
		const struct port_range *v;
		size_t n;
		uint64_t access;
	} sets[2] = { { p->connect, p->nconnect, UP_NET_CONNECT_TCP }, { p->bind, p->nbind, UP_NET_BIND_TCP } };
	for (int s = 0; s < 2 && abi >= 4; s++) {
		for (size_t i = 0; i < sets[s].n; i++) {
			for (unsigned port = sets[s].v[i].lo; port <= sets[s].v[i].hi; port++) {
				if (++nrules > UP_PORTS_MAX * 64) {
					close(fd);
					return bee_fail(e, BEE_STAGE_LANDLOCK, -E2BIG,
							"the policy's port ranges need more than %d Landlock rules",
							UP_PORTS_MAX * 64);
				}
				struct up_net_port np = { .allowed_access = sets[s].access, .port = port };
				if (syscall(__NR_landlock_add_rule, fd, UP_RULE_NET_PORT, &np, 0) < 0) {
					int err = -errno;
					close(fd);
					return bee_fail(e, BEE_STAGE_LANDLOCK, err, "landlock_add_rule (port %u): %s", port,
							strerror(-err));
				}
			}
		}
	}
	*out = fd;
	return 0;
}

/* A filter of its own on top of the session's: an inet socket that is not
 * a stream (UDP, raw) -> EPERM, which Landlock would not refuse. */
static int inet_filter(struct bee_seccomp *out, struct bee_error *e)
{
	memset(out, 0, sizeof(*out));
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int err = ctx ? 0 : -ENOMEM, fd = -1;
	int nr = seccomp_syscall_resolve_name("socket");
	static const int families[] = { AF_INET, AF_INET6 };
	for (size_t i = 0; !err && i < 2; i++) {
		/* the type's low bits, without SOCK_NONBLOCK and SOCK_CLOEXEC */
		static const int types[] = { SOCK_DGRAM, SOCK_RAW, SOCK_SEQPACKET, SOCK_RDM, SOCK_PACKET };
		for (size_t k = 0; !err && k < sizeof(types) / sizeof(types[0]); k++) {
			struct scmp_arg_cmp t[2] = { SCMP_A0(SCMP_CMP_EQ, (uint64_t)families[i]),
						     SCMP_A1(SCMP_CMP_MASKED_EQ, 0xf, (uint64_t)types[k]) };
			err = seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(EPERM), nr, 2, t);
		}
	}
	if (!err)
		err = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
	if (!err && (fd = memfd_create("bee-inet", MFD_CLOEXEC)) < 0)
		err = -errno;
	if (!err)
		err = seccomp_export_bpf(ctx, fd);
	off_t size = err ? 0 : lseek(fd, 0, SEEK_END);
	if (!err && (size <= 0 || size % (off_t)sizeof(struct sock_filter)))
		err = -EINVAL;
	if (!err && !(out->prog.filter = malloc((size_t)size)))
		err = -ENOMEM;
	if (!err && pread(fd, out->prog.filter, (size_t)size, 0) != size)
		err = -EIO;
	if (!err)
		out->prog.len = (unsigned short)(size / (off_t)sizeof(struct sock_filter));
	if (fd >= 0)
		close(fd);
	if (ctx)
		seccomp_release(ctx);
	if (err) {
		free(out->prog.filter);
		out->prog.filter = NULL;
		return bee_fail(e, BEE_STAGE_SECCOMP, err, "libseccomp: the inet socket filter: %s", strerror(-err));
	}
	return 0;
}

/* ---- the run ---------------------------------------------------------------------------- */

struct up_run {
	struct bee_audit_log log;
	const struct bee_manifest *m;
	bee_warn_fn warn;
	void *warn_ctx;
};

static void on_env(void *ctx, const char *name, size_t len, bool allow)
{
	struct up_run *u = ctx;
	if (u->log.fd < 0 || u->m->audit == BEE_AUDIT_MODE_NONE || (u->m->audit == BEE_AUDIT_MODE_DENY && allow))
		return;
	struct bee_audit_line l = {
		.realtime_ns = bee_clock_ns(CLOCK_REALTIME), .kind = "Environment", .action = "Read",
		.resource = name, .resource_len = len, .decision = allow ? "Allow" : "Deny",
		.pid = getpid(), .comm = "bee-load", .source = "launcher",
		.reason = allow ? "granted" : "not granted", .rule = -1,
	};
	bee_audit_relay(&u->log, &l, u->warn, u->warn_ctx);
}

/* argv[0] as execve wants it: a path, else searched in the tool's PATH. */
static const char *tool_path(const char *name, char *const envp[], char *buf, size_t size)
{
	if (strchr(name, '/'))
		return name;
	const char *path = "/usr/bin:/bin";
	for (size_t i = 0; envp[i]; i++)
		if (strncmp(envp[i], "PATH=", 5) == 0)
			path = envp[i] + 5;
	for (const char *p = path; *p;) {
		const char *end = strchr(p, ':');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		if (n && snprintf(buf, size, "%.*s/%s", (int)n, p, name) < (int)size && access(buf, X_OK) == 0)
			return buf;
		p += n;
		if (*p == ':')
			p++;
	}
	return name;
}

__attribute__((noreturn))
static void tool_child(const char *path, const char *const argv[], char *const envp[], int fs_fd, int net_fd,
		       const struct bee_seccomp *f1, const struct bee_seccomp *f2, const int *stdio, int report)
{
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	const char *what = "stdio";
	if (stdio) {
		/* a pty of its own (pty.c): its controlling terminal, in a new session */
		int hi[3];
		for (int i = 0; i < 3; i++)
			if ((hi[i] = fcntl(stdio[i], F_DUPFD_CLOEXEC, 3)) < 0)
				goto fail;
		for (int i = 0; i < 3; i++)
			if (dup2(hi[i], i) < 0)
				goto fail;
		if (setsid() < 0)
			goto fail;
		if (isatty(0))
			ioctl(0, TIOCSCTTY, 0);
	}
	what = "prctl";
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		goto fail;
	what = "landlock_restrict_self";
	if (syscall(__NR_landlock_restrict_self, fs_fd, 0) < 0)
		goto fail;
	if (net_fd >= 0 && syscall(__NR_landlock_restrict_self, net_fd, 0) < 0)
		goto fail;
	what = "seccomp";
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &f2->prog) < 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &f1->prog) < 0)
		goto fail;
	/* nothing of bee-load's but stdio, and the report pipe until exec */
	if (report > 3)
		syscall(SYS_close_range, 3, (unsigned)report - 1, 0);
	syscall(SYS_close_range, (unsigned)report + 1, ~0U, 0);
	execve(path, (char *const *)argv, envp);
	what = "execve";
fail:;
	int err = errno;
	char msg[128];
	int n = snprintf(msg, sizeof(msg), "%d %s", err, what);
	if (write(report, msg, (size_t)n) < 0) {
		/* the parent sees the status */
	}
	_exit(err == ENOENT ? 127 : 126);
}

int bee_unpriv_run(const char *pack_path, const char *const argv[], const struct bee_unpriv_opts *o, int *status,
		   struct bee_error *e)
{
	struct bee_pack *pack = NULL;
	struct bee_manifest m;
	struct up_run u = { .log = { .fd = -1 }, .m = &m, .warn = o->warn, .warn_ctx = o->warn_ctx };
	struct bee_seccomp f1 = { 0 }, f2 = { 0 };
	struct net_plan np;
	char **envp = NULL;
	int fs_fd = -1, net_fd = -1, p[2] = { -1, -1 }, err;
	bool have_m = false;
	*status = -1;
	if ((err = bee_pack_load(pack_path, &pack, &m, e)) < 0)
		return err;
	have_m = true;
	int abi = bee_landlock_abi();
	if (abi < 1) {
		err = bee_fail(e, BEE_STAGE_GATE, -EOPNOTSUPP,
			       "unprivileged mode: Landlock is not enabled in this kernel, and nothing else confines without root");
		goto out;
	}
	if ((err = net_plan(&m, o, abi, &np, o->warn, o->warn_ctx, e)) < 0)
		goto out;
	if (abi < 4 && !o->nweaker) {
		err = bee_fail(e, BEE_STAGE_LANDLOCK, -EOPNOTSUPP,
			       "unprivileged mode: this kernel's Landlock (ABI %d) cannot refuse TCP (ABI 4): every connect "
			       "would be allowed",
			       abi);
		goto out;
	}
	if ((err = bee_landlock_weaker_check(abi, o->weaker, o->nweaker, e)) < 0 ||
	    (err = bee_landlock_ruleset(pack, &m, abi, &fs_fd, o->warn, o->warn_ctx, e)) < 0 ||
	    (err = net_ruleset(&np, abi, &net_fd, e)) < 0 ||
	    (err = bee_seccomp_build(m.syscalls_allowed, &f1, e)) < 0 || (err = inet_filter(&f2, e)) < 0)
		goto out;
	u.log.policy = m.name;
	u.log.boot_to_real = bee_boot_to_real();
	if (o->audit_log && (err = bee_audit_open(&u.log, o->audit_log, e)) < 0)
		goto out;
	if (u.log.fd >= 0) {
		struct bee_audit_line l = {
			.realtime_ns = bee_clock_ns(CLOCK_REALTIME), .kind = "Process", .action = "Execute",
			.resource = "bee:unprivileged", .resource_len = strlen("bee:unprivileged"), .decision = "Allow",
			.pid = getpid(), .comm = "bee-load", .source = "launcher",
			.reason = "unprivileged mode: Landlock's denials are not in this log", .rule = -1,
		};
		bee_audit_relay(&u.log, &l, u.warn, u.warn_ctx);
	}
	if ((err = bee_env_build(pack, &m, (const char *const *)environ, o->context, o->ncontext, on_env, &u, &envp)) < 0) {
		bee_fail(e, BEE_STAGE_LAUNCH, err, "environment: %s", strerror(-err));
		goto out;
	}
	char pathbuf[PATH_MAX];
	const char *path = tool_path(argv[0], envp, pathbuf, sizeof(pathbuf));
	if (pipe2(p, O_CLOEXEC) < 0) {
		err = bee_fail(e, BEE_STAGE_LAUNCH, -errno, "pipe: %s", strerror(errno));
		goto out;
	}
	sigset_t sigs, old;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGHUP);
	sigaddset(&sigs, SIGQUIT);
	sigprocmask(SIG_BLOCK, &sigs, &old);
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		tool_child(path, argv, envp, fs_fd, net_fd, &f1, &f2, o->stdio, p[1]);
	}
	close(p[1]);
	p[1] = -1;
	if (pid < 0) {
		err = bee_fail(e, BEE_STAGE_LAUNCH, -errno, "fork: %s", strerror(errno));
		sigprocmask(SIG_SETMASK, &old, NULL);
		goto out;
	}
	char msg[128] = "";
	ssize_t n = read(p[0], msg, sizeof(msg) - 1);
	if (n > 0) {
		/* the child could not confine itself or exec: it never ran the tool */
		msg[n] = '\0';
		int cerr = atoi(msg);
		const char *what = strchr(msg, ' ');
		waitpid(pid, NULL, 0);
		sigprocmask(SIG_SETMASK, &old, NULL);
		bool exec_stage = what && strcmp(what + 1, "execve") == 0;
		err = bee_fail(e, exec_stage ? BEE_STAGE_EXEC : BEE_STAGE_LANDLOCK, -cerr, "%s: '%s': %s",
			       what ? what + 1 : "launch", argv[0], strerror(cerr));
		goto out;
	}
	/* the signals go to the tool; a second one kills it */
	int got = 0, st;
	for (;;) {
		struct timespec ts = { .tv_sec = 0, .tv_nsec = 50 * 1000 * 1000 };
		siginfo_t si;
		int sig = sigtimedwait(&sigs, &si, &ts);
		if (sig > 0) {
			kill(pid, got ? SIGKILL : sig);
			got = got ? got : sig;
		}
		pid_t w = waitpid(pid, &st, WNOHANG);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR) {
			st = 0;
			break;
		}
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	*status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	err = 0;
out:
	if (p[0] >= 0)
		close(p[0]);
	if (p[1] >= 0)
		close(p[1]);
	if (fs_fd >= 0)
		close(fs_fd);
	if (net_fd >= 0)
		close(net_fd);
	bee_env_free(envp);
	bee_seccomp_fini(&f1);
	bee_seccomp_fini(&f2);
	if (u.log.fd >= 0)
		bee_audit_close(&u.log);
	if (have_m)
		bee_manifest_fini(&m);
	bee_pack__close(pack);
	return err;
}
