/* SPDX-License-Identifier: GPL-2.0-only */
/* test_libbee: libbee's parts that need no kernel session, table driven:
 *
 *   - the stage table: names and exit statuses distinct, 126/127 for exec
 *   - audit lines: exactly ts, kind, action, resource, decision in this
 *     order, the time format, escaping, non-UTF-8 bytes, detail keys
 *   - ring-buffer records to lines: every resource kind, malformed sizes
 *   - Landlock's audit text: fields (quoted and hex), blockers to kind and
 *     action
 *   - the environment filter: allow globs, set values, context, decisions
 *   - packs: a compiled pack loads, a corrupted one is refused with the
 *     reader's message, query answers as beec query does
 *   - the registry: write, read, list, gc of a dead bee-load's record
 *   - bpf-lsm's Landlock hardening: the rights per ABI (the literal
 *     prefixes of write globs: compiler/tests/test_narrow.c), and (when this
 *     kernel has Landlock) a child restricted by the ruleset: unlink,
 *     mkdir, create, symlink, rename, link and truncate refused outside
 *     the written tree, allowed in it, file reads and writes untouched
 */
#include "internal.h"

#include "bee_audit.h"
#include "bee_net.h"
#include "eval.h"
#include "image.h"
#include "libbeec.h"
#include "lower.h"
#include "netset.h"
#include "pack_write.h"

#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "compiler/tests/policy_text.h"
#include "repack.h"

static char tmpdir[64];

/* ---- helpers ---------------------------------------------------------------------- */


/* The policy's pack in tmpdir/name, through libbeec. */
static void pack_write(const char *text, const char *name, char *path, size_t size)
{
	struct policy pol;
	static const char *const defs[] = { "HOME=/home/dev", "PROJECT=/home/dev/src/app" };
	struct beec_opts o = { .sz = sizeof(o), .defines = defs, .ndefines = 2 };
	uint8_t *buf;
	size_t len;
	policy_text(&pol, text);
	assert_int_equal(beec_policy__pack(&pol.p, &o, &pol.dc, &buf, &len), 0);
	snprintf(path, size, "%s/%s", tmpdir, name);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	fclose(f);
	free(buf);
	policy_free(&pol);
}

/* ---- stages ---------------------------------------------------------------------- */

static void test_stages(void **state)
{
	(void)state;
	for (int a = 0; a < BEE_STAGE_COUNT; a++) {
		assert_true(strlen(bee_stage__name((enum bee_stage)a)) > 0);
		assert_true(strlen(bee_stage__doc((enum bee_stage)a)) > 0);
		for (int b = a + 1; b < BEE_STAGE_COUNT; b++) {
			assert_string_not_equal(bee_stage__name((enum bee_stage)a), bee_stage__name((enum bee_stage)b));
			assert_int_not_equal(bee_stage__exit_status((enum bee_stage)a, 0),
					     bee_stage__exit_status((enum bee_stage)b, 0));
		}
		int st = bee_stage__exit_status((enum bee_stage)a, 0);
		/* never a status a shell gives a signal, nor 1 (query's Deny) */
		assert_true(st < 128 && st != 1);
	}
	assert_int_equal(bee_stage__exit_status(BEE_STAGE_GATE, 0), 65);
	assert_int_equal(bee_stage__exit_status(BEE_STAGE_EXEC, -EACCES), 126);
	assert_int_equal(bee_stage__exit_status(BEE_STAGE_EXEC, -ENOENT), 127);
	enum bee_backend b;
	assert_int_equal(bee_backend__parse("landlock", &b), 0);
	assert_int_equal(b, BEE_BACKEND_LANDLOCK);
	assert_int_equal(bee_backend__parse("bpf-lsm", &b), 0);
	assert_int_equal(b, BEE_BACKEND_BPF_LSM);
	assert_int_equal(bee_backend__parse("lsm", &b), -EINVAL);
	/* options of an older (shorter) and a newer (longer) caller */
	/* zeroed whole, padding included, as LIBBPF_OPTS-style callers do */
	struct { size_t sz; int a; } older;
	memset(&older, 0, sizeof(older));
	older.sz = sizeof(older);
	older.a = 7;
	struct { size_t sz; int a, b; long c; } cur, newer = { sizeof(newer), 7, 8, 0 };
	struct { size_t sz; int a, b; long c; long d; } future = { sizeof(future), 1, 2, 3, 0 };
	assert_int_equal(bee_opts_copy(&cur, sizeof(cur), &older), 0);
	assert_int_equal(cur.sz, sizeof(cur));
	assert_int_equal(cur.a, 7);
	assert_int_equal(cur.b, 0);
	assert_int_equal(bee_opts_copy(&cur, sizeof(cur), &newer), 0);
	assert_int_equal(cur.b, 8);
	assert_int_equal(bee_opts_copy(&cur, sizeof(cur), &future), 0);
	future.d = 1;
	assert_int_equal(bee_opts_copy(&cur, sizeof(cur), &future), -EINVAL);
	assert_int_equal(bee_opts_copy(&cur, sizeof(cur), NULL), 0);
	assert_int_equal(cur.a, 0);
	struct bee_error e;
	bee_fail(&e, BEE_STAGE_ATTACH, -EPERM, "prog '%s': failed\nto attach", "x");
	assert_string_equal(e.msg, "attach: prog 'x': failed to attach");
	assert_int_equal(e.err, -EPERM);
}

