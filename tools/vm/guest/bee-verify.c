/* SPDX-License-Identifier: GPL-2.0-only */
/* bee-verify: put every program of a .bpfpack through the running kernel's
 * verifier, without attaching anything.
 *
 *   bee-verify PACK
 *
 * Opens PACK with the runtime's reader (every field and checksum checked),
 * takes its ELF section, checks that the ELF's programs and maps are the
 * ones the manifest lists (same sections, key and value sizes), sizes each
 * map from the manifest as the loader does, and calls bpf_object__load:
 * every program, lsm_cgroup ones included, must pass the verifier. Prints
 * one line for the pack and one per program (instructions, and how many
 * the verifier processed); on a refusal, the end of the verifier log.
 * Exit status 0, 1 when anything is refused or does not match, 2 usage.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpflog.h"
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

/* The ELF's programs are exactly the manifest's hooks, by name and section. */
static int check_programs(const char *path, struct bpf_object *obj, const struct bee_manifest *m)
{
	struct bpf_program *prog;
	size_t n = 0;
	bpf_object__for_each_program(prog, obj) {
		const char *name = bpf_program__name(prog);
		const struct bee_mf_hook *h = bee_manifest_hook(m, name);
		if (!h)
			return fail(path, "prog '%s': not listed in the manifest's hooks", name);
		if (strcmp(h->section, bpf_program__section_name(prog)))
			return fail(path, "prog '%s': the manifest says section '%s', the ELF differs",
				    name, h->section);
		n++;
	}
	if (n != m->nhooks)
		return fail(path, "the manifest lists hooks the ELF does not hold");
	return 0;
}

/* Each ELF map is a manifest map of the same sizes; max_entries from the manifest. */
static int size_maps(const char *path, struct bpf_object *obj, const struct bee_manifest *m)
{
	struct bpf_map *map;
	size_t n = 0;
	bpf_object__for_each_map(map, obj) {
		const char *name = bpf_map__name(map);
		const struct bee_mf_map *mm = bee_manifest_map(m, name);
		if (!mm)
			return fail(path, "map '%s': not listed in the manifest", name);
		if (mm->key_size != bpf_map__key_size(map) || mm->value_size != bpf_map__value_size(map))
			return fail(path, "map '%s': key/value size %u/%u in the ELF, %u/%u in the manifest",
				    name, bpf_map__key_size(map), bpf_map__value_size(map), mm->key_size,
				    mm->value_size);
		int err = bpf_map__set_max_entries(map, mm->max_entries);
		if (err)
			return fail(path, "map '%s': cannot set max_entries: %s", name, strerror(-err));
		n++;
	}
	if (n != m->nmaps)
		return fail(path, "the manifest lists maps the ELF does not hold");
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
	if ((e = bee_manifest_read(pack, &m, err, sizeof(err))) < 0) {
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
	if (check_programs(path, obj, &m) || size_maps(path, obj, &m))
		goto out;
	e = bpf_object__load(obj);
	if (e) {
		fprintf(stderr, "bee-verify: '%s': the kernel refused the object: %s\n", path,
			strerror(-e));
		bpflog_print_tail("bee-verify", 80);
		goto out;
	}

	unsigned nprog = 0, nlsm = 0;
	struct bpf_program *prog;
	bpf_object__for_each_program(prog, obj) {
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
