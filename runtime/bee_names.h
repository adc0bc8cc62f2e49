/* SPDX-License-Identifier: GPL-2.0-only */
/* bee_names.h: the names of the pack format, each spelled once.
 *
 * What the compiler writes and the loader, the tools and the BPF programs
 * look up by name: the maps (and the map_image sections named after
 * them), the other pack sections, the manifest's keys, and the permission
 * bits the automata carry. Everything else includes this header; a string
 * such as "bee_fs" or a json_object_get(o, "maps") anywhere else is a
 * second spelling, which tools/check-names refuses.
 *
 * Maps. BEE_MAPS lists each map by its C identifier, which is what the BPF
 * programs declare (`} bee_fs SEC(".maps");`) and what libbpf and the
 * kernel call it; user space gets the string by stringification
 * (bee_map_name), so there is no second spelling to drift. The BPF side
 * states BEE_MAPS_DECLARED() after its declarations: it refers to every
 * identifier of the list, so a map renamed on one side only, or dropped
 * from the programs, fails the build (docs/decisions.md, "Names").
 *
 * Compiled for the host and for BPF (no libc in BPF: the lookups by
 * string are host-only).
 */
#ifndef BEE_NAMES_H
#define BEE_NAMES_H

/* ---- maps ----------------------------------------------------------------------------------- */

/* Map properties. */
#define BEE_MAPF_LSM_ONLY (1u << 0) /* only the LSM programs use it: not made when they are left out */
#define BEE_MAPF_IMAGE (1u << 1)    /* the pack holds its records as a map_image section of its name */
#define BEE_MAPF_NO_MAP (1u << 2)   /* an image only, no BPF map: walked by the launcher */

/* X(ID, identifier, properties) */
#define BEE_MAPS(X)                                                                                \
	X(FS, bee_fs, BEE_MAPF_LSM_ONLY | BEE_MAPF_IMAGE)    /* the fs automaton */               \
	X(EXEC, bee_exec, BEE_MAPF_LSM_ONLY | BEE_MAPF_IMAGE) /* the exec automaton */            \
	X(ENV, bee_env, BEE_MAPF_IMAGE | BEE_MAPF_NO_MAP)  /* the env automaton (launcher) */     \
	X(NET4, bee_net4, BEE_MAPF_IMAGE)                  /* LPM trie of IPv4 rules */           \
	X(NET6, bee_net6, BEE_MAPF_IMAGE)                  /* LPM trie of IPv6 rules */           \
	X(PINS, bee_pins, 0)                               /* pinned executables' inodes */       \
	X(STATE, bee_state, 0)                             /* the session's state */              \
	X(INODE, bee_inode, BEE_MAPF_LSM_ONLY)             /* inode storage */                    \
	X(TASK, bee_task, BEE_MAPF_LSM_ONLY)               /* task storage */                     \
	X(SCRATCH, bee_scratch, 0)                         /* per-CPU scratch */                  \
	X(AUDIT, bee_audit, 0)                             /* the audit ring buffer */            \
	X(LOST, bee_lost, 0)                               /* per-CPU count of lost records */    \
	X(SELF_CG, bee_self_cg, BEE_MAPF_LSM_ONLY)         /* the session's cgroup */             \
	X(GUARD, bee_guard, BEE_MAPF_LSM_ONLY)             /* the guard's settings */             \
	X(SB, bee_sb, BEE_MAPF_LSM_ONLY)                   /* the session's mounts */             \
	X(WALK, bee_walk, BEE_MAPF_LSM_ONLY)               /* per-CPU path walk buffer */

enum bee_map_id {
#define BEE_MAP_ENUM(id, ident, props) BEE_MAP_##id,
	BEE_MAPS(BEE_MAP_ENUM)
#undef BEE_MAP_ENUM
	BEE_MAP__COUNT
};

#define BEE_NAME_STR_(x) #x
#define BEE_NAME_STR(x) BEE_NAME_STR_(x)

#ifdef __BEE_BPF__
/* After the map declarations: every listed map is declared under its name. */
#define BEE_MAP_DECLARED(id, ident, props) _Static_assert(sizeof(ident) > 0, #ident " is declared");
#define BEE_MAPS_DECLARED() BEE_MAPS(BEE_MAP_DECLARED)
#else
#include <stddef.h>
#include <string.h>

struct bee_map_name {
	const char *name;
	unsigned props;                 /* BEE_MAPF_* */
};

static const struct bee_map_name bee_map_names[BEE_MAP__COUNT] = {
#define BEE_MAP_ROW(id, ident, props) [BEE_MAP_##id] = { #ident, props },
	BEE_MAPS(BEE_MAP_ROW)
#undef BEE_MAP_ROW
};

/* "bee_fs" for BEE_MAP_FS. */
static inline const char *bee_map_name(enum bee_map_id m)
{
	return bee_map_names[m].name;
}

static inline unsigned bee_map_props(enum bee_map_id m)
{
	return bee_map_names[m].props;
}

/* The id of a map name, or -1 when the format has no map of that name. */
static inline int bee_map_find(const char *name)
{
	for (int m = 0; m < BEE_MAP__COUNT; m++)
		if (strcmp(bee_map_names[m].name, name) == 0)
			return m;
	return -1;
}
#endif

