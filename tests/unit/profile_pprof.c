/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * profile_pprof.c - unit test of the pprof path: pbwrite's wire encoding, pprof_write of a
 * synthetic dump_source read back by pprof_read (every value, address, mapping and comment
 * compared), the -ENOMEM paths, corrupt and foreign inputs (errors with byte offsets, never a
 * crash), and legacy_write's text and pre-compensation. Not a test of go tool pprof (see
 * tests/e2e/pprof_gotool.sh).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "../../base/outbuf.h"
#include "../../profile/inproc/legacy_write.h"
#include "../../profile/model.h"
#include "../../profile/inproc/pbwrite.h"
#include "../../profile/pprof_read.h"
#include "../../profile/inproc/pprof_write.h"
#include "../../profile/symtab.h"
#include "check.h"



/* ---- a synthetic dump source ---- */

struct synth {
	size_t nstacks;
	uint32_t depth_max;
	uintptr_t *pcs;     /* nstacks * depth_max */
	struct dump_stack *stacks;
};

static uint64_t rng_state = 0x243f6a8885a308d3ull;
static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static const uint8_t bid_main[20] = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0xff };
static struct dump_mapping maps[2] = {
	{ 0x400000, 0x500000, 0x1000, "/usr/bin/prog", bid_main, 20, "r-xp", 0 },
	{ 0x7f0000000000, 0x7f0000100000, 0, "/lib/libc.so.6", NULL, 0, "r-xp", 0 },
};

static void synth_init(struct synth *s, size_t nstacks, uint32_t depth_max, int accum)
{
	s->nstacks = nstacks;
	s->depth_max = depth_max;
	s->pcs = calloc(nstacks * depth_max, sizeof *s->pcs);
	s->stacks = calloc(nstacks, sizeof *s->stacks);
	for (size_t i = 0; i < nstacks; i++) {
		struct dump_stack *st = &s->stacks[i];
		uintptr_t *pc = s->pcs + i * depth_max;
		st->depth = 1 + (uint32_t)(rng() % depth_max);
		pc[0] = 0x400100 + (uintptr_t)i * 16; /* a distinct leaf per stack */
		for (uint32_t k = 1; k < st->depth; k++) {
			/* shared callers, some in libc, one outside any mapping */
			uint64_t r = rng() % 64;
			pc[k] = r < 48 ? 0x410000 + r * 32 : r < 63 ? 0x7f0000001000 + r * 8 : 0x900000;
		}
		st->pcs = pc;
		/* what a sampler produces: k sampled objects of one size, each standing for
		   1 / (1 - exp(-size/R)) allocations */
		double size = (double)(8 + rng() % 100000);
		double weight = 1.0 / -expm1(-size / 524288.0);
		uint64_t k = 1 + rng() % 5;
		st->live_objs = (double)k * weight;
		st->live_bytes = st->live_objs * size;
		st->alloc_objs = accum ? (double)(k + rng() % 3) * weight : 0;
		st->alloc_bytes = accum ? st->alloc_objs * size : 0;
		st->live_samples = k;
	}
}

static void synth_release(struct synth *s)
{
	free(s->pcs);
	free(s->stacks);
}

static int synth_each(const struct dump_source *src,
                      int (*fn)(void *ctx, const struct dump_stack *st), void *ctx)
{
	const struct synth *s = src->priv;
	for (size_t i = 0; i < s->nstacks; i++) {
		int rc = fn(ctx, &s->stacks[i]);
		if (rc)
			return rc;
	}
	return 0;
}

static const char maps_text[] =
	"00400000-00500000 r-xp 00001000 08:01 1234 /usr/bin/prog\n"
	"7f0000000000-7f0000100000 r-xp 00000000 08:01 99 /lib/libc.so.6\n";

static void source_init(struct dump_source *src, struct synth *s, int accum)
{
	memset(src, 0, sizeof *src);
	src->sample_period = 524288;
	src->accum = accum;
	src->time_ns = 1700000000123456789ll;
	src->start_time_ns = 1700000000000000000ll;
	src->pid = 4242;
	src->exe_path = "/usr/bin/prog";
	src->cmdline = "/usr/bin/prog --flag value";
	src->trigger = "final";
	src->maps_text = maps_text;
	src->maps_len = sizeof maps_text - 1;
	src->mappings = maps;
	src->nmappings = 2;
	src->for_each_stack = synth_each;
	src->priv = s;
}

