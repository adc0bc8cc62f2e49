/* SPDX-License-Identifier: GPL-2.0-only */
/* manifest.c: the one reader of a pack's manifest (manifest.h). */
#include "manifest.h"

#include "bee_audit.h"
#include "bee_names.h"
#include "bee_syscalls.h"
#include "pack.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
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
 * A header, then the fields of struct bee_manifest as the tables below
 * list them (one list for both ways): its own, then each array as its
 * count and its elements, then the automata. Numbers are native 32- and
 * 64-bit words, strings a 32-bit length (MF_NULL for none) and the bytes
 * with a NUL. The thaw walks it with a bound on every read; its arrays
 * are calloc'ed as the parse makes them, its strings point into the
 * image. */

#define MF_IMG_MAGIC   0x474d4d4645454201ull   /* "\1BEEFMMG" */
#define MF_IMG_VERSION 1u
#define MF_NULL        UINT32_MAX

struct mf_img_head {
	uint64_t magic;
	uint32_t version, reserved;
	uint8_t key[16];
	uint64_t body_len, body_xxh3;
};

enum mf_kind {
	MF_STR,      /* const char *, NULL allowed */
	MF_NEED,     /* const char *, never NULL */
	MF_U32,      /* unsigned, uint32_t or an enum */
	MF_BOOL,
	MF_U64,
	MF_LONG,
};

struct mf_field {
	uint8_t kind;
	uint16_t off;
};

#define MF_F(kind, type, member) { kind, offsetof(type, member) }

static const struct mf_field mf_top[] = {
	MF_F(MF_NEED, struct bee_manifest, name), MF_F(MF_U32, struct bee_manifest, schema),
	MF_F(MF_STR, struct bee_manifest, parent), MF_F(MF_U32, struct bee_manifest, audit),
	MF_F(MF_NEED, struct bee_manifest, source), MF_F(MF_STR, struct bee_manifest, source_name),
	MF_F(MF_STR, struct bee_manifest, compiler_beec), MF_F(MF_BOOL, struct bee_manifest, ll_expressible),
	MF_F(MF_STR, struct bee_manifest, ll_reason), MF_F(MF_LONG, struct bee_manifest, ll_rule),
	MF_F(MF_U32, struct bee_manifest, syscalls_allowed),
};
static const struct mf_field mf_string[] = { { MF_NEED, 0 } };
static const struct mf_field mf_hook[] = {
	MF_F(MF_NEED, struct bee_mf_hook, program), MF_F(MF_NEED, struct bee_mf_hook, section),
	MF_F(MF_NEED, struct bee_mf_hook, attach), MF_F(MF_BOOL, struct bee_mf_hook, lsm),
};
static const struct mf_field mf_map[] = {
	MF_F(MF_NEED, struct bee_mf_map, name), MF_F(MF_NEED, struct bee_mf_map, type),
	MF_F(MF_NEED, struct bee_mf_map, fill), MF_F(MF_STR, struct bee_mf_map, image),
	MF_F(MF_U32, struct bee_mf_map, key_size), MF_F(MF_U32, struct bee_mf_map, value_size),
	MF_F(MF_U32, struct bee_mf_map, max_entries), MF_F(MF_U32, struct bee_mf_map, flags),
};
static const struct mf_field mf_const[] = {
	MF_F(MF_NEED, struct bee_mf_const, name), MF_F(MF_U32, struct bee_mf_const, value),
};
static const struct mf_field mf_rule[] = {
	MF_F(MF_U32, struct bee_mf_rule, index), MF_F(MF_NEED, struct bee_mf_rule, domain),
	MF_F(MF_NEED, struct bee_mf_rule, kind), MF_F(MF_NEED, struct bee_mf_rule, text),
	MF_F(MF_U32, struct bee_mf_rule, rdomain), MF_F(MF_U32, struct bee_mf_rule, rkind),
	MF_F(MF_STR, struct bee_mf_rule, value), MF_F(MF_BOOL, struct bee_mf_rule, pinned),
	MF_F(MF_U32, struct bee_mf_rule, line), MF_F(MF_U32, struct bee_mf_rule, column),
};
static const struct mf_field mf_ll_rule[] = {
	MF_F(MF_NEED, struct bee_mf_ll_rule, path), MF_F(MF_BOOL, struct bee_mf_ll_rule, beneath),
	MF_F(MF_U32, struct bee_mf_ll_rule, perms), MF_F(MF_U32, struct bee_mf_ll_rule, rule),
};
static const struct mf_field mf_automaton[] = {
	MF_F(MF_U64, struct bee_mf_automaton, states), MF_F(MF_U64, struct bee_mf_automaton, classes),
	MF_F(MF_U64, struct bee_mf_automaton, transitions), MF_F(MF_U64, struct bee_mf_automaton, image_bytes),
};

