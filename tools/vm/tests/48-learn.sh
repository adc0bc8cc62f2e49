# Learning under the bpf-lsm backend (docs/writing-policies.md): one
# `bee-load run --learn` of a tool that reads a project file, a fake SSH
# key and connects to 127.0.0.1:443, under a policy that grants none of
# it: every operation succeeds (complain mode), the log says the session
# learns and holds the hooks' records (source bpf), the network one from
# the cgroup programs. `beec learn --base` writes the policy, which
# compiles; enforced, the project read and the connect work with no Deny,
# the key stays unreadable (EACCES, beec query Deny). A session of the
# cargo-test example policy writes at most 3 Environment records.
# bee-timeout: 120
. /bee/lib.sh
trap '' PIPE
trap 'listen_stop' EXIT
listen_start 127.0.0.1:443 || fail "no listener for the connect"
chown -R 65534:65534 /home/dev

ops='open /home/dev/src/app/README.md r
open /home/dev/.ssh/id_rsa r
connect 127.0.0.1:443'
base=/bee/policies/vm/learn.toml
log=$BEE_TMP/learn.jsonl
rm -f "$log"
got=$(printf '%s\n' "$ops" | bee-load run --learn "$log" /bee/packs/vm/learn.bpfpack -- /usr/bin/git serve \
	2>"$BEE_TMP/learn.err" | tr '\n' ' ')
if [ "$got" = "OK OK OK " ]; then
	bee_case learn-allows PASS "nothing denied while learning: $got"
else
	bee_case learn-allows FAIL "answers '$got': $(tail -n 2 "$BEE_TMP/learn.err" | tr '\n' ' ')"
fi
grep -q 'LEARNING MODE' "$BEE_TMP/learn.err" && bee_case learn-banner PASS "the banner is on stderr" ||
	bee_case learn-banner FAIL "no banner"
grep -q '"resource":"bee:learning:bpf-lsm"' "$log" && bee_case learn-record PASS "the log says the session learns" ||
	bee_case learn-record FAIL "no bee:learning:bpf-lsm record"
for r in '"FileSystem","action":"Read","resource":"/home/dev/src/app/README.md"' \
	'"Network","action":"Connect","resource":"127.0.0.1:443"'; do
	if grep -q "\"kind\":$r,\"decision\":\"Deny\"" "$log" && grep "\"kind\":$r" "$log" | grep -q '"source":"bpf"'; then
		bee_case "learn-seen-$(echo "$r" | cut -d'"' -f2)" PASS "recorded by the hooks: $r"
	else
		bee_case "learn-seen-$(echo "$r" | cut -d'"' -f2)" FAIL "not in the log: $r"
		cat "$log"
	fi
done

new=$BEE_TMP/learned.toml
if beec learn --base "$base" -D HOME=/home/dev "$log" -o "$new" 2>"$BEE_TMP/beec.err" &&
	beec -D HOME=/home/dev "$new" -o "$BEE_TMP/learned.bpfpack" 2>>"$BEE_TMP/beec.err"; then
	bee_case beec-learn PASS "beec learn --base wrote a policy that compiles ($(grep -c '^    "' "$new") grants)"
else
	bee_case beec-learn FAIL "$(head -n 3 "$BEE_TMP/beec.err" | tr '\n' ' ')"
	cat "$new" 2>/dev/null
fi
grep -q 'looks like a secret' "$BEE_TMP/beec.err" && bee_case secret-warned PASS "beec learn warned of the key" ||
	bee_case secret-warned FAIL "no warning for /home/dev/.ssh/id_rsa"
if beec query -D HOME=/home/dev "$new" fs read /home/dev/.ssh/id_rsa >/dev/null; then
	bee_case secret-query FAIL "beec query allows the key"
else
	bee_case secret-query PASS "beec query fs read /home/dev/.ssh/id_rsa: Deny"
fi

elog=$BEE_TMP/enforce.jsonl
rm -f "$elog"
got=$(printf '%s\n' "$ops" | bee-load run --audit-log "$elog" "$BEE_TMP/learned.bpfpack" -- /usr/bin/git serve \
	2>"$BEE_TMP/enforce.err" | tr '\n' ' ')
if [ "$got" = "OK EACCES OK " ]; then
	bee_case enforce PASS "the learned policy: project read OK, key EACCES, connect OK"
else
	bee_case enforce FAIL "answers '$got' (want OK EACCES OK): $(tail -n 2 "$BEE_TMP/enforce.err" | tr '\n' ' ')"
fi
others=$(grep '"decision":"Deny"' "$elog" | grep -v '"kind":"Environment"' | grep -v '/home/dev/.ssh/id_rsa')
if [ -z "$others" ]; then
	bee_case enforce-no-deny PASS "no Deny but the key's"
else
	bee_case enforce-no-deny FAIL "denials: $(printf '%s\n' "$others" | head -n 3 | tr '\n' ' ')"
fi

# the environment's scrub: one summary record, never a line per name
clog=$BEE_TMP/cargo-env.jsonl
rm -f "$clog"
env A_SECRET=1 B_TOKEN=2 C_KEY=3 D_PASS=4 bee-load run --audit-log "$clog" /bee/packs/cargo-test.bpfpack -- \
	/home/dev/.cargo/bin/cargo env HOME >/dev/null 2>&1
n=$(grep -c '"kind":"Environment"' "$clog")
if [ "$n" -ge 1 ] && [ "$n" -le 3 ] && grep '"kind":"Environment"' "$clog" | grep -q 'A_SECRET.*"count":'; then
	bee_case cargo-env PASS "a session of cargo-test: $n Environment record(s), names counted"
else
	bee_case cargo-env FAIL "$n Environment records: $(grep -m 2 Environment "$clog" | cut -c1-200)"
fi
