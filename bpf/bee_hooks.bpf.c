/* SPDX-License-Identifier: GPL-2.0-only */
/* bee_hooks.bpf.c: bee's one hook object, compiled when bee is built.
 *
 * The programs and maps are bee_hooks.bpf.h's; the build embeds the object
 * in libbeec (compiler/hooks_object.h) and every pack carries it unchanged.
 * What a policy changes, the loader sets at load time (bee_hooks.bpf.h,
 * "what the loader sets"), so no policy needs a compiler.
 */
#include "bee_hooks.bpf.h"
