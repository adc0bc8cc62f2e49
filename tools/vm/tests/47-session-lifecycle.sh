# Sessions that outlive a command under the bpf-lsm backend (BEE_BACKEND, issue 13;
# docs/bee-load.md "Sessions that outlive a command"), on
# policies/sandbox-demo.toml and a copy of it under another name (a second
# pack). The tool is a copy of bee-try at ${PROJECT}/bin/tool.
#
#   lifecycle   start; 50 execs, each output and status checked: allowed
#               reads, a denied read (EACCES) and its record in the
#               session's log beside its control, exit 3, 128+9, 127, 126;
#               a net revoke seen by the next exec (its control before it);
#               ls's commands; stop leaves nothing
#   many        200 sessions of the two packs, started 20 at a time in
#               parallel; every other pair revokes its connect grant: each
#               sees only its own revocation, each audit log holds only its
#               own denied read; one stopped, the others still work
#   kill9       kill -9 of a supervisor while a tool sleeps: the session's
#               processes gone within 1 s, exec 77, gc cleans up and
#               records the lost audit
# bee-timeout: 900
. /bee/lib.sh
trap '' PIPE
trap 'listen_stop' EXIT
listen_start 127.0.0.1:47000 || fail "no listener for the connect rows"

A=/bee/packs/sandbox-demo.bpfpack
B=$BEE_TMP/b.bpfpack
sed 's/^name = "sandbox-demo"/name = "sandbox-demo-b"/' /bee/policies/sandbox-demo.toml >"$BEE_TMP/b.toml"
beec -D HOME=/home/dev -D PROJECT=/home/dev/src/app "$BEE_TMP/b.toml" -o "$B" || fail "the second pack does not compile"
TOOL=/home/dev/src/app/bin/tool
E="env -i PATH=/bin HOME=/root TERM=dumb"
N=${BEE_VM_SESSIONS:-200}
ok=1
jobs_=
waitall() {  # the jobs started since the last call (not the listener)
	for _j in $jobs_; do
		wait "$_j"
	done
	jobs_=
}
bad() {
	ok=0
	echo "47: $*"
}
start() {  # start PACK LOG: the id
	$E bee-load start --backend "$BEE_BACKEND" --audit-log "$2" "$1" 2>"$BEE_TMP/start.err" | tail -n 1
}
bx() {  # bx SID CMD...: "OUT|STATUS"
	_sid=$1
	shift
	_out=$(cd /home/dev/src/app && $E bee-load exec "$_sid" -- "$@" 2>"$BEE_TMP/exec.err")
	echo "$_out|$?"
}
want() {
	[ "$2" = "$3" ] || bad "$1: got '$2', expected '$3' ($(head -c 200 "$BEE_TMP/exec.err" 2>/dev/null | tr '\n' ' '))"
}
cg_of() {
	sed -n 's/^ *"cgroup": "\(.*\)",*$/\1/p' "/run/bee/sessions/$1.json" 2>/dev/null
}
leftovers() {  # what a session left: record, socket, pack copy, pins, cgroup
	_l=""
	for _f in "/run/bee/sessions/$1.json" "/run/bee/sessions/$1.sock" "/run/bee/sessions/$1.bpfpack" \
		"/sys/fs/bpf/bee/$1" ${2:+"$2"}; do
		[ -e "$_f" ] && _l="$_l $_f"
	done
	echo "$_l"
}

# ---- lifecycle ------------------------------------------------------------------------
LOG=$BEE_TMP/one.jsonl
S=$(start "$A" "$LOG")
[ -n "$S" ] && [ -S "/run/bee/sessions/$S.sock" ] || fail "start: no session ($(cat "$BEE_TMP/start.err"))"
CG=$(cg_of "$S")
n=0
i=0
while [ $i -lt 42 ]; do
	want "echo $i" "$(bx "$S" /usr/bin/echo "line $i")" "line $i|0"
	i=$((i + 1))
