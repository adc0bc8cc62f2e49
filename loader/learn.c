/* SPDX-License-Identifier: GPL-2.0-only */
/* learn.c: learning mode (bee-load run --learn LOG): the tool runs with
 * nothing denied, and every access the policy would refuse is recorded
 * with the rule that would decide it, for `beec learn` to turn into a
 * policy (docs/writing-policies.md).
 *
 * Under bpf-lsm the policy's hooks do it themselves: the session's
 * bee_state.flags carries BEE_STATE_LEARN and each hook records its
 * denial and allows (bpf/bee_hooks.bpf.h, bee_learning). The cgroup
 * network programs do the same on both backends.
 *
 * Under landlock there is no hook to put in complain mode, so nothing of
 * Landlock is applied and the file system is watched instead: fanotify
 * permission events (FAN_OPEN_PERM, FAN_OPEN_EXEC_PERM, directories too)
 * on every local file system of the host (FAN_MARK_FILESYSTEM). The marks
 * are host-wide, so the listener is a thread of its own that answers
 * every event FAN_ALLOW at once: an event of a process outside the
 * session's cgroup waits for one read of /proc/PID/cgroup, an event of
 * the session's for that, its /proc/TID/syscall (the open's flags: the
 * event does not say whether the file is opened for reading or writing)
 * and the path. Nothing is ever refused. The listener hands (action,
 * path) to the session's thread through a queue and an eventfd; the
 * session asks the pack's policy (compiled again from its source,
 * decide.c) and writes a record for each distinct access it would deny.
 *
 * What fanotify does not see: file systems that are not local disk or
 * memory ones (proc, sysfs, devtmpfs, network and FUSE file systems are
 * never marked: opening an event's file there could block the listener
 * or run a driver's open), memory mappings of files already open, and
 * metadata changes (rename, unlink, chmod). Closing the fanotify
 * descriptor removes every mark, also when bee-load is killed.
 */
#include "internal.h"

#include "bee_audit.h"
#include "bee_session.h"
#include "libbeec.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/fanotify.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#ifndef FAN_REPORT_TID
#define FAN_REPORT_TID 0x00000100
#endif

#define LEARN_SEEN_MAX (1u << 16)    /* distinct accesses kept per session */
#define LEARN_SYSCALL_TRIES 1000     /* reads of a thread's system call: up to ~100 ms */

struct learn_item {
	struct learn_item *next;
	int action;                  /* BEE_AUDIT_ACTION_* */
	pid_t pid;
	char path[];
};

struct bee_learn {
	int fan_fd, event_fd, stop[2];
	bool thread_up;
	pthread_t thread;
	char tag[PATH_MAX];          /* "/bee-POLICY-ID": the session's cgroup component */
	pthread_mutex_t mu;
	struct learn_item *head, **tail;
	uint64_t events, kept;       /* listener's, under mu */
	struct beec_policy pol;
	bool pol_built;
	char **seen;                 /* open addressing: "A:path" of accesses recorded */
	size_t nseen;
	uint64_t repeats;
	bool full_said;
	unsigned watched;            /* file systems marked */
};

/* The file systems whose events are read: local disk and memory ones. */
static const char *const learn_fstypes[] = {
	"ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs", "ramfs", "rootfs", "overlay", "vfat",
	"f2fs", "squashfs", "erofs", "iso9660", "zfs", "jfs", "reiserfs",
};

static bool fstype_watched(const char *t)
{
	for (size_t i = 0; i < sizeof(learn_fstypes) / sizeof(learn_fstypes[0]); i++)
		if (strcmp(t, learn_fstypes[i]) == 0)
			return true;
	return false;
}

/* ---- the listener (its own thread: no lock held while it answers) ----- */

