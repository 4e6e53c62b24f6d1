/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib_http_server.c - unit test of the HTTP server loop, routing and in-process symbol look-up
 * under ASan+UBSan: starts the server on an ephemeral loopback port inside this process and
 * talks to it over real sockets (no interposition, the collector uninitialised). Checks status
 * lines, Content-Length, HEAD, symbol replies for this file's own functions, refusals (400,
 * 405, 413, 431, 505; HTTP/1.1 without Host, cross-site requests, foreign Hosts) with the
 * server's counters, -EALREADY on a second start, -EINVAL for a bad address and -EACCES for
 * a non-loopback one without a token.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../lib/http_routes.h"
#include "../../lib/http_server.h"
#include "../../lib/symbolz.h"
#include "check.h"

static int port;


__attribute__((noinline)) int probe_target_function(int x)
{
	return x * 3 + 1;
}

/* Sends req (n bytes), reads the whole reply into out (NUL-terminated). Returns its length. */
static size_t exchange(const char *req, size_t n, char *out, size_t cap)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	a.sin_addr.s_addr = htonl(0x7f000001);
	size_t got = 0;
	out[0] = 0;
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	for (size_t off = 0; off < n;) {
		ssize_t w = send(fd, req + off, n - off, MSG_NOSIGNAL);
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	for (;;) {
		ssize_t r = recv(fd, out + got, cap - 1 - got, 0);
		if (r <= 0)
			break;
		got += (size_t)r;
		if (got == cap - 1)
			break;
	}
	out[got] = 0;
	close(fd);
	return got;
}

static int status_of(const char *reply)
{
	int st = -1;
	if (sscanf(reply, "HTTP/1.1 %d", &st) != 1)
		return -1;
	return st;
}

static const char *body_of(const char *reply)
{
	const char *b = strstr(reply, "\r\n\r\n");
	return b ? b + 4 : "";
}

static long content_length(const char *reply)
{
	const char *h = strstr(reply, "Content-Length: ");
	return h ? atol(h + 16) : -1;
}

static char reply[1 << 20];

/* Sends the request line (and headers) `line` with Host: host. */
static void get_host(const char *line, const char *host)
{
	char req[512];
	int n = snprintf(req, sizeof req, "%s\r\nHost: %s\r\n\r\n", line, host);
	exchange(req, (size_t)n, reply, sizeof reply);
}

static void get(const char *line)
{
	get_host(line, "127.0.0.1");
}

