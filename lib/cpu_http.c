/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cpu_http.c - the CPU profile endpoints of cpu_http.h. Go's handler, which these follow: a
 * seconds value that is not a positive integer means 30; a profile longer than the server's
 * write timeout is refused with 400; a second profile while one runs gets 500 "Could not
 * enable CPU profiling: cpu profiling already in use"; errors carry X-Go-Pprof: 1. Never
 * allocates.
 */
#include "cpu_http.h"

#include <errno.h>
#include <string.h>

#include "cpuprof.h"
#include "http_parse.h"

/* A parked request may wait 135 s (http_server.c): a window must end well before that. */
#define CPU_HTTP_MAX_SECONDS 120
/* A finished window nobody took within this long belonged to a client that went away. */
#define CPU_HTTP_STALE_MS 10000

static int parked;        /* 1 while the request that began the window is parked */
static int64_t done_ms;   /* when the window finished */

static void go_error(struct http_exchange *x, int status, const char *msg)
{
	http_server_reply_text(x, status, msg);
	outbuf_putc(&x->ob, '\n');
	http_server_header(x, "X-Go-Pprof", "1");
}

static void deliver(struct http_exchange *x)
{
	parked = 0;
	x->ctype = "application/octet-stream";
	http_server_header(x, "Content-Disposition", "attachment; filename=\"profile\"");
	int rc = cpuprof_window_write(http_server_body_fd(x));
	if (rc < 0) {
		x->headers_len = 0;
		go_error(x, 500, "Could not write the CPU profile");
	}
}

void cpu_http_profile(struct http_exchange *x, int gperf)
{
	int state = cpuprof_window_state();
	if (state == 2 && parked) {
		deliver(x);
		return;
	}
	if (state == 2) { /* finished for a client that is gone */
		cpuprof_window_cancel();
		state = 0;
	}
	char v[32];
	uint64_t secs = 0;
	long n = http_parse_query_get(x->query, x->query_len, "seconds", v, sizeof v);
	if (n < 0 || http_parse_uint(v, (size_t)n, UINT32_MAX, &secs) != 0 || secs == 0)
		secs = 30;
	if (secs > CPU_HTTP_MAX_SECONDS) {
		go_error(x, 400, "profile duration exceeds server's WriteTimeout");
		return;
	}
	int rc = state == 0 ? cpuprof_window_begin((unsigned)secs, gperf ? CPUPROF_GPERF : CPUPROF_PPROF)
	                    : -EBUSY;
	if (rc == -EBUSY && state != 0) {
		go_error(x, 500, "Could not enable CPU profiling: cpu profiling already in use");
		return;
	}
	if (rc < 0) {
		go_error(x, 500, rc == -EBUSY ? "Could not enable CPU profiling: the signal has another "
		                                "handler (another CPU profiler in the process)"
		                              : "Could not enable CPU profiling");
		return;
	}
	parked = 1;
	x->wait = 1;
}

int64_t cpu_http_tick(int64_t now_ms)
{
	int before = cpuprof_window_state();
	int64_t due = cpuprof_window_poll(now_ms);
	if (before == 1 && cpuprof_window_state() == 2)
		done_ms = now_ms;
	if (cpuprof_window_state() == 2 && now_ms - done_ms > CPU_HTTP_STALE_MS) {
		cpuprof_window_cancel();
		parked = 0;
	}
	return due;
}

int cpu_http_busy(void)
{
	return cpuprof_window_state() == 1;
}
