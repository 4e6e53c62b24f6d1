/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib_http_parse.c - unit test of lib/http_parse.c: request heads good and malformed, the
 * path and query checks, percent-decoding, listen addresses (Unix sockets too), stout
 * durations, symbol address lists, and what admission reads: Host literals and lists, Origin
 * and Referer against Host, bearer tokens, strict integers. No sockets; every case states the
 * exact expected result.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/un.h>

#include "../../lib/http_parse.h"
#include "check.h"



static long head(const char *s, struct http_request *r)
{
	return http_parse_head(s, strlen(s), r);
}

static int span_is(const char *p, size_t n, const char *want)
{
	return n == strlen(want) && memcmp(p, want, n) == 0;
}

static void test_heads(void)
{
	struct http_request r;
	const char *get = "GET /pprof/heap?seconds=5&x=%2F HTTP/1.1\r\nHost: a\r\nUser-Agent: curl\r\n\r\n";
	CHECK(head(get, &r) == (long)strlen(get));
	CHECK(r.method == HTTP_GET && r.minor == 1);
	CHECK(span_is(r.target, r.target_len, "/pprof/heap"));
	CHECK(span_is(r.query, r.query_len, "seconds=5&x=%2F"));
	CHECK(!r.has_length && r.content_length == 0);

	/* body bytes after the head are not part of head_len */
	const char *post = "POST /pprof/symbol HTTP/1.0\nContent-Length: 10\nExpect: 100-continue\n\n0x1+0x2+0x";
	CHECK(head(post, &r) == (long)(strlen(post) - 10));
	CHECK(r.method == HTTP_POST && r.minor == 0 && r.has_length && r.content_length == 10);
	CHECK(r.expect_continue == 1);

	CHECK(head("HEAD / HTTP/1.1\r\nAuthorization: Bearer s3cret \r\n\r\n", &r) > 0);
	CHECK(r.method == HTTP_HEAD && span_is(r.auth, r.auth_len, "Bearer s3cret"));

	CHECK(head("DELETE /x HTTP/1.1\r\n\r\n", &r) > 0 && r.method == HTTP_OTHER);
	CHECK(head("GET / HTTP/1.1\r\nHost: 127.0.0.1:6060\r\n\r\n", &r) > 0 && span_is(r.host, r.host_len, "127.0.0.1:6060"));
	CHECK(head("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", &r) == -400);
	CHECK(head("GET http://h:1/debug/pprof/heap?debug=1 HTTP/1.1\r\n\r\n", &r) > 0);
	CHECK(span_is(r.target, r.target_len, "/debug/pprof/heap") && span_is(r.query, r.query_len, "debug=1"));
	CHECK(head("GET /a#frag HTTP/1.1\r\n\r\n", &r) > 0 && span_is(r.target, r.target_len, "/a"));
	CHECK(head("\r\nGET / HTTP/1.1\r\n\r\n", &r) > 0);
	CHECK(head("GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", &r) > 0 && r.chunked);

	/* incomplete */
	CHECK(head("GET / HTTP/1.1\r\nHost: a\r\n", &r) == 0);
	CHECK(head("GET / HT", &r) == 0);
	CHECK(head("", &r) == 0);

	/* malformed */
	CHECK(head("GET /\r\n\r\n", &r) == -400);                     /* HTTP/0.9 */
	CHECK(head("GET  / HTTP/1.1\r\n\r\n", &r) == -400);            /* empty target */
	CHECK(head("GET / HTTP/1.1 \r\n\r\n", &r) == -400);
	CHECK(head("GET x HTTP/1.1\r\n\r\n", &r) == -400);             /* not origin form */
	CHECK(head("G(T / HTTP/1.1\r\n\r\n", &r) == -400);
	CHECK(head("GET / HTTP/2.0\r\n\r\n", &r) == -505);
	CHECK(head("GET / HTTP/1.2\r\n\r\n", &r) == -505);
	CHECK(head("GET / FTP/1.1\r\n\r\n", &r) == -400);
	CHECK(head("GET / HTTP/1.1\r\nNo-Colon\r\n\r\n", &r) == -400);
	CHECK(head("GET / HTTP/1.1\r\nBad Name: x\r\n\r\n", &r) == -400);
	CHECK(head("GET / HTTP/1.1\r\nA: b\r\n folded\r\n\r\n", &r) == -400);
	CHECK(head("GET / HTTP/1.1\r\nContent-Length: 1x\r\n\r\n", &r) == -400);
	CHECK(head("GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", &r) == -400);
	CHECK(head("GET / HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n", &r) == -413);
	CHECK(head("GET / HTTP/1.1\r\nA: b\rc\r\n\r\n", &r) == -400);
	const char nul[] = "GET /\0 HTTP/1.1\r\n\r\n";
	CHECK(http_parse_head(nul, sizeof nul - 1, &r) == -400);
}

