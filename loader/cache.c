/* SPDX-License-Identifier: GPL-2.0-only */
/* cache.c: a pack loaded once, attached once, for every session of it.
 *
 * Loading a pack (the verifier on each program) and attaching it (each
 * link's first attach of its type patches the kernel's text) is most of
 * what a launch costs. So the first session of a pack loads the object
 * (bpf_load.c) and attaches it to the pack's own cgroup; every session of
 * the pack is then a child cgroup of that one, under the programs from
 * birth, and needs only its entries in the per-session maps
 * (bee_session.h): its generation, its lost counter, its own ring buffer
 * and its pins; the images are the pack's (at BEE_SESSION_SHARED) until a
 * revoke gives the session its own copy. The programs key every lookup by the task's cgroup at the
 * sessions' depth (bee_hooks.bpf.h's bee_sess); a task of a session
 * without entries is denied everything.
 *
 * What lives where, for a pack of digest D loaded for the backend B by
 * callers in the cgroup C, pinned in the bpf file system BPFFS (the key
 * K = D-B-id(C)-dev(BPFFS)):
 *
 *   C/bee-pack-NAME-R/           the pack's cgroup (R random, made anew
 *                                for each load), mode 0700; its
 *                                children are the sessions
 *   BPFFS/bee/pack-NAME-R/       mode 0: maps/ (the object's maps),
 *                                images/ (what sessions start with),
 *                                links/ (the attachments; the pins keep
 *                                them when no process holds them)
 *   STATE/packs/K.json           the record: the cgroup, the pins, the
 *                                sessions' depth; written last, so a
 *                                record means a complete load
 *   STATE/packs/K.lock           flock: exclusive to load or collect,
 *                                shared to find the load
 *   STATE/packs/K.ref            flock: shared by each live session,
 *                                whose process holds it (a crash drops
 *                                it); its mtime is the last use
 *
 * A load made inside a session (its parent cgroup is below a pack's
 * cgroup: a nested bee-load) is collected when its last session ends: the
 * enclosing session removes its cgroup tree when it ends.
 *
 * Collection (bee_packs__gc): a load no session holds (the ref lock taken
 * exclusively, without waiting) and unused for longer than the idle time
 * is detached, unpinned and its cgroup removed. Until then its links stay
 * attached to its (empty) cgroup and, under bpf-lsm, its global programs
 * stay attached and test every task's cgroup (bpf/bee_guard.bpf.h).
 */
#include "internal.h"

#include "bee_names.h"
#include "bee_session.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#define PACKS_DIR "packs"

struct bee_cache {
	char key[160];
	char dir[PATH_MAX];          /* the pins */
	char cgroup[PATH_MAX];       /* the pack's cgroup */
	int cgroup_fd;
	uint32_t level;              /* the sessions' depth */
	bool lsm;
	int ref_fd;                  /* this session's shared lock on K.ref */
	bool complete;               /* the record says the load is whole */
	bool nested;                 /* made inside a session (below a pack's cgroup) */
	char state_dir[PATH_MAX];
	char pack[PATH_MAX + 256];   /* STATE/packs/K.bpfpack: the pack's bytes, for revoke and nesting */
	int maps[BEE_MAP__COUNT];    /* the object's maps (-1: not made) */
	int *links;                  /* this session's hold on each attachment */
	size_t nlinks;
};

struct bee_slot {
	struct bee_cache *c;
	uint64_t sess;
	int audit_fd, pins_fd;
	int ring_lock;               /* the lock of the ring buffer it took from the pool */
	bool forgotten;              /* its entries are out of the maps already */
};

/* ---- names ------------------------------------------------------------------------- */

/* STATE/packs/KEY.EXT (a path too long for buf is cut short: nothing of
 * that name exists, and its open fails) */
static void packs_path(char *buf, size_t size, const char *state_dir, const char *key, const char *ext)
{
	int n = snprintf(buf, size, "%s/" PACKS_DIR "/", state_dir);
	if (n > 0 && (size_t)n < size)
		snprintf(buf + n, size - (size_t)n, "%s%s", key, ext);
}

/* ---- the record ---------------------------------------------------------------------- */

/* complete false: a load under way (or killed under way), which is removed
 * and made again, never used */
static int record_write(const char *state_dir, const struct bee_cache *c, bool complete)
{
	char path[PATH_MAX];
	json_t *o = json_pack("{s:s, s:s, s:I, s:b}", "cgroup", c->cgroup, "pins", c->dir, "level",
			      (json_int_t)c->level, "complete", complete);
	char *text = o ? json_dumps(o, JSON_SORT_KEYS) : NULL;
	json_decref(o);
	if (!text)
		return -ENOMEM;
	packs_path(path, sizeof(path), state_dir, c->key, ".json");
	int err = bee_write_atomic(path, text, strlen(text));
	free(text);
	return err;
}

static int record_read(const char *path, struct bee_cache *c)
{
	json_t *o = json_load_file(path, 0, NULL);
	const char *cg = NULL, *pins = NULL;
	json_int_t level = -1;
	int complete = 0;
	if (!o)
		return -ENOENT;
	int ok = json_unpack(o, "{s:s, s:s, s:I, s:b}", "cgroup", &cg, "pins", &pins, "level", &level, "complete",
			     &complete) == 0 && level >= 0 && level < 4096;
	if (ok) {
		c->complete = complete;
		snprintf(c->cgroup, sizeof(c->cgroup), "%s", cg);
		snprintf(c->dir, sizeof(c->dir), "%s", pins);
		c->level = (uint32_t)level;
	}
	json_decref(o);
	return ok ? 0 : -EINVAL;
}

