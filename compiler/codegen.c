/* SPDX-License-Identifier: GPL-2.0-only */
/* codegen.c: lowered policy -> the tables that specialise bee's BPF object.
 *
 *   codegen_build
 *     codegen_params     sizes and constants from the lowered policy
 *     codegen_tables     the programs and maps for the manifest
 *     codegen_consts     the .rodata globals for the manifest
 */
#include "codegen.h"

#include "bee_audit.h"
#include "bee_dfa.h"
#include "bee_net.h"
#include "bee_session.h"
#include "hooks_object.h"
#include "mem.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The hook object's permission bits and audit modes are the IR's. */
_Static_assert(IR_PERM_READ == 0x1u && IR_PERM_WRITE == 0x2u && IR_PERM_EXEC == 0x4u &&
		       IR_PERM_EXEC_PINNED == 0x8u && IR_PERM_DENIED == 0x10u,
	       "bee_hooks.bpf.h BEE_PERM_* are ir.h's IR_PERM_*");
_Static_assert((int)IR_AUDIT_DENY == (int)BEE_AUDIT_MODE_DENY &&
		       (int)IR_AUDIT_ALL == (int)BEE_AUDIT_MODE_ALL &&
		       (int)IR_AUDIT_NONE == (int)BEE_AUDIT_MODE_NONE,
	       "bee_audit.h modes are ir.h's audit modes");

/* Map flags the hook object sets (values of <linux/bpf.h>). */
#define F_NO_PREALLOC 0x1u
#define F_RDONLY_PROG 0x80u

/* bee_hooks.bpf.h's struct bee_scratch: an event, bpf_d_path's buffer of
 * BEE_PATH_MAX + 1 bytes rounded up to 8, a sequence number. The tests
 * compare it with the ELF. */
#define SCRATCH_SIZE \
	((uint32_t)sizeof(struct bee_audit_event) + ((BEE_PATH_MAX + 1 + 7) & ~7u) + 8u)

/* The ring buffer when codegen_opts does not say: "all" sees every open,
 * "deny" only refusals; "none" never writes, but the map stays so that
 * every pack has the same maps. */
#define RINGBUF_ALL (4u << 20)
#define RINGBUF_DENY (256u << 10)
#define RINGBUF_NONE (64u << 10)
#define RINGBUF_MIN 4096u
#define RINGBUF_MAX (1u << 30)

const char *codegen_map_type_name(enum codegen_map_type t)
{
	switch (t) {
#define X(name, value, str) \
	case CODEGEN_MAP_##name: \
		return str;
		CODEGEN_MAP_TYPES(X)
#undef X
	}
	return "?";
}

const char *codegen_map_fill_name(enum codegen_map_fill f)
{
	switch (f) {
#define X(name, str)                \
	case CODEGEN_FILL_##name: \
		return str;
		CODEGEN_MAP_FILLS(X)
#undef X
	}
	return "?";
}

/* ---- parameters ------------------------------------------------------------ */

struct codegen_params {
	enum ir_audit_mode audit;
	uint32_t syscalls;               /* [syscalls] allow bits */
	uint32_t fs_image, exec_image;   /* bytes */
	uint32_t net4, net6;             /* LPM max_entries, at least 1 */
	uint32_t pins;                   /* pinned exec rules */
	uint32_t ringbuf;
	bool test_programs;
};

static bool is_pow2(uint32_t v)
{
	return v && !(v & (v - 1));
}

static int image_size(const struct dfa *d, const char *domain, struct diag_ctx *dc, uint32_t *out)
{
	struct dfa_tables t;
	dfa_tables_get(d, &t);
	uint64_t size = bee_dfa_image_size(t.nstates, t.nclasses);
	if (size > CODEGEN_IMAGE_MAX) {
		diag_error(dc, LOC_NONE,
			   "the %s automaton (%u states, %u byte classes) needs a map value of %llu bytes; "
			   "the kernel allocates at most %u",
			   domain, t.nstates, t.nclasses, (unsigned long long)size, CODEGEN_IMAGE_MAX);
		diag_note(dc, LOC_NONE, "fewer or simpler %s rules give a smaller automaton", domain);
		return -E2BIG;
	}
	*out = (uint32_t)size;
	return 0;
}

static int codegen_params(const struct lowered *lw, const struct codegen_opts *o,
			  struct diag_ctx *dc, struct codegen_params *p)
{
	const struct ir_policy *ir = lw->ir;
	int err;

