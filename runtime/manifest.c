/* SPDX-License-Identifier: GPL-2.0-only */
/* manifest.c: the one reader of a pack's manifest (manifest.h). */
#include "manifest.h"

#include "bee_audit.h"
#include "bee_names.h"
#include "bee_syscalls.h"
#include "pack.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

struct mf_ctx {
	char *err;
	size_t errlen;
};

__attribute__((format(printf, 2, 3)))
static int mf_bad(struct mf_ctx *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (c->err && c->errlen)
		vsnprintf(c->err, c->errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
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
		return mf_bad(c, "'" BEE_MF_HOOKS "' is not an array");
	m->nhooks = json_array_size(a);
	m->hooks = calloc(m->nhooks + 1, sizeof(*m->hooks));
	if (!m->hooks)
		return -ENOMEM;
	for (size_t i = 0; i < m->nhooks; i++) {
		json_t *h = json_array_get(a, i);
		struct bee_mf_hook *k = &m->hooks[i];
		k->program = mf_str(h, BEE_MF_HOOK_PROGRAM);
		k->section = mf_str(h, BEE_MF_HOOK_SECTION);
		k->attach = mf_str(h, BEE_MF_HOOK_ATTACH);
		json_t *lsm = json_object_get(h, BEE_MF_HOOK_LSM);
		if (!k->program || !k->section || !k->attach || !json_is_boolean(lsm))
			return mf_bad(c, "hook %zu lacks program, section, attach or lsm", i);
		k->lsm = json_is_true(lsm);
	}
	return 0;
}

static int mf_maps(struct mf_ctx *c, json_t *a, struct bee_manifest *m)
{
	if (!json_is_array(a))
		return mf_bad(c, "'" BEE_MF_MAPS "' is not an array");
	m->nmaps = json_array_size(a);
	m->maps = calloc(m->nmaps + 1, sizeof(*m->maps));
	if (!m->maps)
		return -ENOMEM;
	for (size_t i = 0; i < m->nmaps; i++) {
		json_t *o = json_array_get(a, i);
		struct bee_mf_map *p = &m->maps[i];
		uint64_t ks, vs, me, fl;
		p->name = mf_str(o, BEE_MF_NAME);
		p->type = mf_str(o, BEE_MF_MAP_TYPE);
		p->fill = mf_str(o, BEE_MF_MAP_FILL);
		p->image = mf_str(o, BEE_MF_MAP_IMAGE);
		if (!p->name || !p->type || !p->fill || mf_uint(o, BEE_MF_MAP_KEY_SIZE, UINT32_MAX, &ks) ||
		    mf_uint(o, BEE_MF_MAP_VALUE_SIZE, UINT32_MAX, &vs) ||
		    mf_uint(o, BEE_MF_MAP_MAX_ENTRIES, UINT32_MAX, &me) || mf_uint(o, BEE_MF_MAP_FLAGS, UINT32_MAX, &fl))
			return mf_bad(c, "map %zu lacks name, type, fill, a size or flags", i);
		if (!p->image && !json_is_null(json_object_get(o, BEE_MF_MAP_IMAGE)))
			return mf_bad(c, "map '%s': '" BEE_MF_MAP_IMAGE "' is neither a name nor null", p->name);
		p->key_size = (uint32_t)ks;
		p->value_size = (uint32_t)vs;
		p->max_entries = (uint32_t)me;
		p->flags = (uint32_t)fl;
	}
	return 0;
}

/* "constants": the BPF object's .rodata globals by name, each a 32-bit
 * value (loader/bpf_load.c sets them). Absent is none: a pack whose
 * object has no such global needs none, and one whose object has them is
 * refused at load when one is missing. */
static int mf_consts(struct mf_ctx *c, json_t *o, struct bee_manifest *m)
{
	if (!o)
		return 0;
	if (!json_is_object(o))
		return mf_bad(c, "'" BEE_MF_CONSTANTS "' is not an object");
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

/* The rule's domain and kind by their ids (bee_names.h), or -1. */
static int mf_rule_kind(struct bee_mf_rule *r)
{
	static const struct { enum bee_domain d; const char *key; } kinds[BEE_RULE__COUNT] = {
#define MF_KIND(id, dom, key) [BEE_RULE_##id] = { BEE_DOMAIN_##dom, key },
		BEE_RULE_KINDS(MF_KIND)
#undef MF_KIND
	};
	static const char *const domains[BEE_DOMAIN__COUNT] = {
#define MF_DOMAIN(id, name) [BEE_DOMAIN_##id] = name,
		BEE_DOMAINS(MF_DOMAIN)
#undef MF_DOMAIN
	};
	for (int k = 0; k < BEE_RULE__COUNT; k++)
		if (strcmp(r->kind, kinds[k].key) == 0 && strcmp(r->domain, domains[kinds[k].d]) == 0) {
			r->rkind = (enum bee_rule_kind)k;
			r->rdomain = kinds[k].d;
			return 0;
		}
	return -1;
}

static int mf_rules(struct mf_ctx *c, json_t *a, struct bee_manifest *m)
{
	if (!json_is_array(a))
		return mf_bad(c, "'" BEE_MF_RULES "' is not an array");
	m->nrules = json_array_size(a);
	m->rules = calloc(m->nrules + 1, sizeof(*m->rules));
	if (!m->rules)
		return -ENOMEM;
	for (size_t i = 0; i < m->nrules; i++) {
		json_t *o = json_array_get(a, i);
		struct bee_mf_rule *r = &m->rules[i];
		uint64_t idx, line = 0, col = 0;
		r->domain = mf_str(o, BEE_MF_RULE_DOMAIN);
		r->kind = mf_str(o, BEE_MF_RULE_KIND);
		r->text = mf_str(o, BEE_MF_RULE_TEXT);
		r->value = mf_str(o, BEE_MF_RULE_VALUE);
		r->pinned = json_is_true(json_object_get(o, BEE_MF_RULE_PINNED));
		if (mf_uint(o, BEE_MF_RULE_INDEX, UINT32_MAX, &idx) || idx != i || !r->domain || !r->kind || !r->text)
			return mf_bad(c, "rule %zu lacks index, domain, kind or text", i);
		mf_uint(o, BEE_MF_RULE_LINE, UINT32_MAX, &line);
		mf_uint(o, BEE_MF_RULE_COLUMN, UINT32_MAX, &col);
		r->index = (unsigned)idx;
		r->line = (unsigned)line;
		r->column = (unsigned)col;
		if (mf_rule_kind(r) < 0)
			return mf_bad(c, "rule %zu: '%s.%s' is not a rule this reader knows", i, r->domain, r->kind);
		if (r->rkind == BEE_RULE_ENV_SET && !r->value)
			return mf_bad(c, "rule %zu: env.set without a value", i);
	}
	return 0;
}

static int mf_landlock(struct mf_ctx *c, json_t *o, struct bee_manifest *m)
{
	json_t *ex = json_object_get(o, BEE_MF_LL_EXPRESSIBLE);
	if (!json_is_object(o) || !json_is_boolean(ex))
		return mf_bad(c, "'" BEE_MF_LANDLOCK "' lacks '" BEE_MF_LL_EXPRESSIBLE "'");
	m->ll_expressible = json_is_true(ex);
	m->ll_rule = -1;
	if (!m->ll_expressible) {
		uint64_t r;
		m->ll_reason = mf_str(o, BEE_MF_LL_REASON);
		if (!m->ll_reason)
			return mf_bad(c, "'" BEE_MF_LANDLOCK "' is not expressible and gives no reason");
		if (mf_uint(o, BEE_MF_LL_RULE, UINT32_MAX, &r) == 0)
			m->ll_rule = (long)r;
		return 0;
	}
	json_t *a = json_object_get(o, BEE_MF_RULES);
	if (!json_is_array(a))
		return mf_bad(c, "'" BEE_MF_LANDLOCK "' is expressible but has no '" BEE_MF_RULES "'");
	m->nll = json_array_size(a);
	m->ll_rules = calloc(m->nll + 1, sizeof(*m->ll_rules));
	if (!m->ll_rules)
		return -ENOMEM;
	for (size_t i = 0; i < m->nll; i++) {
		json_t *r = json_array_get(a, i);
		struct bee_mf_ll_rule *l = &m->ll_rules[i];
		json_t *acc = json_object_get(r, BEE_MF_LL_ACCESS), *bn = json_object_get(r, BEE_MF_LL_BENEATH);
		uint64_t rule;
		l->path = mf_str(r, BEE_MF_LL_PATH);
		if (!l->path || l->path[0] != '/' || !json_is_boolean(bn) || !json_is_array(acc) ||
		    mf_uint(r, BEE_MF_LL_RULE, UINT32_MAX, &rule))
			return mf_bad(c, "landlock rule %zu lacks path, beneath, access or rule", i);
		l->beneath = json_is_true(bn);
		l->rule = (unsigned)rule;
		for (size_t j = 0; j < json_array_size(acc); j++) {
			const char *s = json_string_value(json_array_get(acc, j));
			if (s && strcmp(s, BEE_MF_LL_READ) == 0)
				l->perms |= BEE_PERM_READ;
			else if (s && strcmp(s, BEE_MF_LL_WRITE) == 0)
				l->perms |= BEE_PERM_WRITE;
			else if (s && strcmp(s, BEE_MF_LL_EXECUTE) == 0)
				l->perms |= BEE_PERM_EXEC;
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
		return mf_bad(c, "'" BEE_MF_SYSCALLS "' is not an array");
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

/* "automata": statistics only (beec show prints them); what is missing is 0. */
static void mf_automata(const json_t *o, struct bee_manifest *m)
{
	static const char *const keys[BEE_MF_NAUTOMATA] = {
#define MF_AUTOMATON_KEY(id, key, map) key,
		BEE_AUTOMATA(MF_AUTOMATON_KEY)
#undef MF_AUTOMATON_KEY
	};
	for (size_t i = 0; i < BEE_MF_NAUTOMATA; i++) {
		json_t *a = json_object_get(o, keys[i]);
		struct bee_mf_automaton *s = &m->automata[i];
		s->key = keys[i];
		mf_uint(a, BEE_MF_DFA_STATES, UINT64_MAX, &s->states);
		mf_uint(a, BEE_MF_DFA_CLASSES, UINT64_MAX, &s->classes);
		mf_uint(a, BEE_MF_DFA_TRANSITIONS, UINT64_MAX, &s->transitions);
		mf_uint(a, BEE_MF_DFA_IMAGE_BYTES, UINT64_MAX, &s->image_bytes);
	}
}

static int mf_parse(struct mf_ctx *c, const json_t *root, struct bee_manifest *m)
{
	json_t *j = (json_t *)root;
	const char *fmt = mf_str(j, BEE_MF_FORMAT);
	uint64_t schema;
	if (!fmt || strcmp(fmt, BEE_MF_FORMAT_VALUE) != 0)
		return mf_bad(c, "'" BEE_MF_FORMAT "' is not '" BEE_MF_FORMAT_VALUE "'");
	if (mf_uint(j, BEE_MF_SCHEMA, 1000, &schema) || schema != 1)
		return mf_bad(c, "'" BEE_MF_SCHEMA "' is not 1 (this loader reads 1)");
	m->schema = (unsigned)schema;
	m->parent = mf_str(j, BEE_MF_PARENT);
	json_t *cc = json_object_get(j, BEE_MF_COMPILER);
	m->compiler_beec = mf_str(cc, BEE_MF_COMPILER_BEEC);
	mf_automata(json_object_get(j, BEE_MF_AUTOMATA), m);
	m->name = mf_str(j, BEE_MF_NAME);
	m->source = mf_str(j, BEE_MF_SOURCE);
	m->source_name = mf_str(j, BEE_MF_SOURCE_NAME);
	const char *audit = mf_str(j, BEE_MF_AUDIT);
	if (!m->name || !m->source || !audit || mf_audit_mode(audit, &m->audit))
		return mf_bad(c, "'" BEE_MF_NAME "', '" BEE_MF_SOURCE "' or '" BEE_MF_AUDIT "' is missing or unknown");
	json_t *defs = json_object_get(j, BEE_MF_DEFINES);
	if (!json_is_array(defs))
		return mf_bad(c, "'" BEE_MF_DEFINES "' is not an array");
	m->ndefines = json_array_size(defs);
	m->defines = calloc(m->ndefines + 1, sizeof(*m->defines));
	if (!m->defines)
		return -ENOMEM;
	for (size_t i = 0; i < m->ndefines; i++) {
		m->defines[i] = json_string_value(json_array_get(defs, i));
		if (!m->defines[i] || !strchr(m->defines[i], '='))
			return mf_bad(c, "define %zu is not NAME=VALUE", i);
	}
	json_t *inc = json_object_get(j, BEE_MF_INCLUDES);
	if (inc && !json_is_array(inc))
		return mf_bad(c, "'" BEE_MF_INCLUDES "' is not an array");
	m->nincludes = json_array_size(inc);
	m->includes = calloc(m->nincludes + 1, sizeof(*m->includes));
	if (!m->includes)
		return -ENOMEM;
	for (size_t i = 0; i < m->nincludes; i++)
		if (!(m->includes[i] = json_string_value(json_array_get(inc, i))))
			return mf_bad(c, "include %zu is not a string", i);
	int err;
	if ((err = mf_hooks(c, json_object_get(j, BEE_MF_HOOKS), m)) < 0 ||
	    (err = mf_maps(c, json_object_get(j, BEE_MF_MAPS), m)) < 0 ||
	    (err = mf_consts(c, json_object_get(j, BEE_MF_CONSTANTS), m)) < 0 ||
	    (err = mf_rules(c, json_object_get(j, BEE_MF_RULES), m)) < 0 ||
	    (err = mf_landlock(c, json_object_get(j, BEE_MF_LANDLOCK), m)) < 0 ||
	    (err = mf_syscalls(c, json_object_get(j, BEE_MF_SYSCALLS), m)) < 0)
		return err;
	m->net_prov = json_object_get(j, BEE_MF_NET_PROVENANCE);
	if (!json_is_array(m->net_prov))
		return mf_bad(c, "'" BEE_MF_NET_PROVENANCE "' is not an array");
	return 0;
}

int bee_manifest_parse(const json_t *root, struct bee_manifest *m, char *err, size_t errlen)
{
	struct mf_ctx c = { .err = err, .errlen = errlen };
	memset(m, 0, sizeof(*m));
	if (err && errlen)
		err[0] = '\0';
	int r = json_is_object(root) ? mf_parse(&c, root, m) : mf_bad(&c, "not a JSON object");
	if (r == -ENOMEM && err && errlen)
		snprintf(err, errlen, "out of memory");
	if (r < 0)
		bee_manifest_fini(m);
	return r;
}

int bee_manifest_read(const struct bee_pack *pack, struct bee_manifest *m, char *err, size_t errlen)
{
	return bee_manifest_parse(bee_pack__manifest(pack), m, err, errlen);
}

void bee_manifest_fini(struct bee_manifest *m)
{
	free(m->image);
	free(m->defines);
	free(m->includes);
	free(m->hooks);
	free(m->maps);
	free(m->consts);
	free(m->rules);
	free(m->ll_rules);
	memset(m, 0, sizeof(*m));
}

/* ---- the image ------------------------------------------------------------------------ *
 *
 * A header, then every field in the order of struct bee_manifest, each
 * array as its count then its elements: numbers as native 32- and 64-bit
 * words, strings as a 32-bit length (MF_NULL for none) and the bytes with
 * a NUL. The thaw walks it with a bound on every read; its arrays are
 * calloc'ed as the parse makes them, its strings point into the image. */

#define MF_IMG_MAGIC   0x474d4d4645454201ull   /* "\1BEEFMMG" */
#define MF_IMG_VERSION 1u
#define MF_NULL        UINT32_MAX

struct mf_img_head {
	uint64_t magic;
	uint32_t version, reserved;
	uint8_t key[16];
	uint64_t body_len, body_xxh3;
};

/* every field of struct bee_manifest is written below: one added there
 * fails here until it is */
_Static_assert(sizeof(struct bee_manifest) == 336, "struct bee_manifest changed: update the image");

struct mf_out {
	uint8_t *buf;
	size_t len, cap;
	bool oom;
};

static void out_put(struct mf_out *o, const void *p, size_t n)
{
	if (o->oom)
		return;
	if (o->len + n > o->cap) {
		size_t cap = o->cap ? o->cap * 2 : 4096;
		while (cap < o->len + n)
			cap *= 2;
		uint8_t *b = realloc(o->buf, cap);
		if (!b) {
			o->oom = true;
			return;
		}
		o->buf = b;
		o->cap = cap;
	}
	memcpy(o->buf + o->len, p, n);
	o->len += n;
}

static void out_u32(struct mf_out *o, uint32_t v)
{
	out_put(o, &v, sizeof(v));
}

static void out_u64(struct mf_out *o, uint64_t v)
{
	out_put(o, &v, sizeof(v));
}

static void out_str(struct mf_out *o, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	if (s && n >= MF_NULL) {
		o->oom = true;   /* no manifest string is 4 GiB long */
		return;
	}
	out_u32(o, s ? (uint32_t)n : MF_NULL);
	if (s)
		out_put(o, s, n + 1);
}

int bee_manifest_freeze(const struct bee_manifest *m, const uint8_t key[16], void **out, size_t *len)
{
	struct mf_out o = { 0 };
	struct mf_img_head h = { .magic = MF_IMG_MAGIC, .version = MF_IMG_VERSION };
	*out = NULL;
	*len = 0;
	memcpy(h.key, key, sizeof(h.key));
	out_put(&o, &h, sizeof(h));
	out_str(&o, m->name);
	out_u32(&o, m->schema);
	out_str(&o, m->parent);
	out_u64(&o, m->nincludes);
	for (size_t i = 0; i < m->nincludes; i++)
		out_str(&o, m->includes[i]);
	out_u32(&o, m->audit);
	out_u64(&o, m->ndefines);
	for (size_t i = 0; i < m->ndefines; i++)
		out_str(&o, m->defines[i]);
	out_str(&o, m->source);
	out_str(&o, m->source_name);
	out_str(&o, m->compiler_beec);
	out_u64(&o, m->nhooks);
	for (size_t i = 0; i < m->nhooks; i++) {
		const struct bee_mf_hook *k = &m->hooks[i];
		out_str(&o, k->program);
		out_str(&o, k->section);
		out_str(&o, k->attach);
		out_u32(&o, k->lsm);
	}
	out_u64(&o, m->nmaps);
	for (size_t i = 0; i < m->nmaps; i++) {
		const struct bee_mf_map *p = &m->maps[i];
		out_str(&o, p->name);
		out_str(&o, p->type);
		out_str(&o, p->fill);
		out_str(&o, p->image);
		out_u32(&o, p->key_size);
		out_u32(&o, p->value_size);
		out_u32(&o, p->max_entries);
		out_u32(&o, p->flags);
	}
	out_u64(&o, m->nconsts);
	for (size_t i = 0; i < m->nconsts; i++) {
		out_str(&o, m->consts[i].name);
		out_u32(&o, m->consts[i].value);
	}
	out_u64(&o, m->nrules);
	for (size_t i = 0; i < m->nrules; i++) {
		const struct bee_mf_rule *r = &m->rules[i];
		out_u32(&o, r->index);
		out_str(&o, r->domain);
		out_str(&o, r->kind);
		out_str(&o, r->text);
		out_u32(&o, r->rdomain);
		out_u32(&o, r->rkind);
		out_str(&o, r->value);
		out_u32(&o, r->pinned);
		out_u32(&o, r->line);
		out_u32(&o, r->column);
	}
	for (size_t i = 0; i < BEE_MF_NAUTOMATA; i++) {
		const struct bee_mf_automaton *a = &m->automata[i];
		out_u64(&o, a->states);
		out_u64(&o, a->classes);
		out_u64(&o, a->transitions);
		out_u64(&o, a->image_bytes);
	}
	out_u32(&o, m->ll_expressible);
	out_str(&o, m->ll_reason);
	out_u64(&o, (uint64_t)m->ll_rule);
	out_u64(&o, m->nll);
	for (size_t i = 0; i < m->nll; i++) {
		const struct bee_mf_ll_rule *l = &m->ll_rules[i];
		out_str(&o, l->path);
		out_u32(&o, l->beneath);
		out_u32(&o, l->perms);
		out_u32(&o, l->rule);
	}
	out_u32(&o, m->syscalls_allowed);
	if (o.oom) {
		free(o.buf);
		return -ENOMEM;
	}
	struct mf_img_head *hp = (struct mf_img_head *)o.buf;
	hp->body_len = o.len - sizeof(h);
	hp->body_xxh3 = XXH3_64bits(o.buf + sizeof(h), o.len - sizeof(h));
	*out = o.buf;
	*len = o.len;
	return 0;
}

struct mf_in {
	char *p, *end;
	bool bad, oom;   /* oom: bad for want of memory */
};

static uint32_t in_u32(struct mf_in *in)
{
	uint32_t v = 0;
	if (in->bad || (size_t)(in->end - in->p) < sizeof(v)) {
		in->bad = true;
		return 0;
	}
	memcpy(&v, in->p, sizeof(v));
	in->p += sizeof(v);
	return v;
}

static uint64_t in_u64(struct mf_in *in)
{
	uint64_t v = 0;
	if (in->bad || (size_t)(in->end - in->p) < sizeof(v)) {
		in->bad = true;
		return 0;
	}
	memcpy(&v, in->p, sizeof(v));
	in->p += sizeof(v);
	return v;
}

/* A string (NULL for none): its bytes and NUL inside the image. */
static const char *in_str(struct mf_in *in)
{
	uint32_t n = in_u32(in);
	if (in->bad || n == MF_NULL)
		return NULL;
	if ((size_t)(in->end - in->p) <= n || in->p[n] != '\0' || memchr(in->p, '\0', n)) {
		in->bad = true;
		return NULL;
	}
	const char *s = in->p;
	in->p += n + 1;
	return s;
}

/* A string that must be there. */
static const char *in_need(struct mf_in *in)
{
	const char *s = in_str(in);
	if (!s)
		in->bad = true;
	return s;
}

/* An array of n elements of size each (n itself read here): calloc'ed
 * with one more, as the parse does; each element takes at least min
 * bytes of the image, which bounds n before anything is allocated. */
static void *in_array(struct mf_in *in, size_t *n, size_t size, size_t min)
{
	uint64_t k = in_u64(in);
	if (in->bad || k > (uint64_t)(in->end - in->p) / min) {
		in->bad = true;
		*n = 0;
		return NULL;
	}
	*n = (size_t)k;
	void *a = calloc(*n + 1, size);
	if (!a)
		in->bad = in->oom = true;
	return a;
}

int bee_manifest_thaw(void *img, size_t len, const uint8_t key[16], struct bee_manifest *m)
{
	struct mf_img_head h;
	memset(m, 0, sizeof(*m));
	if (len < sizeof(h))
		return -EINVAL;
	memcpy(&h, img, sizeof(h));
	if (h.magic != MF_IMG_MAGIC || h.version != MF_IMG_VERSION || h.reserved || memcmp(h.key, key, sizeof(h.key)) ||
	    h.body_len != len - sizeof(h) || h.body_xxh3 != XXH3_64bits((char *)img + sizeof(h), len - sizeof(h)))
		return -EINVAL;
	struct mf_in in = { .p = (char *)img + sizeof(h), .end = (char *)img + len };
	m->name = in_need(&in);
	m->schema = in_u32(&in);
	m->parent = in_str(&in);
	if ((m->includes = in_array(&in, &m->nincludes, sizeof(*m->includes), 4)))
		for (size_t i = 0; i < m->nincludes; i++)
			m->includes[i] = in_need(&in);
	m->audit = in_u32(&in);
	if ((m->defines = in_array(&in, &m->ndefines, sizeof(*m->defines), 4)))
		for (size_t i = 0; i < m->ndefines; i++)
			m->defines[i] = in_need(&in);
	m->source = in_need(&in);
	m->source_name = in_str(&in);
	m->compiler_beec = in_str(&in);
	if ((m->hooks = in_array(&in, &m->nhooks, sizeof(*m->hooks), 16)))
		for (size_t i = 0; i < m->nhooks; i++) {
			struct bee_mf_hook *k = &m->hooks[i];
			k->program = in_need(&in);
			k->section = in_need(&in);
			k->attach = in_need(&in);
			k->lsm = in_u32(&in) != 0;
		}
	if ((m->maps = in_array(&in, &m->nmaps, sizeof(*m->maps), 32)))
		for (size_t i = 0; i < m->nmaps; i++) {
			struct bee_mf_map *p = &m->maps[i];
			p->name = in_need(&in);
			p->type = in_need(&in);
			p->fill = in_need(&in);
			p->image = in_str(&in);
			p->key_size = in_u32(&in);
			p->value_size = in_u32(&in);
			p->max_entries = in_u32(&in);
			p->flags = in_u32(&in);
		}
	if ((m->consts = in_array(&in, &m->nconsts, sizeof(*m->consts), 8)))
		for (size_t i = 0; i < m->nconsts; i++) {
			m->consts[i].name = in_need(&in);
			m->consts[i].value = in_u32(&in);
		}
	if ((m->rules = in_array(&in, &m->nrules, sizeof(*m->rules), 40)))
		for (size_t i = 0; i < m->nrules; i++) {
			struct bee_mf_rule *r = &m->rules[i];
			r->index = in_u32(&in);
			r->domain = in_need(&in);
			r->kind = in_need(&in);
			r->text = in_need(&in);
			uint32_t d = in_u32(&in), k = in_u32(&in);
			r->value = in_str(&in);
			r->pinned = in_u32(&in) != 0;
			r->line = in_u32(&in);
			r->column = in_u32(&in);
			if (r->index != i || d >= BEE_DOMAIN__COUNT || k >= BEE_RULE__COUNT)
				in.bad = true;
			r->rdomain = (enum bee_domain)d;
			r->rkind = (enum bee_rule_kind)k;
		}
	static const char *const keys[BEE_MF_NAUTOMATA] = {
#define MF_AUTOMATON_KEY(id, key, map) key,
		BEE_AUTOMATA(MF_AUTOMATON_KEY)
#undef MF_AUTOMATON_KEY
	};
	for (size_t i = 0; i < BEE_MF_NAUTOMATA; i++) {
		struct bee_mf_automaton *a = &m->automata[i];
		a->key = keys[i];
		a->states = in_u64(&in);
		a->classes = in_u64(&in);
		a->transitions = in_u64(&in);
		a->image_bytes = in_u64(&in);
	}
	m->ll_expressible = in_u32(&in) != 0;
	m->ll_reason = in_str(&in);
	m->ll_rule = (long)in_u64(&in);
	if ((m->ll_rules = in_array(&in, &m->nll, sizeof(*m->ll_rules), 16)))
		for (size_t i = 0; i < m->nll; i++) {
			struct bee_mf_ll_rule *l = &m->ll_rules[i];
			l->path = in_need(&in);
			l->beneath = in_u32(&in) != 0;
			l->perms = in_u32(&in);
			l->rule = in_u32(&in);
		}
	m->syscalls_allowed = in_u32(&in);
	if (in.bad || in.p != in.end) {
		bee_manifest_fini(m);
		return in.oom ? -ENOMEM : -EINVAL;
	}
	m->image = img;
	return 0;
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

const struct bee_mf_hook *bee_manifest_hook(const struct bee_manifest *m, const char *program)
{
	for (size_t i = 0; i < m->nhooks; i++)
		if (strcmp(m->hooks[i].program, program) == 0)
			return &m->hooks[i];
	return NULL;
}

const struct bee_mf_const *bee_manifest_const(const struct bee_manifest *m, const char *name)
{
	for (size_t i = 0; i < m->nconsts; i++)
		if (strcmp(m->consts[i].name, name) == 0)
			return &m->consts[i];
	return NULL;
}

bool bee_manifest_pins(const struct bee_manifest *m)
{
	for (size_t i = 0; i < m->nrules; i++)
		if (m->rules[i].pinned)
			return true;
	return false;
}

void bee_rule_format(const struct bee_mf_rule *r, char *buf, size_t size)
{
	if (r->value)
		snprintf(buf, size, "%s.%s %s=\"%s\"", r->domain, r->kind, r->text, r->value);
	else
		snprintf(buf, size, "%s.%s %s%s", r->domain, r->kind, r->pinned ? "!" : "", r->text);
}
