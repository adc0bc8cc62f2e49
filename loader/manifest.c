/* SPDX-License-Identifier: GPL-2.0-only */
/* manifest.c: a pack verified for loading, and its manifest as C structs.
 *
 * The pack reader (runtime/pack.c) proves the container whole; this file
 * proves that what the loader will rely on is there and agrees with
 * itself: the manifest's keys and types, one image per map that names
 * one, each image sized as its map's key and value, every automaton image
 * whole (bee_dfa_image_check), the LPM entries well formed
 * (net_eval_maps_check), and the env automaton present. */
#include "internal.h"

#include "bee_audit.h"
#include "bee_dfa.h"
#include "bee_net.h"
#include "bee_syscalls.h"
#include "ir.h"
#include "net_eval.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct mf_ctx {
	struct bee_error *e;
	const char *path;
};

__attribute__((format(printf, 2, 3)))
static int mf_bad(struct mf_ctx *c, const char *fmt, ...)
{
	char buf[700];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return bee_fail(c->e, BEE_STAGE_PACK, -EINVAL, "'%s': manifest: %s", c->path, buf);
}

static const char *mf_str(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

static int mf_uint(json_t *o, const char *key, uint64_t max, uint64_t *out)
{
	json_t *v = json_object_get(o, key);
	if (!json_is_integer(v) || json_integer_value(v) < 0 || (uint64_t)json_integer_value(v) > max)
		return -1;
	*out = (uint64_t)json_integer_value(v);
	return 0;
}

static int mf_hooks(struct mf_ctx *c, json_t *a, struct bee_manifest *m)
{
	if (!json_is_array(a))
		return mf_bad(c, "'hooks' is not an array");
	m->nhooks = json_array_size(a);
	m->hooks = calloc(m->nhooks + 1, sizeof(*m->hooks));
	if (!m->hooks)
		return -ENOMEM;
	for (size_t i = 0; i < m->nhooks; i++) {
		json_t *h = json_array_get(a, i);
		struct bee_mf_hook *k = &m->hooks[i];
		k->program = mf_str(h, "program");
		k->section = mf_str(h, "section");
		k->attach = mf_str(h, "attach");
		json_t *lsm = json_object_get(h, "lsm");
		if (!k->program || !k->section || !k->attach || !json_is_boolean(lsm))
			return mf_bad(c, "hook %zu lacks program, section, attach or lsm", i);
		k->lsm = json_is_true(lsm);
	}
	return 0;
}

static int mf_maps(struct mf_ctx *c, json_t *a, struct bee_manifest *m)
{
	if (!json_is_array(a))
		return mf_bad(c, "'maps' is not an array");
	m->nmaps = json_array_size(a);
	m->maps = calloc(m->nmaps + 1, sizeof(*m->maps));
	if (!m->maps)
		return -ENOMEM;
	for (size_t i = 0; i < m->nmaps; i++) {
		json_t *o = json_array_get(a, i);
		struct bee_mf_map *p = &m->maps[i];
		uint64_t ks, vs, me, fl;
		p->name = mf_str(o, "name");
		p->type = mf_str(o, "type");
		p->fill = mf_str(o, "fill");
		p->image = mf_str(o, "image");
		if (!p->name || !p->type || !p->fill || mf_uint(o, "key_size", UINT32_MAX, &ks) ||
		    mf_uint(o, "value_size", UINT32_MAX, &vs) || mf_uint(o, "max_entries", UINT32_MAX, &me) ||
		    mf_uint(o, "flags", UINT32_MAX, &fl))
			return mf_bad(c, "map %zu lacks name, type, fill, a size or flags", i);
		if (!p->image && !json_is_null(json_object_get(o, "image")))
			return mf_bad(c, "map '%s': 'image' is neither a name nor null", p->name);
		p->key_size = (uint32_t)ks;
		p->value_size = (uint32_t)vs;
		p->max_entries = (uint32_t)me;
		p->flags = (uint32_t)fl;
	}
	return 0;
}

/* "constants": the BPF object's .rodata globals by name, each a 32-bit
 * value (bpf_load.c sets them). Absent is none: a pack whose object has
 * no such global needs none, and one whose object has them is refused at
 * load when one is missing. */
static int mf_consts(struct mf_ctx *c, json_t *o, struct bee_manifest *m)
{
	if (!o)
		return 0;
	if (!json_is_object(o))
		return mf_bad(c, "'constants' is not an object");
	m->nconsts = json_object_size(o);
	m->consts = calloc(m->nconsts + 1, sizeof(*m->consts));
	if (!m->consts)
		return -ENOMEM;
	const char *key;
	json_t *v;
	size_t i = 0;
	json_object_foreach(o, key, v) {
		if (!json_is_integer(v) || json_integer_value(v) < 0 ||
		    json_integer_value(v) > (json_int_t)UINT32_MAX)
			return mf_bad(c, "constant '%s' is not a 32-bit unsigned integer", key);
		m->consts[i].name = key;
		m->consts[i].value = (uint32_t)json_integer_value(v);
		i++;
	}
	return 0;
}

static int mf_rules(struct mf_ctx *c, json_t *a, struct bee_manifest *m)
{
	if (!json_is_array(a))
		return mf_bad(c, "'rules' is not an array");
	m->nrules = json_array_size(a);
	m->rules = calloc(m->nrules + 1, sizeof(*m->rules));
	if (!m->rules)
		return -ENOMEM;
	for (size_t i = 0; i < m->nrules; i++) {
		json_t *o = json_array_get(a, i);
		struct bee_mf_rule *r = &m->rules[i];
		uint64_t idx, line = 0, col = 0;
		r->domain = mf_str(o, "domain");
		r->kind = mf_str(o, "kind");
		r->text = mf_str(o, "text");
		r->value = mf_str(o, "value");
		r->pinned = json_is_true(json_object_get(o, "pinned"));
		if (mf_uint(o, "index", UINT32_MAX, &idx) || idx != i || !r->domain || !r->kind || !r->text)
			return mf_bad(c, "rule %zu lacks index, domain, kind or text", i);
		mf_uint(o, "line", UINT32_MAX, &line);
		mf_uint(o, "column", UINT32_MAX, &col);
		r->index = (unsigned)idx;
		r->line = (unsigned)line;
		r->column = (unsigned)col;
		if (strcmp(r->domain, "env") == 0 && strcmp(r->kind, "set") == 0 && !r->value)
			return mf_bad(c, "rule %zu: env.set without a value", i);
	}
	return 0;
}

static int mf_landlock(struct mf_ctx *c, json_t *o, struct bee_manifest *m)
{
	json_t *ex = json_object_get(o, "expressible");
	if (!json_is_object(o) || !json_is_boolean(ex))
		return mf_bad(c, "'landlock' lacks 'expressible'");
	m->ll_expressible = json_is_true(ex);
	m->ll_rule = -1;
	if (!m->ll_expressible) {
		uint64_t r;
		m->ll_reason = mf_str(o, "reason");
		if (!m->ll_reason)
			return mf_bad(c, "'landlock' is not expressible and gives no reason");
		if (mf_uint(o, "rule", UINT32_MAX, &r) == 0)
			m->ll_rule = (long)r;
		return 0;
	}
	json_t *a = json_object_get(o, "rules");
	if (!json_is_array(a))
		return mf_bad(c, "'landlock' is expressible but has no 'rules'");
	m->nll = json_array_size(a);
	m->ll_rules = calloc(m->nll + 1, sizeof(*m->ll_rules));
	if (!m->ll_rules)
		return -ENOMEM;
	for (size_t i = 0; i < m->nll; i++) {
		json_t *r = json_array_get(a, i);
		struct bee_mf_ll_rule *l = &m->ll_rules[i];
		json_t *acc = json_object_get(r, "access"), *bn = json_object_get(r, "beneath");
		uint64_t rule;
		l->path = mf_str(r, "path");
		if (!l->path || l->path[0] != '/' || !json_is_boolean(bn) || !json_is_array(acc) ||
		    mf_uint(r, "rule", UINT32_MAX, &rule))
			return mf_bad(c, "landlock rule %zu lacks path, beneath, access or rule", i);
		l->beneath = json_is_true(bn);
		l->rule = (unsigned)rule;
		for (size_t j = 0; j < json_array_size(acc); j++) {
			const char *s = json_string_value(json_array_get(acc, j));
			if (s && strcmp(s, "read") == 0)
				l->perms |= IR_PERM_READ;
			else if (s && strcmp(s, "write") == 0)
				l->perms |= IR_PERM_WRITE;
			else if (s && strcmp(s, "execute") == 0)
				l->perms |= IR_PERM_EXEC;
			else
				return mf_bad(c, "landlock rule %zu: unknown access '%s'", i, s ? s : "?");
		}
	}
	return 0;
}

static int mf_audit_mode(const char *s, unsigned *out)
{
#define MF_MODE(name, value, str)         \
	if (strcmp(s, str) == 0) {        \
		*out = value;             \
		return 0;                 \
	}
	BEE_AUDIT_MODES(MF_MODE)
#undef MF_MODE
	return -1;
}

/* "syscalls": the groups the policy allows, by name; absent is none. A
 * name this loader does not know refuses the pack: its filter could not
 * say what the policy meant (fail closed). */
static int mf_syscalls(struct mf_ctx *c, const json_t *a, struct bee_manifest *m)
{
	m->syscalls_allowed = 0;
	if (!a)
		return 0;
	if (!json_is_array(a))
		return mf_bad(c, "'syscalls' is not an array");
	size_t i;
	const json_t *v;
	json_array_foreach(a, i, v) {
		const char *name = json_string_value(v);
		unsigned g = 0;
		while (name && g < BEE_SYSCALLS_COUNT && strcmp(name, bee_syscall_groups[g].name) != 0)
			g++;
		if (!name || g == BEE_SYSCALLS_COUNT)
			return mf_bad(c, "syscalls %zu: '%s' is not a system call group this loader knows", i,
				      name ? name : "(not a string)");
		if (m->syscalls_allowed & (1u << g))
			return mf_bad(c, "syscalls %zu: '%s' is listed twice", i, name);
		m->syscalls_allowed |= 1u << g;
	}
	return 0;
}

static int mf_parse(struct mf_ctx *c, const json_t *root, struct bee_manifest *m)
{
	json_t *j = (json_t *)root;
	const char *fmt = mf_str(j, "format");
	uint64_t schema;
	if (!fmt || strcmp(fmt, "bee-pack-manifest") != 0)
		return mf_bad(c, "'format' is not 'bee-pack-manifest'");
	if (mf_uint(j, "schema", 1000, &schema) || schema != 1)
		return mf_bad(c, "'schema' is not 1 (this loader reads 1)");
	m->name = mf_str(j, "name");
	m->source = mf_str(j, "source");
	m->source_name = mf_str(j, "source_name");
	const char *audit = mf_str(j, "audit");
	if (!m->name || !m->source || !audit || mf_audit_mode(audit, &m->audit))
		return mf_bad(c, "'name', 'source' or 'audit' is missing or unknown");
	json_t *defs = json_object_get(j, "defines");
	if (!json_is_array(defs))
		return mf_bad(c, "'defines' is not an array");
	m->ndefines = json_array_size(defs);
	m->defines = calloc(m->ndefines + 1, sizeof(*m->defines));
	if (!m->defines)
		return -ENOMEM;
	for (size_t i = 0; i < m->ndefines; i++) {
		m->defines[i] = json_string_value(json_array_get(defs, i));
		if (!m->defines[i] || !strchr(m->defines[i], '='))
			return mf_bad(c, "define %zu is not NAME=VALUE", i);
	}
	int err;
	if ((err = mf_hooks(c, json_object_get(j, "hooks"), m)) < 0 ||
	    (err = mf_maps(c, json_object_get(j, "maps"), m)) < 0 ||
	    (err = mf_consts(c, json_object_get(j, "constants"), m)) < 0 ||
	    (err = mf_rules(c, json_object_get(j, "rules"), m)) < 0 ||
	    (err = mf_landlock(c, json_object_get(j, "landlock"), m)) < 0 ||
	    (err = mf_syscalls(c, json_object_get(j, "syscalls"), m)) < 0)
		return err;
	m->net_prov = json_object_get(j, "net_provenance");
	if (!json_is_array(m->net_prov))
		return mf_bad(c, "'net_provenance' is not an array");
	return 0;
}

const struct bee_pack_section_info *bee_pack_image(const struct bee_pack *p, const char *name)
{
	return bee_pack__find(p, BEE_PACK_MAP_IMAGE, name);
}

/* The images: each named one present, sized as its map, well formed. */
static int mf_images(struct mf_ctx *c, const struct bee_pack *p, const struct bee_manifest *m)
{
	const struct bee_pack_section_info *n4 = NULL, *n6 = NULL;
	for (size_t i = 0; i < m->nmaps; i++) {
		const struct bee_mf_map *mp = &m->maps[i];
		if (!mp->image)
			continue;
		const struct bee_pack_section_info *s = bee_pack_image(p, mp->image);
		if (!s)
			return mf_bad(c, "map '%s': image section '%s' is missing", mp->name, mp->image);
		if (strcmp(mp->type, "array") == 0) {
			if (s->size != mp->value_size || mp->key_size != 4 || mp->max_entries != 1)
				return mf_bad(c, "map '%s': image of %llu bytes for a value of %u", mp->name,
					      (unsigned long long)s->size, mp->value_size);
			int r = bee_dfa_image_check(s->data, s->size);
			if (r)
				return mf_bad(c, "map '%s': automaton image is malformed (error %d)", mp->name, r);
		} else if (strcmp(mp->type, "lpm_trie") == 0) {
			if (s->elem_width != (uint64_t)mp->key_size + mp->value_size ||
			    s->elem_count > mp->max_entries || mp->value_size != sizeof(struct bee_net_value))
				return mf_bad(c, "map '%s': %llu records of %u bytes do not fit the map", mp->name,
					      (unsigned long long)s->elem_count, s->elem_width);
			if (mp->key_size == sizeof(struct bee_net_key4))
				n4 = s;
			else if (mp->key_size == sizeof(struct bee_net_key6))
				n6 = s;
			else
				return mf_bad(c, "map '%s': key of %u bytes", mp->name, mp->key_size);
		} else {
			return mf_bad(c, "map '%s': an image for a map of type '%s'", mp->name, mp->type);
		}
	}
	/* the LPM entries as the evaluator checks them: split the records */
	size_t k4 = sizeof(struct bee_net_key4), k6 = sizeof(struct bee_net_key6);
	size_t v = sizeof(struct bee_net_value);
	struct net_eval_maps nm = { 0 };
	nm.n4 = n4 ? n4->elem_count : 0;
	nm.n6 = n6 ? n6->elem_count : 0;
	struct bee_net_key4 *keys4 = calloc(nm.n4 + 1, k4);
	struct bee_net_key6 *keys6 = calloc(nm.n6 + 1, k6);
	struct bee_net_value *v4 = calloc(nm.n4 + 1, v), *v6 = calloc(nm.n6 + 1, v);
	int err = 0;
	if (!keys4 || !keys6 || !v4 || !v6) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < nm.n4; i++) {
		memcpy(&keys4[i], (const uint8_t *)n4->data + i * (k4 + v), k4);
		memcpy(&v4[i], (const uint8_t *)n4->data + i * (k4 + v) + k4, v);
	}
	for (size_t i = 0; i < nm.n6; i++) {
		memcpy(&keys6[i], (const uint8_t *)n6->data + i * (k6 + v), k6);
		memcpy(&v6[i], (const uint8_t *)n6->data + i * (k6 + v) + k6, v);
	}
	nm.keys4 = keys4;
	nm.values4 = v4;
	nm.keys6 = keys6;
	nm.values6 = v6;
	char msg[256];
	if (net_eval_maps_check(&nm, msg, sizeof(msg)) < 0) {
		err = mf_bad(c, "network images: %s", msg);
		goto out;
	}
	const struct bee_pack_section_info *env = bee_pack_image(p, "bee_env");
	if (!env || bee_dfa_image_check(env->data, env->size)) {
		err = mf_bad(c, "the env automaton image 'bee_env' is missing or malformed");
		goto out;
	}
	if (!bee_pack__find(p, BEE_PACK_ELF, NULL))
		err = mf_bad(c, "the pack holds no BPF object");
out:
	free(keys4);
	free(keys6);
	free(v4);
	free(v6);
	return err;
}

