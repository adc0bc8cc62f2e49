/* SPDX-License-Identifier: GPL-2.0-only */
/* Unit tests of the .bpfpack writer and reader: round trips, determinism,
 * an independent encoder that must agree with the writer byte for byte,
 * truncation at every byte, a flipped byte everywhere (each with the
 * message it must give), and table-driven bad fields. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "pack.h"
#include "pack_write.h"

#define HDR_SIZE sizeof(struct bee_pack_header)
#define SEC_SIZE sizeof(struct bee_pack_section)
#define HDR_OFF(field) offsetof(struct bee_pack_header, field)
#define SEC_OFF(field) offsetof(struct bee_pack_section, field)
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static int failures;

#define ROW_FAIL(...)                                   \
	do {                                            \
		print_error(__VA_ARGS__);               \
		print_error("\n");                      \
		failures++;                             \
	} while (0)

/* ---- the sections of the test pack ----------------------------------------- */

static const char manifest_json[] =
	"{\"name\":\"t\",\"maps\":[{\"name\":\"fs_dfa\",\"key_size\":4,\"value_size\":8}]}";
static const char source_toml[] = "version = 1\nname = \"t\"\n[fs]\nread = [\"/usr/**\"]\n";
static uint8_t elf_bytes[70];
static uint8_t fs_dfa[3 * 12];
static uint8_t net4[3 * 5];

struct sec {
	uint32_t kind;
	const char *name;
	uint32_t width;
	uint64_t count;
	const void *data;
	uint64_t size;
};

/* In canonical order; sizes chosen so that every gap has padding. */
static struct sec test_secs[5];

static void test_secs_init(void)
{
	memset(elf_bytes, 0xab, sizeof(elf_bytes));
	static const uint8_t ehdr[20] = { 0x7f, 'E', 'L', 'F', 2, 1, 1, 0, [16] = 1, 0, 247, 0 };
	memcpy(elf_bytes, ehdr, sizeof(ehdr));
	for (size_t i = 0; i < sizeof(fs_dfa); i++)
		fs_dfa[i] = (uint8_t)(i + 1);
	for (size_t i = 0; i < sizeof(net4); i++)
		net4[i] = (uint8_t)(200 - i);
	struct sec s[] = {
		{ BEE_PACK_MANIFEST, "manifest", 1, strlen(manifest_json), manifest_json, strlen(manifest_json) },
		{ BEE_PACK_ELF, "policy.bpf.o", 1, sizeof(elf_bytes), elf_bytes, sizeof(elf_bytes) },
		{ BEE_PACK_MAP_IMAGE, "fs_dfa", 12, 3, fs_dfa, sizeof(fs_dfa) },
		{ BEE_PACK_MAP_IMAGE, "net4", 5, 3, net4, sizeof(net4) },
		{ BEE_PACK_SOURCE, "policy.toml", 1, strlen(source_toml), source_toml, strlen(source_toml) },
	};
	memcpy(test_secs, s, sizeof(s));
}

static int setup(void **state)
{
	(void)state;
	test_secs_init();
	return 0;
}

/* ---- an independent encoder --------------------------------------------- */

static uint64_t align8(uint64_t v)
{
	return (v + 7) / 8 * 8;
}

