/* SPDX-License-Identifier: GPL-2.0-only */
/* learn.c: `beec learn [--base POLICY] [-D NAME=VALUE]... LOG... -o NEW.toml`.
 *
 *   read      each log's Deny records: fs read, write and execute paths,
 *             net connect and listen endpoints, scrubbed environment names
 *   base      what --base allows already is dropped (its own answer)
 *   secrets   paths that look like keys and tokens are set apart: listed as
 *             comments with a warning, denied, never granted
 *   shape     the way a person writes a policy:
 *               a versioned library      libssl.so.3      -> libssl.so.*
 *               a directory of 3 reads   /usr/share/x/a,b,c -> /usr/share/x/ **
 *               3 such siblings          -> their parent's / ** (never above
 *                                           the second level: /usr/ **, /etc/ **
 *                                           and a home directory stay out)
 *               a written file           -> its directory's / ** when the file
 *                                           is gone (a temporary, a lock) or
 *                                           its directory had 2 writes
 *               an executed file is granted read as well (the kernel opens
 *               it for reading; Landlock asks for both rights), and the
 *               dynamic loader is granted as it was seen (under landlock the
 *               kernel's open of a program's interpreter asks for execute)
 *   write     TOML: each grant with its evidence (count, first example),
 *             sorted; -D values written back as ${NAME}
 *
 * Directories: a directory that was opened itself and became "D/ **" is
 * written "D{,/ **}" ("D/ **" matches below D only).
 */
#include "learn.h"

#include "landlock.h"
#include "libbeec.h"
#include "mem.h"

#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum learn_class { LC_READ, LC_WRITE, LC_EXEC, LC_CONNECT, LC_BIND, LC_COUNT };

static const char *const class_query[LC_COUNT][2] = {
	[LC_READ] = { "fs", "read" },        [LC_WRITE] = { "fs", "write" },
	[LC_EXEC] = { "exec", "execute" },   [LC_CONNECT] = { "net", "connect" },
	[LC_BIND] = { "net", "bind" },
};

static const char *const class_verb[LC_COUNT] = { "read", "write", "exec", "connect", "listen" };

/* One observed access, or one grant made of several. */
struct obs {
	char *res;
	unsigned long long count;
	char *first;                 /* the first example a grant stands for */
	bool dir;                    /* the resource itself was opened as a directory */
	bool secret;
};

struct obs_list {
	struct obs *v;
	size_t n, cap;
};

struct learn {
	bool no_lib_globs;           /* the landlock backend could not take them */
	struct obs_list made;        /* files the tool wrote in a directory it wrote (made them) */
	struct obs_list wdirs;       /* directories written: files were made in them */
	struct obs_list cls[LC_COUNT];
	struct obs_list listed;      /* directories too near the root to grant whole */
	struct obs_list secrets[LC_COUNT];
	char **env;
	size_t nenv, capenv;
	unsigned long long records;
};

static struct obs *obs_find(struct obs_list *l, const char *res)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i].res, res) == 0)
			return &l->v[i];
	return NULL;
}

static struct obs *obs_add(struct obs_list *l, const char *res, unsigned long long count, const char *first)
{
	struct obs *o = obs_find(l, res);
	if (o) {
		o->count += count;
		if (first && strcmp(first, o->first) < 0) {
			free(o->first);
			o->first = xstrdup(first);
		}
		return o;
	}
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 64;
		l->v = xrealloc(l->v, l->cap * sizeof(*l->v));
	}
	o = &l->v[l->n++];
	*o = (struct obs){ .res = xstrdup(res), .count = count, .first = xstrdup(first ? first : res) };
	return o;
}

static void obs_list_fini(struct obs_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].res);
		free(l->v[i].first);
	}
	free(l->v);
	*l = (struct obs_list){ 0 };
}

static int obs_cmp(const void *a, const void *b)
{
	return strcmp(((const struct obs *)a)->res, ((const struct obs *)b)->res);
}

/* ---- secrets ------------------------------------------------------------------ */

/* Public certificates are .pem files too: these trees hold only those. */
static const char *const cert_trees[] = {
	"/etc/ssl/certs/", "/usr/share/ca-certificates/", "/etc/ca-certificates/", "/usr/lib/ssl/certs/",
	"/etc/pki/ca-trust/", "/usr/share/pki/",
};

/* Directories whose every file is a secret. */
static const char *const secret_dirs[] = {
	"/.ssh/", "/.aws/", "/.gnupg/", "/.config/gh/", "/keyrings/", "/.docker/", "/.kube/",
	"/.password-store/", "/.azure/", "/.config/gcloud/",
};

static const char *const secret_names[] = {
	".env", ".netrc", ".git-credentials", ".npmrc", ".pypirc", "credentials", "credentials.toml",
	"id_rsa", "id_ecdsa", "id_ed25519", "id_dsa", ".pgpass", ".Xauthority",
};

static bool has_suffix(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);
	return n >= m && strcmp(s + n - m, suf) == 0;
}

