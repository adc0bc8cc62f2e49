/* SPDX-License-Identifier: GPL-2.0-only */
/* test_ll: the rights of Landlock ABI 3 to 6 that ll.c handles, on this
 * host's kernel, for both of its rulesets (the landlock backend's and
 * bpf-lsm's hardening one).
 *
 * A child restricted by the ruleset of a compiled policy that reads DIR,
 * writes DIR/rw/ **, reads /dev/null and writes /dev/zero tries, each with
 * a control that must succeed:
 *
 *   truncate (ABI 3)   DIR/ro/f refused (EACCES); DIR/rw/f truncated
 *   ioctl (ABI 5)      a device ioctl on /dev/null, opened read-only,
 *                      refused (EACCES); on /dev/zero, which the policy
 *                      writes, it reaches the driver (ENOTTY: it has none)
 *   signals (ABI 6)    SIGKILL to a sleep the test started outside the
 *                      domain refused (EPERM, and the sleep lives on);
 *                      SIGKILL to the child's own child delivered
 *   abstract sockets   connect to an abstract listener outside the domain
 *   (ABI 6)            refused (EPERM); to one made inside accepted
 *
 * Landlock needs no root. A kernel below ABI 6 skips what it lacks, saying
 * so; under CI=true that fails instead.
 */
#include "internal.h"

#include "libbeec.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>
#include <cmocka.h>

static char dir[64];

static void put(const char *rel, const char *text)
{
	char p[128];
	snprintf(p, sizeof(p), "%s%s", dir, rel);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* The manifest of the policy text, through libbeec and the loader's reader. */
static void manifest_load(const char *text, struct bee_pack **pack, struct bee_manifest *m)
{
	char path[128];
	struct beec_policy pol = { .src = source_new("ll.toml", text, strlen(text)) };
	struct diag_ctx dc;
	struct beec_opts o = { .sz = sizeof(o) };
	uint8_t *buf;
	size_t len;
	diag_init(&dc);
	int err = beec_policy__parse(&pol, &dc);
	if (!err)
		err = beec_policy__build(&pol, &o, &dc);
	if (!err)
		err = beec_policy__lower(&pol, &o, &dc);
	if (!err)
		err = beec_policy__pack(&pol, &o, &dc, &buf, &len);
	if (err)
		diag_print(&dc, stderr);
	assert_int_equal(err, 0);
	snprintf(path, sizeof(path), "%s/ll.bpfpack", dir);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	fclose(f);
	free(buf);
	beec_policy__fini(&pol);
	diag_fini(&dc);
	struct bee_error e;
	assert_int_equal(bee_pack_load(path, pack, m, &e), 0);
	unlink(path);
}

static int errno_of(long rc)
{
	return rc < 0 ? errno : 0;
}

/* An abstract listener named "\0bee-test-ll-TAG-PID"; its address in sa. */
static int abstract_listen(const char *tag, struct sockaddr_un *sa, socklen_t *len)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	int n = snprintf(sa->sun_path + 1, sizeof(sa->sun_path) - 1, "bee-test-ll-%s-%d", tag, (int)getpid());
	*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)sa, *len) < 0 || listen(fd, 4) < 0)
		return -1;
	return fd;
}

static int abstract_connect(const struct sockaddr_un *sa, socklen_t len)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	int rc = connect(fd, (const struct sockaddr *)sa, len);
	int saved = errno;
	close(fd);
	errno = saved;
	return rc;
}

enum which { RULESET, HARDENING };

/* Runs the attempts in a child under the ruleset; fails the test on any
 * answer but the expected one. */
