/* SPDX-License-Identifier: GPL-2.0-only */
/* bpf_load.c: the pack's BPF object in the kernel, for one session.
 *
 *   load    bpf_object__open_mem of the pack's ELF (bee's one hook object,
 *           the same in every pack) specialised as the manifest says: its
 *           hooks loaded, the rest left out only where that cannot loosen
 *           the policy; every map it lists sized (value_size, max_entries),
 *           the others not created; the .rodata constants written; the LSM
 *           programs' autoload off unless the backend is bpf-lsm; then
 *           bpf_object__load
 *   maps    bee_fs, bee_exec: key 0 = the automaton image; bee_net4/6:
 *           each record of the image is key then value; bee_pins: the
 *           (dev, ino) of each pinned exec rule's file, stat'ed now;
 *           bee_state: generation 1
 *   pin     every map under PIN_DIR/maps/NAME
 *   attach  every loaded program but the global ones to the session cgroup
 *           (BPF links, which the kernel detaches when the last reference
 *           goes), each link pinned under PIN_DIR/links/PROG so that revoke
 *           and gc can find the session from another process
 *   guard   bpf-lsm only (stage GUARD): bee_self_cg = the session cgroup,
 *           bee_guard = its id and depth, bee_sb = the mount point of each
 *           superblock mounted once with its root (/proc/self/mountinfo);
 *           then the lsm/ programs (BPF_LSM_MAC) attached globally, their
 *           links pinned beside the others. They act only for tasks in the
 *           session cgroup (bpf/bee_guard.bpf.h).
 *
 * Nothing is attached anywhere but the session's own cgroup, except the
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

/* The maps: each the manifest lists, sized as it says (value_size only
 * where the object gives the value no BTF type, as for the automata's
 * byte arrays; max_entries of any); a map of the object it does not list
 * is not created, which the verifier allows only where no loaded program
 * can reach it. Type, key size and flags are the object's and must agree. */
