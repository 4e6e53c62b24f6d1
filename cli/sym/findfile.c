/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * findfile.c - candidate paths for mapped files and their debug info, and the optional
 * debuginfod client (libdebuginfod loaded with dlopen on first use).
 *
 * Only path arithmetic and the debuginfod call live here; opening, build-ID checks and CRC
 * checks are symfile.c's. The search order is jeprof's (FORMATS.md §1.3) extended with the
 * GDB conventions for separate debug files.
 */
#include "findfile.h"

#include <dlfcn.h>
#include <elfutils/debuginfod.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Copies path into buf without a trailing " (deleted)". */
static void strip_deleted(char *buf, size_t n, const char *path)
{
	snprintf(buf, n, "%s", path);
	size_t len = strlen(buf);
	const char *suf = " (deleted)";
	size_t sl = strlen(suf);
	if (len > sl && strcmp(buf + len - sl, suf) == 0)
		buf[len - sl] = 0;
}

int findfile_each_candidate(const char *path, const char *const *lib_prefix, const char *sysroot,
                            findfile_fn fn, void *ctx)
{
	char clean[4096], cand[8192];
	int rc;
	strip_deleted(clean, sizeof(clean), path);
	if (lib_prefix && lib_prefix[0]) {
		/* Drop one leading directory at a time: /a/b/x.so, /b/x.so, /x.so. */
		const char *suffix = clean;
		while (suffix) {
			for (size_t i = 0; lib_prefix[i]; i++) {
				snprintf(cand, sizeof(cand), "%s%s%s", lib_prefix[i],
				         suffix[0] == '/' ? "" : "/", suffix);
				if ((rc = fn(ctx, cand)) != 0)
					return rc;
			}
			const char *next = suffix[0] == '/' ? strchr(suffix + 1, '/') : strchr(suffix, '/');
			suffix = next;
		}
	}
	if (sysroot && sysroot[0]) {
		snprintf(cand, sizeof(cand), "%s%s%s", sysroot, clean[0] == '/' ? "" : "/", clean);
		return fn(ctx, cand);
	}
	return fn(ctx, clean);
}

int findfile_each_debug(const char *elf_path, const char *build_id_hex, const char *link,
                        const char *root, findfile_fn fn, void *ctx)
{
	char cand[8192], dir[4096];
	int rc;
	if (build_id_hex && strlen(build_id_hex) > 2) {
		snprintf(cand, sizeof(cand), "%s/.build-id/%.2s/%s.debug", root, build_id_hex, build_id_hex + 2);
		if ((rc = fn(ctx, cand)) != 0)
			return rc;
	}
	if (!elf_path || !elf_path[0])
		return 0;
	snprintf(dir, sizeof(dir), "%s", elf_path);
	char *slash = strrchr(dir, '/');
	if (slash)
		slash[slash == dir ? 1 : 0] = 0;
	else
		snprintf(dir, sizeof(dir), ".");
	const char *sep = strcmp(dir, "/") == 0 ? "" : "/";
	if (link && link[0]) {
		snprintf(cand, sizeof(cand), "%s%s%s", dir, sep, link);
		/* The debuglink may name the file itself (objcopy --add-gnu-debuglink=x x). */
		if (strcmp(cand, elf_path) != 0 && (rc = fn(ctx, cand)) != 0)
			return rc;
		snprintf(cand, sizeof(cand), "%s%s.debug/%s", dir, sep, link);
		if ((rc = fn(ctx, cand)) != 0)
			return rc;
		snprintf(cand, sizeof(cand), "%s%s%s%s", root, dir[0] == '/' ? "" : "/", dir, sep);
		size_t l = strlen(cand);
		snprintf(cand + l, sizeof(cand) - l, "%s", link);
		if ((rc = fn(ctx, cand)) != 0)
			return rc;
	}
	if (elf_path[0] == '/') {
		snprintf(cand, sizeof(cand), "%s%s", root, elf_path);
		if ((rc = fn(ctx, cand)) != 0)
			return rc;
		snprintf(cand, sizeof(cand), "%s%s.debug", root, elf_path);
		if ((rc = fn(ctx, cand)) != 0)
			return rc;
	}
	return 0;
}

const char *findfile_debug_root(const char *root_opt)
{
	if (root_opt && root_opt[0])
		return root_opt;
	const char *env = getenv("HEAPTAP_DEBUG_ROOT");
	if (env && env[0])
		return env;
	return FINDFILE_DEBUG_ROOT;
}

/* ---- debuginfod, through dlopen ---- */

/* The header gives the signatures; the library itself is loaded at run time. */
struct dbgd_api {
	__typeof__(debuginfod_begin) *begin;
	__typeof__(debuginfod_find_debuginfo) *find_debuginfo;
	__typeof__(debuginfod_find_executable) *find_executable;
	__typeof__(debuginfod_end) *end;
	__typeof__(debuginfod_set_progressfn) *set_progressfn; /* optional */
};

static struct {
	int tried;
	void *dl;
	struct dbgd_api api;
	debuginfod_client *client;
	double budget_s;   /* total wait allowed per run */
	double spent_s;    /* waited so far, over every query of the run (kept by findfile_cleanup) */
	double q_start;    /* when the running query began */
	int q_shown;       /* its progress line was printed */
	const char *q_what, *q_bid;
	int exhausted;     /* the budget ran out: no more queries */
} dbgd;

static double mono_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* libdebuginfod calls this while a query runs (about once a second when nothing arrives).
   After a second it prints one progress line; past the run's budget it stops the query. */
