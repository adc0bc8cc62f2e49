/* SPDX-License-Identifier: GPL-2.0-only */
#include "seed.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

uint64_t test_seed(const char *test, uint64_t dflt)
{
	const char *s = getenv("BEE_SEED");
	uint64_t seed = dflt;
	if (s && *s) {
		seed = strtoull(s, NULL, 0);
	} else if (!seed) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		seed = (uint64_t)ts.tv_sec * 1000003u ^ (uint64_t)ts.tv_nsec;
	}
	fprintf(stderr, "%s: seed %" PRIu64 " (BEE_SEED=%" PRIu64 " replays)\n", test, seed, seed);
	return seed;
}

long test_cases(long dflt)
{
	const char *s = getenv("BEE_TEST_SCALE");
	long scale = s && *s ? strtol(s, NULL, 0) : 1;
	long n = scale > 1 ? dflt / scale : dflt;
	return n > 0 ? n : 1;
}
