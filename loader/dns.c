/* SPDX-License-Identifier: GPL-2.0-only */
/* dns.c: the session's DNS stub, for policies that name hosts in [net]
 * connect (docs/bee-load.md "Host names and the session's DNS").
 *
 *   tool ── udp/tcp to any address, port 53 ──► cgroup connect4|6, sendmsg4|6
 *        (bee_dns_redirect: to the stub's address in bee_state)
 *        ──► the stub (a thread of the process that holds the session, outside
 *            its cgroup) ── the query, new id ──► the upstream resolver
 *        ◄── the answer: every name is answered (tools resolve normally);
 *            for a name of the policy the A/AAAA records at the end of the
 *            CNAME chain from the asked name are admitted into the session's
 *            own bee_net4/6 with the name's protocol and ports, until their
 *            TTL (at least the floor) runs out; names outside the policy are
 *            recorded (kind Network, action Resolve)
 *        recvmsg4|6 gives the answer the source the tool asked.
 *
 * Admissions. The session gets its own copy of bee_net4 and bee_net6 at
 * open (cache.c's bee_session_map, grown by the limit of admissions), so a
 * name's addresses are this session's only. One address's entry is the
 * full-prefix key (connect, protocol, address) whose ports are the union of
 * what the address had before (its longest match when it was first
 * admitted: the pack's, or a revoke's narrowing) and every live admission
 * of it, each less the policy's [net] denies that contain the address (the
 * pack's bee_hosts image carries them): a deny beats a name as it beats an
 * address. When the last admission of an address expires its entry goes
 * back to what it was: deleted, or the pack's own value when the pack had
 * an entry of that very key. The entry's provenance is BEE_NET_PROV_HOST
 * and the admission's index, which names the host in the audit record.
 *
 * Limits: BEE_DNS_MAX_ADMITTED admissions at once; one more is refused,
 * recorded (Resolve, Deny, "admission limit") and never silently allowed;
 * an entry that would need more than BEE_NET_MAX_RANGES port ranges too.
 *
 * The parser of answers (bee_dns_answer_parse, dns_msg.c) is ldns's wire
 * parser and nothing else; loader/fuzz/fuzz_dns.c fuzzes it.
 */
#include "internal.h"

#include "bee_hosts.h"
#include "bee_names.h"
#include "bee_net.h"
#include "bee_session.h"
#include "net_eval.h"

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define DNS_MSG_MAX 65535
#define UPSTREAM_TIMEOUT_MS 5000
#define TCP_TIMEOUT_MS 5000
#define MAX_PENDING 256
#define MAX_TCP 64
#define TTL_CAP_S 86400            /* an admission lasts at most a day, whatever the TTL */

struct dns_addr {                  /* one (address, protocol) with admissions */
	uint8_t family, proto;
	uint8_t addr[16];
	bool used, exact;              /* exact: the pack has an entry of this very key */
	struct bee_net_value base;     /* what it had before (exact: to put back) */
};

struct dns_adm {                   /* one admission: an address for a name's rule */
	bool live;
	uint32_t slot;                 /* its struct dns_addr */
	uint16_t lo, hi;
	uint32_t rule;
	int64_t expires_ms;
	char host[BEE_HOST_NAME_MAX + 1];   /* the name asked */
};

struct pending {                   /* a udp query upstream */
	int fd;                        /* connected to the upstream */
	uint16_t id, client_id;
	int64_t deadline_ms;
	int client_fd;                 /* the stub's socket it came on */
	struct sockaddr_storage client;
	socklen_t client_len;
};

struct tcp_conn {
	int fd;
	int64_t deadline_ms;
	size_t have;
	uint8_t buf[2 + DNS_MSG_MAX];
};

struct bee_dns {
	pthread_t thread;
	bool running;
	int wake[2];
	int udp4, tcp4, udp6, tcp6;
	uint16_t port4, port6;         /* host order */
	struct sockaddr_storage up;
	socklen_t up_len;
	char up_text[80];
	unsigned ttl_floor_s;
	const struct bee_host_rec *recs;   /* the pack's bee_hosts: names, then denies */
	size_t nrecs;
	const uint8_t *img4, *img6;        /* the pack's bee_net4/6 records */
	size_t n4, n6, w4, w6;
	int net4, net6;                /* the session's own copies */
	pthread_mutex_t lock;          /* adm, for bee_dns_host from the audit relay */
	struct dns_adm adm[BEE_DNS_MAX_ADMITTED];
	struct dns_addr addrs[BEE_DNS_MAX_ADMITTED];
	uint32_t next_adm;
	struct pending pend[MAX_PENDING];
	size_t npend;
	struct tcp_conn *tcp[MAX_TCP];
	size_t ntcp;
	uint8_t port_bits[65536 / 8], port_name[65536 / 8];   /* addr_write's, under lock */
	uint8_t tcp_ans[2 + DNS_MSG_MAX];                      /* tcp_query's, on the thread */
	bee_dns_audit_fn audit;
	void *audit_ctx;
	bee_warn_fn warn;
	void *warn_ctx;
};

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- admissions ------------------------------------------------------------------------- */