/* The secret directory of path ("/root/.ssh" for /root/.ssh/id_ed25519)
 * into dir, or "" when the secret is the file alone. */
static bool is_secret(const char *path, char *dir, size_t dirsize)
{
	dir[0] = '\0';
	for (size_t i = 0; i < sizeof(secret_dirs) / sizeof(secret_dirs[0]); i++) {
		const char *p = strstr(path, secret_dirs[i]);
		if (p) {
			snprintf(dir, dirsize, "%.*s", (int)(p - path + strlen(secret_dirs[i]) - 1), path);
			return true;
		}
	}
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	for (size_t i = 0; i < sizeof(secret_names) / sizeof(secret_names[0]); i++)
		if (strcmp(base, secret_names[i]) == 0)
			return true;
	if (strncmp(base, ".env.", 5) == 0)
		return true;
	if (has_suffix(base, ".pem") || has_suffix(base, ".key") || has_suffix(base, ".p12") ||
	    has_suffix(base, ".pfx")) {
		for (size_t i = 0; i < sizeof(cert_trees) / sizeof(cert_trees[0]); i++)
			if (strncmp(path, cert_trees[i], strlen(cert_trees[i])) == 0)
				return false;
		return true;
	}
	return false;
}

/* ---- reading the logs ---------------------------------------------------------- */

static void env_add(struct learn *L, const char *name, size_t len)
{
	for (size_t i = 0; i < L->nenv; i++)
		if (strlen(L->env[i]) == len && memcmp(L->env[i], name, len) == 0)
			return;
	if (L->nenv == L->capenv) {
		L->capenv = L->capenv ? 2 * L->capenv : 32;
		L->env = xrealloc(L->env, L->capenv * sizeof(char *));
	}
	char *s = xmalloc(len + 1);
	memcpy(s, name, len);
	s[len] = '\0';
	L->env[L->nenv++] = s;
}

static void take(struct learn *L, const char *kind, const char *action, const char *res, unsigned long long count)
{
	int c = -1;
	if (strcmp(kind, "Environment") == 0) {
		/* one summary record: the names, comma-separated */
		for (const char *p = res; *p;) {
			size_t n = strcspn(p, ",");
			if (n)
				env_add(L, p, n);
			p += n + (p[n] == ',');
		}
		return;
	}
	if (strncmp(res, "bee:", 4) == 0)
		return;   /* bee's own records (learning, lost counts) */
	if (strcmp(kind, "FileSystem") == 0 || strcmp(kind, "Process") == 0) {
		if (res[0] != '/')
			return;   /* pid:N, an inode without a path */
		c = strcmp(action, "Read") == 0 ? LC_READ : strcmp(action, "Write") == 0 ? LC_WRITE
			: strcmp(action, "Execute") == 0 ? LC_EXEC : -1;
	} else if (strcmp(kind, "Network") == 0) {
		if (!strchr(res, ':') || strstr(res, "AF_"))
			return;   /* a refused socket: its connect is what counts */
		c = strcmp(action, "Connect") == 0 ? LC_CONNECT : strcmp(action, "Listen") == 0 ? LC_BIND : -1;
	}
	if (c < 0)
		return;
	char dir[4096];
	bool secret = c <= LC_EXEC && is_secret(res, dir, sizeof(dir));
	obs_add(secret ? &L->secrets[c] : &L->cls[c], res, count, NULL);
	/* the kernel opens what it executes for reading too (Landlock asks
	 * for both rights: READ_FILE and EXECUTE) */
	if (c == LC_EXEC && !secret)
		obs_add(&L->cls[LC_READ], res, count, NULL);
	L->records++;
}

static int read_log(struct learn *L, const char *path, struct diag_ctx *dc)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return diag_error(dc, LOC_NONE, "cannot read log '%s': %s", path, strerror(errno));
	char *line = NULL;
	size_t cap = 0, lineno = 0;
	ssize_t n;
	int err = 0;
	while ((n = getline(&line, &cap, f)) > 0) {
		lineno++;
		if (n == 1 && line[0] == '\n')
			continue;
		json_error_t je;
		json_t *o = json_loadb(line, (size_t)n, 0, &je);
		if (!o || !json_is_object(o)) {
			json_decref(o);
			err = diag_error(dc, LOC_NONE, "%s:%zu: not a JSON audit record: %s", path, lineno,
					 o ? "not an object" : je.text);
			break;
		}
		const char *kind = json_string_value(json_object_get(o, "kind"));
		const char *action = json_string_value(json_object_get(o, "action"));
		const char *res = json_string_value(json_object_get(o, "resource"));
		const char *decision = json_string_value(json_object_get(o, "decision"));
		json_int_t count = json_integer_value(json_object_get(o, "count"));
		if (!kind || !action || !res || !decision) {
			json_decref(o);
			err = diag_error(dc, LOC_NONE, "%s:%zu: an audit record lacks kind, action, resource or decision",
					 path, lineno);
			break;
		}
		/* a repeat record counts what was written once already */
		if (strcmp(decision, "Deny") == 0)
			take(L, kind, action, res, count > 0 ? (unsigned long long)count : 1);
		json_decref(o);
	}
	free(line);
	fclose(f);
	return err;
}

