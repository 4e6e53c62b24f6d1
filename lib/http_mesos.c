/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * http_mesos.c - Mesos' memory-profiler endpoints (/memory-profiler/start, stop, state,
 * statistics, download/raw|text|graph) with the JSON fields, odd types and messages of
 * FORMATS.md section 6: one run at a time, its dump in $TMPDIR/heaptap.<pid>.XXXXXX/.
 *
 * It is not a report generator: text and graph downloads run the heaptap CLI (found via
 * $HEAPTAP_CLI or PATH) with posix_spawn as a background job (the requests wait parked while
 * the server keeps serving), and serve its output.
 * Runs on the server thread; its own code never allocates (posix_spawn's file actions do,
 * inside glibc).
 */
#include "http_mesos.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h> /* rename only */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"
#include "dumpfmt.h"
#include "http_limit.h"
#include "jemalloc_backend.h"
#include "rundir.h"

#define MESOS_DEFAULT_SECS 300.0
#define CLI_TIMEOUT_MS 120000

extern char **environ;

static int run_active;         /* a run is collecting */
static int64_t run_id;         /* unix seconds at its start */
static int64_t run_end_ms;     /* monotonic deadline */
static int64_t last_id = -1;   /* the last finished run, -1 none */
static int64_t text_id = -1;   /* the run the cached text/graph files belong to */
static int64_t graph_id = -1;
static char path_raw[DUMP_PATH_MAX], path_text[DUMP_PATH_MAX], path_graph[DUMP_PATH_MAX],
	path_err[DUMP_PATH_MAX];
static char *child_env[1024];

struct cli_job {
	pid_t pid;             /* 0: none running */
	int text;              /* 1 text, 0 graph */
	int64_t id;            /* the run it renders */
	int64_t deadline_ms;
	char tmp[DUMP_PATH_MAX + 8]; /* output while running */
	char *out;             /* final name (path_text or path_graph) */
};
static struct cli_job job;
/* the last failure per kind (0 graph, 1 text), shown to the requests that waited for it */
static char job_err[2][256];
static int64_t job_err_id[2] = {-1, -1};
static int64_t job_err_ms[2];
#define JOB_ERR_KEEP_MS 2000

static const char *run_dir_file(char *dst, const char *name)
{
	return rundir_path(dst, DUMP_PATH_MAX, name);
}

static void reply_json_start(struct http_exchange *x)
{
	x->ctype = "application/json; charset=utf-8";
}

static void bad(struct http_exchange *x, int status, const char *a, const char *b, const char *c)
{
	http_server_reply_text(x, status, a);
	if (b)
		outbuf_puts(&x->ob, b);
	if (c)
		outbuf_puts(&x->ob, c);
	outbuf_putc(&x->ob, '\n');
}

/* 1 when the backend is jemalloc's profiler (its switch may have been set by others). */
static int jemalloc_mode(void)
{
	return backend_get() == &jemalloc_backend;
}

static int prof_available(void)
{
	return backend_get()->enabled();
}

static int set_active(int on)
{
	return backend_get()->set_active(on);
}

static int get_active(void)
{
	return backend_get()->active();
}

/* Deactivates and dumps the current run into profile.dump. Returns 0 or -errno. */
static int run_finish(void)
{
	run_active = 0;
	set_active(0);
	last_id = run_id;
	text_id = graph_id = -1;
	if (!run_dir_file(path_raw, "profile.dump"))
		return -errno;
	return backend_get()->dump_path(path_raw);
}

static void job_poll(int64_t now_ms);

int64_t http_mesos_tick(int64_t now_ms)
{
	job_poll(now_ms);
	if (job.pid)
		return now_ms + 20; /* look at the child again soon */
	if (!run_active)
		return -1;
	if (now_ms >= run_end_ms) {
		run_finish();
		return -1;
	}
	return run_end_ms;
}

void http_mesos_fork_child(void)
{
	job.pid = 0; /* the parent's child, not ours */
	run_active = 0;
	last_id = text_id = graph_id = -1;
}

static void put_id_message_tail(struct http_exchange *x, int64_t id)
{
	outbuf_puts(&x->ob, " After the remaining time elapses, download the generated profile at "
	                    "'/memory-profiler/download/raw?id=");
	outbuf_i64(&x->ob, id);
	outbuf_puts(&x->ob, "'. Visit '/memory-profiler/stop' to stop collection earlier.");
}

