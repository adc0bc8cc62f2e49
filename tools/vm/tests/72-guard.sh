# The global BPF LSM programs (bpf/bee_guard.bpf.h) in a session of
# tools/vm/policies/guard.toml: each refusal beside a control that must
# succeed on a file, process or call the policy allows, and the same
# operations from outside the session, which the programs must leave alone.
# Then the guard stage's fault (bee-load-fault, exit status 82) leaves no
# cgroup, pin folder or link behind.
# bee-timeout: 120
# shellcheck source=tools/vm/guest/lib.sh
. /bee/lib.sh
trap '' PIPE

rm -rf /grd
mkdir -p /grd
mount -t tmpfs -o mode=0755 bee-grd /grd || fail "cannot mount a tmpfs at /grd"
mkdir -p /grd/ro /grd/rw /grd/secret /grd/bin
for d in ro rw secret; do echo "data-$d" >"/grd/$d/file"; done
# the tool runs as 65534 (bee-load's default user when it runs as root):
# it owns the files, so the policy refuses, not the file modes
chown -R 65534:65534 /grd/ro /grd/rw /grd/secret
cp /bin/bee-try /grd/bin/tool
sleep 1000 &
outside_pid=$!
cleanup() {
	kill "$outside_pid" 2>/dev/null
	umount /grd 2>/dev/null
}
trap cleanup EXIT

# expect NAME WANT OP [ARG...]: one operation in the session
expect() {
	_name=$1
	_want=$2
	shift 2
	_got=$(ask "$@")
	if [ "$_got" = "$_want" ]; then
		bee_case "$_name" PASS "$* -> $_got"
	else
		bee_case "$_name" FAIL "$* -> '$_got', want $_want"
	fi
}

# outside NAME WANT OP [ARG...]: the same from outside the session
outside() {
	_name=$1
	_want=$2
	shift 2
	_got=$(try_word bee-try "$@")
	if [ "$_got" = "$_want" ]; then
		bee_case "$_name" PASS "outside: $* -> $_got"
	else
		bee_case "$_name" FAIL "outside: $* -> '$_got', want $_want"
	fi
}

