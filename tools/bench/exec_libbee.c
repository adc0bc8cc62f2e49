/* SPDX-License-Identifier: GPL-2.0-only */
/* exec_libbee: what a command into a live session costs a program that
 * embeds libbee (bee_session_exec, no bee-load process of its own),
 * against the same program starting the command bare (fork, execv,
 * wait), in interleaved rounds.
 *
 *   exec_libbee ROUNDS STATE_DIR SID CMD [ARG...]
 *
 * Prints two lines: the median milliseconds of the bare start and of
 * bee_session_exec. Exits 1, saying why, when a round fails or the
 * command's status is not 0. */
#include "libbee.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double bare(char **argv, const int fds[3])
{
	double a = now_ms();
	pid_t pid = fork();
	if (pid == 0) {
		for (int i = 0; i < 3; i++)
			dup2(fds[i], i);
		execv(argv[0], argv);
		_exit(127);
	}
	int st;
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return -1;
	return now_ms() - a;
}

static double in_session(const char *sid, char **argv, const int fds[3], const struct bee_session_opts *o)
{
	struct bee_error e = { 0 };
	int status = -1;
	double a = now_ms();
	if (bee_session_exec(sid, (const char *const *)argv, NULL, fds, o, &status, &e) < 0) {
		fprintf(stderr, "exec_libbee: %s\n", e.msg);
		return -1;
	}
	if (status != 0) {
		fprintf(stderr, "exec_libbee: the command's status is %d\n", status);
		return -1;
	}
	return now_ms() - a;
}

int main(int argc, char **argv)
{
	if (argc < 5) {
		fprintf(stderr, "usage: exec_libbee ROUNDS STATE_DIR SID CMD [ARG...]\n");
		return 2;
	}
	int rounds = atoi(argv[1]);
	if (rounds < 1 || rounds > 10000)
		return 2;
	struct bee_session_opts o = { .sz = sizeof(o), .state_dir = argv[2] };
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	double *ms = calloc(2 * (size_t)rounds, sizeof(*ms));
	if (null < 0 || !ms)
		return 1;
	const int fds[3] = { null, null, null };
	for (int r = 0; r < rounds; r++) {
		if ((ms[r] = bare(argv + 4, fds)) < 0 || (ms[rounds + r] = in_session(argv[3], argv + 4, fds, &o)) < 0)
			return 1;
	}
	for (int k = 0; k < 2; k++) {
		qsort(ms + k * rounds, (size_t)rounds, sizeof(*ms), cmp);
		printf("%.2f\n", ms[k * rounds + rounds / 2]);
	}
	free(ms);
	return 0;
}
