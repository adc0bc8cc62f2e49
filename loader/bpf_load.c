/* SPDX-License-Identifier: GPL-2.0-only */
/* bpf_load.c: a pack's BPF object in the kernel, loaded once for every
 * session of the pack (loader/cache.c keeps it and gives each session its
 * entries).
 *
 *   load    bpf_object__open_mem of the pack's ELF (bee's one hook object,
 *           the same in every pack) specialised as the manifest says: its
 *           hooks loaded, the rest left out only where that cannot loosen
 *           the policy; every map it lists sized (value_size, max_entries;
 *           for a per-session map the inner map, a map of the manifest's
 *           shape made here, and the outer one sized for the sessions one
 *           load serves), the others not created; the .rodata constants
 *           written (the manifest's, and the sessions' cgroup depth); the
 *           LSM programs' autoload off unless the backend is bpf-lsm; then
 *           bpf_object__load
 *   maps    the images: one map each for bee_fs, bee_exec (key 0 = the
 *           automaton image) and bee_net4/6 (each record of the image is
 *           key then value), of the inner maps' shape, put in the outer map
 *           at BEE_SESSION_SHARED, which every session decides with until a
 *           revoke gives it its own (read-only to the programs)
 *   pin     every map under DIR/maps/NAME, the images under DIR/images/NAME
 *   attach  every loaded program but the global ones to the pack's cgroup,
 *           whose children are the sessions (BPF links, each pinned under
 *           DIR/links/PROG: the pins keep them attached once this process
 *           is gone, until the load is collected)
 *   guard   bpf-lsm only (stage GUARD): bee_self_cg = the pack's cgroup,
 *           bee_sb = the mount point of each superblock mounted once with
 *           its root (/proc/self/mountinfo); then the lsm/ programs
 *           (BPF_LSM_MAC) attached globally, their links pinned beside the
 *           others. They act only for tasks below the pack's cgroup
 *           (bpf/bee_guard.bpf.h).
 *
 * Nothing is attached anywhere but the pack's own cgroup, except the
 * global LSM programs, which decide nothing outside it.
 */
#include "internal.h"

#include "bee_names.h"
#include "bee_net.h"
#include "bee_session.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

struct bee_bpf {
	struct bpf_object *obj;
	struct bpf_link **links;
	size_t nlinks;
	char *pin_dir;
	bool pin_dir_made;
	bee_warn_fn warn;
	void *warn_ctx;
};

/* libbpf's messages while this thread loads: the last one is often the
 * cause a failure message needs; all warnings go to the session's warn. */
static __thread struct bee_bpf *print_to;
static __thread char last_msg[512];

static int bpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	char buf[512];
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);
	while (n > 0 && (size_t)n < sizeof(buf) && buf[n - 1] == '\n')
		buf[--n] = '\0';
	if (n > 0) {
		snprintf(last_msg, sizeof(last_msg), "%s", buf);
		if (print_to && print_to->warn)
			print_to->warn(print_to->warn_ctx, buf);
	}
	return 0;
}

static const char *map_type_name(enum bpf_map_type t)
{
	switch (t) {
	case BPF_MAP_TYPE_HASH: return "hash";
	case BPF_MAP_TYPE_ARRAY: return "array";
	case BPF_MAP_TYPE_CGROUP_ARRAY: return "cgroup_array";
	case BPF_MAP_TYPE_PERCPU_ARRAY: return "percpu_array";
	case BPF_MAP_TYPE_LPM_TRIE: return "lpm_trie";
	case BPF_MAP_TYPE_SK_STORAGE: return "sk_storage";
	case BPF_MAP_TYPE_RINGBUF: return "ringbuf";
	case BPF_MAP_TYPE_INODE_STORAGE: return "inode_storage";
	case BPF_MAP_TYPE_TASK_STORAGE: return "task_storage";
	case BPF_MAP_TYPE_PERCPU_HASH: return "percpu_hash";
	case BPF_MAP_TYPE_HASH_OF_MAPS: return "hash_of_maps";
	case BPF_MAP_TYPE_ARRAY_OF_MAPS: return "array_of_maps";
	default: return "?";
	}
}

/* The programs: the manifest's hooks are loaded (an lsm one only under
 * bpf-lsm), and a program of the object it does not list stays unloaded
 * only where that cannot loosen the policy: bee_bprm_check when no exec
 * rule is pinned (it re-checks pins only), a syscall program (tests'
 * bee_test_walk: never attached). Any other is refused: a pack cannot
 * drop file_open by leaving it out. */
