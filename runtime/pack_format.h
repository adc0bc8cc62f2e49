/* SPDX-License-Identifier: GPL-2.0-only */
/* pack_format.h: the on-disk layout of a .bpfpack, format version 1.
 *
 * Shared by the writer (compiler/pack_write.c) and the reader
 * (runtime/pack.c); docs/pack-format.md describes it for people. Every
 * integer is little-endian; the structs give names, sizes and offsets, and
 * the code reads and writes fields through explicit little-endian loads and
 * stores at those offsets, so the format does not depend on the host.
 *
 *   offset 0                      struct bee_pack_header          64 bytes
 *   offset 64                     struct bee_pack_section[count]  80 bytes each
 *   offset 64 + 80 * count        section bytes, in table order, each at the
 *                                 next 8-byte boundary; zero padding between
 *                                 them and after the last one, so the file
 *                                 size is a multiple of 8
 *
 * The table is sorted by (kind, name) and names are unique, so the same
 * sections always give the same bytes.
 *
 * The digest is XXH3-128 over every byte of the file except the 16 digest
 * bytes themselves: bytes [0, 40) followed by bytes [56, file size). It is
 * stored as XXH128_canonicalFromHash gives it (high 64 bits first, each
 * big-endian), so its hex text is those 16 bytes in order.
 */
#ifndef BEE_PACK_FORMAT_H
#define BEE_PACK_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#define BEE_PACK_MAGIC          "BEEPACK\0"   /* 8 bytes, the NUL included */
#define BEE_PACK_MAGIC_LEN      8
#define BEE_PACK_VERSION        1
#define BEE_PACK_FLAGS_KNOWN    0u            /* version 1 defines no header flag */
#define BEE_PACK_SEC_FLAGS_KNOWN 0u           /* nor any section flag */
#define BEE_PACK_ALIGN          8
#define BEE_PACK_NAME_LEN       32            /* NUL-padded; at most 31 name bytes */
#define BEE_PACK_MIN_SECTIONS   2             /* a manifest and a source */
#define BEE_PACK_MAX_SECTIONS   1024
#define BEE_PACK_MAX_FILE       ((uint64_t)1 << 30)   /* a reader never takes more */
#define BEE_PACK_DIGEST_LEN     16
#define BEE_PACK_DIGEST_HEX_LEN 32

/* Section kinds: name, number, text. Numbers are the canonical order; an
 * unknown number is an error for this version. */
#define BEE_PACK_KINDS(X)                                                    \
	X(MANIFEST, 1, "manifest")    /* JSON object, element width 1 */     \
	X(ELF, 2, "elf")              /* the BPF object, element width 1 */  \
	X(MAP_IMAGE, 3, "map_image")  /* one per map, named as the map;      \
				       * width = key + value bytes, count =  \
				       * entries */                          \
	X(SOURCE, 4, "source")        /* the policy TOML, element width 1 */

enum bee_pack_kind {
#define BEE_PACK_KIND_ENUM(name, num, text) BEE_PACK_##name = num,
	BEE_PACK_KINDS(BEE_PACK_KIND_ENUM)
#undef BEE_PACK_KIND_ENUM
};

/* The kind's lowercase name, or NULL for a number this version does not know. */
static inline const char *bee_pack_kind_name(uint32_t kind)
{
	switch (kind) {
#define BEE_PACK_KIND_CASE(name, num, text) case num: return text;
	BEE_PACK_KINDS(BEE_PACK_KIND_CASE)
#undef BEE_PACK_KIND_CASE
	}
	return NULL;
}

struct bee_pack_header {
	uint8_t magic[BEE_PACK_MAGIC_LEN];  /* BEE_PACK_MAGIC */
	uint16_t version;                   /* BEE_PACK_VERSION */
	uint16_t header_size;               /* sizeof(struct bee_pack_header) */
	uint32_t flags;                     /* no bit outside BEE_PACK_FLAGS_KNOWN */
	uint32_t section_count;             /* MIN_SECTIONS..MAX_SECTIONS */
	uint32_t section_entry_size;        /* sizeof(struct bee_pack_section) */
	uint64_t file_size;                 /* bytes of the whole file */
	uint64_t table_offset;              /* == header_size */
	uint8_t digest[BEE_PACK_DIGEST_LEN]; /* XXH3-128, see above */
	uint64_t reserved;                  /* zero */
};

struct bee_pack_section {
	char name[BEE_PACK_NAME_LEN];   /* printable ASCII (0x21-0x7e), NUL-padded */
	uint32_t kind;                  /* enum bee_pack_kind */
	uint32_t elem_width;            /* bytes per element; 1 except for MAP_IMAGE */
	uint64_t elem_count;            /* elements; elem_width * elem_count == size */
	uint64_t offset;                /* from the start of the file, 8-aligned */
	uint64_t size;                  /* bytes of the section, padding excluded */
	uint64_t checksum;              /* XXH3-64 of the section bytes, seed 0 */
	uint32_t flags;                 /* no bit outside BEE_PACK_SEC_FLAGS_KNOWN */
	uint32_t reserved;              /* zero */
};

_Static_assert(sizeof(struct bee_pack_header) == 64, "bee_pack_header size");
_Static_assert(offsetof(struct bee_pack_header, version) == 8, "header.version");
_Static_assert(offsetof(struct bee_pack_header, header_size) == 10, "header.header_size");
_Static_assert(offsetof(struct bee_pack_header, flags) == 12, "header.flags");
_Static_assert(offsetof(struct bee_pack_header, section_count) == 16, "header.section_count");
_Static_assert(offsetof(struct bee_pack_header, section_entry_size) == 20, "header.section_entry_size");
_Static_assert(offsetof(struct bee_pack_header, file_size) == 24, "header.file_size");
_Static_assert(offsetof(struct bee_pack_header, table_offset) == 32, "header.table_offset");
_Static_assert(offsetof(struct bee_pack_header, digest) == 40, "header.digest");
_Static_assert(offsetof(struct bee_pack_header, reserved) == 56, "header.reserved");

_Static_assert(sizeof(struct bee_pack_section) == 80, "bee_pack_section size");
_Static_assert(offsetof(struct bee_pack_section, kind) == 32, "section.kind");
_Static_assert(offsetof(struct bee_pack_section, elem_width) == 36, "section.elem_width");
_Static_assert(offsetof(struct bee_pack_section, elem_count) == 40, "section.elem_count");
_Static_assert(offsetof(struct bee_pack_section, offset) == 48, "section.offset");
_Static_assert(offsetof(struct bee_pack_section, size) == 56, "section.size");
_Static_assert(offsetof(struct bee_pack_section, checksum) == 64, "section.checksum");
_Static_assert(offsetof(struct bee_pack_section, flags) == 72, "section.flags");
_Static_assert(offsetof(struct bee_pack_section, reserved) == 76, "section.reserved");
/* the table and every section start 8-aligned when entries are 8-multiples */
_Static_assert(sizeof(struct bee_pack_header) % BEE_PACK_ALIGN == 0, "header alignment");
_Static_assert(sizeof(struct bee_pack_section) % BEE_PACK_ALIGN == 0, "entry alignment");

/* Little-endian field access at byte offsets, for writer and reader alike. */
static inline uint16_t bee_pack_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (uint16_t)p[1] << 8);
}

static inline uint32_t bee_pack_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t bee_pack_le64(const uint8_t *p)
{
	return (uint64_t)bee_pack_le32(p) | (uint64_t)bee_pack_le32(p + 4) << 32;
}

static inline void bee_pack_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void bee_pack_put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline void bee_pack_put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

#endif
