/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * legacy_read.h - reads the gperftools / tcmalloc / Go `heap profile:` text format (HEAPPROFILE
 * dumps, tcmalloc heap samples, Go's debug=1 heap output, growth profiles) into the profile
 * model with jeprof's scaling rules (FORMATS.md §2.2). jemalloc's threaded heap_v2 format is
 * heapv2_read.h's. CLI only.
 */
#ifndef HEAPTAP_PROFILE_LEGACY_READ_H
#define HEAPTAP_PROFILE_LEGACY_READ_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"
#include "textscan.h"

/*
 * Reads d[0..n) (leading '%' lines and a "--- heap"/"--- growth" marker allowed) into p, which
 * must be initialised and empty. Returns 0, or -1 with "<name>:<line>: <what>" in err.
 */
int legacy_read(const uint8_t *d, size_t n, const char *name, struct profile *p, char *err, size_t errcap);

/* The same, continuing from ts whose current line is the "heap profile:" header. */
int legacy_read_scan(struct textscan *ts, struct profile *p, char *err, size_t errcap);

#endif
