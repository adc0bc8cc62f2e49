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

# ---- sessions --------------------------------------------------------------
#
# A session is driven through a copy of bee-try running `serve` as the
# tool: the test asks one operation at a time and may act outside the
# session (the same operation from outside, a rename under the tool's
# feet) between two of them, while the session's programs stay attached.
#
#   SESSION_ENV="PATH=/bin ..."      the launcher's whole environment (env -i)
#   SESSION_OPTS="--audit-log F"     more options of bee-load run
#   SESSION_CGROUP=DIR               bee-load joins the cgroup DIR first (a
#                                    session started from within another)
#   SESSION_FD_IN=7 SESSION_FD_OUT=8 the script's descriptors of the tool's
#                                    pipes (5 and 6 for a second session)
#   BEE_BACKEND=landlock             the backend of every session (default
#                                    bpf-lsm: the VM; tools/escape-host runs
#                                    the escape suites under landlock)
#   session_start PACK TOOL [ARG...] bee-load run --backend $BEE_BACKEND in the
#                                    background; session_pid is bee-load's pid
#   ask OP [ARG...]                  one operation in the session: its word,
#                                    NOANSWER if the tool gave none in 30 s
#   session_end                      EOF to the tool, wait: session_rc is
#                                    bee-load's exit status; its stderr is in
#                                    $session_dir/err
#
# Scripts that use these `trap '' PIPE`, so that a session that died early
# makes ask answer NOANSWER instead of killing the script.

SESSION_ENV=${SESSION_ENV:-"PATH=/bin HOME=/root TERM=dumb BEE_SECRET=hunter2"}
SESSION_OPTS=${SESSION_OPTS:-}
BEE_BACKEND=${BEE_BACKEND:-bpf-lsm}

session_start() {
	_pack=$1
	shift
	_fi=${SESSION_FD_IN:-7}
	_fo=${SESSION_FD_OUT:-8}
	session_dir=$BEE_TMP/session.$$.${_session_n:=0}
	_session_n=$((_session_n + 1))
	rm -rf "$session_dir"
	mkdir -p "$session_dir"
	mkfifo "$session_dir/in" "$session_dir/out"
	# the other sessions' pipes are not this one's business: closed
	if [ -n "${SESSION_CGROUP:-}" ]; then
		# shellcheck disable=SC2016,SC2086 # $1 is the inner shell's; lists of words
		env -i $SESSION_ENV sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' join \
			"$SESSION_CGROUP" bee-load run --backend "$BEE_BACKEND" $SESSION_OPTS "$_pack" -- "$@" \
			<"$session_dir/in" >"$session_dir/out" 2>"$session_dir/err" 5>&- 6>&- 7>&- 8>&- &
	else
		# shellcheck disable=SC2086 # both are lists of words
		env -i $SESSION_ENV bee-load run --backend "$BEE_BACKEND" $SESSION_OPTS "$_pack" -- "$@" \
			<"$session_dir/in" >"$session_dir/out" 2>"$session_dir/err" 5>&- 6>&- 7>&- 8>&- &
	fi
	session_pid=$!
	eval "exec $_fi>\"\$session_dir/in\" $_fo<\"\$session_dir/out\""
}

ask() {
	# shellcheck disable=SC2261 # >&N duplicates descriptor N; 2> is another one
	printf '%s\n' "$*" >&"${SESSION_FD_IN:-7}" 2>/dev/null
	_w=""
	# shellcheck disable=SC3045 # busybox read has -t
	read -r -t 30 _w <&"${SESSION_FD_OUT:-8}" || _w=NOANSWER
	echo "${_w:-NOANSWER}"
}

session_end() {
	eval "exec ${SESSION_FD_IN:-7}>&-"
	wait "$session_pid"
	session_rc=$?
	eval "exec ${SESSION_FD_OUT:-8}<&-"
}

# children_of PID: the pids whose parent is PID
children_of() {
	for _c in /proc/[0-9]*; do
		# the parent is the second field after the command's ')'
		[ "$(sed 's/.*) //' "$_c/stat" 2>/dev/null | cut -d' ' -f2)" = "$1" ] && echo "${_c#/proc/}"
	done
}

# session_tool_pid: the pid, as this script numbers it, of the tool of the
# last session_start: bee-load's child is the session's init (pid 1 of its
# own pid namespace, which is why the tool's `pid` answer is not ours), and
# the tool is init's child. Empty when there is none.
session_tool_pid() {
	_init=$(children_of "$session_pid" | head -n 1)
	[ -n "$_init" ] && children_of "$_init" | head -n 1
}

