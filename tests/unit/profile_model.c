/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * profile_model.c - unit test of the profile model and symbol table: compaction and merging of
 * identical stacks (values, order, zero dropping, subtraction), mappings and their look-up,
 * unique addresses, symtab interning and replacement, and the speed the commands rely on
 * (100k samples of 30 frames, merged 100 times). Not a test of any reader.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../profile/model.h"
#include "../../profile/symtab.h"
#include "check.h"



static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts); /* CPU time: the machine is shared */
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void add(struct profile *p, uint64_t a0, uint64_t a1, double bytes)
{
	uint64_t a[2] = {a0, a1};
	double v[PV_COUNT] = {1, bytes, 2, 2 * bytes};
	profile_add(p, a, a1 ? 2 : 1, v);
}

static void test_compact(void)
{
	struct profile p;
	profile_init(&p);
	add(&p, 0x10, 0x20, 100);
	add(&p, 0x30, 0, 7);
	add(&p, 0x10, 0x20, 50);
	add(&p, 0x10, 0, 1); /* a prefix of the first stack: different */
	double zero[PV_COUNT] = {0};
	uint64_t z = 0x99;
	profile_add(&p, &z, 1, zero);
	CHECK(p.nsamples == 5, "%zu", p.nsamples);
	profile_compact(&p);
	CHECK(p.nsamples == 3, "compact: %zu samples", p.nsamples);
	CHECK(p.samples[0].addrs[0] == 0x10 && p.samples[0].naddrs == 2 && p.samples[0].v[PV_INUSE_BYTES] == 150 &&
	          p.samples[0].v[PV_INUSE_OBJS] == 2 && p.samples[0].v[PV_ALLOC_BYTES] == 300,
	      "first stack summed in place");
	CHECK(p.samples[1].addrs[0] == 0x30 && p.samples[2].naddrs == 1, "first-seen order kept");
	CHECK(profile_total(&p, PV_INUSE_BYTES) == 158, "total %f", profile_total(&p, PV_INUSE_BYTES));
	CHECK(profile_total(&p, 7) == 0, "bad index gives 0");

	size_t n;
	uint64_t *u = profile_unique_addrs(&p, &n);
	CHECK(n == 3 && u[0] == 0x10 && u[1] == 0x20 && u[2] == 0x30, "unique addrs n=%zu", n);
	free(u);

	/* naddrs 0 becomes one frame at 0 */
	profile_add(&p, NULL, 0, zero);
	CHECK(p.samples[p.nsamples - 1].naddrs == 1 && p.samples[p.nsamples - 1].addrs[0] == 0, "empty stack");
	u = profile_unique_addrs(&p, &n);
	CHECK(n == 4 && u[0] == 0, "address 0 is an address too: n=%zu", n);
	free(u);
	profile_release(&p);
	CHECK(p.nsamples == 0 && p.samples == NULL && p.arena == NULL, "release leaves it empty");
	profile_release(&p); /* twice is fine */
}

static void test_merge(void)
{
	struct profile a, b;
	profile_init(&a);
	profile_init(&b);
	add(&a, 1, 2, 10);
	add(&a, 3, 0, 5);
	add(&b, 1, 2, 4);
	add(&b, 7, 8, 9);
	profile_add_mapping(&a, 0x1000, 0x2000, 0, "/bin/a", "ABCDEF");
	profile_add_mapping(&b, 0x1000, 0x2000, 0, "/bin/a", NULL);
	profile_add_mapping(&b, 0x5000, 0x6000, 0x1000, "/lib/b.so", NULL);
	b.maps[1].unloaded = 1;
	b.has_alloc = 1;
	b.exe_path = profile_strdup(&b, "/bin/a");
	b.syms = symtab_new();
	struct prof_frame fr = {"f", "f.c", 3};
	symtab_put(b.syms, 7, &fr, 1, "/bin/a");

	profile_merge(&a, &b, 1.0);
	CHECK(a.nsamples == 3, "merged: %zu", a.nsamples);
	CHECK(profile_total(&a, PV_INUSE_BYTES) == 28, "sum %f", profile_total(&a, PV_INUSE_BYTES));
	CHECK(a.samples[0].v[PV_INUSE_BYTES] == 14, "same stack summed");
	CHECK(a.nmaps == 2 && a.maps[1].unloaded == 1 && strcmp(a.maps[1].path, "/lib/b.so") == 0, "maps merged");
	CHECK(a.maps[0].build_id && strcmp(a.maps[0].build_id, "abcdef") == 0, "build id lowercased");
	CHECK(a.has_alloc == 1 && a.exe_path && strcmp(a.exe_path, "/bin/a") == 0, "facts merged");
	const struct prof_symbol *s = a.syms ? symtab_get(a.syms, 7) : NULL;
	CHECK(s && s->nframes == 1 && strcmp(s->frames[0].func, "f") == 0, "symbols merged");

	/* jeprof --base: subtracting a profile from itself leaves nothing after compaction */
	struct profile c;
	profile_init(&c);
	profile_merge(&c, &b, 1.0);
	profile_merge(&c, &b, -1.0);
	CHECK(c.nsamples == 2, "subtraction keeps zero samples until compacted: %zu", c.nsamples);
	CHECK(profile_total(&c, PV_INUSE_BYTES) == 0, "zero");
	profile_compact(&c);
	CHECK(c.nsamples == 0, "compacted away: %zu", c.nsamples);

	/* a stack only in the base becomes negative */
	struct profile d;
	profile_init(&d);
	add(&d, 1, 2, 4);
	profile_merge(&d, &a, -1.0);
	profile_compact(&d);
	CHECK(d.nsamples == 3 && profile_total(&d, PV_INUSE_BYTES) == 4 - 28, "negative: %f",
	      profile_total(&d, PV_INUSE_BYTES));
	profile_release(&a);
	profile_release(&b);
	profile_release(&c);
	profile_release(&d);
}

