# Every example policy (policies/*.toml, listed in /bee/packs/policies.list)
# has its end-to-end session script, tools/vm/tests/4N-session-NAME.sh: a
# new example policy without one fails here instead of going untested.
# One case per example policy. (When the rig runs only some scripts, the
# ones not selected are missing here too: run it whole.)
. /bee/lib.sh

[ -s /bee/packs/policies.list ] || fail "no /bee/packs/policies.list"
while read -r name; do
	# shellcheck disable=SC2012 # test names are plain
	s=$(ls /bee/tests/4[0-9]-session-"$name".sh 2>/dev/null | head -n 1)
	if [ -n "$s" ]; then
		bee_case "$name" PASS "$(basename "$s") runs policies/$name.toml end to end"
	else
		bee_case "$name" FAIL "no tools/vm/tests/4N-session-$name.sh for policies/$name.toml"
	fi
done </bee/packs/policies.list
