/* SPDX-License-Identifier: GPL-2.0-only */
/* bpflog.h: keep what libbpf says, show its tail when a load fails.
 *
 * A verifier log runs to thousands of lines; the cause of a refusal is at
 * its end. bpflog_capture routes libbpf's messages (debug excluded) into a
 * buffer that bpflog owns; bpflog_print_tail writes the last lines of it to
 * stderr under a header; bpflog_reset forgets them (after a success).
 */
#ifndef BEE_VM_BPFLOG_H
#define BEE_VM_BPFLOG_H

void bpflog_capture(void);
void bpflog_reset(void);
void bpflog_print_tail(const char *subject, unsigned lines);

#endif
