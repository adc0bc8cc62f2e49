/* SPDX-License-Identifier: GPL-2.0-only */
/* internal.h: what the modules of libbee share; not part of the API.
 *
 *   util.c        errors, stage and backend tables, fault injection, small I/O
 *   manifest.c    the pack verified and its manifest as C structs
 *   sysinfo.c     mountinfo (cgroup v2, bpffs), the caller's cgroup, process identity
 *   bpffs.c       a bpf file system of bee-load's own when none is mounted
 *   check.c       the gates of `bee-load check`
 *   cgroup.c      the session cgroup: create, kill, remove
 *   bpf_load.c    libbpf: open the pack's ELF, load, fill maps, pin, attach, detach
 *   cache.c       a pack loaded once for all its sessions: its cgroup, pins, locks,
 *                 each session's entries, a revoke's own copies, collection
 *   ll.c          the Landlock backend: ruleset from the manifest's plan
 *   launch.c      the process tree: clone3 into the cgroup and new namespaces, the
 *                 session's init, the hardened tool, environment, exec
 *   user.c        the tool's user: --user, SUDO_UID or nobody, resolved before the clone
 *   seccomp.c     the system call filter (libseccomp), built before the clone
 *   audit_log.c   the JSON lines: formatting, time, ring-buffer events
 *   kaudit.c      Landlock's denials from the kernel audit stream
 *   registry.c    /run/bee: session records, kernel-audit holds, list, gc
 *   nesting.c     a session inside a session: the pack proved a subset first
 *   session.c     the session pipeline (bee_session__*, bee_enclave__run), a tool per exec
 *   supervisor.c  sessions that outlive a command: bee_session_start/_exec/_stop,
 *                 the supervisor and its socket
 *   revoke.c      bee_sessions__revoke (the narrowing: libbeec.h, narrow.h)
 *   decide.c      bee_decision__query
 *   learn.c       learning mode: fanotify's opens of the session, what the policy would deny
 */
#ifndef BEE_LOADER_INTERNAL_H
#define BEE_LOADER_INTERNAL_H

#include "bee_hosts.h"
#include "bee_names.h"
#include "libbee.h"
#include "manifest.h"
#include "pack.h"

#include <jansson.h>
#include <sys/socket.h>
#include <limits.h>
#include <linux/filter.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* ---- util.c ------------------------------------------------------------------ */

/* Fills e (may be NULL) with stage st, err and "stage: " + the message;
 * returns err (a negative errno). */