static int object_programs(struct bpf_object *obj, const struct bee_manifest *m, bool lsm,
			   struct bee_error *e)
{
	struct bpf_program *prog;
	size_t seen = 0;
	bool pins = bee_manifest_pins(m);
	bpf_object__for_each_program(prog, obj) {
		const char *name = bpf_program__name(prog);
		const struct bee_mf_hook *h = bee_manifest_hook(m, name);
		bool is_lsm = bpf_program__type(prog) == BPF_PROG_TYPE_LSM;
		if (!h) {
			bool optional = (!pins && strcmp(name, bee_prog_name(BEE_PROG_BPRM_CHECK)) == 0) ||
					bpf_program__type(prog) == BPF_PROG_TYPE_SYSCALL;
			if (!optional)
				return bee_fail(e, BEE_STAGE_PACK, -EINVAL,
						"prog '%s': in the BPF object but not in the manifest's hooks", name);
			bpf_program__set_autoload(prog, false);
			continue;
		}
		if (strcmp(bpf_program__section_name(prog), h->section) != 0 || h->lsm != is_lsm)
			return bee_fail(e, BEE_STAGE_PACK, -EINVAL,
					"prog '%s': section '%s' is not the manifest's '%s'", name,
					bpf_program__section_name(prog), h->section);
		bpf_program__set_autoload(prog, lsm || !is_lsm);
		seen++;
	}
	if (seen != m->nhooks)
		return bee_fail(e, BEE_STAGE_PACK, -EINVAL,
				"the manifest lists %zu hooks, the BPF object has %zu of them", m->nhooks, seen);
	return 0;
}

/* A per-session map of the object (BEE_MAPF_SESSION) is keyed by the
 * session; the manifest gives one session's shape. For a hash of maps
 * (or bee_audit's array of maps: the pool of rings, loader/cache.c) that
 * is the inner map; for a hash of values (bee_state, bee_lost) the
 * manifest's array (or per-CPU array) of one value is a hash (per-CPU
 * hash) of such values. The shape to check and size, and the outer map to
 * size for the sessions (NULL when the map is not per session). */
static struct bpf_map *session_shape(struct bpf_map *map, const char *mtype, struct bpf_map **outer)
{
	int id = bee_map_find(bpf_map__name(map));
	*outer = NULL;
	if (id < 0 || !(bee_map_props((enum bee_map_id)id) & BEE_MAPF_SESSION))
		return map;
	*outer = map;
	if (bpf_map__type(map) == BPF_MAP_TYPE_HASH_OF_MAPS || bpf_map__type(map) == BPF_MAP_TYPE_ARRAY_OF_MAPS)
		return bpf_map__inner_map(map);
	enum bpf_map_type t = bpf_map__type(map);
	bool keyed = bpf_map__key_size(map) == sizeof(uint64_t);
	if (keyed && ((t == BPF_MAP_TYPE_HASH && strcmp(mtype, "array") == 0) ||
		      (t == BPF_MAP_TYPE_PERCPU_HASH && strcmp(mtype, "percpu_array") == 0)))
		return map;
	return NULL;
}

/* The maps: each the manifest lists, sized as it says (value_size only
 * where the object gives the value no BTF type, as for the automata's
 * byte arrays; max_entries of any); a map of the object it does not list
 * is not created, which the verifier allows only where no loaded program
 * can reach it. Type, key size and flags are the object's and must agree.
 * templ[i] is the inner map made for the manifest's map i (closed by the
 * caller once the object is loaded). */