static void attempts(enum which w)
{
	int abi = bee_landlock_abi();
	const char *why = abi < 1 ? "Landlock is not enabled" : abi < 6 ? "Landlock ABI below 6" : NULL;
	if (why) {
		const char *ci = getenv("CI");
		if (ci && strcmp(ci, "true") == 0)
			fail_msg("test_ll: %s (ABI %d) under CI=true", why, abi);
		fprintf(stderr, "test_ll: SKIPPED parts: %s (ABI %d)\n", why, abi);
		if (abi < 1)
			skip();
	}
	struct bee_pack *pack;
	struct bee_manifest m;
	struct bee_error e;
	int rfd;
	char text[512];
	snprintf(text, sizeof(text),
		 "version = 1\nname = \"ll-rights\"\n[fs]\n"
		 "read = [\"%s/**\", \"/dev/null\"]\nwrite = [\"%s/rw/**\", \"/dev/zero\"]\n", dir, dir);
	manifest_load(text, &pack, &m);
	if (w == RULESET)
		assert_int_equal(bee_landlock_ruleset(pack, &m, abi, &rfd, NULL, NULL, &e), 0);
	else
		assert_int_equal(bee_landlock_hardening(&m, abi, &rfd, NULL, NULL, &e), 0);
	bee_manifest_fini(&m);
	bee_pack__close(pack);

	/* outside the domain: a process to signal and a listener to reach */
	pid_t outside = fork();
	assert_true(outside >= 0);
	if (outside == 0) {
		execlp("sleep", "sleep", "30", (char *)NULL);
		_exit(127);
	}
	struct sockaddr_un out_sa;
	socklen_t out_len;
	int lfd = abstract_listen("outside", &out_sa, &out_len);
	assert_true(lfd >= 0);

	char ro[128], rw[128];
	snprintf(ro, sizeof(ro), "%s/ro/f", dir);
	snprintf(rw, sizeof(rw), "%s/rw/f", dir);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int bad = 0;
#define EXPECT(call, want)                                                                        \
	do {                                                                                      \
		int got_ = errno_of(call);                                                        \
		if (got_ != (want)) {                                                             \
			fprintf(stderr, "test_ll %s: %s: errno %d (%s), want %d\n",              \
				w == RULESET ? "ruleset" : "hardening", #call, got_, strerror(got_), \
				want);                                                            \
			bad = 1;                                                          \
		}                                                                                 \
	} while (0)
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
		    syscall(__NR_landlock_restrict_self, rfd, 0) < 0)
			_exit(2);
		if (abi >= 3) {
			EXPECT(truncate(ro, 0), EACCES);
			EXPECT(truncate(rw, 0), 0);
		}
		if (abi >= 5) {
			struct termios t;
			int nfd = open("/dev/null", O_RDONLY | O_CLOEXEC);
			int zfd = open("/dev/zero", O_WRONLY | O_CLOEXEC);
			if (nfd < 0 || zfd < 0) {
				fprintf(stderr, "test_ll: /dev/null or /dev/zero: %s\n", strerror(errno));
				_exit(3);
			}
			EXPECT(ioctl(nfd, TCGETS, &t), EACCES);
			EXPECT(ioctl(zfd, TCGETS, &t), ENOTTY);
			close(nfd);
			close(zfd);
		}
		if (abi >= 6) {
			EXPECT(kill(outside, SIGKILL), EPERM);
			pid_t own = fork();
			if (own == 0) {
				pause();
				_exit(0);
			}
			EXPECT(kill(own, SIGKILL), 0);
			int st;
			if (waitpid(own, &st, 0) != own || !WIFSIGNALED(st) || WTERMSIG(st) != SIGKILL)
				bad = 1;
			EXPECT(abstract_connect(&out_sa, out_len), EPERM);
			struct sockaddr_un in_sa;
			socklen_t in_len;
			int ifd = abstract_listen("inside", &in_sa, &in_len);
			if (ifd < 0)
				bad = 1;
			EXPECT(abstract_connect(&in_sa, in_len), 0);
		}
#undef EXPECT
		_exit(bad);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	close(rfd);
	close(lfd);
	/* the refused SIGKILL left the outside process alive */
	int alive = waitpid(outside, &status, WNOHANG);
	kill(outside, SIGKILL);
	waitpid(outside, NULL, 0);
	assert_int_equal(alive, 0);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_ruleset(void **state)
{
	(void)state;
	attempts(RULESET);
}

static void test_hardening(void **state)
{
	(void)state;
	attempts(HARDENING);
}

/* ---- a big plan's rules through ll.c's threads ----------------------------------------
 *
 * A directory of 600 files (two batches of 256 rules end inside it) and
 * 40 of 5 (batches of at most 16 directories), read with "*.pem" denied
 * below: every file gets its own rule. Under the ruleset made with the
 * threads from the first rule (BEE_LL_POOL_AFTER=0), made so with an
 * RLIMIT_NOFILE that leaves room for fewer dups than there are
 * directories (the walk waits for the threads to close some), made with
 * a limit that leaves too few for any thread, and made with every rule
 * added by the walk itself, a child opens every file: each .pem is
 * refused (EACCES) and every other file opens (the control). */
#define POOL_BIG 600
#define POOL_DIRS 40
#define POOL_SMALL 5

