/* SPDX-License-Identifier: GPL-2.0-only */
/* ir.h: the policy IR that compiler/schema builds from a TOML document.
 *
 * A policy is a list of rules in source order. Each rule has a kind (which
 * list of which table it came from), the text after ${NAME} expansion, the
 * location of its string in the policy, and a kind-specific payload.
 * Every later stage (DFA, net sets, maps) keeps the rule's index so that
 * what it produces can point back at the policy text.
 *
 * Ownership: an ir_policy owns everything in it through its arena;
 * ir_policy_free() releases it. It does not own its source.
 */
#ifndef BEE_IR_H
#define BEE_IR_H

#include "bee_names.h"
#include "bee_syscalls.h"
#include "diag.h"
#include "mem.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define IR_SCHEMA_VERSION 1

/* Domains: each lowers to its own automaton or set (the pack format's
 * names: runtime/bee_names.h). */
#define IR_DOMAINS(X) BEE_DOMAINS(X)

enum ir_domain {
#define X(name, str) IR_DOMAIN_##name,
	IR_DOMAINS(X)
#undef X
	IR_DOMAIN_COUNT
};

/* Rule kinds: (name, domain, table key), as the manifest's rules name them. */
#define IR_RULE_KINDS(X) BEE_RULE_KINDS(X)

enum ir_rule_kind {
#define X(name, dom, key) IR_RULE_##name,
	IR_RULE_KINDS(X)
#undef X
	IR_RULE_KIND_COUNT
};
_Static_assert((int)IR_RULE_KIND_COUNT == (int)BEE_RULE__COUNT && (int)IR_DOMAIN_COUNT == (int)BEE_DOMAIN__COUNT,
	       "the IR's rule kinds are the manifest's");

#define IR_AUDIT_MODES(X)   \
	X(DENY, "deny")     \
	X(ALL, "all")       \
	X(NONE, "none")

enum ir_audit_mode {
#define X(name, str) IR_AUDIT_##name,
	IR_AUDIT_MODES(X)
#undef X
};

const char *ir_domain_name(enum ir_domain d);
const char *ir_rule_kind_key(enum ir_rule_kind k);     /* "read", "allow", ... */
enum ir_domain ir_rule_kind_domain(enum ir_rule_kind k);
const char *ir_audit_mode_name(enum ir_audit_mode m);

/* Permission bits carried by automaton accept states: the pack format's
 * (runtime/bee_names.h says what each means), under the IR's names. */
#define IR_PERM_READ BEE_PERM_READ
#define IR_PERM_WRITE BEE_PERM_WRITE
#define IR_PERM_EXEC BEE_PERM_EXEC
#define IR_PERM_EXEC_PINNED BEE_PERM_EXEC_PINNED
/* Not a permission but a mark (dfa.h: marks): deny rules grant it and
 * nothing takes it away, so the state of a denied path carries it and the
 * state of a path merely not granted does not. The global hooks that hide
 * metadata (stat, getxattr, notification marks: bpf/bee_guard.bpf.h)
 * refuse only paths that carry it; permission checks, attenuation, diff,
 * query and revoke ignore it. */
#define IR_PERM_DENIED BEE_PERM_DENIED

enum ir_net_family { IR_NET_IPV4 = 4, IR_NET_IPV6 = 6 };
enum ir_net_proto { IR_NET_TCP = 6, IR_NET_UDP = 17 };

/* One [net] entry: address/prefix, port range and protocol.
 * IPv4 addresses sit in addr[0..3]; an IPv4-mapped IPv6 address
 * (::ffff:a.b.c.d) is stored as IPv4 with its prefix reduced by 96. */
struct ir_net {
	enum ir_net_family family;
	uint8_t addr[16];          /* network byte order, host bits zero */
	uint8_t prefix;            /* 0..32 or 0..128 */
	uint16_t port_lo, port_hi; /* inclusive; 0-65535 for '*' */
	enum ir_net_proto proto;
};

/* One host name of [net] connect (compiler/hostname.h): the name in
 * canonical form, one port range and a protocol. It is enforced through
 * the session's DNS (loader/dns.c), never by the LPM tries. */
struct ir_host {
	const char *name;          /* canonical; "*.d" for a wildcard */
	uint16_t port_lo, port_hi; /* inclusive */
	enum ir_net_proto proto;
};

struct ir_rule {
	enum ir_rule_kind kind;
	unsigned index;            /* position in the policy, from 0 */
	struct loc loc;            /* the rule's string (or key, for env.set) */
	const char *text;          /* the glob/entry after ${NAME} expansion;
				    * for a pinned exec path the file's literal
				    * path (no '!', escapes resolved);
				    * the variable name for ENV_SET */
	union {
		struct { bool pinned; } exec;   /* EXEC_ALLOW */
		struct ir_net net;              /* NET_CONNECT, NET_BIND, NET_DENY */
		struct ir_host host;            /* NET_HOST */
		struct { const char *value; } env_set;  /* ENV_SET */
	};
};

struct ir_policy {
	struct arena arena;
	const struct source *src;
	unsigned version;
	const char *name;
	struct loc name_loc;
	const char *parent;        /* as written (expanded); NULL when absent */
	struct loc parent_loc;
	enum ir_audit_mode audit;
	/* [syscalls] allow: bit (1 << enum bee_syscall_group) per group the
	 * policy lets the tool use; where each is written, for diagnostics */
	uint32_t syscalls;
	struct loc syscalls_loc[BEE_SYSCALLS_COUNT];
	struct ir_rule *rules;
	size_t nrules;
	/* include = [...]: the names as written, resolved and merged by
	 * libbeec (include.c) into a policy without them */
	const char **includes;
	struct loc *includes_loc;
	size_t nincludes;
	/* included = [...]: what that merge recorded ("NAME PATH xxh3:HEX"),
	 * for the manifest and beec show; grants nothing */
	const char **included;
	size_t nincluded;
};

void ir_policy_free(struct ir_policy *p);

/* The groups of bits as their names in table order, space-separated, into
 * buf ("none" for 0); returns buf. */
const char *ir_syscalls_text(uint32_t bits, char *buf, size_t len);

/* Canonical text of the IR (--dump=ir): deterministic, one rule a line with
 * its index, kind, normal form and source line. */
int ir_dump(const struct ir_policy *p, FILE *out);

/* Formats a net entry in its normal form ("10.0.0.0/8:443/tcp",
 * "[::1]/128:1-1024/tcp") into buf (at least IR_NET_STRLEN bytes). */
#define IR_NET_STRLEN 80
void ir_net_format(const struct ir_net *n, char *buf);
/* The same for a host name ("api.github.com:443/tcp"): at least
 * IR_HOST_STRLEN bytes. */
#define IR_HOST_STRLEN 280
void ir_host_format(const struct ir_host *h, char *buf);

#endif
