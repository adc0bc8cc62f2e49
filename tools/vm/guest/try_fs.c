/* SPDX-License-Identifier: GPL-2.0-only */
/* try_fs.c: bee-try's file operations (try.h).
 *
 *   open PATH [MODE]          open(2); MODE as try_open_mode, default r
 *   read PATH                 "READ:<first line>" (at most 40 bytes), or the errno
 *   symlink TARGET LINK       symlink(2)
 *   link OLD NEW              link(2)
 *   rename OLD NEW            rename(2)
 *   unlink PATH               unlink(2)
 *   truncate PATH             truncate(2) to 0 bytes: a write that opens nothing
 *   mkdir PATH                mkdir(2)
 *   procfd PATH MODE1 MODE2   open PATH with MODE1, then /proc/self/fd/N with MODE2
 *   reopen FD MODE            open /proc/self/fd/FD (an inherited descriptor)
 *   opath PATH MODE           open PATH with O_PATH, then /proc/self/fd/N with MODE
 *   chdir-read DIR REL        chdir DIR, then read REL (relative); back to / after
 *   cgjoin FILE               open FILE (a cgroup.procs) for writing and write our pid
 *   uring-open PATH           IORING_OP_OPENAT of PATH through raw io_uring syscalls
 *
 * The word of procfd, reopen and opath is the second open's; chdir-read's
 * is read's. A first step that fails prints SETUP:<errno>.
 */
#include "try.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

int try_open_mode(const char *path, const char *mode, int extra_flags)
{
	int flags;
	if (!strcmp(mode, "r"))
		flags = O_RDONLY;
	else if (!strcmp(mode, "w"))
		flags = O_WRONLY;
	else if (!strcmp(mode, "rw"))
		flags = O_RDWR;
	else if (!strcmp(mode, "wt"))
		flags = O_WRONLY | O_TRUNC;
	else if (!strcmp(mode, "a"))
		flags = O_WRONLY | O_APPEND;
	else if (!strcmp(mode, "c"))
		flags = O_WRONLY | O_CREAT;
	else if (!strcmp(mode, "n"))
		flags = O_ACCMODE;
	else
		return -2;
	return open(path, flags | extra_flags | O_CLOEXEC, 0600);
}

static int bad_mode(const char *mode)
{
	fprintf(stderr, "bee-try: bad open mode '%s': want r, w, rw, wt, a, c or n\n", mode);
	puts("USAGE");
	return 2;
}

int try_open(int argc, char **argv)
{
	const char *mode = argc > 2 ? argv[2] : "r";
	int fd = try_open_mode(argv[1], mode, 0);
	if (fd == -2)
		return bad_mode(mode);
	if (fd < 0)
		return try_answer(errno);
	close(fd);
	return try_answer(0);
}

/* Reads the start of an open file: "READ:<first line>". */
static int read_fd(int fd)
{
	char buf[41];
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	int err = n < 0 ? errno : 0;
	close(fd);
	if (n < 0)
		return try_answer(err);
	buf[n] = '\0';
	buf[strcspn(buf, "\n \t")] = '\0';
	printf("READ:%s\n", buf);
	return 0;
}

int try_read(int argc, char **argv)
{
	(void)argc;
	int fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return try_answer(errno);
	return read_fd(fd);
}

int try_symlink(int argc, char **argv)
{
	(void)argc;
	return try_answer(symlink(argv[1], argv[2]) < 0 ? errno : 0);
}

int try_link(int argc, char **argv)
{
	(void)argc;
	return try_answer(link(argv[1], argv[2]) < 0 ? errno : 0);
}

int try_rename(int argc, char **argv)
{
	(void)argc;
	return try_answer(rename(argv[1], argv[2]) < 0 ? errno : 0);
}

int try_unlink(int argc, char **argv)
{
	(void)argc;
	return try_answer(unlink(argv[1]) < 0 ? errno : 0);
}

int try_truncate(int argc, char **argv)
{
	(void)argc;
	return try_answer(truncate(argv[1], 0) < 0 ? errno : 0);
}

int try_mkdir(int argc, char **argv)
{
	(void)argc;
	return try_answer(mkdir(argv[1], 0755) < 0 ? errno : 0);
}

/* The second open of procfd, reopen and opath: /proc/self/fd/N. */
static int reopen_fd(int fd, const char *mode)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	int nfd = try_open_mode(path, mode, 0);
	if (nfd == -2)
		return bad_mode(mode);
	if (nfd < 0)
		return try_answer(errno);
	close(nfd);
	return try_answer(0);
}

