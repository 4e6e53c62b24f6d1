/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pushhttp.h - the push client's plain HTTP/1.1 client: parses an http:// URL, finds the
 * host's address without DNS (an IP literal, localhost, or a name in /etc/hosts: the usual
 * set-up pushes to a local agent), and POSTs one request with a deadline on the whole
 * exchange (connect, send, reply), reading only the status line and the start of the body.
 *
 * Not TLS (docs/FLEET.md: push through Grafana Alloy or an OpenTelemetry Collector on
 * loopback), not keep-alive, not redirects. Blocking on the calling thread (the background
 * thread) for at most the timeout; descriptors above the host's range, closed before
 * returning. No host malloc; not async-signal-safe.
 */
#ifndef HEAPTAP_LIB_PUSHHTTP_H
#define HEAPTAP_LIB_PUSHHTTP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

struct pushhttp_url {
	char host[256];        /* as written (IPv6 without brackets) */
	char authority[280];   /* the Host header: host[:port] as in the URL */
	uint16_t port;         /* 80 unless given */
	char path[512];        /* "/..." (at least "/"), without the query */
	char query[512];       /* after '?', "" none */
	struct sockaddr_storage addr;
	socklen_t addrlen;     /* 0 until resolved */
};

/* Parses url. 0, -EINVAL (malformed), -EPROTONOSUPPORT (https:// or another scheme). */
int pushhttp_parse_url(const char *url, struct pushhttp_url *u);

/* Fills u->addr from u->host: an IPv4 or IPv6 literal, "localhost", or /etc/hosts. 0 or
   -EHOSTUNREACH (a name only DNS could answer). */
int pushhttp_resolve(struct pushhttp_url *u);

/*
 * POSTs body[0..len) to u at target (path and query, e.g. "/ingest?name=x") with the header
 * lines extra (each ending in CRLF, may be "") and Content-Type ctype. Returns the HTTP
 * status, or -ETIMEDOUT, -ECONNREFUSED or another -errno when no status came back. The first
 * reply_cap - 1 bytes of the reply body, NUL-terminated, are left in reply (for the log).
 */
int pushhttp_post(const struct pushhttp_url *u, const char *target, const char *ctype, const char *extra,
                  const void *body, size_t len, int timeout_ms, char *reply, size_t reply_cap);

#endif
