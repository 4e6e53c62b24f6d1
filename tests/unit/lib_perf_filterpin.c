/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib_perf_filterpin.c - unit test of the filter pins free's fast path relies on
 * (livetab_filter_pin): a pinned range hits over its whole extent and no further, survives
 * inserts, removes and livetab_clear, and a range that wraps the filter's 4 GiB window is
 * pinned at both ends. Also the malloc-count fold of stats: stats_sum_threads reports the
 * fast paths' call counters and the slow path's size histogram. Not a timing test.
 */
#include <stdint.h>
#include <string.h>

#include "../../lib/core.h"
#include "../../lib/threads.h"
#include "../../lib/livetab.h"
#include "check.h"

#define G ((uintptr_t)1 << LIVETAB_FILTER_GRANULE_SHIFT)
#define WINDOW ((uintptr_t)G << LIVETAB_FILTER_BITS)

static struct live_entry entry(uintptr_t p)
{
	struct live_entry e;
	memset(&e, 0, sizeof e);
	e.ptr = p;
	e.size = 16;
	return e;
}

int main(void)
{
	struct livetab t;
	struct live_entry e, old, out;
	CHECK(livetab_init(&t, 64) == 0);

	/* a 3-granule range starting mid-granule covers 4 granules */
	uintptr_t lo = 0x7f0000100000 + 100;
	livetab_filter_pin((void *)lo, 3 * G);
	CHECK(livetab_filter_hit((void *)lo));
	CHECK(livetab_filter_hit((void *)(lo - 100)), "granule start of the range");
	CHECK(livetab_filter_hit((void *)(lo + 3 * G - 1)), "last byte");
	CHECK(!livetab_filter_hit((void *)(lo - 101)), "granule before");
	CHECK(!livetab_filter_hit((void *)(lo - 100 + 4 * G)), "granule after");

	/* NULL's granule, as real.c pins it */
	CHECK(!livetab_filter_hit(NULL));
	livetab_filter_pin(NULL, 1);
	CHECK(livetab_filter_hit(NULL) && livetab_filter_hit((void *)(G - 1)));
	CHECK(!livetab_filter_hit((void *)G));

	/* a sampled pointer in a pinned granule: insert and remove leave the pin */
	e = entry(lo + 64);
	CHECK(livetab_insert(&t, &e, &old) == 0);
	CHECK(livetab_remove(&t, lo + 64, &out) == 1);
	CHECK(livetab_filter_hit((void *)(lo + 64)), "pin lost by a remove");

	/* clear zeroes everything but the pins */
	e = entry(0x5000000);
	CHECK(livetab_insert(&t, &e, &old) == 0 && livetab_filter_hit((void *)0x5000000));
	livetab_clear(&t);
	CHECK(!livetab_filter_hit((void *)0x5000000), "clear left a counter");
	CHECK(livetab_filter_hit((void *)lo) && livetab_filter_hit(NULL), "clear dropped a pin");
	CHECK(livetab_filter_hit((void *)(lo + 3 * G - 1)));

	/* a range across the end of the 4 GiB window: both ends pinned, the middle of the window not */
	uintptr_t wr = 3 * WINDOW - 2 * G;
	livetab_filter_pin((void *)wr, 4 * G);
	CHECK(livetab_filter_hit((void *)wr) && livetab_filter_hit((void *)(wr + 3 * G)));
	CHECK(livetab_filter_hit((void *)(wr + 2 * G)), "index 0 side");
	CHECK(!livetab_filter_hit((void *)(wr - G)) && !livetab_filter_hit((void *)(wr + 4 * G + G)));
	livetab_release(&t);

	/* stats: the fast paths' call counters and the slow path's size histogram are summed */
	struct threads_sum s0, s1;
	tstate_tls.state = TSTATE_RUNNING;
	threads_register(&tstate_tls);
	threads_sum(&s0);
	uint64_t sizes[] = {1, 40, 63, (uint64_t)1 << 60};
	for (int i = 0; i < 4; i++) {
		tstate_count(&tstate_tls, FN_MALLOC);
		tstate_count_size(&tstate_tls, sizes[i]);
	}
	tstate_count(&tstate_tls, FN_CALLOC);
	tstate_count_size(&tstate_tls, 40);
	threads_sum(&s1);
	CHECK(s1.calls[FN_MALLOC] - s0.calls[FN_MALLOC] == 4, "calls.malloc grew by %llu",
	      (unsigned long long)(s1.calls[FN_MALLOC] - s0.calls[FN_MALLOC]));
	CHECK(s1.calls[FN_CALLOC] - s0.calls[FN_CALLOC] == 1);
	CHECK(s1.hist[0] - s0.hist[0] == 1 && s1.hist[5] - s0.hist[5] == 3, "bucket 5: 40, 63 and calloc 40");
	CHECK(s1.hist[TSTATE_HIST_BUCKETS - 1] - s0.hist[TSTATE_HIST_BUCKETS - 1] == 1, "2^60 clamped");
	return check_finish("lib_perf_filterpin");
}
