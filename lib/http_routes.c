/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * http_routes.c - the HTTP application of http_routes.h: the route table and heaptap's own
 * endpoints (/, /heaptap/stats, /heaptap/dump, /heaptap/active, /heaptap/sample).
 *
 * It is not the server loop (http_server.c) nor the jeprof/Go (http_pprof.c) or Mesos
 * (http_mesos.c) endpoints. Runs on the server thread; never allocates.
 */
#include "http_routes.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "../include/heaptap.h"
#include "backend.h"
#include "http_delta.h"
#include "cpu_http.h"
#include "http_limit.h"
#include "http_mesos.h"
#include "http_pprof.h"
#include "metrics.h"
#include "options.h"
#include "rundir.h"

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
	backend_get()->stats_json(&x->ob);
	outbuf_putc(&x->ob, '\n');
}

static void route_dump(struct http_exchange *x)
{
	const struct backend *b = backend_get();
	char name[DUMP_PATH_MAX];
	x->ctype = "application/json";
	name[0] = 0;
	if (!http_limit_dump(x, 1))
		return;
	int rc = b->dump_manual(name, sizeof name);
	if (rc < 0) {
		json_error(x, rc == -ENOENT ? 409 : 500, rc == -ENOENT ? "profiling is off" : "dump failed", rc);
		return;
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
	outbuf_puts(&x->ob, b->name);
	outbuf_puts(&x->ob, "\"}\n");
}

static void route_active(struct http_exchange *x)
{
	char v[16];
	const struct backend *b = backend_get();
	long n = http_parse_query_get(x->query, x->query_len, "on", v, sizeof v);
	int old = b->active();
	x->ctype = "application/json";
	if (n == -2) {
		json_error(x, 400, "on must be 1 or 0", -EINVAL);
		return;
	}
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
		int rc = b->set_active(on);
		if (rc < 0) {
			json_error(x, 409, "cannot change prof.active", rc);
			return;
		}
		old = rc;
	}
	outbuf_puts(&x->ob, "{\"active\": ");
	outbuf_puts(&x->ob, b->active() > 0 ? "true" : "false");
	outbuf_puts(&x->ob, ", \"previous\": ");
	outbuf_puts(&x->ob, old > 0 ? "true" : "false");
	outbuf_puts(&x->ob, ", \"backend\": \"");
	outbuf_puts(&x->ob, b->name);
	outbuf_puts(&x->ob, "\"}\n");
}

static void route_sample(struct http_exchange *x)
{
	const struct backend *b = backend_get();
	char v[16];
	long n = http_parse_query_get(x->query, x->query_len, "lg", v, sizeof v);
	x->ctype = "application/json";
	uint64_t lg = 0;
	if (n == -2 || (n >= 0 && http_parse_uint(v, (size_t)n, 62, &lg) != 0)) {
		json_error(x, 400, "lg must be an integer from 0 to 62", -EINVAL);
		return;
	}
	if (n >= 0) {
		int rc = b->reset((unsigned)lg);
		if (rc < 0) {
			json_error(x, 409, "cannot reset the profile", rc);
			return;
		}
	}
	outbuf_puts(&x->ob, "{\"lg_sample\": ");
	outbuf_i64(&x->ob, b->lg_sample());
	outbuf_puts(&x->ob, ", \"reset\": ");
	outbuf_puts(&x->ob, n >= 0 ? "true" : "false");
	outbuf_puts(&x->ob, ", \"backend\": \"");
	outbuf_puts(&x->ob, b->name);
	outbuf_puts(&x->ob, "\"}\n");
}

static void index_page(struct http_exchange *x)
{
	outbuf_puts(&x->ob,
	            "heaptap " HEAPTAP_VERSION " control plane (backend: ");
	outbuf_puts(&x->ob, backend_get()->name);
	outbuf_puts(&x->ob,
	            ")\n\n"
	            "jeprof:    /pprof/heap  /pprof/symbol (GET, POST)  /pprof/cmdline  /debug/mem/pprof/profile\n"
	            "           /pprof/profile?seconds=N (CPU, gperftools' format)\n"
	            "go pprof:  /debug/pprof/  /debug/pprof/heap[?debug=1|?seconds=N]  /debug/pprof/allocs[?seconds=N]\n"
	            "           /debug/pprof/profile?seconds=N (CPU)\n"
	            "           /debug/pprof/delta_heap  /debug/pprof/symbol  /debug/pprof/cmdline\n"
	            "mesos:     /memory-profiler/start?duration=5mins  /memory-profiler/stop\n"
	            "           /memory-profiler/state  /memory-profiler/statistics\n"
	            "           /memory-profiler/download/raw|text|graph?id=N\n"
	            "metrics:   /metrics (Prometheus)\n"
	            "heaptap:   /heaptap/stats  /heaptap/dump  /heaptap/active?on=1|0  /heaptap/sample?lg=N\n");
}

static void dispatch(struct http_exchange *x)
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
	} else if (strcmp(p, "/debug/pprof/profile") == 0 || strcmp(p, "/pprof/profile") == 0) {
		cpu_http_profile(x, p[1] == 'p'); /* CPU: pprof, or gperftools' format for jeprof */
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
	} else if (strcmp(p, "/metrics") == 0) {
		x->ctype = METRICS_CONTENT_TYPE;
		metrics_write(&x->ob);
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


_Static_assert(sizeof((struct options *)0)->http_allow_uids == sizeof((struct http_policy *)0)->uids &&
               sizeof((struct options *)0)->http_hosts == sizeof((struct http_policy *)0)->hosts,
               "struct http_policy mirrors the http_* options");

/* Whom the server admits besides the host's user and root: HEAPTAP_CONF's http_allow_users
   and http_hosts. */
static void policy(struct http_policy *p)
{
	const struct options *o = options_get();
	p->allow_any_user = o->http_allow_any;
	p->nuids = o->http_allow_nuids;
	memcpy(p->uids, o->http_allow_uids, sizeof p->uids);
	memcpy(p->hosts, o->http_hosts, sizeof p->hosts);
}

static void fork_child(void)
{
	rundir_fork_child(); /* the child gets its own directory (its pid is in the name) */
	http_mesos_fork_child();
	http_delta_fork_child();
}

/* The earliest of the clocks' wishes (-1: none): a negative one counts as none. */
static int64_t earliest(int64_t a, int64_t b)
{
	return a < 0 ? b : b < 0 ? a : a < b ? a : b;
}

/* The Mesos runs', the ?seconds=N heap windows' and the CPU window's clocks. */
static int64_t tick(int64_t now_ms)
{
	return earliest(earliest(http_mesos_tick(now_ms), http_delta_tick(now_ms)), cpu_http_tick(now_ms));
}

static int busy(void)
{
	return http_mesos_busy() || cpu_http_busy();
}

const struct http_app http_routes_app = {
	.dispatch = dispatch,
	.tick = tick,
	.busy = busy,
	.fork_child = fork_child,
	.policy = policy,
};
