/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * http_delta.h - the pulled delta heap profiles: Go's /debug/pprof/heap?seconds=N and
 * /debug/pprof/allocs?seconds=N (alloc_* allocated during the N seconds, inuse_* absolute at
 * the end, duration_nanos = the window) and godeltaprof's /debug/pprof/delta_heap (the same
 * since the previous request to it). Handlers of the HTTP application (http_routes.c); they
 * run on the server thread, never block it (a ?seconds=N request is parked, not slept on:
 * http_exchange.wait) and never allocate.
 */
#ifndef HEAPTAP_LIB_HTTP_DELTA_H
#define HEAPTAP_LIB_HTTP_DELTA_H

#include <stdint.h>

#include "http_server.h"

/* The longest window ?seconds= may ask for (a parked request is dropped after 135 s). */
#define HTTP_DELTA_MAX_SECONDS 120
/* Windows open at once; one more is answered 503 with Retry-After. */
#define HTTP_DELTA_WINDOWS 4

/* ?seconds=secs on /debug/pprof/heap (allocs 0) or /allocs (allocs 1); secs checked by the
   caller to be 1..HTTP_DELTA_MAX_SECONDS. */
void http_delta_seconds(struct http_exchange *x, int allocs, uint64_t secs);
/* /debug/pprof/delta_heap */
void http_delta_heap(struct http_exchange *x);
/* The application's tick: the time the earliest open window ends (ms), or -1. */
int64_t http_delta_tick(int64_t now_ms);
/* Number of windows open now (statistics, tests). */
unsigned http_delta_open(void);
/* Appends to a gzipped pprof reply the member that makes alloc_space its default sample
   type (Go's allocs profile; http_pprof.c's absolute one too). */
void http_delta_default_alloc_space(struct http_exchange *x);
/* In a fork child: the parent's windows are not the child's. */
void http_delta_fork_child(void);

#endif