/* ---- audit lines ------------------------------------------------------------------ */

#define TS_RE "\"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z\""

static void assert_five_keys(const char *line)
{
	regex_t re;
	assert_int_equal(regcomp(&re, "^\\{\"ts\":" TS_RE ",\"kind\":\"(FileSystem|Network|Environment|Process)\","
				      "\"action\":\"(Read|Write|Connect|Listen|Execute)\",\"resource\":\".*\","
				      "\"decision\":\"(Allow|Deny)\"(,\"count\":[1-9][0-9]*)?\\}\n$",
			     REG_EXTENDED),
			 0);
	int m = regexec(&re, line, 0, NULL, 0);
	regfree(&re);
	if (m)
		fprintf(stderr, "not a five-key line: %s", line);
	assert_int_equal(m, 0);
	json_error_t je;
	json_t *o = json_loads(line, 0, &je);
	assert_non_null(o);
	const char *keys[] = { "ts", "kind", "action", "resource", "decision" };
	size_t i = 0;
	for (void *it = json_object_iter(o); it; it = json_object_iter_next(o, it), i++) {
		assert_true(i < 5);
		assert_string_equal(json_object_iter_key(it), keys[i]);
	}
	assert_int_equal(i, 5);
	json_decref(o);
}

static void test_audit_format(void **state)
{
	(void)state;
	static const struct {
		int64_t ns;
		const char *resource;
		size_t len;
		const char *want;
	} rows[] = {
		{ 0, "/etc/passwd", 11,
		  "{\"ts\":\"1970-01-01T00:00:00.000Z\",\"kind\":\"FileSystem\",\"action\":\"Read\","
		  "\"resource\":\"/etc/passwd\",\"decision\":\"Deny\"}\n" },
		{ 1788933600123456789LL, "a\"b\\c\nd", 7,
		  "{\"ts\":\"2026-09-09T06:00:00.123Z\",\"kind\":\"FileSystem\",\"action\":\"Read\","
		  "\"resource\":\"a\\\"b\\\\c\\u000ad\",\"decision\":\"Deny\"}\n" },
		/* invalid UTF-8 and an overlong form become U+FFFD; valid stays */
		{ 999, "x\xff\xc0\xafy\xc3\xa9", 7,
		  "{\"ts\":\"1970-01-01T00:00:00.000Z\",\"kind\":\"FileSystem\",\"action\":\"Read\","
		  "\"resource\":\"x\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdy\xc3\xa9\",\"decision\":\"Deny\"}\n" },
		{ -1, "", 0,
		  "{\"ts\":\"1969-12-31T23:59:59.999Z\",\"kind\":\"FileSystem\",\"action\":\"Read\","
		  "\"resource\":\"\",\"decision\":\"Deny\"}\n" },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct bee_audit_line l = { .realtime_ns = rows[i].ns, .kind = "FileSystem", .action = "Read",
					    .decision = "Deny", .resource = rows[i].resource,
					    .resource_len = rows[i].len, .pid = 7, .comm = "c", .rule = -1 };
		size_t len;
		char *s = bee_audit_format(&l, "p", false, &len);
		assert_string_equal(s, rows[i].want);
		assert_int_equal(len, strlen(rows[i].want));
		assert_five_keys(s);
		free(s);
	}
	/* detail: after the five keys, in a fixed order */
	struct bee_audit_line l = { .realtime_ns = 0, .kind = "Network", .action = "Connect", .decision = "Allow",
				    .resource = "1.2.3.4:5", .resource_len = 9, .pid = 42, .comm = "cu\"rl",
				    .source = "bpf", .reason = "granted", .rule = 3 };
	size_t len;
	char *s = bee_audit_format(&l, "pol", true, &len);
	assert_string_equal(s, "{\"ts\":\"1970-01-01T00:00:00.000Z\",\"kind\":\"Network\",\"action\":\"Connect\","
			       "\"resource\":\"1.2.3.4:5\",\"decision\":\"Allow\",\"pid\":42,\"comm\":\"cu\\\"rl\","
			       "\"policy\":\"pol\",\"source\":\"bpf\",\"reason\":\"granted\",\"rule\":3}\n");
	free(s);
}

