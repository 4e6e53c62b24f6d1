/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * legacy_write.h - writes a dump_source as gperftools' legacy heap profile text,
 * `heap profile: N: B [AN: AB] @ heap_v2/R`, one `n: b [an: ab] @ 0x.. 0x..` line per stack
 * (leaf first, return addresses as unwound) and the MAPPED_LIBRARIES section. This is what
 * Go's `net/http/pprof` serves for `?debug=1` and what `go tool pprof` and jeprof read.
 *
 * The counts are not the unbiased estimates themselves: like jemalloc's heap_v2 dumps they
 * are pre-images chosen so that the reader's per-record Poisson scaling,
 * n' = n / (1 - exp(-(b/n)/R)), gives back the unbiased values. Runs inside the host: no
 * malloc, no stdio; output goes through the caller's outbuf. Not async-signal-safe (it
 * calls the source's for_each_stack).
 */
#ifndef HEAPTAP_PROFILE_LEGACY_WRITE_H
#define HEAPTAP_PROFILE_LEGACY_WRITE_H

#include <stdint.h>

#include "../../base/outbuf.h"
#include "dumpsrc.h"

/* Appends the whole profile to ob (errors are sticky in ob). */
void legacy_write(const struct dump_source *src, struct outbuf *ob);

/*
 * The pre-image of an unbiased (objs, bytes) pair for a reader that scales each record by
 * 1/(1 - exp(-avg/R)): unbias_precompensate's bytes' = round(bytes * (1 - exp(-avg/R))),
 * objs' = round(bytes'/avg) with avg = bytes/objs (a pair rounding to 0 objects prints as
 * 0: 0, as jemalloc does; that only happens for estimates below one expected sample). A
 * pair with 0 objects but some bytes is never returned, because go tool pprof rejects the
 * whole file for one. With R <= 1 the values are only rounded. Non-positive, non-finite or
 * absurdly large inputs give (0, 0).
 */
void legacy_write_precompensate(double objs, double bytes, uint64_t period,
                                uint64_t *out_objs, uint64_t *out_bytes);

#endif
