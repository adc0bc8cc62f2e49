/* SPDX-License-Identifier: GPL-2.0-only */
/* Unit tests of the configuration files (config.h): one row per layer
 * (each wins over the ones below it, key by key), the project search (it
 * stops at the repository's root), XDG_CONFIG_HOME over HOME, relative
 * paths, defines merged per name with -D winning, one row per error kind
 * with its exact location and note, the refusals of unsafe or unreadable
 * files (each with a control that loads), and the dump in both forms.
 * Runs without root; the row of a file owned by another user needs root
 * to chown and says so when it is skipped. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config.h"

static char T[64];

static void mkdirs(const char *path)
{
	char buf[512];
	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++) {
		if (*p == '/') {
			*p = '\0';
			mkdir(buf, 0755);
			*p = '/';
		}
	}
	mkdir(buf, 0755);
}

/* Writes T/rel (mode 0644), making its directories. */
static void put(const char *rel, const char *text)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", T, rel);
	char *slash = strrchr(path, '/');
	*slash = '\0';
	mkdirs(path);
	*slash = '/';
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	chmod(path, 0644);
}

static char *tpath(const char *rel)
{
	static char bufs[4][512];
	static int i;
	char *b = bufs[i++ % 4];
	snprintf(b, 512, "%s/%s", T, rel);
	return b;
}

static void rm_tree(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", T);
	assert_int_equal(system(cmd), 0);
}

static int setup(void **state)
{
	(void)state;
	snprintf(T, sizeof(T), "/tmp/test_config-XXXXXX");
	return mkdtemp(T) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	rm_tree();
	return 0;
}

/* Loads with the working directory T/repo/sub/dir, HOME T/home and the
 * system's layer under T/etc. */
static int load(struct config *c, struct diag_ctx *dc, const char *file, char *err, size_t errlen)
{
	struct config_opts o = {
		.sz = sizeof(o), .file = file, .cwd = tpath("repo/sub/dir"), .home = tpath("home"),
		.sysconfdir = tpath("etc"),
	};
	diag_init(dc);
	return config_load(c, &o, dc, err, errlen);
}

static unsigned line_of(struct loc l)
{
	unsigned line, col;
	loc_linecol(l, &line, &col);
	return line;
}

/* ---- layers ---------------------------------------------------------------- */

static const struct {
	const char *rel;          /* the layer's file, relative to T */
	const char *state_dir;    /* what it sets */
} layer_files[] = {
	{ "etc/bee/config.toml", "/s/system" },
	{ "home/.config/bee/config.toml", "/s/user" },
	{ "repo/.bee/config.toml", "/s/project" },
	{ "explicit.toml", "/s/file" },
};

static void test_layers(void **state)
{
	(void)state;
	mkdirs(tpath("repo/sub/dir"));
	mkdirs(tpath("repo/.git"));
	/* above the repository's root: never read */
	put(".bee/config.toml", "[bee-load]\nbackend = \"bpf-lsm\"\n");
	/* each row adds one layer: it wins the key it sets, the lower
	 * layers keep the keys only they set */
	for (size_t n = 1; n <= 4; n++) {
		char text[256];
		snprintf(text, sizeof(text), "# layer %zu\n[bee-load]\nstate-dir = \"%s\"\n%s", n,
			 layer_files[n - 1].state_dir, n == 1 ? "audit-detail = true\nbackend = \"landlock\"\n" : "");
		put(layer_files[n - 1].rel, text);
		struct config c;
		struct diag_ctx dc;
		char err[256];
		int rc = load(&c, &dc, n == 4 ? tpath("explicit.toml") : NULL, err, sizeof(err));
		if (rc)
			diag_print(&dc, stderr);
		assert_int_equal(rc, 0);
		assert_string_equal(config_str(&c, CONFIG_STATE_DIR), layer_files[n - 1].state_dir);
		const struct config_value *v = &c.v[CONFIG_STATE_DIR];
		assert_int_equal(v->from, CONFIG_FROM_FILE);
		assert_string_equal(v->loc.src->name, tpath(layer_files[n - 1].rel));
		assert_int_equal(line_of(v->loc), 3);
		/* set by the system's file only */
		assert_true(config_bool(&c, CONFIG_AUDIT_DETAIL));
		assert_string_equal(c.v[CONFIG_AUDIT_DETAIL].loc.src->name, tpath(layer_files[0].rel));
		assert_string_equal(config_str(&c, CONFIG_BACKEND), "landlock");
		/* set by none */
		assert_int_equal(c.v[CONFIG_FALLBACK].from, CONFIG_FROM_DEFAULT);
		assert_true(config_bool(&c, CONFIG_FALLBACK));
		/* a flag beats them all */
		assert_int_equal(config_set_flag(&c, CONFIG_STATE_DIR, "/s/flag"), 0);
		assert_string_equal(config_str(&c, CONFIG_STATE_DIR), "/s/flag");
		assert_int_equal(c.v[CONFIG_STATE_DIR].from, CONFIG_FROM_FLAG);
		diag_fini(&dc);
		config_fini(&c);
	}
	rm_tree();
	mkdir(T, 0700);
}

