/* SPDX-License-Identifier: GPL-2.0-only */
/* bee-verify: put every program of a .bpfpack through the running kernel's
 * verifier, without attaching anything.
 *
 *   bee-verify PACK
 *
 * Opens PACK with the runtime's readers (every field and checksum checked;
 * the manifest through runtime/manifest.h, as every reader), takes its ELF
 * section (bee's one hook object), specialises it as the
 * manifest says, by its own reading of docs/pack-format.md rather than
 * the loader's code: the manifest's hooks are the programs loaded, and an
 * unlisted one is allowed only for bee_bprm_check without a pinned rule
 * or a syscall program; each listed map exists with the same key size and
 * flags and is sized (value_size, max_entries; a per-session map through
 * its inner map, or as a hash of the manifest's values), an unlisted one
 * is not created; every .rodata global is set from "constants" (and the
 * loader's own, the sessions' depth). Then
 * bpf_object__load: every listed program, lsm_cgroup ones included, must
 * pass the verifier. Prints
 * one line for the pack and one per program (instructions, and how many
 * the verifier processed); on a refusal, the end of the verifier log.
 * Exit status 0, 1 when anything is refused or does not match, 2 usage.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "bpflog.h"
#include "bee_names.h"
#include "manifest.h"
#include "pack.h"

__attribute__((format(printf, 2, 3)))
static int fail(const char *pack, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "bee-verify: '%s': ", pack);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	return -1;
}

/* The manifest's hooks are loaded, by name and section; what it leaves
 * out may only be bee_bprm_check without pins, or a syscall (test) program. */
static int check_programs(const char *path, struct bpf_object *obj, const struct bee_manifest *m)
{
	bool pins = bee_manifest_pins(m);
	struct bpf_program *prog;
	size_t n = 0;
	bpf_object__for_each_program(prog, obj) {
		const char *name = bpf_program__name(prog);
		const struct bee_mf_hook *h = bee_manifest_hook(m, name);
		if (!h) {
			if ((pins || strcmp(name, bee_prog_name(BEE_PROG_BPRM_CHECK))) &&
			    bpf_program__type(prog) != BPF_PROG_TYPE_SYSCALL)
				return fail(path, "prog '%s': not listed in the manifest's hooks", name);
			bpf_program__set_autoload(prog, false);
			continue;
		}
		if (strcmp(h->section, bpf_program__section_name(prog)))
			return fail(path, "prog '%s': the manifest says section '%s', the ELF differs",
				    name, h->section);
		n++;
	}
	if (n != m->nhooks)
		return fail(path, "the manifest lists hooks the ELF does not hold");
	return 0;
}

/* The inner maps made for the per-session maps (closed after the load). */
static int inner_fd[64];
static size_t ninner;

/* A per-session map (pack-format.md, "Per-session maps"): in the ELF a
 * hash of maps keyed by a 64-bit session id whose inner map has the
 * manifest's type, key size and flags, and is made of the manifest's
 * shape (bee_audit: an array of maps, the pool of rings, keyed by a
 * ring's index); or, for the manifest's array (per-CPU array) of one
 * value, a hash (per-CPU hash) of such values keyed by the session. */
