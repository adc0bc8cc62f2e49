/* SPDX-License-Identifier: GPL-2.0-only */
/* session.c: one session, from a pack to a torn-down cgroup.
 *
 *   bee_session__open    pack -> user -> nesting -> gate -> the pack's load (made
 *                        once: load, maps, pin, attach, guard; cache.c) -> registry
 *                        -> audit log -> cgroup (a child of the pack's) -> the
 *                        session's map entries -> its pin folder -> seccomp
 *                        filter, mount plan, init -> its DNS stub (a policy
 *                        with host names: dns.c) -> Landlock ruleset
 *   bee_session__spawn   environment -> the plan to init (made at open: new pid, mount
 *                        and cgroup namespaces, in the cgroup) -> hardened tool -> exec;
 *                        bee_session_tool_start, which a supervisor's exec
 *                        (supervisor.c) calls for each tool
 *   bee_session__poll    ring buffer, lost counter, Landlock's audit records,
 *                        the tool's end
 *   bee_session__close   kill what is left, drain, fsync, detach, unpin,
 *                        remove the cgroup and the registry entry
 *
 * Every stage that fails stops the launch with its own stage (libbee.h's
 * BEE_STAGES) and bee_session__open undoes all earlier ones: the tool
 * never runs unconfined or half-confined.
 */
#include "internal.h"
#include "libbeec.h"
#include "vfs.h"

#include "bee_audit.h"
#include "bee_names.h"
#include "bee_session.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

struct bee_session {
	char id[17];
	char *state_dir, *bpffs_opt;
	char **context;
	size_t ncontext;
	bee_warn_fn warn;
	void *warn_ctx;

	struct bee_pack *pack;
	struct bee_manifest mf;
	enum bee_backend backend;
	int ll_abi;

	bool registered;
	bool gc_due;                        /* what killed bee-loads left: collected once a tool runs */
	bool image_due;                     /* the manifest was parsed: its image is written then too */
	struct bee_registry_entry reg;
	char cgroup[PATH_MAX];
	int cgroup_fd;
	bool cgroup_made;
	struct bee_cache *cache;            /* the pack's load, shared with its other sessions */
	struct bee_slot *slot;              /* this session's entries in its maps */
	bool pin_dir_made;
	int ruleset_fd;
	struct bee_ll_lates ll_late;        /* rules init adds on its own /proc, cgroup2 */
	struct bee_user user;
	struct bee_mountns *mountns;        /* init's, planned here */
	struct bee_vfs *vfs;                /* --overlay (vfs.c); NULL: none */
	const char **overlay_dirs;          /* their dirs, for the late Landlock rules */
	struct bee_seccomp filter;          /* the tool's, in init's copy of this memory */
	struct bee_init init;

	struct bee_audit_log log;
	/* the log's one writer at a time: the relay and the DNS stub's thread */
	pthread_mutex_t log_lock;
	struct bee_dns *dns;                /* NULL: the policy names no host */
	struct bee_learn *learn;            /* --learn: what the policy would deny (learn.c) */
	struct bee_kaudit *ka;
	struct ring_buffer *rb;
	uint64_t lost_seen;

	int epfd, clock_fd;
	pid_t tool_pid;             /* the tool, for its process group and the registry */
	uint32_t tool_id;           /* bee_session__spawn's tool, in init's reports */
	bool status_watched;        /* init's status pipe is in epfd */
	bee_tool_end_fn on_end;     /* the ends of the other tools (bee_session_tool_start) */
	void *on_end_ctx;
	uint64_t commands;          /* tools started */
	bool spawned, ended, finished;   /* finished: bee_session__end ran */
	bool alone;                 /* at the tool's end nothing else ran in the session */
	int status;                 /* shell style, once ended */
	char res[4200], comm[17];   /* scratch of the event callback */
};

/* the marker's way back through the kernel's audit queue: milliseconds on
 * a quiet host, seconds when 200 sessions end at once on a loaded one
 * (kauditd hands every record to every session's socket) */
#define KAUDIT_DRAIN_MS 10000
#define KILL_WAIT_MS 2000

/* ---- audit relay -------------------------------------------------------------------- */

/* A connect to an address the session's DNS admitted for a name says the
 * name: "api.github.com:443" (the record's detail is the entry's
 * provenance, BEE_NET_PROV_HOST and the admission). */
static void host_name(struct bee_session *s, const void *data, struct bee_audit_line *l)
{
	const struct bee_audit_event *ev = data;
	char host[BEE_HOST_NAME_MAX + 1];
	if (!s->dns || ev->resource != BEE_AUDIT_RES_INET || bee_dns_host(s->dns, ev->detail, host, sizeof(host)) < 0)
		return;
	snprintf(s->res, sizeof(s->res), "%s:%u", host, ev->net.port);
	l->resource = s->res;
	l->resource_len = strlen(s->res);
}

/* A DNS query of the session (dns.c, the stub's thread): kind Network,
 * action Resolve; a name outside the policy is recorded under every mode
 * but none, so that a learning run can propose it. */
static void on_resolve(void *ctx, const char *host, bool allow, const char *reason)
{
	struct bee_session *s = ctx;
	if (s->mf.audit == BEE_AUDIT_MODE_NONE || (s->mf.audit == BEE_AUDIT_MODE_DENY && allow))
		return;
	struct bee_audit_line l = {
		.realtime_ns = bee_clock_ns(CLOCK_REALTIME), .kind = "Network",
		.action = bee_audit_action_name(BEE_AUDIT_ACTION_RESOLVE), .resource = host,
		.resource_len = strlen(host), .decision = allow ? "Allow" : "Deny", .pid = -1,
		.source = "dns", .reason = reason, .rule = -1,
	};
	pthread_mutex_lock(&s->log_lock);
	if (s->log.fd >= 0)
		bee_audit_relay(&s->log, &l, s->warn, s->warn_ctx);
	pthread_mutex_unlock(&s->log_lock);
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct bee_session *s = ctx;
	struct bee_audit_line l;
	if (s->log.fd < 0)
		return 0;
	if (bee_audit_event_line(data, size, s->log.boot_to_real, &l, s->res, sizeof(s->res), s->comm) < 0) {
		bee_warnf(s->warn, s->warn_ctx, "audit: a malformed record of %zu bytes from the ring buffer", size);
		return 0;
	}
	host_name(s, data, &l);
	bee_audit_relay(&s->log, &l, s->warn, s->warn_ctx);
	return 0;
}