/* Defaults when no file exists; XDG_CONFIG_HOME over HOME; the search
 * from a directory with no repository above it goes up to /. */
static void test_defaults_and_xdg(void **state)
{
	(void)state;
	struct config c;
	struct diag_ctx dc;
	mkdirs(tpath("repo/sub/dir"));
	assert_int_equal(load(&c, &dc, NULL, NULL, 0), 0);
	for (int k = 0; k < CONFIG_KEY_COUNT; k++)
		assert_int_equal(c.v[k].from, CONFIG_FROM_DEFAULT);
	assert_string_equal(config_str(&c, CONFIG_BACKEND), "auto");
	assert_string_equal(config_str(&c, CONFIG_STATE_DIR), "/run/bee");
	assert_null(config_str(&c, CONFIG_AUDIT_LOG));
	assert_false(config_bool(&c, CONFIG_AUDIT_DETAIL));
	assert_null(c.files[CONFIG_LAYER_PROJECT].path);
	/* no .git anywhere up from T: the search went to / (unless / holds a
	 * project file, which a test machine has no business holding) */
	assert_string_equal(c.project_to, "/");
	diag_fini(&dc);
	config_fini(&c);

	put("home/.config/bee/config.toml", "[bee-load]\nbackend = \"landlock\"\n");
	put("xdg/bee/config.toml", "[bee-load]\nbackend = \"bpf-lsm\"\n");
	struct config_opts o = { .sz = sizeof(o), .cwd = tpath("repo/sub/dir"), .home = tpath("home"),
				 .sysconfdir = tpath("etc"), .xdg_config_home = tpath("xdg") };
	diag_init(&dc);
	assert_int_equal(config_load(&c, &o, &dc, NULL, 0), 0);
	assert_string_equal(config_str(&c, CONFIG_BACKEND), "bpf-lsm");
	config_fini(&c);
	/* the control: without XDG_CONFIG_HOME the HOME one is read */
	o.xdg_config_home = "relative/is/ignored";
	assert_int_equal(config_load(&c, &o, &dc, NULL, 0), 0);
	assert_string_equal(config_str(&c, CONFIG_BACKEND), "landlock");
	config_fini(&c);
	diag_fini(&dc);
	rm_tree();
	mkdir(T, 0700);
}

/* Relative paths against the file's directory; lists; defines per name. */
static void test_values(void **state)
{
	(void)state;
	mkdirs(tpath("repo/sub/dir"));
	mkdirs(tpath("repo/.git"));
	put("home/.config/bee/config.toml",
	    "[beec]\ndefine = { HOME = \"/home/u\", PROJECT = \"/user/p\" }\nabstractions = [\"/a\"]\n");
	put("repo/.bee/config.toml",
	    "[bee-load]\naudit-log = \"audit.jsonl\"\ndns-upstream = \"[2001:db8::53]:53\"\n"
	    "user = \"nobody:1234\"\n"
	    "[beec]\nabstractions = [\"abs\", \"/usr/share/bee/abstractions\"]\n[beec.define]\nPROJECT = \"/p\"\n");
	struct config c;
	struct diag_ctx dc;
	assert_int_equal(load(&c, &dc, NULL, NULL, 0), 0);
	char want[512];
	snprintf(want, sizeof(want), "%s/repo/.bee/audit.jsonl", T);
	assert_string_equal(config_str(&c, CONFIG_AUDIT_LOG), want);
	assert_string_equal(config_str(&c, CONFIG_DNS_UPSTREAM), "[2001:db8::53]:53");
	assert_string_equal(config_str(&c, CONFIG_USER), "nobody:1234");
	const struct config_value *a = &c.v[CONFIG_ABSTRACTIONS];
	assert_int_equal(a->n, 2);   /* a list is one value: the project's replaces the user's */
	snprintf(want, sizeof(want), "%s/repo/.bee/abs", T);
	assert_string_equal(a->list[0], want);
	assert_string_equal(a->list[1], "/usr/share/bee/abstractions");
	/* HOME from the user's file, PROJECT from the project's, then -D */
	assert_int_equal(config_define_flag(&c, "HOME=/flag"), 0);
	assert_int_equal(config_define_flag(&c, "NEW=x=y"), 0);
	size_t n;
	char **d = config_defines(&c, &n);
	assert_int_equal(n, 3);
	assert_string_equal(d[0], "HOME=/flag");
	assert_string_equal(d[1], "PROJECT=/p");
	assert_string_equal(d[2], "NEW=x=y");
	assert_int_equal(c.defines[1].from, CONFIG_FROM_FILE);
	assert_string_equal(c.defines[1].loc.src->name, tpath("repo/.bee/config.toml"));
	assert_int_equal(c.defines[0].from, CONFIG_FROM_FLAG);
	config_defines_free(d, n);
	diag_fini(&dc);
	config_fini(&c);
	rm_tree();
	mkdir(T, 0700);
}

