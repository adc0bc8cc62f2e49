/* SPDX-License-Identifier: GPL-2.0-only */
/* ll.c: the Landlock backend's ruleset, made at session start by the
 * compiler library's walk of the real tree with the pack's automata
 * (compiler/ll_walk.h says what it grants where, and what it narrows).
 *
 * Rights. The ruleset handles every file-system right the running ABI
 * knows, so anything not granted is denied. A plan rule's rights become:
 *
 *   read            READ_FILE (of the file, or of every file beneath)
 *   list            READ_DIR (the directory and every one beneath)
 *   write           WRITE_FILE, TRUNCATE (ABI 3), IOCTL_DEV (ABI 5: ioctls
 *                   on the devices it may write, e.g. /dev/tty), and
 *                   beneath a directory MAKE_REG, MAKE_DIR, MAKE_SYM,
 *                   MAKE_SOCK, MAKE_FIFO, REMOVE_FILE, REMOVE_DIR,
 *                   REFER (ABI 2)
 *   exec            EXECUTE
 *
 * TRUNCATE and IOCTL_DEV come with write and nothing else: truncating
 * changes a file, and a device's ioctls change it too (TIOCSTI types
 * into a terminal, block devices are reconfigured), whatever mode the
 * device was opened in.
 *
 * MAKE_CHAR and MAKE_BLOCK are handled and never granted (and the tool
 * has no CAP_MKNOD). From ABI 6 the ruleset also scopes abstract UNIX
 * sockets and signals to the session's own domain: the tool can neither
 * signal nor connect to the abstract socket of a process outside it
 * (bee-load, the user's other processes). bpf-lsm's hardening ruleset
 * below sets the same scopes. Network rights are
 * not handled: [net] is the cgroup programs' in this backend too.
 *
 * Each rule is bound to the inode the walk opened (O_PATH, never through
 * a symlink). Rules on a file system the session's init mounts anew
 * (proc, cgroup2) are added by init, on its own mounts (late rules).
 */
#include "internal.h"
#include "sys.h"

#include "bee_names.h"
#include "libbeec.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/landlock.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Newer than the installed UAPI header (Debian 12: 6.1). */
#define LL_FS_TRUNCATE (1ULL << 14)       /* ABI 3 */
#define LL_FS_IOCTL_DEV (1ULL << 15)      /* ABI 5 */
#define LL_SCOPE_ABSTRACT_UNIX (1ULL << 0) /* ABI 6 */
#define LL_SCOPE_SIGNAL (1ULL << 1)        /* ABI 6 */
#define LL_RESTRICT_LOG_NEW_EXEC_ON (1U << 1)   /* ABI 7 */
#define LL_RULE_PATH_BENEATH 1

/* landlock_ruleset_attr as of ABI 6; the size passed says which fields. */
struct ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
	uint64_t scoped;
};