static void test_audit_events(void **state)
{
	(void)state;
	uint8_t buf[sizeof(struct bee_audit_event) + 64];
	struct bee_audit_event *ev = (void *)buf;
	struct bee_audit_line l;
	char res[4200], comm[17];
	static const struct {
		uint8_t resource, kind, action, decision, hook;
		uint16_t family, port;
		uint8_t type, proto;
		const char *addr_or_path;
		const char *want;
	} rows[] = {
		{ BEE_AUDIT_RES_INET, BEE_AUDIT_KIND_NETWORK, BEE_AUDIT_ACTION_CONNECT, BEE_AUDIT_DENY, BEE_AUDIT_HOOK_CONNECT4,
		  AF_INET, 8080, 0, 6, "127.0.0.1", "127.0.0.1:8080" },
		{ BEE_AUDIT_RES_INET, BEE_AUDIT_KIND_NETWORK, BEE_AUDIT_ACTION_LISTEN, BEE_AUDIT_ALLOW, BEE_AUDIT_HOOK_BIND6,
		  AF_INET6, 443, 0, 6, "::1", "[::1]:443" },
		{ BEE_AUDIT_RES_INET, BEE_AUDIT_KIND_NETWORK, BEE_AUDIT_ACTION_CONNECT, BEE_AUDIT_DENY, BEE_AUDIT_HOOK_CONNECT6,
		  AF_INET6, 53, 0, 17, "::ffff:10.0.0.1", "[::ffff:10.0.0.1]:53" },
		{ BEE_AUDIT_RES_PATH, BEE_AUDIT_KIND_FILESYSTEM, BEE_AUDIT_ACTION_WRITE, BEE_AUDIT_DENY, BEE_AUDIT_HOOK_FILE_OPEN,
		  0, 0, 0, 0, "/etc/shadow", "/etc/shadow" },
		{ BEE_AUDIT_RES_PATH, BEE_AUDIT_KIND_PROCESS, BEE_AUDIT_ACTION_EXECUTE, BEE_AUDIT_DENY, BEE_AUDIT_HOOK_MMAP_FILE,
		  0, 0, 0, 0, "", "inode:8:1:1234" },
		{ BEE_AUDIT_RES_FILE, BEE_AUDIT_KIND_PROCESS, BEE_AUDIT_ACTION_EXECUTE, BEE_AUDIT_DENY,
		  BEE_AUDIT_HOOK_FILE_MPROTECT, 0, 0, 0, 0, "", "inode:8:1:1234" },
		{ BEE_AUDIT_RES_UNIX, BEE_AUDIT_KIND_NETWORK, BEE_AUDIT_ACTION_CONNECT, BEE_AUDIT_DENY,
		  BEE_AUDIT_HOOK_UNIX_STREAM_CONNECT, AF_UNIX, 0, 0, 0, "@dbus", "@dbus" },
		{ BEE_AUDIT_RES_SOCKET, BEE_AUDIT_KIND_NETWORK, BEE_AUDIT_ACTION_CONNECT, BEE_AUDIT_DENY,
		  BEE_AUDIT_HOOK_SOCKET_CREATE, AF_NETLINK, 0, SOCK_RAW, 0, "", "socket:AF_NETLINK/SOCK_RAW/0" },
		{ BEE_AUDIT_RES_SOCKET, BEE_AUDIT_KIND_NETWORK, BEE_AUDIT_ACTION_CONNECT, BEE_AUDIT_DENY,
		  BEE_AUDIT_HOOK_SOCK_CREATE, 99, 0, 9, 3, "", "socket:99/9/3" },
		{ BEE_AUDIT_RES_NONE, BEE_AUDIT_KIND_PROCESS, BEE_AUDIT_ACTION_EXECUTE, BEE_AUDIT_DENY,
		  BEE_AUDIT_HOOK_USERNS_CREATE, 0, 0, 0, 0, "", "userns" },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		memset(buf, 0, sizeof(buf));
		ev->ktime_ns = 5000000000ULL;
		ev->pid = 99;
		memcpy(ev->comm, "probe", 5);
		ev->kind = rows[i].kind;
		ev->action = rows[i].action;
		ev->decision = rows[i].decision;
		ev->hook = rows[i].hook;
		ev->resource = rows[i].resource;
		ev->reason = BEE_AUDIT_REASON_NOT_GRANTED;
		size_t size = sizeof(*ev);
		if (rows[i].resource == BEE_AUDIT_RES_INET || rows[i].resource == BEE_AUDIT_RES_SOCKET) {
			ev->net.family = rows[i].family;
			ev->net.port = rows[i].port;
			ev->net.type = rows[i].type;
			ev->net.proto = rows[i].proto;
			if (rows[i].resource == BEE_AUDIT_RES_INET)
				inet_pton(rows[i].family, rows[i].addr_or_path, ev->net.addr);
		} else if (*rows[i].addr_or_path) {
			ev->path_len = (uint16_t)strlen(rows[i].addr_or_path);
			memcpy(ev + 1, rows[i].addr_or_path, ev->path_len);
			size += ev->path_len;
		} else {
			ev->file.dev = 8u << 20 | 1;
			ev->file.ino = 1234;
		}
		assert_int_equal(bee_audit_event_line(buf, size, 1000, &l, res, sizeof(res), comm), 0);
		assert_int_equal(l.resource_len, strlen(rows[i].want));
		assert_memory_equal(l.resource, rows[i].want, l.resource_len);
		assert_int_equal(l.realtime_ns, 5000001000LL);
		assert_string_equal(l.comm, "probe");
		assert_int_equal(l.pid, 99);
		assert_string_equal(l.decision, rows[i].decision == BEE_AUDIT_DENY ? "Deny" : "Allow");
		assert_string_equal(l.reason, "not granted");
	}
	/* malformed: short, a path longer than the record, an unknown kind */
	memset(buf, 0, sizeof(buf));
	assert_int_equal(bee_audit_event_line(buf, sizeof(*ev) - 1, 0, &l, res, sizeof(res), comm), -EINVAL);
	ev->path_len = 10;
	assert_int_equal(bee_audit_event_line(buf, sizeof(*ev) + 9, 0, &l, res, sizeof(res), comm), -EINVAL);
	ev->path_len = 0;
	ev->kind = 200;
	assert_int_equal(bee_audit_event_line(buf, sizeof(*ev), 0, &l, res, sizeof(res), comm), -EINVAL);
}

