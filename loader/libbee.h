/* SPDX-License-Identifier: GPL-2.0-only */
/* libbee.h: bee-load as a library. bee-load (loader/bee-load.c) is a thin
 * command line over exactly this API.
 *
 * The API mirrors what an agent runtime asks of a sandbox:
 *
 *   run a command in an enclave     bee_enclave__run, or step by step:
 *     with injected context          bee_session__open (pack -> cgroup,
 *                                    programs, maps, Landlock plan),
 *                                    bee_session__spawn (the hardened tool),
 *                                    bee_session__poll (audit relay, until
 *                                    the tool ends), bee_session__close
 *   start/stop the audit log,       bee_session__audit_start,
 *     get its path                   bee_session__audit_stop,
 *                                    bee_session__audit_path
 *   query a decision                bee_decision__query
 *   revoke a grant                  bee_sessions__revoke (a live session,
 *                                    by id, from any process)
 *   gates, live sessions, cleanup   bee_check__run, bee_sessions__list,
 *                                    bee_sessions__gc
 *   a session's copy-on-write       bee_vfs__list, bee_vfs__diff,
 *     overlay (--overlay)            bee_vfs__snapshot, bee_vfs__reset,
 *                                    bee_vfs__apply, bee_vfs__disable,
 *                                    bee_vfs__gc
 *
 * Options structs start with their size (sizeof of the caller's struct):
 * a caller built against an older, shorter struct gets zero for the rest;
 * a newer caller's unknown fields must be zero (-EINVAL otherwise). NULL
 * options are all defaults.
 *
 * Conventions: functions return 0 (or a documented non-negative value) or
 * a negative errno; a failure also fills the caller's struct bee_error with
 * the stage that failed and one line that names the subject first and the
 * cause last, e.g.
 *
 *   attach: prog 'bee_file_open': failed to attach to cgroup
 *   '/sys/fs/cgroup/unified/bee-fetcher-1a2b...': Operation not permitted
 *
 * (one line). Nothing here writes to stdout or exits; warnings go to the
 * warn callback of the options, and libbpf's own messages are routed there
 * too while a session loads (libbpf_set_print is process-wide).
 *
 * Ownership: a struct bee_session owns everything it created in the
 * kernel and on disk (session cgroup, BPF objects and their pins under
 * bpffs, registry entry, audit log descriptor) and removes all of it in
 * bee_session__close, on every path. Strings returned by accessors live
 * as long as the session. Result structs that hold allocations have a
 * _fini function. The caller owns everything it passes in; the library
 * copies what it keeps.
 *
 * Privileges: sessions, revoke and gc need root (CAP_BPF, CAP_SYS_ADMIN,
 * CAP_SETPCAP, CAP_AUDIT_CONTROL for the Landlock audit stream).
 */
#ifndef BEE_LIBBEE_H
#define BEE_LIBBEE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define BEE_LOAD_VERSION "0.1.0"
#define BEE_STATE_DIR "/run/bee"        /* default registry and kernel-audit state */

/* Why a launch stopped: the stage, the exit status bee-load gives it, its
 * name in messages, and what it means (README's "bee-load exit status"
 * table is this list). Every stage before EXEC stops the launch: the tool
 * never starts. */
