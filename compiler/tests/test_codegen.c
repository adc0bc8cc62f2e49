/* SPDX-License-Identifier: GPL-2.0-only */
/* test_codegen: the per-policy BPF program, from lowered policy to a
 * verified ELF.
 *
 * For every example policy (the .toml files in policies/, loaded with HOME=/home/dev
 * and PROJECT=/home/dev/src/app):
 *
 *   - codegen gives an ELF for BPF, the same bytes twice (from two
 *     different temporary directories), and leaves no temporary file;
 *   - libbpf reads the programs and maps that codegen's tables list, with
 *     the same sections, types, key and value sizes, entries and flags;
 *     the LSM programs are in the ELF (the VM suite loads them);
 *   - as root: with every lsm_cgroup program's autoload off, the object
 *     loads, so every cgroup sock_addr and sock_create program passes the
 *     kernel's verifier (nothing is attached);
 *   - as root: each LSM program alone gets through libbpf (its hook found,
 *     its CO-RE accesses relocated against this kernel's BTF) to the
 *     kernel, which verifies it or, on a kernel that refuses LSM programs
 *     (this project's host), answers EPERM;
 *   - as root: the ELF built with test programs loads bee_test_walk, which
 *     runs the hooks' own walk functions (bee_walk_fs, bee_walk_exec) over
 *     the policy's images through BPF_PROG_TEST_RUN; every answer equals
 *     the host's walk of the same automaton.
 *
 * And: the options and the failures (clang missing, clang failing with
 * its stderr in the message, no pack without code, no temporary left).
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
#include <bpf/libbpf.h>
#include <dirent.h>
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
#include "codegen.h"
#include "image.h"
#include "libbeec.h"
#include "lower.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static const char *const defines[] = { "HOME=/home/dev", "PROJECT=/home/dev/src/app" };
static bool root;
static char tmp_a[64], tmp_b[64];   /* private TMPDIRs for codegen */

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

static bool dir_empty(const char *dir)
{
	DIR *d = opendir(dir);
	bool empty = true;
	assert_non_null(d);
	for (struct dirent *e; (e = readdir(d));)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			empty = false;
	closedir(d);
	return empty;
}

static void build(const struct lowered *lw, const char *tmpdir, bool test_programs,
		  struct codegen_result *r)
{
	struct codegen_opts o = { .sz = sizeof(o), .tmpdir = tmpdir, .test_programs = test_programs };
	struct diag_ctx dc;
	diag_init(&dc);
	int err = codegen_build(lw, &o, &dc, r);
	if (err) {
		diag_print(&dc, stderr);
		fail_msg("codegen_build: %d", err);
	}
	assert_int_equal(dc.errors, 0);
	diag_fini(&dc);
	assert_true(dir_empty(tmpdir));
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

static struct bpf_object *elf_open(const struct codegen_result *r, const char *name)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = name);
	struct bpf_object *obj = bpf_object__open_mem(r->elf, r->elf_len, &oo);
	if (!obj)
		fail_msg("%s: libbpf cannot open the ELF: %s", name, strerror(errno));
	return obj;
}

