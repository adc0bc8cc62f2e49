/* SPDX-License-Identifier: GPL-2.0-only */
/* config.c: configuration files, layer by layer (config.h, docs/config.md).
 *
 * Each layer's file is read (refused when someone else could have written
 * it), parsed by the TOML front end and walked against CONFIG_KEYS; a
 * value that passes its check replaces the lower layer's, remembering its
 * location so that `bee-load config` can say where each value came from.
 */
#include "config.h"

#include "jsonx.h"
#include "mem.h"
#include "toml.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CONFIG_FILE_MAX (1u << 20)    /* a configuration file is small */

static const struct {
	const char *table, *name;
	enum config_type type;
	const char *def;
} keys[] = {
#define CONFIG_KEY_INFO(id, table, name, type, def) { table, name, type, def },
	CONFIG_KEYS(CONFIG_KEY_INFO)
#undef CONFIG_KEY_INFO
};

static const char *const layer_names[] = {
#define CONFIG_LAYER_NAME(id, name) name,
	CONFIG_LAYERS(CONFIG_LAYER_NAME)
#undef CONFIG_LAYER_NAME
};

static const char *const tables[] = { "bee-load", "beec", NULL };
static const char *const backends[] = { "auto", "bpf-lsm", "landlock", NULL };

const char *config_key_name(enum config_key k)
{
	static char names[CONFIG_KEY_COUNT][40];
	if (!names[k][0])
		snprintf(names[k], sizeof(names[k]), "%s.%s", keys[k].table, keys[k].name);
	return names[k];
}

/* ---- values --------------------------------------------------------------- */

static void value_clear(struct config_value *v)
{
	free(v->str);
	for (size_t i = 0; i < v->n; i++)
		free(v->list[i]);
	free(v->list);
	v->str = NULL;
	v->list = NULL;
	v->n = 0;
}

static void defaults(struct config *c)
{
	for (int k = 0; k < CONFIG_KEY_COUNT; k++) {
		struct config_value *v = &c->v[k];
		v->from = CONFIG_FROM_DEFAULT;
		if (keys[k].type == CONFIG_BOOL)
			v->b = strcmp(keys[k].def, "true") == 0;
		else if (keys[k].type != CONFIG_PATHS && keys[k].type != CONFIG_DEFINES)
			v->str = xstrdup(keys[k].def);
	}
}

static void define_set(struct config *c, const char *name, size_t nlen, const char *value,
		       enum config_from from, struct loc loc)
{
	struct config_define *d = NULL;
	for (size_t i = 0; i < c->ndefines && !d; i++)
		if (strlen(c->defines[i].name) == nlen && memcmp(c->defines[i].name, name, nlen) == 0)
			d = &c->defines[i];
	if (!d) {
		d = VEC_PUSH(c->defines, c->ndefines, c->capdefines);
		d->name = xstrndup(name, nlen);
	} else {
		free(d->value);
	}
	d->value = xstrdup(value);
	d->from = from;
	d->loc = loc;
}

/* ---- checks --------------------------------------------------------------- */

/* -D's rule: letters, digits and '_', not starting with a digit */
static bool define_name_ok(const char *s, size_t n)
{
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		bool alpha = (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || s[i] == '_';
		if (!alpha && !(i > 0 && s[i] >= '0' && s[i] <= '9'))
			return false;
	}
	return true;
}

/* ADDR, ADDR:PORT, [V6]:PORT or a bare V6 */
/* USER, UID, USER:GROUP or UID:GID: each part a name as useradd takes it
 * (letters, digits, '.', '_', '-', not starting with '-') or a number;
 * whether it exists is bee-load's question at run time. */
bool config_user_ok(const char *s)
{
	const char *colon = strchr(s, ':');
	for (int part = 0; part < (colon ? 2 : 1); part++) {
		const char *p = part ? colon + 1 : s, *end = part || !colon ? p + strlen(p) : colon;
		if (p == end || *p == '-' || end - p > 32)
			return false;
		for (; p < end; p++)
			if (!isalnum((unsigned char)*p) && *p != '.' && *p != '_' && *p != '-')
				return false;
	}
	return true;
}

