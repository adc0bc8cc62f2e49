/* SPDX-License-Identifier: GPL-2.0-only */
/* test_codegen: a policy's tables over bee's one BPF object, from
 * lowered policy to a verified program.
 *
 * For every example policy (the .toml files in policies/, loaded with HOME=/home/dev
 * and PROJECT=/home/dev/src/app):
 *
 *   - codegen gives bee's embedded object (an ELF for BPF), and the same
 *     tables twice;
 *   - libbpf, given the tables as the loader applies them (map sizes, the
 *     programs to load, the .rodata constants), finds the programs and
 *     maps they list, with the same sections, types, key and value sizes,
 *     entries and flags; the object's other programs are only those a
 *     policy may leave out (bee_bprm_check without pins, bee_test_walk);
 *     every .rodata global is one of the constants; the LSM programs are in
 *     the object (the VM suite loads them);
 *   - as root: with every lsm_cgroup program's autoload off, the object
 *     loads, so every cgroup sock_addr and sock_create program passes the
 *     kernel's verifier (nothing is attached);
 *   - as root: each LSM program alone gets through libbpf (its hook found,
 *     its CO-RE accesses relocated against this kernel's BTF) to the
 *     kernel, which verifies it or, on a kernel that refuses LSM programs
 *     (this project's host), answers EPERM;
 *   - as root: the tables with test programs load bee_test_walk, which
 *     runs the hooks' own walk functions (bee_walk_fs, bee_walk_exec) over
 *     the policy's images through BPF_PROG_TEST_RUN, bounded by the image
 *     sizes set as constants; every answer equals the host's walk of the
 *     same automaton.
 *
 * And: the constants and sizes follow the policy; a bad ring buffer size
 * is refused.
 *
 * Without root the kernel parts print "SKIPPED: needs root" and pass,
 * unless CI is set, when they fail. Runs from the repository root.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "examples.h"
#include "bpf/bee_hooks_test.h"
#include "bee_names.h"
#include "codegen.h"
#include "image.h"
#include "libbeec.h"
#include "lower.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static const char *const defines[] = { "HOME=/home/dev", "PROJECT=/home/dev/src/app" };
static bool root;

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	/* warnings carry the verifier's log when a load fails */
	if (level == LIBBPF_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* ---- helpers ---------------------------------------------------------------- */

struct policy {
	struct beec_policy p;
	struct diag_ctx dc;
};

static void policy_load(struct policy *pol, const char *path)
{
	struct beec_opts o = { .sz = sizeof(o), .defines = defines, .ndefines = ARRAY_LEN(defines) };
	diag_init(&pol->dc);
	int err = beec_policy__load(&pol->p, path, &o, &pol->dc);
	if (!err)
		err = beec_policy__lower(&pol->p, &o, &pol->dc);
	if (err) {
		diag_print(&pol->dc, stderr);
		fail_msg("%s: does not compile (%d)", path, err);
	}
}

static void policy_load_text(struct policy *pol, const char *text)
{
	char path[] = "/tmp/test_codegen-XXXXXX.toml";
	int fd = mkstemps(path, 5);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	policy_load(pol, path);
	unlink(path);
}

static void policy_free(struct policy *pol)
{
	beec_policy__fini(&pol->p);
	diag_fini(&pol->dc);
}

static void build(const struct lowered *lw, bool test_programs, struct codegen_result *r)
{
	struct codegen_opts o = { .sz = sizeof(o), .test_programs = test_programs };
	struct diag_ctx dc;
	diag_init(&dc);
	int err = codegen_build(lw, &o, &dc, r);
	if (err) {
		diag_print(&dc, stderr);
		fail_msg("codegen_build: %d", err);
	}
	assert_int_equal(dc.errors, 0);
	diag_fini(&dc);
}

static uint32_t const_of(const struct codegen_result *r, const char *name)
{
	for (size_t i = 0; i < r->nconsts; i++)
		if (strcmp(r->consts[i].name, name) == 0)
			return r->consts[i].value;
	fail_msg("no constant '%s'", name);
	return 0;
}

static const struct codegen_map *find_map(const struct codegen_result *r, const char *name)
{
	for (size_t i = 0; i < r->nmaps; i++)
		if (strcmp(r->maps[i].name, name) == 0)
			return &r->maps[i];
	return NULL;
}

static const struct codegen_prog *find_prog(const struct codegen_result *r, const char *name)
{
	for (size_t i = 0; i < r->nprogs; i++)
		if (strcmp(r->progs[i].name, name) == 0)
			return &r->progs[i];
	return NULL;
}

/* A program that needs the BPF LSM: per cgroup (lsm_cgroup/, a slot) or
 * global (lsm/, bee_guard.bpf.h, no slot). */
static bool is_lsm_section(const char *sec)
{
	return strncmp(sec, "lsm_cgroup/", 11) == 0 || strncmp(sec, "lsm/", 4) == 0;
}

static bool is_slot_section(const char *sec)
{
	return strncmp(sec, "lsm_cgroup/", 11) == 0;
}

/* The object's .rodata constants set from the tables, as the loader does
 * (loader/bpf_load.c): every global is one of them, each a __u32. */
static void consts_apply(struct bpf_object *obj, const struct codegen_result *r, const char *name)
{
	struct btf *btf = bpf_object__btf(obj);
	struct bpf_map *map, *rodata = NULL;
	bpf_object__for_each_map(map, obj)
		if (bpf_map__is_internal(map) && strstr(bpf_map__name(map), ".rodata"))
			rodata = map;
	assert_non_null(btf);
	assert_non_null(rodata);
	int sec = btf__find_by_name_kind(btf, ".rodata", BTF_KIND_DATASEC);
	assert_true(sec > 0);
	const struct btf_type *t = btf__type_by_id(btf, (uint32_t)sec);
	const struct btf_var_secinfo *v = btf_var_secinfos(t);
	size_t size;
	const void *init = bpf_map__initial_value(rodata, &size);
	uint8_t data[256];
	assert_true(init && size <= sizeof(data));
	memcpy(data, init, size);
	/* the manifest's constants and the loader's own (the sessions' depth) */
	assert_int_equal(btf_vlen(t), r->nconsts + BEE_LCONST__COUNT);
	for (unsigned i = 0; i < btf_vlen(t); i++, v++) {
		const char *var = btf__name_by_offset(btf, btf__type_by_id(btf, v->type)->name_off);
		uint32_t value = strcmp(var, bee_loader_const_name(BEE_LCONST_SESSION_LEVEL)) == 0 ? 0 : const_of(r, var);
		assert_int_equal(v->size, sizeof(value));
		assert_true(v->offset + v->size <= size);
		memcpy(data + v->offset, &value, sizeof(value));
	}
	if (bpf_map__set_initial_value(rodata, data, size) < 0)
		fail_msg("%s: cannot set .rodata", name);
}

/* A per-session map (BEE_MAPF_SESSION) is keyed by the session: a hash of
 * maps whose inner map has the table's shape, or, for a table's array (or
 * per-CPU array) of one value, a hash (per-CPU hash) of such values with a
 * 64-bit key (loader/bpf_load.c's session_shape). */
static bool per_session(const char *name)
{
	int id = bee_map_find(name);
	return id >= 0 && (bee_map_props((enum bee_map_id)id) & BEE_MAPF_SESSION);
}

/* a hash of maps keyed by the session, or bee_audit's array of maps */
static bool map_of_maps(const struct bpf_map *map)
{
	return bpf_map__type(map) == BPF_MAP_TYPE_HASH_OF_MAPS || bpf_map__type(map) == BPF_MAP_TYPE_ARRAY_OF_MAPS;
}

static enum bpf_map_type keyed_type(enum codegen_map_type t)
{
	return (enum bpf_map_type)t == BPF_MAP_TYPE_PERCPU_ARRAY ? BPF_MAP_TYPE_PERCPU_HASH : BPF_MAP_TYPE_HASH;
}

/* The inner maps made for the object's hashes of maps, as the loader makes
 * them; closed once the object is loaded (or not). */
static int inner_fds[64];
static size_t ninner;

static void inner_close(void)
{
	while (ninner)
		close(inner_fds[--ninner]);
}

/* bee's object specialised by the tables, as the loader does: maps sized,
 * the others not created; the programs the tables list loaded, the others
 * not; the constants set. */
static struct bpf_object *elf_open(const struct codegen_result *r, const char *name)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = name);
	struct bpf_object *obj = bpf_object__open_mem(r->elf, r->elf_len, &oo);
	if (!obj)
		fail_msg("%s: libbpf cannot open the ELF: %s", name, strerror(errno));
	inner_close();
	struct bpf_map *map;
	bpf_object__for_each_map(map, obj) {
		if (bpf_map__is_internal(map))
			continue;
		const struct codegen_map *m = find_map(r, bpf_map__name(map));
		if (!m) {
			assert_int_equal(bpf_map__set_autocreate(map, false), 0);
			continue;
		}
		if (per_session(m->name) && map_of_maps(map)) {
			/* the inner map's declared shape; its sizes are the table's */
			const struct bpf_map *in = bpf_map__inner_map(map);
			assert_non_null(in);
			assert_int_equal(bpf_map__type(in), m->type);
			assert_int_equal(bpf_map__key_size(in), m->key_size);
			assert_int_equal(bpf_map__map_flags(in), m->flags);
			LIBBPF_OPTS(bpf_map_create_opts, mo, .map_flags = m->flags);
			int fd = bpf_map_create((enum bpf_map_type)m->type, NULL, m->key_size, m->value_size,
						m->max_entries, &mo);
			if (fd < 0)   /* not root: the tables are still compared */
				continue;
			assert_true(ninner < ARRAY_LEN(inner_fds));
			inner_fds[ninner++] = fd;
			assert_int_equal(bpf_map__set_inner_map_fd(map, fd), 0);
			continue;
		}
		if (per_session(m->name))
			continue;     /* a hash of the table's values: its entries are the sessions' */
		/* only a value without a BTF type may change size */
		if (bpf_map__value_size(map) != m->value_size) {
			assert_int_equal(bpf_map__btf_value_type_id(map), 0);
			assert_int_equal(bpf_map__set_value_size(map, m->value_size), 0);
		}
		assert_int_equal(bpf_map__set_max_entries(map, m->max_entries), 0);
	}
	struct bpf_program *prog;
	bpf_object__for_each_program(prog, obj)
		bpf_program__set_autoload(prog, find_prog(r, bpf_program__name(prog)) != NULL);
	consts_apply(obj, r, name);
	return obj;
}

