/* SPDX-License-Identifier: GPL-2.0-only */
/* pack_build.c: manifest, images, ELF and source into one .bpfpack. */
#include "pack_build.h"
#include "mem.h"
#include "image.h"
#include "landlock.h"
#include "libbeec.h"
#include "netset.h"
#include "pack_write.h"

#include <errno.h>
#include <stdbool.h>
#include "jsonx.h"
#include <stdlib.h>
#include <string.h>

static int define_cmp(const void *a, const void *b)
{
	const char *x = *(const char *const *)a, *y = *(const char *const *)b;
	size_t nx = strcspn(x, "="), ny = strcspn(y, "=");
	int c = strncmp(x, y, nx < ny ? nx : ny);
	return c ? c : (nx > ny) - (nx < ny);
}

/* NAME=VALUE by name, the last -D of a name winning as in the schema, so
 * the order of -D options does not change the pack. */
static json_t *manifest_defines(const struct pack_build_opts *o)
{
	json_t *out = jx(json_array());
	size_t n = o ? o->ndefines : 0;
	const char **v = xcalloc(n + 1, sizeof(*v));
	size_t kept = 0;
	for (size_t i = 0; i < n; i++) {
		size_t len = strcspn(o->defines[i], "=");
		bool later = false;
		for (size_t j = i + 1; j < n && !later; j++)
			later = strncmp(o->defines[j], o->defines[i], len + 1) == 0;
		if (!later)
			v[kept++] = o->defines[i];
	}
	qsort(v, kept, sizeof(*v), define_cmp);
	for (size_t i = 0; i < kept; i++)
		jx_push(out, json_string(v[i]));
	free(v);
	return out;
}

static json_t *manifest_rules(const struct ir_policy *ir)
{
	json_t *rules = jx(json_array());
	for (size_t i = 0; i < ir->nrules; i++) {
		const struct ir_rule *r = &ir->rules[i];
		unsigned line = 0, col = 0;
		if (r->loc.src)
			loc_linecol(r->loc, &line, &col);
		json_t *o = jx(json_object());
		jx_set(o, "index", json_integer(r->index));
		jx_set(o, "domain", json_string(ir_domain_name(ir_rule_kind_domain(r->kind))));
		jx_set(o, "kind", json_string(ir_rule_kind_key(r->kind)));
		if (r->kind == IR_RULE_NET_CONNECT || r->kind == IR_RULE_NET_BIND || r->kind == IR_RULE_NET_DENY) {
			char buf[IR_NET_STRLEN];
			ir_net_format(&r->net, buf);
			jx_set(o, "text", json_string(buf));
		} else {
			jx_set(o, "text", json_string(r->text));
		}
		if (r->kind == IR_RULE_EXEC_ALLOW && r->exec.pinned)
			jx_set(o, "pinned", json_true());
		if (r->kind == IR_RULE_ENV_SET)
			jx_set(o, "value", json_string(r->env_set.value));
		jx_set(o, "line", json_integer(line));
		jx_set(o, "column", json_integer(col));
		jx_push(rules, o);
	}
	return rules;
}

static json_t *manifest_landlock(const struct lowered *lw)
{
	struct landlock_plan plan;
	landlock_plan_build(lw, &plan);
	json_t *o = jx(json_object());
	jx_set(o, "expressible", json_boolean(plan.expressible));
	if (!plan.expressible) {
		jx_set(o, "reason", json_string(plan.reason));
		if (plan.culprit)
			jx_set(o, "rule", json_integer(plan.culprit->index));
	} else {
		json_t *rules = jx(json_array());
		for (size_t i = 0; i < plan.n; i++) {
			json_t *r = jx(json_object());
			jx_set(r, "path", json_string(plan.rules[i].path));
			jx_set(r, "beneath", json_boolean(plan.rules[i].beneath));
			json_t *acc = jx(json_array());
			if (plan.rules[i].perms & IR_PERM_READ)
				jx_push(acc, json_string("read"));
			if (plan.rules[i].perms & IR_PERM_WRITE)
				jx_push(acc, json_string("write"));
			if (plan.rules[i].perms & IR_PERM_EXEC)
				jx_push(acc, json_string("execute"));
			jx_set(r, "access", acc);
			jx_set(r, "rule", json_integer(plan.rules[i].rule));
			jx_push(rules, r);
		}
		jx_set(o, "rules", rules);
	}
	landlock_plan_fini(&plan);
	return o;
}

static json_t *manifest_automaton(const struct dfa *d, size_t image_len)
{
	struct dfa_stats st;
	dfa_stats_get(d, &st);
	json_t *o = jx(json_object());
	jx_set(o, "states", json_integer(st.states));
	jx_set(o, "classes", json_integer(st.classes));
	jx_set(o, "transitions", json_integer(st.transitions));
	jx_set(o, "image_bytes", json_integer((json_int_t)image_len));
	return o;
}

