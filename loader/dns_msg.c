/* SPDX-License-Identifier: GPL-2.0-only */
/* dns_msg.c: what the session's DNS stub (dns.c) reads of a message, by
 * ldns's wire parser (opened when a stub starts: bee_dns_msg_open), and
 * the text of an upstream address. No BPF, no sockets:
 * loader/fuzz/fuzz_dns.c fuzzes it alone. */
#include "internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ldns/ldns.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef BEE_LDNS_LINKED

/* a static build (the VM's initramfs): ldns is linked in */
int bee_dns_msg_open(char *why, size_t whysize)
{
	(void)why, (void)whysize;
	return 0;
}

#else

#include <dlfcn.h>

/* ldns is opened by the first session whose policy names a host, not
 * linked: it brings libssl and libcrypto, whose five thousand symbol
 * bindings were half of every bee-load start (`bee-load exec` included)
 * on this project's hosts. Its functions by name: */
#define LDNS_FNS(X)                                                                                \
	X(ldns_wire2pkt) X(ldns_pkt_free) X(ldns_pkt_question) X(ldns_pkt_answer) X(ldns_pkt_id)  \
	X(ldns_pkt_qr) X(ldns_pkt_tc) X(ldns_pkt_get_rcode) X(ldns_rr_list_rr_count)               \
	X(ldns_rr_list_rr) X(ldns_rr_owner) X(ldns_rr_get_type) X(ldns_rr_rdf) X(ldns_rr_ttl)      \
	X(ldns_rdf_get_type) X(ldns_rdf2str) X(ldns_rdf_size) X(ldns_rdf_data)

static struct {
#define LDNS_FN_PTR(name) __typeof__(name) *name;
	LDNS_FNS(LDNS_FN_PTR)
#undef LDNS_FN_PTR
} ld;

