/* SPDX-License-Identifier: GPL-2.0-only */
/* examples.h: the example policies, for the tests that run every one. */
#ifndef BEE_TESTS_EXAMPLES_H
#define BEE_TESTS_EXAMPLES_H

#include <stddef.h>

/* The *.toml names in policies/ (run from the repository root), sorted,
 * at most max of them, each strdup'ed into names[]; returns how many.
 * Fails the running test when the folder cannot be read. */
size_t examples_list(char **names, size_t max);

#endif
