/* SPDX-License-Identifier: GPL-2.0-only */
/* manifest.c: a pack verified for loading.
 *
 * The pack reader (runtime/pack.c) proves the container whole and the one
 * manifest reader (runtime/manifest.c) its manifest's keys and types; this
 * file proves that what the loader will rely on agrees with itself: one
 * image per map that names one, each image sized as its map's key and
 * value, every automaton image whole (bee_dfa_image_check), the LPM
 * entries well formed (net_eval_maps_check), and the env automaton
 * present. */
#include "internal.h"

#include "bee_dfa.h"
#include "bee_names.h"
#include "bee_net.h"
#include "net_eval.h"

#include <errno.h>
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

struct mf_ctx {
	struct bee_error *e;
	const char *path;
};

__attribute__((format(printf, 2, 3)))
static int mf_bad(struct mf_ctx *c, const char *fmt, ...)
{
	char buf[700];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return bee_fail(c->e, BEE_STAGE_PACK, -EINVAL, "'%s': manifest: %s", c->path, buf);
}

const struct bee_pack_section_info *bee_pack_image(const struct bee_pack *p, const char *name)
{
	return bee_pack__find(p, BEE_PACK_MAP_IMAGE, name);
}

/* The images: each named one present, sized as its map, well formed. */
static int mf_images(struct mf_ctx *c, const struct bee_pack *p, const struct bee_manifest *m)
{
	const struct bee_pack_section_info *n4 = NULL, *n6 = NULL;
	for (size_t i = 0; i < m->nmaps; i++) {
		const struct bee_mf_map *mp = &m->maps[i];
		if (!mp->image)
			continue;
		const struct bee_pack_section_info *s = bee_pack_image(p, mp->image);
		if (!s)
			return mf_bad(c, "map '%s': image section '%s' is missing", mp->name, mp->image);
		if (strcmp(mp->type, "array") == 0) {
			if (s->size != mp->value_size || mp->key_size != 4 || mp->max_entries != 1)
				return mf_bad(c, "map '%s': image of %llu bytes for a value of %u", mp->name,
					      (unsigned long long)s->size, mp->value_size);
			int r = bee_dfa_image_check(s->data, s->size);
			if (r)
				return mf_bad(c, "map '%s': automaton image is malformed (error %d)", mp->name, r);
		} else if (strcmp(mp->type, "lpm_trie") == 0) {
			if (s->elem_width != (uint64_t)mp->key_size + mp->value_size ||
			    s->elem_count > mp->max_entries || mp->value_size != sizeof(struct bee_net_value))
				return mf_bad(c, "map '%s': %llu records of %u bytes do not fit the map", mp->name,
					      (unsigned long long)s->elem_count, s->elem_width);
			if (mp->key_size == sizeof(struct bee_net_key4))
				n4 = s;
			else if (mp->key_size == sizeof(struct bee_net_key6))
				n6 = s;
			else
				return mf_bad(c, "map '%s': key of %u bytes", mp->name, mp->key_size);
		} else {
			return mf_bad(c, "map '%s': an image for a map of type '%s'", mp->name, mp->type);
		}
	}
	/* the LPM entries as the evaluator checks them: split the records */
	size_t k4 = sizeof(struct bee_net_key4), k6 = sizeof(struct bee_net_key6);
	size_t v = sizeof(struct bee_net_value);
	struct net_eval_maps nm = { 0 };
	nm.n4 = n4 ? n4->elem_count : 0;
	nm.n6 = n6 ? n6->elem_count : 0;
	struct bee_net_key4 *keys4 = calloc(nm.n4 + 1, k4);
	struct bee_net_key6 *keys6 = calloc(nm.n6 + 1, k6);
	struct bee_net_value *v4 = calloc(nm.n4 + 1, v), *v6 = calloc(nm.n6 + 1, v);
	int err = 0;
	if (!keys4 || !keys6 || !v4 || !v6) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < nm.n4; i++) {
		memcpy(&keys4[i], (const uint8_t *)n4->data + i * (k4 + v), k4);
		memcpy(&v4[i], (const uint8_t *)n4->data + i * (k4 + v) + k4, v);
	}
	for (size_t i = 0; i < nm.n6; i++) {
		memcpy(&keys6[i], (const uint8_t *)n6->data + i * (k6 + v), k6);
		memcpy(&v6[i], (const uint8_t *)n6->data + i * (k6 + v) + k6, v);
	}
	nm.keys4 = keys4;
	nm.values4 = v4;
	nm.keys6 = keys6;
	nm.values6 = v6;
	char msg[256];
	if (net_eval_maps_check(&nm, msg, sizeof(msg)) < 0) {
		err = mf_bad(c, "network images: %s", msg);
		goto out;
	}
	const char *envn = bee_map_name(BEE_MAP_ENV);
	const struct bee_pack_section_info *env = bee_pack_image(p, envn);
	if (!env || bee_dfa_image_check(env->data, env->size)) {
		err = mf_bad(c, "the env automaton image '%s' is missing or malformed", envn);
		goto out;
	}
	if (!bee_pack__find(p, BEE_PACK_ELF, NULL))
		err = mf_bad(c, "the pack holds no BPF object");
