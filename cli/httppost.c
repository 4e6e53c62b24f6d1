/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * httppost.c - the POST client of httppost.h: the URL split and the connection come from
 * httpget.c; this file writes the request, reads the reply to its end (the server closes)
 * and picks out the status and the body.
 */
#include "httppost.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "httpget.h"
#include "mapfile.h"

static int fail(char *err, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t cap, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, cap, fmt, ap);
	va_end(ap);
	return -1;
}

int httppost_parse_url(const char *url, struct httppost_url *u, char *err, size_t errcap)
{
	memset(u, 0, sizeof *u);
	if (strncmp(url, "https://", 8) == 0)
		return fail(err, errcap, "https is not supported: push over http to a local agent that "
		                         "forwards over TLS (Grafana Alloy's pyroscope.receive_http, an "
		                         "OpenTelemetry Collector; docs/FLEET.md)");
	if (strncmp(url, "http://", 7) != 0)
		return fail(err, errcap, "the URL must start with http://");
	for (const char *c = url; *c; c++)
		if ((unsigned char)*c <= ' ' || *c == 0x7f)
			return fail(err, errcap, "the URL contains a space or a control character");
	char path[4096];
	if (httpget_split_url(url, "", u->host, sizeof u->host, u->port, sizeof u->port, path, sizeof path, err,
	                      errcap))
		return -1;
	path[strcspn(path, "?#")] = '\0';
	if (!path[0] || strcmp(path, "/") == 0)
		return fail(err, errcap, "the URL has no path (/ingest, /push.v1.PusherService/Push or "
		                         "/profiles/writeraw)");
	if (strlen(path) >= sizeof u->path)
		return fail(err, errcap, "the URL's path is too long");
	memcpy(u->path, path, strlen(path) + 1);
	return 0;
}

int httppost_send(const struct httppost_url *u, const char *target, const char *ctype, const char *extra,
                  const void *body, size_t len, int timeout_s, char *reply, size_t replycap, char *err,
                  size_t errcap)
{
	if (replycap)
		reply[0] = '\0';
	int fd = httpget_connect(u->host, u->port, timeout_s, err, errcap);
	if (fd < 0)
		return -1;
	int v6 = strchr(u->host, ':') != NULL;
	size_t hcap = strlen(target) + strlen(extra) + strlen(ctype) + 512;
	char *head = malloc(hcap);
	if (!head) {
		close(fd);
		return fail(err, errcap, "out of memory");
	}
	int hl = snprintf(head, hcap,
	                  "POST %s HTTP/1.1\r\nHost: %s%s%s:%s\r\nUser-Agent: heaptap\r\nConnection: close\r\n"
	                  "Content-Type: %s\r\nContent-Length: %zu\r\n%s\r\n",
	                  target, v6 ? "[" : "", u->host, v6 ? "]" : "", u->port, ctype, len, extra);
	int wr = hl > 0 && (size_t)hl < hcap ? httpget_write_all(fd, head, (size_t)hl) : -1;
	free(head);
	/* A server may answer (401, 413) and close before taking the whole body: read anyway. */
	if (wr == 0)
		wr = httpget_write_all(fd, body, len);
	int send_errno = wr ? errno : 0;
	size_t n = 0;
	char *buf = mapfile_read_fd(fd, &n);
	int re = errno;
	close(fd);
	if (!buf || n < 12 || strncmp(buf, "HTTP/1.", 7) != 0) {
		free(buf);
		if (send_errno)
			return fail(err, errcap, "sending to %s port %s: %s", u->host, u->port,
			            send_errno == EAGAIN || send_errno == EWOULDBLOCK ? "timed out" : strerror(send_errno));
		if (!buf && (re == EAGAIN || re == EWOULDBLOCK))
			return fail(err, errcap, "no reply from %s port %s within %d s", u->host, u->port, timeout_s);
		return fail(err, errcap, "%s port %s did not answer with HTTP", u->host, u->port);
	}
	int status = 0;
	if (sscanf(buf, "HTTP/%*d.%*d %d", &status) != 1 || status < 100 || status > 999) {
		free(buf);
		return fail(err, errcap, "%s port %s answered with a bad status line", u->host, u->port);
	}
	const char *b = strstr(buf, "\r\n\r\n");
	if (b && replycap) {
		b += 4;
		size_t bl = n - (size_t)(b - buf);
		if (bl >= replycap)
			bl = replycap - 1;
		memcpy(reply, b, bl);
		reply[bl] = '\0';
	}
	free(buf);
	return status;
}