/* The object holds what codegen's tables say, in that order, and what the
 * tables leave out is only what a policy may leave out. */
static void check_tables(struct bpf_object *obj, const struct codegen_result *r, const char *name)
{
	size_t i = 0;
	struct bpf_program *prog;
	bpf_object__for_each_program(prog, obj) {
		if (!bpf_program__autoload(prog)) {
			const char *p = bpf_program__name(prog);
			if (strcmp(p, "bee_test_walk") != 0 && strcmp(p, "bee_bprm_check") != 0)
				fail_msg("%s: program '%s' is not in codegen's table", name, p);
			continue;
		}
		assert_true(i < r->nprogs);
		assert_string_equal(bpf_program__name(prog), r->progs[i].name);
		assert_string_equal(bpf_program__section_name(prog), r->progs[i].section);
		assert_int_equal(is_lsm_section(r->progs[i].section), r->progs[i].lsm);
		i++;
	}
	assert_int_equal(i, r->nprogs);

	i = 0;
	struct bpf_map *map;
	bpf_object__for_each_map(map, obj) {
		if (bpf_map__is_internal(map))
			continue;
		if (!bpf_map__autocreate(map)) {
			/* a map only bee_bprm_check's pins need */
			assert_string_equal(bpf_map__name(map), "bee_task");
			assert_null(find_prog(r, "bee_bprm_check"));
			continue;
		}
		if (i >= r->nmaps)
			fail_msg("%s: map '%s' is not in codegen's table", name, bpf_map__name(map));
		const struct codegen_map *m = &r->maps[i];
		assert_string_equal(bpf_map__name(map), m->name);
		if (per_session(m->name) && map_of_maps(map)) {
			/* its inner map was checked by elf_open; keyed by the
			 * session, or (bee_audit, the load's pool of rings) by a
			 * ring's index */
			assert_int_equal(bpf_map__key_size(map), bpf_map__type(map) == BPF_MAP_TYPE_ARRAY_OF_MAPS
									 ? sizeof(uint32_t)
									 : sizeof(uint64_t));
		} else if (per_session(m->name)) {
			assert_int_equal(bpf_map__type(map), keyed_type(m->type));
			assert_int_equal(bpf_map__key_size(map), sizeof(uint64_t));
			assert_int_equal(bpf_map__value_size(map), m->value_size);
			assert_int_equal(bpf_map__map_flags(map), m->flags);
			assert_int_equal(m->max_entries, 1);
		} else {
			assert_int_equal(bpf_map__type(map), m->type);
			assert_int_equal(bpf_map__key_size(map), m->key_size);
			assert_int_equal(bpf_map__value_size(map), m->value_size);
			assert_int_equal(bpf_map__max_entries(map), m->max_entries);
			assert_int_equal(bpf_map__map_flags(map), m->flags);
		}
		i++;
	}
	assert_int_equal(i, r->nmaps);
}