static void test_mappings(void)
{
	struct profile p;
	profile_init(&p);
	CHECK(profile_find_mapping(&p, 5) == NULL, "no maps");
	profile_add_mapping(&p, 0x7000, 0x8000, 0, "/lib/c.so", NULL);
	profile_add_mapping(&p, 0x1000, 0x3000, 0, "/bin/x", NULL);
	profile_add_mapping(&p, 0x4000, 0x5000, 0, "/lib/old.so", NULL);
	p.maps[2].unloaded = 1;
	profile_add_mapping(&p, 0x4000, 0x5000, 0, "/lib/new.so", NULL);
	CHECK(profile_find_mapping(&p, 0x1000) == &p.maps[1], "start inclusive");
	CHECK(profile_find_mapping(&p, 0x2fff) == &p.maps[1], "inside");
	CHECK(profile_find_mapping(&p, 0x3000) == NULL, "limit exclusive");
	CHECK(profile_find_mapping(&p, 0x7800) == &p.maps[0], "unsorted input");
	const struct prof_mapping *m = profile_find_mapping(&p, 0x4800);
	CHECK(m && strcmp(m->path, "/lib/new.so") == 0, "loaded mapping preferred: %s", m ? m->path : "-");
	CHECK(profile_find_mapping(&p, 0x9000) == NULL, "beyond");
	profile_add_mapping(&p, 0x9000, 0xa000, 0, NULL, "");
	m = profile_find_mapping(&p, 0x9000);
	CHECK(m && strcmp(m->path, "") == 0 && m->build_id == NULL, "index refreshed after add");
	profile_release(&p);
}

static void test_symtab(void)
{
	struct prof_symtab *t = symtab_new();
	CHECK(symtab_get(t, 1) == NULL && symtab_count(t) == 0, "empty");
	struct prof_frame fr[2] = {{"inner", "a.c", 10}, {"outer", "a.c", 20}};
	symtab_put(t, 0x100, fr, 2, "/bin/x");
	const struct prof_symbol *s = symtab_get(t, 0x100);
	CHECK(s && s->nframes == 2 && s->frames[0].line == 10 && strcmp(s->frames[1].func, "outer") == 0,
	      "get");
	CHECK(s && s->frames[0].file == s->frames[1].file, "equal strings interned once");
	CHECK(symtab_intern(t, "outer") == s->frames[1].func, "intern returns the same pointer");
	CHECK(symtab_intern(t, NULL) == NULL, "NULL stays NULL");
	symtab_put(t, 0x100, NULL, 0, NULL);
	s = symtab_get(t, 0x100);
	CHECK(s && s->nframes == 0 && symtab_count(t) == 1, "replace with 'unknown'");
	for (uint64_t a = 1; a <= 100000; a++) {
		char name[32];
		snprintf(name, sizeof name, "fn%llu", (unsigned long long)(a % 5000));
		struct prof_frame f = {name, NULL, (int)a};
		symtab_put(t, a * 16, &f, 1, NULL);
	}
	CHECK(symtab_count(t) == 100000, "0x100 = 16 * 16 was replaced: count %zu", symtab_count(t));
	int ok = 1;
	for (uint64_t a = 1; a <= 100000 && ok; a++) {
		s = symtab_get(t, a * 16);
		ok = s && s->nframes == 1 && s->frames[0].line == (int)a;
	}
	CHECK(ok, "all 100k addresses found");
	CHECK(symtab_get(t, 17) == NULL, "absent address");
	CHECK(symtab_intern(t, "fn42") == symtab_get(t, 42 * 16)->frames[0].func, "interned across entries");
	symtab_free(t);
}