#define BEE_STAGES(X)                                                                            \
	X(OK, 0, "ok", "success: the tool's own status for run, Allow for query")                 \
	X(USAGE, 2, "usage", "the command line is wrong")                                         \
	X(CONFIG, 64, "config", "a configuration file is bad, unreadable or writable by others")   \
	X(GATE, 65, "gate", "the backend asked for cannot enforce here (check's status too)")      \
	X(PACK, 66, "pack", "the pack cannot be read, is malformed, or contradicts itself")        \
	X(REGISTRY, 67, "registry", "the session registry cannot be written")                      \
	X(AUDIT, 68, "audit", "the audit log cannot be opened, or Landlock's denials cannot be followed; " \
	  "run: records were lost and the tool exited 0") \
	X(CGROUP, 69, "cgroup", "the session cgroup cannot be created or joined")                 \
	X(LOAD, 70, "load", "libbpf cannot open or load the pack's BPF object")                   \
	X(MAPS, 71, "maps", "a map cannot be filled from its image or at session start")           \
	X(PIN, 72, "pin", "a map or link cannot be pinned under bpffs")                            \
	X(ATTACH, 73, "attach", "a program cannot be attached to the session cgroup")              \
	X(LANDLOCK, 74, "landlock", "the Landlock plan cannot be built or enforced")               \
	X(LAUNCH, 75, "launch", "the tool's process cannot be created or hardened")                \
	X(REVOKE, 76, "revoke", "a revoke was refused (it would widen, or cannot narrow live)")    \
	X(SESSION, 77, "session", "no such live session")                                          \
	X(NESTING, 78, "nesting", "run inside a session: the pack is not proved a subset of it")   \
	X(USER, 79, "user", "the tool's user cannot be resolved or switched to")                   \
	X(NAMESPACE, 80, "namespace", "the session's pid, mount or cgroup namespace, its private /proc " \
	  "or its read-only mounts cannot be set up")                                              \
	X(SECCOMP, 81, "seccomp", "the session's system call filter cannot be built or loaded")    \
	X(GUARD, 82, "guard", "the global BPF LSM programs that guard bee's objects cannot be loaded or attached") \
	X(SUPERVISOR, 83, "supervisor", "start: the session's supervisor cannot be made, or its socket cannot be " \
	  "created")                                                                               \
	X(VFS, 84, "vfs", "the session's overlay cannot be set up, read, applied or reset (apply: the directory "   \
	  "changed underneath)")                                                                   \
	X(DNS, 85, "dns", "the policy names hosts and the session's DNS stub cannot be set up (no upstream, "  \
	  "its sockets, its maps)")                                                                 \
	X(LEARN, 86, "learn", "learning mode cannot start: inside a session, or the file system cannot be " \
	  "watched (fanotify)")                                                               \
	X(EXEC, 126, "exec", "the command cannot be executed (127: not found)")

enum bee_stage {
#define BEE_STAGE_ENUM(name, status, text, doc) BEE_STAGE_##name,
	BEE_STAGES(BEE_STAGE_ENUM)
#undef BEE_STAGE_ENUM
	BEE_STAGE_COUNT
};

#define BEE_EXIT_NOT_FOUND 127   /* the EXEC stage when the command does not exist */

const char *bee_stage__name(enum bee_stage s);
/* The exit status of a failure in stage s (err: its negative errno, which
 * tells 126 from 127 for EXEC). */
int bee_stage__exit_status(enum bee_stage s, int err);
const char *bee_stage__doc(enum bee_stage s);

#define BEE_ERRLEN 1024
struct bee_error {
	enum bee_stage stage;
	int err;                    /* negative errno */
	char msg[BEE_ERRLEN];       /* "stage: subject: cause", one line */
};

/* ---- gates ---------------------------------------------------------------- */

#define BEE_GATES(X)                                                            \
	X(KERNEL, "kernel")           /* release, 6.0+ for BPF_LSM_CGROUP */    \
	X(LSM, "lsm")                 /* 'bpf' among the active LSMs */         \
	X(BTF, "btf")                 /* /sys/kernel/btf/vmlinux */              \
	X(CGROUP2, "cgroup2")         /* a cgroup v2 mount in mountinfo */       \
	X(BPFFS, "bpffs")             /* a bpf file system to pin under */       \
	X(PRIVILEGES, "privileges")   /* CAP_BPF, CAP_SYS_ADMIN effective */     \
	X(LSM_CGROUP, "lsm_cgroup")   /* a BPF_LSM_CGROUP program really loads */ \
	X(LANDLOCK, "landlock")       /* the Landlock ABI */

enum bee_gate_id {
#define BEE_GATE_ENUM(name, text) BEE_GATE_##name,
	BEE_GATES(BEE_GATE_ENUM)
#undef BEE_GATE_ENUM
	BEE_GATE_COUNT
};

struct bee_gate {
	const char *name;
	bool ok;
	char reason[256];
};

