/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * heapv2_write.h - writes one collector snapshot (struct dump_source) as a jemalloc heap_v2
 * text profile that stock jeprof reads (FORMATS.md §1.1), followed by heaptap's metadata
 * comment lines.
 *
 * In-process: no malloc, no stdio, no locks; all output goes through the caller's outbuf.
 * Not a reader (profile/ readers parse these files in the CLI).
 */
#ifndef HEAPTAP_PROFILE_HEAPV2_WRITE_H
#define HEAPTAP_PROFILE_HEAPV2_WRITE_H

#include "../../base/outbuf.h"
#include "dumpsrc.h"

/*
 * Appends the whole profile to ob: the "heap_v2/<R>" header with the process total, one
 * "@ <pcs>" record per stack with jemalloc-style pre-compensated counts (unbias.h), an empty
 * line, "MAPPED_LIBRARIES:", src->maps_text verbatim, then "# heaptap: ..." metadata lines.
 * Frame 0 is written as pcs[0] - 1 (jeprof adjusts only the other frames). Stacks whose
 * printed counts are all zero are omitted. Calls src->for_each_stack twice. Returns 0, or
 * -errno from the outbuf (ob->err) when a write failed.
 */
int heapv2_write(const struct dump_source *src, struct outbuf *ob);

/* Appends one count line "  t*: <objs>: <bytes> [<aobjs>: <abytes>]\n" for unbiased values. */
void heapv2_write_counts(struct outbuf *ob, uint64_t period, double objs, double nbytes,
                         double aobjs, double abytes);

#endif