static int by_bytes_desc(const void *a, const void *b)
{
	double x = ((const struct prof_sample *)a)->v[PV_INUSE_BYTES];
	double y = ((const struct prof_sample *)b)->v[PV_INUSE_BYTES];
	return x < y ? 1 : x > y ? -1 : 0;
}

/* Random merges and subtractions against a naive per-stack sum, with the destination's samples
   reordered by hand between merges (as a renderer sorting p->samples would): the kept stack
   index must notice and never produce duplicate stacks or lose values. */
static void test_merge_random(void)
{
	enum { POOL = 64, PROFILES = 40 };
	uint64_t pool[POOL][6];
	uint32_t len[POOL];
	uint64_t x = 12345;
	for (int i = 0; i < POOL; i++) {
		len[i] = 1 + i % 6;
		for (uint32_t j = 0; j < len[i]; j++)
			pool[i][j] = 0x1000 + (uint64_t)((i * 7 + j * 3) % 23) * 16 + (j == 0 ? (uint64_t)i : 0);
	}
	double want[POOL] = {0};
	struct profile dst;
	profile_init(&dst);
	for (int r = 0; r < PROFILES; r++) {
		struct profile src;
		profile_init(&src);
		int nrec = 1 + r % 17;
		for (int k = 0; k < nrec; k++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			int i = (int)(x % POOL);
			double v[PV_COUNT] = {1, (double)(1 + x % 1000), 0, 0};
			profile_add(&src, pool[i], len[i], v);
			double sign = r % 5 == 4 ? -1 : 1;
			want[i] += sign * v[PV_INUSE_BYTES];
		}
		profile_merge(&dst, &src, r % 5 == 4 ? -1.0 : 1.0);
		if (r % 3 == 0 && dst.nsamples > 1)
			qsort(dst.samples, dst.nsamples, sizeof *dst.samples, by_bytes_desc);
		if (r % 7 == 0) { /* appended by hand: the next merge must fold it in */
			double five[PV_COUNT] = {0, 5, 0, 0};
			profile_add(&dst, pool[r % POOL], len[r % POOL], five);
			want[r % POOL] += 5;
		}
		profile_release(&src);
	}
	struct profile empty;
	profile_init(&empty);
	profile_merge(&dst, &empty, 1.0); /* an empty source: only the re-indexing happens */
	int ok = 1;
	for (int i = 0; i < POOL; i++) {
		int seen = 0;
		double got = 0;
		for (size_t k = 0; k < dst.nsamples; k++)
			if (dst.samples[k].naddrs == len[i] &&
			    memcmp(dst.samples[k].addrs, pool[i], len[i] * sizeof(uint64_t)) == 0) {
				seen++;
				got += dst.samples[k].v[PV_INUSE_BYTES];
			}
		if (seen > 1 || got != want[i]) {
			fprintf(stderr, "stack %d: seen %d times, %f vs %f\n", i, seen, got, want[i]);
			ok = 0;
		}
	}
	CHECK(ok, "random merges equal the naive sums, each stack once");
	profile_release(&dst);
}

/* 100k samples of 30 frames; merged 100 times; timed. */
static void test_speed(void)
{
	struct profile src, dst;
	profile_init(&src);
	profile_init(&dst);
	uint64_t a[30];
	double v[PV_COUNT] = {1, 100, 1, 100};
	uint64_t x = 88172645463325252ULL;
	double t0 = now_s();
	for (int i = 0; i < 100000; i++) {
		for (int j = 0; j < 30; j++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			a[j] = 0x400000 + (x % 200000) * 4;
		}
		profile_add(&src, a, 30, v);
	}
	profile_compact(&src);
	double t1 = now_s();
	for (int i = 0; i < 100; i++)
		profile_merge(&dst, &src, 1.0);
	double t2 = now_s();
	size_t n;
	uint64_t *u = profile_unique_addrs(&dst, &n);
	double t3 = now_s();
	free(u);
	CHECK(dst.nsamples == src.nsamples, "%zu vs %zu", dst.nsamples, src.nsamples);
	CHECK(profile_total(&dst, PV_INUSE_BYTES) == 100.0 * 100 * 100000, "total");
	printf("build+compact 100k x 30: %.3f s; 100 merges: %.3f s; unique addrs (%zu): %.3f s\n", t1 - t0,
	       t2 - t1, n, t3 - t2);
	/* Catches a quadratic merge (hours), not a slow machine: this binary runs under ASan+UBSan
	   on a shared machine. The -O2 build does the 100 merges in about 0.5 s of CPU. */
	CHECK(t2 - t1 < 30.0, "100 merges took %.3f s of CPU", t2 - t1);
	profile_release(&src);
	profile_release(&dst);
}

int main(void)
{
	test_compact();
	test_merge();
	test_mappings();
	test_symtab();
	test_merge_random();
	test_speed();
	return check_finish("profile_model");
}