static void test_paths(void)
{
	char out[256];
	CHECK(http_parse_path(out, sizeof out, "/pprof/heap", 11) == 11 && strcmp(out, "/pprof/heap") == 0);
	CHECK(http_parse_path(out, sizeof out, "/debug/pprof/", 13) == 13);
	CHECK(http_parse_path(out, sizeof out, "/a%20b", 6) == 4 && strcmp(out, "/a b") == 0);
	CHECK(http_parse_path(out, sizeof out, "/../etc/passwd", 14) == -1);
	CHECK(http_parse_path(out, sizeof out, "/a/..", 5) == -1);
	CHECK(http_parse_path(out, sizeof out, "/a/./b", 6) == -1);
	CHECK(http_parse_path(out, sizeof out, "/%2e%2e/etc", 11) == -1);
	CHECK(http_parse_path(out, sizeof out, "/%2E%2E%2fetc", 13) == -1);
	CHECK(http_parse_path(out, sizeof out, "/a%5c..", 7) == -1);
	CHECK(http_parse_path(out, sizeof out, "/a%00", 5) == -1);
	CHECK(http_parse_path(out, sizeof out, "/a%zz", 5) == -1);
	CHECK(http_parse_path(out, sizeof out, "/a%2", 4) == -1);
	CHECK(http_parse_path(out, sizeof out, "/..a/b..", 8) == 8); /* not a ".." segment */
	CHECK(http_parse_path(out, 4, "/abcdef", 7) == -1);          /* does not fit */

	long n = http_parse_url_decode(out, sizeof out, "a+b%2Bc", 7, 1);
	CHECK(n == 5 && strcmp(out, "a b+c") == 0);
	n = http_parse_url_decode(out, sizeof out, "a+b", 3, 0);
	CHECK(n == 3 && strcmp(out, "a+b") == 0);
}

static void test_query(void)
{
	char v[64];
	const char *q = "debug=1&gc=&seconds&id=17;lg=%31%39&token=a%20b";
	size_t n = strlen(q);
	CHECK(http_parse_query_get(q, n, "debug", v, sizeof v) == 1 && strcmp(v, "1") == 0);
	CHECK(http_parse_query_get(q, n, "gc", v, sizeof v) == 0 && v[0] == 0);
	CHECK(http_parse_query_get(q, n, "seconds", v, sizeof v) == 0);
	CHECK(http_parse_query_get(q, n, "id", v, sizeof v) == 2 && strcmp(v, "17") == 0);
	CHECK(http_parse_query_get(q, n, "lg", v, sizeof v) == 2 && strcmp(v, "19") == 0);
	CHECK(http_parse_query_get(q, n, "token", v, sizeof v) == 3 && strcmp(v, "a b") == 0);
	CHECK(http_parse_query_get(q, n, "missing", v, sizeof v) == -1);
	CHECK(http_parse_query_get(q, n, "debu", v, sizeof v) == -1);
	CHECK(http_parse_query_get("x=%zz", 5, "x", v, sizeof v) == -2);
	CHECK(http_parse_query_get("x=0123456789", 12, "x", v, 4) == -2);

	CHECK(http_parse_query_safe(q, n) == 0);
	CHECK(http_parse_query_safe("file=/etc/passwd", 16) == -1);
	CHECK(http_parse_query_safe("file=%2Fetc%2Fpasswd", 20) == -1);
	CHECK(http_parse_query_safe("f=a/../b", 8) == -1);
	CHECK(http_parse_query_safe("f=..", 4) == -1);
	CHECK(http_parse_query_safe("f=%2e%2e%2fx", 12) == -1);
	CHECK(http_parse_query_safe("0x4005e0+0x400600", 17) == 0);
	CHECK(http_parse_query_safe("f=a..b", 6) == 0);
	CHECK(http_parse_query_safe("retain=%2Fusr%2Flib&exclude=%2E%2E%2F", 37) == 0);
	CHECK(http_parse_query_safe("retainx=%2Fusr", 14) == -1);
}

