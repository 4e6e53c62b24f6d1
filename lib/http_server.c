/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * http_server.c - the embedded HTTP/1.x server of http_server.h: one poll()-driven thread, a
 * fixed number of connection slots with fixed head buffers, bodies in mmap'd buffers, replies
 * streamed from a memfd, per-connection deadlines; admission (the connecting user, Host,
 * cross-site requests, the bearer token) and fair sharing (eviction of the slowest senders
 * when the slots are full, a cap on the reply bytes waiting for clients).
 *
 * It is not the routing nor any endpoint (the application, http_routes.c). Every buffer is
 * static or mmap'd, so what clients do cannot grow memory beyond HTTP_SLOTS x (head + body cap)
 * + HTTP_PENDING_MAX of replies (+ the one being answered). One request per connection
 * (Connection: close).
 */
#include "http_server.h"
#include "../base/pages.h"

#include "peercred.h"
#include "procsel.h"
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
#include <sys/un.h>
#include <unistd.h>

#define HTTP_SLOTS 16
#define HTTP_HEAD_MAX 8192
#define HTTP_BODY_MAX (4u << 20)
#define HTTP_READ_MS 10000   /* a request must arrive completely within this */
#define HTTP_WRITE_MS 60000  /* and its reply must be taken within this, */
#define HTTP_WRITE_IDLE_MS 10000 /* with never this long without the client taking a byte */
#define HTTP_STALL_MS 1000   /* a reader idle this long loses its reply when room is needed */
#define HTTP_PENDING_MAX (32u << 20) /* reply bytes held for clients, all slots together */
#define HTTP_DRAIN_MS 1000   /* after an error reply, unread input is drained this long */
#define HTTP_WAIT_MS 135000  /* a request may wait this long for a background job (CLI: 120 s) */
#define HTTP_PATH_MAX 2048

enum conn_state { C_FREE, C_HEAD, C_BODY, C_WAIT, C_WRITE, C_DRAIN };

/* What the listening address lets reach the server (and so which Host names it accepts). */
enum bind_kind {
	BIND_LOOPBACK, /* 127/8, ::1, ::ffff:127/104: loopback names */
	BIND_ADDR,     /* one other address: that address */
	BIND_ANY,      /* 0.0.0.0 or [::]: any IP literal, loopback names */
	BIND_UNIX,     /* a Unix socket: loopback names */
};

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
	struct sys_fd mem;          /* per-slot reply storage, created lazily (identity-checked) */
	ino_t fd_ino, body_ino;     /* identities of fd and body_fd, see fd_ours() */
	unsigned char peer_ip[16];  /* the client (IPv4 mapped; zeros for a Unix socket) */
	uint16_t peer_port;
	int64_t since_ms;           /* accepted at */
	int64_t progress_ms;        /* the client last took reply bytes at */
	int64_t write_end_ms;       /* the whole reply must be taken by */
	uint64_t pinned;            /* bytes of the slot's memfd held for this reply */
	uint64_t serial;            /* the request's number (http_exchange.serial) */
};

static struct conn conns[HTTP_SLOTS];
static struct http_exchange xch;
static char iobuf[65536];
static char pathbuf[HTTP_PATH_MAX];

static atomic_int running;
static struct sys_fd listener = SYS_FD_NONE;
static int bound_port;
static enum bind_kind bind_kind;
static unsigned char bound_ip[16];   /* BIND_ADDR: the address */
static char token[256];              /* zero-padded: compared over its whole size */
static size_t token_len;
static uid_t owner_uid, owner_euid;
static struct http_policy policy;
static const struct http_app *app;
static int slots_ready;
static struct http_server_counts counts; /* written by the server thread, read by anyone */
static uint64_t next_serial;             /* the server thread's */
static char refused_addr[256];           /* the last address refused at start (logged once) */

static void bump(uint64_t *counter)
{
	__atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
}

void http_server_get_counts(struct http_server_counts *out)
{
	const uint64_t *src = (const uint64_t *)&counts;
	uint64_t *dst = (uint64_t *)out;
	for (size_t i = 0; i < sizeof counts / sizeof(uint64_t); i++)
		dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
}

