# policies/subagent.toml end to end under the bpf-lsm backend, on its own
# (the nesting tests run it inside a parent session): what its parent
# grants and it does not is denied (git metadata, writing sources, cat,
# HTTPS), what it grants is allowed; the audit log ([audit] decisions =
# "all"); every operation again from outside while it runs.
# The tool is a copy of bee-try at ${HOME}/.cargo/bin/cargo.
# bee-timeout: 60
. /bee/lib.sh
trap '' PIPE
trap 'listen_stop' EXIT
listen_start 127.0.0.1:443 || fail "no listener for the network rows"

policy_suite subagent /home/dev/.cargo/bin/cargo "PATH HOME" <<'ROWS'
read-project        OK     OK  open /home/dev/src/app/README.md r      | FileSystem Read /home/dev/src/app/README.md Allow
read-git            EACCES OK  open /home/dev/src/app/.git/config r    | FileSystem Read /home/dev/src/app/.git/config Deny
read-gitconfig      EACCES OK  open /home/dev/.gitconfig r             | FileSystem Read /home/dev/.gitconfig Deny
read-ssh            EACCES OK  open /home/dev/.ssh/id_rsa r            | FileSystem Read /home/dev/.ssh/id_rsa Deny
write-target        OK     OK  open /home/dev/src/app/target/out.txt w | FileSystem Write /home/dev/src/app/target/out.txt Allow
# the session's mount namespace is read-only outside the write grants'
# directories: EROFS before file_open, so no record
write-source        EROFS  OK  open /home/dev/src/app/src/main.rs w
exec-rustc          OK     OK  run /home/dev/.cargo/bin/rustc pid      | Process Execute /home/dev/.cargo/bin/rustc Allow
exec-cat            EACCES OK  run /usr/bin/cat /home/dev/src/app/README.md | Process Execute /usr/bin/cat Deny
connect-https       EPERM  OK  connect 127.0.0.1:443                   | Network Connect 127.0.0.1:443 Deny
sendto-resolver     EPERM  OK  sendto 127.0.0.53:53                    | Network Connect 127.0.0.53:53 Deny
env-allowed         /bin   -   env PATH
env-not-allowed     UNSET  -   env TERM
env-set             true   -   env CARGO_NET_OFFLINE
ROWS
