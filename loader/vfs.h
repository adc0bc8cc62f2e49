/* SPDX-License-Identifier: GPL-2.0-only */
/* vfs.h: a session's copy-on-write overlays, inside libbee (vfs.c says
 * what lives where; vfs_cmd.c the commands, vfs_tar.c the snapshot). */
#ifndef BEE_VFS_H
#define BEE_VFS_H

#include "internal.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define BEE_VFS_MAX 8               /* overlays a session may have */

struct bee_vfs_spec {
	char dir[PATH_MAX];         /* resolved */
	bool memory;
	unsigned long long size;    /* memory: the tmpfs's cap in bytes */
};

/* "DIR", "DIR:disk", "DIR:memory", "DIR:memory=SIZE"; DIR must be an
 * existing directory other than "/". Stage USAGE. */
int bee_vfs_spec_parse(const char *arg, struct bee_vfs_spec *sp, struct bee_error *e);
bool bee_vfs_path_under(const char *path, const char *dir);

struct bee_vfs_ov {
	char dir[PATH_MAX];
	bool memory;
	unsigned long long size;
	unsigned gen;               /* the upper layer's generation (a reset adds one) */
	unsigned mounted;           /* bee's overlays stacked on dir in the session (0: disabled) */
	bool writable;              /* mounted read-write (the policy writes at, above or below dir) */
};

/* STATE/vfs/ID/vfs.json */
struct bee_vfs_record {
	char sid[32];
	char policy[80];
	char audit_log[PATH_MAX];
	char started[32];
	bool audit_detail;
	int64_t ref_ns;             /* apply refuses what changed at or after it (CLOCK_REALTIME_COARSE) */
	int64_t touched_s;          /* the last start, apply or reset: gc's age */
	pid_t init_pid;             /* 0: init not made yet */
	unsigned long long init_start;
	struct bee_vfs_ov *ov;
	size_t n;
};

int bee_vfs_record_read(const char *state_dir, const char *sid, struct bee_vfs_record *r);
int bee_vfs_record_write(const char *state_dir, const struct bee_vfs_record *r);
void bee_vfs_record_fini(struct bee_vfs_record *r);
/* init of the session runs: its overlays are mounted somewhere */
bool bee_vfs_record_live(const struct bee_vfs_record *r);
/* STATE/vfs/ID/I/WHAT.GEN */
void bee_vfs_layer(char *buf, size_t size, const char *state_dir, const char *sid, size_t i, const char *what,
		   unsigned gen);
int bee_vfs_layer_make(const char *state_dir, const char *sid, size_t i, const char *dir, unsigned gen);
int bee_vfs_remove(const char *state_dir, const char *sid, const struct bee_vfs_record *r);
int bee_vfs_rm_at(int dfd, const char *name);
int bee_vfs_rm(const char *path);
int64_t bee_vfs_coarse_ns(void);
/* One record "bee:vfs:VERB:SID" in the session's audit log (when it has one). */
void bee_vfs_audit(const struct bee_vfs_record *r, const char *verb, bool allow, const char *reason,
		   bee_warn_fn warn, void *warn_ctx);

/* The session's side (session.c): made after the registry record and the
 * audit log, before the mount namespace's plan. */
struct bee_vfs_open_opts {
	const char *const *specs;
	size_t n;
	const char *policy;
	const char *audit_log;      /* the session's, or NULL */
	bool audit_detail;
	bee_warn_fn warn;
	void *warn_ctx;
};
struct bee_vfs;
int bee_vfs_open(const char *state_dir, const char *sid, const struct bee_vfs_open_opts *o, struct bee_vfs **out,
		 struct bee_error *e);
size_t bee_vfs_count(const struct bee_vfs *v);
const char *bee_vfs_dir(const struct bee_vfs *v, size_t i);
const char *bee_vfs_root(const struct bee_vfs *v);      /* STATE/vfs/ID */
void bee_vfs_set_writable(struct bee_vfs *v, size_t i, bool w);
/* init made: its pid (and start time) recorded, what "live" means */
int bee_vfs_started(struct bee_vfs *v, pid_t init_pid);
void bee_vfs_started_audit(const struct bee_vfs *v);
/* At the session's end: the changes stay for the vfs commands; a session
 * that changed nothing leaves nothing. */
void bee_vfs_close(struct bee_vfs *v);

/* An overlay's mount (bee_mount_new: nosuid, nodev, read-only when
 * asked), moved onto target. System calls only (sys.h). */
int bee_vfs_overlay_mount(const char *lower, const char *upper, const char *work, bool rdonly,
			  const char *target);

/* A live session's overlay i from outside, through setns into its mount
 * namespace: a new overlay of generation gen stacked on DIR, or every one
 * of bee's taken away. */
int bee_vfs_live_mount(const char *state_dir, const struct bee_vfs_record *r, size_t i, unsigned gen);
int bee_vfs_live_unmount(const struct bee_vfs_record *r, size_t i);

/* vfs_cmd.c: the changes of a record's overlays, sorted */
int bee_vfs_changes(const char *state_dir, const struct bee_vfs_record *r, struct bee_vfs_change **out,
		    size_t *n);

/* vfs_tar.c */
int bee_vfs_tar_write(const char *state_dir, const struct bee_vfs_record *r, const struct bee_vfs_change *v,
		      size_t n, const char *tar_path, char *why, size_t whysize);

#endif