int64_t http_server_now_ms(void)
{
	return sys_mono_ns() / 1000000;
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
	case EEXIST: return "the path exists and is not a stale socket of this user";
	case ENOENT: return "No such file or directory";
	case ENOTDIR: return "Not a directory";
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
	/* a memfd lost to the host is forgotten, never touched (sys_fd_check) */
	if (sys_fd_check(&c->mem) && ftruncate(c->mem.fd, 0) != 0)
		sys_fd_close(&c->mem);
	if (c->pinned)
		__atomic_fetch_sub(&counts.pending_bytes, c->pinned, __ATOMIC_RELAXED);
	struct sys_fd mem = c->mem;
	memset(c, 0, sizeof *c);
	c->fd = -1;
	c->body_fd = -1;
	c->mem = mem;
	c->state = C_FREE;
}

/* Counts n reply bytes as held for c's client (its slot's memfd) until the slot closes. */
static void conn_pin(struct conn *c, uint64_t n)
{
	if (c->pinned)
		__atomic_fetch_sub(&counts.pending_bytes, c->pinned, __ATOMIC_RELAXED);
	c->pinned = n;
	uint64_t now = __atomic_add_fetch(&counts.pending_bytes, n, __ATOMIC_RELAXED);
	if (now > counts.pending_peak)
		__atomic_store_n(&counts.pending_peak, now, __ATOMIC_RELAXED);
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
	c->progress_ms = http_server_now_ms();
	c->write_end_ms = c->progress_ms + HTTP_WRITE_MS;
	c->deadline = c->progress_ms + HTTP_WRITE_IDLE_MS;
	if (status >= 400)
		c->drain = 1;
}

/* The slot's reply memfd, created on first use; -1 when the system refuses one. */
static int slot_memfd(struct conn *c)
{
	if (!sys_fd_check(&c->mem))
		(void)sys_fd_own(&c->mem, memfd_create("heaptap-http", MFD_CLOEXEC));
	return c->mem.fd;
}

/* A short reply generated by the server itself (errors before routing). */
static void conn_reply_error(struct conn *c, int status, const char *text, const char *extra)
{
	int fd = slot_memfd(c);
	size_t n = strlen(text);
	c->body_fd = -1;
	if (fd >= 0 && ftruncate(fd, 0) == 0 && pwrite(fd, text, n, 0) == (ssize_t)n) {
		c->body_fd = fd;
		c->body_ino = (ino_t)c->mem.ino;
		conn_pin(c, n);
		conn_reply_head(c, status, "text/plain; charset=utf-8", extra, extra ? strlen(extra) : 0, n,
		                c->req.method == HTTP_HEAD);
	} else {
		conn_reply_head(c, status, "text/plain; charset=utf-8", extra, extra ? strlen(extra) : 0, 0, 1);
	}
}

/* ---- admission: who may use the control plane ---- */

/*
 * Compares a candidate with the token over the token buffer's whole size whatever either
 * length is, so that neither the time taken nor the branches depend on the token's length or
 * bytes (only on the candidate's length, which the client knows). Returns 0 when equal,
 * 1 otherwise.
 */
static unsigned token_diff(const char *cand, size_t n)
{
	unsigned diff = n != token_len;
	for (size_t i = 0; i < sizeof token; i++) {
		unsigned char a = i < n ? (unsigned char)cand[i] : 0;
		diff |= a ^ (unsigned char)token[i];
	}
	return diff != 0;
}

static int auth_ok(const struct conn *c)
{
	if (token_len == 0)
		return 1;
	const char *t;
	size_t tn;
	unsigned bad_bearer = 1, bad_query = 1;
	if (c->req.auth && http_parse_bearer(c->req.auth, c->req.auth_len, &t, &tn) == 0)
		bad_bearer = token_diff(t, tn);
	char q[sizeof token];
	long ql = http_parse_query_get(c->req.query, c->req.query_len, "token", q, sizeof q);
	if (ql >= 0)
		bad_query = token_diff(q, (size_t)ql);
	return !(bad_bearer & bad_query);
}

