/* SPDX-License-Identifier: GPL-2.0-only */
/* show.c: beec show, from the pack's sections. */
#include "show.h"
#include "mem.h"
#include "bee_audit.h"
#include "bee_dfa.h"
#include "bee_names.h"
#include "bee_hosts.h"
#include "bee_net.h"
#include "bee_syscalls.h"
#include "ll_walk.h"
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

/* The host names the session's DNS stub admits by (a pack without names
 * has no bee_hosts section and prints nothing here). */
static void show_hosts(const struct bee_pack *pack, FILE *out)
{
	const struct bee_pack_section_info *s = bee_pack__find(pack, BEE_PACK_MAP_IMAGE, bee_map_name(BEE_MAP_HOSTS));
	size_t n = 0;
	if (!s || s->elem_width != sizeof(struct bee_host_rec))
		return;
	for (size_t i = 0; i < s->elem_count; i++)
		n += ((const struct bee_host_rec *)s->data)[i].kind == BEE_HOST_NAME;
	fprintf(out, "\nhosts %zu (the session's DNS admits their answers' addresses for the TTL)\n", n);
	for (size_t i = 0; i < s->elem_count; i++) {
		struct bee_host_rec h;
		char ports[16];
		memcpy(&h, (const uint8_t *)s->data + i * sizeof(h), sizeof(h));
		if (h.kind != BEE_HOST_NAME)
			continue;
		h.name[sizeof(h.name) - 1] = '\0';
		if (h.port_lo == 0 && h.port_hi == 65535)
			snprintf(ports, sizeof(ports), "*");
		else if (h.port_lo == h.port_hi)
			snprintf(ports, sizeof(ports), "%u", h.port_lo);
		else
			snprintf(ports, sizeof(ports), "%u-%u", h.port_lo, h.port_hi);
		fprintf(out, "  connect %-3s  %-40s %-12s rule %u\n", h.proto == BEE_NET_PROTO_UDP ? "udp" : "tcp",
			h.name, ports, h.rule);
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

static const char *ll_rights(uint32_t r, char *buf, size_t size)
{
	snprintf(buf, size, "%s%s%s", r & BEEC_LL_READ ? ",read" : "", r & BEEC_LL_WRITE ? ",write" : "",
		 r & BEEC_LL_EXEC ? ",exec" : "");
	return *buf ? buf + 1 : "-";
}

static void show_ll_prefix(void *ctx, const struct beec_ll_seed *s, const char *prefix, uint32_t own, uint32_t all,
			   uint32_t mixed)
{
	FILE *out = ctx;
	char a[32], b[32], c[32];
	fprintf(out, "  %-40s rule %-3u %-10s own %-15s below: uniform %-15s mixed %s\n", prefix, s->rule, s->what,
		ll_rights(own, a, sizeof(a)), ll_rights(all, b, sizeof(b)), ll_rights(mixed, c, sizeof(c)));
}

/* The landlock backend walks the tree at session start (ll_walk.h): what
 * the automata say at each grant's literal prefix, which is where it
 * starts; "mixed" rights are walked entry by entry, and objects created
 * there later are denied them (bee-load plan lists the narrowings). */
static void show_landlock(const struct bee_pack *pack, const struct bee_manifest *m, FILE *out)
{
	const struct bee_pack_section_info *fs = bee_pack__find(pack, BEE_PACK_MAP_IMAGE, bee_map_name(BEE_MAP_FS));
	const struct bee_pack_section_info *ex = bee_pack__find(pack, BEE_PACK_MAP_IMAGE, bee_map_name(BEE_MAP_EXEC));
	size_t n = 0;
	struct beec_ll_seed *seeds = beec_ll__seeds(m, &n);
	if (!seeds)
		mem_raise(__func__);
	fprintf(out, "\nlandlock: walked at session start from %zu grant%s (bee-load plan, beec check --backend "
		"landlock)\n", n, n == 1 ? "" : "s");
	if (fs && ex && n && beec_ll__prefixes(fs->data, ex->data, seeds, n, show_ll_prefix, out) < 0)
		fprintf(out, "  a grant has no literal prefix\n");
	free(seeds);
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
	show_hosts(pack, out);
	show_syscalls(&m, out);
	show_hooks_maps(&m, out);
	show_landlock(pack, &m, out);
	bee_manifest_fini(&m);
	bee_pack__close(pack);
	return 0;
}

int show_pack(const void *buf, size_t len, FILE *out, char *err, size_t errlen)
{
	return MEM_PROTECT(-ENOMEM, show_pack_body(buf, len, out, err, errlen));
}