static int dbgd_progress(debuginfod_client *c, long a, long b)
{
	(void)c;
	(void)a;
	(void)b;
	double waited = mono_s() - dbgd.q_start;
	if (!dbgd.q_shown && waited >= 1.0) {
		dbgd.q_shown = 1;
		fprintf(stderr, "heaptap: debuginfod: waiting for the %s of %s...\n", dbgd.q_what, dbgd.q_bid);
	}
	return dbgd.spent_s + waited > dbgd.budget_s;
}

static int dbgd_load(void)
{
	if (dbgd.tried)
		return dbgd.client != NULL;
	dbgd.tried = 1;
	const char *urls = getenv("DEBUGINFOD_URLS");
	if (!urls || !urls[0])
		return 0;
	dbgd.dl = dlopen("libdebuginfod.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!dbgd.dl) {
		fprintf(stderr, "heaptap: warning: DEBUGINFOD_URLS is set but libdebuginfod.so.1 cannot be loaded: %s\n",
		        dlerror());
		return 0;
	}
	/* POSIX dlsym returns object pointers; converting to function pointers is the documented way. */
	*(void **)&dbgd.api.begin = dlsym(dbgd.dl, "debuginfod_begin");
	*(void **)&dbgd.api.find_debuginfo = dlsym(dbgd.dl, "debuginfod_find_debuginfo");
	*(void **)&dbgd.api.find_executable = dlsym(dbgd.dl, "debuginfod_find_executable");
	*(void **)&dbgd.api.end = dlsym(dbgd.dl, "debuginfod_end");
	*(void **)&dbgd.api.set_progressfn = dlsym(dbgd.dl, "debuginfod_set_progressfn");
	if (!dbgd.api.begin || !dbgd.api.find_debuginfo || !dbgd.api.find_executable || !dbgd.api.end)
		return 0;
	/* libdebuginfod waits 90 s for a server that does not answer, per file. A profiler run
	   asks for many files: 5 s each and no retry (DEBUGINFOD_TIMEOUT and DEBUGINFOD_RETRY_LIMIT
	   when the user set them), and
	   a budget for the whole run. */
	const char *t = getenv("DEBUGINFOD_TIMEOUT");
	if (!t || !t[0])
		setenv("DEBUGINFOD_TIMEOUT", FINDFILE_DEBUGINFOD_TIMEOUT, 1);
	/* It would also try a timed-out server twice more. */
	const char *rl = getenv("DEBUGINFOD_RETRY_LIMIT");
	if (!rl || !rl[0])
		setenv("DEBUGINFOD_RETRY_LIMIT", "0", 1);
	const char *b = getenv("HEAPTAP_DEBUGINFOD_BUDGET");
	char *end = NULL;
	dbgd.budget_s = b && b[0] ? strtod(b, &end) : 0;
	if (!b || !b[0] || !end || *end || !(dbgd.budget_s >= 0))
		dbgd.budget_s = FINDFILE_DEBUGINFOD_BUDGET_S;
	dbgd.client = dbgd.api.begin();
	if (dbgd.client && dbgd.api.set_progressfn)
		dbgd.api.set_progressfn(dbgd.client, dbgd_progress);
	return dbgd.client != NULL;
}

int findfile_debuginfod(const char *build_id_hex, int executable, char **path)
{
	*path = NULL;
	if (!build_id_hex || !build_id_hex[0] || !dbgd_load() || dbgd.exhausted)
		return -1;
	dbgd.q_start = mono_s();
	dbgd.q_shown = 0;
	dbgd.q_what = executable ? "executable" : "debug info";
	dbgd.q_bid = build_id_hex;
	/* Length 0 means "the id is a hex string". */
	int fd = executable
		? dbgd.api.find_executable(dbgd.client, (const unsigned char *)build_id_hex, 0, path)
		: dbgd.api.find_debuginfo(dbgd.client, (const unsigned char *)build_id_hex, 0, path);
	double waited = mono_s() - dbgd.q_start;
	dbgd.spent_s += waited;
	if (fd < 0) {
		free(*path);
		*path = NULL;
		if (dbgd.spent_s > dbgd.budget_s) {
			dbgd.exhausted = 1;
			fprintf(stderr, "heaptap: warning: debuginfod: no answer for the %s of %s; %.0f s spent "
			        "waiting for servers, the run's budget (HEAPTAP_DEBUGINFOD_BUDGET=%g): no more "
			        "files are asked for\n", dbgd.q_what, build_id_hex, dbgd.spent_s, dbgd.budget_s);
		} else if (fd != -ENOENT) {
			fprintf(stderr, "heaptap: warning: debuginfod: no %s for %s after %.1f s: %s%s\n",
			        dbgd.q_what, build_id_hex, waited, strerror(-fd),
			        fd == -ETIME || fd == -ETIMEDOUT ? " (DEBUGINFOD_TIMEOUT sets the wait)" : "");
		}
		return -1;
	}
	if (dbgd.q_shown)
		fprintf(stderr, "heaptap: debuginfod: got the %s of %s after %.1f s\n", dbgd.q_what, build_id_hex, waited);
	return fd;
}

void findfile_cleanup(void)
{
	if (dbgd.client)
		dbgd.api.end(dbgd.client);
	/* The library stays loaded: libcurl does not like being unloaded. */
	memset(&dbgd.api, 0, sizeof(dbgd.api));
	dbgd.client = NULL;
	dbgd.tried = 0;
}
