/* SPDX-License-Identifier: GPL-2.0-only */
/* exec_floor: execs its arguments and does nothing else. Linked
 * statically, it is the cheapest launcher a command can go through when
 * the launcher is a process of its own (as `bee-load exec` is): `make
 * bench` times `exec_floor /bin/true` against bare `/bin/true` to show
 * what one more process start costs on the machine it runs on.
 *
 *   exec_floor CMD [ARG...]      CMD is a path (no PATH search) */
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	execv(argv[1], argv + 1);
	return 127;
}