/* The LSM programs a pack needs, whatever the policy. */
static const char *const lsm_required[] = {
	"bee_file_open", "bee_mmap_file", "bee_mprotect", "bee_socket",
	"bee_listen", "bee_unix_connect", "bee_unix_send", "bee_userns",
	"bee_ptrace",
};
/* The global ones (bee_guard.bpf.h), in every pack too. */
static const char *const global_required[] = {
	"bee_path_chmod", "bee_path_chown", "bee_path_truncate", "bee_inode_setattr",
	"bee_inode_setxattr", "bee_inode_removexattr", "bee_inode_getattr", "bee_inode_getxattr",
	"bee_inode_listxattr", "bee_path_notify", "bee_file_receive", "bee_task_kill", "bee_bpf",
};
static const char *const cgroup_required[] = {
	"bee_connect4", "bee_connect6", "bee_sendmsg4", "bee_sendmsg6", "bee_recvmsg4",
	"bee_recvmsg6", "bee_bind4",    "bee_bind6",    "bee_sock_create",
};

/* The kernel attaches lsm_cgroup programs to at most CGROUP_LSM_NUM distinct
 * hooks, system-wide: the budget is the distinct hooks, 9 without pins and
 * 10 (every slot) with bprm_check_security. The global lsm/ programs take
 * no slot: 13 of them in every pack. */