/* ---- a load's remains ------------------------------------------------------------------ */

/* The manifest's images of the load's digest (the key's first word),
 * STATE/packs/DIGEST-*.manifest, one for each build of bee that read it:
 * they go with any load of the digest, and another load makes its own
 * again. */
static void images_remove(const char *state_dir, const char *key)
{
	char dir[PATH_MAX];
	size_t dl = strcspn(key, "-");
	snprintf(dir, sizeof(dir), "%s/" PACKS_DIR, state_dir);
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name), sl = strlen(".manifest");
		if (n > dl + 1 + sl && strncmp(de->d_name, key, dl) == 0 && de->d_name[dl] == '-' &&
		    strcmp(de->d_name + n - sl, ".manifest") == 0)
			unlinkat(dirfd(d), de->d_name, 0);
	}
	closedir(d);
}

/* Detaches and unpins a load, removes its cgroup (when no session's is
 * left in it) and its record. */
static int cache_remove(const char *state_dir, const char *key, const struct bee_cache *c, bee_warn_fn warn,
			void *ctx)
{
	char path[PATH_MAX];
	int err = 0;
	if (*c->dir && (err = bee_bpf_unpin_dir(c->dir)) < 0)
		bee_warnf(warn, ctx, "gc: pack %s: pins '%s': %s", key, c->dir, strerror(-err));
	if (*c->cgroup && rmdir(c->cgroup) < 0 && errno != ENOENT) {
		err = -errno;
		bee_warnf(warn, ctx, "gc: pack %s: cgroup '%s': %s", key, c->cgroup, strerror(errno));
	}
	packs_path(path, sizeof(path), state_dir, key, ".json");
	if (!err) {
		unlink(path);
		packs_path(path, sizeof(path), state_dir, key, ".bpfpack");
		unlink(path);
		images_remove(state_dir, key);
	}
	return err;
}

static int cache_remove_failed(const char *state_dir, const struct bee_cache *c)
{
	char path[PATH_MAX];
	packs_path(path, sizeof(path), state_dir, c->key, ".json");
	return unlink(path);
}

/* Every link pin the manifest's programs have (the global ones under
 * bpf-lsm too), and the pack's cgroup: a load whose bpffs went away, or
 * whose cgroup someone removed, is not used. */
static bool cache_whole(const struct bee_cache *c, const struct bee_manifest *m)
{
	char path[PATH_MAX + 256];
	struct stat st;
	if (!c->complete)
		return false;
	for (size_t i = 0; i < m->nhooks; i++) {
		const struct bee_mf_hook *h = &m->hooks[i];
		if ((h->lsm && !c->lsm) || strcmp(h->section, "syscall") == 0)
			continue;
		snprintf(path, sizeof(path), "%s/" BEE_PIN_LINKS "/%s", c->dir, h->program);
		if (stat(path, &st) < 0)
			return false;
	}
	return stat(c->cgroup, &st) == 0 && S_ISDIR(st.st_mode);
}

/* A session holds every attachment of its pack (the link objects, by
 * descriptor) for as long as it lives: the pins alone keep them only while
 * their bpf file system is mounted, and an unmount (an administrator's, a
 * test's teardown) would otherwise detach the programs from live sessions.
 * A pin that cannot be opened fails the launch (the load is not whole). */
static int cache_hold_links(struct bee_cache *c, const struct bee_manifest *m, struct bee_error *e)
{
	char path[PATH_MAX + 256];
	c->links = calloc(m->nhooks ? m->nhooks : 1, sizeof(*c->links));
	if (!c->links)
		return bee_fail(e, BEE_STAGE_LOAD, -ENOMEM, "out of memory");
	for (size_t i = 0; i < m->nhooks; i++) {
		const struct bee_mf_hook *h = &m->hooks[i];
		if ((h->lsm && !c->lsm) || strcmp(h->section, "syscall") == 0)
			continue;
		snprintf(path, sizeof(path), "%s/" BEE_PIN_LINKS "/%s", c->dir, h->program);
		int fd = bpf_obj_get(path);
		if (fd < 0)
			return bee_fail(e, BEE_STAGE_LOAD, -errno, "the load of pack %s lost its attachment '%s': %s",
					c->key, path, strerror(errno));
		c->links[c->nlinks++] = fd;
	}
	return 0;
}

/* ---- loading ------------------------------------------------------------------------- */

