/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * http_limit.h - the control plane's rate limit on dumps asked for over HTTP (/heaptap/dump
 * and /memory-profiler/stop): at most one per http_dump_rate_ms (docs/OPTIONS.md; 0 = no
 * limit), others answered 429 with Retry-After. One gate shared by both endpoints, so that
 * alternating them does not double the rate.
 *
 * It is not the retention of dump files (dump.c) nor a general request limiter. Server
 * thread only; never allocates.
 */
#ifndef HEAPTAP_LIB_HTTP_LIMIT_H
#define HEAPTAP_LIB_HTTP_LIMIT_H

#include "http_server.h"

/*
 * Takes the dump gate: returns 1 when a dump may be written now (the next one then waits
 * http_dump_rate_ms), or 0 after replacing x's reply with 429 Too Many Requests, a
 * Retry-After header (whole seconds, at least 1) and a body saying so (JSON {"error": ...,
 * "errno": -11} when json is 1, one text line otherwise).
 */
int http_limit_dump(struct http_exchange *x, int json);

#endif