int main(void)
{
	int rc = http_server_start("127.0.0.1:0", "", &http_routes_app);
	CHECK(rc == 0, "http_server_start -> %d", rc);
	port = http_server_port();
	CHECK(port > 0, "port %d", port);
	if (rc != 0 || port <= 0)
		return 1;
	CHECK(http_server_start("127.0.0.1:0", "", &http_routes_app) == -EALREADY, "second start");
	CHECK(http_server_start("not an address", "", &http_routes_app) == -EINVAL, "bad address");

	get("GET / HTTP/1.1");
	CHECK(status_of(reply) == 200, "GET / -> %d", status_of(reply));
	CHECK(content_length(reply) == (long)strlen(body_of(reply)), "Content-Length %ld vs %zu",
	      content_length(reply), strlen(body_of(reply)));
	CHECK(strstr(reply, "X-Content-Type-Options: nosniff\r\n") != NULL, "nosniff");
	CHECK(strstr(body_of(reply), "/pprof/heap") != NULL, "index body");

	get("GET /pprof/symbol HTTP/1.0");
	CHECK(strcmp(body_of(reply), "num_symbols: 1\n") == 0, "GET symbol body '%s'", body_of(reply));
	get("HEAD /pprof/symbol HTTP/1.1");
	CHECK(status_of(reply) == 200 && content_length(reply) == 15 && *body_of(reply) == 0, "HEAD: %s", reply);

	/* symbols of this very program, resolved in-process */
	uintptr_t fn = (uintptr_t)&probe_target_function + 2;
	char body[128], req[512], want[256];
	int bl = snprintf(body, sizeof body, "0x%016lx+0x%lX+0x1", (unsigned long)fn, (unsigned long)fn);
	int rl = snprintf(req, sizeof req, "POST /pprof/symbol HTTP/1.1\r\nHost: localhost\r\nContent-Length: %d\r\n\r\n%s", bl, body);
	exchange(req, (size_t)rl, reply, sizeof reply);
	snprintf(want, sizeof want, "0x%016lx probe_target_function\n0x%lx probe_target_function\n",
	         (unsigned long)fn, (unsigned long)fn);
	CHECK(status_of(reply) == 200 && strcmp(body_of(reply), want) == 0, "symbol reply '%s' want '%s'",
	      body_of(reply), want);
	CHECK(symbolz_begin() > 0, "symbolz_begin");
	const char *name = symbolz_lookup((uintptr_t)&exchange);
	CHECK(name && strcmp(name, "exchange") == 0, "static function name %s", name ? name : "(null)");
	name = symbolz_lookup((uintptr_t)&strlen);
	CHECK(name != NULL, "a libc function resolves");
	CHECK(symbolz_lookup(16) == NULL, "address 16 resolves to nothing");

	get("GET /pprof/cmdline HTTP/1.1");
	char exe[4096];
	ssize_t el = readlink("/proc/self/exe", exe, sizeof exe - 1);
	exe[el > 0 ? el : 0] = 0;
	CHECK(strncmp(body_of(reply), exe, strlen(exe)) == 0 && body_of(reply)[strlen(exe)] == '\n',
	      "cmdline '%s' want '%s'", body_of(reply), exe);

	/* refusals */
	get("GET /../x HTTP/1.1");
	CHECK(status_of(reply) == 400, "traversal -> %d", status_of(reply));
	CHECK(strcmp(body_of(reply), "bad request path\n") == 0, "400 body '%s'", body_of(reply));
	/* errors found before routing carry a body too */
	get("GARBAGE");
	CHECK(status_of(reply) == 400 && strcmp(body_of(reply), "malformed request\n") == 0 &&
	      content_length(reply) == 18, "malformed: %s", reply);
	get("PUT / HTTP/1.1");
	CHECK(status_of(reply) == 405 && strstr(reply, "Allow: GET, HEAD, POST\r\n"), "PUT: %s", reply);
	get("GET / HTTP/3.0");
	CHECK(status_of(reply) == 505, "HTTP/3.0 -> %d", status_of(reply));
	const char rebind[] = "GET /pprof/heap HTTP/1.1\r\nHost: attacker.example\r\n\r\n";
	exchange(rebind, sizeof rebind - 1, reply, sizeof reply);
	CHECK(status_of(reply) == 403, "foreign Host -> %d", status_of(reply));
	get("GET /nothing-here HTTP/1.1");
	CHECK(status_of(reply) == 404, "404 -> %d", status_of(reply));
	const char big[] = "POST /pprof/symbol HTTP/1.1\r\nHost: localhost\r\nContent-Length: 4194305\r\n\r\n";
	exchange(big, sizeof big - 1, reply, sizeof reply);
	CHECK(status_of(reply) == 413, "4 MiB + 1 -> %d", status_of(reply));
	/* a length past 64 bits is refused by the parser: its 413 says what it is, too */
	const char huge[] = "POST /pprof/symbol HTTP/1.1\r\nHost: localhost\r\nContent-Length: 99999999999999999999999\r\n\r\n";
	exchange(huge, sizeof huge - 1, reply, sizeof reply);
	CHECK(status_of(reply) == 413 && strncmp(body_of(reply), "request body too large", 22) == 0,
	      "64-bit overflow: %s", reply);
	static char head[10000];
	memset(head, 'a', sizeof head);
	memcpy(head, "GET / HTTP/1.1\r\nX: ", 19);
	exchange(head, sizeof head, reply, sizeof reply);
	CHECK(status_of(reply) == 431, "10 KB head -> %d", status_of(reply));
	get("GET /debug/pprof/heap?seconds=0 HTTP/1.1");
	CHECK(status_of(reply) == 400 && strstr(reply, "X-Go-Pprof: 1\r\n"), "seconds=0: %s", reply);
	get("GET /memory-profiler/download/raw HTTP/1.1");
	CHECK(status_of(reply) == 400 && strcmp(body_of(reply), "No heap profile exists: Not yet generated.\n") == 0,
	      "raw before a run: %s", body_of(reply));

	/* HTTP/1.1 requires Host; HTTP/1.0 may go without */
	struct http_server_counts before, after;
	http_server_get_counts(&before);
	const char nohost[] = "GET /pprof/symbol HTTP/1.1\r\n\r\n";
	exchange(nohost, sizeof nohost - 1, reply, sizeof reply);
	CHECK(status_of(reply) == 400 && strcmp(body_of(reply), "HTTP/1.1 request without Host\n") == 0,
	      "HTTP/1.1 without Host: %s", reply);
	const char nohost10[] = "GET /pprof/symbol HTTP/1.0\r\n\r\n";
	exchange(nohost10, sizeof nohost10 - 1, reply, sizeof reply);
	CHECK(status_of(reply) == 200, "HTTP/1.0 without Host -> %d", status_of(reply));
	/* IPv4-mapped loopback names are loopback */
	get_host("GET /pprof/symbol HTTP/1.1", "[::ffff:127.0.0.1]:80");
	CHECK(status_of(reply) == 200, "Host [::ffff:127.0.0.1] -> %d", status_of(reply));
	/* cross-site requests are refused before any routing: the sampling switch keeps its state */
	get("GET /heaptap/active?on=0 HTTP/1.1\r\nOrigin: http://evil.example");
	CHECK(status_of(reply) == 403 && strstr(body_of(reply), "cross-site"), "Origin evil: %s", reply);
	get("GET /heaptap/active?on=0 HTTP/1.1\r\nSec-Fetch-Site: cross-site");
	CHECK(status_of(reply) == 403, "Sec-Fetch-Site cross-site -> %d", status_of(reply));
	get("GET /heaptap/active?on=0 HTTP/1.1\r\nSec-Fetch-Site: same-site");
	CHECK(status_of(reply) == 403, "Sec-Fetch-Site same-site -> %d", status_of(reply));
	get("GET /heaptap/active?on=0 HTTP/1.1\r\nReferer: http://127.0.0.1.evil.example/x");
	CHECK(status_of(reply) == 403, "Referer evil -> %d", status_of(reply));
	get("GET /heaptap/active?on=0 HTTP/1.1\r\nOrigin: null");
	CHECK(status_of(reply) == 403, "Origin null -> %d", status_of(reply));
	get("GET /pprof/symbol HTTP/1.1\r\nOrigin: http://127.0.0.1\r\nReferer: http://127.0.0.1/debug/pprof/\r\n"
	    "Sec-Fetch-Site: same-origin");
	CHECK(status_of(reply) == 200, "same origin -> %d", status_of(reply));
	http_server_get_counts(&after);
	CHECK(after.refused_host == before.refused_host + 1 && after.refused_cross_site == before.refused_cross_site + 5 &&
	      after.requests == before.requests + 3 && after.connections == before.connections + 9,
	      "counts: host +%llu, cross-site +%llu, requests +%llu, connections +%llu",
	      (unsigned long long)(after.refused_host - before.refused_host),
	      (unsigned long long)(after.refused_cross_site - before.refused_cross_site),
	      (unsigned long long)(after.requests - before.requests),
	      (unsigned long long)(after.connections - before.connections));
	CHECK(after.refused_user == 0, "this process's own user refused %llu times", (unsigned long long)after.refused_user);
	CHECK(after.pending_bytes == 0 && after.pending_peak > 0, "pending %llu, peak %llu",
	      (unsigned long long)after.pending_bytes, (unsigned long long)after.pending_peak);
	CHECK(http_server_start("0.0.0.0:0", "", &http_routes_app) == -EACCES, "0.0.0.0 without a token");
	CHECK(http_server_start("[::]:0", NULL, &http_routes_app) == -EACCES, "[::] without a token");

	/* the listening socket really holds the port */
	int s2 = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	a.sin_addr.s_addr = htonl(0x7f000001);
	CHECK(bind(s2, (struct sockaddr *)&a, sizeof a) == -1 && errno == EADDRINUSE, "port not taken?");
	close(s2);

	printf("lib_http_server: server was on port %d\n", port);
	return check_finish("lib_http_server");
}
