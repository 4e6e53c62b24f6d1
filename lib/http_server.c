/*
 * http_server.c - the embedded HTTP/1.x server of http_server.h: one poll()-driven thread, a
 * fixed number of connection slots with fixed head buffers, bodies in mmap'd buffers, replies
 * streamed from a memfd, per-connection deadlines, optional bearer-token check.
 *
 * It is not the routing nor any endpoint (the application, http_routes.c). Every buffer is
 * static or mmap'd, so what clients do cannot grow memory beyond HTTP_SLOTS x (head + body cap
 * + one reply). One request per connection (Connection: close).
 */
#include "http_server.h"

#include "sys.h"
#include "tstate.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define HTTP_SLOTS 16
#define HTTP_HEAD_MAX 8192
#define HTTP_BODY_MAX (4u << 20)
#define HTTP_READ_MS 10000   /* a request must arrive completely within this */
#define HTTP_WRITE_MS 60000  /* and its reply must be taken within this */
#define HTTP_DRAIN_MS 1000   /* after an error reply, unread input is drained this long */
#define HTTP_WAIT_MS 135000  /* a request may wait this long for a background job (CLI: 120 s) */
#define HTTP_PATH_MAX 2048

enum conn_state { C_FREE, C_HEAD, C_BODY, C_WAIT, C_WRITE, C_DRAIN };

struct conn {
	int fd;
	enum conn_state state;
	int64_t deadline;
	char head[HTTP_HEAD_MAX];
	size_t head_len;
	struct http_request req;
	char *body;
	size_t body_map, body_len;
	char out[1536];             /* reply head */
	size_t out_len, out_off;
	int body_fd;                /* what the reply body is read from */
	int own_body_fd;            /* 1: close body_fd when done */
	uint64_t body_off, body_end;
	int drain;                  /* 1: drain unread input after the reply */
	int memfd;                  /* per-slot reply storage, created lazily */
	ino_t fd_ino, body_ino, memfd_ino; /* identities of the three, see fd_ours() */
};

static struct conn conns[HTTP_SLOTS];
static struct http_exchange xch;
static char iobuf[65536];
static char pathbuf[HTTP_PATH_MAX];

static atomic_int running;
static int listen_fd = -1;
static ino_t listen_ino;
static int bound_port;
static int bound_loopback;      /* refuse Host names that are not loopback (DNS rebinding) */
static char token[256];
static const struct http_app *app;
static int slots_ready;

int64_t http_server_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The inode behind fd, 0 when fd is not open. */
static ino_t fd_ino(int fd)
{
	struct stat st;
	return fd >= 0 && fstat(fd, &st) == 0 ? st.st_ino : 0;
}

/*
 * 1 while fd still refers to what we opened (inode ino). A host may close descriptors it does
 * not know about (daemons close everything above 2) and reuse the numbers for its own files;
 * the server must then neither write into nor close them.
 */
static int fd_ours(int fd, ino_t ino)
{
	return fd >= 0 && ino != 0 && fd_ino(fd) == ino;
}

/* ---- exchange helpers (http_server.h) ---- */

void http_server_header(struct http_exchange *x, const char *name, const char *value)
{
	size_t nl = strlen(name), vl = strlen(value);
	if (x->headers_len + nl + vl + 4 >= sizeof x->headers)
		return;
	char *p = x->headers + x->headers_len;
	memcpy(p, name, nl);
	p[nl] = ':';
	p[nl + 1] = ' ';
	memcpy(p + nl + 2, value, vl);
	p[nl + 2 + vl] = '\r';
	p[nl + 3 + vl] = '\n';
	x->headers_len += nl + vl + 4;
}

void http_server_body_reset(struct http_exchange *x)
{
	x->ob.len = 0;
	x->ob.err = 0;
	x->ob.truncated = 0;
	x->ob.total = 0;
	if (x->body_fd >= 0) {
		if (ftruncate(x->body_fd, 0) != 0) {
			/* nothing better to do: the reply will carry the stale bytes' length */
		}
		lseek(x->body_fd, 0, SEEK_SET);
	}
	if (x->file_fd >= 0) {
		close(x->file_fd);
		x->file_fd = -1;
	}
}

