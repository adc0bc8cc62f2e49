/* SPDX-License-Identifier: GPL-2.0-only */
/* hostname.c: host names of [net] connect, checked and made canonical. */
#include "hostname.h"

#include "diag.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* ---- Punycode (RFC 3492 section 5 parameters) ------------------------------------------ */

enum { PC_BASE = 36, PC_TMIN = 1, PC_TMAX = 26, PC_SKEW = 38, PC_DAMP = 700, PC_BIAS = 72, PC_N = 128 };

static unsigned pc_adapt(unsigned delta, unsigned npoints, bool first)
{
	unsigned k = 0;
	delta = first ? delta / PC_DAMP : delta / 2;
	delta += delta / npoints;
	while (delta > ((PC_BASE - PC_TMIN) * PC_TMAX) / 2) {
		delta /= PC_BASE - PC_TMIN;
		k += PC_BASE;
	}
	return k + (PC_BASE - PC_TMIN + 1) * delta / (delta + PC_SKEW);
}

static char pc_digit(unsigned d)
{
	return (char)(d < 26 ? 'a' + d : '0' + (d - 26));
}

static int pc_value(char c)
{
	if (c >= 'a' && c <= 'z')
		return c - 'a';
	if (c >= '0' && c <= '9')
		return c - '0' + 26;
	return -1;   /* upper case never appears in a canonical label */
}

static unsigned pc_threshold(unsigned k, unsigned bias)
{
	return k <= bias ? PC_TMIN : k >= bias + PC_TMAX ? PC_TMAX : k - bias;
}

int hostname_punycode_encode(const unsigned *cp, size_t n, char *out, size_t cap)
{
	size_t o = 0, basic = 0;
	for (size_t i = 0; i < n; i++)
		if (cp[i] < 0x80) {
			if (o + 1 >= cap)
				return -1;
			out[o++] = (char)cp[i];
			basic++;
		}
	size_t h = basic;
	if (basic) {
		if (o + 1 >= cap)
			return -1;
		out[o++] = '-';
	}
	unsigned long long delta = 0;
	unsigned cur = PC_N, bias = PC_BIAS;
	while (h < n) {
		unsigned m = 0xffffffffu;
		for (size_t i = 0; i < n; i++)
			if (cp[i] >= cur && cp[i] < m)
				m = cp[i];
		delta += (unsigned long long)(m - cur) * (h + 1);
		if (delta > 0xffffffffull)
			return -1;
		cur = m;
		for (size_t i = 0; i < n; i++) {
			if (cp[i] < cur && ++delta > 0xffffffffull)
				return -1;
			if (cp[i] != cur)
				continue;
			unsigned q = (unsigned)delta;
			for (unsigned k = PC_BASE;; k += PC_BASE) {
				unsigned t = pc_threshold(k, bias);
				if (q < t)
					break;
				if (o + 1 >= cap)
					return -1;
				out[o++] = pc_digit(t + (q - t) % (PC_BASE - t));
				q = (q - t) / (PC_BASE - t);
			}
			if (o + 1 >= cap)
				return -1;
			out[o++] = pc_digit(q);
			bias = pc_adapt((unsigned)delta, (unsigned)h + 1, h == basic);
			delta = 0;
			h++;
		}
		delta++;
		cur++;
	}
	out[o] = '\0';
	return 0;
}

long hostname_punycode_decode(const char *s, size_t len, unsigned *cp, size_t cap)
{
	size_t b = 0, n = 0;
	for (size_t j = 0; j < len; j++)
		if (s[j] == '-')
			b = j;
	if (b > 0) {
		if (b > cap)
			return -1;
		for (size_t j = 0; j < b; j++) {
			if ((unsigned char)s[j] >= 0x80)
				return -1;
			cp[n++] = (unsigned char)s[j];
		}
	}
	unsigned long long i = 0;
	unsigned cur = PC_N, bias = PC_BIAS;
	for (size_t in = b > 0 ? b + 1 : 0; in < len;) {
		unsigned long long oldi = i, w = 1;
		for (unsigned k = PC_BASE;; k += PC_BASE) {
			if (in >= len)
				return -1;
			int d = pc_value(s[in++]);
			if (d < 0)
				return -1;
			i += (unsigned long long)d * w;
			if (i > 0x10ffffull * (n + 1))
				return -1;
			unsigned t = pc_threshold(k, bias);
			if ((unsigned)d < t)
				break;
			w *= PC_BASE - t;
		}
		bias = pc_adapt((unsigned)(i - oldi), (unsigned)n + 1, oldi == 0);
		cur += (unsigned)(i / (n + 1));
		i %= n + 1;
		if (cur > 0x10ffff || (cur >= 0xd800 && cur <= 0xdfff) || n >= cap)
			return -1;
		memmove(cp + i + 1, cp + i, (n - i) * sizeof(*cp));
		cp[i++] = cur;
		n++;
	}
	return (long)n;
}