static bool pool_denied(unsigned i)
{
	return i % 10 == 0;
}

static void pool_path(char *p, size_t size, int d, unsigned i)
{
	if (d < 0)
		snprintf(p, size, "%s/pool/big/f%03u.%s", dir, i, pool_denied(i) ? "pem" : "txt");
	else
		snprintf(p, size, "%s/pool/d%02d/g%u.%s", dir, d, i, pool_denied(i) ? "pem" : "txt");
}

static void pool_tree(void)
{
	char p[192];
	snprintf(p, sizeof(p), "%s/pool", dir);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/pool/big", dir);
	assert_int_equal(mkdir(p, 0755), 0);
	for (int d = -1; d < POOL_DIRS; d++) {
		if (d >= 0) {
			snprintf(p, sizeof(p), "%s/pool/d%02d", dir, d);
			assert_int_equal(mkdir(p, 0755), 0);
		}
		for (unsigned i = 0; i < (d < 0 ? POOL_BIG : POOL_SMALL); i++) {
			pool_path(p, sizeof(p), d, i);
			int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
			assert_true(fd >= 0);
			close(fd);
		}
	}
}

/* The ruleset with BEE_LL_POOL_AFTER=after (NULL: unset) and, when
 * nofile, that RLIMIT_NOFILE while it is made; then every open. */
static void pool_check(const char *after, rlim_t nofile)
{
	char text[512];
	snprintf(text, sizeof(text),
		 "version = 1\nname = \"ll-pool\"\n[fs]\nread = [\"%s/pool/**\"]\ndeny = [\"**/*.pem\"]\n",
		 dir);
	struct bee_pack *pack;
	struct bee_manifest m;
	struct bee_error e;
	struct rlimit was;
	int rfd, abi = bee_landlock_abi();
	if (abi < 1)
		skip();
	manifest_load(text, &pack, &m);
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &was), 0);
	if (after)
		setenv("BEE_LL_POOL_AFTER", after, 1);
	if (nofile) {
		struct rlimit low = { nofile, was.rlim_max };
		assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	}
	int err = bee_landlock_ruleset(pack, &m, abi, &rfd, NULL, NULL, &e);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &was), 0);
	unsetenv("BEE_LL_POOL_AFTER");
	if (err)
		fprintf(stderr, "test_ll pool (after %s, nofile %llu): %s\n", after ? after : "-",
			(unsigned long long)nofile, e.msg);
	assert_int_equal(err, 0);
	bee_manifest_fini(&m);
	bee_pack__close(pack);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int bad = 0;
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || syscall(__NR_landlock_restrict_self, rfd, 0) < 0)
			_exit(2);
		for (int d = -1; d < POOL_DIRS; d++) {
			for (unsigned i = 0; i < (d < 0 ? POOL_BIG : POOL_SMALL); i++) {
				char p[192];
				pool_path(p, sizeof(p), d, i);
				int fd = open(p, O_RDONLY | O_CLOEXEC);
				int got = fd < 0 ? errno : 0, want = pool_denied(i) ? EACCES : 0;
				if (fd >= 0)
					close(fd);
				if (got != want) {
					fprintf(stderr, "test_ll pool (after %s, nofile %llu): open %s: %s, want %s\n",
						after ? after : "-", (unsigned long long)nofile, p, strerror(got),
						strerror(want));
					bad = 1;
				}
			}
		}
		_exit(bad);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	close(rfd);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_pool(void **state)
{
	(void)state;
	pool_check("0", 0);      /* every rule through the threads */
	pool_check("0", 64);     /* fewer dups at once than directories */
	pool_check("0", 24);     /* too few fds to spare: no threads */
	pool_check(NULL, 0);     /* 800 rules: under LL_POOL_AFTER, the walk's own */
}

int main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/test_ll-XXXXXX");
	if (!mkdtemp(dir)) {
		perror("test_ll: mkdtemp");
		return 1;
	}
	char sub[128];
	snprintf(sub, sizeof(sub), "%s/ro", dir);
	mkdir(sub, 0700);
	snprintf(sub, sizeof(sub), "%s/rw", dir);
	mkdir(sub, 0700);
	put("/ro/f", "read only\n");
	put("/rw/f", "written\n");
	pool_tree();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ruleset),
		cmocka_unit_test(test_hardening),
		cmocka_unit_test(test_pool),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		rc = 1;
	return rc;
}