static bool addr_ok(const char *s)
{
	char host[64];
	const char *port = NULL;
	unsigned char buf[16];
	int family = AF_INET;
	if (s[0] == '[') {
		const char *end = strchr(s, ']');
		if (!end || (size_t)(end - s - 1) >= sizeof(host))
			return false;
		memcpy(host, s + 1, (size_t)(end - s - 1));
		host[end - s - 1] = '\0';
		if (end[1] == ':')
			port = end + 2;
		else if (end[1])
			return false;
		family = AF_INET6;
	} else if (strchr(s, ':') != strrchr(s, ':')) {
		if (strlen(s) >= sizeof(host))
			return false;
		snprintf(host, sizeof(host), "%s", s);
		family = AF_INET6;
	} else {
		const char *colon = strchr(s, ':');
		size_t n = colon ? (size_t)(colon - s) : strlen(s);
		if (n >= sizeof(host))
			return false;
		memcpy(host, s, n);
		host[n] = '\0';
		port = colon ? colon + 1 : NULL;
	}
	if (inet_pton(family, host, buf) != 1)
		return false;
	if (!port)
		return true;
	char *end;
	errno = 0;
	unsigned long p = strtoul(port, &end, 10);
	return !errno && *port >= '1' && *port <= '9' && !*end && p >= 1 && p <= 65535;
}

struct walk {
	struct config *c;
	struct diag_ctx *dc;
	const struct source *src;
	const char *dir;          /* the file's directory, for relative paths */
};

static const char *type_name(const struct toml_node *n)
{
	if (n->type == TOML_ARRAY && n->arr.of_tables)
		return "an array of tables";
	if (n->type == TOML_TABLE)
		return "a table";
	if (n->type == TOML_ARRAY)
		return "an array";
	if (n->type == TOML_INTEGER)
		return "an integer";
	if (n->type == TOML_STRING || n->type == TOML_BOOL || n->type == TOML_FLOAT)
		return n->type == TOML_STRING ? "a string" : n->type == TOML_BOOL ? "a bool" : "a float";
	return toml_type_name(n->type);
}

static void unknown(struct walk *w, const struct toml_kv *kv, const char *table, const char *const *cands)
{
	char b[80];
	const char *key = diag_quote(b, sizeof(b), kv->key, kv->keylen, true);
	if (table)
		diag_error(w->dc, kv->key_loc, "unknown key '%s' in [%s]", key, table);
	else if (kv->val->type == TOML_TABLE)
		diag_error(w->dc, kv->key_loc, "unknown table [%s]", key);
	else
		diag_error(w->dc, kv->key_loc, "unknown key '%s'", key);
	const char *near = diag_suggest(key, cands);
	if (near) {
		diag_note(w->dc, kv->key_loc, "did you mean '%s'?", near);
	} else if (!table) {
		/* a key of a table written at the top */
		for (int k = 0; k < CONFIG_KEY_COUNT; k++) {
			if (strcmp(key, keys[k].name) == 0) {
				diag_note(w->dc, kv->key_loc, "'%s' belongs in [%s]", key, keys[k].table);
				return;
			}
		}
		diag_note(w->dc, kv->key_loc, "the tables are [bee-load] and [beec]");
	}
}

/* A path as written, or resolved against the file's directory; NULL after
 * an error. */
