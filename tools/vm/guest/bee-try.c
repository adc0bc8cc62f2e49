/* SPDX-License-Identifier: GPL-2.0-only */
/* bee-try: attempt one operation and print what the kernel answered.
 *
 *   bee-try OP [ARG...]       one operation (the list: bee-try --help)
 *   bee-try serve             operations from stdin, one a line (words split
 *                             on spaces), one answer a line on stdout, flushed
 *                             each time; ends at EOF with status 0
 *
 * Prints exactly one word per operation on stdout: "OK", the errno's name
 * ("EACCES"), SETUP:<errno> when a preparing step failed (try.h), or a
 * word the operation documents. So a guest test compares words, never
 * message texts. Exit status of one operation: 0 OK, 1 anything else,
 * 2 bad usage (with a message on stderr and the word USAGE).
 *
 * serve is how a session is driven from outside: the test starts
 * `bee-load run PACK -- /path/of/a/copy/of/bee-try serve` with stdin and
 * stdout on pipes, asks one operation at a time, and can act outside the
 * session between two of them. Besides the operations of try_fs.c,
 * try_exec.c and try_net.c, it answers
 *
 *   env NAME                  NAME's value in our environment, or UNSET
 *   pid                       our pid
 *   sleep SECONDS             sleeps, then OK
 */
#include "try.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int try_env(int argc, char **argv)
{
	(void)argc;
	const char *v = getenv(argv[1]);
	puts(v ? (*v ? v : "EMPTY") : "UNSET");
	return 0;
}

static int try_pid(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	printf("%d\n", getpid());
	return 0;
}

static int try_sleep(int argc, char **argv)
{
	(void)argc;
	usleep((useconds_t)(atof(argv[1]) * 1e6));
	return try_answer(0);
}

struct op {
	const char *name;
	int min, max;           /* arguments after the name; max -1: any */
	try_fn fn;
	const char *args;
};

