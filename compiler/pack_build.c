/* SPDX-License-Identifier: GPL-2.0-only */
/* pack_build.c: manifest, images, ELF and source into one .bpfpack. */
#include "pack_build.h"
#include "mem.h"
#include "bee_hosts.h"
#include "bee_names.h"
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
		jx_set(o, BEE_MF_RULE_INDEX, json_integer(r->index));
		jx_set(o, BEE_MF_RULE_DOMAIN, json_string(ir_domain_name(ir_rule_kind_domain(r->kind))));
		jx_set(o, BEE_MF_RULE_KIND, json_string(ir_rule_kind_key(r->kind)));
		if (r->kind == IR_RULE_NET_CONNECT || r->kind == IR_RULE_NET_BIND || r->kind == IR_RULE_NET_DENY) {
			char buf[IR_NET_STRLEN];
			ir_net_format(&r->net, buf);
			jx_set(o, BEE_MF_RULE_TEXT, json_string(buf));
		} else if (r->kind == IR_RULE_NET_HOST) {
			char buf[IR_HOST_STRLEN];
			ir_host_format(&r->host, buf);
			jx_set(o, BEE_MF_RULE_TEXT, json_string(buf));
		} else {
			jx_set(o, BEE_MF_RULE_TEXT, json_string(r->text));
		}
		if (r->kind == IR_RULE_EXEC_ALLOW && r->exec.pinned)
			jx_set(o, BEE_MF_RULE_PINNED, json_true());
		if (r->kind == IR_RULE_ENV_SET)
			jx_set(o, BEE_MF_RULE_VALUE, json_string(r->env_set.value));
		jx_set(o, BEE_MF_RULE_LINE, json_integer(line));
		jx_set(o, BEE_MF_RULE_COLUMN, json_integer(col));
		jx_push(rules, o);
	}
	return rules;
}

static json_t *manifest_landlock(const struct lowered *lw)
{
	struct landlock_plan plan;
	landlock_plan_build(lw, &plan);
	json_t *o = jx(json_object());
	jx_set(o, BEE_MF_LL_EXPRESSIBLE, json_boolean(plan.expressible));
	if (!plan.expressible) {
		jx_set(o, BEE_MF_LL_REASON, json_string(plan.reason));
		if (plan.culprit)
			jx_set(o, BEE_MF_LL_RULE, json_integer(plan.culprit->index));
	} else {
		json_t *rules = jx(json_array());
		for (size_t i = 0; i < plan.n; i++) {
			json_t *r = jx(json_object());
			jx_set(r, BEE_MF_LL_PATH, json_string(plan.rules[i].path));
			jx_set(r, BEE_MF_LL_BENEATH, json_boolean(plan.rules[i].beneath));
			json_t *acc = jx(json_array());
			if (plan.rules[i].perms & IR_PERM_READ)
				jx_push(acc, json_string(BEE_MF_LL_READ));
			if (plan.rules[i].perms & IR_PERM_WRITE)
				jx_push(acc, json_string(BEE_MF_LL_WRITE));
			if (plan.rules[i].perms & IR_PERM_EXEC)
				jx_push(acc, json_string(BEE_MF_LL_EXECUTE));
			jx_set(r, BEE_MF_LL_ACCESS, acc);
			jx_set(r, BEE_MF_LL_RULE, json_integer(plan.rules[i].rule));
			jx_push(rules, r);
		}
		jx_set(o, BEE_MF_RULES, rules);
	}
	landlock_plan_fini(&plan);
	return o;
}

static json_t *manifest_automaton(const struct dfa *d, size_t image_len)
{
	struct dfa_stats st;
	dfa_stats_get(d, &st);
	json_t *o = jx(json_object());
	jx_set(o, BEE_MF_DFA_STATES, json_integer(st.states));
	jx_set(o, BEE_MF_DFA_CLASSES, json_integer(st.classes));
	jx_set(o, BEE_MF_DFA_TRANSITIONS, json_integer(st.transitions));
	jx_set(o, BEE_MF_DFA_IMAGE_BYTES, json_integer((json_int_t)image_len));
	return o;
}

/* The bee_hosts image (runtime/bee_hosts.h): the host names, then every
 * [net] deny, which the stub takes out of what a name admits. A policy
 * without names has no such section. */
static struct bee_host_rec *hosts_image(const struct lowered *lw, size_t *n)
{
	const struct ir_policy *ir = lw->ir;
	struct bee_host_rec *recs = xcalloc(lw->nhosts + ir->nrules + 1, sizeof(*recs));
	size_t k = 0;
	for (size_t i = 0; i < lw->nhosts; i++) {
		const struct ir_rule *r = lw->hosts[i];
		struct bee_host_rec *h = &recs[k++];
		h->kind = BEE_HOST_NAME;
		h->proto = (uint8_t)r->host.proto;
		h->port_lo = r->host.port_lo;
		h->port_hi = r->host.port_hi;
		h->rule = r->index;
		snprintf(h->name, sizeof(h->name), "%s", r->host.name);
	}
	for (size_t i = 0; i < ir->nrules && lw->nhosts; i++) {
		const struct ir_rule *r = &ir->rules[i];
		if (r->kind != IR_RULE_NET_DENY)
			continue;
		struct bee_host_rec *h = &recs[k++];
		h->kind = BEE_HOST_DENY;
		h->proto = (uint8_t)r->net.proto;
		h->family = (uint8_t)r->net.family;
		h->prefix = r->net.prefix;
		h->port_lo = r->net.port_lo;
		h->port_hi = r->net.port_hi;
		h->rule = r->index;
		memcpy(h->addr, r->net.addr, sizeof(h->addr));
	}
	*n = k;
	return recs;
}

