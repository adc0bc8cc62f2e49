/* SPDX-License-Identifier: GPL-2.0-only */
/* try_exec.c: bee-try's program operations (try.h).
 *
 *   exec PATH [ARG...]        fork, execve(2); OK once the exec succeeded
 *   run PATH [ARG...]         fork, execve(2), wait: OK for exit status 0,
 *                             EXIT<n> or SIG<n> otherwise, the errno if the
 *                             exec itself failed
 *   execveat DIR NAME         execveat(2) of NAME relative to DIR (an O_PATH fd)
 *   fexecve PATH opath|r      execveat(fd, "", AT_EMPTY_PATH) of PATH opened
 *                             with O_PATH or O_RDONLY
 *   memfd-exec SRC            SRC's bytes into a memfd, then execveat of the memfd
 *   mmapx PATH                mmap PROT_READ|PROT_EXEC of PATH opened read-only
 *   mprotectx PATH            mmap PROT_READ, then mprotect adding PROT_EXEC
 *   ptrace PID                PTRACE_ATTACH (detached again at once)
 *   nocap-sleep               drop every capability, then sleep until killed
 *                             (an outside process that is no more privileged
 *                             than a session's tool)
 *   unshare-user              unshare(CLONE_NEWUSER)
 *   bpf-link-detach PIN       BPF_OBJ_GET of a pinned link, then BPF_LINK_DETACH
 *   bpf-prog-detach CGDIR     BPF_PROG_DETACH of the cgroup's inet4 connect programs
 *   bpf-link-ids              BPF_LINK_GET_NEXT_ID, GET_FD_BY_ID, LINK_DETACH of each
 *   bpf-net-grant PIN ADDR    BPF_OBJ_GET of a pinned bee_net4 map, then
 *                             BPF_MAP_UPDATE_ELEM of an entry granting tcp
 *                             connects to ADDR (IPv4) on every port
 *
 * Children of exec and run keep stderr, get stderr as stdout (the word
 * stream stays one word a line) and have stdin closed (so they cannot eat
 * bee-try serve's requests).
 */
#include "try.h"

#include "bee_net.h"

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* How a child execs: one of these, with its argument. */
enum how { BY_PATH, BY_DIRFD, BY_FD };

struct spawn {
	enum how how;
	int fd;                 /* BY_DIRFD: the directory; BY_FD: the file */
	const char *path;       /* BY_PATH: the path; BY_DIRFD: the name */
	char **argv;
};

/* Forks, execs as s says; the child reports a failed exec through a
 * close-on-exec pipe. Returns the child's pid and *err (0: the exec
 * succeeded), or -1. */
static pid_t spawn_child(const struct spawn *s, int *err)
{
	int p[2];
	*err = 0;
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	pid_t pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		close(p[0]);
		close(STDIN_FILENO);
		dup2(STDERR_FILENO, STDOUT_FILENO);
		switch (s->how) {
		case BY_PATH:
			execve(s->path, s->argv, environ);
			break;
		case BY_DIRFD:
			syscall(__NR_execveat, s->fd, s->path, s->argv, environ, 0);
			break;
		case BY_FD:
			syscall(__NR_execveat, s->fd, "", s->argv, environ, AT_EMPTY_PATH);
			break;
		}
		int e = errno;
		if (write(p[1], &e, sizeof(e)) != sizeof(e))
			_exit(127);
		_exit(127);
	}
	close(p[1]);
	ssize_t n;
	do
		n = read(p[0], err, sizeof(*err));
	while (n < 0 && errno == EINTR);
	close(p[0]);
	if (n != (ssize_t)sizeof(*err))
		*err = 0;
	return pid;
}

static int wait_child(pid_t pid)
{
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return status;
}

/* exec's word: whether the exec succeeded; the child is reaped. */
static int spawn_answer(const struct spawn *s)
{
	int err;
	pid_t pid = spawn_child(s, &err);
	if (pid < 0)
		return try_setup_failed(errno);
	wait_child(pid);
	return try_answer(err);
}

int try_exec(int argc, char **argv)
{
	(void)argc;
	struct spawn s = { .how = BY_PATH, .path = argv[1], .argv = argv + 1 };
	return spawn_answer(&s);
}

int try_run(int argc, char **argv)
{
	(void)argc;
	struct spawn s = { .how = BY_PATH, .path = argv[1], .argv = argv + 1 };
	int err;
	pid_t pid = spawn_child(&s, &err);
	if (pid < 0)
		return try_setup_failed(errno);
	int status = wait_child(pid);
	if (err)
		return try_answer(err);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return try_answer(0);
	if (WIFEXITED(status))
		printf("EXIT%d\n", WEXITSTATUS(status));
	else
		printf("SIG%d\n", WTERMSIG(status));
	return 1;
}

