/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib_heapv2.c - unit test of the in-process heap_v2 writer (profile/inproc/heapv2_write.c): the
 * exact bytes written for a synthetic dump_source (pre-compensated counts, frame 0 minus
 * one, omitted empty stacks, maps and metadata), exact counts at R = 1, and that jeprof's
 * formula (unbias_jeprof) maps the printed pairs back to the unbiased totals within the
 * rounding of the printed integers.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../../base/outbuf.h"
#include "../../profile/inproc/dumpsrc.h"
#include "../../profile/inproc/heapv2_write.h"
#include "../../profile/inproc/unbias.h"
#include "check.h"

static struct dump_stack stacks[8];
static size_t nstacks;

static int each(const struct dump_source *src, int (*fn)(void *, const struct dump_stack *),
                void *ctx)
{
	(void)src;
	for (size_t i = 0; i < nstacks; i++) {
		int r = fn(ctx, &stacks[i]);
		if (r)
			return r;
	}
	return 0;
}

static double w(double s, double R)
{
	return 1.0 / -expm1(-s / R);
}

static const uintptr_t pcs_a[] = {0x401001, 0x402000, 0x403000};
static const uintptr_t pcs_b[] = {0x7f0000001235};
static const uintptr_t pcs_c[] = {0x500000, 0x600000};
static const uintptr_t pcs_d[] = {0x900000};

static const char maps_text[] =
	"00400000-00401000 r--p 00000000 08:01 42                       /usr/bin/app\n"
	"00401000-00405000 r-xp 00001000 08:01 42                       /usr/bin/app\n";
static const uint8_t bid[] = {0xde, 0xad, 0x00, 0x01};

static void source(struct dump_source *src, uint64_t R)
{
	static struct dump_mapping maps[2];
	memset(src, 0, sizeof *src);
	memset(maps, 0, sizeof maps);
	maps[0].start = 0x401000;
	maps[0].limit = 0x405000;
	maps[0].offset = 0x1000;
	maps[0].path = "/usr/bin/app";
	maps[0].build_id = bid;
	maps[0].build_id_len = sizeof bid;
	maps[1].start = 0x7f0000000000;
	maps[1].limit = 0x7f0000010000;
	maps[1].path = "/gone/libx.so";
	maps[1].unloaded = 1;
	src->sample_period = R;
	src->accum = 1;
	src->time_ns = 1700000000123456789;
	src->start_time_ns = 1700000000000000000;
	src->pid = 4242;
	src->exe_path = "/usr/bin/app";
	src->cmdline = "app --flag x";
	src->trigger = "final";
	src->maps_text = maps_text;
	src->maps_len = sizeof maps_text - 1;
	src->mappings = maps;
	src->nmappings = 2;
	src->for_each_stack = each;
}

static size_t render(const struct dump_source *src, char *buf, size_t cap)
{
	struct outbuf ob;
	outbuf_init(&ob, buf, cap - 1, -1);
	CHECK(heapv2_write(src, &ob) == 0);
	CHECK(!ob.truncated);
	buf[ob.len] = 0;
	return ob.len;
}

