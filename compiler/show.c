/* SPDX-License-Identifier: GPL-2.0-only */
/* show.c: beec show, from the pack's sections. */
#include "show.h"
#include "mem.h"
#include "bee_dfa.h"
#include "bee_names.h"
#include "bee_net.h"
#include "bee_syscalls.h"
#include "netaddr.h"
#include "pack.h"

#include <errno.h>
#include <jansson.h>
#include <string.h>

static const char *jstr(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : "";
}

static long long jint(const json_t *o, const char *key)
{
	return json_integer_value(json_object_get(o, key));
}

static void show_rules(const json_t *m, FILE *out)
{
	const json_t *rules = json_object_get(m, BEE_MF_RULES);
	fprintf(out, "\nrules %zu\n", json_array_size(rules));
	size_t i;
	const json_t *r;
	json_array_foreach(rules, i, r) {
		char kind[32], text[4200];
		snprintf(kind, sizeof(kind), "%s.%s", jstr(r, BEE_MF_RULE_DOMAIN), jstr(r, BEE_MF_RULE_KIND));
		if (json_object_get(r, BEE_MF_RULE_VALUE))
			snprintf(text, sizeof(text), "%s=\"%s\"", jstr(r, BEE_MF_RULE_TEXT), jstr(r, BEE_MF_RULE_VALUE));
		else
			snprintf(text, sizeof(text), "%s%s", json_is_true(json_object_get(r, BEE_MF_RULE_PINNED)) ? "!" : "",
				 jstr(r, BEE_MF_RULE_TEXT));
		fprintf(out, "  %3lld  %-12s %-48s @ %lld:%lld\n", jint(r, BEE_MF_RULE_INDEX), kind, text,
			jint(r, BEE_MF_RULE_LINE), jint(r, BEE_MF_RULE_COLUMN));
	}
}

static void show_automata(const struct bee_pack *pack, const json_t *m, FILE *out)
{
	static const struct { const char *domain; enum bee_map_id map; } autos[] = {
		{ "fs", BEE_MAP_FS }, { "exec", BEE_MAP_EXEC }, { "env", BEE_MAP_ENV },
	};
	const json_t *automata = json_object_get(m, BEE_MF_AUTOMATA);
	fprintf(out, "\nautomata\n");
	for (size_t i = 0; i < sizeof(autos) / sizeof(autos[0]); i++) {
		const char *sec = bee_map_name(autos[i].map);
		const struct bee_pack_section_info *s = bee_pack__find(pack, BEE_PACK_MAP_IMAGE, sec);
		const json_t *a = json_object_get(automata, autos[i].domain);
		const char *check = "missing";
		if (s)
			check = bee_dfa_image_check(s->data, s->size) == 0 ? "checked" : "BAD IMAGE";
		fprintf(out, "  %-5s %5lld states %4lld classes %7lld transitions  image %lld bytes (%s)\n",
			autos[i].domain, jint(a, BEE_MF_DFA_STATES), jint(a, BEE_MF_DFA_CLASSES), jint(a, BEE_MF_DFA_TRANSITIONS),
			jint(a, BEE_MF_DFA_IMAGE_BYTES), check);
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
	const json_t *rules = json_array_get(json_object_get(prov, "p"), v->prov);
	size_t i;
	const json_t *r;
	json_array_foreach(rules, i, r)
		fprintf(out, " %lld", (long long)json_integer_value(r));
	fputc('\n', out);
}

static void show_net(const struct bee_pack *pack, const json_t *m, FILE *out)
{
	json_t *prov = json_object();
	if (!prov)
		mem_raise(__func__);   /* jansson's allocation failed: unwind to show_pack */
	json_object_set(prov, "p", json_object_get(m, BEE_MF_NET_PROVENANCE));
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
		show_net_entry(4, &k, NULL, &v, prov, out);
	}
	for (size_t i = 0; i < n6; i++) {
		const uint8_t *rec = (const uint8_t *)s6->data + i * s6->elem_width;
		struct bee_net_key6 k;
		struct bee_net_value v;
		memcpy(&k, rec, sizeof(k));
		memcpy(&v, rec + sizeof(k), sizeof(v));
		show_net_entry(6, NULL, &k, &v, prov, out);
	}
	json_decref(prov);
}

static void show_syscalls(const json_t *m, FILE *out)
{
	const json_t *sys = json_object_get(m, BEE_MF_SYSCALLS);
	size_t n = json_array_size(sys);
	if (!n) {
		fprintf(out, "\nsyscalls allowed none (every group of bee-policy(5) is refused)\n");
		return;
	}
	fprintf(out, "\nsyscalls allowed %zu (the other groups of bee-policy(5) are refused)\n", n);
	size_t i;
	const json_t *g;
	json_array_foreach(sys, i, g) {
		const char *name = json_string_value(g), *doc = "unknown to this beec";
		for (unsigned k = 0; name && k < BEE_SYSCALLS_COUNT; k++)
			if (strcmp(name, bee_syscall_groups[k].name) == 0)
				doc = bee_syscall_groups[k].doc;
		fprintf(out, "  %-16s %s\n", name ? name : "?", doc);
	}
}

