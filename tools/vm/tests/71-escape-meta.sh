# The escape suite of metadata (issue 10, class 3): chmod, chown, utimes,
# truncate, POSIX ACLs (setxattr, removexattr) of files the policy does not
# let the tool write. The tool (uid 65534) owns them, so the file modes
# never stop it: each needs the write right of the object (the tree is
# read-only outside the write grants: EROFS on every kernel; under
# bpf-lsm the global inode_setattr/setxattr/removexattr hooks answer
# EACCES). The controls do the same to a file of the written tree.
# bee-timeout: 90
. /bee/lib.sh
trap '' PIPE

escape_tree || fail "cannot lay out /esc"
escape_session_start

control chmod-own OK chmod-to /esc/allowed/own 640
control chown-own OK chown-to /esc/allowed/own 65534 65534
control utimes-own OK utimes-set /esc/allowed/own
control touch-own OK touch /esc/allowed/own
control acl-own OK acl-set /esc/allowed/own
control xattr-rm-own OK xattr-rm /esc/allowed/ownacl system.posix_acl_access
control truncate-own OK truncate /esc/allowed/own

st() { stat -c '%a %u:%g %Y %s' "$1"; }
# meta NAME PATH OP...: an attempt that must be refused and leave PATH's
# mode, owner, mtime and size as they were
meta() {
	_n=$1
	_p=$2
	shift 2
	_before=$(st "$_p")
	_w=$(ask "$@")
	_after=$(st "$_p")
	_b=$(is "$_w" EROFS EACCES EPERM)
	[ "$_before" = "$_after" ] || _b=0
	attempt "$_n" "$_b" "$*: '$_w' (want EROFS or EACCES); mode owner mtime size '$_after' (was '$_before')"
}
meta chmod-readonly /esc/ro/file chmod-to /esc/ro/file 666
meta chmod-readonly-dir /esc/ro/dir chmod-to /esc/ro/dir 777
meta chmod-denied /esc/secret/key chmod-to /esc/secret/key 644
meta utimes-readonly /esc/ro/file utimes-set /esc/ro/file
meta touch-readonly /esc/ro/file touch /esc/ro/file
meta truncate-readonly /esc/ro/victim truncate /esc/ro/victim
c_before=$(stat -c %Z /esc/ro/file)
sleep 1.1   # chown changes only the ctime; a second apart shows it
w=$(ask chown-to /esc/ro/file 65534 65534)
b=$(is "$w" EROFS EACCES EPERM)
[ "$(stat -c %Z /esc/ro/file)" = "$c_before" ] || b=0
attempt chown-readonly "$b" "chown /esc/ro/file to its own 65534:65534: '$w' (want EROFS or EACCES); ctime $(stat -c %Z /esc/ro/file) (was $c_before)"

# xattr NAME PATH XATTR WANT_AFTER OP...: an attempt whose effect is read
# back from outside (bee-try xattr-get as root)
xattr() {
	_n=$1
	_p=$2
	_x=$3
	_after_want=$4
	shift 4
	_w=$(ask "$@")
	_after=$(bee-try xattr-get "$_p" "$_x" 2>/dev/null)
	_b=$(is "$_w" EROFS EACCES EPERM)
	[ "$_after" = "$_after_want" ] || _b=0
	attempt "$_n" "$_b" "$*: '$_w' (want EROFS or EACCES); outside, getxattr $_x: '$_after' (want $_after_want)"
}
xattr acl-readonly /esc/ro/file system.posix_acl_access ENODATA acl-set /esc/ro/file
xattr acl-default-readonly /esc/ro/dir system.posix_acl_default ENODATA acl-default /esc/ro/dir
xattr xattr-rm-readonly /esc/ro/acl system.posix_acl_access OK xattr-rm /esc/ro/acl system.posix_acl_access

session_end
bee_case control-session-exit "$([ "$session_rc" -eq 0 ] && echo PASS || echo FAIL)" "bee-load exited $session_rc (want 0): $(tail -n 2 "$session_dir/err" | tr '\n' ' ')"
escape_tally 10
