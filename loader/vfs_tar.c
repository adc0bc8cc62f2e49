/* SPDX-License-Identifier: GPL-2.0-only */
/* vfs_tar.c: a session's changes as a tar file (libarchive, pax). Each
 * added or modified file, directory and symlink is an entry with its
 * mode, owner and modification time; each deletion an empty ".wh.NAME"
 * entry beside where NAME was (the OCI image layer's whiteout). Entry
 * names are the absolute paths without the leading '/', in path order;
 * no user or group names, no access or change times: the same changes
 * give the same bytes. libarchive is opened (dlopen) for the snapshot
 * alone; without it the snapshot refuses, naming it. A static build (the
 * VM's initramfs, BEE_NO_LIBARCHIVE) refuses with EOPNOTSUPP. */
#include "vfs.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifdef BEE_NO_LIBARCHIVE

int bee_vfs_tar_write(const char *state_dir, const struct bee_vfs_record *r, const struct bee_vfs_change *v,
		      size_t n, const char *tar_path, char *why, size_t whysize)
{
	(void)state_dir, (void)r, (void)v, (void)n, (void)tar_path;
	snprintf(why, whysize, "this build of bee-load has no libarchive");
	return -EOPNOTSUPP;
}

#else

#include <archive.h>
#include <archive_entry.h>
#include <dlfcn.h>

/* libarchive is opened when a snapshot is written, not linked: it brings
 * a dozen shared objects (ICU, libstdc++, xml2, the compressors) that
 * every bee-load start would map and bind. Its functions by name: */
#define TAR_FNS(X)                                                                                 \
	X(archive_write_new) X(archive_write_free) X(archive_write_set_format_pax_restricted)      \
	X(archive_write_open_fd) X(archive_write_header) X(archive_write_data) X(archive_write_close) \
	X(archive_error_string) X(archive_entry_new) X(archive_entry_free) X(archive_entry_clear)   \
	X(archive_entry_set_pathname) X(archive_entry_set_filetype) X(archive_entry_set_perm)        \
	X(archive_entry_set_size) X(archive_entry_set_uid) X(archive_entry_set_gid)                  \
	X(archive_entry_set_mtime) X(archive_entry_set_symlink)

static struct {
#define TAR_FN_PTR(name) __typeof__(name) *name;
	TAR_FNS(TAR_FN_PTR)
#undef TAR_FN_PTR
} la;

