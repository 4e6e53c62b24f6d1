/*
 * http_server.h - the contract between the HTTP server loop (http_server.c) and the
 * handlers (http_routes.c, http_pprof.c, http_mesos.c): one struct http_exchange per
 * request, whose body the handler writes into a memfd that the server then streams.
 *
 * Handlers run on the server thread, one at a time, and may block it (a dump, a spawned
 * CLI); they must not call malloc themselves and must not keep pointers into the exchange
 * after returning. None of this is async-signal-safe.
 */
#ifndef HEAPTAP_LIB_HTTP_SERVER_H
#define HEAPTAP_LIB_HTTP_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "../base/outbuf.h"
#include "http_parse.h"

struct http_exchange {
	const struct http_request *req;
	const char *path;          /* percent-decoded, checked by http_parse_path */
	const char *query;         /* raw query string (not decoded), query_len bytes */
	size_t query_len;
	const char *body;          /* request body (POST), body_len bytes */
	size_t body_len;

	/* the reply, filled by the handler */
	int status;                /* 200 unless set */
	const char *ctype;         /* Content-Type, "text/plain; charset=utf-8" unless set */
	char headers[768];         /* extra header lines, each ending in CRLF */
	size_t headers_len;
	struct outbuf ob;          /* the body: flushed to body_fd */
	char obuf[8192];
	int body_fd;               /* memfd holding the body (owned by the server) */
	int file_fd;               /* >= 0: serve this file instead of body_fd (the server closes it) */
	int wait;                  /* 1: no reply yet; route the request again once
	                              http_mesos_busy() is 0 (a background job is running) */
};

/* Appends "name: value\r\n" to the extra headers (dropped when they do not fit). */
void http_server_header(struct http_exchange *x, const char *name, const char *value);

/* Sets status and a text/plain body (replacing anything written so far). */
void http_server_reply_text(struct http_exchange *x, int status, const char *text);

/* Discards the body written so far. */
void http_server_body_reset(struct http_exchange *x);

/* Flushes the outbuf and returns the body fd, for writers that take an fd. */
int http_server_body_fd(struct http_exchange *x);

/* Milliseconds on CLOCK_MONOTONIC. */
int64_t http_server_now_ms(void);

/* ---- http_routes.c ---- */

/* Routes one request (method already checked to be GET, HEAD or POST). */
void http_routes_dispatch(struct http_exchange *x);

/* The run directory "$TMPDIR/heaptap.<pid>.XXXXXX", created on first use; NULL on failure. */
const char *http_routes_tmpdir(void);

/* 1 when the endpoints drive jemalloc's profiler rather than heaptap's (decided at start). */
int http_routes_jemalloc_mode(void);

/* Called once by http_start on the caller's thread (dlsym may allocate). */
void http_routes_init(void);

/* Forgets the tmp dir and run state (atfork child). */
void http_routes_atfork_child(void);

/* ---- http_pprof.c: jeprof (/pprof/...) and Go (/debug/pprof/...) endpoints ---- */
void http_pprof_heap(struct http_exchange *x);          /* /pprof/heap */
void http_pprof_symbol(struct http_exchange *x);        /* /pprof/symbol, /debug/pprof/symbol */
void http_pprof_cmdline(struct http_exchange *x, int go_style);
void http_pprof_go(struct http_exchange *x, const char *name); /* /debug/pprof/<name> */
void http_pprof_go_index(struct http_exchange *x);

/* Writes a heap_v2 dump (heaptap's or jemalloc's) into the body. Returns 0 or -errno. */
int http_pprof_dump_heapv2(struct http_exchange *x);

/* ---- http_mesos.c: /memory-profiler/... ---- */
void http_mesos_dispatch(struct http_exchange *x, const char *route);
/* Ends a run whose duration elapsed; returns the next deadline (ms) or -1. */
int64_t http_mesos_tick(int64_t now_ms);
/* Forgets the run (atfork child: the parent's run is not the child's). */
void http_mesos_atfork_child(void);
/* 1 while a background job (the CLI rendering a download) runs. */
int http_mesos_busy(void);

#endif
