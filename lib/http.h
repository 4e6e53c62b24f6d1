/*
 * http.h - starting the collector's embedded HTTP control plane (jeprof / Go pprof / Mesos /
 * heaptap endpoints; docs/HTTP.md). The collector core calls http_start_from_options at
 * init; heaptap_http_start (include/heaptap.h) calls http_start.
 *
 * The server runs on its own thread (created with pthread_create, all signals blocked);
 * nothing here is async-signal-safe. Starting it may allocate through the host's malloc
 * (pthread_create, dlsym); the server's own code never does. It is not inherited by a
 * forked child: the child's copies of the sockets are closed by an atfork handler.
 */
#ifndef HEAPTAP_LIB_HTTP_H
#define HEAPTAP_LIB_HTTP_H

/*
 * Binds addr (see http_parse_addr: "6060", ":6060", "127.0.0.1:6060" are loopback; other
 * interfaces only when named) and starts the server thread. token, when not NULL or empty,
 * is required on every request as "Authorization: Bearer <token>" or "?token=<token>".
 * Returns 0, -EALREADY when a server already runs, -EINVAL for a bad address, or the
 * negative errno of socket/bind/listen (-EADDRINUSE). On a bind failure it logs one line
 * "heaptap: http: cannot listen on <addr>: <strerror>" to stderr.
 */
int http_start(const char *addr, const char *token);

/*
 * Starts the server from the options (keys `http` and `http_token` of HEAPTAP_CONF) when
 * `http` is set; returns 0 when it is not set or the server started, else http_start's
 * error (already logged). The host runs on either way.
 */
int http_start_from_options(void);

/* The bound TCP port, or 0 when no server runs. */
int http_port(void);

#endif
