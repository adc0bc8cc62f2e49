/* SPDX-License-Identifier: GPL-2.0-only */
/* test_manifest: the one manifest reader (runtime/manifest.h), table driven:
 *
 *   - a whole manifest gives every field its readers use
 *   - each top-level key changed or removed gives the message naming it
 *     (or is accepted where the key is optional)
 *   - a pack's manifest, read through bee_manifest_read, and through
 *     bee_pack__open_file_later and bee_pack__manifest_parse
 *   - the manifest's image: frozen and thawed, every field is back (the
 *     JSON gone meanwhile); one of another digest, cut short, with any
 *     byte changed, or well summed but walking out of itself is refused
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "bee_names.h"
#include "manifest.h"
#include "pack.h"
#include "pack_write.h"

/* Written by hand as beec writes one, so that the reader is tested against
 * the format and not against itself. */
static const char base_text[] =
	"{\"format\": \"bee-pack-manifest\", \"schema\": 1, \"name\": \"t\", \"parent\": null,"
	" \"audit\": \"all\", \"syscalls\": [\"bpf\", \"mount\"], \"source\": \"policy.toml\","
	" \"source_name\": \"t.toml\", \"defines\": [\"HOME=/h\"],"
	" \"compiler\": {\"beec\": \"0.1.0\"},"
	" \"hooks\": [{\"program\": \"bee_file_open\", \"section\": \"lsm_cgroup/file_open\","
	" \"attach\": \"lsm_cgroup\", \"lsm\": true}],"
	" \"maps\": [{\"name\": \"bee_fs\", \"type\": \"array\", \"key_size\": 4, \"value_size\": 96,"
	" \"max_entries\": 1, \"flags\": 128, \"fill\": \"image\", \"image\": \"bee_fs\"},"
	" {\"name\": \"bee_audit\", \"type\": \"ringbuf\", \"key_size\": 0, \"value_size\": 0,"
	" \"max_entries\": 4096, \"flags\": 0, \"fill\": \"audit\", \"image\": null}],"
	" \"constants\": {\"bee_flags\": 3},"
	" \"rules\": [{\"index\": 0, \"domain\": \"fs\", \"kind\": \"read\", \"text\": \"/a/**\","
	" \"line\": 4, \"column\": 9},"
	" {\"index\": 1, \"domain\": \"env\", \"kind\": \"set\", \"text\": \"X\", \"value\": \"1\","
	" \"line\": 6, \"column\": 1}],"
	" \"automata\": {\"fs\": {\"states\": 5, \"classes\": 3, \"transitions\": 9, \"image_bytes\": 96}},"
	" \"landlock\": {\"expressible\": true, \"rules\": [{\"path\": \"/a\", \"beneath\": true,"
	" \"access\": [\"read\", \"execute\"], \"rule\": 0}]},"
	" \"net_provenance\": [[0]]}";

static json_t *base(void)
{
	json_error_t je;
	json_t *j = json_loads(base_text, 0, &je);
	if (!j)
		fail_msg("base manifest: %s", je.text);
	return j;
}

