/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * views.h - the reports heaptap draws from one loaded, symbolized profile: the jeprof --text
 * table, folded stacks, the call graph (dot and Graphviz's pictures), the flame graph SVG and
 * the symbolized pprof file. Commands that load once and draw several views (`run`,
 * `jeprof`) call these instead of each other; the single-view commands call them too.
 *
 * It does not load profiles (common.h) or lay anything out itself (render/). CLI only:
 * allocates, prints "heaptap: ..." diagnostics, never exits.
 */
#ifndef HEAPTAP_CLI_VIEWS_H
#define HEAPTAP_CLI_VIEWS_H

#include <stdio.h>

#include "../profile/model.h"
#include "common.h"
#include "render/flame.h"
#include "render/folded.h"

/* jeprof --text of p to f (a->nodecount rows at most when >= 0). Returns 0 or 1. */
int views_text(FILE *f, const struct common_args *a, const struct profile *p);
/* The profile in callgrind's format (jeprof --callgrind) to f. Returns 0 or 1. */
int views_callgrind(FILE *f, const struct common_args *a, const struct profile *p);

/* Folded stacks of p to f (full names). base NULL: one column, negatives as neg says (a note on
   stderr counts what was dropped); base set: "path BEFORE AFTER". Returns 0 or 1. */
int views_folded(FILE *f, const struct common_args *a, const struct profile *p, const struct profile *base,
                 enum folded_negative neg);

/* The call graph's format from an explicit choice (*format >= 0, enum graphviz_format) and the
   extension of -o: sets *format (dot when neither says). Returns 0, or 2 after a usage error
   (an -o name with no known extension and no format given, or the two disagree). */
int views_graph_format(const struct common_args *a, int *format);

/* The call graph of p in format to a->output (stdout when NULL or "-"). Returns 0 or 1. */
int views_graph(const struct common_args *a, const struct profile *p, int format, int heapcheck);

/* The flame graph of p (differential against base when base is not NULL) to f, with fo's
   looks; reverse merges stacks from the leaf side. Returns 0 or 1. */
int views_flame(FILE *f, const struct common_args *a, const struct profile *p, const struct profile *base,
                const struct flame_options *fo, int reverse);

/* p as a symbolized pprof file at path (gzipped when gzip). Trims the allocator's frames from
   p in place first (unless --keep-allocator). Returns 0 or 1. */
int views_pprof(const char *path, const struct common_args *a, struct profile *p, int gzip);

#endif
