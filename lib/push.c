/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * push.c - the push client of push.h. It runs on the background thread (bgthread.c asks
 * push_due_ns when to wake and calls push_run then): each interval one delta profile
 * (delta.c) is written to a memfd, encoded for the dialect (profile/inproc/pushfmt.c) into its own
 * mmap'd buffer and queued; the queue's head is POSTed (pushhttp.c); a failure is retried
 * with a doubling backoff, a refusal (4xx other than 408 and 429) is dropped at once, and a
 * full queue drops its oldest profile. At exit the exiting thread takes the queue over
 * (run_state), pushes the interval so far and what is queued, bounded in time. Every outcome
 * is counted (push_get_counts, /metrics) and the first failure of each kind is logged once.
 *
 * Not the encodings nor the HTTP client. No host malloc (mmap'd buffers, a memfd above the
 * host's descriptors); the host's threads never wait for anything here, except the exiting
 * one (at most min(push_timeout, 5 s)).
 */
#include "push.h"
#include "../base/pages.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../base/outbuf.h"
#include "../profile/inproc/pushfmt.h"
#include "core.h"
#include "delta.h"
#include "options.h"
#include "procinfo.h"
#include "pushhttp.h"
#include "sys.h"

#define QUEUE_MAX 64
#define MAX_LABELS 24

struct qent {
	uint8_t *map;
	size_t map_len, body_len;
	struct pushfmt_request req;
	unsigned attempts;
	int64_t next_try_ns;
};

static struct push_counts counts;
static int configured;          /* push_url parsed, dialect known */
static enum pushfmt_dialect dialect;
static struct pushhttp_url url;
static char auth_extra[768];    /* Authorization, X-Scope-OrgID lines */
static struct delta_base base;
static struct sys_fd memfds[2] = {SYS_FD_NONE, SYS_FD_NONE}; /* one per profile of a push (Parca has two) */
static struct qent queue[QUEUE_MAX];
static unsigned qhead, qlen;
static int64_t next_profile_ns;
/* Who may touch the queue: 0 nobody, 1 the background thread in push_run, 2 closed by
   push_at_exit (atomic). */
static int run_state;
/* The longest exit waits for the last pushes (less when push_timeout is less). */
#define EXIT_BUDGET_MS 5000
static int log_once_url, log_once_resolve, log_once_fail, log_once_refused, log_once_drop;
static char service[128];
static char user_labels[512];   /* a copy, split in place */
static struct pushfmt_label labels[MAX_LABELS];
static size_t nlabels;
static char reply[256];

static void bump(uint64_t *c)
{
	__atomic_fetch_add(c, 1, __ATOMIC_RELAXED);
}

void push_get_counts(struct push_counts *out)
{
	out->pushed = __atomic_load_n(&counts.pushed, __ATOMIC_RELAXED);
	out->errors = __atomic_load_n(&counts.errors, __ATOMIC_RELAXED);
	out->dropped = __atomic_load_n(&counts.dropped, __ATOMIC_RELAXED);
	out->rejected = __atomic_load_n(&counts.rejected, __ATOMIC_RELAXED);
	out->queued = __atomic_load_n(&counts.queued, __ATOMIC_RELAXED);
	out->bytes = __atomic_load_n(&counts.bytes, __ATOMIC_RELAXED);
	out->last_status = __atomic_load_n(&counts.last_status, __ATOMIC_RELAXED);
}

int push_enabled(void)
{
	return configured;
}

/* "Basic " + base64(user:password) */
static void basic_auth(struct outbuf *ob, const char *s)
{
	static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t n = strlen(s), i = 0;
	outbuf_puts(ob, "Authorization: Basic ");
	for (; i < n; i += 3) {
		uint32_t v = (uint32_t)(unsigned char)s[i] << 16;
		if (i + 1 < n)
			v |= (uint32_t)(unsigned char)s[i + 1] << 8;
		if (i + 2 < n)
			v |= (unsigned char)s[i + 2];
		outbuf_putc(ob, tab[v >> 18]);
		outbuf_putc(ob, tab[(v >> 12) & 63]);
		outbuf_putc(ob, i + 1 < n ? tab[(v >> 6) & 63] : '=');
		outbuf_putc(ob, i + 2 < n ? tab[v & 63] : '=');
	}
	outbuf_puts(ob, "\r\n");
}

static void add_label(const char *name, const char *value)
{
	if (nlabels < MAX_LABELS && value && *value) {
		labels[nlabels].name = name;
		labels[nlabels].value = value;
		nlabels++;
	}
}

/* The labels of every profile: the process's facts, then the user's push_labels. */
static void build_labels(const struct options *o)
{
	const struct procinfo *pi = procinfo_get();
	static struct procinfo safe;
	safe = *pi;
	pushfmt_sanitize(safe.hostname);
	sys_strlcpy(service, o->push_service[0] ? o->push_service : safe.program, sizeof service);
	if (!service[0])
		sys_strlcpy(service, "unknown", sizeof service);
	pushfmt_sanitize(service);
	nlabels = 0;
	add_label("hostname", safe.hostname);
	add_label("pid", safe.pid);
	add_label("build_id", safe.build_id);
	add_label("container_id", safe.container_id);
	sys_strlcpy(user_labels, o->push_labels, sizeof user_labels);
	char *p = user_labels;
	while (*p) {
		char *end = strchr(p, '+');
		if (end)
			*end = 0;
		char *eq = strchr(p, '=');
		if (eq && eq != p) {
			*eq = 0;
			pushfmt_sanitize(eq + 1);
			add_label(p, eq + 1);
		}
		if (!end)
			break;
		p = end + 1;
	}
}

void push_start(void)
{
	const struct options *o = options_get();
	if (!o->push_url[0] || !core.enabled || configured)
		return;
	int rc = pushhttp_parse_url(o->push_url, &url);
	if (rc < 0) {
		sys_log_once(&log_once_url, "push: push_url must be http://host[:port]/path",
		             rc == -EPROTONOSUPPORT ? " (no TLS: push through a local agent, docs/FLEET.md)" : "",
		             "; pushing is off");
		return;
	}
	int d = pushfmt_dialect_of(o->push_format, url.path);
	if (d < 0) {
		sys_log_once(&log_once_url, "push: cannot tell the backend from the URL's path",
		             "; set push_format to ingest, ingest-multipart, connect or parca", "; pushing is off");
		return;
	}
	dialect = (enum pushfmt_dialect)d;
	if (delta_base_init(&base) < 0)
		return;
	struct outbuf ob;
	outbuf_init(&ob, auth_extra, sizeof auth_extra - 1, -1);
	if (o->push_token[0]) {
		outbuf_puts(&ob, "Authorization: Bearer ");
		outbuf_puts(&ob, o->push_token);
		outbuf_puts(&ob, "\r\n");
	} else if (o->push_basic[0]) {
		basic_auth(&ob, o->push_basic);
	}
	if (o->push_tenant[0]) {
		outbuf_puts(&ob, "X-Scope-OrgID: ");
		outbuf_puts(&ob, o->push_tenant);
		outbuf_puts(&ob, "\r\n");
	}
	auth_extra[ob.len] = 0;
	next_profile_ns = sys_mono_ns() + (int64_t)o->push_interval_ms * 1000000;
	__atomic_store_n(&configured, 1, __ATOMIC_RELEASE);
}

/* Writes a delta into memfds[k] and maps it; *len its size. NULL on failure. */
static uint8_t *profile_bytes(int k, unsigned parts, int with_duration, int advance, size_t *len)
{
	/* a memfd the host closed (its number maybe its own file now) is left alone and remade */
	if (!sys_fd_check(&memfds[k]))
		(void)sys_fd_own(&memfds[k], memfd_create("heaptap-push", MFD_CLOEXEC));
	int memfd = memfds[k].fd;
	if (memfd < 0 || ftruncate(memfd, 0) != 0 || lseek(memfd, 0, SEEK_SET) != 0)
		return NULL;
	if (delta_write(&base, memfd, DUMP_PPROF, "push", parts, with_duration, advance) != 0)
		return NULL;
	struct stat st;
	if (fstat(memfd, &st) != 0 || st.st_size <= 0)
		return NULL;
	void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, memfd, 0);
	if (m == MAP_FAILED)
		return NULL;
	*len = (size_t)st.st_size;
	return m;
}

