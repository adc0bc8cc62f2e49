/* SPDX-License-Identifier: GPL-2.0-only */
/* seed_file.h: the file a seed program writes, for the fuzz seed programs
 * of loader/fuzz (audit_seeds.c, dns_seeds.c). */
#ifndef BEE_SEED_FILE_H
#define BEE_SEED_FILE_H

#include <stdio.h>

/* The file seed-NAME in dir: a[0..alen), then b[0..blen). 0, or -1 with
 * the reason printed. */
static inline int seed_file(const char *dir, const char *name, const void *a, size_t alen, const void *b,
			    size_t blen)
{
	char file[4096];
	snprintf(file, sizeof(file), "%s/seed-%s", dir, name);
	FILE *f = fopen(file, "wb");
	if (!f) {
		perror(file);
		return -1;
	}
	int rc = fwrite(a, 1, alen, f) == alen && fwrite(b, 1, blen, f) == blen ? 0 : -1;
	if (fclose(f) != 0 || rc < 0) {
		perror(file);
		return -1;
	}
	return 0;
}

#endif
