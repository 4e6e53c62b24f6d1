/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cmd_report.c - `heaptap report DUMPS... -o report.html`: reads a series of dumps of one
 * program, orders them (profile/series.h: pid, sequence number, time), symbolizes every address once over the
 * whole series, takes each dump's time (its metadata, else the file's modification time) and
 * hands everything to render/report.c, which analyses and writes the page.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd.h"
#include "../profile/arena.h"
#include "common.h"
#include "../profile/series.h"
#include "render/report.h"

static const char report_help[] =
	"usage: heaptap report [options] [BINARY] DUMP... [-o report.html]\n"
	"Writes one self-contained HTML file (inline SVG, CSS and JavaScript; no network access) about a\n"
	"series of heap dumps of one program (stdout without -o): live heap over time, leak suspects\n"
	"(stacks growing steadily over >= 5 dumps: slope > 0, R^2 >= 0.8, increasing-step fraction\n"
	">= 0.7, rise >= 3 sqrt(peak x sampling period); docs/REPORT.md), top growers, the peak dump's top functions and flame graph, a differential\n"
	"flame graph first -> last, and the process facts from the dumps' metadata. Dumps are ordered\n"
	"by pid, sequence number (from jemalloc-style names <prefix>.<pid>.<seq>.<trigger>.heap) and\n"
	"time; a dump's time is its metadata's, else its file's modification time.\n"
	"  --title=TEXT           page title (default \"heaptap report\")\n";

enum { O_TITLE = 1 };

static const struct common_opt report_opts[] = {
	{"title", 1, O_TITLE},
	{NULL, 0, 0},
};

static int report_opt(void *ctx, int id, const char *v)
{
	if (id == O_TITLE)
		*(const char **)ctx = v;
	return 0;
}

/*
 * Symbolizes every address of dumps[0..n) once, into all->syms: all takes each dump's mappings,
 * program and carried symbols (a merge of the dump without its samples), and the dumps' samples
 * are lent to it for the symbolizer's run, not copied. A merged copy of every stack cost as much
 * as the dumps themselves (64 MiB for a 250,000-stack dump; tests/e2e/cli_bigdump_report.sh);
 * the lent list costs a struct prof_sample a stack with several dumps and nothing with one.
 * all's samples are empty again on return. Returns common_symbolize's code.
 */
static int symbolize_series(const struct common_args *a, struct profile *all, const struct profile *dumps,
                            size_t n)
{
	size_t total = 0;
	for (size_t i = 0; i < n; i++) {
		struct profile shell = dumps[i];
		shell.samples = NULL;
		shell.nsamples = 0;
		profile_merge(all, &shell, 1);
		total += dumps[i].nsamples;
	}
	struct prof_sample *lent = NULL;
	if (n == 1) {
		all->samples = dumps[0].samples;
	} else {
		lent = arena_xmalloc((total ? total : 1) * sizeof *lent);
		size_t k = 0;
		for (size_t i = 0; i < n; i++) {
			if (dumps[i].nsamples)
				memcpy(lent + k, dumps[i].samples, dumps[i].nsamples * sizeof *lent);
			k += dumps[i].nsamples;
		}
		all->samples = lent;
	}
	all->nsamples = total;
	int rc = common_symbolize(a, all);
	all->samples = NULL;
	all->nsamples = 0;
	free(lent);
	return rc;
}

int cmd_report(int argc, char **argv)
{
	const char *title = NULL;
	struct common_args a;
	struct common_extra ex = {.opts = report_opts, .handle = report_opt, .ctx = &title, .help = report_help};
	int rc = common_parse(&a, argc, argv, &ex);
	if (rc >= 0)
		return rc;
	if (a.nprofiles == 0) {
		rc = common_usage_error(&a, "no dumps given");
		common_args_release(&a);
		return rc;
	}
	size_t n = a.nprofiles;
	struct profile *raw = calloc(n, sizeof *raw), *dumps = calloc(n, sizeof *dumps);
	struct series_entry *refs = calloc(n, sizeof *refs);
	const char **paths = calloc(n, sizeof *paths);
	double *time_s = calloc(n, sizeof *time_s);
	int64_t *time_ns = calloc(n, sizeof *time_ns);
	int *shared = calloc(n, sizeof *shared);
	struct profile all;
	profile_init(&all);
	if (!raw || !dumps || !refs || !paths || !time_s || !time_ns || !shared) {
		arena_oom();
	}
	size_t loaded = 0;
	int distinct = 0; /* the dumps have different times */
	rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		profile_init(&raw[i]);
		loaded++;
		rc = common_read(&a, a.profiles[i], &raw[i]);
		if (rc == 0 && i > 0)
			rc = common_check_same_kind(&raw[0], a.profiles[0], &raw[i], a.profiles[i]);
		if (rc)
			break;
		series_entry_from_profile(&refs[i], a.profiles[i], &raw[i]);
		if (refs[i].time_ns == 0) { /* no time in the dump: when the file was written */
			struct stat sb;
			if (stat(a.profiles[i], &sb) == 0)
				refs[i].time_ns = (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec;
		}
	}
	if (rc == 0) {
		series_sort(refs, n);
		common_warn_losses((const struct profile *)refs[n - 1].user); /* the newest counts */
		for (size_t i = 0; i < n; i++) {
			dumps[i] = *(struct profile *)refs[i].user; /* moves ownership; raw[] is not released */
			if (!dumps[i].pid)
				dumps[i].pid = refs[i].pid; /* from the file name */
			paths[i] = refs[i].path;
			time_ns[i] = refs[i].time_ns;
		}
		for (size_t i = 1; i < n; i++)
			if (time_ns[i] != time_ns[0])
				distinct = 1;
		/* Times that go backwards in dump order (several processes, a clock step) cannot be an
		   axis: use the dump index then. */
		for (size_t i = 1; i < n; i++)
			if (time_ns[i] < time_ns[i - 1])
				distinct = 0;
		for (size_t i = 0; i < n; i++)
			time_s[i] = distinct ? (double)(time_ns[i] - time_ns[0]) / 1e9 : (double)i;
		/* Symbolize every address of the series once, then lend the table to each dump. */
		rc = symbolize_series(&a, &all, dumps, n);
		for (size_t i = 0; i < n && rc == 0; i++) {
			if (!dumps[i].syms) {
				dumps[i].syms = all.syms;
				shared[i] = 1;
			}
		}
	}
	if (rc == 0) {
		struct report_input in = {
			.dumps = dumps, .paths = paths, .n = n, .time_s = time_s, .time_ns = time_ns, .title = title,
		};
		in.time_known = distinct || (n == 1 && time_ns[0] != 0);
		FILE *out = stdout;
		if (a.output && !(out = fopen(a.output, "w"))) {
			fprintf(stderr, "heaptap: %s: %s\n", a.output, strerror(errno));
			rc = 1;
		} else {
			int w = report_write_html(out, &a, &in);
			int cl = out == stdout ? fflush(out) : fclose(out);
			if (w != 0 || cl != 0) {
				fprintf(stderr, "heaptap: %s: %s\n", a.output ? a.output : "stdout", strerror(errno));
				rc = 1;
			}
		}
	}
	if (rc == 0) {
		for (size_t i = 0; i < n; i++) {
			if (shared[i])
				dumps[i].syms = NULL;
			profile_release(&dumps[i]);
		}
	} else {
		for (size_t i = 0; i < loaded; i++)
			profile_release(&raw[i]);
	}
	profile_release(&all);
	free(raw);
	free(dumps);
	free(refs);
	free(paths);
	free(time_s);
	free(time_ns);
	free(shared);
	common_args_release(&a);
	return rc;
}
