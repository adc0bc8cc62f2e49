/* SPDX-License-Identifier: GPL-2.0-only */
/* audit_seeds.c: writes hand-made ring-buffer records into a directory, the
 * seeds of the audit fuzzer's corpus (tools/fuzz seed): one valid record of
 * each resource kind, and the edges of the format (path_len 0, the longest
 * path, a path_len over the record, bytes that are not UTF-8, values no
 * enumerator has). Usage: audit_seeds DIR */
#include "bee_audit.h"
#include "seed_file.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

/* The file seed-NAME in dir: ev_bytes of the record, then path_bytes of path. */
static int seed_write_bytes(const char *dir, const char *name, const struct bee_audit_event *ev,
			    size_t ev_bytes, const void *path, size_t path_bytes)
{
	return seed_file(dir, name, ev, ev_bytes, path, path_bytes);
}

static int seed_write(const char *dir, const char *name, const struct bee_audit_event *ev,
		      const void *path, size_t path_bytes)
{
	return seed_write_bytes(dir, name, ev, sizeof(*ev), path, path_bytes);
}

static struct bee_audit_event seed_event(unsigned kind, unsigned action, unsigned decision, unsigned resource,
					 unsigned hook)
{
	struct bee_audit_event ev;
	memset(&ev, 0, sizeof(ev));
	ev.ktime_ns = 123456789012ull;
	ev.pid = 4242;
	ev.tid = 4243;
	memcpy(ev.comm, "cargo", 5);
	ev.kind = (__u8)kind;
	ev.action = (__u8)action;
	ev.decision = (__u8)decision;
	ev.reason = BEE_AUDIT_REASON_NOT_GRANTED;
	ev.hook = (__u8)hook;
	ev.resource = (__u8)resource;
	ev.detail = BEE_AUDIT_DETAIL_NONE;
	return ev;
}

/* A literal path and its length (which may hold NUL bytes). */
#define SEED_PATH(dir, name, ev, lit) seed_path(dir, name, ev, lit, sizeof(lit) - 1)