static int uid_allowed(uint32_t uid)
{
	if (uid == 0 || uid == (uint32_t)owner_uid || uid == (uint32_t)owner_euid)
		return 1;
	for (unsigned i = 0; i < policy.nuids; i++)
		if (policy.uids[i] == uid)
			return 1;
	return 0;
}

/*
 * NULL when the connecting user may use the control plane, else the 403 body (in why).
 * Unix sockets: SO_PEERCRED. TCP: the owner of the client's socket, found in /proc/net/tcp{,6};
 * a loopback client that cannot be found (it closed its socket, /proc is missing) is refused.
 * A client on another machine (not found, not a loopback nor our own address) can only reach
 * a non-loopback bind, which has a token: the token stands for it.
 */
static const char *peer_refusal(struct conn *c, char *why, size_t cap)
{
	uint32_t uid = 0;
	int rc;
	if (policy.allow_any_user)
		return NULL;
	if (bind_kind == BIND_UNIX) {
		rc = peercred_unix_uid(c->fd, &uid);
	} else {
		struct sockaddr_storage self;
		socklen_t sl = sizeof self;
		unsigned char sip[16];
		uint16_t sport;
		if (getsockname(c->fd, (struct sockaddr *)&self, &sl) != 0 || http_parse_sockaddr_ip(&self, sip, &sport) != 0)
			return "cannot tell which user is connecting: getsockname failed\n";
		rc = peercred_tcp_uid(c->peer_ip, c->peer_port, sip, sport, &uid);
		if (rc == -ENOENT && !http_parse_ip_is_loopback(c->peer_ip) && memcmp(c->peer_ip, sip, 16) != 0)
			return NULL; /* another machine's client: the token decides */
	}
	if (rc < 0)
		return "cannot tell which user is connecting (no open socket of this machine matches the "
		       "connection); this control plane serves only its owner's user and root\n";
	if (uid_allowed(uid))
		return NULL;
	struct outbuf ob;
	outbuf_init(&ob, why, cap - 1, -1);
	outbuf_puts(&ob, "user id ");
	outbuf_u64(&ob, uid);
	outbuf_puts(&ob, " may not use this control plane: it serves the profiled program's user (uid ");
	outbuf_u64(&ob, (uint64_t)owner_euid);
	outbuf_puts(&ob, ") and root; see http_allow_users in docs/OPTIONS.md\n");
	why[ob.len] = 0;
	return why;
}

/* 1 when the Host value may name this server (DNS rebinding: a page whose name was re-pointed
   at us must not be served). */
static int host_ok(const char *h, size_t n)
{
	unsigned char ip[16];
	if (http_parse_host_listed(h, n, policy.hosts))
		return 1;
	switch (bind_kind) {
	case BIND_LOOPBACK:
	case BIND_UNIX:
		return http_parse_host_is_loopback(h, n);
	case BIND_ADDR:
		return http_parse_host_ip(h, n, ip) == 0 && memcmp(ip, bound_ip, 16) == 0;
	case BIND_ANY:
		return http_parse_host_ip(h, n, ip) == 0 || http_parse_host_is_loopback(h, n);
	}
	return 0;
}

static const char *host_refusal(void)
{
	switch (bind_kind) {
	case BIND_ADDR:
		return "Host must be the address the server listens on (or a name in http_hosts)\n";
	case BIND_ANY:
		return "Host must be an IP address or localhost (or a name in http_hosts)\n";
	default:
		return "Host must name the loopback interface (127.0.0.1, localhost, [::1])\n";
	}
}

static int span_is(const char *p, size_t n, const char *lit)
{
	return n == strlen(lit) && memcmp(p, lit, n) == 0;
}

/* 1 when the request comes from a page of another site: a browser says so in Sec-Fetch-Site,
   or names the page in Origin or Referer. Requests without these headers (curl, jeprof, go
   tool pprof) are not cross-site. */
