/* SPDX-License-Identifier: GPL-2.0-only */
/* pack.h: the .bpfpack reader.
 *
 * bee_pack__open_mem and bee_pack__open_file check every field of a pack
 * (runtime/pack_format.h, docs/pack-format.md) before they return one, and
 * reject a malformed pack with -EINVAL and a one-line message in err that
 * names the subject first and the cause last, e.g.
 *
 *   pack: section 3 'fs_dfa': checksum mismatch (stored 0x..., computed 0x...)
 *
 * Messages always start with "pack: ", hold printable ASCII only (any other
 * byte is shown as '?') and fit in BEE_PACK_ERRLEN bytes. Sections are
 * numbered from 0 in table order. The library never prints.
 *
 * Ownership: a pack holds its own copy of the bytes (so a buffer or file
 * changed after the check cannot change what was checked); every pointer an
 * accessor returns points into the pack and lives until bee_pack__close.
 */
#ifndef BEE_PACK_H
#define BEE_PACK_H

#include <stddef.h>
#include <stdint.h>

#include "pack_format.h"

#define BEE_PACK_ERRLEN 512   /* room for any message of the reader */

struct bee_pack;
struct json_t;

struct bee_pack_section_info {
	uint32_t index;           /* position in the table */
	enum bee_pack_kind kind;
	const char *name;         /* NUL-terminated, 1..31 printable bytes */
	uint32_t elem_width;
	uint64_t elem_count;
	const void *data;         /* 8-byte aligned; size bytes */
	uint64_t size;
	uint64_t checksum;        /* XXH3-64 of data, as checked */
};

/* Checks len bytes at buf and, when they are a well-formed pack, stores a
 * new pack in *out and returns 0. Otherwise returns -EINVAL (malformed;
 * message in err) or -ENOMEM, and leaves *out NULL. err may be NULL. */
int bee_pack__open_mem(const void *buf, size_t len, struct bee_pack **out,
		       char *err, size_t errlen);

/* The checks of bee_pack__open_mem on a pack its writer has just made,
 * with one left out: the manifest's JSON, which the writer printed from a
 * document of its own (jansson prints only JSON it reads back), is not
 * parsed again. buf is only read. Returns 0 or what open would. */
int bee_pack__check_written(const void *buf, size_t len, char *err, size_t errlen);

/* Reads the file at path and opens it as bee_pack__open_mem does. A file
 * that cannot be read gives its negative errno and "pack: 'PATH': cause";
 * one larger than BEE_PACK_MAX_FILE gives -EFBIG. */
int bee_pack__open_file(const char *path, struct bee_pack **out,
			char *err, size_t errlen);

/* The same, every check made but one: the manifest's JSON is parsed by
 * bee_pack__manifest_parse, when it is asked for (a reader that has the
 * manifest of this digest in another form needs no parse of it). Until
 * then bee_pack__manifest gives NULL. */
int bee_pack__open_file_later(const char *path, struct bee_pack **out, char *err, size_t errlen);
/* Parses the manifest of a pack opened by bee_pack__open_file_later, with
 * the checks and messages of the other opens; 0 at once when it is parsed
 * already. -EINVAL (message in err) or -ENOMEM. */
int bee_pack__manifest_parse(struct bee_pack *pack, char *err, size_t errlen);

void bee_pack__close(struct bee_pack *pack);   /* NULL is fine */

uint32_t bee_pack__section_count(const struct bee_pack *pack);

/* The section at table position i, or NULL when i is out of range. */
const struct bee_pack_section_info *bee_pack__section(const struct bee_pack *pack, uint32_t i);

/* The section of this kind and name (name NULL: the first of the kind, which
 * for MANIFEST, SOURCE and ELF is the only one), or NULL when there is none. */
const struct bee_pack_section_info *bee_pack__find(const struct bee_pack *pack,
						    enum bee_pack_kind kind, const char *name);

/* The manifest, parsed; a JSON object owned by the pack (NULL for a pack
 * of bee_pack__open_file_later until bee_pack__manifest_parse). */
const struct json_t *bee_pack__manifest(const struct bee_pack *pack);

/* n bytes as 2n lowercase hex digits and a NUL. */
void bee_hex(const uint8_t *b, size_t n, char *out);

/* The 16 digest bytes, and the same as 32 lowercase hex digits and a NUL. */
const uint8_t *bee_pack__digest(const struct bee_pack *pack);
void bee_pack__digest_hex(const struct bee_pack *pack, char out[BEE_PACK_DIGEST_HEX_LEN + 1]);

/* The bytes as they were checked, and their length. */
const void *bee_pack__bytes(const struct bee_pack *pack, size_t *len);

#endif
