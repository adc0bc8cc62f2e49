/* SPDX-License-Identifier: GPL-2.0-only */
/* show.c: beec show, from the pack's sections. */
#include "show.h"
#include "mem.h"
#include "bee_audit.h"
#include "bee_dfa.h"
#include "bee_names.h"
#include "bee_net.h"
#include "bee_syscalls.h"
#include "netaddr.h"
#include "manifest.h"
#include "pack.h"

#include <errno.h>
#include <jansson.h>
#include <string.h>

static void show_rules(const struct bee_manifest *m, FILE *out)
{
	fprintf(out, "\nrules %zu\n", m->nrules);
	for (size_t i = 0; i < m->nrules; i++) {
		const struct bee_mf_rule *r = &m->rules[i];
		char kind[32], text[4200];
		snprintf(kind, sizeof(kind), "%s.%s", r->domain, r->kind);
		if (r->value)
			snprintf(text, sizeof(text), "%s=\"%s\"", r->text, r->value);
		else
			snprintf(text, sizeof(text), "%s%s", r->pinned ? "!" : "", r->text);
		fprintf(out, "  %3u  %-12s %-48s @ %u:%u\n", r->index, kind, text, r->line, r->column);
	}
}

static void show_automata(const struct bee_pack *pack, const struct bee_manifest *m, FILE *out)
{
	static const enum bee_map_id maps[BEE_MF_NAUTOMATA] = {
#define SHOW_AUTOMATON_MAP(id, key, map) map,
		BEE_AUTOMATA(SHOW_AUTOMATON_MAP)
#undef SHOW_AUTOMATON_MAP
	};
	fprintf(out, "\nautomata\n");
	for (size_t i = 0; i < BEE_MF_NAUTOMATA; i++) {
		const struct bee_mf_automaton *a = &m->automata[i];
		const struct bee_pack_section_info *s = bee_pack__find(pack, BEE_PACK_MAP_IMAGE, bee_map_name(maps[i]));
		const char *check = "missing";
		if (s)
			check = bee_dfa_image_check(s->data, s->size) == 0 ? "checked" : "BAD IMAGE";
		fprintf(out, "  %-5s %5llu states %4llu classes %7llu transitions  image %llu bytes (%s)\n", a->key,
			(unsigned long long)a->states, (unsigned long long)a->classes,
			(unsigned long long)a->transitions, (unsigned long long)a->image_bytes, check);
	}
}

static void show_net_entry(int family, const struct bee_net_key4 *k4, const struct bee_net_key6 *k6,
			   const struct bee_net_value *v, const json_t *prov, FILE *out)
{
	uint8_t addr[16] = { 0 };
	unsigned dir = family == 4 ? k4->dir : k6->dir, proto = family == 4 ? k4->proto : k6->proto;
	unsigned prefix = (family == 4 ? k4->prefixlen : k6->prefixlen) - BEE_NET_HDR_BITS;
	memcpy(addr, family == 4 ? k4->addr : k6->addr, family == 4 ? 4 : 16);
	char text[NETADDR_ADDRSTRLEN], ports[256] = "";
	netaddr_format_addr(family == 4 ? IR_NET_IPV4 : IR_NET_IPV6, addr, text);
	for (unsigned i = 0; i < v->nranges && i < BEE_NET_MAX_RANGES; i++) {
		size_t l = strlen(ports);
		if (v->ranges[i].lo == v->ranges[i].hi)
			snprintf(ports + l, sizeof(ports) - l, "%s%u", i ? "," : "", v->ranges[i].lo);
		else
			snprintf(ports + l, sizeof(ports) - l, "%s%u-%u", i ? "," : "", v->ranges[i].lo,
				 v->ranges[i].hi);
	}
	char addrp[NETADDR_ADDRSTRLEN + 8];
	snprintf(addrp, sizeof(addrp), family == 4 ? "%s/%u" : "[%s]/%u", text, prefix);
	fprintf(out, "  %-7s %-3s  %-26s %-20s rules", dir == BEE_NET_BIND ? "bind" : "connect",
		proto == BEE_NET_PROTO_UDP ? "udp" : "tcp", addrp, v->nranges ? ports : "none");
	const json_t *rules = json_array_get(prov, v->prov);
	size_t i;
	const json_t *r;
	json_array_foreach(rules, i, r)
		fprintf(out, " %lld", (long long)json_integer_value(r));
	fputc('\n', out);
}

static void show_net(const struct bee_pack *pack, const struct bee_manifest *m, FILE *out)
{
	const struct bee_pack_section_info *s4 = bee_pack__find(pack, BEE_PACK_MAP_IMAGE, bee_map_name(BEE_MAP_NET4));
	const struct bee_pack_section_info *s6 = bee_pack__find(pack, BEE_PACK_MAP_IMAGE, bee_map_name(BEE_MAP_NET6));
	size_t n4 = s4 ? s4->elem_count : 0, n6 = s6 ? s6->elem_count : 0;
	fprintf(out, "\nnet %zu entries (an address's longest match decides; no match denies)\n", n4 + n6);
	for (size_t i = 0; i < n4; i++) {
		const uint8_t *rec = (const uint8_t *)s4->data + i * s4->elem_width;
		struct bee_net_key4 k;
		struct bee_net_value v;
		memcpy(&k, rec, sizeof(k));
		memcpy(&v, rec + sizeof(k), sizeof(v));
		show_net_entry(4, &k, NULL, &v, m->net_prov, out);
	}
	for (size_t i = 0; i < n6; i++) {
		const uint8_t *rec = (const uint8_t *)s6->data + i * s6->elem_width;
		struct bee_net_key6 k;
		struct bee_net_value v;
		memcpy(&k, rec, sizeof(k));
		memcpy(&v, rec + sizeof(k), sizeof(v));
		show_net_entry(6, NULL, &k, &v, m->net_prov, out);
	}
}