struct ll_path_beneath {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

#define LL_FS_ABI1                                                                            \
	(LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_FILE | \
	 LANDLOCK_ACCESS_FS_READ_DIR | LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE | \
	 LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |   \
	 LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK | \
	 LANDLOCK_ACCESS_FS_MAKE_SYM)
#define LL_FS_REFER (1ULL << 13)

/* Rights that may be granted on a file (the rest only beneath a directory). */
#define LL_FS_FILE_RIGHTS                                                                     \
	(LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_FILE | \
	 LL_FS_TRUNCATE | LL_FS_IOCTL_DEV)

static uint64_t ll_handled(int abi)
{
	uint64_t h = LL_FS_ABI1;
	if (abi >= 2)
		h |= LL_FS_REFER;
	if (abi >= 3)
		h |= LL_FS_TRUNCATE;
	if (abi >= 5)
		h |= LL_FS_IOCTL_DEV;
	return h;
}

const struct bee_ll_weaker bee_ll_weaker[] = {
	{ 3, "truncate", "truncate(2) of a file the policy does not let it write, below a write rule's "
			 "literal prefix (elsewhere the session's mounts are read-only)" },
	{ 5, "ioctl-dev", "ioctl(2) on any device the tool opens (TIOCSTI on a terminal)" },
	{ 6, "scope", "signals to processes outside the session and connects to abstract UNIX sockets "
		      "bound outside it" },
};
const size_t bee_ll_nweaker = sizeof(bee_ll_weaker) / sizeof(bee_ll_weaker[0]);

const struct bee_ll_weaker *bee_landlock_weaker_find(const char *name)
{
	for (size_t i = 0; i < bee_ll_nweaker; i++)
		if (!strcmp(bee_ll_weaker[i].name, name))
			return &bee_ll_weaker[i];
	return NULL;
}

static bool weaker_named(const char *name, const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return true;
	return false;
}

/* A right the ABI cannot restrict stays open for the whole session: the
 * launch is refused unless the user named each such right, so that
 * running weaker than the policy is a decision, never a surprise. */
int bee_landlock_weaker_check(int abi, const char *const *names, size_t n, struct bee_error *e)
{
	char what[512] = "", opts[128] = "";
	size_t wl = 0, ol = 0, k = 0;
	for (size_t i = 0; i < bee_ll_nweaker; i++) {
		const struct bee_ll_weaker *w = &bee_ll_weaker[i];
		if (abi >= w->abi || weaker_named(w->name, names, n))
			continue;
		wl += (size_t)snprintf(what + wl, wl < sizeof(what) ? sizeof(what) - wl : 0, "%s'%s' (ABI %d: %s)",
				       wl ? ", " : "", w->name, w->abi, w->open);
		ol += (size_t)snprintf(opts + ol, ol < sizeof(opts) ? sizeof(opts) - ol : 0, " --allow-weaker %s",
				       w->name);
		k++;
	}
	if (!wl)
		return 0;
	return bee_fail(e, BEE_STAGE_LANDLOCK, -EOPNOTSUPP,
			"this kernel's Landlock ABI %d cannot restrict %s; bee-load run%s runs the tool without "
			"%s (bee-load plan lists them)",
			abi, what, opts, k > 1 ? "them" : "it");
}

static uint64_t ll_rights(uint32_t perms, bool dir)
{
	uint64_t a = 0;
	if (perms & BEEC_LL_READ)
		a |= LANDLOCK_ACCESS_FS_READ_FILE;
	if ((perms & BEEC_LL_LIST) && dir)
		a |= LANDLOCK_ACCESS_FS_READ_DIR;
	if (perms & BEEC_LL_WRITE) {
		a |= LANDLOCK_ACCESS_FS_WRITE_FILE | LL_FS_TRUNCATE | LL_FS_IOCTL_DEV;
		if (dir)
			a |= LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_DIR |
			     LANDLOCK_ACCESS_FS_MAKE_SYM | LANDLOCK_ACCESS_FS_MAKE_SOCK |
			     LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_REMOVE_FILE |
			     LANDLOCK_ACCESS_FS_REMOVE_DIR | LL_FS_REFER;
	}
	if (perms & BEEC_LL_EXEC)
		a |= LANDLOCK_ACCESS_FS_EXECUTE;
	if (perms & BEEC_LL_TRUNC)
		a |= LL_FS_TRUNCATE;
	return a;
}

/* What a rule of these permissions grants on a directory or a file (a
 * file takes only the file rights) of the ruleset's handled rights. */
static uint64_t ll_rule_access(uint32_t perms, bool dir, uint64_t handled)
{
	return ll_rights(perms, dir) & handled & (dir ? ~0ULL : LL_FS_FILE_RIGHTS);
}

/* A ruleset handling the file-system rights handled, scoping abstract
 * UNIX sockets and signals from ABI 6; the attr size says which fields
 * the kernel reads. */
static int ll_ruleset_create(uint64_t handled, int abi)
{
	struct ll_ruleset_attr attr = { .handled_access_fs = handled };
	size_t size = sizeof(attr.handled_access_fs);
	if (abi >= 6) {
		attr.scoped = LL_SCOPE_ABSTRACT_UNIX | LL_SCOPE_SIGNAL;
		size = sizeof(attr);
	}
	return (int)syscall(__NR_landlock_create_ruleset, &attr, size, 0);
}

unsigned bee_landlock_restrict_flags(int abi)
{
	/* without it, Landlock logs only what the launcher itself is denied,
	 * never the tool it executes */
	return abi >= 7 ? LL_RESTRICT_LOG_NEW_EXEC_ON : 0;
}

/* The file systems the session's init mounts anew (mountns.c) */
static bool ll_remounted(int fd)
{
	struct statfs sf;
	return fstatfs(fd, &sf) == 0 && (sf.f_type == PROC_SUPER_MAGIC || sf.f_type == CGROUP2_SUPER_MAGIC);
}

/* path is at or below one of the session's overlays */
static bool ll_overlaid(const struct bee_ll_lates *late, const char *path)
{
	for (size_t i = 0; i < late->noverlaid; i++) {
		size_t n = strlen(late->overlaid[i]);
		if (strncmp(path, late->overlaid[i], n) == 0 && (path[n] == '\0' || path[n] == '/'))
			return true;
	}
	return false;
}

static int ll_late_push(struct bee_ll_lates *late, const struct beec_ll_rule *r, uint64_t handled)
{
	struct bee_ll_late *v = realloc(late->v, (late->n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	late->v = v;
	struct bee_ll_late *l = &v[late->n];
	*l = (struct bee_ll_late){ 0 };
	if (!(l->path = strdup(r->path)))
		return -ENOMEM;
	l->rule = r->rule;
	l->beneath = r->dir;
	l->perms = r->rights;
	l->handled = handled;
	late->n++;
	return 0;
}

void bee_ll_lates_fini(struct bee_ll_lates *late)
{
	for (size_t i = 0; late && i < late->n; i++)
		free(late->v[i].path);
	if (late) {
		free(late->v);
		late->v = NULL;
		late->n = 0;
	}
}

int bee_landlock_late_add(int rfd, const struct bee_ll_lates *late, const char **what)
{
	for (size_t i = 0; late && i < late->n; i++) {
		const struct bee_ll_late *l = &late->v[i];
		struct statx st;
		int pfd = (int)bee_sys(SYS_openat, AT_FDCWD, l->path, O_PATH | O_CLOEXEC);
		if (pfd < 0)
			continue;       /* grants nothing, as a path missing at launch */
		if (bee_sys(SYS_statx, pfd, "", AT_EMPTY_PATH, STATX_TYPE, &st) < 0) {
			bee_sys_close(pfd);
			continue;
		}
		bool dir = S_ISDIR(st.stx_mode);
		if (dir != l->beneath) {
			bee_sys_close(pfd);
			if (!l->beneath) {
				*what = "late rule is a dir";
				return -EISDIR;
			}
			continue;
		}
		struct ll_path_beneath pb = { .allowed_access = l->access ? l->access
									  : ll_rule_access(l->perms, dir, l->handled),
					      .parent_fd = pfd };
		int r = pb.allowed_access ? (int)bee_sys(SYS_landlock_add_rule, rfd, LL_RULE_PATH_BENEATH, &pb, 0) : 0;
		bee_sys_close(pfd);
		if (r < 0) {
			*what = "late landlock_add_rule";
			return r;
		}
	}
	return 0;
}

int bee_landlock_ruleset(const struct bee_pack *p, const struct bee_manifest *m, int abi, int *out,
			 bee_warn_fn warn, void *warn_ctx, struct bee_error *e)
{
	return bee_landlock_ruleset_late(p, m, abi, out, NULL, NULL, NULL, warn, warn_ctx, e);
}

int bee_landlock_walk(const struct bee_pack *p, const struct bee_manifest *m, const struct beec_ll_opts *o,
		      beec_ll_rule_fn fn, void *ctx, struct beec_ll_plan *plan, struct bee_error *e)
{
	const struct bee_pack_section_info *fs = bee_pack_image(p, bee_map_name(BEE_MAP_FS));
	const struct bee_pack_section_info *ex = bee_pack_image(p, bee_map_name(BEE_MAP_EXEC));
	if (!fs || !ex)
		return bee_fail(e, BEE_STAGE_LANDLOCK, -EINVAL, "policy '%s': the pack has no %s image", m->name,
				!fs ? bee_map_name(BEE_MAP_FS) : bee_map_name(BEE_MAP_EXEC));
	size_t n;
	struct beec_ll_seed *seeds = beec_ll__seeds(m, &n);
	if (!seeds)
		return bee_fail(e, BEE_STAGE_LANDLOCK, -ENOMEM, "out of memory");
	struct beec_ll_opts wo = { .sz = sizeof(wo), .late = ll_remounted };
	if (o) {
		wo.max_entries = o->max_entries;
		wo.max_ms = o->max_ms;
		wo.ro = o->ro;
		wo.rw = o->rw;
		wo.nrw = o->nrw;
	}
	int err = beec_ll__walk(fs->data, ex->data, seeds, n, &wo, fn, ctx, plan);
	free(seeds);
	if (err == -E2BIG || err == -EINVAL)
		return bee_fail(e, BEE_STAGE_LANDLOCK, err, "policy '%s': %s", m->name, plan->err);
	if (err == -ENOMEM)
		return bee_fail(e, BEE_STAGE_LANDLOCK, err, "out of memory");
	return err;
}

int bee_landlock__plan(const char *pack_path, const struct beec_ll_opts *o,
		       int (*fn)(void *ctx, const struct beec_ll_rule *r, int dirfd, const char *name), void *ctx,
		       struct beec_ll_plan *plan, int *abi, struct bee_error *e)
{
	struct bee_pack *pack = NULL;
	struct bee_manifest m;
	memset(plan, 0, sizeof(*plan));
	*abi = bee_landlock_abi();
	int err = bee_pack_load(pack_path, &pack, &m, e);
	if (err)
		return err;
	/* the places a session of it keeps writable (bee_mountns_plan) */
	struct bee_mountns *ns = NULL;
	struct beec_ll_opts wo = o ? *o : (struct beec_ll_opts){ .sz = sizeof(wo) };
	wo.rw = NULL;   /* the plan's own, set below */
	if ((err = bee_mountns_plan(&m, bee_state_dir(NULL), &ns, e)) == 0 &&
	    (err = bee_landlock_ro_opts(ns, *abi, &wo, e)) == 0)
		err = bee_landlock_walk(pack, &m, &wo, fn, ctx, plan, e);
	free((void *)wo.rw);
	bee_mountns_free(ns);
	bee_manifest_fini(&m);
	bee_pack__close(pack);
	return err;
}

/* ---- the rules' system calls on every core ---------------------------------------------
 *
 * A policy that grants file by file (a deny of "*.pem" files inside a
 * grant of all of /usr) gets a rule for each of 150,000 files, and each
 * rule costs three system calls (openat, landlock_add_rule, close: about
 * 2.7 us on this project's hosts) beside the walk's own 1.2 us an entry.
 * So after the first LL_POOL_AFTER rules of directories the walk opened,
 * it hands them on in batches (the names, and a dup of each directory's
 * fd, since the walk closes its own) to LL_POOL_THREADS threads and goes
 * on listing. The ruleset is the same: Landlock ORs the rights of the
 * rules on one inode, whatever their order. A small plan never starts
 * them. The first failure stops the walk at its next rule and is reported
 * as the rule that failed, as before; the threads are joined before the
 * walk returns.
 *
 * The dups are bounded: at most half the fds RLIMIT_NOFILE leaves free
 * when the threads start (and no more than LL_POOL_FDS) are in the
 * batches at once, the walk waiting for the threads to close some; with
 * fewer than LL_BATCH_DIRS to spare, no thread is started and every rule
 * is added as the walk meets it. */

#define LL_POOL_AFTER 1024
#define LL_POOL_THREADS 2
#define LL_BATCH 256
#define LL_BATCH_DIRS 16
#define LL_POOL_FDS 128
#define LL_QUEUE 4

struct ll_job {
	uint64_t access;
	unsigned rule;
	uint32_t name;          /* offset in the batch's text */
	uint16_t dir;           /* its directory in the batch's dirs */
	bool ro_trunc;          /* its truncate is the read-only place's (ll_add) */
};

struct ll_batch {
	size_t n, ndirs;
	struct ll_job job[LL_BATCH];
	int dirfd[LL_BATCH_DIRS];    /* dups of the walk's, closed with the batch */
	uint32_t dir[LL_BATCH_DIRS]; /* their paths, in text */
	unsigned listing;       /* the walk's listing of the last one */
	char *text;
	size_t len, cap;
};

/* Where a read-only place's truncate (BEEC_LL_TRUNC) holds: not on a
 * file with other names (a hard link elsewhere may be in a writable
 * place), nor on a device the mount table shows at more than one place
 * (a bind mount may put it below a writable one). */
struct ll_ro {
	dev_t *aliased;
	size_t naliased;
};

struct ll_pool {
	pthread_t thread[LL_POOL_THREADS];
	size_t nthreads;
	pthread_mutex_t mu;
	pthread_cond_t more, room;   /* a batch to take; a batch taken or done */
	struct ll_batch *queue[LL_QUEUE];
	size_t head, count;
	size_t fds, max_fds;    /* dups in the batches, and their bound */
	bool closing;
	int rfd;
	const struct ll_ro *ro;
	_Atomic int err;        /* the first failure: its rule, path and call */
	unsigned err_rule;
	char err_path[PATH_MAX];
	const char *err_call;
	struct ll_batch *cur;   /* being filled by the walk */
};

int bee_landlock_ro_opts(const struct bee_mountns *ns, int abi, struct beec_ll_opts *wo, struct bee_error *e)
{
	const char **rw;
	size_t nrw;
	int err = bee_mountns_writable(ns, &rw, &nrw);
	if (err < 0)
		return bee_fail(e, BEE_STAGE_LANDLOCK, err, "out of memory");
	wo->ro = err == 0 && abi >= 3;   /* truncate is ABI 3's */
	wo->rw = rw;
	wo->nrw = nrw;
	return 0;
}

struct ll_apply {
	int rfd;
	uint64_t handled;
	struct bee_ll_lates *late;
	struct bee_error *e;
	uint64_t direct;        /* rules added by the walk's own thread */
	uint64_t pool_after;    /* LL_POOL_AFTER, or BEE_LL_POOL_AFTER's (the tests') */
	struct ll_pool *pool;   /* once started */
	bool no_pool;           /* too few fds to spare for one */
	struct ll_ro ro;
};

/* Whether the truncate of a read-only place holds on the inode open as fd. */
static bool ll_ro_holds(const struct ll_ro *ro, int fd)
{
	struct stat st;
	if (fstat(fd, &st) < 0 || (!S_ISDIR(st.st_mode) && st.st_nlink != 1))
		return false;
	for (size_t i = 0; i < ro->naliased; i++)
		if (ro->aliased[i] == st.st_dev)
			return false;
	return true;
}

/* One rule into the ruleset: 0, or -errno with *call what failed ("" for
 * the open, "landlock_add_rule: " for the rule). ro_trunc: the rule's
 * truncate is a read-only place's, dropped where it does not hold. */
static int ll_add(int rfd, int dirfd, const char *name, uint64_t access, bool ro_trunc, const struct ll_ro *ro,
		  const char **call)
{
	struct ll_path_beneath pb = { .allowed_access = access };
	*call = "";
	pb.parent_fd = openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (pb.parent_fd < 0)
		return -errno;
	if (ro_trunc && !ll_ro_holds(ro, pb.parent_fd) && !(pb.allowed_access &= ~LL_FS_TRUNCATE)) {
		close(pb.parent_fd);
		return 0;
	}
	int err = 0;
	if (syscall(__NR_landlock_add_rule, rfd, LL_RULE_PATH_BENEATH, &pb, 0) < 0) {
		err = -errno;
		*call = "landlock_add_rule: ";
	}
	close(pb.parent_fd);
	return err;
}

/* A batch's fds closed and its memory freed: the count of its fds. */
static size_t ll_batch_free(struct ll_batch *b)
{
	if (!b)
		return 0;
	size_t n = b->ndirs;
	for (size_t i = 0; i < n; i++)
		close(b->dirfd[i]);
	free(b->text);
	free(b);
	return n;
}

static void *ll_pool_main(void *arg)
{
	struct ll_pool *p = arg;
	for (;;) {
		pthread_mutex_lock(&p->mu);
		while (!p->count && !p->closing)
			pthread_cond_wait(&p->more, &p->mu);
		if (!p->count) {
			pthread_mutex_unlock(&p->mu);
			return NULL;
		}
		struct ll_batch *b = p->queue[p->head];
		p->head = (p->head + 1) % LL_QUEUE;
		p->count--;
		pthread_cond_signal(&p->room);
		pthread_mutex_unlock(&p->mu);
		for (size_t i = 0; i < b->n && !p->err; i++) {
			const struct ll_job *j = &b->job[i];
			const char *call;
			int err = ll_add(p->rfd, b->dirfd[j->dir], b->text + j->name, j->access, j->ro_trunc, p->ro,
					 &call);
			if (err < 0) {
				pthread_mutex_lock(&p->mu);
				if (!p->err) {
					p->err_rule = j->rule;
					snprintf(p->err_path, sizeof(p->err_path), "%s/%s", b->text + b->dir[j->dir],
						 b->text + j->name);
					p->err_call = call;
					p->err = err;
				}
				pthread_mutex_unlock(&p->mu);
			}
		}
		size_t n = ll_batch_free(b);
		pthread_mutex_lock(&p->mu);
		p->fds -= n;
		pthread_cond_signal(&p->room);
		pthread_mutex_unlock(&p->mu);
	}
}

/* The batch being filled goes to the threads (the walk waits for room). */
static void ll_pool_flush(struct ll_pool *p)
{
	struct ll_batch *b = p->cur;
	p->cur = NULL;
	if (!b)
		return;
	pthread_mutex_lock(&p->mu);
	while (p->count == LL_QUEUE)
		pthread_cond_wait(&p->room, &p->mu);
	p->queue[(p->head + p->count) % LL_QUEUE] = b;
	p->count++;
	pthread_cond_signal(&p->more);
	pthread_mutex_unlock(&p->mu);
}

/* Room for one more dup: the batch being filled goes first if it holds
 * what the threads must close to make it. */
static void ll_pool_fd_wait(struct ll_pool *p)
{
	pthread_mutex_lock(&p->mu);
	bool full = p->fds >= p->max_fds;
	pthread_mutex_unlock(&p->mu);
	if (!full)
		return;
	ll_pool_flush(p);
	pthread_mutex_lock(&p->mu);
	while (p->fds >= p->max_fds)
		pthread_cond_wait(&p->room, &p->mu);
	pthread_mutex_unlock(&p->mu);
}

static int ll_text(struct ll_batch *b, const char *s, size_t n, uint32_t *at)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 16384;
		while (cap < b->len + n + 1)
			cap *= 2;
		char *t = realloc(b->text, cap);
		if (!t)
			return -ENOMEM;
		b->text = t;
		b->cap = cap;
	}
	memcpy(b->text + b->len, s, n);
	b->text[b->len + n] = '\0';
	*at = (uint32_t)b->len;
	b->len += n + 1;
	return 0;
}

/* Rule r (name in directory dirfd, its listing r->listing) into the batch. */
static int ll_pool_push(struct ll_pool *p, const struct beec_ll_rule *r, int dirfd, const char *name,
			uint64_t access, bool ro_trunc)
{
	bool new_dir = !p->cur || p->cur->listing != r->listing;
	if (p->cur && (p->cur->n == LL_BATCH || (new_dir && p->cur->ndirs == LL_BATCH_DIRS)))
		ll_pool_flush(p);
	/* a new batch holds no fd yet, whoever's rule came last */
	new_dir = new_dir || !p->cur;
	if (new_dir)
		ll_pool_fd_wait(p);
	struct ll_batch *b = p->cur;
	if (!b) {
		if (!(b = calloc(1, sizeof(*b))))
			return -ENOMEM;
		p->cur = b;
	}
	if (new_dir) {
		size_t nl = strlen(name), pl = strlen(r->path);
		size_t dl = pl > nl ? pl - nl - 1 : 0;   /* the path is the directory's, '/', the name */
		int fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 3);
		if (fd < 0)
			return -errno;
		pthread_mutex_lock(&p->mu);
		p->fds++;
		pthread_mutex_unlock(&p->mu);
		b->dirfd[b->ndirs] = fd;
		b->ndirs++;
		b->listing = r->listing;
		if (ll_text(b, r->path, dl, &b->dir[b->ndirs - 1]) < 0)
			return -ENOMEM;
	}
	struct ll_job *j = &b->job[b->n];
	j->access = access;
	j->rule = r->rule;
	j->dir = (uint16_t)(b->ndirs - 1);
	j->ro_trunc = ro_trunc;
	if (ll_text(b, name, strlen(name), &j->name) < 0)
		return -ENOMEM;
	b->n++;
	return 0;
}

