/* SPDX-License-Identifier: GPL-2.0-only */
/* bpflog.c: libbpf's messages into a buffer, printed only on failure. */
#include "bpflog.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/libbpf.h>

static char *log_buf;
static size_t log_len, log_cap;

static int bpflog_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	va_list aq;
	va_copy(aq, ap);
	int n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	if (n <= 0)
		return n;
	if (log_len + (size_t)n + 1 > log_cap) {
		size_t cap = log_cap ? log_cap : 1 << 16;
		while (cap < log_len + (size_t)n + 1)
			cap *= 2;
		char *p = realloc(log_buf, cap);
		if (!p)
			return vfprintf(stderr, fmt, ap);   /* no room: say it now */
		log_buf = p;
		log_cap = cap;
	}
	vsnprintf(log_buf + log_len, log_cap - log_len, fmt, ap);
	log_len += (size_t)n;
	return n;
}

void bpflog_capture(void)
{
	libbpf_set_print(bpflog_print);
}

void bpflog_reset(void)
{
	log_len = 0;
}

void bpflog_print_tail(const char *subject, unsigned lines)
{
	if (!log_len) {
		fprintf(stderr, "%s: libbpf said nothing\n", subject);
		return;
	}
	size_t start = log_len;
	unsigned seen = 0;
	if (log_buf[start - 1] == '\n')
		start--;
	while (start > 0 && seen < lines) {
		start--;
		if (log_buf[start] == '\n' && ++seen == lines) {
			start++;
			break;
		}
	}
	fprintf(stderr, "%s: libbpf and verifier log%s:\n", subject,
		start > 0 ? " (its last lines)" : "");
	fwrite(log_buf + start, 1, log_len - start, stderr);
	if (log_buf[log_len - 1] != '\n')
		fputc('\n', stderr);
}
