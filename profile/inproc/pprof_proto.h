/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pprof_proto.h - what the in-process pprof writers (the heap's pprof_write.c and the CPU's
 * cpu_pprof_write.c) write alike: profile.proto's field numbers (FORMATS.md 5.1), the string
 * table entries of the mappings (each mapping's path, then its build ID in hex) and the Mapping
 * messages that point at them, and the Location of a frame address with its mapping's id.
 *
 * Not a profile writer (no sample types, no samples, no compression) and not a reader. No
 * allocation, no stdio: runs inside the host.
 */
#ifndef HEAPTAP_PROFILE_INPROC_PPROF_PROTO_H
#define HEAPTAP_PROFILE_INPROC_PPROF_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "dumpsrc.h"
#include "pbwrite.h"

enum {
	P_SAMPLE_TYPE = 1, P_SAMPLE = 2, P_MAPPING = 3, P_LOCATION = 4, P_STRING = 6,
	P_TIME_NANOS = 9, P_DURATION_NANOS = 10, P_PERIOD_TYPE = 11, P_PERIOD = 12, P_COMMENT = 13,
	VT_TYPE = 1, VT_UNIT = 2,
	S_LOCATION_ID = 1, S_VALUE = 2, S_LABEL = 3,
	L_KEY = 1, L_NUM = 3, L_NUM_UNIT = 4,
	M_ID = 1, M_START = 2, M_LIMIT = 3, M_OFFSET = 4, M_FILENAME = 5, M_BUILD_ID = 6,
	LOC_ID = 1, LOC_MAPPING_ID = 2, LOC_ADDRESS = 3,
};

/* Writes two string table entries per mapping, in order: its path ("" when none) and its build
   ID as lowercase hex (at most 64 bytes of it; "" when none). */
void pprof_proto_mapping_strings(struct pbwrite *pb, const struct dump_mapping *maps, size_t n);

/* Writes the Mapping messages, ids 1..n; mapping i's strings are first_string + 2 i and
   first_string + 2 i + 1 (as pprof_proto_mapping_strings wrote them). */
void pprof_proto_mappings(struct pbwrite *pb, const struct dump_mapping *maps, size_t n,
                          uint64_t first_string);

/* Writes Location id for addr, with the id of the mapping holding it (none when no mapping
   does). */
void pprof_proto_location(struct pbwrite *pb, uint64_t id, uint64_t addr,
                          const struct dump_mapping *maps, size_t n);

#endif