void http_server_reply_text(struct http_exchange *x, int status, const char *text)
{
	http_server_body_reset(x);
	x->status = status;
	x->ctype = "text/plain; charset=utf-8";
	outbuf_puts(&x->ob, text);
}

int http_server_body_fd(struct http_exchange *x)
{
	outbuf_flush(&x->ob);
	return x->body_fd;
}

/* ---- errors without strerror (no locale) ---- */

static const char *errname(int e)
{
	switch (e) {
	case EADDRINUSE: return "Address already in use";
	case EADDRNOTAVAIL: return "Cannot assign requested address";
	case EACCES: return "Permission denied";
	case EINVAL: return "Invalid argument";
	case EMFILE: return "Too many open files";
	case EAFNOSUPPORT: return "Address family not supported by protocol";
	default: return "socket error";
	}
}

static void log_line(const char *a, const char *b, const char *c)
{
	char line[512];
	struct outbuf ob;
	outbuf_init(&ob, line, sizeof line, -1);
	outbuf_puts(&ob, "heaptap: http: ");
	outbuf_puts(&ob, a);
	outbuf_puts(&ob, b);
	outbuf_puts(&ob, c);
	outbuf_putc(&ob, '\n');
	if (ob.len == sizeof line)
		line[sizeof line - 1] = '\n';
	write_all(2, line, ob.len);
}

/* ---- connection life cycle ---- */

static void conn_close(struct conn *c)
{
	if (fd_ours(c->fd, c->fd_ino))
		close(c->fd);
	if (c->body)
		munmap(c->body, c->body_map);
	if (c->own_body_fd && fd_ours(c->body_fd, c->body_ino))
		close(c->body_fd);
	if (!fd_ours(c->memfd, c->memfd_ino))
		c->memfd = -1; /* lost to the host: forget it, do not touch it */
	else if (ftruncate(c->memfd, 0) != 0) {
		close(c->memfd);
		c->memfd = -1;
	}
	int memfd = c->memfd;
	ino_t memfd_ino = c->memfd_ino;
	memset(c, 0, sizeof *c);
	c->fd = -1;
	c->body_fd = -1;
	c->memfd = memfd;
	c->memfd_ino = memfd_ino;
	c->state = C_FREE;
}

/* Prepares a reply whose body is body_fd[0..len). */
static void conn_reply_head(struct conn *c, int status, const char *ctype, const char *extra,
                            size_t extra_len, uint64_t len, int head_only)
{
	struct outbuf ob;
	outbuf_init(&ob, c->out, sizeof c->out, -1);
	outbuf_puts(&ob, "HTTP/1.1 ");
	outbuf_u64(&ob, (uint64_t)status);
	outbuf_putc(&ob, ' ');
	outbuf_puts(&ob, http_parse_reason(status));
	outbuf_puts(&ob, "\r\nContent-Type: ");
	outbuf_puts(&ob, ctype);
	outbuf_puts(&ob, "\r\nContent-Length: ");
	outbuf_u64(&ob, len);
	outbuf_puts(&ob, "\r\nConnection: close\r\nX-Content-Type-Options: nosniff\r\n");
	if (extra_len <= sizeof c->out - ob.len - 2)
		outbuf_put(&ob, extra, extra_len);
	outbuf_puts(&ob, "\r\n");
	c->out_len = ob.len;
	c->out_off = 0;
	c->body_off = 0;
	c->body_end = head_only ? 0 : len;
	c->state = C_WRITE;
	c->deadline = http_server_now_ms() + HTTP_WRITE_MS;
	if (status >= 400)
		c->drain = 1;
}

/* The slot's reply memfd, created on first use; -1 when the system refuses one. */
static int slot_memfd(struct conn *c)
{
	if (c->memfd >= 0 && !fd_ours(c->memfd, c->memfd_ino))
		c->memfd = -1;
	if (c->memfd < 0) {
		c->memfd = memfd_create("heaptap-http", MFD_CLOEXEC);
		c->memfd_ino = fd_ino(c->memfd);
	}
	return c->memfd;
}

