/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cpusrc.h - what the CPU profiler hands to the in-process CPU profile writers: one window of
 * CPU-time samples as distinct stacks with their tick counts, the sampling period, the
 * process's memory map and what the stacks do not show (lost samples).
 *
 * Plain data and one callback, like dumpsrc.h for heap dumps: no allocation implied, so the
 * writers (cpu_pprof_write.h, gperf_cpu_write.h) run inside the host. Not the sampler
 * (lib/cpu_sampler.h) nor the sessions (lib/cpuprof.h).
 */
#ifndef HEAPTAP_PROFILE_CPUSRC_H
#define HEAPTAP_PROFILE_CPUSRC_H

#include <stddef.h>
#include <stdint.h>

#include "dumpsrc.h"

/* One distinct stack. pcs[0] is the interrupted instruction itself (not a return address);
   pcs[1..] are return addresses. */
struct cpu_stack {
	const uintptr_t *pcs;
	uint32_t depth;   /* >= 1 */
	uint64_t ticks;   /* timer expirations it stands for (signals + overruns) */
};

/* Samples the stacks do not show, and how the window was sampled. */
struct cpu_losses {
	uint64_t signals;       /* samples taken into the stacks */
	uint64_t overruns;      /* extra expirations folded into them as weight */
	uint64_t lost_full;     /* a ring buffer was full */
	uint64_t lost_inside;   /* the thread was inside heaptap (its malloc slow path, its own threads) */
	uint64_t lost_table;    /* the stack table could not take the stack */
	uint64_t unwind_fp;     /* stacks the DWARF rules could not unwind: frame pointers instead */
	uint64_t truncated;     /* stacks cut at the frame limit */
	uint64_t threads;       /* threads whose CPU clock was sampled (per-thread timers) */
	uint64_t threads_failed;/* threads a timer could not be created for */
};

struct cpu_source {
	uint64_t period_ns;       /* CPU time between samples of one thread (1e9 / hz) */
	unsigned hz;
	const char *timer;        /* "thread" (one CPU-time timer per thread) or "setitimer"
	                             (process-wide ITIMER_PROF: under-counts beyond a few busy cores) */
	int64_t start_ns;         /* wall-clock start of the window, ns since the Unix epoch */
	int64_t duration_ns;      /* its length */
	int pid;
	const char *exe_path;
	const char *cmdline;
	struct cpu_losses losses;
	const char *maps_text;    /* /proc/self/maps as dumpsrc.h has it */
	size_t maps_len;
	const struct dump_mapping *mappings; /* executable mappings, main program first */
	size_t nmappings;
	/* Calls fn for every stack with ticks > 0; stops early when fn returns nonzero (and
	   returns it). */
	int (*for_each_stack)(const struct cpu_source *src,
	                      int (*fn)(void *ctx, const struct cpu_stack *st), void *ctx);
	void *priv;
};

#endif
