/* SPDX-License-Identifier: GPL-2.0-only */
/* fuzz_dns.c: libFuzzer target for the session DNS stub's parser,
 * bee_dns_answer_parse() in loader/dns_msg.c: one DNS message as the
 * upstream (or a hostile tool, through the stub) could send it, and the
 * upstream address text of --dns-upstream.
 *
 * What must hold: a message is refused (-EINVAL) or read; a read one has a
 * canonical asked name (no upper case, no final dot, at most 253 bytes), at
 * most BEE_DNS_MAX_CHAIN links and BEE_DNS_MAX_ADDRS addresses, each of
 * family 4 (its last 12 bytes zero) or 6. The address text parses or is
 * refused, and a parsed one is IPv4 or IPv6 with a port. */
#include "internal.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_require(bool ok)
{
	if (!ok)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct bee_dns_answer a;
	int r = bee_dns_answer_parse(data, size, &a);
	fuzz_require(r == 0 || r == -EINVAL);
	if (r == 0) {
		size_t n = strnlen(a.qname, sizeof(a.qname));
		fuzz_require(n <= BEE_HOST_NAME_MAX);
		fuzz_require(n == 0 || a.qname[n - 1] != '.' || n == 1);
		for (size_t i = 0; i < n; i++)
			fuzz_require(!(a.qname[i] >= 'A' && a.qname[i] <= 'Z'));
		fuzz_require(a.chain <= BEE_DNS_MAX_CHAIN && a.naddrs <= BEE_DNS_MAX_ADDRS);
		static const uint8_t zero[12];
		for (unsigned i = 0; i < a.naddrs; i++)
			fuzz_require(a.addrs[i].family == 6 ||
				     (a.addrs[i].family == 4 && memcmp(a.addrs[i].addr + 4, zero, 12) == 0));
	}
	/* the same bytes as an upstream's text */
	char text[128];
	size_t tl = size < sizeof(text) - 1 ? size : sizeof(text) - 1;
	memcpy(text, data, tl);
	text[tl] = '\0';
	struct sockaddr_storage ss;
	socklen_t sl = 0;
	if (bee_dns_upstream_parse(text, &ss, &sl) == 0)
		fuzz_require((ss.ss_family == AF_INET && sl == sizeof(struct sockaddr_in)) ||
			     (ss.ss_family == AF_INET6 && sl == sizeof(struct sockaddr_in6)));
	return 0;
}