/* A short reply generated by the server itself (errors before routing). */
static void conn_reply_error(struct conn *c, int status, const char *text, const char *extra)
{
	int fd = slot_memfd(c);
	c->body_fd = -1;
	if (fd >= 0 && ftruncate(fd, 0) == 0 && pwrite(fd, text, strlen(text), 0) == (ssize_t)strlen(text)) {
		c->body_fd = fd;
		c->body_ino = c->memfd_ino;
		conn_reply_head(c, status, "text/plain; charset=utf-8", extra, extra ? strlen(extra) : 0,
		                strlen(text), c->req.method == HTTP_HEAD);
	} else {
		conn_reply_head(c, status, "text/plain; charset=utf-8", extra, extra ? strlen(extra) : 0, 0, 1);
	}
}

static int auth_ok(const struct conn *c, const char *query, size_t qlen)
{
	size_t tl = strlen(token);
	if (tl == 0)
		return 1;
	unsigned diff = 1;
	if (c->req.auth && c->req.auth_len == tl + 7 && memcmp(c->req.auth, "Bearer ", 7) == 0) {
		diff = 0;
		for (size_t i = 0; i < tl; i++)
			diff |= (unsigned char)(c->req.auth[7 + i] ^ token[i]);
	}
	if (diff) {
		char q[256];
		long ql = http_parse_query_get(query, qlen, "token", q, sizeof q);
		if (ql == (long)tl) {
			diff = 0;
			for (size_t i = 0; i < tl; i++)
				diff |= (unsigned char)(q[i] ^ token[i]);
		}
	}
	return diff == 0;
}

static void conn_handle(struct conn *c)
{
	const struct http_request *r = &c->req;
	if (http_parse_path(pathbuf, sizeof pathbuf, r->target, r->target_len) < 0 ||
	    http_parse_query_safe(r->query, r->query_len) < 0) {
		conn_reply_error(c, 400, "bad request path\n", NULL);
		return;
	}
	if (bound_loopback && r->host && !http_parse_host_is_loopback(r->host, r->host_len)) {
		conn_reply_error(c, 403, "Host must name the loopback interface (127.0.0.1, localhost, [::1])\n", NULL);
		return;
	}
	if (!auth_ok(c, r->query, r->query_len)) {
		conn_reply_error(c, 401, "missing or wrong token\n", "WWW-Authenticate: Bearer realm=\"heaptap\"\r\n");
		return;
	}
	if (slot_memfd(c) < 0) {
		conn_reply_head(c, 503, "text/plain", NULL, 0, 0, 1);
		return;
	}
	struct http_exchange *x = &xch;
	memset(x, 0, offsetof(struct http_exchange, obuf));
	x->req = r;
	x->path = pathbuf;
	x->query = r->query;
	x->query_len = r->query_len;
	x->body = c->body ? c->body : "";
	x->body_len = c->body_len;
	x->status = 200;
	x->ctype = "text/plain; charset=utf-8";
	x->body_fd = c->memfd;
	x->file_fd = -1;
	x->wait = 0;
	outbuf_init(&x->ob, x->obuf, sizeof x->obuf, c->memfd);
	http_server_body_reset(x);

	app->dispatch(x);

	if (x->wait) {
		/* parked until the background job is over; then routed again (server_main) */
		http_server_body_reset(x);
		if (c->state != C_WAIT) {
			c->state = C_WAIT;
			c->deadline = http_server_now_ms() + HTTP_WAIT_MS;
		}
		return;
	}
	outbuf_flush(&x->ob);
	struct stat st;
	if (x->file_fd >= 0) {
		c->body_fd = x->file_fd;
		c->body_ino = fd_ino(c->body_fd);
		c->own_body_fd = 1;
		x->file_fd = -1;
	} else {
		c->body_fd = c->memfd;
		c->body_ino = c->memfd_ino;
	}
	if (x->ob.err || fstat(c->body_fd, &st) != 0) {
		conn_reply_error(c, 500, "could not buffer the reply\n", NULL);
		return;
	}
	conn_reply_head(c, x->status, x->ctype, x->headers, x->headers_len, (uint64_t)st.st_size,
	                r->method == HTTP_HEAD);
}