static void mesos_start(struct http_exchange *x)
{
	if (!prof_available()) {
		bad(x, 400, "Heap profiling is disabled: start the program with HEAPTAP_CONF=prof:true "
		            "(or jemalloc with MALLOC_CONF=prof:true).", NULL, NULL);
		return;
	}
	char d[64];
	double secs = MESOS_DEFAULT_SECS;
	long dn = http_parse_query_get(x->query, x->query_len, "duration", d, sizeof d);
	if (dn == -2 || (dn >= 0 && http_parse_duration(d, (size_t)dn, &secs) != 0)) {
		bad(x, 400, "Could not parse parameter 'duration': Invalid duration '", dn >= 0 ? d : "", "'.");
		return;
	}
	if (secs < 1 || secs > 86400) {
		bad(x, 400, "Duration '", d, "' must be between 1secs and 1days.");
		return;
	}
	int64_t now = http_server_now_ms();
	const char *msg;
	if (run_active) {
		msg = "Heap profiling is already active.";
	} else {
		if (jemalloc_mode() && jemalloc_backend_active() == 1) {
			bad(x, 409, "Heap profiling was started externally.", NULL, NULL);
			return;
		}
		int rc = set_active(1);
		if (rc < 0) {
			bad(x, 400, "Could not enable heap profiling: prof.active failed.", NULL, NULL);
			return;
		}
		run_active = 1;
		run_id = (int64_t)time(NULL);
		run_end_ms = now + (int64_t)(secs * 1000.0 + 0.5);
		msg = "Successfully started new heap profiling run.";
	}
	reply_json_start(x);
	outbuf_puts(&x->ob, "{\"id\": ");
	outbuf_i64(&x->ob, run_id);
	outbuf_puts(&x->ob, ", \"message\": \"");
	outbuf_puts(&x->ob, msg);
	put_id_message_tail(x, run_id);
	outbuf_puts(&x->ob, "\", \"remaining_seconds\": \"");
	outbuf_i64(&x->ob, (run_end_ms - now + 500) / 1000);
	outbuf_puts(&x->ob, "\"}\n");
}

static void put_urls(struct http_exchange *x, int64_t id)
{
	static const char *const keys[] = {"url_raw_profile", "url_graph", "url_symbolized_profile"};
	static const char *const routes[] = {"raw", "graph", "text"};
	for (int i = 0; i < 3; i++) {
		outbuf_puts(&x->ob, ", \"");
		outbuf_puts(&x->ob, keys[i]);
		outbuf_puts(&x->ob, "\": \"/memory-profiler/download/");
		outbuf_puts(&x->ob, routes[i]);
		outbuf_puts(&x->ob, "?id=");
		outbuf_i64(&x->ob, id);
		outbuf_putc(&x->ob, '"');
	}
}

static void mesos_stop(struct http_exchange *x)
{
	if (!prof_available()) {
		bad(x, 400, "Heap profiling is disabled.", NULL, NULL);
		return;
	}
	if (!run_active) {
		if (jemalloc_mode() && jemalloc_backend_active() == 1) {
			bad(x, 400, "Profiling is active, but was not started by heaptap. "
			            "Use /heaptap/active?on=0 to stop it.", NULL, NULL);
			return;
		}
		if (last_id < 0) {
			bad(x, 400, "Not yet generated.", NULL, NULL);
			return;
		}
	} else {
		if (!http_limit_dump(x, 0))
			return; /* the run goes on: a later stop (or its duration) ends it */
		int rc = run_finish();
		if (rc < 0) {
			char num[24];
			fmt_u64(num, (uint64_t)-rc);
			bad(x, 400, "Could not dump profile: errno ", num, ".");
			return;
		}
	}
	reply_json_start(x);
	outbuf_puts(&x->ob, "{\"id\": \"");
	outbuf_i64(&x->ob, last_id);
	outbuf_puts(&x->ob, "\", \"message\": \"Successfully stopped memory profiling run. Use one of the "
	                    "provided URLs to download results. Note that in order to generate graphs or "
	                    "symbolized profiles, the heaptap CLI must be installed on the host machine.\"");
	put_urls(x, last_id);
	outbuf_puts(&x->ob, "}\n");
}