static void check_lsm_count(const struct codegen_result *r)
{
	unsigned n = 0, global = 0;
	for (size_t i = 0; i < r->nprogs; i++) {
		if (!r->progs[i].lsm)
			continue;
		if (!is_slot_section(r->progs[i].section)) {
			global++;
			continue;
		}
		bool seen = false;
		for (size_t j = 0; j < i; j++)
			if (is_slot_section(r->progs[j].section) &&
			    strcmp(r->progs[j].attach, r->progs[i].attach) == 0)
				seen = true;
		n += !seen;
	}
	assert_true(n <= CODEGEN_LSM_CGROUP_MAX);
	assert_int_equal(n, find_prog(r, "bee_bprm_check") ? 10 : 9);
	assert_int_equal(global, ARRAY_LEN(global_required));
}

/* Loads every program but the LSM ones: the verifier must accept each. */
static void load_cgroup_programs(const struct codegen_result *r, const char *name)
{
	struct bpf_object *obj = elf_open(r, name);
	struct bpf_program *prog;
	unsigned nloaded = 0;
	bpf_object__for_each_program(prog, obj)
		if (is_lsm_section(bpf_program__section_name(prog)))
			bpf_program__set_autoload(prog, false);
	int err = bpf_object__load(obj);
	inner_close();
	if (err)
		fail_msg("%s: the kernel refused the object (%d); the verifier log is above", name, err);
	bpf_object__for_each_program(prog, obj) {
		if (!bpf_program__autoload(prog))
			continue;
		assert_true(bpf_program__fd(prog) >= 0);
		nloaded++;
	}
	printf("  %s: %u cgroup programs verified\n", name, nloaded);
	assert_int_equal(nloaded, ARRAY_LEN(cgroup_required));
	bpf_object__close(obj);
}

/* libbpf's messages of one load, for what the kernel's EPERM hides */
static char libbpf_log[1 << 20];
static size_t libbpf_log_len;

static int libbpf_capture(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	if (libbpf_log_len < sizeof(libbpf_log) - 1) {
		int n = vsnprintf(libbpf_log + libbpf_log_len, sizeof(libbpf_log) - libbpf_log_len, fmt, ap);
		if (n > 0)
			libbpf_log_len += (size_t)n;
		if (libbpf_log_len > sizeof(libbpf_log) - 1)
			libbpf_log_len = sizeof(libbpf_log) - 1;
	}
	return 0;
}

/* Each LSM program alone: libbpf must resolve its hook and relocate its
 * CO-RE accesses against this kernel's BTF; the kernel then verifies it
 * (a BPF-LSM kernel) or refuses LSM programs outright (EPERM, this host).
 * Any other answer is a failure. Nothing is attached. */
static void load_lsm_programs(const struct codegen_result *r, const char *name)
{
	unsigned verified = 0, refused = 0;
	for (size_t i = 0; i < r->nprogs; i++) {
		if (!r->progs[i].lsm)
			continue;
		struct bpf_object *obj = elf_open(r, name);
		struct bpf_program *prog;
		bpf_object__for_each_program(prog, obj)
			bpf_program__set_autoload(prog, !strcmp(bpf_program__name(prog), r->progs[i].name));
		libbpf_log_len = 0;
		libbpf_log[0] = '\0';
		libbpf_set_print(libbpf_capture);
		int err = bpf_object__load(obj);
		inner_close();
		libbpf_set_print(libbpf_print);
		/* a CO-RE access this kernel lacks is poisoned, not refused, by libbpf */
		if (strstr(libbpf_log, "invalid insn") || strstr(libbpf_log, "no matching targets"))
			fail_msg("%s: LSM program '%s': libbpf:\n%s", name, r->progs[i].name, libbpf_log);
		if (err == 0)
			verified++;
		else if (err == -EPERM)
			refused++;
		else
			fail_msg("%s: LSM program '%s': %d (%s)", name, r->progs[i].name, err,
				 strerror(-err));
		bpf_object__close(obj);
	}
	printf("  %s: %u LSM programs relocated; the kernel verified %u, refused %u (EPERM)\n", name,
	       verified + refused, verified, refused);
}

/* ---- the walks in the kernel --------------------------------------------------- */

