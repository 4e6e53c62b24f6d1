/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * httpget.c - the HTTP/1.0 GET client of httpget.h: parses the URL, connects (IPv4 or IPv6),
 * sends one request with Connection: close, reads the reply to its end and copies the body
 * (Content-Length checked when given; a chunked body decoded) to the caller's descriptor.
 */
#include "httpget.h"

#include "mapfile.h"

#include <errno.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

int httpget_is_url(const char *arg)
{
	if (strncmp(arg, "http://", 7) == 0 || strncmp(arg, "https://", 8) == 0)
		return 1;
	struct stat st;
	if (stat(arg, &st) == 0)
		return 0;
	const char *slash = strchr(arg, '/');
	const char *colon = strrchr(arg, ':');
	if (!colon || (slash && colon > slash) || colon == arg)
		return 0;
	size_t digits = strspn(colon + 1, "0123456789");
	return digits > 0 && (colon[1 + digits] == '\0' || colon[1 + digits] == '/');
}

static int fail(char *err, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t cap, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, cap, fmt, ap);
	va_end(ap);
	return -1;
}

int httpget_split_url(const char *url, const char *default_path, char *host, size_t hcap, char *port,
                     size_t pcap, char *path, size_t pathcap, char *err, size_t errcap)
{
	const char *s = url;
	if (strncmp(s, "https://", 8) == 0)
		return fail(err, errcap, "https is not supported (fetch the profile with curl and pass the file)");
	if (strncmp(s, "http://", 7) == 0)
		s += 7;
	const char *slash = strchr(s, '/');
	size_t authlen = slash ? (size_t)(slash - s) : strlen(s);
	const char *hs = s, *he, *ps = NULL;
	if (authlen && s[0] == '[') { /* [v6]:port */
		const char *rb = memchr(s, ']', authlen);
		if (!rb)
			return fail(err, errcap, "bad address in the URL");
		hs = s + 1;
		he = rb;
		if (rb + 1 < s + authlen && rb[1] == ':')
			ps = rb + 2;
	} else {
		const char *colon = memchr(s, ':', authlen);
		he = colon ? colon : s + authlen;
		ps = colon ? colon + 1 : NULL;
	}
	size_t hl = (size_t)(he - hs), pl = ps ? (size_t)(s + authlen - ps) : 0;
	if (hl == 0 || hl >= hcap || pl >= pcap || (ps && (pl == 0 || strspn(ps, "0123456789") < pl)))
		return fail(err, errcap, "bad host or port in the URL");
	memcpy(host, hs, hl);
	host[hl] = '\0';
	if (ps) {
		memcpy(port, ps, pl);
		port[pl] = '\0';
	} else {
		snprintf(port, pcap, "80");
	}
	snprintf(path, pathcap, "%s", slash && slash[1] ? slash : default_path);
	return 0;
}

int httpget_connect(const char *host, const char *port, int timeout_s, char *err, size_t errcap)
{
	struct addrinfo hints, *res = NULL;
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	int g = getaddrinfo(host, port, &hints, &res);
	if (g != 0)
		return fail(err, errcap, "%s: %s", host, gai_strerror(g));
	int fd = -1, e = 0;
	for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0) {
			e = errno;
			continue;
		}
		struct timeval tv = {timeout_s, 0};
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
			e = errno;
			close(fd);
			fd = -1;
		}
	}
	freeaddrinfo(res);
	if (fd < 0)
		return fail(err, errcap, "cannot connect to %s port %s: %s", host, port, strerror(e));
	return fd;
}

int httpget_write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Decodes a chunked body in place; returns its length, or -1 when it is malformed. */
static long dechunk(char *b, size_t n)
{
	size_t in = 0, out = 0;
	for (;;) {
		char *end;
		unsigned long len = strtoul(b + in, &end, 16);
		char *crlf = memchr(b + in, '\n', n - in);
		if (end == b + in || !crlf)
			return -1;
		in = (size_t)(crlf - b) + 1;
		if (len == 0)
			return (long)out;
		if (len > n - in)
			return -1;
		memmove(b + out, b + in, len);
		out += len;
		in += len;
		if (in < n && b[in] == '\r')
			in++;
		if (in < n && b[in] == '\n')
			in++;
	}
}

int httpget_fetch(const char *url, const char *default_path, int out_fd, int timeout_s, char *err, size_t errcap)
{
	char host[256], port[16], path[4096];
	if (httpget_split_url(url, default_path, host, sizeof(host), port, sizeof(port), path, sizeof(path), err, errcap))
		return -1;
	int fd = httpget_connect(host, port, timeout_s, err, errcap);
	if (fd < 0)
		return -1;
	char req[4600];
	int rl = snprintf(req, sizeof(req),
	                  "GET %s HTTP/1.0\r\nHost: %s%s%s:%s\r\nUser-Agent: heaptap\r\nAccept: */*\r\n"
	                  "Connection: close\r\n\r\n",
	                  path, strchr(host, ':') ? "[" : "", host, strchr(host, ':') ? "]" : "", port);
	if (rl < 0 || (size_t)rl >= sizeof(req) || httpget_write_all(fd, req, (size_t)rl) != 0) {
		close(fd);
		return fail(err, errcap, "cannot send the request to %s:%s: %s", host, port, strerror(errno));
	}
	size_t n = 0;
	char *buf = mapfile_read_fd(fd, &n);
	int e = errno;
	close(fd);
	if (!buf && e == ENOMEM)
		return fail(err, errcap, "out of memory");
	if (!buf)
		return fail(err, errcap, "reading the reply from %s:%s: %s", host, port,
		            e == EAGAIN || e == EWOULDBLOCK ? "timed out" : strerror(e));
	char *hend = strstr(buf, "\r\n\r\n");
	size_t hskip = 4;
	if (!hend) {
		hend = strstr(buf, "\n\n");
		hskip = 2;
	}
	int status = 0;
	if (!hend || sscanf(buf, "HTTP/%*d.%*d %d", &status) != 1) {
		free(buf);
		return fail(err, errcap, "%s:%s did not answer with HTTP", host, port);
	}
	if (status != 200) {
		int l = (int)strcspn(buf, "\r\n");
		fail(err, errcap, "%s: the server answered '%.*s'", url, l, buf);
		free(buf);
		return -1;
	}
	*hend = '\0';
	char *body = hend + hskip;
	size_t blen = n - (size_t)(body - buf);
	int chunked = 0;
	long clen = -1;
	for (char *h = strchr(buf, '\n'); h; h = strchr(h + 1, '\n')) {
		if (strncasecmp(h + 1, "Content-Length:", 15) == 0)
			clen = strtol(h + 16, NULL, 10);
		else if (strncasecmp(h + 1, "Transfer-Encoding:", 18) == 0 && strstr(h + 19, "chunked"))
			chunked = 1;
	}
	if (chunked) {
		long d = dechunk(body, blen);
		if (d < 0) {
			free(buf);
			return fail(err, errcap, "%s: malformed chunked reply", url);
		}
		blen = (size_t)d;
	} else if (clen >= 0 && (size_t)clen != blen) {
		free(buf);
		return fail(err, errcap, "%s: reply cut short (%zu of %ld bytes)", url, blen, clen);
	}
	int w = httpget_write_all(out_fd, body, blen);
	free(buf);
	if (w != 0)
		return fail(err, errcap, "writing the fetched profile: %s", strerror(errno));
	return 0;
}
