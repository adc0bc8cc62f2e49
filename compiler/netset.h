/* SPDX-License-Identifier: GPL-2.0-only */
/* netset.h: [net] rules -> disjoint address x port sets -> LPM trie entries.
 *
 * Semantics. An endpoint is (direction, protocol, address, port). It is
 * allowed iff some grant of that direction and protocol (connect or bind)
 * contains it and no [net] deny of that protocol contains it: a deny beats
 * connect and bind alike. There is one address space: the IPv4 address
 * a.b.c.d IS the IPv6 address ::ffff:a.b.c.d, and an IPv4 rule a.b.c.d/p is
 * the IPv6 prefix ::ffff:a.b.c.d/(96+p). So an IPv6 rule that contains
 * ::ffff:0:0/96 (e.g. [::]/0) also governs every IPv4 address, and IPv4
 * rules govern the mapped IPv6 addresses.
 *
 * Lowering (runtime/bee_net.h has the map layout). The maps keep the two
 * families apart, so IPv6 rules are projected:
 *
 *   bee_net4 gets every IPv4 rule; every IPv6 rule of prefix p <= 96 that
 *            contains ::ffff:0:0/96, as 0.0.0.0/0; and every IPv6 rule inside
 *            ::ffff:0:0/96 (p > 96), as its low 32 bits /(p-96) (the IR
 *            already turns those into IPv4 rules; this keeps the set exact
 *            if one arrives anyway). IPv6 rules disjoint from the /96 are
 *            not in bee_net4.
 *   bee_net6 gets every IPv6 rule not inside ::ffff:0:0/96; lookups of
 *            mapped addresses never reach it.
 *
 * In each map and each (direction, protocol) slice, every distinct prefix
 * of a rule of that slice (its grants and the protocol's denies) is a
 * candidate entry, and its ports are the union of the port ranges of the
 * slice's grants that contain the prefix minus those of the denies that
 * contain it. An address's longest matching candidate then has exactly the
 * rules containing the address as its containing rules, so it decides. Two
 * kinds of candidate are dropped because no lookup answer depends on them:
 * one that allows no port while no kept entry contains it (a lookup that
 * would end there finds no entry instead, and absence denies the same), and
 * one that is shadowed (longer candidates cover all of it; in bee_net6,
 * ::ffff:0:0/96 counts as covered). Every other candidate is kept, also when
 * its ports equal those of the entry above it, so that its provenance stays
 * exact.
 *
 * The disjoint sets: the region of an entry is its prefix minus the longer
 * entries of its slice inside it. Regions partition every address that some
 * entry contains; a region has one allowed port set, the entry's ranges.
 *
 * Ownership: a netset owns its entries and copies of the [net] rules given
 * to netset_build(); the copies borrow text and loc (the IR and its source
 * must outlive the set). netset_free() releases it.
 */
#ifndef BEE_NETSET_H
#define BEE_NETSET_H

#include "bee_net.h"
#include "diag.h"
#include "ir.h"
#include "mem.h"
#include "net_eval.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct netset_limits {
	unsigned max_ranges;    /* port ranges per entry, at most BEE_NET_MAX_RANGES */
	unsigned max_entries;   /* entries per map */
};

#define NETSET_MAX_ENTRIES_DEFAULT 65536
#define NETSET_LIMITS_DEFAULT { BEE_NET_MAX_RANGES, NETSET_MAX_ENTRIES_DEFAULT }

struct netset_entry {
	enum ir_net_family family;   /* the map: IR_NET_IPV4 is bee_net4 */
	enum bee_net_dir dir;
	enum ir_net_proto proto;
	uint8_t addr[16];            /* network order; IPv4 in addr[0..3]; host bits zero */
	uint8_t prefix;              /* of the address: 0..32 or 0..128 */
	unsigned nranges;            /* 0 = every port denied */
	struct bee_net_range ranges[BEE_NET_MAX_RANGES];  /* sorted, disjoint, apart */
	/* provenance: positions in netset.rules of every rule that contains the
	 * prefix in this slice (the grants and denies that decided the ranges),
	 * ascending; the entry's prov record is its position in entries[] */
	unsigned *rules;
	unsigned nrules;
};

struct netset {
	struct arena arena;
	struct ir_rule *rules;          /* the [net] rules, in policy order */
	size_t nrules;
	struct netset_entry *entries;   /* bee_net4's, then bee_net6's; each map */
	size_t nentries;                /* sorted by (dir, proto, address, prefix) */
	size_t n4;                      /* entries[0..n4) are bee_net4's */
};

/* Lowers the [net] rules among rules[0..nrules) (other kinds are skipped).
 * limits may be NULL for NETSET_LIMITS_DEFAULT. Returns 0 and a new set in
 * *out, or -1 with errors queued in dc (an entry needing more port ranges
 * than the limit names the rules that make it) and *out NULL. */
int netset_build(const struct ir_rule *rules, size_t nrules, const struct netset_limits *limits,
		 struct diag_ctx *dc, struct netset **out);
void netset_free(struct netset *set);

/* Canonical text (--dump=net): each map, its entries in order, each with
 * its prov record number, slice, prefix, ports and the rules that decided
 * it (by policy index). Deterministic. */
int netset_dump(const struct netset *set, FILE *out);

/* The map images: keys and values in entry order (value.prov = position in
 * set->entries). Owned by the image; netset_image_free() releases them. */
struct netset_image {
	struct bee_net_key4 *keys4;
	struct bee_net_value *values4;
	size_t n4;
	struct bee_net_key6 *keys6;
	struct bee_net_value *values6;
	size_t n6;
};

int netset_image_build(const struct netset *set, struct netset_image *img);
void netset_image_free(struct netset_image *img);
/* A view of the image for the host evaluator (borrows img). */
struct net_eval_maps netset_image_maps(const struct netset_image *img);

/* A concrete endpoint that a child allows and its parent does not. */
struct netset_cex {
	enum bee_net_dir dir;
	enum ir_net_family family;   /* IPv4 also stands for its mapped IPv6 form */
	uint8_t addr[16];
	uint16_t port;
	enum ir_net_proto proto;
	const struct ir_rule *child_rule;    /* the child grant that allows it */
	const struct ir_rule *parent_deny;   /* the parent deny that refuses it, or
					      * NULL when no parent grant has it */
};

/* true when every endpoint that child allows, parent allows too. Otherwise
 * false and, when cex is not NULL, the counterexample: in the first of
 * (bee_net4, bee_net6) x (connect, bind) x (tcp, udp) that has one, the
 * lowest offending address (the first address of an offending region) with
 * the lowest offending port. Pointers in cex point into child and parent. */
bool netset_subset(const struct netset *child, const struct netset *parent,
		   struct netset_cex *cex);

/* "connect 10.0.0.0:443/tcp", "bind [2001:db8::1]:80/udp" */
#define NETSET_CEX_STRLEN 80
void netset_cex_format(const struct netset_cex *cex, char *buf);

const char *netset_dir_name(enum bee_net_dir dir);   /* "connect", "bind" */

#endif