/* An overrun is a record of its own: "bee:audit-lost:N", N the records
 * the programs could not put in the ring buffer since the last one. */
static void check_lost(struct bee_session *s)
{
	uint64_t sum;
	if (!s->slot || bee_slot_lost(s->slot, &sum) < 0 || sum <= s->lost_seen)
		return;
	char res[64];
	snprintf(res, sizeof(res), "bee:audit-lost:%llu", (unsigned long long)(sum - s->lost_seen));
	s->lost_seen = sum;
	struct bee_audit_line l = {
		.realtime_ns = bee_clock_ns(CLOCK_REALTIME), .kind = "Process", .action = "Read",
		.resource = res, .resource_len = strlen(res), .decision = "Deny", .pid = -1,
		.source = "loader", .reason = "ring buffer overrun", .rule = -1,
	};
	bee_audit_relay(&s->log, &l, s->warn, s->warn_ctx);
}

static void relay(struct bee_session *s)
{
#ifdef BEE_FAULT_INJECTION
	/* tests: hold the ring buffer until the tool ends, so it overruns */
	const char *f = getenv("BEE_FAULT");
	if (f && strcmp(f, "relay-stall") == 0 && !s->ended)
		return;
#endif
	pthread_mutex_lock(&s->log_lock);
	if (s->rb)
		ring_buffer__consume(s->rb);
	check_lost(s);
	if (s->ka) {
		int err = bee_kaudit_read(s->ka, &s->log);
		if (err)
			bee_warnf(s->warn, s->warn_ctx, "kernel audit: %s", strerror(-err));
	}
	if (s->learn)
		bee_learn_drain(s->learn, &s->log, s->warn, s->warn_ctx);
	pthread_mutex_unlock(&s->log_lock);
}

/* Environment decisions: the launcher's own, logged by the [audit] mode
 * as one summary per decision and tool start: the names (never a value),
 * comma-separated, and "count". */
struct env_summary {
	char *names[2];             /* [0] denied, [1] allowed */
	size_t len[2];
	uint64_t count[2];
	bool oom;
};

static void on_env(void *ctx, const char *name, size_t len, bool allow)
{
	struct env_summary *es = ctx;
	char *p = realloc(es->names[allow], es->len[allow] + len + 2);
	if (!p) {
		es->oom = true;
		return;
	}
	if (es->len[allow])
		p[es->len[allow]++] = ',';
	memcpy(p + es->len[allow], name, len);
	es->len[allow] += len;
	p[es->len[allow]] = '\0';
	es->names[allow] = p;
	es->count[allow]++;
}

static void env_summary_write(struct bee_session *s, struct env_summary *es)
{
	for (int allow = 0; allow < 2; allow++) {
		bool wanted = s->mf.audit == BEE_AUDIT_MODE_ALL || (s->mf.audit == BEE_AUDIT_MODE_DENY && !allow);
		if (wanted && es->count[allow]) {
			struct bee_audit_line l = {
				.realtime_ns = bee_clock_ns(CLOCK_REALTIME), .kind = "Environment", .action = "Read",
				.resource = es->names[allow], .resource_len = es->len[allow],
				.decision = allow ? "Allow" : "Deny", .pid = getpid(), .comm = "bee-load",
				.source = "launcher", .reason = allow ? "granted" : "not granted (scrubbed)",
				.rule = -1, .count = es->count[allow],
			};
			pthread_mutex_lock(&s->log_lock);
			bee_audit_relay(&s->log, &l, s->warn, s->warn_ctx);
			pthread_mutex_unlock(&s->log_lock);
		}
		free(es->names[allow]);
	}
	if (es->oom)
		bee_warnf(s->warn, s->warn_ctx, "audit: out of memory: the environment's summary lacks names");
}

/* The wall clock moved: take the offset again (a TFD_TIMER_CANCEL_ON_SET
 * timer says so). */
static void clock_arm(struct bee_session *s)
{
	struct itimerspec its = { .it_value = { .tv_sec = (time_t)1 << 40 } };
	s->log.boot_to_real = bee_boot_to_real();
	if (s->clock_fd >= 0)
		timerfd_settime(s->clock_fd, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET, &its, NULL);
}

/* ---- registry ---------------------------------------------------------------------- */

static int registry_save(struct bee_session *s, struct bee_error *e)
{
	int lk = bee_registry_lock(s->state_dir);
	int err = lk < 0 ? lk : bee_registry_write(s->state_dir, &s->reg);
	bee_registry_unlock(lk);
	if (err)
		return bee_fail(e, BEE_STAGE_REGISTRY, err, "cannot write the session record under '%s': %s",
				s->state_dir, strerror(-err));
	return 0;
}

static int registry_create(struct bee_session *s, struct bee_error *e)
{
	int err = bee_fault(BEE_STAGE_REGISTRY);
	if (err)
		return bee_fail(e, BEE_STAGE_REGISTRY, err, "'%s': injected fault", s->state_dir);
	struct bee_registry_entry *r = &s->reg;
	char hex[BEE_PACK_DIGEST_HEX_LEN + 1];
	snprintf(r->id, sizeof(r->id), "%s", s->id);
	r->pid = getpid();
	r->starttime = bee_pid_starttime(r->pid);
	snprintf(r->policy, sizeof(r->policy), "%s", s->mf.name);
	snprintf(r->backend, sizeof(r->backend), "%s", bee_backend__name(s->backend));
	bee_pack__digest_hex(s->pack, hex);
	snprintf(r->digest, sizeof(r->digest), "%s", hex);
	bee_utc_iso(bee_clock_ns(CLOCK_REALTIME), r->started, sizeof(r->started));
	snprintf(r->cgroup, sizeof(r->cgroup), "%s", s->cgroup);
	/* the pack's bytes: the load's copy (cache.c), which lives as long as
	 * a session holds the load */
	snprintf(r->pack, sizeof(r->pack), "%s", bee_cache_pack(s->cache));
	/* the record first, so that a session killed from here on is found */
	if ((err = registry_save(s, e)) < 0)
		return err;
	s->registered = true;
	return 0;
}

