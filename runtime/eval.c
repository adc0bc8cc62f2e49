#include "eval.h"

#include <string.h>

void bee_eval_dfa(const struct bee_dfa_hdr *h, const char *s, size_t len, struct bee_verdict *v)
{
	memset(v, 0, sizeof(*v));
	if (len > BEE_PATH_MAX - 1) {
		v->too_long = true;
		v->state = h->dead;
		return;
	}
	v->state = bee_dfa_walk(h, (const __u8 *)s, (__u32)len);
	v->perms = bee_dfa_perms(h)[v->state];
}
