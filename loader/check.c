/* SPDX-License-Identifier: GPL-2.0-only */
/* check.c: the gates of `bee-load check`. Each gate is probed for real
 * where a probe is possible: the BPF_LSM_CGROUP gate loads a two-instruction
 * lsm_cgroup program for file_open (attach_btf_id from the running
 * kernel's BTF) and closes it at once, never attaching it. A kernel that
 * lists the BPF LSM but refuses its programs (this project's host answers
 * EPERM) fails there, not at launch. */
#include "internal.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#ifndef __NR_lsm_list_modules
#define __NR_lsm_list_modules 461     /* x86_64, kernel 6.8+ */
#endif
#define BEE_LSM_ID_BPF 109            /* include/uapi/linux/lsm.h LSM_ID_BPF */
#define BEE_CAP_PERFMON 38
#define BEE_CAP_BPF 39

__attribute__((format(printf, 4, 5)))
static void gate_set(struct bee_check_report *r, enum bee_gate_id g, bool ok, const char *fmt, ...)
{
	va_list ap;
	r->gates[g].ok = ok;
	va_start(ap, fmt);
	vsnprintf(r->gates[g].reason, sizeof(r->gates[g].reason), fmt, ap);
	va_end(ap);
}

static void gate_kernel(struct bee_check_report *r)
{
	struct utsname u;
	unsigned major = 0;
	uname(&u);
	sscanf(u.release, "%u", &major);
	bool ok = major >= 6;
	gate_set(r, BEE_GATE_KERNEL, ok, "%s%s", u.release,
		 ok ? "" : " (BPF_LSM_CGROUP needs 6.0 or later)");
}

/* 'bpf' in the active LSM list: securityfs when it is mounted, else the
 * lsm_list_modules system call (6.8+), which needs no mount. */
static void gate_lsm(struct bee_check_report *r)
{
	char *text = NULL;
	if (bee_read_file("/sys/kernel/security/lsm", &text, NULL) == 0) {
		bool ok = false;
		for (char *t = strtok(text, ",\n"); t; t = strtok(NULL, ",\n"))
			ok |= strcmp(t, "bpf") == 0;
		gate_set(r, BEE_GATE_LSM, ok, "'bpf' %s the active LSM list (/sys/kernel/security/lsm)",
			 ok ? "is in" : "is not in");
		free(text);
		return;
	}
	uint64_t ids[64];
	uint32_t size = sizeof(ids);
	long n = syscall(__NR_lsm_list_modules, ids, &size, 0);
	if (n < 0) {
		gate_set(r, BEE_GATE_LSM, false,
			 "cannot read the active LSM list: securityfs is not mounted and lsm_list_modules failed: %s",
			 strerror(errno));
		return;
	}
	bool ok = false;
	for (long i = 0; i < n; i++)
		ok |= ids[i] == BEE_LSM_ID_BPF;
	gate_set(r, BEE_GATE_LSM, ok, "'bpf' %s the active LSM list (lsm_list_modules)",
		 ok ? "is in" : "is not in");
}

static void gate_btf(struct bee_check_report *r)
{
	bool ok = access("/sys/kernel/btf/vmlinux", R_OK) == 0;
	gate_set(r, BEE_GATE_BTF, ok, "/sys/kernel/btf/vmlinux %s", ok ? "is readable" : strerror(errno));
}

static void gate_mounts(struct bee_check_report *r)
{
	char root[4096];
	if (bee_cgroup2_mount(r->cgroup2, sizeof(r->cgroup2), root, sizeof(root)) == 0)
		gate_set(r, BEE_GATE_CGROUP2, true, "cgroup2 mounted at %s", r->cgroup2);
	else
		gate_set(r, BEE_GATE_CGROUP2, false, "no cgroup2 mount in /proc/self/mountinfo");
	char *fs = NULL;
	if (bee_bpffs_find(r->bpffs, sizeof(r->bpffs)) == 0)
		gate_set(r, BEE_GATE_BPFFS, true, "bpf file system mounted at %s", r->bpffs);
	else if (bee_read_file("/proc/filesystems", &fs, NULL) == 0 && strstr(fs, "\tbpf\n"))
		/* run mounts one of its own (bpffs.c): the privileges gate says whether it may */
		gate_set(r, BEE_GATE_BPFFS, true,
			 "none mounted; run mounts one at STATE-DIR/bpffs for its pins (the kernel has bpffs)");
	else
		gate_set(r, BEE_GATE_BPFFS, false,
			 "no bpf file system is mounted and the kernel has none (/proc/filesystems), sessions cannot pin");
	free(fs);
}

static void gate_privileges(struct bee_check_report *r)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];
	if (syscall(SYS_capget, &h, d) < 0) {
		gate_set(r, BEE_GATE_PRIVILEGES, false, "capget: %s", strerror(errno));
		return;
	}
	uint64_t eff = (uint64_t)d[0].effective | (uint64_t)d[1].effective << 32;
	static const struct { int cap; const char *name; } need[] = {
		{ BEE_CAP_BPF, "CAP_BPF" }, { CAP_SYS_ADMIN, "CAP_SYS_ADMIN" }, { BEE_CAP_PERFMON, "CAP_PERFMON" },
		{ CAP_SETPCAP, "CAP_SETPCAP" },
	};
	char missing[128] = "";
	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++)
		if (!(eff >> need[i].cap & 1))
			snprintf(missing + strlen(missing), sizeof(missing) - strlen(missing), "%s%s",
				 *missing ? ", " : "", need[i].name);
	if (*missing)
		gate_set(r, BEE_GATE_PRIVILEGES, false, "not effective: %s (run as root)", missing);
	else
		gate_set(r, BEE_GATE_PRIVILEGES, true, "CAP_BPF, CAP_SYS_ADMIN, CAP_PERFMON, CAP_SETPCAP effective");
}