static void show_hooks_maps(const json_t *m, FILE *out)
{
	size_t i;
	const json_t *h;
	const json_t *hooks = json_object_get(m, BEE_MF_HOOKS);
	fprintf(out, "\nhooks %zu\n", json_array_size(hooks));
	json_array_foreach(hooks, i, h)
		fprintf(out, "  %-32s %-24s %s\n", jstr(h, BEE_MF_HOOK_SECTION), jstr(h, BEE_MF_HOOK_PROGRAM),
			json_is_true(json_object_get(h, BEE_MF_HOOK_LSM)) ? "needs BPF LSM" : "cgroup");
	const json_t *maps = json_object_get(m, BEE_MF_MAPS);
	fprintf(out, "\nmaps %zu\n", json_array_size(maps));
	json_array_foreach(maps, i, h) {
		char fill[64];
		snprintf(fill, sizeof(fill), "%s", jstr(h, BEE_MF_MAP_FILL));
		fprintf(out, "  %-12s %-14s key %3lld  value %8lld  entries %6lld  %s\n", jstr(h, BEE_MF_MAP_NAME),
			jstr(h, BEE_MF_MAP_TYPE), jint(h, BEE_MF_MAP_KEY_SIZE), jint(h, BEE_MF_MAP_VALUE_SIZE), jint(h, BEE_MF_MAP_MAX_ENTRIES), fill);
	}
}

static void show_landlock(const json_t *m, FILE *out)
{
	const json_t *l = json_object_get(m, BEE_MF_LANDLOCK);
	if (json_is_true(json_object_get(l, BEE_MF_LL_EXPRESSIBLE))) {
		fprintf(out, "\nlandlock: expressible, %zu rules\n", json_array_size(json_object_get(l, BEE_MF_RULES)));
		size_t i;
		const json_t *r;
		json_array_foreach(json_object_get(l, BEE_MF_RULES), i, r) {
			char acc[64] = "";
			size_t j;
			const json_t *a;
			json_array_foreach(json_object_get(r, BEE_MF_LL_ACCESS), j, a) {
				strcat(acc, j ? "," : "");
				strncat(acc, json_string_value(a), sizeof(acc) - strlen(acc) - 1);
			}
			fprintf(out, "  %-40s %-8s %s\n", jstr(r, BEE_MF_LL_PATH),
				json_is_true(json_object_get(r, BEE_MF_LL_BENEATH)) ? "beneath" : "file", acc);
		}
	} else {
		fprintf(out, "\nlandlock: not expressible (rule %lld): %s\n", jint(l, BEE_MF_LL_RULE), jstr(l, BEE_MF_LL_REASON));
	}
}

static int show_pack_body(const void *buf, size_t len, FILE *out, char *err, size_t errlen)
{
	struct bee_pack *pack;
	int rc = bee_pack__open_mem(buf, len, &pack, err, errlen);
	if (rc < 0)
		return rc;
	const json_t *m = bee_pack__manifest(pack);
	char digest[BEE_PACK_DIGEST_HEX_LEN + 1];
	bee_pack__digest_hex(pack, digest);
	const json_t *compiler = json_object_get(m, BEE_MF_COMPILER);
	fprintf(out, "# bee pack\n");
	fprintf(out, "policy    %s (schema %lld)\n", jstr(m, BEE_MF_NAME), jint(m, BEE_MF_SCHEMA));
	fprintf(out, "digest    %s\n", digest);
	fprintf(out, "size      %zu bytes in %u sections\n", len, bee_pack__section_count(pack));
	fprintf(out, "source    %s\n", jstr(m, BEE_MF_SOURCE_NAME));
	fprintf(out, "defines  ");
	size_t i;
	const json_t *d;
	json_array_foreach(json_object_get(m, BEE_MF_DEFINES), i, d)
		fprintf(out, " %s", json_string_value(d));
	fprintf(out, "%s\n", json_array_size(json_object_get(m, BEE_MF_DEFINES)) ? "" : " none");
	const char *parent = json_string_value(json_object_get(m, BEE_MF_PARENT));
	fprintf(out, "parent    %s\n", parent ? parent : "none");
	fprintf(out, "audit     %s\n", jstr(m, BEE_MF_AUDIT));
	fprintf(out, "compiler  beec %s, %s\n", jstr(compiler, BEE_MF_COMPILER_BEEC), jstr(compiler, BEE_MF_COMPILER_CLANG));
	show_rules(m, out);
	show_automata(pack, m, out);
	show_net(pack, m, out);
	show_syscalls(m, out);
	show_hooks_maps(m, out);
	show_landlock(m, out);
	bee_pack__close(pack);
	return 0;
}

int show_pack(const void *buf, size_t len, FILE *out, char *err, size_t errlen)
{
	return MEM_PROTECT(-ENOMEM, show_pack_body(buf, len, out, err, errlen));
}
