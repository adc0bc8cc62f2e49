# Nothing the suite did made the kernel complain: no oops, BUG, warning
# splat or lockdep report in the kernel log.
. /bee/lib.sh

bad=$(dmesg | grep -E 'BUG:|Oops|WARNING: CPU|kernel BUG|general protection fault|possible circular locking|RCU stall|Call Trace:' | head -n 5)
[ -z "$bad" ] || fail "the kernel log has: $bad"
pass "no oops, BUG or warning in $(dmesg | wc -l) lines of kernel log"
