/* SPDX-License-Identifier: GPL-2.0-only */
/* pack_write.c: lays sections out as a .bpfpack in canonical order. */
#include "pack_write.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "mem.h"
#include "pack.h"

#define HDR_OFF(field) offsetof(struct bee_pack_header, field)
#define SEC_OFF(field) offsetof(struct bee_pack_section, field)
#define HDR_SIZE       sizeof(struct bee_pack_header)
#define SEC_SIZE       sizeof(struct bee_pack_section)

struct pack_writer_entry {
	char name[BEE_PACK_NAME_LEN];   /* NUL-padded as on disk */
	enum bee_pack_kind kind;
	uint32_t elem_width;
	uint64_t elem_count;
	uint8_t *data;
	uint64_t size;
};

__attribute__((format(printf, 3, 4)))
static int pack_writer_fail(struct pack_writer *w, int rc, const char *fmt, ...)
{
	int n = snprintf(w->err, sizeof(w->err), "pack: ");
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(w->err + n, sizeof(w->err) - (size_t)n, fmt, ap);
	va_end(ap);
	return rc;
}

void pack_writer_init(struct pack_writer *w)
{
	memset(w, 0, sizeof(*w));
}

const char *pack_writer_error(const struct pack_writer *w)
{
	return w->err;
}

void pack_writer_release(struct pack_writer *w)
{
	for (size_t i = 0; i < w->n; i++)
		free(w->entries[i].data);
	free(w->entries);
	w->entries = NULL;
	w->n = w->cap = 0;
}

/* The same rules as the reader's, said as the compiler's caller sees them. */
static int pack_writer_check(struct pack_writer *w, enum bee_pack_kind kind, const char *name,
			     uint32_t elem_width, uint64_t elem_count, uint64_t size)
{
	const char *kind_name = bee_pack_kind_name(kind);
	if (!kind_name)
		return pack_writer_fail(w, -EINVAL, "section '%s': unknown kind %u", name, (unsigned)kind);
	size_t len = strlen(name);
	if (len == 0 || len >= BEE_PACK_NAME_LEN)
		return pack_writer_fail(w, -EINVAL, "section '%s': name must be 1 to %d bytes long",
					name, BEE_PACK_NAME_LEN - 1);
	for (size_t k = 0; k < len; k++)
		if ((unsigned char)name[k] < 0x21 || (unsigned char)name[k] > 0x7e)
			return pack_writer_fail(w, -EINVAL, "section '%s': name has byte 0x%02x, which "
						"is not printable ASCII", name, (unsigned char)name[k]);
	uint64_t product;
	switch (kind) {
	case BEE_PACK_MANIFEST:
	case BEE_PACK_ELF:
	case BEE_PACK_SOURCE:
		if (elem_width != 1 || elem_count != size)
			return pack_writer_fail(w, -EINVAL, "section '%s': a %s section has element "
						"width 1 and count equal to its size", name, kind_name);
		break;
	case BEE_PACK_MAP_IMAGE:
		if (elem_width == 0 || elem_count > UINT32_MAX ||
		    __builtin_mul_overflow((uint64_t)elem_width, elem_count, &product) || product != size)
			return pack_writer_fail(w, -EINVAL, "section '%s': element width %u * element "
						"count %llu is not the size %llu (or out of range)", name,
						elem_width, (unsigned long long)elem_count,
						(unsigned long long)size);
		break;
	}
	if (size > BEE_PACK_MAX_FILE)
		return pack_writer_fail(w, -E2BIG, "section '%s': %llu bytes is more than a pack holds",
					name, (unsigned long long)size);
	for (size_t i = 0; i < w->n; i++)
		if (!strcmp(w->entries[i].name, name))
			return pack_writer_fail(w, -EEXIST, "section '%s': name is already taken", name);
	if (w->n >= BEE_PACK_MAX_SECTIONS)
		return pack_writer_fail(w, -E2BIG, "section '%s': more than %d sections", name,
					BEE_PACK_MAX_SECTIONS);
	return 0;
}

int pack_writer_add(struct pack_writer *w, enum bee_pack_kind kind, const char *name,
		    uint32_t elem_width, uint64_t elem_count, const void *data, uint64_t size)
{
	int rc = pack_writer_check(w, kind, name, elem_width, elem_count, size);
	if (rc)
		return rc;
	struct pack_writer_entry *e = VEC_PUSH(w->entries, w->n, w->cap);
	memset(e, 0, sizeof(*e));
	strcpy(e->name, name);
	e->kind = kind;
	e->elem_width = elem_width;
	e->elem_count = elem_count;
	e->size = size;
	e->data = xmalloc((size_t)size);
	if (size)
		memcpy(e->data, data, (size_t)size);
	return 0;
}