struct bee_check_report {
	size_t sz;                          /* sizeof(struct bee_check_report) */
	struct bee_gate gates[BEE_GATE_COUNT];
	bool bpf_lsm;                       /* the bpf-lsm backend can enforce */
	char bpf_lsm_reason[320];           /* why not: the first gate that fails */
	bool landlock;                      /* the landlock backend can enforce */
	char landlock_reason[320];
	int landlock_abi;                   /* 0: none */
	char cgroup2[4096];                 /* the cgroup v2 mount, "" if none */
	char bpffs[4096];                   /* the bpffs used for pins, "" if none */
};

/* Probes every gate (loads, never attaches, one minimal BPF_LSM_CGROUP
 * program). Always returns 0; the report says what failed. */
int bee_check__run(struct bee_check_report *r);

/* ---- sessions --------------------------------------------------------------- */

#define BEE_BACKENDS(X)                                  \
	X(AUTO, "auto")           /* bpf-lsm when check passes, else landlock_fallback */ \
	X(BPF_LSM, "bpf-lsm")     /* every program, attached per cgroup */     \
	X(LANDLOCK, "landlock")   /* fs and exec by Landlock, [net] by cgroup programs */

enum bee_backend {
#define BEE_BACKEND_ENUM(name, text) BEE_BACKEND_##name,
	BEE_BACKENDS(BEE_BACKEND_ENUM)
#undef BEE_BACKEND_ENUM
};

const char *bee_backend__name(enum bee_backend b);
/* 0 and *out, or -EINVAL for a name that is none of BEE_BACKENDS. */
int bee_backend__parse(const char *name, enum bee_backend *out);

typedef void (*bee_warn_fn)(void *ctx, const char *msg);

struct bee_session_opts {
	size_t sz;                      /* sizeof(struct bee_session_opts) */
	enum bee_backend backend;
	/* Injected context: "NAME=VALUE" entries set in the tool's
	 * environment after the policy's [env] set values (they win). */
	const char *const *context;
	size_t ncontext;
	const char *audit_log;          /* start the audit log at open (NULL: not yet) */
	bool audit_detail;              /* add pid, comm, policy, ... after the five keys */
	const char *bpffs;              /* NULL: the bpffs found in /proc/self/mountinfo */
	const char *state_dir;          /* NULL: BEE_STATE_DIR */
	bee_warn_fn warn;               /* NULL: warnings are dropped */
	void *warn_ctx;
	/* bpf-lsm: run without the Landlock ruleset that restricts link,
	 * rename, unlink, mkdir and truncate to the write rules' trees (by
	 * default a kernel without Landlock refuses the launch, stage
	 * LANDLOCK); docs/bee-load.md "Landlock hardening under bpf-lsm" */
	bool no_landlock_hardening;
	/* auto: when the bpf-lsm backend cannot enforce here, use the
	 * landlock backend, said once through warn (false: refuse, stage
	 * GATE; bee-load sets it unless its configuration says fallback =
	 * false) */
	bool landlock_fallback;
	/* The tool's user: "USER", "UID", "USER:GROUP" or "UID:GID". NULL:
	 * when the caller is root, SUDO_UID/SUDO_GID when set (with that
	 * user's groups), else 65534:65534 (nobody/nogroup); "root" (uid 0)
	 * keeps the caller's ids and says what that costs through warn. A
	 * caller that is not root keeps its own ids (and may name only
	 * itself). Stage USER when it cannot be resolved or switched to. */
	const char *user;
	/* landlock: the bounds of the walk of the real tree at start
	 * (entries visited, milliseconds; 0: the defaults of ll_walk.h), and
	 * whether to leave out the one line that sums up its narrowings */
	uint64_t walk_entries, walk_ms;
	bool quiet;
	/* Copy-on-write overlays: "DIR", "DIR:disk", "DIR:memory" or
	 * "DIR:memory=SIZE" (SIZE a number with K, M or G; default 64M). In
	 * the session's mount namespace DIR is an overlayfs over the real DIR
	 * whose writes land in the session's upper layer (on disk under the
	 * state directory, or a tmpfs of SIZE): docs/bee-load.md "The
	 * session's copy-on-write overlay". Stage USAGE for a bad spec,
	 * NAMESPACE or VFS when it cannot be set up. */
	const char *const *overlays;
	size_t noverlays;
	/* A policy with host names in [net] connect: the resolver the session's
	 * DNS stub asks, "ADDR[:PORT]" (NULL: /etc/resolv.conf's first
	 * nameserver), and the seconds an answered address stays admitted at
	 * least (0: 30); docs/bee-load.md "Host names and the session's DNS" */
	const char *dns_upstream;
	unsigned dns_ttl_floor;
	/* Learning mode (docs/writing-policies.md). Nothing is
	 * denied; every access the policy would refuse is written to this
	 * log (opened as audit_log is, which it replaces, with the detail
	 * keys) with the rule that would decide. bpf-lsm: the hooks in
	 * complain mode; landlock: no Landlock, fanotify permission events
	 * for the session's cgroup; on both the cgroup network programs in
	 * complain mode. Refused (stage LEARN) inside a session. */
	const char *learn;
	/* landlock: the rights this kernel's Landlock ABI cannot restrict
	 * that the launch may go without ("truncate", "ioctl-dev", "scope":
	 * bee-load run --allow-weaker); any other is refused, stage LANDLOCK,
	 * naming it (docs/bee-load.md, "Rights outside the host's ABI") */
	const char *const *weaker;
	size_t nweaker;
};

