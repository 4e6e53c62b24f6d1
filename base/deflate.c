/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * deflate.c - the gzip compressor of deflate.h: greedy LZ77 over a sliding 64 KiB buffer
 * (matches reach back 32 KiB, found through chains of 3-byte hashes), coded as fixed-Huffman
 * deflate blocks (RFC 1951 §3.2.6), wrapped in a gzip member (RFC 1952) with CRC-32 and size.
 *
 * Not a decompressor and not tuned for ratio: pprof profiles (varints, repeated location ids)
 * shrink 5-10x with this. No malloc, no stdio; the caller owns all the memory.
 */
#include "deflate.h"

#include <string.h>

enum {
	MIN_MATCH = 3,
	MAX_MATCH = 258,
	LOOKAHEAD = MAX_MATCH + MIN_MATCH + 1, /* bytes kept uncoded until the input ends */
	MAX_CHAIN = 48,                        /* candidates tried per position */
	SYM_END = 256,
};

/* length codes 257..285 and distance codes 0..29: base value and extra bits (RFC 1951 §3.2.5) */
static const uint16_t len_base[29] = { 3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
	                               31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258 };
static const uint8_t len_extra[29] = { 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
	                               2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0 };
static const uint16_t dist_base[30] = { 1,    2,    3,    4,    5,    7,     9,     13,    17,  25,
	                                33,   49,   65,   97,   129,  193,   257,   385,   513, 769,
	                                1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577 };
static const uint8_t dist_extra[30] = { 0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
	                                6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13 };

static unsigned reverse_bits(unsigned v, unsigned n)
{
	unsigned r = 0;
	for (unsigned i = 0; i < n; i++, v >>= 1)
		r = (r << 1) | (v & 1);
	return r;
}

/* ---- output ---- */

static void flush_out(struct deflate *d)
{
	if (d->outlen > 0 && !d->err) {
		int rc = d->sink(d->ctx, d->out, d->outlen);
		if (rc < 0)
			d->err = rc;
	}
	d->outlen = 0;
}

static void put_byte(struct deflate *d, uint8_t b)
{
	if (d->outlen == sizeof d->out)
		flush_out(d);
	d->out[d->outlen++] = b;
}

/* n <= 32 bits of v, least significant first */
static void put_bits(struct deflate *d, uint32_t v, unsigned n)
{
	d->bitbuf |= (uint64_t)v << d->nbits;
	d->nbits += n;
	while (d->nbits >= 8) {
		put_byte(d, (uint8_t)d->bitbuf);
		d->bitbuf >>= 8;
		d->nbits -= 8;
	}
}

static void put_sym(struct deflate *d, unsigned sym)
{
	put_bits(d, d->lit_code[sym], d->lit_bits[sym]);
}

static void put_match(struct deflate *d, unsigned len, unsigned dist)
{
	unsigned i = 28;
	while (len_base[i] > len)
		i--;
	put_sym(d, 257 + i);
	if (len_extra[i])
		put_bits(d, len - len_base[i], len_extra[i]);
	unsigned k = 29;
	while (dist_base[k] > dist)
		k--;
	put_bits(d, reverse_bits(k, 5), 5);
	if (dist_extra[k])
		put_bits(d, dist - dist_base[k], dist_extra[k]);
}

/* ---- matching ---- */

static uint32_t hash3(const uint8_t *p)
{
	uint32_t v = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16;
	return (v * 2654435761u) >> (32 - DEFLATE_HBITS);
}

/* Enters window index i (with at least MIN_MATCH bytes from it) in its hash chain; returns the
   previous head of that chain (index + 1, 0 = none). */
static uint32_t insert(struct deflate *d, size_t i)
{
	uint32_t h = hash3(d->win + i);
	uint32_t was = d->head[h];
	d->prev[i & (DEFLATE_WSIZE - 1)] = was;
	d->head[h] = (uint32_t)i + 1;
	return was;
}

/* The longest match for d->pos among the chain from cand; its length (0 if < MIN_MATCH) and
   distance in *dist. */
static unsigned longest(const struct deflate *d, uint32_t cand, unsigned *dist)
{
	size_t pos = d->pos;
	size_t avail = d->len - pos;
	unsigned max = avail < MAX_MATCH ? (unsigned)avail : MAX_MATCH;
	const uint8_t *cur = d->win + pos;
	unsigned best = MIN_MATCH - 1;
	for (int chain = MAX_CHAIN; cand && chain > 0; chain--) {
		size_t c = cand - 1;
		if (c >= pos || pos - c > DEFLATE_WSIZE)
			break;
		const uint8_t *m = d->win + c;
		if (m[best] == cur[best] && m[0] == cur[0] && m[1] == cur[1]) {
			unsigned n = 2;
			while (n < max && m[n] == cur[n])
				n++;
			if (n > best) {
				best = n;
				*dist = (unsigned)(pos - c);
				if (n == max)
					break;
			}
		}
		uint32_t next = d->prev[c & (DEFLATE_WSIZE - 1)];
		if (next >= cand) /* chains only go back; anything else is a stale slot */
			break;
		cand = next;
	}
	return best >= MIN_MATCH ? best : 0;
}