/* The image section that fills a map, by the map's fill. */
static const char *fill_section(enum codegen_map_fill f)
{
	switch (f) {
	case CODEGEN_FILL_IMAGE_FS:
		return "bee_fs";
	case CODEGEN_FILL_IMAGE_EXEC:
		return "bee_exec";
	case CODEGEN_FILL_IMAGE_NET4:
		return "bee_net4";
	case CODEGEN_FILL_IMAGE_NET6:
		return "bee_net6";
	case CODEGEN_FILL_LOADER:
	case CODEGEN_FILL_PROGRAM:
	case CODEGEN_FILL_AUDIT:
		return NULL;
	}
	return NULL;
}

/* LPM records: each key followed by its value, as the loader inserts them. */
static uint8_t *net_records(const void *keys, size_t ksz, const struct bee_net_value *vals, size_t n,
			    size_t *len)
{
	size_t w = ksz + sizeof(*vals);
	uint8_t *buf = xmalloc(n * w + 1);
	for (size_t i = 0; i < n; i++) {
		memcpy(buf + i * w, (const uint8_t *)keys + i * ksz, ksz);
		memcpy(buf + i * w + ksz, &vals[i], sizeof(*vals));
	}
	*len = n * w;
	return buf;
}

static int writer_add(struct pack_writer *w, enum bee_pack_kind kind, const char *name, uint32_t width,
		      uint64_t count, const void *data, uint64_t size, struct diag_ctx *dc)
{
	int err = pack_writer_add(w, kind, name, width, count, data, size);
	if (err < 0)
		diag_error(dc, LOC_NONE, "%s", pack_writer_error(w));
	return err;
}

static int pack_build_body(const struct lowered *lw, const struct source *src, const struct pack_build_opts *o,
	       struct diag_ctx *dc, uint8_t **buf, size_t *len)
{
	struct codegen_result cg;
	int err = codegen_build(lw, o ? o->codegen : NULL, dc, &cg);
	if (err < 0)
		return err;

	struct pack_writer w;
	pack_writer_init(&w);
	json_t *m = jx(json_object());
	jx_set(m, "format", json_string("bee-pack-manifest"));
	jx_set(m, "schema", json_integer(IR_SCHEMA_VERSION));
	jx_set(m, "name", json_string(lw->ir->name));
	jx_set(m, "parent", lw->ir->parent ? json_string(lw->ir->parent) : json_null());
	jx_set(m, "audit", json_string(ir_audit_mode_name(lw->ir->audit)));
	/* the system call groups allowed, in table order; absent when none, so
	 * that packs of policies without [syscalls] keep their bytes */
	if (lw->ir->syscalls) {
		json_t *sys = jx(json_array());
		for (unsigned g = 0; g < BEE_SYSCALLS_COUNT; g++)
			if (lw->ir->syscalls & (1u << g))
				jx_push(sys, json_string(bee_syscall_groups[g].name));
		jx_set(m, "syscalls", sys);
	}
	jx_set(m, "source", json_string("policy.toml"));
	/* the base name only: how the path was spelt must not change the bytes */
	const char *base = strrchr(src->name, '/');
	jx_set(m, "source_name", json_string(base ? base + 1 : src->name));
	jx_set(m, "defines", manifest_defines(o));

	/* beec's version alone: the BPF object is the one this beec embeds */
	json_t *compiler = jx(json_object());
	jx_set(compiler, "beec", json_string(BEEC_VERSION));
	jx_set(m, "compiler", compiler);

	json_t *hooks = jx(json_array());
	for (size_t i = 0; i < cg.nprogs; i++) {
		json_t *h = jx(json_object());
		jx_set(h, "program", json_string(cg.progs[i].name));
		jx_set(h, "section", json_string(cg.progs[i].section));
		jx_set(h, "attach", json_string(cg.progs[i].attach));
		jx_set(h, "lsm", json_boolean(cg.progs[i].lsm));
		jx_push(hooks, h);
	}
	jx_set(m, "hooks", hooks);

	json_t *maps = jx(json_array());
	for (size_t i = 0; i < cg.nmaps; i++) {
		const struct codegen_map *cm = &cg.maps[i];
		json_t *mo = jx(json_object());
		jx_set(mo, "name", json_string(cm->name));
		jx_set(mo, "type", json_string(codegen_map_type_name(cm->type)));
		jx_set(mo, "key_size", json_integer(cm->key_size));
		jx_set(mo, "value_size", json_integer(cm->value_size));
		jx_set(mo, "max_entries", json_integer(cm->max_entries));
		jx_set(mo, "flags", json_integer(cm->flags));
		jx_set(mo, "fill", json_string(codegen_map_fill_name(cm->fill)));
		const char *sec = fill_section(cm->fill);
		jx_set(mo, "image", sec ? json_string(sec) : json_null());
		jx_push(maps, mo);
	}
	jx_set(m, "maps", maps);