/* The fds this process may still open (RLIMIT_NOFILE less those open). */
static size_t ll_fds_free(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 0;
	size_t open = 0;
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return 0;
	while (readdir(d))
		open++;
	closedir(d);
	return rl.rlim_cur > open ? (size_t)(rl.rlim_cur - open) : 0;
}

/* 0 with *out the pool; 1 when too few fds are free for one. */
static int ll_pool_start(struct ll_pool **out, int rfd, const struct ll_ro *ro)
{
	/* half of what is free; the threads' own opens are one each */
	size_t spare = ll_fds_free() / 2;
	if (spare < LL_BATCH_DIRS + LL_POOL_THREADS)
		return 1;
	struct ll_pool *p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->rfd = rfd;
	p->ro = ro;
	p->max_fds = spare - LL_POOL_THREADS < LL_POOL_FDS ? spare - LL_POOL_THREADS : LL_POOL_FDS;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->more, NULL);
	pthread_cond_init(&p->room, NULL);
	for (size_t i = 0; i < LL_POOL_THREADS; i++) {
		int err = pthread_create(&p->thread[i], NULL, ll_pool_main, p);
		if (err) {
			if (!p->nthreads) {
				free(p);
				return -err;
			}
			break;   /* fewer threads: the same rules, slower */
		}
		p->nthreads++;
	}
	*out = p;
	return 0;
}