static int cache_build(const struct bee_cache_opts *o, struct bee_cache *c, struct bee_error *e)
{
	char rnd[17];
	int fd = -1, err;
	if ((err = bee_session_id_new(rnd)) < 0)
		return bee_fail(e, BEE_STAGE_CGROUP, err, "no random name: %s", strerror(-err));
	/* both named anew for each load: another registry (--state-dir) may
	 * load the same pack under the same cgroup and bpf file system */
	if (snprintf(c->cgroup, sizeof(c->cgroup), "%s/bee-pack-%s-%s", o->parent, o->m->name, rnd) >=
		    (int)sizeof(c->cgroup) ||
	    snprintf(c->dir, sizeof(c->dir), "%s/bee/pack-%s-%s", o->bpffs, o->m->name, rnd) >= (int)sizeof(c->dir))
		return bee_fail(e, BEE_STAGE_CGROUP, -ENAMETOOLONG, "the pack's cgroup or pin path is too long");
	/* the record first: a bee-load killed while it loads leaves one
	 * that the next load, or gc, removes with what it names */
	if ((err = record_write(o->state_dir, c, false)) < 0)
		return bee_fail(e, BEE_STAGE_REGISTRY, err, "cannot write the record of pack %s under '%s': %s", c->key,
				o->state_dir, strerror(-err));
	if ((err = bee_cgroup_create(c->cgroup, 0700, &fd, e)) < 0) {
		*c->cgroup = '\0';
		cache_remove_failed(o->state_dir, c);
		return err;
	}
	if ((err = bee_cgroup_level(fd, &c->level)) < 0) {
		bee_fail(e, BEE_STAGE_CGROUP, err, "cgroup '%s': cannot find its depth: %s", c->cgroup, strerror(-err));
		goto fail;
	}
	c->level++;      /* the sessions are its children */
	struct bee_bpf_opts bo = {
		.pack = o->pack, .m = o->m, .lsm = o->lsm, .cgroup_fd = fd, .cgroup = c->cgroup,
		.pin_dir = c->dir, .session_level = c->level, .sessions = BEE_PACK_SESSIONS,
		.warn = o->warn, .warn_ctx = o->warn_ctx,
	};
	struct bee_bpf *b;
	if ((err = bee_bpf_open(&bo, &b, e)) < 0)
		goto fail;
	bee_bpf_release(b);     /* the pins hold it now */
	close(fd);
	if ((err = record_write(o->state_dir, c, true)) < 0) {
		bee_fail(e, BEE_STAGE_REGISTRY, err, "cannot write the record of pack %s under '%s': %s", c->key,
			 o->state_dir, strerror(-err));
		bee_bpf_unpin_dir(c->dir);
		rmdir(c->cgroup);
		return err;
	}
	return 0;
fail:
	close(fd);
	rmdir(c->cgroup);
	*c->cgroup = '\0';
	cache_remove_failed(o->state_dir, c);
	return err;
}

static int open_pin(const char *dir, const char *sub, const char *name)
{
	char path[PATH_MAX + 64];
	snprintf(path, sizeof(path), "%s/%s/%s", dir, sub, name);
	int fd = bpf_obj_get(path);
	return fd < 0 ? -errno : fd;
}

/* The load's maps, by their pins: stage LOAD. */
static int cache_fds(struct bee_cache *c, const struct bee_manifest *m, struct bee_error *e)
{
	int err = bee_fault(BEE_STAGE_LOAD);
	if (err)
		return bee_fail(e, BEE_STAGE_LOAD, err, "pack %s: injected fault", c->key);
	for (int id = 0; id < BEE_MAP__COUNT; id++) {
		unsigned props = bee_map_props((enum bee_map_id)id);
		const char *name = bee_map_name((enum bee_map_id)id);
		if ((props & BEE_MAPF_NO_MAP) || !bee_manifest_map(m, name) || (!c->lsm && (props & BEE_MAPF_LSM_ONLY)))
			continue;
		if ((c->maps[id] = open_pin(c->dir, BEE_PIN_MAPS, name)) < 0 && c->maps[id] != -ENOENT)
			return bee_fail(e, BEE_STAGE_LOAD, c->maps[id], "pack %s: map '%s/" BEE_PIN_MAPS "/%s': %s", c->key,
					c->dir, name, strerror(-c->maps[id]));
		if (c->maps[id] < 0)
			c->maps[id] = -1;
	}
	/* every per-session map the programs look up is there */
	static const enum bee_map_id need[] = { BEE_MAP_STATE, BEE_MAP_AUDIT, BEE_MAP_LOST, BEE_MAP_NET4, BEE_MAP_NET6 };
	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++)
		if (c->maps[need[i]] < 0)
			return bee_fail(e, BEE_STAGE_LOAD, -ENOENT, "pack %s: the load has no map '%s'", c->key,
					bee_map_name(need[i]));
	return 0;
}

static int lock_open(const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	return fd < 0 ? -errno : fd;
}

/* 0 when no live session holds the load (its ref lock is free), -EBUSY. */
static int cache_unused(const char *state_dir, const char *key)
{
	char path[PATH_MAX];
	packs_path(path, sizeof(path), state_dir, key, ".ref");
	int fd = lock_open(path), err = fd < 0 ? fd : 0;
	if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) < 0)
		err = -EBUSY;
	if (fd >= 0)
		close(fd);
	return err;
}


static int lock_take(int fd, int op)
{
	while (flock(fd, op) < 0)
		if (errno != EINTR)
			return -errno;
	return 0;
}

