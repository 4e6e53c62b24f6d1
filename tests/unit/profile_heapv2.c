/*
 * profile_heapv2.c - unit test of the heap_v2 reader: jeprof's per-line Poisson unsampling
 * (FORMATS.md §1.4.1 worked example), t* lines summed per stack, per-thread lines ignored,
 * caller-address fix, maps and heaptap metadata, and errors with file:line. Not a test of
 * the legacy or pprof readers.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../profile/heapv2_read.h"
#include "../../profile/model.h"
#include "../../profile/reader.h"

static int failures;

#define CHECK(cond, ...)                                                                      \
	do {                                                                                  \
		if (!(cond)) {                                                                \
			failures++;                                                           \
			fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__);                                         \
			fputc('\n', stderr);                                                  \
		}                                                                             \
	} while (0)

static int near(double a, double b, double rel)
{
	return fabs(a - b) <= rel * fabs(b) + 1e-9;
}

static int read_str(const char *text, struct profile *p, char *err, size_t errcap)
{
	return profile_read_mem((const uint8_t *)text, strlen(text), "mem.heap", p, err, errcap);
}

static const struct prof_sample *find_leaf(const struct profile *p, uint64_t leaf)
{
	for (size_t i = 0; i < p->nsamples; i++)
		if (p->samples[i].addrs[0] == leaf)
			return &p->samples[i];
	return NULL;
}

static void test_worked_example(void)
{
	const char *text = "heap_v2/524288\n"
	                   "  t*: 2: 1052672 [0: 0]\n"
	                   "  t0: 2: 1052672 [0: 0]\n"
	                   "@ 0x1000 0x2001 0x3001\n"
	                   "  t*: 1: 1048576 [0: 0]\n"
	                   "  t0: 1: 1048576 [0: 0]\n"
	                   "@ 0x4000 0x5001\n"
	                   "  t*: 1: 4096 [0: 0]\n"
	                   "  t0: 1: 4096 [0: 0]\n"
	                   "\n"
	                   "MAPPED_LIBRARIES:\n"
	                   "00400000-00452000 r-xp 00000000 08:02 173521      /usr/bin/app\n"
	                   "00651000-00652000 rw-p 00051000 08:02 173521      /usr/bin/app\n";
	struct profile p;
	char err[256];
	profile_init(&p);
	int rc = read_str(text, &p, err, sizeof err);
	CHECK(rc == 0, "read failed: %s", err);
	CHECK(p.nsamples == 2, "nsamples %zu", p.nsamples);
	CHECK(strcmp(p.format, "heap_v2") == 0, "format %s", p.format);
	CHECK(p.period == 524288, "period %llu", (unsigned long long)p.period);
	CHECK(p.jemalloc_frames == 1, "no metadata means jemalloc frames");
	CHECK(p.has_alloc == 0, "no alloc data");
	const struct prof_sample *a = find_leaf(&p, 0x1000);
	CHECK(a != NULL, "stack with leaf 0x1000 missing");
	if (a) {
		/* avg = 2R: factor 1/(1-e^-2) = 1.15651764... */
		double f = 1.0 / (1.0 - exp(-2.0));
		CHECK(near(a->v[PV_INUSE_BYTES], 1048576 * f, 1e-12), "bytes %f", a->v[PV_INUSE_BYTES]);
		CHECK(near(a->v[PV_INUSE_BYTES], 1212697.1, 1e-6), "bytes %f (1.157 MiB)", a->v[PV_INUSE_BYTES]);
		CHECK(near(a->v[PV_INUSE_OBJS], f, 1e-12), "objs %f", a->v[PV_INUSE_OBJS]);
		CHECK(a->naddrs == 3 && a->addrs[1] == 0x2000 && a->addrs[2] == 0x3000,
		      "callers not adjusted by -1");
	}
	const struct prof_sample *b = find_leaf(&p, 0x4000);
	CHECK(b != NULL, "stack with leaf 0x4000 missing");
	if (b) /* FORMATS.md: "1: 4096" -> 526 338 B */
		CHECK((long)b->v[PV_INUSE_BYTES] == 526338, "bytes %f", b->v[PV_INUSE_BYTES]);
	CHECK(p.nmaps == 1, "only the executable mapping: %zu", p.nmaps);
	if (p.nmaps == 1) {
		CHECK(p.maps[0].start == 0x400000 && p.maps[0].limit == 0x452000 && p.maps[0].offset == 0,
		      "mapping range");
		CHECK(strcmp(p.maps[0].path, "/usr/bin/app") == 0, "path '%s'", p.maps[0].path);
		CHECK(profile_find_mapping(&p, 0x400100) == &p.maps[0], "find_mapping");
		CHECK(profile_find_mapping(&p, 0x452000) == NULL, "limit is exclusive");
	}
	profile_release(&p);
}

int main(void)
{
	test_worked_example();
	if (failures) {
		fprintf(stderr, "%d checks failed\n", failures);
		return 1;
	}
	printf("profile_heapv2: all checks passed\n");
	return 0;
}
