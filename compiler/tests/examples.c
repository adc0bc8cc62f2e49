/* SPDX-License-Identifier: GPL-2.0-only */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "examples.h"

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

size_t examples_list(char **names, size_t max)
{
	size_t n = 0;
	DIR *dir = opendir("policies");
	if (!dir)
		fail_msg("policies: %s (run from the repository root)", strerror(errno));
	for (struct dirent *e; (e = readdir(dir)) && n < max;) {
		size_t l = strlen(e->d_name);
		if (l > 5 && strcmp(e->d_name + l - 5, ".toml") == 0)
			names[n++] = strdup(e->d_name);
	}
	closedir(dir);
	qsort(names, n, sizeof(names[0]), name_cmp);
	return n;
}
