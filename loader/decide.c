/* SPDX-License-Identifier: GPL-2.0-only */
/* decide.c: a pack's policy compiled again, and bee_decision__query.
 *
 * A pack holds its policy source and the defines it was compiled with;
 * libbeec compiles them again (parse, build, lower) and the result must
 * give the pack's images byte for byte (every automaton, every LPM
 * record): only then does an answer computed from the source speak for
 * the pack, and only then can revoke recompute a narrowed image from it.
 * A pack from another beec version that lowers differently is refused
 * rather than second-guessed.
 */
#include "internal.h"

#include "image.h"
#include "libbeec.h"
#include "netset.h"
#include "query.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The image section equals these bytes. */
static bool image_same(const struct bee_pack *p, const char *name, const void *bytes, size_t len)
{
	const struct bee_pack_section_info *s = bee_pack_image(p, name);
	return s && s->size == len && memcmp(s->data, bytes, len) == 0;
}

static bool net_same(const struct bee_pack *p, const char *name, const void *keys, size_t ksz,
		     const struct bee_net_value *vals, size_t n)
{
	const struct bee_pack_section_info *s = bee_pack_image(p, name);
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

/* Which of the pack's images the lowered policy does not reproduce, or NULL;
 * "" when memory ran out. */
static const char *images_differ(const struct bee_pack *p, const struct lowered *lw)
{
	static const struct { enum ir_domain d; enum bee_map_id map; } dfas[] = {
		{ IR_DOMAIN_FS, BEE_MAP_FS }, { IR_DOMAIN_EXEC, BEE_MAP_EXEC }, { IR_DOMAIN_ENV, BEE_MAP_ENV },
	};
	for (size_t i = 0; i < sizeof(dfas) / sizeof(dfas[0]); i++) {
		size_t len;
		struct bee_dfa_hdr *h = image_dfa_write(lw->dfa[dfas[i].d], &len);
		if (!h)
			return "";   /* out of memory: bee_policy_rebuild tells it apart */
		const char *name = bee_map_name(dfas[i].map);
		bool same = image_same(p, name, h, len);
		free(h);
		if (!same)
			return name;
	}
	struct netset_image ni;
	if (netset_image_build(lw->net, &ni) < 0) {
		netset_image_free(&ni);
		return "";
	}
	const char *bad = NULL;
	const char *n4 = bee_map_name(BEE_MAP_NET4), *n6 = bee_map_name(BEE_MAP_NET6);
	if (!net_same(p, n4, ni.keys4, sizeof(*ni.keys4), ni.values4, ni.n4))
		bad = n4;
	else if (!net_same(p, n6, ni.keys6, sizeof(*ni.keys6), ni.values6, ni.n6))
		bad = n6;
	netset_image_free(&ni);
	return bad;
}

/* First line of the diagnostics, for a one-line message. */
static void diag_first(const struct diag_ctx *dc, char *buf, size_t size)
{
	buf[0] = '\0';
	if (dc->n && dc->items[0].msg)
		snprintf(buf, size, "%s", dc->items[0].msg);
}

int bee_policy_rebuild(const struct bee_pack *p, const struct bee_manifest *m, struct beec_policy *pol,
		       struct bee_error *e)
{
	const struct bee_pack_section_info *src = bee_pack__find(p, BEE_PACK_SOURCE, NULL);
	struct beec_opts opts = { .sz = sizeof(opts), .defines = m->defines, .ndefines = m->ndefines };
	struct diag_ctx dc;
	char msg[512];
	int err = 0;
	memset(pol, 0, sizeof(*pol));
	diag_init(&dc);
	pol->src = source_new(m->source_name ? m->source_name : src->name, src->data, src->size);
	err = pol->src ? beec_policy__parse(pol, &dc) : -ENOMEM;
	if (!err)
		err = beec_policy__build(pol, &opts, &dc);
	if (!err)
		err = beec_policy__lower(pol, &opts, &dc);
	if (err == -ENOMEM) {
		err = bee_fail(e, BEE_STAGE_PACK, -ENOMEM, "out of memory compiling the pack's source again");
		goto out;
	}
	if (err < 0) {
		diag_first(&dc, msg, sizeof(msg));
		err = bee_fail(e, BEE_STAGE_PACK, -EINVAL, "the pack's source does not compile again: %s", msg);
		goto out;
	}
	const char *bad = images_differ(p, pol->lw);
	if (bad && !*bad)
		err = bee_fail(e, BEE_STAGE_PACK, -ENOMEM, "out of memory comparing the pack's images");
	else if (bad)
		err = bee_fail(e, BEE_STAGE_PACK, -EINVAL,
			       "the pack's source and defines do not give its image '%s' again (another beec "
			       "compiled it?): its decisions cannot be recomputed here",
			       bad);
out:
	diag_fini(&dc);
	if (err)
		beec_policy__fini(pol);
	return err;
}

int bee_decision__query(const char *pack_path, const char *kind, const char *action, const char *resource,
			struct bee_decision *d, struct bee_error *e)
{
	struct bee_pack *pack = NULL;
	struct bee_manifest m;
	struct beec_policy pol;
	struct query q;
	struct query_result r;
	char msg[256];
	char *text = NULL;
	size_t len = 0;
	memset(d, 0, sizeof(*d));
	if (query_parse(kind, action, resource, &q, msg, sizeof(msg)) < 0)
		return bee_fail(e, BEE_STAGE_USAGE, -EINVAL, "%s", msg);
	int err = bee_pack_load(pack_path, &pack, &m, e);
	if (err)
		return err;
	if ((err = bee_policy_rebuild(pack, &m, &pol, e)) < 0)
		goto out;
	if ((err = query_run(pol.lw, &q, &r)) < 0) {
		err = err == -ENOMEM ? bee_fail(e, BEE_STAGE_PACK, -ENOMEM, "out of memory answering the query")
				     : bee_fail(e, BEE_STAGE_PACK, -EINVAL, "the query cannot be answered");
		goto fini;
	}
	FILE *f = open_memstream(&text, &len);
	if (!f) {
		err = bee_fail(e, BEE_STAGE_PACK, -ENOMEM, "out of memory");
		goto fini;
	}
	struct diag_ctx notes;
	diag_init(&notes);
	int xr = query_explain(pol.lw, &q, &r, f, &notes);
	diag_print(&notes, f);
	diag_fini(&notes);
	fclose(f);
	if (xr < 0) {
		free(text);
		err = bee_fail(e, BEE_STAGE_PACK, -ENOMEM, "out of memory explaining the query");
		goto fini;
	}
	d->allow = r.allow;
	d->too_long = r.too_long;
	d->pinned = r.pinned;
	d->injected = r.injected;
	d->nrules = r.nrules < 16 ? r.nrules : 16;
	memcpy(d->rules, r.rules, d->nrules * sizeof(d->rules[0]));
	d->text = text;
fini:
	beec_policy__fini(&pol);
out:
	bee_manifest_fini(&m);
	bee_pack__close(pack);
	return err;
}

void bee_decision__fini(struct bee_decision *d)
{
	free(d->text);
	d->text = NULL;
}