static char *path_value(struct walk *w, const struct toml_node *n, const char *key)
{
	if (n->type != TOML_STRING) {
		diag_error(w->dc, n->loc, "'%s' must be a string (a path), found %s", key, type_name(n));
		return NULL;
	}
	const char *s = n->str.ptr;
	if (n->str.len == 0 || strlen(s) != n->str.len) {
		diag_error(w->dc, n->loc, "'%s' must be a path, found %s", key,
			   n->str.len ? "a string with a NUL byte" : "an empty string");
		return NULL;
	}
	if (s[0] == '~') {
		diag_error(w->dc, n->loc, "'%s': '~' is not expanded", key);
		diag_note(w->dc, LOC_NONE, "write an absolute path, or one relative to the file's directory");
		return NULL;
	}
	if (s[0] == '/')
		return xstrdup(s);
	return xasprintf("%s/%s", w->dir, s);
}

static void key_set(struct walk *w, enum config_key k, const struct toml_kv *kv)
{
	const struct toml_node *n = kv->val;
	struct config_value *v = &w->c->v[k];
	const char *name = config_key_name(k);
	struct config_value nv = { .from = CONFIG_FROM_FILE, .loc = n->loc };
	switch (keys[k].type) {
	case CONFIG_CHOICE:
		if (n->type != TOML_STRING) {
			diag_error(w->dc, n->loc, "'%s' must be a string, found %s", name, type_name(n));
			return;
		}
		for (const char *const *b = backends; *b; b++)
			if (strcmp(n->str.ptr, *b) == 0)
				nv.str = xstrdup(*b);
		if (!nv.str) {
			char q[80];
			diag_error(w->dc, n->loc, "unknown backend '%s'", diag_quote(q, sizeof(q), n->str.ptr,
										 n->str.len, true));
			const char *near = diag_suggest(q, backends);
			if (near)
				diag_note(w->dc, n->loc, "did you mean '%s'?", near);
			else
				diag_note(w->dc, LOC_NONE, "expected auto, bpf-lsm or landlock");
			return;
		}
		break;
	case CONFIG_BOOL:
		if (n->type != TOML_BOOL) {
			diag_error(w->dc, n->loc, "'%s' must be true or false, found %s", name, type_name(n));
			return;
		}
		nv.b = n->boolean;
		break;
	case CONFIG_PATH:
		if (!(nv.str = path_value(w, n, name)))
			return;
		break;
	case CONFIG_PATHS:
		if (n->type != TOML_ARRAY || n->arr.of_tables) {
			diag_error(w->dc, n->loc, "'%s' must be an array of paths, found %s", name, type_name(n));
			return;
		}
		nv.list = xcalloc(n->arr.n + 1, sizeof(char *));
		for (size_t i = 0; i < n->arr.n; i++) {
			char *p = path_value(w, n->arr.items[i], name);
			if (!p) {
				value_clear(&nv);
				return;
			}
			nv.list[nv.n++] = p;
		}
		break;
	case CONFIG_ADDR:
		if (n->type != TOML_STRING) {
			diag_error(w->dc, n->loc, "'%s' must be a string (an address), found %s", name, type_name(n));
			return;
		}
		if (strlen(n->str.ptr) != n->str.len || !addr_ok(n->str.ptr)) {
			char q[80];
			diag_error(w->dc, n->loc, "'%s' is not an IP address with an optional port",
				   diag_quote(q, sizeof(q), n->str.ptr, n->str.len, true));
			diag_note(w->dc, LOC_NONE, "write 192.0.2.53, 192.0.2.53:53 or [2001:db8::53]:53");
			return;
		}
		nv.str = xstrdup(n->str.ptr);
		break;
	case CONFIG_ACCOUNT:
		if (n->type != TOML_STRING) {
			diag_error(w->dc, n->loc, "'%s' must be a string (a user), found %s", name, type_name(n));
			return;
		}
		if (strlen(n->str.ptr) != n->str.len || !config_user_ok(n->str.ptr)) {
			char q[80];
			diag_error(w->dc, n->loc, "'%s' is not a user", diag_quote(q, sizeof(q), n->str.ptr,
										  n->str.len, true));
			diag_note(w->dc, LOC_NONE, "write USER, UID, USER:GROUP or UID:GID");
			return;
		}
		nv.str = xstrdup(n->str.ptr);
		break;
	case CONFIG_DEFINES:
		if (n->type != TOML_TABLE) {
			diag_error(w->dc, n->loc, "'%s' must be a table of NAME = \"VALUE\", found %s", name,
				   type_name(n));
			return;
		}
		for (size_t i = 0; i < n->tab.n; i++) {
			const struct toml_kv *d = &n->tab.items[i];
			char q[80];
			if (!define_name_ok(d->key, d->keylen)) {
				diag_error(w->dc, d->key_loc, "'%s' is not a define's name",
					   diag_quote(q, sizeof(q), d->key, d->keylen, true));
				diag_note(w->dc, LOC_NONE, "a name is letters, digits and '_', not starting with a digit");
			} else if (d->val->type != TOML_STRING) {
				diag_error(w->dc, d->val->loc, "define '%s' must be a string, found %s",
					   diag_quote(q, sizeof(q), d->key, d->keylen, true), type_name(d->val));
			} else if (strlen(d->val->str.ptr) != d->val->str.len) {
				diag_error(w->dc, d->val->loc, "define '%s' holds a NUL byte",
					   diag_quote(q, sizeof(q), d->key, d->keylen, true));
			} else {
				define_set(w->c, d->key, d->keylen, d->val->str.ptr, CONFIG_FROM_FILE, d->key_loc);
			}
		}
		return;
	}
	value_clear(v);
	*v = nv;
}

