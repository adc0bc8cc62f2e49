/* SPDX-License-Identifier: GPL-2.0-only */
/* codegen.c: lowered policy -> per-policy C source -> clang -> BPF ELF.
 *
 *   codegen_build
 *     codegen_params     sizes from the lowered policy
 *     codegen_source     #defines + #include "bee_hooks.bpf.h"
 *     tmp_create         private directory with libbeec's embedded headers
 *     clang_run          fork, chdir, exec; stderr captured
 *     file_read          the ELF
 *     tmp_remove         on every path
 *     codegen_tables     the programs and maps for the manifest
 */
#include "codegen.h"

#include "bee_audit.h"
#include "bee_dfa.h"
#include "bee_net.h"
#include "bee_session.h"
#include "image.h"
#include "libbeec.h"
#include "mem.h"
#include "templates.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* The template's permission bits and audit modes are the IR's. */
_Static_assert(IR_PERM_READ == 0x1u && IR_PERM_WRITE == 0x2u && IR_PERM_EXEC == 0x4u &&
		       IR_PERM_EXEC_PINNED == 0x8u && IR_PERM_DENIED == 0x10u,
	       "bee_hooks.bpf.h BEE_PERM_* are ir.h's IR_PERM_*");
_Static_assert((int)IR_AUDIT_DENY == (int)BEE_AUDIT_MODE_DENY &&
		       (int)IR_AUDIT_ALL == (int)BEE_AUDIT_MODE_ALL &&
		       (int)IR_AUDIT_NONE == (int)BEE_AUDIT_MODE_NONE,
	       "bee_audit.h modes are ir.h's audit modes");

/* Map flags the template sets (values of <linux/bpf.h>). */
#define F_NO_PREALLOC 0x1u
#define F_RDONLY_PROG 0x80u

/* bee_hooks.bpf.h's struct bee_scratch: an event, bpf_d_path's buffer of
 * BEE_PATH_MAX + 1 bytes rounded up to 8, a sequence number. The tests
 * compare it with the ELF. */
#define SCRATCH_SIZE \
	((uint32_t)sizeof(struct bee_audit_event) + ((BEE_PATH_MAX + 1 + 7) & ~7u) + 8u)

/* The ring buffer when codegen_opts does not say: "all" sees every open,
 * "deny" only refusals; "none" never writes, but the map stays so that
 * every pack has the same maps. */
#define RINGBUF_ALL (4u << 20)
#define RINGBUF_DENY (256u << 10)
#define RINGBUF_NONE (64u << 10)
#define RINGBUF_MIN 4096u
#define RINGBUF_MAX (1u << 30)

/* clang's output past this is cut: the first errors say what is wrong. */
#define CLANG_MSG_MAX (16u << 10)

const char *codegen_map_type_name(enum codegen_map_type t)
{
	switch (t) {
#define X(name, value, str) \
	case CODEGEN_MAP_##name: \
		return str;
		CODEGEN_MAP_TYPES(X)
#undef X
	}
	return "?";
}

const char *codegen_map_fill_name(enum codegen_map_fill f)
{
	switch (f) {
#define X(name, str)                \
	case CODEGEN_FILL_##name: \
		return str;
		CODEGEN_MAP_FILLS(X)
#undef X
	}
	return "?";
}

/* ---- parameters ------------------------------------------------------------ */

struct codegen_params {
	enum ir_audit_mode audit;
	uint32_t syscalls;               /* [syscalls] allow bits */
	uint32_t fs_image, exec_image;   /* bytes */
	uint32_t net4, net6;             /* LPM max_entries, at least 1 */
	uint32_t pins;                   /* pinned exec rules */
	uint32_t ringbuf;
	bool test_programs;
};

static const char *opt_clang(const struct codegen_opts *o)
{
	const char *c = o && o->clang ? o->clang : getenv("BEE_CLANG");
	return c && *c ? c : "clang";
}

static bool is_pow2(uint32_t v)
{
	return v && !(v & (v - 1));
}

