/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cpuprof.h - the CPU profiler's sessions: what the sampler (cpu_sampler.h) takes, gathered
 * into stack tables and written as pprof or gperftools CPU profiles (docs/CPU.md).
 *
 * Two sessions can run at once, each with its own stack table (stacktab.h), so that one never
 * disturbs the other: the run profile (HEAPTAP_CONF cpu_prof, gperftools' CPUPROFILE, the C
 * API) and one HTTP window (/debug/pprof/profile, /pprof/profile: one at a time). The sampler
 * runs while either does; a thread of its own drains the rings every few milliseconds and
 * rescans the process's threads. Not the sampling (cpu_sampler.c), nor the HTTP handlers
 * (cpu_http.c), nor the formats (profile/inproc/cpu_pprof_write.h, gperf_cpu_write.h). No host
 * malloc; none of it is async-signal-safe; every function may lock the sessions' mutex.
 */
#ifndef HEAPTAP_LIB_CPUPROF_H
#define HEAPTAP_LIB_CPUPROF_H

#include <stddef.h>
#include <stdint.h>

#include "cpu_sampler.h"

enum cpuprof_format { CPUPROF_PPROF = 1, CPUPROF_GPERF = 2 };

/* At start-up (lifecycle.c): starts the run profile when the options ask for it. */
void cpuprof_init(void);

/* The run profile: start (a new one; -EALREADY when it runs), stop (keeps what it collected;
   -ENOENT when none), write to exactly path (pprof when path ends in .pb or .pb.gz, else
   gperftools' format; atomically: written beside, then renamed; -ENOENT when nothing was ever
   started). Start returns the sampler's errors (-EBUSY: another profiler owns the signal). */
int cpuprof_run_start(void);
int cpuprof_run_stop(void);
int cpuprof_run_write(const char *path);

/* The HTTP window: begin one of `seconds` (1..86400) in fmt (-EBUSY when one runs or waits to
   be written); poll it at now (CLOCK_MONOTONIC ms): it ends once due, and the next time it
   wants a call is returned (-1: none); state: 0 none, 1 running, 2 finished (its writer owes
   the reply); write the finished window to fd and forget it. */
int cpuprof_window_begin(unsigned seconds, enum cpuprof_format fmt);
int64_t cpuprof_window_poll(int64_t now_ms);
int cpuprof_window_state(void);
enum cpuprof_format cpuprof_window_format(void);
int cpuprof_window_write(int fd);
/* Forgets the window (its client went away). */
void cpuprof_window_cancel(void);

/* A heap dump was written to base + its extensions (dump.c, dump lock held, never in a signal
   handler): while the run profile runs, the profile so far goes beside it, to base +
   ".cpu.pb" and/or ".cpu.prof" (the run profile's formats). 0, -ENOENT when the run profile
   does not run, or the write's -errno. unlink_beside deletes those files (dump retention). */
int cpuprof_dump_beside(const char *base);
void cpuprof_unlink_beside(const char *base);

/* The profiler's statistics (stats.c, metrics.c): the sampler's counters since start, whether
   it runs (and ever started), its timer mode, the profiles written and the writes that failed
   (files, HTTP windows). Reads atomics only: no lock. */
struct cpuprof_stats {
	struct cpu_sampler_counts sampler;
	int running, started;
	const char *timer;
	unsigned hz;
	uint64_t written, write_failed;
};
void cpuprof_get_stats(struct cpuprof_stats *out);

/* At exit: stops the run profile and writes it where the options say. */
void cpuprof_at_exit(void);

/* A library is being dlclose'd: drains the sampler's shards and rewrites the sessions' PCs
   through map (its frames moved to synthetic addresses, maps.h). Not from a signal handler. */
void cpuprof_rewrite_pcs(uintptr_t (*map)(uintptr_t pc, const void *ctx), const void *ctx);

/* Fork: prepare takes the locks, parent releases them; the child has no running profile (and
   no thread) unless cpu_fork asks the run profile to continue into the child's own file. */
void cpuprof_fork_prepare(void);
void cpuprof_fork_parent(void);
void cpuprof_fork_child(void);

#endif