int bee_cache_open(const struct bee_cache_opts *o, struct bee_cache **out, bool *cold, struct bee_error *e)
{
	char hex[BEE_PACK_DIGEST_HEX_LEN + 1], path[PATH_MAX], dir[PATH_MAX];
	struct stat pst, fst;
	int err, lk = -1;
	*out = NULL;
	*cold = false;
	struct bee_cache *c = calloc(1, sizeof(*c));
	if (!c)
		return bee_fail(e, BEE_STAGE_LOAD, -ENOMEM, "out of memory");
	c->cgroup_fd = c->ref_fd = -1;
	c->lsm = o->lsm;
	c->nested = strstr(o->parent, "/bee-pack-") != NULL;
	snprintf(c->state_dir, sizeof(c->state_dir), "%s", o->state_dir);
	for (int i = 0; i < BEE_MAP__COUNT; i++)
		c->maps[i] = -1;
	if (stat(o->parent, &pst) < 0 || stat(o->bpffs, &fst) < 0) {
		err = bee_fail(e, BEE_STAGE_CGROUP, -errno, "cgroup '%s' or bpffs '%s': %s", o->parent, o->bpffs,
			       strerror(errno));
		goto fail;
	}
	/* one load per pack, backend, parent cgroup and bpf file system */
	bee_pack__digest_hex(o->pack, hex);
	snprintf(c->key, sizeof(c->key), "%s-%s-%llx-%llx", hex, o->lsm ? "lsm" : "ll", (unsigned long long)pst.st_ino,
		 (unsigned long long)fst.st_dev);
	snprintf(dir, sizeof(dir), "%s/bee/pack-", o->bpffs);
	snprintf(path, sizeof(path), "%s/" PACKS_DIR, o->state_dir);
	if ((err = bee_mkdirs(path, 0700)) < 0) {
		bee_fail(e, BEE_STAGE_REGISTRY, err, "cannot create '%s': %s", path, strerror(-err));
		goto fail;
	}
	packs_path(path, sizeof(path), o->state_dir, c->key, ".lock");
	if ((lk = lock_open(path)) < 0 || (err = lock_take(lk, LOCK_SH)) < 0) {
		err = lk < 0 ? lk : err;
		bee_fail(e, BEE_STAGE_REGISTRY, err, "pack lock '%s': %s", path, strerror(-err));
		goto fail;
	}
	packs_path(path, sizeof(path), o->state_dir, c->key, ".json");
	bool whole = record_read(path, c) == 0 && strncmp(c->dir, dir, strlen(dir)) == 0 && cache_whole(c, o->m);
	if (!whole) {
		/* load it: alone, and again only if no one did meanwhile */
		if ((err = lock_take(lk, LOCK_EX)) < 0) {
			bee_fail(e, BEE_STAGE_REGISTRY, err, "pack lock: %s", strerror(-err));
			goto fail;
		}
		whole = record_read(path, c) == 0 && strncmp(c->dir, dir, strlen(dir)) == 0 && cache_whole(c, o->m);
		if (!whole) {
			if (record_read(path, c) == 0 && (err = cache_unused(o->state_dir, c->key)) < 0) {
				bee_fail(e, BEE_STAGE_LOAD, err, "the load of pack %s is in use but not whole (its pins "
					 "under '%s' or its cgroup '%s' are gone)", c->key, c->dir, c->cgroup);
				goto fail;
			}
			if (record_read(path, c) == 0)
				cache_remove(o->state_dir, c->key, c, o->warn, o->warn_ctx);
			if ((err = cache_build(o, c, e)) < 0)
				goto fail;
			*cold = true;
		}
	}
	/* this session's reference, taken before the load lock goes: a
	 * collector takes the load lock first */
	packs_path(path, sizeof(path), o->state_dir, c->key, ".ref");
	if ((c->ref_fd = lock_open(path)) < 0 || (err = lock_take(c->ref_fd, LOCK_SH)) < 0) {
		err = c->ref_fd < 0 ? c->ref_fd : err;
		bee_fail(e, BEE_STAGE_REGISTRY, err, "pack reference '%s': %s", path, strerror(-err));
		goto fail;
	}
	if ((err = cache_hold_links(c, o->m, e)) < 0)
		goto fail;
	close(lk);
	lk = -1;
	/* the pack's bytes, which its sessions' records name (revoke compiles
	 * them again, a nested launch proves its pack a subset of them): the
	 * key is their digest, so any copy of that name holds them */
	packs_path(c->pack, sizeof(c->pack), o->state_dir, c->key, ".bpfpack");
	if (access(c->pack, F_OK) < 0) {
		size_t len;
		const void *bytes = bee_pack__bytes(o->pack, &len);
		if ((err = bee_write_atomic(c->pack, bytes, len)) < 0) {
			bee_fail(e, BEE_STAGE_REGISTRY, err, "cannot copy the pack to '%s': %s", c->pack, strerror(-err));
			goto fail;
		}
	}
	if ((c->cgroup_fd = open(c->cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		err = bee_fail(e, BEE_STAGE_CGROUP, -errno, "the pack's cgroup '%s': %s", c->cgroup, strerror(errno));
		goto fail;
	}
	if ((err = cache_fds(c, o->m, e)) < 0)
		goto fail;
	/* the pack's attachments are there (stage ATTACH of a session that
	 * attaches nothing itself) */
	if ((err = bee_fault(BEE_STAGE_ATTACH)) < 0) {
		bee_fail(e, BEE_STAGE_ATTACH, err, "'%s': injected fault", c->cgroup);
		goto fail;
	}
	*out = c;
	return 0;
fail:
	if (lk >= 0)
		close(lk);
	bee_cache_close(c);
	return err;
}

const char *bee_cache_cgroup(const struct bee_cache *c)
{
	return c->cgroup;
}

const char *bee_cache_dir(const struct bee_cache *c)
{
	return c->dir;
}

const char *bee_cache_pack(const struct bee_cache *c)
{
	return c->pack;
}

static int collect(const char *state_dir, const char *key, unsigned idle_s, bee_warn_fn warn, void *warn_ctx);

void bee_cache_close(struct bee_cache *c)
{
	if (!c)
		return;
	bool nested = c->nested && c->ref_fd >= 0;
	for (int i = 0; i < BEE_MAP__COUNT; i++)
		if (c->maps[i] >= 0)
			close(c->maps[i]);
	for (size_t i = 0; i < c->nlinks; i++)
		close(c->links[i]);
	free(c->links);
	if (c->cgroup_fd >= 0)
		close(c->cgroup_fd);
	if (c->ref_fd >= 0) {
		futimens(c->ref_fd, NULL);    /* the last use, for the idle time */
		close(c->ref_fd);
	}
	/* a load inside a session ends with its last session: its cgroup is
	 * the enclosing session's to remove */
	if (nested)
		collect(c->state_dir, c->key, 0, NULL, NULL);
	free(c);
}

/* ---- a session's entries ---------------------------------------------------------------- */

static int slot_put(struct bee_slot *sl, enum bee_map_id id, const void *value, struct bee_error *e)
{
	int fd = sl->c->maps[id];
	if (fd < 0)
		return 0;
	if (bpf_map_update_elem(fd, &sl->sess, value, BPF_NOEXIST) == 0)
		return 0;
	if (errno == E2BIG)
		return bee_fail(e, BEE_STAGE_MAPS, -E2BIG, "map '%s': the pack's load serves %u sessions at once "
				"already, its limit", bee_map_name(id), BEE_PACK_SESSIONS);
	return bee_fail(e, BEE_STAGE_MAPS, -errno, "map '%s': the session's entry: %s", bee_map_name(id),
			strerror(errno));
}

/* Each pinned exec rule's file as the kernel names it now, in the
 * session's own pins map. */
static int slot_pins(struct bee_slot *sl, const struct bee_manifest *m, bee_warn_fn warn, void *warn_ctx,
		     struct bee_error *e)
{
	const struct bee_mf_map *mm = bee_manifest_map(m, bee_map_name(BEE_MAP_PINS));
	if (!mm || sl->c->maps[BEE_MAP_PINS] < 0 || !sl->c->lsm || !bee_manifest_pins(m))
		return 0;
	if ((sl->pins_fd = bee_map_create_shape(mm, e)) < 0)
		return sl->pins_fd;
	for (size_t i = 0; i < m->nrules; i++) {
		const struct bee_mf_rule *r = &m->rules[i];
		struct stat st;
		if (!r->pinned)
			continue;
		if (stat(r->text, &st) < 0) {
			/* no entry: the pin grants nothing (fail closed) */
			bee_warnf(warn, warn_ctx, "maps: pinned rule %u '%s': %s: it grants nothing", r->index, r->text,
				  strerror(errno));
			continue;
		}
		struct bee_pin_key k = { .ino = st.st_ino, .dev = bee_pin_dev(major(st.st_dev), minor(st.st_dev)) };
		struct bee_pin_value v = { .rule = r->index };
		if (bpf_map_update_elem(sl->pins_fd, &k, &v, BPF_ANY) < 0)
			return bee_fail(e, BEE_STAGE_MAPS, -errno, "map '%s': rule %u '%s': %s",
					bee_map_name(BEE_MAP_PINS), r->index, r->text, strerror(errno));
	}
	uint32_t fd = (uint32_t)sl->pins_fd;
	return slot_put(sl, BEE_MAP_PINS, &fd, e);
}

/* ---- the ring buffers' pool ------------------------------------------------------------- */

/* Each session has a ring buffer of its own: the load keeps a pool of
 * them, ring N pinned at DIR/rings/N and put at index N of bee_audit (an
 * array of maps) when it is made, taken by the session that holds
 * STATE/packs/K.ringN (flock, released by the kernel when its bee-load
 * dies) and named by its bee_state.ring. Putting an entry in a map of maps
 * (or deleting one) waits for an RCU grace period, 10-20 ms here; a
 * session's start and end write only bee_state, a plain hash, so only the
 * pool's growth pays it, and a process's first map creation (libbpf's
 * probe program, about 2 ms) is paid there too. A ring that some
 * session's state still names (a dead session gc has not cleaned) is not
 * taken; records left in a ring (a session that died with them) are
 * dropped before it is given out: they were its, and gc reports its audit
 * as lost. */
static int ring_discard(int fd)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	/* the consumer's page, the one a reader may write, and the
	 * producer's: no data page is mapped (a mapping of the data maps
	 * it twice over, page table and all) */
	uint64_t *cons = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (cons == MAP_FAILED)
		return -errno;
	const uint64_t *prod = mmap(NULL, pg, PROT_READ, MAP_SHARED, fd, (off_t)pg);
	if (prod == MAP_FAILED) {
		int err = -errno;
		munmap(cons, pg);
		return err;
	}
	/* no producer is left (the ring's lock is free and no state names
	 * it): every record up to the producer's position is whole */
	uint64_t end = __atomic_load_n(prod, __ATOMIC_ACQUIRE);
	if (__atomic_load_n(cons, __ATOMIC_RELAXED) != end)
		__atomic_store_n(cons, end, __ATOMIC_RELEASE);
	munmap((void *)prod, pg);
	munmap(cons, pg);
	return 0;
}

/* 1 when some session's state names ring n. */
static bool ring_named(int state_map, uint32_t n)
{
	uint64_t key, next, *prev = NULL;
	while (bpf_map_get_next_key(state_map, prev, &next) == 0) {
		struct bee_state st;
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(state_map, &key, &st) == 0 && st.ring == n)
			return true;
	}
	return false;
}

