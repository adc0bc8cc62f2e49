/* SPDX-License-Identifier: GPL-2.0-only */
/* bee_hooks_test.h: the query of bee_test_walk, the test program that a
 * hook object holds but only a test loads: codegen lists it when asked
 * for test programs (codegen_opts.test_programs; never in a pack's hooks).
 *
 * LSM programs do not load where the tests run, so bee_test_walk (a
 * syscall program, run through BPF_PROG_TEST_RUN) calls the very walk
 * functions the hooks call (bee_walk_fs, bee_walk_exec), sized for the
 * policy: the kernel's verifier checks them, and the tests compare their
 * answers with the host evaluator's. Shared by the BPF side and
 * compiler/tests/test_codegen.c, so fixed-width types only.
 */
#ifndef BEE_HOOKS_TEST_H
#define BEE_HOOKS_TEST_H

#ifndef __bpf__
#include <linux/types.h>
#endif

#include "bee_dfa.h"

struct bee_test_walk {
	__u32 len;                 /* in: path bytes, at most BEE_PATH_MAX - 1 */
	__u32 fs_state;            /* out: bee_walk_fs's state */
	__u32 fs_perms;            /* out: and permission bits */
	__u32 exec_state;          /* out: bee_walk_exec's state */
	__u32 exec_perms;          /* out: and permission bits */
	__u32 reserved;
	__u64 sess;                /* in: the session key the walks look up */
	__u8 path[BEE_PATH_MAX];   /* in */
};

_Static_assert(sizeof(struct bee_test_walk) == 32 + BEE_PATH_MAX, "bee_test_walk size");

#endif