/* ---- Landlock's audit text ------------------------------------------------------------- */

/* The kernel's audit stream as a session's reader takes it, one record at
 * a time: every reader sees every domain of the machine, whose frees come
 * alone (no EOE) and whose events interleave. A session's first denial is
 * an ACCESS record and then the DOMAIN record that makes the domain its
 * own; with more events pending than the reader keeps, the ones dropped
 * are the oldest, never that half-read one (the cause of check-sessions'
 * lost denials under load). */
static void ka_feed(struct bee_kaudit *k, struct bee_audit_log *log, int type, unsigned long serial,
		    const char *fmt, ...)
{
	char text[512];
	va_list ap;
	int n = snprintf(text, sizeof(text), "audit(1796299111.528:%lu): ", serial);
	va_start(ap, fmt);
	n += vsnprintf(text + n, sizeof(text) - (size_t)n, fmt, ap);
	va_end(ap);
	bee_kaudit_record(k, type, text, (size_t)n, log);
}

static void test_kaudit_events(void **state)
{
	(void)state;
	char path[128];
	snprintf(path, sizeof(path), "%s/kaudit.jsonl", tmpdir);
	struct bee_audit_log log = { .fd = -1 };
	struct bee_error e;
	assert_int_equal(bee_audit_open(&log, path, &e), 0);
	log.detail = true;
	struct bee_kaudit *k = bee_kaudit_detached();
	assert_non_null(k);
	bee_kaudit_set_pid(k, 4242);
	/* the frees of 300 domains of other sessions */
	for (unsigned long i = 0; i < 300; i++)
		ka_feed(k, &log, 1424, 100 + i, "domain=f%lu status=deallocated denials=1", i);
	/* 200 events of others, each still waiting for its syscall's end */
	for (unsigned long i = 0; i < 200; i++)
		ka_feed(k, &log, 1423, 1000 + i, "domain=o%lu blockers=fs.read_file path=\"/other/%lu\"", i, i);
	/* the session's first denial, others' records between its two */
	ka_feed(k, &log, 1423, 2000, "domain=abc blockers=fs.read_file path=\"/secret\" dev=\"vda\" ino=7");
	for (unsigned long i = 0; i < 4; i++)
		ka_feed(k, &log, 1423, 2001 + i, "domain=o2%lu blockers=fs.read_file path=\"/other2/%lu\"", i, i);
	ka_feed(k, &log, 1424, 2000, "domain=abc status=allocated mode=enforcing pid=4242 uid=65534 comm=\"t\"");
	ka_feed(k, &log, 1300, 2000, "arch=c000003e syscall=257 success=no pid=4243 comm=\"cat\"");
	ka_feed(k, &log, 1320, 2000, "");
	/* a later denial of the same domain, without its DOMAIN record */
	ka_feed(k, &log, 1423, 2100, "domain=abc blockers=fs.read_file path=\"/secret2\"");
	ka_feed(k, &log, 1300, 2100, "arch=c000003e syscall=257 success=no pid=4243 comm=\"cat\"");
	ka_feed(k, &log, 1320, 2100, "");
	bee_kaudit_close(k);
	assert_int_equal(bee_audit_close(&log), 0);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	char line[1024];
	int secret = 0, secret2 = 0, others = 0;
	while (fgets(line, sizeof(line), f)) {
		secret += strstr(line, "\"resource\":\"/secret\",\"decision\":\"Deny\"") != NULL;
		secret2 += strstr(line, "\"resource\":\"/secret2\",\"decision\":\"Deny\"") != NULL;
		others += strstr(line, "/other") != NULL;
	}
	fclose(f);
	unlink(path);
	assert_int_equal(secret, 1);
	assert_int_equal(secret2, 1);
	assert_int_equal(others, 0);   /* the controls: no other session's denial */
}