/* Ring fd at index n of the pool's array, unless it is there already (a
 * bee-load that died between making the ring and putting it). */
static int ring_place(struct bee_cache *c, uint32_t n, int fd, uint32_t id, struct bee_error *e)
{
	uint32_t have = 0, v = (uint32_t)fd;
	if (id && bpf_map_lookup_elem(c->maps[BEE_MAP_AUDIT], &n, &have) == 0 && have == id)
		return 0;
	if (bpf_map_update_elem(c->maps[BEE_MAP_AUDIT], &n, &v, BPF_ANY) < 0)
		return bee_fail(e, BEE_STAGE_MAPS, -errno, "map '%s': ring buffer %u of '%s': %s",
				bee_map_name(BEE_MAP_AUDIT), n, c->dir, strerror(errno));
	return 0;
}

/* A ring of the pool for the session: its fd, and its index in *ring. */
static int ring_take(struct bee_slot *sl, const struct bee_mf_map *am, uint32_t *ring, struct bee_error *e)
{
	char path[PATH_MAX + 64], sub[32];
	struct bee_cache *c = sl->c;
	snprintf(path, sizeof(path), "%s/" BEE_PIN_RINGS, c->dir);
	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return bee_fail(e, BEE_STAGE_MAPS, -errno, "cannot create '%s': %s", path, strerror(errno));
	for (uint32_t n = 0; n < BEE_PACK_SESSIONS; n++) {
		snprintf(sub, sizeof(sub), ".ring%u", n);
		packs_path(path, sizeof(path), c->state_dir, c->key, sub);
		int lk = lock_open(path);
		if (lk < 0)
			return bee_fail(e, BEE_STAGE_MAPS, lk, "ring lock '%s': %s", path, strerror(-lk));
		if (flock(lk, LOCK_EX | LOCK_NB) < 0) {
			close(lk);
			continue;
		}
		snprintf(sub, sizeof(sub), "%u", n);
		int fd = open_pin(c->dir, BEE_PIN_RINGS, sub), err = 0;
		struct bpf_map_info info = { 0 };
		if (fd == -ENOENT) {
			/* the pool grows by one */
			if ((fd = bee_map_create_shape(am, e)) < 0) {
				close(lk);
				return fd;
			}
			snprintf(path, sizeof(path), "%s/" BEE_PIN_RINGS "/%u", c->dir, n);
			if (bpf_obj_pin(fd, path) < 0)
				err = bee_fail(e, BEE_STAGE_MAPS, -errno, "ring buffer: cannot pin at '%s': %s", path,
					       strerror(errno));
		} else if (fd < 0) {
			close(lk);
			return bee_fail(e, BEE_STAGE_MAPS, fd, "ring buffer %u of '%s': %s", n, c->dir, strerror(-fd));
		} else {
			uint32_t len = sizeof(info);
			if (bpf_obj_get_info_by_fd(fd, &info, &len) < 0 || info.type != BPF_MAP_TYPE_RINGBUF ||
			    info.max_entries != am->max_entries || ring_named(c->maps[BEE_MAP_STATE], n)) {
				close(fd);
				close(lk);
				continue;
			}
			if ((err = ring_discard(fd)) < 0)
				err = bee_fail(e, BEE_STAGE_MAPS, err, "ring buffer %u of '%s': %s", n, c->dir,
					       strerror(-err));
		}
		if (!err)
			err = ring_place(c, n, fd, info.id, e);
		if (err) {
			close(fd);
			close(lk);
			return err;
		}
		sl->ring_lock = lk;
		*ring = n;
		return fd;
	}
	return bee_fail(e, BEE_STAGE_MAPS, -E2BIG, "map '%s': the pack's load serves %u sessions at once already, "
			"its limit", bee_map_name(BEE_MAP_AUDIT), BEE_PACK_SESSIONS);
}

