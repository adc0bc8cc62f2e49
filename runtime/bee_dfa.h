/* SPDX-License-Identifier: GPL-2.0-only */
/* bee_dfa.h: the map image of one permission automaton, and its walk.
 *
 * Shared by the compiler (which writes images), the host evaluator and the
 * BPF programs (which walk them); compiled both by the host compiler and by
 * clang -target bpf, so it uses only fixed-width kernel types.
 *
 * An image is one blob, held in ONE map value so that a walk is a chain of
 * dependent loads inside it (DESIGN.md, last section):
 *
 *   struct bee_dfa_hdr                 272 bytes: 16 of counts, class_of[256]
 *   __u32 perms[nstates]               permission bits of each state
 *   __u16 next[nstates * nclasses]     transitions, row per state
 *
 * and, when the header's hops is not 0, the same transitions as the walk
 * in BPF wants them (at bee_dfa_hops_off, right after next[]), in one of
 * two forms:
 *
 *   hops 2 (BEE_DFA_HOPS_ABS), for an image of at most about 64 KiB:
 *   __u16 hops[nstates][nclasses + 1]  per state: its stop mark (0xfffe
 *                                      minus its number), then for each
 *                                      class where the next state's row
 *                                      starts, in bytes from the image's
 *                                      first byte, or BEE_DFA_HOP_DEAD
 *   __u8  pad[2 * (256 - nclasses)]    zero: room for the widest column
 *
 *   hops 1 (BEE_DFA_HOPS_REL), for a bigger one (hops[] within 64 KiB):
 *   __u16 hops[nstates][nclasses + 1]  per state: its number, then for each
 *                                      class where the next state's row
 *                                      starts, in bytes from hops[0][0], or
 *                                      BEE_DFA_HOP_DEAD
 *
 * A step over next[] multiplies the state by the row length and tests for
 * the dead state before its load; a step over hops 1 is two adds (row and
 * column, then the image) and one load; a step over hops 2 is one add
 * (the row to a pointer made from the column off the chain) and one load.
 * In both, a hop to the dead state, and in hops 2 the stop mark that the
 * step past the end reads, are past every row, so the bounds check the
 * load needs anyway ends the walk there. hops[] is derived from next[]
 * and must agree with it everywhere (bee_dfa_image_check proves it), so
 * any table gives the same walk; bee_dfa_walk takes hops[] when the
 * header's size counts it.
 *
 * State 0 is the start. Byte 0 never leads anywhere but to a state without
 * permissions, so a walk may stop at the first NUL.
 */
#ifndef BEE_DFA_IMAGE_H
#define BEE_DFA_IMAGE_H

#ifndef __bpf__
#include <linux/types.h>
#endif

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

/* Bytes of the longest path a hook hands over, its NUL included (the
 * kernel's PATH_MAX): a walk reads at most BEE_PATH_MAX - 1 bytes. */
#define BEE_PATH_MAX 4096

#define BEE_DFA_MAGIC 0x41464442u   /* "BDFA" little-endian */
#define BEE_DFA_NONE  0xffffu       /* "no dead state" */

struct bee_dfa_hdr {
	__u32 magic;
	__u16 nstates;
	__u16 nclasses;
	__u16 dead;          /* the state that never accepts again, or BEE_DFA_NONE */
	__u16 hops;          /* 1: hops[] follows next[]; 0: it does not */
	__u32 size;          /* bytes of the whole image */
	__u8 class_of[256];  /* byte -> class */
};

_Static_assert(sizeof(struct bee_dfa_hdr) == 272, "bee_dfa_hdr layout");
_Static_assert(__builtin_offsetof(struct bee_dfa_hdr, size) == 12, "bee_dfa_hdr.size");
_Static_assert(__builtin_offsetof(struct bee_dfa_hdr, class_of) == 16, "bee_dfa_hdr.class_of");

