# lib.sh: what a guest test script sources (as /bee/lib.sh) to report.
#
# The guest's init runs each tools/vm/tests/NN-NAME.sh as
# `sh NN-NAME.sh` in its own scratch directory, with BEE_TEST=NAME and
# BEE_TMP=that directory, a time limit (60 s, or a `# bee-timeout: N`
# line in the script), and stdout and stderr going to the console log.
# A script reports its results with these functions, as lines
#
#   BEE-CASE <name> PASS|FAIL <detail on one line>
#
# A script that is one case calls `pass DETAIL` or `fail DETAIL` (the case
# is named after the script; both exit). A script of several cases calls
# `bee_case SUB PASS|FAIL DETAIL` for each (named NAME/SUB) and carries on.
# Anything else it prints is kept in the log for whoever reads a failure.
#
# Helpers on PATH in the guest: busybox, beec, bee-load (once built),
# bee-try, bee-attach, bee-verify (tools/vm/guest/*.c). Data: /bee/packs
# (the example packs, compiled on the host with -D HOME=/home/dev
# -D PROJECT=/home/dev/src/app, and policies.list naming every example
# policy), /bee/policies (their TOML), /bee/bpf (tools/vm/guest/*.bpf.c
# compiled).

: "${BEE_TEST:=$(basename "$0" .sh)}"
: "${BEE_TMP:=/tmp}"

bee_oneline() {
	printf '%s' "$*" | tr '\n\t' '  '
}

# bee_case SUB PASS|FAIL DETAIL...: report the case BEE_TEST/SUB
bee_case() {
	_sub=$1
	_res=$2
	shift 2
	case $_res in
	PASS | FAIL) ;;
	*)
		echo "bee_case: result must be PASS or FAIL, not '$_res'" >&2
		_res=FAIL
		;;
	esac
	printf 'BEE-CASE %s/%s %s %s\n' "$BEE_TEST" "$_sub" "$_res" "$(bee_oneline "$*")"
}

# pass DETAIL... / fail DETAIL...: report the script's one case, and exit
pass() {
	printf 'BEE-CASE %s PASS %s\n' "$BEE_TEST" "$(bee_oneline "$*")"
	exit 0
}

fail() {
	printf 'BEE-CASE %s FAIL %s\n' "$BEE_TEST" "$(bee_oneline "$*")"
	exit 1
}

# in_cgroup CGROUP CMD...: run CMD as a member of the cgroup directory CGROUP
in_cgroup() {
	sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' in_cgroup "$@"
}

# try_word CMD...: run a bee-try command; print its one word (or its usage error)
try_word() {
	"$@" 2>&1 | head -n 1
}
