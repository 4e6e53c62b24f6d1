/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * dwarfidx.h - an address index over one file's DWARF: address -> inline chain of
 * functions with source files and lines, answered by binary search.
 *
 * Built lazily: the first address that falls in a compile unit lists the CU's top-level
 * functions (their DIEs are skipped, not entered); the first address that falls in one of
 * those functions walks its DIE tree ONCE (inlined subroutines with their nesting and call
 * sites) into a sorted array of disjoint address segments, each naming the innermost
 * function there. The CU's line table comes from libdw (dwarf_getsrclines, sorted once).
 * Per-address work is a few binary searches: no scope walks, no symbol-table scans. This does
 * not read ELF symbol tables, find files, or know about mappings. CLI only: it allocates; not
 * thread-safe.
 */
#ifndef HEAPTAP_CLI_SYM_DWARFIDX_H
#define HEAPTAP_CLI_SYM_DWARFIDX_H

#include <elfutils/libdw.h>
#include <stdint.h>

struct dwarfidx;

/* One resolved frame. Strings are owned by the index (function names) or by libdw (file
   names): valid until dwarfidx_free / dwarf_end. */
struct dwarfidx_frame {
	const char *func; /* NULL when no DWARF function covers the address */
	const char *file; /* NULL when the line table does not cover it */
	int line;         /* 0 when unknown */
	int linkage;      /* 1 when func came from a linkage (mangled) name, 0 for a plain
	                     DW_AT_name: the symbol table may then name the code better
	                     (main.cold, f.part.0), as binutils and llvm-symbolizer do */
};

/* Creates an index over dw (not owned: the caller ends dw after dwarfidx_free). demangle: 1
   to demangle linkage names. Reads only the CU headers; returns NULL on allocation failure. */
struct dwarfidx *dwarfidx_new(Dwarf *dw, int demangle);
/* lines 0: an address that a function DIE covers is answered without its file and line (file
   NULL, line 0, the call sites' too), so no CU's line table is ever decoded: for reports that
   print function names only. An address no function covers still gets the line table's
   file:line. Default 1. */
void dwarfidx_set_lines(struct dwarfidx *x, int lines);
void dwarfidx_free(struct dwarfidx *x);

/*
 * Resolves link-time address vaddr into out[0..max): out[0] is the innermost (inlined)
 * function with the line-table position, each next one its caller with the call site's
 * file:line, the last the function that contains the code. Returns the number of frames:
 * 0 when no compile unit covers vaddr; 1 with func NULL when a CU's line table covers it but
 * no function DIE does. With max too small the outermost frames are dropped.
 */
int dwarfidx_lookup(struct dwarfidx *x, uint64_t vaddr, struct dwarfidx_frame *out, int max);

/* Statistics for timing reports. */
struct dwarfidx_stats {
	size_t ncus, ncus_indexed;   /* compile units, and those whose functions were listed */
	size_t nfuncs, nfuncs_walked;/* functions listed, and those walked (hit by an address) */
	size_t nnodes;               /* functions and inline instances indexed */
};
void dwarfidx_stats(const struct dwarfidx *x, struct dwarfidx_stats *st);

#endif
