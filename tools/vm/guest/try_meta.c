/* SPDX-License-Identifier: GPL-2.0-only */
/* try_meta.c: bee-try's operations on a file's metadata and on what a
 * directory shows (try.h): the ways to change a file without opening it
 * for writing, and the ways to learn about a file without opening it.
 *
 *   chmod-to PATH MODE        chmod(2), MODE in octal
 *   chown-to PATH UID GID     chown(2) (-1 keeps one)
 *   utimes-set PATH           utimensat(2) with explicit times (2001-09-09)
 *   touch PATH                utimensat(2) with "now" (needs write access)
 *   acl-set PATH              setxattr system.posix_acl_access: an extended
 *                             ACL that gives uid 4242 rw
 *   acl-default DIR           setxattr system.posix_acl_default on a directory
 *   xattr-rm PATH NAME        removexattr(2)
 *   xattr-get PATH NAME       getxattr(2): OK (there is a value) or the errno
 *   xattr-list PATH           listxattr(2): OK (there are names) or the errno
 *   stat PATH                 stat(2)
 *   fstat-opath PATH          open O_PATH (no file_open check), then fstat
 *   list DIR                  opendir and readdir: "LIST:<entries>" (without
 *                             . and ..), or the errno
 *   inotify PATH              inotify_add_watch(2) for IN_ACCESS|IN_OPEN
 *   fanotify PATH             fanotify_init (unprivileged: FAN_REPORT_FID),
 *                             fanotify_mark of PATH for FAN_OPEN|FAN_ACCESS
 *   write FILE TEXT           open FILE O_WRONLY, write TEXT and a newline
 *                             (cgroup control files, an audit log)
 *   append FILE TEXT          the same with O_APPEND
 *
 * (try_guard.c has chmod, chown and utimes of fixed values, for 72-guard.sh.)
 * fanotify_init failing is SETUP:<errno> (the mark is what is judged).
 */
#include "try.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/posix_acl.h>
#include <linux/posix_acl_xattr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

int try_chmod_to(int argc, char **argv)
{
	(void)argc;
	return try_answer(chmod(argv[1], (mode_t)strtoul(argv[2], NULL, 8)) < 0 ? errno : 0);
}

int try_chown_to(int argc, char **argv)
{
	(void)argc;
	uid_t u = (uid_t)strtol(argv[2], NULL, 10);
	gid_t g = (gid_t)strtol(argv[3], NULL, 10);
	return try_answer(chown(argv[1], u, g) < 0 ? errno : 0);
}

int try_utimes_set(int argc, char **argv)
{
	(void)argc;
	struct timespec t[2] = { { 1000000000, 0 }, { 1000000000, 0 } };
	return try_answer(utimensat(AT_FDCWD, argv[1], t, 0) < 0 ? errno : 0);
}

int try_touch(int argc, char **argv)
{
	(void)argc;
	return try_answer(utimensat(AT_FDCWD, argv[1], NULL, 0) < 0 ? errno : 0);
}

/* An extended ACL (a named user entry, so the file system keeps it as an
 * xattr instead of folding it into the mode): owner rw, uid 4242 rw,
 * group r, mask rw, other r. */
static size_t acl_value(struct posix_acl_xattr_header *h, struct posix_acl_xattr_entry *e)
{
	h->a_version = POSIX_ACL_XATTR_VERSION;
	const struct posix_acl_xattr_entry v[] = {
		{ ACL_USER_OBJ, 6, ACL_UNDEFINED_ID }, { ACL_USER, 6, 4242 },
		{ ACL_GROUP_OBJ, 4, ACL_UNDEFINED_ID }, { ACL_MASK, 6, ACL_UNDEFINED_ID },
		{ ACL_OTHER, 4, ACL_UNDEFINED_ID },
	};
	memcpy(e, v, sizeof(v));
	return sizeof(*h) + sizeof(v);
}

static int acl_set(const char *path, const char *name)
{
	struct {
		struct posix_acl_xattr_header h;
		struct posix_acl_xattr_entry e[5];
	} acl;
	size_t n = acl_value(&acl.h, acl.e);
	return try_answer(setxattr(path, name, &acl, n, 0) < 0 ? errno : 0);
}

int try_acl_set(int argc, char **argv)
{
	(void)argc;
	return acl_set(argv[1], "system.posix_acl_access");
}

int try_acl_default(int argc, char **argv)
{
	(void)argc;
	return acl_set(argv[1], "system.posix_acl_default");
}

int try_xattr_rm(int argc, char **argv)
{
	(void)argc;
	return try_answer(removexattr(argv[1], argv[2]) < 0 ? errno : 0);
}

int try_xattr_get(int argc, char **argv)
{
	(void)argc;
	char buf[256];
	return try_answer(getxattr(argv[1], argv[2], buf, sizeof(buf)) < 0 ? errno : 0);
}

int try_xattr_list(int argc, char **argv)
{
	(void)argc;
	char buf[1024];
	ssize_t n = listxattr(argv[1], buf, sizeof(buf));
	/* an empty list would not tell a refusal's control from a missing ACL */
	return try_answer(n < 0 ? errno : n == 0 ? ENODATA : 0);
}

int try_stat(int argc, char **argv)
{
	(void)argc;
	struct stat st;
	return try_answer(stat(argv[1], &st) < 0 ? errno : 0);
}

int try_fstat_opath(int argc, char **argv)
{
	(void)argc;
	int fd = open(argv[1], O_PATH | O_CLOEXEC);
	if (fd < 0)
		return try_setup_failed(errno);
	struct stat st;
	int err = fstat(fd, &st) < 0 ? errno : 0;
	close(fd);
	return try_answer(err);
}

int try_list(int argc, char **argv)
{
	(void)argc;
	DIR *d = opendir(argv[1]);
	if (!d)
		return try_answer(errno);
	int n = 0;
	errno = 0;
	for (struct dirent *e; (e = readdir(d));)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	int err = errno;
	closedir(d);
	if (err)
		return try_answer(err);
	printf("LIST:%d\n", n);
	return 0;
}

int try_inotify(int argc, char **argv)
{
	(void)argc;
	int fd = inotify_init1(IN_CLOEXEC);
	if (fd < 0)
		return try_setup_failed(errno);
	int err = inotify_add_watch(fd, argv[1], IN_ACCESS | IN_OPEN) < 0 ? errno : 0;
	close(fd);
	return try_answer(err);
}

int try_fanotify(int argc, char **argv)
{
	(void)argc;
	int fd = fanotify_init(FAN_CLASS_NOTIF | FAN_REPORT_FID | FAN_CLOEXEC, O_RDONLY);
	if (fd < 0)
		return try_setup_failed(errno);
	int err = fanotify_mark(fd, FAN_MARK_ADD, FAN_OPEN | FAN_ACCESS, AT_FDCWD, argv[1]) < 0 ? errno : 0;
	close(fd);
	return try_answer(err);
}

static int write_line(const char *path, const char *text, int flags)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC | flags);
	if (fd < 0)
		return try_answer(errno);
	char buf[512];
	int n = snprintf(buf, sizeof(buf), "%s\n", text);
	ssize_t w = write(fd, buf, (size_t)n);
	int err = w < 0 ? errno : 0;
	close(fd);
	return try_answer(err);
}

int try_write(int argc, char **argv)
{
	(void)argc;
	return write_line(argv[1], argv[2], 0);
}

int try_append(int argc, char **argv)
{
	(void)argc;
	return write_line(argv[1], argv[2], O_APPEND);
}
