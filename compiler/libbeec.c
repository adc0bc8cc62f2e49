/* SPDX-License-Identifier: GPL-2.0-only */
/* libbeec.c: the compiler pipeline, one stage per call. */
#include "libbeec.h"

#include "include.h"
#include "mem.h"

#include "attenuate.h"
#include "bee_names.h"
#include "image.h"
#include "manifest.h"
#include "netset.h"
#include "pack.h"
#include "pack_build.h"
#include "query.h"
#include "schema.h"

#include <errno.h>
#include <stddef.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static int beec_policy__read_body(struct beec_policy *p, const char *path)
{
	memset(p, 0, sizeof(*p));
	return source_read(path, &p->src);
}

int beec_policy__read(struct beec_policy *p, const char *path)
{
	return MEM_PROTECT(-ENOMEM, beec_policy__read_body(p, path));
}

static int beec_policy__read_any_body(struct beec_policy *p, const char *path, const struct beec_opts *opts,
				      struct diag_ctx *dc)
{
	size_t max = 0;
	if (opts && opts->sz >= offsetof(struct beec_opts, max_input) + sizeof(opts->max_input))
		max = opts->max_input;
	memset(p, 0, sizeof(*p));
	int err = source_read_max(path, max, &p->src);
	if (err || p->src->len < 8 || memcmp(p->src->text, BEE_PACK_MAGIC, 8) != 0)
		return err;
	struct bee_pack *pack;
	char msg[BEE_PACK_ERRLEN];
	err = bee_pack__open_mem(p->src->text, p->src->len, &pack, msg, sizeof(msg));
	if (err < 0) {
		diag_error(dc, LOC_NONE, "'%s': %s", path, msg);
		return err;
	}
	struct bee_manifest m;
	char why[600];
	if ((err = bee_manifest_read(pack, &m, why, sizeof(why))) < 0) {
		bee_pack__close(pack);
		if (err == -ENOMEM)
			mem_raise(__func__);
		diag_error(dc, LOC_NONE, "'%s': pack: manifest: %s", path, why);
		return err;
	}
	const struct bee_pack_section_info *s = bee_pack__find(pack, BEE_PACK_SOURCE, NULL);
	/* diagnostics name the pack and the policy inside it */
	char *name = xasprintf("%s:%s", path, m.source_name ? m.source_name : BEE_SEC_SOURCE);
	struct source *src = source_new(name, s->data, s->size);
	free(name);
	/* the count is set only once the array is there, for beec_policy__fini */
	p->pack_defines = xcalloc(m.ndefines + 1, sizeof(char *));
	for (size_t i = 0; i < m.ndefines; i++) {
		p->pack_defines[i] = xstrdup(m.defines[i]);
		p->npack_defines = i + 1;
	}
	bee_manifest_fini(&m);
	bee_pack__close(pack);
	source_free(p->src);
	p->src = src;
	return 0;
}

int beec_policy__read_any(struct beec_policy *p, const char *path, const struct beec_opts *opts,
			  struct diag_ctx *dc)
{
	return MEM_PROTECT(-ENOMEM, beec_policy__read_any_body(p, path, opts, dc));
}

/* opts->limits, when the caller's struct is new enough to hold it */
static const struct beec_limits *opts_limits(const struct beec_opts *opts)
{
	if (opts && opts->sz >= offsetof(struct beec_opts, limits) + sizeof(opts->limits))
		return opts->limits;
	return NULL;
}

static int beec_policy__parse_body(struct beec_policy *p, const struct beec_opts *opts, struct diag_ctx *dc)
{
	if (toml_parse_limits(p->src, opts_limits(opts), dc, &p->doc) < 0)
		return -EINVAL;
	return 0;
}

int beec_policy__parse(struct beec_policy *p, struct diag_ctx *dc)
{
	return MEM_PROTECT(-ENOMEM, beec_policy__parse_body(p, NULL, dc));
}

int beec_policy__parse_opts(struct beec_policy *p, const struct beec_opts *opts, struct diag_ctx *dc)
{
	return MEM_PROTECT(-ENOMEM, beec_policy__parse_body(p, opts, dc));
}