static int image_size(const struct dfa *d, const char *domain, struct diag_ctx *dc, uint32_t *out)
{
	struct dfa_tables t;
	dfa_tables_get(d, &t);
	uint64_t size = image_dfa_size(d);   /* the image written, hops[] and all */
	if (size > CODEGEN_IMAGE_MAX) {
		diag_error(dc, LOC_NONE,
			   "the %s automaton (%u states, %u byte classes) needs a map value of %llu bytes; "
			   "the kernel allocates at most %u",
			   domain, t.nstates, t.nclasses, (unsigned long long)size, CODEGEN_IMAGE_MAX);
		diag_note(dc, LOC_NONE, "fewer or simpler %s rules give a smaller automaton", domain);
		return -E2BIG;
	}
	*out = (uint32_t)size;
	return 0;
}

static int codegen_params(const struct lowered *lw, const struct codegen_opts *o,
			  struct diag_ctx *dc, struct codegen_params *p)
{
	const struct ir_policy *ir = lw->ir;
	int err;

	memset(p, 0, sizeof(*p));
	p->audit = ir->audit;
	p->syscalls = ir->syscalls;
	if ((err = image_size(lw->dfa[IR_DOMAIN_FS], "fs", dc, &p->fs_image)) < 0 ||
	    (err = image_size(lw->dfa[IR_DOMAIN_EXEC], "exec", dc, &p->exec_image)) < 0)
		return err;
	size_t n4 = lw->net ? lw->net->n4 : 0;
	size_t n6 = lw->net ? lw->net->nentries - lw->net->n4 : 0;
	/* the kernel refuses a map of 0 entries: an empty one holds 1 and stays empty */
	p->net4 = n4 ? (uint32_t)n4 : 1;
	p->net6 = n6 ? (uint32_t)n6 : 1;
	for (size_t i = 0; i < ir->nrules; i++)
		if (ir->rules[i].kind == IR_RULE_EXEC_ALLOW && ir->rules[i].exec.pinned)
			p->pins++;
	uint32_t rb = o ? o->ringbuf_size : 0;
	if (!rb) {
		switch (p->audit) {
		case IR_AUDIT_ALL:
			rb = RINGBUF_ALL;
			break;
		case IR_AUDIT_DENY:
			rb = RINGBUF_DENY;
			break;
		case IR_AUDIT_NONE:
			rb = RINGBUF_NONE;
			break;
		}
	}
	if (!is_pow2(rb) || rb < RINGBUF_MIN || rb > RINGBUF_MAX) {
		diag_error(dc, LOC_NONE, "ring buffer size %u is not a power of two between %u and %u",
			   rb, RINGBUF_MIN, RINGBUF_MAX);
		return -EINVAL;
	}
	p->ringbuf = rb;
	p->test_programs = o && o->test_programs;
	return 0;
}

/* ---- source ------------------------------------------------------------------ */

struct buf {
	char *s;
	size_t n, cap;
};

static void buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	mem_grow((void **)&b->s, &b->cap, b->n + (size_t)n + 1, 1);
	va_start(ap, fmt);
	vsnprintf(b->s + b->n, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->n += (size_t)n;
}

/* The policy name for a comment: what could end the comment or the line
 * becomes '?'. */
static void buf_comment_text(struct buf *b, const char *s)
{
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			     (c >= '0' && c <= '9') || strchr("-_.:@+ ", c);
		buf_printf(b, "%c", plain ? c : '?');
	}
}

