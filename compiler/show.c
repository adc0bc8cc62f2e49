/* SPDX-License-Identifier: GPL-2.0-only */
/* show.c: beec show, from the pack's sections. */
#include "show.h"
#include "mem.h"
#include "bee_dfa.h"
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
	const json_t *rules = json_object_get(m, "rules");
	fprintf(out, "\nrules %zu\n", json_array_size(rules));
	size_t i;
	const json_t *r;
	json_array_foreach(rules, i, r) {
		char kind[32], text[4200];
		snprintf(kind, sizeof(kind), "%s.%s", jstr(r, "domain"), jstr(r, "kind"));
		if (json_object_get(r, "value"))
			snprintf(text, sizeof(text), "%s=\"%s\"", jstr(r, "text"), jstr(r, "value"));
		else
			snprintf(text, sizeof(text), "%s%s", json_is_true(json_object_get(r, "pinned")) ? "!" : "",
				 jstr(r, "text"));
		fprintf(out, "  %3lld  %-12s %-48s @ %lld:%lld\n", jint(r, "index"), kind, text,
			jint(r, "line"), jint(r, "column"));
	}
}

static void show_automata(const struct bee_pack *pack, const json_t *m, FILE *out)
{
	static const char *const names[] = { "fs", "exec", "env" };
	const json_t *automata = json_object_get(m, "automata");
	fprintf(out, "\nautomata\n");
	for (size_t i = 0; i < 3; i++) {
		char sec[32];
		snprintf(sec, sizeof(sec), "bee_%s", names[i]);
		const struct bee_pack_section_info *s = bee_pack__find(pack, BEE_PACK_MAP_IMAGE, sec);
		const json_t *a = json_object_get(automata, names[i]);
		const char *check = "missing";
		if (s)
			check = bee_dfa_image_check(s->data, s->size) == 0 ? "checked" : "BAD IMAGE";
		fprintf(out, "  %-5s %5lld states %4lld classes %7lld transitions  image %lld bytes (%s)\n",
			names[i], jint(a, "states"), jint(a, "classes"), jint(a, "transitions"),
			jint(a, "image_bytes"), check);
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
	json_object_set(prov, "p", json_object_get(m, "net_provenance"));
	const struct bee_pack_section_info *s4 = bee_pack__find(pack, BEE_PACK_MAP_IMAGE, "bee_net4");
	const struct bee_pack_section_info *s6 = bee_pack__find(pack, BEE_PACK_MAP_IMAGE, "bee_net6");
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
	const json_t *sys = json_object_get(m, "syscalls");
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
	const json_t *hooks = json_object_get(m, "hooks");
	fprintf(out, "\nhooks %zu\n", json_array_size(hooks));
	json_array_foreach(hooks, i, h)
		fprintf(out, "  %-32s %-24s %s\n", jstr(h, "section"), jstr(h, "program"),
			json_is_true(json_object_get(h, "lsm")) ? "needs BPF LSM" : "cgroup");
	const json_t *maps = json_object_get(m, "maps");
	fprintf(out, "\nmaps %zu\n", json_array_size(maps));
	json_array_foreach(maps, i, h) {
		char fill[64];
		snprintf(fill, sizeof(fill), "%s", jstr(h, "fill"));
		fprintf(out, "  %-12s %-14s key %3lld  value %8lld  entries %6lld  %s\n", jstr(h, "name"),
			jstr(h, "type"), jint(h, "key_size"), jint(h, "value_size"), jint(h, "max_entries"), fill);
	}
}

static void show_landlock(const json_t *m, FILE *out)
{
	const json_t *l = json_object_get(m, "landlock");
	if (json_is_true(json_object_get(l, "expressible"))) {
		fprintf(out, "\nlandlock: expressible, %zu rules\n", json_array_size(json_object_get(l, "rules")));
		size_t i;
		const json_t *r;
		json_array_foreach(json_object_get(l, "rules"), i, r) {
			char acc[64] = "";
			size_t j;
			const json_t *a;
			json_array_foreach(json_object_get(r, "access"), j, a) {
				strcat(acc, j ? "," : "");
				strncat(acc, json_string_value(a), sizeof(acc) - strlen(acc) - 1);
			}
			fprintf(out, "  %-40s %-8s %s\n", jstr(r, "path"),
				json_is_true(json_object_get(r, "beneath")) ? "beneath" : "file", acc);
		}
	} else {
		fprintf(out, "\nlandlock: not expressible (rule %lld): %s\n", jint(l, "rule"), jstr(l, "reason"));
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
	const json_t *compiler = json_object_get(m, "compiler");
	fprintf(out, "# bee pack\n");
	fprintf(out, "policy    %s (schema %lld)\n", jstr(m, "name"), jint(m, "schema"));
	fprintf(out, "digest    %s\n", digest);
	fprintf(out, "size      %zu bytes in %u sections\n", len, bee_pack__section_count(pack));
	fprintf(out, "source    %s\n", jstr(m, "source_name"));
	fprintf(out, "defines  ");
	size_t i;
	const json_t *d;
	json_array_foreach(json_object_get(m, "defines"), i, d)
		fprintf(out, " %s", json_string_value(d));
	fprintf(out, "%s\n", json_array_size(json_object_get(m, "defines")) ? "" : " none");
	const char *parent = json_string_value(json_object_get(m, "parent"));
	fprintf(out, "parent    %s\n", parent ? parent : "none");
	fprintf(out, "audit     %s\n", jstr(m, "audit"));
	fprintf(out, "compiler  beec %s\n", jstr(compiler, "beec"));
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
