/* SPDX-License-Identifier: GPL-2.0-only */
/* pack.c: the .bpfpack reader. Checks, in this order, so that the first
 * message names the first thing that is wrong: the header, the section
 * table (names, kinds, element counts, order, layout, padding), the file
 * size, each section's checksum, the whole-pack digest, then what the
 * sections hold (kind counts, manifest JSON, ELF identity, source text). */
#include "pack.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#define HDR_OFF(field) offsetof(struct bee_pack_header, field)
#define SEC_OFF(field) offsetof(struct bee_pack_section, field)
#define HDR_SIZE       sizeof(struct bee_pack_header)
#define SEC_SIZE       sizeof(struct bee_pack_section)

struct bee_pack {
	uint8_t *buf;
	size_t len;
	uint32_t nsections;
	struct bee_pack_section_info *sections;
	json_t *manifest;
	uint8_t digest[BEE_PACK_DIGEST_LEN];
};

/* What one check works on: the private copy and where messages go. */
struct pack_check {
	const uint8_t *buf;
	size_t len;
	char *err;
	size_t errlen;
	bool manifest_printed;   /* bee_pack__check_written: the JSON is not parsed */
	bool manifest_later;     /* bee_pack__open_file_later: parsed when asked for */
};

/* Messages quote bytes of the pack (JSON parser text): keep them to
 * printable ASCII so that printing one cannot drive a terminal. */
static void pack_err_clean(char *err)
{
	for (; *err; err++)
		if ((unsigned char)*err < 0x20 || (unsigned char)*err > 0x7e)
			*err = '?';
}

__attribute__((format(printf, 2, 3)))
static int pack_fail(struct pack_check *c, const char *fmt, ...)
{
	if (c->err && c->errlen) {
		int n = snprintf(c->err, c->errlen, "pack: ");
		if (n > 0 && (size_t)n < c->errlen) {
			va_list ap;
			va_start(ap, fmt);
			vsnprintf(c->err + n, c->errlen - (size_t)n, fmt, ap);
			va_end(ap);
		}
		pack_err_clean(c->err);
	}
	return -EINVAL;
}

static uint64_t pack_align_up(uint64_t v)
{
	/* callers pass values at most BEE_PACK_MAX_FILE, so this cannot wrap */
	return (v + BEE_PACK_ALIGN - 1) & ~(uint64_t)(BEE_PACK_ALIGN - 1);
}

void bee_hex(const uint8_t *b, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[b[i] >> 4];
		out[2 * i + 1] = digits[b[i] & 15];
	}
	out[2 * n] = '\0';
}

/* ---- header -------------------------------------------------------------- */

