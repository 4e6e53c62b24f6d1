/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * dumpfmt.c - the table of dump formats (dumpfmt.h). Data only.
 */
#include "dumpfmt.h"

const struct dumpfmt_info dumpfmt_table[DUMPFMT_COUNT] = {
	{DUMP_HEAPV2, ".heap", "heap_v2"},
	{DUMP_PPROF, ".pb.gz", "pprof"},
	{DUMP_LEGACY, ".txt", "legacy"},
};