static void test_addr(void)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int lo = -1;
	struct sockaddr_in *in = (struct sockaddr_in *)&ss;
	CHECK(http_parse_addr("6060", &ss, &len, &lo) == 0 && lo == 1 && ntohs(in->sin_port) == 6060 &&
	      in->sin_addr.s_addr == htonl(0x7f000001) && len == sizeof *in);
	CHECK(http_parse_addr(":6061", &ss, &len, &lo) == 0 && lo == 1 && ntohs(in->sin_port) == 6061);
	CHECK(http_parse_addr("127.0.0.1:6062", &ss, &len, &lo) == 0 && lo == 1);
	CHECK(http_parse_addr("localhost:1", &ss, &len, &lo) == 0 && lo == 1);
	CHECK(http_parse_addr("0.0.0.0:6060", &ss, &len, &lo) == 0 && lo == 0 && in->sin_addr.s_addr == 0);
	CHECK(http_parse_addr("10.1.2.3:80", &ss, &len, &lo) == 0 && lo == 0);
	CHECK(http_parse_addr("[::1]:6060", &ss, &len, &lo) == 0 && lo == 1 && ss.ss_family == AF_INET6);
	CHECK(http_parse_addr("[::]:6060", &ss, &len, &lo) == 0 && lo == 0);
	CHECK(http_parse_addr("0", &ss, &len, &lo) == 0 && ntohs(in->sin_port) == 0);
	CHECK(http_parse_addr("", &ss, &len, &lo) == -EINVAL);
	CHECK(http_parse_addr("65536", &ss, &len, &lo) == -EINVAL);
	CHECK(http_parse_addr("host.example:80", &ss, &len, &lo) == -EINVAL);
	CHECK(http_parse_addr("1.2.3.4:", &ss, &len, &lo) == -EINVAL);
	CHECK(http_parse_addr("1:2:3", &ss, &len, &lo) == -EINVAL);
	CHECK(http_parse_addr("[::1]6060", &ss, &len, &lo) == -EINVAL);
	CHECK(http_parse_addr("60x0", &ss, &len, &lo) == -EINVAL);
	/* IPv4-mapped loopback binds are loopback */
	CHECK(http_parse_addr("[::ffff:127.0.0.1]:1", &ss, &len, &lo) == 0 && lo == 1);
	CHECK(http_parse_addr("[::ffff:10.0.0.1]:1", &ss, &len, &lo) == 0 && lo == 0);
	/* Unix sockets: absolute paths only, local by nature */
	struct sockaddr_un *un = (struct sockaddr_un *)&ss;
	lo = 0;
	CHECK(http_parse_addr("unix:/run/heaptap.sock", &ss, &len, &lo) == 0 && lo == 1 && ss.ss_family == AF_UNIX &&
	      strcmp(un->sun_path, "/run/heaptap.sock") == 0);
	CHECK(http_parse_addr("unix:relative.sock", &ss, &len, &lo) == -EINVAL);
	CHECK(http_parse_addr("unix:", &ss, &len, &lo) == -EINVAL);
	char longpath[200];
	memset(longpath, 'a', sizeof longpath - 1);
	longpath[sizeof longpath - 1] = 0;
	memcpy(longpath, "unix:/", 6);
	CHECK(http_parse_addr(longpath, &ss, &len, &lo) == -EINVAL);
}

static int host_ok(const char *h)
{
	return http_parse_host_is_loopback(h, strlen(h));
}