static int object_maps(struct bpf_object *obj, const struct bee_manifest *m, bool lsm, uint32_t sessions,
		       int *templ, struct bee_error *e)
{
	for (size_t i = 0; i < m->nmaps; i++) {
		const struct bee_mf_map *mm = &m->maps[i];
		struct bpf_map *map = bpf_object__find_map_by_name(obj, mm->name), *outer;
		if (!map)
			return bee_fail(e, BEE_STAGE_PACK, -EINVAL, "map '%s': in the manifest but not in the BPF object",
					mm->name);
		struct bpf_map *shape = session_shape(map, mm->type, &outer);
		if (!shape)
			return bee_fail(e, BEE_STAGE_PACK, -EINVAL, "map '%s': the object's per-session %s cannot hold the manifest's %s",
					mm->name, map_type_name(bpf_map__type(map)), mm->type);
		bool hashed = outer == shape;     /* a hash of the manifest's values */
		uint32_t ks = hashed ? 0 : bpf_map__key_size(shape), vs = bpf_map__value_size(shape);
		uint32_t fl = bpf_map__map_flags(shape);
		const char *t = hashed ? mm->type : map_type_name(bpf_map__type(shape));
		if (strcmp(t, mm->type) != 0 || (mm->key_size && !hashed && ks != mm->key_size) || fl != mm->flags)
			return bee_fail(e, BEE_STAGE_PACK, -EINVAL,
					"map '%s': the object has %s key %u flags %#x, the manifest %s %u %#x",
					mm->name, t, ks, fl, mm->type, mm->key_size, mm->flags);
		int err = 0;
		if (outer && !hashed) {
			/* the inner map's shape is a map of the manifest's shape,
			 * made here (libbpf 1.1 cannot resize an inner map) */
			if (bpf_map__btf_value_type_id(shape) && vs != mm->value_size)
				err = -EINVAL;
			else if ((templ[i] = bee_map_create_shape(mm, e)) < 0)
				return templ[i];
			else
				err = bpf_map__set_inner_map_fd(outer, templ[i]);
		} else if (mm->value_size && vs != mm->value_size) {
			err = bpf_map__btf_value_type_id(shape) || hashed ? -EINVAL : bpf_map__set_value_size(shape, mm->value_size);
		}
		if (!err && !outer && bpf_map__max_entries(shape) != mm->max_entries)
			err = bpf_map__set_max_entries(shape, mm->max_entries);
		if (!err && outer)
			err = bpf_map__set_max_entries(outer, sessions);
		if (err)
			return bee_fail(e, BEE_STAGE_PACK, err,
					"map '%s': cannot size it as the manifest says (value %u, entries %u; "
					"the object has value %u)", mm->name, mm->value_size, mm->max_entries, vs);
	}
	/* without the LSM programs, the maps only they use are not made (nor
	 * pinned): each costs a map creation and a pin */
	struct bpf_map *map;
	bpf_object__for_each_map(map, obj) {
		const char *name = bpf_map__name(map);
		int id = bee_map_find(name);
		bool keep = bpf_map__is_internal(map) || bee_manifest_map(m, name);
		if (keep && !lsm && id >= 0 && bee_map_props((enum bee_map_id)id) & BEE_MAPF_LSM_ONLY)
			keep = false;
		if (!keep && bpf_map__set_autocreate(map, false) < 0)
			return bee_fail(e, BEE_STAGE_LOAD, -EINVAL, "map '%s': cannot leave it out", name);
	}
	return 0;
}

/* The constants: every global of the object's .rodata (const volatile in
 * bpf/bee_hooks.bpf.h) set from the manifest before load, when libbpf
 * still holds the map's initial bytes; the kernel freezes the map, so the
 * verifier reads them as known values. A global the manifest does not
 * set, or a constant the object does not have, is refused: no
 * placeholder ever reaches the kernel. */
static int object_consts(struct bpf_object *obj, const struct bee_manifest *m, uint32_t session_level,
			 struct bee_error *e)
{
	struct btf *btf = bpf_object__btf(obj);
	struct bpf_map *rodata = NULL, *map;
	size_t set = 0;
	bpf_object__for_each_map(map, obj) {
		const char *name = bpf_map__name(map);
		size_t n = strlen(name);
		if (bpf_map__is_internal(map) && n >= 7 && strcmp(name + n - 7, ".rodata") == 0)
			rodata = map;
	}
	int sec = btf && rodata ? btf__find_by_name_kind(btf, ".rodata", BTF_KIND_DATASEC) : -ENOENT;
	if (sec > 0) {
		const struct btf_type *t = btf__type_by_id(btf, (uint32_t)sec);
		const struct btf_var_secinfo *v = btf_var_secinfos(t);
		size_t size = 0;
		const void *init = bpf_map__initial_value(rodata, &size);
		uint8_t *data = init && size ? malloc(size) : NULL;
		if (!data)
			return bee_fail(e, BEE_STAGE_LOAD, -ENOMEM, "the object's .rodata: out of memory");
		memcpy(data, init, size);
		int err = 0;
		for (unsigned i = 0; i < btf_vlen(t) && !err; i++, v++) {
			const char *name = btf__name_by_offset(btf, btf__type_by_id(btf, v->type)->name_off);
			const struct bee_mf_const *c = bee_manifest_const(m, name ? name : "");
			/* the loader's own (bee_names.h BEE_LOADER_CONSTS) */
			if (name && strcmp(name, bee_loader_const_name(BEE_LCONST_SESSION_LEVEL)) == 0 &&
			    v->size == sizeof(uint32_t) && (size_t)v->offset + v->size <= size) {
				memcpy(data + v->offset, &session_level, sizeof(session_level));
				continue;
			}
			if (!c)
				err = bee_fail(e, BEE_STAGE_PACK, -EINVAL,
					       "constant '%s': in the BPF object but not in the manifest", name);
			else if (v->size != sizeof(uint32_t) || (size_t)v->offset + v->size > size)
				err = bee_fail(e, BEE_STAGE_PACK, -EINVAL,
					       "constant '%s': not a 32-bit value of the object's .rodata", name);
			else
				memcpy(data + v->offset, &c->value, sizeof(c->value));
			set++;
		}
		if (!err && (err = bpf_map__set_initial_value(rodata, data, size)) < 0)
			bee_fail(e, BEE_STAGE_LOAD, err, "the object's .rodata: cannot set it: %s", strerror(-err));
		free(data);
		if (err)
			return err;
	}
	if (set != m->nconsts)
		return bee_fail(e, BEE_STAGE_PACK, -EINVAL,
				"the manifest sets %zu constants, the BPF object has %zu of them", m->nconsts, set);
	return 0;
}

