/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * http_parse.h - the pure parsing half of the collector's HTTP control plane: the request
 * head, percent-decoding, query parameters, listen addresses, stout durations and the
 * address lists of POST /pprof/symbol.
 *
 * Nothing here touches a socket, allocates, locks or keeps state: every function reads the
 * caller's bytes and writes into the caller's structs, so it is async-signal-safe, unit
 * tested without a network and fuzzed (fuzz/fuzz_lib_http.c). It is not the server
 * (http_server.c) nor the routing (http_routes.c).
 */
#ifndef HEAPTAP_LIB_HTTP_PARSE_H
#define HEAPTAP_LIB_HTTP_PARSE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

enum http_method {
	HTTP_GET = 1,
	HTTP_HEAD,
	HTTP_POST,
	HTTP_OTHER, /* a well-formed method we do not serve (405) */
};

/* What http_parse_head found. Every pointer points into the caller's buffer. */
struct http_request {
	enum http_method method;
	int minor;                 /* HTTP/1.<minor>: 0 or 1 */
	const char *target;        /* the raw request target up to '?' (origin form, starts with '/') */
	size_t target_len;
	const char *query;         /* raw text after '?' up to '#' or the end (may be empty) */
	size_t query_len;
	uint64_t content_length;   /* 0 when absent */
	int has_length;            /* a Content-Length header was present */
	int chunked;               /* Transfer-Encoding was present (we do not decode it) */
	int expect_continue;       /* "Expect: 100-continue" */
	const char *auth;          /* the value of Authorization, or NULL */
	size_t auth_len;
	const char *host;          /* the value of Host, or NULL */
	size_t host_len;
	const char *origin;        /* the value of Origin, or NULL */
	size_t origin_len;
	const char *referer;       /* the value of Referer, or NULL */
	size_t referer_len;
	const char *fetch_site;    /* the value of Sec-Fetch-Site, or NULL */
	size_t fetch_site_len;
	size_t head_len;           /* bytes of the head, including the blank line */
};

/*
 * Parses the request head at buf[0..len). Returns head_len (> 0) when a complete, valid head
 * was found and req is filled; 0 when more bytes are needed (no blank line yet); or a
 * negative HTTP status for a request that must be refused: -400 malformed (bad request line,
 * bad header syntax, conflicting Content-Length, a second Host, Origin, Referer or
 * Sec-Fetch-Site), -413 a Content-Length that does not fit in 64 bits, -505 an HTTP version
 * other than 1.0 / 1.1. Bare LF line ends are accepted. A missing Host is not an error here
 * (the server refuses HTTP/1.1 without one).
 */
long http_parse_head(const char *buf, size_t len, struct http_request *req);

/*
 * Percent-decodes src[0..n) into dst (cap bytes, always NUL-terminated). plus_space turns
 * '+' into ' ' (query strings). Returns the decoded length, or -1 when the text has a bad
 * escape, decodes to a NUL or control byte, or does not fit.
 */
long http_parse_url_decode(char *dst, size_t cap, const char *src, size_t n, int plus_space);

/*
 * Decodes a request target into dst and checks it is safe to route: it must start with '/'
 * and contain no "." or ".." segment (also when percent-encoded) and no backslash. Returns
 * the length, or -1 to refuse the request with 400.
 */
long http_parse_path(char *dst, size_t cap, const char *target, size_t n);

/*
 * Finds the query parameter `name` in query[0..n) ("a=1&b=2"; ';' also separates) and
 * decodes its value into dst (cap bytes, NUL-terminated). Returns the value's length (0 for
 * "name" or "name="), -1 when absent, -2 when present but undecodable or too long.
 */
long http_parse_query_get(const char *query, size_t n, const char *name, char *dst, size_t cap);

/*
 * Checks every query value: returns 0 when none looks like a file path (a value starting
 * with '/' or containing a ".." segment), -1 otherwise. No endpoint reads a file a client
 * names; this refuses such requests outright with 400. jeprof's `retain` and `exclude`
 * (regular expressions) are exempt.
 */
int http_parse_query_safe(const char *query, size_t n);