static const struct op ops[] = {
	{ "open", 1, 2, try_open, "PATH [r|w|rw|wt|a|c|n]" },
	{ "read", 1, 1, try_read, "PATH" },
	{ "symlink", 2, 2, try_symlink, "TARGET LINK" },
	{ "link", 2, 2, try_link, "OLD NEW" },
	{ "rename", 2, 2, try_rename, "OLD NEW" },
	{ "unlink", 1, 1, try_unlink, "PATH" },
	{ "truncate", 1, 1, try_truncate, "PATH" },
	{ "mkdir", 1, 1, try_mkdir, "PATH" },
	{ "procfd", 3, 3, try_procfd, "PATH MODE1 MODE2" },
	{ "reopen", 2, 2, try_reopen, "FD MODE" },
	{ "opath", 2, 2, try_opath, "PATH MODE" },
	{ "chdir-read", 2, 2, try_chdir_read, "DIR REL" },
	{ "cgjoin", 1, 1, try_cgjoin, "CGROUP_PROCS_FILE" },
	{ "uring-open", 1, 1, try_uring_open, "PATH" },
	{ "exec", 1, -1, try_exec, "PATH [ARG...]" },
	{ "run", 1, -1, try_run, "PATH [ARG...]" },
	{ "execveat", 2, 2, try_execveat, "DIR NAME" },
	{ "fexecve", 2, 2, try_fexecve, "PATH opath|r" },
	{ "memfd-exec", 1, 1, try_memfd_exec, "SRC" },
	{ "mmapx", 1, 1, try_mmapx, "PATH" },
	{ "mprotectx", 1, 1, try_mprotectx, "PATH" },
	{ "ptrace", 1, 1, try_ptrace, "PID" },
	{ "nocap-sleep", 0, 0, try_nocap_sleep, "" },
	{ "unshare-user", 0, 0, try_unshare_user, "" },
	{ "bpf-link-detach", 1, 1, try_bpf_link_detach, "PIN" },
	{ "bpf-prog-detach", 1, 1, try_bpf_prog_detach, "CGROUP_DIR" },
	{ "bpf-link-ids", 0, 0, try_bpf_link_ids, "" },
	{ "bpf-net-grant", 2, 2, try_bpf_net_grant, "PIN ADDR4" },
	{ "connect", 1, 2, try_connect, "ADDR:PORT [tcp|udp]" },
	{ "sendto", 1, 1, try_sendto, "ADDR:PORT" },
	{ "csendto", 2, 2, try_csendto, "CONNECT_ADDR:PORT SEND_ADDR:PORT" },
	{ "bind", 1, 2, try_bind, "ADDR:PORT [tcp|udp]" },
	{ "listen", 0, 0, try_listen, "" },
	{ "socket", 3, 3, try_socket, "FAMILY TYPE PROTO" },
	{ "unix-connect", 1, 1, try_unix_connect, "PATH" },
	{ "unix-self", 1, 1, try_unix_self, "PATH" },
	{ "chmod-to", 2, 2, try_chmod_to, "PATH OCTAL_MODE" },
	{ "chown-to", 3, 3, try_chown_to, "PATH UID GID" },
	{ "utimes-set", 1, 1, try_utimes_set, "PATH" },
	{ "touch", 1, 1, try_touch, "PATH" },
	{ "acl-set", 1, 1, try_acl_set, "PATH" },
	{ "acl-default", 1, 1, try_acl_default, "DIR" },
	{ "xattr-rm", 2, 2, try_xattr_rm, "PATH NAME" },
	{ "xattr-get", 2, 2, try_xattr_get, "PATH NAME" },
	{ "xattr-list", 1, 1, try_xattr_list, "PATH" },
	{ "stat", 1, 1, try_stat, "PATH" },
	{ "fstat-opath", 1, 1, try_fstat_opath, "PATH" },
	{ "list", 1, 1, try_list, "DIR" },
	{ "inotify", 1, 1, try_inotify, "PATH" },
	{ "fanotify", 1, 1, try_fanotify, "PATH" },
	{ "write", 2, 2, try_write, "FILE TEXT" },
	{ "append", 2, 2, try_append, "FILE TEXT" },
	{ "pidfd", 1, 1, try_pidfd, "PID" },
	{ "renice", 1, 1, try_renice, "PID" },
	{ "uid", 0, 0, try_uid, "" },
	{ "uid-sleep", 2, 2, try_uid_sleep, "UID GID" },
	{ "daemon", 0, 0, try_daemon, "" },
	{ "personality", 1, 1, try_personality, "PERSONA" },
	{ "personality-rx", 0, 0, try_personality_rx, "" },
	{ "perf", 0, 0, try_perf, "" },
	{ "uring-setup", 0, 0, try_uring_setup, "" },
	{ "unshare", 1, 1, try_unshare, "user|mount|net|pid|ipc|uts|cgroup" },
	{ "clone", 1, 1, try_clone, "user|mount|net|pid|ipc|uts|cgroup" },
	{ "clone3", 0, 0, try_clone3, "" },
	{ "keyctl", 0, 0, try_keyctl, "" },
	{ "userfaultfd", 0, 0, try_userfaultfd, "" },
	{ "handle", 1, 1, try_handle, "PATH" },
	{ "mount", 1, 1, try_mount, "DIR" },
	{ "fdrecv", 1, 1, try_fdrecv, "SOCK" },
	{ "fdrecv-connect", 2, 2, try_fdrecv_connect, "SOCK PATH" },
	/* try_guard.c */
	{ "chmod", 1, 1, try_chmod, "PATH" },
	{ "chown", 1, 1, try_chown, "PATH" },
	{ "utimes", 1, 1, try_utimes, "PATH" },
	{ "setacl", 1, 1, try_setacl, "PATH" },
	{ "rmacl", 1, 1, try_rmacl, "PATH" },
	{ "kill", 1, 2, try_kill, "PID [SIG]" },
	{ "kill-child", 0, 0, try_kill_child, "" },
	{ "bpf-map-create", 0, 0, try_bpf_map_create, "" },
	{ "bpf-obj-get", 1, 1, try_bpf_obj_get, "PIN" },
	{ "recvfd", 1, 1, try_recvfd, "SOCK" },
	{ "sendfd", 2, 2, try_sendfd, "SOCK PATH" },
	{ "env", 1, 1, try_env, "NAME" },
	{ "pid", 0, 0, try_pid, "" },
	{ "sleep", 1, 1, try_sleep, "SECONDS" },
};

static void usage_list(FILE *f)
{
	fprintf(f, "usage: bee-try OP [ARG...] | bee-try serve\n");
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		fprintf(f, "       bee-try %s %s\n", ops[i].name, ops[i].args);
}

static int run_op(int argc, char **argv)
{
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		const struct op *o = &ops[i];
		if (strcmp(argv[0], o->name) != 0)
			continue;
		if (argc - 1 < o->min || (o->max >= 0 && argc - 1 > o->max)) {
			fprintf(stderr, "bee-try: usage: bee-try %s %s\n", o->name, o->args);
			puts("USAGE");
			return 2;
		}
		return o->fn(argc, argv);
	}
	fprintf(stderr, "bee-try: unknown operation '%s'\n", argv[0]);
	usage_list(stderr);
	puts("USAGE");
	return 2;
}

/* One operation a line until EOF. */
static int serve(void)
{
	char line[4096];
	setvbuf(stdout, NULL, _IOLBF, 0);
	while (fgets(line, sizeof(line), stdin)) {
		char *argv[64];
		int argc = 0;
		for (char *save = NULL, *w = strtok_r(line, " \t\n", &save); w && argc < 63;
		     w = strtok_r(NULL, " \t\n", &save))
			argv[argc++] = w;
		argv[argc] = NULL;
		if (argc == 0) {
			puts("USAGE");
			continue;
		}
		run_op(argc, argv);
		fflush(stdout);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage_list(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help")) {
		usage_list(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "serve") && argc == 2)
		return serve();
	int r = run_op(argc - 1, argv + 1);
	fflush(stdout);
	return r;
}
