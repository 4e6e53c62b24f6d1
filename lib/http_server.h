/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * http_server.h - the collector's embedded HTTP/1.x server, generic: it binds, accepts, reads
 * requests, decides whom it serves (the connecting user, the Host, cross-site requests, the
 * token; docs/SECURITY.md "Control plane"), shares its slots and reply memory fairly, and
 * streams replies, and knows nothing of the endpoints. An application (struct http_app: the route table and its clock, http_routes.c)
 * is handed to it at start; each request reaches the application's dispatch as one struct
 * http_exchange, whose body the handler writes into a memfd that the server then streams.
 *
 * The server runs on its own thread (all signals blocked); handlers run there, one at a time,
 * and may block it (a dump, a spawned CLI); they must not call malloc themselves and must not
 * keep pointers into the exchange after returning. Starting the server may allocate through
 * the host's malloc (pthread_create); the server's own code never does. It is not inherited by
 * a forked child (http_server_fork_child closes the child's copies). Not async-signal-safe.
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
	int wait;                  /* 1: no reply yet; dispatch the request again once the
	                              application's busy() is 0 (a background job is running),
	                              and at least at the time tick() asks for; a request
	                              parked longer than 135 s is dropped */
	uint64_t serial;           /* the request's number, the same on every dispatch of it
	                              (a parked request is known again by it); never 0 */
};

/* Whom the server admits besides the host's own user (getuid, geteuid) and root. */
struct http_policy {
	int allow_any_user;        /* 1: every local user (no peer-user check) */
	unsigned nuids;            /* further user ids served */
	uint32_t uids[16];
	char hosts[256];           /* further Host names accepted, '+'-separated ("" none) */
};

/* The application the server serves. */
struct http_app {
	/* Answers one request (method already checked to be GET, HEAD or POST). */
	void (*dispatch)(struct http_exchange *x);
	/* Called at least once a second with the monotonic time in ms; returns the next time it
	   wants to be called, or -1. */
	int64_t (*tick)(int64_t now_ms);
	/* 1 while a background job runs (requests that set `wait` stay parked meanwhile). */
	int (*busy)(void);
	/* In a forked child, after the server's sockets are closed. */
	void (*fork_child)(void);
	/* At start: fills the admission policy (NULL: the host's user and root only). */
	void (*policy)(struct http_policy *p);
};

/* What the server did, for the statistics (all counts since the process started). */
struct http_server_counts {
	uint64_t connections;        /* accepted */
	uint64_t requests;           /* handed to the application */
	uint64_t refused_user;       /* 403: another user, or one that could not be told */
	uint64_t refused_cross_site; /* 403: Origin, Referer or Sec-Fetch-Site named another site */
	uint64_t refused_host;       /* 403: a Host not accepted; 400: HTTP/1.1 without Host */
	uint64_t refused_token;      /* 401 */
	uint64_t refused_busy;       /* 503: no slot could be freed, or too many unread replies */
	uint64_t rate_limited;       /* 429 replies of the application (dumps) */
	uint64_t malformed;          /* 400, 405, 411, 413, 431, 505 before routing */
	uint64_t evicted;            /* slow senders of a request dropped to free a slot */
	uint64_t timed_out;          /* requests not complete within their deadline */
	uint64_t dropped_unread;     /* replies not taken in time, or stalled when room was needed */
	uint64_t pending_bytes;      /* reply bytes held for clients now */
	uint64_t pending_peak;       /* the most ever held at once */
};

/*
 * Binds addr (see http_parse_addr: "6060", ":6060", "127.0.0.1:6060" are loopback; other
 * interfaces only when named; "unix:/path" a Unix socket created 0600) and starts the server
 * thread serving app. token, when not NULL or empty, is required on every request as
 * "Authorization: Bearer <token>" (scheme in any case) or "?token=<token>"; an address beyond
 * loopback is refused without one. Returns 0, -EALREADY when a server already runs, -EINVAL
 * for a bad address, -EACCES for a non-loopback address without a token, -EEXIST when the
 * Unix socket's path is something else than a stale socket of ours, or the negative errno of
 * socket/bind/listen (-EADDRINUSE). Each failure logs one line "heaptap: http: ..." to stderr
 * (a bad or refused address once per process, however often it is tried).
 */
int http_server_start(const char *addr, const char *token, const struct http_app *app);

/* The bound TCP port, or 0 when no server runs (or it listens on a Unix socket). */
int http_server_port(void);

/* Copies the server's counters (each read atomically; any thread, no lock). */
void http_server_get_counts(struct http_server_counts *out);

/* In a fork child: closes the child's copies of the sockets and memfds, then calls the
   application's fork_child. */
void http_server_fork_child(void);

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

#endif