/* Every batch added and the threads gone: 0, or the first failure. */
static int ll_pool_finish(struct ll_pool *p, struct bee_error *e)
{
	if (!p->err)
		ll_pool_flush(p);
	ll_batch_free(p->cur);
	pthread_mutex_lock(&p->mu);
	p->closing = true;
	pthread_cond_broadcast(&p->more);
	pthread_mutex_unlock(&p->mu);
	for (size_t i = 0; i < p->nthreads; i++)
		pthread_join(p->thread[i], NULL);
	/* a failure stops the threads before the queue is empty */
	while (p->count) {
		ll_batch_free(p->queue[p->head]);
		p->head = (p->head + 1) % LL_QUEUE;
		p->count--;
	}
	int err = p->err;
	if (err)
		bee_fail(e, BEE_STAGE_LANDLOCK, err, "rule %u '%s': %s%s", p->err_rule, p->err_path, p->err_call,
			 strerror(-err));
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->more);
	pthread_cond_destroy(&p->room);
	free(p);
	return err;
}

/* One rule of the walk into the ruleset (beec_ll_rule_fn). */
static int ll_apply_rule(void *ctx, const struct beec_ll_rule *r, int dirfd, const char *name)
{
	struct ll_apply *a = ctx;
	if (r->late) {
		if (!a->late)   /* no init to add it: in this process's /proc */
			dirfd = AT_FDCWD, name = r->path;
		else if (ll_late_push(a->late, r, a->handled) < 0)
			return bee_fail(a->e, BEE_STAGE_LANDLOCK, -ENOMEM, "out of memory");
		else
			return 0;
	}
	/* inside an overlay the tool sees the overlay's inodes: init binds
	 * the rule again there (vfs.c), and the host's inode keeps it too */
	if (a->late && ll_overlaid(a->late, r->path) && ll_late_push(a->late, r, a->handled) < 0)
		return bee_fail(a->e, BEE_STAGE_LANDLOCK, -ENOMEM, "out of memory");
	uint64_t access = ll_rule_access(r->rights, r->dir, a->handled);
	if (!access)
		return 0;
	/* truncate for a read-only place: not through write, checked at its inode */
	bool ro_trunc = (access & LL_FS_TRUNCATE) && (r->rights & BEEC_LL_TRUNC) && !(r->rights & BEEC_LL_WRITE);
	if (a->pool && a->pool->err)
		return a->pool->err;   /* reported by ll_pool_finish */
	if (r->listing && !a->pool && !a->no_pool && a->direct >= a->pool_after) {
		int err = ll_pool_start(&a->pool, a->rfd, &a->ro);
		if (err < 0)
			return bee_fail(a->e, BEE_STAGE_LANDLOCK, err, "rule %u '%s': threads: %s", r->rule, r->path,
					strerror(-err));
		a->no_pool = err == 1;
	}
	if (r->listing && a->pool) {
		int err = ll_pool_push(a->pool, r, dirfd, name, access, ro_trunc);
		return err < 0 ? bee_fail(a->e, BEE_STAGE_LANDLOCK, err, "rule %u '%s': %s", r->rule, r->path,
					  strerror(-err))
			       : 0;
	}
	const char *call;
	int err = ll_add(a->rfd, dirfd, name, access, ro_trunc, &a->ro, &call);
	a->direct++;
	if (err < 0)
		bee_fail(a->e, BEE_STAGE_LANDLOCK, err, "rule %u '%s': %s%s", r->rule, r->path, call,
			 strerror(-err));
	return err;
}