static int pack_check_header(struct pack_check *c, uint32_t *count)
{
	const uint8_t *b = c->buf;
	size_t magic_have = c->len < BEE_PACK_MAGIC_LEN ? c->len : BEE_PACK_MAGIC_LEN;

	/* a short file that is not even a pack's prefix is "not a pack", not "truncated" */
	if (memcmp(b, BEE_PACK_MAGIC, magic_have) != 0) {
		char hex[2 * BEE_PACK_MAGIC_LEN + 1];
		bee_hex(b, magic_have, hex);
		return pack_fail(c, "header: bad magic %s (not a bee pack; expected %s)", hex,
				 "4245455041434b00");
	}
	if (c->len < HDR_SIZE)
		return pack_fail(c, "truncated: header needs %zu bytes, file has %zu", HDR_SIZE, c->len);

	uint16_t version = bee_pack_le16(b + HDR_OFF(version));
	if (version != BEE_PACK_VERSION)
		return pack_fail(c, "header: format version %u is not supported (this reader reads %u)",
				 version, BEE_PACK_VERSION);
	uint16_t header_size = bee_pack_le16(b + HDR_OFF(header_size));
	if (header_size != HDR_SIZE)
		return pack_fail(c, "header: header size %u is wrong for format version %u (expected %zu)",
				 header_size, BEE_PACK_VERSION, HDR_SIZE);
	uint32_t flags = bee_pack_le32(b + HDR_OFF(flags));
	if (flags & ~BEE_PACK_FLAGS_KNOWN)
		return pack_fail(c, "header: unknown flags 0x%x set (this reader knows 0x%x)",
				 flags & ~BEE_PACK_FLAGS_KNOWN, BEE_PACK_FLAGS_KNOWN);
	uint32_t entry_size = bee_pack_le32(b + HDR_OFF(section_entry_size));
	if (entry_size != SEC_SIZE)
		return pack_fail(c, "header: section entry size %u is wrong (expected %zu)",
				 entry_size, SEC_SIZE);
	uint64_t reserved = bee_pack_le64(b + HDR_OFF(reserved));
	if (reserved != 0)
		return pack_fail(c, "header: reserved field is not zero (0x%llx)",
				 (unsigned long long)reserved);
	uint32_t n = bee_pack_le32(b + HDR_OFF(section_count));
	if (n < BEE_PACK_MIN_SECTIONS || n > BEE_PACK_MAX_SECTIONS)
		return pack_fail(c, "header: section count %u is out of range (%u..%u; a pack holds "
				 "at least a manifest and a source)",
				 n, BEE_PACK_MIN_SECTIONS, BEE_PACK_MAX_SECTIONS);
	uint64_t table = bee_pack_le64(b + HDR_OFF(table_offset));
	if (table != HDR_SIZE)
		return pack_fail(c, "header: section table offset %llu is not %zu, right after the header",
				 (unsigned long long)table, HDR_SIZE);
	/* n <= BEE_PACK_MAX_SECTIONS, so this product is small */
	uint64_t table_bytes = (uint64_t)n * SEC_SIZE;
	if (table_bytes > c->len - HDR_SIZE)
		return pack_fail(c, "truncated: section table needs %llu bytes at offset %zu, file has %zu",
				 (unsigned long long)table_bytes, HDR_SIZE, c->len);
	*count = n;
	return 0;
}

/* ---- section table ------------------------------------------------------- */

static int pack_check_name(struct pack_check *c, uint32_t i, const uint8_t *name)
{
	size_t len = 0;
	while (len < BEE_PACK_NAME_LEN && name[len])
		len++;
	if (len == 0)
		return pack_fail(c, "section %u: name is empty", i);
	if (len == BEE_PACK_NAME_LEN)
		return pack_fail(c, "section %u: name is not NUL-terminated within %d bytes",
				 i, BEE_PACK_NAME_LEN);
	for (size_t k = 0; k < len; k++)
		if (name[k] < 0x21 || name[k] > 0x7e)
			return pack_fail(c, "section %u: name has byte 0x%02x at position %zu, "
					 "which is not printable ASCII", i, name[k], k);
	for (size_t k = len + 1; k < BEE_PACK_NAME_LEN; k++)
		if (name[k])
			return pack_fail(c, "section %u '%s': name is not NUL-padded "
					 "(byte 0x%02x at position %zu)", i, (const char *)name, name[k], k);
	return 0;
}

/* Element width and count describe the section's size exactly. */
static int pack_check_elements(struct pack_check *c, const struct bee_pack_section_info *s)
{
	unsigned long long count = s->elem_count, size = s->size;
	switch (s->kind) {
	case BEE_PACK_MANIFEST:
	case BEE_PACK_ELF:
	case BEE_PACK_SOURCE:
		if (s->elem_width != 1)
			return pack_fail(c, "section %u '%s': element width %u is wrong for a %s section "
					 "(expected 1)", s->index, s->name, s->elem_width,
					 bee_pack_kind_name(s->kind));
		if (count != size)
			return pack_fail(c, "section %u '%s': element count %llu does not match size %llu "
					 "(element width 1)", s->index, s->name, count, size);
		return 0;
	case BEE_PACK_MAP_IMAGE: {
		if (s->elem_width == 0)
			return pack_fail(c, "section %u '%s': element width 0 (a map record has at least "
					 "one byte)", s->index, s->name);
		if (count > UINT32_MAX)
			return pack_fail(c, "section %u '%s': element count %llu exceeds a map's 32-bit "
					 "entry limit", s->index, s->name, count);
		uint64_t product;
		if (__builtin_mul_overflow((uint64_t)s->elem_width, s->elem_count, &product) ||
		    product != s->size)
			return pack_fail(c, "section %u '%s': element width %u * element count %llu "
					 "is not the section size %llu", s->index, s->name,
					 s->elem_width, count, size);
		return 0;
	}
	}
	return pack_fail(c, "section %u '%s': unknown kind %u", s->index, s->name, s->kind);
}