static void put_le(uint8_t *p, uint64_t v, int bytes)
{
	for (int i = 0; i < bytes; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, int bytes)
{
	uint64_t v = 0;
	for (int i = bytes - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* Recomputes the section checksums that the table points at, the file size
 * (when fix_size), and the digest: XXH3-128 of the file without bytes 40..55,
 * computed here in one shot over a copy that leaves them out. */
static void reseal(uint8_t *b, size_t len, int fix_size)
{
	uint32_t n = (uint32_t)get_le(b + HDR_OFF(section_count), 4);
	if (fix_size)
		put_le(b + HDR_OFF(file_size), len, 8);
	for (uint64_t i = 0; i < n && HDR_SIZE + (i + 1) * SEC_SIZE <= len; i++) {
		uint8_t *e = b + HDR_SIZE + i * SEC_SIZE;
		uint64_t off = get_le(e + SEC_OFF(offset), 8), size = get_le(e + SEC_OFF(size), 8);
		if (off <= len && size <= len - off)
			put_le(e + SEC_OFF(checksum), XXH3_64bits(b + off, size), 8);
	}
	uint8_t *rest = malloc(len);
	memcpy(rest, b, 40);
	memcpy(rest + 40, b + 56, len - 56);
	XXH128_hash_t h = XXH3_128bits(rest, len - 16);
	free(rest);
	for (int i = 0; i < 8; i++) {
		b[40 + i] = (uint8_t)(h.high64 >> (56 - 8 * i));
		b[48 + i] = (uint8_t)(h.low64 >> (56 - 8 * i));
	}
}

/* Lays secs out in the order given, with no check at all; returns the length. */
static size_t encode(const struct sec *secs, size_t n, uint8_t **out)
{
	uint64_t end = HDR_SIZE + n * SEC_SIZE;
	for (size_t i = 0; i < n; i++)
		end = align8(end) + secs[i].size;
	size_t len = align8(end);
	uint8_t *b = calloc(1, len);
	memcpy(b, "BEEPACK", 8);
	put_le(b + 8, 1, 2);
	put_le(b + 10, 64, 2);
	put_le(b + 16, n, 4);
	put_le(b + 20, 80, 4);
	put_le(b + 24, len, 8);
	put_le(b + 32, 64, 8);
	uint64_t off = HDR_SIZE + n * SEC_SIZE;
	for (size_t i = 0; i < n; i++) {
		uint8_t *e = b + HDR_SIZE + i * SEC_SIZE;
		off = align8(off);
		strncpy((char *)e, secs[i].name, 32);
		put_le(e + 32, secs[i].kind, 4);
		put_le(e + 36, secs[i].width, 4);
		put_le(e + 40, secs[i].count, 8);
		put_le(e + 48, off, 8);
		put_le(e + 56, secs[i].size, 8);
		memcpy(b + off, secs[i].data, secs[i].size);
		off += secs[i].size;
	}
	reseal(b, len, 0);
	*out = b;
	return len;
}

static size_t write_with(const struct sec *secs, size_t n, uint8_t **out)
{
	struct pack_writer w;
	size_t len;
	pack_writer_init(&w);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(pack_writer_add(&w, secs[i].kind, secs[i].name, secs[i].width,
						 secs[i].count, secs[i].data, secs[i].size), 0);
	int rc = pack_writer_finish(&w, out, &len);
	if (rc)
		print_error("finish: %s\n", pack_writer_error(&w));
	assert_int_equal(rc, 0);
	pack_writer_release(&w);
	return len;
}

/* Opens len bytes and expects rejection with want in the message. */
static int rejects(const uint8_t *b, size_t len, const char *want, char *err, size_t errlen)
{
	struct bee_pack *p = (struct bee_pack *)1;
	int rc = bee_pack__open_mem(b, len, &p, err, errlen);
	if (rc == 0) {
		bee_pack__close(p);
		snprintf(err, errlen, "(accepted)");
		return 0;
	}
	return rc == -EINVAL && p == NULL && strncmp(err, "pack: ", 6) == 0 && strstr(err, want);
}

/* ---- round trip and determinism ------------------------------------------ */

static void test_round_trip(void **state)
{
	(void)state;
	uint8_t *buf;
	size_t len = write_with(test_secs, ARRAY_LEN(test_secs), &buf);
	assert_int_equal(len % 8, 0);

	struct bee_pack *p;
	char err[256];
	int rc = bee_pack__open_mem(buf, len, &p, err, sizeof(err));
	if (rc)
		print_error("%s\n", err);
	assert_int_equal(rc, 0);
	assert_int_equal(bee_pack__section_count(p), ARRAY_LEN(test_secs));
	for (uint32_t i = 0; i < ARRAY_LEN(test_secs); i++) {
		const struct bee_pack_section_info *s = bee_pack__section(p, i);
		assert_non_null(s);
		assert_int_equal(s->index, i);
		assert_int_equal(s->kind, test_secs[i].kind);
		assert_string_equal(s->name, test_secs[i].name);
		assert_int_equal(s->elem_width, test_secs[i].width);
		assert_int_equal(s->elem_count, test_secs[i].count);
		assert_int_equal(s->size, test_secs[i].size);
		assert_memory_equal(s->data, test_secs[i].data, test_secs[i].size);
		assert_int_equal((uintptr_t)s->data % 8, 0);
		assert_int_equal(s->checksum, XXH3_64bits(test_secs[i].data, test_secs[i].size));
		assert_ptr_equal(bee_pack__find(p, s->kind, s->name), s);
	}
	assert_null(bee_pack__section(p, ARRAY_LEN(test_secs)));
	assert_ptr_equal(bee_pack__find(p, BEE_PACK_MAP_IMAGE, NULL), bee_pack__section(p, 2));
	assert_ptr_equal(bee_pack__find(p, BEE_PACK_MAP_IMAGE, "net4"), bee_pack__section(p, 3));
	assert_null(bee_pack__find(p, BEE_PACK_MAP_IMAGE, "net6"));
	assert_null(bee_pack__find(p, BEE_PACK_ELF, "fs_dfa"));

	const json_t *m = (const json_t *)bee_pack__manifest(p);
	assert_true(json_is_object(m));
	assert_string_equal(json_string_value(json_object_get(m, "name")), "t");

	/* the digest is the stored field, and its hex is those bytes in order */
	char hex[BEE_PACK_DIGEST_HEX_LEN + 1], want[BEE_PACK_DIGEST_HEX_LEN + 1];
	bee_pack__digest_hex(p, hex);
	for (int i = 0; i < 16; i++)
		snprintf(want + 2 * i, 3, "%02x", buf[40 + i]);
	assert_string_equal(hex, want);
	assert_memory_equal(bee_pack__digest(p), buf + 40, 16);

	/* the pack holds its own copy */
	size_t blen;
	const void *bytes = bee_pack__bytes(p, &blen);
	assert_int_equal(blen, len);
	assert_ptr_not_equal(bytes, buf);
	assert_memory_equal(bytes, buf, len);
	buf[HDR_SIZE + SEC_OFF(elem_width)] ^= 1;
	assert_int_equal(bee_pack__section(p, 0)->elem_width, 1);
	bee_pack__close(p);
	free(buf);
}

/* The writer and the test's own encoder agree byte for byte. */
static void test_writer_matches_encoder(void **state)
{
	(void)state;
	uint8_t *w, *e;
	size_t wlen = write_with(test_secs, ARRAY_LEN(test_secs), &w);
	size_t elen = encode(test_secs, ARRAY_LEN(test_secs), &e);
	assert_int_equal(wlen, elen);
	assert_memory_equal(w, e, wlen);
	free(w);
	free(e);
}

/* Every one of the 120 orders of adding the sections gives the same bytes. */
static void test_determinism(void **state)
{
	(void)state;
	uint8_t *first;
	size_t first_len = write_with(test_secs, ARRAY_LEN(test_secs), &first);
	int perm[5] = { 0, 1, 2, 3, 4 }, c[5] = { 0 }, orders = 1;
	/* Heap's algorithm, iterative */
	for (int i = 0; i < 5;) {
		if (c[i] < i) {
			int j = i % 2 ? c[i] : 0, t = perm[j];
			perm[j] = perm[i];
			perm[i] = t;
			struct sec order[5];
			for (int k = 0; k < 5; k++)
				order[k] = test_secs[perm[k]];
			uint8_t *b;
			size_t len = write_with(order, 5, &b);
			assert_int_equal(len, first_len);
			assert_memory_equal(b, first, len);
			free(b);
			orders++;
			c[i]++;
			i = 0;
		} else {
			c[i] = 0;
			i++;
		}
	}
	assert_int_equal(orders, 120);
	free(first);
}

/* Two writers fed different section data never give the same digest. */
static void test_digest_names_content(void **state)
{
	(void)state;
	uint8_t *a, *b;
	size_t alen = write_with(test_secs, ARRAY_LEN(test_secs), &a);
	fs_dfa[5] ^= 1;
	size_t blen = write_with(test_secs, ARRAY_LEN(test_secs), &b);
	fs_dfa[5] ^= 1;
	assert_int_equal(alen, blen);
	assert_memory_not_equal(a + 40, b + 40, 16);
	free(a);
	free(b);
}

/* ---- truncation ------------------------------------------------------------- */

static void test_truncation(void **state)
{
	(void)state;
	uint8_t *buf;
	size_t len = write_with(test_secs, ARRAY_LEN(test_secs), &buf);
	size_t table_end = HDR_SIZE + ARRAY_LEN(test_secs) * SEC_SIZE;
	char err[256], want[128];
	failures = 0;
	for (size_t cut = 0; cut < len; cut++) {
		uint8_t *b = malloc(cut ? cut : 1);   /* exactly cut bytes, for ASan */
		memcpy(b, buf, cut);
		if (cut < HDR_SIZE)
			snprintf(want, sizeof(want), "truncated: header needs 64 bytes, file has %zu", cut);
		else if (cut < table_end)
			snprintf(want, sizeof(want), "truncated: section table needs 400 bytes at offset 64, "
				 "file has %zu", cut);
		else
			snprintf(want, sizeof(want), "truncated");
		if (!rejects(b, cut, want, err, sizeof(err)))
			ROW_FAIL("cut at %zu: got '%s', want '%s'", cut, err, want);
		free(b);
	}
	/* at each section boundary, the message names the section that is cut */
	for (uint32_t i = 0; i < ARRAY_LEN(test_secs); i++) {
		const uint8_t *e = buf + HDR_SIZE + i * SEC_SIZE;
		uint64_t off = get_le(e + SEC_OFF(offset), 8), size = get_le(e + SEC_OFF(size), 8);
		uint64_t cuts[] = { off, off + size / 2, off + size - 1 };
		for (size_t k = 0; k < ARRAY_LEN(cuts); k++) {
			snprintf(want, sizeof(want), "pack: truncated: section %u '%s' needs %llu bytes at "
				 "offset %llu, file has %llu", i, test_secs[i].name,
				 (unsigned long long)size, (unsigned long long)off,
				 (unsigned long long)cuts[k]);
			if (!rejects(buf, cuts[k], want, err, sizeof(err)) || strcmp(err, want))
				ROW_FAIL("cut at %llu: got '%s', want '%s'", (unsigned long long)cuts[k], err, want);
		}
	}
	/* in the padding after the last section: the header's size names it */
	snprintf(want, sizeof(want), "pack: truncated: the header's file size is %zu bytes, the file "
		 "has %zu", len, len - 1);
	if (!rejects(buf, len - 1, want, err, sizeof(err)) || strcmp(err, want))
		ROW_FAIL("cut at %zu: got '%s', want '%s'", len - 1, err, want);
	assert_int_equal(failures, 0);
	free(buf);
}

/* ---- a flipped byte ------------------------------------------------------ */

/* What a flip (xor 0x80) of a byte in each field must say. */
static const struct {
	size_t off, size;
	const char *want;
} header_fields[] = {
	{ 0, 8, "pack: header: bad magic" },
	{ 8, 2, "pack: header: format version" },
	{ 10, 2, "pack: header: header size" },
	{ 12, 4, "pack: header: unknown flags" },
	{ 16, 1, "pack: truncated: section table needs 10640 bytes" },   /* 5 ^ 0x80 = 133 sections */
	{ 17, 3, "pack: header: section count" },
	{ 20, 4, "pack: header: section entry size" },
	{ 24, 8, "file size" },
	{ 32, 8, "pack: header: section table offset" },
	{ 40, 16, "pack: header: digest mismatch" },
	{ 56, 8, "pack: header: reserved field is not zero" },
};

static const struct {
	size_t off, size;
	const char *want;
} entry_fields[] = {
	{ 32, 4, "unknown kind" },
	{ 36, 4, "element width" },
	{ 40, 8, "element count" },
	{ 48, 8, "offset" },
	{ 56, 8, "size" },
	{ 64, 8, "checksum mismatch" },
	{ 72, 4, "unknown flags" },
	{ 76, 4, "reserved field is not zero" },
};

static void test_flip_header_and_table(void **state)
{
	(void)state;
	uint8_t *buf;
	size_t len = write_with(test_secs, ARRAY_LEN(test_secs), &buf);
	char err[256];
	size_t covered = 0;
	failures = 0;
	for (size_t f = 0; f < ARRAY_LEN(header_fields); f++)
		for (size_t k = 0; k < header_fields[f].size; k++, covered++) {
			size_t at = header_fields[f].off + k;
			buf[at] ^= 0x80;
			if (!rejects(buf, len, header_fields[f].want, err, sizeof(err)))
				ROW_FAIL("header byte %zu: got '%s', want '%s'", at, err, header_fields[f].want);
			buf[at] ^= 0x80;
		}
	assert_int_equal(covered, HDR_SIZE);

	for (uint32_t i = 0; i < ARRAY_LEN(test_secs); i++) {
		size_t base = HDR_SIZE + i * SEC_SIZE, namelen = strlen(test_secs[i].name);
		for (size_t k = 0; k < SEC_SIZE; k++) {
			/* the message names the section first, then the field */
			char prefix[80];
			const char *field = NULL;
			char name_field[64];
			if (k < 32 && k <= namelen) {
				snprintf(prefix, sizeof(prefix), "pack: section %u: ", i);
				snprintf(name_field, sizeof(name_field), "name has byte 0x%02x at position %zu,",
					 buf[base + k] ^ 0x80, k);
				field = name_field;
			} else if (k < 32) {
				snprintf(prefix, sizeof(prefix), "pack: section %u '%s': ", i, test_secs[i].name);
				field = "name is not NUL-padded";
			} else {
				snprintf(prefix, sizeof(prefix), "pack: section %u '%s': ", i, test_secs[i].name);
				for (size_t f = 0; f < ARRAY_LEN(entry_fields); f++)
					if (k >= entry_fields[f].off && k < entry_fields[f].off + entry_fields[f].size)
						field = entry_fields[f].want;
			}
			assert_non_null(field);
			buf[base + k] ^= 0x80;
			if (!rejects(buf, len, field, err, sizeof(err)) || strncmp(err, prefix, strlen(prefix)))
				ROW_FAIL("table byte %zu (section %u, entry byte %zu): got '%s', want '%s%s'",
					 base + k, i, k, err, prefix, field);
			buf[base + k] ^= 0x80;
		}
	}
	assert_int_equal(failures, 0);
	free(buf);
}

/* A flip in any section byte is that section's checksum; in padding, padding. */
static void test_flip_sections_and_padding(void **state)
{
	(void)state;
	uint8_t *buf;
	size_t len = write_with(test_secs, ARRAY_LEN(test_secs), &buf);
	size_t table_end = HDR_SIZE + ARRAY_LEN(test_secs) * SEC_SIZE;
	char err[256], want[160];
	uint8_t *owner = calloc(len, 1);   /* 1 + section index, 0 for padding */
	failures = 0;
	for (uint32_t i = 0; i < ARRAY_LEN(test_secs); i++) {
		const uint8_t *e = buf + HDR_SIZE + i * SEC_SIZE;
		uint64_t off = get_le(e + SEC_OFF(offset), 8), size = get_le(e + SEC_OFF(size), 8);
		memset(owner + off, (int)i + 1, size);
	}
	size_t padding = 0;
	for (size_t at = table_end; at < len; at++) {
		if (owner[at]) {
			uint32_t i = owner[at] - 1u;
			snprintf(want, sizeof(want), "pack: section %u '%s': checksum mismatch (stored 0x",
				 i, test_secs[i].name);
		} else {
			snprintf(want, sizeof(want), "padding byte at offset %zu", at);
			padding++;
		}
		buf[at] ^= 0x01;
		if (!rejects(buf, len, want, err, sizeof(err)))
			ROW_FAIL("byte %zu: got '%s', want '%s'", at, err, want);
		buf[at] ^= 0x01;
	}
	assert_true(padding >= ARRAY_LEN(test_secs));   /* the layout has padding to test */
	assert_int_equal(failures, 0);
	free(owner);
	free(buf);
}

/* Whatever byte is flipped, and however, the pack is rejected. */
static void test_flip_anywhere(void **state)
{
	(void)state;
	uint8_t *buf;
	size_t len = write_with(test_secs, ARRAY_LEN(test_secs), &buf);
	static const uint8_t masks[] = { 0x01, 0x02, 0x10, 0x80, 0xff };
	char err[256];
	failures = 0;
	for (size_t at = 0; at < len; at++)
		for (size_t m = 0; m < ARRAY_LEN(masks); m++) {
			buf[at] ^= masks[m];
			if (!rejects(buf, len, "", err, sizeof(err)))
				ROW_FAIL("byte %zu ^ 0x%02x: got '%s'", at, masks[m], err);
			buf[at] ^= masks[m];
		}
	assert_int_equal(failures, 0);
	free(buf);
}

/* The writer's check of a pack it printed the manifest of gives open's
 * verdict and message on every flipped byte, but for the manifest's JSON,
 * which it does not parse: the same pack, a byte of the JSON flipped and
 * the pack resealed, passes there and fails at open. */
static void test_check_written(void **state)
{
	(void)state;
	uint8_t *buf;
	size_t len = write_with(test_secs, ARRAY_LEN(test_secs), &buf);
	char err[256], err2[256];
	assert_int_equal(bee_pack__check_written(buf, len, err, sizeof(err)), 0);
	failures = 0;
	for (size_t at = 0; at < len; at++) {
		buf[at] ^= 0x10;
		struct bee_pack *p;
		int want = bee_pack__open_mem(buf, len, &p, err, sizeof(err));
		bee_pack__close(p);
		int got = bee_pack__check_written(buf, len, err2, sizeof(err2));
		if (got != want || (want && strcmp(err, err2)))
			ROW_FAIL("byte %zu: open %d '%s', check_written %d '%s'", at, want, err, got, err2);
		buf[at] ^= 0x10;
	}
	assert_int_equal(failures, 0);
	uint8_t *json = memmem(buf, len, manifest_json, strlen(manifest_json));
	assert_non_null(json);
	json[0] = '[';
	reseal(buf, len, 0);
	assert_int_equal(bee_pack__check_written(buf, len, err, sizeof(err)), 0);
	assert_true(rejects(buf, len, "manifest is not valid JSON", err, sizeof(err)));
	json[0] = '{';
	reseal(buf, len, 0);
	assert_int_equal(bee_pack__check_written(buf, len + 1, err, sizeof(err)), -EINVAL);
	assert_int_equal(bee_pack__check_written(buf, BEE_PACK_MAX_FILE + 1, err, sizeof(err)), -EFBIG);
	free(buf);
}

/* ---- bad fields, table driven -------------------------------------------- */

/* A mutation of the valid test pack; then it is resealed (checksums, digest)
 * so that only the field under test is wrong. */
enum { T = HDR_SIZE };   /* the table */
#define E(i, field) (T + (i) * SEC_SIZE + SEC_OFF(field))

struct field_row {
	const char *what;
	size_t at;           /* byte offset of the field */
	int bytes;           /* its width: 1, 2, 4, 8; 0 for raw bytes */
	uint64_t value;
	const char *raw;     /* for bytes == 0: what to write at "at" */
	size_t raw_len;
	const char *want;    /* the whole message, or its start when it ends with '*' */
};

#define ROW_RAW(what, at, raw, want) { what, at, 0, 0, raw, sizeof(raw) - 1, want }

static const struct field_row field_rows[] = {
	{ "version", 8, 2, 7, NULL, 0,
	  "pack: header: format version 7 is not supported (this reader reads 1)" },
	{ "version 0", 8, 2, 0, NULL, 0,
	  "pack: header: format version 0 is not supported (this reader reads 1)" },
	{ "header size", 10, 2, 72, NULL, 0,
	  "pack: header: header size 72 is wrong for format version 1 (expected 64)" },
	{ "flags", 12, 4, 4, NULL, 0, "pack: header: unknown flags 0x4 set (this reader knows 0x0)" },
	{ "count 0", 16, 4, 0, NULL, 0,
	  "pack: header: section count 0 is out of range (2..1024; a pack holds at least a manifest and a source)" },
	{ "count 1", 16, 4, 1, NULL, 0, "pack: header: section count 1 is out of range*" },
	{ "count 1025", 16, 4, 1025, NULL, 0, "pack: header: section count 1025 is out of range*" },
	{ "count max", 16, 4, UINT32_MAX, NULL, 0, "pack: header: section count 4294967295 is out of range*" },
	{ "count 1024", 16, 4, 1024, NULL, 0,
	  "pack: truncated: section table needs 81920 bytes at offset 64, file has *" },
	{ "entry size", 20, 4, 88, NULL, 0, "pack: header: section entry size 88 is wrong (expected 80)" },
	{ "file size max", 24, 8, UINT64_MAX, NULL, 0,
	  "pack: truncated: the header's file size is 18446744073709551615 bytes, the file has *" },
	{ "file size less", 24, 8, 64, NULL, 0,
	  "pack: header: file size 64 is less than the * bytes given (trailing data)" },
	{ "table offset", 32, 8, 72, NULL, 0,
	  "pack: header: section table offset 72 is not 64, right after the header" },
	{ "table offset max", 32, 8, UINT64_MAX, NULL, 0,
	  "pack: header: section table offset 18446744073709551615 is not 64, right after the header" },
	{ "reserved", 56, 8, 1ull << 63, NULL, 0,
	  "pack: header: reserved field is not zero (0x8000000000000000)" },
	ROW_RAW("magic", 0, "BEEPACK\n", "pack: header: bad magic 4245455041434b0a (not a bee pack; expected 4245455041434b00)"),
	ROW_RAW("name empty", E(0, name), "\0", "pack: section 0: name is empty"),
	ROW_RAW("name unterminated", E(1, name), "policy.bpf.o.xxxxxxxxxxxxxxxxxxx",
		"pack: section 1: name is not NUL-terminated within 32 bytes"),
	ROW_RAW("name space", E(2, name), "fs dfa", "pack: section 2: name has byte 0x20 at position 2, which is not printable ASCII"),
	ROW_RAW("name control", E(2, name), "fs\tdfa", "pack: section 2: name has byte 0x09 at position 2, which is not printable ASCII"),
	ROW_RAW("name del", E(2, name), "\x7f", "pack: section 2: name has byte 0x7f at position 0, which is not printable ASCII"),
	ROW_RAW("name padding", E(3, name) + 30, "x", "pack: section 3 'net4': name is not NUL-padded (byte 0x78 at position 30)"),
	{ "kind 0", E(0, kind), 4, 0, NULL, 0, "pack: section 0 'manifest': unknown kind 0" },
	{ "kind 5", E(4, kind), 4, 5, NULL, 0, "pack: section 4 'policy.toml': unknown kind 5" },
	{ "section flags", E(2, flags), 4, 0x10, NULL, 0,
	  "pack: section 2 'fs_dfa': unknown flags 0x10 set (this reader knows 0x0)" },
	{ "section reserved", E(3, reserved), 4, 9, NULL, 0,
	  "pack: section 3 'net4': reserved field is not zero (0x9)" },
	{ "bytes width", E(0, elem_width), 4, 2, NULL, 0,
	  "pack: section 0 'manifest': element width 2 is wrong for a manifest section (expected 1)" },
	{ "bytes count", E(4, elem_count), 8, 3, NULL, 0,
	  "pack: section 4 'policy.toml': element count 3 does not match size 47 (element width 1)" },
	{ "map width 0", E(2, elem_width), 4, 0, NULL, 0,
	  "pack: section 2 'fs_dfa': element width 0 (a map record has at least one byte)" },
	{ "map count 2^32", E(3, elem_count), 8, 1ull << 32, NULL, 0,
	  "pack: section 3 'net4': element count 4294967296 exceeds a map's 32-bit entry limit" },
	{ "map product", E(3, elem_count), 8, 4, NULL, 0,
	  "pack: section 3 'net4': element width 5 * element count 4 is not the section size 15" },
	{ "map product max", E(3, elem_width), 4, UINT32_MAX, NULL, 0,
	  "pack: section 3 'net4': element width 4294967295 * element count 3 is not the section size 15" },
	{ "offset unaligned", E(1, offset), 8, 537, NULL, 0,
	  "pack: section 1 'policy.bpf.o': offset 537 is not 8-byte aligned" },
	{ "offset in table", E(0, offset), 8, 64, NULL, 0,
	  "pack: section 0 'manifest': offset 64 overlaps the section table (which ends at 464)" },
	{ "offset overlap", E(1, offset), 8, 528, NULL, 0,
	  "pack: section 1 'policy.bpf.o': offset 528 overlaps section 0 'manifest' (which ends at 531)" },
	{ "offset gap", E(1, offset), 8, 544, NULL, 0,
	  "pack: section 1 'policy.bpf.o': offset 544 leaves 13 bytes after section 0 'manifest' unaccounted for (expected offset 536)" },
	{ "offset max", E(4, offset), 8, UINT64_MAX - 7, NULL, 0,
	  "pack: section 4 'policy.toml': offset 18446744073709551608 leaves * bytes after section 3 'net4' unaccounted for (expected offset 664)" },
	{ "size max", E(4, size), 8, UINT64_MAX - 3, NULL, 0,
	  "pack: section 4 'policy.toml': element count 47 does not match size 18446744073709551612 (element width 1)" },
	ROW_RAW("padding", 534, "\x01", "pack: section 1 'policy.bpf.o': padding byte at offset 534 before it is not zero (0x01)"),
	ROW_RAW("trailing padding", 711, "\x01", "pack: padding byte at offset 711 after the last section is not zero (0x01)"),
};

static int message_matches(const char *got, const char *want)
{
	size_t n = strlen(want);
	const char *star = strchr(want, '*');
	if (!star)
		return strcmp(got, want) == 0;
	/* one '*' stands for any text */
	size_t head = (size_t)(star - want), tail = n - head - 1;
	size_t g = strlen(got);
	return g >= head + tail && strncmp(got, want, head) == 0 &&
	       strcmp(got + g - tail, star + 1) == 0;
}

static void test_bad_fields(void **state)
{
	(void)state;
	uint8_t *buf;
	size_t len = write_with(test_secs, ARRAY_LEN(test_secs), &buf);
	/* the offsets in the rows are of this layout */
	assert_int_equal(len, 712);
	assert_int_equal(get_le(buf + E(1, offset), 8), 536);
	assert_int_equal(get_le(buf + E(4, offset), 8), 664);
	char err[256];
	failures = 0;
	for (size_t r = 0; r < ARRAY_LEN(field_rows); r++) {
		const struct field_row *row = &field_rows[r];
		uint8_t *b = malloc(len);
		memcpy(b, buf, len);
		if (row->bytes)
			put_le(b + row->at, row->value, row->bytes);
		else
			memcpy(b + row->at, row->raw, row->raw_len);
		reseal(b, len, 0);
		struct bee_pack *p;
		int rc = bee_pack__open_mem(b, len, &p, err, sizeof(err));
		if (rc == 0) {
			ROW_FAIL("%s: accepted", row->what);
			bee_pack__close(p);
		} else if (rc != -EINVAL || !message_matches(err, row->want)) {
			ROW_FAIL("%s: got %d '%s', want '%s'", row->what, rc, err, row->want);
		}
		free(b);
	}
	assert_int_equal(failures, 0);
	free(buf);
}

/* The table in another order, a name twice: order and uniqueness. */
static void test_bad_table_order(void **state)
{
	(void)state;
	char err[256];
	uint8_t *b;
	struct sec s[5];
	memcpy(s, test_secs, sizeof(s));

	/* maps swapped */
	s[2] = test_secs[3];
	s[3] = test_secs[2];
	size_t len = encode(s, 5, &b);
	assert_true(rejects(b, len, "pack: section 3 'fs_dfa': out of canonical order (kind, then name) "
			    "after section 2 'net4'", err, sizeof(err)));
	free(b);

	/* source before manifest */
	s[0] = test_secs[4];
	s[4] = test_secs[0];
	memcpy(s + 1, test_secs + 1, 3 * sizeof(s[0]));
	len = encode(s, 5, &b);
	assert_true(rejects(b, len, "pack: section 1 'policy.bpf.o': out of canonical order", err,
			    sizeof(err)));
	free(b);

	/* the same kind and name twice */
	memcpy(s, test_secs, sizeof(s));
	s[3].name = "fs_dfa";
	len = encode(s, 5, &b);
	assert_true(rejects(b, len, "pack: section 3 'fs_dfa': duplicate of section 2 (same kind and name)",
			    err, sizeof(err)));
	free(b);

	/* the same name under two kinds */
	memcpy(s, test_secs, sizeof(s));
	s[4].name = "fs_dfa";
	len = encode(s, 5, &b);
	assert_true(rejects(b, len, "pack: section 4 'fs_dfa': name is also used by section 2", err,
			    sizeof(err)));
	free(b);

	/* bytes appended and declared: not where the last section ends */
	len = encode(test_secs, 5, &b);
	b = realloc(b, len + 8);
	memset(b + len, 0, 8);
	reseal(b, len + 8, 1);
	assert_true(rejects(b, len + 8, "pack: header: file size 720 is not the padded end of the last "
			    "section (712)", err, sizeof(err)));
	free(b);
}

/* ---- what the sections hold ---------------------------------------------- */

struct content_row {
	const char *what;
	struct sec secs[5];
	size_t n;
	const char *want;
};

#define MANIFEST(text) { BEE_PACK_MANIFEST, "manifest", 1, sizeof(text) - 1, text, sizeof(text) - 1 }
#define SOURCE(text) { BEE_PACK_SOURCE, "policy.toml", 1, sizeof(text) - 1, text, sizeof(text) - 1 }
#define ELF(name, bytes) { BEE_PACK_ELF, name, 1, sizeof(bytes) - 1, bytes, sizeof(bytes) - 1 }

/* 64-byte ELF headers: class, data, machine vary */
#define EHDR(cls, data, m0, m1) \
	"\177ELF" cls data "\1\0\0\0\0\0\0\0\0\0" "\1\0" m0 m1 \
	"\1\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0"

static const struct content_row content_rows[] = {
	{ "two sources", { SOURCE("a = 1\n"), { BEE_PACK_SOURCE, "second.toml", 1, 0, "", 0 } }, 2,
	  "pack: section 1 'second.toml': a second source (a pack has exactly one)" },
	{ "no manifest, map", { { BEE_PACK_MAP_IMAGE, "m", 1, 1, "x", 1 }, SOURCE("") }, 2,
	  "pack: no manifest section (a pack has exactly one)" },
	{ "no source", { MANIFEST("{}"), { BEE_PACK_MAP_IMAGE, "m", 1, 1, "x", 1 } }, 2,
	  "pack: no source section (a pack has exactly one)" },
	{ "two manifests", { MANIFEST("{}"), { BEE_PACK_MANIFEST, "z", 1, 2, "{}", 2 }, SOURCE("") }, 3,
	  "pack: section 1 'z': a second manifest (a pack has exactly one)" },
	{ "two elfs", { MANIFEST("{}"), ELF("a.o", EHDR("\2", "\1", "\367", "\0")),
			ELF("b.o", EHDR("\2", "\1", "\367", "\0")), SOURCE("") }, 4,
	  "pack: section 2 'b.o': a second ELF object (a pack has at most one)" },
	{ "manifest array", { MANIFEST("[]"), SOURCE("") }, 2,
	  "pack: section 0 'manifest': manifest is a JSON array, not an object" },
	{ "manifest number", { MANIFEST("1"), SOURCE("") }, 2,
	  "pack: section 0 'manifest': manifest is a JSON number, not an object" },
	{ "manifest empty", { MANIFEST(""), SOURCE("") }, 2,
	  "pack: section 0 'manifest': manifest is not valid JSON (line *" },
	{ "manifest open", { MANIFEST("{\"a\":"), SOURCE("") }, 2,
	  "pack: section 0 'manifest': manifest is not valid JSON (line 1, column *" },
	{ "manifest trailing", { MANIFEST("{} x"), SOURCE("") }, 2,
	  "pack: section 0 'manifest': manifest is not valid JSON (line 1, column *" },
	{ "manifest duplicate key", { MANIFEST("{\"a\":1,\"a\":2}"), SOURCE("") }, 2,
	  "pack: section 0 'manifest': manifest is not valid JSON (line 1, column 10: duplicate object key near '\"a\"')" },
	{ "manifest NUL", { MANIFEST("{\"a\":\"\\u0000\"}"), SOURCE("") }, 2,
	  "pack: section 0 'manifest': manifest is not valid JSON (line 1, column *" },
	{ "manifest bad utf8", { MANIFEST("{\"a\":\"\xff\"}"), SOURCE("") }, 2,
	  "pack: section 0 'manifest': manifest is not valid JSON (line 1, column *" },
	{ "elf short", { MANIFEST("{}"), ELF("a.o", "\177ELF\2\1"), SOURCE("") }, 3,
	  "pack: section 1 'a.o': ELF object is 6 bytes, shorter than an ELF header (64)" },
	{ "elf magic", { MANIFEST("{}"), ELF("a.o", EHDR("\2", "\1", "\367", "\0") "x"), SOURCE("") }, 3,
	  "" },   /* filled in below: the magic is overwritten */
	{ "elf 32-bit", { MANIFEST("{}"), ELF("a.o", EHDR("\1", "\1", "\367", "\0")), SOURCE("") }, 3,
	  "pack: section 1 'a.o': not a 64-bit ELF object (class 1)" },
	{ "elf encoding", { MANIFEST("{}"), ELF("a.o", EHDR("\2", "\3", "\367", "\0")), SOURCE("") }, 3,
	  "pack: section 1 'a.o': ELF object has unknown data encoding 3" },
	{ "elf x86", { MANIFEST("{}"), ELF("a.o", EHDR("\2", "\1", "\76", "\0")), SOURCE("") }, 3,
	  "pack: section 1 'a.o': ELF object is for machine 62, not BPF (247)" },
	{ "elf big-endian x86", { MANIFEST("{}"), ELF("a.o", EHDR("\2", "\2", "\367", "\0")), SOURCE("") }, 3,
	  "pack: section 1 'a.o': ELF object is for machine 63232, not BPF (247)" },
	{ "source NUL", { MANIFEST("{}"), SOURCE("a = 1\n\0") }, 2,
	  "pack: section 1 'policy.toml': source holds a NUL byte at offset 6" },
	{ "source overlong", { MANIFEST("{}"), SOURCE("a\xc0\xaf") }, 2,
	  "pack: section 1 'policy.toml': source is not valid UTF-8 (byte 0xc0 at offset 1)" },
	{ "source surrogate", { MANIFEST("{}"), SOURCE("\xed\xa0\x80") }, 2,
	  "pack: section 1 'policy.toml': source is not valid UTF-8 (byte 0xed at offset 0)" },
	{ "source above U+10FFFF", { MANIFEST("{}"), SOURCE("ab\xf4\x90\x80\x80") }, 2,
	  "pack: section 1 'policy.toml': source is not valid UTF-8 (byte 0xf4 at offset 2)" },
	{ "source cut sequence", { MANIFEST("{}"), SOURCE("\xe2\x82") }, 2,
	  "pack: section 1 'policy.toml': source is not valid UTF-8 (byte 0xe2 at offset 0)" },
	{ "source lone continuation", { MANIFEST("{}"), SOURCE("\x80") }, 2,
	  "pack: section 1 'policy.toml': source is not valid UTF-8 (byte 0x80 at offset 0)" },
	{ "source overlong 3", { MANIFEST("{}"), SOURCE("\xe0\x80\xaf") }, 2,
	  "pack: section 1 'policy.toml': source is not valid UTF-8 (byte 0xe0 at offset 0)" },
	{ "source f5", { MANIFEST("{}"), SOURCE("\xf5\x80\x80\x80") }, 2,
	  "pack: section 1 'policy.toml': source is not valid UTF-8 (byte 0xf5 at offset 0)" },
	{ "source bad tail", { MANIFEST("{}"), SOURCE("\xf0\x9f\x90\x41") }, 2,
	  "pack: section 1 'policy.toml': source is not valid UTF-8 (byte 0xf0 at offset 0)" },
};

static void test_bad_contents(void **state)
{
	(void)state;
	char err[256];
	failures = 0;
	for (size_t r = 0; r < ARRAY_LEN(content_rows); r++) {
		const struct content_row *row = &content_rows[r];
		uint8_t *b;
		size_t len = encode(row->secs, row->n, &b);
		const char *want = row->want;
		if (!strcmp(row->what, "elf magic")) {
			/* the ELF section starts right after the 3-entry table and "{}" */
			size_t off = (size_t)get_le(b + E(1, offset), 8);
			b[off + 1] = 'e';
			reseal(b, len, 0);
			want = "pack: section 1 'a.o': not an ELF object (bad magic)";
		}
		struct bee_pack *p;
		int rc = bee_pack__open_mem(b, len, &p, err, sizeof(err));
		if (rc == 0) {
			ROW_FAIL("%s: accepted", row->what);
			bee_pack__close(p);
		} else if (rc != -EINVAL || !message_matches(err, want)) {
			ROW_FAIL("%s: got %d '%s', want '%s'", row->what, rc, err, want);
		}
		/* the same from a file opened with the manifest's parse put
		 * off: the manifest's faults when it is parsed, the rest at
		 * the open */
		char path[] = "/tmp/test_pack.XXXXXX";
		int fd = mkstemp(path);
		assert_true(fd >= 0);
		assert_int_equal(write(fd, b, len), (ssize_t)len);
		close(fd);
		bool json = strstr(want, "': manifest is ") != NULL;
		rc = bee_pack__open_file_later(path, &p, err, sizeof(err));
		if (rc == 0 && !json)
			ROW_FAIL("%s: opened later", row->what);
		if (rc == 0 && (rc = bee_pack__manifest_parse(p, err, sizeof(err))) == 0)
			ROW_FAIL("%s: parsed later", row->what);
		if (rc != -EINVAL || !message_matches(err, want))
			ROW_FAIL("%s: later: got %d '%s', want '%s'", row->what, rc, err, want);
		bee_pack__close(p);
		unlink(path);
		free(b);
	}
	assert_int_equal(failures, 0);
}

/* What the content checks accept. */
static void test_good_contents(void **state)
{
	(void)state;
	static const struct sec good[][4] = {
		{ MANIFEST("{}"), SOURCE("") },
		{ MANIFEST(" {\"a\": [1, {\"b\": null}]}\n"), SOURCE("k = \"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x90\x9d\"\n") },
		{ MANIFEST("{}"), ELF("be.o", EHDR("\2", "\2", "\0", "\367")), SOURCE("\xf4\x8f\xbf\xbf") },
		{ MANIFEST("{}"), { BEE_PACK_MAP_IMAGE, "empty", 8, 0, "", 0 }, SOURCE("\xef\xbb\xbf\x7f") },
	};
	static const size_t n[] = { 2, 2, 3, 3 };
	for (size_t r = 0; r < ARRAY_LEN(good); r++) {
		uint8_t *b;
		size_t len = encode(good[r], n[r], &b);
		struct bee_pack *p;
		char err[256];
		int rc = bee_pack__open_mem(b, len, &p, err, sizeof(err));
		if (rc)
			print_error("row %zu: %s\n", r, err);
		assert_int_equal(rc, 0);
		bee_pack__close(p);
		free(b);
	}
}

static void test_short_inputs(void **state)
{
	(void)state;
	char err[256];
	assert_true(rejects((const uint8_t *)"", 0, "pack: truncated: header needs 64 bytes, file has 0",
			    err, sizeof(err)));
	assert_true(rejects((const uint8_t *)"BEE", 3, "pack: truncated: header needs 64 bytes, file has 3",
			    err, sizeof(err)));
	assert_true(rejects((const uint8_t *)"hello", 5, "pack: header: bad magic 68656c6c6f (not a bee pack",
			    err, sizeof(err)));
	/* err may be absent or tiny */
	struct bee_pack *p;
	assert_int_equal(bee_pack__open_mem("hello", 5, &p, NULL, 0), -EINVAL);
	char tiny[4] = "xxx";
	assert_int_equal(bee_pack__open_mem("hello", 5, &p, tiny, sizeof(tiny)), -EINVAL);
	assert_string_equal(tiny, "pac");
	assert_int_equal(bee_pack__open_mem("hello", 5, &p, tiny, 1), -EINVAL);
	assert_string_equal(tiny, "");
}

/* Messages hold printable ASCII only, and the longest still fits. */
static void test_messages_printable(void **state)
{
	(void)state;
	char err[BEE_PACK_ERRLEN];
	uint8_t *b;
	static const struct sec escape[] = { MANIFEST("{\"a\":\x1b[2J\x07}"), SOURCE("") };
	size_t len = encode(escape, 2, &b);
	assert_true(rejects(b, len, "manifest is not valid JSON", err, sizeof(err)));
	for (const char *c = err; *c; c++)
		assert_true(*c >= 0x20 && *c <= 0x7e);
	free(b);

	static const struct sec long_names[] = {
		{ BEE_PACK_MANIFEST, "mmmmmmmmmmmmmmmmmmmmmmmmmmmmmmm", 1, 2, "{}", 2 },
		{ BEE_PACK_SOURCE, "sssssssssssssssssssssssssssssss", 1, 0, "", 0 },
	};
	len = encode(long_names, 2, &b);
	put_le(b + E(1, offset), UINT64_MAX - 7, 8);
	reseal(b, len, 0);
	assert_true(rejects(b, len, "leaves 18446744073709551", err, sizeof(err)));
	assert_true(strlen(err) >= 200 && strlen(err) < sizeof(err) - 1);
	free(b);
}

/* ---- the writer's own checks ------------------------------------------------ */

static void test_writer_errors(void **state)
{
	(void)state;
	struct pack_writer w;
	pack_writer_init(&w);
	assert_int_equal(pack_writer_add(&w, (enum bee_pack_kind)9, "x", 1, 0, "", 0), -EINVAL);
	assert_string_equal(pack_writer_error(&w), "pack: section 'x': unknown kind 9");
	assert_int_equal(pack_writer_add(&w, BEE_PACK_SOURCE, "", 1, 0, "", 0), -EINVAL);
	assert_string_equal(pack_writer_error(&w), "pack: section '': name must be 1 to 31 bytes long");
	assert_int_equal(pack_writer_add(&w, BEE_PACK_SOURCE, "0123456789abcdef0123456789abcdef",
					 1, 0, "", 0), -EINVAL);
	assert_int_equal(pack_writer_add(&w, BEE_PACK_SOURCE, "a b", 1, 0, "", 0), -EINVAL);
	assert_string_equal(pack_writer_error(&w),
			    "pack: section 'a b': name has byte 0x20, which is not printable ASCII");
	assert_int_equal(pack_writer_add(&w, BEE_PACK_SOURCE, "a\xc3\xa9", 1, 0, "", 0), -EINVAL);
	assert_int_equal(pack_writer_add(&w, BEE_PACK_SOURCE, "s", 2, 1, "ab", 2), -EINVAL);
	assert_string_equal(pack_writer_error(&w), "pack: section 's': a source section has element "
			    "width 1 and count equal to its size");
	assert_int_equal(pack_writer_add(&w, BEE_PACK_MAP_IMAGE, "m", 3, 2, "abcde", 5), -EINVAL);
	assert_int_equal(pack_writer_add(&w, BEE_PACK_MAP_IMAGE, "m", 0, 0, "", 0), -EINVAL);
	assert_int_equal(pack_writer_add(&w, BEE_PACK_MAP_IMAGE, "m", 1, 1ull << 32, "", 1ull << 32),
			 -EINVAL);
	assert_int_equal(w.n, 0);

	/* fewer than two sections, then no source, then a manifest that is no object */
	uint8_t *buf;
	size_t len;
	assert_int_equal(pack_writer_finish(&w, &buf, &len), -EINVAL);
	assert_null(buf);
	assert_string_equal(pack_writer_error(&w),
			    "pack: 0 sections: a pack holds at least a manifest and a source");
	assert_int_equal(pack_writer_add(&w, BEE_PACK_MANIFEST, "manifest", 1, 2, "[]", 2), 0);
	assert_int_equal(pack_writer_add(&w, BEE_PACK_MAP_IMAGE, "m", 2, 1, "ab", 2), 0);
	assert_int_equal(pack_writer_add(&w, BEE_PACK_SOURCE, "m", 1, 0, "", 0), -EEXIST);
	assert_string_equal(pack_writer_error(&w), "pack: section 'm': name is already taken");
	assert_int_equal(pack_writer_finish(&w, &buf, &len), -EINVAL);
	assert_string_equal(pack_writer_error(&w), "pack: section 0 'manifest': manifest is a JSON "
			    "array, not an object");
	assert_int_equal(pack_writer_add(&w, BEE_PACK_SOURCE, "s", 1, 0, "", 0), 0);
	assert_int_equal(pack_writer_finish(&w, &buf, &len), -EINVAL);
	assert_null(buf);
	pack_writer_release(&w);

	/* the section limit */
	pack_writer_init(&w);
	char name[16];
	for (int i = 0; i < BEE_PACK_MAX_SECTIONS; i++) {
		snprintf(name, sizeof(name), "m%d", i);
		assert_int_equal(pack_writer_add(&w, BEE_PACK_MAP_IMAGE, name, 1, 1, "x", 1), 0);
	}
	assert_int_equal(pack_writer_add(&w, BEE_PACK_MAP_IMAGE, "one-more", 1, 1, "x", 1), -E2BIG);
	assert_string_equal(pack_writer_error(&w), "pack: section 'one-more': more than 1024 sections");
	pack_writer_release(&w);
}

/* A pack of the most sections there may be reads back. */
static void test_max_sections(void **state)
{
	(void)state;
	struct pack_writer w;
	pack_writer_init(&w);
	char name[16];
	assert_int_equal(pack_writer_add(&w, BEE_PACK_MANIFEST, "manifest", 1, 2, "{}", 2), 0);
	assert_int_equal(pack_writer_add(&w, BEE_PACK_SOURCE, "src", 1, 0, "", 0), 0);
	for (int i = 0; i < BEE_PACK_MAX_SECTIONS - 2; i++) {
		snprintf(name, sizeof(name), "m%04d", i);
		uint8_t rec[3] = { (uint8_t)i, (uint8_t)(i >> 8), 7 };
		assert_int_equal(pack_writer_add(&w, BEE_PACK_MAP_IMAGE, name, 3, 1, rec, 3), 0);
	}
	uint8_t *buf;
	size_t len;
	assert_int_equal(pack_writer_finish(&w, &buf, &len), 0);
	pack_writer_release(&w);
	struct bee_pack *p;
	char err[256];
	assert_int_equal(bee_pack__open_mem(buf, len, &p, err, sizeof(err)), 0);
	assert_int_equal(bee_pack__section_count(p), BEE_PACK_MAX_SECTIONS);
	const struct bee_pack_section_info *s = bee_pack__find(p, BEE_PACK_MAP_IMAGE, "m1000");
	assert_non_null(s);
	assert_memory_equal(s->data, "\xe8\x03\x07", 3);
	assert_string_equal(bee_pack__section(p, BEE_PACK_MAX_SECTIONS - 1)->name, "src");
	bee_pack__close(p);
	free(buf);
}

/* ---- files ------------------------------------------------------------------ */

static void test_files(void **state)
{
	(void)state;
	char dir[] = "/tmp/test_pack.XXXXXX", path[256], err[256];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/p.pack", dir);
	uint8_t *buf;
	size_t len = write_with(test_secs, ARRAY_LEN(test_secs), &buf);

	/* written, then overwritten by a different pack */
	assert_int_equal(pack_write_file(path, "old", 3), 0);
	assert_int_equal(pack_write_file(path, buf, len), 0);
	struct bee_pack *p;
	int rc = bee_pack__open_file(path, &p, err, sizeof(err));
	if (rc)
		print_error("%s\n", err);
	assert_int_equal(rc, 0);
	size_t got_len;
	const void *got = bee_pack__bytes(p, &got_len);
	assert_int_equal(got_len, len);
	assert_memory_equal(got, buf, len);
	bee_pack__close(p);

	/* no temporary is left beside it */
	DIR *d = opendir(dir);
	struct dirent *de;
	int entries = 0;
	while ((de = readdir(d)))
		entries += de->d_name[0] != '.';
	closedir(d);
	assert_int_equal(entries, 1);

	/* a file that is cut is named as the memory reader names it */
	assert_int_equal(truncate(path, 100), 0);
	assert_int_equal(bee_pack__open_file(path, &p, err, sizeof(err)), -EINVAL);
	assert_null(p);
	assert_string_equal(err, "pack: truncated: section table needs 400 bytes at offset 64, file has 100");

	char missing[300];
	snprintf(missing, sizeof(missing), "%s/missing", dir);
	assert_int_equal(bee_pack__open_file(missing, &p, err, sizeof(err)), -ENOENT);
	char want[400];
	snprintf(want, sizeof(want), "pack: '%s': No such file or directory", missing);
	assert_string_equal(err, want);
	assert_int_equal(bee_pack__open_file(dir, &p, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "pack: '%s': not a regular file", dir);
	assert_string_equal(err, want);

	/* a directory that does not exist: the error, and nothing written */
	snprintf(missing, sizeof(missing), "%s/no/p.pack", dir);
	assert_int_equal(pack_write_file(missing, buf, len), -ENOENT);

	unlink(path);
	assert_int_equal(rmdir(dir), 0);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_round_trip, setup),
		cmocka_unit_test_setup(test_writer_matches_encoder, setup),
		cmocka_unit_test_setup(test_determinism, setup),
		cmocka_unit_test_setup(test_digest_names_content, setup),
		cmocka_unit_test_setup(test_truncation, setup),
		cmocka_unit_test_setup(test_flip_header_and_table, setup),
		cmocka_unit_test_setup(test_flip_sections_and_padding, setup),
		cmocka_unit_test_setup(test_flip_anywhere, setup),
		cmocka_unit_test_setup(test_check_written, setup),
		cmocka_unit_test_setup(test_bad_fields, setup),
		cmocka_unit_test_setup(test_bad_table_order, setup),
		cmocka_unit_test(test_bad_contents),
		cmocka_unit_test(test_good_contents),
		cmocka_unit_test(test_short_inputs),
		cmocka_unit_test(test_messages_printable),
		cmocka_unit_test(test_writer_errors),
		cmocka_unit_test(test_max_sections),
		cmocka_unit_test_setup(test_files, setup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
