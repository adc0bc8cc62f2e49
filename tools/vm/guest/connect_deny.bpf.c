/* SPDX-License-Identifier: GPL-2.0-only */
/* connect_deny.bpf.c: a cgroup/connect4 program that refuses every IPv4
 * connect (returns 0), independent of bee: with connect_allow.bpf.c it
 * shows how the kernel combines the programs of a cgroup and of its
 * ancestors (tools/vm/tests/61-nesting-kernel.sh). */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("cgroup/connect4")
int connect_deny(struct bpf_sock_addr *ctx)
{
	(void)ctx;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