/* ---- shaping ----------------------------------------------------------------- */

static size_t depth(const char *p)
{
	size_t d = 0;
	for (; *p; p++)
		d += *p == '/';
	return d;
}

/* "libfoo.so.1.2.3" -> "libfoo.so.*" in place; true when it changed. */
static bool lib_glob(char *path)
{
	char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	char *so = strstr(base, ".so.");
	if (!so || so == base)
		return false;
	for (const char *q = so + 4; *q; q++)
		if (!((*q >= '0' && *q <= '9') || *q == '.'))
			return false;
	strcpy(so + 4, "*");
	return true;
}

/* The directory of p (a new string), NULL for "/x". */
static char *dir_of(const char *p)
{
	const char *s = strrchr(p, '/');
	if (!s || s == p)
		return NULL;
	return xstrndup(p, (size_t)(s - p));
}

static bool under(const char *p, const char *dir)
{
	size_t n = strlen(dir);
	return strncmp(p, dir, n) == 0 && p[n] == '/';
}

/* A secret below dir: dir never becomes dir/ **. */
static bool holds_secret(const struct learn *L, const char *dir)
{
	for (int c = LC_READ; c <= LC_EXEC; c++)
		for (size_t i = 0; i < L->secrets[c].n; i++)
			if (under(L->secrets[c].v[i].res, dir))
				return true;
	return false;
}

/* Replaces every entry below dir by one "dir/ **" grant with their evidence. */
static void fold_into(struct obs_list *l, const char *dir)
{
	struct obs_list out = { 0 };
	char *glob = xmalloc(strlen(dir) + 4);
	sprintf(glob, "%s/**", dir);
	unsigned long long count = 0;
	char *first = NULL;
	bool self = false;
	for (size_t i = 0; i < l->n; i++) {
		struct obs *o = &l->v[i];
		if (strcmp(o->res, dir) == 0 || under(o->res, dir)) {
			count += o->count;
			self |= strcmp(o->res, dir) == 0 || (o->dir && strcmp(o->res, glob) == 0);
			if (!first || strcmp(o->first, first) < 0)
				first = o->first;
			continue;
		}
		struct obs *n = obs_add(&out, o->res, o->count, o->first);
		n->dir = o->dir;
	}
	struct obs *g = obs_add(&out, glob, count, first);
	g->dir = self;
	free(glob);
	obs_list_fini(l);
	*l = out;
}

/* The deepest directory (at least min_depth levels down, holding no
 * secret) with at least min entries below it, folded into one grant;
 * false when there is none. Ties go to the smaller name: deterministic. */
static bool fold_one(const struct learn *L, struct obs_list *l, size_t min, size_t min_depth)
{
	char *best = NULL;
	size_t best_depth = 0;
	for (size_t i = 0; i < l->n; i++) {
		char *d = xstrdup(l->v[i].res), *up;
		if (has_suffix(d, "/**"))
			d[strlen(d) - 3] = '\0';
		while ((up = dir_of(d))) {
			free(d);
			d = up;
			if (depth(d) < min_depth)
				break;
			if (holds_secret(L, d) ||
			    (best && (depth(d) < best_depth || (depth(d) == best_depth && strcmp(d, best) >= 0))))
				continue;
			size_t n = 0;
			for (size_t k = 0; k < l->n; k++)
				n += under(l->v[k].res, d);
			/* a glob already there counts as one entry; only a new one is progress */
			char *g = xasprintf("%s/**", d);
			bool only_self = n == 1 && obs_find(l, g);
			free(g);
			if (n >= min && !only_self) {
				free(best);
				best = xstrdup(d);
				best_depth = depth(d);
			}
		}
		free(d);
	}
	if (!best)
		return false;
	fold_into(l, best);
	free(best);
	return true;
}

/* Entries below another entry's "dir/ **" go. */
static void drop_covered(struct obs_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		if (!has_suffix(l->v[i].res, "/**"))
			continue;
		char *dir = xstrndup(l->v[i].res, strlen(l->v[i].res) - 3);
		for (size_t k = 0; k < l->n; k++)
			if (k != i && (under(l->v[k].res, dir) || strcmp(l->v[k].res, dir) == 0)) {
				l->v[i].count += l->v[k].count;
				l->v[i].dir |= strcmp(l->v[k].res, dir) == 0;
				free(l->v[k].res);
				free(l->v[k].first);
				l->v[k] = l->v[--l->n];
				if (i == l->n)
					i = k;
				k--;
			}
		free(dir);
	}
}

