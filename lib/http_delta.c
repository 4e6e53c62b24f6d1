/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * http_delta.c - the pulled delta profiles of http_delta.h. A ?seconds=N request takes a
 * reading (delta.h) into one of HTTP_DELTA_WINDOWS windows and is parked; the server routes
 * it again at every tick, and once its N seconds are over the delta is written and the
 * window freed. Windows whose request vanished (the client left, the server dropped it) are
 * reclaimed when their request could no longer be waiting.
 *
 * Not the reading nor the writing (delta.c), not the absolute profiles (http_pprof.c).
 * Server thread only; no host malloc.
 */
#include "http_delta.h"

#include <errno.h>
#include <string.h>

#include "backend.h"
#include "delta.h"

#define PARK_MAX_MS 136000 /* the server drops a request parked longer than 135 s */

struct window {
	int used;
	uint64_t serial;   /* the parked request */
	int64_t due_ms;    /* monotonic end of the window */
	int64_t expire_ms; /* reclaimed after this if its request never came back */
	struct delta_base base;
};

static struct window win[HTTP_DELTA_WINDOWS];
static struct delta_base heap_base; /* /debug/pprof/delta_heap's previous reading */

static void go_text(struct http_exchange *x, int status, const char *msg)
{
	http_server_reply_text(x, status, msg);
	http_server_header(x, "X-Go-Pprof", "1");
}

void http_delta_default_alloc_space(struct http_exchange *x)
{
	/* Go's allocs profile defaults to alloc_space. A second gzip member holding one more
	   Profile field, default_sample_type (14) = 3 (the writer's fixed string index of
	   "alloc_space"), is concatenated: gzip readers inflate every member and protobuf keeps
	   the last value of a scalar field. */
	static const unsigned char member[] = {
		0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0xff, /* gzip header */
		0x01, 0x02, 0x00, 0xfd, 0xff, 0x70, 0x03,       /* stored block: 70 03 */
		0xb3, 0x3a, 0xef, 0xf7, 0x02, 0x00, 0x00, 0x00, /* crc32, size */
	};
	outbuf_put(&x->ob, member, sizeof member);
}

/* Writes the delta of base as the reply: Go's headers, allocs' default sample type. */
static void reply_delta(struct http_exchange *x, struct delta_base *b, int allocs, const char *name, int advance)
{
	x->ctype = "application/octet-stream";
	http_server_header(x, "Content-Disposition", name);
	int rc = delta_write(b, http_server_body_fd(x), DUMP_PPROF, allocs ? "allocs-delta" : "heap-delta",
	                     DELTA_BOTH, 1, advance);
	if (rc == 0 && allocs)
		http_delta_default_alloc_space(x);
	if (rc < 0) {
		x->headers_len = 0;
		go_text(x, rc == -ENOENT ? 409 : 500,
		        rc == -ENOENT ? "profiling is off (HEAPTAP_CONF=prof:false)\n" : "could not write the delta profile\n");
	}
}

/* 1 when the backend keeps the cumulative counts a delta needs (heaptap's own collector). */
static int backend_has_deltas(struct http_exchange *x)
{
	if (strcmp(backend_get()->name, "heaptap") == 0)
		return 1;
	go_text(x, 501, "delta profiles need heaptap's own collector; the jemalloc backend serves "
	                "absolute profiles only (fetch two and subtract them: heaptap diff)\n");
	return 0;
}

void http_delta_seconds(struct http_exchange *x, int allocs, uint64_t secs)
{
	int64_t now = http_server_now_ms();
	if (!backend_has_deltas(x))
		return;
	for (int i = 0; i < HTTP_DELTA_WINDOWS; i++) {
		struct window *w = &win[i];
		if (!w->used || w->serial != x->serial)
			continue;
		if (now < w->due_ms) {
			x->wait = 1; /* not yet: parked again */
			return;
		}
		w->used = 0;
		reply_delta(x, &w->base, allocs, allocs ? "attachment; filename=\"allocs-delta\""
		                                        : "attachment; filename=\"heap-delta\"", 0);
		return;
	}
	struct window *free_w = NULL;
	for (int i = 0; i < HTTP_DELTA_WINDOWS; i++) {
		struct window *w = &win[i];
		if (w->used && now > w->expire_ms)
			w->used = 0; /* its request is gone */
		if (!w->used && !free_w)
			free_w = w;
	}
	if (!free_w) {
		go_text(x, 503, "too many delta profiles in progress: retry when one is over\n");
		http_server_header(x, "Retry-After", "1");
		return;
	}
	int rc = free_w->base.ents ? 0 : delta_base_init(&free_w->base);
	if (rc == 0)
		rc = delta_mark(&free_w->base);
	if (rc < 0) {
		go_text(x, rc == -ENOENT ? 409 : 503,
		        rc == -ENOENT ? "profiling is off (HEAPTAP_CONF=prof:false)\n" : "out of memory for a delta\n");
		return;
	}
	free_w->used = 1;
	free_w->serial = x->serial;
	free_w->due_ms = now + (int64_t)secs * 1000;
	free_w->expire_ms = now + PARK_MAX_MS;
	x->wait = 1;
}

void http_delta_heap(struct http_exchange *x)
{
	if (!backend_has_deltas(x))
		return;
	if (!heap_base.ents) {
		int rc = delta_base_init(&heap_base);
		if (rc < 0) {
			go_text(x, rc == -ENOENT ? 409 : 503,
			        rc == -ENOENT ? "profiling is off (HEAPTAP_CONF=prof:false)\n" : "out of memory for a delta\n");
			return;
		}
	}
	reply_delta(x, &heap_base, 0, "attachment; filename=\"delta_heap\"", 1);
}

int64_t http_delta_tick(int64_t now_ms)
{
	int64_t next = -1;
	(void)now_ms;
	for (int i = 0; i < HTTP_DELTA_WINDOWS; i++)
		if (win[i].used && (next < 0 || win[i].due_ms < next))
			next = win[i].due_ms;
	return next;
}

unsigned http_delta_open(void)
{
	unsigned n = 0;
	for (int i = 0; i < HTTP_DELTA_WINDOWS; i++)
		n += __atomic_load_n(&win[i].used, __ATOMIC_RELAXED) != 0;
	return n;
}

void http_delta_fork_child(void)
{
	for (int i = 0; i < HTTP_DELTA_WINDOWS; i++)
		win[i].used = 0;
}
