/* SPDX-License-Identifier: GPL-2.0-only */
/* bee-dns-server: the authoritative server the DNS tests start on
 * loopback (no network needed), built with ldns.
 *
 *   bee-dns-server PORTFILE LOG RECORD...
 *
 * RECORD is NAME=TYPE:DATA:TTL with TYPE A, AAAA or CNAME. It listens on
 * 127.0.0.1, udp and tcp on one port the kernel picks, writes that port to
 * PORTFILE, and answers each query for a name it holds (following its
 * CNAMEs, as a recursive resolver would hand them on); other names get
 * NXDOMAIN. Each query is a line of LOG: "udp|tcp NAME TYPE". It serves
 * until killed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ldns/ldns.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct rec {
	char name[256], type[8], data[256];
	unsigned ttl;
};

static struct rec recs[64];
static size_t nrecs;
static FILE *qlog;

static int rec_parse(const char *arg, struct rec *r)
{
	const char *eq = strchr(arg, '=');
	if (!eq || (size_t)(eq - arg) >= sizeof(r->name))
		return -1;
	memcpy(r->name, arg, (size_t)(eq - arg));
	r->name[eq - arg] = '\0';
	const char *c1 = strchr(eq + 1, ':'), *c2 = c1 ? strrchr(c1 + 1, ':') : NULL;
	if (!c1 || !c2 || c2 == c1 || (size_t)(c1 - eq - 1) >= sizeof(r->type) ||
	    (size_t)(c2 - c1 - 1) >= sizeof(r->data))
		return -1;
	memcpy(r->type, eq + 1, (size_t)(c1 - eq - 1));
	r->type[c1 - eq - 1] = '\0';
	memcpy(r->data, c1 + 1, (size_t)(c2 - c1 - 1));
	r->data[c2 - c1 - 1] = '\0';
	r->ttl = (unsigned)strtoul(c2 + 1, NULL, 10);
	return 0;
}

/* Appends the records of name for qtype (and its CNAMEs'), at most 8 links. */
static bool answer_name(ldns_pkt *p, const char *name, const char *qtype, int depth)
{
	bool found = false;
	for (size_t i = 0; i < nrecs && depth < 8; i++) {
		struct rec *r = &recs[i];
		if (strcasecmp(r->name, name) != 0)
			continue;
		bool cname = strcmp(r->type, "CNAME") == 0;
		if (!cname && strcmp(r->type, qtype) != 0) {
			found = true;   /* the name exists: NOERROR, no data */
			continue;
		}
		char text[600];
		ldns_rr *rr = NULL;
		int n = snprintf(text, sizeof(text), "%s. %u IN %s %s%s", r->name, r->ttl, r->type, r->data,
				 cname ? "." : "");
		if (n < 0 || (size_t)n >= sizeof(text) ||
		    ldns_rr_new_frm_str(&rr, text, 0, NULL, NULL) != LDNS_STATUS_OK)
			continue;
		ldns_pkt_push_rr(p, LDNS_SECTION_ANSWER, rr);
		found = true;
		if (cname)
			answer_name(p, r->data, qtype, depth + 1);
	}
	return found;
}

/* The answer to a query's wire bytes, as wire bytes (malloc'ed). */
static uint8_t *respond(const uint8_t *q, size_t qlen, size_t *alen, const char *via)
{
	ldns_pkt *qp = NULL;
	if (ldns_wire2pkt(&qp, q, qlen) != LDNS_STATUS_OK)
		return NULL;
	ldns_rr_list *ql = ldns_pkt_question(qp);
	if (!ql || ldns_rr_list_rr_count(ql) != 1) {
		ldns_pkt_free(qp);
		return NULL;
	}
	ldns_rr *qr = ldns_rr_list_rr(ql, 0);
	char *owner = ldns_rdf2str(ldns_rr_owner(qr));
	char *type = ldns_rr_type2str(ldns_rr_get_type(qr));
	size_t ol = owner ? strlen(owner) : 0;
	if (ol && owner[ol - 1] == '.')
		owner[ol - 1] = '\0';
	fprintf(qlog, "%s %s %s\n", via, owner ? owner : "?", type ? type : "?");
	fflush(qlog);
	ldns_pkt *ap = ldns_pkt_new();
	ldns_pkt_set_id(ap, ldns_pkt_id(qp));
	ldns_pkt_set_qr(ap, true);
	ldns_pkt_set_aa(ap, true);
	ldns_pkt_set_rd(ap, ldns_pkt_rd(qp));
	ldns_pkt_set_ra(ap, true);
	ldns_pkt_push_rr(ap, LDNS_SECTION_QUESTION, ldns_rr_clone(qr));
	if (!owner || !type || !answer_name(ap, owner, type, 0))
		ldns_pkt_set_rcode(ap, LDNS_RCODE_NXDOMAIN);
	uint8_t *out = NULL;
	if (ldns_pkt2wire(&out, ap, alen) != LDNS_STATUS_OK)
		out = NULL;
	free(owner);
	free(type);
	ldns_pkt_free(ap);
	ldns_pkt_free(qp);
	return out;
}