/* Strictly increasing (kind, name): canonical order, and no (kind, name) twice. */
static int pack_check_order(struct pack_check *c, const struct bee_pack_section_info *prev,
			    const struct bee_pack_section_info *s)
{
	int cmp = prev->kind < s->kind ? -1 : prev->kind > s->kind ? 1 : strcmp(prev->name, s->name);
	if (cmp == 0)
		return pack_fail(c, "section %u '%s': duplicate of section %u (same kind and name)",
				 s->index, s->name, prev->index);
	if (cmp > 0)
		return pack_fail(c, "section %u '%s': out of canonical order (kind, then name) after "
				 "section %u '%s'", s->index, s->name, prev->index, prev->name);
	return 0;
}

/* Each section starts at the next 8-byte boundary after the previous one
 * (or the table), lies inside the file, and the padding before it is zero. */
static int pack_check_place(struct pack_check *c, const struct bee_pack_section_info *prev,
			    uint64_t prev_end, const struct bee_pack_section_info *s, uint64_t offset)
{
	char before[64];
	if (prev)
		snprintf(before, sizeof(before), "section %u '%s'", prev->index, prev->name);
	else
		snprintf(before, sizeof(before), "the section table");
	unsigned long long off = offset, size = s->size, end = prev_end;

	if (offset % BEE_PACK_ALIGN)
		return pack_fail(c, "section %u '%s': offset %llu is not %d-byte aligned",
				 s->index, s->name, off, BEE_PACK_ALIGN);
	if (offset < prev_end)
		return pack_fail(c, "section %u '%s': offset %llu overlaps %s (which ends at %llu)",
				 s->index, s->name, off, before, end);
	uint64_t expected = pack_align_up(prev_end);
	if (offset != expected)
		return pack_fail(c, "section %u '%s': offset %llu leaves %llu bytes after %s "
				 "unaccounted for (expected offset %llu)", s->index, s->name, off,
				 (unsigned long long)(offset - prev_end), before,
				 (unsigned long long)expected);
	/* offset <= len is known from here on, so len - offset cannot wrap */
	if (offset > c->len || s->size > c->len - offset)
		return pack_fail(c, "truncated: section %u '%s' needs %llu bytes at offset %llu, "
				 "file has %zu", s->index, s->name, size, off, c->len);
	for (uint64_t k = prev_end; k < offset; k++)
		if (c->buf[k])
			return pack_fail(c, "section %u '%s': padding byte at offset %llu before it is "
					 "not zero (0x%02x)", s->index, s->name, (unsigned long long)k,
					 c->buf[k]);
	return 0;
}

/* Names are unique across kinds too; order is by kind first, so sort a copy. */
static int pack_name_cmp(const void *a, const void *b)
{
	const struct bee_pack_section_info *x = *(const struct bee_pack_section_info *const *)a;
	const struct bee_pack_section_info *y = *(const struct bee_pack_section_info *const *)b;
	int cmp = strcmp(x->name, y->name);
	return cmp ? cmp : (x->index > y->index) - (x->index < y->index);
}

static int pack_check_unique(struct pack_check *c, struct bee_pack_section_info *secs, uint32_t n)
{
	const struct bee_pack_section_info **by_name = malloc(n * sizeof(*by_name));
	if (!by_name)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++)
		by_name[i] = &secs[i];
	qsort(by_name, n, sizeof(*by_name), pack_name_cmp);
	int rc = 0;
	for (uint32_t i = 1; i < n && !rc; i++)
		if (!strcmp(by_name[i - 1]->name, by_name[i]->name))
			rc = pack_fail(c, "section %u '%s': name is also used by section %u",
				       by_name[i]->index, by_name[i]->name, by_name[i - 1]->index);
	free(by_name);
	return rc;
}

