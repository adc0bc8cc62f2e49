/* SPDX-License-Identifier: GPL-2.0-only */
/* pack_write.h: builds a .bpfpack (runtime/pack_format.h) from sections.
 *
 *   struct pack_writer w;
 *   pack_writer_init(&w);
 *   pack_writer_add(&w, BEE_PACK_MANIFEST, BEE_SEC_MANIFEST, 1, len, json, len);
 *   ...
 *   if (pack_writer_finish(&w, &buf, &len) < 0)
 *           report(pack_writer_error(&w));
 *   pack_writer_release(&w);
 *   pack_write_file(path, buf, len);
 *   free(buf);
 *
 * The bytes depend only on the set of sections, never on the order in which
 * they were added. finish checks its output with the pack reader, so a pack
 * it returns is one that bee_pack__open_mem accepts.
 */
#ifndef BEE_PACK_WRITE_H
#define BEE_PACK_WRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pack_format.h"

struct pack_writer_entry;

struct pack_writer {
	struct pack_writer_entry *entries;
	size_t n, cap;
	char err[256];   /* the last failure's message, "pack: ..." */
	/* the manifest is jansson's print of a document (pack_build): the
	 * check of the finished pack does not parse its JSON again */
	bool manifest_printed;
};

void pack_writer_init(struct pack_writer *w);

/* Adds a section; the writer copies name and data. Returns 0, or -EINVAL
 * (bad kind, name, or element width and count that are not size), -EEXIST
 * (the name is taken) or -E2BIG (too many sections), with a message in
 * pack_writer_error. */
int pack_writer_add(struct pack_writer *w, enum bee_pack_kind kind, const char *name,
		    uint32_t elem_width, uint64_t elem_count, const void *data, uint64_t size);

/* Lays out the pack: *buf (malloc'ed, the caller frees it) holds *len bytes.
 * Returns 0, or a negative errno with a message (a missing manifest or
 * source, a manifest that is not a JSON object, ...); the writer keeps its
 * sections either way, so finish may be called again. */
int pack_writer_finish(struct pack_writer *w, uint8_t **buf, size_t *len);

const char *pack_writer_error(const struct pack_writer *w);

/* Frees the sections; init again to reuse the writer. */
void pack_writer_release(struct pack_writer *w);

/* Writes buf to path so that a reader never sees half of it and an error
 * leaves path as it was: a regular file is written as a new file in the
 * same directory, fsync'ed and renamed over path, then the directory
 * fsync'ed; no temporary is left on failure. A symbolic link is followed;
 * a character device or a FIFO with a reader is written in place, never
 * replaced (pack_write.c has the rules). Returns 0 or a negative errno:
 * -EISDIR a directory, -ENXIO a FIFO nobody reads, -ENOTSUP a block device
 * or socket, -ENOSPC a full disk, or what open/write/fsync/rename said. */
int pack_write_file(const char *path, const void *buf, size_t len);

#endif