static int tar_lib_open(char *why, size_t whysize)
{
	static void *h;
	if (h)
		return 0;
	void *lib = dlopen("libarchive.so.13", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		snprintf(why, whysize, "libarchive: %s", dlerror());
		return -ENOENT;
	}
#define TAR_FN_SYM(name)                                                                   \
	if (!(la.name = (__typeof__(name) *)dlsym(lib, #name))) {                          \
		snprintf(why, whysize, "libarchive: no '%s'", #name);                      \
		dlclose(lib);                                                              \
		return -ENOENT;                                                            \
	}
	TAR_FNS(TAR_FN_SYM)
#undef TAR_FN_SYM
	h = lib;
	return 0;
}

#define archive_write_new la.archive_write_new
#define archive_write_free la.archive_write_free
#define archive_write_set_format_pax_restricted la.archive_write_set_format_pax_restricted
#define archive_write_open_fd la.archive_write_open_fd
#define archive_write_header la.archive_write_header
#define archive_write_data la.archive_write_data
#define archive_write_close la.archive_write_close
#define archive_error_string la.archive_error_string
#define archive_entry_new la.archive_entry_new
#define archive_entry_free la.archive_entry_free
#define archive_entry_clear la.archive_entry_clear
#define archive_entry_set_pathname la.archive_entry_set_pathname
#define archive_entry_set_filetype la.archive_entry_set_filetype
#define archive_entry_set_perm la.archive_entry_set_perm
#define archive_entry_set_size la.archive_entry_set_size
#define archive_entry_set_uid la.archive_entry_set_uid
#define archive_entry_set_gid la.archive_entry_set_gid
#define archive_entry_set_mtime la.archive_entry_set_mtime
#define archive_entry_set_symlink la.archive_entry_set_symlink

static int tar_data(struct archive *a, int fd)
{
	static char buf[1 << 16];
	for (;;) {
		ssize_t r = read(fd, buf, sizeof(buf));
		if (r < 0)
			return -errno;
		if (r == 0)
			return 0;
		if (archive_write_data(a, buf, (size_t)r) != r)
			return -EIO;
	}
}

static int tar_change(struct archive *a, struct archive_entry *en, int updir, const struct bee_vfs_change *x)
{
	char name[PATH_MAX + 8];
	archive_entry_clear(en);
	if (x->kind == BEE_VFS_DELETED) {
		const char *slash = strrchr(x->path, '/');
		snprintf(name, sizeof(name), "%.*s/.wh.%s", (int)(slash - x->path - 1), x->path + 1, slash + 1);
		if (slash == x->path)
			snprintf(name, sizeof(name), ".wh.%s", x->path + 1);
		archive_entry_set_pathname(en, name);
		archive_entry_set_filetype(en, AE_IFREG);
		archive_entry_set_perm(en, 0);
		archive_entry_set_size(en, 0);
		return archive_write_header(a, en) == ARCHIVE_OK ? 0 : -EIO;
	}
	struct stat st;
	if (fstatat(updir, x->rel, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	archive_entry_set_pathname(en, x->path + 1);
	archive_entry_set_uid(en, st.st_uid);
	archive_entry_set_gid(en, st.st_gid);
	archive_entry_set_perm(en, st.st_mode & 07777);
	archive_entry_set_mtime(en, st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	int fd = -1, err = 0;
	if (S_ISDIR(st.st_mode)) {
		archive_entry_set_filetype(en, AE_IFDIR);
	} else if (S_ISLNK(st.st_mode)) {
		char target[PATH_MAX];
		ssize_t n = readlinkat(updir, x->rel, target, sizeof(target) - 1);
		if (n < 0)
			return -errno;
		target[n] = '\0';
		archive_entry_set_filetype(en, AE_IFLNK);
		archive_entry_set_symlink(en, target);
	} else if (S_ISREG(st.st_mode)) {
		struct open_how how = { .flags = O_RDONLY | O_NOFOLLOW | O_CLOEXEC,
					.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
		if ((fd = (int)syscall(SYS_openat2, updir, x->rel, &how, sizeof(how))) < 0)
			return -errno;
		archive_entry_set_filetype(en, AE_IFREG);
		archive_entry_set_size(en, st.st_size);
	} else {
		return 0;       /* FIFOs and sockets: not carried (apply refuses them too) */
	}
	if (archive_write_header(a, en) != ARCHIVE_OK)
		err = -EIO;
	if (!err && fd >= 0)
		err = tar_data(a, fd);
	if (fd >= 0)
		close(fd);
	return err;
}

int bee_vfs_tar_write(const char *state_dir, const struct bee_vfs_record *r, const struct bee_vfs_change *v,
		      size_t n, const char *tar_path, char *why, size_t whysize)
{
	int updir[BEE_VFS_MAX], err = tar_lib_open(why, whysize);
	if (err)
		return err;
	for (size_t i = 0; i < BEE_VFS_MAX; i++)
		updir[i] = -1;
	int out = open(tar_path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out < 0)
		return -errno;
	struct archive *a = archive_write_new();
	struct archive_entry *en = archive_entry_new();
	if (!a || !en || archive_write_set_format_pax_restricted(a) != ARCHIVE_OK ||
	    archive_write_open_fd(a, out) != ARCHIVE_OK) {
		snprintf(why, whysize, "libarchive: %s", a ? archive_error_string(a) : "out of memory");
		err = -EIO;
		goto out;
	}
	for (size_t i = 0; i < r->n; i++) {
		char up[PATH_MAX];
		bee_vfs_layer(up, sizeof(up), state_dir, r->sid, i, "upper", r->ov[i].gen);
		if ((updir[i] = open(up, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
			err = -errno;
			goto out;
		}
	}
	for (size_t i = 0; !err && i < n; i++)
		if ((err = tar_change(a, en, updir[v[i].overlay], &v[i])) < 0)
			snprintf(why, whysize, "'%s': %s", v[i].path,
				 err == -EIO ? archive_error_string(a) : strerror(-err));
	if (!err && archive_write_close(a) != ARCHIVE_OK) {
		snprintf(why, whysize, "libarchive: %s", archive_error_string(a));
		err = -EIO;
	}
out:
	if (en)
		archive_entry_free(en);
	if (a)
		archive_write_free(a);
	for (size_t i = 0; i < BEE_VFS_MAX; i++)
		if (updir[i] >= 0)
			close(updir[i]);
	if (close(out) < 0 && !err)
		err = -errno;
	if (err)
		unlink(tar_path);
	return err;
}

#endif
