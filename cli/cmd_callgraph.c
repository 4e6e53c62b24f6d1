/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cmd_callgraph.c - `heaptap callgraph`: the call graph of a profile as Graphviz dot, or as
 * SVG / PDF / PostScript / GIF / PNG by running Graphviz's `dot` on it (jeprof --dot --svg
 * --pdf --ps --gif). The graph itself is render/dot.c's, running `dot` render/graphviz.c's
 * and the wiring views.c's; this file parses the options.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "common.h"
#include "render/graphviz.h"
#include "views.h"

enum { X_FORMAT = 1, X_HEAPCHECK, X_FMT_FLAG /* + enum graphviz_format */ };

static const char callgraph_help[] =
	"usage: heaptap callgraph [options] [--format=FMT] [-o FILE] [BINARY] PROFILE...\n"
	"Draws the call graph the way jeprof --dot/--svg/--pdf does: boxes sized by the memory a\n"
	"function allocated itself, labelled with self and cumulative values; edges carry the memory\n"
	"allocated through each call. All but dot are made by Graphviz's `dot` (graphviz package).\n"
	"  --format=dot|svg|pdf|ps|gif|png   output format (default: from -o's extension, else dot)\n"
	"  --dot --svg --pdf --ps --gif --png   the same, jeprof style\n"
	"  -o FILE                write to FILE instead of stdout; its extension (.dot .svg .pdf .ps\n"
	"                         .gif .png) is the format, any other is refused unless a format is given\n"
	"  --heapcheck            fill the boxes of functions that hold memory themselves (grey)\n"
	"  --nodecount=N (80) --nodefraction=F (0.005) --edgefraction=F (0.001) --maxdegree=N (8)\n";

struct cg_opts {
	int format; /* enum graphviz_format, or -1: not chosen */
	int heapcheck;
};

static int handle(void *ctx, int id, const char *v)
{
	struct cg_opts *o = ctx;
	if (id == X_HEAPCHECK) {
		o->heapcheck = 1;
	} else if (id >= X_FMT_FLAG) {
		o->format = id - X_FMT_FLAG;
	} else if (id == X_FORMAT) {
		o->format = graphviz_format_parse(v);
		if (o->format < 0) {
			fprintf(stderr, "heaptap: callgraph: --format: expected dot, svg, pdf, ps, gif or png, got '%s'\n"
			                "heaptap: try 'heaptap callgraph --help'\n", v);
			return 2;
		}
	}
	return 0;
}

int cmd_callgraph(int argc, char **argv)
{
	struct cg_opts o = {.format = -1};
	static const struct common_opt opts[] = {{"format", 1, X_FORMAT}, {"heapcheck", 0, X_HEAPCHECK},
		{"dot", 0, X_FMT_FLAG + GRAPHVIZ_DOT}, {"svg", 0, X_FMT_FLAG + GRAPHVIZ_SVG},
		{"pdf", 0, X_FMT_FLAG + GRAPHVIZ_PDF}, {"ps", 0, X_FMT_FLAG + GRAPHVIZ_PS},
		{"gif", 0, X_FMT_FLAG + GRAPHVIZ_GIF}, {"png", 0, X_FMT_FLAG + GRAPHVIZ_PNG}, {NULL, 0, 0}};
	struct common_extra ex = {.opts = opts, .handle = handle, .ctx = &o, .help = callgraph_help};
	struct common_args a;
	int rc = common_parse(&a, argc, argv, &ex);
	if (rc >= 0)
		return rc;
	if ((rc = views_graph_format(&a, &o.format)) != 0) {
		common_args_release(&a);
		return rc;
	}
	char *dot = NULL;
	if (o.format != GRAPHVIZ_DOT && !(dot = graphviz_find_dot())) {
		fprintf(stderr, "heaptap: callgraph: cannot make %s: Graphviz 'dot' is not on PATH "
		                "(apt-get install graphviz), or use --format=dot\n", graphviz_format_name(o.format));
		common_args_release(&a);
		return 1;
	}
	free(dot);
	struct profile p;
	profile_init(&p);
	rc = common_load(&a, &p, 1);
	if (rc == 0)
		rc = views_graph(&a, &p, o.format, o.heapcheck);
	profile_release(&p);
	common_args_release(&a);
	return rc;
}