/* A path one glob matches (roughly): stars and classes become letters. */
static void glob_instance(const char *g, char *out, size_t n, unsigned variant)
{
	size_t o = 0;
	for (const char *p = g; *p && o + 4 < n; p++) {
		switch (*p) {
		case '*':
			if (p[1] == '*') {
				p++;
				out[o++] = variant & 1 ? 'd' : 'x';
				if (variant & 2 && o + 3 < n) {
					out[o++] = '/';
					out[o++] = 'y';
				}
			} else {
				out[o++] = variant & 4 ? 'z' : 'x';
			}
			break;
		case '?':
			out[o++] = 'q';
			break;
		case '[':
			p++;
			if (*p == '!' || *p == '^') {
				out[o++] = '~';
				while (*p && *p != ']')
					p++;
			} else {
				out[o++] = *p ? *p : 'c';
				if (*p)
					p++;
				while (*p && *p != ']')
					p++;
			}
			if (!*p)
				p--;
			break;
		case '{': {
			/* the variant-th alternative, or the first */
			unsigned want = variant % 2, k = 0;
			int depth = 1;
			for (p++; *p && depth; p++) {
				if (*p == '{')
					depth++;
				else if (*p == '}')
					depth--;
				else if (*p == ',' && depth == 1)
					k++;
				else if (k == want && depth == 1 && o + 4 < n)
					out[o++] = *p;
				if (!depth)
					break;
			}
			if (!*p)
				p--;
			break;
		}
		case '\\':
			if (p[1])
				p++;
			out[o++] = *p;
			break;
		default:
			out[o++] = *p;
		}
	}
	out[o] = '\0';
}

static const char *const fixed_paths[] = {
	"", "/", "/usr", "/usr/", "/usr/bin/git", "/usr/bin/curl", "/usr/bin/cargo",
	"/usr/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
	"/usr/lib/x86_64-linux-gnu/perl/5.36/auto/POSIX/POSIX.so", "/etc/passwd", "/etc/shadow",
	"/etc/ld.so.cache", "/home/dev/.ssh/id_rsa", "/home/dev/.cargo/credentials.toml",
	"/home/dev/src/app/src/main.rs", "/home/dev/src/app/.env", "/home/dev/src/app/target/x",
	"/home/dev/src/app/target/debug/deps/app-1234", "/home/dev/src/app/key.pem",
	"/proc/1/maps", "/proc/self/maps", "/dev/null", "/dev/urandom", "/tmp/x",
	"/memfd:payload (deleted)", "/usr/bin/git (deleted)",
};

/* the session key of the test's walks (no cgroup has id 42 on a booted
 * machine; the walks take it from the query, not from a cgroup) */
#define WALK_SESSION 42

struct walk_kernel {
	struct bpf_object *obj;
	int prog_fd;
};

static void walk_kernel_open(struct walk_kernel *k, const struct codegen_result *r,
			     const struct lowered *lw, const char *name)
{
	struct bpf_program *prog;
	k->obj = elf_open(r, name);
	bpf_object__for_each_program(prog, k->obj)
		if (is_lsm_section(bpf_program__section_name(prog)))
			bpf_program__set_autoload(prog, false);
	int err = bpf_object__load(k->obj);
	inner_close();
	if (err)
		fail_msg("%s: the kernel refused the test object (%d); the verifier log is above",
			 name, err);
	prog = bpf_object__find_program_by_name(k->obj, "bee_test_walk");
	assert_non_null(prog);
	k->prog_fd = bpf_program__fd(prog);
	assert_true(k->prog_fd >= 0);

	static const struct {
		const char *map;
		enum ir_domain dom;
	} images[] = { { "bee_fs", IR_DOMAIN_FS }, { "bee_exec", IR_DOMAIN_EXEC } };
	for (size_t i = 0; i < ARRAY_LEN(images); i++) {
		size_t len;
		struct bee_dfa_hdr *img = image_dfa_write(lw->dfa[images[i].dom], &len);
		struct bpf_map *m = bpf_object__find_map_by_name(k->obj, images[i].map);
		assert_non_null(m);
		/* a session's image map, sized to exactly the image as the loader
		 * sizes it, under the session key the test program walks with */
		LIBBPF_OPTS(bpf_map_create_opts, mo, .map_flags = BPF_F_RDONLY_PROG);
		int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, NULL, sizeof(__u32), (__u32)len, 1, &mo);
		assert_true(fd >= 0);
		__u32 zero = 0, ifd = (__u32)fd;
		assert_int_equal(bpf_map_update_elem(fd, &zero, img, BPF_ANY), 0);
		__u64 sess = WALK_SESSION;
		assert_int_equal(bpf_map__update_elem(m, &sess, sizeof(sess), &ifd, sizeof(ifd), BPF_ANY), 0);
		close(fd);
		free(img);
	}
}