/* ---- backend --------------------------------------------------------------------- */

/* bpffs to pin under: --bpffs, else one mounted, else a private one of
 * bee-load's own (bpffs.c) */
static int pick_bpffs(struct bee_session *s, char *bpffs, size_t bpffs_size, struct bee_error *e)
{
	if (s->bpffs_opt) {
		if (!bee_is_bpffs(s->bpffs_opt))
			return bee_fail(e, BEE_STAGE_GATE, -ENOENT, "'%s' is not a mounted bpf file system",
					s->bpffs_opt);
		snprintf(bpffs, bpffs_size, "%s", s->bpffs_opt);
		return 0;
	}
	return bee_bpffs_private(s->state_dir, bpffs, bpffs_size, s->warn, s->warn_ctx, e);
}

static int pick_backend(struct bee_session *s, enum bee_backend want, bool fallback, char *bpffs,
			size_t bpffs_size, struct bee_error *e)
{
	int err = bee_fault(BEE_STAGE_GATE);
	if (err)
		return bee_fail(e, BEE_STAGE_GATE, err, "injected fault");
	/* auto falls back to landlock only when told to, and says why */
	char fell[400] = "";
	if (want != BEE_BACKEND_LANDLOCK) {
		struct bee_check_report r;
		bee_check__run(&r);
		if (r.bpf_lsm) {
			s->backend = BEE_BACKEND_BPF_LSM;
			return pick_bpffs(s, bpffs, bpffs_size, e);
		}
		if (want == BEE_BACKEND_BPF_LSM)
			return bee_fail(e, BEE_STAGE_GATE, -EOPNOTSUPP, "the bpf-lsm backend is not available here (%s)",
					r.bpf_lsm_reason);
		if (!fallback)
			return bee_fail(e, BEE_STAGE_GATE, -EOPNOTSUPP,
					"the bpf-lsm backend is not available here (%s), and the configuration "
					"forbids the fallback to landlock (fallback = false)",
					r.bpf_lsm_reason);
		snprintf(fell, sizeof(fell), " (bpf-lsm is unavailable here: %s)", r.bpf_lsm_reason);
		bee_warnf(s->warn, s->warn_ctx, "bpf-lsm is unavailable here (%s); using the landlock backend",
			  r.bpf_lsm_reason);
	}
	/* the gates the landlock backend needs; no BTF to parse, no probe to
	 * load; learning applies no Landlock ruleset (fanotify watches) */
	s->ll_abi = bee_landlock_abi();
	if (s->ll_abi < 1)
		return bee_fail(e, BEE_STAGE_GATE, -EOPNOTSUPP,
				"the landlock backend is not available: Landlock is not enabled in this kernel%s", fell);
	s->backend = BEE_BACKEND_LANDLOCK;
	return pick_bpffs(s, bpffs, bpffs_size, e);
}

/* ---- open ----------------------------------------------------------------------------- */

static void warn_gc(void *ctx, const char *msg)
{
	struct bee_session *s = ctx;
	if (s->warn)
		s->warn(s->warn_ctx, msg);
}

/* What a session does once its first tool is started (or at its close,
 * when it started none), never on the way to a tool's start, while this
 * process would only wait: the leftovers of killed bee-loads collected
 * (never the session's own: its record, its cgroup and its pack's
 * reference are live), and the image of a manifest it had to parse
 * written, for the next session of the pack (its load is whole by now). */
static void started(struct bee_session *s)
{
	if (s->gc_due) {
		s->gc_due = false;
		bee_sessions__gc(s->state_dir, warn_gc, s, NULL);
	}
	if (s->image_due) {
		s->image_due = false;
		int err = bee_manifest_image_save(s->state_dir, s->pack, &s->mf);
		if (err < 0)
			bee_warnf(s->warn, s->warn_ctx, "pack: cannot keep its manifest's image: %s", strerror(-err));
	}
}

static int epoll_add(int epfd, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };
	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

static int kaudit_start(struct bee_session *s, struct bee_error *e)
{
	/* bpf-lsm: the hardening ruleset's denials, once Landlock logs (ABI 7) */
	bool hardened = s->backend == BEE_BACKEND_BPF_LSM && s->ruleset_fd >= 0 && s->ll_abi >= 7;
	if (s->ka || (s->backend != BEE_BACKEND_LANDLOCK && !hardened) || s->mf.audit == BEE_AUDIT_MODE_NONE)
		return 0;
	int err = bee_kaudit_open(s->id, &s->ka, s->warn, s->warn_ctx, e);
	if (err)
		return err;
	if (s->tool_pid > 0)
		bee_kaudit_set_pid(s->ka, s->tool_pid);
	if (s->epfd >= 0 && (err = epoll_add(s->epfd, bee_kaudit_fd(s->ka))) < 0)
		return bee_fail(e, BEE_STAGE_AUDIT, err, "epoll: %s", strerror(-err));
	return 0;
}

/* The landlock backend's ruleset from the walk of the real tree, and the
 * one line that sums up what it narrows (docs/bee-load.md, "plan"). */
