/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * profile_legacy.c - unit test of the `heap profile:` reader: every header variant picks
 * jeprof's scaling (none, v1 uniform with period/2, v2 Poisson, the 128 KiB default), the
 * numbers are checked against hand-computed values, plus comments, maps and error messages.
 * The totals of real gperftools/tcmalloc/Go files are checked in profile_golden.c.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../../profile/model.h"
#include "../../profile/reader.h"
#include "check.h"



static int near(double a, double b)
{
	return fabs(a - b) <= 1e-9 * fabs(b) + 1e-9;
}

/* One record "4: 400 [10: 1000] @ 0x10 0x21" under the given header; returns the 4 values. */
static int one(const char *header, double v[PV_COUNT], struct profile *p)
{
	char text[512], err[256];
	snprintf(text, sizeof text, "%s\n   4:    400 [  10:   1000] @ 0x10 0x21\n", header);
	profile_init(p);
	int rc = profile_read_mem((const uint8_t *)text, strlen(text), "x.heap", p, err, sizeof err);
	if (rc != 0 || p->nsamples != 1) {
		fprintf(stderr, "%s: %s (%zu samples)\n", header, err, p->nsamples);
		failures++;
		return -1;
	}
	memcpy(v, p->samples[0].v, sizeof(double) * PV_COUNT);
	return 0;
}

/* jeprof v1: ratio = (s/n)/A; if ratio < 1 both divided by ratio. */
static void v1(double A, double n, double s, double *on, double *os)
{
	double ratio = (s / n) / A;
	*on = ratio < 1 ? n / ratio : n;
	*os = ratio < 1 ? s / ratio : s;
}

static void v2(double R, double n, double s, double *on, double *os)
{
	double f = 1 / (1 - exp(-(s / n) / R));
	*on = n * f;
	*os = s * f;
}

static void expect(const char *header, int alg, double A, const char *format, uint64_t period)
{
	double v[PV_COUNT], w[PV_COUNT];
	struct profile p;
	if (one(header, v, &p) != 0) {
		profile_release(&p);
		return;
	}
	if (alg == 0) {
		w[0] = 4, w[1] = 400, w[2] = 10, w[3] = 1000;
	} else if (alg == 1) {
		v1(A, 4, 400, &w[0], &w[1]);
		v1(A, 10, 1000, &w[2], &w[3]);
	} else {
		v2(A, 4, 400, &w[0], &w[1]);
		v2(A, 10, 1000, &w[2], &w[3]);
	}
	for (int k = 0; k < PV_COUNT; k++)
		CHECK(near(v[k], w[k]), "%s: value %d: %.6f, want %.6f", header, k, v[k], w[k]);
	CHECK(strcmp(p.format, format) == 0, "%s: format '%s'", header, p.format);
	CHECK(p.period == period, "%s: period %llu", header, (unsigned long long)p.period);
	CHECK(p.samples[0].naddrs == 2 && p.samples[0].addrs[0] == 0x10 && p.samples[0].addrs[1] == 0x20,
	      "%s: callers -1", header);
	CHECK(p.has_alloc == 1 && p.jemalloc_frames == 1, "%s: flags", header);
	profile_release(&p);
}

static void test_headers(void)
{
	/* gperftools HEAPPROFILE: not sampled */
	expect("heap profile:    4:   400 [ 10:  1000] @ heapprofile", 0, 0, "heapprofile", 0);
	/* tcmalloc GetHeapSample: Poisson with R */
	expect("heap profile:    4:   400 [ 10:  1000] @ heap_v2/524288", 2, 524288, "heap_v2", 524288);
	expect("heap profile:    4:   400 [ 10:  1000] @ heapz_v2/4096", 2, 4096, "heapz_v2", 4096);
	/* version 1 and Go's debug=1: uniform, period/2 */
	expect("heap profile: 4: 400 [10: 1000] @ heap/1048576", 1, 524288, "heap", 524288);
	expect("heap profile: 4: 400 [10: 1000] @ heap/256", 1, 128, "heap", 128);
	/* a type without a period: the 128 KiB default */
	expect("heap profile: 4: 400 [10: 1000] @ heap", 1, 131072, "heap", 131072);
	expect("heap profile: 4: 400 [10: 1000] @ heap_v2", 2, 131072, "heap_v2", 131072);
	/* growth (no 'heap' in the type): not scaled */
	expect("heap profile: 4: 400 [10: 1000] @ growth", 0, 0, "growth", 0);
	/* no type: v1 only when the header pairs are equal */
	expect("heap profile: 4: 400 [4: 400]", 1, 131072, "heap", 131072);
	expect("heap profile: 4: 400 [10: 1000]", 0, 0, "heap", 0);
	/* a header jeprof's regex does not match: records still read, unscaled */
	expect("heap profile: garbage", 0, 0, "heap", 0);
}

