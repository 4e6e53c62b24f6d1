/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * http_parse.c - HTTP/1.x request heads, percent-decoding, query strings, listen
 * addresses, stout durations and symbol address lists, as declared in http_parse.h.
 *
 * Pure functions over the caller's bytes: no allocation, no locale (character classes are
 * written out by hand), no state. It is not the server loop and knows nothing of routes.
 */
#include "http_parse.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <string.h>
#include <sys/un.h>

static int is_tchar(unsigned char c)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
		return 1;
	return c != 0 && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

static int lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c + 32 : c;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = lower(c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* a[0..n) and b[0..m) are equal without regard to ASCII case */
static int ieq_n(const char *a, size_t n, const char *b, size_t m)
{
	if (n != m)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (lower((unsigned char)a[i]) != lower((unsigned char)b[i]))
			return 0;
	return 1;
}

static int ieq(const char *a, size_t n, const char *b)
{
	return ieq_n(a, n, b, strlen(b));
}

/* Finds the end of the line starting at p: returns the index of '\n' or -1. */
static long line_end(const char *buf, size_t len, size_t p)
{
	const char *nl = memchr(buf + p, '\n', len - p);
	return nl ? nl - buf : -1;
}

static long parse_request_line(const char *s, size_t n, struct http_request *req)
{
	size_t i = 0;
	while (i < n && is_tchar((unsigned char)s[i]))
		i++;
	if (i == 0 || i >= n || s[i] != ' ')
		return -400;
	if (i == 3 && memcmp(s, "GET", 3) == 0)
		req->method = HTTP_GET;
	else if (i == 4 && memcmp(s, "HEAD", 4) == 0)
		req->method = HTTP_HEAD;
	else if (i == 4 && memcmp(s, "POST", 4) == 0)
		req->method = HTTP_POST;
	else
		req->method = HTTP_OTHER;
	size_t t0 = ++i;
	while (i < n && s[i] != ' ') {
		unsigned char c = (unsigned char)s[i];
		if (c <= 0x20 || c == 0x7f)
			return -400;
		i++;
	}
	size_t t1 = i;
	if (t1 == t0 || i >= n)
		return -400; /* no target, or HTTP/0.9 (no version) */
	i++;
	const char *v = s + i;
	size_t vn = n - i;
	if (vn != 8 || memcmp(v, "HTTP/", 5) != 0 || v[6] != '.' || v[5] < '0' || v[5] > '9' ||
	    v[7] < '0' || v[7] > '9')
		return -400;
	if (v[5] != '1' || (v[7] != '0' && v[7] != '1'))
		return -505;
	req->minor = v[7] - '0';

	const char *t = s + t0;
	size_t tn = t1 - t0;
	/* absolute form (proxies): skip the scheme and authority */
	size_t skip = 0;
	if (tn > 7 && memcmp(t, "http://", 7) == 0)
		skip = 7;
	else if (tn > 8 && memcmp(t, "https://", 8) == 0)
		skip = 8;
	if (skip) {
		const char *slash = memchr(t + skip, '/', tn - skip);
		if (!slash)
			return -400;
		tn -= (size_t)(slash - t);
		t = slash;
	}
	if (t[0] != '/')
		return -400;
	const char *hash = memchr(t, '#', tn);
	if (hash)
		tn = (size_t)(hash - t);
	const char *q = memchr(t, '?', tn);
	req->target = t;
	if (q) {
		req->target_len = (size_t)(q - t);
		req->query = q + 1;
		req->query_len = tn - req->target_len - 1;
	} else {
		req->target_len = tn;
		req->query = t + tn;
		req->query_len = 0;
	}
	return 0;
}

/* Records a header that may appear once: a second copy (which could smuggle a value past
   the checks that read the first) makes the request malformed. */
static long set_once(const char **dst, size_t *dst_len, const char *v, size_t vn)
{
	if (*dst)
		return -400;
	*dst = v;
	*dst_len = vn;
	return 0;
}

static long parse_header(const char *s, size_t n, struct http_request *req)
{
	size_t i = 0;
	while (i < n && is_tchar((unsigned char)s[i]))
		i++;
	if (i == 0 || i >= n || s[i] != ':')
		return -400;
	const char *name = s;
	size_t nn = i;
	i++;
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	size_t e = n;
	while (e > i && (s[e - 1] == ' ' || s[e - 1] == '\t'))
		e--;
	const char *v = s + i;
	size_t vn = e - i;
	for (size_t k = 0; k < vn; k++) {
		unsigned char c = (unsigned char)v[k];
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return -400;
	}
	if (ieq(name, nn, "content-length")) {
		if (vn == 0)
			return -400;
		uint64_t x = 0;
		for (size_t k = 0; k < vn; k++) {
			if (v[k] < '0' || v[k] > '9')
				return -400;
			if (x > (UINT64_MAX - 9) / 10)
				return -413;
			x = x * 10 + (uint64_t)(v[k] - '0');
		}
		if (req->has_length && req->content_length != x)
			return -400;
		req->content_length = x;
		req->has_length = 1;
	} else if (ieq(name, nn, "transfer-encoding")) {
		req->chunked = 1;
	} else if (ieq(name, nn, "expect")) {
		if (ieq(v, vn, "100-continue"))
			req->expect_continue = 1;
	} else if (ieq(name, nn, "authorization")) {
		req->auth = v;
		req->auth_len = vn;
	} else if (ieq(name, nn, "host")) {
		return set_once(&req->host, &req->host_len, v, vn);
	} else if (ieq(name, nn, "origin")) {
		return set_once(&req->origin, &req->origin_len, v, vn);
	} else if (ieq(name, nn, "referer")) {
		return set_once(&req->referer, &req->referer_len, v, vn);
	} else if (ieq(name, nn, "sec-fetch-site")) {
		return set_once(&req->fetch_site, &req->fetch_site_len, v, vn);
	}
	return 0;
}

long http_parse_head(const char *buf, size_t len, struct http_request *req)
{
	memset(req, 0, sizeof *req);
	size_t p = 0;
	/* tolerate empty lines before the request line (RFC 9112 2.2) */
	while (p < len && (buf[p] == '\r' || buf[p] == '\n'))
		p++;
	int first = 1;
	for (;;) {
		long nl = line_end(buf, len, p);
		if (nl < 0)
			return 0;
		size_t e = (size_t)nl;
		if (e > p && buf[e - 1] == '\r')
			e--;
		for (size_t k = p; k < e; k++)
			if (buf[k] == '\r' || buf[k] == 0)
				return -400;
		if (first) {
			long rc = parse_request_line(buf + p, e - p, req);
			if (rc < 0)
				return rc;
			first = 0;
		} else if (e == p) {
			req->head_len = (size_t)nl + 1;
			return (long)req->head_len;
		} else {
			if (buf[p] == ' ' || buf[p] == '\t')
				return -400; /* obsolete line folding */
			long rc = parse_header(buf + p, e - p, req);
			if (rc < 0)
				return rc;
		}
		p = (size_t)nl + 1;
	}
}

long http_parse_url_decode(char *dst, size_t cap, const char *src, size_t n, int plus_space)
{
	size_t o = 0;
	if (cap == 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		int c = (unsigned char)src[i];
		if (c == '%') {
			if (i + 2 >= n)
				return -1;
			int h = hexval((unsigned char)src[i + 1]), l = hexval((unsigned char)src[i + 2]);
			if (h < 0 || l < 0)
				return -1;
			c = h * 16 + l;
			i += 2;
		} else if (c == '+' && plus_space) {
			c = ' ';
		}
		if (c < 0x20 || c == 0x7f)
			return -1;
		if (o + 1 >= cap)
			return -1;
		dst[o++] = (char)c;
	}
	dst[o] = 0;
	return (long)o;
}

long http_parse_path(char *dst, size_t cap, const char *target, size_t n)
{
	long len = http_parse_url_decode(dst, cap, target, n, 0);
	if (len <= 0 || dst[0] != '/')
		return -1;
	const char *s = dst;
	const char *end = dst + len;
	while (s < end) {
		if (*s == '\\')
			return -1;
		if (*s == '/') {
			const char *seg = s + 1;
			const char *se = seg;
			while (se < end && *se != '/')
				se++;
			size_t sl = (size_t)(se - seg);
			if ((sl == 1 && seg[0] == '.') || (sl == 2 && seg[0] == '.' && seg[1] == '.'))
				return -1;
		}
		s++;
	}
	return len;
}

/* Calls back for each "name[=value]" pair; stops when fn returns nonzero. */
static long query_each(const char *q, size_t n,
                       long (*fn)(void *ctx, const char *k, size_t kn, const char *v, size_t vn, int hasv),
                       void *ctx)
{
	size_t i = 0;
	while (i <= n) {
		size_t j = i;
		while (j < n && q[j] != '&' && q[j] != ';')
			j++;
		if (j > i) {
			const char *eq = memchr(q + i, '=', j - i);
			const char *k = q + i;
			size_t kn = eq ? (size_t)(eq - k) : j - i;
			const char *v = eq ? eq + 1 : q + j;
			size_t vn = eq ? (size_t)(q + j - v) : 0;
			long rc = fn(ctx, k, kn, v, vn, eq != NULL);
			if (rc)
				return rc;
		}
		i = j + 1;
	}
	return 0;
}

struct query_get_ctx {
	const char *name;
	char *dst;
	size_t cap;
	long result;
};

static long query_get_fn(void *ctx, const char *k, size_t kn, const char *v, size_t vn, int hasv)
{
	struct query_get_ctx *c = ctx;
	char key[64];
	long kl = http_parse_url_decode(key, sizeof key, k, kn, 1);
	if (kl < 0 || strcmp(key, c->name) != 0)
		return 0;
	if (c->cap == 0) {
		c->result = -2;
		return 1;
	}
	long vl = http_parse_url_decode(c->dst, c->cap, v, vn, 1);
	if (vl < 0 && vn == 0)
		vl = 0;
	c->result = vl < 0 ? -2 : vl;
	if (vl == 0)
		c->dst[0] = 0;
	return 1;
}

long http_parse_query_get(const char *query, size_t n, const char *name, char *dst, size_t cap)
{
	struct query_get_ctx c = {name, dst, cap, -1};
	if (cap)
		dst[0] = 0;
	query_each(query, n, query_get_fn, &c);
	return c.result;
}

static long query_safe_fn(void *ctx, const char *k, size_t kn, const char *v, size_t vn, int hasv)
{
	char val[512];
	(void)ctx;
	/* jeprof's --retain/--exclude regular expressions ride on the symbol request's query and
	   may well start with '/'; they are never file names either */
	if ((kn == 6 && memcmp(k, "retain", 6) == 0) || (kn == 7 && memcmp(k, "exclude", 7) == 0))
		return 0;
	long vl = http_parse_url_decode(val, sizeof val, v, vn, 1);
	if (vl < 0)
		return vn > 0 && vn < 3 * sizeof val ? -1 : 0; /* long values (symbol lists) are not paths */
	if (val[0] == '/' || val[0] == '\\')
		return -1;
	for (long i = 0; i + 1 < vl; i++) {
		if (val[i] == '.' && val[i + 1] == '.' && (i == 0 || val[i - 1] == '/' || val[i - 1] == '\\') &&
		    (i + 2 == vl || val[i + 2] == '/' || val[i + 2] == '\\'))
			return -1;
	}
	return 0;
}

int http_parse_query_safe(const char *query, size_t n)
{
	return query_each(query, n, query_safe_fn, NULL) ? -1 : 0;
}

static int parse_port(const char *s, uint16_t *port)
{
	unsigned long v = 0;
	if (!*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (unsigned long)(*s - '0');
		if (v > 65535)
			return -1;
	}
	*port = (uint16_t)v;
	return 0;
}

int http_parse_addr(const char *s, struct sockaddr_storage *ss, socklen_t *sslen, int *loopback)
{
	char host[64];
	const char *port_s;
	uint16_t port;
	memset(ss, 0, sizeof *ss);
	if (!s || !*s)
		return -EINVAL;
	if (strncmp(s, "unix:", 5) == 0) {
		struct sockaddr_un *un = (struct sockaddr_un *)ss;
		size_t pl = strlen(s + 5);
		if (s[5] != '/' || pl >= sizeof un->sun_path)
			return -EINVAL;
		un->sun_family = AF_UNIX;
		memcpy(un->sun_path, s + 5, pl + 1);
		*sslen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + pl + 1);
		*loopback = 1;
		return 0;
	}
	if (s[0] == '[') {
		const char *rb = strchr(s, ']');
		if (!rb || rb[1] != ':' || (size_t)(rb - s - 1) >= sizeof host)
			return -EINVAL;
		memcpy(host, s + 1, (size_t)(rb - s - 1));
		host[rb - s - 1] = 0;
		port_s = rb + 2;
	} else {
		const char *colon = strrchr(s, ':');
		if (!colon) {
			host[0] = 0;
			port_s = s;
		} else {
			if ((size_t)(colon - s) >= sizeof host || memchr(s, ':', (size_t)(colon - s)))
				return -EINVAL;
			memcpy(host, s, (size_t)(colon - s));
			host[colon - s] = 0;
			port_s = colon + 1;
		}
	}
	if (parse_port(port_s, &port) < 0)
		return -EINVAL;
	if (!host[0] || strcmp(host, "localhost") == 0)
		strcpy(host, "127.0.0.1");
	struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
	if (s[0] != '[' && inet_pton(AF_INET, host, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons(port);
		*sslen = sizeof *in4;
		*loopback = (ntohl(in4->sin_addr.s_addr) >> 24) == 127;
		return 0;
	}
	if (s[0] == '[' && inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		*sslen = sizeof *in6;
		*loopback = http_parse_ip_is_loopback(in6->sin6_addr.s6_addr);
		return 0;
	}
	return -EINVAL;
}

int http_parse_duration(const char *s, size_t n, double *seconds)
{
	static const struct {
		const char *unit;
		double secs;
	} units[] = {
		{"ns", 1e-9}, {"us", 1e-6}, {"ms", 1e-3}, {"secs", 1}, {"mins", 60},
		{"hrs", 3600}, {"days", 86400}, {"weeks", 604800},
	};
	size_t i = 0;
	double whole = 0, frac = 0, scale = 1;
	int digits = 0;
	while (i < n && s[i] >= '0' && s[i] <= '9') {
		whole = whole * 10 + (s[i] - '0');
		digits++;
		i++;
	}
	if (i < n && s[i] == '.') {
		i++;
		while (i < n && s[i] >= '0' && s[i] <= '9') {
			scale /= 10;
			frac += (s[i] - '0') * scale;
			digits++;
			i++;
		}
	}
	if (!digits || whole > 1e15)
		return -1;
	for (size_t u = 0; u < sizeof units / sizeof units[0]; u++) {
		size_t ul = strlen(units[u].unit);
		if (n - i == ul && memcmp(s + i, units[u].unit, ul) == 0) {
			*seconds = (whole + frac) * units[u].secs;
			return 0;
		}
	}
	return -1;
}

/* Length of the address separator at s[i] ('+', '&', ',', blanks, "%2B"), 0 if none. */
static size_t sep_len(const char *s, size_t n, size_t i)
{
	char c = s[i];
	if (c == '+' || c == '&' || c == ',' || c == ' ' || c == '\t' || c == '\r' || c == '\n')
		return 1;
	if (c == '%' && i + 2 < n && s[i + 1] == '2' && lower((unsigned char)s[i + 2]) == 'b')
		return 3;
	return 0;
}

int http_parse_symbol_next(const char *s, size_t n, size_t *pos, struct http_symaddr *out)
{
	size_t i = *pos;
	for (;;) {
		size_t k;
		while (i < n && (k = sep_len(s, n, i)) > 0)
			i += k;
		if (i >= n)
			break;
		size_t t = i;
		if (i + 1 < n && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X'))
			i += 2;
		size_t h = i;
		uint64_t v = 0;
		while (i < n && hexval((unsigned char)s[i]) >= 0) {
			v = v << 4 | (uint64_t)hexval((unsigned char)s[i]);
			i++;
		}
		size_t hl = i - h;
		if (hl > 0 && hl <= 16 && (i >= n || sep_len(s, n, i) > 0)) {
			out->addr = v;
			out->hex = s + h;
			out->hex_len = hl;
			*pos = i;
			return 1;
		}
		/* not an address: skip the rest of the token */
		i = t;
		while (i < n && sep_len(s, n, i) == 0)
			i++;
	}
	*pos = n;
	return 0;
}

/* The length of a Host value's name part (a bracketed literal with its brackets, else up to
   ':'), or -1 when the name is empty or the ":port" after it is not 1 to 5 digits. */
static long host_name_len(const char *host, size_t n)
{
	size_t end;
	if (n > 0 && host[0] == '[') {
		const char *rb = memchr(host, ']', n);
		if (!rb)
			return -1;
		end = (size_t)(rb - host) + 1;
	} else {
		const char *colon = memchr(host, ':', n);
		end = colon ? (size_t)(colon - host) : n;
	}
	if (end == 0)
		return -1;
	if (end == n)
		return (long)end;
	if (host[end] != ':' || end + 1 == n || n - end - 1 > 5)
		return -1;
	for (size_t i = end + 1; i < n; i++)
		if (host[i] < '0' || host[i] > '9')
			return -1;
	return (long)end;
}

/* A dotted-quad IPv4 literal: four decimal parts of 1 to 3 digits, each at most 255. */
static int ipv4_literal(const char *s, size_t n, unsigned char out[4])
{
	int parts = 0, digits = 0;
	unsigned v = 0;
	for (size_t i = 0; i <= n; i++) {
		if (i == n || s[i] == '.') {
			if (digits == 0 || v > 255 || parts == 4)
				return -1;
			out[parts++] = (unsigned char)v;
			digits = 0;
			v = 0;
		} else if (s[i] >= '0' && s[i] <= '9' && digits < 3) {
			v = v * 10 + (unsigned)(s[i] - '0');
			digits++;
		} else {
			return -1;
		}
	}
	return parts == 4 ? 0 : -1;
}

/* The name part of a Host value as an IP literal, IPv4 mapped into IPv6. */
static int host_ip(const char *name, size_t n, unsigned char ip[16])
{
	if (n > 0 && name[0] == '[') {
		char buf[64];
		struct in6_addr a;
		if (n < 3 || n - 2 >= sizeof buf || memchr(name, '%', n))
			return -1; /* zone identifiers are not accepted */
		memcpy(buf, name + 1, n - 2);
		buf[n - 2] = 0;
		if (inet_pton(AF_INET6, buf, &a) != 1)
			return -1;
		memcpy(ip, &a, 16);
		return 0;
	}
	unsigned char v4[4];
	if (ipv4_literal(name, n, v4) != 0)
		return -1;
	memset(ip, 0, 10);
	ip[10] = ip[11] = 0xff;
	memcpy(ip + 12, v4, 4);
	return 0;
}

int http_parse_ip_is_loopback(const unsigned char ip[16])
{
	static const unsigned char one[16] = {[15] = 1};
	static const unsigned char mapped[12] = {[10] = 0xff, [11] = 0xff};
	return memcmp(ip, one, 16) == 0 || (memcmp(ip, mapped, 12) == 0 && ip[12] == 127);
}

int http_parse_sockaddr_ip(const struct sockaddr_storage *ss, unsigned char ip[16], uint16_t *port)
{
	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)ss;
		memcpy(ip, &a->sin6_addr, 16);
		*port = ntohs(a->sin6_port);
		return 0;
	}
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *a = (const struct sockaddr_in *)ss;
		memset(ip, 0, 10);
		ip[10] = ip[11] = 0xff;
		memcpy(ip + 12, &a->sin_addr, 4);
		*port = ntohs(a->sin_port);
		return 0;
	}
	return -1;
}

