/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * views.c - one loaded profile drawn as a report (see views.h): names and sums the stacks the
 * way each view wants (stacks.c), then hands them to the renderer under render/. It holds no
 * state between calls.
 */
#include "views.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "render/graphviz.h"
#include "render/callgrind.h"
#include "render/pprof_export.h"
#include "render/svgflame.h"
#include "render/text.h"
#include "stacks.h"

/* Builds the display stacks of p and hands them to draw, which writes to f; reports a write
   error. Returns 0 or 1. */
static int draw_stacks(FILE *f, const struct common_args *a, const struct profile *p,
                       int (*draw)(FILE *, const struct common_args *, const struct stacks *), int sum_only)
{
	struct stacks_options so;
	struct stacks s;
	stacks_options_from(&so, a);
	so.sum_only = sum_only;
	if (stacks_build(&s, p, &so) != 0)
		return 1;
	int rc = 0;
	if (draw(f, a, &s) != 0 || fflush(f) != 0) {
		fprintf(stderr, "heaptap: %s: write: %s\n", a->cmd, strerror(errno));
		rc = 1;
	}
	stacks_release(&s);
	return rc;
}

static int draw_text(FILE *f, const struct common_args *a, const struct stacks *s)
{
	return text_write_top(f, a, s, a->nodecount);
}

static int draw_callgrind(FILE *f, const struct common_args *a, const struct stacks *s)
{
	(void)a;
	return callgrind_write(f, s);
}

int views_text(FILE *f, const struct common_args *a, const struct profile *p)
{
	return draw_stacks(f, a, p, draw_text, 1); /* names only: no traces */
}

int views_callgrind(FILE *f, const struct common_args *a, const struct profile *p)
{
	return draw_stacks(f, a, p, draw_callgrind, 0);
}

int views_folded(FILE *f, const struct common_args *a, const struct profile *p, const struct profile *base,
                 enum folded_negative neg)
{
	/* The traces are streamed into the set of distinct paths, not kept: a dump of a million
	   deep stacks costs what its distinct folded lines cost. */
	struct stacks_options so;
	struct stacks s, sb;
	struct folded_set *fs = folded_set_new();
	stacks_options_from(&so, a);
	so.style = STACKS_FULL;
	so.each = folded_sink_add;
	so.each_ctx = folded_set_sink(fs, 0);
	if (stacks_build(&s, p, &so) != 0) {
		folded_set_free(fs);
		return 1;
	}
	so.each_ctx = folded_set_sink(fs, 1);
	if (base && stacks_build(&sb, base, &so) != 0) {
		stacks_release(&s);
		folded_set_free(fs);
		return 1;
	}
	struct folded_result r;
	int rc = 0;
	int w = folded_write(f, fs, &s, base ? &sb : NULL, neg, &r);
	if (w == -2 || (w == 0 && fflush(f) != 0))
		fprintf(stderr, "heaptap: %s: write: %s\n", a->cmd, strerror(errno));
	if (w != 0 || ferror(f)) {
		rc = 1;
	} else if (r.dropped) {
		char v[64];
		fprintf(stderr, "heaptap: %s: left out %zu stacks that shrank (%s %s in all); "
		                "see --negative=separate|abs\n",
		        a->cmd, r.dropped, common_fmt_value(a, -r.dropped_sum, v, sizeof(v)), common_unit(a));
	}
	if (base)
		stacks_release(&sb);
	stacks_release(&s);
	folded_set_free(fs);
	return rc;
}

int views_graph_format(const struct common_args *a, int *format)
{
	int named = a->output && strcmp(a->output, "-") != 0;
	int from_ext = named ? graphviz_format_from_path(a->output) : -1;
	if (*format < 0 && named && from_ext < 0)
		return common_usage_error(a, "cannot tell the output format from the name '%s' (%s), "
		                             "or name it with --format", a->output, graphviz_extensions());
	if (*format >= 0 && from_ext >= 0 && from_ext != *format)
		return common_usage_error(a, "-o %s names %s output, but %s was asked for", a->output,
		                          graphviz_format_name(from_ext), graphviz_format_name(*format));
	if (*format < 0)
		*format = from_ext >= 0 ? from_ext : GRAPHVIZ_DOT;
	return 0;
}

int views_graph(const struct common_args *a, const struct profile *p, int format, int heapcheck)
{
	struct stacks_options so;
	struct stacks s;
	stacks_options_from(&so, a);
	if (stacks_build(&s, p, &so))
		return 1;
	int rc = 0, out_fd = 1;
	int named = a->output && strcmp(a->output, "-") != 0;
	if (named) {
		out_fd = open(a->output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (out_fd < 0) {
			fprintf(stderr, "heaptap: %s: %s\n", a->output, strerror(errno));
			rc = 1;
		}
	}
	if (rc == 0) {
		const char *prog = a->binary ? a->binary : p->exe_path ? p->exe_path
		                 : a->nprofiles ? a->profiles[0] : "heaptap";
		rc = graphviz_write(out_fd, a, &s, prog, format, heapcheck, a->cmd);
	}
	if (named && out_fd >= 0 && close(out_fd) != 0 && rc == 0) {
		fprintf(stderr, "heaptap: %s: %s\n", a->output, strerror(errno));
		rc = 1;
	}
	stacks_release(&s);
	return rc;
}

/* Adds p's stacks, named the flame graph's way, to g: streamed into its tree as they are
   named, not kept (a dump of a million deep stacks costs what its merged frames cost). */
static int feed(struct flame_graph *g, const struct common_args *a, const struct profile *p, int as_base)
{
	struct stacks_options so;
	struct stacks s;
	struct svgflame_sink k;
	stacks_options_from(&so, a);
	so.style = STACKS_FULL;
	svgflame_sink_init(&k, g, &s, p, as_base);
	so.each = svgflame_sink_add;
	so.each_ctx = &k;
	int rc = stacks_build(&s, p, &so) != 0;
	svgflame_sink_release(&k);
	if (rc == 0)
		stacks_release(&s);
	return rc;
}

int views_flame(FILE *f, const struct common_args *a, const struct profile *p, const struct profile *base,
                const struct flame_options *fo, int reverse)
{
	struct flame_graph *g = flame_new(reverse);
	int rc = feed(g, a, p, 0);
	if (rc == 0 && base)
		rc = feed(g, a, base, 1);
	if (rc == 0 && (flame_write_svg(g, fo, f, NULL) != 0 || fflush(f) != 0)) {
		fprintf(stderr, "heaptap: %s: write: %s\n", a->cmd, strerror(errno));
		rc = 1;
	}
	flame_free(g);
	return rc;
}

int views_pprof(const char *path, const struct common_args *a, struct profile *p, int gzip)
{
	/* go tool pprof does not know the allocator's frames: drop them as jeprof does */
	if (!a->keep_allocator)
		stacks_trim_allocator(p);
	int e = pprof_export(p, path, gzip);
	if (e < 0) {
		fprintf(stderr, "heaptap: %s: %s: %s\n", a->cmd, path, strerror(-e));
		return 1;
	}
	return 0;
}
