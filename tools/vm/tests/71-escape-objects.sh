# The escape suite of bee's own objects (issue 10, class 1): the session's
# pins, links and maps under bpffs, the session registry and bee's state
# directory, the audit log, the cgroup control files. The policy
# (tools/vm/policies/escape-guard.toml) reads /run, bpffs and cgroupfs, so
# what must stop each attempt is the object guard: the tool's user
# (65534), the mount namespace (bpffs and the state directory covered by an
# empty read-only tmpfs: ENOENT; the tree read-only outside the write
# grants: EROFS), the cgroup namespace, the seccomp filter (bpf(): EPERM).
# Each attempt names the answers that count as refused and checks from
# outside that nothing changed.
# bee-timeout: 90
. /bee/lib.sh
trap '' PIPE

escape_tree || fail "cannot lay out /esc"
other=/sys/fs/cgroup/esc-other-$$
mkdir -p "$other"
bee-try uid-sleep 65534 65534 >"$BEE_TMP/same.out" 2>&1 &
same_pid=$!
cleanup() {
	kill "$same_pid" 2>/dev/null
	sleep 0.1
	rmdir "$other" 2>/dev/null
}
trap cleanup EXIT
for _ in 1 2 3 4 5 6 7 8 9 10; do
	grep -q SLEEPING "$BEE_TMP/same.out" && break
	sleep 0.2
done
echo "$same_pid" >"$other/cgroup.procs" || fail "cannot move the outside process into $other"

log=/esc/allowed/audit.jsonl
SESSION_OPTS="--audit-log $log"
escape_session_start
pins=$(session_load "$sid")
[ -n "$pins" ] || fail "session $sid: no pack load in its record"
reg=/run/bee/sessions/$sid.json
echo "session $sid: tool $hpid (in the session: $tpid), cgroup $cg, pins $pins, backend $BEE_BACKEND"

control read-allowed READ:plain read /esc/allowed/plain
control append-own OK append /esc/allowed/own more
control create-own OK open /esc/allowed/mine c
control cgroup-procs-read OK open /sys/fs/cgroup/cgroup.procs r
control run-readable OK stat /run

# ---- bpffs: the pin folder, links, maps; bpf() itself --------------------------

mode_before=$(stat -c '%a %u:%g' "$pins" 2>/dev/null)
w1=$(ask chmod-to "$pins" 777)
w2=$(ask chown-to "$pins" 65534 65534)
w3=$(ask chmod-to "$pins/links" 777)
mode_after=$(stat -c '%a %u:%g' "$pins" 2>/dev/null)
same=$([ -n "$mode_before" ] && [ "$mode_before" = "$mode_after" ] && echo 1 || echo 0)
b=$(is "$w1" ENOENT EROFS EPERM EACCES)
[ "$same" = 1 ] || b=0
attempt pin-folder-chmod "$b" "chmod 777 $pins: '$w1' (want ENOENT: bpffs covered; EROFS, EPERM or EACCES); the folder is '$mode_after' (was '$mode_before')"
b=$(is "$w2" ENOENT EROFS EPERM EACCES)
[ "$same" = 1 ] || b=0
attempt pin-folder-chown "$b" "chown 65534:65534 $pins: '$w2' (want ENOENT, EROFS, EPERM or EACCES); the folder is '$mode_after'"
b=$(is "$w3" ENOENT EROFS EPERM EACCES)
[ "$(stat -c %a "$pins/links" 2>/dev/null)" = 777 ] && b=0
attempt pin-links-chmod "$b" "chmod 777 $pins/links: '$w3' (want ENOENT, EROFS, EPERM or EACCES); now $(stat -c %a "$pins/links" 2>/dev/null)"
w=$(ask list /sys/fs/bpf)
attempt bpffs-list "$(is "$w" LIST:0 EACCES ENOENT)" "list /sys/fs/bpf: '$w' (want LIST:0: covered by an empty tmpfs, or EACCES)"

