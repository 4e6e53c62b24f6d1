/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * outbuf.h - a fixed-buffer text writer that never allocates.
 *
 * The collector writes dumps, statistics and HTTP replies through this: the caller owns the
 * buffer (a static array, a stack array or an mmap), and the writer either flushes it to a
 * file descriptor when it fills (fd >= 0) or, with fd < 0, just records that the text did not
 * fit (truncated = 1). Every function is async-signal-safe: no malloc, no stdio, no locale,
 * no locks. Errors are sticky: after a failed write(2) everything else is dropped and err
 * holds the errno value.
 */
#ifndef HEAPTAP_BASE_OUTBUF_H
#define HEAPTAP_BASE_OUTBUF_H

#include <stddef.h>
#include <stdint.h>

struct outbuf {
	char *buf;       /* caller-owned storage */
	size_t cap;      /* its size in bytes */
	size_t len;      /* bytes currently held */
	int fd;          /* flush target, or -1 to only fill buf */
	int err;         /* first errno from write(2), 0 if none */
	int truncated;   /* with fd < 0: 1 once something did not fit */
	uint64_t total;  /* bytes accepted since init, flushed or not */
};

/* Fills ob to write into buf[0..cap) and flush to fd (or never, with fd < 0). */
void outbuf_init(struct outbuf *ob, char *buf, size_t cap, int fd);

/* Appends n bytes. */
void outbuf_put(struct outbuf *ob, const void *p, size_t n);
/* Appends a NUL-terminated string. */
void outbuf_puts(struct outbuf *ob, const char *s);
/* Appends one byte. */
void outbuf_putc(struct outbuf *ob, char c);
/* Appends v in decimal. */
void outbuf_u64(struct outbuf *ob, uint64_t v);
void outbuf_i64(struct outbuf *ob, int64_t v);
/* Appends v as lowercase hex without prefix or padding ("0" for 0). */
void outbuf_hex(struct outbuf *ob, uint64_t v);
/* Appends v as lowercase hex, zero-padded to width digits. */
void outbuf_hex_pad(struct outbuf *ob, uint64_t v, int width);
/* Appends a non-negative double with `decimals` digits after the point (0..9), rounded. */
void outbuf_fixed(struct outbuf *ob, double v, int decimals);
/* Appends s as the body of a JSON string (escapes quotes, backslashes and control bytes; no quotes added). */
void outbuf_json_str(struct outbuf *ob, const char *s);

/* Writes what is held to fd (no-op with fd < 0). Returns 0, or -errno after a failed write. */
int outbuf_flush(struct outbuf *ob);

/* Formats v in decimal into out (at least 21 bytes); returns the length. */
size_t fmt_u64(char *out, uint64_t v);
/* Formats v as lowercase hex into out (at least 17 bytes); returns the length. */
size_t fmt_hex(char *out, uint64_t v);

/* Writes all n bytes to fd, retrying on EINTR and short writes. Returns 0 or -errno. */
int write_all(int fd, const void *p, size_t n);

#endif