static void shape_libs(struct obs_list *l, bool off)
{
	struct obs_list out = { 0 };
	for (size_t i = 0; i < l->n; i++) {
		char *r = xstrdup(l->v[i].res);
		if (!off)
			lib_glob(r);
		struct obs *n = obs_add(&out, r, l->v[i].count, l->v[i].first);
		n->dir |= l->v[i].dir;
		free(r);
	}
	obs_list_fini(l);
	*l = out;
}

/* A directory opened (listed): listing D is a read of D itself, which
 * "D/ **" does not match (both backends judge D's own open by "D", see
 * docs/decisions.md), so it is granted as "D{,/ **}". Except near the root
 * (/, /tmp, /etc: depth < 2) or where a secret is: those are only listed
 * as comments. */
static void shape_dirs(struct learn *L)
{
	struct obs_list *l = &L->cls[LC_READ];
	for (size_t i = 0; i < l->n; i++) {
		struct stat st;
		struct obs *o = &l->v[i];
		if (lstat(o->res, &st) < 0 || !S_ISDIR(st.st_mode))
			continue;
		if (depth(o->res) < 2 || holds_secret(L, o->res)) {
			obs_add(&L->listed, o->res, o->count, NULL);
			free(o->res);
			free(o->first);
			l->v[i--] = l->v[--l->n];
			continue;
		}
		char *g = xasprintf("%s/**", o->res);
		free(o->res);
		o->res = g;
		o->dir = true;
	}
}

/* Files the tool made: written, in a directory written too (an open with
 * O_CREAT writes its directory), or gone by now (temporaries). Landlock
 * binds a rule to the file at launch, so a file made during the session
 * is reached only by its directory's rule: each becomes "D/ **". */
static void find_made(struct learn *L)
{
	const struct obs_list *w = &L->cls[LC_WRITE];
	for (size_t i = 0; i < w->n; i++) {
		char *d = dir_of(w->v[i].res);
		if (d && strncmp(w->v[i].res, "/dev/", 5) != 0 && obs_find((struct obs_list *)w, d)) {
			obs_add(&L->made, w->v[i].res, 1, NULL);
			obs_add(&L->wdirs, d, 1, NULL);
		}
		free(d);
	}
}

/* Made by the tool, gone by now, or in a directory where the tool made
 * files (what it ran from there, a build's output, may be made anew). */
static bool made_or_gone(const struct learn *L, const char *p)
{
	struct stat st;
	char *d = dir_of(p);
	bool in_made_dir = d && obs_find((struct obs_list *)&L->wdirs, d);
	free(d);
	return in_made_dir || obs_find((struct obs_list *)&L->made, p) || (lstat(p, &st) < 0 && errno == ENOENT);
}

/* Entries of l that the tool made become their directory's tree. */
static void shape_made(struct learn *L, struct obs_list *l)
{
	struct obs_list out = { 0 };
	for (size_t i = 0; i < l->n; i++) {
		struct obs *o = &l->v[i];
		char *d = dir_of(o->res);
		struct obs *n;
		if (d && strncmp(o->res, "/dev/", 5) != 0 && !has_suffix(o->res, "/**") && made_or_gone(L, o->res) &&
		    !holds_secret(L, d)) {
			char *g = xasprintf("%s/**", d);
			n = obs_add(&out, g, o->count, o->first);
			free(g);
		} else {
			n = obs_add(&out, o->res, o->count, o->first);
			n->dir |= o->dir;
		}
		free(d);
	}
	obs_list_fini(l);
	*l = out;
}

static void shape_reads(struct learn *L)
{
	struct obs_list *l = &L->cls[LC_READ];
	shape_made(L, l);
	shape_dirs(L);
	shape_libs(l, L->no_lib_globs);
	/* a directory of 3 reads, then 3 siblings: never above /usr/x, /etc/x */
	while (fold_one(L, l, 3, 2))
		;
	drop_covered(l);
}

static void shape_execs(struct learn *L)
{
	shape_made(L, &L->cls[LC_EXEC]);
	drop_covered(&L->cls[LC_EXEC]);
	shape_libs(&L->cls[LC_EXEC], L->no_lib_globs);
}

static void shape_writes(struct learn *L)
{
	struct obs_list *l = &L->cls[LC_WRITE];
	struct obs_list out = { 0 };
	for (size_t i = 0; i < l->n; i++) {
		struct obs *o = &l->v[i];
		struct stat st;
		char *d = dir_of(o->res);
		size_t n = 0;
		for (size_t k = 0; d && k < l->n; k++) {
			char *dk = dir_of(l->v[k].res);
			n += dk && strcmp(dk, d) == 0;
			free(dk);
		}
		bool special = strncmp(o->res, "/dev/", 5) == 0;
		bool gone = lstat(o->res, &st) < 0;
		if (!gone && S_ISDIR(st.st_mode) && depth(o->res) >= 1 && !holds_secret(L, o->res)) {
			/* a file made in it: the directory's tree (Landlock makes files
			 * only below a directory rule) */
			char *g = xasprintf("%s/**", o->res);
			obs_add(&out, g, o->count, o->first);
			free(g);
		} else if (d && !special && (gone || n >= 2) && !holds_secret(L, d)) {
			char *g = xmalloc(strlen(d) + 4);
			sprintf(g, "%s/**", d);
			obs_add(&out, g, o->count, o->first);
			free(g);
		} else {
			obs_add(&out, o->res, o->count, o->first);
		}
		free(d);
	}
	obs_list_fini(l);
	*l = out;
	drop_covered(l);
}

