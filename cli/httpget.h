/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * httpget.h - a small HTTP/1.0 GET client for fetching a profile from a running program
 * (`heaptap jeprof http://host:port/pprof/heap`): plain http only, no redirects, no proxies,
 * the whole reply body written to a file. Not a general HTTP library. CLI only: blocks,
 * allocates, prints nothing (the caller words the error).
 */
#ifndef HEAPTAP_CLI_HTTPGET_H
#define HEAPTAP_CLI_HTTPGET_H

#include <stddef.h>

/*
 * 1 when arg names a remote profile the way jeprof accepts one: it starts with "http://" or
 * "https://", or it is host:port[/path] (a ':' followed by digits, and no such local file).
 */
int httpget_is_url(const char *arg);

/*
 * Fetches url ("http://host[:port][/path]" or "host:port[/path]"; a missing path becomes
 * default_path) and writes the body of a 200 reply to the open descriptor fd. Returns 0, or -1
 * with a message (without "heaptap: ") in err: a bad URL, https, a name that does not
 * resolve, a refused connection, a timeout (timeout_s seconds without data), a status other
 * than 200 (with the reply's first line), a truncated body.
 */
int httpget_fetch(const char *url, const char *default_path, int fd, int timeout_s, char *err, size_t errcap);

/* The pieces, shared with the POST client (httppost.c). Each returns -1 with a message in err
   on failure. */
/* Splits url ("http://host[:port][/path]" or "host:port[/path]") into host (IPv6 without
   brackets), port ("80" when absent) and path (default_path when absent); https is refused.
   Returns 0 or -1. */
int httpget_split_url(const char *url, const char *default_path, char *host, size_t hcap, char *port,
                      size_t pcap, char *path, size_t pathcap, char *err, size_t errcap);
/* Resolves host (DNS allowed) and connects, with send and receive timeouts of timeout_s
   seconds (connect included). Returns the socket or -1. */
int httpget_connect(const char *host, const char *port, int timeout_s, char *err, size_t errcap);
/* Writes all of buf[0..n) to fd. Returns 0 or -1 (errno set). */
int httpget_write_all(int fd, const void *buf, size_t n);

#endif
