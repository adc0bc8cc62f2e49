/* SPDX-License-Identifier: GPL-2.0-only */
/* zlib_open.c: bee-load's zlib, opened when first called, not mapped at
 * every start. libelf (a compressed section of a pack's ELF) and libbpf
 * (the kernel's /proc/config.gz) are linked in from their archives and
 * call zlib by name; these are those names, each passing the call on to
 * the system's shared libz.so.1 (dlopen at the first of them), so that
 * zlib's security updates still reach bee-load without a rebuild. None of
 * them runs for `exec` or a warm `run`: mapping and binding libz cost
 * about 50 µs of every bee-load start on this project's hosts.
 *
 * Linked into bee-load alone (GNUmakefile): libbee and the tests link
 * libz. A static build (the VM's initramfs, BEE_ZLIB_LINKED) links zlib
 * and compiles nothing here. Without libz.so.1 an init returns
 * Z_VERSION_ERROR and gzopen NULL (errno ENOENT): the caller's error, as
 * for a zlib that refuses, after a line on stderr that names the reason
 * (libelf's and libbpf's own messages would not). */
#ifndef BEE_ZLIB_LINKED

#define _LARGEFILE64_SOURCE 1
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <zlib.h>

#define ZLIB_FNS(X)                                                                                \
	X(deflateInit_) X(deflate) X(deflateEnd) X(inflateInit_) X(inflate) X(inflateEnd)          \
	X(inflateReset) X(gzopen64) X(gzgets) X(gzclose)

static struct {
#define ZLIB_FN_PTR(name) __typeof__(name) *name;
	ZLIB_FNS(ZLIB_FN_PTR)
#undef ZLIB_FN_PTR
} z;
static pthread_once_t z_once = PTHREAD_ONCE_INIT;
static int z_ok;

static void z_open(void)
{
	void *lib = dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		fprintf(stderr, "bee-load: zlib: %s\n", dlerror());
		return;
	}
#define ZLIB_FN_SYM(name)                                                                  \
	if (!(z.name = (__typeof__(name) *)dlsym(lib, #name))) {                           \
		fprintf(stderr, "bee-load: zlib: libz.so.1 has no '%s'\n", #name);        \
		dlclose(lib);                                                              \
		return;                                                                    \
	}
	ZLIB_FNS(ZLIB_FN_SYM)
#undef ZLIB_FN_SYM
	z_ok = 1;
}

static int z_ready(void)
{
	pthread_once(&z_once, z_open);
	return z_ok;
}

/* A stream's calls come after its init, which opened the library: the
 * checks below guard only a caller that skipped the init. */
int deflateInit_(z_streamp strm, int level, const char *version, int stream_size)
{
	return z_ready() ? z.deflateInit_(strm, level, version, stream_size) : Z_VERSION_ERROR;
}

int deflate(z_streamp strm, int flush)
{
	return z_ready() ? z.deflate(strm, flush) : Z_STREAM_ERROR;
}

int deflateEnd(z_streamp strm)
{
	return z_ready() ? z.deflateEnd(strm) : Z_STREAM_ERROR;
}

int inflateInit_(z_streamp strm, const char *version, int stream_size)
{
	return z_ready() ? z.inflateInit_(strm, version, stream_size) : Z_VERSION_ERROR;
}

int inflate(z_streamp strm, int flush)
{
	return z_ready() ? z.inflate(strm, flush) : Z_STREAM_ERROR;
}

int inflateEnd(z_streamp strm)
{
	return z_ready() ? z.inflateEnd(strm) : Z_STREAM_ERROR;
}

int inflateReset(z_streamp strm)
{
	return z_ready() ? z.inflateReset(strm) : Z_STREAM_ERROR;
}

gzFile gzopen64(const char *path, const char *mode)
{
	if (z_ready())
		return z.gzopen64(path, mode);
	errno = ENOENT;
	return NULL;
}

char *gzgets(gzFile file, char *buf, int len)
{
	return z_ready() ? z.gzgets(file, buf, len) : NULL;
}

int gzclose(gzFile file)
{
	return z_ready() ? z.gzclose(file) : Z_STREAM_ERROR;
}

#else

/* ISO C wants something in a translation unit */
typedef int bee_zlib_linked;

#endif