static unsigned walk_check(const struct walk_kernel *k, const struct lowered *lw, const char *path,
			   size_t len, const char *name)
{
	static struct bee_test_walk q;
	/* a syscall program's context is copied back into ctx_in */
	LIBBPF_OPTS(bpf_test_run_opts, ro, .ctx_in = &q, .ctx_size_in = sizeof(q));
	memset(&q, 0, sizeof(q));
	q.sess = WALK_SESSION;
	q.len = (__u32)len;
	memcpy(q.path, path, len);
	assert_int_equal(bpf_prog_test_run_opts(k->prog_fd, &ro), 0);
	assert_int_equal(ro.retval, 0);

	unsigned bad = 0;
	const struct {
		enum ir_domain dom;
		__u32 state, perms;
	} got[] = { { IR_DOMAIN_FS, q.fs_state, q.fs_perms },
		    { IR_DOMAIN_EXEC, q.exec_state, q.exec_perms } };
	for (size_t i = 0; i < ARRAY_LEN(got); i++) {
		uint32_t perms;
		unsigned state = dfa_match(lw->dfa[got[i].dom], path, len, &perms, NULL);
		if (state != got[i].state || perms != got[i].perms) {
			fprintf(stderr, "%s: %s walk of '%.*s' (%zu bytes): kernel state %u perms %#x, "
					"host state %u perms %#x\n",
				name, ir_domain_name(got[i].dom), len > 200 ? 200 : (int)len, path, len,
				got[i].state, got[i].perms, state, perms);
			bad++;
		}
	}
	return bad;
}

/* Every fixed path, instances of every fs and exec glob, their parents and
 * children, and paths of the longest length walked. */
static void walk_all(const struct codegen_result *r, const struct lowered *lw, const char *name)
{
	struct walk_kernel k;
	unsigned bad = 0, n = 0;
	static char path[BEE_PATH_MAX + 64];

	walk_kernel_open(&k, r, lw, name);
	for (size_t i = 0; i < ARRAY_LEN(fixed_paths); i++, n++)
		bad += walk_check(&k, lw, fixed_paths[i], strlen(fixed_paths[i]), name);
	for (size_t i = 0; i < lw->ir->nrules; i++) {
		const struct ir_rule *rule = &lw->ir->rules[i];
		enum ir_domain d = ir_rule_kind_domain(rule->kind);
		if (d != IR_DOMAIN_FS && d != IR_DOMAIN_EXEC)
			continue;
		for (unsigned v = 0; v < 8; v++) {
			glob_instance(rule->text, path, 1024, v);
			size_t l = strlen(path);
			bad += walk_check(&k, lw, path, l, name);
			snprintf(path + l, 64, "/child");
			bad += walk_check(&k, lw, path, strlen(path), name);
			path[l] = '\0';
			char *slash = strrchr(path, '/');
			if (slash && slash != path)
				bad += walk_check(&k, lw, path, (size_t)(slash - path), name);
			n += 3;
		}
	}
	/* the longest path walked, under a granted tree and under none */
	static const char *const prefixes[] = { "/usr/", "/home/dev/src/app/", "/nowhere/" };
	for (size_t i = 0; i < ARRAY_LEN(prefixes); i++) {
		size_t pl = strlen(prefixes[i]);
		memcpy(path, prefixes[i], pl);
		for (size_t j = pl; j < BEE_PATH_MAX - 1; j++)
			path[j] = (j % 64 == 63) ? '/' : (char)('a' + j % 26);
		bad += walk_check(&k, lw, path, BEE_PATH_MAX - 1, name);
		bad += walk_check(&k, lw, path, BEE_PATH_MAX - 2, name);
		n += 2;
	}
	printf("  %s: %u paths walked by bee_walk_fs and bee_walk_exec in the kernel\n", name, n);
	bpf_object__close(k.obj);
	assert_int_equal(bad, 0);
}

/* ---- tests --------------------------------------------------------------------- */

/* Two tables of the same policy are the same. */
static void assert_same_tables(const struct codegen_result *a, const struct codegen_result *b)
{
	assert_ptr_equal(a->elf, b->elf);
	assert_int_equal(a->elf_len, b->elf_len);
	assert_int_equal(a->nprogs, b->nprogs);
	for (size_t i = 0; i < a->nprogs; i++)
		assert_string_equal(a->progs[i].name, b->progs[i].name);
	/* field by field: the structs' padding is nobody's */
	assert_int_equal(a->nmaps, b->nmaps);
	for (size_t i = 0; i < a->nmaps; i++) {
		const struct codegen_map *x = &a->maps[i], *y = &b->maps[i];
		assert_string_equal(x->name, y->name);
		assert_int_equal(x->type, y->type);
		assert_int_equal(x->key_size, y->key_size);
		assert_int_equal(x->value_size, y->value_size);
		assert_int_equal(x->max_entries, y->max_entries);
		assert_int_equal(x->flags, y->flags);
		assert_int_equal(x->fill, y->fill);
	}
	assert_int_equal(a->nconsts, b->nconsts);
	for (size_t i = 0; i < a->nconsts; i++) {
		assert_string_equal(a->consts[i].name, b->consts[i].name);
		assert_int_equal(a->consts[i].value, b->consts[i].value);
	}
}

