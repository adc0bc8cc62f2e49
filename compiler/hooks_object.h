/* SPDX-License-Identifier: GPL-2.0-only */
/* hooks_object.h: bee's BPF hook object, embedded in libbeec at build time.
 *
 * The GNUmakefile compiles bpf/bee_hooks.bpf.c once (clang is needed to
 * build bee, never to compile a policy) and tools/embed turns the object
 * into these bytes; codegen hands them to every pack unchanged, and the
 * loader specialises them per policy from the manifest (codegen.h). */
#ifndef BEE_HOOKS_OBJECT_H
#define BEE_HOOKS_OBJECT_H

#include <stddef.h>

extern const unsigned char bee_hooks_object[];   /* 8-byte aligned */
extern const size_t bee_hooks_object_len;

#endif