int http_parse_host_is_loopback(const char *host, size_t n)
{
	long nl = host_name_len(host, n);
	unsigned char ip[16];
	if (nl < 0)
		return 0;
	if (ieq(host, (size_t)nl, "localhost"))
		return 1;
	return host_ip(host, (size_t)nl, ip) == 0 && http_parse_ip_is_loopback(ip);
}

int http_parse_host_ip(const char *host, size_t n, unsigned char ip[16])
{
	long nl = host_name_len(host, n);
	return nl < 0 ? -1 : host_ip(host, (size_t)nl, ip);
}

int http_parse_host_listed(const char *host, size_t n, const char *list)
{
	long nl = host_name_len(host, n);
	if (nl < 0 || !list)
		return 0;
	while (*list) {
		const char *e = strchr(list, '+');
		size_t ln = e ? (size_t)(e - list) : strlen(list);
		if (ln > 0 && ieq_n(host, (size_t)nl, list, ln))
			return 1;
		list += ln + (e ? 1 : 0);
	}
	return 0;
}

int http_parse_same_origin(const char *url, size_t n, const char *host, size_t hn)
{
	if (hn == 0 || n < 7 + hn || !ieq(url, 7, "http://") || !ieq_n(url + 7, hn, host, hn))
		return 0;
	if (n == 7 + hn)
		return 1;
	char c = url[7 + hn];
	return c == '/' || c == '?' || c == '#';
}

int http_parse_bearer(const char *auth, size_t n, const char **tok, size_t *tn)
{
	size_t i = 6;
	if (n < 8 || !ieq(auth, 6, "bearer") || (auth[6] != ' ' && auth[6] != '\t'))
		return -1;
	while (i < n && (auth[i] == ' ' || auth[i] == '\t'))
		i++;
	if (i == n)
		return -1;
	*tok = auth + i;
	*tn = n - i;
	return 0;
}

int http_parse_uint(const char *s, size_t n, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;
	if (n == 0 || n > 19)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (v > max)
		return -1;
	*out = v;
	return 0;
}

const char *http_parse_reason(int status)
{
	switch (status) {
	case 100: return "Continue";
	case 200: return "OK";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 408: return "Request Timeout";
	case 409: return "Conflict";
	case 411: return "Length Required";
	case 413: return "Content Too Large";
	case 429: return "Too Many Requests";
	case 431: return "Request Header Fields Too Large";
	case 500: return "Internal Server Error";
	case 501: return "Not Implemented";
	case 503: return "Service Unavailable";
	case 505: return "HTTP Version Not Supported";
	default: return "Unknown";
	}
}