static void test_host(void)
{
	CHECK(host_ok("127.0.0.1") && host_ok("127.0.0.1:6060") && host_ok("127.1.2.3:1"));
	CHECK(host_ok("localhost") && host_ok("LocalHost:80") && host_ok("[::1]") && host_ok("[::1]:6060"));
	CHECK(!host_ok("evil.example:6060") && !host_ok("10.0.0.1:6060") && !host_ok("127.0.0.1.evil.example"));
	CHECK(!host_ok("localhost.evil.example") && !host_ok("127.0.0.256") && !host_ok("127.0.0") && !host_ok(""));
	CHECK(!host_ok("127.0.0.1:") && !host_ok("127.0.0.1:60x") && !host_ok("127.0.0.1:6060:1") && !host_ok("[::2]:1"));
	CHECK(!host_ok("[::1") && !host_ok("1270.0.0.1") && !host_ok("127.0.0.1:1234567"));
	/* IPv4-mapped loopback, in both spellings */
	CHECK(host_ok("[::ffff:127.0.0.1]") && host_ok("[::ffff:127.0.0.1]:6060") && host_ok("[::FFFF:7f00:1]:1"));
	CHECK(host_ok("[0:0:0:0:0:0:0:1]") && !host_ok("[::ffff:10.0.0.1]") && !host_ok("[::1%lo]") && !host_ok("[]"));

	unsigned char ip[16];
	static const unsigned char ten[16] = {[10] = 0xff, [11] = 0xff, [12] = 10, [15] = 5};
	CHECK(http_parse_host_ip("10.0.0.5:6060", 13, ip) == 0 && memcmp(ip, ten, 16) == 0);
	CHECK(http_parse_host_ip("[::ffff:10.0.0.5]", 17, ip) == 0 && memcmp(ip, ten, 16) == 0);
	CHECK(http_parse_host_ip("evil.example", 12, ip) == -1 && http_parse_host_ip("10.0.0.5.nip.io", 15, ip) == -1);
	CHECK(http_parse_ip_is_loopback(ten) == 0);

	CHECK(http_parse_host_listed("Box.Example:6060", 16, "a.example+box.example") == 1);
	CHECK(http_parse_host_listed("box.example", 11, "box.example.evil") == 0);
	CHECK(http_parse_host_listed("box", 3, "") == 0 && http_parse_host_listed("box", 3, "+box+") == 1);
}

static int same(const char *url, const char *host)
{
	return http_parse_same_origin(url, strlen(url), host, strlen(host));
}

static void test_origin(void)
{
	CHECK(same("http://127.0.0.1:6060", "127.0.0.1:6060") && same("HTTP://LocalHost:1/x?y", "localhost:1"));
	CHECK(same("http://127.0.0.1:6060/debug/pprof/", "127.0.0.1:6060"));
	CHECK(!same("http://127.0.0.1:6060.evil.example", "127.0.0.1:6060") && !same("null", "127.0.0.1:6060"));
	CHECK(!same("https://127.0.0.1:6060", "127.0.0.1:6060") && !same("http://evil.example", "127.0.0.1"));
	CHECK(!same("http://127.0.0.1:606", "127.0.0.1:6060") && !same("http://127.0.0.1", ""));

	struct http_request r;
	CHECK(head("GET / HTTP/1.1\r\nOrigin: http://a\r\nReferer: http://a/b\r\nSec-Fetch-Site: none\r\n\r\n", &r) > 0);
	CHECK(span_is(r.origin, r.origin_len, "http://a") && span_is(r.referer, r.referer_len, "http://a/b") &&
	      span_is(r.fetch_site, r.fetch_site_len, "none"));
	/* a second copy could carry another value past the check: malformed */
	CHECK(head("GET / HTTP/1.1\r\nOrigin: http://a\r\nOrigin: http://b\r\n\r\n", &r) == -400);
	CHECK(head("GET / HTTP/1.1\r\nSec-Fetch-Site: none\r\nsec-fetch-site: cross-site\r\n\r\n", &r) == -400);
}