/* An array of struct bee_manifest: its pointer and count, and its element. */
struct mf_array {
	uint16_t ptr, count;
	size_t size;
	const struct mf_field *fields;
	size_t nfields;
};

#define MF_A(member, count, fields)                                                                                    \
	{ offsetof(struct bee_manifest, member), offsetof(struct bee_manifest, count),                                 \
	  sizeof(*((struct bee_manifest *)0)->member), fields, sizeof(fields) / sizeof(fields[0]) }

static const struct mf_array mf_arrays[] = {
	MF_A(includes, nincludes, mf_string), MF_A(defines, ndefines, mf_string), MF_A(hooks, nhooks, mf_hook),
	MF_A(maps, nmaps, mf_map), MF_A(consts, nconsts, mf_const), MF_A(rules, nrules, mf_rule),
	MF_A(ll_rules, nll, mf_ll_rule),
};

/* what MF_U32 reads and writes as 4 bytes: every field of that kind above */
_Static_assert(sizeof(unsigned) == 4 && sizeof(enum bee_domain) == 4 && sizeof(enum bee_rule_kind) == 4,
	       "MF_U32 fields are 4 bytes");
/* every field of struct bee_manifest is in the tables: one added there
 * fails here until it is */
_Static_assert(sizeof(struct bee_manifest) == 336, "struct bee_manifest changed: update the image's tables");

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

static void out_fields(struct mf_out *o, const void *base, const struct mf_field *f, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const char *at = (const char *)base + f[i].off;
		uint32_t w = 0;
		uint64_t q = 0;
		const char *str;
		switch (f[i].kind) {
		case MF_STR:
		case MF_NEED:
			memcpy(&str, at, sizeof(str));
			q = str ? strlen(str) : 0;
			if (q >= MF_NULL)
				o->oom = true;   /* no manifest string is 4 GiB long */
			w = str ? (uint32_t)q : MF_NULL;
			out_put(o, &w, sizeof(w));
			if (str)
				out_put(o, str, q + 1);
			break;
		case MF_U32:
			memcpy(&w, at, sizeof(w));
			out_put(o, &w, sizeof(w));
			break;
		case MF_BOOL:
			w = *(const bool *)at;
			out_put(o, &w, sizeof(w));
			break;
		case MF_U64:
			memcpy(&q, at, sizeof(q));
			out_put(o, &q, sizeof(q));
			break;
		case MF_LONG: {
			long l;
			memcpy(&l, at, sizeof(l));
			q = (uint64_t)l;
			out_put(o, &q, sizeof(q));
			break;
		}
		}
	}
}

