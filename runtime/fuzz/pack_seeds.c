/* SPDX-License-Identifier: GPL-2.0-only */
/* pack_seeds.c: writes a few valid packs into a directory, the seeds of
 * the pack fuzzer's corpus (tools/fuzz pack seed). Usage: pack_seeds DIR */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bee_names.h"
#include "pack_write.h"

/* The smallest header libbpf would look at: 64-bit, little-endian, EM_BPF. */
static const unsigned char seed_elf[64] = {
	0x7f, 'E', 'L', 'F', 2, 1, 1, 0, [16] = 1, 0, 247, 0, 1, [52] = 64, 0, [58] = 64, 0,
};

static const char seed_manifest[] =
	"{\"name\":\"cargo-test\",\"hooks\":[\"file_open\",\"socket_connect\"],"
	"\"maps\":[{\"name\":\"fs_dfa\",\"key_size\":4,\"value_size\":12},"
	"{\"name\":\"net4\",\"key_size\":8,\"value_size\":4}],"
	"\"landlock\":{\"expressible\":false,\"why\":\"glob '**/*.pem'\"}}";

static const char seed_source[] =
	"version = 1\nname = \"cargo-test\"\n[fs]\nread = [\"/usr/**\"]\ndeny = [\"**/*.pem\"]\n";

static int seed_write(const char *dir, const char *file, struct pack_writer *w)
{
	unsigned char *buf;
	size_t len;
	if (pack_writer_finish(w, &buf, &len) < 0) {
		fprintf(stderr, "pack_seeds: %s: %s\n", file, pack_writer_error(w));
		return -1;
	}
	pack_writer_release(w);
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	int rc = pack_write_file(path, buf, len);
	free(buf);
	if (rc < 0) {
		fprintf(stderr, "pack_seeds: %s: %s\n", path, strerror(-rc));
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct pack_writer w;
	unsigned char map_a[3 * 16], map_b[5 * 12];
	int bad = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: pack_seeds DIR\n");
		return 2;
	}
	for (size_t i = 0; i < sizeof(map_a); i++)
		map_a[i] = (unsigned char)(i * 7 + 1);
	for (size_t i = 0; i < sizeof(map_b); i++)
		map_b[i] = (unsigned char)(255 - i);

	/* the least a pack holds */
	pack_writer_init(&w);
	pack_writer_add(&w, BEE_PACK_MANIFEST, BEE_SEC_MANIFEST, 1, 2, "{}", 2);
	pack_writer_add(&w, BEE_PACK_SOURCE, BEE_SEC_SOURCE, 1, 12, "version = 1\n", 12);
	bad |= seed_write(argv[1], "seed-minimal", &w);

	/* every kind, odd sizes so that there is padding between sections */
	pack_writer_init(&w);
	pack_writer_add(&w, BEE_PACK_SOURCE, BEE_SEC_SOURCE, 1, strlen(seed_source), seed_source,
			strlen(seed_source));
	pack_writer_add(&w, BEE_PACK_MAP_IMAGE, "net4", 12, 5, map_b, sizeof(map_b));
	pack_writer_add(&w, BEE_PACK_ELF, "policy.bpf.o", 1, sizeof(seed_elf), seed_elf,
			sizeof(seed_elf));
	pack_writer_add(&w, BEE_PACK_MAP_IMAGE, "fs_dfa", 16, 3, map_a, sizeof(map_a));
	pack_writer_add(&w, BEE_PACK_MANIFEST, BEE_SEC_MANIFEST, 1, strlen(seed_manifest), seed_manifest,
			strlen(seed_manifest));
	bad |= seed_write(argv[1], "seed-full", &w);

	/* an empty map and an empty source */
	pack_writer_init(&w);
	pack_writer_add(&w, BEE_PACK_MANIFEST, BEE_SEC_MANIFEST, 1, 11, "{\"a\":[1,2]}", 11);
	pack_writer_add(&w, BEE_PACK_MAP_IMAGE, "empty", 8, 0, "", 0);
	pack_writer_add(&w, BEE_PACK_SOURCE, "s", 1, 0, "", 0);
	bad |= seed_write(argv[1], "seed-empty", &w);

	/* non-ASCII UTF-8 in the source, names at the 31-byte limit */
	pack_writer_init(&w);
	const char *escaped = "{\"k\":\"\\u00e9\"}\n";
	pack_writer_add(&w, BEE_PACK_MANIFEST, "mmmmmmmmmmmmmmmmmmmmmmmmmmmmmmm", 1, strlen(escaped),
			escaped, strlen(escaped));
	const char *utf8 = "name = \"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x90\x9d\"\n# x";
	pack_writer_add(&w, BEE_PACK_SOURCE, "sssssssssssssssssssssssssssssss", 1, strlen(utf8),
			utf8, strlen(utf8));
	bad |= seed_write(argv[1], "seed-utf8", &w);
	return bad ? 1 : 0;
}