static int landlock_steps(struct bee_session *s, const struct bee_session_opts *o, struct bee_error *e)
{
	struct beec_ll_opts wo = { .sz = sizeof(wo), .max_entries = o->walk_entries, .max_ms = o->walk_ms };
	struct beec_ll_plan plan;
	int err = bee_landlock_weaker_check(s->ll_abi, o->weaker, o->nweaker, e);
	if (err < 0)
		return err;
	/* the tree is read-only but the session's writable places: truncate
	 * is granted there (EROFS refuses it), so that Landlock's walk at
	 * open stops early */
	if ((err = bee_landlock_ro_opts(s->mountns, s->ll_abi, &wo, e)) < 0)
		return err;
	err = bee_landlock_ruleset_late(s->pack, &s->mf, s->ll_abi, &s->ruleset_fd, &s->ll_late, &wo, &plan,
					    s->warn, s->warn_ctx, e);
	free((void *)wo.rw);
	if (err == 0 && !o->quiet && plan.nnarrow) {
		uint64_t n = 0;
		unsigned rules = 0, last = ~0u;
		for (size_t i = 0; i < plan.nnarrow; i++) {
			n += plan.narrow[i].count;
			rules += plan.narrow[i].rule != last;
			last = plan.narrow[i].rule;
		}
		bee_warnf(s->warn, s->warn_ctx,
			  "landlock: %llu narrowing%s under %u rule%s (first: rule %u, line %u, %s at '%s'); "
			  "bee-load plan lists them",
			  (unsigned long long)n, n == 1 ? "" : "s", rules, rules == 1 ? "" : "s", plan.narrow[0].rule,
			  plan.narrow[0].line, beec_ll__narrow_name(plan.narrow[0].kind), plan.narrow[0].path);
	}
	beec_ll_plan__fini(&plan);
	return err;
}

/* The session's overlays (vfs.c): their layers made before init's plan,
 * their dirs kept for the Landlock rules bound inside them. */
static int vfs_open(struct bee_session *s, const struct bee_session_opts *o, struct bee_error *e)
{
	if (!o->noverlays)
		return 0;
	struct bee_vfs_open_opts vo = {
		.specs = o->overlays, .n = o->noverlays, .policy = s->mf.name, .audit_log = s->log.path,
		.audit_detail = o->audit_detail, .warn = s->warn, .warn_ctx = s->warn_ctx,
	};
	int err = bee_vfs_open(s->state_dir, s->id, &vo, &s->vfs, e);
	if (err)
		return err;
	if (!(s->overlay_dirs = calloc(bee_vfs_count(s->vfs), sizeof(char *))))
		return bee_fail(e, BEE_STAGE_VFS, -ENOMEM, "out of memory");
	for (size_t i = 0; i < bee_vfs_count(s->vfs); i++)
		s->overlay_dirs[i] = bee_vfs_dir(s->vfs, i);
	s->ll_late.overlaid = s->overlay_dirs;
	s->ll_late.noverlaid = bee_vfs_count(s->vfs);
	return 0;
}

/* Learning is said in the log itself: its first record. */
static void learn_record(struct bee_session *s)
{
	char res[96];
	snprintf(res, sizeof(res), "bee:learning:%s", bee_backend__name(s->backend));
	struct bee_audit_line l = {
		.realtime_ns = bee_clock_ns(CLOCK_REALTIME), .kind = "Process", .action = "Execute",
		.resource = res, .resource_len = strlen(res), .decision = "Allow", .pid = getpid(),
		.comm = "bee-load", .source = "loader", .reason = "learning mode: nothing is denied", .rule = -1,
	};
	bee_audit_relay(&s->log, &l, s->warn, s->warn_ctx);
}

/* A learning session is never inside another: it denies nothing, which
 * an enclosing session's policy cannot be proved to allow. */
static int learn_gate(struct bee_error *e)
{
	char self[PATH_MAX], ns[64] = "";
	/* a session's tool sees its cgroup as the root of a cgroup namespace
	 * of its own: the initial namespace's inode is PROC_CGROUP_INIT_INO */
	ssize_t n = readlink("/proc/self/ns/cgroup", ns, sizeof(ns) - 1);
	bool own_ns = n > 0 && strcmp((ns[n] = '\0', ns), "cgroup:[4026531835]") != 0;
	int r = bee_cgroup_self(self, sizeof(self));
	if (r < 0)
		snprintf(self, sizeof(self), "?");
	if ((r == 0 && strstr(self, "/bee-")) || (own_ns && (r < 0 || strcmp(self, "/") == 0)))
		return bee_fail(e, BEE_STAGE_LEARN, -EPERM,
				"learning mode is refused inside a session (this process's cgroup is '%s'%s)", self,
				own_ns ? ", the root of a cgroup namespace of its own" : "");
	return 0;
}

