/* SPDX-License-Identifier: GPL-2.0-only */
/* bee_guard.bpf.h: the global BPF LSM programs, part of bee's one hook
 * object (bee_hooks.bpf.h includes it after its helpers).
 *
 * The 10 lsm_cgroup slots are taken (bee_hooks.bpf.h), so the hooks below
 * are SEC("lsm/HOOK") programs (BPF_LSM_MAC): the loader attaches them
 * globally with bpf_program__attach_lsm, under the bpf-lsm backend only.
 * Every one starts with one test, bpf_current_task_under_cgroup on
 * bee_self_cg (the pack's cgroup, whose children are its sessions, filled
 * by the loader), and allows at once
 * when current is in none of the pack's sessions: that one helper
 * call is what every other process of the machine pays (tools/vm/bench).
 * Nested sessions: each session's programs run, so their decisions
 * intersect. They return the hook's default to allow (0; 1 for the xattr
 * hooks, see there) and a negative errno to deny (BPF_LSM_MAC's convention,
 * not lsm_cgroup's 1/0).
 *
 *   bee_path_chmod       lsm/path_chmod       chmod, fchmod: write right
 *   bee_path_chown       lsm/path_chown       chown, fchown, lchown: write right
 *   bee_path_truncate    lsm/path_truncate    truncate, ftruncate: write right
 *   bee_inode_setattr    lsm/inode_setattr    utimes (times only): write right
 *   bee_inode_setxattr   lsm/inode_setxattr   setxattr, POSIX ACLs: write right
 *   bee_inode_removexattr lsm/inode_removexattr  removexattr: write right
 *   bee_file_receive     lsm/file_receive     SCM_RIGHTS, pidfd_getfd: the
 *                                             file passes the policy for its f_mode
 *                                             (but for the session's init: an
 *                                             exec's stdio, bee_current_is_init)
 *   bee_task_kill        lsm/task_kill        signals: targets in the session only
 *   bee_bpf              lsm/bpf              bpf(2): refused unless [syscalls]
 *                                             allow names "bpf"
 *   bee_inode_getattr    lsm/inode_getattr    stat, fstat, statx: refused when
 *                                             an explicit deny matches
 *   bee_inode_getxattr   lsm/inode_getxattr   getxattr: the same
 *   bee_inode_listxattr  lsm/inode_listxattr  listxattr: the same
 *   bee_path_notify      lsm/path_notify      inotify_add_watch, fanotify_mark:
 *                                             the same
 *
 * Errors: EACCES for files (what a permission check of the VFS answers),
 * EPERM for signals and bpf(2) (what a missing capability answers). A
 * learning session (bee-load run --learn, bee_learning) records a file
 * hook's denial and allows, as the lsm_cgroup hooks do; task_kill and bpf
 * keep denying while learning: they guard what is outside the session
 * (bee-load, other processes, bee's maps), not the policy's files.
 *
 * Paths. bpf_d_path is allowed only in the hooks of the kernel's sleepable
 * list (6.1: file_receive is, path_chmod, path_chown and path_truncate are
 * not, and the inode hooks have no struct path at all). So the metadata
 * hooks build the path themselves, a bounded walk (bpf_loop, at most
 * BEE_WALK_DEPTH steps) from the end of a per-CPU buffer: for a struct path
 * dentry->d_parent up to the mount's root, then struct mount's
 * mnt_mountpoint and mnt_parent, up to the namespace's root mount; for a
 * dentry alone up to its superblock's root, then the mount point of that
 * superblock from bee_sb (bee_session.h). A superblock bee_sb does not know
 * (mounted more than once with its root, mounted after the session started,
 * the session's own /proc) has no path: refused, reason "mount point not
 * known". A walk longer than BEE_PATH_MAX - 1 bytes or deeper than
 * BEE_WALK_DEPTH components is refused as too long. Like d_path, the walk
 * names the path in current's mount namespace; unlike d_path, a deleted
 * file keeps the name it had.
 *
 * inode_setattr judges only a change of times without a change of mode,
 * owner or size: chmod, chown and truncate reach it after their path hook
 * (which judged them with a path bpf_d_path-free walk of a real mount), and
 * the kernel's own mode changes (suid bits dropped on a write) come from a
 * file open for writing, which file_open judged.
 *
 * file_receive: a file of a kernel-internal mount (pipes, sockets, eventfds,
 * memfds and other anonymous inodes: SB_KERNMOUNT) never passes file_open
 * either and is received; any other needs what file_open would ask for its
 * f_mode (READ for reading or for neither, WRITE for writing).
 *
 * task_kill: the target's cgroup v2 must be current's session cgroup or
 * below it (its ancestor at the sessions' depth, bee_session_level,
 * followed up through css.parent at most BEE_CGROUP_DEPTH_MAX levels, is
 * current's session, by id): another session of the same pack is outside. Signals
 * the kernel sends itself (SIGCHLD to a parent, SIGPIPE, a fault) never
 * reach the hook. Recorded as Process Write, "pid:N", the signal as detail.
 *
 * bpf: recorded as Process Execute, resource "bpf", the command as detail.
 *
 * Hidden means hidden (docs/decisions.md): inode_getattr, inode_getxattr,
 * inode_listxattr and path_notify refuse an object whose path an explicit
 * [fs] deny matches, and only such an object: its fs state carries
 * BEE_PERM_DENIED (the compiler's IR_PERM_DENIED mark, which no grant
 * gives), so `ls -l` of files the policy merely does not grant keeps
 * working. Recorded as FileSystem Read, reason "hidden by a deny rule";
 * an allowed look is not a decision of the policy's and is never recorded,
 * whatever [audit] decisions says (every stat would be a record). The
 * walk's failures: too long or too deep is refused like the other hooks';
 * a dentry of the xattr hooks whose superblock bee_sb does not know is
 * not judged (allowed), since no deny can be shown to match it and
 * refusing would break `ls -l` there (ls reports a failed ACL lookup).
 */