static int pack_check_table(struct pack_check *c, struct bee_pack_section_info *secs, uint32_t n)
{
	uint64_t prev_end = HDR_SIZE + (uint64_t)n * SEC_SIZE;
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *e = c->buf + HDR_SIZE + (size_t)i * SEC_SIZE;
		struct bee_pack_section_info *s = &secs[i];
		struct bee_pack_section_info *prev = i ? &secs[i - 1] : NULL;
		int rc = pack_check_name(c, i, e + SEC_OFF(name));
		if (rc)
			return rc;
		s->index = i;
		s->name = (const char *)e + SEC_OFF(name);
		uint32_t kind = bee_pack_le32(e + SEC_OFF(kind));
		if (!bee_pack_kind_name(kind))
			return pack_fail(c, "section %u '%s': unknown kind %u", i, s->name, kind);
		s->kind = (enum bee_pack_kind)kind;
		uint32_t flags = bee_pack_le32(e + SEC_OFF(flags));
		if (flags & ~BEE_PACK_SEC_FLAGS_KNOWN)
			return pack_fail(c, "section %u '%s': unknown flags 0x%x set (this reader knows 0x%x)",
					 i, s->name, flags & ~BEE_PACK_SEC_FLAGS_KNOWN,
					 BEE_PACK_SEC_FLAGS_KNOWN);
		uint32_t reserved = bee_pack_le32(e + SEC_OFF(reserved));
		if (reserved)
			return pack_fail(c, "section %u '%s': reserved field is not zero (0x%x)",
					 i, s->name, reserved);
		s->elem_width = bee_pack_le32(e + SEC_OFF(elem_width));
		s->elem_count = bee_pack_le64(e + SEC_OFF(elem_count));
		s->size = bee_pack_le64(e + SEC_OFF(size));
		s->checksum = bee_pack_le64(e + SEC_OFF(checksum));
		rc = pack_check_elements(c, s);
		if (!rc && prev)
			rc = pack_check_order(c, prev, s);
		uint64_t offset = bee_pack_le64(e + SEC_OFF(offset));
		if (!rc)
			rc = pack_check_place(c, prev, prev_end, s, offset);
		if (rc)
			return rc;
		s->data = c->buf + offset;
		prev_end = offset + s->size;
	}

	uint64_t file_size = bee_pack_le64(c->buf + HDR_OFF(file_size));
	if (file_size > c->len)
		return pack_fail(c, "truncated: the header's file size is %llu bytes, the file has %zu",
				 (unsigned long long)file_size, c->len);
	if (file_size < c->len)
		return pack_fail(c, "header: file size %llu is less than the %zu bytes given "
				 "(trailing data)", (unsigned long long)file_size, c->len);
	uint64_t end = pack_align_up(prev_end);
	if (file_size != end)
		return pack_fail(c, "header: file size %llu is not the padded end of the last "
				 "section (%llu)", (unsigned long long)file_size, (unsigned long long)end);
	for (uint64_t k = prev_end; k < end; k++)
		if (c->buf[k])
			return pack_fail(c, "padding byte at offset %llu after the last section is not "
					 "zero (0x%02x)", (unsigned long long)k, c->buf[k]);
	return pack_check_unique(c, secs, n);
}

/* ---- checksums and digest ------------------------------------------------ */

static int pack_check_checksums(struct pack_check *c, const struct bee_pack_section_info *secs,
				uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		uint64_t got = XXH3_64bits(secs[i].data, (size_t)secs[i].size);
		if (got != secs[i].checksum)
			return pack_fail(c, "section %u '%s': checksum mismatch (stored 0x%016llx, "
					 "computed 0x%016llx)", i, secs[i].name,
					 (unsigned long long)secs[i].checksum, (unsigned long long)got);
	}
	return 0;
}