static void test_auth(void)
{
	const char *t = NULL;
	size_t n = 0;
	CHECK(http_parse_bearer("Bearer s3cr3t", 13, &t, &n) == 0 && span_is(t, n, "s3cr3t"));
	CHECK(http_parse_bearer("bearer  s3cr3t", 14, &t, &n) == 0 && span_is(t, n, "s3cr3t"));
	CHECK(http_parse_bearer("BEARER\tx", 8, &t, &n) == 0 && span_is(t, n, "x"));
	CHECK(http_parse_bearer("Basic eDp5", 10, &t, &n) == -1 && http_parse_bearer("Bearer ", 7, &t, &n) == -1);
	CHECK(http_parse_bearer("Bearers3cr3t", 12, &t, &n) == -1);

	uint64_t v = 7;
	CHECK(http_parse_uint("62", 2, 62, &v) == 0 && v == 62);
	CHECK(http_parse_uint("63", 2, 62, &v) == -1 && http_parse_uint("-1", 2, 62, &v) == -1);
	CHECK(http_parse_uint("", 0, 62, &v) == -1 && http_parse_uint("1x", 2, 62, &v) == -1);
	CHECK(http_parse_uint("99999999999999999999", 20, UINT64_MAX, &v) == -1);
	CHECK(http_parse_uint("0", 1, 0, &v) == 0 && v == 0);
}

static void test_duration(void)
{
	double s = -1;
	CHECK(http_parse_duration("5mins", 5, &s) == 0 && s == 300);
	CHECK(http_parse_duration("30secs", 6, &s) == 0 && s == 30);
	CHECK(http_parse_duration("1.5hrs", 6, &s) == 0 && s == 5400);
	CHECK(http_parse_duration("1days", 5, &s) == 0 && s == 86400);
	CHECK(http_parse_duration("2weeks", 6, &s) == 0 && s == 1209600);
	CHECK(http_parse_duration("250ms", 5, &s) == 0 && s > 0.2499 && s < 0.2501);
	CHECK(http_parse_duration("600", 3, &s) == -1);    /* bare numbers are invalid in stout */
	CHECK(http_parse_duration("5min", 4, &s) == -1);
	CHECK(http_parse_duration("mins", 4, &s) == -1);
	CHECK(http_parse_duration("-5secs", 6, &s) == -1);
	CHECK(http_parse_duration("5 secs", 6, &s) == -1);
	CHECK(http_parse_duration("", 0, &s) == -1);
}

static void test_symbols(void)
{
	const char *body = "0x00005613587b7376+0X4005E0+deadbeef%2B0x1&junk+0x12345678901234567+0x+0x10";
	size_t n = strlen(body), pos = 0;
	struct http_symaddr a;
	CHECK(http_parse_symbol_next(body, n, &pos, &a) == 1 && a.addr == 0x5613587b7376ull &&
	      span_is(a.hex, a.hex_len, "00005613587b7376"));
	CHECK(http_parse_symbol_next(body, n, &pos, &a) == 1 && a.addr == 0x4005e0 && span_is(a.hex, a.hex_len, "4005E0"));
	CHECK(http_parse_symbol_next(body, n, &pos, &a) == 1 && a.addr == 0xdeadbeef);
	CHECK(http_parse_symbol_next(body, n, &pos, &a) == 1 && a.addr == 1);
	/* "junk" (not hex), 17 digits and a bare "0x" are skipped */
	CHECK(http_parse_symbol_next(body, n, &pos, &a) == 1 && a.addr == 0x10);
	CHECK(http_parse_symbol_next(body, n, &pos, &a) == 0);
	pos = 0;
	CHECK(http_parse_symbol_next("", 0, &pos, &a) == 0);
	pos = 0;
	CHECK(http_parse_symbol_next("+++\n", 4, &pos, &a) == 0);
	pos = 0;
	CHECK(http_parse_symbol_next("0x1\r\n0x2\n", 9, &pos, &a) == 1 && a.addr == 1);
	CHECK(http_parse_symbol_next("0x1\r\n0x2\n", 9, &pos, &a) == 1 && a.addr == 2);
	/* an unterminated escape at the end must not read past the buffer */
	pos = 0;
	CHECK(http_parse_symbol_next("0x1%2", 5, &pos, &a) == 0);
}

int main(void)
{
	test_heads();
	test_paths();
	test_query();
	test_addr();
	test_duration();
	test_host();
	test_symbols();
	test_origin();
	test_auth();
	CHECK(strcmp(http_parse_reason(431), "Request Header Fields Too Large") == 0);
	CHECK(strcmp(http_parse_reason(429), "Too Many Requests") == 0);
	return check_finish("lib_http_parse");
}