static bool prefix_has(const uint8_t *net, unsigned prefix, const uint8_t *addr)
{
	for (unsigned b = 0; b < prefix; b++)
		if (((net[b / 8] ^ addr[b / 8]) & (0x80u >> (b % 8))) != 0)
			return false;
	return true;
}

/* An IPv4-mapped IPv6 address is the IPv4 endpoint (runtime/bee_net.h). */
static void addr_normal(uint8_t *family, uint8_t addr[16])
{
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	if (*family == 6 && memcmp(addr, mapped, 12) == 0) {
		memmove(addr, addr + 12, 4);
		memset(addr + 4, 0, 12);
		*family = 4;
	}
}

static void key_make(uint8_t family, uint8_t proto, const uint8_t addr[16], struct bee_net_key4 *k4,
		     struct bee_net_key6 *k6)
{
	memset(k4, 0, sizeof(*k4));
	memset(k6, 0, sizeof(*k6));
	k4->prefixlen = BEE_NET4_MAX_PREFIXLEN;
	k4->dir = BEE_NET_CONNECT;
	k4->proto = proto;
	memcpy(k4->addr, addr, 4);
	k6->prefixlen = BEE_NET6_MAX_PREFIXLEN;
	k6->dir = BEE_NET_CONNECT;
	k6->proto = proto;
	memcpy(k6->addr, addr, 16);
	(void)family;
}

/* Whether the pack has an entry of this very key, and its value. */
static bool pack_exact(const struct bee_dns *d, uint8_t family, const void *key, struct bee_net_value *v)
{
	const uint8_t *img = family == 4 ? d->img4 : d->img6;
	size_t n = family == 4 ? d->n4 : d->n6, w = family == 4 ? d->w4 : d->w6;
	size_t ks = family == 4 ? sizeof(struct bee_net_key4) : sizeof(struct bee_net_key6);
	for (size_t i = 0; i < n; i++)
		if (memcmp(img + i * w, key, ks) == 0) {
			memcpy(v, img + i * w + ks, sizeof(*v));
			return true;
		}
	return false;
}

/* The (address, protocol)'s slot, made from the live map the first time. */
static long addr_slot(struct bee_dns *d, uint8_t family, uint8_t proto, const uint8_t addr[16])
{
	long free_slot = -1;
	for (uint32_t i = 0; i < BEE_DNS_MAX_ADMITTED; i++) {
		struct dns_addr *s = &d->addrs[i];
		if (s->used && s->family == family && s->proto == proto && memcmp(s->addr, addr, 16) == 0)
			return i;
		if (!s->used && free_slot < 0)
			free_slot = i;
	}
	if (free_slot < 0)
		return -E2BIG;
	struct dns_addr *s = &d->addrs[free_slot];
	struct bee_net_key4 k4;
	struct bee_net_key6 k6;
	key_make(family, proto, addr, &k4, &k6);
	memset(s, 0, sizeof(*s));
	s->family = family;
	s->proto = proto;
	memcpy(s->addr, addr, 16);
	s->exact = pack_exact(d, family, family == 4 ? (void *)&k4 : (void *)&k6, &s->base);
	/* what the session has now there: its longest match, or nothing */
	if (bpf_map_lookup_elem(family == 4 ? d->net4 : d->net6, family == 4 ? (void *)&k4 : (void *)&k6,
				&s->base) < 0)
		memset(&s->base, 0, sizeof(s->base));
	s->used = true;
	return free_slot;
}

static void ports_set(uint8_t *bits, unsigned lo, unsigned hi, bool on)
{
	for (unsigned p = lo; p <= hi; p++) {
		if (p % 8 == 0 && p + 7 <= hi) {   /* a whole byte at once */
			bits[p / 8] = on ? 0xff : 0;
			p += 7;
			continue;
		}
		if (on)
			bits[p / 8] |= (uint8_t)(1u << (p % 8));
		else
			bits[p / 8] &= (uint8_t)~(1u << (p % 8));
	}
}

/* Writes the entry of address slot i from its base and live admissions:
 * 0, -E2BIG (more port ranges than a value holds: nothing written) or a
 * negative errno of the map. */
