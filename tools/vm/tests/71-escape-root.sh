# A tool run as uid 0 (`bee-load run --user root`; issue 10): the file
# modes no longer protect bee's objects from it (it owns everything root
# owns), so what must still stop it is the rest of the guard: bpffs and
# the state directory covered in its mount namespace, the read-only
# cgroupfs of its cgroup namespace, the seccomp filter (no bpf()), the
# global hooks. It must not detach a link, widen a map or move itself out
# of the session. bee-load says once on stderr what --user root costs.
# bee-timeout: 60
. /bee/lib.sh
trap '' PIPE

escape_tree || fail "cannot lay out /esc"
other=/sys/fs/cgroup/esc-root-other-$$
mkdir -p "$other"
listen_start 127.0.0.1:47200 || fail "no listener on 127.0.0.1:47200"
trap 'listen_stop; rmdir "$other" 2>/dev/null' EXIT
SESSION_OPTS="--user root"
escape_session_start
pins=$(session_load "$sid")
[ -n "$pins" ] || fail "session $sid: no pack load in its record"

control uid UID:0:0 uid
n=$(grep -ci 'root' "$session_dir/err")
bee_case control-root-warning "$([ "$n" -eq 1 ] && echo PASS || echo FAIL)" "bee-load's stderr says what --user root costs in one line (lines naming root: $n): $(tr '\n' ' ' <"$session_dir/err" | cut -c1-200)"
control connect-granted OK connect 127.0.0.1:47200
control read-allowed READ:plain read /esc/allowed/plain

link=$(find "$pins/links" -mindepth 1 -maxdepth 1 2>/dev/null | head -n 1)
w=$(ask bpf-link-detach "${link:-$pins/links/none}")
n=$(ask connect 127.0.0.1:47201)
r=$(ask read /esc/secret/key)
b=$(is "$w" EPERM EACCES ENOENT)
[ "$n" = EPERM ] && [ "$r" = EACCES ] || b=0
[ -n "$link" ] && [ ! -e "$link" ] && b=0
attempt root-link-detach "$b" "as uid 0: BPF_OBJ_GET of ${link:-(no pinned link?)} and BPF_LINK_DETACH: '$w' (want EPERM or ENOENT); then connect 127.0.0.1:47201: '$n' (want EPERM), read /esc/secret/key: '$r' (want EACCES)"
w=$(ask bpf-net-grant "$pins/maps/bee_net4" 127.0.0.1)
n=$(ask connect 127.0.0.1:47201)
b=$(is "$w" EPERM EACCES ENOENT)
[ "$n" = EPERM ] || b=0
attempt root-map-widen "$b" "as uid 0: BPF_OBJ_GET of $pins/maps/bee_net4 and an update granting 127.0.0.1:*: '$w' (want EPERM or ENOENT); then connect 127.0.0.1:47201: '$n' (want EPERM)"
simple root-bpf-map-create EPERM -- bpf-map-create
for f in /sys/fs/cgroup/cgroup.procs "$other/cgroup.procs"; do
	w=$(ask cgjoin "$f")
	now=$(session_cgroup "$hpid")
	b=$(is "$w" EROFS ENOENT EACCES EPERM)
	[ "$now" = "$cg" ] || b=0
	name=root-cgroup-move-own
	[ "$f" = /sys/fs/cgroup/cgroup.procs ] || name=root-cgroup-move-other
	attempt "$name" "$b" "as uid 0: write our pid to $f: '$w' (want EROFS or ENOENT); the tool's cgroup is $now (want $cg)"
done
m=$(stat -c %a "$pins" 2>/dev/null)
w=$(ask chmod-to "$pins" 777)
b=$(is "$w" ENOENT EROFS EPERM EACCES)
[ -n "$m" ] && [ "$(stat -c %a "$pins")" = "$m" ] || b=0
attempt root-pin-chmod "$b" "as uid 0: chmod 777 $pins: '$w' (want ENOENT: covered, or EROFS); its mode is $(stat -c %a "$pins" 2>/dev/null) (was $m)"
w=$(ask unlink "/run/bee/sessions/$sid.json")
b=$(is "$w" ENOENT EROFS EACCES)
[ -e "/run/bee/sessions/$sid.json" ] || b=0
attempt root-registry-unlink "$b" "as uid 0: unlink /run/bee/sessions/$sid.json: '$w' (want ENOENT or EROFS)"

session_end
bee_case control-session-exit "$([ "$session_rc" -eq 0 ] && echo PASS || echo FAIL)" "bee-load exited $session_rc (want 0): $(tail -n 2 "$session_dir/err" | tr '\n' ' ')"
escape_tally 7
