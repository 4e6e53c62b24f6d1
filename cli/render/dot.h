/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * dot.h - the call graph in Graphviz dot, with jeprof's PrintDot semantics (FORMATS.md §3.5):
 * nodes by |cum| (nodecount, nodefraction), edges by weight with reachability, edgefraction
 * and maxdegree, jeprof's labels, font sizes, widths and weights. It writes dot text only;
 * running `dot` to get SVG or PDF is cmd_callgraph.c's.
 */
#ifndef HEAPTAP_CLI_RENDER_DOT_H
#define HEAPTAP_CLI_RENDER_DOT_H

#include <stdio.h>

#include "../common.h"
#include "../stacks.h"

/* Flags for dot_write. */
enum {
	DOT_SVG = 1,       /* the graph becomes SVG: thin edges are widened to 1 (as jeprof does) */
	DOT_HEAPCHECK = 2  /* jeprof --heapcheck: nodes with flat > 0 filled grey, < 0 triple-bordered */
};

/*
 * Writes the graph of s to f. prog names the program in the title and legend; flags is a set
 * of DOT_* values. a->nodecount < 0 means jeprof's default, 80.
 * Returns 0, 1 when no node is left to print ("heaptap: no nodes to print" on stderr), -1 on
 * a write error. Prints jeprof's "dropping nodes with <= ..." note on stderr when it applies.
 */
int dot_write(FILE *f, const struct common_args *a, const struct stacks *s, const char *prog,
              int flags);

#endif
