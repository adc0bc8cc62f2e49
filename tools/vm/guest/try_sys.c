/* SPDX-License-Identifier: GPL-2.0-only */
/* try_sys.c: bee-try's system calls that no confined tool needs
 * (try.h): each group of runtime/bee_syscalls.h that a session refuses
 * unless its policy names it, tried the way an escape would use it.
 *
 *   personality PERSONA       personality(2) of a number (0: PER_LINUX)
 *   personality-rx            personality(READ_IMPLIES_EXEC), then an
 *                             anonymous PROT_READ mapping: "EXEC" when it
 *                             came out executable, the errno otherwise, OK
 *                             when the persona was set but did nothing
 *   perf                      perf_event_open of a software counter of ours
 *   uring-setup               io_uring_setup(2)
 *   unshare NS                unshare(2) of one namespace: user, mount, net,
 *                             pid, ipc, uts, cgroup
 *   clone NS                  clone(2) with that namespace's flag (the child
 *                             exits at once)
 *   clone3                    clone3(2) without any flag (a plain fork)
 *   keyctl                    add_key(2) of a user key to our session keyring
 *   userfaultfd               userfaultfd(2)
 *   handle PATH               name_to_handle_at(2)
 *   mount DIR                 mount(2) of a tmpfs on DIR (unmounted again)
 */
#include "try.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

int try_personality(int argc, char **argv)
{
	(void)argc;
	unsigned long p = strtoul(argv[1], NULL, 0);
	return try_answer(personality(p) < 0 ? errno : 0);
}

/* Whether our mapping at addr is executable, from /proc/self/maps. */
static int mapping_exec(void *addr)
{
	FILE *f = fopen("/proc/self/maps", "re");
	if (!f)
		return -errno;
	char line[512];
	int x = -ENOENT;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char perms[8];
		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) == 3 && (unsigned long)addr >= lo &&
		    (unsigned long)addr < hi) {
			x = perms[2] == 'x';
			break;
		}
	}
	fclose(f);
	return x;
}

int try_personality_rx(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	if (personality(READ_IMPLIES_EXEC) < 0)
		return try_answer(errno);
	void *m = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int x = m == MAP_FAILED ? -errno : mapping_exec(m);
	if (m != MAP_FAILED)
		munmap(m, 4096);
	personality(PER_LINUX);
	if (x < 0)
		return try_setup_failed(-x);
	if (x) {
		puts("EXEC");
		return 1;
	}
	return try_answer(0);
}

int try_perf(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.disabled = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return try_answer(errno);
	close(fd);
	return try_answer(0);
}

int try_uring_setup(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	unsigned char params[120];   /* struct io_uring_params */
	memset(params, 0, sizeof(params));
	int fd = (int)syscall(__NR_io_uring_setup, 2, params);
	if (fd < 0)
		return try_answer(errno);
	close(fd);
	return try_answer(0);
}

static const struct {
	const char *name;
	int flag;
} namespaces[] = {
	{ "user", CLONE_NEWUSER }, { "mount", CLONE_NEWNS }, { "net", CLONE_NEWNET },
	{ "pid", CLONE_NEWPID },   { "ipc", CLONE_NEWIPC },  { "uts", CLONE_NEWUTS },
	{ "cgroup", CLONE_NEWCGROUP },
};

static int ns_flag(const char *name)
{
	for (size_t i = 0; i < sizeof(namespaces) / sizeof(namespaces[0]); i++)
		if (!strcmp(name, namespaces[i].name))
			return namespaces[i].flag;
	fprintf(stderr, "bee-try: unknown namespace '%s'\n", name);
	puts("USAGE");
	return 0;
}

int try_unshare(int argc, char **argv)
{
	(void)argc;
	int f = ns_flag(argv[1]);
	if (!f)
		return 2;
	/* in a child, so that a namespace that was made does not change us */
	pid_t c = fork();
	if (c < 0)
		return try_setup_failed(errno);
	if (c == 0)
		_exit(unshare(f) < 0 ? errno : 0);
	int st;
	if (waitpid(c, &st, 0) < 0 || !WIFEXITED(st))
		return try_setup_failed(ECHILD);
	return try_answer(WEXITSTATUS(st));
}

/* The word of a raw clone's return c: the child leaves at once. */
static int clone_answer(long c)
{
	if (c < 0)
		return try_answer(errno);
	if (c == 0)
		_exit(0);
	waitpid((pid_t)c, NULL, 0);
	return try_answer(0);
}

int try_clone(int argc, char **argv)
{
	(void)argc;
	int f = ns_flag(argv[1]);
	if (!f)
		return 2;
	long c = syscall(SYS_clone, (unsigned long)(f | SIGCHLD), NULL, NULL, NULL, NULL);
	return clone_answer(c);
}

int try_clone3(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	struct clone_args a;
	memset(&a, 0, sizeof(a));
	a.exit_signal = SIGCHLD;
	long c = syscall(SYS_clone3, &a, sizeof(a));
	return clone_answer(c);
}

int try_keyctl(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	long k = syscall(SYS_add_key, "user", "bee-escape", "x", 1, -3 /* KEY_SPEC_SESSION_KEYRING */);
	return try_answer(k < 0 ? errno : 0);
}

int try_userfaultfd(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | 1 /* UFFD_USER_MODE_ONLY */);
	if (fd < 0)
		return try_answer(errno);
	close(fd);
	return try_answer(0);
}

int try_handle(int argc, char **argv)
{
	(void)argc;
	struct {
		struct file_handle h;
		unsigned char bytes[128];
	} fh;
	int mnt;
	fh.h.handle_bytes = sizeof(fh.bytes);
	return try_answer(name_to_handle_at(AT_FDCWD, argv[1], &fh.h, &mnt, 0) < 0 ? errno : 0);
}

int try_mount(int argc, char **argv)
{
	(void)argc;
	if (mount("tmpfs", argv[1], "tmpfs", 0, "size=64k") < 0)
		return try_answer(errno);
	umount2(argv[1], MNT_DETACH);
	return try_answer(0);
}
