# `bee-load check` reports every kernel gate and exits 0 where the bpf-lsm
# backend is available, as it must be on this kernel.
. /bee/lib.sh

command -v bee-load >/dev/null || fail "bee-load not built (no loader/bee-load.c on the host)"
out=$(bee-load check 2>&1)
rc=$?
printf '%s\n' "$out"
[ "$rc" -eq 0 ] || fail "bee-load check exited $rc: $(printf '%s\n' "$out" | tail -n 2)"
pass "bee-load check exited 0: $(printf '%s\n' "$out" | tail -n 1)"
