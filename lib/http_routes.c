/*
 * http_routes.c - the route table of the HTTP control plane and heaptap's own endpoints
 * (/, /heaptap/stats, /heaptap/dump, /heaptap/active, /heaptap/sample), plus the choice of
 * backend (heaptap's sampler or jemalloc's profiler) and the run directory.
 *
 * It is not the server loop (http_server.c) nor the jeprof/Go (http_pprof.c) or Mesos
 * (http_mesos.c) endpoints. Runs on the server thread; never allocates.
 */
#include "http.h"
#include "http_server.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collector.h"
#include "core.h"
#include "heaptap.h"
#include "jemalloc_backend.h"
#include "options.h"

static int jemalloc_mode;
static char tmpdir[512];
static unsigned dump_seq;

int http_routes_jemalloc_mode(void)
{
	return jemalloc_mode;
}

void http_routes_init(void)
{
	jemalloc_mode = jemalloc_backend_detect();
	/* With jemalloc's profiler in charge, heaptap's own sampler would only double the cost. */
	if (jemalloc_mode)
		collector_set_active(0);
}

void http_routes_atfork_child(void)
{
	tmpdir[0] = 0; /* the child gets its own directory (its pid is in the name) */
	http_mesos_atfork_child();
}

const char *http_routes_tmpdir(void)
{
	if (tmpdir[0])
		return tmpdir;
	const char *base = getenv("TMPDIR");
	if (!base || !*base || strlen(base) > sizeof tmpdir - 64)
		base = "/tmp";
	struct outbuf ob;
	outbuf_init(&ob, tmpdir, sizeof tmpdir - 1, -1);
	outbuf_puts(&ob, base);
	outbuf_puts(&ob, "/heaptap.");
	outbuf_u64(&ob, (uint64_t)getpid());
	outbuf_puts(&ob, ".XXXXXX");
	tmpdir[ob.len] = 0;
	if (!mkdtemp(tmpdir)) {
		tmpdir[0] = 0;
		return NULL;
	}
	return tmpdir;
}

/* ---- heaptap's own endpoints ---- */

static void json_error(struct http_exchange *x, int status, const char *what, int err)
{
	http_server_body_reset(x);
	x->status = status;
	x->ctype = "application/json";
	outbuf_puts(&x->ob, "{\"error\": \"");
	outbuf_json_str(&x->ob, what);
	outbuf_puts(&x->ob, "\", \"errno\": ");
	outbuf_i64(&x->ob, err);
	outbuf_puts(&x->ob, "}\n");
}

static void route_stats(struct http_exchange *x)
{
	x->ctype = "application/json";
	collector_stats_json(&x->ob);
	outbuf_putc(&x->ob, '\n');
}

static void route_dump(struct http_exchange *x)
{
	char name[1024];
	x->ctype = "application/json";
	if (jemalloc_mode) {
		const char *dir = http_routes_tmpdir();
		if (!dir) {
			json_error(x, 500, "cannot create the run directory", -errno);
			return;
		}
		struct outbuf ob;
		outbuf_init(&ob, name, sizeof name - 1, -1);
		outbuf_puts(&ob, dir);
		outbuf_puts(&ob, "/jeprof.");
		outbuf_u64(&ob, (uint64_t)getpid());
		outbuf_putc(&ob, '.');
		outbuf_u64(&ob, dump_seq++);
		outbuf_puts(&ob, ".m.heap");
		name[ob.len] = 0;
		int rc = jemalloc_backend_dump(name);
		if (rc < 0) {
			json_error(x, 500, "jemalloc prof.dump failed", rc);
			return;
		}
	} else {
		name[0] = 0;
		int rc = collector_dump_named(TRIG_MANUAL, name, sizeof name);
		if (rc < 0) {
			json_error(x, rc == -ENOENT ? 409 : 500, rc == -ENOENT ? "profiling is off" : "dump failed", rc);
			return;
		}
	}
	outbuf_puts(&x->ob, "{\"file\": \"");
	if (name[0] != '/') {
		/* a relative prof_prefix: name the file from the host's working directory */
		char cwd[1024];
		if (getcwd(cwd, sizeof cwd)) {
			outbuf_json_str(&x->ob, cwd);
			outbuf_putc(&x->ob, '/');
		}
	}
	outbuf_json_str(&x->ob, name);
	outbuf_puts(&x->ob, "\", \"backend\": \"");
	outbuf_puts(&x->ob, jemalloc_mode ? "jemalloc" : "heaptap");
	outbuf_puts(&x->ob, "\"}\n");
}

