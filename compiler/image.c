/* SPDX-License-Identifier: GPL-2.0-only */
/* image.c: map images from lowered tables. */
#include "image.h"
#include "mem.h"

#include <string.h>

static struct bee_dfa_hdr *image_dfa_write_body(const struct dfa *d, size_t *len)
{
	struct dfa_tables t;
	dfa_tables_get(d, &t);
	size_t size = bee_dfa_image_size(t.nstates, t.nclasses);
	struct bee_dfa_hdr *h = xcalloc(1, size);
	h->magic = BEE_DFA_MAGIC;
	h->nstates = (__u16)t.nstates;
	h->nclasses = (__u16)t.nclasses;
	h->dead = (__u16)(t.dead == DFA_STATE_NONE ? BEE_DFA_NONE : t.dead);
	h->size = (__u32)size;
	memcpy(h->class_of, t.class_of, 256);
	memcpy((void *)bee_dfa_perms(h), t.perms, t.nstates * sizeof(uint32_t));
	memcpy((void *)bee_dfa_next(h), t.next, (size_t)t.nstates * t.nclasses * sizeof(uint16_t));
	*len = size;
	return h;
}

struct bee_dfa_hdr *image_dfa_write(const struct dfa *d, size_t *len)
{
	return MEM_PROTECT(NULL, image_dfa_write_body(d, len));
}