/* The object specialised as the manifest says, and nothing more. */
static int object_check(struct bpf_object *obj, const struct bee_bpf_opts *o, int *templ, struct bee_error *e)
{
	int err;
	if ((err = object_programs(obj, o->m, o->lsm, e)) < 0 ||
	    (err = object_maps(obj, o->m, o->lsm, o->sessions, templ, e)) < 0 ||
	    (err = object_consts(obj, o->m, o->session_level, e)) < 0)
		return err;
	return 0;
}

static int map_fd(struct bpf_object *obj, const char *name, struct bee_error *e)
{
	struct bpf_map *map = bpf_object__find_map_by_name(obj, name);
	int fd = map ? bpf_map__fd(map) : -ENOENT;
	if (fd < 0)
		return bee_fail(e, BEE_STAGE_MAPS, -ENOENT, "map '%s': not in the loaded object", name);
	return fd;
}

static enum bpf_map_type map_type_of(const char *name)
{
	static const enum bpf_map_type types[] = {
		BPF_MAP_TYPE_HASH, BPF_MAP_TYPE_ARRAY, BPF_MAP_TYPE_PERCPU_ARRAY, BPF_MAP_TYPE_LPM_TRIE,
		BPF_MAP_TYPE_RINGBUF,
	};
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (strcmp(map_type_name(types[i]), name) == 0)
			return types[i];
	return BPF_MAP_TYPE_UNSPEC;
}

int bee_map_create_shape(const struct bee_mf_map *mm, struct bee_error *e)
{
	enum bpf_map_type t = map_type_of(mm->type);
	LIBBPF_OPTS(bpf_map_create_opts, mo, .map_flags = mm->flags);
	if (t == BPF_MAP_TYPE_UNSPEC)
		return bee_fail(e, BEE_STAGE_MAPS, -EINVAL, "map '%s': a session's %s cannot be made", mm->name,
				mm->type);
	/* no name: libbpf would load a program first to learn whether the
	 * kernel takes one (about 2 ms here) */
	int fd = bpf_map_create(t, NULL, mm->key_size, mm->value_size, mm->max_entries, &mo);
	if (fd < 0)
		return bee_fail(e, BEE_STAGE_MAPS, -errno, "map '%s': cannot create a session's %s: %s", mm->name,
				mm->type, strerror(errno));
	return fd;
}

int bee_image_fill(int fd, const struct bee_mf_map *mm, const struct bee_pack_section_info *sec,
		   struct bee_error *e)
{
	if (strcmp(mm->type, "array") == 0) {
		uint32_t zero = 0;
		if (bpf_map_update_elem(fd, &zero, sec->data, BPF_ANY) < 0)
			return bee_fail(e, BEE_STAGE_MAPS, -errno, "map '%s': image '%s': %s", mm->name, mm->image,
					strerror(errno));
		return 0;
	}
	for (uint64_t r = 0; r < sec->elem_count; r++) {
		const uint8_t *rec = (const uint8_t *)sec->data + r * sec->elem_width;
		if (bpf_map_update_elem(fd, rec, rec + mm->key_size, BPF_NOEXIST) < 0)
			return bee_fail(e, BEE_STAGE_MAPS, -errno, "map '%s': record %llu: %s", mm->name,
					(unsigned long long)r, strerror(errno));
	}
	return 0;
}

static int image_pin(struct bee_bpf *b, int fd, const char *name, struct bee_error *e)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/" BEE_PIN_IMAGES "/%s", b->pin_dir, name);
	if (bpf_obj_pin(fd, path) < 0)
		return bee_fail(e, BEE_STAGE_PIN, -errno, "image of map '%s': cannot pin at '%s': %s", name, path,
				strerror(errno));
	return 0;
}

/* The images every session starts with: one map each, of the manifest's
 * shape, filled from the pack, pinned under DIR/images/. */