/* 1 when pid's cgroup (v2) is the session's or below it. */
static int pid_in_session(const struct bee_learn *l, pid_t pid)
{
	char f[64], buf[4096];
	snprintf(f, sizeof(f), "/proc/%d/cgroup", (int)pid);
	int fd = open(f, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	char *v2 = strstr(buf, "0::");
	if (!v2)
		return 0;
	char *nl = strchr(v2, '\n');
	if (nl)
		*nl = '\0';
	size_t tl = strlen(l->tag);
	for (char *p = strstr(v2, l->tag); p; p = strstr(p + 1, l->tag))
		if (p[tl] == '\0' || p[tl] == '/')
			return 1;
	return 0;
}

/* The open's access from the blocked thread's system call: Read or Write
 * (O_RDWR: Read, and Write in *second), or -1 for an open that an exec
 * makes (the exec's own event covers the file and its interpreter).
 * *create: O_CREAT was asked, which writes the directory too. */
static int open_access(pid_t tid, int *second, bool *create)
{
	char f[64], buf[512];
	unsigned long long a[7] = { 0 };
	long nr;
	*second = -1;
	*create = false;
	snprintf(f, sizeof(f), "/proc/%d/syscall", (int)tid);
	/* "running" while the thread is still on its way to sleeping on the
	 * answer: asked again */
	ssize_t n = -1;
	for (int tries = 0; tries < LEARN_SYSCALL_TRIES; tries++) {
		int fd = open(f, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return BEE_AUDIT_ACTION_READ;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0 || strncmp(buf, "running", 7) != 0)
			break;
		n = -1;
		/* a busy machine: the thread is not off its CPU yet */
		if (tries < 20)
			sched_yield();
		else
			usleep(100);
	}
	if (n <= 0) {
		/* not known: both, so that the learned policy lets the tool work */
		*second = BEE_AUDIT_ACTION_WRITE;
		return BEE_AUDIT_ACTION_READ;
	}
	buf[n] = '\0';
	if (sscanf(buf, "%ld %llx %llx %llx %llx", &nr, &a[1], &a[2], &a[3], &a[4]) < 4)
		return BEE_AUDIT_ACTION_READ;
	unsigned long long flags = 0;
	switch (nr) {
	case SYS_open:
		flags = a[2];
		break;
	case SYS_openat:
		flags = a[3];
		break;
	case SYS_creat:
		flags = O_WRONLY | O_CREAT;
		break;
	case SYS_execve:
	case SYS_execveat:
		return -1;
#ifdef SYS_openat2
	case SYS_openat2: {
		/* struct open_how starts with the flags */
		uint64_t how = 0;
		struct iovec local = { &how, sizeof(how) }, remote = { (void *)(uintptr_t)a[3], sizeof(how) };
		if (syscall(SYS_process_vm_readv, tid, &local, 1, &remote, 1, 0) == (long)sizeof(how))
			flags = how;
		break;
	}
#endif
	default:
		return BEE_AUDIT_ACTION_READ;
	}
	*create = flags & O_CREAT;
	switch (flags & O_ACCMODE) {
	case O_WRONLY:
		return BEE_AUDIT_ACTION_WRITE;
	case O_RDWR:
		*second = BEE_AUDIT_ACTION_WRITE;
		return BEE_AUDIT_ACTION_READ;
	default:
		return BEE_AUDIT_ACTION_READ;
	}
}

static void enqueue(struct bee_learn *l, int action, pid_t pid, const char *path, size_t len)
{
	struct learn_item *it = malloc(sizeof(*it) + len + 1);
	if (!it)
		return;
	it->next = NULL;
	it->action = action;
	it->pid = pid;
	memcpy(it->path, path, len);
	it->path[len] = '\0';
	pthread_mutex_lock(&l->mu);
	*l->tail = it;
	l->tail = &it->next;
	l->kept++;
	pthread_mutex_unlock(&l->mu);
}

static void answer(int fan_fd, int fd)
{
	struct fanotify_response r = { .fd = fd, .response = FAN_ALLOW };
	ssize_t n;
	do
		n = write(fan_fd, &r, sizeof(r));
	while (n < 0 && errno == EINTR);
}

static void on_fan_event(struct bee_learn *l, const struct fanotify_event_metadata *m)
{
	char link[64], path[PATH_MAX];
	int second = -1, action = -1;
	bool create = false;
	bool mine = m->fd >= 0 && pid_in_session(l, m->pid);
	if (mine) {
		/* before the answer: the open's thread is still in its system call */
		action = m->mask & FAN_OPEN_EXEC_PERM ? BEE_AUDIT_ACTION_EXECUTE
						      : open_access(m->pid, &second, &create);
	}
	if (m->mask & (FAN_OPEN_PERM | FAN_OPEN_EXEC_PERM))
		answer(l->fan_fd, m->fd);
	if (mine && action >= 0) {
		snprintf(link, sizeof(link), "/proc/self/fd/%d", m->fd);
		ssize_t n = readlink(link, path, sizeof(path) - 1);
		static const char deleted[] = " (deleted)";
		if (n > 0 && path[0] == '/' &&
		    !(n > (ssize_t)sizeof(deleted) - 1 && memcmp(path + n - (sizeof(deleted) - 1), deleted,
								  sizeof(deleted) - 1) == 0)) {
			enqueue(l, action, m->pid, path, (size_t)n);
			if (second >= 0)
				enqueue(l, second, m->pid, path, (size_t)n);
			/* a file made (or perhaps made) writes its directory */
			char *slash = create ? strrchr(path, '/') : NULL;
			if (slash && slash > path)
				enqueue(l, BEE_AUDIT_ACTION_WRITE, m->pid, path, (size_t)(slash - path));
			uint64_t one = 1;
			if (write(l->event_fd, &one, sizeof(one)) < 0) {
				/* the counter is saturated: the session reads it anyway */
			}
		}
	}
	if (m->fd >= 0)
		close(m->fd);
}

static void *listener(void *arg)
{
	struct bee_learn *l = arg;
	char buf[16384] __attribute__((aligned(__alignof__(struct fanotify_event_metadata))));
	struct pollfd p[2] = { { .fd = l->fan_fd, .events = POLLIN }, { .fd = l->stop[0], .events = POLLIN } };
	for (;;) {
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (p[1].revents)
			break;
		ssize_t n = read(l->fan_fd, buf, sizeof(buf));
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0)
			break;
		const struct fanotify_event_metadata *m = (const void *)buf;
		for (; FAN_EVENT_OK(m, n); m = FAN_EVENT_NEXT(m, n)) {
			if (m->vers != FANOTIFY_METADATA_VERSION)
				continue;
			on_fan_event(l, m);
		}
		pthread_mutex_lock(&l->mu);
		l->events++;
		pthread_mutex_unlock(&l->mu);
	}
	return NULL;
}

