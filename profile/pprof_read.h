/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pprof_read.h - reads a pprof profile.proto heap profile (gzipped or not) into the
 * analyzer's model: samples with their location addresses, mappings with build IDs, period,
 * time, and the functions and lines the profile carries (into p->syms).
 *
 * The decoder is strict but safe: every length is checked against the buffer, every index
 * against its table, so any byte string is either a profile or an error naming the byte
 * offset. It is not a general protobuf decoder and does not read CPU or other non-heap
 * profiles. CLI only: it allocates (the decompressed bytes, the model).
 */
#ifndef HEAPTAP_PROFILE_PPROF_READ_H
#define HEAPTAP_PROFILE_PPROF_READ_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

/*
 * Decodes data[0..n) into p (profile_init'ed by the caller, normally empty). Data starting
 * with 1f 8b is gunzipped first (offsets in messages then count in the decompressed bytes).
 * Sample types map by name: inuse_objects, inuse_space, alloc_objects, alloc_space; the
 * 2-type legacy objects/space pair maps to inuse; other types are ignored, and a profile
 * with none of them is refused ("not a heap profile (sample types: cpu/nanoseconds, ...)").
 * p->has_alloc is set when some sample has a nonzero alloc value (heaptap dumps taken
 * without prof_accum carry the alloc types with zeros).
 * A location's address is used as the lookup address as is (pprof stores return address - 1);
 * a location without an address gets a unique synthetic one whose frames go into p->syms.
 * Lines are inline chains, callee first, as prof_symbol.frames. Comments written by
 * pprof_write ("heaptap: pid=...", "cmdline=", "exe=") fill pid, cmdline and exe_path.
 * Returns 0, or -1 with a message "byte offset N: <what>" (or a description of why the
 * profile is refused) in err[0..errcap). On failure p may hold part of the input; the
 * caller releases it as usual.
 */
int pprof_read(const uint8_t *data, size_t n, struct profile *p, char *err, size_t errcap);

/* 1 if data looks like a pprof profile: gzip magic, or up to 8 leading fields whose keys
   have the wire type profile.proto gives their field number (the first one fitting in n).
   Text profiles fail at once ("heap..." decodes as field 13 then field 12 with wire type 1;
   "--- " and "%" as wire type 5). A cheap test for format detection. */
int pprof_read_sniff(const uint8_t *data, size_t n);

/* Synthetic addresses (locations without an address) start here. */
#define PPROF_READ_SYNTH_BASE 0xfffff00000000000ull

#endif
