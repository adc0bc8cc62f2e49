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
#include "bee_names.h"
#include "bee_net.h"
#include "bee_session.h"
#include "hooks_object.h"
#include "image.h"
#include "mem.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The permission bits are part of the format (every automaton image
 * carries them; runtime/bee_names.h), and the audit modes are the IR's. */
_Static_assert(IR_PERM_READ == 0x1u && IR_PERM_WRITE == 0x2u && IR_PERM_EXEC == 0x4u &&
		       IR_PERM_EXEC_PINNED == 0x8u && IR_PERM_DENIED == 0x10u,
	       "the permission bits of pack format 1");
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
	uint64_t size = image_dfa_size(d);   /* the image written, hops[] and all */
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

static void map_add(struct codegen_result *r, size_t *cap, enum bee_map_id id,
		    enum codegen_map_type type, uint32_t key, uint32_t value, uint32_t max,
		    uint32_t flags, enum codegen_map_fill fill)
{
	struct codegen_map *m = VEC_PUSH(r->maps, r->nmaps, *cap);
	*m = (struct codegen_map){ bee_map_name(id), type, key, value, max, flags, fill };
}

/* What bee_hooks.bpf.h defines, in its order, less what this policy leaves
 * out; test_codegen.c holds this equal to the object through libbpf. */
static void codegen_tables(const struct codegen_params *p, struct codegen_result *r)
{
	size_t pcap = 0, mcap = 0;
	uint32_t nv = (uint32_t)sizeof(struct bee_net_value);

	/* the programs of runtime/bee_names.h, less what this policy leaves out */
	for (int i = 0; i < BEE_PROG__COUNT; i++) {
		const struct bee_prog_name *pn = &bee_prog_names[i];
		if ((pn->props & BEE_PROGF_PINS && !p->pins) || (pn->props & BEE_PROGF_TEST && !p->test_programs))
			continue;
		prog_add(r, &pcap, pn->name, pn->section, pn->props & BEE_PROGF_LSM);
	}

	map_add(r, &mcap, BEE_MAP_FS, CODEGEN_MAP_ARRAY, 4, p->fs_image, 1, F_RDONLY_PROG,
		CODEGEN_FILL_IMAGE_FS);
	map_add(r, &mcap, BEE_MAP_EXEC, CODEGEN_MAP_ARRAY, 4, p->exec_image, 1, F_RDONLY_PROG,
		CODEGEN_FILL_IMAGE_EXEC);
	map_add(r, &mcap, BEE_MAP_NET4, CODEGEN_MAP_LPM_TRIE, sizeof(struct bee_net_key4), nv, p->net4,
		F_NO_PREALLOC | F_RDONLY_PROG, CODEGEN_FILL_IMAGE_NET4);
	map_add(r, &mcap, BEE_MAP_NET6, CODEGEN_MAP_LPM_TRIE, sizeof(struct bee_net_key6), nv, p->net6,
		F_NO_PREALLOC | F_RDONLY_PROG, CODEGEN_FILL_IMAGE_NET6);
	map_add(r, &mcap, BEE_MAP_PINS, CODEGEN_MAP_HASH, sizeof(struct bee_pin_key),
		sizeof(struct bee_pin_value), p->pins ? p->pins : 1, F_RDONLY_PROG, CODEGEN_FILL_LOADER);
	map_add(r, &mcap, BEE_MAP_STATE, CODEGEN_MAP_ARRAY, 4, sizeof(struct bee_state), 1,
		F_RDONLY_PROG, CODEGEN_FILL_LOADER);
	map_add(r, &mcap, BEE_MAP_DNS_ORIG, CODEGEN_MAP_SK_STORAGE, 4, sizeof(struct bee_dns_orig), 0,
		F_NO_PREALLOC, CODEGEN_FILL_PROGRAM);
	map_add(r, &mcap, BEE_MAP_INODE, CODEGEN_MAP_INODE_STORAGE, 4, 16, 0, F_NO_PREALLOC,
		CODEGEN_FILL_PROGRAM);
	if (p->pins)
		map_add(r, &mcap, BEE_MAP_TASK, CODEGEN_MAP_TASK_STORAGE, 4, 16, 0, F_NO_PREALLOC,
			CODEGEN_FILL_PROGRAM);
	map_add(r, &mcap, BEE_MAP_SCRATCH, CODEGEN_MAP_PERCPU_ARRAY, 4, SCRATCH_SIZE, 1, 0,
		CODEGEN_FILL_PROGRAM);
	map_add(r, &mcap, BEE_MAP_AUDIT, CODEGEN_MAP_RINGBUF, 0, 0, p->ringbuf, 0, CODEGEN_FILL_AUDIT);
	map_add(r, &mcap, BEE_MAP_LOST, CODEGEN_MAP_PERCPU_ARRAY, 4, 8, 1, 0, CODEGEN_FILL_AUDIT);
	map_add(r, &mcap, BEE_MAP_SELF_CG, CODEGEN_MAP_CGROUP_ARRAY, 4, 4, 1, 0, CODEGEN_FILL_LOADER);
	map_add(r, &mcap, BEE_MAP_SB, CODEGEN_MAP_HASH, 4, sizeof(struct bee_sb_mount), BEE_SB_MAX,
		F_RDONLY_PROG, CODEGEN_FILL_LOADER);
	map_add(r, &mcap, BEE_MAP_WALK, CODEGEN_MAP_PERCPU_ARRAY, 4, 2 * BEE_PATH_MAX, 1, 0,
		CODEGEN_FILL_PROGRAM);
}

/* ---- constants ----------------------------------------------------------------- */

/* The object's .rodata globals (bee_hooks.bpf.h, "what the loader sets"),
 * sorted by name as the manifest writes them. */
static void codegen_consts(const struct codegen_params *p, struct codegen_result *r)
{
	const struct codegen_const c[] = {
		{ bee_const_name(BEE_CONST_AUDIT_MODE), (uint32_t)p->audit },
		{ bee_const_name(BEE_CONST_EXEC_IMAGE_SIZE), p->exec_image },
		{ bee_const_name(BEE_CONST_FS_IMAGE_SIZE), p->fs_image },
		{ bee_const_name(BEE_CONST_PINS_ON), p->pins ? 1u : 0u },
		{ bee_const_name(BEE_CONST_SYSCALLS_ALLOWED), p->syscalls },
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
