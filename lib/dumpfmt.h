/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * dumpfmt.h - the formats a dump can be written in: one table with each format's option bit
 * (HEAPTAP_CONF prof_format), its file extension and its name. Data only; the writers are in
 * profile/ (heapv2_write, pprof_write, legacy_write), the choice in dump.c.
 */
#ifndef HEAPTAP_LIB_DUMPFMT_H
#define HEAPTAP_LIB_DUMPFMT_H

enum dump_format {
	DUMP_HEAPV2 = 1,   /* jemalloc heap_v2 text (jeprof) */
	DUMP_PPROF = 2,    /* gzipped pprof protobuf (go tool pprof) */
	DUMP_LEGACY = 4,   /* gperftools "heap profile: ... @ heap_v2/R" text (Go ?debug=1) */
};

struct dumpfmt_info {
	enum dump_format bit;
	const char *ext;   /* file name extension, with its dot */
	const char *name;  /* as in prof_format */
};

#define DUMPFMT_COUNT 3
extern const struct dumpfmt_info dumpfmt_table[DUMPFMT_COUNT];

/* The longest path a dump file may have (prefix, pid, sequence, letter, extension, NUL). */
#define DUMP_PATH_MAX 640

#endif
