/* SPDX-License-Identifier: GPL-2.0-only */
/* sysinfo.c: where cgroup v2 and bpffs are mounted (from
 * /proc/self/mountinfo, never assumed), the caller's own cgroup, and a
 * process's identity (pid and start time, so a reused pid is not taken
 * for a live bee-load). */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* mountinfo escapes space, tab, newline and backslash as \ooo */
static void mi_unescape(char *s)
{
	char *w = s;
	for (char *r = s; *r; r++) {
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' &&
		    r[3] >= '0' && r[3] <= '7') {
			*w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
			r += 3;
		} else {
			*w++ = *r;
		}
	}
	*w = '\0';
}

struct mi_entry {
	char *dev, *root, *mnt, *fstype;   /* dev: "major:minor" */
};

/* Splits one mountinfo line in place. */
static int mi_split(char *line, struct mi_entry *m)
{
	char *f[6];
	char *save = NULL, *p = line;
	for (int i = 0; i < 6; i++) {
		f[i] = strtok_r(p, " ", &save);
		p = NULL;
		if (!f[i])
			return -1;
	}
	/* optional fields up to "-", then fstype */
	char *t;
	while ((t = strtok_r(NULL, " ", &save)) && strcmp(t, "-") != 0)
		;
	if (!t || !(m->fstype = strtok_r(NULL, " ", &save)))
		return -1;
	m->dev = f[2];
	m->root = f[3];
	m->mnt = f[4];
	mi_unescape(m->root);
	mi_unescape(m->mnt);
	return 0;
}

/* ---- the mount table ---------------------------------------------------------------------
 *
 * A session's open asks for it four times (the cgroup2 and bpffs mounts,
 * init's mount plan, the Landlock walk's aliased devices), and each
 * reading has the kernel print every mount again: it is read once and
 * again only when it changed. The kernel marks an open mountinfo file
 * (POLLPRI) at each change of its namespace's table since the file was
 * read or last polled. The file is this process's own: a fork (another
 * pid) opens its own, and one whose number now names another file (closed
 * under libbee by its host) is left alone and opened again. */

static pthread_mutex_t mi_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	int fd;
	pid_t pid;
	dev_t dev;
	ino_t ino;
	char *text;                 /* the table as last read, '\0' at its end */
	size_t cap;
} mi_table = { .fd = -1 };

static int mi_read_all(int fd)
{
	size_t len = 0;
	if (lseek(fd, 0, SEEK_SET) < 0)
		return -errno;
	for (;;) {
		if (mi_table.cap - len < 4096) {
			char *t = realloc(mi_table.text, mi_table.cap + 8192);
			if (!t)
				return -ENOMEM;
			mi_table.text = t;
			mi_table.cap += 8192;
		}
		ssize_t n = read(fd, mi_table.text + len, mi_table.cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		len += (size_t)n;
	}
	mi_table.text[len] = '\0';
	return 0;
}

/* A copy of the mount table, the caller's to free. */
static int mi_copy_table(char **out)
{
	int err = 0;
	struct stat st;
	pthread_mutex_lock(&mi_lock);
	bool ours = mi_table.fd >= 0 && mi_table.pid == getpid() && fstat(mi_table.fd, &st) == 0 &&
		    st.st_dev == mi_table.dev && st.st_ino == mi_table.ino;
	if (!ours) {
		int fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st) < 0) {
			err = -errno;
			if (fd >= 0)
				close(fd);
			mi_table.fd = -1;
			goto out;
		}
		mi_table.fd = fd;
		mi_table.pid = getpid();
		mi_table.dev = st.st_dev;
		mi_table.ino = st.st_ino;
	}
	struct pollfd p = { .fd = mi_table.fd, .events = POLLPRI };
	/* ours: its last reading worked (a failed one closes it) */
	if (!ours || poll(&p, 1, 0) != 0)
		err = mi_read_all(mi_table.fd);
	if (!err && !(*out = strdup(mi_table.text)))
		err = -ENOMEM;
	if (err) {
		/* ours: read it whole next time */
		close(mi_table.fd);
		mi_table.fd = -1;
	}
out:
	pthread_mutex_unlock(&mi_lock);
	return err;
}

/* Calls fn for each mount of fstype (NULL: every mount); stops when fn
 * returns non-zero. */
static int mi_each(const char *fstype, int (*fn)(const struct mi_entry *, void *), void *ctx)
{
	char *text = NULL, *save = NULL;
	int r = mi_copy_table(&text);
	if (r)
		return r;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct mi_entry m;
		if (mi_split(line, &m) == 0 && (!fstype || strcmp(m.fstype, fstype) == 0) && (r = fn(&m, ctx)) != 0)
			break;
	}
	free(text);
	return r;
}

struct mi_copy {
	char *mnt, *root;
	size_t mntsize, rootsize;
	const char *want;   /* a mount point to look for, or NULL for the first */
};

static int mi_take(const struct mi_entry *m, void *ctx)
{
	struct mi_copy *c = ctx;
	if (c->want && strcmp(c->want, m->mnt) != 0)
		return 0;
	snprintf(c->mnt, c->mntsize, "%s", m->mnt);
	if (c->root)
		snprintf(c->root, c->rootsize, "%s", m->root);
	return 1;
}

