/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * httppost.h - the HTTP/1.1 POST of `heaptap push`: one request with Connection: close to a
 * plain http:// URL (DNS allowed, IPv4 or IPv6), timeouts on connect, send and reply, and the
 * status with the start of the reply body handed back. Not TLS (push through a local agent,
 * docs/FLEET.md), not redirects nor retries, not the collector's client (lib/pushhttp.c, which
 * must not allocate). CLI only: blocks, allocates, prints nothing (the caller words errors).
 */
#ifndef HEAPTAP_CLI_HTTPPOST_H
#define HEAPTAP_CLI_HTTPPOST_H

#include <stddef.h>

/* The parts of a push URL "http://host[:port]/path[?query]". */
struct httppost_url {
	char host[256], port[16];
	char path[2048];   /* "/..." without the query */
};

/* Parses url. Returns 0, or -1 with a message in err: another scheme than http:// (https
   gets a pointer to a local agent), a bad host or port, no path. */
int httppost_parse_url(const char *url, struct httppost_url *u, char *err, size_t errcap);

/*
 * POSTs body[0..len) to u at target (path and query) with Content-Type ctype and the header
 * lines extra (each ending in CRLF; "" for none), waiting at most timeout_s seconds for each
 * step. Returns the HTTP status (any, 2xx or not) with up to replycap-1 bytes of the reply's
 * body in reply (NUL-terminated), or -1 with a message in err when no status came back
 * (cannot resolve or connect, a timeout, a reply that is not HTTP).
 */
int httppost_send(const struct httppost_url *u, const char *target, const char *ctype, const char *extra,
                  const void *body, size_t len, int timeout_s, char *reply, size_t replycap, char *err,
                  size_t errcap);

#endif
