/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pushhttp.c - the plain HTTP/1.1 POST of pushhttp.h: non-blocking socket, poll() against one
 * deadline, "Connection: close", the reply read until the peer closes or the buffer is full.
 * No host malloc: the head is formatted in a static buffer (one caller, the background
 * thread).
 */
#include "pushhttp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "../base/outbuf.h"
#include "sys.h"

static char head[4096];
static char rbuf[8192];

int pushhttp_parse_url(const char *url, struct pushhttp_url *u)
{
	memset(u, 0, sizeof *u);
	if (strncmp(url, "http://", 7) != 0)
		return strstr(url, "://") ? -EPROTONOSUPPORT : -EINVAL;
	const char *p = url + 7;
	const char *end = p;
	while (*end && *end != '/' && *end != '?')
		end++;
	size_t alen = (size_t)(end - p);
	if (alen == 0 || alen >= sizeof u->authority || memchr(p, '@', alen))
		return -EINVAL;
	memcpy(u->authority, p, alen);
	const char *hs = p, *he;
	const char *portp = NULL;
	if (*p == '[') {
		he = memchr(p, ']', alen);
		if (!he)
			return -EINVAL;
		hs = p + 1;
		if (he + 1 < end) {
			if (he[1] != ':')
				return -EINVAL;
			portp = he + 2;
		}
	} else {
		he = memchr(p, ':', alen);
		if (he)
			portp = he + 1;
		else
			he = end;
	}
	size_t hl = (size_t)(he - hs);
	if (hl == 0 || hl >= sizeof u->host)
		return -EINVAL;
	memcpy(u->host, hs, hl);
	u->port = 80;
	if (portp) {
		uint32_t v = 0;
		if (portp == end)
			return -EINVAL;
		for (const char *q = portp; q < end; q++) {
			if (*q < '0' || *q > '9' || (v = v * 10 + (uint32_t)(*q - '0')) > 65535)
				return -EINVAL;
		}
		if (v == 0)
			return -EINVAL;
		u->port = (uint16_t)v;
	}
	const char *q = strchr(end, '?');
	size_t pl = q ? (size_t)(q - end) : strlen(end);
	if (pl + 2 > sizeof u->path || (q && strlen(q + 1) >= sizeof u->query))
		return -EINVAL;
	if (pl == 0)
		u->path[0] = '/';
	else
		memcpy(u->path, end, pl);
	if (q)
		sys_strlcpy(u->query, q + 1, sizeof u->query);
	for (const char *c = url; *c; c++)
		if ((unsigned char)*c <= ' ' || *c == 0x7f)
			return -EINVAL; /* no spaces nor control bytes in what goes on the request line */
	return 0;
}