/* The head is complete: decide what to do with the body. */
static void conn_head_done(struct conn *c, long head_len)
{
	const struct http_request *r = &c->req;
	if (r->method == HTTP_OTHER) {
		conn_reply_error(c, 405, "method not allowed\n", "Allow: GET, HEAD, POST\r\n");
		return;
	}
	uint64_t want = r->method == HTTP_POST ? r->content_length : 0;
	if (r->method == HTTP_POST && r->chunked) {
		conn_reply_error(c, 411, "chunked request bodies are not supported: send Content-Length\n", NULL);
		return;
	}
	if (want > HTTP_BODY_MAX) {
		conn_reply_error(c, 413, "request body too large (limit 4 MiB)\n", NULL);
		return;
	}
	if (want == 0) {
		conn_handle(c);
		return;
	}
	c->body_map = ((size_t)want + 4095) & ~(size_t)4095;
	void *m = mmap(NULL, c->body_map, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) {
		c->body_map = 0;
		conn_reply_error(c, 503, "out of memory\n", NULL);
		return;
	}
	c->body = m;
	size_t extra = c->head_len - (size_t)head_len;
	if (extra > want)
		extra = (size_t)want;
	memcpy(c->body, c->head + head_len, extra);
	c->body_len = extra;
	if (c->body_len == want) {
		conn_handle(c);
		return;
	}
	if (r->expect_continue) {
		static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
		send(c->fd, cont, sizeof cont - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
	}
	c->state = C_BODY;
}

static void conn_read(struct conn *c)
{
	if (!fd_ours(c->fd, c->fd_ino)) {
		conn_close(c); /* the number now belongs to the program: never read its data */
		return;
	}
	if (c->state == C_HEAD) {
		ssize_t n = recv(c->fd, c->head + c->head_len, sizeof c->head - c->head_len, 0);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
			conn_close(c);
			return;
		}
		if (n < 0)
			return;
		c->head_len += (size_t)n;
		long rc = http_parse_head(c->head, c->head_len, &c->req);
		if (rc > 0) {
			conn_head_done(c, rc);
		} else if (rc < 0) {
			conn_reply_error(c, (int)-rc, rc == -505 ? "HTTP version not supported\n" : "malformed request\n", NULL);
		} else if (c->head_len == sizeof c->head) {
			conn_reply_error(c, 431, "request head too large (limit 8 KiB)\n", NULL);
		}
	} else if (c->state == C_BODY) {
		ssize_t n = recv(c->fd, c->body + c->body_len, c->req.content_length - c->body_len, 0);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
			conn_close(c);
			return;
		}
		if (n < 0)
			return;
		c->body_len += (size_t)n;
		if (c->body_len == c->req.content_length)
			conn_handle(c);
	} else if (c->state == C_DRAIN) {
		ssize_t n = recv(c->fd, iobuf, sizeof iobuf, 0);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			conn_close(c);
	}
}

static void conn_write(struct conn *c)
{
	if (!fd_ours(c->fd, c->fd_ino) || (c->body_off < c->body_end && !fd_ours(c->body_fd, c->body_ino))) {
		conn_close(c); /* never send into, nor read a reply from, a descriptor not ours */
		return;
	}
	while (c->out_off < c->out_len) {
		ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return;
			conn_close(c);
			return;
		}
		c->out_off += (size_t)n;
	}
	while (c->body_off < c->body_end) {
		uint64_t want = c->body_end - c->body_off;
		if (want > sizeof iobuf)
			want = sizeof iobuf;
		ssize_t got = pread(c->body_fd, iobuf, (size_t)want, (off_t)c->body_off);
		if (got <= 0) {
			conn_close(c);
			return;
		}
		ssize_t n = send(c->fd, iobuf, (size_t)got, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return;
			conn_close(c);
			return;
		}
		c->body_off += (uint64_t)n;
	}
	if (c->drain) {
		shutdown(c->fd, SHUT_WR);
		c->state = C_DRAIN;
		c->deadline = http_server_now_ms() + HTTP_DRAIN_MS;
		return;
	}
	shutdown(c->fd, SHUT_WR);
	conn_close(c);
}