static int open_steps(struct bee_session *s, const char *pack_path, const struct bee_session_opts *o,
		      struct bee_error *e)
{
	char bpffs[PATH_MAX], parent[PATH_MAX];
	int err = o->learn ? learn_gate(e) : 0;
	if (err)
		return err;
	/* the manifest from its image when an earlier session of the pack
	 * left one (a JSON parse of it was the largest part of a warm start) */
	bool thawed;
	if ((err = bee_pack_load_at(pack_path, s->state_dir, &s->pack, &s->mf, &thawed, e)) < 0)
		return err;
	s->image_due = !thawed;
	/* a bad --overlay is refused before anything is made */
	for (size_t i = 0; i < o->noverlays; i++) {
		struct bee_vfs_spec sp;
		if ((err = bee_vfs_spec_parse(o->overlays[i], &sp, e)) < 0)
			return err;
	}
	/* inside a session: proved its subset, before anything is created */
	/* resolved before anything exists that would need undoing */
	if ((err = bee_user_resolve(o->user, &s->user, s->warn, s->warn_ctx, e)) < 0)
		return err;
	/* this process's cgroup, once: the enclosing sessions are found by
	 * it, and the session's own is made beside it */
	int cgerr = bee_cgroup_self(parent, sizeof(parent));
	if ((err = bee_nesting_check(s->pack, &s->mf, s->state_dir, cgerr < 0 ? NULL : parent, s->warn, s->warn_ctx,
				     e)) < 0)
		return err;
	/* bee's state is bee's alone before anything is kept in it */
	if ((err = bee_state_dir_secure(s->state_dir, e)) < 0)
		return err;
	if ((err = pick_backend(s, o->backend, o->landlock_fallback, bpffs, sizeof(bpffs), e)) < 0)
		return err;
	if (cgerr < 0)
		return bee_fail(e, BEE_STAGE_CGROUP, cgerr, "cannot find this process's cgroup v2 node: %s",
				strerror(-cgerr));
	/* what a killed bee-load left behind (its cgroups, its pins) is
	 * collected once the first tool runs, while this process would only
	 * wait (started) */
	s->gc_due = true;
	if ((err = bee_session_id_new(s->id)) < 0)
		return bee_fail(e, BEE_STAGE_REGISTRY, err, "no session id: %s", strerror(-err));
	/* the pack's programs, loaded and attached once for all its sessions */
	struct bee_cache_opts co = {
		.pack = s->pack, .m = &s->mf, .lsm = s->backend == BEE_BACKEND_BPF_LSM, .state_dir = s->state_dir,
		.bpffs = bpffs, .parent = parent, .warn = s->warn, .warn_ctx = s->warn_ctx,
	};
	bool cold;
	if ((err = bee_cache_open(&co, &s->cache, &cold, e)) < 0)
		return err;
	if (snprintf(s->cgroup, sizeof(s->cgroup), "%s/bee-%s-%s", bee_cache_cgroup(s->cache), s->mf.name, s->id) >=
		    (int)sizeof(s->cgroup) ||
	    snprintf(s->reg.bpffs, sizeof(s->reg.bpffs), "%s/bee/%s", bpffs, s->id) >= (int)sizeof(s->reg.bpffs))
		return bee_fail(e, BEE_STAGE_CGROUP, -ENAMETOOLONG, "the session's cgroup or pin path is too long");
	snprintf(s->reg.cache, sizeof(s->reg.cache), "%s", bee_cache_dir(s->cache));
	s->reg.audit_detail = o->audit_detail;
	if ((err = registry_create(s, e)) < 0)
		return err;
	s->log.policy = s->mf.name;
	s->log.session = s->id;
	s->log.detail = o->audit_detail || o->learn;
	clock_arm(s);
	if ((o->learn || o->audit_log) && (err = bee_session__audit_start(s, o->learn ? o->learn : o->audit_log, e)) < 0)
		return err;
	if (o->learn)
		learn_record(s);
	if ((err = bee_cgroup_create(s->cgroup, 0755, &s->cgroup_fd, e)) < 0)
		return err;
	s->cgroup_made = true;
	/* the session's entries before any task is in its cgroup, which is
	 * under the pack's programs from birth: without them a task is
	 * denied everything */
	if ((err = bee_slot_open(s->cache, s->cgroup_fd, &s->mf, o->learn ? BEE_STATE_LEARN : 0, s->warn,
				 s->warn_ctx, &s->slot, e)) < 0)
		return err;
	/* landlock has no complain mode: fanotify watches the file system */
	if (o->learn && (err = bee_learn_open(s->pack, &s->mf, s->cgroup, s->backend == BEE_BACKEND_LANDLOCK,
					      s->warn, s->warn_ctx, &s->learn, e)) < 0)
		return err;
	/* the session's pin folder, for what a revoke gives it of its own */
	if ((err = bee_fault(BEE_STAGE_PIN)) < 0)
		return bee_fail(e, BEE_STAGE_PIN, err, "'%s': injected fault", s->reg.bpffs);
	if ((err = bee_pin_folder_make(s->reg.bpffs, false, e)) < 0)
		return err;
	s->pin_dir_made = true;
	/* init builds its namespaces and mounts while the ring buffer and the
	 * Landlock ruleset are made below (the other core's work); the filter
	 * is ready made, from the state directory's cache after the first
	 * session */
	if ((err = bee_seccomp_get(s->state_dir, s->mf.syscalls_allowed, &s->filter, e)) < 0 ||
	    (err = vfs_open(s, o, e)) < 0 ||
	    (err = bee_mountns_plan(&s->mf, s->state_dir, &s->mountns, e)) < 0 ||
	    (s->vfs && (err = bee_mountns_overlays(s->mountns, s->vfs, e)) < 0))
		return err;
	if (o->learn)
		bee_mountns_learn(s->mountns);
	struct bee_init_spec is = { .cgroup_fd = s->cgroup_fd, .mountns = s->mountns, .filter = &s->filter.prog };
	if ((err = bee_init_start(&is, &s->init, e)) < 0)
		return err;
	if (s->vfs) {
		if ((err = bee_vfs_started(s->vfs, s->init.pid)) < 0)
			return bee_fail(e, BEE_STAGE_VFS, err, "'%s/vfs.json': %s", bee_vfs_root(s->vfs), strerror(-err));
		bee_vfs_started_audit(s->vfs);
	}
	/* host names: the session's DNS goes to a stub of its own from here,
	 * a thread made after init, which is cloned from this process and
	 * forks the tools (a lock a thread held at the clone stays held) */
	struct bee_dns_spec ds = {
		.pack = s->pack, .cache_dir = s->reg.cache, .session_dir = s->reg.bpffs, .sess = bee_slot_key(s->slot),
		.upstream = o->dns_upstream, .ttl_floor_s = o->dns_ttl_floor, .audit = on_resolve, .audit_ctx = s,
		.warn = s->warn, .warn_ctx = s->warn_ctx,
	};
	if ((err = bee_dns_open(&ds, &s->dns, e)) < 0)
		return err;
	s->rb = ring_buffer__new(bee_slot_audit_fd(s->slot), on_event, s, NULL);
	if (!s->rb)
		return bee_fail(e, BEE_STAGE_LOAD, -errno, "ring buffer '%s': %s", bee_map_name(BEE_MAP_AUDIT),
				strerror(errno));
	if (s->backend == BEE_BACKEND_LANDLOCK && !o->learn && (err = landlock_steps(s, o, e)) < 0)
		return err;
	/* bpf-lsm: link, rename, unlink, mkdir, truncate by Landlock (ll.c) */
	if (s->backend == BEE_BACKEND_BPF_LSM &&
	    ((err = bee_landlock_harden_session_late(&s->mf, o->no_landlock_hardening || o->learn,
						     &s->ll_abi, &s->ruleset_fd,
						     &s->ll_late, s->warn, s->warn_ctx, e)) < 0 ||
	     (s->log.fd >= 0 && (err = kaudit_start(s, e)) < 0)))
		return err;
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->epfd < 0 || epoll_add(s->epfd, ring_buffer__epoll_fd(s->rb)) < 0 ||
	    (s->clock_fd >= 0 && epoll_add(s->epfd, s->clock_fd) < 0) ||
	    (s->ka && epoll_add(s->epfd, bee_kaudit_fd(s->ka)) < 0) ||
	    (s->learn && epoll_add(s->epfd, bee_learn_fd(s->learn)) < 0))
		return bee_fail(e, BEE_STAGE_LAUNCH, -errno, "epoll: %s", strerror(errno));
	return 0;
}

