/* SPDX-License-Identifier: GPL-2.0-only */
/* dyn-hello: a dynamically linked program for the guest (libc through
 * ld-linux-x86-64.so.2), so that running a program through the dynamic
 * loader, and the loader's PROT_EXEC mappings, can be tested. It exits
 * 0 only when its main really ran. */
#include <stdio.h>

int main(void)
{
	fputs("dyn-hello: ran\n", stderr);
	return 0;
}
