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
#include <stdint.h>
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

/* The distinct name paths of one profile (and of its base), gathered while stacks_build streams
   the traces (stacks_options.each = folded_sink_add, each_ctx = a sink): memory grows with the
   distinct paths and their frames, not with the samples. */
struct folded_set;
struct folded_sink {
	struct folded_set *set;
	int side; /* 0: the profile, 1: the base */
};

/* A new, empty set (out of memory ends the process, as in stacks.c). */
struct folded_set *folded_set_new(void);
/* The sink of the profile (base 0) or of the base (base 1). Stream the profile first. */
struct folded_sink *folded_set_sink(struct folded_set *fs, int base);
/* The stacks_options.each callback: ctx is a folded_sink. */
void folded_sink_add(void *ctx, const uint32_t *frames, uint32_t nframes, double value,
                     const struct prof_sample *sample);
void folded_set_free(struct folded_set *fs);

/*
 * Writes the paths of fs to out; s (and base) are the stacks whose build streamed them (their
 * names). base NULL: one count per path (negatives as neg says). base set: two columns, the
 * base's count then s's, each clamped at 0, paths where both are 0 left out. Turns fs's keys
 * into ranks: write a set once. Returns 0, -1 when out of memory (message printed) or -2 on a
 * write error (errno set). r may be NULL.
 */
int folded_write(FILE *out, struct folded_set *fs, const struct stacks *s, const struct stacks *base,
                 enum folded_negative neg, struct folded_result *r);

#endif