# session_cgroup PID: the cgroup v2 directory of a process
session_cgroup() {
	echo "/sys/fs/cgroup$(sed -n 's/^0:://p' "/proc/$1/cgroup" 2>/dev/null)"
}

# tool_pid EXE: the pid (as this script numbers it) of the process that runs
# EXE in a session cgroup of bee's (bee-*); empty when there is none. The
# tool's own `pid` answer is its pid namespace's number, not ours.
tool_pid() {
	for _p in /proc/[0-9]*; do
		[ "$(readlink "$_p/exe" 2>/dev/null)" = "$1" ] || continue
		case $(sed -n 's/^0:://p' "$_p/cgroup" 2>/dev/null) in
		*/bee-*)
			echo "${_p#/proc/}"
			return 0
			;;
		esac
	done
	return 1
}

# ---- audit logs --------------------------------------------------------------

# audit_bad_lines LOG: every line that is not exactly the five keys ts,
# kind, action, resource, decision in that order, with a UTC millisecond ts,
# and then at most a "count" (the environment's summary, a denial's repeats)
audit_bad_lines() {
	grep -v -E '^\{"ts":"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z","kind":"(FileSystem|Network|Environment|Process)","action":"(Read|Write|Connect|Listen|Execute)","resource":"([^"\\]|\\.)*","decision":"(Allow|Deny)"(,"count":[1-9][0-9]*)?\}$' "$1"
}

# audit_tuples LOG: "KIND ACTION RESOURCE DECISION" of each line, sorted,
# once; an Environment summary gives one tuple per name
audit_tuples() {
	sed -n 's/^{"ts":"[^"]*","kind":"\([^"]*\)","action":"\([^"]*\)","resource":"\(.*\)","decision":"\([^"]*\)"\(,"count":[0-9]*\)\{0,1\}}$/\1 \2 \3 \4/p' "$1" |
		awk '$1 == "Environment" { n = split($3, v, ","); for (i = 1; i <= n; i++) print $1, $2, v[i], $4; next } { print }' |
		LC_ALL=C sort -u
}

# set_diff WANT GOT: "missing: ...; unexpected: ..." of two sorted unique
# files of lines, empty when they are equal
set_diff() {
	_miss=$(grep -vxF -f "$2" "$1" | tr '\n' ',' | sed 's/,$//')
	_extra=$(grep -vxF -f "$1" "$2" | tr '\n' ',' | sed 's/,$//')
	[ -s "$2" ] || _miss=$(tr '\n' ',' <"$1" | sed 's/,$//')
	[ -s "$1" ] || _extra=$(tr '\n' ',' <"$2" | sed 's/,$//')
	_out=""
	[ -n "$_miss" ] && _out="missing: $_miss"
	[ -n "$_extra" ] && _out="${_out:+$_out; }unexpected: $_extra"
	echo "$_out"
}

