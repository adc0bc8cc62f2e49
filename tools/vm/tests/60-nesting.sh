# Nesting: a subagent's session inside a parent's session
# (tools/vm/policies/nest-parent.toml; nest-child.toml, which beec proves
# a subset of it; nest-wide.toml, which it proves is not).
#
# Two ways to start the subagent's session:
#   inside   the parent's tool runs `bee-load run CHILD -- ...` itself
#            (bee-load run inside bee-load run)
#   joined   a privileged launcher joins the parent session's cgroup and
#            runs bee-load there, as an agent runtime that starts
#            subagents for a session would; bee-load makes the child's
#            cgroup below the parent's, so both sessions' programs apply
# Cases:
#   premise                   beec check: child a subset (0), wide not (3)
#   parent-session            the parent's own tool: parent-only.txt OK, wide-only.txt EACCES
#   inside-refused            inside: the tool (no capabilities) cannot start
#                             a session, subset or not
#   joined-start              joined: the child's tool runs in a cgroup below the parent's
#   joined-both-grant         what both grant: read OK, connect OK
#   joined-parent-only        what the parent grants and the child does not:
#                             read EACCES, connect EPERM
#   joined-parent-narrowed    the parent's grant of both.txt revoked live: the
#                             child's read of it is denied (by the parent's
#                             programs: the kernel intersects the sessions)
#   joined-refuse-non-subset  joined: the wide pack is refused before launch
#                             while the subset pack is not
#   joined-wide-bounded       if the wide pack ran anyway: what it grants and
#                             the parent does not stays denied
# bee-timeout: 90
. /bee/lib.sh
trap '' PIPE

mkdir -p /nest/bin /nest/run/state
cp /bin/bee-try /nest/bin/tool
echo both >/nest/both.txt
echo parent-only >/nest/parent-only.txt
echo wide-only >/nest/wide-only.txt
listen_start 127.0.0.1:47400 127.0.0.1:47401 127.0.0.1:47402 || fail "no listener"
trap 'listen_stop' EXIT

c=$(head -n 1 /bee/packs/vm/nest-child.check 2>/dev/null)
w=$(head -n 1 /bee/packs/vm/nest-wide.check 2>/dev/null)
if [ "$c" = 0 ] && [ "$w" = 3 ]; then
	bee_case premise PASS "on the host, beec check: nest-child is a subset of nest-parent (exit 0), nest-wide is not (exit 3)"
else
	bee_case premise FAIL "beec check on the host: nest-child exit '$c' (want 0), nest-wide exit '$w' (want 3)"
fi

# the parent session, on descriptors 5 and 6
SESSION_FD_IN=5
SESSION_FD_OUT=6
SESSION_OPTS="--audit-log $BEE_TMP/parent.jsonl"
session_start /bee/packs/vm/nest-parent.bpfpack /nest/bin/tool serve
p_pid=$session_pid
p_dir=$session_dir
ppid=$(ask pid)
pcg=$(session_cgroup "$(session_tool_pid)")
pid_=${pcg##*-}
case $pcg in
/sys/fs/cgroup/bee-pack-*/bee-vm-nest-parent-*) ;;
*) fail "the parent session did not start (tool answered '$ppid'): $(tail -n 3 "$p_dir/err" | tr '\n' ' ')" ;;
esac
parent_ask() {
	(SESSION_FD_IN=5 && SESSION_FD_OUT=6 && ask "$@")
}
a=$(parent_ask open /nest/parent-only.txt r)
b=$(parent_ask open /nest/wide-only.txt r)
[ "$a" = OK ] && [ "$b" = EACCES ] && r=PASS || r=FAIL
bee_case parent-session "$r" "the parent's tool in $pcg: read parent-only.txt '$a' (want OK), wide-only.txt '$b' (want EACCES)"

# inside: the parent's tool runs bee-load
inside() {   # inside PACK: the parent's tool runs bee-load; $word, and $said: bee-load's last lines
	_n=$(wc -l <"$p_dir/err")
	word=$(parent_ask run /bin/bee-load run --backend bpf-lsm --state-dir /nest/run/state \
		"/bee/packs/vm/$1.bpfpack" -- /nest/bin/tool open /nest/both.txt r)
	said=$(tail -n +"$((_n + 1))" "$p_dir/err" | grep -v '^OK$' | tail -n 2 | tr '\n' ' ')
}
inside nest-child
ci=$word
ci_said=$said
inside nest-wide
wi=$word
wi_said=$said
# The tool runs without capabilities, so it cannot start a session of its
# own, not even a subset one: nested sessions are started by a launcher
# outside the tool (docs/bee-load.md, "Nesting"); the joined cases below.
[ "$ci" != OK ] && [ "$wi" != OK ] && r=PASS || r=FAIL
bee_case inside-refused "$r" "the parent's tool ran bee-load run of the subset nest-child: '$ci', of the non-subset nest-wide: '$wi' (want both refused: the tool has no capabilities); bee-load said: $ci_said"

