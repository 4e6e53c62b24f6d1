/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * outbuf.c - the fixed-buffer text writer of outbuf.h: number formatting and flushing with
 * nothing but write(2). Used inside the host process, so it must never allocate, lock or
 * touch stdio; it is also used by the CLI, where those rules cost nothing.
 */
#include "outbuf.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

void outbuf_init(struct outbuf *ob, char *buf, size_t cap, int fd)
{
	ob->buf = buf;
	ob->cap = cap;
	ob->len = 0;
	ob->fd = fd;
	ob->err = 0;
	ob->truncated = 0;
	ob->total = 0;
}

int write_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n > 0) {
		ssize_t w = write(fd, c, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (w == 0)
			return -EIO;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

int outbuf_flush(struct outbuf *ob)
{
	if (ob->err)
		return -ob->err;
	if (ob->fd < 0 || ob->len == 0)
		return 0;
	int rc = write_all(ob->fd, ob->buf, ob->len);
	ob->len = 0;
	if (rc < 0) {
		ob->err = -rc;
		return rc;
	}
	return 0;
}

void outbuf_put(struct outbuf *ob, const void *p, size_t n)
{
	const char *c = p;
	if (ob->err)
		return;
	ob->total += n;
	while (n > 0) {
		size_t room = ob->cap - ob->len;
		if (room == 0) {
			if (ob->fd < 0) {
				ob->truncated = 1;
				return;
			}
			if (outbuf_flush(ob) < 0)
				return;
			room = ob->cap;
		}
		size_t k = n < room ? n : room;
		memcpy(ob->buf + ob->len, c, k);
		ob->len += k;
		c += k;
		n -= k;
	}
}

void outbuf_puts(struct outbuf *ob, const char *s)
{
	outbuf_put(ob, s, strlen(s));
}

void outbuf_putc(struct outbuf *ob, char c)
{
	outbuf_put(ob, &c, 1);
}

size_t fmt_u64(char *out, uint64_t v)
{
	char tmp[20];
	size_t n = 0;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (size_t i = 0; i < n; i++)
		out[i] = tmp[n - 1 - i];
	out[n] = 0;
	return n;
}

size_t fmt_hex(char *out, uint64_t v)
{
	static const char digits[] = "0123456789abcdef";
	char tmp[16];
	size_t n = 0;
	do {
		tmp[n++] = digits[v & 15];
		v >>= 4;
	} while (v);
	for (size_t i = 0; i < n; i++)
		out[i] = tmp[n - 1 - i];
	out[n] = 0;
	return n;
}

void outbuf_u64(struct outbuf *ob, uint64_t v)
{
	char tmp[21];
	outbuf_put(ob, tmp, fmt_u64(tmp, v));
}

void outbuf_i64(struct outbuf *ob, int64_t v)
{
	if (v < 0) {
		outbuf_putc(ob, '-');
		outbuf_u64(ob, (uint64_t)0 - (uint64_t)v);
	} else {
		outbuf_u64(ob, (uint64_t)v);
	}
}

void outbuf_hex(struct outbuf *ob, uint64_t v)
{
	char tmp[17];
	outbuf_put(ob, tmp, fmt_hex(tmp, v));
}

void outbuf_hex_pad(struct outbuf *ob, uint64_t v, int width)
{
	char tmp[17];
	size_t n = fmt_hex(tmp, v);
	for (int i = (int)n; i < width; i++)
		outbuf_putc(ob, '0');
	outbuf_put(ob, tmp, n);
}

void outbuf_fixed(struct outbuf *ob, double v, int decimals)
{
	uint64_t scale = 1;
	if (decimals < 0)
		decimals = 0;
	if (decimals > 9)
		decimals = 9;
	for (int i = 0; i < decimals; i++)
		scale *= 10;
	if (!(v >= 0))
		v = 0;
	if (v > 1.8e19 / (double)scale)
		v = 1.8e19 / (double)scale;
	uint64_t whole = (uint64_t)(v * (double)scale + 0.5);
	outbuf_u64(ob, whole / scale);
	if (decimals) {
		char tmp[21];
		uint64_t frac = whole % scale;
		outbuf_putc(ob, '.');
		size_t n = fmt_u64(tmp, frac);
		for (int i = (int)n; i < decimals; i++)
			outbuf_putc(ob, '0');
		outbuf_put(ob, tmp, n);
	}
}

void outbuf_json_str(struct outbuf *ob, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\') {
			outbuf_putc(ob, '\\');
			outbuf_putc(ob, (char)c);
		} else if (c == '\n') {
			outbuf_puts(ob, "\\n");
		} else if (c < 0x20 || c == 0x7f) {
			char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
			outbuf_put(ob, e, 6);
		} else {
			outbuf_putc(ob, (char)c);
		}
	}
}