static void drop_head(void)
{
	struct qent *e = &queue[qhead];
	if (e->map)
		munmap(e->map, e->map_len);
	memset(e, 0, sizeof *e);
	qhead = (qhead + 1) % QUEUE_MAX;
	qlen--;
	__atomic_store_n(&counts.queued, qlen, __ATOMIC_RELAXED);
}

/* Takes one profile (two for Parca) and queues its request. */
static void make_profile(const struct options *o)
{
	int64_t from = base.time_ns;
	struct pushfmt_input in;
	memset(&in, 0, sizeof in);
	uint8_t *p0 = NULL, *p1 = NULL;
	size_t n0 = 0, n1 = 0;
	if (dialect == PUSHFMT_PARCA) {
		/* inuse absolute (no duration), then alloc since the previous push (a delta) */
		p0 = profile_bytes(0, DELTA_INUSE, 0, 0, &n0);
		if (p0)
			p1 = profile_bytes(1, DELTA_ALLOC, 1, 1, &n1);
	} else {
		p0 = profile_bytes(0, DELTA_BOTH, 1, 1, &n0);
	}
	int64_t until = sys_now_ns();
	if (!p0 || (dialect == PUSHFMT_PARCA && !p1)) {
		bump(&counts.errors);
		goto out;
	}
	in.path = url.path;
	in.service = service;
	in.labels = labels;
	in.nlabels = nlabels;
	in.prof[0] = p0;
	in.prof_len[0] = n0;
	in.prof[1] = p1;
	in.prof_len[1] = n1;
	in.from_s = from / 1000000000;
	in.until_s = until / 1000000000;
	if (in.until_s <= in.from_s)
		in.until_s = in.from_s + 1;
	size_t cap = (size_t)pages_round_up(pushfmt_bound(&in));
	if (qlen == o->push_queue || qlen == QUEUE_MAX) {
		bump(&counts.dropped);
		sys_log_once(&log_once_drop, "push: the queue is full (the backend is down or slow)",
		             "; the oldest profiles are dropped and counted (heaptap_push_dropped_total)", NULL);
		drop_head();
	}
	struct qent *e = &queue[(qhead + qlen) % QUEUE_MAX];
	e->map = sys_map(cap);
	if (!e->map) {
		bump(&counts.dropped);
		goto out;
	}
	e->map_len = cap;
	e->body_len = pushfmt_encode(dialect, &in, &e->req, e->map, cap);
	e->attempts = 0;
	e->next_try_ns = 0;
	qlen++;
	__atomic_store_n(&counts.queued, qlen, __ATOMIC_RELAXED);
out:
	if (p0)
		munmap(p0, n0);
	if (p1)
		munmap(p1, n1);
}