static int cross_site(const struct http_request *r)
{
	if (r->fetch_site && !span_is(r->fetch_site, r->fetch_site_len, "same-origin") &&
	    !span_is(r->fetch_site, r->fetch_site_len, "none"))
		return 1;
	if (r->origin && (!r->host || !http_parse_same_origin(r->origin, r->origin_len, r->host, r->host_len)))
		return 1;
	if (r->referer && (!r->host || !http_parse_same_origin(r->referer, r->referer_len, r->host, r->host_len)))
		return 1;
	return 0;
}

/*
 * Decides, from the head alone and before anything has an effect, whether the request is
 * served. Returns 1, or 0 after preparing the refusal.
 */
static int conn_admit(struct conn *c)
{
	const struct http_request *r = &c->req;
	char why[320];
	if (http_parse_path(pathbuf, sizeof pathbuf, r->target, r->target_len) < 0 ||
	    http_parse_query_safe(r->query, r->query_len) < 0) {
		bump(&counts.malformed);
		conn_reply_error(c, 400, "bad request path\n", NULL);
		return 0;
	}
	if (!r->host && r->minor == 1) {
		bump(&counts.refused_host);
		conn_reply_error(c, 400, "HTTP/1.1 request without Host\n", NULL);
		return 0;
	}
	if (r->host && !host_ok(r->host, r->host_len)) {
		bump(&counts.refused_host);
		conn_reply_error(c, 403, host_refusal(), NULL);
		return 0;
	}
	if (cross_site(r)) {
		bump(&counts.refused_cross_site);
		conn_reply_error(c, 403, "cross-site request refused: Origin, Referer or Sec-Fetch-Site names "
		                         "another site than this server\n", NULL);
		return 0;
	}
	const char *refusal = peer_refusal(c, why, sizeof why);
	if (refusal) {
		bump(&counts.refused_user);
		conn_reply_error(c, 403, refusal, NULL);
		return 0;
	}
	if (!auth_ok(c)) {
		bump(&counts.refused_token);
		conn_reply_error(c, 401, "missing or wrong token\n", "WWW-Authenticate: Bearer realm=\"heaptap\"\r\n");
		return 0;
	}
	return 1;
}

/* ---- fair shares ---- */

/* Replies waiting in memfds may take HTTP_PENDING_MAX together: to answer c, drop the clients
   that took nothing of theirs for HTTP_STALL_MS, least recently active first. 0 when no room
   can be made. */
static int make_room(const struct conn *c, int64_t now)
{
	while (__atomic_load_n(&counts.pending_bytes, __ATOMIC_RELAXED) >= HTTP_PENDING_MAX) {
		struct conn *victim = NULL;
		for (int i = 0; i < HTTP_SLOTS; i++) {
			struct conn *o = &conns[i];
			if (o == c || o->state != C_WRITE || o->pinned == 0 || now - o->progress_ms < HTTP_STALL_MS)
				continue;
			if (!victim || o->progress_ms < victim->progress_ms)
				victim = o;
		}
		if (!victim)
			return 0;
		bump(&counts.dropped_unread);
		conn_close(victim);
	}
	return 1;
}

/* Slots held by the client at ip. */
static int peer_slots(const unsigned char ip[16])
{
	int n = 0;
	for (int i = 0; i < HTTP_SLOTS; i++)
		if (conns[i].state != C_FREE && memcmp(conns[i].peer_ip, ip, 16) == 0)
			n++;
	return n;
}

/*
 * How readily a busy slot gives way to a new connection: -1 never (a request being answered,
 * or parked), else a class (0 draining after an error, 1 still sending its request, 2 not
 * taking its reply for HTTP_STALL_MS) to free in that order.
 */
static int evict_class(const struct conn *c, int64_t now)
{
	switch (c->state) {
	case C_DRAIN: return 0;
	case C_HEAD:
	case C_BODY: return 1;
	case C_WRITE: return now - c->progress_ms >= HTTP_STALL_MS ? 2 : -1;
	default: return -1;
	}
}

