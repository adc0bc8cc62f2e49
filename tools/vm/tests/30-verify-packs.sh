# Every example pack's BPF object, LSM programs included, through the real
# 6.1 verifier (issue 4: "LSM programs are verified in the VM"). Nothing is
# attached. One case per example policy.
# bee-timeout: 240
. /bee/lib.sh

[ -s /bee/packs/policies.list ] || fail "no /bee/packs/policies.list: the host shipped no example policy"
while read -r name; do
	pack=/bee/packs/$name.bpfpack
	if [ ! -s "$pack" ]; then
		bee_case "$name" FAIL "no $pack: beec did not compile policies/$name.toml on the host"
		continue
	fi
	start=$(cut -d' ' -f1 /proc/uptime)
	if out=$(bee-verify "$pack" 2>&1); then
		printf '%s\n' "$out"
		end=$(cut -d' ' -f1 /proc/uptime)
		bee_case "$name" PASS "$(printf '%s\n' "$out" | tail -n 1 | sed 's/^bee-verify: //') in $(echo "$end - $start" | bc) s"
	else
		printf '%s\n' "$out"
		bee_case "$name" FAIL "$(printf '%s\n' "$out" | grep -m 1 '^bee-verify:' | sed 's/^bee-verify: //')"
	fi
done </bee/packs/policies.list
