/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * raw_read.h - reads jeprof's symbolized profile files (`jeprof --raw` output: a "--- symbol"
 * section of address -> names, then "--- heap" and a heap profile) into the profile model,
 * the symbols going to p->syms. The embedded profile is read by heapv2_read / legacy_read.
 * CLI only.
 */
#ifndef HEAPTAP_PROFILE_RAW_READ_H
#define HEAPTAP_PROFILE_RAW_READ_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"
#include "textscan.h"

/* Reads d[0..n) into p (initialised, empty). Returns 0, or -1 with "<name>:<line>: <what>". */
int raw_read(const uint8_t *d, size_t n, const char *name, struct profile *p, char *err, size_t errcap);

/* The same, continuing from ts whose current line is the "--- symbol" marker. */
int raw_read_scan(struct textscan *ts, struct profile *p, char *err, size_t errcap);

#endif