static void test_codegen_examples(void **state)
{
	(void)state;
	char *names[64];
	size_t n = examples_list(names, ARRAY_LEN(names));
	assert_true(n >= 5);

	for (size_t i = 0; i < n; i++) {
		char path[300];
		struct policy pol;
		struct codegen_result a, b, t;
		snprintf(path, sizeof(path), "policies/%s", names[i]);
		policy_load(&pol, path);
		const struct lowered *lw = pol.p.lw;

		build(lw, false, &a);
		build(lw, false, &b);
		/* bee's object, an ELF for BPF, and the same tables twice */
		assert_true(a.elf_len > sizeof(Elf64_Ehdr));
		assert_memory_equal(a.elf, ELFMAG, SELFMAG);
		assert_int_equal(((const Elf64_Ehdr *)(const void *)a.elf)->e_machine, EM_BPF);
		assert_same_tables(&a, &b);
		for (size_t j = 1; j < a.nconsts; j++)
			assert_true(strcmp(a.consts[j - 1].name, a.consts[j].name) < 0);
		printf("%s: the %zu-byte object, identical tables twice; %zu programs, %zu maps, "
		       "%zu constants\n", names[i], a.elf_len, a.nprogs, a.nmaps, a.nconsts);

		/* the programs and maps libbpf finds are codegen's tables */
		struct bpf_object *obj = elf_open(&a, names[i]);
		check_tables(obj, &a, names[i]);
		bpf_object__close(obj);
		for (size_t j = 0; j < ARRAY_LEN(lsm_required); j++) {
			const struct codegen_prog *p = find_prog(&a, lsm_required[j]);
			if (!p)
				fail_msg("%s: LSM program '%s' missing", names[i], lsm_required[j]);
			assert_true(p->lsm);
		}
		for (size_t j = 0; j < ARRAY_LEN(global_required); j++) {
			const struct codegen_prog *p = find_prog(&a, global_required[j]);
			if (!p)
				fail_msg("%s: global LSM program '%s' missing", names[i], global_required[j]);
			assert_true(p->lsm);
			assert_false(is_slot_section(p->section));
		}
		for (size_t j = 0; j < ARRAY_LEN(cgroup_required); j++) {
			const struct codegen_prog *p = find_prog(&a, cgroup_required[j]);
			if (!p)
				fail_msg("%s: cgroup program '%s' missing", names[i], cgroup_required[j]);
			assert_false(p->lsm);
		}
		assert_null(find_prog(&a, "bee_test_walk"));
		check_lsm_count(&a);
		/* the walks' bounds are the images' sizes, and the maps' values */
		assert_int_equal(const_of(&a, "bee_fs_image_size"), find_map(&a, "bee_fs")->value_size);
		assert_int_equal(const_of(&a, "bee_exec_image_size"), find_map(&a, "bee_exec")->value_size);
		assert_int_equal(const_of(&a, "bee_audit_mode"), (uint32_t)lw->ir->audit);

		build(lw, true, &t);
		assert_ptr_equal(t.elf, a.elf);
		obj = elf_open(&t, names[i]);
		check_tables(obj, &t, names[i]);
		bpf_object__close(obj);
		assert_non_null(find_prog(&t, "bee_test_walk"));

		if (root) {
			load_cgroup_programs(&a, names[i]);
			load_lsm_programs(&a, names[i]);
			walk_all(&t, lw, names[i]);
		}
		codegen_result_fini(&a);
		codegen_result_fini(&b);
		codegen_result_fini(&t);
		policy_free(&pol);
		free(names[i]);
	}
}

/* bee_syscalls_allowed: the bits of the groups [syscalls] allow names. */
static void test_codegen_syscalls(void **state)
{
	(void)state;
	static const struct {
		const char *allow;
		uint32_t want;
	} rows[] = {
		{ "[]", 0x0 },
		{ "[\"bpf\"]", 0x1 },
		{ "[\"io_uring\", \"perf_event_open\"]", 0x202 },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char text[256];
		snprintf(text, sizeof(text), "version = 1\nname = \"s\"\n[syscalls]\nallow = %s\n", rows[i].allow);
		struct policy pol;
		struct codegen_result r;
		policy_load_text(&pol, text);
		build(pol.p.lw, false, &r);
		if (const_of(&r, "bee_syscalls_allowed") != rows[i].want)
			fail_msg("allow = %s: bee_syscalls_allowed %#x, want %#x", rows[i].allow,
				 const_of(&r, "bee_syscalls_allowed"), rows[i].want);
		codegen_result_fini(&r);
		policy_free(&pol);
	}
}

/* Sizes and constants follow the policy: pins, net entries, audit mode,
 * ring buffer. */