/*
 * A slot for a new connection: a free one, else the one the slowest client holds: by class,
 * then of the client holding most slots (one client cannot starve the others), then the
 * oldest. A client that reconnects as fast as it is dropped only ever evicts its own slow
 * connections while everyone else's requests, sent at once, complete. NULL when every slot
 * is busy answering.
 */
static struct conn *slot_for(int64_t now)
{
	struct conn *victim = NULL;
	int vclass = 0, vslots = 0;
	for (int i = 0; i < HTTP_SLOTS; i++)
		if (conns[i].state == C_FREE)
			return &conns[i];
	for (int i = 0; i < HTTP_SLOTS; i++) {
		struct conn *c = &conns[i];
		int cl = evict_class(c, now);
		if (cl < 0)
			continue;
		int slots = peer_slots(c->peer_ip);
		int64_t t = cl == 2 ? c->progress_ms : c->since_ms;
		int64_t vt = victim ? (vclass == 2 ? victim->progress_ms : victim->since_ms) : 0;
		if (!victim || cl < vclass || (cl == vclass && (slots > vslots || (slots == vslots && t < vt)))) {
			victim = c;
			vclass = cl;
			vslots = slots;
		}
	}
	if (!victim)
		return NULL;
	bump(vclass == 2 ? &counts.dropped_unread : &counts.evicted);
	conn_close(victim);
	return victim;
}

/* ---- requests ---- */

