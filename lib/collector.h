/*
 * collector.h - the collector's internal contract between its parts: the sampler and tables
 * (owned by sampler.c, stacktab.c, livetab.c), the dump machinery (dump.c) and the control
 * plane (http*.c, api.c, stats.c). Not installed, not exported from the .so.
 *
 * Every function here is safe to call from any thread of the host once the collector is
 * initialised, never calls the host's malloc, and may take the collector's locks (so never
 * from a signal handler, nor with a collector lock held).
 */
#ifndef HEAPTAP_LIB_COLLECTOR_H
#define HEAPTAP_LIB_COLLECTOR_H

#include <stddef.h>
#include <stdint.h>

#include "../base/outbuf.h"

enum dump_format {
	DUMP_HEAPV2 = 1,   /* jemalloc heap_v2 text (jeprof) */
	DUMP_PPROF = 2,    /* gzipped pprof protobuf (go tool pprof) */
	DUMP_LEGACY = 4,   /* gperftools "heap profile: ... @ heap_v2/R" text (Go ?debug=1) */
};

/* Why a dump is taken; decides the file-name letter (jemalloc's scheme plus ours). */
enum dump_trigger {
	TRIG_INTERVAL,  /* 'i': every 2^lg_prof_interval bytes */
	TRIG_GDUMP,     /* 'u': new high-water mark */
	TRIG_MANUAL,    /* 'm': heaptap_dump(NULL), HTTP dump-now */
	TRIG_FINAL,     /* 'f': at exit */
	TRIG_TIME,      /* 't': prof_time_interval */
	TRIG_SIGNAL,    /* 's': prof_signal */
};

/* Initialises the collector if it is not yet (idempotent; cheap once done). */
void collector_init(void);

/* 1 if profiling is enabled (opt prof) at all. */
int collector_enabled(void);

/* Writes one snapshot in the given single format to fd. `trigger` names it in metadata.
   Returns 0 or -errno. */
int collector_dump_fd(int fd, enum dump_format fmt, const char *trigger);

/* Writes a dump for `trig` under the configured prefix and formats (jemalloc file names),
   atomically. Returns 0 or -errno; failures are also counted in the statistics. If name is
   not NULL, the heap_v2 file name used is copied there (cap bytes). */
int collector_dump_named(enum dump_trigger trig, char *name, size_t cap);

/* Writes a dump to exactly `path` (format from the name: .pb.gz/.pb -> pprof, else heap_v2). */
int collector_dump_path(const char *path);

/* Sampling switch and rate (see heaptap.h). */
int collector_set_active(int on);
int collector_active(void);
int collector_reset(unsigned lg_sample);
unsigned collector_lg_sample(void);

/* Asks the background thread to take a dump for trig soon (async-signal-safe). */
void collector_request_dump(enum dump_trigger trig);

/* Appends the statistics JSON object (stats.c) to ob. */
void collector_stats_json(struct outbuf *ob);

#endif