static int silent_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

/* Loads "r0 = 1; exit" as lsm_cgroup/file_open and closes it. */
static void gate_lsm_cgroup(struct bee_check_report *r)
{
	libbpf_print_fn_t old = libbpf_set_print(silent_print);
	struct btf *btf = btf__load_vmlinux_btf();
	int err = libbpf_get_error(btf);
	if (err) {
		gate_set(r, BEE_GATE_LSM_CGROUP, false, "cannot read the kernel's BTF: %s", strerror(-err));
		goto out;
	}
	int id = btf__find_by_name_kind(btf, "bpf_lsm_file_open", BTF_KIND_FUNC);
	if (id < 0) {
		gate_set(r, BEE_GATE_LSM_CGROUP, false, "the kernel's BTF has no 'bpf_lsm_file_open'");
		goto out;
	}
	struct bpf_insn insns[] = {
		{ .code = 0xb7, .dst_reg = 0, .imm = 1 },   /* BPF_ALU64 | BPF_MOV | BPF_K: r0 = 1 */
		{ .code = 0x95 },                             /* BPF_JMP | BPF_EXIT */
	};
	LIBBPF_OPTS(bpf_prog_load_opts, o, .expected_attach_type = BPF_LSM_CGROUP,
		    .attach_btf_id = (uint32_t)id);
	int fd = bpf_prog_load(BPF_PROG_TYPE_LSM, "bee_probe", "GPL", insns, 2, &o);
	if (fd < 0) {
		gate_set(r, BEE_GATE_LSM_CGROUP, false,
			 "the kernel refuses a BPF_LSM_CGROUP program for file_open: %s", strerror(errno));
		goto out;
	}
	close(fd);
	gate_set(r, BEE_GATE_LSM_CGROUP, true, "a BPF_LSM_CGROUP program for file_open loads");
out:
	btf__free(btf);
	libbpf_set_print(old);
}

int bee_landlock_abi(void)
{
	long abi = syscall(__NR_landlock_create_ruleset, NULL, 0, 1u /* LANDLOCK_CREATE_RULESET_VERSION */);
#ifdef BEE_FAULT_INJECTION
	/* an older kernel's ABI, for the tests of what it leaves open
	 * (tools/check-landlock-abi): never above the running one */
	const char *f = getenv("BEE_FAULT_LL_ABI");
	if (abi > 0 && f && atoi(f) >= 1 && atoi(f) < abi)
		abi = atoi(f);
#endif
	return abi < 0 ? 0 : (int)abi;
}

static void gate_landlock(struct bee_check_report *r)
{
	r->landlock_abi = bee_landlock_abi();
	if (r->landlock_abi > 0)
		gate_set(r, BEE_GATE_LANDLOCK, true, "Landlock ABI %d", r->landlock_abi);
	else
		gate_set(r, BEE_GATE_LANDLOCK, false, "Landlock is not enabled: %s", strerror(errno));
}

/* The first gate of list that fails, as the backend's reason. */
static bool backend_judge(struct bee_check_report *r, const enum bee_gate_id *list, size_t n,
			  char *reason, size_t size)
{
	for (size_t i = 0; i < n; i++) {
		const struct bee_gate *g = &r->gates[list[i]];
		if (!g->ok) {
			snprintf(reason, size, "%s: %s", g->name, g->reason);
			return false;
		}
	}
	snprintf(reason, size, "every gate it needs passes");
	return true;
}

int bee_check__run(struct bee_check_report *r)
{
	memset(r, 0, sizeof(*r));
	r->sz = sizeof(*r);
#define GATE_NAME(id, text) r->gates[BEE_GATE_##id].name = text;
	BEE_GATES(GATE_NAME)
#undef GATE_NAME
	gate_kernel(r);
	gate_lsm(r);
	gate_btf(r);
	gate_mounts(r);
	gate_privileges(r);
	gate_lsm_cgroup(r);
	gate_landlock(r);
	static const enum bee_gate_id lsm[] = {
		BEE_GATE_KERNEL, BEE_GATE_LSM, BEE_GATE_BTF, BEE_GATE_CGROUP2, BEE_GATE_PRIVILEGES,
		BEE_GATE_LSM_CGROUP, BEE_GATE_BPFFS,
	};
	static const enum bee_gate_id ll[] = {
		BEE_GATE_CGROUP2, BEE_GATE_PRIVILEGES, BEE_GATE_LANDLOCK, BEE_GATE_BPFFS,
	};
	r->bpf_lsm = backend_judge(r, lsm, sizeof(lsm) / sizeof(lsm[0]), r->bpf_lsm_reason,
				   sizeof(r->bpf_lsm_reason));
	r->landlock = backend_judge(r, ll, sizeof(ll) / sizeof(ll[0]), r->landlock_reason,
				    sizeof(r->landlock_reason));
	return 0;
}