#ifndef BEE_GUARD_BPF_H
#define BEE_GUARD_BPF_H

#include "bee_syscalls.h"

/* BEE_SYSCALLS_ALLOWED: the policy's [syscalls] bits, a constant the
 * loader sets (bee_hooks.bpf.h, "what the loader sets") */
#ifndef BEE_SYSCALLS_ALLOWED
#error "bee_guard.bpf.h is included by bee_hooks.bpf.h, which defines BEE_SYSCALLS_ALLOWED"
#endif

#define BEE_MAP_TYPE_CGROUP_ARRAY 8

/* Steps of a path walk: components plus mount crossings. */
#define BEE_WALK_DEPTH 256
/* Longest component the walk copies (NAME_MAX). */
#define BEE_WALK_NAME_MAX 255
/* The walk builds b[pos, BEE_WALK_END) backwards; the buffer holds a copy
 * of BEE_WALK_NAME_MAX bytes at any masked position. */
#define BEE_WALK_END (BEE_PATH_MAX - 1)
#define BEE_WALK_MASK (BEE_PATH_MAX - 1)
#define BEE_WALK_SIZE (2 * BEE_PATH_MAX)

_Static_assert(BEE_SB_PATH_MAX - 1 <= BEE_WALK_NAME_MAX, "a mount point is copied like a name");

struct {
	__uint(type, BEE_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} bee_self_cg SEC(".maps");

struct {
	__uint(type, BEE_MAP_TYPE_HASH);
	__uint(max_entries, BEE_SB_MAX);
	__uint(map_flags, BPF_F_RDONLY_PROG);
	__type(key, __u32);
	__type(value, struct bee_sb_mount);
} bee_sb SEC(".maps");

struct bee_walk_buf {
	__u8 b[BEE_WALK_SIZE];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bee_walk_buf);
} bee_walk SEC(".maps");

/* 1 when current is in a session of this pack (below the pack's cgroup):
 * the first test of every program here. */