static void walk_table(struct walk *w, const struct toml_kv *tkv)
{
	const char *table = tables[strcmp(tkv->key, "beec") == 0];
	if (tkv->val->type != TOML_TABLE) {
		diag_error(w->dc, tkv->val->loc, "'%s' must be a table, found %s", table, type_name(tkv->val));
		return;
	}
	const char *cands[CONFIG_KEY_COUNT + 1];
	size_t nc = 0;
	for (int k = 0; k < CONFIG_KEY_COUNT; k++)
		if (strcmp(keys[k].table, table) == 0)
			cands[nc++] = keys[k].name;
	cands[nc] = NULL;
	const struct toml_node *t = tkv->val;
	for (size_t i = 0; i < t->tab.n && !diag_full(w->dc); i++) {
		const struct toml_kv *kv = &t->tab.items[i];
		int found = -1;
		for (int k = 0; k < CONFIG_KEY_COUNT && found < 0; k++)
			if (strcmp(keys[k].table, table) == 0 && strlen(keys[k].name) == kv->keylen &&
			    memcmp(keys[k].name, kv->key, kv->keylen) == 0)
				found = k;
		if (found < 0)
			unknown(w, kv, table, cands);
		else
			key_set(w, (enum config_key)found, kv);
	}
}

static void walk_doc(struct walk *w, const struct toml_doc *doc)
{
	const struct toml_node *root = doc->root;
	for (size_t i = 0; i < root->tab.n && !diag_full(w->dc); i++) {
		const struct toml_kv *kv = &root->tab.items[i];
		if ((kv->keylen == 8 && memcmp(kv->key, "bee-load", 8) == 0) ||
		    (kv->keylen == 4 && memcmp(kv->key, "beec", 4) == 0))
			walk_table(w, kv);
		else
			unknown(w, kv, NULL, tables);
	}
}

/* ---- files ---------------------------------------------------------------- */

/* Reads path into *out; 1 when it does not exist, 2 when a directory on
 * the way cannot be searched (HOME=/root under su, say: a file this user
 * cannot even see is not theirs). Refuses a file that a
 * user other than the caller or root could have written: the file names
 * what bee-load writes to and how it confines (under sudo, the invoking
 * user's own files are theirs to give). */
