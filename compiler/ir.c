/* SPDX-License-Identifier: GPL-2.0-only */
/* ir.c: name tables of the IR enumerations, its canonical text dump and the
 * normal form of a net entry. */
#include "ir.h"
#include "mem.h"

#include "netaddr.h"

#include <stdlib.h>
#include <string.h>

static const char *const domain_names[] = {
#define X(name, str) [IR_DOMAIN_##name] = str,
	IR_DOMAINS(X)
#undef X
};

static const char *const rule_kind_keys[] = {
#define X(name, dom, key) [IR_RULE_##name] = key,
	IR_RULE_KINDS(X)
#undef X
};

static const enum ir_domain rule_kind_domains[] = {
#define X(name, dom, key) [IR_RULE_##name] = IR_DOMAIN_##dom,
	IR_RULE_KINDS(X)
#undef X
};

static const char *const audit_mode_names[] = {
#define X(name, str) [IR_AUDIT_##name] = str,
	IR_AUDIT_MODES(X)
#undef X
};

const char *ir_domain_name(enum ir_domain d)
{
	return (unsigned)d < IR_DOMAIN_COUNT ? domain_names[d] : "?";
}

const char *ir_rule_kind_key(enum ir_rule_kind k)
{
	return (unsigned)k < IR_RULE_KIND_COUNT ? rule_kind_keys[k] : "?";
}

enum ir_domain ir_rule_kind_domain(enum ir_rule_kind k)
{
	return (unsigned)k < IR_RULE_KIND_COUNT ? rule_kind_domains[k] : IR_DOMAIN_COUNT;
}

const char *ir_audit_mode_name(enum ir_audit_mode m)
{
	return (unsigned)m < sizeof(audit_mode_names) / sizeof(audit_mode_names[0])
		       ? audit_mode_names[m] : "?";
}

void ir_policy_free(struct ir_policy *p)
{
	if (!p)
		return;
	arena_free(&p->arena);
	free(p);
}

void ir_net_format(const struct ir_net *n, char *buf)
{
	char addr[NETADDR_ADDRSTRLEN], ports[16];
	netaddr_format_addr(n->family, n->addr, addr);
	if (n->port_lo == 0 && n->port_hi == 65535)
		strcpy(ports, "*");
	else if (n->port_lo == n->port_hi)
		sprintf(ports, "%u", n->port_lo);
	else
		sprintf(ports, "%u-%u", n->port_lo, n->port_hi);
	const char *proto = "?";
	switch (n->proto) {
	case IR_NET_TCP:
		proto = "tcp";
		break;
	case IR_NET_UDP:
		proto = "udp";
		break;
	}
	switch (n->family) {
	case IR_NET_IPV4:
		snprintf(buf, IR_NET_STRLEN, "%s/%u:%s/%s", addr, n->prefix, ports, proto);
		return;
	case IR_NET_IPV6:
		snprintf(buf, IR_NET_STRLEN, "[%s]/%u:%s/%s", addr, n->prefix, ports, proto);
		return;
	}
	snprintf(buf, IR_NET_STRLEN, "?");
}

void ir_host_format(const struct ir_host *h, char *buf)
{
	char ports[16];
	if (h->port_lo == 0 && h->port_hi == 65535)
		strcpy(ports, "*");
	else if (h->port_lo == h->port_hi)
		sprintf(ports, "%u", h->port_lo);
	else
		sprintf(ports, "%u-%u", h->port_lo, h->port_hi);
	snprintf(buf, IR_HOST_STRLEN, "%s:%s/%s", h->name, ports, h->proto == IR_NET_UDP ? "udp" : "tcp");
}

const char *ir_syscalls_text(uint32_t bits, char *buf, size_t len)
{
	size_t n = 0;
	buf[0] = '\0';
	for (unsigned g = 0; g < BEE_SYSCALLS_COUNT; g++)
		if (bits & (1u << g) && n < len)
			n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? " " : "", bee_syscall_groups[g].name);
	if (!n)
		snprintf(buf, len, "none");
	return buf;
}

/* ---- dump ------------------------------------------------------------------
 *
 *   # bee policy ir (schema 1)
 *   version 1
 *   name cargo-test
 *   parent "parent.toml"            (or: parent none)
 *   audit deny
 *   syscalls bpf perf_event_open    (or: syscalls none)
 *   rules 3
 *     0  fs.read      /etc/hosts              @ 7:3
 *     1  exec.allow   !/usr/bin/cargo         @ 11:11
 *     2  env.set      RUST_BACKTRACE="1"      @ 20:9
 *
 * A rule's text is printed bare unless it is empty or holds a space, a
 * double quote or a control byte; then it is quoted with C escapes. No bare
 * text starts with '"', so the two never mix up.
 */

static bool text_needs_quotes(const char *s)
{
	if (!*s)
		return true;
	for (const unsigned char *c = (const unsigned char *)s; *c; c++)
		if (*c <= ' ' || *c == '"' || *c == 0x7f)
			return true;
	return false;
}

