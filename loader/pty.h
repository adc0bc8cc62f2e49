/* SPDX-License-Identifier: GPL-2.0-only */
/* pty.h: a fresh pseudo-terminal for an interactive tool, relayed to the
 * user's terminal (pty.c; docs/bee-load.md "Terminals"). */
#ifndef BEE_PTY_H
#define BEE_PTY_H

#include "libbee.h"

#include <stdbool.h>
#include <sys/types.h>
#include <termios.h>

struct bee_pty {
	int master, slave;          /* -1 when no pty is in use */
	int in, out;                /* the user's side: what is read, where output goes */
	struct termios saved;       /* the user's terminal as it was */
	bool raw;                   /* saved is to be restored */
	pid_t relay;                /* the relay process */
	int ctl;                    /* closed: the relay drains and ends */
};

/* A pty when stdin is a terminal, or always with force (-t). Fills
 * stdio[3] with what the tool gets: the pty's slave where the user's
 * descriptor is a terminal (stdin always with force), the user's own
 * otherwise. p->master < 0 when no pty is wanted. Stage LAUNCH. */
int bee_pty_open(struct bee_pty *p, bool force, int stdio[3], struct bee_error *e);
/* The user's terminal in raw mode, and the relay started. */
int bee_pty_relay_start(struct bee_pty *p, struct bee_error *e);
/* After the tool: the relay drains what the tool wrote and ends, the
 * terminal is restored. Safe on a p that bee_pty_open left unused. */
void bee_pty_close(struct bee_pty *p);

#endif
