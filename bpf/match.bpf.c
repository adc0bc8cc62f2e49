/* SPDX-License-Identifier: GPL-2.0-only */
/* match.bpf.c: the matchers of runtime/ compiled as BPF, run by tests.
 *
 * Two programs, never attached: runtime/tests/test_bpf_match.c fills the
 * maps from the compiler's images, runs each program through
 * BPF_PROG_TEST_RUN with a query from bpf/bee_match.h and compares the answer
 * the kernel copies back with the host evaluator's.
 *
 *   bee_match_path  syscall: one path (the context) through the automaton
 *                   image in bee_dfa
 *   bee_match_net   xdp: one endpoint (the test packet) through the LPM
 *                   tries bee_net4/bee_net6
 *
 * The loader sizes the maps before load: bee_dfa's value to the image's
 * size, and bee_dfa_image_max (read-only data, frozen before the verifier
 * runs, so a constant to it) to the same number; the LPM tries to their
 * entry counts.
 */
#include "bee_types.h"

#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "bee_dfa.h"
#include "bee_net.h"
#include "bee_net_decide.h"
#include "bee_match.h"

char LICENSE[] SEC("license") = "GPL";

/* bee_dfa's value size; the verifier bounds every table load by it */
const volatile __u32 bee_dfa_image_max = sizeof(struct bee_dfa_hdr);
#define BEE_DFA_IMAGE_MAX bee_dfa_image_max

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct bee_dfa_hdr));   /* set by the loader */
} bee_dfa SEC(".maps");

/* the path as a hook would have it from bpf_d_path: too big for the stack */
struct bee_path_buf {
	__u8 path[BEE_PATH_MAX];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bee_path_buf);
} bee_scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1);                           /* set by the loader */
	__type(key, struct bee_net_key4);
	__type(value, struct bee_net_value);
} bee_net4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1);                           /* set by the loader */
	__type(key, struct bee_net_key6);
	__type(value, struct bee_net_value);
} bee_net6 SEC(".maps");

SEC("syscall")
int bee_match_path(struct bee_match_path_ctx *ctx)
{
	__u32 zero = 0;
	struct bee_dfa_answer a = { .state = BEE_DFA_STATE_INVALID };
	struct bee_path_buf *buf = bpf_map_lookup_elem(&bee_scratch, &zero);
	const struct bee_dfa_hdr *h = bpf_map_lookup_elem(&bee_dfa, &zero);
	__u32 len = ctx->len;
	__u64 t0;

	if (!buf || !h)
		goto out;
	/* the scratch buffer, as bpf_d_path fills it in a hook; a too-long
	 * path is never read */
	if (len <= BEE_PATH_MAX - 1 &&
	    bpf_probe_read_kernel(buf->path, len, ctx->path) < 0)
		goto out;
	t0 = bpf_ktime_get_ns();
	bee_dfa_match(h, BEE_DFA_IMAGE_MAX, buf->path, len, &a);
	ctx->walk_ns = bpf_ktime_get_ns() - t0;
out:
	ctx->state = a.state;
	ctx->perms = a.perms;
	ctx->too_long = a.too_long;
	return 0;
}

/* The network decision runs as XDP, not as a syscall program: the kernel
 * loads syscall programs only sleepable, and a sleepable program may not
 * use an LPM trie. The query and its answer travel in the test packet. */
SEC("xdp")
int bee_match_net(struct xdp_md *xdp)
{
	struct bee_match_net_ctx *q = (void *)(long)xdp->data;
	struct bee_net_answer a = { .prov = BEE_NET_PROV_NONE };

	if ((void *)(q + 1) > (void *)(long)xdp->data_end)
		return XDP_ABORTED;
	__u32 addr[4] = { q->addr_be32[0], q->addr_be32[1], q->addr_be32[2], q->addr_be32[3] };
	__u32 family = q->family, dir = q->dir, proto = q->proto;
	/* fail closed on what no hook would ever pass */
	if ((family != 4 && family != 6) || (dir != BEE_NET_CONNECT && dir != BEE_NET_BIND) ||
	    proto > 255)
		goto out;
	bee_net_decide(&bee_net4, &bee_net6, (__u8)dir, (__u8)proto, family, addr,
		       bpf_ntohs((__u16)q->port_be), &a);
out:
	q->allow = a.allow;
	q->map_family = a.map_family;
	q->prov = a.prov;
	return XDP_PASS;
}
