/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cpu_http.h - the CPU profile endpoints of the control plane: /debug/pprof/profile?seconds=N
 * (pprof, Go's net/http/pprof semantics and error replies) and /pprof/profile?seconds=N
 * (gperftools' binary CPU format, what `jeprof BINARY http://host:port/pprof/profile`
 * fetches). A request starts a window (cpuprof.h) and is parked (http_exchange.wait) while it
 * runs, so the server keeps answering other requests; the tick ends the window and the parked
 * request is dispatched again and gets the profile. One window at a time.
 *
 * Handlers of the HTTP application (http_routes.c); they run on the server thread and never
 * allocate. Not the sessions (cpuprof.c).
 */
#ifndef HEAPTAP_LIB_CPU_HTTP_H
#define HEAPTAP_LIB_CPU_HTTP_H

#include <stdint.h>

#include "http_server.h"

/* gperf 0: /debug/pprof/profile (pprof); 1: /pprof/profile (gperftools). */
void cpu_http_profile(struct http_exchange *x, int gperf);
/* The application's tick and busy parts: a running window ends at its time. */
int64_t cpu_http_tick(int64_t now_ms);
int cpu_http_busy(void);

#endif
