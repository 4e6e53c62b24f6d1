/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * metrics.h - /metrics: the collector's figures in the Prometheus text exposition format
 * (version 0.0.4): the live and peak estimates, bytes allocated, samples and drops, dumps
 * per trigger, the push client's outcomes, the process's memory (RSS, virtual size, its
 * cgroup's usage and limit) when /proc and the cgroup files tell. Names, types and HELP
 * follow Prometheus's conventions (checked by promtool in tests/e2e/fleet_metrics.sh).
 *
 * Not the JSON statistics (stats.h). May take the table lock; no host malloc; not
 * async-signal-safe.
 */
#ifndef HEAPTAP_LIB_METRICS_H
#define HEAPTAP_LIB_METRICS_H

#include "../base/outbuf.h"

/* The Content-Type of the exposition. */
#define METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* Appends the whole exposition to ob. */
void metrics_write(struct outbuf *ob);

#endif