static void test_kaudit_parse(void **state)
{
	(void)state;
	struct bee_kaudit_access a;
	assert_int_equal(bee_kaudit_parse_access("domain=1a32d1665 blockers=fs.read_file path=\"/etc/hostname\" "
						 "dev=\"vda\" ino=733",
						 &a),
			 0);
	assert_string_equal(a.domain, "1a32d1665");
	assert_string_equal(a.blockers, "fs.read_file");
	assert_string_equal(a.path, "/etc/hostname");
	/* a path with a space is logged in hex */
	assert_int_equal(bee_kaudit_parse_access("domain=5 blockers=fs.make_reg,fs.refer path=2F746D702F6120622063 dev=\"vda\" ino=1",
						 &a),
			 0);
	assert_string_equal(a.path, "/tmp/a b c");
	assert_int_equal(bee_kaudit_parse_access("domain=5 blockers=scope.signal opid=1234 ocomm=\"x\"", &a), 0);
	assert_string_equal(a.path, "pid:1234");
	assert_int_equal(bee_kaudit_parse_access("blockers=fs.read_file", &a), -EINVAL);
	static const struct {
		const char *blockers, *kind, *action;
	} rows[] = {
		{ "fs.execute", "Process", "Execute" },
		{ "fs.read_file", "FileSystem", "Read" },
		{ "fs.write_file,fs.read_file", "FileSystem", "Read" },
		{ "fs.read_dir", "FileSystem", "Read" },
		{ "fs.write_file", "FileSystem", "Write" },
		{ "fs.make_reg", "FileSystem", "Write" },
		{ "fs.truncate", "FileSystem", "Write" },
		{ "fs.remove_file,fs.refer", "FileSystem", "Write" },
		{ "net.bind_tcp", "Network", "Listen" },
		{ "net.connect_tcp", "Network", "Connect" },
		{ "scope.abstract_unix_socket", "Network", "Connect" },
		{ "ptrace", "Process", "Read" },
		{ "scope.signal", "Process", "Write" },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const char *k, *act;
		bee_kaudit_blockers(rows[i].blockers, &k, &act);
		assert_string_equal(k, rows[i].kind);
		assert_string_equal(act, rows[i].action);
	}
}

/* ---- environment -------------------------------------------------------------------------- */

struct env_seen {
	char names[16][32];
	bool allow[16];
	size_t n;
};

static void on_env(void *ctx, const char *name, size_t len, bool allow)
{
	struct env_seen *s = ctx;
	snprintf(s->names[s->n], sizeof(s->names[0]), "%.*s", (int)len, name);
	s->allow[s->n++] = allow;
}

static void test_env(void **state)
{
	(void)state;
	char path[256];
	pack_write("version = 1\nname = \"envt\"\n[env]\nallow = [\"PATH\", \"LC_*\", \"KEEP\"]\n"
		   "set = { KEEP = \"policy\", NEW = \"n\" }\n",
		   "env.bpfpack", path, sizeof(path));
	struct bee_pack *p;
	struct bee_manifest m;
	struct bee_error e;
	assert_int_equal(bee_pack_load(path, &p, &m, &e), 0);
	const char *launcher[] = { "PATH=/bin", "SECRET=x", "LC_ALL=C", "KEEP=launcher", "LCX=1", "noequals", NULL };
	const char *ctx[] = { "NEW=context", "EXTRA=1" };
	struct env_seen seen = { 0 };
	char **envp;
	assert_int_equal(bee_env_build(p, &m, launcher, ctx, 2, on_env, &seen, &envp), 0);
	const char *want[] = { "PATH=/bin", "LC_ALL=C", "KEEP=policy", "NEW=context", "EXTRA=1", NULL };
	for (size_t i = 0; want[i] || envp[i]; i++) {
		assert_non_null(want[i]);
		assert_non_null(envp[i]);
		assert_string_equal(envp[i], want[i]);
	}
	bee_env_free(envp);
	assert_int_equal(seen.n, 5);
	static const struct { const char *name; bool allow; } dec[] = {
		{ "PATH", true }, { "SECRET", false }, { "LC_ALL", true }, { "KEEP", true }, { "LCX", false },
	};
	for (size_t i = 0; i < 5; i++) {
		assert_string_equal(seen.names[i], dec[i].name);
		assert_int_equal(seen.allow[i], dec[i].allow);
	}
	const char *bad[] = { "=x" };
	assert_int_equal(bee_env_build(p, &m, launcher, bad, 1, NULL, NULL, &envp), -EINVAL);
	bee_manifest_fini(&m);
	bee_pack__close(p);
	unlink(path);
}


/* ---- [syscalls] in the manifest ---------------------------------------------------------- */

/* The manifest's "syscalls" set to ctx (NULL: removed). */
static void set_syscalls(json_t *m, void *ctx)
{
	if (ctx)
		json_object_set_new(m, "syscalls", ctx);
	else
		json_object_del(m, "syscalls");
}

/* The policy's [syscalls] allow reaches bee_manifest.syscalls_allowed as
 * bits of bee_syscalls.h; a manifest naming a group this loader does not
 * know (or one twice, or not as an array) is refused at stage pack. */
