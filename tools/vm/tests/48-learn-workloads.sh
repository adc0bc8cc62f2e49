# Learning real workloads under the bpf-lsm backend, as tools/check-learn
# does on the host under landlock (docs/writing-policies.md): git status,
# log and diff on a fresh repository; python3 -m unittest; make building a
# C file with gcc; curl against a loopback HTTP server (busybox httpd).
# The programs are the host's own, copied into the guest with the files
# they need (tools/vm/workloads, build-guest). For each: one `bee-load run
# --learn` under a policy that grants nothing, `beec learn` and `beec show`
# in the guest, then the enforcing run exits 0 and its audit log holds no
# FileSystem, Process or Network Deny; the control, the same run under the
# empty policy, fails.
# bee-guest: workloads
# bee-timeout: 600
. /bee/lib.sh
trap '' PIPE

# The guest's /usr/bin/git and /usr/bin/curl are bee-try for the other
# cases: the host's programs are bound over them in a mount namespace of
# this script's own, which ends with it.
if [ -z "${BEE_WL_NS:-}" ]; then
	BEE_WL_NS=1 exec unshare -m --propagation private sh "$0"
fi
[ -f /bee/host/shadowed ] ||
	fail "no host programs in the guest (build-guest copies them for a case with a bee-guest: workloads line)"
while read -r p; do
	mount --bind "/bee/host$p" "$p" || fail "cannot bind /bee/host$p over $p"
done </bee/host/shadowed

T=$BEE_TMP
H=$T/home
mkdir -p "$H"
chown 65534:65534 "$H"
HTTPD=
trap '[ -n "$HTTPD" ] && kill "$HTTPD" 2>/dev/null' EXIT

printf 'version = 1\nname = "nothing"\n' >"$T/nothing.toml"
beec "$T/nothing.toml" -o "$T/nothing.bpfpack" || fail "beec: the empty policy does not compile"

# the tool's own denials in a log: not the scrubbed environment (those of
# /proc are counted too: under bpf-lsm the hooks see the tool's procfs)
denials() {
	grep '"decision":"Deny"' "$1" | grep -v '"kind":"Environment"'
}

run() {   # run PACK LOGFLAG LOG CMD...: the workload in a bpf-lsm session
	_pack=$1 _flag=$2 _log=$3
	shift 3
	bee-load run --backend bpf-lsm --env HOME="$H" --env PATH=/usr/bin:/bin "$_flag" "$_log" "$_pack" -- "$@"
}

# what a failed learning run shows: the log's records but the libraries'
learn_diag() {
	grep -v '"resource":"/usr/' "$1" | tail -n 12
}

reset_workload() {
	case $1 in
	make) rm -f "$2/hello" "$2/hello.o" ;;
	curl) rm -f "$2/got.txt" ;;
	esac
}

# cycle NAME DIR CMD...: learn, beec learn, enforce, control
cycle() {
	name=$1 dir=$2
	shift 2
	chown -R 65534:65534 "$dir"
	rm -f "$T/$name.learn.jsonl"
	if ! run "$T/nothing.bpfpack" --learn "$T/$name.learn.jsonl" "$@" >"$T/$name.learn.out" 2>"$T/$name.learn.err"; then
		bee_case "$name-learn" FAIL "the learning run failed: $(tail -n 3 "$T/$name.learn.err")"
		learn_diag "$T/$name.learn.jsonl"
		return
	fi
	if grep -q 'LEARNING MODE' "$T/$name.learn.err" &&
		grep -q '"resource":"bee:learning:bpf-lsm"' "$T/$name.learn.jsonl"; then
		bee_case "$name-learn" PASS "learned under bpf-lsm: $(grep -c '"decision":"Deny"' "$T/$name.learn.jsonl") records"
	else
		bee_case "$name-learn" FAIL "no banner or no bee:learning:bpf-lsm record"
		return
	fi
	if ! beec learn -D HOME="$H" -D WORK="$dir" --name "$name" "$T/$name.learn.jsonl" \
		-o "$T/learned-$name.toml" 2>"$T/$name.beec.err"; then
		bee_case "$name-beec-learn" FAIL "$(head -n 3 "$T/$name.beec.err")"
		return
	fi
	if ! beec show -D HOME="$H" -D WORK="$dir" "$T/learned-$name.toml" >/dev/null 2>"$T/$name.show.err" ||
		! beec -D HOME="$H" -D WORK="$dir" "$T/learned-$name.toml" -o "$T/learned-$name.bpfpack" 2>"$T/$name.cc.err"; then
		bee_case "$name-beec-learn" FAIL "beec show or compile: $(cat "$T/$name.show.err" "$T/$name.cc.err" | head -n 3)"
		cat "$T/learned-$name.toml"
		return
	fi
	bee_case "$name-beec-learn" PASS "beec learn, beec show and beec: $(grep -c '^    "' "$T/learned-$name.toml") grants"
	reset_workload "$name" "$dir"
	rm -f "$T/$name.audit.jsonl"
	run "$T/learned-$name.bpfpack" --audit-log "$T/$name.audit.jsonl" "$@" >"$T/$name.out" 2>"$T/$name.err"
	st=$?
	if [ "$st" != 0 ]; then
		bee_case "$name-enforce" FAIL "exit $st: $(tail -n 3 "$T/$name.err") $(denials "$T/$name.audit.jsonl" | head -n 5)"
		cat "$T/learned-$name.toml"
	elif denials "$T/$name.audit.jsonl" >/dev/null; then
		bee_case "$name-enforce" FAIL "exit 0 but denials: $(denials "$T/$name.audit.jsonl" | head -n 5)"
	else
		bee_case "$name-enforce" PASS "the learned policy enforced: exit 0, no Deny"
	fi
	reset_workload "$name" "$dir"
	rm -f "$T/$name.control.jsonl"
	if run "$T/nothing.bpfpack" --audit-log "$T/$name.control.jsonl" "$@" >"$T/$name.control.out" 2>&1; then
		bee_case "$name-control" FAIL "the same run under the empty policy succeeded"
	else
		bee_case "$name-control" PASS "the empty policy refuses it ($(denials "$T/$name.control.jsonl" | wc -l) denials)"
	fi
}

