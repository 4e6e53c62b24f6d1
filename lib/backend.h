/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * backend.h - the profiler the control plane drives, as one struct of operations chosen once:
 * heaptap's own collector (collector.h) or, when the program runs on a jemalloc whose
 * profiler is compiled in and enabled, jemalloc's (jemalloc_backend.h). The HTTP handlers and
 * the triggers call through backend_get() and never ask which one it is.
 *
 * Operations return 0 (or the value asked for) or a negative errno: -ENOENT when profiling is
 * off, -ENOTSUP for what the backend cannot do. None is async-signal-safe; none calls the
 * host's malloc (jemalloc's own calls allocate from jemalloc's arenas).
 */
#ifndef HEAPTAP_LIB_BACKEND_H
#define HEAPTAP_LIB_BACKEND_H

#include <stddef.h>

#include "../base/outbuf.h"
#include "dumpfmt.h"

struct backend {
	const char *name;       /* "heaptap", "jemalloc": shown in replies and statistics */
	unsigned formats;       /* DUMP_* bits dump_fd can write */
	/* 1 when profiling is possible at all */
	int (*enabled)(void);
	/* a snapshot in format fmt written to fd; `why` names it in the metadata */
	int (*dump_fd)(int fd, enum dump_format fmt, const char *why);
	/* a heap_v2 dump to exactly path */
	int (*dump_path)(const char *path);
	/* a manual dump under the backend's own naming; its path copied to name (cap bytes) */
	int (*dump_manual)(char *name, size_t cap);
	/* the sampling switch: sets it, returns the old state (0/1) */
	int (*set_active)(int on);
	int (*active)(void);
	/* discards the profile and sets the mean sample interval to 2^lg_sample */
	int (*reset)(unsigned lg_sample);
	/* log2 of the mean sample interval */
	int (*lg_sample)(void);
	/* the backend's statistics as one JSON object */
	void (*stats_json)(struct outbuf *ob);
};

/* jemalloc's profiler as a backend: dumps in every format (dump.c reading jemalloc's
   snapshots, allocator frames trimmed), raw prof.dump files for dump_path and dump_manual
   (the run directory), statistics from malloc_stats_print, else heaptap's. */
extern const struct backend jemalloc_backend;

/* The backend in use: heaptap's collector until backend_choose picks another. */
const struct backend *backend_get(void);

/* Picks the backend once: jemalloc's profiler when it is present and enabled (heaptap's own
   sampling is then switched off, which would only double the cost; every dump reads
   jemalloc's), else heaptap's. Says once on stderr what it found (jemalloc_backend_explain)
   when heaptap's prof option is on. Call it inside tstate_enter, from the process's start-up. */
void backend_choose(void);

#endif
