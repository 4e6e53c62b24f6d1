/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cpu_sampler.h - the CPU profiler's sampling machinery: one CPU-time POSIX timer per thread
 * (timer_create on the thread's CPU clock, delivered to that thread with SIGEV_THREAD_ID, a
 * random first expiry, overruns as extra weight), or one process-wide setitimer(ITIMER_PROF)
 * where per-thread timers cannot be made; the signal handler that unwinds the interrupted
 * context into lock-free ring buffers; and the table of armed threads (the threads found in
 * /proc/self/task when sampling starts, every thread pthread_create makes while it runs, and
 * the threads a periodic rescan finds).
 *
 * It keeps no profile: cpuprof.c drains the rings (cpu_sampler_drain) into its stack tables.
 * The handler is async-signal-safe (no lock, no allocation); everything else may lock the
 * sampler's thread-table mutex and is not async-signal-safe. No host malloc except the
 * pthread_create trampoline's few bytes (through the real allocator).
 */
#ifndef HEAPTAP_LIB_CPU_SAMPLER_H
#define HEAPTAP_LIB_CPU_SAMPLER_H

#include <stdint.h>

#include "../profile/inproc/cpusrc.h"

/* Frames kept per sample (deeper stacks are cut and counted as truncated). */
#define CPU_SAMPLER_FRAMES 125

/*
 * Starts sampling at hz (1..10000) on signal sig, per-thread timers unless force_process.
 * Installs the handler the first time. Returns 0, -EBUSY when another handler owns sig (a
 * handler installed before heaptap's on SIGPROF, or one that replaced heaptap's: one stderr
 * line says so, once), -EALREADY when it runs, or -errno.
 */
int cpu_sampler_start(unsigned hz, int sig, int force_process);
/* Stops sampling: every timer deleted. Samples already in the rings stay for the drain. */
void cpu_sampler_stop(void);
/* 1 while sampling. */
int cpu_sampler_running(void);
/* "thread" or "setitimer" (the mode of the last start). */
const char *cpu_sampler_timer_name(void);

/* Hands every complete sample in the rings to fn (pcs[0..depth), ticks, flags: bit 0 the
   frame-pointer fallback unwound it, bit 1 it was cut at CPU_SAMPLER_FRAMES). Single consumer:
   the caller serialises drains. */
enum { CPU_SAMPLE_FP = 1, CPU_SAMPLE_TRUNC = 2 };
void cpu_sampler_drain(void (*fn)(void *ctx, const uintptr_t *pcs, uint32_t depth,
                                  uint64_t ticks, unsigned flags),
                       void *ctx);

/* Looks for threads without a timer in /proc/self/task (and forgets those that are gone). */
void cpu_sampler_rescan(void);

/* The calling thread starts or ends (pthread_create's trampoline, cpu_threads.c): arms or
   deletes its timer while sampling runs. */
void cpu_sampler_thread_begin(void);
void cpu_sampler_thread_end(void);

/* Counters since the process started (monotonic; sessions subtract), except armed: the
   threads with a timer now. taken: samples the handler wrote into a ring (ticks: their weight
   with overruns); unwind_fp: of those, unwound by the frame-pointer fallback; unwind_leaf: the
   unwinder failed and only the interrupted pc was kept. */
struct cpu_sampler_counts {
	uint64_t lost_full, lost_inside, stray, foreign, threads, threads_failed;
	uint64_t taken, ticks, unwind_fp, unwind_leaf, armed;
};
void cpu_sampler_get_counts(struct cpu_sampler_counts *out);

/* Fork: prepare takes the thread-table lock, parent releases it; the child (which inherits no
   timer) starts stopped with empty rings and table. */
void cpu_sampler_fork_prepare(void);
void cpu_sampler_fork_parent(void);
void cpu_sampler_fork_child(void);

#endif
