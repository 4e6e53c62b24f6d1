/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz_lib_http.c - libFuzzer target for the collector's HTTP request parsing (lib/http_parse.c):
 * the request head, then, as the server does, the path check, the query checks and look-ups,
 * the symbol address list of the body, durations and listen addresses on slices of the input.
 * Not a server test: no sockets; the corpus is replayed by `make check`.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../lib/http_parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	struct http_request req;
	char path[2048], val[256];
	long rc = http_parse_head(s, size, &req);
	if (rc > 0) {
		if ((size_t)rc > size || req.target < s || req.target + req.target_len > s + size ||
		    req.query + req.query_len > s + size)
			__builtin_trap();
		http_parse_path(path, sizeof path, req.target, req.target_len);
		http_parse_query_safe(req.query, req.query_len);
		if (req.host)
			http_parse_host_is_loopback(req.host, req.host_len);
		http_parse_query_get(req.query, req.query_len, "debug", val, sizeof val);
		http_parse_query_get(req.query, req.query_len, "id", val, 4);
		long d = http_parse_query_get(req.query, req.query_len, "duration", val, sizeof val);
		double secs;
		if (d >= 0)
			http_parse_duration(val, (size_t)d, &secs);
		/* the body, as POST /pprof/symbol reads it */
		size_t pos = 0, count = 0;
		struct http_symaddr a;
		while (http_parse_symbol_next(s + rc, size - (size_t)rc, &pos, &a)) {
			if (a.hex < s + rc || a.hex + a.hex_len > s + size || a.hex_len == 0 || a.hex_len > 16)
				__builtin_trap();
			if (++count > size)
				__builtin_trap(); /* must make progress */
		}
	}
	/* the whole input as an address list, a duration and a listen address */
	size_t pos = 0;
	struct http_symaddr a;
	while (http_parse_symbol_next(s, size, &pos, &a))
		;
	double secs;
	http_parse_duration(s, size, &secs);
	char addr[128];
	size_t n = size < sizeof addr - 1 ? size : sizeof addr - 1;
	memcpy(addr, s, n);
	addr[n] = 0;
	struct sockaddr_storage ss;
	socklen_t sl;
	int lo;
	http_parse_addr(addr, &ss, &sl, &lo);
	http_parse_url_decode(path, sizeof path, s, size, 1);
	return 0;
}