static __always_inline int bee_in_session(void)
{
	return bpf_current_task_under_cgroup(&bee_self_cg, 0) == 1;
}

/* 1 when current is pid 1 of its own pid namespace. In a session that is
 * the session's init alone (a tool can make no pid namespace: no
 * capability, no user namespace), which receives the descriptors an exec's
 * client passes for its tool's stdin, stdout and stderr (loader/launch.c):
 * they reach the tool as a run's tool gets bee-load's, by inheritance. */
static __always_inline int bee_current_is_init(void)
{
	struct task_struct *t = (struct task_struct *)bpf_get_current_task();
	struct pid *p = BPF_CORE_READ(t, thread_pid);
	struct upid u = { .nr = 0 };
	unsigned int level;

	if (!p)
		return 0;
	level = BPF_CORE_READ(p, level);
	if (level == 0 || level > 32)
		return 0;
	if (bpf_core_read(&u, sizeof(u), &p->numbers[level]) < 0)
		return 0;
	return u.nr == 1;
}

/* ---- the path walk --------------------------------------------------------- */

/* Kernel pointers as numbers: read through CO-RE, compared, never dereferenced. */
struct bee_walk_ctx {
	__u64 mnt;               /* struct mount *; 0: a dentry alone, stop at its sb root */
	__u64 d;                 /* struct dentry * */
	__u32 pos;               /* the path is b[pos, BEE_WALK_END) */
	__s32 state;             /* 0 walking, 1 at the root, -1 too long or failed */
};

static long bee_walk_step(__u32 i, void *data)
{
	struct bee_walk_ctx *c = data;
	struct dentry *d = (struct dentry *)c->d, *parent;
	struct mount *mnt = (struct mount *)c->mnt;
	const unsigned char *name;
	struct bee_walk_buf *w;
	__u32 zero = 0, len, pos;

	if (mnt && d == BPF_CORE_READ(mnt, mnt.mnt_root)) {
		struct mount *up = BPF_CORE_READ(mnt, mnt_parent);
		if (!up || up == mnt) {
			c->state = 1;   /* the namespace's root mount */
			return 1;
		}
		c->d = (__u64)BPF_CORE_READ(mnt, mnt_mountpoint);
		c->mnt = (__u64)up;
		return 0;
	}
	parent = BPF_CORE_READ(d, d_parent);
	if (!parent || parent == d) {
		c->state = 1;   /* a superblock's root */
		return 1;
	}
	w = bpf_map_lookup_elem(&bee_walk, &zero);
	len = BPF_CORE_READ(d, d_name.len);
	name = BPF_CORE_READ(d, d_name.name);
	pos = c->pos;
	if (!w || len == 0 || len > BEE_WALK_NAME_MAX || len + 1 > pos) {
		c->state = -1;
		return 1;
	}
	pos -= len;
	if (bpf_probe_read_kernel(&w->b[pos & BEE_WALK_MASK], len & BEE_WALK_NAME_MAX, name) < 0) {
		c->state = -1;
		return 1;
	}
	pos--;
	w->b[pos & BEE_WALK_MASK] = '/';
	c->pos = pos;
	c->d = (__u64)parent;
	return 0;
}

/* The path of (mnt, d) into sc->path, or of d alone with its superblock's
 * mount point (mnt 0). Returns its length, -1 when it is too long or too
 * deep, -2 when d's superblock has no known mount point. */
static __always_inline int bee_walk_path(struct vfsmount *vmnt, struct dentry *d,
					 struct bee_scratch *sc)
{
	struct bee_walk_ctx c = { .d = (__u64)d, .pos = BEE_WALK_END, .state = 0 };
	const struct bee_sb_mount *at = 0;
	struct bee_walk_buf *w;
	__u32 zero = 0, pos, n;