/* Codes the window from pos up to len (final) or up to LOOKAHEAD bytes before it. */
static void code_window(struct deflate *d, int final)
{
	size_t stop = final ? d->len : d->len > LOOKAHEAD ? d->len - LOOKAHEAD : 0;
	while (d->pos < stop && !d->err) {
		size_t pos = d->pos;
		unsigned len = 0, dist = 0;
		if (d->len - pos >= MIN_MATCH)
			len = longest(d, insert(d, pos), &dist);
		if (len) {
			put_match(d, len, dist);
			for (size_t i = pos + 1; i < pos + len && d->len - i >= MIN_MATCH; i++)
				(void)insert(d, i);
			d->pos = pos + len;
		} else {
			put_sym(d, d->win[pos]);
			d->pos = pos + 1;
		}
	}
}

/* Drops the older half of the window; chain entries that pointed into it become "none". */
static void slide(struct deflate *d)
{
	memmove(d->win, d->win + DEFLATE_WSIZE, d->len - DEFLATE_WSIZE);
	d->len -= DEFLATE_WSIZE;
	d->pos -= DEFLATE_WSIZE;
	for (size_t i = 0; i < sizeof d->head / sizeof d->head[0]; i++)
		d->head[i] = d->head[i] > DEFLATE_WSIZE ? d->head[i] - DEFLATE_WSIZE : 0;
	for (size_t i = 0; i < DEFLATE_WSIZE; i++)
		d->prev[i] = d->prev[i] > DEFLATE_WSIZE ? d->prev[i] - DEFLATE_WSIZE : 0;
}

/* ---- the API ---- */

void deflate_init(struct deflate *d, deflate_sink_fn sink, void *ctx)
{
	memset(d->head, 0, sizeof d->head);
	memset(d->prev, 0, sizeof d->prev);
	for (uint32_t n = 0; n < 256; n++) {
		uint32_t c = n;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
		d->crc_table[n] = c;
	}
	/* the fixed code (RFC 1951 §3.2.6), canonical codes sent most significant bit first */
	for (unsigned s = 0; s < 288; s++) {
		unsigned code, bits;
		if (s < 144)
			code = 0x30 + s, bits = 8;
		else if (s < 256)
			code = 0x190 + (s - 144), bits = 9;
		else if (s < 280)
			code = s - 256, bits = 7;
		else
			code = 0xc0 + (s - 280), bits = 8;
		d->lit_code[s] = (uint16_t)reverse_bits(code, bits);
		d->lit_bits[s] = (uint8_t)bits;
	}
	d->len = d->pos = d->outlen = 0;
	d->bitbuf = 0;
	d->nbits = 0;
	d->crc = 0;
	d->isize = 0;
	d->err = 0;
	d->sink = sink;
	d->ctx = ctx;
	/* gzip header: deflate, no flags, no time, no extra flags, OS Unix */
	static const uint8_t header[10] = { 0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3 };
	for (size_t i = 0; i < sizeof header; i++)
		put_byte(d, header[i]);
	/* one fixed-Huffman block that runs until deflate_finish: BFINAL 0, BTYPE 01 */
	put_bits(d, 0, 1);
	put_bits(d, 1, 2);
}

int deflate_write(struct deflate *d, const void *p, size_t n)
{
	const uint8_t *src = p;
	uint32_t c = ~d->crc;
	for (size_t i = 0; i < n; i++)
		c = d->crc_table[(c ^ src[i]) & 0xff] ^ (c >> 8);
	d->crc = ~c;
	d->isize += (uint32_t)n; /* modulo 2^32, as gzip's ISIZE */
	while (n > 0 && !d->err) {
		if (d->len == sizeof d->win) {
			code_window(d, 0);
			slide(d);
		}
		size_t room = sizeof d->win - d->len;
		size_t k = n < room ? n : room;
		memcpy(d->win + d->len, src, k);
		d->len += k;
		src += k;
		n -= k;
	}
	return d->err;
}

int deflate_finish(struct deflate *d)
{
	code_window(d, 1);
	put_sym(d, SYM_END);
	/* an empty final block: BFINAL 1, BTYPE 01, end of block */
	put_bits(d, 1, 1);
	put_bits(d, 1, 2);
	put_sym(d, SYM_END);
	if (d->nbits > 0)
		put_bits(d, 0, 8 - d->nbits);
	for (int i = 0; i < 4; i++)
		put_byte(d, (uint8_t)(d->crc >> (8 * i)));
	for (int i = 0; i < 4; i++)
		put_byte(d, (uint8_t)(d->isize >> (8 * i)));
	flush_out(d);
	return d->err;
}

uint32_t deflate_crc32(uint32_t crc, const void *p, size_t n)
{
	const uint8_t *b = p;
	uint32_t c = ~crc;
	for (size_t i = 0; i < n; i++) {
		c ^= b[i];
		for (int k = 0; k < 8; k++)
			c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
	}
	return ~c;
}
