/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * http_mesos.h - Mesos' memory-profiler endpoints (/memory-profiler/start, stop, state,
 * statistics, download/raw|text|graph), handlers of the HTTP application (http_routes.c),
 * with the run clock and the background CLI job they own. Server thread only.
 */
#ifndef HEAPTAP_LIB_HTTP_MESOS_H
#define HEAPTAP_LIB_HTTP_MESOS_H

#include <stdint.h>

#include "http_server.h"

/* Answers /memory-profiler/<route>. */
void http_mesos_dispatch(struct http_exchange *x, const char *route);
/* Ends a run whose duration elapsed, checks on the CLI job; returns the next deadline (ms) or
   -1. */
int64_t http_mesos_tick(int64_t now_ms);
/* Forgets the run (fork child: the parent's run is not the child's). */
void http_mesos_fork_child(void);
/* 1 while a background job (the CLI rendering a download) runs. */
int http_mesos_busy(void);

#endif
