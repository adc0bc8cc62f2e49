/* SPDX-License-Identifier: GPL-2.0-only */
/* bee_names.h: the names of the pack format, each spelled once.
 *
 * What the compiler writes and the loader, the tools and the BPF programs
 * look up by name: the maps (and the map_image sections named after
 * them), the programs, the object's constants, the other pack sections,
 * the manifest's keys, and the permission bits the automata carry. Everything else includes this header; a string
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
/* one per session: the object keys it by the session (bee_hooks.bpf.h's
 * bee_sess), a hash of maps whose inner map has the manifest's shape, or a
 * hash of the manifest's values; the loader sizes it for the sessions one
 * loaded pack serves (loader/cache.c) */
#define BEE_MAPF_SESSION (1u << 3)

/* The BPF object's maps: X(ID, identifier, properties). */
#define BEE_BPF_MAPS(X)                                                                            \
	X(FS, bee_fs, BEE_MAPF_LSM_ONLY | BEE_MAPF_IMAGE | BEE_MAPF_SESSION)  /* the fs automaton */ \
	X(EXEC, bee_exec, BEE_MAPF_LSM_ONLY | BEE_MAPF_IMAGE | BEE_MAPF_SESSION) /* the exec automaton */ \
	X(NET4, bee_net4, BEE_MAPF_IMAGE | BEE_MAPF_SESSION) /* LPM trie of IPv4 rules */         \
	X(NET6, bee_net6, BEE_MAPF_IMAGE | BEE_MAPF_SESSION) /* LPM trie of IPv6 rules */         \
	X(PINS, bee_pins, BEE_MAPF_SESSION)                /* pinned executables' inodes */       \
	X(STATE, bee_state, BEE_MAPF_SESSION)              /* the session's state */              \
	X(INODE, bee_inode, BEE_MAPF_LSM_ONLY)             /* inode storage */                    \
	X(TASK, bee_task, BEE_MAPF_LSM_ONLY)               /* task storage */                     \
	X(SCRATCH, bee_scratch, 0)                         /* per-CPU scratch */                  \
	X(AUDIT, bee_audit, BEE_MAPF_SESSION)              /* the audit ring buffer */            \
	X(LOST, bee_lost, BEE_MAPF_SESSION)                /* per-CPU count of lost records */    \
	X(SELF_CG, bee_self_cg, BEE_MAPF_LSM_ONLY)         /* the pack's cgroup */                \
	X(SB, bee_sb, BEE_MAPF_LSM_ONLY)                   /* the mounts' paths */                \
	X(WALK, bee_walk, BEE_MAPF_LSM_ONLY)               /* per-CPU path walk buffer */  \
	X(DNS_ORIG, bee_dns_orig, 0)                       /* per socket: a redirected query's server */
/* Images without a BPF map. */
#define BEE_IMAGE_MAPS(X)                                                                          \
	X(ENV, bee_env, BEE_MAPF_IMAGE | BEE_MAPF_NO_MAP)  /* the env automaton (launcher) */ \
	X(HOSTS, bee_hosts, BEE_MAPF_IMAGE | BEE_MAPF_NO_MAP) /* host names (the DNS stub) */
#define BEE_MAPS(X) BEE_BPF_MAPS(X) BEE_IMAGE_MAPS(X)

enum bee_map_id {
#define BEE_MAP_ENUM(id, ident, props) BEE_MAP_##id,
	BEE_MAPS(BEE_MAP_ENUM)
#undef BEE_MAP_ENUM
	BEE_MAP__COUNT
};

#define BEE_NAME_STR_(x) #x
#define BEE_NAME_STR(x) BEE_NAME_STR_(x)

#ifdef __BEE_BPF__
/* After the map declarations: every map of the object is declared under its name. */
#define BEE_MAP_DECLARED(id, ident, props) _Static_assert(sizeof(ident) > 0, #ident " is declared");
#define BEE_MAPS_DECLARED() BEE_BPF_MAPS(BEE_MAP_DECLARED)
/* After the constants: every listed one is a 32-bit global of that name. */
#define BEE_CONST_DECLARED(id, ident) _Static_assert(sizeof(ident) == 4, #ident " is a 32-bit constant");
#define BEE_CONSTS_DECLARED() BEE_CONSTS(BEE_CONST_DECLARED)
#define BEE_LOADER_CONSTS_DECLARED() BEE_LOADER_CONSTS(BEE_CONST_DECLARED)
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

/* ---- programs --------------------------------------------------------------------------------- */

/* Program properties. */
#define BEE_PROGF_LSM (1u << 0)     /* a BPF LSM program: loaded under the bpf-lsm backend only */
#define BEE_PROGF_PINS (1u << 1)    /* only for a policy with a pinned exec rule */
#define BEE_PROGF_TEST (1u << 2)    /* the tests' program, only when they ask for it */

