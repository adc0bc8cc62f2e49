# policies/cargo-test.toml end to end under the bpf-lsm backend: reads,
# writes, execs, the denials of each class with their errno, the audit log
# ([audit] decisions = "deny": the denials only), and every operation again
# from outside the session while it runs, which nothing may affect.
# The tool is a copy of bee-try at ${HOME}/.cargo/bin/cargo.
# bee-timeout: 60
. /bee/lib.sh
trap '' PIPE
trap 'listen_stop' EXIT
listen_start 127.0.0.1:47300 || fail "no listener for the network rows"

policy_suite cargo-test /home/dev/.cargo/bin/cargo "PATH HOME TERM" <<'ROWS'
read-project        OK     OK  open /home/dev/src/app/src/main.rs r
read-cargo-config   OK     OK  open /home/dev/.cargo/config.toml r
read-credentials    EACCES OK  open /home/dev/.cargo/credentials.toml r | FileSystem Read /home/dev/.cargo/credentials.toml Deny
read-dotenv         EACCES OK  open /home/dev/src/app/.env r             | FileSystem Read /home/dev/src/app/.env Deny
read-pem            EACCES OK  open /home/dev/src/app/certs/server.pem r | FileSystem Read /home/dev/src/app/certs/server.pem Deny
read-not-granted    EACCES OK  open /home/dev/notes.txt r                | FileSystem Read /home/dev/notes.txt Deny
write-target        OK     OK  open /home/dev/src/app/target/out.txt w
# the session's mount namespace is read-only outside the write grants'
# directories: EROFS before file_open, so no record
write-source        EROFS  OK  open /home/dev/src/app/src/main.rs w
exec-toolchain      OK     OK  run /home/dev/.cargo/bin/rustc pid        | Process Execute /home/dev/.cargo/bin/rustc Allow
exec-test-binary    OK     OK  run /home/dev/src/app/target/debug/deps/app-test pid | Process Execute /home/dev/src/app/target/debug/deps/app-test Allow
exec-not-granted    EACCES OK  run /usr/local/bin/true                   | Process Execute /usr/local/bin/true Deny
exec-cat            EACCES OK  run /usr/bin/cat /home/dev/src/app/README.md | Process Execute /usr/bin/cat Deny
connect-no-net      EPERM  OK  connect 127.0.0.1:47300                   | Network Connect 127.0.0.1:47300 Deny
sendto-no-net       EPERM  OK  sendto 127.0.0.1:47300                    | Network Connect 127.0.0.1:47300 Deny
bind-no-net         EPERM  OK  bind 127.0.0.1:47301                      | Network Listen 127.0.0.1:47301 Deny
env-allowed         /bin   -   env PATH
env-allowed-term    dumb   -   env TERM
env-not-allowed     UNSET  -   env BEE_SECRET
env-set             true   -   env CARGO_NET_OFFLINE
ROWS