# joined: bee-load joins the parent's cgroup, on descriptors 7 and 8
SESSION_FD_IN=7
SESSION_FD_OUT=8
SESSION_CGROUP=$pcg
SESSION_OPTS="--state-dir /nest/run/state --audit-log /nest/run/wide.jsonl"
session_start /bee/packs/vm/nest-wide.bpfpack /nest/bin/tool serve
wpid=$(ask pid)
wide_ran=0
case $wpid in *[!0-9]* | "") ;; *) wide_ran=1 ;; esac
if [ "$wide_ran" = 1 ]; then
	wa=$(ask open /nest/both.txt r)
	wb=$(ask open /nest/wide-only.txt r)
	wn=$(ask connect 127.0.0.1:47402)
	wcg=$(session_cgroup "$(session_tool_pid)")
fi
session_end
w_rc=$session_rc
w_said=$(grep -v '^OK$' "$session_dir/err" | tail -n 2 | tr '\n' ' ')

SESSION_OPTS="--state-dir /nest/run/state --audit-log /nest/run/child.jsonl"
session_start /bee/packs/vm/nest-child.bpfpack /nest/bin/tool serve
cpid=$(ask pid)
ccg=$(session_cgroup "$(session_tool_pid)")
case $ccg in
"$pcg"/bee-pack-*/bee-vm-nest-child-*)
	bee_case joined-start PASS "the child's tool (pid $cpid) runs in $ccg, below the parent's cgroup" ;;
*)
	bee_case joined-start FAIL "the child's tool answered '$cpid' (cgroup '$ccg', want below $pcg); bee-load said: $(tail -n 3 "$session_dir/err" | tr '\n' ' ')" ;;
esac
a=$(ask open /nest/both.txt r)
n=$(ask connect 127.0.0.1:47400)
[ "$a" = OK ] && [ "$n" = OK ] && r=PASS || r=FAIL
bee_case joined-both-grant "$r" "in the child: read /nest/both.txt '$a' (want OK), connect 127.0.0.1:47400 '$n' (want OK)"
a2=$(ask open /nest/parent-only.txt r)
n2=$(ask connect 127.0.0.1:47401)
[ "$a2" = EACCES ] && [ "$n2" = EPERM ] && r=PASS || r=FAIL
bee_case joined-parent-only "$r" "in the child: read /nest/parent-only.txt '$a2' (want EACCES), connect 127.0.0.1:47401 '$n2' (want EPERM)"

# take both.txt from the parent while both run: the child loses it too
rv=$(bee-load revoke "$pid_" "fs.read /nest/both.txt" 2>&1)
rv_rc=$?
a3=$(ask open /nest/both.txt r)
pa3=$(parent_ask open /nest/both.txt r)
o3=$(bee-try open /nest/both.txt r)
[ "$rv_rc" = 0 ] && [ "$a3" = EACCES ] && [ "$pa3" = EACCES ] && [ "$o3" = OK ] && r=PASS || r=FAIL
bee_case joined-parent-narrowed "$r" "bee-load revoke of the parent's 'fs.read /nest/both.txt' (exit $rv_rc: $(printf '%s' "$rv" | tail -n 1)): the child's read '$a3' (want EACCES, the child still grants it), the parent's '$pa3' (want EACCES), outside '$o3' (want OK)"
session_end
c_rc=$session_rc

if [ "$wide_ran" = 0 ] && [ "$w_rc" -ne 0 ] && [ "$cpid" != NOANSWER ]; then
	bee_case joined-refuse-non-subset PASS "bee-load refused nest-wide before launch (exit $w_rc: $w_said) and started the subset nest-child"
else
	bee_case joined-refuse-non-subset FAIL "bee-load started the non-subset nest-wide inside the parent session (its tool answered pid '$wpid' in $wcg; bee-load exit $w_rc): nothing checks a nested pack against the session it runs in"
fi
if [ "$wide_ran" = 1 ]; then
	[ "$wa" = OK ] && [ "$wb" = EACCES ] && [ "$wn" = EPERM ] && r=PASS || r=FAIL
	bee_case joined-wide-bounded "$r" "the non-subset child ran anyway: read /nest/both.txt '$wa' (want OK), /nest/wide-only.txt '$wb' (want EACCES: the parent's programs), connect 127.0.0.1:47402 '$wn' (want EPERM: the parent's programs)"
else
	bee_case joined-wide-bounded PASS "nest-wide never ran (refused before launch), so nothing it grants beyond the parent was reachable"
fi

SESSION_FD_IN=5
SESSION_FD_OUT=6
session_pid=$p_pid
session_end
echo "parent session: bee-load exit $session_rc; child sessions: nest-wide $w_rc, nest-child $c_rc"
echo "the parent's audit log:"
cat "$BEE_TMP/parent.jsonl"
echo "the parent's bee-load said:"
cat "$p_dir/err"