static void server_accept(void)
{
	for (int k = 0; k < 64; k++) {
		int fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		struct conn *c = NULL;
		for (int i = 0; i < HTTP_SLOTS; i++)
			if (conns[i].state == C_FREE) {
				c = &conns[i];
				break;
			}
		if (!c) {
			static const char busy[] = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\n"
			                           "Content-Length: 5\r\nConnection: close\r\nRetry-After: 1\r\n\r\nbusy\n";
			send(fd, busy, sizeof busy - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
			close(fd);
			continue;
		}
		c->fd = fd;
		c->fd_ino = fd_ino(fd);
		c->state = C_HEAD;
		c->head_len = 0;
		c->deadline = http_server_now_ms() + HTTP_READ_MS;
		int one = 1;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	}
}

static void *server_main(void *arg)
{
	struct pollfd pfd[HTTP_SLOTS + 1];
	int idx[HTTP_SLOTS + 1];
	(void)arg;
	/* Everything this thread allocates (inside libc: posix_spawn, dl_iterate_phdr) is the
	   profiler's own business: forward it to the real allocator, never sample it. */
	tstate_enter();
	for (;;) {
		int64_t now = http_server_now_ms();
		int64_t next = now + 1000;
		int64_t due = app->tick(now);
		if (due >= 0 && due < next)
			next = due;
		int n = 0;
		int busy = 0;
		for (int i = 0; i < HTTP_SLOTS; i++) {
			struct conn *c = &conns[i];
			if (c->state == C_FREE)
				continue;
			busy++;
			if (now >= c->deadline) {
				conn_close(c);
				continue;
			}
			if (c->state == C_WAIT) {
				if (!app->busy())
					conn_handle(c);
				if (c->state == C_WAIT || c->state == C_FREE)
					continue; /* nothing to poll on while parked */
			}
			if (c->deadline < next)
				next = c->deadline;
			pfd[n].fd = c->fd;
			pfd[n].events = c->state == C_WRITE ? POLLOUT : POLLIN;
			pfd[n].revents = 0;
			idx[n++] = i;
		}
		if (listen_fd >= 0 && !fd_ours(listen_fd, listen_ino)) {
			log_line("the program closed the listening socket; the server stops", "", "");
			listen_fd = -1;
		}
		if (listen_fd < 0 && busy == 0) {
			/* nothing left to serve: end the thread; heaptap_http_start may start anew */
			bound_port = 0;
			atomic_store(&running, 0);
			return NULL;
		}
		if (listen_fd >= 0) {
			pfd[n].fd = listen_fd;
			pfd[n].events = POLLIN;
			pfd[n].revents = 0;
			idx[n++] = -1;
		}
		int timeout = next > now ? (int)(next - now) : 0;
		int rc = poll(pfd, (nfds_t)n, timeout);
		if (rc < 0) {
			if (errno == EINTR)
				continue;
			struct timespec ts = {0, 100 * 1000 * 1000};
			nanosleep(&ts, NULL);
			continue;
		}
		for (int k = 0; k < n; k++) {
			if (!pfd[k].revents)
				continue;
			if (idx[k] < 0) {
				server_accept();
				continue;
			}
			struct conn *c = &conns[idx[k]];
			if (pfd[k].revents & POLLNVAL) {
				conn_close(c); /* closed under us by the program */
				continue;
			}
			if (c->state == C_WRITE)
				conn_write(c);
			else if (pfd[k].revents & (POLLIN | POLLHUP | POLLERR))
				conn_read(c);
		}
	}
	return NULL;
}

/* ---- start, fork ---- */

void http_server_fork_child(void)
{
	if (!atomic_load(&running))
		return;
	for (int i = 0; i < HTTP_SLOTS; i++) {
		if (conns[i].fd >= 0)
			close(conns[i].fd);
		if (conns[i].memfd >= 0)
			close(conns[i].memfd);
		conns[i].fd = -1;
		conns[i].memfd = -1;
		conns[i].body = NULL; /* the mapping is the parent's copy; leave it */
		conns[i].state = C_FREE;
	}
	if (listen_fd >= 0)
		close(listen_fd);
	listen_fd = -1;
	bound_port = 0;
	app->fork_child();
	atomic_store(&running, 0);
}

static void format_addr(const struct sockaddr_storage *ss, char *out, size_t cap)
{
	char host[INET6_ADDRSTRLEN];
	struct outbuf ob;
	uint16_t port;
	outbuf_init(&ob, out, cap - 1, -1);
	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)ss;
		inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host);
		outbuf_putc(&ob, '[');
		outbuf_puts(&ob, host);
		outbuf_putc(&ob, ']');
		port = ntohs(a->sin6_port);
	} else {
		const struct sockaddr_in *a = (const struct sockaddr_in *)ss;
		inet_ntop(AF_INET, &a->sin_addr, host, sizeof host);
		outbuf_puts(&ob, host);
		port = ntohs(a->sin_port);
	}
	outbuf_putc(&ob, ':');
	outbuf_u64(&ob, port);
	out[ob.len] = 0;
}