static void show_syscalls(const struct bee_manifest *m, FILE *out)
{
	unsigned n = (unsigned)__builtin_popcount(m->syscalls_allowed);
	if (!n) {
		fprintf(out, "\nsyscalls allowed none (every group of bee-policy(5) is refused)\n");
		return;
	}
	fprintf(out, "\nsyscalls allowed %u (the other groups of bee-policy(5) are refused)\n", n);
	for (unsigned g = 0; g < BEE_SYSCALLS_COUNT; g++)
		if (m->syscalls_allowed & (1u << g))
			fprintf(out, "  %-16s %s\n", bee_syscall_groups[g].name, bee_syscall_groups[g].doc);
}

static void show_hooks_maps(const struct bee_manifest *m, FILE *out)
{
	fprintf(out, "\nhooks %zu\n", m->nhooks);
	for (size_t i = 0; i < m->nhooks; i++)
		fprintf(out, "  %-32s %-24s %s\n", m->hooks[i].section, m->hooks[i].program,
			m->hooks[i].lsm ? "needs BPF LSM" : "cgroup");
	fprintf(out, "\nmaps %zu\n", m->nmaps);
	for (size_t i = 0; i < m->nmaps; i++) {
		const struct bee_mf_map *p = &m->maps[i];
		fprintf(out, "  %-12s %-14s key %3u  value %8u  entries %6u  %s\n", p->name, p->type, p->key_size,
			p->value_size, p->max_entries, p->fill);
	}
}

static void show_landlock(const struct bee_manifest *m, FILE *out)
{
	if (!m->ll_expressible) {
		fprintf(out, "\nlandlock: not expressible (rule %ld): %s\n", m->ll_rule < 0 ? 0 : m->ll_rule,
			m->ll_reason);
		return;
	}
	fprintf(out, "\nlandlock: expressible, %zu rules\n", m->nll);
	for (size_t i = 0; i < m->nll; i++) {
		const struct bee_mf_ll_rule *r = &m->ll_rules[i];
		char acc[64];
		snprintf(acc, sizeof(acc), "%s%s%s%s%s", r->perms & BEE_PERM_READ ? BEE_MF_LL_READ : "",
			 r->perms & BEE_PERM_READ && r->perms & (BEE_PERM_WRITE | BEE_PERM_EXEC) ? "," : "",
			 r->perms & BEE_PERM_WRITE ? BEE_MF_LL_WRITE : "",
			 r->perms & BEE_PERM_WRITE && r->perms & BEE_PERM_EXEC ? "," : "",
			 r->perms & BEE_PERM_EXEC ? BEE_MF_LL_EXECUTE : "");
		fprintf(out, "  %-40s %-8s %s\n", r->path, r->beneath ? "beneath" : "file", acc);
	}
}

static const char *audit_mode_name(unsigned mode)
{
#define SHOW_AUDIT_MODE(name, value, str) if (mode == value) return str;
	BEE_AUDIT_MODES(SHOW_AUDIT_MODE)
#undef SHOW_AUDIT_MODE
	return "?";
}

static int show_pack_body(const void *buf, size_t len, FILE *out, char *err, size_t errlen)
{
	struct bee_pack *pack;
	struct bee_manifest m;
	char why[600];
	int rc = bee_pack__open_mem(buf, len, &pack, err, errlen);
	if (rc < 0)
		return rc;
	if ((rc = bee_manifest_read(pack, &m, why, sizeof(why))) < 0) {
		if (rc == -ENOMEM)
			mem_raise(__func__);   /* unwind to show_pack */
		snprintf(err, errlen, "pack: manifest: %s", why);
		bee_pack__close(pack);
		return rc;
	}
	char digest[BEE_PACK_DIGEST_HEX_LEN + 1];
	bee_pack__digest_hex(pack, digest);
	fprintf(out, "# bee pack\n");
	fprintf(out, "policy    %s (schema %u)\n", m.name, m.schema);
	fprintf(out, "digest    %s\n", digest);
	fprintf(out, "size      %zu bytes in %u sections\n", len, bee_pack__section_count(pack));
	fprintf(out, "source    %s\n", m.source_name ? m.source_name : "");
	fprintf(out, "defines  ");
	for (size_t i = 0; i < m.ndefines; i++)
		fprintf(out, " %s", m.defines[i]);
	fprintf(out, "%s\n", m.ndefines ? "" : " none");
	fprintf(out, "parent    %s\n", m.parent ? m.parent : "none");
	for (size_t i = 0; i < m.nincludes; i++)
		fprintf(out, "include   %s\n", m.includes[i]);
	fprintf(out, "audit     %s\n", audit_mode_name(m.audit));
	fprintf(out, "compiler  beec %s\n", m.compiler_beec ? m.compiler_beec : "");
	show_rules(&m, out);
	show_automata(pack, &m, out);
	show_net(pack, &m, out);
	show_syscalls(&m, out);
	show_hooks_maps(&m, out);
	show_landlock(&m, out);
	bee_manifest_fini(&m);
	bee_pack__close(pack);
	return 0;
}

int show_pack(const void *buf, size_t len, FILE *out, char *err, size_t errlen)
{
	return MEM_PROTECT(-ENOMEM, show_pack_body(buf, len, out, err, errlen));
}