static void test_codegen_params(void **state)
{
	(void)state;
	struct policy pol;
	struct diag_ctx dc;

	policy_load_text(&pol, "version = 1\nname = \"p.x-1\"\n"
			       "[exec]\nallow = [\"!/usr/bin/true\", \"!/usr/bin/false\", \"/usr/bin/env\"]\n"
			       "[net]\nconnect = [\"10.0.0.0/8:443\", \"[2001:db8::]/32:80\"]\n"
			       "[audit]\ndecisions = \"none\"\n");
	diag_init(&dc);
	struct codegen_result r;
	struct codegen_opts o = { .sz = sizeof(o), .ringbuf_size = 1u << 16 };
	assert_int_equal(codegen_build(pol.p.lw, &o, &dc, &r), 0);
	assert_non_null(find_prog(&r, "bee_bprm_check"));
	assert_non_null(find_map(&r, "bee_task"));
	check_lsm_count(&r);
	assert_int_equal(const_of(&r, "bee_audit_mode"), 2);   /* none */
	assert_int_equal(const_of(&r, "bee_pins_on"), 1);
	assert_int_equal(const_of(&r, "bee_syscalls_allowed"), 0);
	assert_int_equal(find_map(&r, "bee_pins")->max_entries, 2);
	assert_int_equal(find_map(&r, "bee_audit")->max_entries, 1u << 16);
	assert_int_equal(find_map(&r, "bee_net4")->max_entries, pol.p.lw->net->n4);
	size_t ilen;
	free(image_dfa_write(pol.p.lw->dfa[IR_DOMAIN_FS], &ilen));
	assert_int_equal(find_map(&r, "bee_fs")->value_size, ilen);
	assert_int_equal(const_of(&r, "bee_fs_image_size"), ilen);
	struct bpf_object *obj = elf_open(&r, "params");
	check_tables(obj, &r, "params");
	bpf_object__close(obj);
	if (root) {
		load_cgroup_programs(&r, "params");
		load_lsm_programs(&r, "params");
	}
	codegen_result_fini(&r);

	/* a ring buffer that is not a power of two is refused */
	o.ringbuf_size = 3u << 12;
	assert_int_equal(codegen_build(pol.p.lw, &o, &dc, &r), -EINVAL);
	assert_null(r.elf);
	assert_null(r.maps);
	assert_true(dc.errors > 0);
	diag_fini(&dc);
	policy_free(&pol);

	/* no pin: no bprm_check_security, no task storage; empty maps hold 1 */
	policy_load_text(&pol, "version = 1\nname = \"empty\"\n");
	diag_init(&dc);
	o.ringbuf_size = 0;
	assert_int_equal(codegen_build(pol.p.lw, &o, &dc, &r), 0);
	assert_null(find_prog(&r, "bee_bprm_check"));
	assert_null(find_map(&r, "bee_task"));
	assert_int_equal(const_of(&r, "bee_pins_on"), 0);
	assert_int_equal(const_of(&r, "bee_audit_mode"), 0);   /* deny */
	check_lsm_count(&r);
	assert_int_equal(find_map(&r, "bee_net4")->max_entries, 1);
	assert_int_equal(find_map(&r, "bee_net6")->max_entries, 1);
	assert_int_equal(find_map(&r, "bee_pins")->max_entries, 1);
	assert_int_equal(find_map(&r, "bee_audit")->max_entries, 256u << 10);   /* audit "deny" */
	for (size_t j = 0; j < ARRAY_LEN(lsm_required); j++)
		assert_non_null(find_prog(&r, lsm_required[j]));
	for (size_t j = 0; j < ARRAY_LEN(cgroup_required); j++)
		assert_non_null(find_prog(&r, cgroup_required[j]));
	obj = elf_open(&r, "empty");
	check_tables(obj, &r, "empty");
	bpf_object__close(obj);
	if (root)
		load_cgroup_programs(&r, "empty");
	codegen_result_fini(&r);
	diag_fini(&dc);
	policy_free(&pol);
}

static void test_codegen_names(void **state)
{
	(void)state;
	assert_string_equal(codegen_map_type_name(CODEGEN_MAP_LPM_TRIE), "lpm_trie");
	assert_string_equal(codegen_map_type_name(CODEGEN_MAP_INODE_STORAGE), "inode_storage");
	assert_string_equal(codegen_map_fill_name(CODEGEN_FILL_IMAGE_EXEC), "image:exec");
	assert_int_equal(CODEGEN_MAP_RINGBUF, BPF_MAP_TYPE_RINGBUF);
	assert_int_equal(CODEGEN_MAP_SK_STORAGE, BPF_MAP_TYPE_SK_STORAGE);
	assert_int_equal(CODEGEN_MAP_TASK_STORAGE, BPF_MAP_TYPE_TASK_STORAGE);
}

int main(void)
{
	root = geteuid() == 0;
	if (!root) {
		const char *ci = getenv("CI");
		if (ci && *ci) {
			fprintf(stderr, "test_codegen: FAILED: needs root (the kernel's verifier), and CI is set\n");
			return 1;
		}
		fprintf(stderr, "test_codegen: SKIPPED: needs root (the kernel parts: the verifier "
				"and BPF_PROG_TEST_RUN); the rest runs\n");
	}
	libbpf_set_print(libbpf_print);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_codegen_names),
		cmocka_unit_test(test_codegen_params),
		cmocka_unit_test(test_codegen_syscalls),
		cmocka_unit_test(test_codegen_examples),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