static int beec_policy__build_body(struct beec_policy *p, const struct beec_opts *opts, struct diag_ctx *dc)
{
	struct schema_opts so = { .sz = sizeof(so), .limits = opts_limits(opts) };
	if (p->pack_defines) {
		so.defines = (const char *const *)p->pack_defines;
		so.ndefines = p->npack_defines;
	} else if (opts && opts->sz >= offsetof(struct beec_opts, ndefines) + sizeof(opts->ndefines)) {
		so.defines = opts->defines;
		so.ndefines = opts->ndefines;
	}
	if (schema_build(p->doc, &so, dc, &p->ir) < 0)
		return -EINVAL;
	if (!p->ir->nincludes)
		return 0;
	/* include = [...]: the merged policy is the policy from here on */
	if (include_merge(p, opts, dc) < 0)
		return -EINVAL;
	if (toml_parse_limits(p->src, opts_limits(opts), dc, &p->doc) < 0 || schema_build(p->doc, &so, dc, &p->ir) < 0)
		return -EINVAL;
	return 0;
}

int beec_policy__build(struct beec_policy *p, const struct beec_opts *opts, struct diag_ctx *dc)
{
	return MEM_PROTECT(-ENOMEM, beec_policy__build_body(p, opts, dc));
}

static int beec_policy__load_body(struct beec_policy *p, const char *path, const struct beec_opts *opts,
		      struct diag_ctx *dc)
{
	int err = beec_policy__read(p, path);
	if (err)
		return err;
	err = beec_policy__parse_opts(p, opts, dc);
	if (err)
		return err;
	return beec_policy__build(p, opts, dc);
}

int beec_policy__load(struct beec_policy *p, const char *path, const struct beec_opts *opts,
		      struct diag_ctx *dc)
{
	return MEM_PROTECT(-ENOMEM, beec_policy__load_body(p, path, opts, dc));
}

static int beec_policy__lower_body(struct beec_policy *p, const struct beec_opts *opts, struct diag_ctx *dc)
{
	struct lower_opts lo = { .sz = sizeof(lo), .limits = opts_limits(opts) };
	if (opts && opts->sz >= offsetof(struct beec_opts, max_states) + sizeof(opts->max_states))
		lo.max_states = opts->max_states;
	if (lower_policy(p->ir, &lo, dc, &p->lw) < 0)
		return -EINVAL;
	return 0;
}

int beec_policy__lower(struct beec_policy *p, const struct beec_opts *opts, struct diag_ctx *dc)
{
	return MEM_PROTECT(-ENOMEM, beec_policy__lower_body(p, opts, dc));
}

static int beec_policy__pack_body(struct beec_policy *p, const struct beec_opts *opts, struct diag_ctx *dc,
		      uint8_t **buf, size_t *len)
{
	struct pack_build_opts po = { .sz = sizeof(po) };
	if (opts) {
		po.defines = opts->defines;
		po.ndefines = opts->ndefines;
	}
	return pack_build(p->lw, p->src, &po, dc, buf, len);
}

int beec_policy__pack(struct beec_policy *p, const struct beec_opts *opts, struct diag_ctx *dc,
		      uint8_t **buf, size_t *len)
{
	return MEM_PROTECT(-ENOMEM, beec_policy__pack_body(p, opts, dc, buf, len));
}

static char *beec_policy__parent_path_body(const struct beec_policy *p)
{
	if (!p->ir || !p->ir->parent)
		return NULL;
	const char *parent = p->ir->parent;
	const char *slash = strrchr(p->src->name, '/');
	if (parent[0] == '/' || !slash)
		return xstrdup(parent);
	return xasprintf("%.*s/%s", (int)(slash - p->src->name), p->src->name, parent);
}

char *beec_policy__parent_path(const struct beec_policy *p)
{
	return MEM_PROTECT(NULL, beec_policy__parent_path_body(p));
}