static void source_write(const struct lowered *lw, const struct codegen_params *p, struct buf *b)
{
	buf_printf(b, "/* The BPF program of policy '");
	buf_comment_text(b, lw->ir->name);
	buf_printf(b, "', written by beec %s (compiler/codegen.c).\n", BEEC_VERSION);
	buf_printf(b, " * Only sizes are policy-specific; the decisions come from the maps. */\n");
	buf_printf(b, "#define BEE_AUDIT %d /* %s */\n", (int)p->audit, ir_audit_mode_name(p->audit));
	char sys[256];
	buf_printf(b, "#define BEE_SYSCALLS_ALLOWED 0x%xu /* %s */\n", p->syscalls,
		   ir_syscalls_text(p->syscalls, sys, sizeof(sys)));
	buf_printf(b, "#define BEE_FS_IMAGE_SIZE %u\n", p->fs_image);
	buf_printf(b, "#define BEE_EXEC_IMAGE_SIZE %u\n", p->exec_image);
	buf_printf(b, "#define BEE_NET4_ENTRIES %u\n", p->net4);
	buf_printf(b, "#define BEE_NET6_ENTRIES %u\n", p->net6);
	buf_printf(b, "#define BEE_PINS_MAX %u\n", p->pins ? p->pins : 1);
	buf_printf(b, "#define BEE_RINGBUF_SIZE %u\n", p->ringbuf);
	buf_printf(b, "#define BEE_HOOK_BPRM_CHECK %d\n", p->pins ? 1 : 0);
	buf_printf(b, "#define BEE_TEST_PROGRAMS %d\n", p->test_programs ? 1 : 0);
	buf_printf(b, "#include \"bee_hooks.bpf.h\"\n");
}

int codegen_source(const struct lowered *lw, const struct codegen_opts *o, struct diag_ctx *dc,
		   char **src, size_t *len)
{
	struct codegen_params p;
	struct buf b = { 0 };
	int err = codegen_params(lw, o, dc, &p);

	*src = NULL;
	*len = 0;
	if (err < 0)
		return err;
	source_write(lw, &p, &b);
	*src = b.s;
	*len = b.n;
	return 0;
}

/* ---- the programs and maps of the ELF ------------------------------------------ */

static void prog_add(struct codegen_result *r, size_t *cap, const char *name, const char *section,
		     bool lsm)
{
	struct codegen_prog *pr = VEC_PUSH(r->progs, r->nprogs, *cap);
	pr->name = name;
	pr->section = section;
	const char *slash = strchr(section, '/');
	pr->attach = slash ? slash + 1 : section;
	pr->lsm = lsm;
}

static void map_add(struct codegen_result *r, size_t *cap, const char *name,
		    enum codegen_map_type type, uint32_t key, uint32_t value, uint32_t max,
		    uint32_t flags, enum codegen_map_fill fill)
{
	struct codegen_map *m = VEC_PUSH(r->maps, r->nmaps, *cap);
	*m = (struct codegen_map){ name, type, key, value, max, flags, fill };
}

/* What bee_hooks.bpf.h defines, in its order; test_codegen.c holds this
 * equal to the ELF through libbpf. */