/* ---- the base ----------------------------------------------------------------- */

static bool base_allows(const struct beec_policy *base, int c, const char *res)
{
	struct beec_answer a;
	char msg[128];
	if (!base)
		return false;
	return beec_policy__query(base, class_query[c][0], class_query[c][1], res, &a, NULL, msg, sizeof(msg)) == 0 &&
	       a.allow;
}

static void drop_allowed(struct learn *L, const struct beec_policy *base)
{
	for (int c = 0; c < LC_COUNT; c++) {
		struct obs_list *l = &L->cls[c];
		for (size_t i = 0; i < l->n;)
			if (base_allows(base, c, l->v[i].res)) {
				free(l->v[i].res);
				free(l->v[i].first);
				l->v[i] = l->v[--l->n];
			} else {
				i++;
			}
	}
}

/* ---- writing ------------------------------------------------------------------ */

struct writer {
	FILE *out;
	const struct learn_opts *o;
};

/* s with the longest -D value at a segment boundary written back as
 * ${NAME}, into buf. */
static const char *subst(const struct learn_opts *o, const char *s, char *buf, size_t size)
{
	size_t best = 0;
	const char *name = NULL;
	size_t nlen = 0;
	for (size_t i = 0; i < o->ndefines; i++) {
		const char *eq = strchr(o->defines[i], '=');
		const char *v = eq + 1;
		size_t vl = strlen(v);
		if (vl < 2 || vl <= best || strncmp(s, v, vl) != 0 || (s[vl] != '/' && s[vl] != '\0'))
			continue;
		best = vl;
		name = o->defines[i];
		nlen = (size_t)(eq - o->defines[i]);
	}
	if (!name)
		return s;
	snprintf(buf, size, "${%.*s}%s", (int)nlen, name, s + best);
	return buf;
}

/* A TOML basic string of s. */
static void put_str(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(out, "\\%c", *s);
		else if ((unsigned char)*s < 0x20 || *s == 0x7f)
			fprintf(out, "\\u%04x", (unsigned char)*s);
		else
			fputc(*s, out);
	}
	fputc('"', out);
}

static void put_path(const struct writer *w, const char *s)
{
	char buf[8192];
	put_str(w->out, subst(w->o, s, buf, sizeof(buf)));
}