/* Bytes of the header and next[] (the whole image when hops is 0). */
static inline __u32 bee_dfa_image_size(__u32 nstates, __u32 nclasses)
{
	return (__u32)sizeof(struct bee_dfa_hdr) + nstates * 4 + nstates * nclasses * 2;
}

/* hdr.hops: the form of hops[] after next[] (see the top of this file) */
#define BEE_DFA_HOPS_NONE 0u
#define BEE_DFA_HOPS_REL 1u
#define BEE_DFA_HOPS_ABS 2u

/* A hop to the dead state. The writer keeps hops 1 within
 * BEE_DFA_HOPS_MAX bytes, so this is past the image from any column, and
 * hops 2 images below BEE_DFA_ABS_LIMIT bytes, so it is past every row. */
#define BEE_DFA_HOP_DEAD 0xffffu
#define BEE_DFA_HOPS_MAX 0x10000u

/* hops 2: a row's widest reach, from its first slot to the column of
 * class 255 (what the verifier must allow from any row), and the bound on
 * image bytes plus states that keeps every stop mark past every row. */
#define BEE_DFA_ABS_REACH 512u
#define BEE_DFA_ABS_LIMIT (0xfffeu + BEE_DFA_ABS_REACH + 2u)

static inline __u64 bee_dfa_hops_off(__u64 nstates, __u64 nclasses)
{
	return bee_dfa_image_size((__u32)nstates, (__u32)nclasses);   /* 2-aligned */
}

/* Bytes of the rows of hops[] (either form). */
static inline __u64 bee_dfa_hops_size(__u64 nstates, __u64 nclasses)
{
	return nstates * (nclasses + 1) * 2;
}

/* Bytes of hops 2's zero tail: the last row's reach stays inside the image. */
static inline __u64 bee_dfa_abs_pad(__u64 nclasses)
{
	return nclasses < 256 ? (256 - nclasses) * 2 : 0;
}

/* Bytes of a whole image with hops[] of form hops. */
static inline __u64 bee_dfa_image_size_hops(__u64 nstates, __u64 nclasses, __u64 hops)
{
	__u64 n = bee_dfa_hops_off(nstates, nclasses);
	if (hops == BEE_DFA_HOPS_ABS)
		return n + bee_dfa_hops_size(nstates, nclasses) + bee_dfa_abs_pad(nclasses);
	if (hops == BEE_DFA_HOPS_REL)
		return n + bee_dfa_hops_size(nstates, nclasses);
	return n;
}

/* Whether an automaton may carry hops[] of form hops. hops 2 needs every
 * row offset and stop mark in 16 bits, the marks past the rows; hops 1 is
 * for what hops 2 cannot hold (bee_dfa_walk takes it only then). */
static inline int bee_dfa_hops_fit(__u64 nstates, __u64 nclasses, __u64 hops)
{
	if (hops == BEE_DFA_HOPS_ABS)
		return nclasses <= 256 &&
		       bee_dfa_image_size_hops(nstates, nclasses, hops) + nstates <= BEE_DFA_ABS_LIMIT;
	if (hops == BEE_DFA_HOPS_REL)
		return bee_dfa_hops_size(nstates, nclasses) <= BEE_DFA_HOPS_MAX &&
		       bee_dfa_image_size_hops(nstates, nclasses, hops) > BEE_DFA_ABS_LIMIT;
	return 0;
}

/* hops 2: the first slot of a row, which the step past the end reads. */
static inline __u32 bee_dfa_abs_mark(__u32 state)
{
	return 0xfffeu - state;
}

/* Pointers into an image, for the writer and for code that has checked the
 * image; a walk in BPF goes through bee_dfa_walk/bee_dfa_state_perms. */
static inline const __u32 *bee_dfa_perms(const struct bee_dfa_hdr *h)
{
	return (const __u32 *)(const void *)(h + 1);
}

static inline const __u16 *bee_dfa_next(const struct bee_dfa_hdr *h)
{
	return (const __u16 *)(const void *)(bee_dfa_perms(h) + h->nstates);
}