static int addr_write(struct bee_dns *d, uint32_t i)
{
	struct dns_addr *s = &d->addrs[i];
	uint8_t *bits = d->port_bits, *name = d->port_name;
	struct bee_net_key4 k4;
	struct bee_net_key6 k6;
	key_make(s->family, s->proto, s->addr, &k4, &k6);
	int fd = s->family == 4 ? d->net4 : d->net6;
	void *key = s->family == 4 ? (void *)&k4 : (void *)&k6;
	memset(bits, 0, sizeof(d->port_bits));
	for (unsigned r = 0; r < s->base.nranges && r < BEE_NET_MAX_RANGES; r++)
		ports_set(bits, s->base.ranges[r].lo, s->base.ranges[r].hi, true);
	long last = -1;
	for (uint32_t a = 0; a < BEE_DNS_MAX_ADMITTED; a++) {
		const struct dns_adm *m = &d->adm[a];
		if (!m->live || m->slot != i)
			continue;
		memset(name, 0, sizeof(d->port_name));
		ports_set(name, m->lo, m->hi, true);
		/* the policy's denies that contain the address take their ports out */
		for (size_t k = 0; k < d->nrecs; k++) {
			const struct bee_host_rec *h = &d->recs[k];
			if (h->kind == BEE_HOST_DENY && h->proto == s->proto && h->family == s->family &&
			    prefix_has(h->addr, h->prefix, s->addr))
				ports_set(name, h->port_lo, h->port_hi, false);
		}
		for (size_t b = 0; b < sizeof(d->port_bits); b++)
			bits[b] |= name[b];
		last = a;
	}
	if (last < 0) {
		/* no admission left: back to what it was */
		s->used = false;
		if (s->exact)
			return bpf_map_update_elem(fd, key, &s->base, BPF_ANY) < 0 ? -errno : 0;
		return bpf_map_delete_elem(fd, key) < 0 && errno != ENOENT ? -errno : 0;
	}
	struct bee_net_value v = { .prov = BEE_NET_PROV_HOST | (uint32_t)last };
	for (unsigned p = 0; p < 65536;) {
		if (!(bits[p / 8] & (1u << (p % 8)))) {
			p = p % 8 == 0 && !bits[p / 8] ? p + 8 : p + 1;   /* a byte of none at once */
			continue;
		}
		unsigned lo = p;
		while (p < 65536 && (bits[p / 8] & (1u << (p % 8))))
			p++;
		if (v.nranges == BEE_NET_MAX_RANGES)
			return -E2BIG;
		v.ranges[v.nranges].lo = (uint16_t)lo;
		v.ranges[v.nranges].hi = (uint16_t)(p - 1);
		v.nranges++;
	}
	return bpf_map_update_elem(fd, key, &v, BPF_ANY) < 0 ? -errno : 0;
}

static void record(struct bee_dns *d, const char *host, bool allow, const char *reason)
{
	if (d->audit)
		d->audit(d->audit_ctx, host, allow, reason);
}

/* Admits addr for the name rule h, asked as host, for ttl seconds. */
static void admit(struct bee_dns *d, const struct bee_host_rec *h, const char *host, uint8_t family,
		  const uint8_t addr_in[16], uint32_t ttl)
{
	uint8_t addr[16];
	memcpy(addr, addr_in, 16);
	addr_normal(&family, addr);
	if (ttl < d->ttl_floor_s)
		ttl = d->ttl_floor_s;
	if (ttl > TTL_CAP_S)
		ttl = TTL_CAP_S;
	int64_t expires = now_ms() + (int64_t)ttl * 1000;
	pthread_mutex_lock(&d->lock);
	long slot = addr_slot(d, family, h->proto, addr);
	long hit = -1, free_adm = -1;
	for (uint32_t n = 0; slot >= 0 && n < BEE_DNS_MAX_ADMITTED; n++) {
		/* round robin over the free ones: an index names one host for long */
		uint32_t a = (d->next_adm + n) % BEE_DNS_MAX_ADMITTED;
		struct dns_adm *m = &d->adm[a];
		if (m->live && m->slot == (uint32_t)slot && m->rule == h->rule && strcmp(m->host, host) == 0)
			hit = a;
		if (!m->live && free_adm < 0)
			free_adm = a;
	}
	int err = slot < 0 ? (int)slot : 0;
	if (!err && hit < 0 && free_adm < 0)
		err = -E2BIG;
	if (!err) {
		long a = hit >= 0 ? hit : free_adm;
		struct dns_adm *m = &d->adm[a];
		if (hit < 0) {
			*m = (struct dns_adm){ .live = true, .slot = (uint32_t)slot, .lo = h->port_lo, .hi = h->port_hi,
					       .rule = h->rule };
			snprintf(m->host, sizeof(m->host), "%s", host);
			d->next_adm = (uint32_t)(a + 1) % BEE_DNS_MAX_ADMITTED;
		}
		if (expires > m->expires_ms)
			m->expires_ms = expires;
		/* an answer again for a live admission only lasts longer: its
		 * entry holds its ports already */
		err = hit >= 0 ? 0 : addr_write(d, (uint32_t)slot);
		if (err && hit < 0) {
			m->live = false;
			addr_write(d, (uint32_t)slot);
		}
	} else if (slot >= 0) {
		addr_write(d, (uint32_t)slot);   /* a slot made for nothing goes again */
	}
	pthread_mutex_unlock(&d->lock);
	if (err) {
		char why[160];
		if (err == -E2BIG)
			snprintf(why, sizeof(why), "admission limit (%d addresses, %d port ranges an address)",
				 BEE_DNS_MAX_ADMITTED, BEE_NET_MAX_RANGES);
		else
			snprintf(why, sizeof(why), "the session's map: %s", strerror(-err));
		record(d, host, false, why);
	}
}

