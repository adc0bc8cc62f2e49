/* SPDX-License-Identifier: GPL-2.0-only */
/* test_util: loader/util.c's helpers that a launch leans on.
 *
 *   - bee_utc_iso: the same text as glibc's gmtime_r (which it no longer
 *     calls) for every day from 1900 to 2200, a second before and after
 *     each midnight, leap days and century years, and times before 1970
 *     (rounded down, milliseconds too)
 *   - bee_mkdirs: a path there already, a path whose parents
 *     are missing, a file in the way (ENOTDIR), an existing file at the
 *     end (kept, as mkdir -p's EEXIST was), a name too long; its scratch
 *     directory is removed whether the test passes or not
 */
#include "internal.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

/* what bee_utc_iso printed with gmtime_r */
static void reference(int64_t ns, char *buf, size_t size)
{
	int64_t sec = ns / 1000000000, rem = ns % 1000000000;
	if (rem < 0) {
		rem += 1000000000;
		sec--;
	}
	time_t t = (time_t)sec;
	struct tm tm;
	gmtime_r(&t, &tm);
	snprintf(buf, size, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
		 tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(rem / 1000000));
}

static void check_at(int64_t ns)
{
	char want[64], got[64];
	reference(ns, want, sizeof(want));
	bee_utc_iso(ns, got, sizeof(got));
	if (strcmp(want, got) != 0)
		fail_msg("%lld ns: got %s, gmtime_r gives %s", (long long)ns, got, want);
}

static void test_utc_iso(void **state)
{
	(void)state;
	const int64_t day = 86400LL * 1000000000;
	/* 1900-01-01 to 2200-01-01, each midnight and a second either side */
	for (int64_t d = -25567; d <= 84006; d++) {
		check_at(d * day);
		check_at(d * day - 1000000000);
		check_at(d * day + 1000000000 + 999999999);
		check_at(d * day + day / 2 + 123456789);
	}
	check_at(0);
	check_at(-1);              /* 1969-12-31T23:59:59.999Z */
	check_at(-999999999);
	check_at(-1000000000);
	check_at(951782400LL * 1000000000);   /* 2000-02-29 */
	check_at(4107456000LL * 1000000000);  /* 2100-02-28: no 29th */
	char got[64];
	bee_utc_iso(1796334472686638000LL, got, sizeof(got));
	assert_string_equal(got, "2026-12-03T21:47:52.686Z");
}

static char root[] = "/tmp/bee-test-util-XXXXXX";
static bool root_made;                /* mkdtemp's name may hold an 'X' of its own */

static int root_remove(void **state)
{
	(void)state;
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return root_made ? system(cmd) : 0;
}

static void test_mkdirs(void **state)
{
	(void)state;
	char path[PATH_MAX], file[PATH_MAX];
	assert_non_null(mkdtemp(root));
	root_made = true;
	struct stat st;
	/* missing parents: each made */
	snprintf(path, sizeof(path), "%s/a/b/c", root);
	assert_int_equal(bee_mkdirs(path, 0700), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0700);
	/* there already */
	assert_int_equal(bee_mkdirs(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/a/b", root);
	assert_int_equal(bee_mkdirs(path, 0700), 0);
	/* a file in the way of a component */
	snprintf(file, sizeof(file), "%s/a/f", root);
	FILE *f = fopen(file, "w");
	assert_non_null(f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/a/f/x/y", root);
	assert_int_equal(bee_mkdirs(path, 0700), -ENOTDIR);
	/* the file itself at the end: left, as mkdir -p's EEXIST was */
	assert_int_equal(bee_mkdirs(file, 0700), 0);
	assert_int_equal(stat(file, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	/* too long */
	char *lng = malloc(PATH_MAX + 16);
	assert_non_null(lng);
	memset(lng, 'x', PATH_MAX + 15);
	lng[0] = '/';
	lng[PATH_MAX + 15] = '\0';
	assert_int_equal(bee_mkdirs(lng, 0700), -ENAMETOOLONG);
	free(lng);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_utc_iso),
		cmocka_unit_test_teardown(test_mkdirs, root_remove),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
