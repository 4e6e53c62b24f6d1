/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib_core.c - unit test of the collector's core without interposition: drives the slow
 * paths of lib/core.c directly (as interpose.c would) at lg_prof_sample:0 and checks, through
 * a real heap_v2 dump into a memfd and the statistics JSON, that live and cumulative counts are
 * exact after mallocs, frees, reallocs and four threads racing, that the sampling switch works,
 * and that a full live table drops and counts. Built with ASan+UBSan like every unit test.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../base/outbuf.h"
#include "../../lib/collector.h"
#include "../../lib/dump.h"
#include "../../lib/lifecycle.h"
#include "../../lib/stats.h"
#include "../../lib/core.h"
#include "check.h"

static char dump[1 << 20];

/* Dumps heap_v2 into a memfd and returns its text. */
static const char *take_dump(void)
{
	int fd = memfd_create("dump", 0);
	CHECK(fd >= 0);
	CHECK(dump_fd(fd, DUMP_HEAPV2, "manual") == 0);
	ssize_t n = pread(fd, dump, sizeof dump - 1, 0);
	dump[n > 0 ? n : 0] = 0;
	close(fd);
	return dump;
}

/* The process total line: "  t*: objs: bytes [aobjs: abytes]" (second line). */
static int total(unsigned long long v[4])
{
	const char *p = strchr(take_dump(), '\n');
	return p && sscanf(p + 1, "  t*: %llu: %llu [%llu: %llu]", &v[0], &v[1], &v[2], &v[3]) == 4;
}

static long long stat_field(const char *key)
{
	static char js[16384];
	struct outbuf ob;
	outbuf_init(&ob, js, sizeof js - 1, -1);
	stats_json(&ob);
	js[ob.len] = 0;
	char pat[80];
	snprintf(pat, sizeof pat, "\"%s\":", key);
	const char *p = strstr(js, pat);
	return p ? atoll(p + strlen(pat)) : -1;
}

__attribute__((noinline)) static void *site_a(size_t n)
{
	return core_alloc_slow(FN_MALLOC, n, 0);
}

static void *kept[4][10];

static void *worker(void *arg)
{
	int id = (int)(intptr_t)arg;
	void *keep[100];
	for (int round = 0; round < 50; round++) {
		for (int i = 0; i < 100; i++)
			keep[i] = site_a(64);
		for (int i = 0; i < 100; i++)
			if (round < 49 || i >= 10)
				core_free_slow(keep[i]);
	}
	memcpy(kept[id], keep, sizeof kept[id]); /* 10 blocks of 64 bytes stay live */
	return NULL;
}

int main(void)
{
#ifdef __SANITIZE_THREAD__
	/* Under ThreadSanitizer (build/tests/tsan_core) walk frame pointers (kept from when the
	   DWARF path fell back to libunwind, whose per-thread cache destructor crashed under TSan). */
	setenv("HEAPTAP_CONF", "prof_final:false,prof_prefix:,prof_accum:true,prof_max_live:5000,prof_unwind:fp", 1);
#else
	setenv("HEAPTAP_CONF", "prof_final:false,prof_prefix:,prof_accum:true,prof_max_live:5000", 1);
#endif
	lifecycle_init();
	CHECK(collector_enabled());
	CHECK(collector_reset(0) == 0);
	CHECK(collector_lg_sample() == 0);

	unsigned long long v[4];
	void *p[10];
	for (int i = 0; i < 10; i++)
		p[i] = site_a(1000);
	for (int i = 0; i < 5; i++)
		core_free_slow(p[i]);
	CHECK(total(v) && v[0] == 5 && v[1] == 5000 && v[2] == 10 && v[3] == 10000);
	CHECK(strncmp(dump, "heap_v2/1\n", 10) == 0);
	CHECK(strstr(dump, "\nMAPPED_LIBRARIES:\n") != NULL);
	CHECK(strstr(dump, "# heaptap: trigger=manual\n") != NULL);
	CHECK(stat_field("live_samples") == 5);
	CHECK(stat_field("live_bytes_estimate") == 5000);

	/* realloc of a sampled block: the old one leaves the tables, the new one enters */
	p[5] = core_realloc_slow(p[5], 3000);
	CHECK(p[5] != NULL);
	CHECK(total(v) && v[0] == 5 && v[1] == 7000 && v[2] == 11 && v[3] == 13000);
	/* realloc to 0 frees */
	CHECK(core_realloc_slow(p[6], 0) == NULL);
	CHECK(total(v) && v[0] == 4 && v[1] == 6000);
	/* calloc counts nmemb * size, and overflows fail */
	void *c = core_calloc_slow(10, 10);
	CHECK(c && ((char *)c)[99] == 0);
	CHECK(core_calloc_slow((size_t)1 << 62, 8) == NULL);
	CHECK(total(v) && v[0] == 5 && v[1] == 6100);
	core_free_slow(c);
	for (int i = 7; i < 10; i++)
		core_free_slow(p[i]);
	core_free_slow(p[5]);
	CHECK(total(v) && v[0] == 0 && v[1] == 0 && v[2] == 12);
	/* with nothing live and accum on, stacks with allocations stay in the dump */
	CHECK(strstr(dump, "  t*: 0: 0 [") != NULL);
	/* free of NULL and of unknown pointers is harmless */
	core_free_slow(NULL);

	/* the switch: nothing is sampled while inactive */
	CHECK(collector_set_active(0) == 1);
	CHECK(collector_active() == 0);
	void *q = site_a(500);
	CHECK(total(v) && v[0] == 0 && v[1] == 0);
	core_free_slow(q);
	CHECK(collector_set_active(1) == 0);
	q = site_a(500);
	CHECK(total(v) && v[0] == 1 && v[1] == 500);
	core_free_slow(q);

	/* four threads: each leaves exactly 10 x 64 bytes */
	CHECK(collector_reset(0) == 0);
	pthread_t th[4];
	for (int i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i);
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	CHECK(total(v) && v[0] == 40 && v[1] == 2560 && v[2] == 20000 && v[3] == 1280000);
	CHECK(stat_field("threads_seen") >= 5);
	CHECK(stat_field("malloc") >= 20000);
	for (int i = 0; i < 4; i++)
		for (int k = 0; k < 10; k++)
			core_free_slow(kept[i][k]);
	CHECK(total(v) && v[0] == 0 && v[1] == 0);

	/* the live table holds 5000: the rest is dropped and counted */
	static void *many[6000];
	long long before = stat_field("dropped_live_table_full");
	for (int i = 0; i < 6000; i++)
		many[i] = site_a(8);
	CHECK(stat_field("live_samples") == 5000);
	CHECK(stat_field("dropped_live_table_full") - before == 1000);
	for (int i = 0; i < 6000; i++)
		core_free_slow(many[i]);
	CHECK(stat_field("live_samples") == 0);

	/* sampled at R = 2^19 again: a 64 MiB block is sampled with probability 1 - e^-128,
	   and one sample prints as exactly "1: <size>" */
	CHECK(collector_reset(19) == 0);
	void *big = site_a((size_t)64 << 20);
	CHECK(total(v) && v[0] == 1 && v[1] == (64u << 20));
	CHECK(strncmp(dump, "heap_v2/524288\n", 15) == 0);
	core_free_slow(big);

	if (failures)
		fprintf(stderr, "lib_core: %d failure(s)\n", failures);
	else
		printf("lib_core: ok\n");
	return failures != 0;
}