static void log_status(int *once, const char *what, int st)
{
	char num[24];
	if (st < 0) {
		fmt_u64(num, (uint64_t)-st);
		sys_log_once(once, what, " (errno ", num);
	} else {
		fmt_u64(num, (uint64_t)st);
		sys_log_once(once, what, " (HTTP status ", num);
	}
}

/* Sends the queue's head once, waiting at most timeout_ms. 1 when it left the queue (sent or
   dropped), 0 to retry later; at exit (final) a failure drops it at once. */
static int send_head(const struct options *o, int64_t now, int timeout_ms, int final)
{
	struct qent *e = &queue[qhead];
	char extra[1024];
	struct outbuf ob;
	outbuf_init(&ob, extra, sizeof extra - 1, -1);
	outbuf_puts(&ob, e->req.extra);
	outbuf_puts(&ob, auth_extra);
	extra[ob.len] = 0;
	if (!url.addrlen && pushhttp_resolve(&url) < 0) {
		sys_log_once(&log_once_resolve, "push: cannot find the address of ", url.host,
		             ": only IP addresses, localhost and /etc/hosts names (no DNS inside the program)");
	}
	int st = pushhttp_post(&url, e->req.target, e->req.ctype, extra, e->map, e->body_len,
	                       timeout_ms, reply, sizeof reply);
	__atomic_store_n(&counts.last_status, st, __ATOMIC_RELAXED);
	if (st >= 200 && st < 300) {
		bump(&counts.pushed);
		__atomic_fetch_add(&counts.bytes, e->body_len, __ATOMIC_RELAXED);
		drop_head();
		return 1;
	}
	bump(&counts.errors);
	if (st >= 400 && st < 500 && st != 408 && st != 429) {
		bump(&counts.rejected);
		bump(&counts.dropped);
		log_status(&log_once_refused, "push: the backend refused a profile", st);
		drop_head();
		return 1;
	}
	log_status(&log_once_fail,
	           final ? "push: a push failed at exit" : "push: a push failed, retrying with backoff", st);
	if (++e->attempts > o->push_retries || final) {
		bump(&counts.dropped);
		drop_head();
		return 1;
	}
	int64_t backoff = (int64_t)1000000000 << (e->attempts - 1 < 16 ? e->attempts - 1 : 16);
	int64_t cap = (int64_t)o->push_interval_ms * 1000000;
	e->next_try_ns = now + (backoff < cap ? backoff : cap);
	return 0;
}