int bee_manifest_freeze(const struct bee_manifest *m, const uint8_t key[16], void **out, size_t *len)
{
	struct mf_out o = { 0 };
	struct mf_img_head h = { .magic = MF_IMG_MAGIC, .version = MF_IMG_VERSION };
	*out = NULL;
	*len = 0;
	memcpy(h.key, key, sizeof(h.key));
	out_put(&o, &h, sizeof(h));
	out_fields(&o, m, mf_top, sizeof(mf_top) / sizeof(mf_top[0]));
	for (size_t a = 0; a < sizeof(mf_arrays) / sizeof(mf_arrays[0]); a++) {
		const struct mf_array *ar = &mf_arrays[a];
		const char *v;
		size_t k;
		memcpy(&v, (const char *)m + ar->ptr, sizeof(v));
		memcpy(&k, (const char *)m + ar->count, sizeof(k));
		uint64_t n = k;
		out_put(&o, &n, sizeof(n));
		for (uint64_t i = 0; i < n; i++)
			out_fields(&o, v + i * ar->size, ar->fields, ar->nfields);
	}
	for (size_t i = 0; i < BEE_MF_NAUTOMATA; i++)
		out_fields(&o, &m->automata[i], mf_automaton, sizeof(mf_automaton) / sizeof(mf_automaton[0]));
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

static bool in_get(struct mf_in *in, void *v, size_t n)
{
	if (in->bad || (size_t)(in->end - in->p) < n) {
		in->bad = true;
		return false;
	}
	memcpy(v, in->p, n);
	in->p += n;
	return true;
}

/* A string (NULL for none): its bytes and NUL inside the image. */
static const char *in_str(struct mf_in *in)
{
	uint32_t n;
	if (!in_get(in, &n, sizeof(n)) || n == MF_NULL)
		return NULL;
	if ((size_t)(in->end - in->p) <= n || in->p[n] != '\0' || memchr(in->p, '\0', n)) {
		in->bad = true;
		return NULL;
	}
	const char *s = in->p;
	in->p += n + 1;
	return s;
}

static void in_fields(struct mf_in *in, void *base, const struct mf_field *f, size_t n)
{
	for (size_t i = 0; i < n && !in->bad; i++) {
		char *at = (char *)base + f[i].off;
		uint32_t w = 0;
		uint64_t q = 0;
		const char *str;
		switch (f[i].kind) {
		case MF_STR:
		case MF_NEED:
			str = in_str(in);
			if (!str && f[i].kind == MF_NEED)
				in->bad = true;
			memcpy(at, &str, sizeof(str));
			break;
		case MF_U32:
			in_get(in, &w, sizeof(w));
			memcpy(at, &w, sizeof(w));
			break;
		case MF_BOOL:
			in_get(in, &w, sizeof(w));
			*(bool *)at = w != 0;
			break;
		case MF_U64:
			in_get(in, &q, sizeof(q));
			memcpy(at, &q, sizeof(q));
			break;
		case MF_LONG: {
			in_get(in, &q, sizeof(q));
			long l = (long)q;
			memcpy(at, &l, sizeof(l));
			break;
		}
		}
	}
}

/* The least an element of fields takes in the image: a bound on a count
 * before anything is allocated for it. */
static size_t min_bytes(const struct mf_field *f, size_t n)
{
	size_t b = 0;
	for (size_t i = 0; i < n; i++)
		b += f[i].kind == MF_U64 || f[i].kind == MF_LONG ? 8 : 4;
	return b;
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
	in_fields(&in, m, mf_top, sizeof(mf_top) / sizeof(mf_top[0]));
	for (size_t a = 0; a < sizeof(mf_arrays) / sizeof(mf_arrays[0]) && !in.bad; a++) {
		const struct mf_array *ar = &mf_arrays[a];
		uint64_t n = 0;
		in_get(&in, &n, sizeof(n));
		if (in.bad || n > (uint64_t)(in.end - in.p) / min_bytes(ar->fields, ar->nfields)) {
			in.bad = true;
			break;
		}
		size_t k = (size_t)n;
		char *v = calloc(k + 1, ar->size);
		if (!v) {
			in.bad = in.oom = true;
			break;
		}
		memcpy((char *)m + ar->ptr, &v, sizeof(v));
		memcpy((char *)m + ar->count, &k, sizeof(k));
		for (size_t i = 0; i < k; i++)
			in_fields(&in, v + i * ar->size, ar->fields, ar->nfields);
	}
	static const char *const keys[BEE_MF_NAUTOMATA] = {
#define MF_AUTOMATON_KEY(id, key, map) key,
		BEE_AUTOMATA(MF_AUTOMATON_KEY)
#undef MF_AUTOMATON_KEY
	};
	for (size_t i = 0; i < BEE_MF_NAUTOMATA; i++) {
		m->automata[i].key = keys[i];
		in_fields(&in, &m->automata[i], mf_automaton, sizeof(mf_automaton) / sizeof(mf_automaton[0]));
	}
	/* what the parse proves of the rules, proved again */
	for (size_t i = 0; i < m->nrules && !in.bad; i++)
		if (m->rules[i].index != i || m->rules[i].rdomain >= BEE_DOMAIN__COUNT ||
		    m->rules[i].rkind >= BEE_RULE__COUNT)
			in.bad = true;
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