struct bee_session;

/* Verifies the pack; when the caller runs inside a registered session (its
 * cgroup is the session's or below it), proves the pack a subset of every
 * enclosing session's policy or refuses with stage NESTING (nothing is
 * created; docs/bee-load.md "Nesting"); picks the backend, cleans stale sessions, registers
 * the session, opens the audit log (when asked), creates the session
 * cgroup, loads the BPF object, fills and pins its maps, attaches its
 * programs and prepares the Landlock ruleset; the session's init (pid 1
 * of its pid namespace) is made here too, a child of the calling thread
 * that dies with it (PR_SET_PDEATHSIG): the thread that opens a session
 * must outlive it. On failure everything done so far is undone and *out
 * is NULL. */
int bee_session__open(const char *pack_path, const struct bee_session_opts *opts,
		      struct bee_session **out, struct bee_error *e);

/* Starts argv (argv[0] looked up in the tool's PATH when it has no '/')
 * inside the session: below the session's init (pid 1 of a new pid
 * namespace, in new mount and cgroup namespaces, created directly in the
 * session cgroup), hardened (new session, the options' user, umask 077,
 * descriptors above 2 closed, no_new_privs, Landlock for that backend,
 * every capability dropped, the system call filter), with
 * the environment of launcher_env (NULL: environ) reduced to the policy's
 * [env] allow, plus [env] set, plus the injected context. Returns 0 once
 * execve succeeded, or a failure of stage LAUNCH or EXEC (the tool never
 * ran; its process is gone). Once per session. */
int bee_session__spawn(struct bee_session *s, const char *const argv[],
		       const char *const launcher_env[], struct bee_error *e);

/* A descriptor that is readable when bee_session__poll has work: put it in
 * the caller's own poll loop (next to a signalfd, say). */
int bee_session__fd(const struct bee_session *s);

/* Relays pending audit events and reaps the tool, waiting up to
 * timeout_ms (-1: until something happens). Returns 0 while the tool
 * runs, 1 once it has ended (bee_session__exit_status is then valid),
 * or a negative errno. */
int bee_session__poll(struct bee_session *s, int timeout_ms);

/* Sends sig to the tool's process group (through the session's init,
 * which forwards SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 and
 * SIGWINCH); SIGKILL kills everything in the session cgroup (cgroup.kill). */
int bee_session__kill(struct bee_session *s, int sig);

/* The tool's status as a shell gives it: its exit code, or 128 + the
 * signal that killed it. -1 before it ended. */
int bee_session__exit_status(const struct bee_session *s);

const char *bee_session__id(const struct bee_session *s);
const char *bee_session__cgroup(const struct bee_session *s);
const char *bee_session__policy(const struct bee_session *s);
enum bee_backend bee_session__backend(const struct bee_session *s);

/* startAuditLog: appends JSON lines to path (created 0600 if missing)
 * from now on; stops any log already running. Returns 0 or fails with
 * stage AUDIT. */
