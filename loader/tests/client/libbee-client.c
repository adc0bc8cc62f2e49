/* SPDX-License-Identifier: GPL-2.0-only */
/* libbee-client: a program of libbee's users. tools/check-install builds
 * it against the installed tree alone (bee/libbee.h, libbee.pc,
 * libbee.so.1 or libbee.a) and runs a confined session with it, step by
 * step through the public API as bee-load run does:
 *
 *   libbee-client PACK BPFFS STATE_DIR AUDIT_LOG CMD [ARGS]...
 *
 * The landlock backend (this host's kernel refuses BPF_LSM_CGROUP).
 * Exits with the tool's status, or 100 with libbee's message on stderr
 * when the session cannot start. */
#include <bee/libbee.h>

#include <stdio.h>

static void warn_print(void *ctx, const char *msg)
{
	(void)ctx;
	fprintf(stderr, "libbee-client: warning: %s\n", msg);
}

int main(int argc, char **argv)
{
	if (argc < 6) {
		fprintf(stderr, "usage: libbee-client PACK BPFFS STATE_DIR AUDIT_LOG CMD [ARGS]...\n");
		return 2;
	}
	struct bee_session_opts o = {
		.sz = sizeof(o),
		.backend = BEE_BACKEND_LANDLOCK,
		.bpffs = argv[2],
		.state_dir = argv[3],
		.audit_log = argv[4],
		.warn = warn_print,
	};
	struct bee_session *s;
	struct bee_error e;
	if (bee_session__open(argv[1], &o, &s, &e) < 0) {
		fprintf(stderr, "libbee-client: %s (stage '%s')\n", e.msg, bee_stage__name(e.stage));
		return 100;
	}
	fprintf(stderr, "libbee-client: session %s, policy '%s', backend %s\n", bee_session__id(s),
		bee_session__policy(s), bee_backend__name(bee_session__backend(s)));
	int status = 100;
	if (bee_session__spawn(s, (const char *const *)&argv[5], NULL, &e) < 0) {
		fprintf(stderr, "libbee-client: %s\n", e.msg);
		goto out;
	}
	int r;
	while ((r = bee_session__poll(s, -1)) == 0)
		;
	if (r < 0) {
		fprintf(stderr, "libbee-client: poll: error %d\n", r);
		goto out;
	}
	status = bee_session__exit_status(s);
out:
	bee_session__close(s);
	return status;
}