# a pinned link of the session (any: the backends pin different programs)
link=$(find "$pins/links" -mindepth 1 -maxdepth 1 2>/dev/null | head -n 1)
w=$(ask bpf-link-detach "${link:-$pins/links/none}")
n=$(ask connect 127.0.0.1:47201)
b=$(is "$w" EPERM EACCES ENOENT)
[ "$n" = EPERM ] || b=0
attempt bpf-obj-get-link "$b" "BPF_OBJ_GET of the pinned link ${link:-(none pinned?)} and BPF_LINK_DETACH: '$w' (want EPERM: no bpf(); or ENOENT); then connect 127.0.0.1:47201 (not granted): '$n' (want EPERM)"
w=$(ask bpf-net-grant "$pins/maps/bee_net4" 127.0.0.1)
n=$(ask connect 127.0.0.1:47201)
b=$(is "$w" EPERM EACCES ENOENT)
[ "$n" = EPERM ] || b=0
attempt bpf-obj-get-map "$b" "BPF_OBJ_GET of $pins/maps/bee_net4 and an update granting 127.0.0.1:*: '$w' (want EPERM or ENOENT); then connect 127.0.0.1:47201: '$n' (want EPERM)"
simple bpf-map-create EPERM -- bpf-map-create
simple bpf-link-ids EPERM EACCES -- bpf-link-ids
outside bpf-map-create OK bpf-map-create

# ---- the session cgroup and the others ---------------------------------------

w=$(ask cgjoin /sys/fs/cgroup/cgroup.procs)
now=$(session_cgroup "$hpid")
b=$(is "$w" EROFS EACCES)
[ "$now" = "$cg" ] || b=0
attempt cgroup-procs-write "$b" "write our pid to /sys/fs/cgroup/cgroup.procs: '$w' (want EROFS: a read-only cgroupfs of the session's cgroup namespace; or EACCES); the tool's cgroup is $now (want $cg)"
w=$(ask cgjoin "$other/cgroup.procs")
now=$(session_cgroup "$hpid")
b=$(is "$w" ENOENT EROFS EACCES)
[ "$now" = "$cg" ] || b=0
attempt cgroup-procs-other "$b" "write our pid to $other/cgroup.procs (a cgroup outside the session): '$w' (want ENOENT: not in the namespace; EROFS or EACCES); the tool's cgroup is $now"
sc_before=$(cat "$cg/cgroup.subtree_control")
w=$(ask write /sys/fs/cgroup/cgroup.subtree_control +pids)
b=$(is "$w" EROFS EACCES)
[ "$(cat "$cg/cgroup.subtree_control")" = "$sc_before" ] || b=0
attempt cgroup-subtree-control "$b" "write +pids to cgroup.subtree_control: '$w' (want EROFS or EACCES); $cg/cgroup.subtree_control is '$(cat "$cg/cgroup.subtree_control")'"
w=$(ask mkdir /sys/fs/cgroup/escape)
b=$(is "$w" EROFS EACCES)
[ -e "$cg/escape" ] && b=0
attempt cgroup-mkdir "$b" "mkdir a child cgroup: '$w' (want EROFS or EACCES)"
w=$(ask write "$other/cgroup.kill" 1)
sleep 0.2
b=$(is "$w" ENOENT EROFS EACCES)
alive "$same_pid" || b=0
attempt cgroup-kill-other "$b" "write 1 to $other/cgroup.kill (it holds an outside process of the tool's uid): '$w' (want ENOENT, EROFS or EACCES); it is $(alive "$same_pid" && echo alive || echo gone)"

# ---- the state directory and the registry ------------------------------------

