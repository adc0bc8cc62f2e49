# The escape suite: ways around a session's policy
# (tools/vm/policies/escape.toml), each attempt a case that passes only
# when it was refused with one of the answers it names: EACCES for files,
# exec and mappings, EPERM for sockets, namespaces and bpf(); EROFS where
# the session's read-only tree or cgroupfs answers first, EXDEV for a
# rename across the write grant's own mount, ESRCH and ENOENT where an
# outside process or cgroup is not in the session's namespaces (the case
# says which). The tool runs as uid 65534 (bee-load's default as root).
# Controls (control-*) are the allowed counterparts on the same files,
# programs and endpoints, so that a session that denies everything fails
# too. The helpers the escape suites share (attempt, simple, control,
# escape_tally) are lib.sh's.
#
# Attempts at a known gap (docs/decisions.md, "Known gaps") are cases that
# fail while the gap stays open; tools/vm/known-gaps (bpf-lsm) and
# tools/vm/known-gaps-landlock (tools/escape-host) count them apart. At
# the end: BEE-ESCAPES attempts=N blocked=M, and the case tally, which
# passes once every attempt ran.
# bee-timeout: 120
. /bee/lib.sh
trap '' PIPE

# ---- the tree, the servers, the processes outside ----------------------------

# /esc may be a mount point (tools/escape-host): its contents only
mkdir -p /esc
rm -rf /esc/secret /esc/allowed /esc/ro /esc/bin
mkdir -p /esc/secret /esc/allowed /esc/ro /esc/bin
# the written tree is the tool's (uid 65534) to write, as /tmp is
chmod 1777 /esc/allowed
for f in key key-hl key-mv; do echo "secret-$f" >"/esc/secret/$f"; done
echo plain >/esc/allowed/plain
echo file >/esc/ro/file
for f in victim victim2 replaced; do echo "keep-$f" >"/esc/ro/$f"; done
cp /bin/bee-try /esc/bin/driver
cp /bin/bee-try /esc/bin/allowed
cp /bin/bee-try /esc/bin/denied
cp /bin/dyn-hello /esc/bin/dyn-allowed
cp /bin/dyn-hello /esc/bin/dyn-denied
other=/sys/fs/cgroup/esc-other-$$
mkdir -p "$other"
ldso=/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2

sleep 1000 &
priv_pid=$!
bee-try nocap-sleep >"$BEE_TMP/nocap.out" 2>&1 &
nocap_pid=$!
for _ in 1 2 3 4 5 6 7 8 9 10; do
	grep -q SLEEPING "$BEE_TMP/nocap.out" && break
	sleep 0.2
done
listen_start 127.0.0.1:47200 127.0.0.1:47201 127.0.0.2:47200 unix:/esc/allowed/outside.sock ||
	fail "no listeners"
# writable by all, so that the file mode never is what refuses the tool's
# connect (it runs as uid 65534): the session must
chmod 666 /esc/allowed/outside.sock
cleanup() {
	listen_stop
	kill "$priv_pid" "$nocap_pid" 2>/dev/null
	sleep 0.1
	rmdir "$other" 2>/dev/null
}
trap cleanup EXIT

pack=/bee/packs/vm/escape.bpfpack

# ---- an inherited descriptor of a denied file --------------------------------

# shellcheck disable=SC2086 # SESSION_ENV is a list of words
w=$(env -i $SESSION_ENV bee-load run --backend "$BEE_BACKEND" "$pack" -- /esc/bin/driver reopen 0 r \
	</esc/secret/key 2>"$BEE_TMP/inherited.err")
attempt proc-fd-inherited "$(is "$w" EACCES)" \
	"stdin is /esc/secret/key (opened outside); the tool opens /proc/self/fd/0 for reading: '$w' (want EACCES)"

# ---- the session -------------------------------------------------------------