out:
	free(keys4);
	free(keys6);
	free(v4);
	free(v6);
	return err;
}

/* ---- the manifest's image ----------------------------------------------------------- */

struct build_id {
	uintptr_t addr;              /* an address of this code */
	uint8_t id[64];
	size_t len;                  /* 0: none found */
};

/* The GNU build id of the object (bee-load, or libbee.so) that holds
 * b->addr, from its loaded notes. */
static int build_id_of(struct dl_phdr_info *info, size_t size, void *data)
{
	struct build_id *b = data;
	bool mine = false;
	(void)size;
	for (int i = 0; i < info->dlpi_phnum && !mine; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		mine = ph->p_type == PT_LOAD && b->addr >= lo && b->addr - lo < ph->p_memsz;
	}
	if (!mine)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_NOTE)
			continue;
		const uint8_t *n = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr), *end = n + ph->p_memsz;
		while ((size_t)(end - n) >= sizeof(ElfW(Nhdr))) {
			const ElfW(Nhdr) *h = (const ElfW(Nhdr) *)n;
			size_t name = (h->n_namesz + 3u) & ~3u, desc = (h->n_descsz + 3u) & ~3u;
			if ((size_t)(end - n) - sizeof(*h) < name + desc)
				break;
			if (h->n_type == NT_GNU_BUILD_ID && h->n_namesz == 4 && memcmp(n + sizeof(*h), "GNU", 4) == 0 &&
			    h->n_descsz > 0 && h->n_descsz <= sizeof(b->id)) {
				memcpy(b->id, n + sizeof(*h) + name, h->n_descsz);
				b->len = h->n_descsz;
				return 1;
			}
			n += sizeof(*h) + name + desc;
		}
	}
	return 1;
}

int bee_manifest_image_key(const uint8_t digest[BEE_PACK_DIGEST_LEN], const uint8_t *build_id, size_t len,
			   uint8_t key[BEE_PACK_DIGEST_LEN])
{
	uint8_t buf[BEE_PACK_DIGEST_LEN + 64];
	if (!len || len > 64)
		return -ENOENT;
	memcpy(buf, digest, BEE_PACK_DIGEST_LEN);
	memcpy(buf + BEE_PACK_DIGEST_LEN, build_id, len);
	XXH128_canonical_t c;
	XXH128_canonicalFromHash(&c, XXH3_128bits(buf, BEE_PACK_DIGEST_LEN + len));
	memcpy(key, c.digest, BEE_PACK_DIGEST_LEN);
	return 0;
}

/* What an image is written and read under: the pack's digest and this
 * build of bee's code (its build id), so that no image outlives the
 * reader that wrote it (an upgrade, a rebuild: the JSON is parsed
 * again). -ENOENT when the code has no build id: no image then. */
static int image_key(const struct bee_pack *p, uint8_t key[BEE_PACK_DIGEST_LEN])
{
	static struct build_id self;
	static bool looked;
	if (!looked) {
		self.addr = (uintptr_t)&image_key;
		dl_iterate_phdr(build_id_of, &self);
		looked = true;
	}
	return bee_manifest_image_key(bee_pack__digest(p), self.id, self.len, key);
}