int bee_session__open(const char *pack_path, const struct bee_session_opts *opts, struct bee_session **out,
		      struct bee_error *e)
{
	struct bee_session_opts copy, *o = &copy;
	struct bee_session *s;
	int err = 0;
	*out = NULL;
	if (bee_opts_copy(&copy, sizeof(copy), opts) < 0)
		return bee_fail(e, BEE_STAGE_USAGE, -EINVAL, "bee_session_opts: unknown fields set");
	s = calloc(1, sizeof(*s));
	if (!s)
		return bee_fail(e, BEE_STAGE_LAUNCH, -ENOMEM, "out of memory");
	s->cgroup_fd = s->ruleset_fd = s->epfd = -1;
	s->init = (struct bee_init){ .pid = -1, .pidfd = -1, .sock = -1, .status_fd = -1 };
	s->log.fd = -1;
	pthread_mutex_init(&s->log_lock, NULL);
	s->status = -1;
	s->warn = o->warn;
	s->warn_ctx = o->warn_ctx;
	s->clock_fd = timerfd_create(CLOCK_REALTIME, TFD_CLOEXEC | TFD_NONBLOCK);
	s->state_dir = strdup(bee_state_dir(o->state_dir));
	s->bpffs_opt = o->bpffs ? strdup(o->bpffs) : NULL;
	s->context = calloc(o->ncontext + 1, sizeof(char *));
	if (!s->state_dir || (o->bpffs && !s->bpffs_opt) || !s->context) {
		err = bee_fail(e, BEE_STAGE_LAUNCH, -ENOMEM, "out of memory");
		goto fail;
	}
	for (size_t i = 0; i < o->ncontext; i++) {
		if (!strchr(o->context[i], '=') || o->context[i][0] == '=') {
			err = bee_fail(e, BEE_STAGE_USAGE, -EINVAL, "context '%s' is not NAME=VALUE", o->context[i]);
			goto fail;
		}
		if (!(s->context[s->ncontext++] = strdup(o->context[i]))) {
			err = bee_fail(e, BEE_STAGE_LAUNCH, -ENOMEM, "out of memory");
			goto fail;
		}
	}
	err = open_steps(s, pack_path, o, e);
	if (err)
		goto fail;
	*out = s;
	return 0;
fail:
	bee_session__close(s);
	return err;
}

/* ---- tools ---------------------------------------------------------------------------- */

/* One tool below the session's init: what `run` starts once and what each
 * `exec` into a live session starts (supervisor.c). */
int bee_session_tool_start(struct bee_session *s, const struct bee_exec *x, uint32_t *id, pid_t *pid,
			   struct bee_error *e)
{
	char **envp = NULL;
	struct env_summary es = { 0 };
	int err;
	*id = 0;
	*pid = -1;
	if (!x->argv || !x->argv[0])
		return bee_fail(e, BEE_STAGE_USAGE, -EINVAL, "no command to run");
	if (s->finished)
		return bee_fail(e, BEE_STAGE_SESSION, -ESRCH, "session %s is ending", s->id);
	err = bee_env_build(s->pack, &s->mf, x->env ? x->env : (const char *const *)environ,
			    (const char *const *)s->context, s->ncontext, on_env, &es, &envp);
	env_summary_write(s, &es);
	if (err)
		return bee_fail(e, BEE_STAGE_LAUNCH, err, "environment: %s", strerror(-err));
	if ((err = bee_fault(BEE_STAGE_EXEC)) < 0) {
		bee_fail(e, BEE_STAGE_EXEC, err, "'%s': injected fault", x->argv[0]);
		goto out;
	}
	struct bee_launch l = {
		.argv = x->argv, .envp = envp, .ruleset_fd = s->ruleset_fd,
		.ll_flags = bee_landlock_restrict_flags(s->ll_abi), .user = &s->user, .ll_late = &s->ll_late,
		.stdio = x->stdio, .cwd = x->cwd, .last = x->last,
	};
	struct bee_launched run;
	err = bee_launch(&s->init, &l, &run, e);
	s->commands++;
	/* the pid that restricts itself (Landlock's domain) is the tool's */
	pid_t restricting = run.tool_pid > 0 ? run.tool_pid : run.pid;
	if (s->ka && restricting > 0)
		bee_kaudit_set_pid(s->ka, restricting);
	if (err) {
		/* an exec that Landlock refused is a denial of its own: log it */
		if (s->ka && bee_kaudit_drain(s->ka, &s->log, KAUDIT_DRAIN_MS) < 0)
			bee_warnf(s->warn, s->warn_ctx, "kernel audit: not every record was read");
		goto out;
	}
	if (!s->status_watched) {
		if ((err = epoll_add(s->epfd, s->init.status_fd)) < 0) {
			/* the tool runs but its end could not be seen: end it */
			bee_fail(e, BEE_STAGE_LAUNCH, err, "epoll: %s", strerror(-err));
			bee_session__kill(s, SIGKILL);
			goto out;
		}
		s->status_watched = true;
	}
	*id = run.id;
	*pid = run.tool_pid;
	/* run's one tool: its pid is recorded first (bee_session_spawn_stdio) */
	if (!x->last)
		started(s);
out:
	bee_env_free(envp);
	return err;
}

