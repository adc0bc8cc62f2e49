# policies/parent.toml end to end under the bpf-lsm backend: the project is
# readable and writable, secrets and git hooks are not (a deny beats a
# grant), HTTPS anywhere but private networks and cloud metadata, DNS to
# the stub resolver; the audit log ([audit] decisions = "all"); every
# operation again from outside while it runs.
# The tool is a copy of bee-try at ${HOME}/.cargo/bin/cargo.
# bee-timeout: 60
. /bee/lib.sh
trap '' PIPE
trap 'listen_stop' EXIT
net_addrs 10.0.0.1 169.254.169.254 fc00::1
listen_start 127.0.0.1:443 '[::1]:443' 127.0.0.1:8080 10.0.0.1:443 '[fc00::1]:443' 169.254.169.254:443 ||
	fail "no listener for the network rows"

policy_suite parent /home/dev/.cargo/bin/cargo "PATH HOME TERM" <<'ROWS'
read-project        OK     OK  open /home/dev/src/app/README.md r      | FileSystem Read /home/dev/src/app/README.md Allow
read-gitconfig      OK     OK  open /home/dev/.gitconfig r             | FileSystem Read /home/dev/.gitconfig Allow
read-ssh            EACCES OK  open /home/dev/.ssh/id_rsa r            | FileSystem Read /home/dev/.ssh/id_rsa Deny
read-dotenv         EACCES OK  open /home/dev/src/app/.env r           | FileSystem Read /home/dev/src/app/.env Deny
read-not-granted    EACCES OK  open /home/dev/notes.txt r              | FileSystem Read /home/dev/notes.txt Deny
read-passwd         OK     OK  open /etc/passwd r                      | FileSystem Read /etc/passwd Allow
# root's file, mode 0644: the tool (65534) is refused by the mode before
# file_open, so no record
write-passwd        EACCES OK  open /etc/passwd w
write-project       OK     OK  open /home/dev/src/app/src/main.rs w    | FileSystem Write /home/dev/src/app/src/main.rs Allow
write-git-config    OK     OK  open /home/dev/src/app/.git/config w    | FileSystem Write /home/dev/src/app/.git/config Allow
write-git-hook      EACCES OK  open /home/dev/src/app/.git/hooks/pre-commit w | FileSystem Write /home/dev/src/app/.git/hooks/pre-commit Deny
exec-cat            OK     OK  run /usr/bin/cat /home/dev/src/app/README.md | Process Execute /usr/bin/cat Allow | FileSystem Read /home/dev/src/app/README.md Allow
exec-not-granted    EACCES OK  run /usr/local/bin/true                 | Process Execute /usr/local/bin/true Deny
connect-https       OK     OK  connect 127.0.0.1:443                   | Network Connect 127.0.0.1:443 Allow
connect-https-v6    OK     OK  connect [::1]:443                       | Network Connect [::1]:443 Allow
connect-not-https   EPERM  OK  connect 127.0.0.1:8080                  | Network Connect 127.0.0.1:8080 Deny
connect-private     EPERM  OK  connect 10.0.0.1:443                    | Network Connect 10.0.0.1:443 Deny
connect-private-v6  EPERM  OK  connect [fc00::1]:443                   | Network Connect [fc00::1]:443 Deny
connect-metadata    EPERM  OK  connect 169.254.169.254:443             | Network Connect 169.254.169.254:443 Deny
sendto-resolver     OK     OK  sendto 127.0.0.53:53                    | Network Connect 127.0.0.53:53 Allow
sendto-other        EPERM  OK  sendto 127.0.0.1:8080                   | Network Connect 127.0.0.1:8080 Deny
env-allowed         dumb   -   env TERM
env-not-allowed     UNSET  -   env BEE_SECRET
env-set             0      -   env GIT_TERMINAL_PROMPT
ROWS
