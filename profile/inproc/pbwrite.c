/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pbwrite.c - the protobuf wire encoder of pbwrite.h: varints, length-delimited fields and
 * submessages whose length byte is reserved and fixed up (moving the body when the length
 * needs more than one byte) when they end. It runs inside the host, so it uses nothing but
 * memcpy/memmove and the caller's flush callback: no malloc, no stdio, no locks.
 */
#include "pbwrite.h"

#include <errno.h>
#include <string.h>

enum { WT_VARINT = 0, WT_LEN = 2 };

void pbwrite_init(struct pbwrite *w, void *buf, size_t cap,
                  int (*flush)(void *ctx, const uint8_t *p, size_t n), void *ctx)
{
	w->buf = buf;
	w->cap = cap;
	w->len = 0;
	w->depth = 0;
	w->err = 0;
	w->flush = flush;
	w->ctx = ctx;
	w->total = 0;
}

size_t pbwrite_varint_size(uint64_t v)
{
	size_t n = 1;
	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static size_t encode_varint(uint8_t *out, uint64_t v)
{
	size_t n = 0;
	while (v >= 0x80) {
		out[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	out[n++] = (uint8_t)v;
	return n;
}

/* Hands the buffer to the callback (only between top-level fields). */
static void flush_held(struct pbwrite *w)
{
	if (w->err || !w->flush || w->len == 0 || w->depth != 0)
		return;
	int rc = w->flush(w->ctx, w->buf, w->len);
	w->len = 0;
	if (rc < 0)
		w->err = rc;
}

/* Makes room for n more bytes; returns 0, or -1 (error set) when they cannot fit. */
static int reserve(struct pbwrite *w, size_t n)
{
	if (w->err)
		return -1;
	if (w->cap - w->len >= n)
		return 0;
	flush_held(w);
	if (!w->err && w->cap - w->len >= n)
		return 0;
	if (!w->err)
		w->err = -ENOSPC;
	return -1;
}

/* Called after every complete top-level field: stream out once the buffer is half full. */
static void field_done(struct pbwrite *w)
{
	if (w->depth == 0 && w->len > w->cap / 2)
		flush_held(w);
}

static void put_varint(struct pbwrite *w, uint64_t v)
{
	if (reserve(w, 10) < 0)
		return;
	size_t n = encode_varint(w->buf + w->len, v);
	w->len += n;
	w->total += n;
}

static void put_key(struct pbwrite *w, uint32_t field, unsigned wt)
{
	field_done(w); /* a new top-level field starts with at least half the buffer free */
	put_varint(w, ((uint64_t)field << 3) | wt);
}

void pbwrite_varint(struct pbwrite *w, uint32_t field, uint64_t v)
{
	put_key(w, field, WT_VARINT);
	put_varint(w, v);
	field_done(w);
}

void pbwrite_int64(struct pbwrite *w, uint32_t field, int64_t v)
{
	pbwrite_varint(w, field, (uint64_t)v);
}

void pbwrite_bool(struct pbwrite *w, uint32_t field, int v)
{
	pbwrite_varint(w, field, v ? 1 : 0);
}

void pbwrite_raw(struct pbwrite *w, const void *p, size_t n)
{
	const uint8_t *c = p;
	if (w->err || n == 0)
		return;
	if (w->cap - w->len < n && w->depth == 0 && w->flush) {
		flush_held(w);
		if (w->err)
			return;
		if (n > w->cap / 2) {
			/* Large payload between top-level fields: bypass the buffer. */
			int rc = w->flush(w->ctx, c, n);
			if (rc < 0)
				w->err = rc;
			else
				w->total += n;
			return;
		}
	}
	if (reserve(w, n) < 0)
		return;
	memcpy(w->buf + w->len, c, n);
	w->len += n;
	w->total += n;
}

void pbwrite_raw_varint(struct pbwrite *w, uint64_t v)
{
	put_varint(w, v);
}

void pbwrite_tag_len(struct pbwrite *w, uint32_t field, size_t n)
{
	put_key(w, field, WT_LEN);
	put_varint(w, n);
}

void pbwrite_bytes(struct pbwrite *w, uint32_t field, const void *p, size_t n)
{
	pbwrite_tag_len(w, field, n);
	pbwrite_raw(w, p, n);
	field_done(w);
}

void pbwrite_string(struct pbwrite *w, uint32_t field, const char *s)
{
	pbwrite_bytes(w, field, s, s ? strlen(s) : 0);
}

size_t pbwrite_begin(struct pbwrite *w, uint32_t field)
{
	put_key(w, field, WT_LEN);
	w->depth++;
	if (reserve(w, 1) < 0)
		return 0;
	size_t mark = w->len;
	w->buf[w->len++] = 0; /* length placeholder, fixed by pbwrite_end */
	w->total++;
	return mark;
}

void pbwrite_end(struct pbwrite *w, size_t mark)
{
	if (w->depth > 0)
		w->depth--;
	if (w->err)
		return;
	size_t body = w->len - (mark + 1);
	size_t k = pbwrite_varint_size(body);
	if (k > 1) {
		if (w->cap - w->len < k - 1) {
			w->err = -ENOSPC;
			return;
		}
		memmove(w->buf + mark + k, w->buf + mark + 1, body);
		w->len += k - 1;
		w->total += k - 1;
	}
	encode_varint(w->buf + mark, body);
	field_done(w);
}

int pbwrite_finish(struct pbwrite *w)
{
	if (w->depth != 0 && !w->err)
		w->err = -EINVAL;
	flush_held(w);
	return w->err;
}
