/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pbwrite.h - a protocol-buffers wire encoder that writes into a caller-provided buffer and
 * never allocates: varints, length-delimited strings and bytes, packed repeated scalars and
 * nested submessages (length backpatched when the submessage ends).
 *
 * It is not a protobuf library: there is no schema, no decoding and no reflection; callers
 * name field numbers themselves. Because it never calls malloc, stdio or locks, the collector
 * uses it inside the host (pprof_write.c) and the CLI reuses it (pprof_export.c).
 *
 * Streaming: with a flush callback, completed top-level fields (depth 0) are handed to the
 * callback whenever the buffer is more than half full, so the buffer only has to hold the
 * largest single top-level field; long raw payloads written at depth 0 bypass the buffer.
 * Errors are sticky: after an overflow (a nested message larger than the buffer) or a failed
 * flush, everything else is dropped and pbwrite_finish reports it.
 */
#ifndef HEAPTAP_PROFILE_PBWRITE_H
#define HEAPTAP_PROFILE_PBWRITE_H

#include <stddef.h>
#include <stdint.h>

struct pbwrite {
	uint8_t *buf;           /* caller-owned storage */
	size_t cap;             /* its size */
	size_t len;             /* bytes held, not yet flushed */
	unsigned depth;         /* submessages open */
	int err;                /* 0, -ENOSPC after an overflow, or the flush callback's error */
	/* Receives n encoded bytes; returns 0, or a negative errno value that stops the encoder.
	   NULL: the buffer must hold the whole message. */
	int (*flush)(void *ctx, const uint8_t *p, size_t n);
	void *ctx;
	uint64_t total;         /* bytes encoded so far, flushed or not */
};

/* Fills w to encode into buf[0..cap) and hand completed top-level fields to flush (or NULL). */
void pbwrite_init(struct pbwrite *w, void *buf, size_t cap,
                  int (*flush)(void *ctx, const uint8_t *p, size_t n), void *ctx);

/* Field `field` as a varint (wire type 0). int64 values are written two's complement (10 bytes
   when negative), as protobuf's int64 requires; bool as 0/1. */
void pbwrite_varint(struct pbwrite *w, uint32_t field, uint64_t v);
void pbwrite_int64(struct pbwrite *w, uint32_t field, int64_t v);
void pbwrite_bool(struct pbwrite *w, uint32_t field, int v);

/* Field `field` as length-delimited bytes (strings: without the NUL). */
void pbwrite_bytes(struct pbwrite *w, uint32_t field, const void *p, size_t n);
void pbwrite_string(struct pbwrite *w, uint32_t field, const char *s);

/* Writes only the key and the length n of a length-delimited field; the caller then appends
   exactly n bytes with pbwrite_raw (in as many pieces as it likes). */
void pbwrite_tag_len(struct pbwrite *w, uint32_t field, size_t n);
/* Appends raw bytes. At depth 0 a payload larger than the free space is flushed directly. */
void pbwrite_raw(struct pbwrite *w, const void *p, size_t n);
/* Appends one bare varint (an element of a packed repeated field opened with pbwrite_begin). */
void pbwrite_raw_varint(struct pbwrite *w, uint64_t v);

/* Opens a length-delimited field (a submessage or a packed repeated scalar); returns a mark
   to give to pbwrite_end, which writes the length. Nesting is allowed; the whole outermost
   submessage must fit in the buffer. */
size_t pbwrite_begin(struct pbwrite *w, uint32_t field);
void pbwrite_end(struct pbwrite *w, size_t mark);

/* Flushes what is held (with a callback). Returns 0 or the sticky error (negative errno). */
int pbwrite_finish(struct pbwrite *w);

/* Number of bytes the varint encoding of v takes (1..10). */
size_t pbwrite_varint_size(uint64_t v);

#endif