/* ---- the walk ------------------------------------------------------------
 *
 * One body for the host and for BPF. value_size is the number of bytes of
 * the buffer that holds h: in BPF a constant the verifier knows (the map's
 * value size, BEE_DFA_IMAGE_MAX of the program that walks it), on the host
 * h->size. Every table load is compared against it first, so the verifier
 * proves each one inside the map value whatever the image holds; for an
 * image that bee_dfa_image_check accepted no comparison ever fails, and the
 * walk means exactly: follow next[] from state 0 over s[0..len), stop at
 * the dead state.
 *
 * For the verifier the loop has a constant bound and ONE data-dependent
 * branch per byte: the end of the path and the dead state are folded into
 * the table offset as all-ones masks, so the bounds check also stops the
 * walk. Each unresolved branch leaves a state on the verifier's stack until
 * the longest path is done, and that stack holds 8192: three branches a
 * byte (end, dead, bounds) over 4095 bytes do not fit, one does.
 */

/* An opaque copy of v: keeps clang from turning the masks below back into
 * branches, or from moving a bounds check off the register the load then
 * uses (the verifier bounds registers, not values). */
#define bee_dfa_barrier_var(v) __asm__ __volatile__("" : "+r"(v))

/* The state a walk reports when an image does not fit its buffer: no such
 * state exists, so its permissions are 0. A checked image never gives it. */
#define BEE_DFA_STATE_INVALID 0xffffffffu

/* A 16-bit load at off, which the walks' end marks (an offset's low bit)
 * can make odd: one load in BPF (the verifier allows it on map values),
 * a memcpy in C, where a misaligned __u16 is undefined. */
static __always_inline __u16 bee_dfa_load16(const __u8 *p)
{
#if defined(__bpf__)
	return *(const __u16 *)p;
#else
	__u16 v;
	__builtin_memcpy(&v, p, sizeof(v));
	return v;
#endif
}

/* The walk over next[], for an image without hops[] (too big for 16-bit
 * offsets, or a live revoke's replacement, see bee_dfa_walk). */
static __always_inline __u32 bee_dfa_walk_next(const struct bee_dfa_hdr *h, __u32 value_size,
					       const __u8 *s, __u32 len)
{
	const __u8 *base = (const __u8 *)h;
	__u64 next_off = sizeof(*h) + (__u64)h->nstates * 4;   /* of next[] in the image */
	__u64 last = (__u64)value_size - 2;   /* the last offset a 16-bit load may read */
	__u64 stride = (__u64)h->nclasses * 2, dead = h->dead;   /* bytes of a row of next[] */
	__u64 state = 0, stop = 0;

	/* step i == len always stops, so the loop only ever leaves by the break */
	for (__u32 i = 0; i < BEE_PATH_MAX; i++) {
		/* all ones past the end of s, else 0 */
		__u64 end = (__u64)((__s64)((__u64)len - 1 - i) >> 63);
		/* all ones at the dead state (never equal when dead is BEE_DFA_NONE) */
		__u64 at_dead = (__u64)((__s64)((state ^ dead) - 1) >> 63);
		bee_dfa_barrier_var(end);
		bee_dfa_barrier_var(at_dead);
		stop = end | at_dead;
		/* the column does not depend on the state, so it stays off the
		 * chain of dependent loads; past the end s[i] may not exist, so
		 * s[0] is read there and its column thrown away */
		__u64 col = next_off + (__u64)h->class_of[s[i & ~end]] * 2;
		bee_dfa_barrier_var(col);
		__u64 off = (state * stride + col) | stop;
		bee_dfa_barrier_var(off);
		if (off > last)
			break;
		bee_dfa_barrier_var(off);
		state = bee_dfa_load16(base + off);
	}
	/* stopped at the end or the dead state: the answer; else it did not fit */
	return stop ? (__u32)state : BEE_DFA_STATE_INVALID;
}

