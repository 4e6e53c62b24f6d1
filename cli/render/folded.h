/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * folded.h - writes display stacks (cli/stacks.h) as folded stacks, FORMATS.md §9.1:
 * "root;...;leaf COUNT", one line per distinct name path, merged and sorted, integer counts
 * (truncated), ';' inside names replaced by ','. With a second set of stacks (the base) it
 * writes flamegraph.pl's two-column "path BEFORE AFTER" form. It neither loads nor names:
 * `heaptap collapsed`, `heaptap run` and `heaptap jeprof --collapsed` call it. CLI only.
 */
#ifndef HEAPTAP_CLI_RENDER_FOLDED_H
#define HEAPTAP_CLI_RENDER_FOLDED_H

#include <stddef.h>
#include <stdio.h>

#include "../stacks.h"

enum folded_negative {
	FOLDED_NEG_DROP = 0, /* a path whose count is negative is left out (and counted) */
	FOLDED_NEG_ABS       /* its absolute value is written */
};

struct folded_result {
	size_t dropped;      /* paths left out because their count was negative */
	double dropped_sum;  /* their (negative) sum */
};

/*
 * Writes s to out. base NULL: one count per path (negatives as neg says). base set: two
 * columns, the base's count then s's, each clamped at 0, paths where both are 0 left out.
 * Returns 0, -1 when out of memory (message printed) or -2 on a write error (errno set). r may
 * be NULL.
 */
int folded_write(FILE *out, const struct stacks *s, const struct stacks *base, enum folded_negative neg,
                 struct folded_result *r);

#endif