int try_procfd(int argc, char **argv)
{
	(void)argc;
	int fd = try_open_mode(argv[1], argv[2], 0);
	if (fd == -2)
		return bad_mode(argv[2]);
	if (fd < 0)
		return try_setup_failed(errno);
	int r = reopen_fd(fd, argv[3]);
	close(fd);
	return r;
}

int try_reopen(int argc, char **argv)
{
	(void)argc;
	return reopen_fd(atoi(argv[1]), argv[2]);
}

int try_opath(int argc, char **argv)
{
	(void)argc;
	int fd = open(argv[1], O_PATH | O_CLOEXEC);
	if (fd < 0)
		return try_setup_failed(errno);
	int r = reopen_fd(fd, argv[2]);
	close(fd);
	return r;
}

int try_chdir_read(int argc, char **argv)
{
	(void)argc;
	if (chdir(argv[1]) < 0)
		return try_setup_failed(errno);
	int fd = open(argv[2], O_RDONLY | O_CLOEXEC);
	int err = errno;
	if (chdir("/") < 0)
		perror("bee-try: chdir /");
	if (fd < 0)
		return try_answer(err);
	return read_fd(fd);
}

int try_cgjoin(int argc, char **argv)
{
	(void)argc;
	int fd = open(argv[1], O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return try_answer(errno);
	char pid[32];
	int n = snprintf(pid, sizeof(pid), "%d\n", getpid());
	ssize_t w = write(fd, pid, (size_t)n);
	int err = w < 0 ? errno : 0;
	close(fd);
	return try_answer(err);
}

/* ---- io_uring, without liburing --------------------------------------------- */

int try_uring_open(int argc, char **argv)
{
	(void)argc;
	struct io_uring_params p;
	memset(&p, 0, sizeof(p));
	int ring = (int)syscall(__NR_io_uring_setup, 4, &p);
	if (ring < 0)
		return try_setup_failed(errno);
	size_t sq_len = p.sq_off.array + p.sq_entries * sizeof(__u32);
	size_t cq_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	if ((p.features & IORING_FEAT_SINGLE_MMAP) && cq_len > sq_len)
		sq_len = cq_len;
	unsigned char *sq = mmap(NULL, sq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring,
				 IORING_OFF_SQ_RING);
	unsigned char *cq = sq;
	if (sq != MAP_FAILED && !(p.features & IORING_FEAT_SINGLE_MMAP))
		cq = mmap(NULL, cq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring,
			  IORING_OFF_CQ_RING);
	struct io_uring_sqe *sqes = mmap(NULL, p.sq_entries * sizeof(struct io_uring_sqe),
					 PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring,
					 IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || sqes == MAP_FAILED) {
		int err = errno;
		close(ring);
		return try_setup_failed(err);
	}
	unsigned mask = *(unsigned *)(sq + p.sq_off.ring_mask);
	unsigned tail = *(unsigned *)(sq + p.sq_off.tail);
	unsigned idx = tail & mask;
	struct io_uring_sqe *e = &sqes[idx];
	memset(e, 0, sizeof(*e));
	e->opcode = IORING_OP_OPENAT;
	e->fd = AT_FDCWD;
	e->addr = (__u64)(unsigned long)argv[1];
	e->open_flags = O_RDONLY | O_CLOEXEC;
	e->user_data = 42;
	((unsigned *)(sq + p.sq_off.array))[idx] = idx;
	__atomic_store_n((unsigned *)(sq + p.sq_off.tail), tail + 1, __ATOMIC_RELEASE);
	int n = (int)syscall(__NR_io_uring_enter, ring, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0);
	if (n < 0) {
		int err = errno;
		close(ring);
		return try_setup_failed(err);
	}
	unsigned head = __atomic_load_n((unsigned *)(cq + p.cq_off.head), __ATOMIC_ACQUIRE);
	unsigned ctail = __atomic_load_n((unsigned *)(cq + p.cq_off.tail), __ATOMIC_ACQUIRE);
	if (head == ctail) {
		close(ring);
		return try_setup_failed(EAGAIN);
	}
	struct io_uring_cqe *cqe =
		(struct io_uring_cqe *)(cq + p.cq_off.cqes) + (head & *(unsigned *)(cq + p.cq_off.ring_mask));
	int res = cqe->res;
	__atomic_store_n((unsigned *)(cq + p.cq_off.head), head + 1, __ATOMIC_RELEASE);
	if (res >= 0)
		close(res);
	close(ring);
	return try_answer(res < 0 ? -res : 0);
}