int bee_landlock_ruleset_late(const struct bee_pack *p, const struct bee_manifest *m, int abi, int *out,
			      struct bee_ll_lates *late, const struct beec_ll_opts *wo, struct beec_ll_plan *plan,
			      bee_warn_fn warn, void *warn_ctx, struct bee_error *e)
{
	int err = bee_fault(BEE_STAGE_LANDLOCK);
	*out = -1;
	(void)warn;
	(void)warn_ctx;
	if (err)
		return bee_fail(e, BEE_STAGE_LANDLOCK, err, "injected fault");
	if (abi < 1)
		return bee_fail(e, BEE_STAGE_LANDLOCK, -EOPNOTSUPP, "Landlock is not enabled in this kernel");
	uint64_t handled = ll_handled(abi);
	int rfd = ll_ruleset_create(handled, abi);
	if (rfd < 0) {
		err = -errno;
		return bee_fail(e, BEE_STAGE_LANDLOCK, err, "landlock_create_ruleset (ABI %d): %s", abi,
				strerror(-err));
	}
	/* the tests start the threads at once (tools/check-landlock-diff) */
	const char *after = getenv("BEE_LL_POOL_AFTER");
	struct ll_apply a = { .rfd = rfd, .handled = handled, .late = late, .e = e,
			      .pool_after = after ? strtoull(after, NULL, 10) : LL_POOL_AFTER };
	if (wo && wo->ro && (err = bee_mount_devs_aliased(&a.ro.aliased, &a.ro.naliased)) < 0) {
		close(rfd);
		return bee_fail(e, BEE_STAGE_LANDLOCK, err, "/proc/self/mountinfo: %s", strerror(-err));
	}
	struct beec_ll_plan own;
	if (!plan)
		plan = &own;
	err = bee_landlock_walk(p, m, wo, ll_apply_rule, &a, plan, e);
	/* a failure in the threads stopped the walk: theirs is the message */
	if (a.pool) {
		int perr = ll_pool_finish(a.pool, e);
		if (perr)
			err = perr;
	}
	free(a.ro.aliased);
	if (plan == &own)
		beec_ll_plan__fini(&own);
	if (err < 0) {
		close(rfd);
		return err;
	}
	*out = rfd;
	return 0;
}

