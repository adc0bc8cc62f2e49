/* SPDX-License-Identifier: GPL-2.0-only */
/* try_proc.c: bee-try's operations on other processes (try.h): what a
 * session may do to the processes outside it, and to the launcher.
 *
 *   (kill PID [SIG] is try_guard.c's; PID -1: every process we may signal)
 *   pidfd PID                 pidfd_open(2)
 *   renice PID                setpriority(PRIO_PROCESS, PID, 19)
 *   uid                       "UID:<real uid>:<effective gid>"
 *   uid-sleep UID GID         become UID:GID (setresgid, setresuid), print
 *                             SLEEPING:<pid> and sleep until killed: an outside
 *                             process with the same user as a session's tool
 *   daemon                    fork a grandchild that leaves our session
 *                             (setsid) and sleeps 60 s: "PID:<its pid>" as our
 *                             pid namespace numbers it; it must not outlive
 *                             the session's launcher
 */
#include "try.h"

#include <errno.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

int try_pidfd(int argc, char **argv)
{
	(void)argc;
	int fd = (int)syscall(SYS_pidfd_open, atoi(argv[1]), 0);
	if (fd < 0)
		return try_answer(errno);
	close(fd);
	return try_answer(0);
}

int try_renice(int argc, char **argv)
{
	(void)argc;
	return try_answer(setpriority(PRIO_PROCESS, (id_t)atoi(argv[1]), 19) < 0 ? errno : 0);
}

int try_uid(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	printf("UID:%u:%u\n", (unsigned)getuid(), (unsigned)getegid());
	return 0;
}

int try_uid_sleep(int argc, char **argv)
{
	(void)argc;
	gid_t g = (gid_t)atoi(argv[2]);
	if (setgroups(0, NULL) < 0 || setresgid(g, g, g) < 0 ||
	    setresuid((uid_t)atoi(argv[1]), (uid_t)atoi(argv[1]), (uid_t)atoi(argv[1])) < 0)
		return try_setup_failed(errno);
	printf("SLEEPING:%d\n", getpid());
	fflush(stdout);
	for (;;)
		pause();
}

int try_daemon(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	int p[2];
	if (pipe(p) < 0)
		return try_setup_failed(errno);
	pid_t c = fork();
	if (c < 0)
		return try_setup_failed(errno);
	if (c == 0) {
		close(p[0]);
		setsid();
		pid_t g = fork();
		if (g == 0) {
			close(p[1]);
			for (int fd = 0; fd < 3; fd++)
				close(fd);
			sleep(60);
			_exit(0);
		}
		(void)!write(p[1], &g, sizeof(g));
		_exit(0);
	}
	close(p[1]);
	pid_t g = -1;
	ssize_t n = read(p[0], &g, sizeof(g));
	close(p[0]);
	waitpid(c, NULL, 0);
	if (n != (ssize_t)sizeof(g) || g < 0)
		return try_setup_failed(EAGAIN);
	printf("PID:%d\n", g);
	return 0;
}