static int pack_check_digest(struct pack_check *c, uint8_t digest[BEE_PACK_DIGEST_LEN])
{
	XXH3_state_t *st = XXH3_createState();
	if (!st)
		return -ENOMEM;
	/* every byte except the digest field itself */
	size_t skip = HDR_OFF(digest) + BEE_PACK_DIGEST_LEN;
	XXH3_128bits_reset(st);
	XXH3_128bits_update(st, c->buf, HDR_OFF(digest));
	XXH3_128bits_update(st, c->buf + skip, c->len - skip);
	XXH128_canonical_t got;
	XXH128_canonicalFromHash(&got, XXH3_128bits_digest(st));
	XXH3_freeState(st);
	memcpy(digest, c->buf + HDR_OFF(digest), BEE_PACK_DIGEST_LEN);
	if (memcmp(got.digest, digest, BEE_PACK_DIGEST_LEN)) {
		char stored[BEE_PACK_DIGEST_HEX_LEN + 1], computed[BEE_PACK_DIGEST_HEX_LEN + 1];
		bee_hex(digest, BEE_PACK_DIGEST_LEN, stored);
		bee_hex(got.digest, BEE_PACK_DIGEST_LEN, computed);
		return pack_fail(c, "header: digest mismatch (stored %s, computed %s)", stored, computed);
	}
	return 0;
}

/* ---- contents ------------------------------------------------------------ */

/* Length of the well-formed UTF-8 sequence at s (RFC 3629: no overlong forms,
 * no surrogates, nothing above U+10FFFF), or 0 when there is none. */
static size_t pack_utf8_len(const uint8_t *s, uint64_t left)
{
	uint8_t b = s[0];
	size_t n;
	uint8_t lo = 0x80, hi = 0xbf;
	if (b < 0x80)
		return 1;
	else if (b >= 0xc2 && b <= 0xdf)
		n = 2;
	else if (b >= 0xe0 && b <= 0xef) {
		n = 3;
		if (b == 0xe0)
			lo = 0xa0;
		else if (b == 0xed)
			hi = 0x9f;
	} else if (b >= 0xf0 && b <= 0xf4) {
		n = 4;
		if (b == 0xf0)
			lo = 0x90;
		else if (b == 0xf4)
			hi = 0x8f;
	} else
		return 0;
	if (left < n || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t k = 2; k < n; k++)
		if (s[k] < 0x80 || s[k] > 0xbf)
			return 0;
	return n;
}

static int pack_check_source(struct pack_check *c, const struct bee_pack_section_info *s)
{
	const uint8_t *d = s->data;
	for (uint64_t k = 0; k < s->size;) {
		if (d[k] == 0)
			return pack_fail(c, "section %u '%s': source holds a NUL byte at offset %llu",
					 s->index, s->name, (unsigned long long)k);
		size_t n = pack_utf8_len(d + k, s->size - k);
		if (!n)
			return pack_fail(c, "section %u '%s': source is not valid UTF-8 (byte 0x%02x at "
					 "offset %llu)", s->index, s->name, d[k], (unsigned long long)k);
		k += n;
	}
	return 0;
}

#define ELF_EM_BPF 247

/* Only the identity of the object: libbpf checks the rest when it loads it. */
static int pack_check_elf(struct pack_check *c, const struct bee_pack_section_info *s)
{
	const uint8_t *d = s->data;
	if (s->size < 64)
		return pack_fail(c, "section %u '%s': ELF object is %llu bytes, shorter than an ELF "
				 "header (64)", s->index, s->name, (unsigned long long)s->size);
	if (memcmp(d, "\177ELF", 4))
		return pack_fail(c, "section %u '%s': not an ELF object (bad magic)", s->index, s->name);
	if (d[4] != 2)
		return pack_fail(c, "section %u '%s': not a 64-bit ELF object (class %u)",
				 s->index, s->name, d[4]);
	uint16_t machine;
	if (d[5] == 1)
		machine = (uint16_t)(d[18] | d[19] << 8);
	else if (d[5] == 2)
		machine = (uint16_t)(d[18] << 8 | d[19]);
	else
		return pack_fail(c, "section %u '%s': ELF object has unknown data encoding %u",
				 s->index, s->name, d[5]);
	if (machine != ELF_EM_BPF)
		return pack_fail(c, "section %u '%s': ELF object is for machine %u, not BPF (%d)",
				 s->index, s->name, machine, ELF_EM_BPF);
	return 0;
}

