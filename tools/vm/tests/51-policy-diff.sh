# The policy differential (tools/check-landlock-diff, shipped as
# /bee/check-landlock-diff) on this kernel, once under each backend: a
# seeded tree and seeded policies, every path read, written and exec'd by
# bee-probe in a session. Under bpf-lsm, which has no narrowings, every
# case must equal `beec query` (the policy's meaning), and so must `beec
# query --backend bpf-lsm`; under landlock the checks are the host's (the
# session equals `beec query --backend landlock`, never wider than the
# policy, exact where no narrowing is reported). Each differing case is a
# FAIL naming the seed, the policy, the operation, the path, what was
# expected and what the session did. The script's controls fail a run
# whose sessions never allowed or never denied an operation.
# The seed is printed; bee.seed=N on the kernel command line (BEE_SEED=N
# tools/vm/run policy-diff) reproduces it. Fewer policies than on the
# host (3 per backend, about 900 cases each; bee.lldiff-policies=N): under
# TCG a bpf-lsm policy costs about 17 s (8 took 137 s), so that the case
# stays near 90 s.
# bee-timeout: 150
. /bee/lib.sh

seed=""
npol=3
# shellcheck disable=SC2013 # the command line is words
for word in $(cat /proc/cmdline); do
	case $word in
	bee.seed=*) seed=${word#bee.seed=} ;;
	bee.lldiff-policies=*) npol=${word#bee.lldiff-policies=} ;;
	esac
done
[ -n "$seed" ] || seed=$(($(date +%s) % 100000))
echo "51-policy-diff: seed $seed (BEE_SEED=$seed tools/vm/run policy-diff reproduces), $npol policies"
[ -x /bin/bee-probe ] || fail "no /bin/bee-probe in the guest (tools/vm/build-guest)"
[ -f /bee/check-landlock-diff ] || fail "no /bee/check-landlock-diff in the guest (tools/vm/build-guest)"

# Landlock ABI 2 here leaves truncate, device ioctls and the scopes open:
# named, as a user must (bee-load run refuses otherwise); no case needs them
weaker="--allow-weaker truncate --allow-weaker ioctl-dev --allow-weaker scope"
for be in bpf-lsm landlock; do
	t0=$(cut -d' ' -f1 /proc/uptime)
	env BEE_SEED="$seed" BEE_LLDIFF_BACKEND="$be" BEE_LLDIFF_POLICIES="$npol" \
		BEE_BEEC=/bin/beec BEE_LOAD=/bin/bee-load BEE_PROBE=/bin/bee-probe \
		BEE_LLDIFF_EXE=/bin/dyn-hello TMPDIR=/tmp BEE_LLDIFF_RUN_OPTS="$weaker" \
		sh /bee/check-landlock-diff >"$BEE_TMP/out.$be" 2>"$BEE_TMP/err.$be"
	rc=$?
	t1=$(cut -d' ' -f1 /proc/uptime)
	secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
	# the whole output stays in the log for whoever reads a failure
	cat "$BEE_TMP/out.$be" "$BEE_TMP/err.$be"
	k=0
	grep '^MISMATCH ' "$BEE_TMP/out.$be" | while read -r _ detail; do
		k=$((k + 1))
		bee_case "$be-mismatch-$k" FAIL "$detail"
	done
	last=$(tail -n 1 "$BEE_TMP/err.$be")
	sum=$(grep "^check-landlock-diff: $be: .* agree" "$BEE_TMP/out.$be" | tail -n 1)
	if [ "$rc" -eq 0 ] && [ -n "$sum" ]; then
		bee_case "$be" PASS "${secs}s: ${sum#check-landlock-diff: }"
	else
		bee_case "$be" FAIL "exit $rc after ${secs}s (seed $seed): ${last:-$(tail -n 1 "$BEE_TMP/out.$be")}"
	fi
done
