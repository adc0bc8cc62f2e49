/* SPDX-License-Identifier: GPL-2.0-only */
/* deny_open.bpf.c: the smallest BPF LSM program that can fail a test.
 *
 * Attached with BPF_LSM_CGROUP to one cgroup, it refuses an open of exactly
 * one path, DENIED_PATH, with EACCES for the tasks of that cgroup, and
 * allows everything else. It uses what bee's hook programs rely on: an
 * lsm_cgroup/file_open program, bpf_d_path into a per-CPU scratch buffer,
 * and bpf_set_retval to choose the errno. Independent of bee's templates on
 * purpose: it checks the kernel, not bee.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#define EACCES 13
#define DENIED_PATH "/tmp/bee-sanity/denied"
#define SCRATCH_LEN 256

/* Cut-down kernel structs, relocated against the running kernel (CO-RE). */
struct path {
	void *mnt;
	void *dentry;
} __attribute__((preserve_access_index));

struct file {
	struct path f_path;
} __attribute__((preserve_access_index));

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, char[SCRATCH_LEN]);
} scratch SEC(".maps");

/* in .rodata, which libbpf freezes before loading (a static string would
 * land in a merged-string section that libbpf 1.1 cannot size) */
const volatile char denied[] = DENIED_PATH;

SEC("lsm_cgroup/file_open")
int BPF_PROG(deny_open, struct file *file)
{
	__u32 zero = 0;
	char *buf = bpf_map_lookup_elem(&scratch, &zero);
	if (!buf)
		return 1;
	long n = bpf_d_path(&file->f_path, buf, SCRATCH_LEN);
	if (n != sizeof(denied))   /* n counts the NUL */
		return 1;
	for (int i = 0; i < (int)sizeof(denied); i++)
		if (buf[i] != denied[i])
			return 1;
	bpf_set_retval(-EACCES);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