/* ---- bpf-lsm hardening ----------------------------------------------------------------
 *
 * The BPF hooks of a 6.1 kernel cannot decide link, rename, unlink, rmdir,
 * mkdir, mknod, symlink or truncate (their hooks get no bpf_d_path), so
 * under the bpf-lsm backend the tool is also restricted by a Landlock
 * ruleset that handles only the namespace-changing rights:
 *
 *   REMOVE_DIR REMOVE_FILE MAKE_CHAR MAKE_DIR MAKE_REG MAKE_SOCK MAKE_FIFO
 *   MAKE_BLOCK MAKE_SYM, REFER (ABI 2), TRUNCATE (ABI 3), IOCTL_DEV (ABI 5)
 *
 * and from ABI 6 scopes signals and abstract UNIX sockets as the landlock
 * backend does.
 *
 * READ_FILE, WRITE_FILE, EXECUTE and READ_DIR are not handled: reads,
 * writes and execs stay the BPF programs' decisions. The rights are granted
 * where the pack's fs write rules could grant them:
 *
 *   a glob ("/a/b/ **", "/tmp/bee-* / **")  beneath the longest literal
 *        directory prefix (/a/b, /tmp): every handled right but MAKE_CHAR
 *        and MAKE_BLOCK (the tool has no CAP_MKNOD). Braces are expanded
 *        first, so "/a/{x,y}/ **" gives /a/x and /a/y.
 *   a literal existing file ("/dev/null")  TRUNCATE (ABI 3) and
 *        IOCTL_DEV (ABI 5) on that file alone, nothing on its directory:
 *        MAKE_REG on /dev would let the tool create files there.
 *   a literal missing file  MAKE_REG on its directory, so that the tool
 *        can create it (the BPF hooks decide the open by its path); no
 *        removal, no REFER (nothing can be renamed or linked in).
 *   a literal directory  nothing (the rule writes the directory's own
 *        path, not entries in it).
 *
 * A prefix that does not exist at launch, or is not a directory, grants
 * nothing (a warning). This over-approximates the write rules (namespace
 * changes are allowed anywhere below a written glob's literal prefix,
 * whatever deny rules say there) but refuses them in every tree that no
 * write rule reaches.
 */