static int get_active(void)
{
	return jemalloc_mode ? jemalloc_backend_active() : collector_active();
}

static void route_active(struct http_exchange *x)
{
	char v[16];
	long n = http_parse_query_get(x->query, x->query_len, "on", v, sizeof v);
	int old = get_active();
	x->ctype = "application/json";
	if (n >= 0) {
		int on;
		if (strcmp(v, "1") == 0 || strcmp(v, "true") == 0)
			on = 1;
		else if (strcmp(v, "0") == 0 || strcmp(v, "false") == 0)
			on = 0;
		else {
			json_error(x, 400, "on must be 1 or 0", -EINVAL);
			return;
		}
		int rc = jemalloc_mode ? jemalloc_backend_set_active(on) : collector_set_active(on);
		if (rc < 0) {
			json_error(x, 409, "cannot change prof.active", rc);
			return;
		}
		old = rc;
	}
	outbuf_puts(&x->ob, "{\"active\": ");
	outbuf_puts(&x->ob, get_active() > 0 ? "true" : "false");
	outbuf_puts(&x->ob, ", \"previous\": ");
	outbuf_puts(&x->ob, old > 0 ? "true" : "false");
	outbuf_puts(&x->ob, ", \"backend\": \"");
	outbuf_puts(&x->ob, jemalloc_mode ? "jemalloc" : "heaptap");
	outbuf_puts(&x->ob, "\"}\n");
}

static void route_sample(struct http_exchange *x)
{
	char v[16];
	long n = http_parse_query_get(x->query, x->query_len, "lg", v, sizeof v);
	x->ctype = "application/json";
	if (n >= 0) {
		unsigned lg = 0;
		int ok = n > 0 && n <= 2;
		for (long i = 0; ok && i < n; i++) {
			if (v[i] < '0' || v[i] > '9')
				ok = 0;
			else
				lg = lg * 10 + (unsigned)(v[i] - '0');
		}
		if (!ok || lg > 62) {
			json_error(x, 400, "lg must be an integer from 0 to 62", -EINVAL);
			return;
		}
		int rc = jemalloc_mode ? jemalloc_backend_reset(lg) : collector_reset(lg);
		if (rc < 0) {
			json_error(x, 409, "cannot reset the profile", rc);
			return;
		}
	}
	int lg = jemalloc_mode ? jemalloc_backend_lg_sample() : (int)collector_lg_sample();
	outbuf_puts(&x->ob, "{\"lg_sample\": ");
	outbuf_i64(&x->ob, lg);
	outbuf_puts(&x->ob, ", \"reset\": ");
	outbuf_puts(&x->ob, n >= 0 ? "true" : "false");
	outbuf_puts(&x->ob, ", \"backend\": \"");
	outbuf_puts(&x->ob, jemalloc_mode ? "jemalloc" : "heaptap");
	outbuf_puts(&x->ob, "\"}\n");
}

