/* SPDX-License-Identifier: GPL-2.0-only */
/* repack.h: a pack written again with its manifest edited, every other
 * section as it was, for the tests of what bee-load refuses in a
 * manifest. Include after cmocka.h. */
#ifndef BEE_TESTS_REPACK_H
#define BEE_TESTS_REPACK_H

#include "internal.h"
#include "pack_write.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

/* The pack at path again, as out, with its manifest as edit(m, ctx) left
 * it (edit NULL: unchanged). */
static inline void test_repack(const char *path, const char *out, void (*edit)(json_t *m, void *ctx), void *ctx)
{
	struct bee_pack *p;
	char msg[256];
	assert_int_equal(bee_pack__open_file(path, &p, msg, sizeof(msg)), 0);
	json_t *m = json_deep_copy(bee_pack__manifest(p));
	if (edit)
		edit(m, ctx);
	char *text = json_dumps(m, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	struct pack_writer w;
	pack_writer_init(&w);
	for (uint32_t i = 0; i < bee_pack__section_count(p); i++) {
		const struct bee_pack_section_info *s = bee_pack__section(p, i);
		if (s->kind == BEE_PACK_MANIFEST)
			assert_int_equal(pack_writer_add(&w, s->kind, s->name, 1, strlen(text), text, strlen(text)), 0);
		else
			assert_int_equal(pack_writer_add(&w, s->kind, s->name, s->elem_width, s->elem_count, s->data,
							 s->size), 0);
	}
	uint8_t *buf;
	size_t len;
	assert_int_equal(pack_writer_finish(&w, &buf, &len), 0);
	assert_int_equal(bee_write_atomic(out, (const char *)buf, len), 0);
	free(buf);
	free(text);
	json_decref(m);
	pack_writer_release(&w);
	bee_pack__close(p);
}

#endif
