# Outliving the launcher (issue 10, class 2): bee-load is killed with
# SIGKILL while its tool runs and has forked a grandchild that left the
# tool's session (setsid). The session's init dies with bee-load
# (PR_SET_PDEATHSIG) and the kernel kills its whole pid namespace, so
# within 1 s no process of the session may run; `bee-load gc` then
# removes the session's cgroup, pins and registry record and reports, on
# stdout and in the session's audit log, that the launcher died and the
# audit may be incomplete.
# bee-timeout: 60
. /bee/lib.sh
trap '' PIPE

escape_tree || fail "cannot lay out /esc"
log=/esc/allowed/k9.audit.jsonl
SESSION_OPTS="--audit-log $log"
escape_session_start
g=$(ask daemon)
ask read /esc/secret/key >/dev/null   # a denial in the log before the kill
procs=$(tr '\n' ' ' <"$cg/cgroup.procs")
n=$(echo "$procs" | wc -w)
[ "$n" -ge 2 ] && r=PASS || r=FAIL
bee_case control-session-running "$r" "the session $sid runs: tool $hpid, grandchild '$g' (its namespace's number), the cgroup holds $n processes: $procs"
lines_before=$(wc -l <"$log" 2>/dev/null || echo 0)

start=$(now_ms)
kill -9 "$session_pid"
left="$procs"
while :; do
	left=""
	for p in $procs; do alive "$p" && left="$left $p"; done
	[ -z "$left" ] && break
	[ $(($(now_ms) - start)) -gt 1000 ] && break
	sleep 0.02
done
ms=$(($(now_ms) - start))
wait "$session_pid" 2>/dev/null
echo "BEE-KILL9 gone_ms=$ms"
b=1
for p in $procs; do alive "$p" && [ "$p" = "$hpid" ] && b=0; done
attempt outlive-tool "$b" "the tool ($hpid) $(alive "$hpid" && echo 'still runs' || echo 'is gone') ${ms} ms after SIGKILL of bee-load (want gone within 1000 ms)"
attempt outlive-descendants "$([ -z "$left" ] && echo 1 || echo 0)" "processes of the session still running ${ms} ms after the SIGKILL:${left:- none} (of $procs)"

out=$(bee-load gc 2>&1)
rc=$?
echo "bee-load gc (exit $rc):"
printf '%s\n' "$out"
b=0
printf '%s\n' "$out" | grep -q "$sid" && printf '%s\n' "$out" | grep -qi 'audit' && b=1
attempt gc-reports-lost-audit "$b" "bee-load gc exit $rc names the session $sid and its lost audit: $(printf '%s' "$out" | tr '\n' ' ' | cut -c1-200)"
added=$(tail -n +"$((lines_before + 1))" "$log" 2>/dev/null)
b=0
printf '%s\n' "$added" | grep -qi 'launcher\|lost\|incomplete' && b=1
attempt gc-audit-record "$b" "records gc added to $log: $(printf '%s' "$added" | tr '\n' ' ' | cut -c1-200) (want one that says the launcher died)"
b=1
left=""
for f in "$cg" "/sys/fs/bpf/bee/$sid" "/run/bee/sessions/$sid.json"; do
	[ -e "$f" ] && b=0 left="$left $f"
done
attempt gc-leaves-nothing "$b" "after gc, left behind:${left:- nothing} (the cgroup, the pins and the registry record must be gone)"
escape_tally 5