static void codegen_tables(const struct codegen_params *p, struct codegen_result *r)
{
	size_t pcap = 0, mcap = 0;
	uint32_t nv = (uint32_t)sizeof(struct bee_net_value);

	prog_add(r, &pcap, "bee_file_open", "lsm_cgroup/file_open", true);
	if (p->pins)
		prog_add(r, &pcap, "bee_bprm_check", "lsm_cgroup/bprm_check_security", true);
	prog_add(r, &pcap, "bee_mmap_file", "lsm_cgroup/mmap_file", true);
	prog_add(r, &pcap, "bee_mprotect", "lsm_cgroup/file_mprotect", true);
	prog_add(r, &pcap, "bee_socket", "lsm_cgroup/socket_create", true);
	prog_add(r, &pcap, "bee_sock_create", "cgroup/sock_create", false);
	prog_add(r, &pcap, "bee_listen", "lsm_cgroup/socket_listen", true);
	prog_add(r, &pcap, "bee_unix_connect", "lsm_cgroup/unix_stream_connect", true);
	prog_add(r, &pcap, "bee_unix_send", "lsm_cgroup/unix_may_send", true);
	prog_add(r, &pcap, "bee_userns", "lsm_cgroup/userns_create", true);
	prog_add(r, &pcap, "bee_ptrace", "lsm_cgroup/ptrace_access_check", true);
	prog_add(r, &pcap, "bee_connect4", "cgroup/connect4", false);
	prog_add(r, &pcap, "bee_connect6", "cgroup/connect6", false);
	prog_add(r, &pcap, "bee_sendmsg4", "cgroup/sendmsg4", false);
	prog_add(r, &pcap, "bee_sendmsg6", "cgroup/sendmsg6", false);
	prog_add(r, &pcap, "bee_bind4", "cgroup/bind4", false);
	prog_add(r, &pcap, "bee_bind6", "cgroup/bind6", false);
	/* global BPF LSM programs (bee_guard.bpf.h): no lsm_cgroup slot */
	prog_add(r, &pcap, "bee_path_chmod", "lsm/path_chmod", true);
	prog_add(r, &pcap, "bee_path_chown", "lsm/path_chown", true);
	prog_add(r, &pcap, "bee_path_truncate", "lsm/path_truncate", true);
	prog_add(r, &pcap, "bee_inode_setattr", "lsm/inode_setattr", true);
	prog_add(r, &pcap, "bee_inode_setxattr", "lsm/inode_setxattr", true);
	prog_add(r, &pcap, "bee_inode_removexattr", "lsm/inode_removexattr", true);
	prog_add(r, &pcap, "bee_inode_getattr", "lsm/inode_getattr", true);
	prog_add(r, &pcap, "bee_inode_getxattr", "lsm/inode_getxattr", true);
	prog_add(r, &pcap, "bee_inode_listxattr", "lsm/inode_listxattr", true);
	prog_add(r, &pcap, "bee_path_notify", "lsm/path_notify", true);
	prog_add(r, &pcap, "bee_file_receive", "lsm/file_receive", true);
	prog_add(r, &pcap, "bee_task_kill", "lsm/task_kill", true);
	prog_add(r, &pcap, "bee_bpf", "lsm/bpf", true);
	if (p->test_programs)
		prog_add(r, &pcap, "bee_test_walk", "syscall", false);

	map_add(r, &mcap, "bee_fs", CODEGEN_MAP_ARRAY, 4, p->fs_image, 1, F_RDONLY_PROG,
		CODEGEN_FILL_IMAGE_FS);
	map_add(r, &mcap, "bee_exec", CODEGEN_MAP_ARRAY, 4, p->exec_image, 1, F_RDONLY_PROG,
		CODEGEN_FILL_IMAGE_EXEC);
	map_add(r, &mcap, "bee_net4", CODEGEN_MAP_LPM_TRIE, sizeof(struct bee_net_key4), nv, p->net4,
		F_NO_PREALLOC | F_RDONLY_PROG, CODEGEN_FILL_IMAGE_NET4);
	map_add(r, &mcap, "bee_net6", CODEGEN_MAP_LPM_TRIE, sizeof(struct bee_net_key6), nv, p->net6,
		F_NO_PREALLOC | F_RDONLY_PROG, CODEGEN_FILL_IMAGE_NET6);
	map_add(r, &mcap, "bee_pins", CODEGEN_MAP_HASH, sizeof(struct bee_pin_key),
		sizeof(struct bee_pin_value), p->pins ? p->pins : 1, F_RDONLY_PROG, CODEGEN_FILL_LOADER);
	map_add(r, &mcap, "bee_state", CODEGEN_MAP_ARRAY, 4, sizeof(struct bee_state), 1,
		F_RDONLY_PROG, CODEGEN_FILL_LOADER);
	map_add(r, &mcap, "bee_inode", CODEGEN_MAP_INODE_STORAGE, 4, 8, 0, F_NO_PREALLOC,
		CODEGEN_FILL_PROGRAM);
	if (p->pins)
		map_add(r, &mcap, "bee_task", CODEGEN_MAP_TASK_STORAGE, 4, 16, 0, F_NO_PREALLOC,
			CODEGEN_FILL_PROGRAM);
	map_add(r, &mcap, "bee_scratch", CODEGEN_MAP_PERCPU_ARRAY, 4, SCRATCH_SIZE, 1, 0,
		CODEGEN_FILL_PROGRAM);
	map_add(r, &mcap, "bee_audit", CODEGEN_MAP_RINGBUF, 0, 0, p->ringbuf, 0, CODEGEN_FILL_AUDIT);
	map_add(r, &mcap, "bee_lost", CODEGEN_MAP_PERCPU_ARRAY, 4, 8, 1, 0, CODEGEN_FILL_AUDIT);
	map_add(r, &mcap, "bee_self_cg", CODEGEN_MAP_CGROUP_ARRAY, 4, 4, 1, 0, CODEGEN_FILL_LOADER);
	map_add(r, &mcap, "bee_guard", CODEGEN_MAP_ARRAY, 4, sizeof(struct bee_guard), 1,
		F_RDONLY_PROG, CODEGEN_FILL_LOADER);
	map_add(r, &mcap, "bee_sb", CODEGEN_MAP_HASH, 4, sizeof(struct bee_sb_mount), BEE_SB_MAX,
		F_RDONLY_PROG, CODEGEN_FILL_LOADER);
	map_add(r, &mcap, "bee_walk", CODEGEN_MAP_PERCPU_ARRAY, 4, 2 * BEE_PATH_MAX, 1, 0,
		CODEGEN_FILL_PROGRAM);
}

