# The escape suite of the world outside the session (issue 10, class 2):
# signals to the launcher and to outside processes (one of them with the
# tool's own uid, so that the file modes and the credentials never stop
# it), /proc/PID/... of outside processes, pidfd_open, ptrace and
# setpriority of them. The session has its own pid namespace and /proc,
# so an outside pid names nothing there (ESRCH, ENOENT); the global
# task_kill hook (bpf-lsm) and Landlock's signal scope (landlock) answer
# EPERM where a pid still reaches outside. The policy reads /proc/**, so
# a missing read grant never is what stops a /proc read. Outliving the
# launcher is 71-escape-kill9.sh.
# bee-timeout: 90
. /bee/lib.sh
trap '' PIPE

escape_tree || fail "cannot lay out /esc"
sleep 1000 &
priv_pid=$!
bee-try uid-sleep 65534 65534 >"$BEE_TMP/same.out" 2>&1 &
same_pid=$!
trap 'kill "$priv_pid" "$same_pid" 2>/dev/null' EXIT
for _ in 1 2 3 4 5 6 7 8 9 10; do
	grep -q SLEEPING "$BEE_TMP/same.out" && break
	sleep 0.2
done
grep -q SLEEPING "$BEE_TMP/same.out" || fail "the outside process of uid 65534 did not start: $(cat "$BEE_TMP/same.out")"

escape_session_start
lpid=$session_pid
own_ns=0
[ "$(readlink "/proc/$hpid/ns/pid")" != "$(readlink /proc/self/ns/pid)" ] && own_ns=1
echo "tool $hpid (in the session: $tpid), bee-load $lpid, victims $priv_pid (root) and $same_pid (uid 65534); own pid namespace: $own_ns"

control uid UID:65534:65534 uid
control kill-self OK kill "$tpid" 0
control pidfd-self OK pidfd "$tpid"
control proc-self-status READ:Name: read /proc/self/status
control renice-self OK renice "$tpid"
outside kill-same-uid OK kill "$same_pid" 0
outside proc-status READ:Name: read "/proc/$same_pid/status"

nice_before=$(cut -d' ' -f19 "/proc/$same_pid/stat")
for v in same:"$same_pid" root:"$priv_pid"; do
	who=${v%%:*}
	pid=${v#*:}
	w=$(ask kill "$pid" 15)
	sleep 0.1
	b=$(is "$w" ESRCH EPERM)
	alive "$pid" || b=0
	attempt "kill-$who" "$b" "kill($pid, SIGTERM), an outside process ($who uid): '$w' (want ESRCH: not in the pid namespace, or EPERM); it is $(alive "$pid" && echo alive || echo dead)"
done
for v in same:"$same_pid" launcher:"$lpid"; do
	who=${v%%:*}
	pid=${v#*:}
	simple "pidfd-$who" ESRCH EPERM -- pidfd "$pid"
done
for f in cmdline environ status maps; do
	simple "proc-$f" ENOENT EACCES -- read "/proc/$same_pid/$f"
done
simple proc-fd ENOENT EACCES -- list "/proc/$same_pid/fd"
simple proc-launcher-environ ENOENT EACCES -- read "/proc/$lpid/environ"
simple proc-visible ENOENT -- stat "/proc/$same_pid"
simple ptrace-same ESRCH EPERM -- ptrace "$same_pid"
w=$(ask renice "$same_pid")
b=$(is "$w" ESRCH EPERM EACCES)
[ "$(cut -d' ' -f19 "/proc/$same_pid/stat")" = "$nice_before" ] || b=0
attempt renice-same "$b" "setpriority of $same_pid to 19: '$w' (want ESRCH or EPERM); its nice is $(cut -d' ' -f19 "/proc/$same_pid/stat") (was $nice_before)"

# kill(-1) reaches every process the caller may signal: run only where the
# session has a pid namespace of its own, so that a hole cannot hit the
# host's processes of uid 65534
if [ "$own_ns" = 1 ]; then
	w=$(ask kill -1 15)
	sleep 0.2
	b=1
	alive "$same_pid" || b=0
	alive "$priv_pid" || b=0
	alive "$lpid" || b=0
	attempt kill-broadcast "$b" "kill(-1, SIGTERM): '$w'; outside, uid 65534's process is $(alive "$same_pid" && echo alive || echo dead), root's $(alive "$priv_pid" && echo alive || echo dead), bee-load $(alive "$lpid" && echo alive || echo dead)"
else
	attempt kill-broadcast 0 "not tried: the tool shares our pid namespace, and kill(-1, SIGTERM) would reach every outside process of uid 65534"
fi

# last: a success ends the session
w=$(ask kill "$lpid" 15)
sleep 0.2
p=$(ask pid)
b=$(is "$w" ESRCH EPERM)
alive "$lpid" || b=0
attempt kill-launcher "$b" "kill(bee-load $lpid, SIGTERM): '$w' (want ESRCH or EPERM); bee-load is $(alive "$lpid" && echo alive || echo gone), the tool answered '$p'"

session_end
bee_case control-session-exit "$([ "$session_rc" -eq 0 ] && echo PASS || echo FAIL)" "bee-load exited $session_rc (want 0): $(tail -n 2 "$session_dir/err" | tr '\n' ' ')"
escape_tally 15