static void write_list(const struct writer *w, const char *key, enum ir_rule_kind kind, const struct obs_list *l,
		       const char *verb)
{
	const struct beec_policy *base = w->o->base;
	size_t nbase = 0;
	for (size_t i = 0; base && i < base->ir->nrules; i++)
		nbase += base->ir->rules[i].kind == kind;
	if (!nbase && (!l || !l->n))
		return;
	fprintf(w->out, "%s = [\n", key);
	if (nbase)
		fprintf(w->out, "    # from the base policy\n");
	for (size_t i = 0; base && i < base->ir->nrules; i++) {
		const struct ir_rule *r = &base->ir->rules[i];
		if (r->kind != kind)
			continue;
		char buf[8192];
		const char *t = subst(w->o, r->text, buf, sizeof(buf));
		fputs("    ", w->out);
		if (kind == IR_RULE_EXEC_ALLOW && r->exec.pinned) {
			char pin[8200];
			snprintf(pin, sizeof(pin), "!%s", t);
			put_str(w->out, pin);
		} else {
			put_str(w->out, t);
		}
		fputs(",\n", w->out);
	}
	if (l && l->n && nbase)
		fprintf(w->out, "    # learned\n");
	for (size_t i = 0; l && i < l->n; i++) {
		const struct obs *o = &l->v[i];
		fputs("    ", w->out);
		if (o->dir && has_suffix(o->res, "/**")) {
			char *d = xstrndup(o->res, strlen(o->res) - 3);
			char buf[8192], *g;
			const char *sd = subst(w->o, d, buf, sizeof(buf));
			g = xmalloc(strlen(sd) + 8);
			sprintf(g, "%s{,/**}", sd);
			put_str(w->out, g);
			free(g);
			free(d);
		} else {
			put_path(w, o->res);
		}
		if (!o->count)
			fprintf(w->out, ",   # every learned policy: bee-load does not watch /dev\n");
		else if (strcmp(o->first, o->res) == 0)
			fprintf(w->out, ",   # %s %llu time%s\n", verb, o->count, o->count == 1 ? "" : "s");
		else
			fprintf(w->out, ",   # %s %llu time%s, first %s\n", verb, o->count, o->count == 1 ? "" : "s",
				o->first);
	}
	fputs("]\n", w->out);
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool base_allows_env(const struct beec_policy *base, const char *name)
{
	struct beec_answer a;
	char msg[128];
	return base && beec_policy__query(base, "env", "read", name, &a, NULL, msg, sizeof(msg)) == 0 && a.allow;
}

/* The environment: the base's rules as they were; the names the session
 * scrubbed are listed, never granted. A learned policy gives the tool the
 * environment the learning session gave it, so that the enforcing run
 * does what was learned (a LANG granted now would have it read locale
 * files it never read while learning). */
static void write_env(const struct writer *w, const struct learn *L)
{
	const struct beec_policy *base = w->o->base;
	bool any = false;
	for (size_t i = 0; base && i < base->ir->nrules; i++)
		any |= base->ir->rules[i].kind == IR_RULE_ENV_ALLOW || base->ir->rules[i].kind == IR_RULE_ENV_SET;
	if (!any && !L->nenv)
		return;
	fputs("\n[env]\n", w->out);
	bool opened = false;
	for (size_t i = 0; base && i < base->ir->nrules; i++)
		if (base->ir->rules[i].kind == IR_RULE_ENV_ALLOW) {
			fputs(opened ? ", " : "allow = [", w->out);
			put_str(w->out, base->ir->rules[i].text);
			opened = true;
		}
	if (opened)
		fputs("]\n", w->out);
	opened = false;
	for (size_t i = 0; base && i < base->ir->nrules; i++)
		if (base->ir->rules[i].kind == IR_RULE_ENV_SET) {
			char buf[8192];
			fputs(opened ? ", " : "set = { ", w->out);
			fprintf(w->out, "%s = ", base->ir->rules[i].text);
			put_str(w->out, subst(w->o, base->ir->rules[i].env_set.value, buf, sizeof(buf)));
			opened = true;
		}
	if (opened)
		fputs(" }\n", w->out);
	size_t held = 0;
	for (size_t i = 0; i < L->nenv; i++)
		held += !base_allows_env(base, L->env[i]);
	if (!held)
		return;
	fprintf(w->out, "# scrubbed while learning, so not granted (the tool ran without them; a name\n"
		"# may hold a secret): add to allow the ones the tool needs\n");
	size_t col = 0;
	for (size_t i = 0; i < L->nenv; i++) {
		if (base_allows_env(base, L->env[i]))
			continue;
		if (col == 0)
			fputs("#  ", w->out);
		fprintf(w->out, " %s", L->env[i]);
		col += strlen(L->env[i]) + 1;
		if (col > 64) {
			fputc('\n', w->out);
			col = 0;
		}
	}
	if (col)
		fputc('\n', w->out);
}

static size_t nsecrets(const struct learn *L)
{
	size_t n = 0;
	for (int c = LC_READ; c <= LC_EXEC; c++)
		n += L->secrets[c].n;
	return n;
}

/* The secrets as comments, and denied: a broader grant added later, or a
 * base's, never reaches them. */
static void write_secrets_note(const struct writer *w, const struct learn *L)
{
	if (!nsecrets(L))
		return;
	fputs("# WARNING: the tool touched these during learning and they look like secrets.\n"
	      "# They are NOT granted, and denied below; grant one only if you mean to:\n", w->out);
	for (int c = LC_READ; c <= LC_EXEC; c++)
		for (size_t i = 0; i < L->secrets[c].n; i++) {
			char buf[8192];
			const struct obs *o = &L->secrets[c].v[i];
			fprintf(w->out, "#   %s %s   (%llu time%s)\n", class_verb[c], subst(w->o, o->res, buf, sizeof(buf)),
				o->count, o->count == 1 ? "" : "s");
		}
}

static void write_deny(const struct writer *w, const struct learn *L)
{
	const struct beec_policy *base = w->o->base;
	struct obs_list deny = { 0 };
	for (int c = LC_READ; c <= LC_EXEC; c++)
		for (size_t i = 0; i < L->secrets[c].n; i++) {
			char dir[4096];
			const char *r = L->secrets[c].v[i].res;
			if (is_secret(r, dir, sizeof(dir)) && dir[0]) {
				char *g = xmalloc(strlen(dir) + 4);
				sprintf(g, "%s/**", dir);
				obs_add(&deny, g, 1, NULL);
				free(g);
			} else {
				obs_add(&deny, r, 1, NULL);
			}
		}
	size_t nbase = 0;
	for (size_t i = 0; base && i < base->ir->nrules; i++)
		nbase += base->ir->rules[i].kind == IR_RULE_FS_DENY;
	if (deny.n || nbase) {
		if (deny.n > 1)
			qsort(deny.v, deny.n, sizeof(*deny.v), obs_cmp);
		fputs("deny = [\n", w->out);
		for (size_t i = 0; base && i < base->ir->nrules; i++)
			if (base->ir->rules[i].kind == IR_RULE_FS_DENY) {
				fputs("    ", w->out);
				put_path(w, base->ir->rules[i].text);
				fputs(",\n", w->out);
			}
		for (size_t i = 0; i < deny.n; i++) {
			fputs("    ", w->out);
			put_path(w, deny.v[i].res);
			fputs(",   # secret-looking: see the warning above\n", w->out);
		}
		fputs("]\n", w->out);
	}
	obs_list_fini(&deny);
}

/* Network endpoints: DNS (port 53) goes over UDP as well. */
static void net_shape(struct learn *L)
{
	struct obs_list *l = &L->cls[LC_CONNECT];
	size_t n = l->n;
	for (size_t i = 0; i < n; i++) {
		const char *colon = strrchr(l->v[i].res, ':');
		if (colon && strcmp(colon, ":53") == 0) {
			char *u = xmalloc(strlen(l->v[i].res) + 8);
			sprintf(u, "%s/udp", l->v[i].res);
			obs_add(l, u, l->v[i].count, l->v[i].res);
			free(u);
		}
	}
}

static bool base_has(const struct beec_policy *base, enum ir_rule_kind k)
{
	for (size_t i = 0; base && i < base->ir->nrules; i++)
		if (base->ir->rules[i].kind == k)
			return true;
	return false;
}

static void write_policy(const struct writer *w, const struct learn *L)
{
	const struct learn_opts *o = w->o;
	const struct beec_policy *base = o->base;
	FILE *out = w->out;
	const char *name = o->name ? o->name : base ? base->ir->name : "learned";
	fprintf(out, "# %s: written by beec learn from", name);
	for (size_t i = 0; i < o->nlogs; i++)
		fprintf(out, " %s", o->logs[i]);
	fprintf(out, " (%llu denials)%s.\n", L->records, base ? ", on top of its base policy" : "");
	fputs("# Every grant below was observed; review them before use, then compile:\n", out);
	fputs("#   beec", out);
	for (size_t i = 0; i < o->ndefines; i++) {
		const char *eq = strchr(o->defines[i], '=');
		fprintf(out, " -D %.*s=...", (int)(eq - o->defines[i]), o->defines[i]);
	}
	fputs(" THIS.toml -o THIS.bpfpack\n", out);
	write_secrets_note(w, L);
	fputs("\nversion = 1\nname = ", out);
	put_str(out, name);
	fputc('\n', out);
	if (o->base_parent) {
		fputs("parent = ", out);
		put_str(out, o->base_parent);
		fputc('\n', out);
	}
	bool fs = L->cls[LC_READ].n || L->cls[LC_WRITE].n || nsecrets(L) || base_has(base, IR_RULE_FS_READ) ||
		  base_has(base, IR_RULE_FS_WRITE) || base_has(base, IR_RULE_FS_DENY);
	if (fs) {
		fputs("\n[fs]\n", out);
		write_list(w, "read", IR_RULE_FS_READ, &L->cls[LC_READ], "read");
		for (size_t i = 0; i < L->listed.n; i++) {
			char buf[8192];
			fprintf(out, "# listed, not granted (its whole tree would be): %s\n",
				subst(o, L->listed.v[i].res, buf, sizeof(buf)));
		}
		write_list(w, "write", IR_RULE_FS_WRITE, &L->cls[LC_WRITE], "written");
		write_deny(w, L);
	}
	if (L->cls[LC_EXEC].n || base_has(base, IR_RULE_EXEC_ALLOW)) {
		fputs("\n[exec]\n", out);
		write_list(w, "allow", IR_RULE_EXEC_ALLOW, &L->cls[LC_EXEC], "run");
	}
	if (L->cls[LC_CONNECT].n || L->cls[LC_BIND].n || base_has(base, IR_RULE_NET_CONNECT) ||
	    base_has(base, IR_RULE_NET_BIND) || base_has(base, IR_RULE_NET_DENY)) {
		fputs("\n[net]\n", out);
		write_list(w, "connect", IR_RULE_NET_CONNECT, &L->cls[LC_CONNECT], "connected");
		write_list(w, "bind", IR_RULE_NET_BIND, &L->cls[LC_BIND], "listened");
		write_list(w, "deny", IR_RULE_NET_DENY, NULL, "");
	}
	write_env(w, L);
	if (base && base->ir->syscalls) {
		char buf[512];
		ir_syscalls_text(base->ir->syscalls, buf, sizeof(buf));
		fputs("\n[syscalls]\nallow = [", out);
		bool first = true;
		for (char *t = strtok(buf, " "); t; t = strtok(NULL, " ")) {
			fputs(first ? "" : ", ", out);
			put_str(out, t);
			first = false;
		}
		fputs("]\n", out);
	}
	if (base && base->ir->audit != IR_AUDIT_DENY)
		fprintf(out, "\n[audit]\ndecisions = \"%s\"\n", ir_audit_mode_name(base->ir->audit));
}

static struct obs_list obs_list_copy(const struct obs_list *l)
{
	struct obs_list out = { 0 };
	for (size_t i = 0; i < l->n; i++) {
		struct obs *n = obs_add(&out, l->v[i].res, l->v[i].count, l->v[i].first);
		n->dir = l->v[i].dir;
	}
	return out;
}

static void sort_all(struct learn *L);

/* Whether the policy L gives compiles to a Landlock plan that holds. */
static bool landlock_takes(struct learn *L, const struct learn_opts *o)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		mem_raise(__func__);
	sort_all(L);
	struct writer w = { f, o };
	write_policy(&w, L);
	fclose(f);
	struct beec_policy p = { .src = source_new("learned.toml", text, len) };
	struct beec_opts bo = { .sz = sizeof(bo), .defines = o->defines, .ndefines = o->ndefines };
	struct diag_ctx dc;
	diag_init(&dc);
	bool ok = true;
	if (beec_policy__parse(&p, &dc) == 0 && beec_policy__build(&p, &bo, &dc) == 0 &&
	    beec_policy__lower(&p, &bo, &dc) == 0) {
		struct landlock_plan plan;
		landlock_plan_build(p.lw, &plan);
		ok = plan.expressible;
		landlock_plan_fini(&plan);
	}
	diag_fini(&dc);
	beec_policy__fini(&p);
	free(text);
	return ok;
}

