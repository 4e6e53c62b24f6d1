/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * deflate.h - a small streaming gzip compressor (RFC 1951 deflate inside an RFC 1952 gzip
 * member) for the collector's pprof writer, so that libheaptap.so needs no zlib: LZ77 over a
 * 32 KiB window with hash chains, coded with the fixed Huffman tables, CRC-32 by table.
 *
 * It is not a general zlib replacement: no inflate, no dynamic Huffman tables, no levels,
 * no flush points (the output is one gzip member written from init to finish). No malloc,
 * no stdio, no locks: the whole state is the caller's struct deflate (~340 KiB, meant to live
 * in an mmap), and compressed bytes go to the caller's sink. Not async-signal-safe only in
 * the sense that the sink may not be.
 */
#ifndef HEAPTAP_BASE_DEFLATE_H
#define HEAPTAP_BASE_DEFLATE_H

#include <stddef.h>
#include <stdint.h>

enum {
	DEFLATE_WSIZE = 1 << 15,     /* the window: the farthest a match may reach back */
	DEFLATE_HBITS = 15,          /* hash table of 3-byte prefixes */
	DEFLATE_OUTSIZE = 16 << 10,  /* compressed bytes held before the sink is called */
};

/* Receives compressed bytes; returns 0 or a negative errno (then deflate stops, sticky). */
typedef int (*deflate_sink_fn)(void *ctx, const uint8_t *p, size_t n);

struct deflate {
	uint8_t win[2 * DEFLATE_WSIZE]; /* input not yet dropped: [0, len) */
	uint32_t head[1u << DEFLATE_HBITS]; /* per hash: the latest window index + 1, 0 = none */
	uint32_t prev[DEFLATE_WSIZE];       /* per index & (WSIZE-1): the previous one + 1 */
	uint32_t crc_table[256];
	uint16_t lit_code[288];  /* the fixed literal/length codes, bit-reversed for LSB-first output */
	uint8_t lit_bits[288];
	uint8_t out[DEFLATE_OUTSIZE];
	size_t len;              /* bytes in win */
	size_t pos;              /* next index of win to code */
	size_t outlen;
	uint64_t bitbuf;         /* pending output bits, LSB first */
	unsigned nbits;
	uint32_t crc, isize;     /* of the uncompressed input */
	int err;                 /* first sink error (negative errno), sticky */
	deflate_sink_fn sink;
	void *ctx;
};

/* Starts a gzip member in d (header written to d's buffer, not yet to the sink). */
void deflate_init(struct deflate *d, deflate_sink_fn sink, void *ctx);

/* Compresses n bytes; returns 0 or the sink's sticky error. */
int deflate_write(struct deflate *d, const void *p, size_t n);

/* Codes what is left, ends the deflate stream, writes the gzip trailer and hands every byte
   to the sink. Returns 0 or the sink's error. d must not be written to afterwards. */
int deflate_finish(struct deflate *d);

/* CRC-32 (IEEE, the gzip trailer's) of p[0..n) continuing from crc (0 to start), bit by bit:
   for tests and small buffers. */
uint32_t deflate_crc32(uint32_t crc, const void *p, size_t n);

#endif
