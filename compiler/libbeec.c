/* libbeec.c: the compiler pipeline, one stage per call. */
#include "libbeec.h"

#include "pack_build.h"
#include "schema.h"

#include <errno.h>
#include <string.h>

int beec_policy__read(struct beec_policy *p, const char *path)
{
	memset(p, 0, sizeof(*p));
	return source_read(path, &p->src);
}

int beec_policy__parse(struct beec_policy *p, struct diag_ctx *dc)
{
	if (toml_parse(p->src, dc, &p->doc) < 0)
		return -EINVAL;
	return 0;
}

int beec_policy__build(struct beec_policy *p, const struct beec_opts *opts, struct diag_ctx *dc)
{
	struct schema_opts so = { .sz = sizeof(so) };
	if (opts && opts->sz >= offsetof(struct beec_opts, ndefines) + sizeof(opts->ndefines)) {
		so.defines = opts->defines;
		so.ndefines = opts->ndefines;
	}
	if (schema_build(p->doc, &so, dc, &p->ir) < 0)
		return -EINVAL;
	return 0;
}

int beec_policy__load(struct beec_policy *p, const char *path, const struct beec_opts *opts,
		      struct diag_ctx *dc)
{
	int err = beec_policy__read(p, path);
	if (err)
		return err;
	err = beec_policy__parse(p, dc);
	if (err)
		return err;
	return beec_policy__build(p, opts, dc);
}

int beec_policy__lower(struct beec_policy *p, const struct beec_opts *opts, struct diag_ctx *dc)
{
	struct lower_opts lo = { .sz = sizeof(lo) };
	if (opts && opts->sz >= offsetof(struct beec_opts, max_states) + sizeof(opts->max_states))
		lo.max_states = opts->max_states;
	if (lower_policy(p->ir, &lo, dc, &p->lw) < 0)
		return -EINVAL;
	return 0;
}

int beec_policy__pack(struct beec_policy *p, const struct beec_opts *opts, struct diag_ctx *dc,
		      uint8_t **buf, size_t *len)
{
	struct pack_build_opts po = { .sz = sizeof(po) };
	if (opts) {
		po.defines = opts->defines;
		po.ndefines = opts->ndefines;
	}
	return pack_build(p->lw, p->src, &po, dc, buf, len);
}

char *beec_policy__parent_path(const struct beec_policy *p)
{
	if (!p->ir || !p->ir->parent)
		return NULL;
	const char *parent = p->ir->parent;
	const char *slash = strrchr(p->src->name, '/');
	if (parent[0] == '/' || !slash)
		return xstrdup(parent);
	return xasprintf("%.*s/%s", (int)(slash - p->src->name), p->src->name, parent);
}

void beec_policy__fini(struct beec_policy *p)
{
	lowered_free(p->lw);
	ir_policy_free(p->ir);
	if (p->doc)
		toml_doc_free(p->doc);
	source_free(p->src);
	memset(p, 0, sizeof(*p));
}