static void test_syscalls_manifest(void **state)
{
	(void)state;
	static const struct {
		const char *allow;     /* NULL: no [syscalls] table */
		uint32_t bits;
	} rows[] = {
		{ NULL, 0 },
		{ "[]", 0 },
		{ "[\"bpf\"]", 1u << BEE_SYSCALLS_BPF },
		{ "[\"io_uring\", \"bpf\", \"namespaces\"]",
		  1u << BEE_SYSCALLS_BPF | 1u << BEE_SYSCALLS_NAMESPACES | 1u << BEE_SYSCALLS_IO_URING },
	};
	char path[256], bad[300], text[256];
	struct bee_pack *p;
	struct bee_manifest m;
	struct bee_error e;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		snprintf(text, sizeof(text), "version = 1\nname = \"sys\"\n%s%s\n",
			 rows[i].allow ? "[syscalls]\nallow = " : "", rows[i].allow ? rows[i].allow : "");
		pack_write(text, "sys.bpfpack", path, sizeof(path));
		assert_int_equal(bee_pack_load(path, &p, &m, &e), 0);
		if (m.syscalls_allowed != rows[i].bits)
			fail_msg("allow = %s: bits 0x%x, want 0x%x", rows[i].allow ? rows[i].allow : "(none)",
				 m.syscalls_allowed, rows[i].bits);
		/* none allowed: no key at all, so such packs keep their bytes */
		assert_int_equal(json_object_get(bee_pack__manifest(p), "syscalls") != NULL, rows[i].bits != 0);
		bee_manifest_fini(&m);
		bee_pack__close(p);
	}

	static const struct {
		const char *json;      /* the manifest's "syscalls" */
		const char *msg;       /* in the error; NULL: loads */
	} tampered[] = {
		{ "[\"bpf\"]", NULL },                                  /* the control */
		{ "[\"chmod\"]", "'chmod' is not a system call group this loader knows" },
		{ "[\"bpf\", \"bpf\"]", "'bpf' is listed twice" },
		{ "[3]", "'(not a string)' is not a system call group" },
		{ "\"bpf\"", "'syscalls' is not an array" },
	};
	snprintf(bad, sizeof(bad), "%s/sys-bad.bpfpack", tmpdir);
	for (size_t i = 0; i < sizeof(tampered) / sizeof(tampered[0]); i++) {
		test_repack(path, bad, set_syscalls, json_loads(tampered[i].json, JSON_DECODE_ANY, NULL));
		int rc = bee_pack_load(bad, &p, &m, &e);
		if (!tampered[i].msg) {
			assert_int_equal(rc, 0);
			assert_int_equal(m.syscalls_allowed, 1u << BEE_SYSCALLS_BPF);
			bee_manifest_fini(&m);
			bee_pack__close(p);
			continue;
		}
		assert_int_equal(rc, -EINVAL);
		assert_int_equal(e.stage, BEE_STAGE_PACK);
		if (!strstr(e.msg, tampered[i].msg))
			fail_msg("syscalls %s: '%s' does not say '%s'", tampered[i].json, e.msg, tampered[i].msg);
	}
	unlink(bad);
	unlink(path);
}

/* ---- bpf-lsm's Landlock hardening ------------------------------------------------ */

static void test_ll_handled(void **state)
{
	(void)state;
	assert_int_equal(bee_landlock_hardening_handled(1) & (1ULL << 13), 0);   /* REFER */
	assert_int_not_equal(bee_landlock_hardening_handled(2) & (1ULL << 13), 0);
	assert_int_equal(bee_landlock_hardening_handled(2) & (1ULL << 14), 0);   /* TRUNCATE */
	assert_int_not_equal(bee_landlock_hardening_handled(3) & (1ULL << 14), 0);
	/* never read, write, execute, read_dir */
	assert_int_equal(bee_landlock_hardening_handled(9) & 0xf, 0);
}

static const char *at(char *buf, size_t size, const char *dir, const char *name)
{
	snprintf(buf, size, "%s%s", dir, name);
	return buf;
}

static int errno_of(int rc)
{
	return rc < 0 ? errno : 0;
}

/* In a child restricted by the hardening ruleset of a policy that writes
 * DIR/w/ **, the file DIR/f and the missing file DIR/lit/new: namespace
 * changes only under DIR/w, DIR/f truncated only, regular files created
 * beneath DIR/lit only; reads and writes of files are not Landlock's
 * (BPF's, not here). */