static void put_bool_or_error(struct http_exchange *x, int v)
{
	if (v < 0) {
		outbuf_puts(&x->ob, "\"mallctl failed: errno ");
		outbuf_i64(&x->ob, -v);
		outbuf_putc(&x->ob, '"');
	} else {
		outbuf_puts(&x->ob, v ? "true" : "false");
	}
}

static void mesos_state(struct http_exchange *x)
{
	const char *dir = last_id >= 0 ? rundir_get() : NULL;
	int64_t now = http_server_now_ms();
	reply_json_start(x);
	outbuf_puts(&x->ob, "{\"memory_profiler\": {\"jemalloc_detected\": ");
	outbuf_puts(&x->ob, jemalloc_backend_present() ? "true" : "false");
	outbuf_puts(&x->ob, ", \"tmpdir\": \"");
	outbuf_json_str(&x->ob, dir ? dir : "Not yet generated");
	outbuf_puts(&x->ob, "\", \"current_run\": {\"id\": ");
	if (run_active) {
		outbuf_i64(&x->ob, run_id);
		outbuf_puts(&x->ob, ", \"remaining_seconds\": ");
		int64_t left = run_end_ms - now;
		outbuf_fixed(&x->ob, left > 0 ? (double)left / 1000.0 : 0, 1);
	} else if (last_id >= 0) {
		outbuf_i64(&x->ob, last_id);
		outbuf_puts(&x->ob, ", \"remaining_seconds\": 0");
	} else {
		outbuf_puts(&x->ob, "null");
	}
	outbuf_puts(&x->ob, "}}");
	if (jemalloc_backend_present()) {
		const char *env = getenv("MALLOC_CONF");
		const char *build = jemalloc_backend_string("config.malloc_conf");
		outbuf_puts(&x->ob, ", \"jemalloc\": {\"malloc_conf\": {\"environment\": \"");
		outbuf_json_str(&x->ob, env ? env : "");
		outbuf_puts(&x->ob, "\", \"build_options\": \"");
		outbuf_json_str(&x->ob, build ? build : "mallctl config.malloc_conf failed");
		outbuf_puts(&x->ob, "\"}, \"profiling_enabled\": ");
		put_bool_or_error(x, jemalloc_backend_bool("config.prof"));
		outbuf_puts(&x->ob, ", \"profiling_active\": ");
		put_bool_or_error(x, jemalloc_backend_bool("prof.active"));
		outbuf_putc(&x->ob, '}');
	}
	outbuf_puts(&x->ob, ", \"heaptap\": {\"backend\": \"");
	outbuf_puts(&x->ob, backend_get()->name);
	outbuf_puts(&x->ob, "\", \"profiling_enabled\": ");
	outbuf_puts(&x->ob, prof_available() ? "true" : "false");
	outbuf_puts(&x->ob, ", \"profiling_active\": ");
	outbuf_puts(&x->ob, get_active() > 0 ? "true" : "false");
	outbuf_puts(&x->ob, "}}\n");
}

static void mesos_statistics(struct http_exchange *x)
{
	reply_json_start(x);
	backend_get()->stats_json(&x->ob);
	outbuf_putc(&x->ob, '\n');
}

/* Checks the id parameter against the last run. Returns 0 when the download may proceed. */
static int check_id(struct http_exchange *x, const char *what)
{
	char v[32];
	long n = http_parse_query_get(x->query, x->query_len, "id", v, sizeof v);
	int64_t id = -1;
	if (n >= 0) {
		if (n == 0 || n > 18) {
			bad(x, 400, "Invalid parameter 'id': ", n == 0 ? "Failed to convert '' to number" : "Numerical result out of range", ".");
			return -1;
		}
		id = 0;
		for (long i = 0; i < n; i++) {
			if (v[i] < '0' || v[i] > '9') {
				bad(x, 400, "Invalid parameter 'id': Garbage after parsed id.", NULL, NULL);
				return -1;
			}
			id = id * 10 + (v[i] - '0');
		}
	} else if (n == -2) {
		bad(x, 400, "Invalid parameter 'id': Garbage after parsed id.", NULL, NULL);
		return -1;
	}
	if (last_id < 0) {
		bad(x, 400, what, "Not yet generated.", NULL);
		return -1;
	}
	if (id < 0 && run_active) {
		bad(x, 400, "A profiling run is currently in progress. To download results of the previous "
		            "run, please pass an 'id' explicitly.", NULL, NULL);
		return -1;
	}
	if (id >= 0 && id != last_id) {
		char num[24];
		fmt_u64(num, (uint64_t)id);
		bad(x, 400, "Cannot serve requested id #", num, ".");
		return -1;
	}
	return 0;
}

