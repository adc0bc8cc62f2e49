/* SPDX-License-Identifier: GPL-2.0-only */
/* codegen.h: what a policy changes in bee's one BPF object.
 *
 * The hook programs (bpf/bee_hooks.bpf.h) are compiled once, when bee is
 * built, into one object that libbeec embeds (hooks_object.h); every pack
 * carries it unchanged. No compiler runs when a policy is compiled:
 * codegen computes the tables the manifest carries, and the loader
 * applies them with libbpf before bpf_object__load:
 *
 *   maps       every map the policy needs, with its type, key and value
 *              sizes, entries and flags: the loader sets value_size and
 *              max_entries of each (bee_fs and bee_exec: exactly
 *              image_dfa_write's length for lw->dfa[IR_DOMAIN_FS] and
 *              lw->dfa[IR_DOMAIN_EXEC], so the pack's images must be
 *              written from those same automata; the LPM entry counts,
 *              the pin map, the ring buffer) and does not create a map of
 *              the object this list leaves out (bee_task without pins)
 *   programs   the hooks to load and attach
 *   constants  the object's .rodata globals, by name: the audit mode, the
 *              [syscalls] bits, the two image sizes, whether pins are
 *              checked (bee_hooks.bpf.h, "what the loader sets")
 *
 * Which hooks a policy gets. Deny by default means an empty domain still
 * needs its hooks: a policy without [fs] must still refuse every open, one
 * without [net] every connect, sendmsg and bind. So every program of the
 * object is listed, except bee_bprm_check (and its task storage), which
 * only re-checks pinned exec rules and is listed when the policy pins at
 * least one: 9 lsm_cgroup hooks, 10 with pins, of the kernel's 10
 * (CODEGEN_LSM_CGROUP_MAX); and bee_test_walk, for tests only. Maps never
 * have zero entries (the kernel refuses that): an empty LPM map or pin map
 * has max_entries 1 and stays empty.
 *
 * Determinism: the tables are a function of the lowered policy alone, and
 * the object's bytes are bee's build's, so a pack depends only on the
 * policy and on the beec that wrote it (not on any compiler installed).
 *
 * Ownership: codegen_build fills *out with tables that codegen_result_fini
 * releases; out->elf points into libbeec's embedded object. It borrows lw.
 */
#ifndef BEE_CODEGEN_H
#define BEE_CODEGEN_H

#include "diag.h"
#include "lower.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Map types the hook object uses: (name, enum bpf_map_type value, manifest name). */
#define CODEGEN_MAP_TYPES(X)                                  \
	X(HASH, 1, "hash")                                    \
	X(ARRAY, 2, "array")                                  \
	X(CGROUP_ARRAY, 8, "cgroup_array")                    \
	X(PERCPU_ARRAY, 6, "percpu_array")                    \
	X(LPM_TRIE, 11, "lpm_trie")                           \
	X(SK_STORAGE, 24, "sk_storage")                       \
	X(RINGBUF, 27, "ringbuf")                             \
	X(INODE_STORAGE, 28, "inode_storage")                 \
	X(TASK_STORAGE, 29, "task_storage")

enum codegen_map_type {
#define X(name, value, str) CODEGEN_MAP_##name = value,
	CODEGEN_MAP_TYPES(X)
#undef X
};

const char *codegen_map_type_name(enum codegen_map_type t);

/* What fills a map: an image section of the pack, the loader at session
 * start, or the programs themselves. */
#define CODEGEN_MAP_FILLS(X)                                   \
	X(IMAGE_FS, "image:fs")     /* the fs automaton image */   \
	X(IMAGE_EXEC, "image:exec") /* the exec automaton image */ \
	X(IMAGE_NET4, "image:net4") /* bee_net4 LPM entries */     \
	X(IMAGE_NET6, "image:net6") /* bee_net6 LPM entries */     \
	X(LOADER, "loader")         /* bee_pins, bee_state (bee_session.h) */ \
	X(PROGRAM, "program")       /* written by the programs only */ \
	X(AUDIT, "audit")           /* read by the loader: bee_audit, bee_lost */

enum codegen_map_fill {
#define X(name, str) CODEGEN_FILL_##name,
	CODEGEN_MAP_FILLS(X)
#undef X
};

const char *codegen_map_fill_name(enum codegen_map_fill f);

struct codegen_map {
	const char *name;             /* bee_map_name(): the ELF's map name */
	enum codegen_map_type type;
	uint32_t key_size;
	uint32_t value_size;
	uint32_t max_entries;
	uint32_t flags;               /* BPF_F_* map_flags */
	enum codegen_map_fill fill;
};

struct codegen_prog {
	const char *name;             /* bee_prog_name(): the ELF's program name */
	const char *section;          /* "lsm_cgroup/file_open" */
	const char *attach;           /* the hook or attach point: "file_open", "connect4" */
	bool lsm;                     /* needs the BPF LSM (BPF_LSM_CGROUP) */
};

/* One .rodata global of the object (a __u32), by its name. */
struct codegen_const {
	const char *name;             /* bee_const_name(): a .rodata global */
	uint32_t value;
};

struct codegen_opts {
	size_t sz;                    /* sizeof(struct codegen_opts) */
	uint32_t ringbuf_size;        /* bytes; 0: by audit mode (see codegen.c) */
	/* Lists the never-attached test program bee_test_walk (SEC "syscall")
	 * that runs the hooks' walks, so tests can verify and run them where
	 * LSM programs do not load. Never for a pack. */
	bool test_programs;
};

struct codegen_result {
	const uint8_t *elf;           /* bee's BPF object (hooks_object.h), not owned */
	size_t elf_len;
	struct codegen_prog *progs;   /* in ELF order */
	size_t nprogs;
	struct codegen_map *maps;     /* in ELF order */
	size_t nmaps;
	struct codegen_const *consts; /* sorted by name */
	size_t nconsts;
};

/* The tables of a lowered policy. Returns 0, or a negative errno with an
 * error queued on dc: -E2BIG (an automaton's image is larger than a kernel
 * map value may be), -EINVAL (bad options). On failure *out is empty. */
int codegen_build(const struct lowered *lw, const struct codegen_opts *o, struct diag_ctx *dc,
		  struct codegen_result *out);
void codegen_result_fini(struct codegen_result *r);

/* Distinct hooks that BPF_LSM_CGROUP programs may be attached to at once,
 * system-wide (CGROUP_LSM_NUM, kernels 6.0 to at least 6.12): a policy's
 * lsm_cgroup programs must stay within it. A pack with pins takes all 10,
 * so it cannot attach while anything else holds an lsm_cgroup program on
 * another hook; one without pins leaves one slot. */
#define CODEGEN_LSM_CGROUP_MAX 10

/* The largest map value the kernel allocates (KMALLOC_MAX_SIZE with 4 KiB
 * pages): an automaton image must fit in one. */
#define CODEGEN_IMAGE_MAX (4u << 20)

#endif
