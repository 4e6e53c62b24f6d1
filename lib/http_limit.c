/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * http_limit.c - the dump gate of http_limit.h: the monotonic time before which the next dump
 * asked for over HTTP is refused.
 *
 * Not the retention of dump files (dump.c); never allocates; server thread only.
 */
#include "http_limit.h"

#include <errno.h>

#include "../base/outbuf.h"
#include "options.h"

static int64_t next_ms; /* the gate opens again at this monotonic time */

int http_limit_dump(struct http_exchange *x, int json)
{
	uint64_t rate = options_get()->http_dump_rate_ms;
	int64_t now = http_server_now_ms();
	if (rate == 0 || now >= next_ms) {
		next_ms = now + (int64_t)rate;
		return 1;
	}
	int64_t wait_s = (next_ms - now + 999) / 1000;
	char secs[24], msg[160];
	struct outbuf ob;
	fmt_u64(secs, (uint64_t)(wait_s > 0 ? wait_s : 1));
	outbuf_init(&ob, msg, sizeof msg - 1, -1);
	outbuf_puts(&ob, "too many dumps: at most one every ");
	outbuf_u64(&ob, rate);
	outbuf_puts(&ob, " ms (http_dump_rate_ms); retry after ");
	outbuf_puts(&ob, secs);
	outbuf_puts(&ob, " s");
	msg[ob.len] = 0;
	http_server_body_reset(x);
	x->status = 429;
	if (json) {
		x->ctype = "application/json";
		outbuf_puts(&x->ob, "{\"error\": \"");
		outbuf_json_str(&x->ob, msg);
		outbuf_puts(&x->ob, "\", \"errno\": ");
		outbuf_i64(&x->ob, -EAGAIN);
		outbuf_puts(&x->ob, "}\n");
	} else {
		x->ctype = "text/plain; charset=utf-8";
		outbuf_puts(&x->ob, msg);
		outbuf_puts(&x->ob, ".\n");
	}
	http_server_header(x, "Retry-After", secs);
	return 0;
}