static void serve_file(struct http_exchange *x, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		bad(x, 400, "Requested file was deleted from local disk.", NULL, NULL);
		return;
	}
	http_server_body_reset(x);
	x->file_fd = fd;
	x->ctype = "application/octet-stream";
	char disp[700];
	struct outbuf ob;
	outbuf_init(&ob, disp, sizeof disp - 1, -1);
	outbuf_puts(&ob, "attachment; filename=");
	outbuf_puts(&ob, path);
	disp[ob.len] = 0;
	http_server_header(x, "Content-Disposition", disp);
}

/* Finds the CLI: $HEAPTAP_CLI, else "heaptap" on PATH. Returns 0 and fills out, or -1. */
static int find_cli(char *out, size_t cap)
{
	const char *env = getenv("HEAPTAP_CLI");
	if (env && *env) {
		if (strlen(env) < cap && access(env, X_OK) == 0) {
			strcpy(out, env);
			return 0;
		}
		return -1;
	}
	const char *path = getenv("PATH");
	while (path && *path) {
		const char *e = strchr(path, ':');
		size_t n = e ? (size_t)(e - path) : strlen(path);
		if (n > 0 && n + 9 < cap) {
			memcpy(out, path, n);
			memcpy(out + n, "/heaptap", 9);
			if (access(out, X_OK) == 0)
				return 0;
		}
		path = e ? e + 1 : NULL;
	}
	return -1;
}

/* The environment for the CLI: ours without LD_PRELOAD and HEAPTAP_CONF (the CLI must not
   load the collector, let alone try to start a second server on our port). */
static char **cli_env(void)
{
	size_t n = 0;
	for (char **e = environ; e && *e && n + 1 < sizeof child_env / sizeof child_env[0]; e++) {
		if (strncmp(*e, "LD_PRELOAD=", 11) == 0 || strncmp(*e, "HEAPTAP_CONF=", 13) == 0)
			continue;
		child_env[n++] = *e;
	}
	child_env[n] = NULL;
	return child_env;
}

/*
 * Text and graph files come from a background job: the CLI runs as a child while the server
 * keeps serving; the requests that need its output wait (http_exchange.wait) and are routed
 * again once the job is over. One job at a time.
 */

static void job_fail(int text, int64_t id, const char *why)
{
	size_t n = strlen(why);
	if (n >= sizeof job_err[0])
		n = sizeof job_err[0] - 1;
	memcpy(job_err[text], why, n);
	job_err[text][n] = 0;
	job_err_id[text] = id;
	job_err_ms[text] = http_server_now_ms();
}

/* Starts the CLI with args, stdout into out. Returns 0, or -1 after job_fail. */
static int job_start(int text, char *const args[], char *out)
{
	char cli[1024];
	if (find_cli(cli, sizeof cli) != 0) {
		job_fail(text, last_id, "heaptap CLI not found on PATH");
		return -1;
	}
	if (!run_dir_file(path_err, text ? "cli-text.stderr" : "cli-graph.stderr")) {
		job_fail(text, last_id, "cannot create the run directory");
		return -1;
	}
	struct outbuf ob;
	outbuf_init(&ob, job.tmp, sizeof job.tmp - 1, -1);
	outbuf_puts(&ob, out);
	outbuf_puts(&ob, ".tmp");
	job.tmp[ob.len] = 0;
	char *argv[8];
	int k = 0;
	argv[k++] = cli;
	for (int i = 0; args[i] && k < 7; i++)
		argv[k++] = args[i];
	argv[k] = NULL;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, job.tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	posix_spawn_file_actions_addopen(&fa, 2, path_err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	pid_t pid;
	int rc = posix_spawn(&pid, cli, &fa, NULL, argv, cli_env());
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0) {
		job_fail(text, last_id, "cannot run the heaptap CLI");
		return -1;
	}
	job.pid = pid;
	job.text = text;
	job.id = last_id;
	job.out = out;
	job.deadline_ms = http_server_now_ms() + CLI_TIMEOUT_MS;
	return 0;
}

