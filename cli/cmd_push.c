/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cmd_push.c - `heaptap push`: uploads dumps that already exist (any format heaptap reads:
 * heaptap and jemalloc heap_v2, gperftools, pprof) to a continuous-profiling backend, each
 * one symbolized (render/pprof_export.c's pprof, as `heaptap pprof` writes it) and sent in
 * the collector's dialects (profile/inproc/pushfmt.c: Pyroscope /ingest raw or multipart, Pyroscope's
 * Connect API, Parca's writeraw) with one POST each (httppost.c).
 *
 * Not the collector's push client (lib/push.c: deltas, a queue, retries): a dump is sent
 * once, as it is; a failure is reported and the exit status says so.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../base/outbuf.h"
#include "../profile/inproc/pushfmt.h"
#include "cmd.h"
#include "common.h"
#include "httppost.h"
#include "mapfile.h"
#include "render/pprof_export.h"
#include "stacks.h"

enum { P_URL = 1, P_FORMAT, P_SERVICE, P_LABEL, P_TOKEN, P_BASIC, P_TENANT, P_TIMEOUT };

static const struct common_opt push_opts[] = {
	{"url", 1, P_URL},       {"format", 1, P_FORMAT}, {"service", 1, P_SERVICE},
	{"label", 1, P_LABEL},   {"token", 1, P_TOKEN},   {"basic", 1, P_BASIC},
	{"tenant", 1, P_TENANT}, {"timeout", 1, P_TIMEOUT}, {NULL, 0, 0},
};

static const char push_help[] =
	"usage: heaptap push --url URL [options] [BINARY] PROFILE...\n"
	"Uploads each PROFILE (any format heaptap reads), symbolized, to a continuous-profiling\n"
	"backend, one request per file, as the collector's push_url client does (docs/FLEET.md).\n"
	"  --url=URL           http://host[:port]/path; the path picks the backend: /ingest (Pyroscope),\n"
	"                      /push.v1.PusherService/Push (Pyroscope's Connect API),\n"
	"                      /profiles/writeraw (Parca). No https: push to a local agent.\n"
	"  --format=F          ingest, ingest-multipart, connect or parca (instead of the path)\n"
	"  --service=NAME      service_name (default: the profile's program name)\n"
	"  --label=NAME=VALUE  a further label (repeatable)\n"
	"  --token=T           Authorization: Bearer T\n"
	"  --basic=USER:PASS   Authorization: Basic\n"
	"  --tenant=ID         X-Scope-OrgID: ID\n"
	"  --timeout=SECONDS   for connecting, sending and the reply (default 10)\n"
	"Labels: service_name, pid and build_id when the dump names them, and --label's; the time\n"
	"window (from/until) is the dump's time.\n";

#define MAX_USER_LABELS 32

struct push_ctx {
	const char *url, *format, *service, *token, *basic, *tenant;
	int timeout_s;
	struct pushfmt_label labels[MAX_USER_LABELS];
	char *label_copies[MAX_USER_LABELS];
	size_t nlabels;
};

static int label_name_ok(const char *s, size_t n)
{
	if (n == 0 || !(s[0] == '_' || (s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z')))
		return 0;
	for (size_t i = 1; i < n; i++)
		if (!(s[i] == '_' || (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9')))
			return 0;
	return 1;
}

static int push_opt(void *vctx, int id, const char *v)
{
	struct push_ctx *c = vctx;
	switch (id) {
	case P_URL: c->url = v; return 0;
	case P_FORMAT: c->format = v; return 0;
	case P_SERVICE: c->service = v; return 0;
	case P_TOKEN: c->token = v; return 0;
	case P_BASIC: c->basic = v; return 0;
	case P_TENANT: c->tenant = v; return 0;
	case P_TIMEOUT: {
		char *end;
		long t = strtol(v, &end, 10);
		if (end == v || *end || t < 1 || t > 3600) {
			fprintf(stderr, "heaptap: push: bad --timeout '%s': seconds, 1 to 3600 (try --help)\n", v);
			return 2;
		}
		c->timeout_s = (int)t;
		return 0;
	}
	case P_LABEL: {
		const char *eq = strchr(v, '=');
		if (!eq || !label_name_ok(v, (size_t)(eq - v))) {
			fprintf(stderr, "heaptap: push: bad --label '%s': NAME=VALUE with NAME of letters, digits "
			                "and '_' (try --help)\n", v);
			return 2;
		}
		if ((size_t)(eq - v) == 8 && strncmp(v, "__name__", 8) == 0) {
			fprintf(stderr, "heaptap: push: --label __name__ is set by heaptap (memory)\n");
			return 2;
		}
		if (c->nlabels == MAX_USER_LABELS) {
			fprintf(stderr, "heaptap: push: at most %d --label options\n", MAX_USER_LABELS);
			return 2;
		}
		char *copy = strdup(v);
		if (!copy) {
			fprintf(stderr, "heaptap: push: out of memory\n");
			return 2;
		}
		copy[eq - v] = '\0';
		pushfmt_sanitize(copy + (eq - v) + 1);
		c->label_copies[c->nlabels] = copy;
		c->labels[c->nlabels++] = (struct pushfmt_label){copy, copy + (eq - v) + 1};
		return 0;
	}
	}
	return 0;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s && s[1] ? s + 1 : path;
}

/* The program a profile is of: heaptap's exe= metadata, the command line's first word, the
   BINARY given, or the first file of the memory map (jemalloc and gperftools write the
   program's mappings first). Into out; "" when none says. */
static void program_name(const struct profile *p, const char *binary, char *out, size_t cap)
{
	const char *src = NULL;
	char first[4096];
	if (p->exe_path && p->exe_path[0]) {
		src = p->exe_path;
	} else if (p->cmdline && p->cmdline[0]) {
		size_t n = strcspn(p->cmdline, " \t");
		snprintf(first, sizeof first, "%.*s", (int)(n < sizeof first ? n : sizeof first - 1), p->cmdline);
		src = first;
	} else if (binary) {
		src = binary;
	} else {
		for (size_t i = 0; i < p->nmaps && !src; i++)
			if (p->maps[i].path && p->maps[i].path[0] == '/')
				src = p->maps[i].path;
	}
	const char *b = src ? base_name(src) : "";
	size_t n = strlen(b) < cap ? strlen(b) : cap - 1;
	memcpy(out, b, n);
	out[n] = '\0';
}

/* The build ID of the program's mapping (the one named like exe_path, else the first with a
   build ID among the program's), or NULL. */
static const char *program_build_id(const struct profile *p)
{
	for (size_t i = 0; i < p->nmaps; i++) {
		const struct prof_mapping *m = &p->maps[i];
		if (m->build_id && m->build_id[0] && p->exe_path && m->path && strcmp(m->path, p->exe_path) == 0)
			return m->build_id;
	}
	return NULL;
}

static int user_has(const struct push_ctx *c, const char *name)
{
	for (size_t i = 0; i < c->nlabels; i++)
		if (strcmp(c->labels[i].name, name) == 0)
			return 1;
	return 0;
}

/* 1 when s (NULL: not given) can go into a header line as it is: no control characters (a
   line break would add header lines of its own), at most 512 bytes. */
static int header_value_ok(const char *s)
{
	if (!s)
		return 1;
	for (const char *q = s; *q; q++)
		if ((unsigned char)*q < ' ' || *q == 0x7f)
			return 0;
	return strlen(s) <= 512;
}

/* "Basic " + base64(user:password) as a header line. */
static void basic_header(struct outbuf *ob, const char *s)
{
	static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t n = strlen(s);
	outbuf_puts(ob, "Authorization: Basic ");
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)(unsigned char)s[i] << 16;
		if (i + 1 < n)
			v |= (uint32_t)(unsigned char)s[i + 1] << 8;
		if (i + 2 < n)
			v |= (unsigned char)s[i + 2];
		char q[4] = {tab[v >> 18], tab[(v >> 12) & 63], i + 1 < n ? tab[(v >> 6) & 63] : '=',
		             i + 2 < n ? tab[v & 63] : '='};
		outbuf_put(ob, q, 4);
	}
	outbuf_puts(ob, "\r\n");
}

/* p as gzipped pprof with parts and duration into a malloc'd buffer (*len). NULL on failure
   (message printed). */
static uint8_t *pprof_bytes(const struct profile *p, const char *path, enum pprof_export_parts parts,
                            int64_t duration_ns, size_t *len)
{
	int fd = memfd_create("heaptap-push", MFD_CLOEXEC);
	int dupfd = fd >= 0 ? dup(fd) : -1;
	if (dupfd < 0) {
		fprintf(stderr, "heaptap: push: %s: %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	struct pprof_export_options o = {.gzip = 1, .parts = parts, .duration_ns = duration_ns};
	int e = pprof_export_fd(p, dupfd, &o);
	uint8_t *buf = NULL;
	if (e == 0 && lseek(fd, 0, SEEK_SET) == 0)
		buf = (uint8_t *)mapfile_read_fd(fd, len);
	else if (e == 0)
		e = -errno;
	if (!buf)
		fprintf(stderr, "heaptap: push: %s: writing its pprof: %s\n", path, strerror(e ? -e : errno));
	close(fd);
	return buf;
}

/* Pushes one profile file. Returns 0 or 1 (message printed). */
static int push_one(const struct common_args *a, const struct push_ctx *c, const struct httppost_url *u,
                    enum pushfmt_dialect d, const char *auth, const char *path)
{
	struct profile p;
	profile_init(&p);
	int rc = common_read(a, path, &p);
	if (rc == 0)
		rc = common_symbolize(a, &p);
	if (rc != 0) {
		profile_release(&p);
		return 1;
	}
	if (!a->keep_allocator)
		stacks_trim_allocator(&p); /* as `heaptap pprof`: the backends do not know them */

	/* The dump's time: its own, else the file's modification time. */
	int64_t t_ns = p.time_ns;
	struct stat st;
	if (t_ns <= 0 && stat(path, &st) == 0)
		t_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	p.time_ns = t_ns; /* the pprof's time_nanos too: backends place the profile by it */
	/* alloc_* count since the program started: a delta over its lifetime when that is known */
	int64_t life_ns = p.start_time_ns > 0 && t_ns > p.start_time_ns ? t_ns - p.start_time_ns : 0;

	uint8_t *prof[2] = {NULL, NULL};
	size_t plen[2] = {0, 0};
	if (d == PUSHFMT_PARCA) {
		/* Parca reads a profile with a duration as a delta: inuse_* without one (absolute),
		   alloc_* with one (the program's lifetime, 1 s when the dump does not say) */
		prof[0] = pprof_bytes(&p, path, PPROF_EXPORT_INUSE, 0, &plen[0]);
		if (prof[0] && p.has_alloc)
			prof[1] = pprof_bytes(&p, path, PPROF_EXPORT_ALLOC, life_ns ? life_ns : 1000000000, &plen[1]);
		if (p.has_alloc && !prof[1]) {
			free(prof[0]);
			prof[0] = NULL;
		}
	} else {
		prof[0] = pprof_bytes(&p, path, PPROF_EXPORT_ALL, life_ns, &plen[0]);
	}
	if (!prof[0]) {
		profile_release(&p);
		return 1;
	}

	char service[256], pid[32] = "";
	if (c->service)
		snprintf(service, sizeof service, "%s", c->service);
	else
		program_name(&p, a->binary, service, sizeof service);
	if (!service[0])
		snprintf(service, sizeof service, "unknown");
	pushfmt_sanitize(service);
	struct pushfmt_label labels[MAX_USER_LABELS + 2];
	size_t nl = 0;
	if (p.pid > 0 && !user_has(c, "pid")) {
		snprintf(pid, sizeof pid, "%d", p.pid);
		labels[nl++] = (struct pushfmt_label){"pid", pid};
	}
	const char *bid = program_build_id(&p);
	if (bid && !user_has(c, "build_id"))
		labels[nl++] = (struct pushfmt_label){"build_id", bid};
	for (size_t i = 0; i < c->nlabels; i++)
		labels[nl++] = c->labels[i];

	struct pushfmt_input in = {
		.path = u->path, .service = service, .labels = labels, .nlabels = nl,
		.prof = {prof[0], prof[1]}, .prof_len = {plen[0], plen[1]},
		.from_s = t_ns / 1000000000, .until_s = t_ns / 1000000000 + 1,
	};
	struct pushfmt_request req;
	size_t cap = pushfmt_bound(&in);
	uint8_t *body = malloc(cap);
	size_t blen = body ? pushfmt_encode(d, &in, &req, body, cap) : 0;
	rc = 1;
	if (!blen) {
		fprintf(stderr, "heaptap: push: %s: %s\n", path, body ? "the request does not fit (a bug)" : "out of memory");
		goto out;
	}
	char *extra = malloc(strlen(req.extra) + strlen(auth) + 1);
	if (!extra) {
		fprintf(stderr, "heaptap: push: out of memory\n");
		goto out;
	}
	strcpy(stpcpy(extra, req.extra), auth);
	char reply[512], err[1024];
	int status = httppost_send(u, req.target, req.ctype, extra, body, blen, c->timeout_s, reply, sizeof reply, err,
	                           sizeof err);
	free(extra);
	if (status < 0) {
		fprintf(stderr, "heaptap: push: %s: %s: %s\n", path, c->url, err);
	} else if (status < 200 || status > 299) {
		reply[strcspn(reply, "\r\n")] = '\0';
		fprintf(stderr, "heaptap: push: %s: %s refused it: HTTP status %d%s%s\n", path, c->url, status,
		        reply[0] ? ": " : "", reply);
	} else {
		printf("pushed %s to %s (%s, %zu bytes, HTTP status %d)\n", path, c->url,
		       d == PUSHFMT_INGEST ? "ingest" : d == PUSHFMT_INGEST_MULTIPART ? "ingest-multipart"
		       : d == PUSHFMT_CONNECT ? "connect" : "parca", blen, status);
		rc = 0;
	}
out:
	free(body);
	free(prof[0]);
	free(prof[1]);
	profile_release(&p);
	return rc;
}

int cmd_push(int argc, char **argv)
{
	struct common_args a;
	struct push_ctx c;
	memset(&c, 0, sizeof c);
	c.timeout_s = 10;
	struct common_extra ex = {push_opts, push_opt, &c, push_help, 0};
	int rc = common_parse(&a, argc, argv, &ex);
	if (rc >= 0)
		goto release_labels;
	struct httppost_url u;
	char err[512];
	int d = -1;
	if (!c.url) {
		rc = common_usage_error(&a, "--url is required (http://host:port/ingest, ...)");
	} else if (httppost_parse_url(c.url, &u, err, sizeof err) != 0) {
		rc = common_usage_error(&a, "--url %s: %s", c.url, err);
	} else if ((d = pushfmt_dialect_of(c.format, u.path)) < 0) {
		rc = c.format && *c.format
		             ? common_usage_error(&a, "unknown --format '%s' (ingest, ingest-multipart, connect, parca)",
		                                  c.format)
		             : common_usage_error(&a, "cannot tell the backend from the URL's path '%s': end it in "
		                                  "/ingest, /push.v1.PusherService/Push or /profiles/writeraw, "
		                                  "or give --format", u.path);
	} else if (a.nprofiles == 0) {
		rc = common_usage_error(&a, "no profile given");
	} else if (!header_value_ok(c.token) || !header_value_ok(c.basic) || !header_value_ok(c.tenant)) {
		rc = common_usage_error(&a, "--token, --basic and --tenant cannot hold control characters");
	}
	if (rc >= 0) {
		common_args_release(&a);
		goto release_labels;
	}
	if (a.base)
		fprintf(stderr, "heaptap: push: --base is ignored: each profile is pushed as it is\n");
	char auth[2048];
	struct outbuf ob;
	outbuf_init(&ob, auth, sizeof auth - 1, -1);
	if (c.token) {
		outbuf_puts(&ob, "Authorization: Bearer ");
		outbuf_puts(&ob, c.token);
		outbuf_puts(&ob, "\r\n");
	} else if (c.basic) {
		basic_header(&ob, c.basic);
	}
	if (c.tenant) {
		outbuf_puts(&ob, "X-Scope-OrgID: ");
		outbuf_puts(&ob, c.tenant);
		outbuf_puts(&ob, "\r\n");
	}
	auth[ob.len] = '\0';
	rc = 0;
	for (size_t i = 0; i < a.nprofiles; i++)
		if (push_one(&a, &c, &u, (enum pushfmt_dialect)d, auth, a.profiles[i]) != 0)
			rc = 1;
	common_args_release(&a);
release_labels:
	for (size_t i = 0; i < c.nlabels; i++)
		free(c.label_copies[i]);
	return rc;
}
