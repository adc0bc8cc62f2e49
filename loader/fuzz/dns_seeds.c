/* SPDX-License-Identifier: GPL-2.0-only */
/* dns_seeds.c: writes DNS messages built with ldns into a directory, the
 * seeds of the DNS fuzzer's corpus (tools/fuzz seed): a query, answers
 * with A and AAAA records, a CNAME chain, a CNAME loop, a truncated answer,
 * an NXDOMAIN, and upstream address texts. Usage: dns_seeds DIR */
#include "seed_file.h"

#include <ldns/ldns.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int seed_write(const char *dir, const char *name, const void *data, size_t len)
{
	return seed_file(dir, name, data, len, "", 0);
}

/* A message asking qname, answered by the records (zone-file lines). */
static int seed_msg(const char *dir, const char *name, const char *qname, bool response, bool tc,
		    ldns_pkt_rcode rcode, const char *const *rrs)
{
	ldns_pkt *p = ldns_pkt_query_new(ldns_dname_new_frm_str(qname), LDNS_RR_TYPE_A, LDNS_RR_CLASS_IN,
					 LDNS_RD);
	ldns_pkt_set_id(p, 0x1234);
	ldns_pkt_set_qr(p, response);
	ldns_pkt_set_tc(p, tc);
	ldns_pkt_set_rcode(p, (uint8_t)rcode);
	for (size_t i = 0; rrs && rrs[i]; i++) {
		ldns_rr *rr = NULL;
		if (ldns_rr_new_frm_str(&rr, rrs[i], 0, NULL, NULL) != LDNS_STATUS_OK) {
			fprintf(stderr, "dns_seeds: bad record '%s'\n", rrs[i]);
			return -1;
		}
		ldns_pkt_push_rr(p, LDNS_SECTION_ANSWER, rr);
	}
	uint8_t *wire = NULL;
	size_t len = 0;
	int rc = ldns_pkt2wire(&wire, p, &len) == LDNS_STATUS_OK ? seed_write(dir, name, wire, len) : -1;
	free(wire);
	ldns_pkt_free(p);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: dns_seeds DIR\n");
		return 2;
	}
	const char *d = argv[1];
	static const char *const a[] = { "api.example.com. 60 IN A 192.0.2.1", "api.example.com. 60 IN A 192.0.2.2",
					 NULL };
	static const char *const aaaa[] = { "api.example.com. 60 IN AAAA 2001:db8::1",
					    "api.example.com. 60 IN AAAA ::ffff:192.0.2.9", NULL };
	static const char *const chain[] = { "Alias.Example.COM. 300 IN CNAME cdn.example.net.",
					     "cdn.example.net. 30 IN CNAME edge.example.org.",
					     "edge.example.org. 20 IN A 198.51.100.7",
					     "other.example.org. 20 IN A 203.0.113.1", NULL };
	static const char *const loop[] = { "a.example. 5 IN CNAME b.example.", "b.example. 5 IN CNAME a.example.",
					    "a.example. 5 IN A 192.0.2.3", NULL };
	int rc = 0;
	rc |= seed_msg(d, "query", "api.example.com.", false, false, LDNS_RCODE_NOERROR, NULL);
	rc |= seed_msg(d, "a", "api.example.com.", true, false, LDNS_RCODE_NOERROR, a);
	rc |= seed_msg(d, "aaaa", "api.example.com.", true, false, LDNS_RCODE_NOERROR, aaaa);
	rc |= seed_msg(d, "cname-chain", "alias.example.com.", true, false, LDNS_RCODE_NOERROR, chain);
	rc |= seed_msg(d, "cname-loop", "a.example.", true, false, LDNS_RCODE_NOERROR, loop);
	rc |= seed_msg(d, "truncated", "api.example.com.", true, true, LDNS_RCODE_NOERROR, NULL);
	rc |= seed_msg(d, "nxdomain", "nope.example.", true, false, LDNS_RCODE_NXDOMAIN, NULL);
	static const char *const ups[] = { "127.0.0.1:53", "10.0.0.1", "[::1]:5353", "::1", "[fe80::1%eth0]:53" };
	for (size_t i = 0; i < sizeof(ups) / sizeof(ups[0]); i++) {
		char name[32];
		snprintf(name, sizeof(name), "upstream-%zu", i);
		rc |= seed_write(d, name, ups[i], strlen(ups[i]));
	}
	return rc ? 1 : 0;
}