int http_server_start(const char *addr, const char *tok, const struct http_app *a)
{
	struct sockaddr_storage ss;
	socklen_t sslen;
	int loopback;
	char shown[80];
	if (!addr || http_parse_addr(addr, &ss, &sslen, &loopback) != 0) {
		log_line("bad listen address '", addr ? addr : "(null)", "'");
		return -EINVAL;
	}
	if (tok && strlen(tok) >= sizeof token) {
		log_line("token too long", "", "");
		return -EINVAL;
	}
	int expect = 0;
	if (!atomic_compare_exchange_strong(&running, &expect, 1))
		return -EALREADY;
	format_addr(&ss, shown, sizeof shown);
	int one = 1;
	int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
	    bind(fd, (struct sockaddr *)&ss, sslen) != 0 || listen(fd, 64) != 0) {
		int e = errno;
		char why[96];
		struct outbuf ob;
		outbuf_init(&ob, why, sizeof why - 1, -1);
		outbuf_puts(&ob, ": ");
		outbuf_puts(&ob, errname(e));
		why[ob.len] = 0;
		log_line("cannot listen on ", shown, why);
		if (fd >= 0)
			close(fd);
		atomic_store(&running, 0);
		return -e;
	}
	struct sockaddr_storage got;
	socklen_t gl = sizeof got;
	getsockname(fd, (struct sockaddr *)&got, &gl);
	bound_port = ntohs(got.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&got)->sin6_port
	                                             : ((struct sockaddr_in *)&got)->sin_port);
	bound_loopback = loopback;
	token[0] = 0;
	if (tok)
		strcpy(token, tok);
	if (!slots_ready) {
		for (int i = 0; i < HTTP_SLOTS; i++) {
			conns[i].fd = -1;
			conns[i].memfd = -1;
			conns[i].body_fd = -1;
		}
		slots_ready = 1;
	}
	listen_fd = fd;
	listen_ino = fd_ino(fd);
	app = a;
	int rc = sys_thread_start(server_main, NULL);
	if (rc != 0) {
		log_line("cannot start the server thread", "", "");
		close(fd);
		listen_fd = -1;
		bound_port = 0;
		atomic_store(&running, 0);
		return -rc;
	}
	if (!loopback)
		log_line("listening on a non-loopback address ", shown, tok && *tok ? "" : " without a token");
	return 0;
}

int http_server_port(void)
{
	return atomic_load(&running) ? bound_port : 0;
}
