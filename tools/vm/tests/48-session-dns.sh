# Egress by host name under both backends: a policy of names, the tool's
# own resolver (glibc's getaddrinfo; /etc/resolv.conf names a server that
# does not exist, 192.0.2.53: only the session's redirect reaches a
# server), against bee-dns-server on loopback. An allowed name connects,
# its address dialled before is refused; a wildcard's name connects; a
# disallowed name resolves and is refused; a CNAME is admitted under the
# asked name; after the TTL (1 s, floor 1 s) the address is refused
# again; a query over tcp (RES_OPTIONS=use-vc) works; the audit log names
# the hosts and records the query outside the policy (Resolve, Deny).
# bee-timeout: 120
. /bee/lib.sh
trap 'listen_stop; [ -n "${dns_pid:-}" ] && kill "$dns_pid" 2>/dev/null' EXIT
T=$BEE_TMP/dns
mkdir -p "$T"
chmod 755 "$T"
net_addrs 127.0.0.2 127.0.0.3 127.0.0.4 127.0.0.5 127.0.0.6 127.0.0.7
P=47400
listen_start 127.0.0.2:$P 127.0.0.3:$P 127.0.0.4:$P 127.0.0.5:$P 127.0.0.6:$P 127.0.0.7:$P ||
	fail "no listeners"
bee-dns-server "$T/port" "$T/queries" \
	allowed.bee.test=A:127.0.0.2:300 x.wild.bee.test=A:127.0.0.3:300 denied.bee.test=A:127.0.0.4:300 \
	short.bee.test=A:127.0.0.5:1 alias.bee.test=CNAME:cdn.elsewhere.test:300 \
	cdn.elsewhere.test=A:127.0.0.6:300 tcp.bee.test=A:127.0.0.7:300 &
dns_pid=$!
for _ in 1 2 3 4 5 6 7 8 9 10; do
	[ -s "$T/port" ] && break
	sleep 0.2
done
DP=$(cat "$T/port" 2>/dev/null)
[ -n "$DP" ] || fail "bee-dns-server did not start"
printf 'nameserver 192.0.2.53\n' >/etc/resolv.conf
cp /bin/dyn-resolve "$T/dyn-resolve"
chmod 755 "$T/dyn-resolve"
cat >"$T/dns.toml" <<EOT
version = 1
name = "vm-dns"
[fs]
read = ["/etc/**", "/usr/lib/**", "/usr/lib64/**", "/lib/**", "/lib64/**", "$T/dyn-resolve"]
[exec]
allow = ["$T/dyn-resolve", "/usr/lib/**", "/usr/lib64/**", "/lib/**", "/lib64/**"]
[net]
connect = ["allowed.bee.test:$P", "*.wild.bee.test:$P", "short.bee.test:$P", "alias.bee.test:$P", "tcp.bee.test:$P"]
[env]
allow = ["RES_OPTIONS"]
[audit]
decisions = "all"
EOT
beec "$T/dns.toml" -o "$T/dns.bpfpack" || fail "beec refused the policy"

for backend in bpf-lsm landlock; do
	log=$T/$backend.jsonl
	# 6.1's Landlock (ABI 2) lacks rights bee asks of it: named, as a user would
	weaker=
	[ "$backend" = landlock ] && weaker="--allow-weaker truncate --allow-weaker ioctl-dev --allow-weaker scope"
	rm -f "$log"
	R() {
		# shellcheck disable=SC2086 # $weaker is a list of words
		env -i PATH=/bin RES_OPTIONS="${RES:-}" bee-load run --quiet --backend "$backend" $weaker --audit-log "$log" \
			--dns-upstream "127.0.0.1:$DP" --dns-ttl-floor 1 "$T/dns.bpfpack" -- "$T/dyn-resolve" "$@" 2>&1
	}
	check() {  # SUB WANT GOT
		if [ "$3" = "$2" ]; then
			bee_case "$backend/$1" PASS "$3"
		else
			bee_case "$backend/$1" FAIL "got '$3', expected '$2'"
		fi
	}
	check direct-before "127.0.0.2 EPERM" "$(R -a 127.0.0.2 $P)"
	check allowed "127.0.0.2 ok" "$(R allowed.bee.test $P)"
	check wildcard "127.0.0.3 ok" "$(R x.wild.bee.test $P)"
	check denied "127.0.0.4 EPERM" "$(R denied.bee.test $P)"
	check cname "127.0.0.6 ok" "$(R alias.bee.test $P)"
	check ttl "127.0.0.5 ok EPERM" "$(R short.bee.test $P 3)"
	check tcp "127.0.0.7 ok" "$(RES=use-vc R tcp.bee.test $P)"
	if grep -q "^tcp tcp.bee.test A" "$T/queries"; then
		bee_case "$backend/tcp-seen" PASS "the server answered over tcp"
	else
		bee_case "$backend/tcp-seen" FAIL "no tcp query: $(tr '\n' ';' <"$T/queries")"
	fi
	: >"$T/queries"
	if grep -q "\"resource\":\"allowed.bee.test:$P\",\"decision\":\"Allow\"" "$log" &&
		grep -q '"action":"Resolve","resource":"denied.bee.test","decision":"Deny"' "$log" &&
		grep -q "\"resource\":\"127.0.0.4:$P\",\"decision\":\"Deny\"" "$log"; then
		bee_case "$backend/audit" PASS "hosts named, the outside query recorded"
	else
		bee_case "$backend/audit" FAIL "$(grep Network "$log" | tr '\n' ' ')"
	fi
done