int bee_pack_load(const char *path, struct bee_pack **pack, struct bee_manifest *m, struct bee_error *e)
{
	char err[BEE_PACK_ERRLEN];
	struct mf_ctx c = { .e = e, .path = path };
	memset(m, 0, sizeof(*m));
	*pack = NULL;
	int r = bee_fault(BEE_STAGE_PACK);
	if (r)
		return bee_fail(e, BEE_STAGE_PACK, r, "'%s': injected fault", path);
	r = bee_pack__open_file(path, pack, err, sizeof(err));
	if (r < 0) {
		/* the reader's message starts with "pack: " already */
		bee_fail(e, BEE_STAGE_PACK, r, "%s", strncmp(err, "pack: ", 6) == 0 ? err + 6 : err);
		return r;
	}
	r = mf_parse(&c, bee_pack__manifest(*pack), m);
	if (r == 0)
		r = mf_images(&c, *pack, m);
	if (r < 0) {
		if (r == -ENOMEM)
			bee_fail(e, BEE_STAGE_PACK, r, "'%s': out of memory", path);
		bee_manifest_fini(m);
		bee_pack__close(*pack);
		*pack = NULL;
	}
	return r;
}

void bee_manifest_fini(struct bee_manifest *m)
{
	free(m->defines);
	free(m->hooks);
	free(m->maps);
	free(m->consts);
	free(m->rules);
	free(m->ll_rules);
	memset(m, 0, sizeof(*m));
}

const struct bee_mf_rule *bee_manifest_rule(const struct bee_manifest *m, unsigned index)
{
	return index < m->nrules ? &m->rules[index] : NULL;
}

const struct bee_mf_map *bee_manifest_map(const struct bee_manifest *m, const char *name)
{
	for (size_t i = 0; i < m->nmaps; i++)
		if (strcmp(m->maps[i].name, name) == 0)
			return &m->maps[i];
	return NULL;
}

void bee_rule_format(const struct bee_mf_rule *r, char *buf, size_t size)
{
	if (r->value)
		snprintf(buf, size, "%s.%s %s=\"%s\"", r->domain, r->kind, r->text, r->value);
	else
		snprintf(buf, size, "%s.%s %s%s", r->domain, r->kind, r->pinned ? "!" : "", r->text);
}
