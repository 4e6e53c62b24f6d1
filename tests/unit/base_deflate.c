/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * base_deflate.c - unit test of the collector's own gzip compressor (base/deflate.c): buffers
 * of every kind (empty, one byte, random, runs, text, a real pprof profile, sizes across the
 * window slides) written in chunks of varying size must inflate with zlib to the same bytes,
 * with gzip's CRC-32 and size checked by zlib and by `gzip -t`/`gzip -dc`; the profile must
 * shrink at least 4x; a failing sink's error is returned and sticks. Not a test of zlib.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "../../base/deflate.h"
#include "check.h"

struct grow {
	uint8_t *p;
	size_t len, cap;
	int fail_after; /* > 0: the n-th sink call fails */
};

static int sink(void *ctx, const uint8_t *p, size_t n)
{
	struct grow *g = ctx;
	if (g->fail_after > 0 && --g->fail_after == 0)
		return -ENOSPC;
	if (g->len + n > g->cap) {
		g->cap = (g->len + n) * 2;
		g->p = realloc(g->p, g->cap);
	}
	memcpy(g->p + g->len, p, n);
	g->len += n;
	return 0;
}

static struct deflate *dz;

/* Compresses in[0..n) in chunks of chunk bytes (0: all at once) into *out. */
static int compress_buf(struct grow *out, const uint8_t *in, size_t n, size_t chunk)
{
	deflate_init(dz, sink, out);
	size_t off = 0;
	while (off < n) {
		size_t k = chunk && n - off > chunk ? chunk : n - off;
		int rc = deflate_write(dz, in + off, k);
		if (rc)
			return rc;
		off += k;
	}
	return deflate_finish(dz);
}

/* Inflates a gzip member with zlib; returns the length or -1. */
static long inflate_buf(const uint8_t *gz, size_t n, uint8_t *out, size_t cap)
{
	z_stream zs;
	memset(&zs, 0, sizeof zs);
	if (inflateInit2(&zs, 16 + 15) != Z_OK)
		return -1;
	zs.next_in = (Bytef *)(uintptr_t)gz;
	zs.avail_in = (uInt)n;
	zs.next_out = out;
	zs.avail_out = (uInt)cap;
	int zr = inflate(&zs, Z_FINISH);
	long len = zr == Z_STREAM_END && zs.avail_in == 0 ? (long)zs.total_out : -1;
	inflateEnd(&zs);
	return len;
}

static int round_trip(const char *what, const uint8_t *in, size_t n, size_t chunk, size_t *zlen)
{
	struct grow out = { 0 };
	int rc = compress_buf(&out, in, n, chunk);
	CHECK(rc == 0, "%s: deflate returned %d", what, rc);
	uint8_t *back = malloc(n + 1);
	long got = inflate_buf(out.p, out.len, back, n + 1);
	int ok = got == (long)n && memcmp(back, in, n) == 0;
	CHECK(ok, "%s (%zu bytes, chunks of %zu): zlib inflated %ld bytes%s", what, n, chunk, got,
	      got == (long)n ? ", different" : "");
	CHECK(out.len >= 18 && out.p[0] == 0x1f && out.p[1] == 0x8b, "%s: no gzip header", what);
	if (out.len >= 8) {
		uint32_t crc = 0, isize = 0;
		for (int i = 0; i < 4; i++) {
			crc |= (uint32_t)out.p[out.len - 8 + i] << (8 * i);
			isize |= (uint32_t)out.p[out.len - 4 + i] << (8 * i);
		}
		CHECK(crc == (uint32_t)crc32(0, in, (uInt)n) && crc == deflate_crc32(0, in, n),
		      "%s: crc %08x", what, crc);
		CHECK(isize == (uint32_t)n, "%s: isize %u", what, isize);
	}
	if (zlen)
		*zlen = out.len;
	free(back);
	free(out.p);
	return ok;
}

/* `gzip -dc` gives back the same bytes. */
static void with_gzip(const char *what, const uint8_t *in, size_t n)
{
	struct grow out = { 0 };
	CHECK(compress_buf(&out, in, n, 4096) == 0, "%s", what);
	char gzpath[] = "/tmp/heaptap-deflate-XXXXXX";
	int fd = mkstemp(gzpath);
	CHECK(fd >= 0, "mkstemp");
	if (fd < 0)
		return;
	CHECK(write(fd, out.p, out.len) == (ssize_t)out.len, "write");
	close(fd);
	char cmd[256];
	snprintf(cmd, sizeof cmd, "gzip -t < %s && gzip -dc < %s", gzpath, gzpath);
	FILE *f = popen(cmd, "r");
	CHECK(f != NULL, "popen gzip");
	uint8_t *back = malloc(n + 1);
	size_t got = f ? fread(back, 1, n + 1, f) : 0;
	int st = f ? pclose(f) : -1;
	CHECK(st == 0 && got == n && memcmp(back, in, n) == 0, "%s: gzip -dc exit %d, %zu bytes", what,
	      st, got);
	unlink(gzpath);
	free(back);
	free(out.p);
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)rng;
}