log=$BEE_TMP/guard.audit.jsonl
SESSION_OPTS="--audit-log $log"
session_start /bee/packs/vm/guard.bpfpack /grd/bin/tool serve
# the tool's own pid (its pid namespace's) and the one this script sees
tpid=$(ask pid)
hpid=$(tool_pid /grd/bin/tool)
cg=$(session_cgroup "${hpid:-0}")
case $cg in
/sys/fs/cgroup/bee-pack-*/bee-vm-guard-*) ;;
*) fail "the guard session did not start (tool '$tpid', here '$hpid', cgroup '$cg'): $(tail -n 3 "$session_dir/err" | tr '\n' ' ')" ;;
esac
sid=${cg##*-}
load=$(session_load "$sid")

# ---- metadata: the write right of the object ---------------------------------
# (chown stats the file first, which hiding refuses: SETUP:EACCES)
for op in chmod chown utimes truncate setacl rmacl; do
	expect "$op-readonly" EACCES "$op" /grd/ro/file
	if [ "$op" = chown ]; then
		expect "$op-denied" SETUP:EACCES "$op" /grd/secret/file
	else
		expect "$op-denied" EACCES "$op" /grd/secret/file
	fi
	expect "control-$op-writable" OK "$op" /grd/rw/file
done
# the directory itself: /grd/rw/** grants below it, not the directory
expect chmod-dir-readonly EACCES chmod /grd/ro
expect control-chmod-below-writable OK chmod /grd/rw/file
# outside the session the programs decide nothing
outside control-outside-chmod OK chmod /grd/ro/file
outside control-outside-utimes OK utimes /grd/secret/file
outside control-outside-setacl OK setacl /grd/ro/file
if [ "$(cat /grd/ro/file)" = data-ro ] && [ "$(cat /grd/secret/file)" = data-secret ]; then
	bee_case files-unchanged PASS "the refused truncates left ro and secret whole"
else
	bee_case files-unchanged FAIL "ro: '$(cat /grd/ro/file)', secret: '$(cat /grd/secret/file)'"
fi

# ---- hidden means hidden: metadata of what an explicit deny matches -------------
# refused for /grd/secret/** (and /grd/secret itself), never for what the
# policy merely does not grant: /grd and /bee/lib.sh are in no rule
for op in stat fstat-opath inotify; do
	expect "$op-denied" EACCES "$op" /grd/secret/file
	expect "control-$op-readable" OK "$op" /grd/ro/file
	expect "control-$op-ungranted" OK "$op" /grd
done
expect stat-denied-dir EACCES stat /grd/secret
expect control-stat-ungranted-file OK stat /bee/lib.sh
expect xattr-get-denied EACCES xattr-get /grd/secret/file system.posix_acl_access
expect xattr-list-denied EACCES xattr-list /grd/secret/file
# a tmpfs directory without an ACL: the kernel's own answer, not a refusal
expect control-xattr-get-ungranted ENODATA xattr-get /grd system.posix_acl_access
expect control-xattr-list-ungranted ENODATA xattr-list /grd
outside control-outside-stat OK stat /grd/secret/file
outside control-outside-inotify OK inotify /grd/secret/file

# ---- descriptors from outside --------------------------------------------------
bee-try sendfd /grd/rw/sock /grd/secret/file >"$BEE_TMP/sendfd1" 2>&1 &
expect recvfd-denied NOFD recvfd /grd/rw/sock
wait $! 2>/dev/null
bee-try sendfd /grd/rw/sock /grd/ro/file >"$BEE_TMP/sendfd2" 2>&1 &
expect control-recvfd-readable OK recvfd /grd/rw/sock
wait $! 2>/dev/null

# ---- signals --------------------------------------------------------------------
# without the session's own pid namespace the outside pids are visible: the
# refusal is task_kill's (EPERM); with it they are not (ESRCH)
w=$(ask kill "$outside_pid" 0)
kill_word=$w
case $w in
EPERM | ESRCH) bee_case kill-outside PASS "kill($outside_pid, 0) of a process outside -> $w" ;;
*) bee_case kill-outside FAIL "kill($outside_pid, 0) of a process outside -> '$w', want EPERM" ;;
esac
w=$(ask kill "$session_pid" 15)
case $w in
EPERM | ESRCH) bee_case kill-launcher PASS "kill(bee-load $session_pid, SIGTERM) -> $w" ;;
*) bee_case kill-launcher FAIL "kill(bee-load $session_pid, SIGTERM) -> '$w', want EPERM" ;;
esac
expect control-kill-child OK kill-child
expect control-kill-self-probe OK kill "$tpid" 0
if kill -0 "$outside_pid"; then
	bee_case outside-alive PASS "the outside process lives"
else
	bee_case outside-alive FAIL "the outside process $outside_pid is gone"
fi

# ---- bpf(2) ---------------------------------------------------------------------
expect bpf-map-create EPERM bpf-map-create
expect bpf-obj-get-map EPERM bpf-obj-get "$load/maps/bee_net4"
expect bpf-obj-get-link EPERM bpf-obj-get "$load/links/bee_file_open"
expect bpf-link-detach EPERM bpf-link-detach "$load/links/bee_bpf"
outside control-outside-bpf-map-create OK bpf-map-create
outside control-outside-obj-get OK bpf-obj-get "$load/maps/bee_net4"
# the guard's own links stay attached: the session still refuses
expect still-guarded EACCES chmod /grd/ro/file
expect control-still-writable OK chmod /grd/rw/file

session_end
echo "guard session: bee-load exit $session_rc; its audit log:"
cat "$log"
bad=$(audit_bad_lines "$log")
[ -z "$bad" ] && bee_case audit-format PASS "every line has the five keys" ||
	bee_case audit-format FAIL "$(echo "$bad" | head -n 3)"