/* ---- the temporary directory ---------------------------------------------------- */

static int file_write(int dirfd, const char *name, const void *data, size_t len)
{
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	const char *p = data;
	int err = 0;
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? -errno : -EIO;
			break;
		}
		p += n;
		len -= (size_t)n;
	}
	if (close(fd) < 0 && !err)
		err = -errno;
	return err;
}

static int file_read(int dirfd, const char *name, uint8_t **out, size_t *len)
{
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	uint8_t *b = NULL;
	size_t n = 0, cap = 0;
	int err = 0;

	if (fd < 0)
		return -errno;
	for (;;) {
		/* mem_try_realloc, not the raising funnel: fd must be closed */
		if (cap - n < 65536) {
			uint8_t *bigger = cap <= SIZE_MAX / 2 - 65536 ? mem_try_realloc(b, cap * 2 + 65536) : NULL;
			if (!bigger) {
				err = -ENOMEM;
				break;
			}
			b = bigger;
			cap = cap * 2 + 65536;
		}
		ssize_t r = read(fd, b + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = -errno;
			break;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	if (err) {
		free(b);
		return err;
	}
	*out = b;
	*len = n;
	return 0;
}

/* Removes everything in dir (clang writes only files there), then dir. */
static void tmp_remove(const char *dir)
{
	DIR *d = opendir(dir);
	if (d) {
		struct dirent *e;
		while ((e = readdir(d)))
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
				unlinkat(dirfd(d), e->d_name, 0);
		closedir(d);
	}
	rmdir(dir);
}

/* A new private directory holding every embedded template and the source. */
static int tmp_create(const struct codegen_opts *o, const char *src, size_t srclen,
		      struct diag_ctx *dc, char **dirp)
{
	const char *base = o && o->tmpdir ? o->tmpdir : getenv("TMPDIR");
	char *dir = xasprintf("%s/beec-codegen-XXXXXX", base && *base ? base : "/tmp");
	int err = 0, dfd = -1;

	if (!mkdtemp(dir)) {
		err = -errno;
		diag_error(dc, LOC_NONE, "codegen: cannot create a temporary directory '%s': %s", dir,
			   strerror(-err));
		free(dir);
		return err;
	}
	/* from here on the caller removes it, also when memory runs out */
	*dirp = dir;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		err = -errno;
		goto fail;
	}
	for (size_t i = 0; i < bee_ntemplates && !err; i++) {
		const struct bee_template *t = &bee_templates[i];
		/* base names only, and never the source's own name */
		if (strchr(t->name, '/') || !strcmp(t->name, "policy.bpf.c")) {
			err = -EINVAL;
			break;
		}
		err = file_write(dfd, t->name, t->data, t->len);
	}
	if (!err)
		err = file_write(dfd, "policy.bpf.c", src, srclen);
fail:
	if (dfd >= 0)
		close(dfd);
	if (err) {
		diag_error(dc, LOC_NONE, "codegen: cannot write the BPF sources to '%s': %s", dir,
			   strerror(-err));
		return err;
	}
	return 0;
}

/* ---- clang ------------------------------------------------------------------- */

/* Runs clang in dir; its stdout and stderr end up in *msg (cut at
 * CLANG_MSG_MAX). Returns 0 when it exited 0, -ENOENT when it could not
 * be started, -EIO otherwise; *status is the wait status. */
static int clang_run(const char *clang, const char *dir, char **msg, int *status)
{
	char *prefix_map = xasprintf("-fdebug-prefix-map=%s=/bee", dir);
	const char *argv[] = {
		clang, "-target", "bpf", "-O2", "-g", "-mcpu=v3", "-Wall", prefix_map,
		"-c", "policy.bpf.c", "-o", "policy.bpf.o", NULL,
	};
	int out[2] = { -1, -1 }, ex[2] = { -1, -1 };
	struct buf b = { 0 };
	int err = 0, child_errno = 0;
	pid_t pid;

	*msg = NULL;
	*status = 0;
	/* room for all the output kept, before any descriptor or child exists:
	 * nothing below allocates while they do */
	mem_grow((void **)&b.s, &b.cap, CLANG_MSG_MAX + 4096 + PATH_MAX + 64, 1);
	b.s[0] = '\0';
	if (pipe2(out, O_CLOEXEC) < 0 || pipe2(ex, O_CLOEXEC) < 0) {
		err = -errno;
		goto done;
	}
	pid = fork();
	if (pid < 0) {
		err = -errno;
		goto done;
	}
	if (pid == 0) {
		/* the child: only async-signal-safe calls until exec */
		int e;
		int devnull = open("/dev/null", O_RDONLY);
		if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(out[1], 1) < 0 || dup2(out[1], 2) < 0 ||
		    chdir(dir) < 0)
			goto child_fail;
		execvp(clang, (char *const *)argv);
child_fail:
		e = errno;
		if (write(ex[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(out[1]);
	close(ex[1]);
	out[1] = ex[1] = -1;
	for (;;) {
		char chunk[4096];
		ssize_t n = read(out[0], chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (b.n < CLANG_MSG_MAX)
			buf_printf(&b, "%.*s", (int)n, chunk);
	}
	if (read(ex[0], &child_errno, sizeof(child_errno)) != (ssize_t)sizeof(child_errno))
		child_errno = 0;
	while (waitpid(pid, status, 0) < 0) {
		if (errno != EINTR) {
			err = -errno;
			goto done;
		}
	}
	if (child_errno)
		err = child_errno == ENOENT ? -ENOENT : -child_errno;
	else if (!WIFEXITED(*status) || WEXITSTATUS(*status) != 0)
		err = -EIO;
	if (child_errno) {
		int len = snprintf(b.s, b.cap, "cannot run '%s': %s", clang, strerror(child_errno));
		b.n = len < 0 ? 0 : (size_t)len;
	}
done:
	if (b.n == 0) {
		/* no output: no message */
		free(b.s);
		b.s = NULL;
	}
	for (int i = 0; i < 2; i++) {
		if (out[i] >= 0)
			close(out[i]);
		if (ex[i] >= 0)
			close(ex[i]);
	}
	free(prefix_map);
	*msg = b.s;
	return err;
}

static void clang_diag(struct diag_ctx *dc, const struct lowered *lw, const char *clang, int err,
		       int status, const char *msg)
{
	const char *text = msg && *msg ? msg : "(no output)\n";
	size_t len = strlen(text);
	int cut = len && text[len - 1] == '\n';

	if (err == -EIO && WIFSIGNALED(status))
		diag_error(dc, LOC_NONE,
			   "policy '%s': building its BPF program: '%s' was killed by signal %d:\n%.*s",
			   lw->ir->name, clang, WTERMSIG(status), (int)(len - (size_t)cut), text);
	else if (err == -EIO)
		diag_error(dc, LOC_NONE,
			   "policy '%s': building its BPF program: '%s' failed (exit status %d):\n%.*s",
			   lw->ir->name, clang, WEXITSTATUS(status), (int)(len - (size_t)cut), text);
	else
		diag_error(dc, LOC_NONE, "policy '%s': building its BPF program: %.*s", lw->ir->name,
			   (int)(len - (size_t)cut), text);
	if (err == -ENOENT)
		diag_note(dc, LOC_NONE, "install clang, or name it with BEE_CLANG");
}

/* ---- the driver ---------------------------------------------------------------- */

/* What codegen_build holds across clang, released on every path. */
struct codegen_run {
	const struct lowered *lw;
	const struct codegen_opts *o;
	struct diag_ctx *dc;
	struct codegen_result *out;
	struct codegen_params p;
	struct buf src;
	char *dir, *msg;
	int dfd;
};

static int codegen_run_clang(struct codegen_run *r)
{
	const struct lowered *lw = r->lw;
	struct diag_ctx *dc = r->dc;
	const char *clang = opt_clang(r->o);
	int status = 0;
	int err = tmp_create(r->o, r->src.s, r->src.n, dc, &r->dir);
	if (err < 0)
		return err;
	err = clang_run(clang, r->dir, &r->msg, &status);
	if (err < 0) {
		if (err == -EIO || err == -ENOENT || r->msg)
			clang_diag(dc, lw, clang, err, status, r->msg);
		else
			diag_error(dc, LOC_NONE, "policy '%s': building its BPF program: %s",
				   lw->ir->name, strerror(-err));
		return err;
	}
	r->dfd = open(r->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	err = r->dfd < 0 ? -errno : file_read(r->dfd, "policy.bpf.o", &r->out->elf, &r->out->elf_len);
	if (err < 0) {
		diag_error(dc, LOC_NONE, "policy '%s': reading the BPF program clang wrote: %s",
			   lw->ir->name, strerror(-err));
		return err;
	}
	if (r->out->elf_len == 0) {
		diag_error(dc, LOC_NONE, "policy '%s': clang wrote an empty BPF program", lw->ir->name);
		return -EIO;
	}
	return 0;
}

int codegen_build(const struct lowered *lw, const struct codegen_opts *o, struct diag_ctx *dc,
		  struct codegen_result *out)
{
	struct codegen_run r = { .lw = lw, .o = o, .dc = dc, .out = out, .dfd = -1 };
	memset(out, 0, sizeof(*out));
	int err = codegen_params(lw, o, dc, &r.p);
	if (err < 0)
		return err;
	source_write(lw, &r.p, &r.src);
	/* a trap of its own, so that the temporary directory is removed also
	 * when memory runs out; the exhaustion still reaches our caller's trap */
	err = MEM_PROTECT(-ENOMEM, codegen_run_clang(&r));
	if (r.dfd >= 0)
		close(r.dfd);
	if (r.dir) {
		tmp_remove(r.dir);
		free(r.dir);
	}
	free(r.msg);
	if (err == 0) {
		out->source = r.src.s;
		out->source_len = r.src.n;
		r.src.s = NULL;
		codegen_tables(&r.p, out);
	}
	free(r.src.s);
	if (err < 0)
		codegen_result_fini(out);
	return err;
}

void codegen_result_fini(struct codegen_result *r)
{
	free(r->elf);
	free(r->source);
	free(r->progs);
	free(r->maps);
	memset(r, 0, sizeof(*r));
}

char *codegen_clang_version(const struct codegen_opts *o)
{
	const char *clang = opt_clang(o);
	int fds[2];
	pid_t pid;
	char line[256];
	size_t n = 0;
	int status;

	if (pipe2(fds, O_CLOEXEC) < 0)
		return NULL;
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return NULL;
	}
	if (pid == 0) {
		int devnull = open("/dev/null", O_RDWR);
		if (devnull >= 0 && dup2(devnull, 0) >= 0 && dup2(fds[1], 1) >= 0 &&
		    dup2(devnull, 2) >= 0)
			execlp(clang, clang, "--version", (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	for (;;) {
		char rest[512];
		/* keep the first line; read the rest to the end, so clang exits 0 */
		bool full = n == sizeof(line) - 1 || memchr(line, '\n', n);
		ssize_t r = full ? read(fds[0], rest, sizeof(rest))
				 : read(fds[0], line + n, sizeof(line) - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		if (!full)
			n += (size_t)r;
	}
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || n == 0)
		return NULL;
	line[n] = '\0';
	line[strcspn(line, "\n")] = '\0';
	return xstrdup(line);
}