int bee_session__audit_start(struct bee_session *s, const char *path, struct bee_error *e);
/* stopAuditLog: flushes (fsync) and closes the log. 0 when none ran. */
int bee_session__audit_stop(struct bee_session *s);
/* getAuditLogPath: the running log's path, or NULL. */
const char *bee_session__audit_path(const struct bee_session *s);

/* The first half of close: kills what is left in the cgroup, drains the
 * audit streams into the log and closes it. Returns the number of audit
 * records that could not be written during the session (a full disk, a
 * failing device), 0 when none; a count above 0 has been said through the
 * warn callback with its cause. Idempotent; close calls it when the caller
 * has not. */
uint64_t bee_session__end(struct bee_session *s);

/* Ends the session: bee_session__end, then detaches and unpins everything,
 * removes the cgroup and the registry entry. NULL is fine. */
void bee_session__close(struct bee_session *s);

/* createEnclave: open, spawn, poll until the tool ends, close. *status is
 * the tool's status (as bee_session__exit_status). Signals are not
 * handled here: a caller that wants SIGINT/SIGTERM forwarded drives the
 * session itself, as bee-load does. */
int bee_enclave__run(const char *pack_path, const char *const argv[],
		     const struct bee_session_opts *opts, int *status, struct bee_error *e);

/* ---- sessions that outlive a command ------------------------------------------------ */

/* Opens a session of pack_path as bee_session__open does, in a supervisor
 * process of its own (forked twice, a new session, stdio on /dev/null,
 * every other descriptor closed) that keeps it: its cgroup, programs,
 * Landlock ruleset, init and audit relay. Returns 0 once the session is
 * ready, with its id in sid; otherwise the failure of the stage that
 * refused (as bee_session__open's, nothing left behind), or stage
 * SUPERVISOR. The options' warnings until then come through opts->warn;
 * the supervisor's later ones are dropped. Forks: call it from a process
 * whose other threads hold no lock the child would need (docs/bee-load.md
 * "Sessions that outlive a command"). */
int bee_session_start(const char *pack_path, const struct bee_session_opts *opts, char sid[32],
		      struct bee_error *e);

/* Runs argv in live session sid (started by bee_session_start) as
 * bee_session__spawn runs the tool of a session: below the session's
 * init, hardened the same, with the environment env (NULL: environ)
 * reduced to the policy's [env] allow plus [env] set plus the session's
 * context, in the caller's working directory, with fds[0..2] (NULL: 0, 1,
 * 2) as its stdin, stdout and stderr (passed, never copied). Waits for its
 * end: *status is its status as a shell gives it (128+N for a signal).
 * While it runs, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 and
 * SIGWINCH are blocked in the calling thread and forwarded to the tool's
 * process group. Only opts->sz and opts->state_dir are read. Fails with
 * the stage that refused the tool (as bee_session__spawn: LAUNCH, EXEC
 * and the hardening's stages; *status stays -1), or stage SESSION for an
 * unknown id, a session of run, a dead supervisor or a stale socket. */
int bee_session_exec(const char *sid, const char *const argv[], const char *const env[], const int fds[3],
		     const struct bee_session_opts *opts, int *status, struct bee_error *e);

/* Ends live session sid: kills what remains in it, flushes its audit and
 * tears everything down (cgroup, pins, registry record, socket), then
 * returns 0; stage AUDIT when records were lost during the session
 * (everything is torn down all the same); stage SESSION as
 * bee_session_exec. Only opts->sz and opts->state_dir are read. */
int bee_session_stop(const char *sid, const struct bee_session_opts *opts, struct bee_error *e);

/* ---- query -------------------------------------------------------------------- */

struct bee_decision {
	bool allow;
	bool too_long;              /* a path over the kernel's bound: denied */
	bool pinned;                /* allowed only as the pinned file */
	bool injected;              /* env: the policy sets it */
	unsigned rules[16];         /* the rules that decided, ascending */
	size_t nrules;
	char *text;                 /* beec query's explanation (malloc'ed) */
};

/* Answers KIND ACTION RESOURCE (fs read|write PATH, exec execute PATH,
 * env read NAME, net connect|bind ADDR:PORT[/PROTO]) as the pack decides
 * it: the pack's source is compiled again with its defines and must give
 * the pack's images byte for byte, then walked as beec query walks it.
 * Fails with stage USAGE for a malformed question, PACK otherwise. */