static uint8_t *slurp_fd(int fd, size_t *n)
{
	off_t end = lseek(fd, 0, SEEK_END);
	lseek(fd, 0, SEEK_SET);
	uint8_t *b = malloc(end > 0 ? (size_t)end : 1);
	size_t got = 0;
	while (got < (size_t)end) {
		ssize_t r = read(fd, b + got, (size_t)end - got);
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	*n = got;
	return b;
}

static uint8_t *write_to_bytes(const struct dump_source *src, size_t *n, int *rc)
{
	char path[] = "/tmp/heaptap-pprof-test-XXXXXX";
	int fd = mkstemp(path);
	unlink(path);
	*rc = pprof_write(src, fd);
	uint8_t *b = slurp_fd(fd, n);
	close(fd);
	return b;
}

/* ---- tests ---- */

static void test_pbwrite(void)
{
	uint8_t buf[512];
	struct pbwrite w;
	pbwrite_init(&w, buf, sizeof buf, NULL, NULL);
	pbwrite_varint(&w, 1, 150);              /* 08 96 01 */
	pbwrite_int64(&w, 2, -1);                /* 10 + ten bytes */
	pbwrite_string(&w, 3, "hi");             /* 1a 02 68 69 */
	size_t m = pbwrite_begin(&w, 4);         /* 22 len ... */
	for (int i = 0; i < 130; i++)
		pbwrite_raw(&w, "x", 1);             /* body of 130 bytes -> 2-byte length */
	pbwrite_end(&w, m);
	CHECK(pbwrite_finish(&w) == 0, "finish");
	static const uint8_t head[] = { 0x08, 0x96, 0x01, 0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	                                0xff, 0xff, 0xff, 0x01, 0x1a, 0x02, 'h', 'i', 0x22, 0x82, 0x01 };
	CHECK(w.len == sizeof head + 130, "len %zu", w.len);
	CHECK(memcmp(buf, head, sizeof head) == 0, "encoding differs");
	CHECK(buf[sizeof head] == 'x' && buf[w.len - 1] == 'x', "body moved wrongly");
	CHECK(pbwrite_varint_size(127) == 1 && pbwrite_varint_size(128) == 2 &&
	      pbwrite_varint_size(UINT64_MAX) == 10, "varint sizes");

	/* overflow is sticky and reported */
	uint8_t small[8];
	pbwrite_init(&w, small, sizeof small, NULL, NULL);
	pbwrite_string(&w, 1, "longer than eight bytes");
	CHECK(pbwrite_finish(&w) == -ENOSPC, "overflow not reported: %d", w.err);
}

static void test_roundtrip(int accum, size_t nstacks)
{
	struct synth s;
	struct dump_source src;
	synth_init(&s, nstacks, 40, accum);
	source_init(&src, &s, accum);
	size_t n;
	int rc;
	uint8_t *bytes = write_to_bytes(&src, &n, &rc);
	CHECK(rc == 0, "pprof_write returned %d", rc);
	CHECK(n > 20 && bytes[0] == 0x1f && bytes[1] == 0x8b, "not gzip (%zu bytes)", n);

	struct profile p;
	profile_init(&p);
	char err[256];
	rc = pprof_read(bytes, n, &p, err, sizeof err);
	CHECK(rc == 0, "pprof_read: %s", err);
	CHECK(p.nsamples == nstacks, "%zu samples, want %zu", p.nsamples, nstacks);
	CHECK(p.period == 524288, "period %llu", (unsigned long long)p.period);
	CHECK(p.time_ns == 1700000000123456789ll, "time");
	CHECK(p.pid == 4242, "pid %d", p.pid);
	CHECK(p.cmdline && !strcmp(p.cmdline, "/usr/bin/prog --flag value"), "cmdline");
	CHECK(p.exe_path && !strcmp(p.exe_path, "/usr/bin/prog"), "exe");
	CHECK(p.has_alloc == (accum && nstacks > 0), "has_alloc %d with accum %d", p.has_alloc, accum);
	CHECK(p.nmaps == 2, "%zu mappings", p.nmaps);
	if (p.nmaps == 2) {
		CHECK(p.maps[0].start == 0x400000 && p.maps[0].limit == 0x500000 &&
		      p.maps[0].offset == 0x1000 && !strcmp(p.maps[0].path, "/usr/bin/prog"), "mapping 0");
		CHECK(p.maps[0].build_id &&
		      !strcmp(p.maps[0].build_id, "deadbeef0102030405060708090a0b0c0d0e0fff"),
		      "build id %s", p.maps[0].build_id ? p.maps[0].build_id : "(null)");
		CHECK(p.maps[1].build_id == NULL || p.maps[1].build_id[0] == 0, "libc has no build id");
		CHECK(!strcmp(p.maps[1].path, "/lib/libc.so.6"), "mapping 1 path");
	}
	size_t bad = 0;
	for (size_t i = 0; i < p.nsamples && i < nstacks; i++) {
		const struct prof_sample *ps = &p.samples[i];
		const struct dump_stack *st = &s.stacks[i];
		int ok = ps->naddrs == st->depth;
		for (uint32_t k = 0; ok && k < st->depth; k++)
			ok = ps->addrs[k] == (uint64_t)st->pcs[k] - 1;
		ok = ok && ps->v[PV_INUSE_OBJS] == (double)(int64_t)st->live_objs;
		ok = ok && ps->v[PV_INUSE_BYTES] == (double)(int64_t)st->live_bytes;
		ok = ok && ps->v[PV_ALLOC_OBJS] == (double)(int64_t)st->alloc_objs;
		ok = ok && ps->v[PV_ALLOC_BYTES] == (double)(int64_t)st->alloc_bytes;
		if (!ok && bad++ < 3)
			fprintf(stderr, "sample %zu differs\n", i);
	}
	CHECK(bad == 0, "%zu samples differ", bad);
	CHECK(p.syms == NULL || symtab_count(p.syms) == 0, "unsymbolized profile carried symbols");
	profile_release(&p);

	/* corrupt inputs: every truncation of the protobuf, and bit flips, fail cleanly */
	if (nstacks <= 50) {
		struct profile q;
		/* the raw protobuf: read the gzip, re-encode without it by inflating through pprof_read
		   is not exposed, so truncate the gzip stream (exercises the inflate errors) */
		size_t step = n / 97 + 1;
		for (size_t cut = 0; cut < n; cut += step) {
			profile_init(&q);
			rc = pprof_read(bytes, cut, &q, err, sizeof err);
			CHECK(cut < 2 ? 1 : rc == -1, "truncated gzip at %zu accepted", cut);
			if (cut >= 2 && rc == -1)
				CHECK(!strncmp(err, "byte offset ", 12), "message '%s'", err);
			profile_release(&q);
		}
	}
	free(bytes);
	synth_release(&s);
}

/* Builds an uncompressed profile by hand to check the decoder's error paths. */
static size_t build_plain(uint8_t *buf, size_t cap, const char *type0, int bad_loc)
{
	struct pbwrite w;
	pbwrite_init(&w, buf, cap, NULL, NULL);
	size_t m = pbwrite_begin(&w, 1);
	pbwrite_varint(&w, 1, 1);
	pbwrite_varint(&w, 2, 2);
	pbwrite_end(&w, m);
	m = pbwrite_begin(&w, 1);
	pbwrite_varint(&w, 1, 3);
	pbwrite_varint(&w, 2, 4);
	pbwrite_end(&w, m);
	m = pbwrite_begin(&w, 2); /* sample */
	size_t k = pbwrite_begin(&w, 1);
	pbwrite_raw_varint(&w, 1);
	pbwrite_raw_varint(&w, 2);
	pbwrite_end(&w, k);
	k = pbwrite_begin(&w, 2);
	pbwrite_raw_varint(&w, 7);
	pbwrite_raw_varint(&w, 7000);
	pbwrite_end(&w, k);
	pbwrite_end(&w, m);
	m = pbwrite_begin(&w, 4); /* location 1, symbolized with an inline chain */
	pbwrite_varint(&w, 1, 1);
	pbwrite_varint(&w, 3, 0x1234);
	k = pbwrite_begin(&w, 4);
	pbwrite_varint(&w, 1, 1);
	pbwrite_varint(&w, 2, 10);
	pbwrite_end(&w, k);
	k = pbwrite_begin(&w, 4);
	pbwrite_varint(&w, 1, bad_loc ? 9 : 2);
	pbwrite_varint(&w, 2, 20);
	pbwrite_end(&w, k);
	pbwrite_end(&w, m);
	m = pbwrite_begin(&w, 4); /* location 2: no address, one line */
	pbwrite_varint(&w, 1, 2);
	k = pbwrite_begin(&w, 4);
	pbwrite_varint(&w, 1, 2);
	pbwrite_varint(&w, 2, 30);
	pbwrite_end(&w, k);
	pbwrite_end(&w, m);
	for (int f = 1; f <= 2; f++) {
		m = pbwrite_begin(&w, 5);
		pbwrite_varint(&w, 1, (uint64_t)f);
		pbwrite_varint(&w, 2, f == 1 ? 5 : 6);
		pbwrite_varint(&w, 4, 7);
		pbwrite_end(&w, m);
	}
	const char *strs[] = { "", type0, "count", "inuse_space", "bytes", "inlined_callee", "caller", "a.c" };
	for (size_t i = 0; i < 8; i++)
		pbwrite_string(&w, 6, strs[i]);
	pbwrite_varint(&w, 12, 4096);
	CHECK(pbwrite_finish(&w) == 0, "plain build");
	return w.len;
}

/* gzips in[0..n) as one member into out; returns its size. */
static size_t gzip_member(const uint8_t *in, size_t n, uint8_t *out, size_t cap)
{
	z_stream zs;
	memset(&zs, 0, sizeof zs);
	if (deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return 0;
	zs.next_in = (Bytef *)(uintptr_t)in;
	zs.avail_in = (uInt)n;
	zs.next_out = out;
	zs.avail_out = (uInt)cap;
	int zr = deflate(&zs, Z_FINISH);
	size_t got = cap - zs.avail_out;
	deflateEnd(&zs);
	return zr == Z_STREAM_END ? got : 0;
}

static void test_plain(void)
{
	uint8_t buf[1024];
	char err[256];
	struct profile p;
	size_t n = build_plain(buf, sizeof buf, "inuse_objects", 0);
	CHECK(pprof_read_sniff(buf, n), "sniff plain");
	static const char *const texts[] = { "heap_v2/524288\n", "heap profile:   1: 2 [ 3: 4] @ heap\n",
	                                     "--- symbol\nbinary=x\n", "%warn x\nheap_v2/1\n", "binary=/x\n",
	                                     "MAPPED_LIBRARIES:\n", "  t*: 1: 2 [0: 0]\n" };
	for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
		CHECK(!pprof_read_sniff((const uint8_t *)texts[i], strlen(texts[i])), "sniff text %zu", i);
	/* Go writes period_type (field 11, 'Z') and period first */
	static const uint8_t go_start[] = { 0x5a, 0x04, 0x08, 0x01, 0x10, 0x02, 0x60, 0x80, 0x80, 0x20, 0x0a };
	CHECK(pprof_read_sniff(go_start, sizeof go_start), "sniff go-style start");
	profile_init(&p);
	int rc = pprof_read(buf, n, &p, err, sizeof err);
	CHECK(rc == 0, "plain: %s", err);
	CHECK(p.nsamples == 1 && p.samples[0].naddrs == 2, "plain samples");
	CHECK(p.has_alloc == 0, "no alloc types");
	CHECK(p.period == 4096, "period");
	if (rc == 0 && p.nsamples == 1) {
		const struct prof_sample *s = &p.samples[0];
		CHECK(s->v[PV_INUSE_OBJS] == 7 && s->v[PV_INUSE_BYTES] == 7000, "values");
		CHECK(s->addrs[0] == 0x1234, "address 0 is used as is");
		CHECK(s->addrs[1] >= PPROF_READ_SYNTH_BASE, "synthetic address for location 2");
		const struct prof_symbol *sym = p.syms ? symtab_get(p.syms, 0x1234) : NULL;
		CHECK(sym && sym->nframes == 2, "inline chain");
		if (sym && sym->nframes == 2) {
			CHECK(!strcmp(sym->frames[0].func, "inlined_callee") && sym->frames[0].line == 10,
			      "frame 0 %s:%d", sym->frames[0].func, sym->frames[0].line);
			CHECK(!strcmp(sym->frames[1].func, "caller") && sym->frames[1].line == 20 &&
			      !strcmp(sym->frames[1].file, "a.c"), "frame 1");
		}
		sym = p.syms ? symtab_get(p.syms, s->addrs[1]) : NULL;
		CHECK(sym && sym->nframes == 1 && !strcmp(sym->frames[0].func, "caller"), "synthetic frames");
	}
	profile_release(&p);

	/* two concatenated gzip members holding the two halves read as the whole */
	{
		uint8_t gz[2048];
		size_t half = n / 2;
		size_t g1 = gzip_member(buf, half, gz, sizeof gz);
		size_t g2 = gzip_member(buf + half, n - half, gz + g1, sizeof gz - g1);
		CHECK(g1 > 0 && g2 > 0, "gzip members");
		profile_init(&p);
		rc = pprof_read(gz, g1 + g2, &p, err, sizeof err);
		CHECK(rc == 0 && p.nsamples == 1 && p.samples[0].v[PV_INUSE_BYTES] == 7000,
		      "two gzip members: rc %d '%s'", rc, err);
		profile_release(&p);
		profile_init(&p);
		rc = pprof_read(gz, g1, &p, err, sizeof err); /* the first member alone: cut inside a field */
		CHECK(rc == -1 && !strncmp(err, "byte offset ", 12), "first member alone: '%s'", err);
		profile_release(&p);
	}

	/* a CPU profile's "cpu" type is read as CPU time (profile.cpu) */
	n = build_plain(buf, sizeof buf, "cpu", 0);
	profile_init(&p);
	rc = pprof_read(buf, n, &p, err, sizeof err);
	CHECK(rc == 0 && p.cpu == 1, "cpu profile: rc %d cpu %d '%s'", rc, p.cpu, err);
	profile_release(&p);

	/* a profile of neither kind is refused with the type names */
	n = build_plain(buf, sizeof buf, "wall", 0);
	size_t n2 = n;
	/* rename inuse_space too: patch the string bytes in place */
	uint8_t *hit = memmem(buf, n2, "inuse_space", 11);
	if (hit)
		memcpy(hit, "samples_xyz", 11);
	profile_init(&p);
	rc = pprof_read(buf, n2, &p, err, sizeof err);
	CHECK(rc == -1 && strstr(err, "neither a heap nor a CPU profile (sample types: wall/count, samples_xyz/bytes)"),
	      "wall profile: rc %d '%s'", rc, err);
	profile_release(&p);

	/* a line naming an unknown function */
	n = build_plain(buf, sizeof buf, "inuse_objects", 1);
	profile_init(&p);
	rc = pprof_read(buf, n, &p, err, sizeof err);
	CHECK(rc == -1 && strstr(err, "unknown function id 9") && !strncmp(err, "byte offset ", 12),
	      "bad function: '%s'", err);
	profile_release(&p);

	/* every truncation and every single-byte corruption is handled without a crash */
	n = build_plain(buf, sizeof buf, "inuse_objects", 0);
	int accepted_trunc = 0;
	for (size_t cut = 1; cut < n; cut++) {
		profile_init(&p);
		rc = pprof_read(buf, cut, &p, err, sizeof err);
		if (rc == 0)
			accepted_trunc++;
		else
			CHECK(!strncmp(err, "byte offset ", 12) || !strncmp(err, "not a heap", 10),
			      "cut %zu: '%s'", cut, err);
		profile_release(&p);
	}
	/* a cut at a field boundary can still be a valid (smaller) profile, but not most cuts */
	CHECK(accepted_trunc < (int)n / 4, "%d truncations accepted", accepted_trunc);
	uint8_t copy[1024];
	for (size_t i = 0; i < n; i++) {
		memcpy(copy, buf, n);
		copy[i] ^= 0xa5;
		profile_init(&p);
		pprof_read(copy, n, &p, err, sizeof err);
		profile_release(&p);
	}
	/* a length running past the end names its offset */
	memcpy(copy, buf, n);
	copy[1] = 0xff; /* first sample_type claims 16383 bytes */
	copy[2] = 0x7f;
	profile_init(&p);
	rc = pprof_read(copy, n, &p, err, sizeof err);
	CHECK(rc == -1 && !strncmp(err, "byte offset 0: field 1: length 16383 exceeds", 44), "'%s'", err);
	profile_release(&p);
}

static void test_enomem(void)
{
	struct synth s;
	struct dump_source src;
	synth_init(&s, 10, 5, 0);
	source_init(&src, &s, 0);
	for (int which = 1; which <= 2; which++) {
		pprof_write_fail_mmap_after(which);
		size_t n;
		int rc;
		uint8_t *b = write_to_bytes(&src, &n, &rc);
		CHECK(rc == -ENOMEM, "mmap %d failing gave %d", which, rc);
		free(b);
	}
	pprof_write_fail_mmap_after(0);
	/* a write error is reported as -errno */
	CHECK(pprof_write(&src, -1) == -EBADF, "bad fd");
	synth_release(&s);
}

/* Go's per-record scaling (legacy_profile.go scaleHeapSample), to check the pre-images. */
static void go_scale(int64_t count, int64_t size, int64_t rate, double *c, double *b)
{
	double avg = (double)size / (double)count;
	double scale = 1 / (1 - exp(-avg / (double)rate));
	*c = (double)(int64_t)((double)count * scale);
	*b = (double)(int64_t)((double)size * scale);
}

static void test_legacy(void)
{
	struct synth s;
	struct dump_source src;
	synth_init(&s, 200, 6, 1);
	source_init(&src, &s, 1);
	size_t cap = 1 << 20;
	char *buf = malloc(cap);
	struct outbuf ob;
	outbuf_init(&ob, buf, cap, -1);
	legacy_write(&src, &ob);
	CHECK(!ob.truncated && !ob.err, "legacy output did not fit");
	buf[ob.len < cap ? ob.len : cap - 1] = 0;
	CHECK(!strncmp(buf, "heap profile: ", 14), "header");
	char *eol = strchr(buf, '\n');
	CHECK(eol && eol - buf > 20 && !strncmp(eol - 16, "@ heap_v2/524288", 16), "header type");
	CHECK(strstr(buf, "\nMAPPED_LIBRARIES:\n00400000-00500000 r-xp") != NULL, "maps section");

	/* each record, scaled the way go tool pprof scales it, gives back the unbiased values */
	char *line = eol ? eol + 1 : buf;
	size_t i = 0, bad = 0;
	double want_live = 0, got_live = 0;
	while (line && *line && *line != '\n' && i < s.nstacks) {
		long long n, b, an, ab;
		int used = 0;
		if (sscanf(line, " %lld: %lld [ %lld: %lld] @%n", &n, &b, &an, &ab, &used) != 4) {
			CHECK(0, "bad record line");
			break;
		}
		const struct dump_stack *st = &s.stacks[i];
		char want_addr[32];
		/* the leaf is written as return address - 1, like heap_v2's frame 0 */
		snprintf(want_addr, sizeof want_addr, " 0x%lx ", (unsigned long)st->pcs[0] - 1);
		CHECK(!strncmp(line + used, want_addr, strlen(want_addr)) ||
		          (st->depth == 1 && !strncmp(line + used, want_addr, strlen(want_addr) - 1)),
		      "record %zu leaf address", i);
		double c, by, ac, aby;
		go_scale(n, b, 524288, &c, &by);
		go_scale(an, ab, 524288, &ac, &aby);
		want_live += st->live_bytes;
		got_live += by;
		/* rounding the pre-image moves the result by about one average object at most */
		double avg = st->live_bytes / st->live_objs;
		if (fabs(by - st->live_bytes) > avg + 2 || fabs(c - st->live_objs) > 2 ||
		    fabs(aby - st->alloc_bytes) > avg + 2 || fabs(ac - st->alloc_objs) > 2) {
			if (bad++ < 3)
				fprintf(stderr, "record %zu: %g %g vs %g %g\n", i, c, by, st->live_objs, st->live_bytes);
		}
		line = strchr(line, '\n');
		if (line)
			line++;
		i++;
	}
	CHECK(i == s.nstacks, "%zu records, want %zu", i, s.nstacks);
	CHECK(bad == 0, "%zu records scale back wrongly", bad);
	CHECK(fabs(got_live - want_live) < want_live * 1e-3, "total %g vs %g", got_live, want_live);

	uint64_t po, pb;
	legacy_write_precompensate(1.0, 100.0, 524288, &po, &pb);
	CHECK(po == 0 && pb == 0, "a tiny stack rounds to nothing, %llu %llu", (unsigned long long)po,
	      (unsigned long long)pb);
	legacy_write_precompensate(2.0, 2.0 * 1048576, 524288, &po, &pb);
	CHECK(po == 2 && pb == (uint64_t)llround(2.0 * 1048576 * (1 - exp(-2.0))), "big objects");
	legacy_write_precompensate(3.0, 300.0, 1, &po, &pb);
	CHECK(po == 3 && pb == 300, "period 1 keeps values");
	free(buf);
	synth_release(&s);
}

int main(void)
{
	test_pbwrite();
	test_roundtrip(1, 0);
	test_roundtrip(1, 7);
	test_roundtrip(0, 50);
	test_roundtrip(1, 100000);
	test_plain();
	test_enomem();
	test_legacy();
	return check_finish("profile_pprof");
}
