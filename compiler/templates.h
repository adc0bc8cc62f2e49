/* SPDX-License-Identifier: GPL-2.0-only */
/* templates.h: the BPF template files embedded in libbeec at build time
 * (tools/embed over the bpf/ headers and the shared runtime/bee_ layouts), so
 * that codegen can give clang the exact headers this beec was built with. */
#ifndef BEE_TEMPLATES_H
#define BEE_TEMPLATES_H

#include <stddef.h>

struct bee_template {
	const char *name;              /* base name, e.g. "bee_hooks.bpf.h" */
	const unsigned char *data;     /* len bytes, then a NUL */
	size_t len;
};

extern const struct bee_template bee_templates[];
extern const size_t bee_ntemplates;

#endif