static void test_ll_hardening(void **state)
{
	(void)state;
	int abi = bee_landlock_abi();
	if (abi < 1)
		skip();
	char d[128], text[1024], path[256], f[300];
	snprintf(d, sizeof(d), "%s/harden", tmpdir);
	const char *sub[] = { "", "/w", "/ro", "/lit" };
	for (size_t i = 0; i < 4; i++) {
		snprintf(f, sizeof(f), "%s%s", d, sub[i]);
		assert_int_equal(mkdir(f, 0700), 0);
	}
	const char *files[] = { "/ro/a", "/ro/b", "/ro/c", "/w/x", "/f" };
	for (size_t i = 0; i < 5; i++) {
		snprintf(f, sizeof(f), "%s%s", d, files[i]);
		FILE *fp = fopen(f, "w");
		assert_non_null(fp);
		fputs("data\n", fp);
		fclose(fp);
	}
	snprintf(text, sizeof(text),
		 "version = 1\nname = \"harden\"\n[fs]\nread = [\"%s/**\"]\n"
		 "write = [\"%s/w/**\", \"%s/f\", \"%s/lit/new\", \"%s/gone/**\"]\n", d, d, d, d, d);
	pack_write(text, "harden.bpfpack", path, sizeof(path));
	struct bee_pack *p;
	struct bee_manifest m;
	struct bee_error e;
	assert_int_equal(bee_pack_load(path, &p, &m, &e), 0);
	int fd;
	assert_int_equal(bee_landlock_hardening(&m, abi, &fd, NULL, NULL, &e), 0);
	bee_manifest_fini(&m);
	bee_pack__close(p);

	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int bad = 0;
#define P(x) at(f, sizeof(f), d, x)
#define EXPECT(call, want)                                                                   \
	do {                                                                                 \
		int got_ = errno_of(call);                                                   \
		if (got_ != (want)) {                                                        \
			fprintf(stderr, "hardening: %s: errno %d, want %d\n", #call, got_, want); \
			bad = 1;                                                             \
		}                                                                            \
	} while (0)
		char g[300];
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
		    syscall(__NR_landlock_restrict_self, fd, 0) < 0)
			_exit(2);
		/* refused outside the written tree */
		EXPECT(unlink(P("/ro/a")), EACCES);
		EXPECT(mkdir(P("/ro/dir"), 0700), EACCES);
		EXPECT(mkdir(P("/dir"), 0700), EACCES);
		EXPECT(open(P("/ro/created"), O_CREAT | O_WRONLY, 0600), EACCES);
		EXPECT(symlink("/etc/passwd", P("/ro/sym")), EACCES);
		snprintf(g, sizeof(g), "%s/w/x", d);
		EXPECT(rename(g, P("/ro/b")), EACCES);          /* over a read-only file */
		snprintf(g, sizeof(g), "%s/w/moved", d);
		EXPECT(rename(P("/ro/c"), g), EACCES);          /* out of a read-only tree */
		if (abi >= 2)
			EXPECT(link(P("/ro/c"), g), EXDEV);     /* reparenting refused */
		if (abi >= 3)
			EXPECT(truncate(P("/ro/a"), 0), EACCES);
		/* reads and writes of files are not this ruleset's */
		EXPECT(open(P("/ro/a"), O_RDWR), 0);
		/* allowed in the written tree */
		EXPECT(mkdir(P("/w/dir"), 0700), 0);
		EXPECT(open(P("/w/new"), O_CREAT | O_WRONLY, 0600), 0);
		snprintf(g, sizeof(g), "%s/w/new2", d);
		EXPECT(rename(P("/w/new"), g), 0);
		EXPECT(unlink(g), 0);
		EXPECT(rmdir(P("/w/dir")), 0);
		EXPECT(truncate(P("/w/x"), 0), 0);
		/* the literal file: truncated, not removed; a missing literal is created */
		EXPECT(truncate(P("/f"), 0), 0);
		EXPECT(unlink(P("/f")), EACCES);
		EXPECT(open(P("/lit/new"), O_CREAT | O_WRONLY, 0600), 0);
		EXPECT(unlink(P("/lit/new")), EACCES);
		EXPECT(mkdir(P("/lit/dir"), 0700), EACCES);
#undef EXPECT
#undef P
		_exit(bad);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	close(fd);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	snprintf(f, sizeof(f), "rm -rf '%s'", d);
	assert_int_equal(system(f), 0);
	unlink(path);
}

/* ---- packs and query ----------------------------------------------------------------------- */

static const char demo_policy[] =
	"version = 1\nname = \"demo\"\n"
	"[fs]\nread = [\"/usr/**\", \"${PROJECT}/**\"]\nwrite = [\"${PROJECT}/out/**\"]\n"
	"[exec]\nallow = [\"/usr/bin/sh\", \"!/usr/bin/env\"]\n"
	"[net]\nconnect = [\"127.0.0.1:47000-47009\"]\n"
	"[env]\nallow = [\"PATH\"]\n";

