/* SPDX-License-Identifier: GPL-2.0-only */
/* image.h: map images written from the lowered policy (runtime/ layouts).
 *
 * Ownership: each writer returns an xmalloc'ed blob that the caller frees.
 */
#ifndef BEE_IMAGE_H
#define BEE_IMAGE_H

#include "bee_dfa.h"
#include "dfa.h"

#include <stddef.h>

/* The automaton as one bee_dfa image (runtime/bee_dfa.h). */
struct bee_dfa_hdr *image_dfa_write(const struct dfa *d, size_t *len);

/* Bytes of image_dfa_write's image of d: the map's value size. */
size_t image_dfa_size(const struct dfa *d);

#endif