	memset(p, 0, sizeof(*p));
	p->audit = ir->audit;
	p->syscalls = ir->syscalls;
	if ((err = image_size(lw->dfa[IR_DOMAIN_FS], "fs", dc, &p->fs_image)) < 0 ||
	    (err = image_size(lw->dfa[IR_DOMAIN_EXEC], "exec", dc, &p->exec_image)) < 0)
		return err;
	size_t n4 = lw->net ? lw->net->n4 : 0;
	size_t n6 = lw->net ? lw->net->nentries - lw->net->n4 : 0;
	/* the kernel refuses a map of 0 entries: an empty one holds 1 and stays empty */
	p->net4 = n4 ? (uint32_t)n4 : 1;
	p->net6 = n6 ? (uint32_t)n6 : 1;
	for (size_t i = 0; i < ir->nrules; i++)
		if (ir->rules[i].kind == IR_RULE_EXEC_ALLOW && ir->rules[i].exec.pinned)
			p->pins++;
	uint32_t rb = o ? o->ringbuf_size : 0;
	if (!rb) {
		switch (p->audit) {
		case IR_AUDIT_ALL:
			rb = RINGBUF_ALL;
			break;
		case IR_AUDIT_DENY:
			rb = RINGBUF_DENY;
			break;
		case IR_AUDIT_NONE:
			rb = RINGBUF_NONE;
			break;
		}
	}
	if (!is_pow2(rb) || rb < RINGBUF_MIN || rb > RINGBUF_MAX) {
		diag_error(dc, LOC_NONE, "ring buffer size %u is not a power of two between %u and %u",
			   rb, RINGBUF_MIN, RINGBUF_MAX);
		return -EINVAL;
	}
	p->ringbuf = rb;
	p->test_programs = o && o->test_programs;
	return 0;
}

/* ---- the programs and maps of the ELF ------------------------------------------ */

static void prog_add(struct codegen_result *r, size_t *cap, const char *name, const char *section,
		     bool lsm)
{
	struct codegen_prog *pr = VEC_PUSH(r->progs, r->nprogs, *cap);
	pr->name = name;
	pr->section = section;
	const char *slash = strchr(section, '/');
	pr->attach = slash ? slash + 1 : section;
	pr->lsm = lsm;
}

static void map_add(struct codegen_result *r, size_t *cap, const char *name,
		    enum codegen_map_type type, uint32_t key, uint32_t value, uint32_t max,
		    uint32_t flags, enum codegen_map_fill fill)
{
	struct codegen_map *m = VEC_PUSH(r->maps, r->nmaps, *cap);
	*m = (struct codegen_map){ name, type, key, value, max, flags, fill };
}

/* What bee_hooks.bpf.h defines, in its order, less what this policy leaves
 * out; test_codegen.c holds this equal to the object through libbpf. */