void bee_session_tool_watch(struct bee_session *s, bee_tool_end_fn fn, void *ctx)
{
	s->on_end = fn;
	s->on_end_ctx = ctx;
}

int bee_session_tool_signal(struct bee_session *s, uint32_t id, int sig)
{
	/* each tool leads its process group (setsid) once it runs; init
	 * names it by id, in the session's pid namespace */
	return bee_init_signal(&s->init, id, sig);
}

void bee_session_stats(const struct bee_session *s, struct bee_session_stats *st)
{
	st->commands = s->commands;
	st->audit_written = s->log.written;
	st->audit_lost = s->log.lost;
}

int bee_session_registry_sync(struct bee_session *s, const char *socket_path, struct bee_error *e)
{
	if (!s->registered)
		return 0;
	if (socket_path)
		snprintf(s->reg.socket, sizeof(s->reg.socket), "%s", socket_path);
	s->reg.commands = s->commands;
	s->reg.audit_written = s->log.written;
	s->reg.audit_lost = s->log.lost;
	return registry_save(s, e);
}

int bee_session__spawn(struct bee_session *s, const char *const argv[], const char *const launcher_env[],
		       struct bee_error *e)
{
	return bee_session_spawn_stdio(s, argv, launcher_env, NULL, e);
}

int bee_session_spawn_stdio(struct bee_session *s, const char *const argv[], const char *const launcher_env[],
			    const int stdio[3], struct bee_error *e)
{
	if (s->spawned)
		return bee_fail(e, BEE_STAGE_LAUNCH, -EBUSY, "session %s has started its tool already", s->id);
	if (!argv || !argv[0])
		return bee_fail(e, BEE_STAGE_USAGE, -EINVAL, "no command to run");
	s->spawned = true;
	/* the session's one tool: init leaves with it */
	struct bee_exec x = { .argv = argv, .env = launcher_env, .stdio = stdio, .last = true };
	pid_t pid;
	int err = bee_session_tool_start(s, &x, &s->tool_id, &pid, e);
	if (err) {
		s->tool_pid = -1;   /* gone: nothing to signal */
		s->ended = true;
		return err;
	}
	s->tool_pid = pid;
	s->reg.tool_pid = s->tool_pid;
	s->reg.commands = s->commands;
	if (registry_save(s, NULL) < 0)
		bee_warnf(s->warn, s->warn_ctx, "registry: cannot record the tool's pid");
	started(s);
	return 0;
}

/* ---- the running session ------------------------------------------------------------ */

int bee_session__fd(const struct bee_session *s)
{
	return s->epfd;
}

/* Reads the tools' ends: the spawned tool's into the session, the others'
 * to on_end (id 0: init ended, taking every tool along). block: until the
 * spawned tool has ended. */
static void reap(struct bee_session *s, bool block)
{
	struct bee_tool_end te;
	int r;
	if (!s->status_watched)
		return;
	while ((r = bee_init_wait(&s->init, block && s->spawned && !s->ended, &te)) > 0) {
		bool mine = r == 2 || (s->tool_id && te.id == s->tool_id);
		if (mine && s->spawned && !s->ended) {
			s->ended = true;
			s->status = te.status;
			s->alone = r == 1 && te.alone;
		}
		if (s->on_end && (r == 2 || te.id != s->tool_id))
			s->on_end(s->on_end_ctx, r == 2 ? 0 : te.id, te.status);
		if (r == 2) {
			epoll_ctl(s->epfd, EPOLL_CTL_DEL, s->init.status_fd, NULL);
			s->status_watched = false;
			break;
		}
	}
}

int bee_session__poll(struct bee_session *s, int timeout_ms)
{
	struct epoll_event evs[8];
	if (s->spawned && s->ended)
		return 1;
	int n = epoll_wait(s->epfd, evs, 8, timeout_ms);
	if (n < 0 && errno != EINTR)
		return -errno;
	for (int i = 0; i < n; i++) {
		if (evs[i].data.fd == s->clock_fd) {
			uint64_t x;
			if (read(s->clock_fd, &x, sizeof(x)) < 0 && errno == ECANCELED)
				clock_arm(s);
		}
	}
	reap(s, false);
	relay(s);
	return s->spawned && s->ended ? 1 : 0;
}

int bee_session__kill(struct bee_session *s, int sig)
{
	if (sig == SIGKILL) {
		if (!s->cgroup_made)
			return 0;
		char f[PATH_MAX + 16];
		snprintf(f, sizeof(f), "%s/cgroup.kill", s->cgroup);
		return bee_write_file(f, "1");
	}
	if (!s->spawned || s->ended || s->tool_pid <= 0)
		return 0;
	/* init forwards these to its tools' process groups; the tool leads its
	 * own (setsid), which a signal reaches from here too */
	static const int via_init[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH };
	for (size_t i = 0; i < sizeof(via_init) / sizeof(via_init[0]); i++)
		if (sig == via_init[i] && syscall(SYS_pidfd_send_signal, s->init.pidfd, sig, NULL, 0) == 0)
			return 0;
	return bee_init_signal(&s->init, s->tool_id, sig);
}

int bee_session__exit_status(const struct bee_session *s)
{
	return s->ended ? s->status : -1;
}

const char *bee_session__id(const struct bee_session *s)
{
	return s->id;
}

const char *bee_session__cgroup(const struct bee_session *s)
{
	return s->cgroup;
}

const char *bee_session__policy(const struct bee_session *s)
{
	return s->mf.name;
}

enum bee_backend bee_session__backend(const struct bee_session *s)
{
	return s->backend;
}

/* ---- the audit log ------------------------------------------------------------------- */

int bee_session__audit_start(struct bee_session *s, const char *path, struct bee_error *e)
{
	int err = bee_audit_open(&s->log, path, e);
	if (err)
		return err;
	if ((err = kaudit_start(s, e)) < 0)
		return err;
	if (s->registered) {
		snprintf(s->reg.audit_log, sizeof(s->reg.audit_log), "%s", s->log.path);
		if ((err = registry_save(s, e)) < 0)
			return err;
	}
	return 0;
}