#define LL_HARDEN_ABI1                                                                         \
	(LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_CHAR | \
	 LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_SOCK |     \
	 LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_MAKE_SYM)

uint64_t bee_landlock_hardening_handled(int abi)
{
	uint64_t h = LL_HARDEN_ABI1;
	if (abi >= 2)
		h |= LL_FS_REFER;
	if (abi >= 3)
		h |= LL_FS_TRUNCATE;
	if (abi >= 5)
		h |= LL_FS_IOCTL_DEV;
	return h;
}

static int harden_add(int rfd, const char *path, uint64_t access, unsigned rule, struct bee_error *e)
{
	int fd = open(path, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return bee_fail(e, BEE_STAGE_LANDLOCK, -errno, "rule %u: '%s': %s", rule, path, strerror(errno));
	struct ll_path_beneath pb = { .allowed_access = access, .parent_fd = fd };
	int err = 0;
	if (syscall(__NR_landlock_add_rule, rfd, LL_RULE_PATH_BENEATH, &pb, 0) < 0) {
		err = -errno;
		bee_fail(e, BEE_STAGE_LANDLOCK, err, "rule %u '%s': landlock_add_rule: %s", rule, path,
			 strerror(-err));
	}
	close(fd);
	return err;
}

struct harden_ctx {
	int rfd;
	uint64_t handled, beneath;
	struct bee_ll_lates *late;          /* NULL: no overlay */
	bee_warn_fn warn;
	void *warn_ctx;
	struct bee_error *e;
};

/* harden_add, and the same rule bound again inside the session when path
 * is at or below an overlay (its inodes are not the real ones) */
static int harden_add_late(struct harden_ctx *h, const char *path, bool dir, uint64_t access, unsigned rule)
{
	if (h->late && ll_overlaid(h->late, path)) {
		struct bee_ll_late *v = realloc(h->late->v, (h->late->n + 1) * sizeof(*v));
		if (!v)
			return bee_fail(h->e, BEE_STAGE_LANDLOCK, -ENOMEM, "out of memory");
		h->late->v = v;
		v[h->late->n] = (struct bee_ll_late){ .path = strdup(path), .rule = rule, .beneath = dir,
						      .handled = h->handled, .access = access };
		if (!v[h->late->n].path)
			return bee_fail(h->e, BEE_STAGE_LANDLOCK, -ENOMEM, "out of memory");
		h->late->n++;
	}
	return harden_add(h->rfd, path, access, rule, h->e);
}

/* One write prefix's namespace rights (bee_write_prefixes_each's fn). */
static int harden_prefix(void *ctx, const struct bee_mf_rule *r, const struct beec_prefix *px)
{
	struct harden_ctx *h = ctx;
	const char *path = px->path;
	struct stat st;
	if (!px->literal) {
		bool missing = stat(path, &st) < 0;
		if (missing || !S_ISDIR(st.st_mode)) {
			bee_warnf(h->warn, h->warn_ctx,
				  "landlock hardening: rule %u 'fs.write %s': '%s' %s at launch: no "
				  "file can be created, removed or renamed beneath it",
				  r->index, r->text, path,
				  missing ? "cannot be found" : "is not a directory");
			return 0;
		}
		return harden_add_late(h, path, true, h->beneath, r->index);
	}
	if (stat(path, &st) == 0) {
		uint64_t file = h->handled & (LL_FS_TRUNCATE | LL_FS_IOCTL_DEV);
		return S_ISDIR(st.st_mode) || !file ? 0 : harden_add_late(h, path, false, file, r->index);
	}
	/* missing: it may be created, nothing else in its directory */
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	if (slash == dir)
		slash[1] = '\0';
	else
		*slash = '\0';
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		bee_warnf(h->warn, h->warn_ctx,
			  "landlock hardening: rule %u 'fs.write %s': neither it nor '%s' exists "
			  "at launch: it cannot be created",
			  r->index, r->text, dir);
		return 0;
	}
	return harden_add_late(h, dir, true, LANDLOCK_ACCESS_FS_MAKE_REG, r->index);
}