/* A growing text buffer: the dump renders each rule first to pad it. */
struct strbuf {
	char *s;
	size_t n, cap;
};

static void sb_putc(struct strbuf *b, char c)
{
	mem_grow((void **)&b->s, &b->cap, b->n + 2, 1);
	b->s[b->n++] = c;
	b->s[b->n] = '\0';
}

static void sb_puts(struct strbuf *b, const char *s)
{
	while (*s)
		sb_putc(b, *s++);
}

static void sb_quoted(struct strbuf *b, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	sb_putc(b, '"');
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		switch (*c) {
		case '"':
			sb_puts(b, "\\\"");
			break;
		case '\\':
			sb_puts(b, "\\\\");
			break;
		case '\n':
			sb_puts(b, "\\n");
			break;
		case '\t':
			sb_puts(b, "\\t");
			break;
		default:
			if (*c < ' ' || *c == 0x7f) {
				sb_puts(b, "\\x");
				sb_putc(b, hex[*c >> 4]);
				sb_putc(b, hex[*c & 15]);
			} else {
				sb_putc(b, (char)*c);
			}
		}
	}
	sb_putc(b, '"');
}

static void sb_text(struct strbuf *b, const char *s)
{
	if (text_needs_quotes(s))
		sb_quoted(b, s);
	else
		sb_puts(b, s);
}

/* The normal form of a rule, as the dump shows it. */
static void rule_text(const struct ir_rule *r, struct strbuf *b)
{
	char net[IR_NET_STRLEN];
	switch (r->kind) {
	case IR_RULE_FS_READ:
	case IR_RULE_FS_WRITE:
	case IR_RULE_FS_DENY:
	case IR_RULE_ENV_ALLOW:
		sb_text(b, r->text);
		return;
	case IR_RULE_EXEC_ALLOW:
		if (r->exec.pinned)
			sb_putc(b, '!');
		sb_text(b, r->text);
		return;
	case IR_RULE_NET_CONNECT:
	case IR_RULE_NET_BIND:
	case IR_RULE_NET_DENY:
		ir_net_format(&r->net, net);
		sb_puts(b, net);
		return;
	case IR_RULE_NET_HOST: {
		char host[IR_HOST_STRLEN];
		ir_host_format(&r->host, host);
		sb_puts(b, host);
		return;
	}
	case IR_RULE_ENV_SET:
		sb_text(b, r->text);
		sb_putc(b, '=');
		sb_quoted(b, r->env_set.value);
		return;
	case IR_RULE_KIND_COUNT:
		break;
	}
	sb_putc(b, '?');
}

#define DUMP_TEXT_COLUMN_MAX 48

static void ir_dump_body(const struct ir_policy *p, FILE *out)
{
	struct strbuf b = { 0 };

	fprintf(out, "# bee policy ir (schema %d)\n", IR_SCHEMA_VERSION);
	fprintf(out, "version %u\n", p->version);
	sb_text(&b, p->name ? p->name : "");
	fprintf(out, "name %s\n", b.s);
	b.n = 0;
	if (p->parent)
		sb_quoted(&b, p->parent);
	else
		sb_puts(&b, "none");
	fprintf(out, "parent %s\n", b.s);
	for (size_t i = 0; i < p->nincluded; i++) {
		b.n = 0;
		sb_quoted(&b, p->included[i]);
		fprintf(out, "included %s\n", b.s);
	}
	fprintf(out, "audit %s\n", ir_audit_mode_name(p->audit));
	char sys[256];
	fprintf(out, "syscalls %s\n", ir_syscalls_text(p->syscalls, sys, sizeof(sys)));
	fprintf(out, "rules %zu\n", p->nrules);

	/* pad every rule's text to the widest one (up to a limit) so that the
	 * locations line up */
	int iw = 1, tw = 0;
	for (size_t n = p->nrules; n > 10; n /= 10)
		iw++;
	for (size_t i = 0; i < p->nrules; i++) {
		b.n = 0;
		rule_text(&p->rules[i], &b);
		if ((int)b.n > tw)
			tw = (int)b.n;
	}
	if (tw > DUMP_TEXT_COLUMN_MAX)
		tw = DUMP_TEXT_COLUMN_MAX;

	for (size_t i = 0; i < p->nrules; i++) {
		const struct ir_rule *r = &p->rules[i];
		char kind[32];
		snprintf(kind, sizeof(kind), "%s.%s", ir_domain_name(ir_rule_kind_domain(r->kind)),
			 ir_rule_kind_key(r->kind));
		b.n = 0;
		rule_text(r, &b);
		fprintf(out, "  %*u  %-11s  %-*s", iw, r->index, kind, tw, b.s);
		if (r->loc.src) {
			unsigned line, col;
			loc_linecol(r->loc, &line, &col);
			fprintf(out, "  @ %u:%u\n", line, col);
		} else {
			fputs("  @ -\n", out);
		}
	}
	free(b.s);
}

int ir_dump(const struct ir_policy *p, FILE *out)
{
	return MEM_PROTECT(-ENOMEM, (ir_dump_body(p, out), 0));
}
