/* SPDX-License-Identifier: BSD-2-Clause */
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

#include "../../base/outbuf.h"
#include "../../profile/inproc/dumpsrc.h"
#include "../../profile/heapv2_read.h"
#include "../../profile/inproc/heapv2_write.h"
#include "../../profile/model.h"
#include "../../profile/reader.h"
#include "check.h"



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


static void test_metadata(void)
{
	const char *text = "%warn a command line\n"
	                   "heap_v2/524288\n"
	                   "  t*: 1: 100 [2: 300]\n"
	                   "@ 0x401233 0x7f0000001235\n"
	                   "  t*: 1: 100 [2: 300]\n"
	                   "\n"
	                   "MAPPED_LIBRARIES:\n"
	                   "00400000-00452000 r-xp 00000000 08:02 173521      /usr/bin/my app\n"
	                   "7f0000000000-7f0000010000 r-xp 00001000 08:01 42 /lib/libold.so (deleted)\n"
	                   "# heaptap: version=0.1.0\n"
	                   "# heaptap: pid=4242\n"
	                   "# heaptap: time_ns=1700000000123456789\n"
	                   "# heaptap: start_time_ns=1700000000000000000\n"
	                   "# heaptap: period=524288\n"
	                   "# heaptap: trigger=interval\n"
	                   "# heaptap: exe=/usr/bin/my app\n"
	                   "# heaptap: cmdline=my app --flag x\n"
	                   "# heaptap: mapping start=0x400000 limit=0x452000 offset=0x0 build_id=ABCDEF0123 unloaded=0 path=/usr/bin/my app\n"
	                   "# heaptap: mapping start=0x7f0000000000 limit=0x7f0000010000 offset=0x1000 build_id=- unloaded=1 path=/lib/libold.so\n"
	                   "# heaptap: mapping start=0x7e0000000000 limit=0x7e0000001000 offset=0x0 build_id=99aa unloaded=1 path=/lib/gone.so\n";
	struct profile p;
	char err[256];
	profile_init(&p);
	int rc = read_str(text, &p, err, sizeof err);
	CHECK(rc == 0, "read failed: %s", err);
	CHECK(p.jemalloc_frames == 0, "heaptap dump: frames start at the caller");
	CHECK(p.pid == 4242 && p.time_ns == 1700000000123456789LL && p.start_time_ns == 1700000000000000000LL,
	      "pid/time: %d %lld", p.pid, (long long)p.time_ns);
	CHECK(p.trigger && strcmp(p.trigger, "interval") == 0, "trigger");
	CHECK(p.exe_path && strcmp(p.exe_path, "/usr/bin/my app") == 0, "exe '%s'", p.exe_path);
	CHECK(p.cmdline && strcmp(p.cmdline, "my app --flag x") == 0, "cmdline");
	CHECK(p.has_alloc == 1, "alloc pair present");
	CHECK(strcmp(p.source, "mem.heap") == 0, "source");
	CHECK(p.nmaps == 3, "maps %zu", p.nmaps);
	if (p.nmaps == 3) {
		CHECK(strcmp(p.maps[0].path, "/usr/bin/my app") == 0, "path with a space '%s'", p.maps[0].path);
		CHECK(p.maps[0].build_id && strcmp(p.maps[0].build_id, "abcdef0123") == 0, "build id to lowercase");
		CHECK(p.maps[1].build_id == NULL && p.maps[1].unloaded == 1, "'-' is no build id; unloaded");
		CHECK(strcmp(p.maps[1].path, "/lib/libold.so (deleted)") == 0, "(deleted) kept: '%s'", p.maps[1].path);
		CHECK(p.maps[1].offset == 0x1000, "offset");
		CHECK(p.maps[2].start == 0x7e0000000000 && p.maps[2].unloaded && strcmp(p.maps[2].path, "/lib/gone.so") == 0 &&
		          strcmp(p.maps[2].build_id, "99aa") == 0,
		      "mapping known only from metadata is added");
	}
	CHECK(p.nsamples == 1 && p.samples[0].addrs[0] == 0x401233 && p.samples[0].addrs[1] == 0x7f0000001234,
	      "leaf as is, caller -1");
	profile_release(&p);
}

struct expect_err {
	const char *text, *msg;
};