/* The walk over hops[]: per byte, the column comes from the path alone
 * (off the chain of dependent loads), and the chain is one add and one
 * 16-bit load. The end of the path is folded into the column (a column
 * past any image), and the dead state is a hop past the image, so the one
 * bounds check ends the walk at both: one branch a byte for the verifier,
 * as in bee_dfa_walk_next. */
static __always_inline __u32 bee_dfa_walk_hops(const struct bee_dfa_hdr *h, __u32 value_size,
					       const __u8 *s, __u32 len)
{
	const __u8 *base = (const __u8 *)h;
	__u64 hops = bee_dfa_hops_off(h->nstates, h->nclasses);
	__u64 cols = hops + 2;              /* column 0 of row 0, after the state's number */
	/* the last offset a 16-bit load may read; the buffer is the image
	 * (bee_dfa_walk), so a hop to the dead state is past it. A constant
	 * in BPF: the 6.1 verifier bounds a register only by comparing it
	 * with one. */
	__u64 last = (__u64)value_size - 2;
	__u64 row = 0, end = 0;             /* state 0's row */

	for (__u32 i = 0; i < BEE_PATH_MAX; i++) {
		__u64 d = (__u64)len - 1 - i;
		bee_dfa_barrier_var(d);
		/* past the end of s: 2^63 - 1, a column past any image, else 0 */
		end = (__u64)((__s64)d >> 63) >> 1;
		bee_dfa_barrier_var(end);
		/* past the end s[i] may not exist, so s[0] is read there */
		__u64 col = (cols + (__u64)h->class_of[s[i & ~end]] * 2) | end;
		bee_dfa_barrier_var(col);
		__u64 off = row + col;
		bee_dfa_barrier_var(off);
		if (off > last)
			break;
		bee_dfa_barrier_var(off);
		row = bee_dfa_load16(base + off);
	}
	if (row == BEE_DFA_HOP_DEAD)
		return h->dead;
	/* stopped before the end: a hop that leaves the image */
	__u64 at = hops + row;
	bee_dfa_barrier_var(at);
	if (!end || at > last)
		return BEE_DFA_STATE_INVALID;
	return bee_dfa_load16(base + at);   /* the row's first slot: its state */
}

/* The walk over hops 2: per byte, a pointer to the column is made from the
 * path alone (off the chain of dependent loads), and the chain is one add
 * (the row, a 16-bit offset from the image's first byte) and one 16-bit
 * load. The verifier bounds the load by the pointer's reach (at most
 * BEE_DFA_ABS_REACH) and by the row, which the one branch a byte compares
 * with a constant. That branch also ends the walk: a hop to the dead state
 * is past every row, and so is the stop mark in a row's first slot, which
 * the step past the end reads (its column is 0). */
static __always_inline __u32 bee_dfa_walk_abs(const struct bee_dfa_hdr *h, __u32 value_size,
					      const __u8 *s, __u32 len)
{
	const __u8 *base = (const __u8 *)h;
	/* the last row a hop may name: its reach ends at the image's end. A
	 * constant in BPF, so the verifier bounds each row by it. */
	__u64 last = (__u64)value_size - BEE_DFA_ABS_REACH - 2;
	__u64 row = bee_dfa_hops_off(h->nstates, h->nclasses);   /* state 0's */
	__u64 live = 1;   /* of the step that loaded row: 0 past the end */

	/* the load of step len always stops the walk, so the loop only ever
	 * leaves by the break, or right after that load when len is the
	 * longest */
	for (__u32 i = 0; i < BEE_PATH_MAX; i++) {
		if (row > last)
			break;
		__u64 d = (__u64)i - len;
		bee_dfa_barrier_var(d);
		/* 2^63 - 1 up to the end of s, then 0: a mask for the index and
		 * the column, which are smaller. Not all ones: a newer verifier
		 * forks its state on an AND with a sign (0 or -1), which would
		 * double the states a byte leaves pending. */
		live = (__u64)((__s64)d >> 63) >> 1;
		bee_dfa_barrier_var(live);
		/* past the end s[i] may not exist, so s[0] is read there, and
		 * the column is the row's first slot */
		__u64 col = ((__u64)h->class_of[s[i & live]] * 2 + 2) & live;
		bee_dfa_barrier_var(col);
		const __u8 *p = base + col;
		bee_dfa_barrier_var(p);
		row = bee_dfa_load16(p + row);
	}
	if (row == BEE_DFA_HOP_DEAD)
		return h->dead;
	/* stopped before the end, or on a mark of no state: the image is not
	 * one the check accepted. (Nothing here depends on the step that
	 * stopped, so the verifier takes every exit for one.) */
	__u64 state = 0xfffeu - row;
	if (live || row <= last || state >= h->nstates)
		return BEE_DFA_STATE_INVALID;
	return (__u32)state;
}

