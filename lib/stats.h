/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * stats.h - the statistics of heaptap's own profiler as one JSON object (fields documented in
 * docs/OPTIONS.md and docs/HTTP.md): call counts and size histogram summed over threads,
 * sampler and table figures, the collector's own memory, dump outcomes, the control plane's
 * counters, the options in force.
 *
 * It reads the other modules (core, threads, dump, cfi, http_server, options) and writes nothing of
 * theirs. May take the table and registry locks; not async-signal-safe; no host malloc.
 */
#ifndef HEAPTAP_LIB_STATS_H
#define HEAPTAP_LIB_STATS_H

#include "../base/outbuf.h"

/* Appends the statistics JSON object to ob. */
void stats_json(struct outbuf *ob);

#endif