log=$BEE_TMP/escape.audit.jsonl
SESSION_OPTS="--audit-log $log"
session_start "$pack" /esc/bin/driver serve
tpid=$(ask pid)
hpid=$(tool_pid /esc/bin/driver)
cg=$(session_cgroup "${hpid:-0}")
case $cg in
*/bee-vm-escape-*) ;;
*) fail "the escape session did not start (tool '$tpid', cgroup '$cg'): $(tail -n 3 "$session_dir/err" | tr '\n' ' ')" ;;
esac
sid=${cg##*-}
load=$(session_load "$sid")

control read-allowed READ:plain read /esc/allowed/plain
control procfd-read OK procfd /esc/ro/file r r
control proc-root-allowed READ:plain read /proc/self/root/esc/allowed/plain
control execveat-allowed OK execveat /esc/bin allowed
control fexecve-allowed OK fexecve /esc/bin/allowed opath
control ldso-allowed OK run "$ldso" /esc/bin/dyn-allowed
control dynamic-program OK run /esc/bin/dyn-allowed
control mmap-exec-library OK mmapx /usr/lib/x86_64-linux-gnu/libc.so.6
control mprotect-exec-granted OK mprotectx /esc/bin/allowed
control chdir-allowed READ:plain chdir-read /esc/allowed plain
control connect-allowed OK connect 127.0.0.1:47200
control connect-mapped-allowed OK connect '[::ffff:127.0.0.1]:47200'
control sendto-allowed OK sendto 127.0.0.1:47253
control socket-tcp OK socket inet stream 0
control socket-udp OK socket inet dgram 0
control cgroup-procs-read OK open /sys/fs/cgroup/cgroup.procs r
control io-uring-allowed OK uring-open /esc/allowed/plain
control unix-own-socket OK unix-self /esc/allowed/self.sock
control create-allowed OK open /esc/allowed/new c
control bind-denied-by-hook EPERM bind 127.0.0.1:47210

# names that reach the secret
s=$(ask symlink /esc/secret/key /esc/allowed/sym)
r=$(ask read /esc/allowed/sym)
attempt symlink "$(is "$r" EACCES)" "symlink /esc/allowed/sym -> /esc/secret/key: '$s'; read through it: '$r' (want EACCES)"

# Landlock refuses a link out of a tree it grants nothing in with EXDEV
# (reparenting), as it does under bpf-lsm's hardening
l=$(ask link /esc/secret/key-hl /esc/allowed/hl)
r=$(ask read /esc/allowed/hl)
b=$(is "$l" EACCES EPERM EXDEV EROFS)
[ "$r" = EACCES ] && b=1
attempt hardlink "$b" "link /esc/secret/key-hl /esc/allowed/hl: '$l' (want EACCES, EPERM or EXDEV); read /esc/allowed/hl: '$r' (want EACCES)"

l=$(ask rename /esc/secret/key-mv /esc/allowed/mv)
r=$(ask read /esc/allowed/mv)
b=$(is "$l" EACCES EPERM EXDEV EROFS)
[ "$r" = EACCES ] && b=1
attempt rename-out "$b" "rename /esc/secret/key-mv /esc/allowed/mv: '$l' (want EACCES or EPERM); read /esc/allowed/mv: '$r' (want EACCES)"

# reopening
simple proc-fd-upgrade EACCES -- procfd /esc/ro/file r w
simple proc-self-root EACCES -- read /proc/self/root/esc/secret/key
simple opath-reopen EACCES -- opath /esc/secret/key r
simple chdir-relative EACCES -- chdir-read /esc/secret key
simple chdir-dotdot EACCES -- chdir-read /esc/allowed ../secret/key
simple io-uring-openat EACCES -- uring-open /esc/secret/key

# programs
simple execveat EACCES -- execveat /esc/bin denied
simple fexecve-opath EACCES -- fexecve /esc/bin/denied opath
simple fexecve-rdonly EACCES -- fexecve /esc/bin/denied r
simple memfd-exec EACCES -- memfd-exec /esc/bin/allowed
ld_word=$(ask run "$ldso" /esc/bin/dyn-denied)
simple mmap-exec EACCES -- mmapx /esc/bin/denied
simple mprotect-exec EACCES -- mprotectx /esc/ro/file

# network
simple v4mapped-not-granted EPERM -- connect '[::ffff:127.0.0.1]:47201'
simple v4mapped-denied EPERM -- connect '[::ffff:127.0.0.2]:47200'
simple udp-sendto EPERM -- sendto 127.0.0.1:47254
simple udp-sendto-mapped EPERM -- sendto '[::ffff:127.0.0.1]:47254'
simple udp-connected-sendto EPERM -- csendto 127.0.0.1:47253 127.0.0.1:47254
raw_word=$(ask socket inet raw 1)
packet_word=$(ask socket packet raw 768)
netlink_word=$(ask socket netlink raw 0)
ping_word=$(ask socket inet dgram 1)
simple unix-outside-peer EPERM -- unix-connect /esc/allowed/outside.sock
simple userns EPERM -- unshare-user

# other processes, other cgroups
simple cgroup-procs-root EACCES EROFS -- cgjoin /sys/fs/cgroup/cgroup.procs
simple cgroup-procs-sibling EACCES EROFS ENOENT -- cgjoin "$other/cgroup.procs"
now=$(session_cgroup "$hpid")
[ "$now" = "$cg" ] && r=PASS || r=FAIL
bee_case control-still-in-session "$r" "the tool's cgroup after the attempts: $now (want $cg)"
w=$(ask ptrace "$priv_pid")
attempt ptrace-privileged "$(is "$w" EPERM ESRCH)" "PTRACE_ATTACH to $priv_pid (root with every capability, outside the session): '$w' (want EPERM; the tool has no capabilities)"
capeff=$(sed -n 's/^CapEff:[[:space:]]*//p' "/proc/$nocap_pid/status")
w=$(ask ptrace "$nocap_pid")
attempt ptrace-same-creds "$(is "$w" EPERM ESRCH)" "PTRACE_ATTACH to $nocap_pid (outside the session, uid $(stat -c %u "/proc/$nocap_pid"), CapEff $capeff, like the user's other processes; yama ptrace_scope=$(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null)): '$w' (want EPERM)"

# the known gaps (docs/decisions.md)
simple listen-unbound EPERM -- listen
w=$(ask unlink /esc/ro/victim)
attempt unlink-readonly "$(is "$w" EACCES EPERM EROFS)" "unlink /esc/ro/victim (read-only): '$w' (want EACCES); the file $([ -e /esc/ro/victim ] && echo is still there || echo is gone)"
w=$(ask truncate /esc/ro/victim2)
attempt truncate-readonly "$(is "$w" EACCES EPERM EROFS)" "truncate(2) /esc/ro/victim2 (read-only): '$w' (want EACCES); its size now $(wc -c </esc/ro/victim2) bytes"
w=$(ask rename /esc/allowed/new /esc/ro/replaced)
attempt rename-over-readonly "$(is "$w" EACCES EPERM EROFS EXDEV)" "rename /esc/allowed/new over /esc/ro/replaced (read-only): '$w' (want EACCES); /esc/ro/replaced holds '$(head -c 20 /esc/ro/replaced)'"
w=$(ask mkdir /esc/ro/newdir)
attempt mkdir-readonly "$(is "$w" EACCES EPERM EROFS)" "mkdir /esc/ro/newdir (read-only tree): '$w' (want EACCES)"
w=$(ask open /esc/ro/created c)
b=$(is "$w" EACCES EROFS)
[ -e /esc/ro/created ] && b=0
attempt create-denied-no-trace "$b" "open(O_CREAT) /esc/ro/created: '$w' (want EACCES), and no file left: $([ -e /esc/ro/created ] && echo 'it exists' || echo none)"

# bpf(): last, as a success would detach or widen the session's programs.
# unprivileged_bpf_disabled stops only BPF_MAP_CREATE and BPF_PROG_LOAD
# on 6.1; pinned objects are reached by path, under DAC.
ubd=$(cat /proc/sys/kernel/unprivileged_bpf_disabled 2>/dev/null)
# the session's cgroup as the tool names it (its cgroup namespace's root)
cgname=$cg
[ "$(readlink "/proc/$hpid/ns/cgroup")" != "$(readlink /proc/self/ns/cgroup)" ] && cgname=/sys/fs/cgroup
w=$(ask bpf-prog-detach "$cgname")
attempt bpf-prog-detach "$(is "$w" EPERM EACCES EINVAL ENOENT SETUP:EACCES SETUP:ENOENT)" "BPF_PROG_DETACH of the session cgroup's ($cgname) connect4 programs: '$w' (want a refusal: EPERM, no bpf(); SETUP:EACCES or SETUP:ENOENT, the cgroup cannot even be opened; or EINVAL/ENOENT as programs attached by links cannot be detached that way)"
w=$(ask bpf-link-ids)
attempt bpf-link-ids "$(is "$w" EPERM EACCES)" "BPF_LINK_GET_NEXT_ID, GET_FD_BY_ID, LINK_DETACH of every link: '$w' (want EPERM: no CAP_SYS_ADMIN)"
w=$(ask bpf-net-grant "$load/maps/bee_net4" 127.0.0.1)
n=$(ask connect 127.0.0.1:47201)
b=$(is "$w" EPERM EACCES ENOENT)
[ "$n" = EPERM ] && b=1
attempt bpf-map-widen "$b" "BPF_OBJ_GET of the pinned map $load/maps/bee_net4 and BPF_MAP_UPDATE_ELEM of a grant of 127.0.0.1:* (tcp): '$w' (want EPERM or EACCES); then connect 127.0.0.1:47201 (not granted): '$n' (want EPERM)"
w=$(ask bpf-link-detach "$load/links/bee_file_open")
r=$(ask read /esc/secret/key)
b=$(is "$w" EPERM EACCES ENOENT)
[ "$r" = EACCES ] && b=1
attempt bpf-link-detach "$b" "BPF_OBJ_GET of the pinned link $load/links/bee_file_open, then BPF_LINK_DETACH: '$w' (want EPERM or EACCES; unprivileged_bpf_disabled=$ubd); then read /esc/secret/key: '$r' (want EACCES)"

session_end
echo "escape session: bee-load exit $session_rc; its audit log:"
cat "$log"

# attempts whose refusal the audit log attributes to bee's hooks
logged() {   # logged KIND ACTION RESOURCE: 1 when the log has that denial
	grep -qF "\"kind\":\"$1\",\"action\":\"$2\",\"resource\":\"$3\",\"decision\":\"Deny\"" "$log" && echo 1 || echo 0
}
b=0
[ "$ld_word" != OK ] && [ "$ld_word" != NOANSWER ] && [ "$(logged Process Execute /esc/bin/dyn-denied)" = 1 ] && b=1
attempt dynamic-loader "$b" "$ldso /esc/bin/dyn-denied: '$ld_word' (want the loader to fail, 127), and the log has the denied PROT_EXEC mapping of /esc/bin/dyn-denied: $(logged Process Execute /esc/bin/dyn-denied)"
# sock NAME WORD RESOURCE LOGGED DETAIL: families other than inet are
# refused by the seccomp filter (EPERM, before any hook: LOGGED no); inet
# ones by bpf-lsm's socket_create, which logs them (LOGGED yes), and under
# landlock by the missing capability or ping_group_range
sock() {
	_b=0
	[ "$2" = EPERM ] && _b=1
	if [ "$4" = yes ] && [ "$BEE_BACKEND" = bpf-lsm ]; then
		[ "$(logged Network Connect "$3")" = 1 ] || _b=0
	elif [ "$4" = yes ]; then
		[ "$2" = EACCES ] && _b=1
	fi
	attempt "$1" "$_b" "$5: '$2' (want EPERM$([ "$4" = yes ] && echo ", and under bpf-lsm the log's $3"); the log has it: $(logged Network Connect "$3"))"
}
sock raw-socket "$raw_word" "socket:AF_INET/SOCK_RAW/1" yes "socket(AF_INET, SOCK_RAW, IPPROTO_ICMP)"
sock packet-socket "$packet_word" "socket:AF_PACKET/SOCK_RAW/0" no "socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL))"
sock netlink-socket "$netlink_word" "socket:AF_NETLINK/SOCK_RAW/0" no "socket(AF_NETLINK, SOCK_RAW, 0)"
sock ping-socket "$ping_word" "socket:AF_INET/SOCK_DGRAM/1" yes "socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP)"

escape_tally 42