int64_t push_due_ns(void)
{
	if (!configured || __atomic_load_n(&run_state, __ATOMIC_ACQUIRE) == 2)
		return 0;
	int64_t due = next_profile_ns;
	if (qlen && queue[qhead].next_try_ns < due)
		due = queue[qhead].next_try_ns;
	return due;
}

void push_run(int64_t now)
{
	int idle = 0;
	if (!configured || !__atomic_compare_exchange_n(&run_state, &idle, 1, 0, __ATOMIC_ACQUIRE,
	                                                __ATOMIC_RELAXED))
		return; /* not pushing, or closed at exit */
	const struct options *o = options_get();
	if (!nlabels)
		build_labels(o);
	if (now >= next_profile_ns) {
		int64_t step = (int64_t)o->push_interval_ms * 1000000;
		while (next_profile_ns <= now)
			next_profile_ns += step;
		make_profile(o);
	}
	while (qlen && queue[qhead].next_try_ns <= now) {
		if (!send_head(o, now, (int)o->push_timeout_ms, 0))
			break;
		now = sys_mono_ns();
	}
	__atomic_store_n(&run_state, 0, __ATOMIC_RELEASE);
}

static void log_exit_loss(uint64_t n, const char *why)
{
	char head[96];
	struct outbuf ob;
	outbuf_init(&ob, head, sizeof head - 1, -1);
	outbuf_puts(&ob, "push: ");
	outbuf_u64(&ob, n);
	outbuf_puts(&ob, n == 1 ? " profile not sent at exit (" : " profiles not sent at exit (");
	head[ob.len] = 0;
	sys_log(head, why, "): dropped, counted in heaptap_push_dropped_total");
}

void push_at_exit(void)
{
	if (!__atomic_load_n(&configured, __ATOMIC_ACQUIRE))
		return;
	const struct options *o = options_get();
	int64_t budget_ms = o->push_timeout_ms < EXIT_BUDGET_MS ? (int64_t)o->push_timeout_ms
	                                                       : EXIT_BUDGET_MS;
	int64_t deadline = sys_mono_ns() + budget_ms * 1000000;
	/* the background thread may be sending: the queue is ours once it is done */
	for (;;) {
		int idle = 0;
		if (__atomic_compare_exchange_n(&run_state, &idle, 2, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			break;
		if (idle == 2)
			return; /* already done (exit called twice) */
		if (sys_mono_ns() >= deadline) {
			/* its queue dies with the process */
			uint64_t n = __atomic_load_n(&counts.queued, __ATOMIC_RELAXED);
			__atomic_fetch_add(&counts.dropped, n, __ATOMIC_RELAXED);
			if (n)
				log_exit_loss(n, "the background thread was still sending");
			return;
		}
		sys_sleep_ms(1);
	}
	if (!nlabels)
		build_labels(o);
	make_profile(o); /* the interval so far: a short-lived program's only profile */
	unsigned total = qlen;
	uint64_t pushed_before = __atomic_load_n(&counts.pushed, __ATOMIC_RELAXED);
	while (qlen) {
		int64_t left_ms = (deadline - sys_mono_ns()) / 1000000;
		if (left_ms <= 0)
			break;
		send_head(o, sys_mono_ns(), (int)left_ms, 1); /* sent, or dropped and counted */
	}
	while (qlen) {
		bump(&counts.dropped);
		drop_head();
	}
	uint64_t sent = __atomic_load_n(&counts.pushed, __ATOMIC_RELAXED) - pushed_before;
	if (total > sent)
		log_exit_loss(total - sent, "refused, failed, or out of the exit's time");
}

void push_fork_child(void)
{
	__atomic_store_n(&run_state, 0, __ATOMIC_RELEASE); /* the parent's thread is not here */
	/* the child's queue starts empty (its buffers are the parent's copies: unmapped) */
	while (qlen)
		drop_head();
	qhead = 0;
	nlabels = 0; /* rebuilt: the pid changed */
	for (int k = 0; k < 2; k++) {
		sys_fd_close(&memfds[k]);
	}
}