	if (vmnt) {
		c.mnt = (__u64)vmnt - bpf_core_field_offset(struct mount, mnt);
	} else {
		__u32 dev = BPF_CORE_READ(d, d_sb, s_dev);
		at = bpf_map_lookup_elem(&bee_sb, &dev);
		if (!at)
			return -2;
	}
	bpf_loop(BEE_WALK_DEPTH, bee_walk_step, &c, 0);
	w = bpf_map_lookup_elem(&bee_walk, &zero);
	if (c.state != 1 || !w)
		return -1;
	pos = c.pos;
	if (at && at->len > 1) {
		__u32 plen = at->len;
		if (plen > BEE_SB_PATH_MAX - 1 || plen > pos)
			return -1;
		pos -= plen;
		if (bpf_probe_read_kernel(&w->b[pos & BEE_WALK_MASK], plen & BEE_WALK_NAME_MAX,
					  at->path) < 0)
			return -1;
	}
	if (pos > BEE_WALK_END)
		return -1;
	n = BEE_WALK_END - pos;
	if (n == 0) {
		sc->path[0] = '/';
		return 1;
	}
	if (bpf_probe_read_kernel(sc->path, n & BEE_WALK_MASK, &w->b[pos & BEE_WALK_MASK]) < 0)
		return -1;
	return (int)n;
}

/* ---- decisions ------------------------------------------------------------- */

/* The fs automaton's answer for the scratch path of length len (or the
 * walk's failure): fills the record, returns 1 when want is granted. */
static __always_inline int bee_guard_fs_decide(struct bee_scratch *sc, int len, __u32 want)
{
	struct bee_audit_event *ev = &sc->ev;
	__u64 r;
	__u32 perms;

	ev->want = want;
	if (len == -2) {
		ev->reason = BEE_AUDIT_REASON_NO_MOUNT;
		return 0;
	}
	if (len < 0) {
		ev->reason = BEE_AUDIT_REASON_TOO_LONG;
		return 0;
	}
	ev->path_len = (__u16)len;
	r = bee_walk_fs((struct bee_path_bytes *)sc->path, (__u32)len, bee_sess());
	perms = BEE_WALK_PERMS(r);
	ev->have = perms;
	ev->detail = BEE_WALK_STATE(r);
	if ((perms & want) != want) {
		ev->reason = BEE_AUDIT_REASON_NOT_GRANTED;
		/* the action names the permission that was missing */
		if ((want & BEE_PERM_READ) && !(perms & BEE_PERM_READ))
			ev->action = BEE_AUDIT_ACTION_READ;
		return 0;
	}
	ev->reason = BEE_AUDIT_REASON_GRANTED;
	return 1;
}

/* Ends a file decision: the race check, the record, the errno (a
 * learning session's denial, recorded, is allowed: complain mode covers
 * these hooks as it does the lsm_cgroup ones, or an O_TRUNC open that
 * file_open let through would fail here, in path_truncate). */
static __always_inline int bee_guard_fs_end(struct bee_scratch *sc, __u64 seq, int allow)
{
	if (!bee_scratch_intact(sc, seq)) {
		allow = 0;
		sc->ev.reason = BEE_AUDIT_REASON_INTERNAL;
	}
	sc->ev.decision = allow ? BEE_AUDIT_ALLOW : BEE_AUDIT_DENY;
	if (bee_audit_wanted(sc->ev.decision)) {
		bee_audit_stamp(&sc->ev);
		bee_audit_send_scratch(sc);
	}
	return allow || bee_learning() ? 0 : -BEE_EACCES;
}

/* A metadata change of the object (vmnt, d), or of d alone (vmnt NULL):
 * it needs the write right. */