/* X(ID, identifier, ELF section, properties), in the object's order. */
#define BEE_PROGS(X)                                                                                   \
	X(FILE_OPEN, bee_file_open, "lsm_cgroup/file_open", BEE_PROGF_LSM)                             \
	X(BPRM_CHECK, bee_bprm_check, "lsm_cgroup/bprm_check_security", BEE_PROGF_LSM | BEE_PROGF_PINS) \
	X(MMAP_FILE, bee_mmap_file, "lsm_cgroup/mmap_file", BEE_PROGF_LSM)                             \
	X(MPROTECT, bee_mprotect, "lsm_cgroup/file_mprotect", BEE_PROGF_LSM)                           \
	X(SOCKET, bee_socket, "lsm_cgroup/socket_create", BEE_PROGF_LSM)                               \
	X(SOCK_CREATE, bee_sock_create, "cgroup/sock_create", 0)                                       \
	X(LISTEN, bee_listen, "lsm_cgroup/socket_listen", BEE_PROGF_LSM)                               \
	X(UNIX_CONNECT, bee_unix_connect, "lsm_cgroup/unix_stream_connect", BEE_PROGF_LSM)             \
	X(UNIX_SEND, bee_unix_send, "lsm_cgroup/unix_may_send", BEE_PROGF_LSM)                         \
	X(USERNS, bee_userns, "lsm_cgroup/userns_create", BEE_PROGF_LSM)                               \
	X(PTRACE, bee_ptrace, "lsm_cgroup/ptrace_access_check", BEE_PROGF_LSM)                         \
	X(CONNECT4, bee_connect4, "cgroup/connect4", 0)                                                \
	X(CONNECT6, bee_connect6, "cgroup/connect6", 0)                                                \
	X(SENDMSG4, bee_sendmsg4, "cgroup/sendmsg4", 0)                                                \
	X(SENDMSG6, bee_sendmsg6, "cgroup/sendmsg6", 0)                                                \
	X(RECVMSG4, bee_recvmsg4, "cgroup/recvmsg4", 0)                                                \
	X(RECVMSG6, bee_recvmsg6, "cgroup/recvmsg6", 0)                                                \
	X(BIND4, bee_bind4, "cgroup/bind4", 0)                                                         \
	X(BIND6, bee_bind6, "cgroup/bind6", 0)                                                         \
	/* the global BPF LSM programs (bee_guard.bpf.h): no lsm_cgroup slot */                       \
	X(PATH_CHMOD, bee_path_chmod, "lsm/path_chmod", BEE_PROGF_LSM)                                 \
	X(PATH_CHOWN, bee_path_chown, "lsm/path_chown", BEE_PROGF_LSM)                                 \
	X(PATH_TRUNCATE, bee_path_truncate, "lsm/path_truncate", BEE_PROGF_LSM)                        \
	X(INODE_SETATTR, bee_inode_setattr, "lsm/inode_setattr", BEE_PROGF_LSM)                        \
	X(INODE_SETXATTR, bee_inode_setxattr, "lsm/inode_setxattr", BEE_PROGF_LSM)                     \
	X(INODE_REMOVEXATTR, bee_inode_removexattr, "lsm/inode_removexattr", BEE_PROGF_LSM)            \
	X(INODE_GETATTR, bee_inode_getattr, "lsm/inode_getattr", BEE_PROGF_LSM)                        \
	X(INODE_GETXATTR, bee_inode_getxattr, "lsm/inode_getxattr", BEE_PROGF_LSM)                     \
	X(INODE_LISTXATTR, bee_inode_listxattr, "lsm/inode_listxattr", BEE_PROGF_LSM)                  \
	X(PATH_NOTIFY, bee_path_notify, "lsm/path_notify", BEE_PROGF_LSM)                              \
	X(FILE_RECEIVE, bee_file_receive, "lsm/file_receive", BEE_PROGF_LSM)                           \
	X(TASK_KILL, bee_task_kill, "lsm/task_kill", BEE_PROGF_LSM)                                    \
	X(BPF, bee_bpf, "lsm/bpf", BEE_PROGF_LSM)                                                      \
	X(TEST_WALK, bee_test_walk, "syscall", BEE_PROGF_TEST)

enum bee_prog_id {
#define BEE_PROG_ENUM(id, ident, section, props) BEE_PROG_##id,
	BEE_PROGS(BEE_PROG_ENUM)
#undef BEE_PROG_ENUM
	BEE_PROG__COUNT
};

/* ---- constants: the object's .rodata globals, set by the loader ------------------------------ */

/* X(ID, identifier), sorted by name as the manifest's "constants" holds them. */
#define BEE_CONSTS(X)                           \
	X(AUDIT_MODE, bee_audit_mode)           \
	X(EXEC_IMAGE_SIZE, bee_exec_image_size) \
	X(FS_IMAGE_SIZE, bee_fs_image_size)     \
	X(PINS_ON, bee_pins_on)                 \
	X(SYSCALLS_ALLOWED, bee_syscalls_allowed)

enum bee_const_id {
#define BEE_CONST_ENUM(id, ident) BEE_CONST_##id,
	BEE_CONSTS(BEE_CONST_ENUM)
#undef BEE_CONST_ENUM
	BEE_CONST__COUNT
};

/* Constants the loader sets from where it loads a pack, never from the
 * manifest (which does not list them): X(ID, identifier). */