int main(void)
{
	const double R = 524288;
	struct dump_source src;
	char out[8192];

	/* A: one live sample of 1000 bytes; B: two of 64 and one of 1e6 (mixed sizes);
	   C: nothing live, three cumulative allocations of 4096; D: all zero (omitted) */
	nstacks = 4;
	memset(stacks, 0, sizeof stacks);
	stacks[0] = (struct dump_stack){pcs_a, 3, w(1000, R), 1000 * w(1000, R), 0, 0, 1, 0, 0};
	stacks[1] = (struct dump_stack){pcs_b, 1, 2 * w(64, R) + w(1e6, R),
	                                128 * w(64, R) + 1e6 * w(1e6, R), 0, 0, 3, 0, 0};
	stacks[2] = (struct dump_stack){pcs_c, 2, 0, 0, 3 * w(4096, R), 3 * 4096 * w(4096, R), 0, 0, 0};
	stacks[3] = (struct dump_stack){pcs_d, 1, 0, 0, 0, 0, 0, 0, 0};
	source(&src, (uint64_t)R);
	render(&src, out, sizeof out);
	static const char expect[] =
		"heap_v2/524288\n"
		"  t*: 5: 851 [3: 12288]\n"
		"@ 0x401000 0x402000 0x403000\n"
		"  t*: 1: 1000 [0: 0]\n"
		"@ 0x7f0000001234\n"
		"  t*: 4: 575 [0: 0]\n"
		"@ 0x4fffff 0x600000\n"
		"  t*: 0: 0 [3: 12288]\n"
		"\n"
		"MAPPED_LIBRARIES:\n"
		"00400000-00401000 r--p 00000000 08:01 42                       /usr/bin/app\n"
		"00401000-00405000 r-xp 00001000 08:01 42                       /usr/bin/app\n"
		"# heaptap: version=0.1.0\n"
		"# heaptap: pid=4242\n"
		"# heaptap: time_ns=1700000000123456789\n"
		"# heaptap: start_time_ns=1700000000000000000\n"
		"# heaptap: period=524288\n"
		"# heaptap: samples=0\n"
		"# heaptap: dropped_samples=0\n"
		"# heaptap: dropped_bytes=0\n"
		"# heaptap: truncated_samples=0\n"
		"# heaptap: truncated_bytes=0\n"
		"# heaptap: unwind_failed=0\n"
		"# heaptap: trigger=final\n"
		"# heaptap: exe=/usr/bin/app\n"
		"# heaptap: cmdline=app --flag x\n"
		"# heaptap: mapping start=0x401000 limit=0x405000 offset=0x1000 build_id=dead0001 "
		"unloaded=0 path=/usr/bin/app\n"
		"# heaptap: mapping start=0x7f0000000000 limit=0x7f0000010000 offset=0x0 build_id=- "
		"unloaded=1 path=/gone/libx.so\n";
	if (strcmp(out, expect) != 0) {
		fprintf(stderr, "heap_v2 output differs; got:\n%s", out);
		failures++;
	}

	/* R = 1: exact counts */
	nstacks = 1;
	stacks[0] = (struct dump_stack){pcs_a, 3, 3, 300, 5, 700, 3, 0, 0};
	source(&src, 1);
	render(&src, out, sizeof out);
	CHECK(strncmp(out, "heap_v2/1\n  t*: 3: 300 [5: 700]\n@ 0x401000 0x402000 0x403000\n"
	                   "  t*: 3: 300 [5: 700]\n\nMAPPED_LIBRARIES:\n", 96) == 0);

	/* R = 1 with small objects: pre-compensated, so that jeprof's formula (which it applies
	   at heap_v2/1 too) gives the exact counts back; 1-byte objects would read +58 % */
	for (int size = 1; size <= 16; size++) {
		uint64_t o, b;
		double C2, S2;
		unbias_precompensate(1e6, 1e6 * size, 1, &o, &b);
		unbias_jeprof((double)o, (double)b, 1, &C2, &S2);
		CHECK(fabs(C2 - 1e6) <= 1e6 * 0.001 && fabs(S2 - 1e6 * size) <= 1e6 * size * 0.001,
		      "size %d: %.0f objects, %.0f bytes", size, C2, S2);
	}

	/* round trip through jeprof's formula, for many (count, size) mixes */
	for (int k = 1; k <= 200; k++) {
		double s1 = 8.0 * k, s2 = 1000.0 * k * k;
		double C = k * w(s1, R) + (k % 3) * w(s2, R);
		double S = k * s1 * w(s1, R) + (k % 3) * s2 * w(s2, R);
		uint64_t o, b;
		unbias_precompensate(C, S, (uint64_t)R, &o, &b);
		double C2, S2;
		unbias_jeprof((double)o, (double)b, (uint64_t)R, &C2, &S2);
		/* printed integers are rounded: objects by up to 0.5 in o, bytes by 0.5 in b */
		double tol = 0.5 / (double)o + 0.5 / (double)b + 1e-9;
		CHECK(o >= 1 && b >= 1);
		CHECK(fabs(C2 - C) <= C * 2 * tol);
		CHECK(fabs(S2 - S) <= S * 2 * tol);
		/* a single size is exact up to rounding of integers */
		unbias_precompensate(k * w(s2, R), k * s2 * w(s2, R), (uint64_t)R, &o, &b);
		unbias_jeprof((double)o, (double)b, (uint64_t)R, &C2, &S2);
		CHECK(fabs(C2 - k * w(s2, R)) <= k * w(s2, R) * (0.5 / (double)o + 1e-6));
	}
	/* the heap_v2_write_counts helper prints the same pair */
	{
		char line[128];
		struct outbuf ob;
		outbuf_init(&ob, line, sizeof line - 1, -1);
		heapv2_write_counts(&ob, 524288, w(1000, R), 1000 * w(1000, R), 0, 0);
		line[ob.len] = 0;
		CHECK(strcmp(line, "  t*: 1: 1000 [0: 0]\n") == 0);
	}
	/* writing through a file descriptor: truncation is an error, not silence */
	{
		char small[16];
		struct outbuf ob;
		outbuf_init(&ob, small, sizeof small, -1);
		heapv2_write(&src, &ob);
		CHECK(ob.truncated == 1);
	}

	if (failures)
		fprintf(stderr, "lib_heapv2: %d failure(s)\n", failures);
	else
		printf("lib_heapv2: ok\n");
	return failures != 0;
}
