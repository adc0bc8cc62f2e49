/* SPDX-License-Identifier: GPL-2.0-only */
/* pty.c: the terminal relay of exec and run (docs/bee-load.md "Terminals").
 *
 * The tool never gets the user's terminal: it gets the slave of a fresh
 * pty, which becomes the controlling terminal of its own session (the
 * launcher's setsid and TIOCSCTTY, launch.c), so a shell has job control
 * and Ctrl-C, Ctrl-Z and fg act on its foreground job, and TIOCSTI or any
 * other ioctl reaches only that pty. bee-load keeps the master in a relay
 * process of its own (systemd's ptyfwd.c does the same in one loop):
 *
 *   user's terminal (raw) ── relay ── master ═ slave ── tool
 *
 * The relay copies both ways, follows SIGWINCH with the window size, and
 * restores the terminal when it ends: at the tool's end (bee-load closes
 * the control pipe), when bee-load dies (the pipe's EOF all the same) or on
 * SIGHUP and SIGTERM. bee-load restores it too, for a relay that was
 * killed.
 */
#include "pty.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DRAIN_MS 300

static int pty_fail(struct bee_error *e, int err, const char *what)
{
	if (e) {
		e->stage = BEE_STAGE_LAUNCH;
		e->err = err;
		snprintf(e->msg, sizeof(e->msg), "launch: terminal: %s: %s", what, strerror(-err));
	}
	return err;
}

int bee_pty_open(struct bee_pty *p, bool force, int stdio[3], struct bee_error *e)
{
	*p = (struct bee_pty){ .master = -1, .slave = -1, .in = 0, .out = -1, .relay = -1, .ctl = -1 };
	for (int i = 0; i < 3; i++)
		stdio[i] = i;
	bool tty_in = isatty(0);
	if (!tty_in && !force)
		return 0;
	p->master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (p->master < 0 || grantpt(p->master) < 0 || unlockpt(p->master) < 0)
		return pty_fail(e, -errno, "posix_openpt");
	char name[128];
	if (ptsname_r(p->master, name, sizeof(name)) != 0)
		return pty_fail(e, -errno, "ptsname");
	p->slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (p->slave < 0)
		return pty_fail(e, -errno, name);
	/* the user's settings and size, so the tool sees the terminal it runs in */
	struct termios t;
	struct winsize ws;
	if (tty_in && tcgetattr(0, &t) == 0)
		tcsetattr(p->slave, TCSANOW, &t);
	if (tty_in && ioctl(0, TIOCGWINSZ, &ws) == 0)
		ioctl(p->master, TIOCSWINSZ, &ws);
	/* output goes where the user's terminal is; a redirected one stays */
	stdio[0] = p->slave;
	for (int i = 1; i < 3; i++)
		if (isatty(i) || (force && !tty_in && i == 1))
			stdio[i] = p->slave;
	p->out = isatty(1) ? 1 : isatty(2) ? 2 : tty_in ? -1 : 1;
	if (p->out < 0 && (p->out = open("/dev/tty", O_WRONLY | O_NOCTTY | O_CLOEXEC)) < 0)
		p->out = 2;
	return 0;
}

static void copy_winsize(const struct bee_pty *p)
{
	struct winsize ws;
	if (isatty(p->in) && ioctl(p->in, TIOCGWINSZ, &ws) == 0)
		ioctl(p->master, TIOCSWINSZ, &ws);
}

static bool write_all(int fd, const char *buf, size_t n)
{
	while (n) {
		ssize_t w = write(fd, buf, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		buf += w;
		n -= (size_t)w;
	}
	return true;
}

static int64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

__attribute__((noreturn))
static void relay_main(struct bee_pty *p, int ctl)
{
	sigset_t sigs;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGWINCH);
	sigaddset(&sigs, SIGHUP);
	sigaddset(&sigs, SIGTERM);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	signal(SIGTSTP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	int sfd = signalfd(-1, &sigs, SFD_CLOEXEC | SFD_NONBLOCK);
	char buf[16384];
	bool in_open = true, finishing = false;
	int64_t deadline = 0;
	for (;;) {
		struct pollfd f[4] = {
			{ .fd = p->master, .events = POLLIN },
			{ .fd = in_open && !finishing ? p->in : -1, .events = POLLIN },
			{ .fd = finishing ? -1 : ctl, .events = POLLIN },
			{ .fd = sfd, .events = POLLIN },
		};
		int timeout = finishing ? (int)(deadline - mono_ms()) : -1;
		if (finishing && timeout <= 0)
			break;
		int n = poll(f, 4, timeout);
		if (n < 0 && errno != EINTR)
			break;
		if (n == 0 && finishing)
			break;
		struct signalfd_siginfo si;
		bool quit = false;
		while (sfd >= 0 && read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
			if (si.ssi_signo == SIGWINCH)
				copy_winsize(p);
			else
				quit = true;
		}
		if (quit)
			break;
		if (f[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			ssize_t r = read(p->master, buf, sizeof(buf));
			if (r <= 0 && !(r < 0 && errno == EINTR))
				break;   /* EIO: no slave left open */
			if (r > 0 && !write_all(p->out, buf, (size_t)r))
				break;
		}
		if (f[1].revents & (POLLIN | POLLHUP | POLLERR)) {
			ssize_t r = read(p->in, buf, sizeof(buf));
			if (r > 0) {
				write_all(p->master, buf, (size_t)r);
			} else if (!(r < 0 && errno == EINTR)) {
				/* the user's input ended (a pipe under -t): end of file
				 * for the tool, as a terminal says it */
				in_open = false;
				char eof = 4;
				write_all(p->master, &eof, 1);
			}
		}
		if (f[2].revents) {
			/* bee-load is done with the tool (or died): what the tool
			 * wrote last is still in the pty */
			finishing = true;
			deadline = mono_ms() + DRAIN_MS;
		}
	}
	if (p->raw)
		tcsetattr(p->in, TCSADRAIN, &p->saved);
	_exit(0);
}

int bee_pty_relay_start(struct bee_pty *p, struct bee_error *e)
{
	int c[2];
	if (p->master < 0)
		return 0;
	if (isatty(p->in) && tcgetattr(p->in, &p->saved) == 0) {
		struct termios raw = p->saved;
		cfmakeraw(&raw);
		if (tcsetattr(p->in, TCSADRAIN, &raw) < 0)
			return pty_fail(e, -errno, "raw mode");
		p->raw = true;
	}
	if (pipe2(c, O_CLOEXEC) < 0)
		return pty_fail(e, -errno, "pipe");
	p->relay = fork();
	if (p->relay < 0) {
		int err = -errno;
		close(c[0]);
		close(c[1]);
		return pty_fail(e, err, "fork");
	}
	if (p->relay == 0) {
		close(c[1]);
		close(p->slave);
		relay_main(p, c[0]);
	}
	close(c[0]);
	p->ctl = c[1];
	return 0;
}

void bee_pty_close(struct bee_pty *p)
{
	if (p->slave >= 0)
		close(p->slave);
	p->slave = -1;
	if (p->ctl >= 0)
		close(p->ctl);
	p->ctl = -1;
	if (p->relay > 0) {
		while (waitpid(p->relay, NULL, 0) < 0 && errno == EINTR)
			;
		p->relay = -1;
	}
	if (p->master >= 0)
		close(p->master);
	p->master = -1;
	if (p->out > 2)
		close(p->out);
	p->out = -1;
	if (p->raw)
		tcsetattr(p->in, TCSADRAIN, &p->saved);
	p->raw = false;
}
