/* SPDX-License-Identifier: GPL-2.0-only */
/* seed.h: the seeded random numbers of the property tests, so that every
 * failure can be replayed with BEE_SEED=N. */
#ifndef BEE_TESTS_SEED_H
#define BEE_TESTS_SEED_H

#include <stdint.h>

/* BEE_SEED when set; else dflt when not 0 (a test that wants the same run
 * every time); else one from the clock. Prints it on stderr as
 * "TEST: seed N (BEE_SEED=N replays)". */
uint64_t test_seed(const char *test, uint64_t dflt);

/* dflt cases of a property test, divided by BEE_TEST_SCALE when set (the
 * sanitizer suite runs the same properties on fewer cases: its job is
 * memory errors and undefined behaviour, not more inputs); at least 1. */
long test_cases(long dflt);

/* splitmix64: the same sequence on every libc and machine. */
static inline uint64_t test_rng_next(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

#endif
