/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * http_pprof.h - the jeprof remote endpoints (/pprof/heap, /pprof/symbol, /pprof/cmdline) and
 * Go's net/http/pprof layout (/debug/pprof/heap, allocs, symbol, cmdline, the index), as
 * FORMATS.md sections 4 and 5.5 describe them. Handlers of the HTTP application
 * (http_routes.c); they run on the server thread and never allocate.
 */
#ifndef HEAPTAP_LIB_HTTP_PPROF_H
#define HEAPTAP_LIB_HTTP_PPROF_H

#include "http_server.h"

void http_pprof_heap(struct http_exchange *x);          /* /pprof/heap */
void http_pprof_symbol(struct http_exchange *x);        /* /pprof/symbol, /debug/pprof/symbol */
void http_pprof_cmdline(struct http_exchange *x, int go_style);
void http_pprof_go(struct http_exchange *x, const char *name); /* /debug/pprof/<name> */
void http_pprof_go_index(struct http_exchange *x);


#endif
