/* SPDX-License-Identifier: GPL-2.0-only */
#include "eval.h"

#include <string.h>

void bee_eval_dfa(const struct bee_dfa_hdr *h, const char *s, size_t len, struct bee_verdict *v)
{
	struct bee_dfa_answer a;
	/* any size_t beyond the bound is as too long as BEE_PATH_MAX itself */
	__u32 n = len > BEE_PATH_MAX ? BEE_PATH_MAX : (__u32)len;
	/* the same walk the hooks run; the checked image is its whole buffer */
	bee_dfa_match(h, h->size, (const __u8 *)s, n, &a);
	memset(v, 0, sizeof(*v));
	v->state = a.state;
	v->perms = a.perms;
	v->too_long = a.too_long != 0;
}