int bee_slot_open(struct bee_cache *c, int cgroup_fd, const struct bee_manifest *m, uint32_t flags,
		  bee_warn_fn warn, void *warn_ctx, struct bee_slot **out, struct bee_error *e)
{
	struct stat st;
	int err = bee_fault(BEE_STAGE_MAPS);
	*out = NULL;
	if (err)
		return bee_fail(e, BEE_STAGE_MAPS, err, "injected fault");
	if (fstat(cgroup_fd, &st) < 0)
		return bee_fail(e, BEE_STAGE_MAPS, -errno, "the session's cgroup: %s", strerror(errno));
	struct bee_slot *sl = calloc(1, sizeof(*sl));
	if (!sl)
		return bee_fail(e, BEE_STAGE_MAPS, -ENOMEM, "out of memory");
	sl->c = c;
	sl->sess = st.st_ino;    /* a cgroup's kernfs id is its inode number */
	sl->audit_fd = sl->pins_fd = sl->ring_lock = -1;
	*out = sl;
	int ncpu = libbpf_num_possible_cpus();
	uint64_t *zeros = ncpu > 0 ? calloc((size_t)ncpu, sizeof(uint64_t)) : NULL;
	struct bee_state gen = { .gen = 1, .flags = flags };
	const struct bee_mf_map *am = bee_manifest_map(m, bee_map_name(BEE_MAP_AUDIT));
	if (!zeros || !am) {
		free(zeros);
		return bee_fail(e, BEE_STAGE_MAPS, !zeros ? -ENOMEM : -EINVAL, "the session's counters: %s",
				!zeros ? "out of memory" : "the manifest has no audit ring buffer");
	}
	/* the ring first: the state names it */
	if ((sl->audit_fd = ring_take(sl, am, &gen.ring, e)) < 0)
		err = sl->audit_fd;
	if (!err)
		err = slot_put(sl, BEE_MAP_LOST, zeros, e);
	free(zeros);
	if (!err)
		err = slot_put(sl, BEE_MAP_STATE, &gen, e);
	/* the images: the pack's, at BEE_SESSION_SHARED, until a revoke */
	if (!err)
		err = slot_pins(sl, m, warn, warn_ctx, e);
	if (!err && c->lsm && c->maps[BEE_MAP_SB] >= 0)
		err = bee_sb_refresh(c->maps[BEE_MAP_SB], warn, warn_ctx, e);
	return err;
}

