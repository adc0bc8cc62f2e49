# Every example policy starts under --backend landlock (issue 14): the
# policy's automata walked against the guest's tree at session start, so
# no policy is refused with 74 any more. The tool is /usr/bin/true, which
# not every policy grants: 126 is the policy refusing it inside a session
# that started, 0 a policy that grants it; anything else fails. The
# launch's one line about the walk's narrowings is kept as the detail.
# bee-timeout: 180
. /bee/lib.sh

[ -s /bee/packs/policies.list ] || fail "no /bee/packs/policies.list"
chown -R 65534:65534 /home/dev 2>/dev/null
while read -r name; do
	out=$(bee-load run --backend landlock "/bee/packs/$name.bpfpack" -- /usr/bin/true 2>&1)
	rc=$?
	line=$(printf '%s\n' "$out" | grep 'landlock: ' | head -n 1)
	case $rc in
	0 | 126) bee_case "landlock-$name" PASS "started, exit $rc: ${line:-no narrowing}" ;;
	*) bee_case "landlock-$name" FAIL "exit $rc: $(bee_oneline "$out")" ;;
	esac
done </bee/packs/policies.list