t=$(audit_tuples "$log")
# (bpf(2) has no record: the session's seccomp filter refuses it before
# the bpf hook, which only ever sees a policy that allows it)
wants="FileSystem Write /grd/ro/file Deny|FileSystem Read /grd/secret/file Deny"
# only task_kill's refusal writes it; a pid namespace answers ESRCH first
[ "$kill_word" = EPERM ] && wants="$wants|Process Write pid:$outside_pid Deny"
IFS='|'
for want in $wants; do
	name=audit-$(echo "$want" | cut -d' ' -f1,2 | tr ' ' -)
	if echo "$t" | grep -qxF "$want"; then
		bee_case "$name" PASS "'$want' recorded"
	else
		bee_case "$name" FAIL "no '$want' in the audit log"
	fi
done
unset IFS
# the stat of the denied directory (only the hiding hooks refuse it)
if echo "$t" | grep -qxF "FileSystem Read /grd/secret Deny"; then
	bee_case audit-hidden PASS "'FileSystem Read /grd/secret Deny' recorded"
else
	bee_case audit-hidden FAIL "no 'FileSystem Read /grd/secret Deny' in the audit log"
fi
# no control refused: nothing of /grd/rw/file, no look at /grd/ro/file, /grd
# or /bee/lib.sh
controls_refused() {
	echo "$t" | grep -x -e ".* /grd/rw/file Deny" -e "FileSystem Read /grd/ro/file Deny" \
		-e "FileSystem Read /grd Deny" -e "FileSystem Read /bee/lib.sh Deny"
}
if controls_refused >/dev/null; then
	bee_case audit-no-control-deny FAIL "a control was refused: $(controls_refused | head -n 2 | tr '\n' ' ')"
else
	bee_case audit-no-control-deny PASS "no refusal of /grd/rw/file, of reading /grd/ro/file, /grd or /bee/lib.sh"
fi
if [ -d "/sys/fs/bpf/bee/$sid" ]; then
	bee_case session-gone FAIL "/sys/fs/bpf/bee/$sid is left"
else
	bee_case session-gone PASS "no pin folder left"
fi

# ---- the guard stage's fault ----------------------------------------------------
before=$(ls /sys/fs/bpf/bee 2>/dev/null | wc -l)
cgs_before=$(ls -d /sys/fs/cgroup/bee-vm-guard-* /sys/fs/cgroup/bee-pack-*/bee-vm-guard-* 2>/dev/null | wc -l)
# shellcheck disable=SC2086
env -i $SESSION_ENV BEE_FAULT=guard bee-load-fault run --backend bpf-lsm /bee/packs/vm/guard.bpfpack \
	-- /grd/bin/tool pid >"$BEE_TMP/fault.out" 2>"$BEE_TMP/fault.err"
rc=$?
after=$(ls /sys/fs/bpf/bee 2>/dev/null | wc -l)
cgs_after=$(ls -d /sys/fs/cgroup/bee-vm-guard-* /sys/fs/cgroup/bee-pack-*/bee-vm-guard-* 2>/dev/null | wc -l)
if [ "$rc" = 82 ] && [ ! -s "$BEE_TMP/fault.out" ] && [ "$before" = "$after" ] &&
	[ "$cgs_before" = "$cgs_after" ]; then
	bee_case fault-guard PASS "BEE_FAULT=guard: exit 82, the tool never ran, nothing left ($(head -n 1 "$BEE_TMP/fault.err"))"
else
	bee_case fault-guard FAIL "exit $rc (want 82), tool said '$(cat "$BEE_TMP/fault.out")', pin folders $before -> $after, cgroups $cgs_before -> $cgs_after: $(head -n 2 "$BEE_TMP/fault.err" | tr '\n' ' ')"
fi
# the same build without the fault runs the tool: the fault was the cause
# shellcheck disable=SC2086
w=$(env -i $SESSION_ENV bee-load-fault run --backend bpf-lsm /bee/packs/vm/guard.bpfpack -- /grd/bin/tool chmod /grd/rw/file 2>"$BEE_TMP/nofault.err")
if [ "$w" = OK ]; then
	bee_case control-no-fault PASS "bee-load-fault without BEE_FAULT: the tool ran ($w)"
else
	bee_case control-no-fault FAIL "bee-load-fault without BEE_FAULT: '$w': $(head -n 2 "$BEE_TMP/nofault.err" | tr '\n' ' ')"
fi