	/* the object's .rodata globals the loader sets, by name */
	json_t *consts = jx(json_object());
	for (size_t i = 0; i < cg.nconsts; i++)
		jx_set(consts, cg.consts[i].name, json_integer(cg.consts[i].value));
	jx_set(m, "constants", consts);

	/* images */
	size_t fs_len, exec_len, env_len;
	struct bee_dfa_hdr *fs = image_dfa_write(lw->dfa[IR_DOMAIN_FS], &fs_len);
	struct bee_dfa_hdr *ex = image_dfa_write(lw->dfa[IR_DOMAIN_EXEC], &exec_len);
	struct bee_dfa_hdr *env = image_dfa_write(lw->dfa[IR_DOMAIN_ENV], &env_len);
	struct netset_image ni;
	/* exhausted in a nested entry: unwind to ours */
	if (!fs || !ex || !env || netset_image_build(lw->net, &ni) < 0)
		mem_raise(__func__);
	size_t n4_len, n6_len;
	uint8_t *n4 = net_records(ni.keys4, sizeof(*ni.keys4), ni.values4, ni.n4, &n4_len);
	uint8_t *n6 = net_records(ni.keys6, sizeof(*ni.keys6), ni.values6, ni.n6, &n6_len);

	json_t *automata = jx(json_object());
	jx_set(automata, "fs", manifest_automaton(lw->dfa[IR_DOMAIN_FS], fs_len));
	jx_set(automata, "exec", manifest_automaton(lw->dfa[IR_DOMAIN_EXEC], exec_len));
	jx_set(automata, "env", manifest_automaton(lw->dfa[IR_DOMAIN_ENV], env_len));
	jx_set(m, "automata", automata);

	/* which rules decided each network entry, for the audit log and revoke */
	json_t *netprov = jx(json_array());
	for (size_t i = 0; i < lw->net->nentries; i++) {
		const struct netset_entry *e = &lw->net->entries[i];
		json_t *r = jx(json_array());
		for (unsigned j = 0; j < e->nrules; j++)
			jx_push(r, json_integer(lw->net->rules[e->rules[j]].index));
		jx_push(netprov, r);
	}
	jx_set(m, "net_provenance", netprov);
	jx_set(m, "rules", manifest_rules(lw->ir));
	jx_set(m, "landlock", manifest_landlock(lw));

	char *mtext = jx_dumps(m, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(m);

	err = 0;
	size_t rec4 = sizeof(*ni.keys4) + sizeof(struct bee_net_value);
	size_t rec6 = sizeof(*ni.keys6) + sizeof(struct bee_net_value);
	if (writer_add(&w, BEE_PACK_MANIFEST, "manifest", 1, strlen(mtext), mtext, strlen(mtext), dc) < 0 ||
	    writer_add(&w, BEE_PACK_SOURCE, "policy.toml", 1, src->len, src->text, src->len, dc) < 0 ||
	    writer_add(&w, BEE_PACK_ELF, "bpf", 1, cg.elf_len, cg.elf, cg.elf_len, dc) < 0 ||
	    writer_add(&w, BEE_PACK_MAP_IMAGE, "bee_fs", (uint32_t)fs_len, 1, fs, fs_len, dc) < 0 ||
	    writer_add(&w, BEE_PACK_MAP_IMAGE, "bee_exec", (uint32_t)exec_len, 1, ex, exec_len, dc) < 0 ||
	    writer_add(&w, BEE_PACK_MAP_IMAGE, "bee_env", (uint32_t)env_len, 1, env, env_len, dc) < 0 ||
	    writer_add(&w, BEE_PACK_MAP_IMAGE, "bee_net4", (uint32_t)rec4, ni.n4, n4, n4_len, dc) < 0 ||
	    writer_add(&w, BEE_PACK_MAP_IMAGE, "bee_net6", (uint32_t)rec6, ni.n6, n6, n6_len, dc) < 0) {
		err = -EINVAL;
	} else if ((err = pack_writer_finish(&w, buf, len)) < 0) {
		diag_error(dc, LOC_NONE, "%s", pack_writer_error(&w));
	}
	free(mtext);
	free(fs);
	free(ex);
	free(env);
	free(n4);
	free(n6);
	netset_image_free(&ni);
	pack_writer_release(&w);
	codegen_result_fini(&cg);
	return err;
}

int pack_build(const struct lowered *lw, const struct source *src, const struct pack_build_opts *o,
	       struct diag_ctx *dc, uint8_t **buf, size_t *len)
{
	return MEM_PROTECT(-ENOMEM, pack_build_body(lw, src, o, dc, buf, len));
}
