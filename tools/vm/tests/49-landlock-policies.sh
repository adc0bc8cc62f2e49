# Every example policy starts under --backend landlock (issue 14): the
# policy's automata walked against the guest's tree at session start, so
# no policy is refused with 74 any more. The tool is /usr/bin/true, which
# not every policy grants: 126 is the policy refusing it inside a session
# that started, 0 a policy that grants it; anything else fails. The
# launch's one line about the walk's narrowings is kept as the detail.
# This kernel's Landlock ABI (2 on 6.1) leaves truncate, device ioctls
# and the scopes open: the launch names them with --allow-weaker, and one
# case shows it refused (74, naming them) without.
# bee-timeout: 180
. /bee/lib.sh

weaker="--allow-weaker truncate --allow-weaker ioctl-dev --allow-weaker scope"
first=$(head -n 1 /bee/packs/policies.list)
out=$(bee-load run --backend landlock "/bee/packs/$first.bpfpack" -- /usr/bin/true 2>&1)
rc=$?
abi=$(bee-load check 2>&1 | sed -n 's/.*Landlock ABI \([0-9]*\).*/\1/p' | head -n 1)
if [ "${abi:-0}" -ge 6 ]; then
	bee_case abi-refused PASS "Landlock ABI $abi restricts every right bee uses (exit $rc)"
elif [ "$rc" -eq 74 ] && printf '%s' "$out" | grep -q "allow-weaker scope"; then
	bee_case abi-refused PASS "ABI $abi, no --allow-weaker: 74, $(bee_oneline "$out")"
else
	bee_case abi-refused FAIL "ABI ${abi:-?}, no --allow-weaker: exit $rc, not 74 naming the rights: $(bee_oneline "$out")"
fi

[ -s /bee/packs/policies.list ] || fail "no /bee/packs/policies.list"
chown -R 65534:65534 /home/dev 2>/dev/null
while read -r name; do
	# shellcheck disable=SC2086 # a list of words
	out=$(bee-load run --backend landlock $weaker "/bee/packs/$name.bpfpack" -- /usr/bin/true 2>&1)
	rc=$?
	line=$(printf '%s\n' "$out" | grep 'landlock: ' | head -n 1)
	case $rc in
	0 | 126) bee_case "landlock-$name" PASS "started, exit $rc: ${line:-no narrowing}" ;;
	*) bee_case "landlock-$name" FAIL "exit $rc: $(bee_oneline "$out")" ;;
	esac
done </bee/packs/policies.list