int bee_session__audit_stop(struct bee_session *s)
{
	if (s->log.fd < 0)
		return 0;
	relay(s);
	int err = bee_audit_close(&s->log);
	if (s->registered) {
		s->reg.audit_log[0] = '\0';
		registry_save(s, NULL);
	}
	return err;
}

const char *bee_session__audit_path(const struct bee_session *s)
{
	return s->log.fd >= 0 ? s->log.path : NULL;
}

/* ---- close ---------------------------------------------------------------------------- */

uint64_t bee_session__end(struct bee_session *s)
{
	if (s->finished)
		return s->log.lost;
	s->finished = true;
	int err;
	/* init leaves at the control socket's EOF: no tool starts any more */
	if (s->init.sock >= 0) {
		close(s->init.sock);
		s->init.sock = -1;
	}
	/* Nothing may outlive the session: the tool and all it started. When
	 * the tool ended with nothing else left, init is on its way out by
	 * itself and records nothing: the last records are read at once and
	 * its end is waited for in bee_session__close, while the programs
	 * are detached. */
	if (!(s->ended && s->alone)) {
		if (s->cgroup_made && (err = bee_cgroup_kill_wait(s->cgroup, KILL_WAIT_MS)) < 0)
			bee_warnf(s->warn, s->warn_ctx, "cgroup '%s': cannot empty it: %s", s->cgroup,
				  strerror(-err));
		if (s->spawned && !s->ended)
			reap(s, true);
		bee_init_reap(&s->init);
	}
	/* every record is in the ring buffer or the audit queue by now */
	s->ended = true;
	relay(s);
	/* no task queries any more; the last connects are named (above) */
	bee_dns_close(s->dns);
	s->dns = NULL;
	if (s->learn) {
		bee_learn_close(s->learn, s->log.fd >= 0 ? &s->log : NULL, s->warn, s->warn_ctx);
		s->learn = NULL;
	}
	if (s->ka) {
		if (s->log.fd >= 0 && bee_kaudit_drain(s->ka, &s->log, KAUDIT_DRAIN_MS) < 0) {
			/* the log says so too: what was not read is lost to it */
			bee_warnf(s->warn, s->warn_ctx, "kernel audit: not every Landlock record was read");
			bee_kaudit_lost(s->ka, &s->log, "unread");
		}
		bee_kaudit_close(s->ka);
	}
	char path[4096];
	snprintf(path, sizeof(path), "%s", s->log.path ? s->log.path : "?");
	if (s->log.lost)
		bee_warnf(s->warn, s->warn_ctx, "audit log '%s': %llu records lost (%s)", path,
			  (unsigned long long)s->log.lost, strerror(-s->log.lost_err));
	if (s->log.fd >= 0 && (err = bee_audit_close(&s->log)) < 0)
		bee_warnf(s->warn, s->warn_ctx, "audit log '%s': %s", path, strerror(-err));
	return s->log.lost;
}

void bee_session__close(struct bee_session *s)
{
	if (!s)
		return;
	int err;
	bee_session__end(s);
	if (s->registered)
		started(s);
	ring_buffer__free(s->rb);
	if (s->ruleset_fd >= 0)
		close(s->ruleset_fd);
	bee_ll_lates_fini(&s->ll_late);
	if (s->cgroup_fd >= 0)
		close(s->cgroup_fd);
	/* init leaves by itself or is killed; its namespaces go with it, the
	 * longest part of an end: what this process holds of the pack and of
	 * init's plans is freed meanwhile */
	bee_mountns_free(s->mountns);
	bee_seccomp_fini(&s->filter);
	bee_user_fini(&s->user);
	if (s->epfd >= 0)
		close(s->epfd);
	if (s->clock_fd >= 0)
		close(s->clock_fd);
	bee_manifest_fini(&s->mf);
	bee_pack__close(s->pack);
	/* no tool is left, init at most, on its way out: the session's
	 * entries and its own copies go meanwhile (a task without them is
	 * denied everything), its ring once init is gone (the next session
	 * to take it reads what is in it) */
	bee_slot_forget(s->slot);
	if (s->pin_dir_made && (err = bee_bpf_unpin_dir(s->reg.bpffs)) < 0)
		bee_warnf(s->warn, s->warn_ctx, "pins '%s': cannot remove them: %s", s->reg.bpffs, strerror(-err));
	bee_init_reap(&s->init);
	/* its mount namespace is gone: the overlays' changes stay on disk for
	 * the vfs commands (a session that changed nothing leaves nothing) */
	bee_vfs_close(s->vfs);
	free(s->overlay_dirs);
	/* no task of the session is left: its ring goes back, then its
	 * cgroup (gc finds the entries of a session by its cgroup) */
	bee_slot_close(s->slot);
	if (s->cgroup_made && (err = bee_cgroup_remove(s->cgroup, KILL_WAIT_MS)) < 0)
		bee_warnf(s->warn, s->warn_ctx, "cgroup '%s': cannot remove it: %s", s->cgroup, strerror(-err));
	bee_cache_close(s->cache);
	if (s->registered) {
		int lk = bee_registry_lock(s->state_dir);
		bee_registry_remove(s->state_dir, s->id);
		bee_registry_unlock(lk);
	}
	bee_registry_entry_fini(&s->reg);
	bee_init_fini(&s->init);
	for (size_t i = 0; i < s->ncontext; i++)
		free(s->context[i]);
	free(s->context);
	free(s->state_dir);
	free(s->bpffs_opt);
	free(s);
}

int bee_enclave__run(const char *pack_path, const char *const argv[], const struct bee_session_opts *o,
		     int *status, struct bee_error *e)
{
	struct bee_session *s;
	int err = bee_session__open(pack_path, o, &s, e);
	*status = -1;
	if (err)
		return err;
	err = bee_session__spawn(s, argv, NULL, e);
	while (!err && (err = bee_session__poll(s, -1)) == 0)
		;
	if (err == 1) {
		err = 0;
		*status = bee_session__exit_status(s);
	}
	bee_session__close(s);
	return err;
}