static void conn_handle(struct conn *c)
{
	const struct http_request *r = &c->req;
	/* decoded again: another request may have used the buffer since this one was admitted */
	if (http_parse_path(pathbuf, sizeof pathbuf, r->target, r->target_len) < 0) {
		conn_reply_error(c, 400, "bad request path\n", NULL);
		return;
	}
	if (slot_memfd(c) < 0) {
		conn_reply_head(c, 503, "text/plain", NULL, 0, 0, 1);
		return;
	}
	if (!make_room(c, http_server_now_ms())) {
		bump(&counts.refused_busy);
		conn_reply_error(c, 503, "too many replies are waiting for their clients: retry shortly\n",
		                 "Retry-After: 1\r\n");
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
	x->body_fd = c->mem.fd;
	x->file_fd = -1;
	x->wait = 0;
	x->serial = c->serial;
	outbuf_init(&x->ob, x->obuf, sizeof x->obuf, c->mem.fd);
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
	bump(&counts.requests);
	if (x->status == 429)
		bump(&counts.rate_limited);
	outbuf_flush(&x->ob);
	struct stat st;
	if (x->file_fd >= 0) {
		c->body_fd = x->file_fd;
		c->body_ino = fd_ino(c->body_fd);
		c->own_body_fd = 1;
		x->file_fd = -1;
	} else {
		c->body_fd = c->mem.fd;
		c->body_ino = (ino_t)c->mem.ino;
	}
	if (x->ob.err || fstat(c->body_fd, &st) != 0) {
		conn_reply_error(c, 500, "could not buffer the reply\n", NULL);
		return;
	}
	if (!c->own_body_fd)
		conn_pin(c, (uint64_t)st.st_size);
	conn_reply_head(c, x->status, x->ctype, x->headers, x->headers_len, (uint64_t)st.st_size,
	                r->method == HTTP_HEAD);
}

/* The head is complete: admit the request, then decide what to do with the body. */
static void conn_head_done(struct conn *c, long head_len)
{
	const struct http_request *r = &c->req;
	if (r->method == HTTP_OTHER) {
		bump(&counts.malformed);
		conn_reply_error(c, 405, "method not allowed\n", "Allow: GET, HEAD, POST\r\n");
		return;
	}
	if (!conn_admit(c))
		return;
	uint64_t want = r->method == HTTP_POST ? r->content_length : 0;
	if (r->method == HTTP_POST && r->chunked) {
		bump(&counts.malformed);
		conn_reply_error(c, 411, "chunked request bodies are not supported: send Content-Length\n", NULL);
		return;
	}
	if (want > HTTP_BODY_MAX) {
		bump(&counts.malformed);
		conn_reply_error(c, 413, "request body too large (limit 4 MiB)\n", NULL);
		return;
	}
	if (want == 0) {
		conn_handle(c);
		return;
	}
	c->body_map = (size_t)pages_round_up((size_t)want);
	void *m = pages_map(c->body_map);
	if (!m) {
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

/* The body of a refusal the parser found (http_parse_head's negative statuses). */
static const char *parse_refusal(long rc)
{
	switch (rc) {
	case -505: return "HTTP version not supported\n";
	case -413: return "request body too large (its Content-Length does not even fit in 64 bits)\n";
	default: return "malformed request\n";
	}
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
			bump(&counts.malformed);
			conn_reply_error(c, (int)-rc, parse_refusal(rc), NULL);
		} else if (c->head_len == sizeof c->head) {
			bump(&counts.malformed);
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

/* The client took some of its reply: it is not stalled; its idle deadline moves. */
static void conn_progress(struct conn *c)
{
	c->progress_ms = http_server_now_ms();
	c->deadline = c->progress_ms + HTTP_WRITE_IDLE_MS;
	if (c->deadline > c->write_end_ms)
		c->deadline = c->write_end_ms;
}

static void conn_write(struct conn *c)
{
	if (!fd_ours(c->fd, c->fd_ino) || (c->body_off < c->body_end && !fd_ours(c->body_fd, c->body_ino))) {
		conn_close(c); /* never send into, nor read a reply from, a descriptor not ours */
		return;
	}
	int moved = 0;
	while (c->out_off < c->out_len) {
		ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				goto out;
			conn_close(c);
			return;
		}
		c->out_off += (size_t)n;
		moved = 1;
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
				goto out;
			conn_close(c);
			return;
		}
		c->body_off += (uint64_t)n;
		moved = 1;
	}
	conn_pin(c, 0); /* all sent: nothing held for this client any more */
	if (c->drain) {
		shutdown(c->fd, SHUT_WR);
		c->state = C_DRAIN;
		c->deadline = http_server_now_ms() + HTTP_DRAIN_MS;
		return;
	}
	shutdown(c->fd, SHUT_WR);
	conn_close(c);
	return;
out:
	if (moved)
		conn_progress(c);
}

static void server_accept(void)
{
	for (int k = 0; k < 64; k++) {
		struct sockaddr_storage peer;
		socklen_t pl = sizeof peer;
		int fd = accept4(listener.fd, (struct sockaddr *)&peer, &pl, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		fd = sys_fd_high(fd); /* above the numbers the host reuses */
		bump(&counts.connections);
		int64_t now = http_server_now_ms();
		struct conn *c = slot_for(now);
		if (!c) {
			static const char busy[] = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\n"
			                           "Content-Length: 5\r\nConnection: close\r\nRetry-After: 1\r\n\r\nbusy\n";
			bump(&counts.refused_busy);
			send(fd, busy, sizeof busy - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
			close(fd);
			continue;
		}
		c->fd = fd;
		c->fd_ino = fd_ino(fd);
		c->serial = ++next_serial;
		c->state = C_HEAD;
		c->head_len = 0;
		c->since_ms = now;
		c->deadline = now + HTTP_READ_MS;
		memset(c->peer_ip, 0, sizeof c->peer_ip);
		c->peer_port = 0;
		if (bind_kind != BIND_UNIX) {
			int one = 1;
			http_parse_sockaddr_ip(&peer, c->peer_ip, &c->peer_port);
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		}
		conn_read(c); /* a client that sent its request at once is answered before it can be evicted */
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
				if (c->state == C_WRITE)
					bump(&counts.dropped_unread);
				else if (c->state == C_HEAD || c->state == C_BODY)
					bump(&counts.timed_out);
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
		if (listener.fd >= 0 && !sys_fd_check(&listener))
			log_line("the program closed the listening socket; the server stops", "", "");
		if (listener.fd < 0 && busy == 0) {
			/* nothing left to serve: end the thread; heaptap_http_start may start anew */
			bound_port = 0;
			atomic_store(&running, 0);
			return NULL;
		}
		if (listener.fd >= 0) {
			pfd[n].fd = listener.fd;
			pfd[n].events = POLLIN;
			pfd[n].revents = 0;
			idx[n++] = -1;
		}
		int timeout = next > now ? (int)(next - now) : 0;
		int rc = poll(pfd, (nfds_t)n, timeout);
		if (rc < 0) {
			if (errno == EINTR)
				continue;
			sys_sleep_ms(100);
			continue;
		}
		/* connections first: a slot freed or evicted by an accept must not be read as its
		   old occupant's */
		for (int k = 0; k < n; k++) {
			if (!pfd[k].revents || idx[k] < 0)
				continue;
			struct conn *c = &conns[idx[k]];
			if (c->state == C_FREE)
				continue;
			if (pfd[k].revents & POLLNVAL) {
				conn_close(c); /* closed under us by the program */
				continue;
			}
			if (c->state == C_WRITE)
				conn_write(c);
			else if (pfd[k].revents & (POLLIN | POLLHUP | POLLERR))
				conn_read(c);
		}
		if (n > 0 && idx[n - 1] < 0 && pfd[n - 1].revents)
			server_accept();
	}
	return NULL;
}

/* ---- start, fork ---- */

void http_server_fork_child(void)
{
	if (!atomic_load(&running))
		return;
	for (int i = 0; i < HTTP_SLOTS; i++) {
		if (fd_ours(conns[i].fd, conns[i].fd_ino))
			close(conns[i].fd);
		sys_fd_close(&conns[i].mem);
		conns[i].fd = -1;
		conns[i].body = NULL; /* the mapping is the parent's copy; leave it */
		conns[i].pinned = 0;
		conns[i].state = C_FREE;
	}
	__atomic_store_n(&counts.pending_bytes, 0, __ATOMIC_RELAXED);
	sys_fd_close(&listener);
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
	if (ss->ss_family == AF_UNIX) {
		outbuf_puts(&ob, "unix:");
		outbuf_puts(&ob, ((const struct sockaddr_un *)ss)->sun_path);
		out[ob.len] = 0;
		return;
	}
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

/* Logs a start refusal of addr once: a program that retries the same address does not repeat
   the line. */
static void log_refused(const char *addr, const char *a, const char *b, const char *c)
{
	if (strncmp(refused_addr, addr, sizeof refused_addr - 1) == 0 && refused_addr[0])
		return;
	sys_strlcpy(refused_addr, addr, sizeof refused_addr);
	log_line(a, b, c);
}

/* Makes room for a Unix socket at path: nothing there, or a stale socket of our user that
   nobody listens on any more (removed). Returns 0 or -errno. */
static int unix_prepare(const struct sockaddr_un *un, socklen_t len)
{
	struct stat st;
	if (lstat(un->sun_path, &st) != 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode) || st.st_uid != geteuid())
		return -EEXIST;
	int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (probe < 0)
		return -errno;
	int live = connect(probe, (const struct sockaddr *)un, len) == 0;
	close(probe);
	if (live)
		return -EADDRINUSE;
	return unlink(un->sun_path) == 0 ? 0 : -errno;
}

/* Creates, binds and listens; returns the socket or -errno. */
static int open_listener(const struct sockaddr_storage *ss, socklen_t sslen)
{
	int one = 1;
	if (ss->ss_family == AF_UNIX) {
		int rc = unix_prepare((const struct sockaddr_un *)ss, sslen);
		if (rc < 0)
			return rc;
	}
	int fd = sys_fd_high(socket(ss->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
	if (fd < 0)
		return -errno;
	if ((ss->ss_family != AF_UNIX && setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0) ||
	    bind(fd, (const struct sockaddr *)ss, sslen) != 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	/* the socket file: the owner only (SO_PEERCRED checks every client anyway) */
	if ((ss->ss_family == AF_UNIX && chmod(((const struct sockaddr_un *)ss)->sun_path, 0600) != 0) ||
	    listen(fd, 64) != 0) {
		int e = errno;
		if (ss->ss_family == AF_UNIX)
			unlink(((const struct sockaddr_un *)ss)->sun_path);
		close(fd);
		return -e;
	}
	return fd;
}

static enum bind_kind kind_of(const struct sockaddr_storage *ss, int loopback)
{
	unsigned char ip[16];
	uint16_t port;
	static const unsigned char any6[16], any4[16] = {[10] = 0xff, [11] = 0xff};
	if (ss->ss_family == AF_UNIX)
		return BIND_UNIX;
	if (loopback)
		return BIND_LOOPBACK;
	http_parse_sockaddr_ip(ss, ip, &port);
	if (memcmp(ip, any6, 16) == 0 || memcmp(ip, any4, 16) == 0)
		return BIND_ANY;
	return BIND_ADDR;
}

int http_server_start(const char *addr, const char *tok, const struct http_app *a)
{
	struct sockaddr_storage ss;
	socklen_t sslen;
	int loopback;
	char shown[140];
	if (!addr || http_parse_addr(addr, &ss, &sslen, &loopback) != 0) {
		log_refused(addr ? addr : "(null)", "bad listen address '", addr ? addr : "(null)", "'");
		return -EINVAL;
	}
	if (tok && strlen(tok) >= sizeof token) {
		log_line("token too long", "", "");
		return -EINVAL;
	}
	format_addr(&ss, shown, sizeof shown);
	enum bind_kind kind = kind_of(&ss, loopback);
	if ((kind == BIND_ADDR || kind == BIND_ANY) && !(tok && *tok)) {
		/* anyone who can reach the address could read the program's memory map and argv */
		log_refused(addr, "refusing to listen on ", shown,
		            " without a token: set http_token (see docs/SECURITY.md), or listen on loopback");
		return -EACCES;
	}
	int expect = 0;
	if (!atomic_compare_exchange_strong(&running, &expect, 1))
		return -EALREADY;
	int fd = open_listener(&ss, sslen);
	if (fd < 0) {
		char why[96];
		struct outbuf ob;
		outbuf_init(&ob, why, sizeof why - 1, -1);
		outbuf_puts(&ob, ": ");
		outbuf_puts(&ob, errname(-fd));
		why[ob.len] = 0;
		if (fd != -EADDRINUSE)
			log_line("cannot listen on ", shown, why);
		else if (procsel_busy_first(shown)) /* once per launch tree */
			log_line("cannot listen on ", shown, ": Address already in use (another process"
			         " holds it; in a tree of processes prof_procs names the one that serves,"
			         " docs/HTTP.md)");
		atomic_store(&running, 0);
		return fd;
	}
	bound_port = 0;
	if (kind != BIND_UNIX) {
		struct sockaddr_storage got;
		socklen_t gl = sizeof got;
		uint16_t port = 0;
		if (getsockname(fd, (struct sockaddr *)&got, &gl) == 0)
			http_parse_sockaddr_ip(&got, bound_ip, &port);
		bound_port = port;
	}
	bind_kind = kind;
	memset(token, 0, sizeof token);
	token_len = tok ? strlen(tok) : 0;
	if (tok)
		memcpy(token, tok, token_len);
	owner_uid = getuid();
	owner_euid = geteuid();
	memset(&policy, 0, sizeof policy);
	if (a->policy)
		a->policy(&policy);
	if (!slots_ready) {
		for (int i = 0; i < HTTP_SLOTS; i++) {
			conns[i].fd = -1;
			conns[i].mem = (struct sys_fd)SYS_FD_NONE;
			conns[i].body_fd = -1;
		}
		slots_ready = 1;
	}
	(void)sys_fd_own(&listener, fd);
	app = a;
	int rc = sys_thread_start(server_main, NULL);
	if (rc != 0) {
		log_line("cannot start the server thread", "", "");
		sys_fd_close(&listener);
		bound_port = 0;
		atomic_store(&running, 0);
		return -rc;
	}
	return 0;
}

int http_server_port(void)
{
	return atomic_load(&running) ? bound_port : 0;
}