done
n=$((n + 42))
want "read-project" "$(bx "$S" "$TOOL" open /home/dev/src/app/README.md r)" "OK|0"
want "read-ssh" "$(bx "$S" "$TOOL" open /home/dev/.ssh/id_rsa r)" "EACCES|1"
want "exit 3" "$(bx "$S" /usr/bin/sh -c 'exit 3')" "|3"
want "sigkill" "$(bx "$S" /usr/bin/sh -c 'kill -KILL $$')" "|137"
want "not found" "$(bx "$S" /no/such/tool)" "|127"
# a program outside [exec] (the guest's busybox true elsewhere; on a host, id)
for NOEXEC in /usr/local/bin/true /usr/bin/id; do [ -x "$NOEXEC" ] && break; done
want "not in [exec]" "$(bx "$S" "$NOEXEC")" "|126"
want "connect before revoke" "$(bx "$S" "$TOOL" connect 127.0.0.1:47000)" "OK|0"
$E bee-load revoke "$S" "net.connect 127.0.0.1/32:47000-47009/tcp" >"$BEE_TMP/rev.out" 2>&1 ||
	bad "revoke: $(cat "$BEE_TMP/rev.out")"
want "connect after revoke" "$(bx "$S" "$TOOL" connect 127.0.0.1:47000)" "EPERM|1"
n=$((n + 8))
sleep 1.2
ls_json=$(bee-load ls --json | tr -d ' \n')
case $ls_json in *"\"id\":\"$S\""*"\"commands\":$n,"*) ;;
*) bad "ls --json: not $n commands for $S: $(echo "$ls_json" | cut -c1-300)" ;;
esac
bee-load stop "$S" >"$BEE_TMP/stop.out" 2>&1 || bad "stop: status $? $(cat "$BEE_TMP/stop.out")"
l=$(leftovers "$S" "$CG")
[ -z "$l" ] || bad "stop left:$l"
grep -q '"kind":"FileSystem","action":"Read","resource":"/home/dev/.ssh/id_rsa","decision":"Deny"' "$LOG" ||
	bad "the denied read is not in the log"
grep -q '"resource":"/home/dev/src/app/README.md","decision":"Deny"' "$LOG" && bad "the allowed read was denied in the log"
[ "$(grep -c '"kind":"Network","action":"Connect","resource":"127.0.0.1:47000","decision":"Deny"' "$LOG")" = 1 ] ||
	bad "not exactly one denied connect (the one after the revoke) in the log"
grep -q 'bee:revoke:net.connect' "$LOG" || bad "the revoke is not in the log"
want "exec after stop" "$(bx "$S" /usr/bin/true)" "|77"
want "execs" "$n" 50
[ $ok = 1 ] && r=PASS || r=FAIL
bee_case lifecycle "$r" "start, $n execs (outputs, 0, 1, 3, 137, 127, 126), revoke seen by the next exec, ls, stop, nothing left"

# ---- many -----------------------------------------------------------------------------
ok=1
t0=$(now_ms)
i=0
while [ $i -lt "$N" ]; do
	pk=$A
	[ $((i % 2)) = 1 ] && pk=$B
	echo "secret $i" >"/home/dev/secret-$i"
	(start "$pk" "$BEE_TMP/s$i.jsonl" >"$BEE_TMP/s$i.id") &
	jobs_="$jobs_ $!"
	i=$((i + 1))
	[ $((i % 20)) = 0 ] && waitall
done
waitall
t1=$(now_ms)
i=0
while [ $i -lt "$N" ]; do
	[ -n "$(cat "$BEE_TMP/s$i.id")" ] || bad "session $i did not start"
	if [ $((i % 4)) -lt 2 ]; then
		$E bee-load revoke "$(cat "$BEE_TMP/s$i.id")" "net.connect 127.0.0.1/32:47000-47009/tcp" >/dev/null 2>&1 ||
			bad "revoke in session $i"
	fi
	i=$((i + 1))
done
i=0
while [ $i -lt "$N" ]; do
	id=$(cat "$BEE_TMP/s$i.id")
	w=OK
	[ $((i % 4)) -lt 2 ] && w=EPERM
	# one exec: the connect (its own revocation only), the denied read of
	# its own file, the allowed read that is its control
	want "session $i" "$(bx "$id" /usr/bin/sh -c \
		"$TOOL connect 127.0.0.1:47000; $TOOL open /home/dev/secret-$i r; $TOOL open /home/dev/src/app/README.md r")" \
		"$w
EACCES
OK|0"
	i=$((i + 1))
done
S0=$(cat "$BEE_TMP/s0.id")
CG0=$(cg_of "$S0")
bee-load stop "$S0" || bad "stop of session 0"
l=$(leftovers "$S0" "$CG0")
[ -z "$l" ] || bad "stop of session 0 left:$l"
for i in 1 2 3 $((N - 1)); do
	want "session $i after session 0 stopped" "$(bx "$(cat "$BEE_TMP/s$i.id")" /usr/bin/echo alive)" "alive|0"