static int set_ip(struct pushhttp_url *u, const char *ip)
{
	struct sockaddr_in *a4 = (struct sockaddr_in *)&u->addr;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&u->addr;
	memset(&u->addr, 0, sizeof u->addr);
	if (inet_pton(AF_INET, ip, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons(u->port);
		u->addrlen = sizeof *a4;
		return 0;
	}
	if (inet_pton(AF_INET6, ip, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons(u->port);
		u->addrlen = sizeof *a6;
		return 0;
	}
	return -EINVAL;
}

/* The address /etc/hosts gives name, copied to out; 0 or -ENOENT. */
static int hosts_lookup(const char *name, char *out, size_t cap)
{
	static char buf[65536];
	long n = sys_read_small("/etc/hosts", buf, sizeof buf);
	if (n <= 0)
		return -ENOENT;
	char *line = buf;
	while (line && *line) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = 0;
		char *hash = strchr(line, '#');
		if (hash)
			*hash = 0;
		/* fields: address, then names */
		char *f[16];
		int nf = 0;
		for (char *c = line; *c && nf < 16;) {
			while (*c == ' ' || *c == '\t')
				*c++ = 0;
			if (!*c)
				break;
			f[nf++] = c;
			while (*c && *c != ' ' && *c != '\t')
				c++;
		}
		for (int i = 1; i < nf; i++) {
			if (strcmp(f[i], name) == 0 && strlen(f[0]) < cap) {
				sys_strlcpy(out, f[0], cap);
				return 0;
			}
		}
		line = nl ? nl + 1 : NULL;
	}
	return -ENOENT;
}

int pushhttp_resolve(struct pushhttp_url *u)
{
	char ip[64];
	if (set_ip(u, u->host) == 0)
		return 0;
	if (strcmp(u->host, "localhost") == 0)
		return set_ip(u, "127.0.0.1");
	if (hosts_lookup(u->host, ip, sizeof ip) == 0 && set_ip(u, ip) == 0)
		return 0;
	u->addrlen = 0;
	return -EHOSTUNREACH;
}

/* Waits for events on fd until deadline (monotonic ns). 0 ready, -ETIMEDOUT, -errno. */
static int wait_fd(int fd, short events, int64_t deadline)
{
	for (;;) {
		int64_t left = (deadline - sys_mono_ns()) / 1000000;
		if (left <= 0)
			return -ETIMEDOUT;
		struct pollfd p = {fd, events, 0};
		int r = poll(&p, 1, (int)(left > 60000 ? 60000 : left));
		if (r > 0)
			return 0;
		if (r < 0 && errno != EINTR)
			return -errno;
	}
}

/* The socket is checked before each use: the host may close it meanwhile and reuse the number. */
static int send_all(struct sys_fd *s, const char *p, size_t n, int64_t deadline)
{
	while (n > 0) {
		if (!sys_fd_check(s))
			return -EBADF;
		ssize_t k = send(s->fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (k > 0) {
			p += k;
			n -= (size_t)k;
			continue;
		}
		if (k < 0 && errno != EAGAIN && errno != EINTR)
			return -errno;
		int rc = wait_fd(s->fd, POLLOUT, deadline);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int pushhttp_post(const struct pushhttp_url *u, const char *target, const char *ctype, const char *extra,
                  const void *body, size_t len, int timeout_ms, char *reply, size_t reply_cap)
{
	int64_t deadline = sys_mono_ns() + (int64_t)timeout_ms * 1000000;
	if (reply_cap)
		reply[0] = 0;
	if (!u->addrlen)
		return -EHOSTUNREACH;
	struct outbuf ob;
	outbuf_init(&ob, head, sizeof head, -1);
	outbuf_puts(&ob, "POST ");
	outbuf_puts(&ob, target);
	outbuf_puts(&ob, " HTTP/1.1\r\nHost: ");
	outbuf_puts(&ob, u->authority);
	outbuf_puts(&ob, "\r\nUser-Agent: heaptap\r\nConnection: close\r\nContent-Type: ");
	outbuf_puts(&ob, ctype);
	outbuf_puts(&ob, "\r\nContent-Length: ");
	outbuf_u64(&ob, len);
	outbuf_puts(&ob, "\r\n");
	outbuf_puts(&ob, extra);
	outbuf_puts(&ob, "\r\n");
	if (ob.len >= sizeof head)
		return -E2BIG;
	struct sys_fd s;
	int fd = sys_fd_own(&s, socket(u->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
	if (fd < 0)
		return errno ? -errno : -EMFILE;
	int rc = 0;
	if (connect(fd, (const struct sockaddr *)&u->addr, u->addrlen) != 0) {
		if (errno != EINPROGRESS) {
			rc = -errno;
			goto out;
		}
		rc = wait_fd(fd, POLLOUT, deadline);
		int err = 0;
		socklen_t el = sizeof err;
		if (rc == 0 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) == 0 && err)
			rc = -err;
		if (rc < 0)
			goto out;
	}
	rc = send_all(&s, head, ob.len, deadline);
	if (rc == 0)
		rc = send_all(&s, body, len, deadline);
	/* a server may answer (413, 401) and close before taking the whole body: read anyway */
	size_t got = 0;
	for (;;) {
		if (got == sizeof rbuf || !sys_fd_check(&s))
			break;
		ssize_t k = recv(s.fd, rbuf + got, sizeof rbuf - got, MSG_DONTWAIT);
		if (k > 0) {
			got += (size_t)k;
			continue;
		}
		if (k == 0)
			break;
		if (errno != EAGAIN && errno != EINTR)
			break;
		int w = wait_fd(s.fd, POLLIN, deadline);
		if (w < 0) {
			if (got == 0)
				rc = w;
			break;
		}
	}
	if (got >= 12 && memcmp(rbuf, "HTTP/1.", 7) == 0 && rbuf[8] == ' ') {
		int st = 0;
		for (int i = 9; i < 12; i++)
			st = st * 10 + (rbuf[i] - '0');
		rc = st;
		const char *b = NULL;
		for (size_t i = 0; i + 3 < got; i++)
			if (memcmp(rbuf + i, "\r\n\r\n", 4) == 0) {
				b = rbuf + i + 4;
				break;
			}
		if (b && reply_cap) {
			size_t n = (size_t)(rbuf + got - b);
			if (n >= reply_cap)
				n = reply_cap - 1;
			memcpy(reply, b, n);
			reply[n] = 0;
		}
	} else if (rc == 0) {
		rc = got ? -EPROTO : -ECONNRESET;
	}
out:
	sys_fd_close(&s);
	return rc;
}