/* ---- open ----------------------------------------------------------------- */

struct mark_ctx {
	struct bee_learn *l;
	bee_warn_fn warn;
	void *warn_ctx;
};

static int mark_one(const char *mnt, const char *fstype, void *ctx)
{
	struct mark_ctx *c = ctx;
	if (!fstype_watched(fstype))
		return 0;
	if (fanotify_mark(c->l->fan_fd, FAN_MARK_ADD | FAN_MARK_FILESYSTEM,
			  FAN_OPEN_PERM | FAN_OPEN_EXEC_PERM | FAN_ONDIR, AT_FDCWD, mnt) < 0) {
		bee_warnf(c->warn, c->warn_ctx, "learn: '%s' (%s) is not watched: %s", mnt, fstype, strerror(errno));
		return 0;
	}
	c->l->watched++;
	return 0;
}

int bee_learn_open(const struct bee_pack *p, const struct bee_manifest *m, const char *cgroup, bool watch_fs,
		   bee_warn_fn warn, void *warn_ctx, struct bee_learn **out, struct bee_error *e)
{
	struct bee_learn *l = calloc(1, sizeof(*l));
	int err;
	*out = NULL;
	if (!l)
		return bee_fail(e, BEE_STAGE_LEARN, -ENOMEM, "out of memory");
	l->fan_fd = l->event_fd = l->stop[0] = l->stop[1] = -1;
	l->tail = &l->head;
	pthread_mutex_init(&l->mu, NULL);
	*out = l;
	const char *base = strrchr(cgroup, '/');
	snprintf(l->tag, sizeof(l->tag), "%s", base ? base : cgroup);
	/* the policy's answers, from its source (as beec query gives them) */
	if ((err = bee_policy_rebuild(p, m, &l->pol, e)) < 0)
		return err;
	l->pol_built = true;
	if (!(l->seen = calloc(LEARN_SEEN_MAX, sizeof(char *))))
		return bee_fail(e, BEE_STAGE_LEARN, -ENOMEM, "out of memory");
	l->event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (l->event_fd < 0)
		return bee_fail(e, BEE_STAGE_LEARN, -errno, "eventfd: %s", strerror(errno));
	if (!watch_fs)
		return 0;
	l->fan_fd = fanotify_init(FAN_CLASS_CONTENT | FAN_CLOEXEC | FAN_NONBLOCK | FAN_REPORT_TID,
				  O_RDONLY | O_LARGEFILE | O_CLOEXEC | O_NONBLOCK);
	if (l->fan_fd < 0)
		return bee_fail(e, BEE_STAGE_LEARN, -errno,
				"fanotify_init: %s (learning under landlock needs fanotify permission events: "
				"CONFIG_FANOTIFY_ACCESS_PERMISSIONS and CAP_SYS_ADMIN)",
				strerror(errno));
	struct mark_ctx mc = { l, warn, warn_ctx };
	if ((err = bee_mountinfo_each(NULL, mark_one, &mc)) < 0)
		return bee_fail(e, BEE_STAGE_LEARN, err, "/proc/self/mountinfo: %s", strerror(-err));
	if (!l->watched)
		return bee_fail(e, BEE_STAGE_LEARN, -ENODEV, "no file system could be watched with fanotify");
	if (pipe2(l->stop, O_CLOEXEC) < 0)
		return bee_fail(e, BEE_STAGE_LEARN, -errno, "pipe: %s", strerror(errno));
	if ((err = pthread_create(&l->thread, NULL, listener, l)) != 0)
		return bee_fail(e, BEE_STAGE_LEARN, -err, "the fanotify listener: %s", strerror(err));
	l->thread_up = true;
	return 0;
}