uint64_t bee_slot_key(const struct bee_slot *sl)
{
	return sl->sess;
}

int bee_slot_audit_fd(const struct bee_slot *sl)
{
	return sl->audit_fd;
}

int bee_slot_lost(const struct bee_slot *sl, uint64_t *sum)
{
	return bee_bpf_percpu_sum(sl->c->maps[BEE_MAP_LOST], &sl->sess, sum);
}

/* A session's entries out of every per-session map of the load pinned at
 * dir (maps_fd NULL: opened by their pins, as gc does). */
static void forget(const int *maps_fd, const char *dir, uint64_t sess)
{
	for (int id = 0; id < BEE_MAP__COUNT; id++) {
		if (!(bee_map_props((enum bee_map_id)id) & BEE_MAPF_SESSION))
			continue;
		int fd = maps_fd ? maps_fd[id] : open_pin(dir, BEE_PIN_MAPS, bee_map_name((enum bee_map_id)id));
		if (fd < 0)
			continue;
		/* only an entry there (a session has an image of its own only after
		 * a revoke): a hash of maps' delete waits for a grace period,
		 * found or not, on older kernels */
		uint8_t v[64];
		struct bpf_map_info info = { 0 };
		uint32_t len = sizeof(info);
		/* only a map keyed by the session: the pool of rings (bee_audit,
		 * keyed by a ring's index) keeps its rings, which the session's
		 * state named */
		bool keyed = bpf_obj_get_info_by_fd(fd, &info, &len) == 0 && info.key_size == sizeof(sess);
		if (!keyed || (info.type == BPF_MAP_TYPE_HASH_OF_MAPS && bpf_map_lookup_elem(fd, &sess, v) < 0)) {
			if (!maps_fd)
				close(fd);
			continue;
		}
		bpf_map_delete_elem(fd, &sess);
		if (!maps_fd)
			close(fd);
	}
}

void bee_slot_forget(struct bee_slot *sl)
{
	if (!sl || sl->forgotten)
		return;
	forget(sl->c->maps, NULL, sl->sess);
	sl->forgotten = true;
}

void bee_slot_close(struct bee_slot *sl)
{
	if (!sl)
		return;
	bee_slot_forget(sl);
	if (sl->audit_fd >= 0)
		close(sl->audit_fd);
	if (sl->ring_lock >= 0)
		close(sl->ring_lock);    /* the ring goes back to the pool, empty */
	if (sl->pins_fd >= 0)
		close(sl->pins_fd);
	free(sl);
}

void bee_cache_forget(const char *cache_dir, uint64_t sess)
{
	forget(NULL, cache_dir, sess);
}

/* ---- a session's own copy (revoke) ------------------------------------------------------- */

/* A new map of fd's type, sizes and flags, holding what fd holds, with
 * room for extra more entries. */
static int map_copy(int fd, uint32_t extra)
{
	struct bpf_map_info info = { 0 };
	uint32_t len = sizeof(info);
	if (bpf_obj_get_info_by_fd(fd, &info, &len) < 0)
		return -errno;
	LIBBPF_OPTS(bpf_map_create_opts, mo, .map_flags = info.map_flags);
	int nfd = bpf_map_create(info.type, NULL, info.key_size, info.value_size, info.max_entries + extra, &mo);
	if (nfd < 0)
		return -errno;
	uint8_t *k = calloc(1, info.key_size + 8), *pk = NULL, *v = calloc(1, info.value_size + 8);
	int err = k && v ? 0 : -ENOMEM;
	if (!err && info.type == BPF_MAP_TYPE_ARRAY) {
		for (uint32_t i = 0; !err && i < info.max_entries; i++)
			if (bpf_map_lookup_elem(fd, &i, v) < 0 || bpf_map_update_elem(nfd, &i, v, BPF_ANY) < 0)
				err = -errno;
	} else if (!err) {
		uint8_t *next = calloc(1, info.key_size + 8);
		err = next ? 0 : -ENOMEM;
		while (!err && bpf_map_get_next_key(fd, pk, next) == 0) {
			memcpy(k, next, info.key_size);
			pk = k;
			if (bpf_map_lookup_elem(fd, k, v) == 0 && bpf_map_update_elem(nfd, k, v, BPF_NOEXIST) < 0)
				err = -errno;
		}
		free(next);
	}
	free(k);
	free(v);
	if (err) {
		close(nfd);
		return err;
	}
	return nfd;
}