/* ---- sections other than map images --------------------------------------------------------- */

#define BEE_SEC_MANIFEST "manifest"     /* kind manifest */
#define BEE_SEC_ELF "policy.bpf.o"      /* kind elf */
#define BEE_SEC_SOURCE "policy.toml"    /* kind source */

/* ---- manifest keys (docs/pack-format.md, "Manifest") ----------------------------------------- */

#define BEE_MF_FORMAT "format"                      /* BEE_MF_FORMAT_VALUE */
#define BEE_MF_FORMAT_VALUE "bee-pack-manifest"
#define BEE_MF_SCHEMA "schema"                      /* the policy schema version */
#define BEE_MF_NAME "name"                          /* the policy's name; a map's name */
#define BEE_MF_PARENT "parent"
#define BEE_MF_AUDIT "audit"                        /* deny | all | none */
#define BEE_MF_SYSCALLS "syscalls"                  /* allowed groups; absent when none */
#define BEE_MF_SOURCE "source"                      /* the source section's name */
#define BEE_MF_SOURCE_NAME "source_name"            /* the policy file's base name */
#define BEE_MF_DEFINES "defines"                    /* ["NAME=VALUE", ...] */
#define BEE_MF_COMPILER "compiler"                  /* { beec } */
#define BEE_MF_COMPILER_BEEC "beec"
#define BEE_MF_HOOKS "hooks"                        /* [{ program, section, attach, lsm }] */
#define BEE_MF_HOOK_PROGRAM "program"
#define BEE_MF_HOOK_SECTION "section"
#define BEE_MF_HOOK_ATTACH "attach"
#define BEE_MF_HOOK_LSM "lsm"
#define BEE_MF_MAPS "maps"                          /* [{ name, type, sizes, flags, fill, image }] */
#define BEE_MF_MAP_NAME BEE_MF_NAME
#define BEE_MF_MAP_TYPE "type"
#define BEE_MF_MAP_KEY_SIZE "key_size"
#define BEE_MF_MAP_VALUE_SIZE "value_size"
#define BEE_MF_MAP_MAX_ENTRIES "max_entries"
#define BEE_MF_MAP_FLAGS "flags"
#define BEE_MF_MAP_FILL "fill"
#define BEE_MF_MAP_IMAGE "image"                    /* the map_image section, or null */
#define BEE_MF_CONSTANTS "constants"                /* { .rodata global: 32-bit value } */
#define BEE_MF_RULES "rules"                        /* the policy's rules, by index */
#define BEE_MF_RULE_INDEX "index"
#define BEE_MF_RULE_DOMAIN "domain"
#define BEE_MF_RULE_KIND "kind"
#define BEE_MF_RULE_TEXT "text"
#define BEE_MF_RULE_PINNED "pinned"
#define BEE_MF_RULE_VALUE "value"                   /* [env] set's value */
#define BEE_MF_RULE_LINE "line"
#define BEE_MF_RULE_COLUMN "column"
#define BEE_MF_AUTOMATA "automata"                  /* { BEE_AUTOMATA key: statistics } */
/* The automata: X(ID, key under "automata", the map that holds it). */
#define BEE_AUTOMATA(X)                 \
	X(FS, "fs", BEE_MAP_FS)         \
	X(EXEC, "exec", BEE_MAP_EXEC)   \
	X(ENV, "env", BEE_MAP_ENV)
#define BEE_MF_DFA_STATES "states"
#define BEE_MF_DFA_CLASSES "classes"
#define BEE_MF_DFA_TRANSITIONS "transitions"
#define BEE_MF_DFA_IMAGE_BYTES "image_bytes"
#define BEE_MF_LANDLOCK "landlock"                  /* the Landlock plan */
#define BEE_MF_LL_EXPRESSIBLE "expressible"
#define BEE_MF_LL_REASON "reason"
#define BEE_MF_LL_RULE "rule"                       /* the culprit; a Landlock rule's policy rule */
#define BEE_MF_LL_RULES BEE_MF_RULES
#define BEE_MF_LL_PATH "path"
#define BEE_MF_LL_BENEATH "beneath"
#define BEE_MF_LL_ACCESS "access"                   /* of these: */
#define BEE_MF_LL_READ "read"
#define BEE_MF_LL_WRITE "write"
#define BEE_MF_LL_EXECUTE "execute"
#define BEE_MF_NET_PROVENANCE "net_provenance"      /* per LPM value, the rules that made it */

/* ---- permission bits of the automata's accept states ----------------------------------------- */

#define BEE_PERM_READ (1u << 0)        /* fs: open for reading; env: pass through */
#define BEE_PERM_WRITE (1u << 1)       /* fs: open for writing */
#define BEE_PERM_EXEC (1u << 2)        /* exec: run the binary */
/* exec: run the binary if it is the very file (device, inode) pinned when
 * the session started. An unpinned grant gives EXEC and EXEC_PINNED, a
 * pinned one EXEC_PINNED only, so a pin attenuates only to a pin. */
#define BEE_PERM_EXEC_PINNED (1u << 3)
/* fs: an explicit [fs] deny matches the path: a mark, not a permission
 * (compiler/ir.h says who reads it) */
#define BEE_PERM_DENIED (1u << 4)

#endif
