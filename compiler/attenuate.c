/* SPDX-License-Identifier: GPL-2.0-only */
/* attenuate.c: child ⊆ parent, per domain, with counterexamples. */
#include "attenuate.h"
#include "mem.h"

#include "bee_hosts.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

const char *attenuate_perm_text(enum ir_domain d, uint32_t bits, char *buf, size_t len)
{
	buf[0] = '\0';
	const char *names[4] = { 0 };
	size_t n = 0;
	switch (d) {
	case IR_DOMAIN_FS:
		if (bits & IR_PERM_READ)
			names[n++] = "read";
		if (bits & IR_PERM_WRITE)
			names[n++] = "write";
		break;
	case IR_DOMAIN_EXEC:
		if (bits & IR_PERM_EXEC)
			names[n++] = "execute";
		else if (bits & IR_PERM_EXEC_PINNED)
			names[n++] = "execute (pinned)";
		break;
	case IR_DOMAIN_ENV:
		if (bits & IR_PERM_READ)
			names[n++] = "read";
		break;
	case IR_DOMAIN_NET:
	case IR_DOMAIN_COUNT:
		break;
	}
	for (size_t i = 0; i < n; i++) {
		strncat(buf, i ? " and " : "", len - strlen(buf) - 1);
		strncat(buf, names[i], len - strlen(buf) - 1);
	}
	return buf;
}

static int attenuate_dfa(const struct lowered *child, const struct lowered *parent,
			 enum ir_domain d, const struct beec_limits *lim, struct attenuate_widening *out)
{
	struct dfa_widening w;
	out->limit = lim->search_states;
	int rc = dfa_widening_find_bounded(child->dfa[d], parent->dfa[d], out->limit, &w);
	if (rc == -E2BIG) {
		/* no proof is no subset */
		out->too_large = true;
		out->searched = w.searched;
		dfa_widening_fini(&w);
		return 1;
	}
	if (rc < 0 || !w.found) {
		dfa_widening_fini(&w);
		return 0;
	}
	snprintf(out->example, sizeof(out->example), "%s", w.example);
	out->extra = w.extra;
	out->parent_perms = w.parent_perms;
	out->child_rule = w.nchild_rules ? lowered_rule(child, w.child_rules[0]) : NULL;
	out->parent_rule = w.nparent_rules ? lowered_rule(parent, w.parent_rules[0]) : NULL;
	dfa_widening_fini(&w);
	return 1;
}

/* The first port of [lo, hi] that no parent name covering name grants
 * for proto, or -1 when every one is granted. */
static long host_uncovered(const struct lowered *parent, const struct ir_host *h)
{
	uint32_t x = h->port_lo;
	while (x <= h->port_hi) {
		uint32_t next = x;
		for (size_t i = 0; i < parent->nhosts; i++) {
			const struct ir_host *p = &parent->hosts[i]->host;
			if (p->proto == h->proto && p->port_lo <= x && x <= p->port_hi &&
			    bee_host_covers(p->name, h->name) && (uint32_t)p->port_hi + 1 > next)
				next = (uint32_t)p->port_hi + 1;
		}
		if (next == x)
			return (long)x;
		x = next;
	}
	return -1;
}

/* true when the child denies every endpoint of the parent's deny d within
 * the ports [lo, hi]: one child deny holds it whole */
static bool deny_kept(const struct lowered *child, const struct ir_net *d, uint16_t lo, uint16_t hi)
{
	const struct ir_policy *ir = child->ir;
	for (size_t i = 0; i < ir->nrules; i++) {
		const struct ir_rule *r = &ir->rules[i];
		if (r->kind != IR_RULE_NET_DENY || r->net.family != d->family || r->net.proto != d->proto ||
		    r->net.prefix > d->prefix || r->net.port_lo > lo || r->net.port_hi < hi)
			continue;
		bool in = true;
		for (unsigned b = 0; b < r->net.prefix && in; b++)
			in = ((r->net.addr[b / 8] ^ d->addr[b / 8]) & (0x80u >> (b % 8))) == 0;
		if (in)
			return true;
	}
	return false;
}