static int fill_images(struct bee_bpf *b, const struct bee_pack *p, const struct bee_manifest *m,
		       struct bee_error *e)
{
	int err = bee_fault(BEE_STAGE_MAPS);
	if (err)
		return bee_fail(e, BEE_STAGE_MAPS, err, "injected fault");
	for (size_t i = 0; i < m->nmaps; i++) {
		const struct bee_mf_map *mm = &m->maps[i];
		if (!mm->image)
			continue;
		struct bpf_map *made = bpf_object__find_map_by_name(b->obj, mm->name);
		if (!made || !bpf_map__autocreate(made))
			continue;       /* only the LSM programs read it: not made here */
		const struct bee_pack_section_info *sec = bee_pack_image(p, mm->image);
		int fd = bee_map_create_shape(mm, e);
		if (fd < 0)
			return fd;
		err = bee_image_fill(fd, mm, sec, e);
		if (!err)
			err = image_pin(b, fd, mm->name, e);
		/* the entry every session without its own copy decides with */
		uint64_t shared = BEE_SESSION_SHARED;
		uint32_t ifd = (uint32_t)fd;
		if (!err && bpf_map_update_elem(bpf_map__fd(made), &shared, &ifd, BPF_ANY) < 0)
			err = bee_fail(e, BEE_STAGE_MAPS, -errno, "map '%s': the pack's image: %s", mm->name,
				       strerror(errno));
		close(fd);
		if (err)
			return err;
	}
	return 0;
}

int bee_pin_folder_make(const char *dir, bool pack, struct bee_error *e)
{
	char path[PATH_MAX];
	int err;
	/* the folder's parent is shared; the folder is ours alone */
	snprintf(path, sizeof(path), "%s", dir);
	char *slash = strrchr(path, '/');
	if (slash) {
		*slash = '\0';
		if ((err = bee_mkdirs(path, 0700)) < 0)
			return bee_fail(e, BEE_STAGE_PIN, err, "cannot create '%s': %s", path, strerror(-err));
	}
	/* Mode 0 from the start: the tool may run as uid 0 without capabilities,
	 * and a folder no mode bit opens keeps it from BPF_OBJ_GET of the
	 * pack's links (to detach them) and maps (to widen them), as bpf(2)
	 * refused in the session (bee_bpf) does; bee-load, revoke and gc pass
	 * with CAP_DAC_OVERRIDE. Never a chmod later: a bee-load nested in a
	 * session may not change metadata under bpffs (path_chmod). */
	if (mkdir(dir, 0) < 0)
		return bee_fail(e, BEE_STAGE_PIN, -errno, "cannot create '%s': %s", dir, strerror(errno));
	static const char *const subs[] = { BEE_PIN_MAPS, BEE_PIN_IMAGES, BEE_PIN_LINKS };
	for (size_t i = 0; i < (pack ? 3 : 1); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, subs[i]);
		if (mkdir(path, 0700) < 0) {
			err = -errno;
			bee_bpf_unpin_dir(dir);
			return bee_fail(e, BEE_STAGE_PIN, err, "cannot create '%s': %s", path, strerror(-err));
		}
	}
	return 0;
}

static int pin_maps(struct bee_bpf *b, struct bee_error *e)
{
	char path[PATH_MAX];
	int err = bee_fault(BEE_STAGE_PIN);
	if (err)
		return bee_fail(e, BEE_STAGE_PIN, err, "'%s': injected fault", b->pin_dir);
	if ((err = bee_pin_folder_make(b->pin_dir, true, e)) < 0)
		return err;
	b->pin_dir_made = true;
	struct bpf_map *map;
	bpf_object__for_each_map(map, b->obj) {
		/* .rodata holds the constants, frozen: nothing to find later */
		if (!bpf_map__autocreate(map) || bpf_map__is_internal(map))
			continue;
		snprintf(path, sizeof(path), "%s/" BEE_PIN_MAPS "/%s", b->pin_dir, bpf_map__name(map));
		if ((err = bpf_map__pin(map, path)) < 0)
			return bee_fail(e, BEE_STAGE_PIN, err, "map '%s': cannot pin at '%s': %s", bpf_map__name(map),
					path, strerror(-err));
	}
	return 0;
}

/* A global LSM program (SEC "lsm/"), attached by attach_guard. */
static bool prog_global(const struct bpf_program *prog)
{
	return bpf_program__expected_attach_type(prog) == BPF_LSM_MAC;
}

static int link_pin(struct bee_bpf *b, struct bpf_link *l, const char *name, struct bee_error *e)
{
	char path[PATH_MAX];
	int err;
	snprintf(path, sizeof(path), "%s/" BEE_PIN_LINKS "/%s", b->pin_dir, name);
	if ((err = bpf_link__pin(l, path)) < 0)
		return bee_fail(e, BEE_STAGE_PIN, err, "link of prog '%s': cannot pin at '%s': %s", name, path,
				strerror(-err));
	return 0;
}