/* The decompressed bytes of a gzip file (a real profile). */
static uint8_t *read_gunzip(const char *path, size_t *n)
{
	gzFile g = gzopen(path, "rb");
	if (!g)
		return NULL;
	size_t cap = 1 << 20, len = 0;
	uint8_t *p = malloc(cap);
	int r;
	while ((r = gzread(g, p + len, (unsigned)(cap - len))) > 0) {
		len += (size_t)r;
		if (len == cap)
			p = realloc(p, cap *= 2);
	}
	gzclose(g);
	*n = len;
	return p;
}

int main(void)
{
	dz = malloc(sizeof *dz);
	static const size_t chunks[] = { 0, 1, 7, 4096, 65536 };

	round_trip("empty", (const uint8_t *)"", 0, 0, NULL);
	round_trip("one byte", (const uint8_t *)"x", 1, 0, NULL);
	round_trip("abc", (const uint8_t *)"abcabcabcabcabc", 15, 1, NULL);

	/* sizes around the window (32 KiB) and the buffer (64 KiB), in several chunkings */
	size_t big = 700000;
	uint8_t *buf = malloc(big);
	for (int kind = 0; kind < 4; kind++) {
		for (size_t i = 0; i < big; i++) {
			uint32_t r = next_rand();
			switch (kind) {
			case 0: buf[i] = (uint8_t)r; break;                                /* incompressible */
			case 1: buf[i] = (uint8_t)(i / 1000);  break;                     /* long runs */
			case 2: buf[i] = "heap profile "[i % 13] ^ (r % 97 == 0); break;  /* text, some noise */
			default: buf[i] = (uint8_t)(r % 5 == 0 ? r >> 8 : buf[i > 40000 ? i - 32768 - (r & 7) : i / 2]); /* matches at the window's edge */
			}
		}
		static const size_t sizes[] = { 2, 3, 258, 259, 32767, 32768, 32769, 65536, 65537, 98304 + 261, 700000 };
		for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
			for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
				char what[64];
				snprintf(what, sizeof what, "kind %d", kind);
				round_trip(what, buf, sizes[s], chunks[c], NULL);
			}
	}
	/* random lengths, random contents from a small alphabet */
	for (int t = 0; t < 200; t++) {
		size_t n = next_rand() % 5000;
		unsigned alpha = 1 + next_rand() % 8;
		for (size_t i = 0; i < n; i++)
			buf[i] = (uint8_t)(next_rand() % alpha);
		round_trip("fuzz", buf, n, 1 + next_rand() % 300, NULL);
	}
	with_gzip("text", buf, 5000);

	/* real profiles: the golden set's dumps (jemalloc, gperftools, tcmalloc text) and Go's
	   protobuf heap profile, one after the other */
	static const char *const golden[] = {
		"tests/golden/go_heap.pb.gz", "tests/golden/jemalloc_threads.heap",
		"tests/golden/jemalloc_default.heap", "tests/golden/gperftools_heapprofile.heap",
		"tests/golden/tcmalloc_sample.heap", "tests/golden/tcmalloc_growth.heap",
	};
	size_t plen = 0, zlen = 0;
	uint8_t *prof = malloc(1 << 20);
	for (size_t i = 0; i < sizeof golden / sizeof golden[0]; i++) {
		size_t n = 0;
		uint8_t *p = read_gunzip(golden[i], &n); /* gzread passes plain files through */
		CHECK(p && n > 500 && plen + n <= (1 << 20), "cannot read %s", golden[i]);
		if (p && plen + n <= (1 << 20)) {
			memcpy(prof + plen, p, n);
			plen += n;
		}
		free(p);
	}
	round_trip("golden profiles", prof, plen, 4096, &zlen);
	printf("golden profiles: %zu -> %zu bytes (%.1fx)\n", plen, zlen, (double)plen / (double)zlen);
	CHECK(zlen * 4 <= plen, "profiles compressed only %zu -> %zu", plen, zlen);
	with_gzip("golden profiles", prof, plen);

	/* a sink that fails: the error comes back, from write or finish, and stays */
	struct grow out = { 0 };
	out.fail_after = 2;
	deflate_init(dz, sink, &out);
	int rc = 0;
	for (int i = 0; i < 100 && rc == 0; i++)
		rc = deflate_write(dz, buf, 5000);
	CHECK(rc == -ENOSPC, "failing sink: write returned %d", rc);
	CHECK(deflate_finish(dz) == -ENOSPC, "failing sink: finish");
	free(out.p);

	free(prof);
	free(buf);
	free(dz);
	return check_finish("base_deflate");
}
