/* SPDX-License-Identifier: GPL-2.0-only */
/* bee-hookbench: the cost, per call, of system calls that reach the global
 * BPF LSM programs (bpf/bee_guard.bpf.h), for tools/vm/tests/73-guard-bench.sh
 * to compare with and without a session live.
 *
 *   bee-hookbench LABEL [N]
 *
 * Prints one line per call, `BEE-BENCH LABEL CALL NS`, NS the best of five
 * rounds of N calls (default 100000) in nanoseconds per call:
 *   kill0     kill(getpid(), 0)                      task_kill
 *   chmod     chmod(FILE, 0644), its mode already    path_chmod, inode_setattr
 *   utimes    utimensat(FILE, NULL)                  inode_setattr
 *   stat      stat(FILE)                             inode_getattr
 *   getpid    getpid()                               none: the baseline
 * FILE is a file of its own in the current directory.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static const char file[] = "bee-hookbench.file";

static double now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int call(int which)
{
	switch (which) {
	case 0:
		return kill(getpid(), 0);
	case 1:
		return chmod(file, 0644);
	case 2:
		return utimensat(AT_FDCWD, file, NULL, 0);
	case 3: {
		struct stat st;
		return stat(file, &st);
	}
	default:
		return (int)syscall(SYS_getpid) < 0;
	}
}

int main(int argc, char **argv)
{
	static const char *const names[] = { "kill0", "chmod", "utimes", "stat", "getpid" };
	long n = argc > 2 ? atol(argv[2]) : 100000;
	if (argc < 2 || n <= 0) {
		fprintf(stderr, "usage: bee-hookbench LABEL [N]\n");
		return 2;
	}
	int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		perror("bee-hookbench: cannot create its file");
		return 1;
	}
	close(fd);
	for (int w = 0; w < (int)(sizeof(names) / sizeof(names[0])); w++) {
		double best = 0;
		for (int round = 0; round < 5; round++) {
			double t0 = now_ns();
			for (long i = 0; i < n; i++)
				if (call(w) != 0) {
					perror(names[w]);
					return 1;
				}
			double per = (now_ns() - t0) / (double)n;
			if (round == 0 || per < best)
				best = per;
		}
		printf("BEE-BENCH %s %s %.1f\n", argv[1], names[w], best);
	}
	unlink(file);
	return 0;
}