/* The state reached over s[0..len), len <= BEE_PATH_MAX - 1 (a longer len
 * gives BEE_DFA_STATE_INVALID: callers deny it first, see bee_dfa_match).
 * s holds len readable bytes; in BPF its buffer holds BEE_PATH_MAX.
 *
 * hops[] is walked only when the size field counts it and the buffer is
 * exactly the image (a map sized by codegen, h->size on the host): a live
 * revoke that replaces next[] (loader/revoke.c, bee_narrow_replace) writes
 * a header of hops 0 and the size of header and next[], and the walk then
 * takes next[]; so does a buffer with room beyond the image, where a stop
 * could land inside it. Which form is read depends on value_size, a
 * constant in BPF, so the verifier sees two walks, not three. */
static __always_inline __u32 bee_dfa_walk(const struct bee_dfa_hdr *h, __u32 value_size,
					  const __u8 *s, __u32 len)
{
	if (value_size < sizeof(*h) + 2 || len > BEE_PATH_MAX - 1)
		return BEE_DFA_STATE_INVALID;
	if (len == 0)
		return 0;
	/* value_size first: a constant in BPF, so the verifier prunes the
	 * form that cannot be there (an image of hops 2 holds at least a
	 * row's reach) */
	if (value_size >= sizeof(*h) + BEE_DFA_ABS_REACH + 2 && value_size <= BEE_DFA_ABS_LIMIT) {
		if (h->hops == BEE_DFA_HOPS_ABS && h->size == value_size &&
		    h->size == bee_dfa_image_size_hops(h->nstates, h->nclasses, BEE_DFA_HOPS_ABS))
			return bee_dfa_walk_abs(h, value_size, s, len);
	} else if (value_size > BEE_DFA_ABS_LIMIT) {
		if (h->hops == BEE_DFA_HOPS_REL && h->size == value_size &&
		    h->size == bee_dfa_image_size_hops(h->nstates, h->nclasses, BEE_DFA_HOPS_REL))
			return bee_dfa_walk_hops(h, value_size, s, len);
	}
	return bee_dfa_walk_next(h, value_size, s, len);
}

/* The permission bits of state, or 0 for a state the image does not have. */
static __always_inline __u32 bee_dfa_state_perms(const struct bee_dfa_hdr *h, __u32 value_size,
						 __u32 state)
{
	__u64 off = sizeof(*h) + (__u64)state * 4;
	bee_dfa_barrier_var(off);
	if (state >= h->nstates || off > (__u64)value_size - 4 || value_size < 4)
		return 0;
	return *(const __u32 *)((const __u8 *)h + off);
}

/* A decision over one path, as the host evaluator and the hooks make it. */
struct bee_dfa_answer {
	__u32 state;      /* the state reached; h->dead when too long */
	__u32 perms;      /* its permission bits; 0 when too long */
	__u32 too_long;   /* 1 when len > BEE_PATH_MAX - 1: denied, never walked */
};

/* A path longer than BEE_PATH_MAX - 1 bytes is denied and flagged, never
 * matched on a prefix; otherwise the walk's state and its permissions. */