void beec_policy__fini(struct beec_policy *p)
{
	for (size_t i = 0; i < p->npack_defines; i++)
		free(p->pack_defines[i]);
	free(p->pack_defines);
	lowered_free(p->lw);
	ir_policy_free(p->ir);
	if (p->doc)
		toml_doc_free(p->doc);
	source_free(p->src);
	for (size_t i = 0; i < p->nkept; i++)
		source_free(p->kept[i]);
	free(p->kept);
	memset(p, 0, sizeof(*p));
}

/* ---- what the loader asks of a compiled policy -------------------------------------------- */

/* The image section equals these bytes. */
static bool image_same(const struct bee_pack *pack, const char *name, const void *bytes, size_t len)
{
	const struct bee_pack_section_info *s = bee_pack__find(pack, BEE_PACK_MAP_IMAGE, name);
	return s && s->size == len && memcmp(s->data, bytes, len) == 0;
}

static bool net_same(const struct bee_pack *pack, const char *name, const void *keys, size_t ksz,
		     const struct bee_net_value *vals, size_t n)
{
	const struct bee_pack_section_info *s = bee_pack__find(pack, BEE_PACK_MAP_IMAGE, name);
	size_t w = ksz + sizeof(*vals);
	if (!s || s->elem_count != n || s->elem_width != w)
		return false;
	for (size_t i = 0; i < n; i++) {
		const uint8_t *rec = (const uint8_t *)s->data + i * w;
		if (memcmp(rec, (const uint8_t *)keys + i * ksz, ksz) != 0 ||
		    memcmp(rec + ksz, &vals[i], sizeof(*vals)) != 0)
			return false;
	}
	return true;
}

static int beec_policy__pack_differs_body(const struct beec_policy *p, const struct bee_pack *pack,
					  const char **image)
{
	static const struct { enum ir_domain d; enum bee_map_id map; } dfas[] = {
		{ IR_DOMAIN_FS, BEE_MAP_FS }, { IR_DOMAIN_EXEC, BEE_MAP_EXEC }, { IR_DOMAIN_ENV, BEE_MAP_ENV },
	};
	*image = NULL;
	for (size_t i = 0; i < sizeof(dfas) / sizeof(dfas[0]); i++) {
		size_t len;
		struct bee_dfa_hdr *h = image_dfa_write(p->lw->dfa[dfas[i].d], &len);
		if (!h)
			return -ENOMEM;
		const char *name = bee_map_name(dfas[i].map);
		bool same = image_same(pack, name, h, len);
		free(h);
		if (!same) {
			*image = name;
			return 1;
		}
	}
	struct netset_image ni;
	if (netset_image_build(p->lw->net, &ni) < 0) {
		netset_image_free(&ni);
		return -ENOMEM;
	}
	const char *n4 = bee_map_name(BEE_MAP_NET4), *n6 = bee_map_name(BEE_MAP_NET6);
	if (!net_same(pack, n4, ni.keys4, sizeof(*ni.keys4), ni.values4, ni.n4))
		*image = n4;
	else if (!net_same(pack, n6, ni.keys6, sizeof(*ni.keys6), ni.values6, ni.n6))
		*image = n6;
	netset_image_free(&ni);
	return *image != NULL;
}

int beec_policy__pack_differs(const struct beec_policy *p, const struct bee_pack *pack, const char **image)
{
	return MEM_PROTECT(-ENOMEM, beec_policy__pack_differs_body(p, pack, image));
}

static int beec_policy__lower_without_body(const struct beec_policy *p, const bool *exclude,
					   struct diag_ctx *dc, struct lowered **lw)
{
	struct lower_opts lo = { .sz = sizeof(lo), .exclude = exclude };
	int err = lower_policy(p->ir, &lo, dc, lw);
	return err == -ENOMEM ? err : err < 0 ? -EINVAL : 0;
}

int beec_policy__lower_without(const struct beec_policy *p, const bool *exclude, struct diag_ctx *dc,
			       struct lowered **lw)
{
	*lw = NULL;
	return MEM_PROTECT(-ENOMEM, beec_policy__lower_without_body(p, exclude, dc, lw));
}

void beec_lowered__free(struct lowered *lw)
{
	lowered_free(lw);
}