# ---- complain mode covers the global hooks too: an O_TRUNC open of an
# existing file (path_truncate, bee_guard.bpf.h) is recorded and allowed
# while learning; enforced without a write grant it fails
printf 'version = 1\nname = "ro"\n[fs]\nread = ["/**"]\n[exec]\nallow = ["/**"]\n' >"$T/ro.toml"
beec "$T/ro.toml" -o "$T/ro.bpfpack" || fail "beec: the read-only policy does not compile"
mkdir -p "$T/tr"
echo old >"$T/tr/f"
chown -R 65534:65534 "$T/tr"
trunc='echo new >'"$T/tr/f"
rm -f "$T/tr.jsonl"
if run "$T/ro.bpfpack" --learn "$T/tr.jsonl" /bin/sh -c "$trunc" >/dev/null 2>&1 &&
	grep -q "\"kind\":\"FileSystem\",\"action\":\"Write\",\"resource\":\"$T/tr/f\",\"decision\":\"Deny\"" "$T/tr.jsonl"; then
	bee_case learn-truncate PASS "an O_TRUNC open of an ungranted file succeeds while learning, and is recorded"
else
	bee_case learn-truncate FAIL "learning refused the truncate or did not record it: $(grep "$T/tr/f" "$T/tr.jsonl" | head -n 2)"
fi
if run "$T/ro.bpfpack" --audit-log "$T/tr2.jsonl" /bin/sh -c "$trunc" >/dev/null 2>&1; then
	bee_case learn-truncate-control FAIL "enforced without a write grant, the truncate succeeded"
else
	bee_case learn-truncate-control PASS "enforced without a write grant, the truncate fails"
fi

# ---- git: status, log, diff on a fresh repository
W=$T/git
mkdir -p "$W"
G=/usr/bin/git
if ! { $G -C "$W" init -q repo && printf 'one\n' >"$W/repo/a.txt" &&
	$G -C "$W/repo" -c user.name=t -c user.email=t@t add a.txt &&
	$G -C "$W/repo" -c user.name=t -c user.email=t@t -c maintenance.auto=false commit -qm first &&
	printf 'two\n' >>"$W/repo/a.txt"; }; then
	bee_case git-setup FAIL "the host's git does not run in the guest"
fi
cycle git "$W" /bin/sh -c "cd '$W/repo' && git status && git log --oneline && git diff"

# ---- python3 -m unittest
W=$T/py
mkdir -p "$W"
cat >"$W/test_sum.py" <<'EOF'
import unittest


class T(unittest.TestCase):
    def test_sum(self):
        self.assertEqual(sum([1, 2, 3]), 6)


if __name__ == "__main__":
    unittest.main()
EOF
cycle python3 "$W" /bin/sh -c "cd '$W' && /usr/bin/python3 -m unittest -q"

# ---- make building a C file with gcc
W=$T/mk
mkdir -p "$W"
printf '#include <stdio.h>\nint main(void) { puts("hello"); return 0; }\n' >"$W/hello.c"
printf 'hello: hello.o\n\tgcc -o $@ $^\nhello.o: hello.c\n\tgcc -c -o $@ $<\n' >"$W/Makefile"
cycle make "$W" /bin/sh -c "cd '$W' && make -s && ./hello"

# ---- curl against a loopback HTTP server
W=$T/curl
mkdir -p "$W/www"
printf 'served\n' >"$W/www/index.txt"
PORT=8089
busybox httpd -f -p "127.0.0.1:$PORT" -h "$W/www" &
HTTPD=$!
for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
	wget -q -O /dev/null "http://127.0.0.1:$PORT/index.txt" 2>/dev/null && break
	sleep 0.2
done
cycle curl "$W" /bin/sh -c "curl -sf -o '$W/got.txt' http://127.0.0.1:$PORT/index.txt && grep -q served '$W/got.txt'"
if grep -q "\"127.0.0.1:$PORT\"" "$T/learned-curl.toml" 2>/dev/null; then
	bee_case curl-connect PASS "the learned policy connects to 127.0.0.1:$PORT"
else
	bee_case curl-connect FAIL "the learned policy has no connect to 127.0.0.1:$PORT"
fi
