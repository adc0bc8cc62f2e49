# The escape suite of system calls no confined tool needs (issue 10, class
# 6, and runtime/bee_syscalls.h): the session's seccomp filter refuses
# every group the policy does not name (escape-guard.toml names none)
# with EPERM (clone3: ENOSYS, so that libc falls back to clone, whose
# flags the filter sees), and every socket family but AF_UNIX, AF_INET and
# AF_INET6, on both backends. personality(READ_IMPLIES_EXEC) would make a
# readable mapping executable. Each operation is shown to work outside
# any session (outside-*), and the ordinary calls beside the refused ones
# to work inside (control-*).
# bee-timeout: 60
. /bee/lib.sh
trap '' PIPE

escape_tree || fail "cannot lay out /esc"
mkdir -p /esc/allowed/mnt
escape_session_start

control personality-linux OK personality 0
control socket-tcp OK socket inet stream 0
control socket-udp6 OK socket inet6 dgram 0
control socket-unix OK socket unix stream 0
control fork-exec OK run /esc/bin/driver uid
control read OK open /esc/ro/file r

outside personality-rx EXEC personality-rx
outside perf OK perf
outside uring-setup OK uring-setup
outside unshare-user OK unshare user
outside clone-newnet OK clone net
outside keyctl OK keyctl
outside userfaultfd OK userfaultfd
outside socket-netlink OK socket netlink raw 0

simple personality-rx EPERM -- personality-rx
simple personality-addr-no-randomize EPERM -- personality 0x0040000
simple vsock-socket EPERM -- socket 40 stream 0
simple netlink-socket EPERM -- socket netlink raw 0
simple packet-socket EPERM -- socket packet raw 768
simple vsock-dgram-socket EPERM -- socket 40 dgram 0
simple netlink-uevent-socket EPERM -- socket netlink dgram 15
simple perf-event-open EPERM -- perf
simple io-uring-setup EPERM -- uring-setup
simple unshare-user EPERM -- unshare user
simple unshare-mount EPERM -- unshare mount
simple unshare-net EPERM -- unshare net
simple clone-newuser EPERM -- clone user
simple clone-newnet EPERM -- clone net
simple clone3 ENOSYS EPERM -- clone3
simple keyctl-add-key EPERM -- keyctl
simple userfaultfd EPERM -- userfaultfd
simple name-to-handle EPERM -- handle /esc/ro/file
simple mount-tmpfs EPERM -- mount /esc/allowed/mnt

session_end
bee_case control-session-exit "$([ "$session_rc" -eq 0 ] && echo PASS || echo FAIL)" "bee-load exited $session_rc (want 0): $(tail -n 2 "$session_dir/err" | tr '\n' ' ')"
escape_tally 19