/* Every field of the base manifest; net_prov where the reader has it. */
static void check_whole(const struct bee_manifest *mp, bool net_prov)
{
	struct bee_manifest m = *mp;
	assert_string_equal(m.name, "t");
	assert_int_equal(m.schema, 1);
	assert_null(m.parent);
	assert_int_equal(m.audit, 1);
	assert_int_equal(m.ndefines, 1);
	assert_string_equal(m.defines[0], "HOME=/h");
	assert_string_equal(m.source, BEE_SEC_SOURCE);
	assert_string_equal(m.source_name, "t.toml");
	assert_string_equal(m.compiler_beec, "0.1.0");
	assert_int_equal(m.nhooks, 1);
	assert_true(m.hooks[0].lsm);
	assert_non_null(bee_manifest_hook(&m, "bee_file_open"));
	assert_null(bee_manifest_hook(&m, "bee_nothing"));
	assert_int_equal(m.nmaps, 2);
	const struct bee_mf_map *fs = bee_manifest_map(&m, bee_map_name(BEE_MAP_FS));
	assert_non_null(fs);
	assert_int_equal(fs->value_size, 96);
	assert_int_equal(fs->flags, 128);
	assert_string_equal(fs->image, "bee_fs");
	assert_null(bee_manifest_map(&m, bee_map_name(BEE_MAP_AUDIT))->image);
	assert_int_equal(m.nconsts, 1);
	assert_int_equal(m.consts[0].value, 3);
	assert_int_equal(m.nrules, 2);
	assert_int_equal(m.rules[0].line, 4);
	assert_string_equal(m.rules[1].value, "1");
	assert_int_equal(m.rules[0].rkind, BEE_RULE_FS_READ);
	assert_int_equal(m.rules[0].rdomain, BEE_DOMAIN_FS);
	assert_int_equal(m.rules[1].rkind, BEE_RULE_ENV_SET);
	char text[64];
	bee_rule_format(&m.rules[1], text, sizeof(text));
	assert_string_equal(text, "env.set X=\"1\"");
	assert_string_equal(m.automata[0].key, "fs");
	assert_int_equal(m.automata[0].transitions, 9);
	assert_int_equal(m.automata[1].states, 0);   /* not given */
	assert_true(m.ll_expressible);
	assert_int_equal(m.nll, 1);
	assert_int_equal(m.ll_rules[0].perms, BEE_PERM_READ | BEE_PERM_EXEC);
	assert_string_equal(m.ll_rules[0].path, "/a");
	assert_true(m.ll_rules[0].beneath);
	assert_int_equal(__builtin_popcount(m.syscalls_allowed), 2);
	assert_string_equal(m.consts[0].name, "bee_flags");
	assert_string_equal(m.hooks[0].section, "lsm_cgroup/file_open");
	assert_int_equal(m.nincludes, 0);
	if (net_prov)
		assert_int_equal(json_array_size(m.net_prov), 1);
	else
		assert_null(m.net_prov);
}

static void test_whole(void **state)
{
	(void)state;
	json_t *j = base();
	struct bee_manifest m;
	char err[600];
	assert_int_equal(bee_manifest_parse(j, &m, err, sizeof(err)), 0);
	check_whole(&m, true);
	bee_manifest_fini(&m);
	json_decref(j);
}

/* A copy of len bytes of img, its header's length and sum made anew over
 * the body (so that only the walk can refuse it). */
static void *resummed(const void *img, size_t len)
{
	uint8_t *c = malloc(len);
	assert_non_null(c);
	memcpy(c, img, len);
	uint64_t body = len - 48, sum = XXH3_64bits(c + 48, body);
	memcpy(c + 32, &body, 8);
	memcpy(c + 40, &sum, 8);
	return c;
}