/* ---- names ------------------------------------------------------------------------------ */

static void err_set(struct netaddr_err *e, size_t off, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void err_set(struct netaddr_err *e, size_t off, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	e->off = off;
	e->len = len;
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	e->note[0] = '\0';
	va_end(ap);
}

#define SHOWLEN 64
static const char *show(char buf[SHOWLEN], const char *s, size_t n)
{
	return diag_quote(buf, SHOWLEN, s, n, true);
}

static bool ldh(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
}

/* UTF-8 of s[0..len) into code points: their count, or -1. */
static long utf8_decode(const char *s, size_t len, unsigned *cp, size_t cap)
{
	size_t n = 0;
	for (size_t i = 0; i < len;) {
		unsigned char c = (unsigned char)s[i];
		unsigned v, need;
		if (c < 0x80) {
			v = c;
			need = 0;
		} else if ((c & 0xe0) == 0xc0 && c >= 0xc2) {
			v = c & 0x1f;
			need = 1;
		} else if ((c & 0xf0) == 0xe0) {
			v = c & 0x0f;
			need = 2;
		} else if ((c & 0xf8) == 0xf0 && c <= 0xf4) {
			v = c & 0x07;
			need = 3;
		} else {
			return -1;
		}
		if (i + need >= len || n >= cap)
			return -1;
		for (unsigned k = 1; k <= need; k++) {
			unsigned char d = (unsigned char)s[i + k];
			if ((d & 0xc0) != 0x80)
				return -1;
			v = (v << 6) | (d & 0x3f);
		}
		if ((need == 2 && v < 0x800) || (need == 3 && (v < 0x10000 || v > 0x10ffff)) ||
		    (v >= 0xd800 && v <= 0xdfff))
			return -1;
		cp[n++] = v;
		i += need + 1;
	}
	return (long)n;
}

/* The A-label of a label with non-ASCII bytes (ASCII lowered), or -1. */
static int a_label(const char *s, size_t len, char *out, size_t cap)
{
	unsigned cp[BEE_HOSTNAME_CP_MAX];
	long n = utf8_decode(s, len, cp, BEE_HOSTNAME_CP_MAX);
	if (n < 0 || cap < 5)
		return -1;
	for (long i = 0; i < n; i++)
		if (cp[i] >= 'A' && cp[i] <= 'Z')
			cp[i] += 'a' - 'A';
	memcpy(out, "xn--", 4);
	return hostname_punycode_encode(cp, (size_t)n, out + 4, cap - 4);
}

/* An "xn--" label: Punycode that decodes to a label beyond ASCII and
 * encodes back to the same text. */
static int check_a_label(const char *l, size_t len, struct netaddr_err *e, size_t off)
{
	char b1[SHOWLEN], again[HOSTNAME_BUFLEN];
	unsigned cp[BEE_HOSTNAME_CP_MAX];
	long n = hostname_punycode_decode(l + 4, len - 4, cp, BEE_HOSTNAME_CP_MAX);
	bool wide = false;
	for (long i = 0; i < n; i++)
		wide |= cp[i] >= 0x80;
	if (n <= 0 || !wide || hostname_punycode_encode(cp, (size_t)n, again, sizeof(again)) < 0 ||
	    strlen(again) != len - 4 || memcmp(again, l + 4, len - 4) != 0) {
		err_set(e, off, len, "label '%s' is not a valid A-label (Punycode, RFC 3492)", show(b1, l, len));
		snprintf(e->note, sizeof(e->note), "an 'xn--' label must be the Punycode of a label beyond ASCII");
		return -1;
	}
	for (long i = 0; i < n; i++)
		if (cp[i] < 0x80 ? !ldh((char)cp[i]) : (cp[i] < 0xa0 || (cp[i] >= 0xfff0 && cp[i] <= 0xffff))) {
			err_set(e, off, len, "A-label '%s' decodes to a character IDNA disallows (U+%04X)",
				show(b1, l, len), cp[i]);
			return -1;
		}
	return 0;
}

int hostname_check(const char *s, size_t len, char out[HOSTNAME_BUFLEN], struct netaddr_err *e)
{
	char b1[SHOWLEN], lab[HOSTNAME_BUFLEN];
	memset(e, 0, sizeof(*e));
	if (len == 0) {
		err_set(e, 0, 0, "missing host name");
		return -1;
	}
	/* U-labels: refused, with the A-labels as the suggestion */
	bool wide = false;
	for (size_t i = 0; i < len; i++)
		wide |= (unsigned char)s[i] >= 0x80;
	if (wide) {
		char sug[HOSTNAME_BUFLEN * 2] = "";
		size_t i = 0;
		bool ok = true;
		while (i <= len && ok) {
			size_t j = i;
			while (j < len && s[j] != '.')
				j++;
			bool lw = false;
			for (size_t k = i; k < j; k++)
				lw |= (unsigned char)s[k] >= 0x80;
			if (lw)
				ok = a_label(s + i, j - i, lab, BEE_HOST_LABEL_MAX + 1) == 0;
			else
				snprintf(lab, sizeof(lab), "%.*s", (int)(j - i), s + i);
			if (ok && strlen(sug) + strlen(lab) + 2 < sizeof(sug)) {
				strcat(sug, i ? "." : "");
				strcat(sug, lab);
			}
			i = j + 1;
		}
		err_set(e, 0, len, "host name is not ASCII");
		if (ok)
			snprintf(e->note, sizeof(e->note), "write its A-labels: did you mean '%.200s'?", sug);
		else
			snprintf(e->note, sizeof(e->note), "it is not UTF-8 text of a name");
		return -1;
	}
	if (len > BEE_HOST_NAME_MAX) {
		err_set(e, 0, len, "host name is %zu bytes long, more than DNS allows (%d)", len, BEE_HOST_NAME_MAX);
		return -1;
	}
	if (s[len - 1] == '.') {
		err_set(e, len - 1, 1, "host name ends with '.'");
		snprintf(e->note, sizeof(e->note), "write it without the final dot: names are always absolute here");
		return -1;
	}
	size_t o = 0, i = 0, labels = 0, last = 0;
	while (i <= len) {
		size_t j = i;
		while (j < len && s[j] != '.')
			j++;
		size_t ll = j - i;
		if (ll == 0) {
			err_set(e, i, 0, "empty label in host name '%s'", show(b1, s, len));
			return -1;
		}
		if (ll == 1 && s[i] == '*') {
			if (i != 0) {
				err_set(e, i, 1, "'*' is only allowed as the whole leftmost label");
				snprintf(e->note, sizeof(e->note), "write '*.DOMAIN' for every name below DOMAIN");
				return -1;
			}
			if (j == len) {
				err_set(e, 0, 1, "'*' alone is not a host name");
				snprintf(e->note, sizeof(e->note), "write '0.0.0.0/0' and '[::]/0' for any address");
				return -1;
			}
		} else {
			if (ll > BEE_HOST_LABEL_MAX) {
				err_set(e, i, ll, "label of %zu bytes is longer than DNS allows (%d)", ll, BEE_HOST_LABEL_MAX);
				return -1;
			}
			for (size_t k = i; k < j; k++) {
				char c = s[k] >= 'A' && s[k] <= 'Z' ? (char)(s[k] - 'A' + 'a') : s[k];
				if (c == '*') {
					err_set(e, k, 1, "'*' is only allowed as the whole leftmost label");
					snprintf(e->note, sizeof(e->note), "write '*.DOMAIN' for every name below DOMAIN");
					return -1;
				}
				if (!ldh(c)) {
					err_set(e, k, 1, "'%s' is not allowed in a host name", show(b1, s + k, 1));
					snprintf(e->note, sizeof(e->note),
						 "labels are letters, digits and '-' (IDNA2008)");
					return -1;
				}
				lab[k - i] = c;
			}
			lab[ll] = '\0';
			if (lab[0] == '-' || lab[ll - 1] == '-') {
				err_set(e, lab[0] == '-' ? i : j - 1, 1, "label '%s' %s with '-'", show(b1, s + i, ll),
					lab[0] == '-' ? "starts" : "ends");
				return -1;
			}
			if (ll >= 4 && lab[2] == '-' && lab[3] == '-') {
				if (memcmp(lab, "xn", 2) != 0) {
					err_set(e, i, ll, "label '%s' has '--' in its third and fourth places, which "
						"IDNA reserves", show(b1, s + i, ll));
					return -1;
				}
				if (check_a_label(lab, ll, e, i) < 0)
					return -1;
			}
		}
		if (labels)
			out[o++] = '.';
		memcpy(out + o, ll == 1 && s[i] == '*' ? "*" : lab, ll);
		o += ll;
		last = i;
		labels++;
		i = j + 1;
	}
	out[o] = '\0';
	if (strspn(out + (o - (len - last)), "0123456789") == len - last) {
		err_set(e, last, len - last, "the last label of '%s' is all digits: not a host name",
			show(b1, s, len));
		snprintf(e->note, sizeof(e->note), "an address is written as a dotted quad, as in '10.0.0.1:443'");
		return -1;
	}
	return 0;
}