static int session_map(const char *path, struct bpf_map *map, const struct bee_mf_map *m)
{
	const char *name = bpf_map__name(map);
	bool pool = bpf_map__type(map) == BPF_MAP_TYPE_ARRAY_OF_MAPS;   /* bee_audit: the rings */
	if (bpf_map__key_size(map) != (pool ? 4 : 8))
		return fail(path, "map '%s': per session, but keyed by %u bytes", name, bpf_map__key_size(map));
	if (!pool && bpf_map__type(map) != BPF_MAP_TYPE_HASH_OF_MAPS) {
		bool percpu = strcmp(m->type, "percpu_array") == 0;
		enum bpf_map_type want = percpu ? BPF_MAP_TYPE_PERCPU_HASH : BPF_MAP_TYPE_HASH;
		if ((!percpu && strcmp(m->type, "array")) || bpf_map__type(map) != want ||
		    bpf_map__value_size(map) != m->value_size || bpf_map__map_flags(map) != m->flags)
			return fail(path, "map '%s': per session, not a hash of the manifest's %s values", name,
				    m->type);
		return bpf_map__set_max_entries(map, 1);
	}
	const struct bpf_map *in = bpf_map__inner_map(map);
	if (!in || bpf_map__key_size(in) != m->key_size || bpf_map__map_flags(in) != m->flags)
		return fail(path, "map '%s': its inner map is not of the manifest's key size and flags", name);
	LIBBPF_OPTS(bpf_map_create_opts, mo, .map_flags = m->flags);
	int fd = bpf_map_create(bpf_map__type(in), NULL, m->key_size, m->value_size, m->max_entries, &mo);
	if (fd < 0 || ninner == sizeof(inner_fd) / sizeof(inner_fd[0]))
		return fail(path, "map '%s': cannot make its inner map: %s", name, strerror(errno));
	inner_fd[ninner++] = fd;
	int err = bpf_map__set_inner_map_fd(map, fd);
	return err ? err : bpf_map__set_max_entries(map, 1);
}

/* Each manifest map is an ELF map of the same key size and flags, sized
 * from the manifest; an ELF map it does not list is not created. */
static int size_maps(const char *path, struct bpf_object *obj, const struct bee_manifest *mf)
{
	struct bpf_map *map;
	size_t n = 0;
	bpf_object__for_each_map(map, obj) {
		const char *name = bpf_map__name(map);
		if (bpf_map__is_internal(map))
			continue;
		const struct bee_mf_map *m = bee_manifest_map(mf, name);
		if (!m) {
			bpf_map__set_autocreate(map, false);
			continue;
		}
		int id = bee_map_find(name);
		if (id >= 0 && (bee_map_props((enum bee_map_id)id) & BEE_MAPF_SESSION)) {
			int err = session_map(path, map, m);
			if (err)
				return err < -1 ? fail(path, "map '%s': cannot size it: %s", name, strerror(-err)) : -1;
			n++;
			continue;
		}
		if (m->key_size != bpf_map__key_size(map) || m->flags != bpf_map__map_flags(map))
			return fail(path, "map '%s': key size %u flags %#x in the ELF, %u %#x in the manifest",
				    name, bpf_map__key_size(map), bpf_map__map_flags(map), m->key_size, m->flags);
		int err = 0;
		if (m->value_size != bpf_map__value_size(map))
			err = bpf_map__set_value_size(map, m->value_size);
		if (!err)
			err = bpf_map__set_max_entries(map, m->max_entries);
		if (err)
			return fail(path, "map '%s': cannot size it: %s", name, strerror(-err));
		n++;
	}
	if (n != mf->nmaps)
		return fail(path, "the manifest lists maps the ELF does not hold");
	return 0;
}

/* Every global of .rodata from the manifest's "constants", each 4 bytes. */
static int set_constants(const char *path, struct bpf_object *obj, const struct bee_manifest *m)
{
	struct btf *btf = bpf_object__btf(obj);
	struct bpf_map *map, *rodata = NULL;
	bpf_object__for_each_map(map, obj)
		if (bpf_map__is_internal(map) && strstr(bpf_map__name(map), ".rodata"))
			rodata = map;
	int sec = btf && rodata ? btf__find_by_name_kind(btf, ".rodata", BTF_KIND_DATASEC) : -1;
	size_t set = 0;
	if (sec > 0) {
		const struct btf_type *t = btf__type_by_id(btf, (__u32)sec);
		const struct btf_var_secinfo *v = btf_var_secinfos(t);
		size_t size = 0;
		const void *init = bpf_map__initial_value(rodata, &size);
		unsigned char data[4096];
		if (!init || size > sizeof(data))
			return fail(path, "the object's .rodata: %zu bytes", size);
		memcpy(data, init, size);
		for (unsigned i = 0; i < btf_vlen(t); i++, v++) {
			const char *name = btf__name_by_offset(btf, btf__type_by_id(btf, v->type)->name_off);
			const struct bee_mf_const *c = bee_manifest_const(m, name);
			/* the loader's own: the sessions' cgroup depth, any value here */
			if (strcmp(name, bee_loader_const_name(BEE_LCONST_SESSION_LEVEL)) == 0 && v->size == 4 &&
			    v->offset + 4 <= size) {
				__u32 level = 1;
				memcpy(data + v->offset, &level, sizeof(level));
				continue;
			}
			if (!c || v->size != 4 || v->offset + 4 > size)
				return fail(path, "constant '%s': missing from the manifest or not 32-bit", name);
			__u32 value = c->value;
			memcpy(data + v->offset, &value, sizeof(value));
			set++;
		}
		int err = bpf_map__set_initial_value(rodata, data, size);
		if (err)
			return fail(path, "cannot set the object's .rodata: %s", strerror(-err));
	}
	if (set != m->nconsts)
		return fail(path, "the manifest sets %zu constants, the object has %zu", m->nconsts, set);
	return 0;
}