/* ---- errors ----------------------------------------------------------------- */

static const struct {
	const char *text;
	unsigned line, col;
	const char *msg, *note;     /* note: NULL for none */
} bad_rows[] = {
	{ "[bee-load]\nbacknd = \"auto\"\n", 2, 1, "unknown key 'backnd' in [bee-load]", "did you mean 'backend'?" },
	{ "[bee-laod]\nbackend = \"auto\"\n", 1, 2, "unknown table [bee-laod]", "did you mean 'bee-load'?" },
	{ "backend = \"auto\"\n", 1, 1, "unknown key 'backend'", "'backend' belongs in [bee-load]" },
	{ "[bee-load]\nbackend = \"bpflsm\"\n", 2, 11, "unknown backend 'bpflsm'", "did you mean 'bpf-lsm'?" },
	{ "[bee-load]\nbackend = 1\n", 2, 11, "'bee-load.backend' must be a string, found an integer", NULL },
	{ "[bee-load]\nfallback = \"no\"\n", 2, 12, "'bee-load.fallback' must be true or false, found a string", NULL },
	{ "[bee-load]\nstate-dir = \"~/bee\"\n", 2, 13, "'bee-load.state-dir': '~' is not expanded",
	  "write an absolute path, or one relative to the file's directory" },
	{ "[bee-load]\nstate-dir = \"\"\n", 2, 13, "'bee-load.state-dir' must be a path, found an empty string", NULL },
	{ "[bee-load]\naudit-detail = 1.5\n", 2, 16, "'bee-load.audit-detail' must be true or false, found a float", NULL },
	{ "[bee-load]\ndns-upstream = \"1.2.3.4:99999\"\n", 2, 16,
	  "'1.2.3.4:99999' is not an IP address with an optional port", "write 192.0.2.53, 192.0.2.53:53 or [2001:db8::53]:53" },
	{ "[bee-load]\ndns-upstream = \"resolver.example\"\n", 2, 16,
	  "'resolver.example' is not an IP address with an optional port", "write 192.0.2.53, 192.0.2.53:53 or [2001:db8::53]:53" },
	{ "[bee-load]\nuser = 1000\n", 2, 8, "'bee-load.user' must be a string (a user), found an integer", NULL },
	{ "[bee-load]\nuser = \"a b\"\n", 2, 8, "'a b' is not a user", "write USER, UID, USER:GROUP or UID:GID" },
	{ "[bee-load]\nuser = \"1000:\"\n", 2, 8, "'1000:' is not a user", "write USER, UID, USER:GROUP or UID:GID" },
	{ "[beec]\nabstractions = \"/a\"\n", 2, 16, "'beec.abstractions' must be an array of paths, found a string", NULL },
	{ "[beec]\nabstractions = [\"/a\", 3]\n", 2, 23, "'beec.abstractions' must be a string (a path), found an integer", NULL },
	{ "[beec]\ndefine = { 1X = \"v\" }\n", 2, 12, "'1X' is not a define's name",
	  "a name is letters, digits and '_', not starting with a digit" },
	{ "[beec.define]\nX = 1\n", 2, 5, "define 'X' must be a string, found an integer", NULL },
	{ "[beec]\ndefine = \"X=1\"\n", 2, 10, "'beec.define' must be a table of NAME = \"VALUE\", found a string", NULL },
	{ "bee-load = 1\n", 1, 12, "'bee-load' must be a table, found an integer", NULL },
	{ "[bee-load]\nbackend = \n", 2, 11, NULL, NULL },   /* the TOML front end's own error */
};

