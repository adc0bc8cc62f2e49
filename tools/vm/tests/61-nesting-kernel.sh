# How the 6.1 kernel combines cgroup/connect4 programs of a cgroup and its
# ancestors, without bee: a program that refuses every connect attached to
# a parent cgroup, one that allows every connect attached to its child
# (both as BPF links, as bee-load attaches). A nested bee session relies on
# the parent's refusal holding in the child's cgroup.
#   parent-deny-alone      in the child with no program of its own: EPERM
#   parent-deny-child-allow  the child's allowing program added: want EPERM
# bee-timeout: 30
. /bee/lib.sh
p=/sys/fs/cgroup/knest
c=$p/child
pins=/sys/fs/bpf/knest
cleanup() {
	rm -rf "$pins"
	rmdir "$c" "$p" 2>/dev/null
	listen_stop
}
trap cleanup EXIT
mkdir -p "$c" "$pins"
listen_start 127.0.0.1:47500 || fail "no listener"
bee-attach /bee/bpf/connect_deny.bpf.o "$p" "$pins/p" || fail "cannot attach connect_deny to $p"
w=$(try_word in_cgroup "$c" bee-try connect 127.0.0.1:47500)
o=$(try_word bee-try connect 127.0.0.1:47500)
[ "$w" = EPERM ] && [ "$o" = OK ] && r=PASS || r=FAIL
bee_case parent-deny-alone "$r" "connect from $c, the parent's program refusing: '$w' (want EPERM); outside '$o' (want OK)"
bee-attach /bee/bpf/connect_allow.bpf.o "$c" "$pins/c" || fail "cannot attach connect_allow to $c"
w=$(try_word in_cgroup "$c" bee-try connect 127.0.0.1:47500)
wp=$(try_word in_cgroup "$p" bee-try connect 127.0.0.1:47500)
[ "$w" = EPERM ] && [ "$wp" = EPERM ] && r=PASS || r=FAIL
bee_case parent-deny-child-allow "$r" "connect from $c with the child's allowing program too: '$w' (want EPERM: a parent's refusal holds); from $p: '$wp' (want EPERM)"