/* Host names: 1 and w filled at the first child name that widens. */
static int attenuate_hosts(const struct lowered *child, const struct lowered *parent,
			   struct attenuate_widening *w)
{
	for (size_t i = 0; i < child->nhosts; i++) {
		const struct ir_rule *c = child->hosts[i];
		const struct ir_host *h = &c->host;
		long port = host_uncovered(parent, h);
		const struct ir_rule *deny = NULL;
		const struct ir_policy *pir = parent->ir;
		for (size_t j = 0; port < 0 && j < pir->nrules && !deny; j++) {
			const struct ir_rule *d = &pir->rules[j];
			if (d->kind != IR_RULE_NET_DENY || d->net.proto != h->proto || d->net.port_hi < h->port_lo ||
			    d->net.port_lo > h->port_hi)
				continue;
			uint16_t lo = d->net.port_lo > h->port_lo ? d->net.port_lo : h->port_lo;
			uint16_t hi = d->net.port_hi < h->port_hi ? d->net.port_hi : h->port_hi;
			if (!deny_kept(child, &d->net, lo, hi)) {
				deny = d;
				port = lo;
			}
		}
		if (port < 0)
			continue;
		w->host = true;
		w->child_rule = c;
		w->parent_rule = deny;
		snprintf(w->example, sizeof(w->example), "%s:%ld/%s", h->name, port,
			 h->proto == IR_NET_UDP ? "udp" : "tcp");
		return 1;
	}
	return 0;
}

static int attenuate_domain_body(const struct lowered *child, const struct lowered *parent,
				 enum ir_domain d, const struct beec_limits *limits,
				 struct attenuate_widening *w)
{
	struct beec_limits lim = beec_limits_resolve(limits);
	memset(w, 0, sizeof(*w));
	w->domain = d;
	switch (d) {
	case IR_DOMAIN_FS:
	case IR_DOMAIN_EXEC:
	case IR_DOMAIN_ENV:
		return attenuate_dfa(child, parent, d, &lim, w);
	case IR_DOMAIN_NET:
		if (netset_subset(child->net, parent->net, &w->net))
			return attenuate_hosts(child, parent, w);
		/* the counterexample points at the netsets' copies of the rules;
		 * name the IR's, which outlive the lowering (beec diff frees each
		 * re-lowered policy and keeps the widening: fuzz_diff found it) */
		if (w->net.child_rule)
			w->net.child_rule = lowered_rule(child, w->net.child_rule->index);
		if (w->net.parent_deny)
			w->net.parent_deny = lowered_rule(parent, w->net.parent_deny->index);
		w->child_rule = w->net.child_rule;
		w->parent_rule = w->net.parent_deny;
		return 1;
	case IR_DOMAIN_COUNT:
		break;
	}
	return 0;
}

int attenuate_domain(const struct lowered *child, const struct lowered *parent,
		     enum ir_domain d, struct attenuate_widening *w)
{
	return MEM_PROTECT(-ENOMEM, attenuate_domain_body(child, parent, d, NULL, w));
}

int attenuate_domain_opts(const struct lowered *child, const struct lowered *parent,
			  enum ir_domain d, const struct beec_limits *limits, struct attenuate_widening *w)
{
	return MEM_PROTECT(-ENOMEM, attenuate_domain_body(child, parent, d, limits, w));
}