static __always_inline void bee_dfa_match(const struct bee_dfa_hdr *h, __u32 value_size,
					  const __u8 *s, __u32 len, struct bee_dfa_answer *a)
{
	if (len > BEE_PATH_MAX - 1) {
		a->state = h->dead;
		a->perms = 0;
		a->too_long = 1;
		return;
	}
	a->state = bee_dfa_walk(h, value_size, s, len);
	a->perms = bee_dfa_state_perms(h, value_size, a->state);
	a->too_long = 0;
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
	BEE_DFA_ERR_HOPS = -7,     /* hops[] too big, or not next[] as offsets */
};

/* The hop to state t in hops[] of the header's form. */
static inline __u32 bee_dfa_hop(const struct bee_dfa_hdr *h, __u32 t)
{
	if (t == h->dead)
		return BEE_DFA_HOP_DEAD;
	__u32 row = t * ((__u32)h->nclasses + 1) * 2;
	if (h->hops == BEE_DFA_HOPS_ABS)
		row += (__u32)bee_dfa_hops_off(h->nstates, h->nclasses);
	return row;
}

/* The first slot of state st's row in hops[] of the header's form. */
static inline __u32 bee_dfa_hops_lead(const struct bee_dfa_hdr *h, __u32 st)
{
	return h->hops == BEE_DFA_HOPS_ABS ? bee_dfa_abs_mark(st) : st;
}

/* hops[] says what next[] says (next[] checked first), each row leads
 * with its slot, and hops 2's tail is zero. With bee_dfa_hops_fit, what
 * bee_dfa_walk_abs needs follows: every hop but the dead one is a row at
 * most value_size - 2 - BEE_DFA_ABS_REACH from the start, and every stop
 * mark and the dead hop are past that. */
static inline int bee_dfa_hops_check(const struct bee_dfa_hdr *h)
{
	__u32 ns = h->nstates, ncl = h->nclasses;
	if (!bee_dfa_hops_fit(ns, ncl, h->hops))
		return BEE_DFA_ERR_HOPS;
	const __u16 *next = bee_dfa_next(h);
	const __u8 *start = (const __u8 *)h + bee_dfa_hops_off(ns, ncl);
	const __u16 *hops = (const __u16 *)(const void *)start;
	for (__u32 st = 0; st < ns; st++) {
		const __u16 *row = hops + st * (ncl + 1);
		if (row[0] != bee_dfa_hops_lead(h, st))
			return BEE_DFA_ERR_HOPS;
		for (__u32 c = 0; c < ncl; c++)
			if (row[1 + c] != bee_dfa_hop(h, next[st * ncl + c]))
				return BEE_DFA_ERR_HOPS;
	}
	const __u8 *tail = start + bee_dfa_hops_size(ns, ncl);
	for (__u64 b = 0; h->hops == BEE_DFA_HOPS_ABS && b < bee_dfa_abs_pad(ncl); b++)
		if (tail[b])
			return BEE_DFA_ERR_HOPS;
	return 0;
}

static inline int bee_dfa_image_check(const void *blob, __u64 len)
{
	const struct bee_dfa_hdr *h = (const struct bee_dfa_hdr *)blob;
	if (len < sizeof(*h))
		return BEE_DFA_ERR_SIZE;
	if (h->magic != BEE_DFA_MAGIC)
		return BEE_DFA_ERR_MAGIC;
	/* with hops[], or without: hops 0, or hops 1 or 2 kept with the size
	 * of next[] alone (a copy without the table, see bee_dfa_walk) */
	int hops = h->hops && h->size == bee_dfa_image_size_hops(h->nstates, h->nclasses, h->hops);
	if (!h->nstates || !h->nclasses || h->size != len || h->hops > BEE_DFA_HOPS_ABS ||
	    (!hops && h->size != bee_dfa_image_size(h->nstates, h->nclasses)))
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
	return hops ? bee_dfa_hops_check(h) : 0;
}

#endif
