/* SPDX-License-Identifier: GPL-2.0-only */
/* try_guard.c: bee-try's operations on what the global BPF LSM programs
 * guard (bpf/bee_guard.bpf.h): metadata, descriptors passed in, signals,
 * bpf(2). tools/vm/tests/72-guard.sh drives them.
 *
 *   chmod PATH            chmod(PATH, 0644)
 *   chown PATH            chown(PATH) to its own owner (a change of nothing
 *                         still asks)
 *   utimes PATH           utimensat(PATH, NULL): both times to now
 *   setacl PATH           setxattr system.posix_acl_access (a minimal ACL)
 *   rmacl PATH            removexattr system.posix_acl_access
 *   kill PID [SIG]        kill(PID, SIG), SIG 0 unless given
 *   kill-child            forks a child, SIGKILLs it, reaps it
 *   bpf-map-create        bpf(BPF_MAP_CREATE) of a one-entry array
 *   bpf-obj-get PIN       bpf(BPF_OBJ_GET) of a pinned object
 *   recvfd SOCK           listens on the AF_UNIX path SOCK, takes one
 *                         descriptor over SCM_RIGHTS and reads a byte from it:
 *                         OK, NOFD (none arrived: the kernel refused it), or
 *                         the read's errno
 *   sendfd SOCK PATH      (outside a session) opens PATH for reading and sends
 *                         it to SOCK, retrying the connect for 10 s
 */
#include "try.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

int try_chmod(int argc, char **argv)
{
	(void)argc;
	return try_answer(chmod(argv[1], 0644) < 0 ? errno : 0);
}

int try_chown(int argc, char **argv)
{
	(void)argc;
	struct stat st;
	if (stat(argv[1], &st) < 0)
		return try_setup_failed(errno);
	return try_answer(chown(argv[1], st.st_uid, st.st_gid) < 0 ? errno : 0);
}

int try_utimes(int argc, char **argv)
{
	(void)argc;
	return try_answer(utimensat(AT_FDCWD, argv[1], NULL, 0) < 0 ? errno : 0);
}

/* An ACL of user::rw- group::r-- other::r-- (linux/posix_acl_xattr.h). */
struct acl_entry {
	uint16_t tag, perm;
	uint32_t id;
};

int try_setacl(int argc, char **argv)
{
	(void)argc;
	struct {
		uint32_t version;
		struct acl_entry e[3];
	} acl = { 2, { { 0x01, 6, ~0u }, { 0x04, 4, ~0u }, { 0x20, 4, ~0u } } };
	return try_answer(setxattr(argv[1], "system.posix_acl_access", &acl, sizeof(acl), 0) < 0 ? errno
												  : 0);
}

int try_rmacl(int argc, char **argv)
{
	(void)argc;
	int r = removexattr(argv[1], "system.posix_acl_access");
	/* no ACL to remove: the call was allowed all the same */
	return try_answer(r < 0 && errno != ENODATA ? errno : 0);
}

int try_kill(int argc, char **argv)
{
	int sig = argc > 2 ? atoi(argv[2]) : 0;
	return try_answer(kill((pid_t)atoi(argv[1]), sig) < 0 ? errno : 0);
}

int try_kill_child(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	pid_t pid = fork();
	if (pid < 0)
		return try_setup_failed(errno);
	if (pid == 0) {
		pause();
		_exit(0);
	}
	int err = kill(pid, SIGKILL) < 0 ? errno : 0;
	if (err)
		kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return try_answer(err);
}

int try_bpf_map_create(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "bee_try", 4, 4, 1, NULL);
	if (fd < 0)
		return try_answer(errno);
	close(fd);
	return try_answer(0);
}

int try_bpf_obj_get(int argc, char **argv)
{
	(void)argc;
	int fd = bpf_obj_get(argv[1]);
	if (fd < 0)
		return try_answer(errno);
	close(fd);
	return try_answer(0);
}


int try_recvfd(int argc, char **argv)
{
	(void)argc;
	int s, c = -1, fd = -1, word, err = try_unix_listen(argv[1], &s);
	if (err)
		return try_setup_failed(err);
	if ((c = accept4(s, NULL, NULL, SOCK_CLOEXEC)) < 0) {
		word = try_setup_failed(errno);
		close(s);
		return word;
	}
	char byte, cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf) };
	if (recvmsg(c, &m, MSG_CMSG_CLOEXEC) < 0) {
		word = try_setup_failed(errno);
	} else {
		struct cmsghdr *h = CMSG_FIRSTHDR(&m);
		if (h && h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_RIGHTS &&
		    h->cmsg_len == CMSG_LEN(sizeof(int)))
			memcpy(&fd, CMSG_DATA(h), sizeof(int));
		if (fd < 0) {
			puts("NOFD");
			word = 1;
		} else {
			word = try_answer(read(fd, &byte, 1) < 0 ? errno : 0);
			close(fd);
		}
	}
	close(c);
	close(s);
	unlink(argv[1]);
	return word;
}

int try_sendfd(int argc, char **argv)
{
	(void)argc;
	struct sockaddr_un a;
	int fd = open(argv[2], O_RDONLY | O_CLOEXEC), s = -1, err = 0;
	if (fd < 0 || try_unix_addr(argv[1], &a) < 0)
		return try_setup_failed(fd < 0 ? errno : ENAMETOOLONG);
	for (int i = 0; i < 100; i++) {
		s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof(a)) == 0)
			break;
		close(s);
		s = -1;
		usleep(100 * 1000);
	}
	if (s < 0) {
		close(fd);
		return try_setup_failed(ETIMEDOUT);
	}
	char byte = 'x', cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *h = CMSG_FIRSTHDR(&m);
	h->cmsg_level = SOL_SOCKET;
	h->cmsg_type = SCM_RIGHTS;
	h->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(h), &fd, sizeof(int));
	if (sendmsg(s, &m, 0) < 0)
		err = errno;
	close(s);
	close(fd);
	return try_answer(err);
}
