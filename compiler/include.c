/* SPDX-License-Identifier: GPL-2.0-only */
/* include.c: `include = ["python3", "local.toml"]`, resolved at compile
 * time (docs/writing-policies.md, "Includes").
 *
 *   resolve   a name with a '/' or ending in ".toml" is a file, relative to
 *             the policy's directory; any other name is NAME.toml in the
 *             policy's directory, then in each abstractions directory
 *             (beec -I, the configuration's beec.abstractions, then
 *             /usr/local/share/bee/abstractions and /usr/share/bee/abstractions)
 *   load      each included file is a policy of its own (version, name),
 *             compiled with the same defines, so its errors point at its own
 *             lines; it may include others (INCLUDE_DEPTH deep) but not
 *             name a parent
 *   merge     one policy: the includer's name, parent and [audit], every
 *             rule of both (the includer's first, a rule given twice kept
 *             once), the union of [syscalls]; the record
 *             included = ["NAME PATH xxh3:HEX"] says what was merged
 *   again     that merged policy, written as TOML, is the policy from here
 *             on: it is what the pack's source section holds, so that the
 *             loader compiles a pack's source again (decide.c) without the
 *             included files, and a pack and its source stay one thing
 *
 * An include never widens past a parent: the parent proof runs on the
 * merged policy, includes and all.
 */
#include "include.h"

#include "libbeec.h"
#include "mem.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <xxhash.h>

static const char *const default_dirs[] = {
	"/usr/local/share/bee/abstractions",
	"/usr/share/bee/abstractions",
};