static void codegen_tables(const struct codegen_params *p, struct codegen_result *r)
{
	size_t pcap = 0, mcap = 0;
	uint32_t nv = (uint32_t)sizeof(struct bee_net_value);

	prog_add(r, &pcap, "bee_file_open", "lsm_cgroup/file_open", true);
	if (p->pins)
		prog_add(r, &pcap, "bee_bprm_check", "lsm_cgroup/bprm_check_security", true);
	prog_add(r, &pcap, "bee_mmap_file", "lsm_cgroup/mmap_file", true);
	prog_add(r, &pcap, "bee_mprotect", "lsm_cgroup/file_mprotect", true);
	prog_add(r, &pcap, "bee_socket", "lsm_cgroup/socket_create", true);
	prog_add(r, &pcap, "bee_sock_create", "cgroup/sock_create", false);
	prog_add(r, &pcap, "bee_listen", "lsm_cgroup/socket_listen", true);
	prog_add(r, &pcap, "bee_unix_connect", "lsm_cgroup/unix_stream_connect", true);
	prog_add(r, &pcap, "bee_unix_send", "lsm_cgroup/unix_may_send", true);
	prog_add(r, &pcap, "bee_userns", "lsm_cgroup/userns_create", true);
	prog_add(r, &pcap, "bee_ptrace", "lsm_cgroup/ptrace_access_check", true);
	prog_add(r, &pcap, "bee_connect4", "cgroup/connect4", false);
	prog_add(r, &pcap, "bee_connect6", "cgroup/connect6", false);
	prog_add(r, &pcap, "bee_sendmsg4", "cgroup/sendmsg4", false);
	prog_add(r, &pcap, "bee_sendmsg6", "cgroup/sendmsg6", false);
	prog_add(r, &pcap, "bee_bind4", "cgroup/bind4", false);
	prog_add(r, &pcap, "bee_bind6", "cgroup/bind6", false);
	/* global BPF LSM programs (bee_guard.bpf.h): no lsm_cgroup slot */
	prog_add(r, &pcap, "bee_path_chmod", "lsm/path_chmod", true);
	prog_add(r, &pcap, "bee_path_chown", "lsm/path_chown", true);
	prog_add(r, &pcap, "bee_path_truncate", "lsm/path_truncate", true);
	prog_add(r, &pcap, "bee_inode_setattr", "lsm/inode_setattr", true);
	prog_add(r, &pcap, "bee_inode_setxattr", "lsm/inode_setxattr", true);
	prog_add(r, &pcap, "bee_inode_removexattr", "lsm/inode_removexattr", true);
	prog_add(r, &pcap, "bee_inode_getattr", "lsm/inode_getattr", true);
	prog_add(r, &pcap, "bee_inode_getxattr", "lsm/inode_getxattr", true);
	prog_add(r, &pcap, "bee_inode_listxattr", "lsm/inode_listxattr", true);
	prog_add(r, &pcap, "bee_path_notify", "lsm/path_notify", true);
	prog_add(r, &pcap, "bee_file_receive", "lsm/file_receive", true);
	prog_add(r, &pcap, "bee_task_kill", "lsm/task_kill", true);
	prog_add(r, &pcap, "bee_bpf", "lsm/bpf", true);
	if (p->test_programs)
		prog_add(r, &pcap, "bee_test_walk", "syscall", false);

	map_add(r, &mcap, "bee_fs", CODEGEN_MAP_ARRAY, 4, p->fs_image, 1, F_RDONLY_PROG,
		CODEGEN_FILL_IMAGE_FS);
	map_add(r, &mcap, "bee_exec", CODEGEN_MAP_ARRAY, 4, p->exec_image, 1, F_RDONLY_PROG,
		CODEGEN_FILL_IMAGE_EXEC);
	map_add(r, &mcap, "bee_net4", CODEGEN_MAP_LPM_TRIE, sizeof(struct bee_net_key4), nv, p->net4,
		F_NO_PREALLOC | F_RDONLY_PROG, CODEGEN_FILL_IMAGE_NET4);
	map_add(r, &mcap, "bee_net6", CODEGEN_MAP_LPM_TRIE, sizeof(struct bee_net_key6), nv, p->net6,
		F_NO_PREALLOC | F_RDONLY_PROG, CODEGEN_FILL_IMAGE_NET6);
	map_add(r, &mcap, "bee_pins", CODEGEN_MAP_HASH, sizeof(struct bee_pin_key),
		sizeof(struct bee_pin_value), p->pins ? p->pins : 1, F_RDONLY_PROG, CODEGEN_FILL_LOADER);
	map_add(r, &mcap, "bee_state", CODEGEN_MAP_ARRAY, 4, sizeof(struct bee_state), 1,
		F_RDONLY_PROG, CODEGEN_FILL_LOADER);
	map_add(r, &mcap, "bee_inode", CODEGEN_MAP_INODE_STORAGE, 4, 8, 0, F_NO_PREALLOC,
		CODEGEN_FILL_PROGRAM);
	if (p->pins)
		map_add(r, &mcap, "bee_task", CODEGEN_MAP_TASK_STORAGE, 4, 16, 0, F_NO_PREALLOC,
			CODEGEN_FILL_PROGRAM);
	map_add(r, &mcap, "bee_scratch", CODEGEN_MAP_PERCPU_ARRAY, 4, SCRATCH_SIZE, 1, 0,
		CODEGEN_FILL_PROGRAM);
	map_add(r, &mcap, "bee_audit", CODEGEN_MAP_RINGBUF, 0, 0, p->ringbuf, 0, CODEGEN_FILL_AUDIT);
	map_add(r, &mcap, "bee_lost", CODEGEN_MAP_PERCPU_ARRAY, 4, 8, 1, 0, CODEGEN_FILL_AUDIT);
	map_add(r, &mcap, "bee_self_cg", CODEGEN_MAP_CGROUP_ARRAY, 4, 4, 1, 0, CODEGEN_FILL_LOADER);
	map_add(r, &mcap, "bee_guard", CODEGEN_MAP_ARRAY, 4, sizeof(struct bee_guard), 1,
		F_RDONLY_PROG, CODEGEN_FILL_LOADER);
	map_add(r, &mcap, "bee_sb", CODEGEN_MAP_HASH, 4, sizeof(struct bee_sb_mount), BEE_SB_MAX,
		F_RDONLY_PROG, CODEGEN_FILL_LOADER);
	map_add(r, &mcap, "bee_walk", CODEGEN_MAP_PERCPU_ARRAY, 4, 2 * BEE_PATH_MAX, 1, 0,
		CODEGEN_FILL_PROGRAM);
}

/* ---- constants ----------------------------------------------------------------- */

/* The object's .rodata globals (bee_hooks.bpf.h, "what the loader sets"),
 * sorted by name as the manifest writes them. */
static void codegen_consts(const struct codegen_params *p, struct codegen_result *r)
{
	const struct codegen_const c[] = {
		{ "bee_audit_mode", (uint32_t)p->audit },
		{ "bee_exec_image_size", p->exec_image },
		{ "bee_fs_image_size", p->fs_image },
		{ "bee_pins_on", p->pins ? 1u : 0u },
		{ "bee_syscalls_allowed", p->syscalls },
	};
	r->nconsts = sizeof(c) / sizeof(c[0]);
	r->consts = xmalloc(sizeof(c));
	memcpy(r->consts, c, sizeof(c));
}

/* ---- the driver ---------------------------------------------------------------- */

int codegen_build(const struct lowered *lw, const struct codegen_opts *o, struct diag_ctx *dc,
		  struct codegen_result *out)
{
	struct codegen_params p;
	memset(out, 0, sizeof(*out));
	int err = codegen_params(lw, o, dc, &p);
	if (err < 0)
		return err;
	out->elf = bee_hooks_object;
	out->elf_len = bee_hooks_object_len;
	codegen_tables(&p, out);
	codegen_consts(&p, out);
	return 0;
}

void codegen_result_fini(struct codegen_result *r)
{
	free(r->progs);
	free(r->maps);
	free(r->consts);
	memset(r, 0, sizeof(*r));
}
