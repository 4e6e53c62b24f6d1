/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * svgutil.c - the text helpers of svgutil.h: XML escaping with UTF-8 repair, label truncation
 * and human number formats, shared by the flame graph and the HTML report. Writes to stdio
 * streams; holds no state and allocates nothing.
 */
#include "svgutil.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at s (of at most n bytes), or 0 if it is not valid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	size_t len;
	uint32_t cp;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp == 0xfffe || cp == 0xffff)
		return 0;
	return len;
}

void svgutil_escape_n(FILE *out, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, run = 0; /* run: plain bytes pending from p[i - run] */
	while (i < n) {
		unsigned char c = p[i];
		const char *rep = NULL;
		size_t adv = 1;
		switch (c) {
		case '&': rep = "&amp;"; break;
		case '<': rep = "&lt;"; break;
		case '>': rep = "&gt;"; break;
		case '"': rep = "&quot;"; break;
		case '\'': rep = "&#39;"; break;
		default:
			if (c < 0x20 && c != '\t' && c != '\n') {
				rep = "?";
			} else if (c >= 0x80) {
				adv = utf8_len(p + i, n - i);
				if (adv == 0) {
					rep = "?";
					adv = 1;
				}
			}
		}
		if (rep) {
			if (run)
				fwrite(p + i - run, 1, run, out);
			run = 0;
			fputs(rep, out);
			i += adv;
		} else {
			run += adv;
			i += adv;
		}
	}
	if (run)
		fwrite(p + n - run, 1, run, out);
}

void svgutil_escape(FILE *out, const char *s)
{
	svgutil_escape_n(out, s, strlen(s));
}

size_t svgutil_nchars(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), i = 0, k = 0;
	while (i < n) {
		size_t l = utf8_len(p + i, n - i);
		i += l ? l : 1;
		k++;
	}
	return k;
}

size_t svgutil_prefix_bytes(const char *s, size_t nchars)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), i = 0, k = 0;
	while (i < n && k < nchars) {
		size_t l = utf8_len(p + i, n - i);
		i += l ? l : 1;
		k++;
	}
	return i;
}

void svgutil_label(FILE *out, const char *name, double width_px, double char_px)
{
	if (!(width_px > 0) || !(char_px > 0))
		return;
	double fit = floor(width_px / char_px);
	if (fit < 3)
		return;
	size_t nch = svgutil_nchars(name);
	if ((double)nch <= fit) {
		svgutil_escape(out, name);
		return;
	}
	svgutil_escape_n(out, name, svgutil_prefix_bytes(name, (size_t)fit - 2));
	fputs("..", out);
}

char *svgutil_commas(char *out, double v)
{
	char digits[32];
	double r = nearbyint(v);
	int neg = r < 0;
	if (neg)
		r = -r;
	if (!(r < 9.2e18)) { /* NaN, inf or beyond int64: no grouping */
		snprintf(out, 32, "%s%.0f", neg ? "-" : "", r);
		return out;
	}
	int n = snprintf(digits, sizeof digits, "%llu", (unsigned long long)r);
	char *o = out;
	if (neg)
		*o++ = '-';
	for (int i = 0; i < n; i++) {
		if (i > 0 && (n - i) % 3 == 0)
			*o++ = ',';
		*o++ = digits[i];
	}
	*o = 0;
	return out;
}

char *svgutil_bytes(char *out, double v)
{
	static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
	double a = fabs(v);
	int u = 0;
	while (a >= 1024 && u < 5) {
		a /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(out, 32, "%s%.0f B", v < 0 ? "-" : "", a);
	else
		snprintf(out, 32, "%s%.1f %s", v < 0 ? "-" : "", a, unit[u]);
	return out;
}