static void test_image(void **state)
{
	(void)state;
	static const uint8_t digest[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
	uint8_t other[16];
	memcpy(other, digest, sizeof(other));
	other[15] ^= 1;
	json_t *j = base();
	struct bee_manifest m, t;
	char err[600];
	void *img;
	size_t len;
	assert_int_equal(bee_manifest_parse(j, &m, err, sizeof(err)), 0);
	assert_int_equal(bee_manifest_freeze(&m, digest, &img, &len), 0);
	bee_manifest_fini(&m);
	json_decref(j);   /* the thawed strings are the image's own */

	/* refused, the image still the caller's: another digest, every
	 * length short of the whole, every byte changed */
	assert_int_equal(bee_manifest_thaw(img, len, other, &t), -EINVAL);
	for (size_t n = 0; n < len; n++)
		if (bee_manifest_thaw(img, n, digest, &t) != -EINVAL)
			fail_msg("an image cut to %zu of %zu bytes was read", n, len);
	for (size_t i = 0; i < len; i++) {
		((uint8_t *)img)[i] ^= 0x40;
		if (bee_manifest_thaw(img, len, digest, &t) != -EINVAL)
			fail_msg("an image with byte %zu of %zu changed was read", i, len);
		((uint8_t *)img)[i] ^= 0x40;
	}
	/* the sum made anew: the walk refuses a body cut short, one with a
	 * byte more, and an array count past the end (nothing allocated) */
	void *c = resummed(img, len - 1);
	assert_int_equal(bee_manifest_thaw(c, len - 1, digest, &t), -EINVAL);
	free(c);
	uint8_t *longer = malloc(len + 1);
	assert_non_null(longer);
	memcpy(longer, img, len);
	longer[len] = 0;
	c = resummed(longer, len + 1);
	assert_int_equal(bee_manifest_thaw(c, len + 1, digest, &t), -EINVAL);
	free(c);
	free(longer);
	c = resummed(img, len);
	/* after the header (48 bytes) the manifest's own fields: name "t"
	 * (length and bytes, 6), schema (4), parent (none, 4), audit (4),
	 * source "policy.toml" (16), source_name "t.toml" (11), compiler
	 * "0.1.0" (10), expressible (4), reason (none, 4), rule (8),
	 * syscalls (4); then the includes' count (0) and the defines' (1) */
	size_t counts = 48 + 6 + 4 + 4 + 4 + 16 + 11 + 10 + 4 + 4 + 8 + 4;
	uint64_t huge = UINT64_MAX / 2, have[2];
	memcpy(have, (uint8_t *)c + counts, sizeof(have));
	assert_int_equal(have[0], 0);
	assert_int_equal(have[1], 1);
	memcpy((uint8_t *)c + counts, &huge, 8);
	void *cs = resummed(c, len);
	assert_int_equal(bee_manifest_thaw(cs, len, digest, &t), -EINVAL);
	free(cs);
	free(c);

	/* and read: every field back */
	assert_int_equal(bee_manifest_thaw(img, len, digest, &t), 0);
	check_whole(&t, false);
	bee_manifest_fini(&t);   /* frees img */

	/* the same bytes from the same manifest */
	j = base();
	void *again;
	size_t alen;
	assert_int_equal(bee_manifest_parse(j, &m, err, sizeof(err)), 0);
	assert_int_equal(bee_manifest_freeze(&m, digest, &img, &len), 0);
	assert_int_equal(bee_manifest_thaw(img, len, digest, &t), 0);
	assert_int_equal(bee_manifest_freeze(&t, digest, &again, &alen), 0);
	assert_int_equal(alen, len);
	assert_memory_equal(again, t.image, len);
	free(again);
	bee_manifest_fini(&t);
	bee_manifest_fini(&m);
	json_decref(j);
}

static void test_keys(void **state)
{
	(void)state;
	static const struct {
		const char *key;
		const char *value;          /* JSON text; NULL: the key removed */
		const char *want;           /* the message; NULL: accepted */
	} rows[] = {
		{ BEE_MF_FORMAT, "\"other\"", "'format' is not 'bee-pack-manifest'" },
		{ BEE_MF_FORMAT, NULL, "'format' is not 'bee-pack-manifest'" },
		{ BEE_MF_SCHEMA, "2", "'schema' is not 1 (this loader reads 1)" },
		{ BEE_MF_NAME, NULL, "'name', 'source' or 'audit' is missing or unknown" },
		{ BEE_MF_AUDIT, "\"some\"", "'name', 'source' or 'audit' is missing or unknown" },
		{ BEE_MF_DEFINES, "[\"X\"]", "define 0 is not NAME=VALUE" },
		{ BEE_MF_DEFINES, "{}", "'defines' is not an array" },
		{ BEE_MF_HOOKS, "[{\"program\": \"p\"}]", "hook 0 lacks program, section, attach or lsm" },
		{ BEE_MF_MAPS, "[{\"name\": \"bee_fs\", \"type\": \"array\", \"fill\": \"image\"}]",
		  "map 0 lacks name, type, fill, a size or flags" },
		{ BEE_MF_MAPS, "[{\"name\": \"m\", \"type\": \"array\", \"fill\": \"image\", \"key_size\": 4,"
			       " \"value_size\": 4, \"max_entries\": 1, \"flags\": 0, \"image\": 7}]",
		  "map 'm': 'image' is neither a name nor null" },
		{ BEE_MF_CONSTANTS, NULL, NULL },
		{ BEE_MF_CONSTANTS, "{\"c\": -1}", "constant 'c' is not a 32-bit unsigned integer" },
		{ BEE_MF_RULES, "[{\"index\": 1, \"domain\": \"fs\", \"kind\": \"read\", \"text\": \"/\"}]",
		  "rule 0 lacks index, domain, kind or text" },
		{ BEE_MF_RULES, "[{\"index\": 0, \"domain\": \"env\", \"kind\": \"set\", \"text\": \"X\"}]",
		  "rule 0: env.set without a value" },
		{ BEE_MF_RULES, "[{\"index\": 0, \"domain\": \"fs\", \"kind\": \"bind\", \"text\": \"/\"}]",
		  "rule 0: 'fs.bind' is not a rule this reader knows" },
		{ BEE_MF_LANDLOCK, "{}", "'landlock' lacks 'expressible'" },
		{ BEE_MF_LANDLOCK, "{\"expressible\": false}", "'landlock' is not expressible and gives no reason" },
		{ BEE_MF_LANDLOCK, "{\"expressible\": true, \"rules\": [{\"path\": \"/a\", \"beneath\": true,"
				   " \"access\": [\"fly\"], \"rule\": 0}]}",
		  "landlock rule 0: unknown access 'fly'" },
		{ BEE_MF_SYSCALLS, NULL, NULL },
		{ BEE_MF_SYSCALLS, "[\"teleport\"]", "syscalls 0: 'teleport' is not a system call group this loader knows" },
		{ BEE_MF_SYSCALLS, "[\"bpf\", \"bpf\"]", "syscalls 1: 'bpf' is listed twice" },
		{ BEE_MF_NET_PROVENANCE, NULL, "'net_provenance' is not an array" },
		{ BEE_MF_AUTOMATA, NULL, NULL },
		{ BEE_MF_COMPILER, NULL, NULL },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		json_t *j = base();
		if (rows[i].value) {
			json_error_t je;
			json_t *v = json_loads(rows[i].value, JSON_DECODE_ANY, &je);
			assert_non_null(v);
			json_object_set_new(j, rows[i].key, v);
		} else {
			json_object_del(j, rows[i].key);
		}
		struct bee_manifest m;
		char err[600];
		int rc = bee_manifest_parse(j, &m, err, sizeof(err));
		if (!rows[i].want && rc != 0)
			fail_msg("row %zu ('%s'): refused: %s", i, rows[i].key, err);
		if (rows[i].want && (rc != -EINVAL || strcmp(err, rows[i].want) != 0))
			fail_msg("row %zu ('%s'): %d '%s', want '%s'", i, rows[i].key, rc, err, rows[i].want);
		bee_manifest_fini(&m);
		json_decref(j);
	}
}

/* The manifest section of a pack, through the pack reader. */
static void test_read_pack(void **state)
{
	(void)state;
	struct pack_writer w;
	uint8_t *buf;
	size_t len;
	char err[BEE_PACK_ERRLEN];
	pack_writer_init(&w);
	pack_writer_add(&w, BEE_PACK_MANIFEST, BEE_SEC_MANIFEST, 1, strlen(base_text), base_text, strlen(base_text));
	pack_writer_add(&w, BEE_PACK_SOURCE, BEE_SEC_SOURCE, 1, 12, "version = 1\n", 12);
	assert_int_equal(pack_writer_finish(&w, &buf, &len), 0);
	pack_writer_release(&w);
	struct bee_pack *pack;
	assert_int_equal(bee_pack__open_mem(buf, len, &pack, err, sizeof(err)), 0);
	struct bee_manifest m;
	assert_int_equal(bee_manifest_read(pack, &m, err, sizeof(err)), 0);
	assert_string_equal(m.name, "t");
	bee_manifest_fini(&m);
	bee_pack__close(pack);
	free(buf);
}

/* A pack file of the manifest text (and a source), written in a temporary
 * file whose path is returned (malloc'ed). */
static char *pack_file(const char *text)
{
	struct pack_writer w;
	uint8_t *buf;
	size_t len;
	pack_writer_init(&w);
	pack_writer_add(&w, BEE_PACK_MANIFEST, BEE_SEC_MANIFEST, 1, strlen(text), text, strlen(text));
	pack_writer_add(&w, BEE_PACK_SOURCE, BEE_SEC_SOURCE, 1, 12, "version = 1\n", 12);
	if (pack_writer_finish(&w, &buf, &len) != 0)
		fail_msg("pack: %s", w.err);
	pack_writer_release(&w);
	char *path = strdup("/tmp/test_manifest.XXXXXX");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	close(fd);
	free(buf);
	return path;
}

/* Opened with the parse put off: no manifest until it is asked for, then
 * the one an eager open gives (test_pack: JSON that is not, the same
 * message). */
static void test_open_later(void **state)
{
	(void)state;
	char err[BEE_PACK_ERRLEN];
	char *path = pack_file(base_text);
	struct bee_pack *pack;
	struct bee_manifest m;
	assert_int_equal(bee_pack__open_file_later(path, &pack, err, sizeof(err)), 0);
	assert_null(bee_pack__manifest(pack));
	assert_int_equal(bee_pack__manifest_parse(pack, err, sizeof(err)), 0);
	assert_non_null(bee_pack__manifest(pack));
	assert_int_equal(bee_pack__manifest_parse(pack, err, sizeof(err)), 0);   /* once is enough */
	assert_int_equal(bee_manifest_read(pack, &m, err, sizeof(err)), 0);
	check_whole(&m, true);
	bee_manifest_fini(&m);
	bee_pack__close(pack);
	unlink(path);
	free(path);

}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_whole),
		cmocka_unit_test(test_keys),
		cmocka_unit_test(test_read_pack),
		cmocka_unit_test(test_open_later),
		cmocka_unit_test(test_image),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