static void sort_all(struct learn *L)
{
	for (int c = 0; c < LC_COUNT; c++) {
		if (L->cls[c].n > 1)
			qsort(L->cls[c].v, L->cls[c].n, sizeof(struct obs), obs_cmp);
		if (L->secrets[c].n > 1)
			qsort(L->secrets[c].v, L->secrets[c].n, sizeof(struct obs), obs_cmp);
	}
	if (L->nenv > 1)
		qsort(L->env, L->nenv, sizeof(char *), str_cmp);
	if (L->listed.n > 1)
		qsort(L->listed.v, L->listed.n, sizeof(struct obs), obs_cmp);
}

/* The observations shaped as a person writes them, less what base allows
 * (before: its own answer; after: what a shaped grant now covers). */
static void shape_all(struct learn *L, const struct beec_policy *base)
{
	drop_allowed(L, base);
	shape_reads(L);
	shape_writes(L);
	shape_execs(L);
	net_shape(L);
	drop_allowed(L, base);
}

static int learn_run_body(const struct learn_opts *o, FILE *out, FILE *warn, struct diag_ctx *dc)
{
	struct learn L = { 0 };
	int err = 0;
	for (size_t i = 0; i < o->nlogs && !err; i++)
		err = read_log(&L, o->logs[i], dc);
	if (err)
		goto out;
	/* the devices every tool opens: learning does not see /dev (opening
	 * a device for fanotify's event would run its driver's open) */
	static const char *const dev_read[] = { "/dev/null", "/dev/zero", "/dev/urandom", "/dev/random" };
	for (size_t i = 0; i < sizeof(dev_read) / sizeof(dev_read[0]); i++)
		obs_add(&L.cls[LC_READ], dev_read[i], 0, NULL);
	obs_add(&L.cls[LC_WRITE], "/dev/null", 0, NULL);
	/* the observations, kept for a second shaping */
	struct learn raw = L;
	for (int c = 0; c < LC_COUNT; c++)
		raw.cls[c] = obs_list_copy(&L.cls[c]);
	find_made(&L);
	shape_all(&L, o->base);
	/* versioned-library globs are what a person writes, but a landlock
	 * backend that takes only literal files and whole directories refuses
	 * them: then the libraries are named one by one */
	if (!landlock_takes(&L, o)) {
		for (int c = 0; c < LC_COUNT; c++) {
			obs_list_fini(&L.cls[c]);
			L.cls[c] = obs_list_copy(&raw.cls[c]);
		}
		obs_list_fini(&L.listed);
		L.no_lib_globs = true;
		shape_all(&L, o->base);
	}
	for (int c = 0; c < LC_COUNT; c++)
		obs_list_fini(&raw.cls[c]);
	sort_all(&L);
	for (int c = LC_READ; c <= LC_EXEC && warn; c++)
		for (size_t i = 0; i < L.secrets[c].n; i++)
			fprintf(warn, "beec: warning: '%s' looks like a secret (%s during learning): not granted, denied\n",
				L.secrets[c].v[i].res, class_verb[c]);
	struct writer w = { out, o };
	write_policy(&w, &L);
out:
	obs_list_fini(&L.listed);
	obs_list_fini(&L.made);
	obs_list_fini(&L.wdirs);
	for (int c = 0; c < LC_COUNT; c++) {
		obs_list_fini(&L.cls[c]);
		obs_list_fini(&L.secrets[c]);
	}
	for (size_t i = 0; i < L.nenv; i++)
		free(L.env[i]);
	free(L.env);
	return err;
}

int learn_run(const struct learn_opts *o, FILE *out, FILE *warn, struct diag_ctx *dc)
{
	return MEM_PROTECT(-ENOMEM, learn_run_body(o, out, warn, dc));
}