static int pack_check_manifest(struct pack_check *c, const struct bee_pack_section_info *s,
			       json_t **out)
{
	json_error_t jerr;
	json_t *j = json_loadb(s->data, (size_t)s->size, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
	if (!j && json_error_code(&jerr) == json_error_out_of_memory) {
		/* not the pack's fault: say so, and let the caller tell them apart */
		pack_fail(c, "section %u '%s': out of memory reading the manifest", s->index, s->name);
		return -ENOMEM;
	}
	if (!j)
		return pack_fail(c, "section %u '%s': manifest is not valid JSON (line %d, column %d: "
				 "%s)", s->index, s->name, jerr.line, jerr.column, jerr.text);
	if (!json_is_object(j)) {
		static const char *const type_names[] = {
			[JSON_OBJECT] = "object", [JSON_ARRAY] = "array", [JSON_STRING] = "string",
			[JSON_INTEGER] = "number", [JSON_REAL] = "number", [JSON_TRUE] = "boolean",
			[JSON_FALSE] = "boolean", [JSON_NULL] = "null",
		};
		int rc = pack_fail(c, "section %u '%s': manifest is a JSON %s, not an object",
				   s->index, s->name, type_names[json_typeof(j)]);
		json_decref(j);
		return rc;
	}
	*out = j;
	return 0;
}

static int pack_check_contents(struct pack_check *c, struct bee_pack *p)
{
	uint32_t manifests = 0, sources = 0, elfs = 0;
	for (uint32_t i = 0; i < p->nsections; i++) {
		const struct bee_pack_section_info *s = &p->sections[i];
		int rc = 0;
		switch (s->kind) {
		case BEE_PACK_MANIFEST:
			if (++manifests > 1)
				return pack_fail(c, "section %u '%s': a second manifest (a pack has "
						 "exactly one)", i, s->name);
			if (!c->manifest_printed && !c->manifest_later)
				rc = pack_check_manifest(c, s, &p->manifest);
			break;
		case BEE_PACK_ELF:
			if (++elfs > 1)
				return pack_fail(c, "section %u '%s': a second ELF object (a pack has "
						 "at most one)", i, s->name);
			rc = pack_check_elf(c, s);
			break;
		case BEE_PACK_MAP_IMAGE:
			break;
		case BEE_PACK_SOURCE:
			if (++sources > 1)
				return pack_fail(c, "section %u '%s': a second source (a pack has "
						 "exactly one)", i, s->name);
			rc = pack_check_source(c, s);
			break;
		}
		if (rc)
			return rc;
	}
	if (!manifests)
		return pack_fail(c, "no manifest section (a pack has exactly one)");
	if (!sources)
		return pack_fail(c, "no source section (a pack has exactly one)");
	return 0;
}

/* ---- open ---------------------------------------------------------------- */

/* The private copy a pack is checked and read in. Its pages are made by
 * one mmap (MAP_POPULATE) rather than a page fault each as read(2) and
 * the checks first touch them: a launch reads its pack every time, and
 * where page faults are dear (virtual machines) that was a tenth of a
 * warm `bee-load run`. The mapping's length sits in front of the bytes. */
#define PACK_BUF_HEAD 64u

static uint8_t *pack_buf_alloc(size_t len)
{
	size_t total = len + PACK_BUF_HEAD;
	if (total < len)
		return NULL;
	void *m = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	/* a child process gets none of it: no reader forks to read a pack,
	 * and a session's init (a copy of bee-load) never reads its bytes;
	 * its page table is not copied at the clone nor torn down at exit */
	(void)madvise(m, total, MADV_DONTFORK);
	memcpy(m, &total, sizeof(total));
	return (uint8_t *)m + PACK_BUF_HEAD;
}

static void pack_buf_free(uint8_t *buf)
{
	if (!buf)
		return;
	size_t total;
	uint8_t *m = buf - PACK_BUF_HEAD;
	memcpy(&total, m, sizeof(total));
	munmap(m, total);
}

/* Every check of p->buf (p->len bytes) into p, whose sections it allocates. */
static int pack_check_all(struct pack_check *c, struct bee_pack *p)
{
	uint32_t n = 0;
	int rc = pack_check_header(c, &n);
	if (rc)
		return rc;
	p->sections = calloc(n, sizeof(*p->sections));
	if (!p->sections)
		return -ENOMEM;
	p->nsections = n;
	rc = pack_check_table(c, p->sections, n);
	if (!rc)
		rc = pack_check_checksums(c, p->sections, n);
	if (!rc)
		rc = pack_check_digest(c, p->digest);
	if (!rc)
		rc = pack_check_contents(c, p);
	return rc;
}

/* Takes ownership of buf (pack_buf_alloc'ed, len bytes) whatever the outcome. */
static int pack_open_owned(uint8_t *buf, size_t len, struct bee_pack **out, char *err,
			   size_t errlen, bool later)
{
	struct pack_check c = { .buf = buf, .len = len, .err = err, .errlen = errlen, .manifest_later = later };
	struct bee_pack *p = calloc(1, sizeof(*p));
	int rc = -ENOMEM;
	if (!p)
		goto fail;
	p->buf = buf;
	p->len = len;
	rc = pack_check_all(&c, p);
	if (rc)
		goto fail;
	*out = p;
	return 0;
fail:
	if (rc == -ENOMEM && err && errlen)
		snprintf(err, errlen, "pack: out of memory");
	if (p)
		bee_pack__close(p);
	else
		pack_buf_free(buf);
	return rc;
}

/* A pack longer than any reader takes: -EFBIG, said in err. */
static int pack_too_big(size_t len, char *err, size_t errlen)
{
	if (err && errlen)
		snprintf(err, errlen, "pack: %zu bytes is more than the %llu this reader takes", len,
			 (unsigned long long)BEE_PACK_MAX_FILE);
	return -EFBIG;
}

int bee_pack__check_written(const void *buf, size_t len, char *err, size_t errlen)
{
	struct pack_check c = { .buf = buf, .len = len, .err = err, .errlen = errlen, .manifest_printed = true };
	struct bee_pack p = { .buf = (uint8_t *)buf, .len = len };
	if (err && errlen)
		err[0] = '\0';
	if (len > BEE_PACK_MAX_FILE)
		return pack_too_big(len, err, errlen);
	int rc = pack_check_all(&c, &p);
	if (rc == -ENOMEM && err && errlen)
		snprintf(err, errlen, "pack: out of memory");
	free(p.sections);
	return rc;
}

int bee_pack__open_mem(const void *buf, size_t len, struct bee_pack **out, char *err,
		       size_t errlen)
{
	*out = NULL;
	if (err && errlen)
		err[0] = '\0';
	if (len > BEE_PACK_MAX_FILE)
		return pack_too_big(len, err, errlen);
	/* a private copy: what was checked is what the caller later reads */
	uint8_t *copy = pack_buf_alloc(len ? len : 1);
	if (!copy) {
		if (err && errlen)
			snprintf(err, errlen, "pack: out of memory");
		return -ENOMEM;
	}
	if (len)
		memcpy(copy, buf, len);
	return pack_open_owned(copy, len, out, err, errlen, false);
}

__attribute__((format(printf, 3, 4)))
static int pack_file_fail(int rc, struct pack_check *c, const char *fmt, ...)
{
	if (c->err && c->errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(c->err, c->errlen, fmt, ap);
		va_end(ap);
		pack_err_clean(c->err);
	}
	return rc;
}

static int pack_open_file(const char *path, struct bee_pack **out, char *err, size_t errlen, bool later)
{
	struct pack_check c = { .err = err, .errlen = errlen };
	uint8_t *buf = NULL;
	struct stat st;
	int rc;

	*out = NULL;
	if (err && errlen)
		err[0] = '\0';
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return pack_file_fail(-errno, &c, "pack: '%s': %m", path);
	if (fstat(fd, &st) < 0) {
		rc = pack_file_fail(-errno, &c, "pack: '%s': %m", path);
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = pack_file_fail(-EINVAL, &c, "pack: '%s': not a regular file", path);
		goto out;
	}
	if ((uint64_t)st.st_size > BEE_PACK_MAX_FILE) {
		rc = pack_file_fail(-EFBIG, &c, "pack: '%s': %llu bytes is more than the %llu this "
				    "reader takes", path, (unsigned long long)st.st_size,
				    (unsigned long long)BEE_PACK_MAX_FILE);
		goto out;
	}
	/* one byte more than the size tells a file that grew while we read it */
	size_t cap = (size_t)st.st_size + 1, len = 0;
	buf = pack_buf_alloc(cap);
	if (!buf) {
		rc = pack_file_fail(-ENOMEM, &c, "pack: out of memory");
		goto out;
	}
	while (len < cap) {
		ssize_t got = read(fd, buf + len, cap - len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			rc = pack_file_fail(-errno, &c, "pack: '%s': %m", path);
			goto out;
		}
		if (got == 0)
			break;
		len += (size_t)got;
	}
	if (len == cap) {
		rc = pack_file_fail(-EAGAIN, &c, "pack: '%s': file grew while it was read", path);
		goto out;
	}
	rc = pack_open_owned(buf, len, out, err, errlen, later);
	buf = NULL;
out:
	pack_buf_free(buf);
	close(fd);
	return rc;
}

int bee_pack__open_file(const char *path, struct bee_pack **out, char *err, size_t errlen)
{
	return pack_open_file(path, out, err, errlen, false);
}

int bee_pack__open_file_later(const char *path, struct bee_pack **out, char *err, size_t errlen)
{
	return pack_open_file(path, out, err, errlen, true);
}

int bee_pack__manifest_parse(struct bee_pack *pack, char *err, size_t errlen)
{
	struct pack_check c = { .buf = pack->buf, .len = pack->len, .err = err, .errlen = errlen };
	if (err && errlen)
		err[0] = '\0';
	if (pack->manifest)
		return 0;
	/* the open proved there is exactly one */
	int rc = pack_check_manifest(&c, bee_pack__find(pack, BEE_PACK_MANIFEST, NULL), &pack->manifest);
	if (rc == -ENOMEM && err && errlen)
		snprintf(err, errlen, "pack: out of memory");
	return rc;
}

void bee_pack__close(struct bee_pack *pack)
{
	if (!pack)
		return;
	json_decref(pack->manifest);
	free(pack->sections);
	pack_buf_free(pack->buf);
	free(pack);
}

/* ---- accessors ----------------------------------------------------------- */

uint32_t bee_pack__section_count(const struct bee_pack *pack)
{
	return pack->nsections;
}

const struct bee_pack_section_info *bee_pack__section(const struct bee_pack *pack, uint32_t i)
{
	return i < pack->nsections ? &pack->sections[i] : NULL;
}

const struct bee_pack_section_info *bee_pack__find(const struct bee_pack *pack,
						    enum bee_pack_kind kind, const char *name)
{
	for (uint32_t i = 0; i < pack->nsections; i++) {
		const struct bee_pack_section_info *s = &pack->sections[i];
		if (s->kind == kind && (!name || !strcmp(s->name, name)))
			return s;
	}
	return NULL;
}

const struct json_t *bee_pack__manifest(const struct bee_pack *pack)
{
	return pack->manifest;
}

const uint8_t *bee_pack__digest(const struct bee_pack *pack)
{
	return pack->digest;
}

void bee_pack__digest_hex(const struct bee_pack *pack, char out[BEE_PACK_DIGEST_HEX_LEN + 1])
{
	bee_hex(pack->digest, BEE_PACK_DIGEST_LEN, out);
}

const void *bee_pack__bytes(const struct bee_pack *pack, size_t *len)
{
	*len = pack->len;
	return pack->buf;
}
