/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * http_routes.h - the collector's HTTP application: the route table of the control plane
 * (jeprof, Go pprof, Mesos and heaptap's own endpoints; docs/HTTP.md) as a struct http_app
 * for the generic server (http_server.h). It drives whichever profiler backend.h chose.
 */
#ifndef HEAPTAP_LIB_HTTP_ROUTES_H
#define HEAPTAP_LIB_HTTP_ROUTES_H

#include "http_server.h"

extern const struct http_app http_routes_app;

#endif
