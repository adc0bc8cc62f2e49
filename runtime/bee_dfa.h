/* bee_dfa.h: the map image of one permission automaton, and its walk.
 *
 * Shared by the compiler (which writes images), the host evaluator and the
 * BPF programs (which walk them); compiled both by the host compiler and by
 * clang -target bpf, so it uses only fixed-width kernel types.
 *
 * An image is one blob, held in ONE map value so that a walk is one class
 * lookup and one dependent 16-bit load per byte (DESIGN.md, last section):
 *
 *   struct bee_dfa_hdr                 16 bytes
 *   __u32 perms[nstates]               permission bits of each state
 *   __u16 next[nstates * nclasses]     transitions, row per state
 *
 * State 0 is the start. Byte 0 never leads anywhere but to a state without
 * permissions, so a walk may stop at the first NUL.
 */
#ifndef BEE_DFA_IMAGE_H
#define BEE_DFA_IMAGE_H

#include <linux/types.h>

#define BEE_DFA_MAGIC 0x41464442u   /* "BDFA" little-endian */
#define BEE_DFA_NONE  0xffffu       /* "no dead state" */

struct bee_dfa_hdr {
	__u32 magic;
	__u16 nstates;
	__u16 nclasses;
	__u16 dead;          /* the state that never accepts again, or BEE_DFA_NONE */
	__u16 reserved;
	__u32 size;          /* bytes of the whole image */
	__u8 class_of[256];  /* byte -> class */
};

_Static_assert(sizeof(struct bee_dfa_hdr) == 272, "bee_dfa_hdr layout");
_Static_assert(__builtin_offsetof(struct bee_dfa_hdr, size) == 12, "bee_dfa_hdr.size");
_Static_assert(__builtin_offsetof(struct bee_dfa_hdr, class_of) == 16, "bee_dfa_hdr.class_of");

static inline __u32 bee_dfa_image_size(__u32 nstates, __u32 nclasses)
{
	return (__u32)sizeof(struct bee_dfa_hdr) + nstates * 4 + nstates * nclasses * 2;
}

static inline const __u32 *bee_dfa_perms(const struct bee_dfa_hdr *h)
{
	return (const __u32 *)(const void *)(h + 1);
}

static inline const __u16 *bee_dfa_next(const struct bee_dfa_hdr *h)
{
	return (const __u16 *)(const void *)(bee_dfa_perms(h) + h->nstates);
}

/* Walks s[0..len) (stopping early at the dead state) and returns the state
 * reached. The image must have been checked by bee_dfa_image_check. */
static inline __u32 bee_dfa_walk(const struct bee_dfa_hdr *h, const __u8 *s, __u32 len)
{
	const __u16 *next = bee_dfa_next(h);
	__u32 state = 0, nclasses = h->nclasses;
	for (__u32 i = 0; i < len; i++) {
		state = next[state * nclasses + h->class_of[s[i]]];
		if (state == h->dead)
			break;
	}
	return state;
}

/* 0 when the image is whole and every transition stays inside it;
 * otherwise a negative number naming the first bad field. */
enum bee_dfa_image_error {
	BEE_DFA_ERR_SIZE = -1,     /* shorter than its header or its size field */
	BEE_DFA_ERR_MAGIC = -2,
	BEE_DFA_ERR_COUNTS = -3,   /* no state, no class, or size mismatch */
	BEE_DFA_ERR_CLASS = -4,    /* class_of names a class >= nclasses */
	BEE_DFA_ERR_NEXT = -5,     /* a transition to a state >= nstates */
	BEE_DFA_ERR_DEAD = -6,     /* dead state out of range */
};

static inline int bee_dfa_image_check(const void *blob, __u64 len)
{
	const struct bee_dfa_hdr *h = (const struct bee_dfa_hdr *)blob;
	if (len < sizeof(*h))
		return BEE_DFA_ERR_SIZE;
	if (h->magic != BEE_DFA_MAGIC)
		return BEE_DFA_ERR_MAGIC;
	if (!h->nstates || !h->nclasses || h->size != len ||
	    h->size != bee_dfa_image_size(h->nstates, h->nclasses))
		return BEE_DFA_ERR_COUNTS;
	for (int b = 0; b < 256; b++)
		if (h->class_of[b] >= h->nclasses)
			return BEE_DFA_ERR_CLASS;
	if (h->dead != BEE_DFA_NONE && h->dead >= h->nstates)
		return BEE_DFA_ERR_DEAD;
	const __u16 *next = bee_dfa_next(h);
	for (__u32 i = 0; i < (__u32)h->nstates * h->nclasses; i++)
		if (next[i] >= h->nstates)
			return BEE_DFA_ERR_NEXT;
	return 0;
}

#endif