int bee_manifest_image_path(char *buf, size_t size, const char *state_dir, const uint8_t digest[BEE_PACK_DIGEST_LEN],
			    const uint8_t key[BEE_PACK_DIGEST_LEN])
{
	char d[BEE_PACK_DIGEST_HEX_LEN + 1], k[BEE_PACK_DIGEST_HEX_LEN + 1];
	bee_hex(digest, BEE_PACK_DIGEST_LEN, d);
	bee_hex(key, BEE_PACK_DIGEST_LEN, k);
	return snprintf(buf, size, "%s/packs/%s-%s.manifest", state_dir, d, k) >= (int)size ? -ENAMETOOLONG : 0;
}

/* The manifest from its image, when the state directory has one for this
 * digest, root's alone (the directory is proved so before the session
 * makes anything, bee_state_dir_secure): 0, or -1 for none (or one that
 * is not whole, or not this reader's: the JSON is parsed instead). */
static int image_read(const char *state_dir, const struct bee_pack *p, struct bee_manifest *m)
{
	char path[PATH_MAX];
	uint8_t key[BEE_PACK_DIGEST_LEN];
	struct stat st;
	if (image_key(p, key) < 0 ||
	    bee_manifest_image_path(path, sizeof(path), state_dir, bee_pack__digest(p), key) < 0)
		return -1;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	void *img = NULL;
	ssize_t got = -1, want = 0;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() && !(st.st_mode & 077) &&
	    st.st_size > 0 && st.st_size < (off_t)BEE_PACK_MAX_FILE && (img = malloc((size_t)st.st_size)))
		got = pread(fd, img, (size_t)(want = st.st_size), 0);
	close(fd);
	if (got <= 0 || got != want || bee_manifest_thaw(img, (size_t)got, key, m) < 0) {
		free(img);
		return -1;
	}
	return 0;
}

int bee_manifest_image_save(const char *state_dir, const struct bee_pack *p, const struct bee_manifest *m)
{
	char path[PATH_MAX];
	uint8_t key[BEE_PACK_DIGEST_LEN];
	void *img;
	size_t len;
	int err = image_key(p, key);
	if (err == -ENOENT)
		return 0;   /* no build id: no image, the JSON every time */
	if (err < 0 || (err = bee_manifest_image_path(path, sizeof(path), state_dir, bee_pack__digest(p), key)) < 0 ||
	    (err = bee_manifest_freeze(m, key, &img, &len)) < 0)
		return err;
	err = bee_write_atomic(path, img, len);
	free(img);
	return err;
}

/* The reader's failure: its message starts with "pack: " already. */
static int reader_fail(struct bee_error *e, int r, const char *err)
{
	return bee_fail(e, BEE_STAGE_PACK, r, "%s", strncmp(err, "pack: ", 6) == 0 ? err + 6 : err);
}

int bee_pack_load_at(const char *path, const char *state_dir, struct bee_pack **pack, struct bee_manifest *m,
		     bool *thawed, struct bee_error *e)
{
	char err[BEE_PACK_ERRLEN];
	struct mf_ctx c = { .e = e, .path = path };
	memset(m, 0, sizeof(*m));
	*pack = NULL;
	*thawed = false;
	int r = bee_fault(BEE_STAGE_PACK);
	if (r)
		return bee_fail(e, BEE_STAGE_PACK, r, "'%s': injected fault", path);
	if ((r = bee_pack__open_file_later(path, pack, err, sizeof(err))) < 0)
		return reader_fail(e, r, err);
	if (state_dir && image_read(state_dir, *pack, m) == 0) {
		*thawed = true;
	} else if ((r = bee_pack__manifest_parse(*pack, err, sizeof(err))) < 0) {
		reader_fail(e, r, err);
	} else {
		char why[600];
		r = bee_manifest_read(*pack, m, why, sizeof(why));
		if (r == -EINVAL)
			bee_fail(e, BEE_STAGE_PACK, r, "'%s': manifest: %s", path, why);
		else if (r == -ENOMEM)
			bee_fail(e, BEE_STAGE_PACK, r, "'%s': out of memory", path);
	}
	if (r == 0 && (r = mf_images(&c, *pack, m)) == -ENOMEM)
		bee_fail(e, BEE_STAGE_PACK, r, "'%s': out of memory", path);
	if (r < 0) {
		bee_manifest_fini(m);
		bee_pack__close(*pack);
		*pack = NULL;
	}
	return r;
}

int bee_pack_load(const char *path, struct bee_pack **pack, struct bee_manifest *m, struct bee_error *e)
{
	bool thawed;
	return bee_pack_load_at(path, NULL, pack, m, &thawed, e);
}