#define BEE_LOADER_CONSTS(X) \
	X(SESSION_LEVEL, bee_session_level)   /* the sessions' cgroup depth */

enum bee_loader_const_id {
#define BEE_CONST_ENUM(id, ident) BEE_LCONST_##id,
	BEE_LOADER_CONSTS(BEE_CONST_ENUM)
#undef BEE_CONST_ENUM
	BEE_LCONST__COUNT
};

#ifndef __BEE_BPF__
struct bee_prog_name {
	const char *name;
	const char *section;
	unsigned props;                 /* BEE_PROGF_* */
};

static const struct bee_prog_name bee_prog_names[BEE_PROG__COUNT] = {
#define BEE_PROG_ROW(id, ident, sec, props) [BEE_PROG_##id] = { #ident, sec, props },
	BEE_PROGS(BEE_PROG_ROW)
#undef BEE_PROG_ROW
};

/* "bee_file_open" for BEE_PROG_FILE_OPEN. */
static inline const char *bee_prog_name(enum bee_prog_id p)
{
	return bee_prog_names[p].name;
}

static const char *const bee_const_names[BEE_CONST__COUNT] = {
#define BEE_CONST_ROW(id, ident) [BEE_CONST_##id] = #ident,
	BEE_CONSTS(BEE_CONST_ROW)
#undef BEE_CONST_ROW
};

/* "bee_fs_image_size" for BEE_CONST_FS_IMAGE_SIZE. */
static inline const char *bee_const_name(enum bee_const_id c)
{
	return bee_const_names[c];
}

static const char *const bee_loader_const_names[BEE_LCONST__COUNT] = {
#define BEE_CONST_ROW(id, ident) [BEE_LCONST_##id] = #ident,
	BEE_LOADER_CONSTS(BEE_CONST_ROW)
#undef BEE_CONST_ROW
};

/* "bee_session_level" for BEE_LCONST_SESSION_LEVEL. */
static inline const char *bee_loader_const_name(enum bee_loader_const_id c)
{
	return bee_loader_const_names[c];
}
#endif

/* ---- sections other than map images --------------------------------------------------------- */

#define BEE_SEC_MANIFEST "manifest"     /* kind manifest */
#define BEE_SEC_ELF "bpf"               /* kind elf: bee's hook object */
#define BEE_SEC_SOURCE "policy.toml"    /* kind source */

/* ---- manifest keys (docs/pack-format.md, "Manifest") ----------------------------------------- */

#define BEE_MF_FORMAT "format"                      /* BEE_MF_FORMAT_VALUE */
#define BEE_MF_FORMAT_VALUE "bee-pack-manifest"
#define BEE_MF_SCHEMA "schema"                      /* the policy schema version */
#define BEE_MF_NAME "name"                          /* the policy's name; a map's name */
#define BEE_MF_PARENT "parent"
#define BEE_MF_INCLUDES "includes"                  /* ["NAME PATH xxh3:HEX"] merged; absent when none */
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
#define BEE_MF_AUTOMATON_FS "fs"
#define BEE_MF_AUTOMATON_EXEC "exec"
#define BEE_MF_AUTOMATON_ENV "env"
/* The automata: X(ID, key under "automata", the map that holds it). */
#define BEE_AUTOMATA(X)                                 \
	X(FS, BEE_MF_AUTOMATON_FS, BEE_MAP_FS)          \
	X(EXEC, BEE_MF_AUTOMATON_EXEC, BEE_MAP_EXEC)    \
	X(ENV, BEE_MF_AUTOMATON_ENV, BEE_MAP_ENV)
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

/* ---- rules: the values of a manifest rule's "domain" and "kind" ----------------------------- */

/* X(ID, name) */
#define BEE_DOMAINS(X)         \
	X(FS, "fs")            \
	X(EXEC, "exec")        \
	X(NET, "net")          \
	X(ENV, "env")

/* X(ID, domain ID, the policy table's key) */
#define BEE_RULE_KINDS(X)                         \
	X(FS_READ, FS, "read")                    \
	X(FS_WRITE, FS, "write")                  \
	X(FS_DENY, FS, "deny")                    \
	X(EXEC_ALLOW, EXEC, "allow")              \
	X(NET_CONNECT, NET, "connect")            \
	X(NET_BIND, NET, "bind")                  \
	X(NET_DENY, NET, "deny")                  \
	X(NET_HOST, NET, "connect")  /* a host name: the policy key is connect's */ \
	X(ENV_ALLOW, ENV, "allow")                \
	X(ENV_SET, ENV, "set")

enum bee_domain {
#define BEE_DOMAIN_ENUM(id, name) BEE_DOMAIN_##id,
	BEE_DOMAINS(BEE_DOMAIN_ENUM)
#undef BEE_DOMAIN_ENUM
	BEE_DOMAIN__COUNT
};

enum bee_rule_kind {
#define BEE_RULE_ENUM(id, dom, key) BEE_RULE_##id,
	BEE_RULE_KINDS(BEE_RULE_ENUM)
#undef BEE_RULE_ENUM
	BEE_RULE__COUNT
};

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
