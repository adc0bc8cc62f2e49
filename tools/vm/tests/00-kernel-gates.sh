# The kernel features bee's bpf-lsm backend needs, each checked directly
# (not through bee-load, whose own `check` is another case).
. /bee/lib.sh

lsm=$(cat /sys/kernel/security/lsm 2>&1)
case ",$lsm," in
*,bpf,*) bee_case bpf-lsm PASS "active LSMs: $lsm" ;;
*) bee_case bpf-lsm FAIL "'bpf' is not among the active LSMs: $lsm" ;;
esac

# BTF of the running kernel, which CO-RE relocations and lsm hooks need
magic=$(head -c 2 /sys/kernel/btf/vmlinux 2>/dev/null | od -An -tx1 | tr -d ' \n')
size=$(wc -c </sys/kernel/btf/vmlinux 2>/dev/null || echo 0)
if [ "$magic" = 9feb ]; then
	bee_case btf PASS "/sys/kernel/btf/vmlinux: $size bytes, magic 0xeb9f"
else
	bee_case btf FAIL "/sys/kernel/btf/vmlinux: magic '$magic', want 9feb (little-endian 0xeb9f)"
fi

if grep -q '^cgroup2 /sys/fs/cgroup cgroup2 ' /proc/mounts && [ -r /sys/fs/cgroup/cgroup.controllers ]; then
	bee_case cgroup2 PASS "controllers: $(cat /sys/fs/cgroup/cgroup.controllers)"
else
	bee_case cgroup2 FAIL "no cgroup v2 hierarchy at /sys/fs/cgroup: $(grep cgroup /proc/mounts)"
fi

if grep -q '^bpf /sys/fs/bpf bpf ' /proc/mounts; then
	bee_case bpffs PASS "bpffs at /sys/fs/bpf"
else
	bee_case bpffs FAIL "bpffs is not mounted at /sys/fs/bpf"
fi