/*
 * Parses a listen address: "6060" and ":6060" mean 127.0.0.1:6060; "HOST:PORT" with HOST
 * an IPv4 literal, "localhost" or "[IPv6]"; "unix:/absolute/path" a Unix-domain socket.
 * Fills *ss and *sslen. *loopback is set to 1 when only this machine can connect: a loopback
 * address (127/8, ::1, ::ffff:127.x.y.z) or a Unix socket. Returns 0, or -EINVAL.
 */
int http_parse_addr(const char *s, struct sockaddr_storage *ss, socklen_t *sslen, int *loopback);

/*
 * Parses a stout duration ("5mins", "30secs", "1.5hrs", "100ms": a decimal number directly
 * followed by ns, us, ms, secs, mins, hrs, days or weeks). Returns 0 and the value in
 * seconds, or -1 (a bare number is invalid, as in stout).
 */
int http_parse_duration(const char *s, size_t n, double *seconds);

/* One address of a /pprof/symbol request. */
struct http_symaddr {
	uint64_t addr;
	const char *hex;   /* the hex digits exactly as sent (without "0x"), in the caller's buffer */
	size_t hex_len;
};

/*
 * Iterates the addresses of a symbol request body or query: tokens separated by '+', '&',
 * ',', blanks, line ends or an encoded plus ("%2B"), each "0x<hex>" or "<hex>". *pos is the
 * cursor (start at 0). Returns 1 and fills *out for the next valid address, 0 at the end.
 * Tokens that are not hex numbers of at most 16 digits are skipped.
 */
int http_parse_symbol_next(const char *s, size_t n, size_t *pos, struct http_symaddr *out);

/*
 * 1 when a Host header value names this machine's loopback interface: "localhost",
 * "127.x.y.z", "[::1]" or an IPv4-mapped loopback address ("[::ffff:127.0.0.1]",
 * "[::ffff:7f00:1]"), each with an optional ":port". A server bound to loopback refuses
 * other names (a web page whose DNS name was re-pointed at 127.0.0.1 must not read profiles).
 */
int http_parse_host_is_loopback(const char *host, size_t n);

/* 1 for ::1 and ::ffff:127.x.y.z (addresses as 16 bytes, IPv4 mapped into IPv6). */
int http_parse_ip_is_loopback(const unsigned char ip[16]);

/* The address of an AF_INET or AF_INET6 socket address as 16 bytes (IPv4 mapped) and its
   port; returns 0, or -1 for another family. */
int http_parse_sockaddr_ip(const struct sockaddr_storage *ss, unsigned char ip[16], uint16_t *port);

/*
 * Parses a Host value that is an IP literal ("10.0.0.5", "[fe80::1]", each with an optional
 * ":port") into ip as an IPv6 address (IPv4 as ::ffff:a.b.c.d). Returns 0, or -1 for a name
 * or anything malformed.
 */
int http_parse_host_ip(const char *host, size_t n, unsigned char ip[16]);

/*
 * 1 when the name part of a Host value (without ":port") equals one of the '+'-separated
 * names in list, compared without case; 0 otherwise (and for an empty list).
 */
int http_parse_host_listed(const char *host, size_t n, const char *list);

/*
 * 1 when url (an Origin or Referer value) is "http://<host>" exactly, or that followed by
 * '/', '?' or '#' and anything: the request comes from a page this very server served. The
 * scheme and host compare without case. "null", https and any other authority give 0.
 */
int http_parse_same_origin(const char *url, size_t n, const char *host, size_t hn);

/*
 * Splits an Authorization value "Bearer <token>" (scheme without case, one or more blanks):
 * sets *tok and *tn and returns 0, or -1 for another scheme or an empty token.
 */
int http_parse_bearer(const char *auth, size_t n, const char **tok, size_t *tn);

/*
 * Parses a decimal integer of 1 to 19 digits, nothing else (no sign, no blanks), into *out;
 * returns 0, or -1 when s[0..n) is not one or exceeds max.
 */
int http_parse_uint(const char *s, size_t n, uint64_t max, uint64_t *out);

/* The reason phrase of a status code ("Not Found"), "Unknown" for codes we never send. */
const char *http_parse_reason(int status);

#endif
