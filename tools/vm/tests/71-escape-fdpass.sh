# The escape suite of descriptors from outside (issue 10, class 4): a
# process outside the session (bee-fdsend, root) opens a file the policy
# denies and passes the descriptor in over SCM_RIGHTS. Under bpf-lsm the
# global file_receive hook judges the received file by the policy for its
# f_mode, like file_open: the kernel drops it (NOFD, MSG_CTRUNC) or the
# read fails (EACCES); connecting to an outside socket is refused (EPERM).
# Landlock checks at open only: docs/decisions.md, "Known gaps". The
# control passes an allowed file's descriptor the same way.
# bee-timeout: 60
. /bee/lib.sh
trap '' PIPE

escape_tree || fail "cannot lay out /esc"
bee-fdsend --listen /esc/allowed/outside-fd.sock >"$BEE_TMP/fdsrv.out" 2>&1 &
srv=$!
trap 'kill "$srv" 2>/dev/null' EXIT
escape_session_start

# pass SOCK FILE: bee-fdsend connects to the tool's socket SOCK and sends
# FILE; the tool's word is the answer
pass_in() {
	bee-fdsend "$1" "$2" >"$BEE_TMP/send.out" 2>&1 &
	_s=$!
	_w=$(ask fdrecv "$1")
	wait "$_s"
	echo "$_w"
}

w=$(pass_in /esc/allowed/fd1.sock /esc/allowed/plain)
[ "$w" = READ:plain ] && r=PASS || r=FAIL
bee_case control-fdpass-allowed "$r" "the descriptor of /esc/allowed/plain passed in from outside, read: '$w' (want READ:plain); sender: $(cat "$BEE_TMP/send.out")"
w=$(pass_in /esc/allowed/fd2.sock /esc/secret/key)
attempt fdpass-denied "$(is "$w" NOFD EACCES)" "the descriptor of /esc/secret/key (denied) passed in from outside, read: '$w' (want NOFD: file_receive refused it, or EACCES)"
w=$(pass_in /esc/allowed/fd3.sock /esc/secret/dir/inner)
attempt fdpass-denied-inner "$(is "$w" NOFD EACCES)" "the descriptor of /esc/secret/dir/inner passed in, read: '$w' (want NOFD or EACCES)"
simple fdpass-connect-out NOFD EACCES EPERM -- fdrecv-connect /esc/allowed/outside-fd.sock /esc/secret/key

session_end
bee_case control-session-exit "$([ "$session_rc" -eq 0 ] && echo PASS || echo FAIL)" "bee-load exited $session_rc (want 0): $(tail -n 2 "$session_dir/err" | tr '\n' ' ')"
escape_tally 3
