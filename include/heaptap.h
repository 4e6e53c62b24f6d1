/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * heaptap.h - the public C API of libheaptap, the heap profiler's collector.
 *
 * The collector works without any of this: LD_PRELOAD=libheaptap.so profiles a program that
 * was never rebuilt. This header is for programs that want to steer it: dump now, switch
 * sampling on or off, change the rate, read statistics, start the HTTP control plane. Every
 * function works the same whether the library is preloaded or linked (shared or static). A
 * program that may run without heaptap can look the symbols up with dlsym and skip them
 * when they are absent.
 *
 * Conventions: functions return 0 on success and a negative errno value on failure
 * (-EINVAL bad argument, -ENOENT profiling is off, -EIO the dump could not be written,
 * -ENOSPC a caller's buffer is too small, -EADDRINUSE the HTTP port is taken). None of
 * them may be called from a signal handler. None of them calls malloc.
 */
#ifndef HEAPTAP_H
#define HEAPTAP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HEAPTAP_VERSION "0.1.0"

/*
 * Writes a heap profile now. With path NULL the file is named like jemalloc's manual dumps,
 * <prof_prefix>.<pid>.<seq>.m<n>.heap, plus the configured extra formats; with a path, the
 * heap_v2 profile is written to exactly that path (a path ending in ".pb.gz" or ".pb" gets
 * the pprof format instead). The file appears atomically (written beside, then renamed).
 * Runs on the calling thread; returns when the file is complete.
 */
int heaptap_dump(const char *path);

/* Switches sampling on (1) or off (0), like jemalloc's prof.active. Returns the old state (0 or 1). */
int heaptap_set_active(int active);

/* Returns 1 when sampling is on, 0 when it is off. */
int heaptap_active(void);

/*
 * Sets the mean sampling interval to 2^lg_sample bytes (0 samples every allocation, at most
 * 62) and discards the profile collected so far, like jemalloc's prof.reset. Returns 0.
 */
int heaptap_reset(unsigned lg_sample);

/*
 * Writes the statistics as one JSON object into buf (NUL-terminated). Returns the length
 * written, or -ENOSPC when cap is too small (nothing useful is then in buf). The fields are
 * documented in docs/OPTIONS.md and docs/HTTP.md (/heaptap/stats).
 */
long heaptap_stats_json(char *buf, size_t cap);

/*
 * Starts the embedded HTTP server on addr ("127.0.0.1:6060", ":6060" or "6060" mean
 * loopback; another interface must be named explicitly). Returns 0, or -EADDRINUSE when the
 * port is taken, -EALREADY when a server already runs, -EINVAL for a bad address.
 */
int heaptap_http_start(const char *addr);

/*
 * The CPU profiler (docs/CPU.md): samples every thread's stack each 1/cpu_hz seconds of that
 * thread's CPU time (HEAPTAP_CONF cpu_hz, default 100) with a CPU-time timer per thread.
 * heaptap_cpu_start starts a new profile of the run (-EALREADY when one runs; -EBUSY when
 * another profiler owns the sampling signal, which one stderr line then says); heaptap_cpu_stop
 * stops it and keeps what it collected (-ENOENT when none runs); heaptap_cpu_write writes it,
 * running or stopped, to exactly path: pprof when path ends in ".pb" or ".pb.gz" (written
 * uncompressed, which pprof reads), else gperftools' binary CPU format (jeprof, pprof).
 * -ENOENT when no profile was ever started, -EIO when the file cannot be written.
 */
int heaptap_cpu_start(void);
int heaptap_cpu_stop(void);
int heaptap_cpu_write(const char *path);

/* Returns the version string, HEAPTAP_VERSION of the library actually loaded. */
const char *heaptap_version(void);

#ifdef __cplusplus
}
#endif
#endif /* HEAPTAP_H */