static int attach_all(struct bee_bpf *b, int cgroup_fd, const char *cgroup, struct bee_error *e)
{
	int err = bee_fault(BEE_STAGE_ATTACH);
	if (err)
		return bee_fail(e, BEE_STAGE_ATTACH, err, "'%s': injected fault", cgroup);
	struct bpf_program *prog;
	size_t n = 0;
	bpf_object__for_each_program(prog, b->obj)
		n++;
	b->links = calloc(n + 1, sizeof(*b->links));
	if (!b->links)
		return bee_fail(e, BEE_STAGE_ATTACH, -ENOMEM, "out of memory");
	bpf_object__for_each_program(prog, b->obj) {
		if (!bpf_program__autoload(prog) || prog_global(prog))
			continue;
		const char *name = bpf_program__name(prog);
		/* libbpf 1.1 attaches BPF_LSM_CGROUP through the same link_create */
		struct bpf_link *l = bpf_program__attach_cgroup(prog, cgroup_fd);
		err = libbpf_get_error(l);
		if (err)
			return bee_fail(e, BEE_STAGE_ATTACH, err, "prog '%s': failed to attach to cgroup '%s': %s",
					name, cgroup, strerror(-err));
		b->links[b->nlinks++] = l;
		if ((err = link_pin(b, l, name, e)) < 0)
			return err;
	}
	return 0;
}

/* mountinfo's octal escapes (\040 for a space) undone in place. */
static void mountinfo_unescape(char *s)
{
	char *o = s;
	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' && s[3] >= '0' &&
		    s[3] <= '7') {
			*o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
}

/* One superblock's mount point, while mountinfo is read. */
struct sb_row {
	uint32_t dev;
	bool ambiguous;             /* mounted with its root more than once, or too long */
	struct bee_sb_mount v;
};

static int sb_row_cmp(const void *a, const void *b)
{
	uint32_t x = ((const struct sb_row *)a)->dev, y = ((const struct sb_row *)b)->dev;
	return x < y ? -1 : x > y;
}

/* bee_sb: each superblock with exactly one mount of its root "/", keyed by
 * the kernel's dev_t; the others (none, or more than one such mount) get no
 * entry, so the inode hooks refuse their dentries (fail closed). Computed
 * whole from mountinfo, then written over what the map held (a mount gone
 * since loses its entry): the pack's sessions share the map, and each
 * refreshes it when it starts. */
int bee_sb_refresh(int fd, bee_warn_fn warn, void *warn_ctx, struct bee_error *e)
{
	int err = bee_fault(BEE_STAGE_GUARD);
	if (err)
		return bee_fail(e, BEE_STAGE_GUARD, err, "injected fault");
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL;
	size_t cap = 0, n = 0, ncap = 0;
	struct sb_row *rows = NULL;
	if (!f)
		return bee_fail(e, BEE_STAGE_GUARD, -errno, "cannot read /proc/self/mountinfo: %s", strerror(errno));
	while (getline(&line, &cap, f) > 0) {
		unsigned maj, min;
		char root[PATH_MAX], at[PATH_MAX];
		if (sscanf(line, "%*u %*u %u:%u %4095s %4095s", &maj, &min, root, at) != 4 ||
		    strcmp(root, "/") != 0)
			continue;
		mountinfo_unescape(at);
		uint32_t dev = bee_pin_dev(maj, min);
		struct sb_row *r = NULL;
		for (size_t i = 0; i < n && !r; i++)
			r = rows[i].dev == dev ? &rows[i] : NULL;
		if (r) {
			r->ambiguous = true;   /* a second mount of the same root */
			continue;
		}
		if (n == ncap) {
			ncap = ncap ? 2 * ncap : 64;
			struct sb_row *g = realloc(rows, ncap * sizeof(*rows));
			if (!g) {
				err = -ENOMEM;
				break;
			}
			rows = g;
		}
		r = &rows[n++];
		memset(r, 0, sizeof(*r));
		r->dev = dev;
		size_t len = strlen(at);
		r->ambiguous = len == 0 || len >= BEE_SB_PATH_MAX;   /* too long to prefix */
		if (!r->ambiguous) {
			r->v.len = (uint32_t)len;
			memcpy(r->v.path, at, len);
		}
	}
	free(line);
	fclose(f);
	if (n)
		qsort(rows, n, sizeof(*rows), sb_row_cmp);
	/* entries of mounts that are gone, or now ambiguous, go first */
	uint32_t key, next, *prev = NULL;
	while (!err && bpf_map_get_next_key(fd, prev, &next) == 0) {
		struct sb_row k = { .dev = next }, *r = n ? bsearch(&k, rows, n, sizeof(*rows), sb_row_cmp) : NULL;
		key = next;
		prev = &key;
		if ((!r || r->ambiguous) && bpf_map_delete_elem(fd, &key) == 0)
			prev = NULL;   /* deleted: walk again from the start */
	}
	size_t kept = 0;
	for (size_t i = 0; i < n && !err; i++) {
		if (rows[i].ambiguous)
			continue;
		if (kept++ == BEE_SB_MAX) {
			bee_warnf(warn, warn_ctx, "guard: more than %u mounts: the rest have no path", BEE_SB_MAX);
			break;
		}
		if (bpf_map_update_elem(fd, &rows[i].dev, &rows[i].v, BPF_ANY) < 0 && errno != E2BIG)
			err = -errno;
	}
	free(rows);
	if (err)
		return bee_fail(e, BEE_STAGE_GUARD, err, "map '%s': %s", bee_map_name(BEE_MAP_SB), strerror(-err));
	return 0;
}

