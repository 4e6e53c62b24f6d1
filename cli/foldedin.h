/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * foldedin.h - reads folded stacks, the text flamegraph.pl takes (FORMATS.md §9.1): one stack
 * per line, frames root first joined by ';', then a count, or two counts (before and after)
 * for a differential graph. Lines like those `heaptap collapsed`, `jeprof --collapsed`,
 * stackcollapse-*.pl and inferno write. It feeds a flame graph (render/flame.h) and knows
 * nothing of profiles. CLI only: allocates.
 */
#ifndef HEAPTAP_CLI_FOLDEDIN_H
#define HEAPTAP_CLI_FOLDEDIN_H

#include <stddef.h>

#include "render/flame.h"

/* 1 when the text in buf[0..n) looks like folded stacks: no NUL byte in it, and its first line
   that is neither blank nor a '#' comment is "<frames> <count>" (or two counts) and not the
   header of a profile format heaptap reads. */
int foldedin_sniff(const char *buf, size_t n);

struct foldedin_result {
	size_t stacks;        /* lines added */
	size_t bad;           /* lines that were not "<frames> <count>" (a negative count is one) */
	int two_columns;      /* 1 when some line had two counts (before, after) */
};

/*
 * Adds every line of buf[0..n) to g: with one count as the value (as the base value when
 * as_base), with two as base and value. Counts are multiplied by factor. Frame suffixes
 * "[inline]" and "_[i]" mark inlined frames (the mark is dropped from the name); "_[k]",
 * "_[j]" and "_[w]" are dropped. Blank lines and '#' comments are skipped. Fills r.
 */
void foldedin_add(struct flame_graph *g, const char *buf, size_t n, double factor, int as_base,
                  struct foldedin_result *r);

#endif