int bee_cgroup2_mount(char *mnt, size_t mntsize, char *root, size_t rootsize)
{
	struct mi_copy c = { mnt, root, mntsize, rootsize, NULL };
	int r = mi_each("cgroup2", mi_take, &c);
	return r == 1 ? 0 : r < 0 ? r : -ENOENT;
}

int bee_is_bpffs(const char *path)
{
	char buf[4096];
	struct mi_copy c = { buf, NULL, sizeof(buf), 0, path };
	return mi_each("bpf", mi_take, &c) == 1;
}

/* Only the system's bpf file system: another bpffs in the mount table is
 * somebody's own (a test's, a container's), unmounted when its owner is
 * done, and bee's pins must not live or die with it (bpffs.c mounts bee's
 * own under the state directory instead). */
int bee_bpffs_find(char *out, size_t size)
{
	if (!bee_is_bpffs("/sys/fs/bpf"))
		return -ENOENT;
	snprintf(out, size, "/sys/fs/bpf");
	return 0;
}

int bee_cgroup_self(char *out, size_t size)
{
	return bee_cgroup_of(0, out, size);
}

int bee_cgroup_of(pid_t pid, char *out, size_t size)
{
	char mnt[4096], root[4096], proc[64];
	int r = bee_cgroup2_mount(mnt, sizeof(mnt), root, sizeof(root));
	if (r)
		return r;
	char *text = NULL;
	if (pid > 0)
		snprintf(proc, sizeof(proc), "/proc/%d/cgroup", (int)pid);
	else
		snprintf(proc, sizeof(proc), "/proc/self/cgroup");
	r = bee_read_file(proc, &text, NULL);
	if (r)
		return r;
	r = -ENOENT;
	for (char *line = text, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (strncmp(line, "0::", 3) != 0)
			continue;
		const char *cg = line + 3;
		/* the mount shows the hierarchy from its root: strip it */
		size_t rl = strlen(root);
		if (strcmp(root, "/") != 0) {
			if (strncmp(cg, root, rl) != 0 || (cg[rl] != '/' && cg[rl] != '\0')) {
				r = -EXDEV;   /* our cgroup is outside what the mount shows */
				break;
			}
			cg += rl;
		}
		while (*cg == '/')
			cg++;
		int n = *cg ? snprintf(out, size, "%s/%s", mnt, cg) : snprintf(out, size, "%s", mnt);
		r = n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
		break;
	}
	free(text);
	return r;
}

unsigned long long bee_pid_starttime(pid_t pid)
{
	char path[64], *text = NULL;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (bee_read_file(path, &text, NULL))
		return 0;
	/* comm may hold spaces and parentheses: fields restart after the last ')' */
	char *p = strrchr(text, ')');
	unsigned long long st = 0;
	/* a zombie has ended: field 3, the state, is Z (or X) */
	if (p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X'))
		p = NULL;
	if (p) {
		int field = 2;
		for (char *tok = strtok(p + 1, " "); tok; tok = strtok(NULL, " ")) {
			if (++field == 22) {
				st = strtoull(tok, NULL, 10);
				break;
			}
		}
	}
	free(text);
	return st;
}

int bee_pid_alive(pid_t pid, unsigned long long starttime)
{
	if (pid <= 0)
		return 0;
	unsigned long long st = bee_pid_starttime(pid);
	return st != 0 && st == starttime;
}

struct mi_any {
	int (*fn)(const char *mnt, const char *fstype, void *ctx);
	void *ctx;
};

static int mi_any_call(const struct mi_entry *m, void *ctx)
{
	struct mi_any *a = ctx;
	return a->fn(m->mnt, m->fstype, a->ctx);
}

int bee_mountinfo_each(const char *fstype, int (*fn)(const char *mnt, const char *fstype, void *ctx), void *ctx)
{
	struct mi_any a = { fn, ctx };
	return mi_each(fstype, mi_any_call, &a);
}

struct mi_dev {
	dev_t dev;
	bool again;   /* met twice, or mounted from below its root */
};

struct mi_devs {
	struct mi_dev *v;
	size_t n, cap;
};

static int mi_dev_note(const struct mi_entry *m, void *ctx)
{
	struct mi_devs *d = ctx;
	unsigned maj, min;
	if (sscanf(m->dev, "%u:%u", &maj, &min) != 2)
		return -EINVAL;
	dev_t dev = makedev(maj, min);
	bool whole = strcmp(m->root, "/") == 0;
	for (size_t i = 0; i < d->n; i++) {
		if (d->v[i].dev == dev) {
			d->v[i].again = true;
			return 0;
		}
	}
	if (d->n == d->cap) {
		size_t cap = d->cap ? 2 * d->cap : 32;
		struct mi_dev *v = realloc(d->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		d->v = v;
		d->cap = cap;
	}
	d->v[d->n++] = (struct mi_dev){ dev, !whole };
	return 0;
}

int bee_mount_devs_aliased(dev_t **out, size_t *n)
{
	struct mi_devs d = { 0 };
	int r = mi_each(NULL, mi_dev_note, &d);
	dev_t *v = r == 0 ? malloc((d.n ? d.n : 1) * sizeof(*v)) : NULL;
	size_t k = 0;
	for (size_t i = 0; v && i < d.n; i++)
		if (d.v[i].again)
			v[k++] = d.v[i].dev;
	free(d.v);
	*out = v;
	*n = k;
	return r ? r : v ? 0 : -ENOMEM;
}
