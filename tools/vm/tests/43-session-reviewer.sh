# policies/reviewer.toml end to end under the bpf-lsm backend: read-only
# (nothing is writable, not even /dev/null), secrets unreadable, git and
# text tools runnable, no network; the audit log ([audit] decisions =
# "deny"); every operation again from outside while it runs.
# The tool is a copy of bee-try at /usr/bin/git.
# bee-timeout: 60
. /bee/lib.sh
trap '' PIPE
trap 'listen_stop' EXIT
listen_start 127.0.0.1:443 || fail "no listener for the network rows"

policy_suite reviewer /usr/bin/git "PATH HOME TERM" <<'ROWS'
read-project        OK     OK  open /home/dev/src/app/README.md r
read-gitconfig      OK     OK  open /home/dev/.gitconfig r
read-dotenv         EACCES OK  open /home/dev/src/app/.env r           | FileSystem Read /home/dev/src/app/.env Deny
read-pem            EACCES OK  open /home/dev/src/app/certs/server.pem r | FileSystem Read /home/dev/src/app/certs/server.pem Deny
read-ssh-key        EACCES OK  open /home/dev/.ssh/id_rsa r            | FileSystem Read /home/dev/.ssh/id_rsa Deny
read-dev-null       OK     OK  open /dev/null r
write-dev-null      EACCES OK  open /dev/null w                        | FileSystem Write /dev/null Deny
# the session's mount namespace is read-only outside the write grants'
# directories: EROFS before file_open, so no record
write-project       EROFS  OK  open /home/dev/src/app/README.md w
truncate-open       EROFS  OK  open /home/dev/src/app/src/main.rs wt
exec-cat            OK     OK  run /usr/bin/cat /home/dev/src/app/README.md | Process Execute /usr/bin/cat Allow | FileSystem Read /home/dev/src/app/README.md Allow
exec-sh             EACCES OK  run /usr/bin/sh -c true                 | Process Execute /usr/bin/sh Deny
connect-no-net      EPERM  OK  connect 127.0.0.1:443                   | Network Connect 127.0.0.1:443 Deny
env-allowed         dumb   -   env TERM
env-not-allowed     UNSET  -   env BEE_SECRET
env-set             cat    -   env GIT_PAGER
ROWS