int bee_fail(struct bee_error *e, enum bee_stage st, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void bee_warnf(bee_warn_fn warn, void *ctx, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* An options struct as this library knows it: the caller's first
 * min(its sz, size) bytes, the rest zero (an older caller's struct is
 * shorter; a newer one's unknown tail must be zero). -EINVAL otherwise. */
int bee_opts_copy(void *dst, size_t size, const void *src);

/* Test builds (-DBEE_FAULT_INJECTION) fail the stage named by the
 * environment variable BEE_FAULT with -EIO where the stage starts; other
 * builds never do. */
#ifdef BEE_FAULT_INJECTION
int bee_fault(enum bee_stage st);
#else
static inline int bee_fault(enum bee_stage st)
{
	(void)st;
	return 0;
}
#endif

/* Whole-file helpers: 0 or a negative errno. */
int bee_write_file(const char *path, const char *text);          /* existing file, one write */
int bee_read_file(const char *path, char **out, size_t *len);    /* malloc'ed, NUL-terminated */
/* o as one line (taking it) with up to BEE_SEND_FDS_MAX descriptors (SCM_RIGHTS): 0 or -errno */
int bee_json_line_send(int fd, json_t *o, const int *fds, size_t nfds);
/* One sendmsg of buf[0..len) with fds (at most BEE_SEND_FDS_MAX) as
 * SCM_RIGHTS, again on EINTR: the bytes sent, or -errno. */
#define BEE_SEND_FDS_MAX 8
ssize_t bee_send_fds(int fd, const void *buf, size_t len, const int *fds, size_t nfds);
/* Writes text to path atomically (a temporary beside it, then rename),
 * mode 0600. Not fsync'ed: what it records does not outlive a reboot. */
int bee_write_atomic(const char *path, const char *text, size_t len);
/* mkdir -p with mode for each created level. */
int bee_mkdirs(const char *path, mode_t mode);
/* Creates dir (0700) and takes an exclusive flock on dir/lock; returns the
 * descriptor that holds it, or a negative errno. */
int bee_lock_dir(const char *dir);

/* now as "2026-09-09T06:00:00.123Z" (UTC, milliseconds); buf >= 25 bytes */
void bee_utc_iso(int64_t realtime_ns, char *buf, size_t size);
int64_t bee_clock_ns(int clock);

/* 16 random lowercase hex digits. */
int bee_session_id_new(char out[17]);

/* The descriptors of mh's SCM_RIGHTS messages appended to fds[have..max)
 * (those past max closed, *extra set when extra is not NULL); returns the
 * new count. Only system calls and memcpy: init uses it. */
struct msghdr;
size_t bee_scm_fds(struct msghdr *mh, int *fds, size_t have, size_t max, bool *extra);
ssize_t bee_recv_fds(int fd, char *buf, size_t len, int flags, int *fds, size_t *nfds, bool *extra);

/* ---- manifest.c ----------------------------------------------------------------- */

/* Opens and verifies a pack: the reader's checks, then the manifest's
 * shape, then that every image the manifest names is present and well
 * formed (automata, LPM entries) and sized as its map. Stage PACK. */
int bee_pack_load(const char *path, struct bee_pack **pack, struct bee_manifest *m,
		  struct bee_error *e);
/* The same, the manifest read from its image in state_dir when one of the
 * pack's digest is there (*thawed true; a launch then parses no JSON: no
 * image is written but from a pack that passed every check, and the
 * digest is proved over the bytes each time). A session proves state_dir
 * root's alone (bee_state_dir_secure) before it makes anything. */
int bee_pack_load_at(const char *path, const char *state_dir, struct bee_pack **pack, struct bee_manifest *m,
		     bool *thawed, struct bee_error *e);
/* Writes m's image for the pack's digest in state_dir/packs (made): 0 or
 * a negative errno. An image is read and written under a key of the
 * pack's digest and the build id of the code that reads it (bee-load's,
 * or libbee.so's): no image outlives its writer's build. */
int bee_manifest_image_save(const char *state_dir, const struct bee_pack *p, const struct bee_manifest *m);
/* STATE/packs/DIGEST-KEY.manifest, the image of the pack of that digest
 * under that key: the images of two builds (bee-load and a program on
 * libbee.so) stand side by side. 0 or -ENAMETOOLONG. */
int bee_manifest_image_path(char *buf, size_t size, const char *state_dir, const uint8_t digest[BEE_PACK_DIGEST_LEN],
			    const uint8_t key[BEE_PACK_DIGEST_LEN]);
/* That key: XXH3-128 of the digest and the build id (len bytes, 1 to 64;
 * -ENOENT for none). */
int bee_manifest_image_key(const uint8_t digest[BEE_PACK_DIGEST_LEN], const uint8_t *build_id, size_t len,
			   uint8_t key[BEE_PACK_DIGEST_LEN]);
/* The image section of a map (bee_map_name), or NULL. */
const struct bee_pack_section_info *bee_pack_image(const struct bee_pack *p, const char *name);

/* ---- sysinfo.c ----------------------------------------------------------------- */

/* The first cgroup2 mount (its mount point and the cgroup path of its
 * root), or -ENOENT. */
int bee_cgroup2_mount(char *mnt, size_t mntsize, char *root, size_t rootsize);
/* The system's bpffs: /sys/fs/bpf when it is one; -ENOENT otherwise
 * (never another bpf mount: see sysinfo.c). */
int bee_bpffs_find(char *out, size_t size);
/* 1 when path is the mount point of a bpf file system, else 0. */
int bee_is_bpffs(const char *path);
/* Calls fn with each mount point (unescaped) of fstype (NULL: every
 * mount) in /proc/self/mountinfo order; stops at fn's first non-zero,
 * which it returns. */
int bee_mountinfo_each(const char *fstype, int (*fn)(const char *mnt, const char *fstype, void *ctx), void *ctx);
/* The devices whose files the mount table shows at more than one place:
 * mounted twice or more, or from a directory below their root (a bind
 * mount). *out (malloc'ed), *n of them; 0 or a negative errno. */
int bee_mount_devs_aliased(dev_t **out, size_t *n);

/* ---- bpffs.c ---------------------------------------------------------------------- */

/* The bpffs to pin under (bee_bpffs_find), or else bee's own at
 * STATE/bpffs, mounted now when it is not yet and left mounted (said
 * through warn); fails with stage GATE. */
int bee_bpffs_private(const char *state_dir, char *out, size_t size, bee_warn_fn warn, void *warn_ctx,
		      struct bee_error *e);
/* The caller's cgroup v2 directory: the cgroup2 mount joined with the
 * "0::" line of /proc/self/cgroup. */
int bee_cgroup_self(char *out, size_t size);
/* The same for process pid (0: the caller). */
int bee_cgroup_of(pid_t pid, char *out, size_t size);
/* The start time of pid (field 22 of /proc/PID/stat), 0 when gone or a
 * zombie. */
unsigned long long bee_pid_starttime(pid_t pid);
/* 1 when pid runs and started at starttime. */
int bee_pid_alive(pid_t pid, unsigned long long starttime);

/* ---- cgroup.c --------------------------------------------------------------------- */

/* Creates the cgroup path (mode, less the umask; never a chmod later: a
 * bee-load nested in a session may not change metadata there) and opens
 * it O_DIRECTORY. */
int bee_cgroup_create(const char *path, mode_t mode, int *fd, struct bee_error *e);
/* Kills every process in the cgroup (cgroup.kill) and waits up to
 * timeout_ms until it is empty. 0, -ETIMEDOUT, or a negative errno. */
int bee_cgroup_kill_wait(const char *path, int timeout_ms);
/* rmdir, retrying while the kernel still counts a dying task (EBUSY); the
 * empty cgroups left below it (a nested session's) go first. */
int bee_cgroup_remove(const char *path, int timeout_ms);
/* 1 when the cgroup has processes, 0 when not, negative errno. */
int bee_cgroup_populated(const char *path);
/* A cgroup's depth below the cgroup2 root (which is 0). */
int bee_cgroup_level(int cgroup_fd, uint32_t *level);

/* ---- ll.c (Landlock) ---------------------------------------------------------------- */

int bee_landlock_abi(void);    /* 0 when Landlock is not available */
/* The rights the landlock backend restricts from some ABI on, which an
 * older ABI leaves open (refer is not one: below ABI 2 Landlock denies
 * every move and link to another directory, narrower than any policy). */
struct bee_ll_weaker {
	int abi;                    /* the first ABI that restricts it */
	const char *name;           /* --allow-weaker NAME */
	const char *open;           /* what stays open below that ABI */
};
extern const struct bee_ll_weaker bee_ll_weaker[];
extern const size_t bee_ll_nweaker;
/* 0 when every right outside ABI abi is among the names (--allow-weaker),
 * else stage LANDLOCK naming each one that is not and how to run anyway. */
int bee_landlock_weaker_check(int abi, const char *const *names, size_t n, struct bee_error *e);
/* The entry of bee_ll_weaker named name, or NULL. */
const struct bee_ll_weaker *bee_landlock_weaker_find(const char *name);
/* Builds the ruleset of the walk of the real tree with the pack's
 * automata (compiler/ll_walk.h) for the running kernel's ABI. Stage
 * LANDLOCK; a bound of the walk passed names the rule. */
int bee_landlock_ruleset(const struct bee_pack *p, const struct bee_manifest *m, int abi, int *fd,
			 bee_warn_fn warn, void *warn_ctx, struct bee_error *e);
/* The walk alone, each rule to fn (bee-load plan). */
struct beec_ll_opts;                /* libbeec.h (ll_walk.h) */
struct beec_ll_plan;
struct beec_ll_rule;
int bee_landlock_walk(const struct bee_pack *p, const struct bee_manifest *m, const struct beec_ll_opts *o,
		      int (*fn)(void *ctx, const struct beec_ll_rule *r, int dirfd, const char *name), void *ctx,
		      struct beec_ll_plan *plan, struct bee_error *e);

/* Rules on a file system the session's init mounts anew (proc, cgroup2:
 * mountns.c) would bind the host's inodes, which the tool never sees.
 * bee_landlock_ruleset leaves them out and lists them here; init adds them
 * to the ruleset once it has mounted its own (bee_landlock_late_add). */
struct bee_ll_late {
	char *path;
	unsigned rule;
	bool beneath;
	uint32_t perms;                     /* the rule's BEE_PERM_* */
	uint64_t handled;                   /* the ruleset's handled rights */
	uint64_t access;                    /* non-zero: exactly these rights (bpf-lsm's hardening) */
};

struct bee_ll_lates {
	struct bee_ll_late *v;
	size_t n;
	/* the session's --overlay dirs (borrowed): a rule at or below one is
	 * late too, bound to the overlay's inodes, and kept on the real ones
	 * for after `vfs disable` (Landlock skips a mount point's own inode) */
	const char *const *overlaid;
	size_t noverlaid;
};

/* Like bee_landlock_ruleset, with the late rules in *late (NULL: add them
 * now, as bee_landlock_ruleset does), the walk's bounds wo (NULL: the
 * defaults) and its figures and narrowings in *plan (NULL: not kept;
 * else the caller releases it with beec_ll_plan__fini). */
int bee_landlock_ruleset_late(const struct bee_pack *p, const struct bee_manifest *m, int abi, int *fd,
			      struct bee_ll_lates *late, const struct beec_ll_opts *wo, struct beec_ll_plan *plan,
			      bee_warn_fn warn, void *warn_ctx, struct bee_error *e);
void bee_ll_lates_fini(struct bee_ll_lates *late);
/* In init, after its mounts: adds each late rule whose path exists (a
 * missing one grants nothing, as at launch; a literal file rule that names
 * a directory is refused). Only system calls. 0 or a negative errno with
 * *what naming the call. */
int bee_landlock_late_add(int ruleset_fd, const struct bee_ll_lates *late, const char **what);
/* The landlock_restrict_self flags of this ABI: log the tool's denials
 * after exec (ABI 7+). */
unsigned bee_landlock_restrict_flags(int abi);

/* bpf-lsm hardening (ll.c): a ruleset handling only the namespace-changing
 * rights (REMOVE_*, MAKE_*, REFER from ABI 2, TRUNCATE from ABI 3),
 * granted beneath the literal directory prefix of each fs write rule. */
struct beec_prefix;           /* libbeec.h: beec_glob__write_prefixes */
/* Calls fn for each literal prefix (beec_glob__write_prefixes) of each
 * [fs] write rule of the manifest (the Landlock hardening and the mount
 * namespace both start there). A
 * rule without one fails in stage st; fn returns 0 to go on or a negative
 * errno (having filled e) to stop. */
typedef int (*bee_write_prefix_fn)(void *ctx, const struct bee_mf_rule *r, const struct beec_prefix *px);
int bee_write_prefixes_each(const struct bee_manifest *m, enum bee_stage st, bee_write_prefix_fn fn, void *ctx,
			    struct bee_error *e);
uint64_t bee_landlock_hardening_handled(int abi);
int bee_landlock_hardening(const struct bee_manifest *m, int abi, int *fd, bee_warn_fn warn,
			   void *warn_ctx, struct bee_error *e);
/* The session's step: with opt_out nothing (a warning); else Landlock
 * must be enabled (stage LANDLOCK otherwise) and *fd, *abi are set. */
int bee_landlock_harden_session(const struct bee_manifest *m, bool opt_out, int *abi, int *fd,
				bee_warn_fn warn, void *warn_ctx, struct bee_error *e);
/* The same with late rules: a prefix at or below one of late->overlaid
 * is bound again inside the session (NULL late: as above). */
int bee_landlock_harden_session_late(const struct bee_manifest *m, bool opt_out, int *abi, int *fd,
				     struct bee_ll_lates *late, bee_warn_fn warn, void *warn_ctx,
				     struct bee_error *e);

/* ---- audit_log.c ------------------------------------------------------------------ */

struct bee_audit_log {
	int fd;                     /* -1: no log running */
	char *path;
	bool detail;
	const char *policy;         /* the manifest's name */
	int64_t boot_to_real;       /* CLOCK_REALTIME - CLOCK_BOOTTIME, ns */
	uint64_t lost;              /* records that could not be written (disk full, ...) */
	uint64_t written;           /* records written since it was opened */
	int lost_err;               /* the first such failure, a negative errno */
	const char *session;        /* the session's id, for --audit-detail; NULL: none */
	struct bee_audit_rep *reps; /* denials relayed once, their repeats counted */
	size_t nreps;
};

/* One record as a line: ts, kind, action, resource, decision, then, with
 * detail, pid, comm, policy and source (each only when given). */
struct bee_audit_line {
	int64_t realtime_ns;
	const char *kind, *action, *decision;
	const char *resource;
	size_t resource_len;
	/* detail */
	long pid;                   /* < 0: none */
	const char *comm;           /* NULL: none */
	const char *source;         /* "bpf", "landlock", "launcher", "revoke", "loader" */
	const char *reason;         /* NULL: none */
	long long rule;             /* < 0: none */
	uint64_t count;             /* > 0: "count" after the five keys (repeats of a denial) */
	const char *session;        /* detail: the session's id (bee_audit_write fills it from the log) */
};

/* The line's JSON text with its '\n' (malloc'ed) and its length. Bytes of
 * the resource that are not UTF-8 become U+FFFD; controls are escaped. */
char *bee_audit_format(const struct bee_audit_line *l, const char *policy, bool detail,
		       size_t *len);
/* Appends one line with one write(2): 0 or a negative errno. A record
 * that cannot be written is counted in log->lost (the first cause in
 * lost_err) and its error returned: loss is never silent, the session
 * reports the count when it ends. */
int bee_audit_write(struct bee_audit_log *log, const struct bee_audit_line *l);
/* bee_audit_write for a relay: the first record lost is said through warn.
 * A denial identical in kind, action, resource and decision to one relayed
 * before in this log is not written again but counted; the counts are
 * written when the log closes, one record each with "count" (at most
 * BEE_AUDIT_REPS distinct denials are followed; later ones are written
 * each time). */
#define BEE_AUDIT_REPS 4096
void bee_audit_relay(struct bee_audit_log *log, const struct bee_audit_line *l, bee_warn_fn warn,
		     void *warn_ctx);
/* Opens path for appending (O_APPEND|O_CREAT, 0600; bee_audit_fd_open),
 * closing any log already open. */
int bee_audit_open(struct bee_audit_log *log, const char *path, struct bee_error *e);
int bee_audit_close(struct bee_audit_log *log);   /* the repeats' counts, fsync, close */
/* An audit log's descriptor for appending (created 0600 when create): a
 * symbolic link is refused (O_NOFOLLOW), and so is anything but a regular
 * file of one link or a character device, owned by root or the invoking
 * user (uid, euid, SUDO_UID). Returns the fd, or a negative errno with the reason in why. */
int bee_audit_fd_open(const char *path, bool create, char *why, size_t whysize);
/* Samples CLOCK_REALTIME - CLOCK_BOOTTIME (the pair with the smallest gap). */
int64_t bee_boot_to_real(void);

struct bee_audit_event;
/* A ring-buffer record (struct bee_audit_event + path) as a line; returns
 * -EINVAL for a record that is malformed. The resource text is written to
 * res (size >= 4200 bytes). */
int bee_audit_event_line(const void *data, size_t size, int64_t boot_to_real,
			 struct bee_audit_line *l, char *res, size_t ressize, char *comm);
/* Formats an endpoint: "1.2.3.4:80", "[::1]:80". */
void bee_audit_endpoint(int family, const uint8_t *addr, unsigned port, char *buf, size_t size);

/* ---- kaudit.c ----------------------------------------------------------------------- */

struct bee_kaudit;
struct bee_kaudit_hold;

/* Makes sure the kernel's audit is on while the session needs it (turning
 * it on when it is off, and remembering that bee did), and subscribes to
 * its read-only multicast group. Stage AUDIT. */
int bee_kaudit_open(const char *id, struct bee_kaudit **out, bee_warn_fn warn, void *ctx,
		    struct bee_error *e);
int bee_kaudit_fd(const struct bee_kaudit *k);
/* A pid that calls landlock_restrict_self (each tool of the session): its
 * domain is the session's. Kept for the session's life (a domain is
 * named at its first denial, which may come after its creator ended). */
void bee_kaudit_set_pid(struct bee_kaudit *k, pid_t pid);
/* Reads what is pending and writes the session's Landlock denials to log
 * (when log->fd >= 0). */
int bee_kaudit_read(struct bee_kaudit *k, struct bee_audit_log *log);
/* Waits until every record queued before this call has been read (a
 * marker message through the same queue), up to timeout_ms. */
int bee_kaudit_drain(struct bee_kaudit *k, struct bee_audit_log *log, int timeout_ms);
/* Writes "bee:kernel-audit-lost:WHAT" to log: records the session may
 * have had and did not get. */
void bee_kaudit_lost(struct bee_kaudit *k, struct bee_audit_log *log, const char *what);
/* One record of the stream (its netlink type, its text "audit(S.MS:N):
 * BODY"), as bee_kaudit_read takes each; and a reader of none (no socket,
 * no hold on audit) that the tests feed with it. */
void bee_kaudit_record(struct bee_kaudit *k, int type, const char *text, size_t len, struct bee_audit_log *log);
struct bee_kaudit *bee_kaudit_detached(void);
/* Unsubscribes and drops this session's hold (turning audit off again
 * when bee turned it on and no live session holds it). */
void bee_kaudit_close(struct bee_kaudit *k);
/* The same for a dead session's hold (gc). */
void bee_kaudit_release(const char *id);
/* The kernel's audit switch and backlog limit: read (0 or -errno), and
 * set both. bee sets them only when it turns audit on (the backlog to
 * 8192 at least) and off (the limit from before) */
int bee_kaudit_status(uint32_t *enabled, uint32_t *backlog_limit);
int bee_kaudit_set(uint32_t enabled, uint32_t backlog_limit);

/* Landlock's audit text parsed: one LANDLOCK_ACCESS record. */
struct bee_kaudit_access {
	char domain[32];
	char blockers[256];
	char path[4200];
	bool has_path;
};
int bee_kaudit_parse_access(const char *text, struct bee_kaudit_access *a);
/* kind and action of a Landlock blocker list ("fs.read_file,fs.write_file") */
void bee_kaudit_blockers(const char *blockers, const char **kind, const char **action);

/* ---- launch.c ---------------------------------------------------------------------- */

/* The tool's environment: launcher variables the env automaton allows,
 * then the policy's set values, then the context; decisions reported
 * through cb (name, allowed). envp is NULL-terminated and malloc'ed
 * (free with bee_env_free). */
typedef void (*bee_env_decision_fn)(void *ctx, const char *name, size_t len, bool allow);
int bee_env_build(const struct bee_pack *p, const struct bee_manifest *m,
		  const char *const launcher[], const char *const context[], size_t ncontext,
		  bee_env_decision_fn cb, void *ctx, char ***envp);
void bee_env_free(char **envp);

/* ---- mountns.c ---------------------------------------------------------------------- */

/* The session's mount namespace, planned in bee-load before the clone and
 * entered by the session's first process (pid 1 of its pid namespace, in
 * a mount namespace of its own): mounts made private, a /proc of the new
 * pid namespace, the cgroup file system of the session's cgroup namespace
 * read-only, bee's own objects (bpffs, the state directory) covered, and
 * the tree read-only but where the policy grants writes. The plan owns
 * every string and buffer the child needs: entering only makes system
 * calls. */
struct bee_mountns;

int bee_mountns_plan(const struct bee_manifest *m, const char *state_dir, struct bee_mountns **out,
		     struct bee_error *e);
/* In init, on bee_sys alone (sys.h). Returns 0, or a negative errno with
 * *what naming the call (for the launch's report, stage NAMESPACE). */
int bee_mountns_enter(const struct bee_mountns *ns, const char **what);
/* A new mount of type (opts: key, value pairs of strings, NULL-terminated)
 * with the mount attributes attr (MOUNT_ATTR_*), moved onto target: the new
 * mount API on bee_sys alone (sys.h), for init. 0 or -errno. */
int bee_mount_new(const char *type, const char *target, const char *const *opts, unsigned attr);
/* The plan copied whole into buf (bee_mountns_size bytes, 16-byte
 * aligned), every pointer of the copy into buf: init's own, which
 * bee_mountns_free does not touch. */
size_t bee_mountns_size(const struct bee_mountns *ns);
const struct bee_mountns *bee_mountns_copy(const struct bee_mountns *ns, void *buf);
/* The session's copy-on-write overlays added to the plan (vfs.h): each
 * DIR mounted read-write when a write grant's place is at, above or below
 * it (recorded in v). A DIR bee covers or in /proc is refused (USAGE). */
struct bee_vfs;
int bee_mountns_overlays(struct bee_mountns *ns, struct bee_vfs *v, struct bee_error *e);
void bee_mountns_free(struct bee_mountns *ns);
/* Learning (--learn): nothing of the tree turns read-only, so that what
 * the policy would refuse is seen instead of failing with EROFS. */
void bee_mountns_learn(struct bee_mountns *ns);
/* The plan as text, one step a line ("cover PATH", "cgroup2 PATH",
 * "write PATH", "proc ro|rw", "tree ro|rw"), for tests and messages;
 * -ENOSPC when it does not fit. */
int bee_mountns_describe(const struct bee_mountns *ns, char *buf, size_t size);
/* The places the session keeps writable (its write prefixes, /proc when a
 * write grant reaches into it, its writable overlays): *out, *n of them,
 * an array the caller frees whose strings are the plan's. 0; 1 when
 * nothing of the tree turns read-only (a write grant of "/", learning),
 * with *out NULL; -ENOMEM. */
int bee_mountns_writable(const struct bee_mountns *ns, const char ***out, size_t *n);
/* The walk's opts.ro for a session of mount plan ns under Landlock ABI
 * abi: truncate granted outside its writable places (from ABI 3, and not
 * when nothing turns read-only). wo->rw is the caller's to free. */
struct beec_ll_opts;
int bee_landlock_ro_opts(const struct bee_mountns *ns, int abi, struct beec_ll_opts *wo, struct bee_error *e);

/* ---- user.c -------------------------------------------------------------------------- */

/* The tool's user, resolved before the clone (user.c says the defaults). */
struct bee_user {
	bool change;                /* false: the tool keeps bee-load's ids */
	uid_t uid;
	gid_t gid;
	gid_t *groups;              /* the supplementary groups (setgroups) */
	size_t ngroups;
	char name[LOGIN_NAME_MAX + 1];  /* for messages */
};

/* spec: USER|UID[:GID] or NULL (SUDO_UID, else nobody). --user root (any
 * spec of uid 0) keeps bee-load's ids and says what it costs through warn.
 * Stage USER. */
int bee_user_resolve(const char *spec, struct bee_user *u, bee_warn_fn warn, void *warn_ctx,
		     struct bee_error *e);
void bee_user_fini(struct bee_user *u);

/* ---- seccomp.c ----------------------------------------------------------------------- */

/* The session's filter as classic BPF, for prctl(PR_SET_SECCOMP): every
 * group of bee_syscalls.h not in allowed (bits) refused, and the socket
 * families but AF_UNIX, AF_INET, AF_INET6. Stage SECCOMP. */
struct bee_seccomp {
	struct sock_fprog prog;     /* filter malloc'ed */
};
int bee_seccomp_build(uint32_t allowed, struct bee_seccomp *out, struct bee_error *e);
/* bee_seccomp_build's filter, read from state_dir when a session of this
 * build made it before (a file per key of what the filter is made of:
 * the groups let through, bee's refusals, the architecture, libseccomp's
 * version), else built and kept there. Stage SECCOMP. */
int bee_seccomp_get(const char *state_dir, uint32_t allowed, struct bee_seccomp *out, struct bee_error *e);
void bee_seccomp_fini(struct bee_seccomp *f);

/* ---- launch.c (the process tree) ---------------------------------------------------- */

struct bee_launch {
	const char *const *argv;
	char *const *envp;
	int ruleset_fd;             /* -1: no Landlock */
	unsigned ll_flags;
	const struct bee_user *user;         /* NULL or !change: bee-load's ids */
	const struct bee_ll_lates *ll_late;  /* NULL: none; added by the tool to ruleset_fd */
	const int *stdio;           /* [3]: the tool's stdin, stdout, stderr; NULL: init's (bee-load's) */
	const char *cwd;            /* the tool's working directory, in the session's mount
				     * namespace; NULL: init's (bee-load's at open) */
	bool last;                  /* the session ends with this tool: init leaves when it
				     * has ended with nothing else left */
};

/* The session's init: pid 1 of the session's pid namespace, bee-load's
 * child in the session cgroup, made when the session opens
 * (bee_init_start) so that its namespaces, its mounts and the tool's
 * system call filter are built while bee-load loads the BPF programs.
 * bee_launch later hands it the tool's command through the arena, memory
 * the two share. */
struct bee_init {
	pid_t pid;                  /* in bee-load's pid namespace; -1: none (or reaped) */
	int pidfd;
	int sock;                   /* bee-load's end of the report socket */
	int status_fd;              /* init writes each tool's end here (struct tool_end) */
	void *arena;                /* shared with init: the plan of the tool being launched */
	size_t arena_size;
	void *mem;                  /* init's own (launch.c: struct init_mem, its stacks) */
	size_t mem_size;
	bool ready;                 /* init said READY (before the first launch) */
	uint32_t next_id;           /* the last tool's id */
	bool gone;                  /* the status pipe's EOF was read: init ended */
	bool fault_namespace;       /* test builds: BEE_FAULT=namespace (init_ready) */
	int gone_status;            /* init's status then, as a shell gives it */
};

/* A tool's end as init reports it. */
struct bee_tool_end {
	uint32_t id;                /* bee_launched.id */
	int status;                 /* as a shell gives it (128+N for a signal) */
	bool alone;                 /* nothing else ran in the session any more */
};

struct bee_init_spec {
	int cgroup_fd;              /* init is cloned into it */
	const struct bee_mountns *mountns;   /* NULL: the launcher's mount namespace */
	const struct sock_fprog *filter;     /* the tool's system call filter */
};

/* Clones init; it sets up on its own meanwhile. A failure there is seen
 * by bee_launch. Stage NAMESPACE or LAUNCH. */
int bee_init_start(const struct bee_init_spec *spec, struct bee_init *in, struct bee_error *e);
/* Kills and reaps init if it still runs (it may run on memory this
 * unmaps), then closes bee-load's ends and unmaps the arena and init's
 * memory. */
void bee_init_fini(struct bee_init *in);

/* What bee_launch started: the tool below the session's init. */
struct bee_launched {
	pid_t pid;                  /* init, in bee-load's pid namespace */
	pid_t tool_pid;             /* the tool, in bee-load's pid namespace (0: unknown) */
	uint32_t id;                /* the tool's id in init's reports */
};

/* Waits for init to be ready (the first time), hands it the tool's
 * command; the tool hardens and execs argv. Can be called again for the
 * next tool while others run (init serves many; one launch at a time).
 * Returns 0 once exec succeeded (in->status_fd later gives the tool's end,
 * with out->id); otherwise a failure of stage NAMESPACE, USER, LANDLOCK,
 * SECCOMP, LAUNCH or EXEC: the tool is gone (init reaps it; its end on
 * the status pipe is to be ignored), and out->tool_pid (or out->pid) is
 * the pid it had, which its audit records name. A failure of init itself
 * (not ready, gone) kills and reaps it (in->pid is -1). */
int bee_launch(struct bee_init *in, const struct bee_launch *l, struct bee_launched *out, struct bee_error *e);
/* Has init send sig to tool id's process group (from inside the pid
 * namespace: a pid reused outside is never hit). */
int bee_init_signal(struct bee_init *in, uint32_t id, int sig);
/* The next tool's end: 1 with *out, 2 once init has ended (out->status
 * its status; every tool not reported ended with it), 0 while nothing
 * ended and block is false, or -errno. */
int bee_init_wait(struct bee_init *in, bool block, struct bee_tool_end *out);
/* Ends init: closes the control socket (init leaves at its EOF, and the
 * kernel kills what remains of its pid namespace) and waits for it. */
void bee_init_reap(struct bee_init *in);

/* ---- registry.c -------------------------------------------------------------------- */

struct bee_registry_entry {
	char id[32];
	pid_t pid;
	unsigned long long starttime;
	pid_t tool_pid;
	char policy[80];
	char backend[16];
	char digest[40];
	char started[32];
	char cgroup[4096];
	char bpffs[4096];           /* the session's pin folder (a revoke's own copies) */
	char cache[4096];           /* the pin folder of its pack's load (cache.c) */
	char audit_log[4096];
	char pack[4096];            /* the session's copy of the pack */
	bool audit_detail;          /* the log's lines carry the detail keys */
	unsigned *revoked;
	size_t nrevoked;
	char socket[4096];          /* the supervisor's socket ("": a session of run) */
	unsigned long long commands;        /* tools started */
	unsigned long long audit_written;   /* audit records written, as last saved */
	unsigned long long audit_lost;      /* and lost */
};

const char *bee_state_dir(const char *opt);
/* Creates the state directory 0700 when missing; refuses (stage REGISTRY,
 * -EPERM) one that is a symbolic link, owned by another user or writable
 * by group or others, and makes one that others may read 0700. */
int bee_state_dir_secure(const char *state_dir, struct bee_error *e);
/* The resource of the record gc appends to a dead session's audit log. */
#define BEE_AUDIT_LAUNCHER_LOST "bee:audit-lost:launcher-died"
/* Exclusive lock of the registry (flock on STATE/lock). Returns the fd. */
int bee_registry_lock(const char *state_dir);
void bee_registry_unlock(int fd);
int bee_registry_write(const char *state_dir, const struct bee_registry_entry *r);
int bee_registry_read(const char *state_dir, const char *id, struct bee_registry_entry *r);
void bee_registry_entry_fini(struct bee_registry_entry *r);
int bee_registry_remove(const char *state_dir, const char *id);
char *bee_registry_pack_path(const char *state_dir, const char *id);
/* Every id with a record, malloc'ed array of malloc'ed strings. */
int bee_registry_ids(const char *state_dir, char ***ids, size_t *n);
/* Every NAME of a file NAME.json in dir (none when dir is missing). */
int bee_dir_json_names(const char *dir, char ***names, size_t *n);
/* Removes what a session left: links detached, pins and folder removed,
 * cgroup killed and removed, kernel-audit hold released, record removed. */
int bee_registry_clean(const char *state_dir, const struct bee_registry_entry *r, bee_warn_fn warn,
		       void *ctx);

/* ---- session.c (what the supervisor drives) ------------------------------------------ */

/* One tool to start in a session: run's one, or an exec's. */
struct bee_exec {
	const char *const *argv;
	const char *const *env;     /* the caller's environment, reduced by [env]; NULL: environ */
	const int *stdio;           /* [3]: the tool's stdin, stdout, stderr; NULL: bee-load's */
	const char *cwd;            /* the tool's working directory; NULL: bee-load's at open */
	bool last;                  /* the session ends with it (bee_launch's last) */
};
/* Starts a tool in the session, as bee_session__spawn does, any number of
 * times and while others run. 0 with its id (in on_end's reports) and pid
 * (bee-load's pid namespace) once execve succeeded; otherwise bee_session__spawn's
 * failures (the tool is gone, the session lives on). */
int bee_session_tool_start(struct bee_session *s, const struct bee_exec *x, uint32_t *id, pid_t *pid,
			   struct bee_error *e);
/* Called from bee_session__poll with each tool's end (status as a shell
 * gives it) but bee_session__spawn's; id 0: init ended and every tool
 * not reported ended with it. Ids of tools whose start failed come too. */
typedef void (*bee_tool_end_fn)(void *ctx, uint32_t id, int status);
void bee_session_tool_watch(struct bee_session *s, bee_tool_end_fn fn, void *ctx);
/* bee_session__spawn with the tool's stdin, stdout and stderr (run's
 * pty, pty.c); NULL: bee-load's. */
int bee_session_spawn_stdio(struct bee_session *s, const char *const argv[], const char *const launcher_env[],
			    const int stdio[3], struct bee_error *e);
/* sig to a running tool's process group (the tool's own pid if it has
 * none yet), through init. */
int bee_session_tool_signal(struct bee_session *s, uint32_t id, int sig);
struct bee_session_stats {
	uint64_t commands, audit_written, audit_lost;
};
void bee_session_stats(const struct bee_session *s, struct bee_session_stats *st);
/* Saves the counters (and the socket, when not NULL) in the session's
 * registry record. Stage REGISTRY. */
int bee_session_registry_sync(struct bee_session *s, const char *socket_path, struct bee_error *e);

/* ---- supervisor.c ---------------------------------------------------------------------- */

/* The supervisor's socket of session id: STATE/sessions/ID.sock. */
void bee_supervisor_socket_path(const char *state_dir, const char *id, char *buf, size_t size);
/* A connection to the live supervisor of sid, checked both ways (the
 * socket's peer is the pid its record names, root). */
int bee_session_connect(const char *state_dir, const char *sid, int *out, struct bee_error *e);
/* exec and stop over a connection of bee_session_connect's (or one the
 * session service handed over, serve.c); they take fd. */
int bee_session_exec_fd(int fd, const char *sid, const char *const argv[], const char *const env[],
			const int use[3], int *status, struct bee_error *e);
int bee_session_stop_fd(int fd, const char *sid, struct bee_error *e);

/* ---- bpf_load.c --------------------------------------------------------------------- */

struct bee_bpf;

struct bee_bpf_opts {
	const struct bee_pack *pack;
	const struct bee_manifest *m;
	bool lsm;                   /* load and attach the lsm_cgroup programs */
	int cgroup_fd;              /* the pack's cgroup */
	const char *cgroup;         /* for messages */
	const char *pin_dir;        /* the pack's folder under bpffs */
	uint32_t session_level;     /* the sessions' cgroup depth (bee_session_level) */
	uint32_t sessions;          /* entries of each per-session map */
	bee_warn_fn warn;
	void *warn_ctx;
};

/* load, fill the images, pin, attach, and under bpf-lsm the global
 * programs: stages LOAD, MAPS, PIN, ATTACH, GUARD. */
int bee_bpf_open(const struct bee_bpf_opts *o, struct bee_bpf **out, struct bee_error *e);
/* Lets go of a loaded object whose pins keep it: nothing is detached. */
void bee_bpf_release(struct bee_bpf *b);
/* Detaches, unpins, removes the pin folder, closes. NULL is fine. */
void bee_bpf_close(struct bee_bpf *b);
/* Removes a pin folder: detaches each pinned link. */
int bee_bpf_unpin_dir(const char *pin_dir);
/* The sum of a per-CPU u64 counter at key (bee_lost). */
int bee_bpf_percpu_sum(int map_fd, const void *key, uint64_t *sum);
/* A pin folder, mode 0, with maps/ (and for a pack images/ and links/).
 * Stage PIN. */
int bee_pin_folder_make(const char *dir, bool pack, struct bee_error *e);
/* A map of the manifest's shape (a session's ring buffer or pins, an
 * image). Stage MAPS. */
int bee_map_create_shape(const struct bee_mf_map *mm, struct bee_error *e);
/* An image map filled from its pack section. Stage MAPS. */
int bee_image_fill(int fd, const struct bee_mf_map *mm, const struct bee_pack_section_info *sec,
		   struct bee_error *e);
/* bee_sb from /proc/self/mountinfo, over what it held. Stage GUARD. */
int bee_sb_refresh(int fd, bee_warn_fn warn, void *warn_ctx, struct bee_error *e);
/* Pin paths inside a pin folder. */
#define BEE_PIN_MAPS "maps"
#define BEE_PIN_IMAGES "images"
#define BEE_PIN_LINKS "links"
#define BEE_PIN_RINGS "rings"

/* ---- cache.c ------------------------------------------------------------------------- */

/* Sessions one load of a pack serves at once (each per-session map's
 * entries); the next session of the pack fails in stage MAPS, naming it. */
#define BEE_PACK_SESSIONS 1024
/* A load no session uses is collected after this long (bee_sessions__gc). */
#define BEE_PACK_IDLE_S 600

struct bee_cache;
struct bee_slot;

struct bee_cache_opts {
	const struct bee_pack *pack;
	const struct bee_manifest *m;
	bool lsm;
	const char *state_dir;
	const char *bpffs;
	const char *parent;         /* the cgroup the pack's cgroup is made in */
	bee_warn_fn warn;
	void *warn_ctx;
};

/* The pack's load for this backend and parent cgroup, made now (*cold)
 * when there is none, with this session's reference on it. Stages
 * REGISTRY, CGROUP, and those of bee_bpf_open; LOAD and ATTACH when warm. */
int bee_cache_open(const struct bee_cache_opts *o, struct bee_cache **out, bool *cold, struct bee_error *e);
const char *bee_cache_cgroup(const struct bee_cache *c);   /* the sessions' parent */
const char *bee_cache_dir(const struct bee_cache *c);      /* its pins */
const char *bee_cache_pack(const struct bee_cache *c);     /* its copy of the pack's bytes */
/* Drops the reference (the load stays, for the next session). NULL is fine. */
void bee_cache_close(struct bee_cache *c);
/* The session of cgroup_fd (a child of the pack's cgroup, no task in it
 * yet) in every per-session map, its bee_state.flags set to flags
 * (BEE_STATE_LEARN: complain mode): stages MAPS and, under bpf-lsm, GUARD. */
int bee_slot_open(struct bee_cache *c, int cgroup_fd, const struct bee_manifest *m, uint32_t flags,
		  bee_warn_fn warn, void *warn_ctx, struct bee_slot **out, struct bee_error *e);
uint64_t bee_slot_key(const struct bee_slot *sl);
int bee_slot_audit_fd(const struct bee_slot *sl);          /* the session's ring buffer */
int bee_slot_lost(const struct bee_slot *sl, uint64_t *sum);
/* The session's entries out of the maps, its ring kept (a task of the
 * session still dying finds no entry: it is denied, and writes nowhere).
 * NULL, and a second call, are fine. */
void bee_slot_forget(struct bee_slot *sl);
/* The same, then its ring back to the pool (no task of the session may be
 * left: the next session to take the ring reads what is in it). NULL is
 * fine. */
void bee_slot_close(struct bee_slot *sl);
/* The same for a dead session, by the load's pins (gc). */
void bee_cache_forget(const char *cache_dir, uint64_t sess);
/* The map a live session decides with for id: bee_state's and bee_lost's
 * keyed map itself; for an image or the pins, the session's own copy
 * (pinned in session_dir, made from what it has now and put in its slot
 * the first time). Stages SESSION, REVOKE. */
int bee_session_map(const char *cache_dir, const char *session_dir, enum bee_map_id id, uint64_t sess,
		    struct bee_error *e);

/* The same, and when the session has no copy of its own yet, one with room
 * for extra more entries than the one it copies (dns.c's admissions). */
int bee_session_map_sized(const char *cache_dir, const char *session_dir, enum bee_map_id id, uint64_t sess,
			  uint32_t extra, struct bee_error *e);

/* ---- dns.c: the session's DNS stub ------------------------------------------------------ */

#define BEE_DNS_MAX_ADMITTED 4096   /* admissions (address, name rule) at once, per session */
#define BEE_DNS_TTL_FLOOR 30        /* seconds an admission lasts at least (--dns-ttl-floor) */
#define BEE_DNS_MAX_CHAIN 16        /* CNAME links followed from the asked name */
#define BEE_DNS_MAX_ADDRS 64        /* addresses taken from one answer */

struct bee_dns_addr {
	uint8_t family;             /* 4 or 6 */
	uint8_t addr[16];           /* network order; IPv4 in addr[0..3] */
	uint32_t ttl;               /* the record's, at most the chain's */
};

/* What the stub reads of a DNS message (ldns parses it). */
struct bee_dns_answer {
	uint16_t id, qtype;
	bool response, truncated;
	uint8_t rcode;
	char qname[BEE_HOST_NAME_MAX + 2];   /* canonical: lower case, no final dot */
	unsigned chain;                      /* CNAME links followed */
	struct bee_dns_addr addrs[BEE_DNS_MAX_ADDRS];   /* A/AAAA of the chain's names */
	unsigned naddrs;
};

/* 0 and *a, or -EINVAL for a message that is not one question's (or
 * when ldns cannot be opened). */
int bee_dns_answer_parse(const uint8_t *msg, size_t len, struct bee_dns_answer *a);
/* ldns, opened once (dlopen) unless linked in (BEE_LDNS_LINKED): 0, or
 * -ENOENT and why. */
int bee_dns_msg_open(char *why, size_t whysize);
/* "ADDR[:PORT]" (IPv6 in brackets; the port defaults to 53): 0 or -EINVAL. */
int bee_dns_upstream_parse(const char *text, struct sockaddr_storage *ss, socklen_t *len);

/* A query's record: host asked, allowed (a name of the policy) or not, why. */
typedef void (*bee_dns_audit_fn)(void *ctx, const char *host, bool allow, const char *reason);

struct bee_dns_spec {
	const struct bee_pack *pack;        /* outlives the stub */
	const char *cache_dir;              /* the pack's load's pins */
	const char *session_dir;            /* the session's pin folder */
	uint64_t sess;                      /* its key in the maps */
	const char *upstream;               /* NULL: /etc/resolv.conf's first nameserver */
	unsigned ttl_floor_s;               /* 0: BEE_DNS_TTL_FLOOR */
	bee_dns_audit_fn audit;             /* called from the stub's thread */
	void *audit_ctx;
	bee_warn_fn warn;
	void *warn_ctx;
};

struct bee_dns;
/* When the pack names hosts: the session's own net maps, the stub's
 * sockets and thread, and the stub's address in the session's bee_state
 * (last: from then on the programs redirect). *out is NULL for a pack
 * without names. Stage DNS. */
int bee_dns_open(const struct bee_dns_spec *sp, struct bee_dns **out, struct bee_error *e);
/* Stops the thread and closes everything. NULL is fine. */
void bee_dns_close(struct bee_dns *d);
/* The host an entry of provenance prov was admitted for (an audit
 * record's detail): 0, or -ENOENT when prov is no admission. */
int bee_dns_host(struct bee_dns *d, uint32_t prov, char *buf, size_t len);
uint16_t bee_dns_port(const struct bee_dns *d);        /* on 127.0.0.1, host order */
const char *bee_dns_upstream(const struct bee_dns *d);
/* ---- learn.c ------------------------------------------------------------------------- */

struct bee_learn;
/* Learning for the session of cgroup (its path; no task in it yet): the
 * pack's policy compiled again to answer each access; watch_fs (landlock):
 * fanotify permission events on every local file system, a listener
 * thread that allows each at once and keeps the session's. Stage LEARN. */
int bee_learn_open(const struct bee_pack *p, const struct bee_manifest *m, const char *cgroup, bool watch_fs,
		   bee_warn_fn warn, void *warn_ctx, struct bee_learn **out, struct bee_error *e);
int bee_learn_fd(const struct bee_learn *l);         /* readable: accesses queued */
unsigned bee_learn_watched(const struct bee_learn *l);   /* file systems marked */
/* One record per distinct access the policy would deny, to log. */
void bee_learn_drain(struct bee_learn *l, struct bee_audit_log *log, bee_warn_fn warn, void *warn_ctx);
/* Stops the listener (every mark goes with its descriptor), drains into
 * log (may be NULL) and frees. NULL is fine. */
void bee_learn_close(struct bee_learn *l, struct bee_audit_log *log, bee_warn_fn warn, void *warn_ctx);

/* ---- decide.c ------------------------------------------------------------------------ */

/* The pack's source compiled again with its defines (parse, build, lower)
 * and proved to give every one of the pack's images byte for byte.
 * Stage PACK. pol is released with beec_policy__fini. */
struct beec_policy;
int bee_policy_rebuild(const struct bee_pack *p, const struct bee_manifest *m, struct beec_policy *pol,
		       struct bee_error *e);

/* ---- nesting.c ----------------------------------------------------------------------- */

/* When this process runs inside registered sessions (its cgroup, self,
 * from bee_cgroup_self, is theirs or below; the registry of state_dir and
 * the default one), proves the pack (verified by bee_pack_load) a subset
 * of each, innermost first, as it grants now (revoked rules left out). 0
 * when not nested (or self is NULL: no cgroup v2 node) or proved;
 * otherwise stage NESTING, naming the session and the first
 * counterexample. Creates nothing. */
int bee_nesting_check(const struct bee_pack *pack, const struct bee_manifest *m, const char *state_dir,
		      const char *self, bee_warn_fn warn, void *ctx, struct bee_error *e);
/* The same for a process in cgroup self (a path below the cgroup v2 root,
 * as /proc/PID/cgroup gives it): the session service's client (serve.c). */
int bee_nesting_check_at(const struct bee_pack *pack, const struct bee_manifest *m, const char *state_dir,
			 const char *self, bee_warn_fn warn, void *ctx, struct bee_error *e);
/* The same for the pack at pack_path. */
int bee_nesting_check_file_at(const char *pack_path, const char *state_dir, const char *self, bee_warn_fn warn,
			      void *ctx, struct bee_error *e);

#endif