static void index_page(struct http_exchange *x)
{
	outbuf_puts(&x->ob,
	            "heaptap " HEAPTAP_VERSION " control plane (backend: ");
	outbuf_puts(&x->ob, jemalloc_mode ? "jemalloc" : "heaptap");
	outbuf_puts(&x->ob,
	            ")\n\n"
	            "jeprof:    /pprof/heap  /pprof/symbol (GET, POST)  /pprof/cmdline  /debug/mem/pprof/profile\n"
	            "go pprof:  /debug/pprof/  /debug/pprof/heap[?debug=1]  /debug/pprof/allocs\n"
	            "           /debug/pprof/symbol  /debug/pprof/cmdline\n"
	            "mesos:     /memory-profiler/start?duration=5mins  /memory-profiler/stop\n"
	            "           /memory-profiler/state  /memory-profiler/statistics\n"
	            "           /memory-profiler/download/raw|text|graph?id=N\n"
	            "heaptap:   /heaptap/stats  /heaptap/dump  /heaptap/active?on=1|0  /heaptap/sample?lg=N\n");
}

void http_routes_dispatch(struct http_exchange *x)
{
	const char *p = x->path;
	if (strcmp(p, "/") == 0) {
		index_page(x);
	} else if (strcmp(p, "/pprof/heap") == 0) {
		http_pprof_heap(x);
	} else if (strcmp(p, "/debug/mem/pprof/profile") == 0) {
		/* Databend's route: `jeprof BIN http://host/debug/mem` asks for <base>/pprof/profile
		   and recognises the heap profile by its header */
		http_pprof_heap(x);
		if (x->status == 200)
			http_server_header(x, "Content-Disposition", "attachment; filename=\"heap.prof\"");
	} else if (strcmp(p, "/pprof/symbol") == 0 || strcmp(p, "/debug/pprof/symbol") == 0) {
		http_pprof_symbol(x);
	} else if (strcmp(p, "/pprof/cmdline") == 0) {
		http_pprof_cmdline(x, 0);
	} else if (strcmp(p, "/debug/pprof/cmdline") == 0) {
		http_pprof_cmdline(x, 1);
	} else if (strcmp(p, "/debug/pprof/") == 0 || strcmp(p, "/debug/pprof") == 0) {
		http_pprof_go_index(x);
	} else if (strncmp(p, "/debug/pprof/", 13) == 0) {
		http_pprof_go(x, p + 13);
	} else if (strncmp(p, "/memory-profiler/", 17) == 0) {
		http_mesos_dispatch(x, p + 17);
	} else if (strcmp(p, "/heaptap/stats") == 0) {
		route_stats(x);
	} else if (strcmp(p, "/heaptap/dump") == 0) {
		route_dump(x);
	} else if (strcmp(p, "/heaptap/active") == 0) {
		route_active(x);
	} else if (strcmp(p, "/heaptap/sample") == 0) {
		route_sample(x);
	} else {
		http_server_reply_text(x, 404, "not found: see / for the endpoints\n");
	}
}

/* ---- starting from HEAPTAP_CONF (options.h) ---- */

/* Starts the server once the library is loaded, after the collector's own initialisation,
   from a constructor rather than from inside the first malloc (which may run while the
   loader holds its locks, where creating a thread is not safe). The collector's constructor
   (trigger_start) does the same when profiling is on; this one also covers prof:false (the
   jemalloc backend's configuration), and the later of the two gets a silent -EALREADY. */
__attribute__((constructor(65535))) static void http_autostart(void)
{
	const char *conf = getenv("HEAPTAP_CONF");
	if (!conf || !strstr(conf, "http:"))
		return; /* nothing to start; and unit tests linking lib/ stay untouched */
	collector_init();
	core_tls.depth++; /* pthread_create and dlsym allocate: not the host's allocations */
	http_start_from_options(); /* -EALREADY when trigger_start (interpose.c) was first */
	core_tls.depth--;
}

int http_start_from_options(void)
{
	const struct options *o = options_get();
	if (!o || !o->http[0])
		return 0;
	return http_start(o->http, o->http_token);
}

__attribute__((visibility("default"))) int heaptap_http_start(const char *addr)
{
	const struct options *o = options_get();
	return http_start(addr, o ? o->http_token : NULL);
}