static void attenuate_report(const struct attenuate_widening *w, struct diag_ctx *dc)
{
	struct loc at = w->child_rule ? w->child_rule->loc : LOC_NONE;
	if (w->too_large) {
		diag_error(dc, LOC_NONE,
			   "cannot prove [%s] of the child a subset of its parent: the search reached %zu "
			   "states, more than the limit of %zu", ir_domain_name(w->domain), w->searched,
			   w->limit);
		beec_limit_note(dc, BEEC_LIMIT_search_states, (unsigned)w->limit);
		return;
	}
	if (w->domain == IR_DOMAIN_NET && w->host) {
		diag_error(dc, at, "child allows connect to host '%s', parent does not", w->example);
		if (w->parent_rule) {
			diag_note(dc, w->parent_rule->loc, "the parent denies addresses here that the name may "
				  "resolve to, and the child does not deny them");
		} else {
			diag_note(dc, LOC_NONE, "no host name of the parent covers '%s' (a name never matches "
				  "an address rule)", w->example);
		}
		return;
	}
	if (w->domain == IR_DOMAIN_NET) {
		char ep[NETSET_CEX_STRLEN];
		netset_cex_format(&w->net, ep);
		diag_error(dc, at, "child allows %s, parent does not", ep);
		diag_note(dc, LOC_NONE, "%s: child grants %s, parent does not", ep,
			  netset_dir_name(w->net.dir));
		if (w->parent_rule)
			diag_note(dc, w->parent_rule->loc, "the parent denies it here");
		return;
	}
	char perms[64];
	attenuate_perm_text(w->domain, w->extra, perms, sizeof(perms));
	const char *what = w->domain == IR_DOMAIN_ENV ? "variable" : w->domain == IR_DOMAIN_EXEC ? "binary" : "path";
	diag_error(dc, at, "child grants %s on %s '%s', parent does not", perms, what, w->example);
	diag_note(dc, LOC_NONE, "%s: child grants %s, parent does not", w->example, perms);
	if (w->parent_rule) {
		char pp[64];
		attenuate_perm_text(w->domain, w->parent_perms, pp, sizeof(pp));
		diag_note(dc, w->parent_rule->loc, "the parent's rule here gives '%s' %s", w->example,
			  pp[0] ? pp : "nothing");
	}
}

/* [syscalls]: every group the child allows, the parent allows too. */
static int attenuate_syscalls(const struct ir_policy *child, const struct ir_policy *parent,
			      struct diag_ctx *dc)
{
	uint32_t extra = child->syscalls & ~parent->syscalls;
	for (unsigned g = 0; g < BEE_SYSCALLS_COUNT; g++) {
		if (!(extra & (1u << g)))
			continue;
		diag_error(dc, child->syscalls_loc[g], "child allows system call group '%s', parent does not",
			   bee_syscall_groups[g].name);
		diag_note(dc, LOC_NONE, "the parent's [syscalls] allow does not name '%s'",
			  bee_syscall_groups[g].name);
	}
	return extra != 0;
}

static int attenuate_check_body(const struct lowered *child, const struct lowered *parent,
				const struct beec_limits *lim, struct diag_ctx *dc)
{
	static const enum ir_domain order[] = { IR_DOMAIN_FS, IR_DOMAIN_EXEC, IR_DOMAIN_ENV, IR_DOMAIN_NET };
	int widened = 0;
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		struct attenuate_widening w;
		if (attenuate_domain_body(child, parent, order[i], lim, &w)) {
			attenuate_report(&w, dc);
			if (w.too_large)
				widened = -E2BIG;
			else if (widened == 0)
				widened = 1;
		}
	}
	if (attenuate_syscalls(child->ir, parent->ir, dc) && widened == 0)
		widened = 1;
	return widened;
}

int attenuate_check(const struct lowered *child, const struct lowered *parent, struct diag_ctx *dc)
{
	return MEM_PROTECT(-ENOMEM, attenuate_check_body(child, parent, NULL, dc));
}

int attenuate_check_opts(const struct lowered *child, const struct lowered *parent,
			 const struct beec_limits *lim, struct diag_ctx *dc)
{
	return MEM_PROTECT(-ENOMEM, attenuate_check_body(child, parent, lim, dc));
}