/* Canonical order: kind, then name (names are unique, so this is total). */
static int pack_writer_entry_cmp(const void *a, const void *b)
{
	const struct pack_writer_entry *x = a, *y = b;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return strcmp(x->name, y->name);
}

static uint64_t pack_writer_align(uint64_t v)
{
	return (v + BEE_PACK_ALIGN - 1) & ~(uint64_t)(BEE_PACK_ALIGN - 1);
}

int pack_writer_finish(struct pack_writer *w, uint8_t **buf, size_t *len)
{
	*buf = NULL;
	*len = 0;
	w->err[0] = '\0';
	if (w->n < BEE_PACK_MIN_SECTIONS)
		return pack_writer_fail(w, -EINVAL, "%zu sections: a pack holds at least a manifest "
					"and a source", w->n);
	qsort(w->entries, w->n, sizeof(*w->entries), pack_writer_entry_cmp);

	/* every size is at most BEE_PACK_MAX_FILE, so the sum of a few cannot wrap */
	uint64_t end = HDR_SIZE + (uint64_t)w->n * SEC_SIZE;
	for (size_t i = 0; i < w->n; i++) {
		end = pack_writer_align(end) + w->entries[i].size;
		if (end > BEE_PACK_MAX_FILE)
			return pack_writer_fail(w, -E2BIG, "the sections need more than %llu bytes",
						(unsigned long long)BEE_PACK_MAX_FILE);
	}
	uint64_t file_size = pack_writer_align(end);
	if (file_size > BEE_PACK_MAX_FILE)
		return pack_writer_fail(w, -E2BIG, "the sections need more than %llu bytes",
					(unsigned long long)BEE_PACK_MAX_FILE);

	/* zeroed, so padding, reserved fields and name padding are zero */
	uint8_t *out = xcalloc(1, (size_t)file_size);
	memcpy(out, BEE_PACK_MAGIC, BEE_PACK_MAGIC_LEN);
	bee_pack_put16(out + HDR_OFF(version), BEE_PACK_VERSION);
	bee_pack_put16(out + HDR_OFF(header_size), HDR_SIZE);
	bee_pack_put32(out + HDR_OFF(flags), 0);
	bee_pack_put32(out + HDR_OFF(section_count), (uint32_t)w->n);
	bee_pack_put32(out + HDR_OFF(section_entry_size), SEC_SIZE);
	bee_pack_put64(out + HDR_OFF(file_size), file_size);
	bee_pack_put64(out + HDR_OFF(table_offset), HDR_SIZE);

	uint64_t offset = HDR_SIZE + (uint64_t)w->n * SEC_SIZE;
	for (size_t i = 0; i < w->n; i++) {
		const struct pack_writer_entry *e = &w->entries[i];
		uint8_t *t = out + HDR_SIZE + i * SEC_SIZE;
		offset = pack_writer_align(offset);
		memcpy(t + SEC_OFF(name), e->name, BEE_PACK_NAME_LEN);
		bee_pack_put32(t + SEC_OFF(kind), e->kind);
		bee_pack_put32(t + SEC_OFF(elem_width), e->elem_width);
		bee_pack_put64(t + SEC_OFF(elem_count), e->elem_count);
		bee_pack_put64(t + SEC_OFF(offset), offset);
		bee_pack_put64(t + SEC_OFF(size), e->size);
		bee_pack_put64(t + SEC_OFF(checksum), XXH3_64bits(e->data, (size_t)e->size));
		if (e->size)
			memcpy(out + offset, e->data, (size_t)e->size);
		offset += e->size;
	}

	/* every byte except the digest field itself */
	XXH3_state_t *st = XXH3_createState();
	if (!st) {
		free(out);
		return pack_writer_fail(w, -ENOMEM, "out of memory");
	}
	size_t skip = HDR_OFF(digest) + BEE_PACK_DIGEST_LEN;
	XXH3_128bits_reset(st);
	XXH3_128bits_update(st, out, HDR_OFF(digest));
	XXH3_128bits_update(st, out + skip, (size_t)file_size - skip);
	XXH128_canonical_t digest;
	XXH128_canonicalFromHash(&digest, XXH3_128bits_digest(st));
	XXH3_freeState(st);
	memcpy(out + HDR_OFF(digest), digest.digest, BEE_PACK_DIGEST_LEN);

	/* what the reader rejects never leaves the writer (kind counts, sizes,
	 * checksums, the ELF, the manifest JSON, ...); a manifest jansson
	 * printed from a document is JSON it reads back, not parsed again */
	int rc;
	if (w->manifest_printed) {
		rc = bee_pack__check_written(out, (size_t)file_size, w->err, sizeof(w->err));
	} else {
		struct bee_pack *check;
		rc = bee_pack__open_mem(out, (size_t)file_size, &check, w->err, sizeof(w->err));
		bee_pack__close(check);
	}
	if (rc) {
		free(out);
		return rc;
	}
	*buf = out;
	*len = (size_t)file_size;
	return 0;
}