static int object_maps(struct bpf_object *obj, const struct bee_manifest *m, bool lsm,
		       struct bee_error *e)
{
	for (size_t i = 0; i < m->nmaps; i++) {
		const struct bee_mf_map *mm = &m->maps[i];
		struct bpf_map *map = bpf_object__find_map_by_name(obj, mm->name);
		if (!map)
			return bee_fail(e, BEE_STAGE_PACK, -EINVAL, "map '%s': in the manifest but not in the BPF object",
					mm->name);
		uint32_t ks = bpf_map__key_size(map), vs = bpf_map__value_size(map);
		uint32_t fl = bpf_map__map_flags(map);
		const char *t = map_type_name(bpf_map__type(map));
		if (strcmp(t, mm->type) != 0 || (mm->key_size && ks != mm->key_size) || fl != mm->flags)
			return bee_fail(e, BEE_STAGE_PACK, -EINVAL,
					"map '%s': the object has %s key %u flags %#x, the manifest %s %u %#x",
					mm->name, t, ks, fl, mm->type, mm->key_size, mm->flags);
		int err = 0;
		if (mm->value_size && vs != mm->value_size)
			err = bpf_map__btf_value_type_id(map) ? -EINVAL : bpf_map__set_value_size(map, mm->value_size);
		if (!err && bpf_map__max_entries(map) != mm->max_entries)
			err = bpf_map__set_max_entries(map, mm->max_entries);
		if (err)
			return bee_fail(e, BEE_STAGE_PACK, err,
					"map '%s': cannot size it as the manifest says (value %u, entries %u; "
					"the object has value %u)", mm->name, mm->value_size, mm->max_entries, vs);
	}
	/* without the LSM programs, the maps only they use are not made (nor
	 * pinned): each costs a map creation and a pin at every launch */
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
static int object_consts(struct bpf_object *obj, const struct bee_manifest *m, struct bee_error *e)
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
static int object_check(struct bpf_object *obj, const struct bee_manifest *m, bool lsm,
			struct bee_error *e)
{
	int err;
	if ((err = object_programs(obj, m, lsm, e)) < 0 || (err = object_maps(obj, m, lsm, e)) < 0 ||
	    (err = object_consts(obj, m, e)) < 0)
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

/* Each pinned exec rule's file as the kernel names it now. */
static int fill_pins(struct bee_bpf *b, const struct bee_manifest *m, struct bee_error *e)
{
	int fd = map_fd(b->obj, bee_map_name(BEE_MAP_PINS), e);
	if (fd < 0)
		return fd;
	for (size_t i = 0; i < m->nrules; i++) {
		const struct bee_mf_rule *r = &m->rules[i];
		struct stat st;
		if (!r->pinned)
			continue;
		if (stat(r->text, &st) < 0) {
			/* no entry: the pin grants nothing (fail closed) */
			bee_warnf(b->warn, b->warn_ctx, "maps: pinned rule %u '%s': %s: it grants nothing", r->index,
				  r->text, strerror(errno));
			continue;
		}
		struct bee_pin_key k = { .ino = st.st_ino, .dev = bee_pin_dev(major(st.st_dev), minor(st.st_dev)) };
		struct bee_pin_value v = { .rule = r->index };
		if (bpf_map_update_elem(fd, &k, &v, BPF_ANY) < 0)
			return bee_fail(e, BEE_STAGE_MAPS, -errno, "map '%s': rule %u '%s': %s",
					bee_map_name(BEE_MAP_PINS), r->index, r->text, strerror(errno));
	}
	return 0;
}

static int fill_maps(struct bee_bpf *b, const struct bee_pack *p, const struct bee_manifest *m,
		     struct bee_error *e)
{
	int err = bee_fault(BEE_STAGE_MAPS);
	if (err)
		return bee_fail(e, BEE_STAGE_MAPS, err, "injected fault");
	for (size_t i = 0; i < m->nmaps; i++) {
		const struct bee_mf_map *mm = &m->maps[i];
		if (!mm->image)
			continue;
		const struct bpf_map *made = bpf_object__find_map_by_name(b->obj, mm->name);
		if (made && !bpf_map__autocreate(made))
			continue;       /* only the LSM programs read it: not made here */
		const struct bee_pack_section_info *s = bee_pack_image(p, mm->image);
		int fd = map_fd(b->obj, mm->name, e);
		if (fd < 0)
			return fd;
		if (strcmp(mm->type, "array") == 0) {
			uint32_t zero = 0;
			if (bpf_map_update_elem(fd, &zero, s->data, BPF_ANY) < 0)
				return bee_fail(e, BEE_STAGE_MAPS, -errno, "map '%s': image '%s': %s", mm->name,
						mm->image, strerror(errno));
			continue;
		}
		for (uint64_t r = 0; r < s->elem_count; r++) {
			const uint8_t *rec = (const uint8_t *)s->data + r * s->elem_width;
			if (bpf_map_update_elem(fd, rec, rec + mm->key_size, BPF_NOEXIST) < 0)
				return bee_fail(e, BEE_STAGE_MAPS, -errno, "map '%s': record %llu: %s", mm->name,
						(unsigned long long)r, strerror(errno));
		}
	}
	err = fill_pins(b, m, e);
	if (err)
		return err;
	int fd = map_fd(b->obj, bee_map_name(BEE_MAP_STATE), e);
	uint32_t zero = 0;
	struct bee_state st = { .gen = 1 };
	if (fd < 0)
		return fd;
	if (bpf_map_update_elem(fd, &zero, &st, BPF_ANY) < 0)
		return bee_fail(e, BEE_STAGE_MAPS, -errno, "map '%s': %s", bee_map_name(BEE_MAP_STATE),
				strerror(errno));
	return 0;
}

static int pin_maps(struct bee_bpf *b, struct bee_error *e)
{
	char path[PATH_MAX];
	int err = bee_fault(BEE_STAGE_PIN);
	if (err)
		return bee_fail(e, BEE_STAGE_PIN, err, "'%s': injected fault", b->pin_dir);
	/* the folder's parent may be shared by sessions; the folder is ours alone */
	snprintf(path, sizeof(path), "%s", b->pin_dir);
	char *slash = strrchr(path, '/');
	if (slash) {
		*slash = '\0';
		if ((err = bee_mkdirs(path, 0700)) < 0)
			return bee_fail(e, BEE_STAGE_PIN, err, "cannot create '%s': %s", path, strerror(-err));
	}
	/* Mode 0 from the start: the tool may run as uid 0 without capabilities,
	 * and a folder no mode bit opens keeps it from BPF_OBJ_GET of the
	 * session's links (to detach them) and maps (to widen them), as bpf(2)
	 * refused in the session (bee_bpf) does; bee-load, revoke and gc pass
	 * with CAP_DAC_OVERRIDE. Never a chmod later: a bee-load nested in a
	 * session may not change metadata under bpffs (path_chmod). */
	if (mkdir(b->pin_dir, 0) < 0)
		return bee_fail(e, BEE_STAGE_PIN, -errno, "cannot create '%s': %s", b->pin_dir, strerror(errno));
	b->pin_dir_made = true;
	snprintf(path, sizeof(path), "%s/" BEE_PIN_MAPS, b->pin_dir);
	if (mkdir(path, 0700) < 0)
		return bee_fail(e, BEE_STAGE_PIN, -errno, "cannot create '%s': %s", path, strerror(errno));
	snprintf(path, sizeof(path), "%s/" BEE_PIN_LINKS, b->pin_dir);
	if (mkdir(path, 0700) < 0)
		return bee_fail(e, BEE_STAGE_PIN, -errno, "cannot create '%s': %s", path, strerror(errno));
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

/* The session cgroup's depth below the cgroup2 root: "..", "../..", ...
 * until the file system changes (or a directory is its own parent, at a
 * root of its own). fstatat, never an open: a nested bee-load runs under
 * its parent session's file_open, which need not grant the cgroup tree. */
static int cgroup_level(int cgroup_fd, uint32_t *level)
{
	char rel[3 * 256] = "..";
	struct stat st, up;
	*level = 0;
	if (fstat(cgroup_fd, &st) < 0)
		return -errno;
	for (size_t n = 2; n + 3 < sizeof(rel); n += 3) {
		if (fstatat(cgroup_fd, rel, &up, 0) < 0)
			return -errno;
		if (up.st_dev != st.st_dev || up.st_ino == st.st_ino)
			return 0;
		st = up;
		++*level;
		memcpy(rel + n, "/..", 4);
	}
	return -ELOOP;
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

/* bee_sb: each superblock with exactly one mount of its root "/", keyed by
 * the kernel's dev_t; the others (none, or more than one such mount) get no
 * entry, so the inode hooks refuse their dentries (fail closed). */
static int fill_sb(int fd, bee_warn_fn warn, void *warn_ctx, struct bee_error *e)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL;
	size_t cap = 0;
	int err = 0;
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
		struct bee_sb_mount v = { 0 };
		if (bpf_map_lookup_elem(fd, &dev, &v) == 0) {
			/* a second mount of the same root: ambiguous, no entry */
			v.len = 0;
			if (bpf_map_update_elem(fd, &dev, &v, BPF_EXIST) < 0) {
				err = -errno;
				break;
			}
			continue;
		}
		size_t n = strlen(at);
		if (n == 0 || n >= BEE_SB_PATH_MAX) {
			v.len = 0;   /* too long to prefix: kept, so that it stays ambiguous */
		} else {
			v.len = (uint32_t)n;
			memcpy(v.path, at, n);
		}
		if (bpf_map_update_elem(fd, &dev, &v, BPF_NOEXIST) < 0) {
			if (errno == E2BIG) {
				bee_warnf(warn, warn_ctx, "guard: more than %u mounts: the rest have no path", BEE_SB_MAX);
				break;
			}
			err = -errno;
			break;
		}
	}
	free(line);
	fclose(f);
	if (err)
		return bee_fail(e, BEE_STAGE_GUARD, err, "map '%s': %s", bee_map_name(BEE_MAP_SB), strerror(-err));
	/* entries marked ambiguous or too long go */
	uint32_t key, next, *prev = NULL;
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		struct bee_sb_mount v;
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &v) == 0 && v.len == 0 && bpf_map_delete_elem(fd, &key) == 0)
			prev = NULL;   /* deleted: walk again from the start */
	}
	return 0;
}

