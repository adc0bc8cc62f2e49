/* SPDX-License-Identifier: GPL-2.0-only */
/* test_zlib_open: loader/zlib_open.c, the zlib names bee-load's libelf
 * and libbpf call, each passed on to libz.so.1 opened at the first call.
 *
 *   - the names this program calls are zlib_open.c's, not libz.so.1's
 *     (their addresses differ), so the rest tests the pass-through
 *   - deflate and inflate of 256 KB in small steps give the bytes back,
 *     a second time after inflateReset; a stream without an init is
 *     refused (Z_STREAM_ERROR), as zlib refuses it
 *   - gzopen64, gzgets and gzclose read back the lines of a gzip file
 *     (written with deflateInit2, which bee-load never calls: libz's own),
 *     and a missing file gives NULL with errno ENOENT
 *   - its scratch directory is removed whether the test passes or not
 */
#define _LARGEFILE64_SOURCE 1
#include <dlfcn.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>

static void test_names_are_ours(void **state)
{
	(void)state;
	void *lib = dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL);
	assert_non_null(lib);
	assert_ptr_not_equal((void *)inflate, dlsym(lib, "inflate"));
	assert_ptr_not_equal((void *)gzopen64, dlsym(lib, "gzopen64"));
	/* the control: libz.so.1 has them */
	assert_non_null(dlsym(lib, "inflate"));
	assert_non_null(dlsym(lib, "gzopen64"));
	dlclose(lib);
}

static void test_round_trip(void **state)
{
	(void)state;
	enum { N = 256 * 1024 };
	unsigned char *in = malloc(N), *packed = malloc(N + 1024), *out = malloc(N);
	assert_true(in && packed && out);
	for (size_t i = 0; i < N; i++)
		in[i] = (unsigned char)(i * 2654435761u >> 13 & (i % 7 ? 0x0f : 0xff));
	z_stream d = { 0 };
	assert_int_equal(deflateInit(&d, Z_BEST_SPEED), Z_OK);
	d.next_in = in;
	d.avail_in = N;
	d.next_out = packed;
	d.avail_out = N + 1024;
	assert_int_equal(deflate(&d, Z_FINISH), Z_STREAM_END);
	size_t plen = d.total_out;
	assert_int_equal(deflateEnd(&d), Z_OK);
	assert_true(plen > 0 && plen < N);

	z_stream f = { 0 };
	assert_int_equal(inflateInit(&f), Z_OK);
	for (int pass = 0; pass < 2; pass++) {
		memset(out, 0, N);
		f.next_in = packed;
		f.avail_in = (uInt)plen;
		f.next_out = out;
		int r;
		/* in steps of 4 KB out: many calls, as libelf makes */
		do {
			f.avail_out = 4096;
			r = inflate(&f, Z_NO_FLUSH);
		} while (r == Z_OK);
		assert_int_equal(r, Z_STREAM_END);
		assert_int_equal(f.total_out, N);
		assert_memory_equal(in, out, N);
		assert_int_equal(inflateReset(&f), Z_OK);
	}
	assert_int_equal(inflateEnd(&f), Z_OK);
	/* no init: refused, as by zlib */
	z_stream none = { 0 };
	assert_int_equal(inflate(&none, Z_NO_FLUSH), Z_STREAM_ERROR);
	free(in);
	free(packed);
	free(out);
}

struct scratch {
	char dir[64], file[96];
};

static int scratch_up(void **state)
{
	static struct scratch s;
	snprintf(s.dir, sizeof(s.dir), "/tmp/test_zlib_open.XXXXXX");
	if (!mkdtemp(s.dir))
		return -1;
	snprintf(s.file, sizeof(s.file), "%s/lines.gz", s.dir);
	*state = &s;
	return 0;
}

static int scratch_down(void **state)
{
	struct scratch *s = *state;
	unlink(s->file);
	return rmdir(s->dir);
}

static void test_gz_lines(void **state)
{
	struct scratch *s = *state;
	char text[4096];
	size_t len = 0;
	for (int i = 0; i < 100; i++)
		len += (size_t)snprintf(text + len, sizeof(text) - len, "CONFIG_LINE_%d=y\n", i);
	unsigned char gz[4096];
	z_stream d = { 0 };
	/* 15 + 16: a gzip wrapper */
	assert_int_equal(deflateInit2(&d, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
	d.next_in = (unsigned char *)text;
	d.avail_in = (uInt)len;
	d.next_out = gz;
	d.avail_out = sizeof(gz);
	assert_int_equal(deflate(&d, Z_FINISH), Z_STREAM_END);
	size_t glen = d.total_out;
	assert_int_equal(deflateEnd(&d), Z_OK);
	FILE *fp = fopen(s->file, "w");
	assert_non_null(fp);
	assert_int_equal(fwrite(gz, 1, glen, fp), glen);
	assert_int_equal(fclose(fp), 0);

	gzFile g = gzopen64(s->file, "r");
	assert_non_null(g);
	char line[128];
	for (int i = 0; i < 100; i++) {
		char want[64];
		snprintf(want, sizeof(want), "CONFIG_LINE_%d=y\n", i);
		assert_non_null(gzgets(g, line, sizeof(line)));
		assert_string_equal(line, want);
	}
	assert_null(gzgets(g, line, sizeof(line)));
	assert_int_equal(gzclose(g), Z_OK);

	char missing[128];
	snprintf(missing, sizeof(missing), "%s/missing.gz", s->dir);
	errno = 0;
	assert_null(gzopen64(missing, "r"));
	assert_int_equal(errno, ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names_are_ours),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test_setup_teardown(test_gz_lines, scratch_up, scratch_down),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