/* Expires what is due; returns the ms until the next expiry (or -1). */
static int64_t expire(struct bee_dns *d)
{
	int64_t now = now_ms(), next = -1;
	pthread_mutex_lock(&d->lock);
	for (uint32_t a = 0; a < BEE_DNS_MAX_ADMITTED; a++) {
		struct dns_adm *m = &d->adm[a];
		if (!m->live)
			continue;
		if (m->expires_ms <= now) {
			m->live = false;
			int err = addr_write(d, m->slot);
			if (err)
				bee_warnf(d->warn, d->warn_ctx, "dns: an expired address of '%s' stays: %s", m->host,
					  strerror(-err));
			continue;
		}
		if (next < 0 || m->expires_ms - now < next)
			next = m->expires_ms - now;
	}
	pthread_mutex_unlock(&d->lock);
	return next;
}

/* The answer of a query the tool sent: admissions for the policy's names,
 * a record for the others. */
static void on_answer(struct bee_dns *d, const uint8_t *msg, size_t len)
{
	struct bee_dns_answer a;
	if (bee_dns_answer_parse(msg, len, &a) < 0 || !a.response)
		return;
	bool named = false;
	for (size_t k = 0; k < d->nrecs; k++) {
		const struct bee_host_rec *h = &d->recs[k];
		if (h->kind != BEE_HOST_NAME || !bee_host_match(h->name, a.qname, strlen(a.qname)))
			continue;
		named = true;
		for (unsigned i = 0; i < a.naddrs; i++)
			admit(d, h, a.qname, a.addrs[i].family, a.addrs[i].addr, a.addrs[i].ttl);
	}
	/* a query a learning run could propose: any type, any answer */
	record(d, a.qname, named, named ? "granted" : "not granted");
}

/* ---- the wire ------------------------------------------------------------------------- */

static void pend_drop(struct bee_dns *d, size_t i)
{
	close(d->pend[i].fd);
	d->pend[i] = d->pend[--d->npend];
}