/* The ELF holds exactly what codegen's tables say, in that order. */
static void check_tables(struct bpf_object *obj, const struct codegen_result *r, const char *name)
{
	size_t i = 0;
	struct bpf_program *prog;
	bpf_object__for_each_program(prog, obj) {
		if (i >= r->nprogs)
			fail_msg("%s: program '%s' is not in codegen's table", name,
				 bpf_program__name(prog));
		assert_string_equal(bpf_program__name(prog), r->progs[i].name);
		assert_string_equal(bpf_program__section_name(prog), r->progs[i].section);
		assert_int_equal(is_lsm_section(r->progs[i].section), r->progs[i].lsm);
		i++;
	}
	assert_int_equal(i, r->nprogs);

	i = 0;
	struct bpf_map *map;
	bpf_object__for_each_map(map, obj) {
		if (i >= r->nmaps)
			fail_msg("%s: map '%s' is not in codegen's table", name, bpf_map__name(map));
		const struct codegen_map *m = &r->maps[i];
		assert_string_equal(bpf_map__name(map), m->name);
		assert_int_equal(bpf_map__type(map), m->type);
		assert_int_equal(bpf_map__key_size(map), m->key_size);
		assert_int_equal(bpf_map__value_size(map), m->value_size);
		assert_int_equal(bpf_map__max_entries(map), m->max_entries);
		assert_int_equal(bpf_map__map_flags(map), m->flags);
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
	"bee_connect4", "bee_connect6", "bee_sendmsg4", "bee_sendmsg6",
	"bee_bind4",    "bee_bind6",    "bee_sock_create",
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
		/* the map's value is exactly the image: the pack needs no resizing */
		assert_int_equal(bpf_map__value_size(m), len);
		__u32 zero = 0;
		assert_int_equal(bpf_map__update_elem(m, &zero, sizeof(zero), img, len, BPF_ANY), 0);
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

		build(lw, tmp_a, false, &a);
		build(lw, tmp_b, false, &b);
		/* an ELF for BPF, and the same bytes from another directory */
		assert_true(a.elf_len > sizeof(Elf64_Ehdr));
		assert_memory_equal(a.elf, ELFMAG, SELFMAG);
		assert_int_equal(((const Elf64_Ehdr *)(const void *)a.elf)->e_machine, EM_BPF);
		assert_int_equal(a.elf_len, b.elf_len);
		assert_memory_equal(a.elf, b.elf, a.elf_len);
		assert_int_equal(a.source_len, b.source_len);
		assert_memory_equal(a.source, b.source, a.source_len);
		printf("%s: %zu-byte ELF, identical twice; %zu programs, %zu maps\n", names[i],
		       a.elf_len, a.nprogs, a.nmaps);

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

		build(lw, tmp_a, true, &t);
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

/* BEE_SYSCALLS_ALLOWED: the bits of the groups [syscalls] allow names. */
static void test_codegen_syscalls(void **state)
{
	(void)state;
	static const struct {
		const char *allow;
		const char *want;
	} rows[] = {
		{ "[]", "#define BEE_SYSCALLS_ALLOWED 0x0u /* none */\n" },
		{ "[\"bpf\"]", "#define BEE_SYSCALLS_ALLOWED 0x1u /* bpf */\n" },
		{ "[\"io_uring\", \"perf_event_open\"]",
		  "#define BEE_SYSCALLS_ALLOWED 0x202u /* perf_event_open io_uring */\n" },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char text[256];
		snprintf(text, sizeof(text), "version = 1\nname = \"s\"\n[syscalls]\nallow = %s\n", rows[i].allow);
		struct policy pol;
		struct diag_ctx dc;
		char *src;
		size_t len;
		policy_load_text(&pol, text);
		diag_init(&dc);
		assert_int_equal(codegen_source(pol.p.lw, NULL, &dc, &src, &len), 0);
		if (!strstr(src, rows[i].want))
			fail_msg("allow = %s: no '%s' in\n%s", rows[i].allow, rows[i].want, src);
		free(src);
		diag_fini(&dc);
		policy_free(&pol);
	}
}

/* Sizes follow the policy: pins, net entries, audit mode, ring buffer. */
static void test_codegen_params(void **state)
{
	(void)state;
	struct policy pol;
	char *src;
	size_t len;
	struct diag_ctx dc;

	policy_load_text(&pol, "version = 1\nname = \"p.x-1\"\n"
			       "[exec]\nallow = [\"!/usr/bin/true\", \"!/usr/bin/false\", \"/usr/bin/env\"]\n"
			       "[net]\nconnect = [\"10.0.0.0/8:443\", \"[2001:db8::]/32:80\"]\n"
			       "[audit]\ndecisions = \"none\"\n");
	diag_init(&dc);
	assert_int_equal(codegen_source(pol.p.lw, NULL, &dc, &src, &len), 0);
	assert_int_equal(strlen(src), len);
	assert_non_null(strstr(src, "policy 'p.x-1'"));
	assert_non_null(strstr(src, "#define BEE_AUDIT 2 /* none */\n"));
	assert_non_null(strstr(src, "#define BEE_PINS_MAX 2\n"));
	assert_non_null(strstr(src, "#define BEE_HOOK_BPRM_CHECK 1\n"));
	assert_non_null(strstr(src, "#define BEE_RINGBUF_SIZE 65536\n"));
	assert_non_null(strstr(src, "#define BEE_TEST_PROGRAMS 0\n"));
	assert_non_null(strstr(src, "#define BEE_SYSCALLS_ALLOWED 0x0u /* none */\n"));
	assert_non_null(strstr(src, "#include \"bee_hooks.bpf.h\"\n"));
	char want[64];
	snprintf(want, sizeof(want), "#define BEE_NET4_ENTRIES %zu\n", pol.p.lw->net->n4);
	assert_non_null(strstr(src, want));
	free(src);

	struct codegen_result r;
	struct codegen_opts o = { .sz = sizeof(o), .tmpdir = tmp_a, .ringbuf_size = 1u << 16 };
	assert_int_equal(codegen_build(pol.p.lw, &o, &dc, &r), 0);
	assert_non_null(find_prog(&r, "bee_bprm_check"));
	check_lsm_count(&r);
	for (size_t i = 0; i < r.nmaps; i++) {
		if (!strcmp(r.maps[i].name, "bee_pins"))
			assert_int_equal(r.maps[i].max_entries, 2);
		if (!strcmp(r.maps[i].name, "bee_audit"))
			assert_int_equal(r.maps[i].max_entries, 1u << 16);
		if (!strcmp(r.maps[i].name, "bee_fs")) {
			size_t ilen;
			free(image_dfa_write(pol.p.lw->dfa[IR_DOMAIN_FS], &ilen));
			assert_int_equal(r.maps[i].value_size, ilen);
		}
	}
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
	assert_true(dc.errors > 0);
	assert_true(dir_empty(tmp_a));
	diag_fini(&dc);
	policy_free(&pol);

	/* no pin: no bprm_check_security, no task storage; empty maps hold 1 */
	policy_load_text(&pol, "version = 1\nname = \"empty\"\n");
	diag_init(&dc);
	o.ringbuf_size = 0;
	assert_int_equal(codegen_build(pol.p.lw, &o, &dc, &r), 0);
	assert_null(find_prog(&r, "bee_bprm_check"));
	check_lsm_count(&r);
	for (size_t i = 0; i < r.nmaps; i++) {
		assert_string_not_equal(r.maps[i].name, "bee_task");
		if (!strcmp(r.maps[i].name, "bee_net4") || !strcmp(r.maps[i].name, "bee_net6") ||
		    !strcmp(r.maps[i].name, "bee_pins"))
			assert_int_equal(r.maps[i].max_entries, 1);
		if (!strcmp(r.maps[i].name, "bee_audit"))
			assert_int_equal(r.maps[i].max_entries, 256u << 10);   /* audit "deny" */
	}
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

/* A script standing in for clang. */
static void write_script(const char *path, const char *body)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "#!/bin/sh\n%s", body);
	fclose(f);
	assert_int_equal(chmod(path, 0700), 0);
}

/* No ELF without clang's success; its stderr is the message; no
 * temporary file is left on any path. */
static void test_codegen_clang_failures(void **state)
{
	(void)state;
	struct policy pol;
	struct codegen_result r;
	struct diag_ctx dc;
	char script[128], msg[8192];

	policy_load_text(&pol, "version = 1\nname = \"fails\"\n");

	/* clang not found */
	struct codegen_opts o = { .sz = sizeof(o), .tmpdir = tmp_a, .clang = "/nonexistent/clang" };
	diag_init(&dc);
	assert_int_equal(codegen_build(pol.p.lw, &o, &dc, &r), -ENOENT);
	assert_null(r.elf);
	assert_int_equal(r.elf_len, 0);
	assert_true(dc.errors == 1);
	assert_non_null(strstr(dc.items[0].msg, "cannot run '/nonexistent/clang'"));
	assert_true(dir_empty(tmp_a));
	diag_fini(&dc);

	/* clang fails: its stderr is in the message */
	snprintf(script, sizeof(script), "%s/fake-clang", tmp_b);
	write_script(script, "echo 'policy.bpf.c:3:1: error: something is wrong' >&2\n"
			     "touch policy.bpf.o stray.tmp\nexit 1\n");
	o.clang = script;
	diag_init(&dc);
	assert_int_equal(codegen_build(pol.p.lw, &o, &dc, &r), -EIO);
	assert_null(r.elf);
	assert_true(dc.errors == 1);
	snprintf(msg, sizeof(msg), "%s", dc.items[0].msg);
	assert_non_null(strstr(msg, "policy 'fails'"));
	assert_non_null(strstr(msg, "exit status 1"));
	assert_non_null(strstr(msg, "policy.bpf.c:3:1: error: something is wrong"));
	assert_true(dir_empty(tmp_a));
	diag_fini(&dc);

	/* clang "succeeds" without output: still no pack without code */
	write_script(script, "touch policy.bpf.o\nexit 0\n");
	diag_init(&dc);
	assert_int_equal(codegen_build(pol.p.lw, &o, &dc, &r), -EIO);
	assert_null(r.elf);
	assert_true(dc.errors == 1);
	assert_true(dir_empty(tmp_a));
	diag_fini(&dc);

	/* clang is run in its directory, with relative names and the prefix map */
	write_script(script, "for a; do echo \"arg $a\"; done; echo \"cwd $(pwd)\"; "
			     "ls | sort | sed 's/^/file /'; exit 2\n");
	diag_init(&dc);
	assert_int_equal(codegen_build(pol.p.lw, &o, &dc, &r), -EIO);
	snprintf(msg, sizeof(msg), "%s", dc.items[0].msg);
	printf("%s\n", msg);
	static const char *const want[] = {
		"arg -target\narg bpf\narg -O2\narg -g\narg -mcpu=v3\n",
		"arg -c\narg policy.bpf.c\narg -o\narg policy.bpf.o\n",
		"arg -fdebug-prefix-map=", "=/bee\n",
		"file bee_hooks.bpf.h\n", "file bee_types.h\n", "file bee_dfa.h\n",
		"file bee_audit.h\n", "file bee_kernel.h\n", "file policy.bpf.c",
	};
	for (size_t i = 0; i < ARRAY_LEN(want); i++)
		if (!strstr(msg, want[i]))
			fail_msg("clang's arguments or directory lack '%s'", want[i]);
	assert_non_null(strstr(msg, "cwd "));
	assert_non_null(strstr(msg, tmp_a));
	assert_true(dir_empty(tmp_a));
	diag_fini(&dc);

	unlink(script);
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
	char *v = codegen_clang_version(NULL);
	assert_non_null(v);
	assert_non_null(strstr(v, "clang"));
	assert_null(strchr(v, '\n'));
	printf("%s\n", v);
	free(v);
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
	snprintf(tmp_a, sizeof(tmp_a), "/tmp/test_codegen-a-XXXXXX");
	snprintf(tmp_b, sizeof(tmp_b), "/tmp/test_codegen-b-XXXXXX");
	if (!mkdtemp(tmp_a) || !mkdtemp(tmp_b)) {
		perror("test_codegen: mkdtemp");
		return 1;
	}

	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_codegen_names),
		cmocka_unit_test(test_codegen_params),
		cmocka_unit_test(test_codegen_syscalls),
		cmocka_unit_test(test_codegen_clang_failures),
		cmocka_unit_test(test_codegen_examples),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	rmdir(tmp_a);
	rmdir(tmp_b);
	return rc;
}