int bee_decision__query(const char *pack_path, const char *kind, const char *action,
			const char *resource, struct bee_decision *d, struct bee_error *e);
void bee_decision__fini(struct bee_decision *d);

/* ---- live sessions ---------------------------------------------------------------- */

struct bee_session_info {
	char id[32];
	pid_t pid;                  /* bee-load's */
	pid_t tool_pid;             /* 0 before the spawn */
	bool live;                  /* bee-load still runs */
	char policy[80];
	char backend[16];
	char started[32];           /* UTC, ISO 8601 */
	char cgroup[4096];
	char bpffs[4096];
	char audit_log[4096];       /* "" when none */
	unsigned nrevoked;
	/* from 1.1 */
	char digest[40];            /* the pack's digest (hex) */
	bool supervised;            /* a session of start (exec and stop reach it), not of run */
	unsigned long long commands;        /* tools started in it */
	unsigned long long audit_written;   /* audit records written (as its supervisor last saved) */
	unsigned long long audit_lost;      /* audit records lost */
};

/* Every registered session (live or stale) of state_dir (NULL: default),
 * sorted by start time. *out is malloc'ed; free() it. */
int bee_sessions__list(const char *state_dir, struct bee_session_info **out, size_t *n,
		       struct bee_error *e);

/* Removes every session whose bee-load is gone: takes its entries out of
 * its pack's maps, unpins its own copies, kills what is left in its
 * cgroup, removes the cgroup and its registry entry; then collects the
 * packs' loads unused for BEE_PACK_IDLE_S (bee_packs__gc). Returns how
 * many sessions it cleaned. */
int bee_sessions__gc(const char *state_dir, bee_warn_fn warn, void *warn_ctx, struct bee_error *e);

/* A pack is loaded once for all its sessions (docs/bee-load.md "Sessions
 * of one pack"): its programs verified and attached to a cgroup of its
 * own, whose children the sessions are. Collects each load that no live
 * session holds and that has been unused for idle_s seconds (0: every
 * unused one): detached, unpinned, its cgroup removed. Returns how many. */
int bee_packs__gc(const char *state_dir, unsigned idle_s, bee_warn_fn warn, void *warn_ctx, struct bee_error *e);

struct bee_revoke_opts {
	size_t sz;                  /* sizeof(struct bee_revoke_opts) */
	const char *state_dir;      /* NULL: default */
	bee_warn_fn warn;
	void *warn_ctx;
};

struct bee_revoke_result {
	unsigned rule;              /* the revoked rule's index */
	char text[4200];            /* e.g. "net.connect 127.0.0.1/32:8080/tcp" */
	bool exact;                 /* the session now decides exactly as the
				     * policy without the rule; false: some
				     * other grants narrowed too (see note) */
	char note[1024];
};

/* Removes grant RULE (its index, or its text as `beec show` lists it)
 * from live session id, through its pinned maps, and appends a record of
 * it to the session's audit log. Only narrows: a deny rule, an env rule,
 * or (under the landlock backend) an fs or exec rule is refused with stage
 * REVOKE; an unknown session fails with stage SESSION. */
int bee_sessions__revoke(const char *id, const char *rule, const struct bee_revoke_opts *opts,
			 struct bee_revoke_result *r, struct bee_error *e);

/* ---- the landlock backend's plan ------------------------------------------------------- */

struct beec_ll_opts;                /* libbeec.h (ll_walk.h) */
struct beec_ll_plan;
struct beec_ll_rule;

/* The plan the landlock backend makes of pack_path on this host now: the
 * walk of the real tree with the pack's automata, each rule to fn (may be
 * NULL), its figures and narrowings in *plan (release it with
 * beec_ll_plan__fini, also on failure) and the running Landlock ABI in
 * *abi (0: none). Stage PACK for a bad pack, LANDLOCK for a bound of the
 * walk passed (the message names the rule). */
int bee_landlock__plan(const char *pack_path, const struct beec_ll_opts *o,
		       int (*fn)(void *ctx, const struct beec_ll_rule *r, int dirfd, const char *name), void *ctx,
		       struct beec_ll_plan *plan, int *abi, struct bee_error *e);