/* Stage GUARD: the global programs' maps, then the programs. */
static int attach_guard(struct bee_bpf *b, int cgroup_fd, const char *cgroup, struct bee_error *e)
{
	int self = map_fd(b->obj, bee_map_name(BEE_MAP_SELF_CG), e), sb = map_fd(b->obj, bee_map_name(BEE_MAP_SB), e);
	if (self < 0 || sb < 0)
		return bee_fail(e, BEE_STAGE_GUARD, -ENOENT, "the BPF object lacks the guard's maps");
	uint32_t zero = 0, cfd = (uint32_t)cgroup_fd;
	int err = bee_sb_refresh(sb, b->warn, b->warn_ctx, e);
	if (err)
		return err;
	if (bpf_map_update_elem(self, &zero, &cfd, BPF_ANY) < 0)
		return bee_fail(e, BEE_STAGE_GUARD, -errno, "map '%s': cgroup '%s': %s",
				bee_map_name(BEE_MAP_SELF_CG), cgroup, strerror(errno));
	struct bpf_program *prog;
	bpf_object__for_each_program(prog, b->obj) {
		if (!bpf_program__autoload(prog) || !prog_global(prog))
			continue;
		const char *name = bpf_program__name(prog);
		struct bpf_link *l = bpf_program__attach_lsm(prog);
		err = libbpf_get_error(l);
		if (err)
			return bee_fail(e, BEE_STAGE_GUARD, err, "prog '%s': failed to attach: %s", name,
					strerror(-err));
		b->links[b->nlinks++] = l;
		if ((err = link_pin(b, l, name, e)) < 0)
			return err;
	}
	return 0;
}

/* Without its lsm_cgroup programs the object needs no kernel types: only
 * those programs carry CO-RE relocations, and libbpf relocates only the
 * programs it loads. Still, an object with relocations makes libbpf parse
 * the kernel's whole BTF (several MB, about 7 ms here) unless it is given
 * a BTF to use instead: an empty one, in a memfd. */
static int empty_btf_fd(void)
{
	static const struct {
		uint16_t magic;
		uint8_t version, flags;
		uint32_t hdr_len, type_off, type_len, str_off, str_len;
		char strs[4];
	} btf = { 0xeB9F, 1, 0, 24, 0, 0, 0, 1, "" };
	int fd = memfd_create("bee-empty-btf", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, &btf, 24 + 1) != 25) {
		close(fd);
		return -EIO;
	}
	return fd;
}

static void templates_close(int *fd, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (fd[i] >= 0)
			close(fd[i]);
}