static int hardening_build(const struct bee_manifest *m, int abi, int *out, struct bee_ll_lates *late,
			   bee_warn_fn warn, void *warn_ctx, struct bee_error *e);

int bee_landlock_hardening(const struct bee_manifest *m, int abi, int *out, bee_warn_fn warn,
			   void *warn_ctx, struct bee_error *e)
{
	return hardening_build(m, abi, out, NULL, warn, warn_ctx, e);
}

static int hardening_build(const struct bee_manifest *m, int abi, int *out, struct bee_ll_lates *late,
			   bee_warn_fn warn, void *warn_ctx, struct bee_error *e)
{
	int err = bee_fault(BEE_STAGE_LANDLOCK);
	*out = -1;
	if (err)
		return bee_fail(e, BEE_STAGE_LANDLOCK, err, "injected fault");
	if (abi < 1)
		return bee_fail(e, BEE_STAGE_LANDLOCK, -EOPNOTSUPP, "Landlock is not enabled in this kernel");
	uint64_t handled = bee_landlock_hardening_handled(abi);
	uint64_t beneath = handled & ~(uint64_t)(LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_BLOCK);
	int rfd = ll_ruleset_create(handled, abi);
	if (rfd < 0) {
		err = -errno;
		return bee_fail(e, BEE_STAGE_LANDLOCK, err, "landlock_create_ruleset (ABI %d): %s", abi,
				strerror(-err));
	}
	struct harden_ctx h = { .rfd = rfd, .handled = handled, .beneath = beneath, .late = late, .warn = warn,
				.warn_ctx = warn_ctx, .e = e };
	/* fail closed: a write rule whose prefix cannot be found would be
	 * refused namespace changes it may need, or worse, guessed */
	if ((err = bee_write_prefixes_each(m, BEE_STAGE_LANDLOCK, harden_prefix, &h, e)) < 0) {
		close(rfd);
		return err;
	}
	*out = rfd;
	return 0;
}

#define WRITE_PREFIXES_MAX 64

int bee_write_prefixes_each(const struct bee_manifest *m, enum bee_stage st, bee_write_prefix_fn fn, void *ctx,
			    struct bee_error *e)
{
	struct beec_prefix *px = calloc(WRITE_PREFIXES_MAX, sizeof(*px));
	if (!px)
		return bee_fail(e, st, -ENOMEM, "out of memory");
	int err = 0;
	for (size_t i = 0; i < m->nrules && !err; i++) {
		const struct bee_mf_rule *r = &m->rules[i];
		if (r->rkind != BEE_RULE_FS_WRITE)
			continue;
		int n = beec_glob__write_prefixes(r->text, px, WRITE_PREFIXES_MAX);
		if (n < 0) {
			err = bee_fail(e, st, n, "rule %u 'fs.write %s': no literal prefix: %s", r->index, r->text,
				       strerror(-n));
			break;
		}
		for (int k = 0; k < n && !err; k++)
			err = fn(ctx, r, &px[k]);
	}
	free(px);
	return err;
}

int bee_landlock_harden_session(const struct bee_manifest *m, bool opt_out, int *abi, int *fd,
				bee_warn_fn warn, void *warn_ctx, struct bee_error *e)
{
	return bee_landlock_harden_session_late(m, opt_out, abi, fd, NULL, warn, warn_ctx, e);
}

int bee_landlock_harden_session_late(const struct bee_manifest *m, bool opt_out, int *abi, int *fd,
				     struct bee_ll_lates *late, bee_warn_fn warn, void *warn_ctx,
				     struct bee_error *e)
{
	*fd = -1;
	*abi = 0;
	if (opt_out) {
		bee_warnf(warn, warn_ctx,
			  "--no-landlock-hardening: link, rename, unlink, mkdir and truncate are not "
			  "restricted in this session (docs/decisions.md, Known gaps)");
		return 0;
	}
	int a = bee_landlock_abi();
	if (a < 1)
		return bee_fail(e, BEE_STAGE_LANDLOCK, -EOPNOTSUPP,
				"Landlock is not enabled in this kernel: under bpf-lsm it restricts link, rename, "
				"unlink, mkdir and truncate, which the BPF hooks cannot decide "
				"(--no-landlock-hardening runs without it)");
	int err = hardening_build(m, a, fd, late, warn, warn_ctx, e);
	if (err)
		return err;
	/* below ABI 3 truncate(2) stays open (docs/decisions.md, Known gaps) */
	*abi = a;
	return 0;
}
