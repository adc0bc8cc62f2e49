/* SPDX-License-Identifier: GPL-2.0-only */
/* fuzz_pack.c: libFuzzer harness for the pack reader (tools/fuzz pack).
 *
 * Each input is opened twice: as it is, and "resealed" (section checksums,
 * file size and digest recomputed over the mutated bytes), so that the
 * fuzzer also reaches the checks behind the checksums. An accepted pack must
 * keep the reader's promises, a rejected one must give -EINVAL and a
 * "pack: " message; anything else aborts, which libFuzzer reports. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include <xxhash.h>

#include "pack.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define HDR_OFF(field) offsetof(struct bee_pack_header, field)
#define SEC_OFF(field) offsetof(struct bee_pack_section, field)
#define HDR_SIZE       sizeof(struct bee_pack_header)
#define SEC_SIZE       sizeof(struct bee_pack_section)

static void fuzz_require(int ok)
{
	if (!ok)
		abort();
}

/* The promises of pack.h about an accepted pack. */
static void fuzz_pack_walk(const struct bee_pack *p)
{
	size_t len;
	const uint8_t *bytes = bee_pack__bytes(p, &len);
	uint32_t n = bee_pack__section_count(p);
	unsigned manifests = 0, sources = 0, elfs = 0;
	fuzz_require(n >= BEE_PACK_MIN_SECTIONS && n <= BEE_PACK_MAX_SECTIONS);
	fuzz_require(len % BEE_PACK_ALIGN == 0);
	for (uint32_t i = 0; i < n; i++) {
		const struct bee_pack_section_info *s = bee_pack__section(p, i);
		fuzz_require(s && s->index == i);
		size_t nlen = strlen(s->name);
		fuzz_require(nlen >= 1 && nlen < BEE_PACK_NAME_LEN);
		const uint8_t *d = s->data;
		fuzz_require(d >= bytes && (size_t)(d - bytes) <= len && s->size <= len - (size_t)(d - bytes));
		fuzz_require((uintptr_t)d % BEE_PACK_ALIGN == 0);
		fuzz_require((uint64_t)s->elem_width * s->elem_count == s->size);
		fuzz_require(XXH3_64bits(d, (size_t)s->size) == s->checksum);
		fuzz_require(bee_pack__find(p, s->kind, s->name) == s);
		manifests += s->kind == BEE_PACK_MANIFEST;
		sources += s->kind == BEE_PACK_SOURCE;
		elfs += s->kind == BEE_PACK_ELF;
	}
	fuzz_require(manifests == 1 && sources == 1 && elfs <= 1);
	fuzz_require(bee_pack__section(p, n) == NULL);
	fuzz_require(json_is_object((const json_t *)bee_pack__manifest(p)));
	char hex[BEE_PACK_DIGEST_HEX_LEN + 1];
	bee_pack__digest_hex(p, hex);
	fuzz_require(strlen(hex) == BEE_PACK_DIGEST_HEX_LEN);
}

static void fuzz_pack_open(const uint8_t *data, size_t size)
{
	struct bee_pack *p = NULL;
	char err[BEE_PACK_ERRLEN];
	int rc = bee_pack__open_mem(data, size, &p, err, sizeof(err));
	if (rc == 0) {
		fuzz_require(p != NULL);
		fuzz_pack_walk(p);
		bee_pack__close(p);
		return;
	}
	fuzz_require(p == NULL);
	fuzz_require(rc == -EINVAL || rc == -ENOMEM);
	fuzz_require(strncmp(err, "pack: ", 6) == 0 && strlen(err) > 6);
	fuzz_require(strlen(err) < sizeof(err) - 1);   /* nothing was cut off */
	for (const char *c = err; *c; c++)
		fuzz_require(*c >= 0x20 && *c <= 0x7e);
}

/* Recomputes what a mutation breaks first, wherever the table allows it. */
static void fuzz_pack_reseal(uint8_t *b, size_t size)
{
	uint32_t n = bee_pack_le32(b + HDR_OFF(section_count));
	bee_pack_put64(b + HDR_OFF(file_size), size);
	for (uint64_t i = 0; i < n && HDR_SIZE + (i + 1) * SEC_SIZE <= size; i++) {
		uint8_t *e = b + HDR_SIZE + i * SEC_SIZE;
		uint64_t off = bee_pack_le64(e + SEC_OFF(offset)), len = bee_pack_le64(e + SEC_OFF(size));
		if (off <= size && len <= size - off)
			bee_pack_put64(e + SEC_OFF(checksum), XXH3_64bits(b + off, (size_t)len));
	}
	XXH3_state_t *st = XXH3_createState();
	if (!st)
		return;
	size_t skip = HDR_OFF(digest) + BEE_PACK_DIGEST_LEN;
	XXH3_128bits_reset(st);
	XXH3_128bits_update(st, b, HDR_OFF(digest));
	XXH3_128bits_update(st, b + skip, size - skip);
	XXH128_canonical_t d;
	XXH128_canonicalFromHash(&d, XXH3_128bits_digest(st));
	XXH3_freeState(st);
	memcpy(b + HDR_OFF(digest), d.digest, BEE_PACK_DIGEST_LEN);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_pack_open(data, size);
	if (size < HDR_SIZE)
		return 0;
	uint8_t *copy = malloc(size);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	fuzz_pack_reseal(copy, size);
	fuzz_pack_open(copy, size);
	free(copy);
	return 0;
}