int bee_learn_fd(const struct bee_learn *l)
{
	return l->event_fd;
}

unsigned bee_learn_watched(const struct bee_learn *l)
{
	return l->watched;
}

/* ---- the session's side ----------------------------------------------------- */

static uint64_t fnv1a(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* 1 when key was seen already; else keeps it (when there is room). */
static int seen_add(struct bee_learn *l, const char *key, bee_warn_fn warn, void *warn_ctx)
{
	size_t i = fnv1a(key) & (LEARN_SEEN_MAX - 1);
	for (; l->seen[i]; i = (i + 1) & (LEARN_SEEN_MAX - 1))
		if (strcmp(l->seen[i], key) == 0)
			return 1;
	if (l->nseen >= LEARN_SEEN_MAX / 2) {
		if (!l->full_said)
			bee_warnf(warn, warn_ctx, "learn: more than %u distinct accesses; repeats are recorded "
				  "again from here on", LEARN_SEEN_MAX / 2);
		l->full_said = true;
		return 0;
	}
	l->seen[i] = strdup(key);
	if (l->seen[i])
		l->nseen++;
	return 0;
}

static void record(struct bee_learn *l, const struct learn_item *it, struct bee_audit_log *log,
		   bee_warn_fn warn, void *warn_ctx)
{
	static const char *const actions[] = {
#define X(n, v, s) [v] = s,
		BEE_AUDIT_ACTIONS(X)
#undef X
	};
	bool exec = it->action == BEE_AUDIT_ACTION_EXECUTE;
	struct beec_answer a;
	char msg[128], key[PATH_MAX + 4];
	snprintf(key, sizeof(key), "%d:%s", it->action, it->path);
	if (seen_add(l, key, warn, warn_ctx)) {
		l->repeats++;
		return;
	}
	const char *qa = exec ? "execute" : it->action == BEE_AUDIT_ACTION_WRITE ? "write" : "read";
	if (beec_policy__query(&l->pol, exec ? "exec" : "fs", qa, it->path, &a, NULL, msg, sizeof(msg)) < 0)
		return;
	if (a.allow)
		return;
	struct bee_audit_line line = {
		.realtime_ns = bee_clock_ns(CLOCK_REALTIME), .kind = "FileSystem", .action = actions[it->action],
		.resource = it->path, .resource_len = strlen(it->path), .decision = "Deny", .pid = it->pid,
		.source = "fanotify", .reason = a.too_long ? "path too long (learning: allowed)"
					       : "not granted (learning: allowed)",
		.rule = a.nrules ? (long long)a.rules[0] : -1,
	};
	bee_audit_relay(log, &line, warn, warn_ctx);
}

void bee_learn_drain(struct bee_learn *l, struct bee_audit_log *log, bee_warn_fn warn, void *warn_ctx)
{
	uint64_t x;
	if (!l || read(l->event_fd, &x, sizeof(x)) < 0) {
		/* nothing new, or the counter was read already: the queue says */
	}
	if (!l)
		return;
	pthread_mutex_lock(&l->mu);
	struct learn_item *it = l->head;
	l->head = NULL;
	l->tail = &l->head;
	pthread_mutex_unlock(&l->mu);
	while (it) {
		struct learn_item *next = it->next;
		record(l, it, log, warn, warn_ctx);
		free(it);
		it = next;
	}
}

void bee_learn_close(struct bee_learn *l, struct bee_audit_log *log, bee_warn_fn warn, void *warn_ctx)
{
	if (!l)
		return;
	if (l->thread_up) {
		if (write(l->stop[1], "x", 1) < 0) {
			/* the pipe is ours and empty: cannot fail */
		}
		pthread_join(l->thread, NULL);
	}
	/* closing removes every mark; events still queued are allowed by the kernel */
	if (l->fan_fd >= 0)
		close(l->fan_fd);
	if (log && l->pol_built)
		bee_learn_drain(l, log, warn, warn_ctx);
	for (struct learn_item *it = l->head, *next; it; it = next) {
		next = it->next;
		free(it);
	}
	for (size_t i = 0; l->seen && i < LEARN_SEEN_MAX; i++)
		free(l->seen[i]);
	free(l->seen);
	if (l->pol_built)
		beec_policy__fini(&l->pol);
	for (int i = 0; i < 2; i++)
		if (l->stop[i] >= 0)
			close(l->stop[i]);
	if (l->event_fd >= 0)
		close(l->event_fd);
	pthread_mutex_destroy(&l->mu);
	free(l);
}