static int read_full(int fd, uint8_t *b, size_t n)
{
	for (size_t o = 0; o < n;) {
		ssize_t r = read(fd, b + o, n - o);
		if (r <= 0)
			return -1;
		o += (size_t)r;
	}
	return 0;
}

static void serve_tcp(int c)
{
	uint8_t lb[2], q[65535];
	while (read_full(c, lb, 2) == 0) {
		size_t ql = (size_t)(lb[0] << 8 | lb[1]), al;
		if (read_full(c, q, ql) < 0)
			break;
		uint8_t *a = respond(q, ql, &al, "tcp");
		if (!a)
			break;
		uint8_t hdr[2] = { (uint8_t)(al >> 8), (uint8_t)al };
		if (write(c, hdr, 2) != 2 || write(c, a, al) != (ssize_t)al) {
			free(a);
			break;
		}
		free(a);
	}
	close(c);
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: bee-dns-server PORTFILE LOG NAME=TYPE:DATA:TTL...\n");
		return 2;
	}
	for (int i = 3; i < argc; i++)
		if (nrecs == sizeof(recs) / sizeof(recs[0]) || rec_parse(argv[i], &recs[nrecs++]) < 0) {
			fprintf(stderr, "bee-dns-server: bad record '%s'\n", argv[i]);
			return 2;
		}
	qlog = fopen(argv[2], "a");
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);
	int u = -1, t = -1, one = 1, ok = 0;
	/* the kernel picks the udp port; tcp may find it taken: try again */
	for (int attempt = 0; attempt < 32 && !ok && qlog; attempt++) {
		if (u >= 0)
			close(u);
		if (t >= 0)
			close(t);
		sa = (struct sockaddr_in){ .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
		sl = sizeof(sa);
		u = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		t = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (u < 0 || t < 0)
			break;
		setsockopt(t, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		ok = bind(u, (struct sockaddr *)&sa, sl) == 0 && getsockname(u, (struct sockaddr *)&sa, &sl) == 0 &&
		     bind(t, (struct sockaddr *)&sa, sl) == 0 && listen(t, 16) == 0;
	}
	if (!ok) {
		fprintf(stderr, "bee-dns-server: %s\n", strerror(errno));
		return 1;
	}
	FILE *pf = fopen(argv[1], "w");
	if (!pf || fprintf(pf, "%u\n", ntohs(sa.sin_port)) < 0 || fclose(pf) != 0)
		return 1;
	for (;;) {
		struct pollfd p[2] = { { .fd = u, .events = POLLIN }, { .fd = t, .events = POLLIN } };
		if (poll(p, 2, -1) < 0)
			continue;
		if (p[0].revents & POLLIN) {
			uint8_t q[65535];
			struct sockaddr_storage from;
			socklen_t fl = sizeof(from);
			ssize_t n = recvfrom(u, q, sizeof(q), 0, (struct sockaddr *)&from, &fl);
			size_t al;
			uint8_t *a = n > 0 ? respond(q, (size_t)n, &al, "udp") : NULL;
			if (a)
				sendto(u, a, al, 0, (struct sockaddr *)&from, fl);
			free(a);
		}
		if (p[1].revents & POLLIN) {
			int c = accept4(t, NULL, NULL, SOCK_CLOEXEC);
			if (c >= 0)
				serve_tcp(c);
		}
	}
}