static void test_pack_and_query(void **state)
{
	(void)state;
	char path[256], bad[300];
	struct bee_pack *p;
	struct bee_manifest m;
	struct bee_error e;
	pack_write(demo_policy, "demo.bpfpack", path, sizeof(path));
	assert_int_equal(bee_pack_load(path, &p, &m, &e), 0);
	assert_string_equal(m.name, "demo");
	assert_true(m.nhooks >= 15);
	assert_true(m.ll_expressible);
	assert_non_null(bee_manifest_map(&m, "bee_fs"));
	const struct bee_mf_rule *r = bee_manifest_rule(&m, 4);
	assert_non_null(r);
	assert_true(r->pinned);
	char text[300];
	bee_rule_format(r, text, sizeof(text));
	assert_string_equal(text, "exec.allow !/usr/bin/env");
	struct beec_policy pol;
	assert_int_equal(bee_policy_rebuild(p, &m, &pol, &e), 0);
	beec_policy__fini(&pol);
	bee_manifest_fini(&m);
	bee_pack__close(p);

	static const struct {
		const char *kind, *action, *resource;
		bool allow;
	} rows[] = {
		{ "fs", "read", "/usr/lib/x", true },
		{ "fs", "write", "/usr/lib/x", false },
		{ "fs", "write", "/home/dev/src/app/out/a", true },
		{ "exec", "execute", "/usr/bin/sh", true },
		{ "exec", "execute", "/usr/bin/id", false },
		{ "net", "connect", "127.0.0.1:47005", true },
		{ "net", "connect", "127.0.0.1:47010", false },
		{ "env", "read", "PATH", true },
		{ "env", "read", "HOME", false },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct bee_decision d;
		assert_int_equal(bee_decision__query(path, rows[i].kind, rows[i].action, rows[i].resource, &d, &e), 0);
		assert_int_equal(d.allow, rows[i].allow);
		assert_non_null(d.text);
		assert_non_null(strstr(d.text, rows[i].allow ? "Allow" : "Deny"));
		bee_decision__fini(&d);
	}
	struct bee_decision d;
	assert_int_equal(bee_decision__query(path, "fs", "bogus", "/x", &d, &e), -EINVAL);
	assert_int_equal(e.stage, BEE_STAGE_USAGE);

	/* a flipped byte: the reader's own message, stage pack */
	snprintf(bad, sizeof(bad), "%s.bad", path);
	FILE *in = fopen(path, "rb"), *out = fopen(bad, "wb");
	int c;
	long off = 0;
	while ((c = fgetc(in)) != EOF)
		fputc(off++ == 300 ? c ^ 0x40 : c, out);
	fclose(in);
	fclose(out);
	assert_int_equal(bee_pack_load(bad, &p, &m, &e), -EINVAL);
	assert_int_equal(e.stage, BEE_STAGE_PACK);
	assert_int_equal(strncmp(e.msg, "pack: ", 6), 0);
	assert_null(strstr(e.msg, "pack: pack: "));
	assert_int_equal(bee_pack_load("/nonexistent.bpfpack", &p, &m, &e), -ENOENT);
	assert_int_equal(e.stage, BEE_STAGE_PACK);
	unlink(bad);
	unlink(path);
}

/* ---- registry -------------------------------------------------------------------------------- */

static void test_registry(void **state)
{
	(void)state;
	char sd[128];
	snprintf(sd, sizeof(sd), "%s/state", tmpdir);
	/* a bee-load that is gone: a child that has been reaped */
	pid_t dead = fork();
	if (dead == 0)
		_exit(0);
	waitpid(dead, NULL, 0);
	struct bee_registry_entry r = { .pid = dead, .starttime = 12345, .nrevoked = 2 };
	unsigned rev[2] = { 3, 9 };
	r.revoked = rev;
	snprintf(r.id, sizeof(r.id), "00000000000000aa");
	snprintf(r.policy, sizeof(r.policy), "pol");
	snprintf(r.backend, sizeof(r.backend), "landlock");
	snprintf(r.started, sizeof(r.started), "2026-01-01T00:00:00.000Z");
	assert_int_equal(bee_registry_write(sd, &r), 0);
	struct bee_registry_entry live = r;
	snprintf(live.id, sizeof(live.id), "00000000000000bb");
	live.pid = getpid();
	live.starttime = bee_pid_starttime(getpid());
	live.nrevoked = 0;
	assert_int_equal(bee_registry_write(sd, &live), 0);

	struct bee_registry_entry back;
	assert_int_equal(bee_registry_read(sd, "00000000000000aa", &back), 0);
	assert_int_equal(back.pid, dead);
	assert_int_equal(back.nrevoked, 2);
	assert_int_equal(back.revoked[1], 9);
	assert_string_equal(back.backend, "landlock");
	bee_registry_entry_fini(&back);
	assert_int_equal(bee_registry_read(sd, "../etc", &back), -ENOENT);
	bee_registry_entry_fini(&back);

	struct bee_session_info *v;
	size_t n;
	struct bee_error e;
	assert_int_equal(bee_sessions__list(sd, &v, &n, &e), 0);
	assert_int_equal(n, 2);
	assert_false(v[0].live);      /* sorted by start time, then id */
	assert_true(v[1].live);
	free(v);
	assert_int_equal(bee_sessions__gc(sd, NULL, NULL, &e), 1);
	assert_int_equal(bee_sessions__list(sd, &v, &n, &e), 0);
	assert_int_equal(n, 1);
	assert_string_equal(v[0].id, "00000000000000bb");
	free(v);
	assert_int_equal(bee_registry_remove(sd, "00000000000000bb"), 0);
	assert_int_equal(bee_sessions__list(sd, &v, &n, &e), 0);
	assert_int_equal(n, 0);
	free(v);
}

int main(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_libbee-XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("test_libbee: mkdtemp");
		return 1;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stages),
		cmocka_unit_test(test_audit_format),
		cmocka_unit_test(test_audit_events),
		cmocka_unit_test(test_kaudit_parse),
		cmocka_unit_test(test_kaudit_events),
		cmocka_unit_test(test_env),
		cmocka_unit_test(test_syscalls_manifest),
		cmocka_unit_test(test_pack_and_query),
		cmocka_unit_test(test_registry),
		cmocka_unit_test(test_ll_handled),
		cmocka_unit_test(test_ll_hardening),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "test_libbee: cannot remove %s\n", tmpdir);
	return rc;
}
