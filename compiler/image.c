/* SPDX-License-Identifier: GPL-2.0-only */
/* image.c: map images from lowered tables. */
#include "image.h"
#include "mem.h"

#include <stdlib.h>
#include <string.h>

/* hops[] (runtime/bee_dfa.h): next[] as the byte offsets of the rows it
 * names, each row led by its slot. Offsets from the image's start (hops 2,
 * the shorter walk) while the image fits 16 bits of them; from hops[0][0]
 * (hops 1) while hops[] alone does; a bigger automaton walks next[]. */
static unsigned image_hops_form(const struct dfa_tables *t)
{
	if (bee_dfa_hops_fit(t->nstates, t->nclasses, BEE_DFA_HOPS_ABS))
		return BEE_DFA_HOPS_ABS;
	if (bee_dfa_hops_fit(t->nstates, t->nclasses, BEE_DFA_HOPS_REL))
		return BEE_DFA_HOPS_REL;
	return BEE_DFA_HOPS_NONE;
}

/* h's header is written; hops 2's zero tail is calloc's */
static void image_hops_write(const struct dfa_tables *t, struct bee_dfa_hdr *h)
{
	uint16_t *hops = (uint16_t *)(void *)((uint8_t *)h + bee_dfa_hops_off(t->nstates, t->nclasses));
	for (unsigned s = 0; s < t->nstates; s++) {
		uint16_t *row = hops + (size_t)s * (t->nclasses + 1);
		row[0] = (uint16_t)bee_dfa_hops_lead(h, s);
		for (unsigned c = 0; c < t->nclasses; c++)
			row[1 + c] = (uint16_t)bee_dfa_hop(h, t->next[(size_t)s * t->nclasses + c]);
	}
}

static struct bee_dfa_hdr *image_dfa_write_body(const struct dfa *d, size_t *len)
{
	struct dfa_tables t;
	dfa_tables_get(d, &t);
	unsigned hops = image_hops_form(&t);
	size_t size = bee_dfa_image_size_hops(t.nstates, t.nclasses, hops);
	struct bee_dfa_hdr *h = xcalloc(1, size);
	h->magic = BEE_DFA_MAGIC;
	h->nstates = (__u16)t.nstates;
	h->nclasses = (__u16)t.nclasses;
	h->dead = (__u16)(t.dead == DFA_STATE_NONE ? BEE_DFA_NONE : t.dead);
	h->hops = (__u16)hops;
	h->size = (__u32)size;
	memcpy(h->class_of, t.class_of, 256);
	memcpy((void *)bee_dfa_perms(h), t.perms, t.nstates * sizeof(uint32_t));
	memcpy((void *)bee_dfa_next(h), t.next, (size_t)t.nstates * t.nclasses * sizeof(uint16_t));
	if (hops)
		image_hops_write(&t, h);
	*len = size;
	return h;
}

struct bee_dfa_hdr *image_dfa_write(const struct dfa *d, size_t *len)
{
	return MEM_PROTECT(NULL, image_dfa_write_body(d, len));
}

size_t image_dfa_size(const struct dfa *d)
{
	struct dfa_tables t;
	dfa_tables_get(d, &t);
	return bee_dfa_image_size_hops(t.nstates, t.nclasses, image_hops_form(&t));
}
