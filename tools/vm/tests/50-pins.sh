# Inode pins (tools/vm/policies/pin.toml: exec allow "!/opt/bin/tool").
#
# The documented rules: a pinned entry grants execute only of the file
# pinned at load time (docs/decisions.md, "Permissions per domain"); exec
# is decided by the path's grant and, for a pin, the file's (dev, ino) in
# bee_pins (bpf/bee_hooks.bpf.h, "Pins"); and a hard link is the same
# inode, so once the file was exec-opened through a granted path it may be
# mapped executable through any of its names, while a name no grant covers
# never runs it and never maps it before that (bpf/bee_hooks.bpf.h,
# "Hard links"). Cases:
#   pinned-runs               /opt/bin/tool, the pinned file, runs
#   hardlink-map-before-exec  mmap PROT_EXEC through the alias before any exec: EACCES
#   hardlink-exec             exec of the pinned inode through /opt/bin/alias: EACCES
#   hardlink-map-after-exec   mmap PROT_EXEC through the alias after the exec: OK
#   replaced-denied           another file renamed over /opt/bin/tool (from
#                             outside, while the session runs): EACCES, and
#                             the same exec outside the session runs
#   original-back             the pinned inode renamed back to /opt/bin/tool runs again
#   audit                     the log holds the three denials
# bee-timeout: 60
. /bee/lib.sh
trap '' PIPE

mkdir -p /opt/bin /opt/driver
cp /bin/bee-try /opt/driver/drv
cp /bin/bee-try /opt/bin/tool
cp /bin/bee-try /opt/bin/other        # another file: a different inode
ln /opt/bin/tool /opt/bin/alias       # the pinned inode under a name no grant covers
ino() { stat -c %i "$1"; }
pinned=$(ino /opt/bin/tool)

log=$BEE_TMP/pin.audit.jsonl
SESSION_OPTS="--audit-log $log"
session_start /bee/packs/vm/pin.bpfpack /opt/driver/drv serve
pid=$(ask pid)
case $pid in
*[!0-9]* | "") fail "the pin session did not start: '$pid'; bee-load said: $(tail -n 3 "$session_dir/err" | tr '\n' ' ')" ;;
esac

w=$(ask mmapx /opt/bin/alias)
[ "$w" = EACCES ] && r=PASS || r=FAIL
bee_case hardlink-map-before-exec "$r" "mmap PROT_EXEC of /opt/bin/alias (inode $pinned, never exec-opened in this session): '$w', want EACCES"

w=$(ask run /opt/bin/tool pid)
[ "$w" = OK ] && r=PASS || r=FAIL
bee_case pinned-runs "$r" "run /opt/bin/tool (inode $pinned, pinned at start): '$w', want OK"

w=$(ask run /opt/bin/alias pid)
[ "$w" = EACCES ] && r=PASS || r=FAIL
bee_case hardlink-exec "$r" "run /opt/bin/alias (a hard link to the pinned inode $pinned under a name no grant covers): '$w', want EACCES"

w=$(ask mmapx /opt/bin/alias)
[ "$w" = OK ] && r=PASS || r=FAIL
bee_case hardlink-map-after-exec "$r" "mmap PROT_EXEC of /opt/bin/alias after the pinned file ran: '$w', want OK (documented: bpf/bee_hooks.bpf.h 'Hard links')"

mv /opt/bin/other /opt/bin/tool       # rename over it, from outside
w=$(ask run /opt/bin/tool pid)
o=$(bee-try run /opt/bin/tool pid 2>/dev/null)
[ "$w" = EACCES ] && [ "$o" = OK ] && r=PASS || r=FAIL
bee_case replaced-denied "$r" "run /opt/bin/tool after another file (inode $(ino /opt/bin/tool)) was renamed over it: in the session '$w' (want EACCES); outside '$o' (want OK)"

mv /opt/bin/alias /opt/bin/tool       # the pinned inode is back under its name
w=$(ask run /opt/bin/tool pid)
[ "$w" = OK ] && r=PASS || r=FAIL
bee_case original-back "$r" "run /opt/bin/tool once the pinned inode $(ino /opt/bin/tool) is back under its name: '$w', want OK"

session_end
cat "$log"
missing=""
for res in /opt/bin/alias /opt/bin/tool; do
	grep -q "\"kind\":\"Process\",\"action\":\"Execute\",\"resource\":\"$res\",\"decision\":\"Deny\"" "$log" ||
		missing="$missing $res"
done
if [ "$session_rc" -eq 0 ] && [ -z "$missing" ]; then
	bee_case audit PASS "bee-load exited 0; the log has the Execute denials of /opt/bin/alias and /opt/bin/tool"
else
	bee_case audit FAIL "bee-load exited $session_rc; no Execute denial of:$missing"
fi