static void test_body(void)
{
	const char *text = "%warn x\n"
	                   "--- heap\n"
	                   "heap profile: 1: 2 [3: 4] @ heap/1048576\n"
	                   "0: 0 [1: 131072] @ 0xA0 0xB1\n"
	                   "2: 1048576 [2: 1048576] @ 0xa0 0xb1\n"
	                   "#\t0xa0\tmain.f+0x10\t/src/main.go:10\n"
	                   "not a record\n"
	                   "1: 8 [1: 8] @\n"
	                   "\n"
	                   "# runtime.MemStats\n"
	                   "MAPPED_LIBRARIES:\n"
	                   "00400000-00452000 r-xp 00000000 08:02 173521      /usr/bin/g\n"
	                   "garbage in the map\n"
	                   "00452000-00460000: /usr/lib/compact.so\n";
	struct profile p;
	char err[256];
	profile_init(&p);
	int rc = profile_read_mem((const uint8_t *)text, strlen(text), "g.heap", &p, err, sizeof err);
	CHECK(rc == 0, "%s", err);
	CHECK(p.nsamples == 1, "upper/lower case hex is one stack: %zu", p.nsamples);
	if (p.nsamples == 1) {
		/* (0,0) is left as is (perl would die dividing by 0); (1, 131072): ratio 0.25 -> x4;
		   (2, 1 MiB): ratio 1 -> unscaled */
		CHECK(p.samples[0].v[PV_INUSE_OBJS] == 2 && p.samples[0].v[PV_INUSE_BYTES] == 1048576, "inuse");
		CHECK(p.samples[0].v[PV_ALLOC_OBJS] == 4 + 2 && p.samples[0].v[PV_ALLOC_BYTES] == 524288 + 1048576,
		      "alloc %f %f", p.samples[0].v[PV_ALLOC_OBJS], p.samples[0].v[PV_ALLOC_BYTES]);
	}
	CHECK(p.skipped_lines == 4, "comments, the junk line and the record without frames: %lu", p.skipped_lines);
	CHECK(p.nmaps == 2 && strcmp(p.maps[1].path, "/usr/lib/compact.so") == 0 && p.maps[1].offset == 0,
	      "maps incl. compact form: %zu", p.nmaps);
	profile_release(&p);

	/* gperftools' "--- Memory map: ---" with build= substitution */
	const char *t2 = "heap profile: 1: 8 [1: 8] @ heapprofile\n"
	                 "1: 8 [1: 8] @ 0x401000\n"
	                 "--- Memory map: ---\n"
	                 "  build=/opt/b\n"
	                 "00400000-00452000 r-xp 00000000 08:02 1 $build/bin/p\n";
	profile_init(&p);
	rc = profile_read_mem((const uint8_t *)t2, strlen(t2), "m.heap", &p, err, sizeof err);
	CHECK(rc == 0 && p.nmaps == 1 && strcmp(p.maps[0].path, "/opt/b/bin/p") == 0, "build=: %s",
	      p.nmaps ? p.maps[0].path : err);
	profile_release(&p);
}

static void test_errors(void)
{
	static const char *const cases[][2] = {
		{"heap profile: 1: 1 [1: 1] @ heapprofile\n1: 1 [1 1] @ 0x1\n", "e.heap:2: malformed record"},
		{"heap profile: 1: 1 [1: 1] @ heapprofile\n1: 1 [1: 1] @ 0x1 qq\n", "e.heap:2: bad address 'qq'"},
		{"heap profile: 1: 1 [1: 1] @ heapprofile\n1: 1 [1: 1] @ 0x1\n2: 3 [", "e.heap:3: truncated record"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct profile p;
		char err[256] = "";
		profile_init(&p);
		int rc = profile_read_mem((const uint8_t *)cases[i][0], strlen(cases[i][0]), "e.heap", &p, err, sizeof err);
		CHECK(rc == -1 && strcmp(err, cases[i][1]) == 0, "case %zu: '%s'", i, err);
		profile_release(&p);
	}
}

int main(void)
{
	test_headers();
	test_body();
	test_errors();
	return check_finish("profile_legacy");
}