static int beec_lowered__check_subset_body(const struct lowered *child, const struct lowered *parent,
					   struct diag_ctx *dc)
{
	int wider = attenuate_check(child, parent, dc);
	return wider < 0 ? wider : wider != 0;
}

int beec_lowered__check_subset(const struct lowered *child, const struct lowered *parent, struct diag_ctx *dc)
{
	return MEM_PROTECT(-ENOMEM, beec_lowered__check_subset_body(child, parent, dc));
}

int beec_query__check(const char *kind, const char *action, const char *resource, char *msg, size_t msglen)
{
	struct query q;
	return MEM_PROTECT(-ENOMEM, query_parse(kind, action, resource, &q, msg, msglen) < 0 ? -EINVAL : 0);
}

static int beec_policy__query_body(const struct beec_policy *p, const char *kind, const char *action,
				   const char *resource, struct beec_answer *a, FILE *explain, char *msg,
				   size_t msglen)
{
	struct query q;
	memset(a, 0, sizeof(*a));
	if (query_parse(kind, action, resource, &q, msg, msglen) < 0)
		return -EINVAL;
	int err = query_run(p->lw, &q, a);
	if (err < 0)
		return err == -ENOMEM ? err : -EDOM;
	if (!explain)   /* the answer alone (a learning session asks per open) */
		return 0;
	struct diag_ctx notes;
	diag_init(&notes);
	err = query_explain(p->lw, &q, a, explain, &notes);
	diag_print(&notes, explain);
	diag_fini(&notes);
	if (err < 0)
		return -ENOMEM;
	return 0;
}

int beec_policy__query(const struct beec_policy *p, const char *kind, const char *action, const char *resource,
		       struct beec_answer *a, FILE *explain, char *msg, size_t msglen)
{
	return MEM_PROTECT(-ENOMEM, beec_policy__query_body(p, kind, action, resource, a, explain, msg, msglen));
}

/* The grants of p's IR as the walk's seeds, and p's fs and exec images. */
static int beec_policy__ll_walk_body(const struct beec_policy *p, const struct beec_ll_opts *o, beec_ll_rule_fn fn,
				     void *ctx, struct beec_ll_plan *plan)
{
	const struct ir_policy *ir = p->ir;
	struct beec_ll_seed *seeds = xcalloc(ir->nrules + 1, sizeof(*seeds));
	size_t n = 0;
	for (size_t i = 0; i < ir->nrules; i++) {
		const struct ir_rule *r = &ir->rules[i];
		const char *what = r->kind == IR_RULE_FS_READ	   ? "fs.read"
				   : r->kind == IR_RULE_FS_WRITE   ? "fs.write"
				   : r->kind == IR_RULE_EXEC_ALLOW ? "exec.allow"
								   : NULL;
		if (!what)
			continue;
		unsigned line = 0, col = 0;
		if (r->loc.src)
			loc_linecol(r->loc, &line, &col);
		seeds[n++] = (struct beec_ll_seed){ .glob = r->text, .rule = r->index, .line = line, .what = what,
						    .pinned = r->kind == IR_RULE_EXEC_ALLOW && r->exec.pinned };
	}
	size_t len;
	struct bee_dfa_hdr *fs = image_dfa_write(p->lw->dfa[IR_DOMAIN_FS], &len);
	struct bee_dfa_hdr *ex = image_dfa_write(p->lw->dfa[IR_DOMAIN_EXEC], &len);
	int err = beec_ll__walk(fs, ex, seeds, n, o, fn, ctx, plan);
	free(fs);
	free(ex);
	free(seeds);
	return err;
}

int beec_policy__ll_walk(const struct beec_policy *p, const struct beec_ll_opts *o, beec_ll_rule_fn fn, void *ctx,
			 struct beec_ll_plan *plan)
{
	memset(plan, 0, sizeof(*plan));
	return MEM_PROTECT(-ENOMEM, beec_policy__ll_walk_body(p, o, fn, ctx, plan));
}

void beec_mem__route_json(void)
{
	mem_json_route();
}