static void test_bad(void **state)
{
	(void)state;
	mkdirs(tpath("repo/sub/dir"));
	for (size_t i = 0; i < sizeof(bad_rows) / sizeof(bad_rows[0]); i++) {
		put("home/.config/bee/config.toml", bad_rows[i].text);
		struct config c;
		struct diag_ctx dc;
		char err[256];
		int rc = load(&c, &dc, NULL, err, sizeof(err));
		if (rc != -EINVAL || !dc.n) {
			fprintf(stderr, "row %zu: rc %d: %s\n", i, rc, err);
			fail();
		}
		const struct diag *d = &dc.items[0];
		assert_int_equal(d->severity, DIAG_ERROR);
		assert_string_equal(d->loc.src->name, tpath("home/.config/bee/config.toml"));
		unsigned line, col;
		loc_linecol(d->loc, &line, &col);
		if (line != bad_rows[i].line || col != bad_rows[i].col ||
		    (bad_rows[i].msg && strcmp(d->msg, bad_rows[i].msg) != 0) ||
		    (bad_rows[i].note && (d->nnotes < 1 || strcmp(d->notes[0].msg, bad_rows[i].note) != 0)) ||
		    (!bad_rows[i].note && bad_rows[i].msg && d->nnotes)) {
			diag_print(&dc, stderr);
			fail_msg("row %zu: got %u:%u '%s'", i, line, col, d->msg);
		}
		diag_fini(&dc);
		config_fini(&c);
	}
	/* printed as a policy's are, source line and caret */
	put("home/.config/bee/config.toml", "[bee-load]\nbacknd = \"auto\"\n");
	struct config c;
	struct diag_ctx dc;
	assert_int_equal(load(&c, &dc, NULL, NULL, 0), -EINVAL);
	char *text;
	size_t len;
	FILE *f = open_memstream(&text, &len);
	diag_print(&dc, f);
	fclose(f);
	char want[1024];
	snprintf(want, sizeof(want),
		 "%s/home/.config/bee/config.toml:2:1: error: unknown key 'backnd' in [bee-load]\n"
		 "    2 | backnd = \"auto\"\n"
		 "      | ^~~~~~\n"
		 "%s/home/.config/bee/config.toml:2:1: note: did you mean 'backend'?\n",
		 T, T);
	assert_string_equal(text, want);
	free(text);
	diag_fini(&dc);
	config_fini(&c);
	/* the control: the same file spelt right */
	put("home/.config/bee/config.toml", "[bee-load]\nbackend = \"auto\"\n");
	assert_int_equal(load(&c, &dc, NULL, NULL, 0), 0);
	assert_int_equal(c.v[CONFIG_BACKEND].from, CONFIG_FROM_FILE);
	diag_fini(&dc);
	config_fini(&c);
	/* a bad file in two layers: both reported in one run */
	put("etc/bee/config.toml", "[beec]\nabstractions = 1\n");
	put("home/.config/bee/config.toml", "[bee-load]\nbackend = 2\n");
	assert_int_equal(load(&c, &dc, NULL, NULL, 0), -EINVAL);
	assert_int_equal(dc.errors, 2);
	diag_fini(&dc);
	config_fini(&c);
	rm_tree();
	mkdir(T, 0700);
}

/* What the next row expects of the user's config file. */
static struct {
	int ret;                  /* load's */
	bool unsearchable, read;
	const char *err;          /* load's message, when ret < 0 */
} row_want;

/* One load against row_want: 0, or which part of it failed. */
static int row_user(void)
{
	struct config c;
	struct diag_ctx dc;
	char err[512];
	int ret = load(&c, &dc, NULL, err, sizeof(err));
	int r = ret != row_want.ret                                                ? 1
		: ret == 0 && c.files[CONFIG_LAYER_USER].unsearchable != row_want.unsearchable ? 2
		: ret == 0 && c.files[CONFIG_LAYER_USER].read != row_want.read         ? 3
		: ret < 0 && strcmp(err, row_want.err)                                   ? 4
											: 0;
	diag_fini(&dc);
	config_fini(&c);
	return r;
}

