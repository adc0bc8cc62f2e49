# policies/fetcher.toml end to end under the bpf-lsm backend: GitHub's
# ranges and the local resolver are reachable (the guest gives lo an
# address in each, with a listener), everything else and the cloud
# metadata service are not (EPERM, tcp and udp, IPv4 and IPv6); the few
# files it may read and write; the audit log ([audit] decisions = "all":
# every decision); every operation again from outside while it runs.
# The tool is a copy of bee-try at /usr/bin/curl.
# bee-timeout: 60
. /bee/lib.sh
trap '' PIPE
trap 'listen_stop' EXIT
net_addrs 140.82.112.1 169.254.169.254 127.0.0.53 2606:50c0::1 fd00:ec2::254
listen_start 140.82.112.1:443 140.82.112.1:80 127.0.0.53:53 169.254.169.254:80 \
	'[2606:50c0::1]:443' '[fd00:ec2::254]:443' || fail "no listener for the network rows"

policy_suite fetcher /usr/bin/curl "PATH HOME" <<'ROWS'
read-hosts          OK     OK  open /etc/hosts r                       | FileSystem Read /etc/hosts Allow
read-project        EACCES OK  open /home/dev/src/app/README.md r      | FileSystem Read /home/dev/src/app/README.md Deny
write-downloads     OK     OK  open /home/dev/src/app/downloads/asset.tar w | FileSystem Write /home/dev/src/app/downloads/asset.tar Allow
# root's file, mode 0644: the tool (65534) is refused by the mode before
# file_open, so no record
write-hosts         EACCES OK  open /etc/hosts w
exec-curl           OK     OK  run /usr/bin/curl pid                   | Process Execute /usr/bin/curl Allow
exec-cat            EACCES OK  run /usr/bin/cat /etc/hosts             | Process Execute /usr/bin/cat Deny
connect-github      OK     OK  connect 140.82.112.1:443                | Network Connect 140.82.112.1:443 Allow
connect-github-80   EPERM  OK  connect 140.82.112.1:80                 | Network Connect 140.82.112.1:80 Deny
connect-github-v6   OK     OK  connect [2606:50c0::1]:443              | Network Connect [2606:50c0::1]:443 Allow
connect-resolver    OK     OK  connect 127.0.0.53:53                   | Network Connect 127.0.0.53:53 Allow
sendto-resolver     OK     OK  sendto 127.0.0.53:53                    | Network Connect 127.0.0.53:53 Allow
sendto-other-port   EPERM  OK  sendto 127.0.0.53:54                    | Network Connect 127.0.0.53:54 Deny
connect-metadata    EPERM  OK  connect 169.254.169.254:80              | Network Connect 169.254.169.254:80 Deny
sendto-metadata     EPERM  OK  sendto 169.254.169.254:53               | Network Connect 169.254.169.254:53 Deny
connect-metadata-v6 EPERM  OK  connect [fd00:ec2::254]:443             | Network Connect [fd00:ec2::254]:443 Deny
env-allowed         /bin   -   env PATH
env-not-allowed     UNSET  -   env TERM
env-secret          UNSET  -   env BEE_SECRET
env-set             /etc/ssl/certs - env SSL_CERT_DIR
ROWS