static __always_inline int bee_guard_write(struct vfsmount *vmnt, struct dentry *d, __u8 hook)
{
	struct bee_scratch *sc = bee_scratch_get();
	struct inode *inode;
	__u64 seq;
	int len;

	if (!sc)
		return -BEE_EACCES;
	seq = bee_scratch_claim(sc);
	bee_event_init(&sc->ev, hook, BEE_AUDIT_KIND_FILESYSTEM, BEE_AUDIT_ACTION_WRITE,
		       BEE_AUDIT_RES_PATH);
	inode = BPF_CORE_READ(d, d_inode);
	if (inode) {
		sc->ev.file.ino = BPF_CORE_READ(inode, i_ino);
		sc->ev.file.dev = BPF_CORE_READ(inode, i_sb, s_dev);
	}
	len = bee_walk_path(vmnt, d, sc);
	return bee_guard_fs_end(sc, seq, bee_guard_fs_decide(sc, len, BEE_PERM_WRITE));
}

/* ---- metadata -------------------------------------------------------------- */

SEC("lsm/path_chmod")
int BPF_PROG(bee_path_chmod, const struct path *path, unsigned short mode)
{
	if (!bee_in_session())
		return 0;
	return bee_guard_write(path->mnt, path->dentry, BEE_AUDIT_HOOK_PATH_CHMOD);
}

SEC("lsm/path_chown")
int BPF_PROG(bee_path_chown, const struct path *path, unsigned int uid, unsigned int gid)
{
	if (!bee_in_session())
		return 0;
	return bee_guard_write(path->mnt, path->dentry, BEE_AUDIT_HOOK_PATH_CHOWN);
}

SEC("lsm/path_truncate")
int BPF_PROG(bee_path_truncate, const struct path *path)
{
	if (!bee_in_session())
		return 0;
	return bee_guard_write(path->mnt, path->dentry, BEE_AUDIT_HOOK_PATH_TRUNCATE);
}

/* times only: mode, owner and size had their path hook (see above) */
SEC("lsm/inode_setattr")
int BPF_PROG(bee_inode_setattr, struct dentry *dentry, struct iattr *attr)
{
	unsigned int valid;

	if (!bee_in_session())
		return 0;
	valid = attr->ia_valid;
	if (!(valid & (BEE_ATTR_ATIME | BEE_ATTR_MTIME)) ||
	    (valid & (BEE_ATTR_MODE | BEE_ATTR_UID | BEE_ATTR_GID | BEE_ATTR_SIZE)))
		return 0;
	return bee_guard_write(0, dentry, BEE_AUDIT_HOOK_INODE_SETATTR);
}

/* The xattr hooks allow with 1, not 0: security_inode_setxattr and
 * security_inode_removexattr run the capability checks (cap_inode_setxattr:
 * CAP_SYS_ADMIN for security.*) only when every LSM answered 1, "not mine";
 * a 0 would skip them, for every process of the machine. */
#define BEE_XATTR_PASS 1

SEC("lsm/inode_setxattr")
int BPF_PROG(bee_inode_setxattr, void *idmap, struct dentry *dentry, const char *name,
	     const void *value, unsigned long size, int flags)
{
	if (!bee_in_session())
		return BEE_XATTR_PASS;
	return bee_guard_write(0, dentry, BEE_AUDIT_HOOK_INODE_SETXATTR) ?: BEE_XATTR_PASS;
}

SEC("lsm/inode_removexattr")
int BPF_PROG(bee_inode_removexattr, void *idmap, struct dentry *dentry, const char *name)
{
	if (!bee_in_session())
		return BEE_XATTR_PASS;
	return bee_guard_write(0, dentry, BEE_AUDIT_HOOK_INODE_REMOVEXATTR) ?: BEE_XATTR_PASS;
}

/* ---- hidden means hidden --------------------------------------------------- */

/* A look at the metadata of (vmnt, d), or of d alone (vmnt NULL): refused
 * only when an explicit deny matches its path (see the head of this file).
 * One subprogram for the four hooks (not inlined): the pack carries it once. */
