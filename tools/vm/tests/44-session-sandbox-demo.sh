# policies/sandbox-demo.toml end to end under the bpf-lsm backend: the
# project readable, only out/ writable, the shell and coreutils at their
# paths but not the same program elsewhere, one local service's ports (tcp
# only); the audit log ([audit] decisions = "deny"); every operation again
# from outside while it runs.
# The tool is a copy of bee-try at ${PROJECT}/bin/tool.
# bee-timeout: 60
. /bee/lib.sh
trap '' PIPE
trap 'listen_stop' EXIT
listen_start 127.0.0.1:47000 127.0.0.1:47010 || fail "no listener for the network rows"

policy_suite sandbox-demo /home/dev/src/app/bin/tool "PATH HOME TERM" <<'ROWS'
read-project        OK     OK  open /home/dev/src/app/README.md r
read-ssh            EACCES OK  open /home/dev/.ssh/id_rsa r            | FileSystem Read /home/dev/.ssh/id_rsa Deny
read-not-granted    EACCES OK  open /home/dev/notes.txt r              | FileSystem Read /home/dev/notes.txt Deny
write-out           OK     OK  open /home/dev/src/app/out/result.txt w
# the session's mount namespace is read-only outside the write grants'
# directories: EROFS before file_open, so no record
write-project       EROFS  OK  open /home/dev/src/app/README.md w
exec-true           OK     OK  run /usr/bin/true
exec-true-elsewhere EACCES OK  run /usr/local/bin/true                 | Process Execute /usr/local/bin/true Deny
exec-git            EACCES OK  run /usr/bin/git pid                    | Process Execute /usr/bin/git Deny
connect-service     OK     OK  connect 127.0.0.1:47000
connect-other-port  EPERM  OK  connect 127.0.0.1:47010                 | Network Connect 127.0.0.1:47010 Deny
sendto-service-udp  EPERM  OK  sendto 127.0.0.1:47000                  | Network Connect 127.0.0.1:47000 Deny
env-allowed         dumb   -   env TERM
env-not-allowed     UNSET  -   env BEE_SECRET
env-set             1      -   env DEMO_SANDBOX
ROWS