/* Checks on the running job; finishes it when the child is gone or too slow. */
static void job_poll(int64_t now_ms)
{
	if (!job.pid)
		return;
	int status = 0;
	pid_t w = waitpid(job.pid, &status, WNOHANG);
	if (w == 0 && now_ms < job.deadline_ms)
		return;
	if (w == 0) {
		kill(job.pid, SIGKILL);
		waitpid(job.pid, &status, 0);
		unlink(job.tmp);
		job.pid = 0;
		job_fail(job.text, job.id, "the heaptap CLI timed out");
		return;
	}
	if (w < 0)
		status = 0; /* reaped by the host's SIGCHLD handler: judge by the output */
	job.pid = 0;
	struct stat st;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || stat(job.tmp, &st) != 0 || st.st_size == 0) {
		/* the first line of its stderr says why */
		char why[256];
		int fd = open(path_err, O_RDONLY | O_CLOEXEC);
		ssize_t n = fd >= 0 ? read(fd, why, sizeof why - 1) : -1;
		if (fd >= 0)
			close(fd);
		why[n > 0 ? n : 0] = 0;
		char *nl = strchr(why, '\n');
		if (nl)
			*nl = 0;
		unlink(job.tmp);
		job_fail(job.text, job.id, why[0] ? why : "the heaptap CLI failed");
		return;
	}
	if (rename(job.tmp, job.out) != 0) {
		job_fail(job.text, job.id, "cannot rename the output");
		return;
	}
	if (job.id == last_id) {
		if (job.text)
			text_id = job.id;
		else
			graph_id = job.id;
	}
}

int http_mesos_busy(void)
{
	return job.pid != 0;
}

static void mesos_download(struct http_exchange *x, const char *kind)
{
	int raw = strcmp(kind, "raw") == 0, text = strcmp(kind, "text") == 0;
	if (check_id(x, raw ? "No heap profile exists: " : "No source profile exists: ") != 0)
		return;
	if (!run_dir_file(path_raw, "profile.dump")) {
		bad(x, 400, "Requested file was deleted from local disk.", NULL, NULL);
		return;
	}
	if (raw) {
		serve_file(x, path_raw);
		return;
	}
	char *out = text ? path_text : path_graph;
	int64_t cached = text ? text_id : graph_id;
	struct stat st;
	if (cached == last_id && run_dir_file(out, text ? "symbolized-profile.dump" : "profile.svg") &&
	    stat(out, &st) == 0) {
		serve_file(x, out);
		return;
	}
	if (job_err_id[text] == last_id && job_err[text][0] && http_server_now_ms() - job_err_ms[text] < JOB_ERR_KEEP_MS) {
		bad(x, 400, "Could not generate file: ", job_err[text], ".");
		return;
	}
	if (job.pid) {
		x->wait = 1; /* one job at a time: come back when it is over */
		return;
	}
	if (!run_dir_file(out, text ? "symbolized-profile.dump" : "profile.svg")) {
		bad(x, 400, "Could not generate file: cannot create the run directory.", NULL, NULL);
		return;
	}
	if (stat(path_raw, &st) != 0) {
		bad(x, 400, "Requested file was deleted from local disk.", NULL, NULL);
		return;
	}
	char *targs[] = {"top", path_raw, NULL};
	char *gargs[] = {"callgraph", "--format=svg", path_raw, NULL};
	if (job_start(text, text ? targs : gargs, out) != 0) {
		bad(x, 400, "Could not generate file: ", job_err[text], ".");
		return;
	}
	x->wait = 1;
}

void http_mesos_dispatch(struct http_exchange *x, const char *route)
{
	if (strcmp(route, "start") == 0)
		mesos_start(x);
	else if (strcmp(route, "stop") == 0)
		mesos_stop(x);
	else if (strcmp(route, "state") == 0)
		mesos_state(x);
	else if (strcmp(route, "statistics") == 0)
		mesos_statistics(x);
	else if (strncmp(route, "download/", 9) == 0 &&
	         (strcmp(route + 9, "raw") == 0 || strcmp(route + 9, "text") == 0 || strcmp(route + 9, "graph") == 0))
		mesos_download(x, route + 9);
	else
		http_server_reply_text(x, 404, "not found\n");
}