int bee_bpf_open(const struct bee_bpf_opts *o, struct bee_bpf **out, struct bee_error *e)
{
	char btf_path[64];
	int btf_fd = -1, templ[64];
	for (size_t i = 0; i < sizeof(templ) / sizeof(templ[0]); i++)
		templ[i] = -1;
	struct bee_bpf *b = calloc(1, sizeof(*b));
	int err;
	*out = NULL;
	if (!b || !(b->pin_dir = strdup(o->pin_dir))) {
		free(b);
		return bee_fail(e, BEE_STAGE_LOAD, -ENOMEM, "out of memory");
	}
	b->warn = o->warn;
	b->warn_ctx = o->warn_ctx;
	print_to = b;
	last_msg[0] = '\0';
	libbpf_print_fn_t old = libbpf_set_print(bpf_print);
	if ((err = bee_fault(BEE_STAGE_LOAD)) < 0) {
		bee_fail(e, BEE_STAGE_LOAD, err, "injected fault");
		goto fail;
	}
	const struct bee_pack_section_info *elf = bee_pack__find(o->pack, BEE_PACK_ELF, NULL);
	LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = o->m->name);
	if (!o->lsm && (btf_fd = empty_btf_fd()) >= 0) {
		snprintf(btf_path, sizeof(btf_path), "/proc/self/fd/%d", btf_fd);
		oo.btf_custom_path = btf_path;
	}
	b->obj = bpf_object__open_mem(elf->data, elf->size, &oo);
	err = libbpf_get_error(b->obj);
	if (err) {
		b->obj = NULL;
		bee_fail(e, BEE_STAGE_LOAD, err, "BPF object '%s': cannot open: %s%s%s", elf->name, strerror(-err),
			 *last_msg ? ": " : "", last_msg);
		goto fail;
	}
	if (o->m->nmaps > sizeof(templ) / sizeof(templ[0])) {
		err = bee_fail(e, BEE_STAGE_PACK, -E2BIG, "the manifest lists %zu maps", o->m->nmaps);
		goto fail;
	}
	if ((err = object_check(b->obj, o, templ, e)) < 0)
		goto fail;
	err = bpf_object__load(b->obj);
	if (err) {
		bee_fail(e, BEE_STAGE_LOAD, err, "BPF object '%s': %s%s%s", elf->name, strerror(-err),
			 *last_msg ? ": " : "", last_msg);
		goto fail;
	}
	if ((err = pin_maps(b, e)) < 0 || (err = fill_images(b, o->pack, o->m, e)) < 0 ||
	    (err = attach_all(b, o->cgroup_fd, o->cgroup, e)) < 0 ||
	    (o->lsm && (err = attach_guard(b, o->cgroup_fd, o->cgroup, e)) < 0))
		goto fail;
	libbpf_set_print(old);
	print_to = NULL;
	if (btf_fd >= 0)
		close(btf_fd);
	templates_close(templ, sizeof(templ) / sizeof(templ[0]));
	*out = b;
	return 0;
fail:
	libbpf_set_print(old);
	print_to = NULL;
	if (btf_fd >= 0)
		close(btf_fd);
	templates_close(templ, sizeof(templ) / sizeof(templ[0]));
	bee_bpf_close(b);
	return err;
}

int bee_bpf_percpu_sum(int fd, const void *key, uint64_t *sum)
{
	int ncpu = libbpf_num_possible_cpus();
	if (ncpu <= 0)
		return ncpu < 0 ? ncpu : -EINVAL;
	uint64_t *v = calloc((size_t)ncpu, sizeof(*v));
	if (!v)
		return -ENOMEM;
	int err = bpf_map_lookup_elem(fd, key, v) < 0 ? -errno : 0;
	*sum = 0;
	for (int i = 0; !err && i < ncpu; i++)
		*sum += v[i];
	free(v);
	return err;
}

static void rmdir_files(const char *dir, bool links)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char path[PATH_MAX];
	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (links) {
			int fd = bpf_obj_get(path);
			if (fd >= 0) {
				bpf_link_detach(fd);
				close(fd);
			}
		}
		unlink(path);
	}
	closedir(d);
	rmdir(dir);
}

int bee_bpf_unpin_dir(const char *pin_dir)
{
	char path[PATH_MAX];
	if (access(pin_dir, F_OK) < 0)
		return errno == ENOENT ? 0 : -errno;
	snprintf(path, sizeof(path), "%s/" BEE_PIN_LINKS, pin_dir);
	rmdir_files(path, true);
	snprintf(path, sizeof(path), "%s/" BEE_PIN_MAPS, pin_dir);
	rmdir_files(path, false);
	snprintf(path, sizeof(path), "%s/" BEE_PIN_IMAGES, pin_dir);
	rmdir_files(path, false);
	snprintf(path, sizeof(path), "%s/" BEE_PIN_RINGS, pin_dir);
	rmdir_files(path, false);
	return rmdir(pin_dir) < 0 && errno != ENOENT ? -errno : 0;
}

void bee_bpf_release(struct bee_bpf *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->nlinks; i++) {
		bpf_link__disconnect(b->links[i]);   /* the pin keeps it attached */
		bpf_link__destroy(b->links[i]);
	}
	free(b->links);
	bpf_object__close(b->obj);
	free(b->pin_dir);
	free(b);
}

void bee_bpf_close(struct bee_bpf *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->nlinks; i++) {
		bpf_link__unpin(b->links[i]);
		bpf_link__destroy(b->links[i]);   /* detaches */
	}
	free(b->links);
	if (b->obj) {
		struct bpf_map *map;
		bpf_object__for_each_map(map, b->obj)
			if (bpf_map__is_pinned(map))
				bpf_map__unpin(map, NULL);
		bpf_object__close(b->obj);
	}
	/* whatever is left in the folder (a pin made before a failure) goes too */
	if (b->pin_dir_made)
		bee_bpf_unpin_dir(b->pin_dir);
	free(b->pin_dir);
	free(b);
}
