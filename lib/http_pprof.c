/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * http_pprof.c - the jeprof and Go pprof endpoints of http_pprof.h.
 *
 * It is not a profile writer: dumps come from the backend (backend.h) and symbols from
 * symbolz.c. Runs on the server thread; never allocates.
 */
#include "http_pprof.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "http_delta.h"
#include "symbolz.h"
#include "sys.h"

static char cmdbuf[65536 + 1]; /* + the NUL sys_read_small adds */

static void dump_failed(struct http_exchange *x, int rc)
{
	http_server_reply_text(x, rc == -ENOENT ? 409 : 500, "");
	outbuf_puts(&x->ob, rc == -ENOENT ? "profiling is off (HEAPTAP_CONF=prof:false), or no peak profile (prof_peak:true)" : "could not dump the profile");
	outbuf_puts(&x->ob, ": errno ");
	outbuf_i64(&x->ob, -rc);
	outbuf_putc(&x->ob, '\n');
}

/* The profile a heap request asks for: "http", or "peak" with peak=1 (the peak profile of
   prof_peak, heaptap's collector only). NULL after replying 400/501 for a bad request. */
static const char *heap_why(struct http_exchange *x)
{
	char v[8];
	uint64_t peak = 0;
	long pn = http_parse_query_get(x->query, x->query_len, "peak", v, sizeof v);
	if (pn == -2 || (pn >= 0 && http_parse_uint(v, (size_t)pn, 1, &peak) != 0)) {
		http_server_reply_text(x, 400, "peak must be 0 or 1\n");
		return NULL;
	}
	if (peak && strcmp(backend_get()->name, "heaptap") != 0) {
		http_server_reply_text(x, 501, "the peak profile is heaptap's (prof_peak:true)\n");
		return NULL;
	}
	return peak ? "peak" : "http";
}

void http_pprof_heap(struct http_exchange *x)
{
	/* jeprof asks <base>/pprof/profile?seconds=30 of a URL it does not know: the heap profile
	   is served whatever the value, but only for a sensible one */
	char v[32];
	uint64_t secs;
	long sn = http_parse_query_get(x->query, x->query_len, "seconds", v, sizeof v);
	if (sn == -2 || (sn >= 0 && http_parse_uint(v, (size_t)sn, 86400, &secs) != 0)) {
		http_server_reply_text(x, 400, "seconds must be an integer from 0 to 86400\n");
		return;
	}
	const char *why = heap_why(x);
	if (!why)
		return;
	int rc = backend_get()->dump_fd(http_server_body_fd(x), DUMP_HEAPV2, why);
	if (rc < 0)
		dump_failed(x, rc);
}

/* GET (no addresses) -> "num_symbols: 1"; POST body or GET query -> "0x<hex> <name>" lines. */
void http_pprof_symbol(struct http_exchange *x)
{
	const char *s = x->body_len ? x->body : x->query;
	size_t n = x->body_len ? x->body_len : x->query_len;
	struct http_symaddr a;
	size_t pos = 0;
	if (x->req->method != HTTP_POST && !http_parse_symbol_next(s, n, &pos, &a)) {
		outbuf_puts(&x->ob, "num_symbols: 1\n");
		return;
	}
	symbolz_begin();
	pos = 0;
	while (http_parse_symbol_next(s, n, &pos, &a)) {
		const char *name = symbolz_lookup((uintptr_t)a.addr);
		if (!name || !*name)
			continue;
		char hex[17];
		for (size_t i = 0; i < a.hex_len; i++) {
			char c = a.hex[i];
			hex[i] = c >= 'A' && c <= 'F' ? (char)(c + 32) : c;
		}
		outbuf_puts(&x->ob, "0x");
		outbuf_put(&x->ob, hex, a.hex_len);
		outbuf_putc(&x->ob, ' ');
		outbuf_puts(&x->ob, name);
		outbuf_putc(&x->ob, '\n');
	}
}

/* Reads /proc/self/cmdline (up to 64 KiB) into cmdbuf; returns its length. */
static size_t read_cmdline(void)
{
	long n = sys_read_small("/proc/self/cmdline", cmdbuf, sizeof cmdbuf);
	return n < 0 ? 0 : (size_t)n;
}

void http_pprof_cmdline(struct http_exchange *x, int go_style)
{
	size_t len = read_cmdline();
	if (go_style) {
		/* os.Args joined with NUL, as Go's handler writes them */
		if (len && cmdbuf[len - 1] == 0)
			len--;
		outbuf_put(&x->ob, cmdbuf, len);
		return;
	}
	/* jeprof: the first line names the program; use the real executable so a PIE main
	   program (and a relative argv[0]) is found. Then the arguments, one a line. */
	char exe[4096];
	ssize_t el = readlink("/proc/self/exe", exe, sizeof exe - 1);
	size_t i = 0;
	while (i < len && cmdbuf[i])
		i++;
	if (el > 0) {
		outbuf_put(&x->ob, exe, (size_t)el);
	} else {
		outbuf_put(&x->ob, cmdbuf, i);
	}
	outbuf_putc(&x->ob, '\n');
	for (i = i + 1; i < len; i++) {
		outbuf_putc(&x->ob, cmdbuf[i] ? cmdbuf[i] : '\n');
	}
}

