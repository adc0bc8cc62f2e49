# What the global BPF LSM programs (bpf/bee_guard.bpf.h) cost the processes
# outside a session: bee-hookbench's calls with no session, with one session
# live (its programs attached, the calls made outside it), and after it;
# the session is one of tools/vm/policies/guard.toml, as in 72-guard.
# The figures go to the console as BEE-BENCH lines for tools/vm/bench. The
# case passes when every round ran; the cost is a figure, not a verdict
# (TCG's timings vary too much for a bound).
# bee-timeout: 240
# shellcheck source=tools/vm/guest/lib.sh
. /bee/lib.sh
trap '' PIPE

# full length under tools/vm/bench (bee.bench=1); in the test suite a tenth,
# enough to see every round run
if [ "${BEE_BENCH:-}" = 1 ]; then n=${BEE_HOOKBENCH_N:-100000}; else n=${BEE_HOOKBENCH_N:-10000}; fi
cd "$BEE_TMP" || fail "no scratch directory"
bee-hookbench none "$n" >none.out 2>&1 || fail "no session: $(cat none.out)"
cat none.out
mkdir -p /grd/bin /grd/ro /grd/rw /grd/secret
cp /bin/bee-try /grd/bin/tool
session_start /bee/packs/vm/guard.bpfpack /grd/bin/tool serve
w=$(ask pid)
case $w in
*[!0-9]* | "") fail "the session did not start: '$w': $(tail -n 3 "$session_dir/err" | tr '\n' ' ')" ;;
esac
bee-hookbench session "$n" >session.out 2>&1 || fail "one session live: $(cat session.out)"
cat session.out
session_end
bee-hookbench after "$n" >after.out 2>&1 || fail "after the session: $(cat after.out)"
cat after.out
rm -rf /grd
# per call: the session's figure minus the figure without one
summary=$(awk '$1 == "BEE-BENCH" { v[$2 "," $3] = $4; c[$3] = 1 }
	END { for (k in c) printf "%s %+.1f ns; ", k, v["session," k] - v["none," k] }' \
	none.out session.out)
pass "outside a session, one session live vs none: $summary"