# ---- one example policy, end to end ------------------------------------------
#
# policy_suite POLICY TOOL ENV_ALLOWED <<ROWS
#   NAME WANT_IN WANT_OUT OP [ARG...] [| KIND ACTION RESOURCE DECISION]...
# ROWS
#
# Runs `bee-load check`, then one session of /bee/packs/POLICY.bpfpack with
# the backend $BEE_BACKEND, an audit log and the launcher environment
# SESSION_ENV, whose tool is TOOL (a copy of bee-try) serving requests. For
# each row it asks OP in the session (its word must be WANT_IN) and, while
# the session runs, does the same OP from outside it (its word must be
# WANT_OUT; "-" skips that: env rows). Each row is a case NAME. The
# tuples after "|" are the audit records the row causes; the audit mode
# of the policy's [audit] decides which of them the log must hold.
# ENV_ALLOWED names the SESSION_ENV variables the policy passes through.
# Then the cases:
#   check         bee-load check exited 0
#   start         the tool answered, from a cgroup of its own under bee's name
#   exit          bee-load exited 0 (the tool's status) once its input ended
#   cleanup       the session's cgroup and bpffs pins are gone
#   audit-format  every line is exactly the five keys, in order
#   audit-set     the log's (kind, action, resource, decision) set is the
#                 rows' (plus the tool's exec and the environment's) exactly
policy_suite() {
	_pol=$1
	_tool=$2
	_envok=$3
	_pack=/bee/packs/$_pol.bpfpack
	_toml=/bee/policies/$_pol.toml
	[ -f "$_toml" ] || _toml=/bee/policies/vm/$_pol.toml
	[ -f "$_pack" ] || _pack=/bee/packs/vm/$_pol.bpfpack
	_mode=$(sed -n 's/^decisions *= *"\([a-z]*\)".*/\1/p' "$_toml" | head -n 1)
	_mode=${_mode:-deny}
	_log=$BEE_TMP/$_pol.audit.jsonl
	_want=$BEE_TMP/$_pol.want
	_got=$BEE_TMP/$_pol.got
	rm -f "$_log"
	: >"$_want.all"

	_out=$(bee-load check 2>&1)
	_rc=$?
	if [ "$_rc" -eq 0 ]; then
		bee_case check PASS "bee-load check exited 0: $(printf '%s\n' "$_out" | grep '^backend bpf-lsm')"
	else
		printf '%s\n' "$_out"
		bee_case check FAIL "bee-load check exited $_rc: $(printf '%s\n' "$_out" | grep '^backend bpf-lsm')"
	fi

	# the tool runs as 65534 (bee-load's default user when it runs as
	# root): the home tree is its, so the policy refuses, not file modes
	chown -R 65534:65534 /home/dev
	SESSION_OPTS="--audit-log $_log"
	session_start "$_pack" "$_tool" serve
	_pid=$(ask pid)
	_cg=""
	case $_pid in
	*[!0-9]* | "") ;;
	*) _cg=$(session_cgroup "$(session_tool_pid)") ;;
	esac
	case $_cg in
	/sys/fs/cgroup*/bee-*)
		bee_case start PASS "the tool (pid $_pid) runs in $_cg" ;;
	*)
		bee_case start FAIL "the tool answered '$_pid' (cgroup '$_cg'); bee-load said: $(tail -n 3 "$session_dir/err" | tr '\n' ' ')" ;;
	esac

	# the tool's own exec, and the launcher's environment decisions
	echo "Process Execute $_tool Allow" >>"$_want.all"
	for _kv in $SESSION_ENV; do
		_n=${_kv%%=*}
		_d=Deny
		for _a in $_envok; do [ "$_a" = "$_n" ] && _d=Allow; done
		echo "Environment Read $_n $_d" >>"$_want.all"
	done

	while read -r _name _win _wout _rest; do
		case $_name in '' | '#'*) continue ;; esac
		_op=${_rest%%|*}
		while case $_op in *' ') true ;; *) false ;; esac do _op=${_op% }; done
		_tuples=""
		case $_rest in *'|'*) _tuples=${_rest#*|} ;; esac
		# shellcheck disable=SC2086 # an operation is words
		_in=$(ask $_op)
		_res=PASS
		_detail="$_op: in the session '$_in' (want $_win)"
		[ "$_in" = "$_win" ] || _res=FAIL
		if [ "$_wout" != - ]; then
			# shellcheck disable=SC2086
			_o=$(bee-try $_op </dev/null 2>/dev/null | head -n 1)
			_detail="$_detail; outside, while it runs, '$_o' (want $_wout)"
			[ "$_o" = "$_wout" ] || _res=FAIL
		fi
		bee_case "$_name" "$_res" "$_detail"
		while [ -n "$_tuples" ]; do
			_t=${_tuples%%|*}
			case $_tuples in *'|'*) _tuples=${_tuples#*|} ;; *) _tuples="" ;; esac
			# shellcheck disable=SC2086 # trims the spaces around the tuple
			set -- $_t
			[ $# -eq 4 ] && echo "$1 $2 $3 $4" >>"$_want.all"
		done
	done

	session_end
	if [ "$session_rc" -eq 0 ]; then
		bee_case exit PASS "bee-load exited 0 once the tool's input ended"
	else
		bee_case exit FAIL "bee-load exited $session_rc: $(tail -n 3 "$session_dir/err" | tr '\n' ' ')"
	fi
	_id=${_cg##*-}
	if [ -n "$_cg" ] && [ ! -e "$_cg" ] && [ ! -e "/sys/fs/bpf/bee/$_id" ]; then
		bee_case cleanup PASS "$_cg and /sys/fs/bpf/bee/$_id are gone"
	else
		# shellcheck disable=SC2012 # the names are bee's own
		bee_case cleanup FAIL "left behind: $(ls -d "$_cg" "/sys/fs/bpf/bee/$_id" 2>/dev/null | tr '\n' ' ') (cgroup '$_cg')"
	fi

	if [ ! -s "$_log" ]; then
		bee_case audit-format FAIL "no audit log at $_log"
	else
		_bad=$(audit_bad_lines "$_log")
		if [ -z "$_bad" ]; then
			bee_case audit-format PASS "$(wc -l <"$_log") lines, each exactly ts, kind, action, resource, decision"
		else
			bee_case audit-format FAIL "not the five keys: $(printf '%s\n' "$_bad" | head -n 3)"
		fi
	fi
	if [ "$_mode" = all ]; then
		LC_ALL=C sort -u "$_want.all" >"$_want"
	else
		grep ' Deny$' "$_want.all" | LC_ALL=C sort -u >"$_want"
	fi
	audit_tuples "$_log" >"$_got"
	_diff=$(set_diff "$_want" "$_got")
	echo "audit log of $_pol ([audit] decisions = \"$_mode\"):"
	cat "$_log"
	if [ -z "$_diff" ]; then
		bee_case audit-set PASS "$(wc -l <"$_want") distinct records, as expected for decisions = \"$_mode\""
	else
		bee_case audit-set FAIL "decisions = \"$_mode\": $_diff"
	fi
}

# ---- escape attempts ---------------------------------------------------------
#
# The escape suites (tools/vm/tests/70-escape.sh, 71-escape-*.sh): each
# attempt is a case that passes only when it was refused with an answer
# the script names, and that the script checked had no effect; each
# control (control-*) is an allowed counterpart that must succeed.
#
#   attempt NAME 1|0 DETAIL      one attempt: 1 blocked (PASS), 0 not (FAIL)
#   is WORD ALT...               1 when WORD is one of ALT, else 0
#   simple NAME WANT... -- OP... an attempt of one operation in the session
#                                that must answer one of WANT
#   control NAME WANT OP...      an allowed counterpart in the session
#   outside NAME WANT OP...      the same operation outside any session must
#                                answer WANT (so that a refusal inside is the
#                                session's, not a broken helper's)
#   escape_tally EXPECTED        BEE-ESCAPES attempts=N blocked=M and the
#                                case "tally": every attempt ran
#   alive PID                    0 when PID exists and is not a zombie
#   now_ms                       the uptime in milliseconds

attempts=0
blocked=0
open_list=""

attempt() {
	attempts=$((attempts + 1))
	if [ "$2" = 1 ]; then
		blocked=$((blocked + 1))
		bee_case "$1" PASS "blocked: $3"
	else
		open_list="$open_list $1"
		bee_case "$1" FAIL "NOT blocked: $3"
	fi
}

is() {
	_x=$1
	shift
	for _y in "$@"; do [ "$_x" = "$_y" ] && { echo 1; return; }; done
	echo 0
}

simple() {
	_n=$1
	shift
	_wants=""
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		_wants="$_wants $1"
		shift
	done
	[ $# -gt 0 ] && shift
	_got=$(ask "$@")
	# shellcheck disable=SC2086 # a list of words
	attempt "$_n" "$(is "$_got" $_wants)" "$*: '$_got' (want${_wants})"
}

control() {
	_n=$1
	_want=$2
	shift 2
	_got=$(ask "$@")
	[ "$_got" = "$_want" ] && _r=PASS || _r=FAIL
	bee_case "control-$_n" "$_r" "$*: '$_got' (want $_want)"
}

outside() {
	_n=$1
	_want=$2
	shift 2
	_got=$(bee-try "$@" </dev/null 2>/dev/null | head -n 1)
	[ "$_got" = "$_want" ] && _r=PASS || _r=FAIL
	bee_case "outside-$_n" "$_r" "outside any session: $*: '$_got' (want $_want)"
}

escape_tally() {
	echo "BEE-ESCAPES attempts=$attempts blocked=$blocked"
	if [ "$attempts" -eq "$1" ]; then
		bee_case tally PASS "BEE-ESCAPES attempts=$attempts blocked=$blocked; not blocked:${open_list:- none}"
	else
		bee_case tally FAIL "BEE-ESCAPES attempts=$attempts blocked=$blocked, but $1 attempts should have run; not blocked:${open_list:- none}"
	fi
}

now_ms() {   # milliseconds of uptime (busybox date has no %N)
	awk '{ printf "%d\n", $1 * 1000 }' /proc/uptime
}

alive() {
	[ -r "/proc/$1/stat" ] || return 1
	_st=$(sed 's/.*) \(.\).*/\1/' "/proc/$1/stat" 2>/dev/null)
	[ -n "$_st" ] && [ "$_st" != Z ] && [ "$_st" != X ]
}

# session_load SID: the pin folder of the session's pack load (its
# programs' links and maps, shared by the pack's sessions: loader/cache.c),
# from its registry record.
session_load() {
	sed -n 's/^ *"pack_load": "\(.*\)",\{0,1\}$/\1/p' "/run/bee/sessions/$1.json"
}

# escape_session_start: a session of the 71-escape-* suites' policy
# (escape-guard, SESSION_OPTS as set), whose tool /esc/bin/driver serves
# requests. Sets tpid (the tool's own pid answer), hpid (its pid here), cg
# (its cgroup) and sid, or fails the script with what bee-load said.
escape_session_start() {
	session_start /bee/packs/vm/escape-guard.bpfpack /esc/bin/driver serve
	tpid=$(ask pid)
	hpid=$(tool_pid /esc/bin/driver)
	cg=$(session_cgroup "${hpid:-0}")
	case $cg in
	*/bee-vm-escape-guard-*) ;;
	*) fail "the session did not start (tool '$tpid', cgroup '$cg'): $(tail -n 3 "$session_dir/err" | tr '\n' ' ')" ;;
	esac
	sid=${cg##*-}
}

# escape_tree: /esc as the 71-escape-* suites want it (a tmpfs of its own
# where there is none, so that ACLs work on every kernel). The tool runs as
# 65534:65534 (bee-load's default user when it runs as root): it owns
# /esc/ro and /esc/secret as a user owns its read-only files and its own
# secrets, so the file modes never stop it and what stops it is bee.
#   /esc/allowed       1777 root: the written tree (sticky, like /tmp)
#   /esc/allowed/own   65534: a file the tool may change in every way
#   /esc/ro/*          65534: read-only by the policy, the tool's by DAC
#   /esc/secret/*      65534, 0700/0600: denied by the policy
#   /esc/bin/driver    the tool (a copy of bee-try)
escape_tree() {
	mkdir -p /esc
	if ! grep -q ' /esc ' /proc/self/mounts; then
		mount -t tmpfs -o mode=0755 esc /esc || return 1
	fi
	rm -rf /esc/allowed /esc/ro /esc/secret /esc/bin
	mkdir -p /esc/allowed /esc/ro/dir /esc/secret/dir /esc/bin
	chmod 1777 /esc/allowed
	echo plain >/esc/allowed/plain
	echo own >/esc/allowed/own
	echo ownacl >/esc/allowed/ownacl
	for f in file victim acl dir/inner; do echo "keep-$f" >"/esc/ro/$f"; done
	echo "secret-key" >/esc/secret/key
	echo "secret-inner" >/esc/secret/dir/inner
	chmod 0700 /esc/secret /esc/secret/dir
	chmod 0600 /esc/secret/key /esc/secret/dir/inner
	chown 65534:65534 /esc/allowed/own /esc/allowed/ownacl
	chown -R 65534:65534 /esc/ro /esc/secret
	bee-try acl-set /esc/ro/acl >/dev/null || return 1
	bee-try acl-set /esc/allowed/ownacl >/dev/null || return 1
	cp /bin/bee-try /esc/bin/driver
}

# ---- the guest's network -----------------------------------------------------

# net_addrs ADDR...: add addresses to lo (/32 or /128), so that the example
# policies' endpoints (GitHub's ranges, private networks, cloud metadata)
# exist in the guest and a connect that a hook lets through really connects
net_addrs() {
	for _a in "$@"; do
		case $_a in
		*:*) ip -6 addr add "$_a/128" dev lo 2>/dev/null ;;
		*) ip addr add "$_a/32" dev lo 2>/dev/null ;;
		esac
		ip addr show dev lo | grep -q " ${_a}/" || echo "net_addrs: cannot add $_a to lo" >&2
	done
}

# listen_start ENDPOINT...: bee-listen in the background until it is READY
# (at most 5 s); listen_pid is its pid. Kill it with listen_stop.
listen_start() {
	_lo=$BEE_TMP/listen.$$.out
	bee-listen "$@" >"$_lo" 2>&1 &
	listen_pid=$!
	for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25; do
		grep -q READY "$_lo" 2>/dev/null && return 0
		sleep 0.2
	done
	echo "listen_start: bee-listen $* is not ready: $(cat "$_lo")" >&2
	return 1
}

listen_stop() {
	[ -n "${listen_pid:-}" ] && kill "$listen_pid" 2>/dev/null
	listen_pid=""
}