/* ---- files ----------------------------------------------------------------
 *
 * The rules of an output path (docs/limits.md, "Inputs and outputs of beec"):
 *   - a missing file is created 0666 & ~umask, like any compiler's output;
 *   - an existing regular file is replaced by rename(2) from a temporary
 *     beside it, keeping its permission bits (not set-id bits) and, when
 *     root writes, its owner;
 *   - a symbolic link is followed to the file it names (the link stays);
 *     a dangling one is an error (ENOENT);
 *   - a character device (/dev/null, /dev/full) or a FIFO with a reader is
 *     written in place, never replaced: renaming over a device node as root
 *     would destroy it; a FIFO without a reader is refused (ENXIO), not
 *     waited on;
 *   - a directory is refused (EISDIR), a block device or a socket too
 *     (ENOTSUP): a pack is never written onto a disk.
 */

static int pack_write_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t got = write(fd, p, n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return -errno;
		if (got == 0)
			return -ENOSPC;
		p += got;
		n -= (size_t)got;
	}
	return 0;
}

/* A device or FIFO: written where it is, with the same checks on every write. */
static int pack_write_in_place(const char *path, bool fifo, const void *buf, size_t len)
{
	/* O_NONBLOCK: a FIFO nobody reads says ENXIO at once instead of blocking */
	int fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC | (fifo ? O_NONBLOCK : 0));
	if (fd < 0)
		return -errno;
	int rc = 0;
	if (fifo) {
		int fl = fcntl(fd, F_GETFL);
		if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0)
			rc = -errno;
	}
	if (!rc)
		rc = pack_write_all(fd, buf, len);
	if (close(fd) < 0 && !rc)
		rc = -errno;
	return rc;
}

/* fsync the directory dir, so that the rename itself is durable. */
static int pack_write_sync_dir(const char *dir)
{
	int rc = 0;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fsync(fd) < 0)
		rc = -errno;
	if (fd >= 0)
		close(fd);
	return rc;
}

int pack_write_file(const char *path, const void *buf, size_t len)
{
	static unsigned counter;
	char target[PATH_MAX], dir[PATH_MAX], tmp[PATH_MAX];
	struct stat st;
	bool exists = true;

	if (snprintf(target, sizeof(target), "%s", path) >= (int)sizeof(target))
		return -ENAMETOOLONG;
	if (lstat(target, &st) < 0) {
		if (errno != ENOENT)
			return -errno;
		exists = false;
	} else if (S_ISLNK(st.st_mode)) {
		/* the file the link names is replaced, the link stays */
		if (!realpath(path, target) || stat(target, &st) < 0)
			return -errno;
	}
	if (exists) {
		if (S_ISDIR(st.st_mode))
			return -EISDIR;
		if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))
			return pack_write_in_place(target, S_ISFIFO(st.st_mode), buf, len);
		if (!S_ISREG(st.st_mode))
			return -ENOTSUP;
	}

	/* the temporary goes beside the target: rename(2) stays in one file system */
	const char *slash = strrchr(target, '/');
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else
		snprintf(dir, sizeof(dir), "%.*s", slash == target ? 1 : (int)(slash - target), target);

	/* O_EXCL: never write through a name someone else made */
	int fd = -1, rc;
	for (int tries = 0; tries < 100 && fd < 0; tries++) {
		if (snprintf(tmp, sizeof(tmp), "%s.tmp.%ld.%u", target, (long)getpid(),
			     __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED)) >= (int)sizeof(tmp))
			return -ENAMETOOLONG;
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY, 0666);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0)
		return -errno;
	rc = 0;
	if (exists) {
		/* the replaced file keeps its permissions and, when root writes it,
		 * its owner; the owner is best effort (a file system without owners) */
		if (geteuid() == 0 && (st.st_uid != 0 || st.st_gid != 0) && fchown(fd, st.st_uid, st.st_gid) < 0)
			errno = 0;
		if (fchmod(fd, st.st_mode & 0777) < 0)
			rc = -errno;
	}
	if (!rc)
		rc = pack_write_all(fd, buf, len);
	/* a delayed allocation reports a full disk here, not at write(2) */
	if (!rc && fsync(fd) < 0)
		rc = -errno;
	if (close(fd) < 0 && !rc)
		rc = -errno;
	if (!rc && rename(tmp, target) < 0)
		rc = -errno;
	if (rc) {
		unlink(tmp);
		return rc;
	}
	return pack_write_sync_dir(dir);
}
