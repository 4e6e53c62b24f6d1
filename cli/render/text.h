/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * text.h - the jeprof --text report (FORMATS.md §3.3, byte for byte): the "Total:" line and
 * one "%8s %6s %6s %8s %6s %s" row per name. It formats what stacks.h computed; it does not
 * read profiles or decide what is kept.
 */
#ifndef HEAPTAP_CLI_RENDER_TEXT_H
#define HEAPTAP_CLI_RENDER_TEXT_H

#include <stdio.h>

#include "../common.h"
#include "../stacks.h"

/* Writes the report for s to f: "Total: <total> <unit>" (omitted when the total is 0), then the
   rows sorted as jeprof does (by flat, or by cum with a->cum_sort), at most max_rows of them
   (< 0: all). Returns 0, or -1 on a write error. */
int text_write_top(FILE *f, const struct common_args *a, const struct stacks *s, long max_rows);

#endif