int bee_dns_msg_open(char *why, size_t whysize)
{
	static void *h;
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	int err = 0;
	pthread_mutex_lock(&lock);
	if (h)
		goto out;
	void *lib = dlopen("libldns.so.3", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		snprintf(why, whysize, "libldns.so.3: %s", dlerror());
		err = -ENOENT;
		goto out;
	}
#define LDNS_FN_SYM(name)                                                                  \
	if (!(ld.name = (__typeof__(name) *)dlsym(lib, #name))) {                          \
		snprintf(why, whysize, "libldns.so.3 has no '%s'", #name);                 \
		dlclose(lib);                                                              \
		err = -ENOENT;                                                             \
		goto out;                                                                  \
	}
	LDNS_FNS(LDNS_FN_SYM)
#undef LDNS_FN_SYM
	h = lib;
out:
	pthread_mutex_unlock(&lock);
	return err;
}

#define LDNS_FN_CALL(name) ld.name
#define ldns_wire2pkt LDNS_FN_CALL(ldns_wire2pkt)
#define ldns_pkt_free LDNS_FN_CALL(ldns_pkt_free)
#define ldns_pkt_question LDNS_FN_CALL(ldns_pkt_question)
#define ldns_pkt_answer LDNS_FN_CALL(ldns_pkt_answer)
#define ldns_pkt_id LDNS_FN_CALL(ldns_pkt_id)
#define ldns_pkt_qr LDNS_FN_CALL(ldns_pkt_qr)
#define ldns_pkt_tc LDNS_FN_CALL(ldns_pkt_tc)
#define ldns_pkt_get_rcode LDNS_FN_CALL(ldns_pkt_get_rcode)
#define ldns_rr_list_rr_count LDNS_FN_CALL(ldns_rr_list_rr_count)
#define ldns_rr_list_rr LDNS_FN_CALL(ldns_rr_list_rr)
#define ldns_rr_owner LDNS_FN_CALL(ldns_rr_owner)
#define ldns_rr_get_type LDNS_FN_CALL(ldns_rr_get_type)
#define ldns_rr_rdf LDNS_FN_CALL(ldns_rr_rdf)
#define ldns_rr_ttl LDNS_FN_CALL(ldns_rr_ttl)
#define ldns_rdf_get_type LDNS_FN_CALL(ldns_rdf_get_type)
#define ldns_rdf2str LDNS_FN_CALL(ldns_rdf2str)
#define ldns_rdf_size LDNS_FN_CALL(ldns_rdf_size)
#define ldns_rdf_data LDNS_FN_CALL(ldns_rdf_data)

#endif

/* A name's text in canonical form (lower case, no final dot): 0 or -1. */
static int dname_text(const ldns_rdf *rdf, char out[BEE_HOST_NAME_MAX + 2])
{
	if (!rdf || ldns_rdf_get_type(rdf) != LDNS_RDF_TYPE_DNAME)
		return -1;
	char *s = ldns_rdf2str(rdf);
	if (!s)
		return -1;
	size_t n = strlen(s);
	if (n && s[n - 1] == '.')
		n--;
	/* a byte that is not a name's (ldns escapes it) matches no policy name */
	if (n > BEE_HOST_NAME_MAX || strchr(s, '\\') || strchr(s, '"')) {
		free(s);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		out[i] = (char)(s[i] >= 'A' && s[i] <= 'Z' ? s[i] - 'A' + 'a' : s[i]);
	out[n] = '\0';
	free(s);
	return 0;
}

int bee_dns_answer_parse(const uint8_t *msg, size_t len, struct bee_dns_answer *a)
{
	ldns_pkt *p = NULL;
	char why[256];
	memset(a, 0, sizeof(*a));
	if (bee_dns_msg_open(why, sizeof(why)) < 0 || ldns_wire2pkt(&p, msg, len) != LDNS_STATUS_OK)
		return -EINVAL;
	int err = -EINVAL;
	ldns_rr_list *q = ldns_pkt_question(p);
	if (!q || ldns_rr_list_rr_count(q) != 1 || dname_text(ldns_rr_owner(ldns_rr_list_rr(q, 0)), a->qname) < 0)
		goto out;
	a->id = ldns_pkt_id(p);
	a->qtype = (uint16_t)ldns_rr_get_type(ldns_rr_list_rr(q, 0));
	a->response = ldns_pkt_qr(p);
	a->truncated = ldns_pkt_tc(p);
	a->rcode = (uint8_t)ldns_pkt_get_rcode(p);
	/* the chain: from the asked name through CNAMEs, at most BEE_DNS_MAX_CHAIN links */
	char chain[BEE_DNS_MAX_CHAIN + 1][BEE_HOST_NAME_MAX + 2];
	uint32_t chain_ttl = UINT32_MAX;
	size_t nchain = 1;
	snprintf(chain[0], sizeof(chain[0]), "%s", a->qname);
	ldns_rr_list *an = ldns_pkt_answer(p);
	size_t nan = an ? ldns_rr_list_rr_count(an) : 0;
	for (bool grew = true; grew && nchain <= BEE_DNS_MAX_CHAIN;) {
		grew = false;
		for (size_t i = 0; i < nan && nchain <= BEE_DNS_MAX_CHAIN; i++) {
			ldns_rr *rr = ldns_rr_list_rr(an, i);
			char owner[BEE_HOST_NAME_MAX + 2], target[BEE_HOST_NAME_MAX + 2];
			if (ldns_rr_get_type(rr) != LDNS_RR_TYPE_CNAME || dname_text(ldns_rr_owner(rr), owner) < 0 ||
			    strcmp(owner, chain[nchain - 1]) != 0 || dname_text(ldns_rr_rdf(rr, 0), target) < 0)
				continue;
			bool seen = false;
			for (size_t k = 0; k < nchain; k++)
				seen |= strcmp(chain[k], target) == 0;
			if (seen)
				continue;   /* a loop: the chain ends here */
			snprintf(chain[nchain++], sizeof(chain[0]), "%s", target);
			if (ldns_rr_ttl(rr) < chain_ttl)
				chain_ttl = ldns_rr_ttl(rr);
			grew = true;
		}
	}
	a->chain = (unsigned)nchain - 1;
	for (size_t i = 0; i < nan && a->naddrs < BEE_DNS_MAX_ADDRS; i++) {
		ldns_rr *rr = ldns_rr_list_rr(an, i);
		ldns_rr_type t = ldns_rr_get_type(rr);
		char owner[BEE_HOST_NAME_MAX + 2];
		if ((t != LDNS_RR_TYPE_A && t != LDNS_RR_TYPE_AAAA) || dname_text(ldns_rr_owner(rr), owner) < 0)
			continue;
		bool in = false;
		for (size_t k = 0; k < nchain; k++)
			in |= strcmp(chain[k], owner) == 0;
		const ldns_rdf *d = ldns_rr_rdf(rr, 0);
		size_t want = t == LDNS_RR_TYPE_A ? 4 : 16;
		if (!in || !d || ldns_rdf_size(d) != want)
			continue;
		struct bee_dns_addr *x = &a->addrs[a->naddrs++];
		x->family = t == LDNS_RR_TYPE_A ? 4 : 6;
		memset(x->addr, 0, sizeof(x->addr));
		memcpy(x->addr, ldns_rdf_data(d), want);
		x->ttl = ldns_rr_ttl(rr) < chain_ttl ? ldns_rr_ttl(rr) : chain_ttl;
	}
	err = 0;
out:
	ldns_pkt_free(p);
	return err;
}

int bee_dns_upstream_parse(const char *text, struct sockaddr_storage *ss, socklen_t *len)
{
	char host[64];
	unsigned long port = 53;
	const char *colon;
	memset(ss, 0, sizeof(*ss));
	if (text[0] == '[') {
		const char *rb = strchr(text, ']');
		if (!rb || (size_t)(rb - text - 1) >= sizeof(host))
			return -EINVAL;
		memcpy(host, text + 1, (size_t)(rb - text - 1));
		host[rb - text - 1] = '\0';
		if (rb[1] && rb[1] != ':')
			return -EINVAL;
		colon = rb[1] == ':' ? rb + 1 : NULL;
	} else {
		colon = strchr(text, ':');
		if (colon && strchr(colon + 1, ':'))
			colon = NULL;   /* a bare IPv6 address */
		size_t hl = colon ? (size_t)(colon - text) : strlen(text);
		if (hl >= sizeof(host))
			return -EINVAL;
		memcpy(host, text, hl);
		host[hl] = '\0';
	}
	if (colon) {
		char *end;
		port = strtoul(colon + 1, &end, 10);
		if (!colon[1] || *end || port == 0 || port > 65535)
			return -EINVAL;
	}
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
	if (inet_pton(AF_INET, host, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)port);
		*len = sizeof(*s4);
		return 0;
	}
	if (inet_pton(AF_INET6, host, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		*len = sizeof(*s6);
		return 0;
	}
	return -EINVAL;
}