/* Stage GUARD: the global programs' maps, then the programs. */
static int attach_guard(struct bee_bpf *b, int cgroup_fd, const char *cgroup, struct bee_error *e)
{
	int err = bee_fault(BEE_STAGE_GUARD);
	if (err)
		return bee_fail(e, BEE_STAGE_GUARD, err, "'%s': injected fault", cgroup);
	int self = map_fd(b->obj, bee_map_name(BEE_MAP_SELF_CG), e), gfd = map_fd(b->obj, bee_map_name(BEE_MAP_GUARD), e);
	int sb = map_fd(b->obj, bee_map_name(BEE_MAP_SB), e);
	if (self < 0 || gfd < 0 || sb < 0)
		return bee_fail(e, BEE_STAGE_GUARD, -ENOENT, "the BPF object lacks the guard's maps");
	uint32_t zero = 0, cfd = (uint32_t)cgroup_fd;
	struct stat st;
	struct bee_guard g = { 0 };
	if (fstat(cgroup_fd, &st) < 0 || (err = cgroup_level(cgroup_fd, &g.cg_level)) < 0)
		return bee_fail(e, BEE_STAGE_GUARD, err ? err : -errno, "cgroup '%s': cannot find its depth: %s",
				cgroup, strerror(err ? -err : errno));
	g.cg_id = st.st_ino;   /* a cgroup's kernfs id is its inode number */
	if (bpf_map_update_elem(gfd, &zero, &g, BPF_ANY) < 0)
		return bee_fail(e, BEE_STAGE_GUARD, -errno, "map '%s': %s", bee_map_name(BEE_MAP_GUARD),
				strerror(errno));
	if ((err = fill_sb(sb, b->warn, b->warn_ctx, e)) < 0)
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

int bee_bpf_open(const struct bee_bpf_opts *o, struct bee_bpf **out, struct bee_error *e)
{
	char btf_path[64];
	int btf_fd = -1;
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
	if ((err = object_check(b->obj, o->m, o->lsm, e)) < 0)
		goto fail;
	err = bpf_object__load(b->obj);
	if (err) {
		bee_fail(e, BEE_STAGE_LOAD, err, "BPF object '%s': %s%s%s", elf->name, strerror(-err),
			 *last_msg ? ": " : "", last_msg);
		goto fail;
	}
	if ((err = fill_maps(b, o->pack, o->m, e)) < 0 || (err = pin_maps(b, e)) < 0 ||
	    (err = attach_all(b, o->cgroup_fd, o->cgroup, e)) < 0 ||
	    (o->lsm && (err = attach_guard(b, o->cgroup_fd, o->cgroup, e)) < 0))
		goto fail;
	libbpf_set_print(old);
	print_to = NULL;
	if (btf_fd >= 0)
		close(btf_fd);
	*out = b;
	return 0;
fail:
	libbpf_set_print(old);
	print_to = NULL;
	if (btf_fd >= 0)
		close(btf_fd);
	bee_bpf_close(b);
	return err;
}

int bee_bpf_audit_fds(const struct bee_bpf *b, int *ringbuf_fd, int *lost_fd)
{
	struct bpf_map *rb = bpf_object__find_map_by_name(b->obj, bee_map_name(BEE_MAP_AUDIT));
	struct bpf_map *lost = bpf_object__find_map_by_name(b->obj, bee_map_name(BEE_MAP_LOST));
	if (!rb || !lost)
		return -ENOENT;
	*ringbuf_fd = bpf_map__fd(rb);
	*lost_fd = bpf_map__fd(lost);
	return 0;
}

int bee_bpf_percpu_sum(int fd, uint64_t *sum)
{
	int ncpu = libbpf_num_possible_cpus();
	if (ncpu <= 0)
		return ncpu < 0 ? ncpu : -EINVAL;
	uint64_t *v = calloc((size_t)ncpu, sizeof(*v));
	uint32_t zero = 0;
	if (!v)
		return -ENOMEM;
	int err = bpf_map_lookup_elem(fd, &zero, v) < 0 ? -errno : 0;
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
	return rmdir(pin_dir) < 0 && errno != ENOENT ? -errno : 0;
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