static int file_read(const char *path, struct source **out, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 1;
		int e = errno;
		struct stat st;
		if (e == EACCES && stat(path, &st) < 0 && errno == EACCES)
			return 2;
		snprintf(err, errlen, "cannot read '%s': %s", path, strerror(e));
		return -e;
	}
	struct stat st;
	int rc = 0;
	char *buf = NULL;
	if (fstat(fd, &st) < 0) {
		rc = -errno;
		snprintf(err, errlen, "cannot read '%s': %s", path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = -EINVAL;
		snprintf(err, errlen, "cannot read '%s': not a regular file", path);
		goto out;
	}
	uid_t me = geteuid();
	const char *sudo = getenv("SUDO_UID");
	bool sudo_user = me == 0 && sudo && *sudo && strtoul(sudo, NULL, 10) == st.st_uid;
	if (st.st_uid != me && st.st_uid != 0 && !sudo_user) {
		rc = -EPERM;
		snprintf(err, errlen, "refusing '%s': it is owned by uid %u, not by you (uid %u) or root", path,
			 (unsigned)st.st_uid, (unsigned)me);
		goto out;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		rc = -EPERM;
		snprintf(err, errlen, "refusing '%s': it is writable by %s (chmod go-w)", path,
			 st.st_mode & S_IWOTH ? "everyone" : "its group");
		goto out;
	}
	if (st.st_size > CONFIG_FILE_MAX) {
		rc = -EFBIG;
		snprintf(err, errlen, "refusing '%s': larger than %u bytes", path, CONFIG_FILE_MAX);
		goto out;
	}
	buf = xmalloc((size_t)st.st_size + 1);
	size_t len = 0;
	for (;;) {
		ssize_t n = read(fd, buf + len, (size_t)st.st_size + 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			snprintf(err, errlen, "cannot read '%s': %s", path, strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > (size_t)st.st_size) {
			rc = -EFBIG;
			snprintf(err, errlen, "refusing '%s': it grew while read", path);
			goto out;
		}
	}
	*out = source_new(path, buf, len);
out:
	free(buf);
	close(fd);
	return rc;
}

static bool exists(const char *dir, const char *name)
{
	char *p = xasprintf("%s/%s", dir, name);
	struct stat st;
	bool r = lstat(p, &st) == 0;
	free(p);
	return r;
}

/* The first .bee/config.toml from cwd upward, stopping after the
 * repository's root (a directory holding .git) or /. */
static void project_find(struct config *c, const char *cwd)
{
	char *dir = xstrdup(cwd);
	for (;;) {
		if (exists(dir, ".bee/config.toml")) {
			c->files[CONFIG_LAYER_PROJECT].path = xasprintf("%s/.bee/config.toml", strcmp(dir, "/") ? dir : "");
			break;
		}
		char *slash = strrchr(dir, '/');
		if (exists(dir, ".git") || !slash || strcmp(dir, "/") == 0)
			break;
		if (slash == dir)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
	c->project_from = xstrdup(cwd);
	c->project_to = dir;
}

static char *dir_of(const char *path, const char *cwd)
{
	char *abs = path[0] == '/' ? xstrdup(path) : xasprintf("%s/%s", cwd, path);
	char *slash = strrchr(abs, '/');
	if (slash == abs)
		slash[1] = '\0';
	else
		*slash = '\0';
	return abs;
}

static int layer_load(struct config *c, enum config_layer l, const char *cwd, struct diag_ctx *dc, char *err,
		      size_t errlen)
{
	const char *path = c->files[l].path;
	if (!path)
		return 0;
	struct source *src = NULL;
	int rc = file_read(path, &src, err, errlen);
	if (rc > 0 && l == CONFIG_LAYER_FILE) {
		snprintf(err, errlen, "cannot read '%s': %s", path, strerror(rc == 1 ? ENOENT : EACCES));
		return rc == 1 ? -ENOENT : -EACCES;
	}
	if (rc == 2)
		c->files[l].unsearchable = true;
	if (rc)
		return rc > 0 ? 0 : rc;
	c->srcs[l] = src;
	c->files[l].read = true;
	struct toml_doc *doc;
	if (toml_parse(src, dc, &doc) < 0)
		return -EINVAL;
	char *dir = dir_of(path, cwd);
	struct walk w = { .c = c, .dc = dc, .src = src, .dir = dir };
	unsigned before = dc->errors;
	walk_doc(&w, doc);
	free(dir);
	toml_doc_free(doc);
	return dc->errors > before ? -EINVAL : 0;
}

static int config_load_body(struct config *c, const struct config_opts *o, struct diag_ctx *dc, char *err,
			    size_t errlen)
{
	char cwdbuf[4096];
	const char *cwd = o->cwd;
	if (!cwd) {
		if (!getcwd(cwdbuf, sizeof(cwdbuf))) {
			snprintf(err, errlen, "cannot find the working directory: %s", strerror(errno));
			return -errno;
		}
		cwd = cwdbuf;
	}
	const char *sys = o->sysconfdir ? o->sysconfdir : getenv("BEE_SYSCONFDIR");
	const char *home = o->home ? o->home : getenv("HOME");
	const char *xdg = o->xdg_config_home ? o->xdg_config_home : getenv("XDG_CONFIG_HOME");
	defaults(c);
	if (!o->no_system)
		c->files[CONFIG_LAYER_SYSTEM].path = xasprintf("%s/bee/config.toml", sys && *sys ? sys : "/etc");
	/* XDG: a relative XDG_CONFIG_HOME is invalid and ignored */
	if (o->no_user)
		;
	else if (xdg && xdg[0] == '/')
		c->files[CONFIG_LAYER_USER].path = xasprintf("%s/bee/config.toml", xdg);
	else if (home && home[0] == '/')
		c->files[CONFIG_LAYER_USER].path = xasprintf("%s/.config/bee/config.toml", home);
	project_find(c, cwd);
	if (o->file)
		c->files[CONFIG_LAYER_FILE].path = xstrdup(o->file);
	int rc = 0;
	for (int l = 0; l < CONFIG_LAYER_COUNT && !diag_full(dc); l++) {
		int r = layer_load(c, (enum config_layer)l, cwd, dc, err, errlen);
		if (r == -EINVAL)
			rc = -EINVAL;   /* go on: every bad file is reported in one run */
		else if (r)
			return r;
	}
	return rc;
}

static int config_load_protected(struct config *c, const struct config_opts *o, struct diag_ctx *dc, char *err,
				 size_t errlen)
{
	int rc = MEM_PROTECT(-ENOMEM, config_load_body(c, o, dc, err, errlen));
	if (rc == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	return rc;
}

int config_load(struct config *c, const struct config_opts *opts, struct diag_ctx *dc, char *err, size_t errlen)
{
	struct config_opts o = { .sz = sizeof(o) };
	char dummy[8];
	memset(c, 0, sizeof(*c));
	if (!err || !errlen) {
		err = dummy;
		errlen = sizeof(dummy);
	}
	err[0] = '\0';
	if (opts) {
		if (opts->sz < sizeof(size_t) || opts->sz > sizeof(o))
			return -EINVAL;
		memcpy(&o, opts, opts->sz);
	}
	return config_load_protected(c, &o, dc, err, errlen);
}

void config_fini(struct config *c)
{
	for (int k = 0; k < CONFIG_KEY_COUNT; k++)
		value_clear(&c->v[k]);
	for (size_t i = 0; i < c->ndefines; i++) {
		free(c->defines[i].name);
		free(c->defines[i].value);
	}
	free(c->defines);
	for (int l = 0; l < CONFIG_LAYER_COUNT; l++) {
		free(c->files[l].path);
		source_free(c->srcs[l]);
	}
	free(c->project_from);
	free(c->project_to);
	memset(c, 0, sizeof(*c));
}

/* ---- flags and queries ------------------------------------------------------ */

static int set_flag_body(struct config *c, enum config_key k, const char *value)
{
	struct config_value *v = &c->v[k];
	value_clear(v);
	v->str = xstrdup(value);
	v->from = CONFIG_FROM_FLAG;
	v->loc = LOC_NONE;
	return 0;
}

int config_set_flag(struct config *c, enum config_key k, const char *value)
{
	return MEM_PROTECT(-ENOMEM, set_flag_body(c, k, value));
}

int config_set_flag_bool(struct config *c, enum config_key k, bool value)
{
	c->v[k].b = value;
	c->v[k].from = CONFIG_FROM_FLAG;
	c->v[k].loc = LOC_NONE;
	return 0;
}

static int define_flag_body(struct config *c, const char *nv)
{
	const char *eq = strchr(nv, '=');
	if (!eq)
		return -EINVAL;
	define_set(c, nv, (size_t)(eq - nv), eq + 1, CONFIG_FROM_FLAG, LOC_NONE);
	return 0;
}

int config_define_flag(struct config *c, const char *name_value)
{
	return MEM_PROTECT(-ENOMEM, define_flag_body(c, name_value));
}

const char *config_str(const struct config *c, enum config_key k)
{
	const char *s = c->v[k].str;
	return s && *s ? s : NULL;
}

bool config_bool(const struct config *c, enum config_key k)
{
	return c->v[k].b;
}

static char **defines_body(const struct config *c)
{
	char **v = xcalloc(c->ndefines + 1, sizeof(char *));
	for (size_t i = 0; i < c->ndefines; i++)
		v[i] = xasprintf("%s=%s", c->defines[i].name, c->defines[i].value);
	return v;
}

char **config_defines(const struct config *c, size_t *n)
{
	char **v = MEM_PROTECT(NULL, defines_body(c));
	*n = v ? c->ndefines : 0;
	return v;
}

void config_defines_free(char **v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

/* ---- dump ------------------------------------------------------------------ */

/* "FILE:LINE", "flag" or "default" */
static void origin(enum config_from from, struct loc loc, char *buf, size_t size)
{
	unsigned line, col;
	switch (from) {
	case CONFIG_FROM_DEFAULT:
		snprintf(buf, size, "default");
		break;
	case CONFIG_FROM_FLAG:
		snprintf(buf, size, "flag");
		break;
	case CONFIG_FROM_FILE:
		loc_linecol(loc, &line, &col);
		snprintf(buf, size, "%s:%u", loc.src->name, line);
		break;
	}
}

/* A TOML basic string */
static void toml_str(FILE *out, const char *s)
{
	fputc('"', out);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(out, "\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(out, "\\u%04x", *p);
		else
			fputc(*p, out);
	}
	fputc('"', out);
}

static void text_line(FILE *out, const char *key, const char *value_text, const char *from)
{
	int n = fprintf(out, "%s = %s", key, value_text);
	fprintf(out, "%*s# %s\n", n < 44 ? 44 - n : 2, "", from);
}

/* One value as TOML text (malloc'ed through the funnel). */
static char *value_text(const struct config_value *v, enum config_type t)
{
	char *text;
	size_t len;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		mem_raise("open_memstream");
	if (t == CONFIG_BOOL) {
		fputs(v->b ? "true" : "false", f);
	} else if (t == CONFIG_PATHS) {
		fputc('[', f);
		for (size_t i = 0; i < v->n; i++) {
			fputs(i ? ", " : "", f);
			toml_str(f, v->list[i]);
		}
		fputc(']', f);
	} else {
		toml_str(f, v->str ? v->str : "");
	}
	if (fclose(f) != 0)
		mem_raise("open_memstream");
	return text;
}

static void dump_text(const struct config *c, FILE *out)
{
	char from[4200];
	fputs("# files, lowest layer first; each overrides the ones above it key by key\n", out);
	for (int l = 0; l < CONFIG_LAYER_COUNT; l++) {
		const struct config_file *f = &c->files[l];
		if (l == CONFIG_LAYER_PROJECT && !f->path)
			fprintf(out, "#   %-8s  none from %s up to %s\n", layer_names[l], c->project_from,
				c->project_to);
		else if (l == CONFIG_LAYER_FILE && !f->path)
			fprintf(out, "#   %-8s  none\n", layer_names[l]);
		else if (f->path)
			fprintf(out, "#   %-8s  %s%s\n", layer_names[l], f->path,
				f->read ? "" : f->unsearchable ? " (skipped: a directory on the way cannot be searched)"
							       : " (not found)");
	}
	for (int k = 0; k < CONFIG_KEY_COUNT; k++) {
		const struct config_value *v = &c->v[k];
		if (keys[k].type == CONFIG_DEFINES) {
			if (!c->ndefines)
				text_line(out, config_key_name(k), "{}", "default");
			for (size_t i = 0; i < c->ndefines; i++) {
				const struct config_define *d = &c->defines[i];
				char *key = xasprintf("%s.%s", config_key_name(k), d->name);
				struct config_value dv = { .str = d->value };
				char *t = value_text(&dv, CONFIG_ADDR);
				origin(d->from, d->loc, from, sizeof(from));
				text_line(out, key, t, from);
				free(t);
				free(key);
			}
			continue;
		}
		char *t = value_text(v, keys[k].type);
		origin(v->from, v->loc, from, sizeof(from));
		text_line(out, config_key_name(k), t, from);
		free(t);
	}
}

static json_t *json_from(enum config_from from, struct loc loc, json_t *value)
{
	static const char *const names[] = { "default", "file", "flag" };
	json_t *o = jx(json_object());
	jx_set(o, "value", value);
	jx_set(o, "from", jx(json_string(names[from])));
	if (from == CONFIG_FROM_FILE) {
		unsigned line, col;
		loc_linecol(loc, &line, &col);
		jx_set(o, "file", jx(json_string(loc.src->name)));
		jx_set(o, "line", jx(json_integer(line)));
	}
	return o;
}

static json_t *dump_json(const struct config *c)
{
	json_t *root = jx(json_object()), *files = jx(json_array()), *ks = jx(json_object());
	for (int l = 0; l < CONFIG_LAYER_COUNT; l++) {
		const struct config_file *f = &c->files[l];
		json_t *o = jx(json_object());
		jx_set(o, "layer", jx(json_string(layer_names[l])));
		jx_set(o, "path", f->path ? jx(json_string(f->path)) : json_null());
		jx_set(o, "read", json_boolean(f->read));
		jx_push(files, o);
	}
	for (int k = 0; k < CONFIG_KEY_COUNT; k++) {
		const struct config_value *v = &c->v[k];
		json_t *val;
		switch (keys[k].type) {
		case CONFIG_BOOL:
			val = json_boolean(v->b);
			break;
		case CONFIG_PATHS:
			val = jx(json_array());
			for (size_t i = 0; i < v->n; i++)
				jx_push(val, jx(json_string(v->list[i])));
			break;
		case CONFIG_DEFINES:
			val = jx(json_object());
			for (size_t i = 0; i < c->ndefines; i++)
				jx_set(val, c->defines[i].name,
				       json_from(c->defines[i].from, c->defines[i].loc,
						 jx(json_string(c->defines[i].value))));
			jx_set(ks, config_key_name(k), val);
			continue;
		default:
			val = jx(json_string(v->str ? v->str : ""));
			break;
		}
		jx_set(ks, config_key_name(k), json_from(v->from, v->loc, val));
	}
	jx_set(root, "files", files);
	jx_set(root, "keys", ks);
	return root;
}

static int dump_body(const struct config *c, bool json, FILE *out)
{
	if (!json) {
		dump_text(c, out);
		return 0;
	}
	json_t *o = dump_json(c);
	char *s = jx_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(o);
	fputs(s, out);
	fputc('\n', out);
	free(s);
	return 0;
}

int config_dump(const struct config *c, bool json, FILE *out)
{
	return MEM_PROTECT(-ENOMEM, dump_body(c, json, out));
}