int try_execveat(int argc, char **argv)
{
	(void)argc;
	int dfd = open(argv[1], O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return try_setup_failed(errno);
	char *args[] = { argv[2], NULL };
	struct spawn s = { .how = BY_DIRFD, .fd = dfd, .path = argv[2], .argv = args };
	int r = spawn_answer(&s);
	close(dfd);
	return r;
}

int try_fexecve(int argc, char **argv)
{
	(void)argc;
	int flags = !strcmp(argv[2], "opath") ? O_PATH : O_RDONLY;
	int fd = open(argv[1], flags | O_CLOEXEC);
	if (fd < 0)
		return try_setup_failed(errno);
	char *args[] = { argv[1], NULL };
	struct spawn s = { .how = BY_FD, .fd = fd, .argv = args };
	int r = spawn_answer(&s);
	close(fd);
	return r;
}

int try_memfd_exec(int argc, char **argv)
{
	(void)argc;
	int src = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (src < 0)
		return try_setup_failed(errno);
	/* not MFD_CLOEXEC: execveat of a close-on-exec fd works for ELF, but
	 * keep the memfd plain so nothing but the hooks can refuse it */
	int mfd = (int)syscall(__NR_memfd_create, "bee-memfd", 0);
	if (mfd < 0) {
		int err = errno;
		close(src);
		return try_setup_failed(err);
	}
	char buf[65536];
	ssize_t n;
	while ((n = read(src, buf, sizeof(buf))) > 0) {
		if (write(mfd, buf, (size_t)n) != n) {
			n = -1;
			break;
		}
	}
	int err = n < 0 ? errno : 0;
	close(src);
	if (err) {
		close(mfd);
		return try_setup_failed(err);
	}
	char *args[] = { "bee-memfd", NULL };
	struct spawn s = { .how = BY_FD, .fd = mfd, .argv = args };
	int r = spawn_answer(&s);
	close(mfd);
	return r;
}

int try_mmapx(int argc, char **argv)
{
	(void)argc;
	int fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return try_setup_failed(errno);
	void *m = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	int err = m == MAP_FAILED ? errno : 0;
	if (m != MAP_FAILED)
		munmap(m, 4096);
	close(fd);
	return try_answer(err);
}

int try_mprotectx(int argc, char **argv)
{
	(void)argc;
	int fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return try_setup_failed(errno);
	void *m = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return try_setup_failed(errno);
	int err = mprotect(m, 4096, PROT_READ | PROT_EXEC) < 0 ? errno : 0;
	munmap(m, 4096);
	return try_answer(err);
}

int try_ptrace(int argc, char **argv)
{
	(void)argc;
	pid_t pid = (pid_t)atoi(argv[1]);
	if (ptrace(PTRACE_ATTACH, pid, NULL, NULL) < 0)
		return try_answer(errno);
	int status;
	waitpid(pid, &status, __WALL);
	ptrace(PTRACE_DETACH, pid, NULL, NULL);
	return try_answer(0);
}

int try_nocap_sleep(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	for (int c = 0; c <= 63; c++)
		prctl(PR_CAPBSET_DROP, c, 0, 0, 0);
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];
	memset(d, 0, sizeof(d));
	if (syscall(SYS_capset, &h, d) < 0)
		return try_setup_failed(errno);
	printf("SLEEPING:%d\n", getpid());
	fflush(stdout);
	for (;;)
		pause();
}

int try_unshare_user(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return try_answer(unshare(CLONE_NEWUSER) < 0 ? errno : 0);
}

int try_bpf_link_detach(int argc, char **argv)
{
	(void)argc;
	int fd = bpf_obj_get(argv[1]);
	if (fd < 0)
		return try_answer(errno);
	int err = bpf_link_detach(fd) < 0 ? errno : 0;
	close(fd);
	return try_answer(err);
}

int try_bpf_prog_detach(int argc, char **argv)
{
	(void)argc;
	int cg = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cg < 0)
		return try_setup_failed(errno);
	int err = bpf_prog_detach(cg, BPF_CGROUP_INET4_CONNECT) < 0 ? errno : 0;
	close(cg);
	return try_answer(err);
}

int try_bpf_link_ids(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	__u32 id = 0;
	int detached = 0;
	for (;;) {
		if (bpf_link_get_next_id(id, &id) < 0) {
			if (errno == ENOENT)
				break;
			return try_answer(errno);
		}
		int fd = bpf_link_get_fd_by_id(id);
		if (fd < 0)
			return try_answer(errno);
		int r = bpf_link_detach(fd);
		int err = errno;
		close(fd);
		if (r < 0)
			return try_answer(err);
		detached++;
	}
	return try_answer(detached ? 0 : ENOENT);
}

int try_bpf_net_grant(int argc, char **argv)
{
	(void)argc;
	struct bee_net_key4 k;
	struct bee_net_value v;
	struct in_addr a;
	if (inet_pton(AF_INET, argv[2], &a) != 1) {
		fprintf(stderr, "bee-try: bpf-net-grant: '%s' is not an IPv4 address\n", argv[2]);
		puts("USAGE");
		return 2;
	}
	int fd = bpf_obj_get(argv[1]);
	if (fd < 0)
		return try_answer(errno);
	bee_net_key4_init(&k, BEE_NET_CONNECT, BEE_NET_PROTO_TCP, a.s_addr);
	memset(&v, 0, sizeof(v));
	v.nranges = 1;
	v.ranges[0].lo = 0;
	v.ranges[0].hi = 65535;
	int err = bpf_map_update_elem(fd, &k, &v, BPF_ANY) < 0 ? errno : 0;
	close(fd);
	return try_answer(err);
}