/* A udp query from the tool: forwarded with an id of the stub's. */
static void on_udp_query(struct bee_dns *d, int fd)
{
	uint8_t msg[DNS_MSG_MAX];
	struct sockaddr_storage from;
	socklen_t fl = sizeof(from);
	ssize_t n = recvfrom(fd, msg, sizeof(msg), MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
	if (n < 12 || d->npend == MAX_PENDING)
		return;   /* not a message, or too many at once: the tool asks again */
	struct pending *p = &d->pend[d->npend];
	p->fd = socket(d->up.ss_family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (p->fd < 0)
		return;
	if (connect(p->fd, (struct sockaddr *)&d->up, d->up_len) < 0) {
		close(p->fd);
		return;
	}
	p->client_id = (uint16_t)(msg[0] << 8 | msg[1]);
	if (getrandom(&p->id, sizeof(p->id), 0) != sizeof(p->id))
		p->id = (uint16_t)now_ms();
	msg[0] = (uint8_t)(p->id >> 8);
	msg[1] = (uint8_t)p->id;
	p->client_fd = fd;
	p->client = from;
	p->client_len = fl;
	p->deadline_ms = now_ms() + UPSTREAM_TIMEOUT_MS;
	if (send(p->fd, msg, (size_t)n, 0) != n) {
		close(p->fd);
		return;
	}
	d->npend++;
}

static void on_upstream(struct bee_dns *d, size_t i)
{
	struct pending *p = &d->pend[i];
	uint8_t msg[DNS_MSG_MAX];
	ssize_t n = recv(p->fd, msg, sizeof(msg), MSG_DONTWAIT);
	if (n < 12 || (uint16_t)(msg[0] << 8 | msg[1]) != p->id) {
		if (n >= 0 || errno != EAGAIN)
			pend_drop(d, i);
		return;
	}
	/* admitted before the tool has the answer: its connect comes after */
	on_answer(d, msg, (size_t)n);
	msg[0] = (uint8_t)(p->client_id >> 8);
	msg[1] = (uint8_t)p->client_id;
	sendto(p->client_fd, msg, (size_t)n, MSG_DONTWAIT, (struct sockaddr *)&p->client, p->client_len);
	pend_drop(d, i);
}

static int wait_fd(int fd, short ev, int64_t deadline)
{
	struct pollfd p = { .fd = fd, .events = ev };
	int64_t left = deadline - now_ms();
	if (left <= 0)
		return -ETIMEDOUT;
	int r = poll(&p, 1, (int)left);
	return r == 1 ? 0 : r == 0 ? -ETIMEDOUT : -errno;
}

static int io_full(int fd, uint8_t *buf, size_t len, bool out, int64_t deadline)
{
	for (size_t o = 0; o < len;) {
		ssize_t n = out ? send(fd, buf + o, len - o, MSG_DONTWAIT | MSG_NOSIGNAL)
				: recv(fd, buf + o, len - o, MSG_DONTWAIT);
		if (n > 0) {
			o += (size_t)n;
			continue;
		}
		if (n == 0 || (errno != EAGAIN && errno != EINTR))
			return -EIO;
		int err = wait_fd(fd, out ? POLLOUT : POLLIN, deadline);
		if (err)
			return err;
	}
	return 0;
}

/* A tcp query (the length and the message in c->buf): forwarded over tcp,
 * within TCP_TIMEOUT_MS (the rare case of an answer too large for udp;
 * the stub serves nothing else meanwhile). */
static void tcp_query(struct bee_dns *d, struct tcp_conn *c)
{
	uint8_t *ans = d->tcp_ans;
	size_t qlen = (size_t)(c->buf[0] << 8 | c->buf[1]);
	int64_t deadline = now_ms() + TCP_TIMEOUT_MS;
	int up = socket(d->up.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (up < 0)
		return;
	if ((connect(up, (struct sockaddr *)&d->up, d->up_len) < 0 && errno != EINPROGRESS) ||
	    wait_fd(up, POLLOUT, deadline) < 0 || io_full(up, c->buf, 2 + qlen, true, deadline) < 0 ||
	    io_full(up, ans, 2, false, deadline) < 0) {
		close(up);
		return;
	}
	size_t alen = (size_t)(ans[0] << 8 | ans[1]);
	if (alen < 12 || io_full(up, ans + 2, alen, false, deadline) < 0 ||
	    memcmp(ans + 2, c->buf + 2, 2) != 0) {
		close(up);
		return;
	}
	close(up);
	on_answer(d, ans + 2, alen);
	io_full(c->fd, ans, 2 + alen, true, now_ms() + TCP_TIMEOUT_MS);
}

static void tcp_drop(struct bee_dns *d, size_t i)
{
	close(d->tcp[i]->fd);
	free(d->tcp[i]);
	d->tcp[i] = d->tcp[--d->ntcp];
}

static void on_tcp_accept(struct bee_dns *d, int lfd)
{
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0)
		return;
	struct tcp_conn *c = d->ntcp < MAX_TCP ? malloc(sizeof(*c)) : NULL;
	if (!c) {
		close(fd);
		return;
	}
	c->fd = fd;
	c->have = 0;
	c->deadline_ms = now_ms() + TCP_TIMEOUT_MS;
	d->tcp[d->ntcp++] = c;
}

/* Returns true when the connection is done with. */
static bool on_tcp_input(struct bee_dns *d, struct tcp_conn *c)
{
	ssize_t n = recv(c->fd, c->buf + c->have, sizeof(c->buf) - c->have, MSG_DONTWAIT);
	if (n <= 0)
		return n == 0 || (errno != EAGAIN && errno != EINTR);
	c->have += (size_t)n;
	while (c->have >= 2) {
		size_t qlen = (size_t)(c->buf[0] << 8 | c->buf[1]);
		if (qlen < 12)
			return true;
		if (c->have < 2 + qlen)
			return false;
		tcp_query(d, c);
		memmove(c->buf, c->buf + 2 + qlen, c->have - 2 - qlen);
		c->have -= 2 + qlen;
		c->deadline_ms = now_ms() + TCP_TIMEOUT_MS;
	}
	return false;
}

static void *dns_main(void *arg)
{
	struct bee_dns *d = arg;
	struct pollfd p[5 + MAX_PENDING + MAX_TCP];
	for (;;) {
		int64_t wait = expire(d), now = now_ms();
		for (size_t i = 0; i < d->npend; i++)
			if (d->pend[i].deadline_ms <= now)
				pend_drop(d, i--);
		for (size_t i = 0; i < d->ntcp; i++)
			if (d->tcp[i]->deadline_ms <= now)
				tcp_drop(d, i--);
		if (d->npend || d->ntcp)
			wait = wait < 0 || wait > 500 ? 500 : wait;
		size_t np = 0;
		p[np++] = (struct pollfd){ .fd = d->wake[0], .events = POLLIN };
		p[np++] = (struct pollfd){ .fd = d->udp4, .events = POLLIN };
		p[np++] = (struct pollfd){ .fd = d->tcp4, .events = POLLIN };
		p[np++] = (struct pollfd){ .fd = d->udp6, .events = POLLIN };
		p[np++] = (struct pollfd){ .fd = d->tcp6, .events = POLLIN };
		size_t npend = d->npend, ntcp = d->ntcp;
		for (size_t i = 0; i < npend; i++)
			p[np++] = (struct pollfd){ .fd = d->pend[i].fd, .events = POLLIN };
		for (size_t i = 0; i < ntcp; i++)
			p[np++] = (struct pollfd){ .fd = d->tcp[i]->fd, .events = POLLIN };
		if (poll(p, np, wait < 0 ? -1 : (int)wait + 1) < 0 && errno != EINTR)
			break;
		if (p[0].revents)
			break;
		/* answers first (their slots move as they go), then new queries */
		for (size_t i = npend; i-- > 0;)
			if (p[5 + i].revents)
				on_upstream(d, i);
		for (size_t i = ntcp; i-- > 0;)
			if (p[5 + npend + i].revents && on_tcp_input(d, d->tcp[i]))
				tcp_drop(d, i);
		if (p[1].revents & POLLIN)
			on_udp_query(d, d->udp4);
		if (p[3].revents & POLLIN)
			on_udp_query(d, d->udp6);
		if (p[2].revents & POLLIN)
			on_tcp_accept(d, d->tcp4);
		if (p[4].revents & POLLIN)
			on_tcp_accept(d, d->tcp6);
	}
	return NULL;
}

/* ---- open and close ------------------------------------------------------------------- */

/* The host's first resolver (resolv.conf's first nameserver). */
static int upstream_default(char *out, size_t len)
{
	FILE *f = fopen("/etc/resolv.conf", "re");
	char line[256];
	int err = -ENOENT;
	while (f && err && fgets(line, sizeof(line), f)) {
		char ns[128];
		if (sscanf(line, " nameserver %127s", ns) == 1) {
			snprintf(out, len, strchr(ns, ':') ? "[%s]:53" : "%s:53", ns);
			err = 0;
		}
	}
	if (f)
		fclose(f);
	return err;
}

/* A udp and a tcp socket on addr, the same port (chosen by the kernel for
 * udp, then taken for tcp; tried again when tcp finds it taken). */
static int listen_pair(int family, int *udp, int *tcp, uint16_t *port)
{
	for (int attempt = 0; attempt < 16; attempt++) {
		struct sockaddr_storage ss = { 0 };
		socklen_t sl;
		if (family == AF_INET) {
			struct sockaddr_in *s = (struct sockaddr_in *)&ss;
			s->sin_family = AF_INET;
			s->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
			sl = sizeof(*s);
		} else {
			struct sockaddr_in6 *s = (struct sockaddr_in6 *)&ss;
			s->sin6_family = AF_INET6;
			s->sin6_addr = in6addr_loopback;
			sl = sizeof(*s);
		}
		int u = socket(family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), one = 1;
		if (u < 0)
			return -errno;
		if (family == AF_INET6)
			setsockopt(u, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
		if (bind(u, (struct sockaddr *)&ss, sl) < 0 || getsockname(u, (struct sockaddr *)&ss, &sl) < 0) {
			int err = -errno;
			close(u);
			return err;
		}
		int t = socket(family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (t >= 0 && family == AF_INET6)
			setsockopt(t, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
		if (t >= 0 && bind(t, (struct sockaddr *)&ss, sl) == 0 && listen(t, 64) == 0) {
			*udp = u;
			*tcp = t;
			*port = ntohs(family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
							: ((struct sockaddr_in6 *)&ss)->sin6_port);
			return 0;
		}
		int err = t < 0 ? -errno : errno == EADDRINUSE ? 0 : -errno;
		if (t >= 0)
			close(t);
		close(u);
		if (err)
			return err;
	}
	return -EADDRINUSE;
}

static int image(const struct bee_pack *p, enum bee_map_id id, size_t key, const uint8_t **data, size_t *n,
		 size_t *w)
{
	const struct bee_pack_section_info *s = bee_pack_image(p, bee_map_name(id));
	*data = NULL;
	*n = *w = 0;
	if (!s)
		return 0;
	if (s->elem_count && s->elem_width != key + sizeof(struct bee_net_value))
		return -EINVAL;
	*data = s->data;
	*n = s->elem_count;
	*w = s->elem_width;
	return 0;
}

int bee_dns_open(const struct bee_dns_spec *sp, struct bee_dns **out, struct bee_error *e)
{
	*out = NULL;
	const struct bee_pack_section_info *hs = bee_pack_image(sp->pack, bee_map_name(BEE_MAP_HOSTS));
	if (!hs || hs->elem_count == 0)
		return 0;   /* no host names: no stub, DNS is the policy's like any connect */
	int err = bee_fault(BEE_STAGE_DNS);
	if (err)
		return bee_fail(e, BEE_STAGE_DNS, err, "injected fault");
	char why[256];
	if ((err = bee_dns_msg_open(why, sizeof(why))) < 0)
		return bee_fail(e, BEE_STAGE_DNS, err, "the policy names hosts and the session's DNS stub needs ldns: %s "
				"(apt-get install libldns3)", why);
	if (hs->elem_width != sizeof(struct bee_host_rec) || hs->elem_count > 2 * BEE_HOSTS_MAX + 4096)
		return bee_fail(e, BEE_STAGE_PACK, -EINVAL, "image '%s': records of %u bytes, not %zu",
				bee_map_name(BEE_MAP_HOSTS), hs->elem_width, sizeof(struct bee_host_rec));
	struct bee_dns *d = calloc(1, sizeof(*d));
	if (!d)
		return bee_fail(e, BEE_STAGE_DNS, -ENOMEM, "out of memory");
	d->udp4 = d->tcp4 = d->udp6 = d->tcp6 = d->net4 = d->net6 = -1;
	d->wake[0] = d->wake[1] = -1;
	pthread_mutex_init(&d->lock, NULL);
	d->recs = hs->data;
	d->nrecs = hs->elem_count;
	d->ttl_floor_s = sp->ttl_floor_s ? sp->ttl_floor_s : BEE_DNS_TTL_FLOOR;
	d->audit = sp->audit;
	d->audit_ctx = sp->audit_ctx;
	d->warn = sp->warn;
	d->warn_ctx = sp->warn_ctx;
	for (size_t i = 0; i < d->nrecs; i++) {
		const struct bee_host_rec *h = &d->recs[i];
		if ((h->kind != BEE_HOST_NAME && h->kind != BEE_HOST_DENY) || h->name[sizeof(h->name) - 1] ||
		    (h->kind == BEE_HOST_DENY && h->family != 4 && h->family != 6)) {
			err = bee_fail(e, BEE_STAGE_PACK, -EINVAL, "image '%s': record %zu is malformed",
				       bee_map_name(BEE_MAP_HOSTS), i);
			goto fail;
		}
	}
	if (image(sp->pack, BEE_MAP_NET4, sizeof(struct bee_net_key4), &d->img4, &d->n4, &d->w4) < 0 ||
	    image(sp->pack, BEE_MAP_NET6, sizeof(struct bee_net_key6), &d->img6, &d->n6, &d->w6) < 0) {
		err = bee_fail(e, BEE_STAGE_PACK, -EINVAL, "the network images are malformed");
		goto fail;
	}
	/* the upstream: the option, else the host's first resolver */
	if (sp->upstream)
		snprintf(d->up_text, sizeof(d->up_text), "%s", sp->upstream);
	else if (upstream_default(d->up_text, sizeof(d->up_text)) < 0) {
		err = bee_fail(e, BEE_STAGE_DNS, -ENOENT, "the policy names hosts, and /etc/resolv.conf names no "
			       "nameserver: give --dns-upstream ADDR[:PORT]");
		goto fail;
	}
	if (bee_dns_upstream_parse(d->up_text, &d->up, &d->up_len) < 0) {
		err = bee_fail(e, BEE_STAGE_USAGE, -EINVAL, "dns upstream '%s': not ADDR[:PORT] (an IPv6 address in "
			       "brackets)", d->up_text);
		goto fail;
	}
	if ((err = listen_pair(AF_INET, &d->udp4, &d->tcp4, &d->port4)) < 0) {
		err = bee_fail(e, BEE_STAGE_DNS, err, "the stub's sockets on 127.0.0.1: %s", strerror(-err));
		goto fail;
	}
	if (listen_pair(AF_INET6, &d->udp6, &d->tcp6, &d->port6) < 0)
		d->port6 = 0;   /* no [::1] here: native IPv6 queries are left to the policy */
	/* the session's own network maps, with room for the admissions */
	if ((d->net4 = bee_session_map_sized(sp->cache_dir, sp->session_dir, BEE_MAP_NET4, sp->sess,
					     BEE_DNS_MAX_ADMITTED, e)) < 0 ||
	    (d->net6 = bee_session_map_sized(sp->cache_dir, sp->session_dir, BEE_MAP_NET6, sp->sess,
					     BEE_DNS_MAX_ADMITTED, e)) < 0) {
		err = d->net4 < 0 ? d->net4 : d->net6;
		e->stage = BEE_STAGE_DNS;
		goto fail;
	}
	if (pipe2(d->wake, O_CLOEXEC) < 0) {
		err = bee_fail(e, BEE_STAGE_DNS, -errno, "pipe: %s", strerror(errno));
		goto fail;
	}
	/* the thread takes no signal: the process's handlers and signalfd
	 * (supervisor.c) stay the main thread's */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&d->thread, NULL, dns_main, d);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err != 0) {
		err = bee_fail(e, BEE_STAGE_DNS, -err, "the stub's thread: %s", strerror(err));
		goto fail;
	}
	d->running = true;
	/* last: the programs send the session's queries here from now on */
	int st = bee_session_map(sp->cache_dir, sp->session_dir, BEE_MAP_STATE, sp->sess, e);
	struct bee_state s;
	if (st < 0) {
		err = st;
		goto fail;
	}
	if (bpf_map_lookup_elem(st, &sp->sess, &s) < 0) {
		err = bee_fail(e, BEE_STAGE_DNS, -errno, "map '%s': the session has no entry: %s",
			       bee_map_name(BEE_MAP_STATE), strerror(errno));
		close(st);
		goto fail;
	}
	s.dns_addr4 = htonl(INADDR_LOOPBACK);
	s.dns_port4 = htons(d->port4);
	s.dns_port6 = htons(d->port6);
	if (bpf_map_update_elem(st, &sp->sess, &s, BPF_EXIST) < 0) {
		err = bee_fail(e, BEE_STAGE_DNS, -errno, "map '%s': %s", bee_map_name(BEE_MAP_STATE), strerror(errno));
		close(st);
		goto fail;
	}
	close(st);
	*out = d;
	return 0;
fail:
	bee_dns_close(d);
	return err;
}

uint16_t bee_dns_port(const struct bee_dns *d)
{
	return d ? d->port4 : 0;
}

const char *bee_dns_upstream(const struct bee_dns *d)
{
	return d ? d->up_text : NULL;
}

int bee_dns_host(struct bee_dns *d, uint32_t prov, char *buf, size_t len)
{
	if (!d || !(prov & BEE_NET_PROV_HOST) || prov == BEE_NET_PROV_NONE || prov == BEE_NET_PROV_DNS)
		return -ENOENT;
	uint32_t a = prov & ~BEE_NET_PROV_HOST;
	if (a >= BEE_DNS_MAX_ADMITTED)
		return -ENOENT;
	pthread_mutex_lock(&d->lock);
	int err = d->adm[a].host[0] ? 0 : -ENOENT;
	if (!err)
		snprintf(buf, len, "%s", d->adm[a].host);
	pthread_mutex_unlock(&d->lock);
	return err;
}

void bee_dns_close(struct bee_dns *d)
{
	if (!d)
		return;
	if (d->running) {
		char c = 1;
		if (write(d->wake[1], &c, 1) < 0) {
			/* the thread still ends: the pipe's close below wakes it too */
		}
		pthread_join(d->thread, NULL);
	}
	for (size_t i = 0; i < d->npend; i++)
		close(d->pend[i].fd);
	for (size_t i = 0; i < d->ntcp; i++) {
		close(d->tcp[i]->fd);
		free(d->tcp[i]);
	}
	int fds[] = { d->wake[0], d->wake[1], d->udp4, d->tcp4, d->udp6, d->tcp6, d->net4, d->net6 };
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (fds[i] >= 0)
			close(fds[i]);
	pthread_mutex_destroy(&d->lock);
	free(d);
}
