# BPF LSM per cgroup, without bee: a minimal lsm_cgroup/file_open program
# (tools/vm/guest/deny_open.bpf.c) passes the 6.1 verifier, attaches to a
# fresh cgroup as BPF_LSM_CGROUP and denies one path, with the errno it
# chose, to that cgroup's processes only. Every deny is paired with an
# allow of the same path from outside the cgroup, and with the same open
# inside it once the program is detached.
. /bee/lib.sh

dir=/tmp/bee-sanity
cg=/sys/fs/cgroup/bee-sanity
pins=/sys/fs/bpf/bee-sanity
mkdir -p "$dir" "$cg"
echo secret >"$dir/denied"
echo fine >"$dir/allowed"
cleanup() {
	rm -rf "$pins"
	rmdir "$cg" 2>/dev/null
}
trap cleanup EXIT

# without the program, the open succeeds in the cgroup
before=$(try_word in_cgroup "$cg" bee-try open "$dir/denied")

if ! bee-attach /bee/bpf/deny_open.bpf.o "$cg" "$pins"; then
	bee_case load-attach FAIL "bee-attach refused (its output is above)"
	exit 1
fi
bee_case load-attach PASS "deny_open verified and attached to $cg (link pinned in $pins)"

inside=$(try_word in_cgroup "$cg" bee-try open "$dir/denied")
outside=$(try_word bee-try open "$dir/denied")
other=$(try_word in_cgroup "$cg" bee-try open "$dir/allowed")

if [ "$before" = OK ] && [ "$inside" = EACCES ]; then
	bee_case deny-in-cgroup PASS "open $dir/denied in the cgroup: EACCES (before attaching: OK)"
else
	bee_case deny-in-cgroup FAIL "open $dir/denied in the cgroup: '$inside', want EACCES (before attaching: '$before', want OK)"
fi
if [ "$outside" = OK ]; then
	bee_case allow-outside PASS "open $dir/denied outside the cgroup: OK"
else
	bee_case allow-outside FAIL "open $dir/denied outside the cgroup: '$outside', want OK"
fi
if [ "$other" = OK ]; then
	bee_case allow-other-path PASS "open $dir/allowed in the cgroup: OK"
else
	bee_case allow-other-path FAIL "open $dir/allowed in the cgroup: '$other', want OK"
fi

# unpinning drops the last reference to the links; the kernel detaches
# them once the bpffs inodes are freed (after an RCU grace period)
rm -rf "$pins"
after=""
for _ in 1 2 3 4 5 6 7 8 9 10; do
	after=$(try_word in_cgroup "$cg" bee-try open "$dir/denied")
	[ "$after" = OK ] && break
	sleep 0.5
done
if [ "$after" = OK ]; then
	bee_case detach PASS "after unpinning: open $dir/denied in the cgroup: OK"
else
	bee_case detach FAIL "after unpinning: open $dir/denied in the cgroup still '$after' 5 s later"
fi
