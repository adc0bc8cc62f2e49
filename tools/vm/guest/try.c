/* SPDX-License-Identifier: GPL-2.0-only */
/* try.c: the words bee-try's operations print (try.h). */
#include "try.h"

#include <stdio.h>
#include <string.h>

const char *try_errname(int err, char *buf, unsigned size)
{
	const char *name = strerrorname_np(err);
	if (name)
		return name;
	snprintf(buf, size, "E%d", err);
	return buf;
}

int try_answer(int err)
{
	char buf[16];
	puts(err ? try_errname(err, buf, sizeof(buf)) : "OK");
	return err ? 1 : 0;
}

int try_setup_failed(int err)
{
	char buf[16];
	printf("SETUP:%s\n", try_errname(err, buf, sizeof(buf)));
	return 1;
}