static __attribute__((noinline)) int bee_guard_hidden(struct vfsmount *vmnt, struct dentry *d,
						     __u8 hook)
{
	struct bee_scratch *sc;
	struct inode *inode;
	__u64 seq, r;
	__u32 perms;
	int len;

	if (BPF_CORE_READ(d, d_sb, s_flags) & BEE_SB_KERNMOUNT)
		return 0;   /* a pipe, a socket, an anonymous inode: no path to hide */
	sc = bee_scratch_get();
	if (!sc)
		return -BEE_EACCES;
	seq = bee_scratch_claim(sc);
	len = bee_walk_path(vmnt, d, sc);
	if (len == -2)
		return 0;
	bee_event_init(&sc->ev, hook, BEE_AUDIT_KIND_FILESYSTEM, BEE_AUDIT_ACTION_READ,
		       BEE_AUDIT_RES_PATH);
	sc->ev.want = BEE_PERM_READ;
	inode = BPF_CORE_READ(d, d_inode);
	if (inode) {
		sc->ev.file.ino = BPF_CORE_READ(inode, i_ino);
		sc->ev.file.dev = BPF_CORE_READ(inode, i_sb, s_dev);
	}
	if (len < 0) {
		sc->ev.reason = BEE_AUDIT_REASON_TOO_LONG;
		return bee_guard_fs_end(sc, seq, 0);
	}
	sc->ev.path_len = (__u16)len;
	r = bee_walk_fs((struct bee_path_bytes *)sc->path, (__u32)len, bee_sess());
	perms = BEE_WALK_PERMS(r);
	if (!(perms & BEE_PERM_DENIED)) {
		/* a preempting user may have changed the path under the walk */
		if (bee_scratch_intact(sc, seq))
			return 0;
		return bee_guard_fs_end(sc, seq, 0);
	}
	sc->ev.have = perms;
	sc->ev.detail = BEE_WALK_STATE(r);
	sc->ev.reason = BEE_AUDIT_REASON_HIDDEN;
	return bee_guard_fs_end(sc, seq, 0);
}

SEC("lsm/inode_getattr")
int BPF_PROG(bee_inode_getattr, const struct path *path)
{
	if (!bee_in_session())
		return 0;
	return bee_guard_hidden(path->mnt, path->dentry, BEE_AUDIT_HOOK_INODE_GETATTR);
}

SEC("lsm/inode_getxattr")
int BPF_PROG(bee_inode_getxattr, struct dentry *dentry, const char *name)
{
	if (!bee_in_session())
		return 0;
	return bee_guard_hidden(0, dentry, BEE_AUDIT_HOOK_INODE_GETXATTR);
}

SEC("lsm/inode_listxattr")
int BPF_PROG(bee_inode_listxattr, struct dentry *dentry)
{
	if (!bee_in_session())
		return 0;
	return bee_guard_hidden(0, dentry, BEE_AUDIT_HOOK_INODE_LISTXATTR);
}

/* inotify_add_watch and fanotify_mark (an inode's, a mount's or a file
 * system's mark: the path named) */
SEC("lsm/path_notify")
int BPF_PROG(bee_path_notify, const struct path *path, __u64 mask, unsigned int obj_type)
{
	if (!bee_in_session())
		return 0;
	return bee_guard_hidden(path->mnt, path->dentry, BEE_AUDIT_HOOK_PATH_NOTIFY);
}

/* ---- descriptors from outside ---------------------------------------------- */

SEC("lsm/file_receive")
int BPF_PROG(bee_file_receive, struct file *file)
{
	struct bee_scratch *sc;
	struct inode *inode;
	__u32 want;
	__u64 seq;

	if (!bee_in_session() || bee_current_is_init())
		return 0;
	inode = file->f_inode;
	if (inode->i_sb->s_flags & BEE_SB_KERNMOUNT)
		return 0;   /* a pipe, a socket, an anonymous inode: no path to judge */
	sc = bee_scratch_get();
	if (!sc)
		return -BEE_EACCES;
	seq = bee_scratch_claim(sc);
	want = bee_open_want(file->f_mode, 0);
	bee_event_init(&sc->ev, BEE_AUDIT_HOOK_FILE_RECEIVE, BEE_AUDIT_KIND_FILESYSTEM,
		       (want & BEE_PERM_WRITE) ? BEE_AUDIT_ACTION_WRITE : BEE_AUDIT_ACTION_READ,
		       BEE_AUDIT_RES_PATH);
	bee_file_id(inode, &sc->ev);
	return bee_guard_fs_end(sc, seq, bee_guard_fs_decide(sc, bee_path_of(file, sc), want));
}