static int verify(const char *path)
{
	char err[BEE_PACK_ERRLEN];
	struct bee_pack *pack = NULL;
	struct bpf_object *obj = NULL;
	struct bee_manifest m;
	bool read = false;
	int rc = -1, e;

	e = bee_pack__open_file(path, &pack, err, sizeof(err));
	if (e) {
		fprintf(stderr, "bee-verify: '%s': %s\n", path, err);
		goto out;
	}
	if (bee_manifest_read(pack, &m, err, sizeof(err)) < 0) {
		fail(path, "manifest: %s", err);
		goto out;
	}
	read = true;
	const struct bee_pack_section_info *elf = bee_pack__find(pack, BEE_PACK_ELF, NULL);
	if (!elf) {
		fail(path, "the pack holds no BPF object");
		goto out;
	}
	LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = m.name);
	obj = bpf_object__open_mem(elf->data, elf->size, &oo);
	if (!obj) {
		fail(path, "libbpf cannot open the BPF object: %s", strerror(errno));
		bpflog_print_tail("bee-verify", 40);
		goto out;
	}
	if (check_programs(path, obj, &m) || size_maps(path, obj, &m) || set_constants(path, obj, &m))
		goto out;
	e = bpf_object__load(obj);
	while (ninner)
		close(inner_fd[--ninner]);
	if (e) {
		fprintf(stderr, "bee-verify: '%s': the kernel refused the object: %s\n", path,
			strerror(-e));
		bpflog_print_tail("bee-verify", 80);
		goto out;
	}

	unsigned nprog = 0, nlsm = 0;
	struct bpf_program *prog;
	bpf_object__for_each_program(prog, obj) {
		if (!bpf_program__autoload(prog))
			continue;
		struct bpf_prog_info info;
		__u32 len = sizeof(info);
		memset(&info, 0, sizeof(info));
		int fd = bpf_program__fd(prog);
		if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len)) {
			fail(path, "prog '%s': loaded but has no program in the kernel",
			     bpf_program__name(prog));
			goto out;
		}
		nprog++;
		nlsm += bpf_program__type(prog) == BPF_PROG_TYPE_LSM;
		printf("  %-18s %-32s %5zu insns, %7u processed by the verifier\n",
		       bpf_program__name(prog), bpf_program__section_name(prog),
		       bpf_program__insn_cnt(prog), info.verified_insns);
	}
	if (nprog == 0) {
		fail(path, "the BPF object holds no program");
		goto out;
	}
	printf("bee-verify: %s: %u programs verified (%u lsm, %u cgroup), %zu maps sized from the manifest\n",
	       m.name, nprog, nlsm, nprog - nlsm, m.nmaps);
	rc = 0;
out:
	bpf_object__close(obj);
	if (read)
		bee_manifest_fini(&m);
	bee_pack__close(pack);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: bee-verify PACK\n");
		return 2;
	}
	bpflog_capture();
	return verify(argv[1]) ? 1 : 0;
}
