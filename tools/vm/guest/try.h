/* SPDX-License-Identifier: GPL-2.0-only */
/* try.h: the operations of bee-try, each of which attempts one thing and
 * prints one word: "OK", the errno's name ("EACCES"), or a word the
 * operation documents ("READ:text", "EXIT127", "UNSET").
 *
 * A failure of a step that only prepares the attempt (the file to copy
 * cannot be read, a socket cannot be made) prints "SETUP:<errno>" instead,
 * so a test can never mistake a broken set-up for a refusal.
 *
 * try_fs.c     files: open, read, links, renames, /proc reopen, O_PATH,
 *              cgroup.procs, io_uring openat
 * try_exec.c   programs: exec, run, execveat, fexecve, memfd, mmap and
 *              mprotect with PROT_EXEC, ptrace, user namespaces, bpf()
 * try_net.c    sockets: connect, sendto, bind, listen, families, AF_UNIX
 * try_meta.c   metadata and what a directory shows: chmod, chown, times,
 *              ACLs and xattrs, stat, listing, inotify, fanotify, writes of
 *              one line (cgroup control files, audit logs)
 * try_proc.c   other processes: kill, pidfd_open, setpriority, users, a
 *              daemonised grandchild
 * try_sys.c    the system call groups of runtime/bee_syscalls.h: personality,
 *              perf_event_open, bpf, io_uring, namespaces, keyrings,
 *              userfaultfd, file handles, mount
 * try_fdpass.c descriptors passed in over SCM_RIGHTS (bee-fdsend sends them)
 * try_guard.c  metadata, descriptors passed in, signals, bpf(2): what the
 *              global BPF LSM programs guard
 */
#ifndef BEE_VM_TRY_H
#define BEE_VM_TRY_H

/* Prints the word for err (0: "OK") and returns 0 for OK, 1 otherwise. */
int try_answer(int err);
/* Prints "SETUP:<errno name>" and returns 1. */
int try_setup_failed(int err);
/* The errno's name, "E<n>" for one without a name. */
const char *try_errname(int err, char *buf, unsigned size);

struct sockaddr_un;
/* The address of an AF_UNIX path: 0, or -ENAMETOOLONG. */
int try_unix_addr(const char *path, struct sockaddr_un *a);
/* A stream socket listening on path (an old one there unlinked): 0 with
 * *fd, or the errno of the step that failed. */
int try_unix_listen(const char *path, int *fd);

/* An operation: argv[0] is its name, argc counts it. */
typedef int (*try_fn)(int argc, char **argv);

int try_open(int argc, char **argv);
int try_read(int argc, char **argv);
int try_symlink(int argc, char **argv);
int try_link(int argc, char **argv);
int try_rename(int argc, char **argv);
int try_unlink(int argc, char **argv);
int try_truncate(int argc, char **argv);
int try_mkdir(int argc, char **argv);
int try_procfd(int argc, char **argv);
int try_reopen(int argc, char **argv);
int try_opath(int argc, char **argv);
int try_chdir_read(int argc, char **argv);
int try_cgjoin(int argc, char **argv);
int try_uring_open(int argc, char **argv);

int try_exec(int argc, char **argv);
int try_run(int argc, char **argv);
int try_execveat(int argc, char **argv);
int try_fexecve(int argc, char **argv);
int try_memfd_exec(int argc, char **argv);
int try_mmapx(int argc, char **argv);
int try_mprotectx(int argc, char **argv);
int try_ptrace(int argc, char **argv);
int try_nocap_sleep(int argc, char **argv);
int try_unshare_user(int argc, char **argv);
int try_bpf_link_detach(int argc, char **argv);
int try_bpf_prog_detach(int argc, char **argv);
int try_bpf_link_ids(int argc, char **argv);
int try_bpf_net_grant(int argc, char **argv);

int try_connect(int argc, char **argv);
int try_sendto(int argc, char **argv);
int try_csendto(int argc, char **argv);
int try_bind(int argc, char **argv);
int try_listen(int argc, char **argv);
int try_socket(int argc, char **argv);
int try_unix_connect(int argc, char **argv);
int try_unix_self(int argc, char **argv);

int try_chmod_to(int argc, char **argv);
int try_chown_to(int argc, char **argv);
int try_utimes_set(int argc, char **argv);
int try_touch(int argc, char **argv);
int try_acl_set(int argc, char **argv);
int try_acl_default(int argc, char **argv);
int try_xattr_rm(int argc, char **argv);
int try_xattr_get(int argc, char **argv);
int try_xattr_list(int argc, char **argv);
int try_stat(int argc, char **argv);
int try_fstat_opath(int argc, char **argv);
int try_list(int argc, char **argv);
int try_inotify(int argc, char **argv);
int try_fanotify(int argc, char **argv);
int try_write(int argc, char **argv);
int try_append(int argc, char **argv);

int try_pidfd(int argc, char **argv);
int try_renice(int argc, char **argv);
int try_uid(int argc, char **argv);
int try_uid_sleep(int argc, char **argv);
int try_daemon(int argc, char **argv);

int try_personality(int argc, char **argv);
int try_personality_rx(int argc, char **argv);
int try_perf(int argc, char **argv);
int try_uring_setup(int argc, char **argv);
int try_unshare(int argc, char **argv);
int try_clone(int argc, char **argv);
int try_clone3(int argc, char **argv);
int try_keyctl(int argc, char **argv);
int try_userfaultfd(int argc, char **argv);
int try_handle(int argc, char **argv);
int try_mount(int argc, char **argv);

int try_fdrecv(int argc, char **argv);
int try_fdrecv_connect(int argc, char **argv);
/* try_guard.c: what the global BPF LSM programs guard */
int try_chmod(int argc, char **argv);
int try_chown(int argc, char **argv);
int try_utimes(int argc, char **argv);
int try_setacl(int argc, char **argv);
int try_rmacl(int argc, char **argv);
int try_kill(int argc, char **argv);
int try_kill_child(int argc, char **argv);
int try_bpf_map_create(int argc, char **argv);
int try_bpf_obj_get(int argc, char **argv);
int try_recvfd(int argc, char **argv);
int try_sendfd(int argc, char **argv);

/* Opens PATH with a mode word: r, w, rw, wt (O_TRUNC), a (O_APPEND),
 * c (O_CREAT, write), n (O_ACCMODE 3: neither read nor write). Returns
 * the fd or -1 with errno; -2 for a bad mode word. */
int try_open_mode(const char *path, const char *mode, int extra_flags);

#endif
