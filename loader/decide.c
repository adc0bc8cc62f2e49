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

#include "libbeec.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	const char *bad = NULL;
	int differs = beec_policy__pack_differs(pol, p, &bad);
	if (differs < 0)
		err = bee_fail(e, BEE_STAGE_PACK, -ENOMEM, "out of memory comparing the pack's images");
	else if (differs)
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
	struct beec_answer r;
	char msg[256];
	char *text = NULL;
	size_t len = 0;
	memset(d, 0, sizeof(*d));
	if (beec_query__check(kind, action, resource, msg, sizeof(msg)) < 0)
		return bee_fail(e, BEE_STAGE_USAGE, -EINVAL, "%s", msg);
	int err = bee_pack_load(pack_path, &pack, &m, e);
	if (err)
		return err;
	if ((err = bee_policy_rebuild(pack, &m, &pol, e)) < 0)
		goto out;
	FILE *f = open_memstream(&text, &len);
	if (!f) {
		err = bee_fail(e, BEE_STAGE_PACK, -ENOMEM, "out of memory");
		goto fini;
	}
	err = beec_policy__query(&pol, kind, action, resource, &r, f, msg, sizeof(msg));
	fclose(f);
	if (err < 0) {
		free(text);
		err = err == -ENOMEM ? bee_fail(e, BEE_STAGE_PACK, -ENOMEM, "out of memory answering the query")
				     : bee_fail(e, BEE_STAGE_PACK, -EINVAL, "the query cannot be answered");
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