/* ---- vfs: a session's copy-on-write overlays ----------------------------- */

/* The changes of a session's overlays against the real directories as they
 * are now: what `vfs ls` prints and `vfs apply` writes. */
enum bee_vfs_kind { BEE_VFS_ADDED, BEE_VFS_MODIFIED, BEE_VFS_DELETED };

struct bee_vfs_change {
	char *path;                 /* absolute: the overlay's DIR joined with rel */
	const char *rel;            /* below DIR, into path */
	unsigned overlay;           /* which --overlay, from 0 */
	enum bee_vfs_kind kind;
	char type;                  /* 'f' file, 'd' directory, 'l' symlink, 'o' other (now; deleted: what was) */
	char was_type;              /* modified: the real one's type */
	uint64_t size, was_size;    /* bytes (a symlink: its target's length) */
	unsigned mode, was_mode;    /* permission bits (07777) */
	bool content;               /* modified: the bytes (or target) differ, not only the mode or owner */
};

struct bee_vfs_opts {
	size_t sz;                  /* sizeof(struct bee_vfs_opts) */
	const char *state_dir;      /* NULL: BEE_STATE_DIR */
	/* diff, apply: only the changes at or below these absolute paths
	 * (NULL: all); a path that names no change is refused (stage USAGE) */
	const char *const *paths;
	size_t npaths;
	int out_fd;                 /* diff: where the text goes (0: stdout's fd 1) */
	bee_warn_fn warn;
	void *warn_ctx;
};

/* Every change of session sid's overlays, sorted by path; *out is
 * malloc'ed (bee_vfs__changes_free). Works for a live session and for one
 * that ended or whose bee-load died, until vfs reset. Stage SESSION when
 * the session has no overlay, VFS when it cannot be read. An audit record
 * (action Read, resource "bee:vfs:ls:SID"). */
int bee_vfs__list(const char *sid, const struct bee_vfs_opts *opts, struct bee_vfs_change **out, size_t *n,
		  struct bee_error *e);
void bee_vfs__changes_free(struct bee_vfs_change *v, size_t n);
/* A unified diff of each change to opts->out_fd (diff(1) -u for the
 * bytes; one line for a binary file, a mode change, a directory or a
 * deletion of one). */
int bee_vfs__diff(const char *sid, const struct bee_vfs_opts *opts, struct bee_error *e);
/* The changes as a tar file (pax): each added or modified file, directory
 * and symlink with its mode, owner and time; each deletion as an empty
 * ".wh.NAME" beside it (the OCI layer convention); paths below the
 * archive's root are the absolute paths without their first '/'. */
int bee_vfs__snapshot(const char *sid, const char *tar_path, const struct bee_vfs_opts *opts, struct bee_error *e);
/* Drops every change: a live session's tools see the real directories
 * from their next path lookup on (a new overlay over a fresh upper layer
 * is mounted over the old one inside the session's mount namespace); an
 * ended session's overlays are removed from the state directory. */
int bee_vfs__reset(const char *sid, const struct bee_vfs_opts *opts, struct bee_error *e);
/* Writes the changes (opts->paths: those at or below them) to the real
 * directories, refusing with stage VFS and changing nothing when a
 * directory changed underneath: a path to write or its directory whose
 * change time is later than the session's start (or the last apply).
 * Returns how many changes it wrote. After a whole apply the session's
 * changes are dropped as by reset (the tools see the same tree). */
int bee_vfs__apply(const char *sid, const struct bee_vfs_opts *opts, struct bee_error *e);
/* A live session's overlays taken away: later writes go to the real
 * directories, as far as the policy and its mounts allow them. The
 * changes made until then stay for ls, diff, apply and reset. */
int bee_vfs__disable(const char *sid, const struct bee_vfs_opts *opts, struct bee_error *e);
/* Removes the overlays of sessions that are not live and whose changes are
 * older than max_age_s seconds (their last change of state: start, apply,
 * reset). Returns how many. */
int bee_vfs__gc(const char *state_dir, unsigned long long max_age_s, bee_warn_fn warn, void *warn_ctx,
		struct bee_error *e);

#endif