/* row() as this user, or as root in a child that is nobody (65534): the
 * rows of permissions need a user whom they bind. */
static int as_user(int (*row)(void))
{
	if (geteuid() != 0)
		return row();
	pid_t pid = fork();
	if (pid == 0) {
		if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
			_exit(90);
		_exit(row());
	}
	int st;
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return 91;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Files that cannot be read or that another user could have written. */
static void test_refused(void **state)
{
	(void)state;
	mkdirs(tpath("repo/sub/dir"));
	struct config c;
	struct diag_ctx dc;
	char err[512], want[512];

	assert_int_equal(load(&c, &dc, tpath("missing.toml"), err, sizeof(err)), -ENOENT);
	snprintf(want, sizeof(want), "cannot read '%s': No such file or directory", tpath("missing.toml"));
	assert_string_equal(err, want);
	diag_fini(&dc);
	config_fini(&c);

	mkdirs(tpath("adir"));
	assert_int_equal(load(&c, &dc, tpath("adir"), err, sizeof(err)), -EINVAL);
	assert_int_equal(dc.n, 0);
	snprintf(want, sizeof(want), "cannot read '%s': not a regular file", tpath("adir"));
	assert_string_equal(err, want);
	diag_fini(&dc);
	config_fini(&c);

	put("repo/.bee/config.toml", "[bee-load]\nbackend = \"landlock\"\n");
	chmod(tpath("repo/.bee/config.toml"), 0666);
	assert_int_equal(load(&c, &dc, NULL, err, sizeof(err)), -EPERM);
	snprintf(want, sizeof(want), "refusing '%s': it is writable by everyone (chmod go-w)",
		 tpath("repo/.bee/config.toml"));
	assert_string_equal(err, want);
	diag_fini(&dc);
	config_fini(&c);
	chmod(tpath("repo/.bee/config.toml"), 0664);
	assert_int_equal(load(&c, &dc, NULL, err, sizeof(err)), -EPERM);
	diag_fini(&dc);
	config_fini(&c);
	/* the control */
	chmod(tpath("repo/.bee/config.toml"), 0644);
	assert_int_equal(load(&c, &dc, NULL, err, sizeof(err)), 0);
	assert_string_equal(config_str(&c, CONFIG_BACKEND), "landlock");
	diag_fini(&dc);
	config_fini(&c);

	/* behind a directory this user cannot search: not theirs, skipped;
	 * seen but not readable: refused; and the control (root searches and
	 * reads anything: as root, the rows run as nobody) */
	put("home/.config/bee/config.toml", "[bee-load]\nbackend = \"bpf-lsm\"\n");
	if (geteuid() == 0)
		chmod(T, 0711);
	chmod(tpath("home/.config"), 0600);
	row_want.ret = 0, row_want.unsearchable = true, row_want.read = false;
	assert_int_equal(as_user(row_user), 0);
	chmod(tpath("home/.config"), 0755);
	chmod(tpath("home/.config/bee/config.toml"), 0200);
	snprintf(want, sizeof(want), "cannot read '%s': Permission denied", tpath("home/.config/bee/config.toml"));
	row_want.ret = -EACCES, row_want.err = want;
	assert_int_equal(as_user(row_user), 0);
	chmod(tpath("home/.config/bee/config.toml"), 0644);
	row_want.ret = 0, row_want.unsearchable = false, row_want.read = true;
	assert_int_equal(as_user(row_user), 0);
	chmod(T, 0700);
	if (geteuid() == 0) {
		unsetenv("SUDO_UID");
		assert_int_equal(chown(tpath("repo/.bee/config.toml"), 54321, 54321), 0);
		assert_int_equal(load(&c, &dc, NULL, err, sizeof(err)), -EPERM);
		snprintf(want, sizeof(want), "refusing '%s': it is owned by uid 54321, not by you (uid 0) or root",
			 tpath("repo/.bee/config.toml"));
		assert_string_equal(err, want);
		diag_fini(&dc);
		config_fini(&c);
		/* under sudo, the invoking user's own file is theirs to give */
		setenv("SUDO_UID", "54321", 1);
		assert_int_equal(load(&c, &dc, NULL, err, sizeof(err)), 0);
		unsetenv("SUDO_UID");
		diag_fini(&dc);
		config_fini(&c);
	} else {
		fprintf(stderr, "test_config: the row of a file owned by another user needs root: skipped\n");
	}
	rm_tree();
	mkdir(T, 0700);
}

/* ---- dump ------------------------------------------------------------------ */

static void test_dump(void **state)
{
	(void)state;
	mkdirs(tpath("repo/sub/dir"));
	mkdirs(tpath("repo/.git"));
	put("repo/.bee/config.toml", "[bee-load]\nbackend = \"landlock\"\nfallback = false\n"
				     "[beec.define]\nPROJECT = \"/p\"\n");
	struct config c;
	struct diag_ctx dc;
	assert_int_equal(load(&c, &dc, NULL, NULL, 0), 0);
	assert_int_equal(config_set_flag(&c, CONFIG_AUDIT_LOG, "/tmp/a \"q\".jsonl"), 0);
	char *text;
	size_t len;
	FILE *f = open_memstream(&text, &len);
	assert_int_equal(config_dump(&c, false, f), 0);
	fclose(f);
	char want[4096];
	snprintf(want, sizeof(want),
		 "# files, lowest layer first; each overrides the ones above it key by key\n"
		 "#   system    %s/etc/bee/config.toml (not found)\n"
		 "#   user      %s/home/.config/bee/config.toml (not found)\n"
		 "#   project   %s/repo/.bee/config.toml\n"
		 "#   --config  none\n"
		 "bee-load.backend = \"landlock\"               # %s/repo/.bee/config.toml:2\n"
		 "bee-load.fallback = false                   # %s/repo/.bee/config.toml:3\n"
		 "bee-load.state-dir = \"/run/bee\"             # default\n"
		 "bee-load.bpffs = \"\"                         # default\n"
		 "bee-load.audit-log = \"/tmp/a \\\"q\\\".jsonl\"   # flag\n"
		 "bee-load.audit-detail = false               # default\n"
		 "bee-load.dns-upstream = \"\"                  # default\n"
		 "bee-load.user = \"\"                          # default\n"
		 "beec.abstractions = []                      # default\n"
		 "beec.define.PROJECT = \"/p\"                  # %s/repo/.bee/config.toml:5\n",
		 T, T, T, T, T, T);
	assert_string_equal(text, want);
	free(text);

	f = open_memstream(&text, &len);
	assert_int_equal(config_dump(&c, true, f), 0);
	fclose(f);
	json_error_t je;
	json_t *o = json_loads(text, 0, &je);
	assert_non_null(o);
	json_t *keys = json_object_get(o, "keys");
	assert_int_equal(json_object_size(keys), CONFIG_KEY_COUNT);
	json_t *b = json_object_get(keys, "bee-load.backend");
	assert_string_equal(json_string_value(json_object_get(b, "value")), "landlock");
	assert_string_equal(json_string_value(json_object_get(b, "from")), "file");
	assert_string_equal(json_string_value(json_object_get(b, "file")), tpath("repo/.bee/config.toml"));
	assert_int_equal(json_integer_value(json_object_get(b, "line")), 2);
	assert_true(json_is_false(json_object_get(json_object_get(keys, "bee-load.fallback"), "value")));
	assert_string_equal(json_string_value(json_object_get(json_object_get(keys, "bee-load.audit-log"), "from")),
			    "flag");
	assert_string_equal(json_string_value(json_object_get(json_object_get(keys, "bee-load.state-dir"), "from")),
			    "default");
	json_t *pd = json_object_get(json_object_get(keys, "beec.define"), "PROJECT");
	assert_string_equal(json_string_value(json_object_get(pd, "value")), "/p");
	assert_int_equal(json_integer_value(json_object_get(pd, "line")), 5);
	json_t *files = json_object_get(o, "files");
	assert_int_equal(json_array_size(files), CONFIG_LAYER_COUNT);
	assert_true(json_is_true(json_object_get(json_array_get(files, CONFIG_LAYER_PROJECT), "read")));
	assert_true(json_is_false(json_object_get(json_array_get(files, CONFIG_LAYER_SYSTEM), "read")));
	json_decref(o);
	free(text);
	diag_fini(&dc);
	config_fini(&c);
	rm_tree();
	mkdir(T, 0700);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layers),
		cmocka_unit_test(test_defaults_and_xdg),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_dump),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