static void test_errors(void)
{
	static const struct expect_err cases[] = {
		{"heap_v2/524288\n@ 0x10 0xZZ\n  t*: 1: 1 [0: 0]\n", "mem.heap:2: bad address '0xZZ'"},
		{"heap_v2/524288\n@ 0x10 0x11112222333344445\n", "mem.heap:2: out-of-range address '0x11112222333344445'"},
		{"heap_v2/524288\n@ 0x10\n  t*: 1: 1 [0 0]\n", "mem.heap:3: malformed count line"},
		{"heap_v2/524288\n@ 0x10\n  t*: -1: 1 [0: 0]\n", "mem.heap:3: malformed count line"},
		{"heap_v2/524288\n@ 0x10\n  t*: 1: 4096 [0: 0]\n@ 0x20\n  t*: 1: 40", "mem.heap:5: truncated count line"},
		{"heap_v2/\n", "mem.heap:1: threaded heap profiles require v2 sampling with a sample rate (heap_v2/<R>)"},
		{"%only commands\n", "mem.heap: unrecognized profile format"},
		{"hello world\n", "mem.heap: unrecognized profile format"},
		{"", "mem.heap: empty profile"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct profile p;
		char err[256] = "";
		profile_init(&p);
		int rc = read_str(cases[i].text, &p, err, sizeof err);
		CHECK(rc == -1 && strcmp(err, cases[i].msg) == 0, "case %zu: rc %d, '%s' (want '%s')", i, rc, err,
		      cases[i].msg);
		CHECK(p.nsamples == 0 && p.arena == NULL, "case %zu: left empty on error", i);
		profile_release(&p);
	}
	/* a tiny errcap truncates but terminates */
	struct profile p;
	char err[8];
	profile_init(&p);
	read_str("nonsense\n", &p, err, sizeof err);
	CHECK(strlen(err) == 7, "truncated message '%s'", err);
	profile_release(&p);
}

/* Round trip through heaptap's own writer: the writer pre-compensates, the reader unsamples;
   the unbiased estimates must come back (to the rounding of the printed integers). */
struct rt_src {
	struct dump_stack st[3];
};

static int rt_each(const struct dump_source *src, int (*fn)(void *, const struct dump_stack *), void *ctx)
{
	const struct rt_src *r = src->priv;
	for (int i = 0; i < 3; i++) {
		int rc = fn(ctx, &r->st[i]);
		if (rc)
			return rc;
	}
	return 0;
}

static void test_writer_roundtrip(void)
{
	static const uintptr_t pcs0[] = {0x401001, 0x402002, 0x403003};
	static const uintptr_t pcs1[] = {0x404004};
	static const uintptr_t pcs2[] = {0x405005, 0x402002, 0x403003};
	struct rt_src r = {{
		/* printed objects ~3662 and ~9155: error <= 0.5/printed */
		{pcs0, 3, 2e7, 2e7 * 96, 5e7, 5e7 * 96.0, 3, 0, 0},
		/* big objects: weight ~1, so the estimate is ~an integer anyway */
		{pcs1, 1, 3.0, 3.0 * 4 * 1048576.0, 3.0, 3.0 * 4 * 1048576.0, 3, 0, 0},
		/* nothing live; printed alloc objects ~229 */
		{pcs2, 3, 0, 0, 5e6, 5e6 * 24, 0, 0, 0},
	}};
	static const char maps[] = "00400000-00452000 r-xp 00000000 08:02 1 /usr/bin/rt\n";
	static const uint8_t bid[] = {0xde, 0xad, 0xbe, 0xef};
	struct dump_mapping m = {0x400000, 0x452000, 0, "/usr/bin/rt", bid, 4, "r-xp", 0};
	struct dump_source src = {0};
	src.sample_period = 524288;
	src.accum = 1;
	src.time_ns = 1700000000000000001LL;
	src.pid = 77;
	src.exe_path = "/usr/bin/rt";
	src.cmdline = "rt -x";
	src.trigger = "final";
	src.maps_text = maps;
	src.maps_len = sizeof maps - 1;
	src.mappings = &m;
	src.nmappings = 1;
	src.for_each_stack = rt_each;
	src.priv = &r;
	static char buf[1 << 16];
	struct outbuf ob;
	outbuf_init(&ob, buf, sizeof buf, -1);
	CHECK(heapv2_write(&src, &ob) == 0 && !ob.truncated, "write");
	struct profile p;
	char err[256];
	profile_init(&p);
	int rc = profile_read_mem((const uint8_t *)buf, ob.len, "rt.heap", &p, err, sizeof err);
	CHECK(rc == 0, "read back: %s", err);
	CHECK(p.nsamples == 3, "%zu samples", p.nsamples);
	CHECK(p.pid == 77 && p.maps[0].build_id && strcmp(p.maps[0].build_id, "deadbeef") == 0, "metadata back");
	for (int i = 0; i < 3; i++) {
		const struct dump_stack *st = &r.st[i];
		const struct prof_sample *s = find_leaf(&p, st->pcs[0] - 1);
		CHECK(s != NULL, "stack %d missing", i);
		if (!s)
			continue;
		CHECK(s->naddrs == st->depth, "depth");
		for (uint32_t j = 1; j < s->naddrs; j++)
			CHECK(s->addrs[j] == st->pcs[j] - 1, "caller %u of stack %d", j, i);
		/* the printed object count is rounded: relative error <= 0.5/229 here */
		CHECK(near(s->v[PV_INUSE_BYTES], st->live_bytes, 3e-3), "stack %d live bytes %f vs %f", i,
		      s->v[PV_INUSE_BYTES], st->live_bytes);
		CHECK(near(s->v[PV_INUSE_OBJS], st->live_objs, 3e-3), "stack %d live objs %f vs %f", i,
		      s->v[PV_INUSE_OBJS], st->live_objs);
		CHECK(near(s->v[PV_ALLOC_BYTES], st->alloc_bytes, 3e-3), "stack %d alloc bytes %f vs %f", i,
		      s->v[PV_ALLOC_BYTES], st->alloc_bytes);
		CHECK(near(s->v[PV_ALLOC_OBJS], st->alloc_objs, 3e-3), "stack %d alloc objs %f vs %f", i,
		      s->v[PV_ALLOC_OBJS], st->alloc_objs);
	}
	profile_release(&p);
}

int main(void)
{
	test_worked_example();
	test_metadata();
	test_errors();
	test_writer_roundtrip();
	return check_finish("profile_heapv2");
}