w=$(ask list /run/bee)
attempt state-dir-list "$(is "$w" LIST:0 EACCES ENOENT)" "list /run/bee: '$w' (want LIST:0: covered by an empty tmpfs, or EACCES: root's 0700)"
w=$(ask read "$reg")
attempt registry-read "$(is "$w" ENOENT EACCES)" "read $reg: '$w' (want ENOENT or EACCES)"
w=$(ask unlink "$reg")
b=$(is "$w" ENOENT EACCES EROFS)
[ -e "$reg" ] || b=0
attempt registry-unlink "$b" "unlink $reg: '$w' (want ENOENT, EACCES or EROFS); the record $([ -e "$reg" ] && echo is still there || echo is gone)"
m=$(stat -c %a /run/bee)
w=$(ask chmod-to /run/bee 777)
b=$(is "$w" EROFS EPERM ENOENT)
[ "$(stat -c %a /run/bee)" = "$m" ] || b=0
attempt state-dir-chmod "$b" "chmod 777 /run/bee: '$w' (want EROFS or EPERM); its mode is $(stat -c %a /run/bee) (was $m)"
w=$(ask open /run/bee/kernel-audit/lock w)
attempt kaudit-lock "$(is "$w" ENOENT EACCES EROFS)" "open /run/bee/kernel-audit/lock for writing: '$w' (want ENOENT, EACCES or EROFS)"

# ---- the audit log (in the written tree, root's 0600) ------------------------

w=$(ask append "$log" '{"forged":1}')
b=$(is "$w" EACCES EROFS)
grep -q forged "$log" 2>/dev/null && b=0
attempt audit-log-append "$b" "append a forged record to $log: '$w' (want EACCES: root's 0600); forged line in the log: $(grep -c forged "$log" 2>/dev/null)"
simple audit-log-read EACCES -- read "$log"
w=$(ask truncate "$log")
b=$(is "$w" EACCES EROFS EPERM)
attempt audit-log-truncate "$b" "truncate $log: '$w' (want EACCES)"
w=$(ask chmod-to "$log" 666)
b=$(is "$w" EPERM EROFS EACCES)
[ "$(stat -c %a "$log" 2>/dev/null)" = 600 ] || b=0
attempt audit-log-chmod "$b" "chmod 666 $log: '$w' (want EPERM: not its owner); its mode is $(stat -c %a "$log" 2>/dev/null)"
w=$(ask unlink "$log")
b=$(is "$w" EPERM EACCES EROFS)
[ -e "$log" ] || b=0
attempt audit-log-unlink "$b" "unlink $log: '$w' (want EPERM: the sticky written tree); the log $([ -e "$log" ] && echo is still there || echo is gone)"
w=$(ask rename /esc/allowed/mine "$log")
b=$(is "$w" EPERM EACCES EROFS)
[ "$(stat -c %u "$log" 2>/dev/null)" = 0 ] || b=0
attempt audit-log-replace "$b" "rename a file of the tool's over $log: '$w' (want EPERM); the log is owned by uid $(stat -c %u "$log" 2>/dev/null) (want 0)"

# last: a success would end the session. The session's cgroup.kill as the
# tool names it: /sys/fs/cgroup/ in a cgroup namespace of its own, else
# the host's path
own=$cg/cgroup.kill
[ "$(readlink "/proc/$hpid/ns/cgroup")" != "$(readlink /proc/self/ns/cgroup)" ] && own=/sys/fs/cgroup/cgroup.kill
w=$(ask write "$own" 1)
p=$(ask pid)
b=$(is "$w" EROFS EACCES)
[ "$p" = "$tpid" ] || b=0
attempt cgroup-kill-own "$b" "write 1 to the session's cgroup.kill ($own): '$w' (want EROFS or EACCES); the tool then answered '$p' (want $tpid)"

session_end
bee_case control-session-exit "$([ "$session_rc" -eq 0 ] && echo PASS || echo FAIL)" "bee-load exited $session_rc (want 0): $(tail -n 2 "$session_dir/err" | tr '\n' ' ')"
n=$(grep -c '"decision":"Deny"' "$log" 2>/dev/null)
bee_case control-audit-kept "$([ "${n:-0}" -gt 0 ] && [ "$(stat -c '%u %a' "$log")" = "0 600" ] && echo PASS || echo FAIL)" "$log: $(stat -c 'uid %u mode %a' "$log" 2>/dev/null), $n denials recorded"
escape_tally 25