static bool is_file(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static bool is_path_name(const char *n)
{
	size_t l = strlen(n);
	return strchr(n, '/') || (l > 5 && strcmp(n + l - 5, ".toml") == 0);
}

/* The file name n stands for (xmalloc'ed), or NULL with the places
 * looked at in tried. */
static char *resolve(const char *policy_dir, const char *n, const struct beec_opts *opts, char *tried,
		     size_t triedsize)
{
	size_t k = 0;
	tried[0] = '\0';
	if (is_path_name(n)) {
		char *p = n[0] == '/' ? xstrdup(n) : xasprintf("%s/%s", policy_dir, n);
		if (is_file(p))
			return p;
		snprintf(tried, triedsize, "%s", p);
		free(p);
		return NULL;
	}
	size_t nd = opts && opts->sz >= offsetof(struct beec_opts, ninclude_dirs) + sizeof(opts->ninclude_dirs)
			    ? opts->ninclude_dirs : 0;
	for (size_t i = 0; i < 1 + nd + sizeof(default_dirs) / sizeof(default_dirs[0]); i++) {
		const char *d = i == 0 ? policy_dir : i <= nd ? opts->include_dirs[i - 1] : default_dirs[i - 1 - nd];
		char *p = xasprintf("%s/%s.toml", d, n);
		if (is_file(p))
			return p;
		k += (size_t)snprintf(tried + k, k < triedsize ? triedsize - k : 0, "%s%s", k ? ", " : "", d);
		if (k >= triedsize)
			k = triedsize - 1;
		free(p);
	}
	return NULL;
}

/* ---- the merged policy as TOML ---------------------------------------------------- */

/* A TOML basic string whose text schema.c reads back as s: '$' doubled
 * (it would start a ${NAME}), quotes, backslashes and controls escaped. */
static void put(FILE *f, const char *prefix, const char *s)
{
	fputc('"', f);
	fputs(prefix, f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '$')
			fputs("$$", f);
		else if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

struct merge {
	const struct ir_policy *v[1 + INCLUDE_MAX];
	size_t n;
};

static bool same_rule(const struct ir_rule *a, const struct ir_rule *b)
{
	return a->kind == b->kind && strcmp(a->text, b->text) == 0 &&
	       (a->kind != IR_RULE_EXEC_ALLOW || a->exec.pinned == b->exec.pinned) &&
	       (a->kind != IR_RULE_ENV_SET || strcmp(a->env_set.value, b->env_set.value) == 0);
}

/* 1 when an earlier policy of the merge, or an earlier rule of the same,
 * has r already. */
static bool seen_before(const struct merge *m, size_t pi, size_t ri)
{
	const struct ir_rule *r = &m->v[pi]->rules[ri];
	for (size_t p = 0; p <= pi; p++)
		for (size_t i = 0; i < (p == pi ? ri : m->v[p]->nrules); i++)
			if (same_rule(&m->v[p]->rules[i], r))
				return true;
	return false;
}

static void write_kind(FILE *f, const struct merge *m, enum ir_rule_kind k, bool *table_open,
		       enum ir_domain *table)
{
	bool any = false;
	for (size_t p = 0; p < m->n; p++)
		for (size_t i = 0; i < m->v[p]->nrules; i++) {
			const struct ir_rule *r = &m->v[p]->rules[i];
			if (r->kind != k || seen_before(m, p, i))
				continue;
			enum ir_domain d = ir_rule_kind_domain(k);
			if (!*table_open || *table != d) {
				fprintf(f, "\n[%s]\n", ir_domain_name(d));
				*table_open = true;
				*table = d;
			}
			if (!any)
				fprintf(f, k == IR_RULE_ENV_SET ? "%s = { " : "%s = [\n", ir_rule_kind_key(k));
			if (k == IR_RULE_ENV_SET) {
				fprintf(f, "%s%s = ", any ? ", " : "", r->text);
				put(f, "", r->env_set.value);
			} else {
				fputs("    ", f);
				put(f, k == IR_RULE_EXEC_ALLOW && r->exec.pinned ? "!" : "", r->text);
				if (p)
					fprintf(f, ",   # %s\n", m->v[p]->name);
				else
					fputs(",\n", f);
			}
			any = true;
		}
	if (any)
		fputs(k == IR_RULE_ENV_SET ? " }\n" : "]\n", f);
}

static char *merged_text(const struct merge *m, char *const *records, size_t nrec, size_t *len)
{
	const struct ir_policy *top = m->v[0];
	char *text = NULL;
	FILE *f = open_memstream(&text, len);
	if (!f)
		mem_raise(__func__);
	fprintf(f, "# '%s' merged with its includes by beec: the pack's source\n", top->name);
	fprintf(f, "version = %u\nname = ", top->version);
	put(f, "", top->name);
	fputc('\n', f);
	if (top->parent) {
		fputs("parent = ", f);
		put(f, "", top->parent);
		fputc('\n', f);
	}
	fputs("included = [", f);
	for (size_t i = 0; i < nrec; i++) {
		fputs(i ? ", " : "", f);
		put(f, "", records[i]);
	}
	fputs("]\n", f);
	bool open = false;
	enum ir_domain table = IR_DOMAIN_COUNT;
#define X(name, dom, key) write_kind(f, m, IR_RULE_##name, &open, &table);
	IR_RULE_KINDS(X)
#undef X
	uint32_t sys = 0;
	for (size_t p = 0; p < m->n; p++)
		sys |= m->v[p]->syscalls;
	if (sys) {
		char buf[512];
		ir_syscalls_text(sys, buf, sizeof(buf));
		fputs("\n[syscalls]\nallow = [", f);
		bool first = true;
		for (char *t = strtok(buf, " "); t; t = strtok(NULL, " ")) {
			fputs(first ? "" : ", ", f);
			put(f, "", t);
			first = false;
		}
		fputs("]\n", f);
	}
	fprintf(f, "\n[audit]\ndecisions = \"%s\"\n", ir_audit_mode_name(top->audit));
	fclose(f);
	return text;
}

/* ---- the pass ------------------------------------------------------------------- */

static void keep_source(struct beec_policy *p, struct source *src)
{
	p->kept = xrealloc(p->kept, (p->nkept + 1) * sizeof(*p->kept));
	p->kept[p->nkept++] = src;
}

int include_merge(struct beec_policy *p, const struct beec_opts *opts, struct diag_ctx *dc)
{
	const struct ir_policy *top = p->ir;
	struct beec_policy inc[INCLUDE_MAX];
	char **records = NULL;
	size_t ninc = 0, nrec = 0;
	int err = 0;
	static __thread int nesting;   /* included policies are built by this pass too */
	if (nesting >= INCLUDE_DEPTH)
		return diag_error(dc, top->includes_loc[0], "includes nest more than %d deep (a cycle?)",
				  INCLUDE_DEPTH), -EINVAL;
	if (top->nincludes > INCLUDE_MAX)
		return diag_error(dc, top->includes_loc[INCLUDE_MAX], "more than %d includes", INCLUDE_MAX), -EINVAL;
	const char *slash = strrchr(p->src->name, '/');
	char *dir = slash ? xstrndup(p->src->name, slash == p->src->name ? 1 : (size_t)(slash - p->src->name))
			  : xstrdup(".");
	memset(inc, 0, sizeof(inc));
	for (size_t i = 0; i < top->nincludes; i++) {
		char tried[1024];
		const char *n = top->includes[i];
		struct loc at = top->includes_loc[i];
		char *path = resolve(dir, n, opts, tried, sizeof(tried));
		if (!path) {
			diag_error(dc, at, "include '%s' not found", n);
			diag_note(dc, LOC_NONE, "looked in %s", tried);
			err = -EINVAL;
			continue;
		}
		struct beec_policy *q = &inc[ninc];
		nesting++;
		int e = beec_policy__load(q, path, opts, dc);
		nesting--;
		/* its diagnostics, and those of what it included, are printed later */
		const struct source *qsrc = q->src;
		if (q->src)
			keep_source(p, q->src);
		q->src = NULL;
		for (size_t k = 0; k < q->nkept; k++)
			keep_source(p, q->kept[k]);
		free(q->kept);
		q->kept = NULL;
		q->nkept = 0;
		if (e == -ENOMEM)
			mem_raise(__func__);
		if (e < 0) {
			diag_note(dc, at, "included here");
			beec_policy__fini(q);
			err = -EINVAL;
		} else if (q->ir->parent) {
			diag_error(dc, at, "'%s' names a parent: an included policy may not", path);
			err = -EINVAL;
		}
		if (e == 0) {
			const struct source *s = qsrc;
			char *real = realpath(path, NULL);
			records = xrealloc(records, (nrec + 1 + q->ir->nincluded) * sizeof(char *));
			records[nrec++] = xasprintf("%s %s xxh3:%016llx", n, real ? real : path,
						    (unsigned long long)XXH3_64bits(s->text, s->len));
			/* what it included in turn */
			for (size_t k = 0; k < q->ir->nincluded; k++) {
				bool dup = false;
				for (size_t r = 0; r < nrec; r++)
					dup |= strcmp(records[r], q->ir->included[k]) == 0;
				if (!dup)
					records[nrec++] = xstrdup(q->ir->included[k]);
			}
			free(real);
			ninc++;
		}
		free(path);
	}
	free(dir);
	if (!err) {
		struct merge m = { .n = 0 };
		m.v[m.n++] = top;
		for (size_t i = 0; i < ninc; i++)
			m.v[m.n++] = inc[i].ir;
		size_t len;
		char *text = merged_text(&m, records, nrec, &len);
		char *name = xasprintf("%s+include", p->src->name);
		struct source *flat = source_new(name, text, len);
		free(name);
		free(text);
		/* the includer's text stays: its diagnostics may be queued */
		keep_source(p, p->src);
		toml_doc_free(p->doc);
		ir_policy_free(p->ir);
		p->doc = NULL;
		p->ir = NULL;
		p->src = flat;
	}
	for (size_t i = 0; i < ninc; i++)
		beec_policy__fini(&inc[i]);
	for (size_t i = 0; i < nrec; i++)
		free(records[i]);
	free(records);
	return err;
}