/* The image section that fills a map, by the map's fill. */
static const char *fill_section(enum codegen_map_fill f)
{
	switch (f) {
	case CODEGEN_FILL_IMAGE_FS:
		return bee_map_name(BEE_MAP_FS);
	case CODEGEN_FILL_IMAGE_EXEC:
		return bee_map_name(BEE_MAP_EXEC);
	case CODEGEN_FILL_IMAGE_NET4:
		return bee_map_name(BEE_MAP_NET4);
	case CODEGEN_FILL_IMAGE_NET6:
		return bee_map_name(BEE_MAP_NET6);
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
	w.manifest_printed = true;   /* jx_dumps below */
	json_t *m = jx(json_object());
	jx_set(m, BEE_MF_FORMAT, json_string(BEE_MF_FORMAT_VALUE));
	jx_set(m, BEE_MF_SCHEMA, json_integer(IR_SCHEMA_VERSION));
	jx_set(m, BEE_MF_NAME, json_string(lw->ir->name));
	jx_set(m, BEE_MF_PARENT, lw->ir->parent ? json_string(lw->ir->parent) : json_null());
	jx_set(m, BEE_MF_AUDIT, json_string(ir_audit_mode_name(lw->ir->audit)));
	/* what include = [...] merged; absent when nothing was, so that packs
	 * of other policies keep their bytes */
	if (lw->ir->nincluded) {
		json_t *inc = jx(json_array());
		for (size_t i = 0; i < lw->ir->nincluded; i++)
			jx_push(inc, json_string(lw->ir->included[i]));
		jx_set(m, BEE_MF_INCLUDES, inc);
	}
	/* the system call groups allowed, in table order; absent when none, so
	 * that packs of policies without [syscalls] keep their bytes */
	if (lw->ir->syscalls) {
		json_t *sys = jx(json_array());
		for (unsigned g = 0; g < BEE_SYSCALLS_COUNT; g++)
			if (lw->ir->syscalls & (1u << g))
				jx_push(sys, json_string(bee_syscall_groups[g].name));
		jx_set(m, BEE_MF_SYSCALLS, sys);
	}
	jx_set(m, BEE_MF_SOURCE, json_string(BEE_SEC_SOURCE));
	/* the base name only: how the path was spelt must not change the bytes */
	const char *base = strrchr(src->name, '/');
	jx_set(m, BEE_MF_SOURCE_NAME, json_string(base ? base + 1 : src->name));
	jx_set(m, BEE_MF_DEFINES, manifest_defines(o));

	/* beec's version alone: the BPF object is the one this beec embeds */
	json_t *compiler = jx(json_object());
	jx_set(compiler, BEE_MF_COMPILER_BEEC, json_string(BEEC_VERSION));
	jx_set(m, BEE_MF_COMPILER, compiler);

	json_t *hooks = jx(json_array());
	for (size_t i = 0; i < cg.nprogs; i++) {
		json_t *h = jx(json_object());
		jx_set(h, BEE_MF_HOOK_PROGRAM, json_string(cg.progs[i].name));
		jx_set(h, BEE_MF_HOOK_SECTION, json_string(cg.progs[i].section));
		jx_set(h, BEE_MF_HOOK_ATTACH, json_string(cg.progs[i].attach));
		jx_set(h, BEE_MF_HOOK_LSM, json_boolean(cg.progs[i].lsm));
		jx_push(hooks, h);
	}
	jx_set(m, BEE_MF_HOOKS, hooks);

	json_t *maps = jx(json_array());
	for (size_t i = 0; i < cg.nmaps; i++) {
		const struct codegen_map *cm = &cg.maps[i];
		json_t *mo = jx(json_object());
		jx_set(mo, BEE_MF_NAME, json_string(cm->name));
		jx_set(mo, BEE_MF_MAP_TYPE, json_string(codegen_map_type_name(cm->type)));
		jx_set(mo, BEE_MF_MAP_KEY_SIZE, json_integer(cm->key_size));
		jx_set(mo, BEE_MF_MAP_VALUE_SIZE, json_integer(cm->value_size));
		jx_set(mo, BEE_MF_MAP_MAX_ENTRIES, json_integer(cm->max_entries));
		jx_set(mo, BEE_MF_MAP_FLAGS, json_integer(cm->flags));
		jx_set(mo, BEE_MF_MAP_FILL, json_string(codegen_map_fill_name(cm->fill)));
		const char *sec = fill_section(cm->fill);
		jx_set(mo, BEE_MF_MAP_IMAGE, sec ? json_string(sec) : json_null());
		jx_push(maps, mo);
	}
	jx_set(m, BEE_MF_MAPS, maps);

	/* the object's .rodata globals the loader sets, by name */
	json_t *consts = jx(json_object());
	for (size_t i = 0; i < cg.nconsts; i++)
		jx_set(consts, cg.consts[i].name, json_integer(cg.consts[i].value));
	jx_set(m, BEE_MF_CONSTANTS, consts);

	/* images */
	size_t fs_len, exec_len, env_len;
	struct bee_dfa_hdr *fs = image_dfa_write(lw->dfa[IR_DOMAIN_FS], &fs_len);
	struct bee_dfa_hdr *ex = image_dfa_write(lw->dfa[IR_DOMAIN_EXEC], &exec_len);
	struct bee_dfa_hdr *env = image_dfa_write(lw->dfa[IR_DOMAIN_ENV], &env_len);
	struct netset_image ni;
	/* exhausted in a nested entry: unwind to ours */
	if (!fs || !ex || !env || netset_image_build(lw->net, &ni) < 0)
		mem_raise(__func__);
	size_t n4_len, n6_len, nhosts;
	struct bee_host_rec *hosts = hosts_image(lw, &nhosts);
	uint8_t *n4 = net_records(ni.keys4, sizeof(*ni.keys4), ni.values4, ni.n4, &n4_len);
	uint8_t *n6 = net_records(ni.keys6, sizeof(*ni.keys6), ni.values6, ni.n6, &n6_len);

	json_t *automata = jx(json_object());
	jx_set(automata, BEE_MF_AUTOMATON_FS, manifest_automaton(lw->dfa[IR_DOMAIN_FS], fs_len));
	jx_set(automata, BEE_MF_AUTOMATON_EXEC, manifest_automaton(lw->dfa[IR_DOMAIN_EXEC], exec_len));
	jx_set(automata, BEE_MF_AUTOMATON_ENV, manifest_automaton(lw->dfa[IR_DOMAIN_ENV], env_len));
	jx_set(m, BEE_MF_AUTOMATA, automata);

	/* which rules decided each network entry, for the audit log and revoke */
	json_t *netprov = jx(json_array());
	for (size_t i = 0; i < lw->net->nentries; i++) {
		const struct netset_entry *e = &lw->net->entries[i];
		json_t *r = jx(json_array());
		for (unsigned j = 0; j < e->nrules; j++)
			jx_push(r, json_integer(lw->net->rules[e->rules[j]].index));
		jx_push(netprov, r);
	}
	jx_set(m, BEE_MF_NET_PROVENANCE, netprov);
	jx_set(m, BEE_MF_RULES, manifest_rules(lw->ir));
	jx_set(m, BEE_MF_LANDLOCK, manifest_landlock(lw));

	char *mtext = jx_dumps(m, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(m);

	err = 0;
	size_t rec4 = sizeof(*ni.keys4) + sizeof(struct bee_net_value);
	size_t rec6 = sizeof(*ni.keys6) + sizeof(struct bee_net_value);
	if (writer_add(&w, BEE_PACK_MANIFEST, BEE_SEC_MANIFEST, 1, strlen(mtext), mtext, strlen(mtext), dc) < 0 ||
	    writer_add(&w, BEE_PACK_SOURCE, BEE_SEC_SOURCE, 1, src->len, src->text, src->len, dc) < 0 ||
	    writer_add(&w, BEE_PACK_ELF, BEE_SEC_ELF, 1, cg.elf_len, cg.elf, cg.elf_len, dc) < 0 ||
	    writer_add(&w, BEE_PACK_MAP_IMAGE, bee_map_name(BEE_MAP_FS), (uint32_t)fs_len, 1, fs, fs_len, dc) < 0 ||
	    writer_add(&w, BEE_PACK_MAP_IMAGE, bee_map_name(BEE_MAP_EXEC), (uint32_t)exec_len, 1, ex, exec_len, dc) < 0 ||
	    writer_add(&w, BEE_PACK_MAP_IMAGE, bee_map_name(BEE_MAP_ENV), (uint32_t)env_len, 1, env, env_len, dc) < 0 ||
	    writer_add(&w, BEE_PACK_MAP_IMAGE, bee_map_name(BEE_MAP_NET4), (uint32_t)rec4, ni.n4, n4, n4_len, dc) < 0 ||
	    writer_add(&w, BEE_PACK_MAP_IMAGE, bee_map_name(BEE_MAP_NET6), (uint32_t)rec6, ni.n6, n6, n6_len, dc) < 0 ||
	    (nhosts && writer_add(&w, BEE_PACK_MAP_IMAGE, bee_map_name(BEE_MAP_HOSTS), sizeof(*hosts), nhosts,
				  hosts, nhosts * sizeof(*hosts), dc) < 0)) {
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
	free(hosts);
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
