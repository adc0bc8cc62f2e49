/* SPDX-License-Identifier: GPL-2.0-only */
/* codegen.h: the per-policy BPF program: C source from the lowered policy,
 * then clang, then an ELF for the pack.
 *
 *   struct lowered ──► policy.bpf.c  (#defines + #include "bee_hooks.bpf.h")
 *                  ──► clang -target bpf -O2 -g -mcpu=v3 in a private
 *                      temporary directory holding libbeec's embedded
 *                      headers (templates.h), never the source tree's
 *                  ──► ELF bytes, and the programs and maps it holds
 *
 * The per-policy source only sizes things: the automata's image sizes
 * (exactly image_dfa_write's length for lw->dfa[IR_DOMAIN_FS] and
 * lw->dfa[IR_DOMAIN_EXEC]: the pack's images must be written from those
 * same automata), the LPM entry counts, the pin map, the ring buffer, the
 * audit mode, and whether bprm_check_security is needed.
 *
 * Which hooks a policy gets. Deny by default means an empty domain still
 * needs its hooks: a policy without [fs] must still refuse every open, one
 * without [net] every connect, sendmsg and bind. So every program of
 * bpf/bee_hooks.bpf.h is always emitted, except bee_bprm_check (and its
 * task storage), which only re-checks pinned exec rules and is emitted
 * when the policy pins at least one: 9 lsm_cgroup hooks, 10 with pins, of
 * the kernel's 10 (CODEGEN_LSM_CGROUP_MAX). Maps never have zero entries (the
 * kernel refuses that): an empty LPM map or pin map has max_entries 1 and
 * stays empty.
 *
 * Determinism: the same lowered policy gives the same ELF bytes. clang runs
 * with its working directory in the temporary directory, relative file
 * names and -fdebug-prefix-map=<tmp>=/bee, so no path of this machine or
 * run is in the output. The result depends on the clang and the libbpf
 * headers (<bpf/bpf_helpers.h>, ...) installed; the pack's manifest should
 * record the clang version (codegen_clang_version).
 *
 * Ownership: codegen_build fills *out with buffers that
 * codegen_result_fini releases; it borrows lw.
 */
#ifndef BEE_CODEGEN_H
#define BEE_CODEGEN_H

#include "diag.h"
#include "lower.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Map types the template uses: (name, enum bpf_map_type value, manifest name). */
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
	const char *name;             /* "bee_fs": the ELF's map name */
	enum codegen_map_type type;
	uint32_t key_size;
	uint32_t value_size;
	uint32_t max_entries;
	uint32_t flags;               /* BPF_F_* map_flags */
	enum codegen_map_fill fill;
};

struct codegen_prog {
	const char *name;             /* "bee_file_open": the ELF's program name */
	const char *section;          /* "lsm_cgroup/file_open" */
	const char *attach;           /* the hook or attach point: "file_open", "connect4" */
	bool lsm;                     /* needs the BPF LSM (BPF_LSM_CGROUP) */
};

struct codegen_opts {
	size_t sz;                    /* sizeof(struct codegen_opts) */
	const char *clang;            /* NULL: $BEE_CLANG, else "clang" (from PATH) */
	uint32_t ringbuf_size;        /* bytes; 0: by audit mode (see codegen.c) */
	const char *tmpdir;           /* NULL: $TMPDIR, else /tmp */
	/* Adds the never-attached test program bee_test_walk (SEC "syscall")
	 * that runs the hooks' walks, so tests can verify and run them where
	 * LSM programs do not load. Never for a pack. */
	bool test_programs;
};

struct codegen_result {
	uint8_t *elf;                 /* the BPF ELF */
	size_t elf_len;
	char *source;                 /* the per-policy C source clang compiled */
	size_t source_len;
	struct codegen_prog *progs;   /* in ELF order */
	size_t nprogs;
	struct codegen_map *maps;     /* in ELF order */
	size_t nmaps;
};

/* The per-policy C source alone (no clang). Returns 0 and an xmalloc'ed
 * NUL-terminated source in *src, or -E2BIG with an error queued when an
 * automaton's image is larger than a kernel map value may be. */
int codegen_source(const struct lowered *lw, const struct codegen_opts *o, struct diag_ctx *dc,
		   char **src, size_t *len);

/* Source, clang, ELF. Returns 0, or a negative errno with an error queued
 * on dc: -E2BIG (an image too large), -EINVAL (bad options), -ENOENT
 * (clang not found), -EIO (clang failed: its stderr is in the message),
 * or the errno of a temporary-file operation. On failure *out is empty.
 * The temporary directory is removed on every path. */
int codegen_build(const struct lowered *lw, const struct codegen_opts *o, struct diag_ctx *dc,
		  struct codegen_result *out);
void codegen_result_fini(struct codegen_result *r);

/* The first line of `clang --version` for the manifest (xmalloc'ed), or
 * NULL when clang cannot be run. */
char *codegen_clang_version(const struct codegen_opts *o);

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