done
i=1
while [ $i -lt "$N" ]; do
	(bee-load stop "$(cat "$BEE_TMP/s$i.id")" >/dev/null 2>&1 || echo "stop failed" >"$BEE_TMP/s$i.stopfail") &
	jobs_="$jobs_ $!"
	i=$((i + 1))
	[ $((i % 20)) = 0 ] && waitall
done
waitall
t2=$(now_ms)
i=0
while [ $i -lt "$N" ]; do
	lg=$BEE_TMP/s$i.jsonl
	[ -e "$BEE_TMP/s$i.stopfail" ] && bad "stop of session $i failed"
	grep -q "\"resource\":\"/home/dev/secret-$i\",\"decision\":\"Deny\"" "$lg" || bad "session $i: its denied read is not in its log"
	[ "$(grep -c '"resource":"/home/dev/secret-' "$lg")" = 1 ] || bad "session $i: its log holds another session's records"
	nd=$(grep -c '"kind":"Network","action":"Connect","resource":"127.0.0.1:47000","decision":"Deny"' "$lg")
	nr=$(grep -c 'bee:revoke:' "$lg")
	if [ $((i % 4)) -lt 2 ]; then
		[ "$nd" = 1 ] && [ "$nr" = 1 ] || bad "session $i (revoked): $nr revokes, $nd denied connects"
	else
		[ "$nd" = 0 ] && [ "$nr" = 0 ] || bad "session $i (not revoked): $nr revokes, $nd denied connects"
	fi
	i=$((i + 1))
done
[ -z "$(ls /run/bee/sessions 2>/dev/null)" ] || bad "records left: $(ls /run/bee/sessions | head -n 3 | tr '\n' ' ')"
echo "BEE-BENCH sessions=$N start_ms=$((t1 - t0)) check_stop_ms=$((t2 - t1))"
[ $ok = 1 ] && r=PASS || r=FAIL
bee_case many "$r" "$N sessions of two packs: own revocations, own audit records, one stopped and the others alive; started in $((t1 - t0)) ms, checked and stopped in $((t2 - t1)) ms"

# ---- kill9 ----------------------------------------------------------------------------
ok=1
LOG9=$BEE_TMP/kill.jsonl
S=$(start "$A" "$LOG9")
CG=$(cg_of "$S")
SUP=$(sed -n 's/^ *"pid": \([0-9]*\),*$/\1/p' "/run/bee/sessions/$S.json")
(cd /home/dev/src/app && $E bee-load exec "$S" -- /usr/bin/sleep 30 >/dev/null 2>&1; echo $? >"$BEE_TMP/kill.status") &
k=0
while [ "$(wc -l <"$CG/cgroup.procs")" -lt 2 ] && [ $k -lt 200 ]; do
	sleep 0.05
	k=$((k + 1))
done
procs=$(tr '\n' ' ' <"$CG/cgroup.procs")
[ "$(echo $procs | wc -w)" -ge 2 ] || bad "the tool does not run (procs: $procs)"
t=$(now_ms)
kill -9 "$SUP"
left="$procs"
while :; do
	left=""
	for p in $procs; do alive "$p" && left="$left $p"; done
	[ -z "$left" ] && break
	[ $(($(now_ms) - t)) -gt 1000 ] && break
	sleep 0.02
done
ms=$(($(now_ms) - t))
echo "BEE-KILL9 supervisor gone_ms=$ms"
[ -z "$left" ] || bad "still running $ms ms after kill -9 of the supervisor:$left"
k=0
while [ ! -s "$BEE_TMP/kill.status" ] && [ $k -lt 100 ]; do
	sleep 0.05
	k=$((k + 1))
done
want "the waiting exec" "$(cat "$BEE_TMP/kill.status" 2>/dev/null)" 77
want "exec into a dead supervisor" "$(bx "$S" /usr/bin/true)" "|77"
gc=$(bee-load gc 2>&1)
echo "$gc" | grep -q "session $S (policy 'sandbox-demo'): its launcher, bee-load pid $SUP, died" || bad "gc: $gc"
grep -q '"resource":"bee:audit-lost:launcher-died"' "$LOG9" || bad "gc: the lost audit is not in the log"
l=$(leftovers "$S" "$CG")
[ -z "$l" ] || bad "gc left:$l"
[ $ok = 1 ] && r=PASS || r=FAIL
bee_case kill9 "$r" "kill -9 of the supervisor: the session's processes gone in $ms ms, exec 77, gc cleaned up and recorded the lost audit"
