/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * profile_series.c - unit test of dump ordering for `heaptap report`: file names of jemalloc,
 * heaptap and gperftools parsed into (pid, seq, kind, kseq), and the sort by pid, seq, time
 * and name, with profiles read from heaptap-style text carrying pid and time metadata.
 */
#include <stdio.h>
#include <string.h>

#include "../../profile/model.h"
#include "../../profile/reader.h"
#include "../../profile/series.h"
#include "check.h"



static void test_names(void)
{
	struct series_entry e;
	CHECK(series_parse_name("/tmp/d/jeprof.12345.7.u2.heap", &e) == 1 && e.pid == 12345 && e.seq == 7 &&
	          e.kind == 'u' && e.kseq == 2,
	      "jemalloc gdump");
	CHECK(series_parse_name("jeprof.12345.9.f.heap", &e) == 1 && e.seq == 9 && e.kind == 'f' && e.kseq == -1,
	      "final has no kseq");
	CHECK(series_parse_name("/x/my.app.prefix.42.10.i3.pb.gz", &e) == 1 && e.pid == 42 && e.seq == 10 &&
	          e.kind == 'i' && e.kseq == 3,
	      "dots in the prefix, pprof extension");
	CHECK(series_parse_name("heaptap.7.3.t1.txt", &e) == 1 && e.kind == 't', "heaptap time trigger");
	CHECK(strcmp(e.ext, ".txt") == 0 && e.prefix_len == 7, "extension '%s', prefix length %zu", e.ext, e.prefix_len);
	CHECK(series_parse_name("/d/heaptap.7.3.f.collapsed", &e) == 0, "not a dump's extension");
	CHECK(series_parse_name("/x/my.app.42.10.f.heap", &e) == 1 && e.prefix_len == 6 && strcmp(e.ext, ".heap") == 0,
	      "prefix with a dot: %zu", e.prefix_len);
	CHECK(series_parse_name("prof.0012.heap", &e) == 1 && e.pid == 0 && e.seq == 12 && e.kind == 0,
	      "gperftools counter");
	CHECK(series_parse_name("random.heap", &e) == 0 && e.seq == -1 && e.pid == 0, "unknown scheme");
	CHECK(series_parse_name("a.12.x3.i1.heap", &e) == 0, "seq must be digits");
	CHECK(series_parse_name("a.12.3.q1.heap", &e) == 0, "unknown kind letter");
}

static const char *dump_text(int pid, long long time_ns, char *buf, size_t cap)
{
	snprintf(buf, cap,
	         "heap_v2/1\n@ 0x1\n  t*: 1: 8 [0: 0]\n\nMAPPED_LIBRARIES:\n# heaptap: pid=%d\n# heaptap: time_ns=%lld\n",
	         pid, time_ns);
	return buf;
}

static void test_sort(void)
{
	/* Names deliberately out of order: seq 10 after seq 9 (not "10" < "9" as strings),
	   another pid, and files whose names carry no sequence (ordered by time). */
	static const struct {
		const char *name;
		int pid;
		long long t;
	} in[] = {
		{"d/h.100.10.i10.heap", 100, 5000}, {"d/h.100.9.i9.heap", 100, 4000}, {"d/h.100.0.i0.heap", 100, 100},
		{"d/h.50.2.m0.heap", 50, 9000},     {"d/late.heap", 100, 7000},        {"d/early.heap", 100, 50},
		{"d/h.100.11.f.heap", 100, 6000},
	};
	enum { N = sizeof in / sizeof in[0] };
	struct profile ps[N];
	struct series_entry e[N];
	for (int i = 0; i < N; i++) {
		char buf[512], err[256];
		const char *t = dump_text(in[i].pid, in[i].t, buf, sizeof buf);
		profile_init(&ps[i]);
		int rc = profile_read_mem((const uint8_t *)t, strlen(t), in[i].name, &ps[i], err, sizeof err);
		CHECK(rc == 0, "%s", err);
		series_entry_from_profile(&e[i], in[i].name, &ps[i]);
	}
	series_sort(e, N);
	static const char *const want[N] = {"d/h.50.2.m0.heap", "d/early.heap", "d/h.100.0.i0.heap",
	                                    "d/h.100.9.i9.heap", "d/h.100.10.i10.heap", "d/h.100.11.f.heap",
	                                    "d/late.heap"};
	for (int i = 0; i < N; i++)
		CHECK(strcmp(e[i].path, want[i]) == 0, "position %d: %s, want %s", i, e[i].path, want[i]);
	CHECK(((struct profile *)e[0].user)->pid == 50, "user pointer travels with the entry");
	for (int i = 0; i < N; i++)
		profile_release(&ps[i]);
}

int main(void)
{
	test_names();
	test_sort();
	return check_finish("profile_series");
}