static int seed_path(const char *dir, const char *name, struct bee_audit_event ev, const char *path,
		     size_t len)
{
	ev.path_len = (__u16)len;
	return seed_write(dir, name, &ev, path, len);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: audit_seeds DIR\n");
		return 2;
	}
	const char *dir = argv[1];
	int err = 0;
	struct bee_audit_event ev;

	ev = seed_event(BEE_AUDIT_KIND_FILESYSTEM, BEE_AUDIT_ACTION_READ, BEE_AUDIT_DENY, BEE_AUDIT_RES_PATH,
			BEE_AUDIT_HOOK_FILE_OPEN);
	ev.want = 1;
	ev.detail = 17;
	err |= SEED_PATH(dir, "path-read-deny", ev, "/home/you/.ssh/id_rsa");
	ev.decision = BEE_AUDIT_ALLOW;
	ev.reason = BEE_AUDIT_REASON_GRANTED;
	err |= SEED_PATH(dir, "path-read-allow", ev, "/usr/lib/libc.so.6");
	err |= SEED_PATH(dir, "path-quote-control", ev, "/tmp/a\"b\\c\n\x01\x7f");
	err |= SEED_PATH(dir, "path-bad-utf8", ev, "/tmp/\xc3\x28\xe2\x82\xf0\x9f\x98\x80\xed\xa0\x80\xff");
	/* path_len 0: the file is named by device and inode */
	ev.file.dev = 8u << 20 | 1;
	ev.file.ino = 1234567;
	err |= SEED_PATH(dir, "path-len-zero", ev, "");
	/* the longest path a record carries */
	char *longest = malloc(BEE_AUDIT_PATH_MAX + 1);
	if (!longest)
		return 1;
	memset(longest, 'a', BEE_AUDIT_PATH_MAX + 1);
	longest[0] = '/';
	err |= seed_path(dir, "path-len-max", ev, longest, BEE_AUDIT_PATH_MAX);
	/* refused: one byte over the maximum, and a length beyond the record */
	ev.path_len = BEE_AUDIT_PATH_MAX + 1;
	err |= seed_write(dir, "path-len-over-max", &ev, longest, BEE_AUDIT_PATH_MAX + 1);
	free(longest);
	ev.path_len = 64;
	err |= seed_write(dir, "path-len-past-record", &ev, "/etc/passwd", 11);

	ev = seed_event(BEE_AUDIT_KIND_FILESYSTEM, BEE_AUDIT_ACTION_EXECUTE, BEE_AUDIT_DENY, BEE_AUDIT_RES_FILE,
			BEE_AUDIT_HOOK_BPRM_CHECK);
	ev.reason = BEE_AUDIT_REASON_NOT_PINNED;
	ev.file.dev = 259u << 20 | 3;
	ev.file.ino = 99;
	err |= seed_write(dir, "file-exec", &ev, "", 0);

	ev = seed_event(BEE_AUDIT_KIND_NETWORK, BEE_AUDIT_ACTION_CONNECT, BEE_AUDIT_DENY, BEE_AUDIT_RES_INET,
			BEE_AUDIT_HOOK_CONNECT4);
	ev.net.family = AF_INET;
	ev.net.port = 443;
	ev.net.proto = 6;
	inet_pton(AF_INET, "169.254.169.254", ev.net.addr);
	err |= seed_write(dir, "inet4-connect", &ev, "", 0);
	ev.hook = BEE_AUDIT_HOOK_CONNECT6;
	ev.net.family = AF_INET6;
	ev.net.proto = 17;
	ev.net.port = 53;
	inet_pton(AF_INET6, "2001:db8::1", ev.net.addr);
	err |= seed_write(dir, "inet6-sendmsg", &ev, "", 0);
	ev.action = BEE_AUDIT_ACTION_LISTEN;
	ev.hook = BEE_AUDIT_HOOK_SOCKET_LISTEN;
	ev.reason = BEE_AUDIT_REASON_NOT_BOUND;
	err |= seed_write(dir, "inet6-listen", &ev, "", 0);

	ev = seed_event(BEE_AUDIT_KIND_NETWORK, BEE_AUDIT_ACTION_CONNECT, BEE_AUDIT_DENY, BEE_AUDIT_RES_UNIX,
			BEE_AUDIT_HOOK_UNIX_STREAM_CONNECT);
	ev.reason = BEE_AUDIT_REASON_UNIX_PEER;
	err |= SEED_PATH(dir, "unix-named", ev, "/run/docker.sock");
	err |= SEED_PATH(dir, "unix-abstract", ev, "@bus\0x");
	err |= SEED_PATH(dir, "unix-unnamed", ev, "");

	ev = seed_event(BEE_AUDIT_KIND_NETWORK, BEE_AUDIT_ACTION_CONNECT, BEE_AUDIT_DENY, BEE_AUDIT_RES_SOCKET,
			BEE_AUDIT_HOOK_SOCKET_CREATE);
	ev.reason = BEE_AUDIT_REASON_SOCKET_REFUSED;
	ev.net.family = AF_PACKET;
	ev.net.type = SOCK_RAW;
	ev.net.proto = 3;
	err |= seed_write(dir, "socket-packet", &ev, "", 0);
	ev.net.family = 200;
	ev.net.type = 99;
	err |= seed_write(dir, "socket-unknown-family", &ev, "", 0);

	ev = seed_event(BEE_AUDIT_KIND_PROCESS, BEE_AUDIT_ACTION_READ, BEE_AUDIT_DENY, BEE_AUDIT_RES_PATH,
			BEE_AUDIT_HOOK_PTRACE_ACCESS_CHECK);
	ev.reason = BEE_AUDIT_REASON_OTHER_CGROUP;
	err |= SEED_PATH(dir, "ptrace-pid", ev, "pid:1");
	ev = seed_event(BEE_AUDIT_KIND_PROCESS, BEE_AUDIT_ACTION_EXECUTE, BEE_AUDIT_DENY, BEE_AUDIT_RES_NONE,
			BEE_AUDIT_HOOK_USERNS_CREATE);
	ev.reason = BEE_AUDIT_REASON_NAMESPACE;
	err |= seed_write(dir, "userns", &ev, "", 0);

	/* refused: values no enumerator has, and a record cut short */
	ev = seed_event(9, BEE_AUDIT_ACTION_READ, BEE_AUDIT_DENY, BEE_AUDIT_RES_NONE, 0);
	err |= seed_write(dir, "unknown-kind", &ev, "", 0);
	ev = seed_event(BEE_AUDIT_KIND_FILESYSTEM, BEE_AUDIT_ACTION_READ, BEE_AUDIT_DENY, 77, 0);
	err |= seed_write(dir, "unknown-resource", &ev, "", 0);
	ev.reason = 200;
	ev.resource = BEE_AUDIT_RES_NONE;
	err |= seed_write(dir, "unknown-reason", &ev, "", 0);
	ev.ktime_ns = ~0ull;
	err |= seed_write(dir, "ktime-max", &ev, "", 0);
	/* the largest boot time: adding the wall-clock offset must not overflow */
	ev.ktime_ns = 0x7fffffffffffffffull;
	err |= seed_write(dir, "ktime-int64-max", &ev, "", 0);
	ev = seed_event(BEE_AUDIT_KIND_FILESYSTEM, BEE_AUDIT_ACTION_READ, BEE_AUDIT_DENY, BEE_AUDIT_RES_PATH, 0);
	err |= seed_write_bytes(dir, "short-record", &ev, sizeof(ev) - 1, "", 0);
	return err ? 1 : 0;
}