static void go_error(struct http_exchange *x, int status, const char *msg)
{
	http_server_reply_text(x, status, msg);
	outbuf_putc(&x->ob, '\n');
	http_server_header(x, "X-Go-Pprof", "1");
}

/* Profiles of Go's layout that a C heap has no equivalent of (404), or that heaptap does not
   take yet (501); scrapers ask for them by default (docs/FLEET.md leaves them out). */
static int unserved(struct http_exchange *x, const char *name)
{
	static const char *const none[] = {"goroutine", "block", "mutex", "threadcreate"};
	for (size_t i = 0; i < sizeof none / sizeof none[0]; i++) {
		if (strcmp(name, none[i]) == 0) {
			go_error(x, 404, "Unknown profile: heaptap profiles the heap only (heap, allocs, "
			                 "delta_heap); see docs/FLEET.md for scrape configurations");
			return 1;
		}
	}
	if (strcmp(name, "trace") == 0) {
		go_error(x, 501, "heaptap has no tracer: heap, allocs, delta_heap and profile (CPU) "
		                 "are served (docs/FLEET.md)");
		return 1;
	}
	return 0;
}

void http_pprof_go(struct http_exchange *x, const char *name)
{
	int allocs = strcmp(name, "allocs") == 0;
	if (unserved(x, name))
		return;
	if (strcmp(name, "delta_heap") == 0) {
		http_delta_heap(x);
		return;
	}
	if (!allocs && strcmp(name, "heap") != 0) {
		go_error(x, 404, "Unknown profile");
		return;
	}
	char v[32];
	uint64_t debug = 0, secs = 0;
	long dn = http_parse_query_get(x->query, x->query_len, "debug", v, sizeof v);
	/* Go reads a debug that is not a number as 0; a value nobody's tool sends is refused */
	if (dn == -2 || (dn >= 0 && http_parse_uint(v, (size_t)dn, 1000000, &debug) != 0)) {
		go_error(x, 400, "invalid value for \"debug\" - must be a non-negative integer");
		return;
	}
	long sn = http_parse_query_get(x->query, x->query_len, "seconds", v, sizeof v);
	if (sn != -1) {
		if (sn < 0 || http_parse_uint(v, (size_t)sn, INT32_MAX, &secs) != 0 || secs == 0) {
			go_error(x, 400, "invalid value for \"seconds\" - must be a positive integer");
			return;
		}
		if (debug != 0) {
			go_error(x, 400, "seconds and debug params are incompatible");
			return;
		}
		if (secs > HTTP_DELTA_MAX_SECONDS) {
			go_error(x, 400, "seconds must be at most 120 (the request waits that long on the server)");
			return;
		}
		http_delta_seconds(x, allocs, secs);
		return;
	}
	/* gc=N is accepted and ignored: there is no collector to run in a C heap. */
	const char *why = allocs ? "http" : heap_why(x);
	if (!why)
		return;
	const struct backend *b = backend_get();
	if (!(b->formats & (debug > 0 ? DUMP_LEGACY : DUMP_PPROF))) {
		go_error(x, 501, "the profiler in use cannot write this format: use /pprof/heap");
		return;
	}
	int rc;
	if (debug > 0) {
		rc = b->dump_fd(http_server_body_fd(x), DUMP_LEGACY, why);
	} else {
		x->ctype = "application/octet-stream";
		http_server_header(x, "Content-Disposition", allocs ? "attachment; filename=\"allocs\""
		                                            : "attachment; filename=\"heap\"");
		rc = b->dump_fd(http_server_body_fd(x), DUMP_PPROF, why);
		if (rc == 0 && allocs)
			http_delta_default_alloc_space(x);
	}
	if (rc < 0) {
		x->headers_len = 0;
		dump_failed(x, rc);
		http_server_header(x, "X-Go-Pprof", "1");
	}
}

void http_pprof_go_index(struct http_exchange *x)
{
	x->ctype = "text/html; charset=utf-8";
	outbuf_puts(&x->ob,
	            "<html>\n<head><title>/debug/pprof/</title></head>\n<body>\n"
	            "/debug/pprof/ (heaptap)<br>\n<br>\nTypes of profiles available:\n"
	            "<table>\n<thead><td>Count</td><td>Profile</td></thead>\n"
	            "<tr><td>1</td><td><a href='allocs?debug=1'>allocs</a></td></tr>\n"
	            "<tr><td>1</td><td><a href='heap?debug=1'>heap</a></td></tr>\n"
	            "<tr><td>1</td><td><a href='delta_heap'>delta_heap</a></td></tr>\n"
	            "</table>\n<a href=\"cmdline\">cmdline</a>\n<br>\n<a href=\"symbol\">symbol</a>\n<br>\n"
	            "<p>\nProfile Descriptions:\n<ul>\n"
	            "<li><div class=profile-name>allocs: </div> A sampling of all past memory allocations "
	            "(with ?seconds=N: those of the next N seconds; else needs HEAPTAP_CONF=prof_accum:true)</li>\n"
	            "<li><div class=profile-name>delta_heap: </div> allocations since the previous request "
	            "to it, and the live objects</li>\n"
	            "<li><div class=profile-name>heap: </div> A sampling of memory allocations of live objects.</li>\n"
	            "</ul>\n</p>\n</body>\n</html>\n");
}