/* ---- signals --------------------------------------------------------------- */

/* Nesting below the session cgroup that task_kill follows up; a target
 * deeper than this is refused (fail closed). */
#define BEE_CGROUP_DEPTH_MAX 32

/* 1 when cgroup cg is current's session cgroup or below it: its ancestor
 * at the sessions' depth, reached through css.parent, is current's
 * session. */
static __always_inline int bee_cgroup_in_session(struct cgroup *cg)
{
	__u64 self_off = bpf_core_field_offset(struct cgroup, self);
	__u64 sess = bee_sess();
	int level, up;

	if (!sess || !cg)
		return 0;
	level = BPF_CORE_READ(cg, level);
	if (level < 0 || (__u32)level < bee_session_level)
		return 0;
	up = level - (int)bee_session_level;
	for (int i = 0; i < BEE_CGROUP_DEPTH_MAX; i++) {
		if (i == up)
			return cg && BPF_CORE_READ(cg, kn, id) == sess;
		struct cgroup_subsys_state *css = BPF_CORE_READ(cg, self.parent);
		if (!css)
			return 0;
		cg = (struct cgroup *)((char *)css - self_off);
	}
	return 0;
}

SEC("lsm/task_kill")
int BPF_PROG(bee_task_kill, struct task_struct *p, struct kernel_siginfo *info, int sig,
	     const struct cred *cred)
{
	struct bee_scratch *sc;
	__u64 seq;

	if (!bee_in_session())
		return 0;
	if (bee_cgroup_in_session(BPF_CORE_READ(p, cgroups, dfl_cgrp)))
		return 0;
	if (!bee_audit_wanted(BEE_AUDIT_DENY))
		return -BEE_EPERM;
	sc = bee_scratch_get();
	if (!sc)
		return -BEE_EPERM;
	seq = bee_scratch_claim(sc);
	bee_event_init(&sc->ev, BEE_AUDIT_HOOK_TASK_KILL, BEE_AUDIT_KIND_PROCESS,
		       BEE_AUDIT_ACTION_WRITE, BEE_AUDIT_RES_PATH);
	sc->ev.reason = BEE_AUDIT_REASON_OTHER_CGROUP;
	sc->ev.detail = (__u32)sig;
	sc->ev.path_len = bee_pid_text(sc, (__u32)BPF_CORE_READ(p, tgid));
	bee_audit_stamp(&sc->ev);
	/* a record raced by a preempting user is dropped, the decision stands */
	if (bee_scratch_intact(sc, seq))
		bee_audit_send_scratch(sc);
	return -BEE_EPERM;
}

/* ---- bpf(2) ---------------------------------------------------------------- */

SEC("lsm/bpf")
int BPF_PROG(bee_bpf, int cmd, void *attr, unsigned int size)
{
	struct bee_audit_event ev;

	if (!bee_in_session())
		return 0;
	if (BEE_SYSCALLS_ALLOWED & (1u << BEE_SYSCALLS_BPF))
		return 0;
	if (bee_audit_wanted(BEE_AUDIT_DENY)) {
		bee_event_init(&ev, BEE_AUDIT_HOOK_BPF, BEE_AUDIT_KIND_PROCESS,
			       BEE_AUDIT_ACTION_EXECUTE, BEE_AUDIT_RES_NONE);
		ev.reason = BEE_AUDIT_REASON_SYSCALL;
		ev.detail = (__u32)cmd;
		bee_audit_stamp(&ev);
		bee_audit_send(&ev, sizeof(ev));
	}
	return -BEE_EPERM;
}

#endif
