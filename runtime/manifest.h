/* SPDX-License-Identifier: GPL-2.0-only */
/* manifest.h: the one reader of a pack's manifest.
 *
 * beec show, beec's reading of a pack as a policy, bee-load and the VM
 * rig's bee-verify all read the manifest through bee_manifest_parse:
 * every key (runtime/bee_names.h) is looked up here and nowhere else, and
 * a manifest is accepted only when each key the readers rely on is there
 * with its type. The pack reader (pack.h) has proved the JSON well formed
 * already; what the images hold is checked by whoever loads them
 * (loader/manifest.c).
 *
 * Ownership: strings and net_prov point into the pack's manifest and live
 * as long as the pack; the arrays are the manifest's, released by
 * bee_manifest_fini. Nothing here prints or exits.
 */
#ifndef BEE_MANIFEST_H
#define BEE_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "bee_names.h"

struct bee_pack;

struct bee_mf_hook {
	const char *program, *section, *attach;
	bool lsm;
};

struct bee_mf_map {
	const char *name, *type, *fill, *image;   /* image NULL when none */
	uint32_t key_size, value_size, max_entries, flags;
};

/* A .rodata global of the BPF object the loader sets before load. */
struct bee_mf_const {
	const char *name;
	uint32_t value;
};

struct bee_mf_rule {
	unsigned index;
	const char *domain, *kind, *text;
	enum bee_domain rdomain;    /* domain and kind by id: the reader knows both */
	enum bee_rule_kind rkind;
	const char *value;          /* env set only */
	bool pinned;                /* exec only */
	unsigned line, column;
};

struct bee_mf_ll_rule {
	const char *path;
	bool beneath;
	uint32_t perms;             /* BEE_PERM_READ | WRITE | EXEC */
	unsigned rule;
};

/* One automaton's statistics (BEE_AUTOMATA order); zero when the manifest
 * gives none. */
struct bee_mf_automaton {
	const char *key;            /* "fs", "exec", "env" */
	uint64_t states, classes, transitions, image_bytes;
};

#define BEE_MF_NAUTOMATA 3

/* Everything the readers use from a pack's manifest. */
struct bee_manifest {
	const char *name;
	unsigned schema;
	const char *parent;                     /* NULL when none */
	const char **includes;                  /* "NAME PATH xxh3:HEX" of include = [...] */
	size_t nincludes;
	unsigned audit;                         /* enum bee_audit_mode */
	const char **defines;
	size_t ndefines;
	const char *source;                     /* SOURCE section name */
	const char *source_name;                /* the policy's file name */
	const char *compiler_beec;              /* beec's version; NULL when not given */
	struct bee_mf_hook *hooks;
	size_t nhooks;
	struct bee_mf_map *maps;
	size_t nmaps;
	struct bee_mf_const *consts;            /* "constants"; none when absent */
	size_t nconsts;
	struct bee_mf_rule *rules;
	size_t nrules;
	struct bee_mf_automaton automata[BEE_MF_NAUTOMATA];
	const json_t *net_prov;                 /* array of arrays of rule indices */
	bool ll_expressible;
	const char *ll_reason;
	long ll_rule;                           /* -1 when none is named */
	struct bee_mf_ll_rule *ll_rules;
	size_t nll;
	uint32_t syscalls_allowed;              /* bits of enum bee_syscall_group ("syscalls") */
	void *image;                            /* thawed: the image its strings point into */
};

/* Reads the manifest root into m. Returns 0; -EINVAL with what is wrong
 * in err ("'schema' is not 1 (this reader reads 1)", without a prefix);
 * or -ENOMEM. On failure m is released already. */
int bee_manifest_parse(const json_t *root, struct bee_manifest *m, char *err, size_t errlen);
/* The same for the manifest of an open pack. */
int bee_manifest_read(const struct bee_pack *pack, struct bee_manifest *m, char *err, size_t errlen);
void bee_manifest_fini(struct bee_manifest *m);

/* The manifest's image: everything above in one block of bytes, read back
 * without jansson (a session's launch reads the manifest each time, and
 * its JSON parse was the largest part of a warm start). An image is made
 * from a parsed manifest only, is written and read under a 16-byte key
 * (the loader's: the pack's digest and its own build id) and carries a
 * checksum; it is native-endian and for this reader alone (a version
 * word), kept where only its writer may write (the loader's state
 * directory). net_prov is not in it: a thawed manifest has none (NULL),
 * and whatever needs it (revoke, beec show) parses the pack.
 *
 * bee_manifest_freeze: 0 with a malloc'ed image in *out, *len bytes; or
 * -ENOMEM. bee_manifest_thaw: reads len bytes at img into m, which takes
 * img over (bee_manifest_fini frees it); 0, or -EINVAL when img is not a
 * whole image of this version under this key (img is still the
 * caller's), or -ENOMEM. */
int bee_manifest_freeze(const struct bee_manifest *m, const uint8_t key[16], void **out, size_t *len);
int bee_manifest_thaw(void *img, size_t len, const uint8_t key[16], struct bee_manifest *m);

const struct bee_mf_rule *bee_manifest_rule(const struct bee_manifest *m, unsigned index);
const struct bee_mf_map *bee_manifest_map(const struct bee_manifest *m, const char *name);
const struct bee_mf_hook *bee_manifest_hook(const struct bee_manifest *m, const char *program);
const struct bee_mf_const *bee_manifest_const(const struct bee_manifest *m, const char *name);
/* Whether an exec rule is pinned (the object's bee_bprm_check is needed). */
bool bee_manifest_pins(const struct bee_manifest *m);
/* "net.connect 127.0.0.1/32:8080/tcp" */
void bee_rule_format(const struct bee_mf_rule *r, char *buf, size_t size);

#endif
