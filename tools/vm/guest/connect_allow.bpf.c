/* SPDX-License-Identifier: GPL-2.0-only */
/* connect_allow.bpf.c: a cgroup/connect4 program that allows every IPv4
 * connect (returns 1), independent of bee (see connect_deny.bpf.c). */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("cgroup/connect4")
int connect_allow(struct bpf_sock_addr *ctx)
{
	(void)ctx;
	return 1;
}

char LICENSE[] SEC("license") = "GPL";