int bee_session_map(const char *cache_dir, const char *session_dir, enum bee_map_id id, uint64_t sess,
		    struct bee_error *e)
{
	return bee_session_map_sized(cache_dir, session_dir, id, sess, 0, e);
}

int bee_session_map_sized(const char *cache_dir, const char *session_dir, enum bee_map_id id, uint64_t sess,
			  uint32_t extra, struct bee_error *e)
{
	const char *name = bee_map_name(id);
	int outer = open_pin(cache_dir, BEE_PIN_MAPS, name);
	if (outer < 0)
		return bee_fail(e, BEE_STAGE_SESSION, outer, "pack map '%s/" BEE_PIN_MAPS "/%s': %s", cache_dir, name,
				strerror(-outer));
	struct bpf_map_info info = { 0 };
	uint32_t len = sizeof(info), inner_id;
	if (bpf_obj_get_info_by_fd(outer, &info, &len) < 0 || info.type != BPF_MAP_TYPE_HASH_OF_MAPS)
		return outer;      /* a hash keyed by the session: the map itself */
	int own = open_pin(session_dir, BEE_PIN_MAPS, name);
	if (own >= 0 || own != -ENOENT) {
		close(outer);
		if (own < 0)
			return bee_fail(e, BEE_STAGE_SESSION, own, "map '%s/" BEE_PIN_MAPS "/%s': %s", session_dir, name,
					strerror(-own));
		return own;
	}
	/* the first change: the session's own copy of what it has now, in its
	 * slot before anything is changed in it */
	int cur = -1, err;
	uint64_t shared = BEE_SESSION_SHARED;
	if ((bpf_map_lookup_elem(outer, &sess, &inner_id) < 0 && bpf_map_lookup_elem(outer, &shared, &inner_id) < 0) ||
	    (cur = bpf_map_get_fd_by_id(inner_id)) < 0) {
		err = -errno;
		close(outer);
		return bee_fail(e, BEE_STAGE_SESSION, err, "map '%s': the session has no entry: %s", name,
				strerror(-err));
	}
	own = map_copy(cur, extra);
	close(cur);
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/" BEE_PIN_MAPS "/%s", session_dir, name);
	uint32_t ofd = (uint32_t)own;
	if (own < 0 || bpf_obj_pin(own, path) < 0 || bpf_map_update_elem(outer, &sess, &ofd, BPF_ANY) < 0) {
		err = own < 0 ? own : -errno;
		if (own >= 0) {
			unlink(path);
			close(own);
		}
		close(outer);
		return bee_fail(e, BEE_STAGE_REVOKE, err, "map '%s': cannot give the session its own copy: %s", name,
				strerror(-err));
	}
	close(outer);
	return own;
}

/* ---- collection ----------------------------------------------------------------------- */

/* Removes the load of key when no session holds it and it has been
 * unused for idle_s: 1 when removed, else 0. */
static int collect(const char *state_dir, const char *key, unsigned idle_s, bee_warn_fn warn, void *warn_ctx)
{
	char path[PATH_MAX];
	struct bee_cache c = { 0 };
	struct stat st;
	int removed = 0;
	packs_path(path, sizeof(path), state_dir, key, ".lock");
	int lk = lock_open(path), ref = -1;
	/* one being loaded, or found, now is in use */
	if (lk < 0 || flock(lk, LOCK_EX | LOCK_NB) < 0)
		goto out;
	packs_path(path, sizeof(path), state_dir, key, ".ref");
	ref = lock_open(path);
	/* a live session holds it shared: in use */
	if (ref < 0 || flock(ref, LOCK_EX | LOCK_NB) < 0)
		goto out;
	if (idle_s && fstat(ref, &st) == 0 && time(NULL) - st.st_mtime < (time_t)idle_s)
		goto out;
	packs_path(path, sizeof(path), state_dir, key, ".json");
	if (record_read(path, &c) < 0)
		unlink(path);
	else
		removed = cache_remove(state_dir, key, &c, warn, warn_ctx) == 0;
out:
	if (ref >= 0)
		close(ref);
	if (lk >= 0)
		close(lk);
	return removed;
}

int bee_packs__gc(const char *state_dir, unsigned idle_s, bee_warn_fn warn, void *warn_ctx, struct bee_error *e)
{
	char dir[PATH_MAX];
	char **keys = NULL;
	size_t n = 0;
	int cleaned = 0;
	state_dir = bee_state_dir(state_dir);
	snprintf(dir, sizeof(dir), "%s/" PACKS_DIR, state_dir);
	int err = bee_dir_json_names(dir, &keys, &n);
	if (err)
		return bee_fail(e, BEE_STAGE_REGISTRY, err, "cannot list '%s': %s", dir, strerror(-err));
	for (size_t i = 0; i < n; i++) {
		cleaned += collect(state_dir, keys[i], idle_s, warn, warn_ctx);
		free(keys[i]);
	}
	free(keys);
	return cleaned;
}
