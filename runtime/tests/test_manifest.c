/* SPDX-License-Identifier: GPL-2.0-only */
/* test_manifest: the one manifest reader (runtime/manifest.h), table driven:
 *
 *   - a whole manifest gives every field its readers use
 *   - each top-level key changed or removed gives the message naming it
 *     (or is accepted where the key is optional)
 *   - a pack's manifest, read through bee_manifest_read
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

static void test_whole(void **state)
{
	(void)state;
	json_t *j = base();
	struct bee_manifest m;
	char err[600];
	assert_int_equal(bee_manifest_parse(j, &m, err, sizeof(err)), 0);
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
	assert_int_equal(__builtin_popcount(m.syscalls_allowed), 2);
	assert_int_equal(json_array_size(m.net_prov), 1);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_whole),
		cmocka_unit_test(test_keys),
		cmocka_unit_test(test_read_pack),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
