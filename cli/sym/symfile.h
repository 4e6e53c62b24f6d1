/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * symfile.h - one ELF object the symbolizer reads: the file a mapping came from (found by
 * path, build ID or debuginfod), its separate debug file if any, its load segments, and the
 * symbol and DWARF indexes built over them.
 *
 * A symfile answers "frames of this link-time address" and "link-time address of this
 * runtime address in this mapping". It does not know about profiles or print anything; the
 * caller reports failures. CLI only: it allocates and keeps the files open until freed.
 */
#ifndef HEAPTAP_CLI_SYM_SYMFILE_H
#define HEAPTAP_CLI_SYM_SYMFILE_H

#include "dwarfidx.h"

#include <stddef.h>
#include <stdint.h>

struct symfile;

struct symfile_cfg {
	const char *const *lib_prefix; /* NULL-terminated, or NULL */
	const char *sysroot;           /* or NULL */
	const char *debug_root;        /* root of separate debug files (never NULL) */
	int demangle;                  /* 1 to demangle names */
	int no_lines;                  /* 1: names only, no file:line (dwarfidx_set_lines) */
};

/*
 * Finds and opens the file of a mapping. exact: a path the user named (the main program):
 * only that file is tried. Otherwise map_path is searched under the lib prefixes / sysroot,
 * then (when build_id is known) the debug root's .build-id tree and debuginfod. build_id:
 * lowercase hex the file must carry, or NULL to accept any. Returns the file, or NULL with a
 * reason in why ("not found", "build ID mismatch (...)").
 */
struct symfile *symfile_open(const char *map_path, const char *exact, const char *build_id,
                             const struct symfile_cfg *cfg, char *why, size_t whylen);
void symfile_free(struct symfile *f);

/* Reads the GNU build ID of the ELF file at path as lowercase hex into out (at least 129
   bytes). Returns 0, or -1 when the file is unreadable or has no build ID (out = ""). */
int symfile_read_build_id(const char *path, char *out, size_t outlen);

/* The path opened (the ELF, or the debug file standing in for a missing one). */
const char *symfile_path(const struct symfile *f);
/* Something about the file the caller should warn about although it opened (a debug section
   that would decompress to more than 32 times its size, so its DWARF was not read), or NULL. */
const char *symfile_note(const struct symfile *f);
/* Where the DWARF came from (the file itself, a debug file), or NULL when there is none. */
const char *symfile_debug_path(const struct symfile *f);

/*
 * The link-time address of runtime address addr inside a mapping [start, ...) at file
 * offset offset: through the PT_LOAD segment holding that file offset. Returns 0, or -1 when
 * no segment holds it.
 */
int symfile_vaddr(const struct symfile *f, uint64_t start, uint64_t offset, uint64_t addr,
                  uint64_t *vaddr);
/* The i-th PT_LOAD segment's link-time start and size in memory. Returns 0, or -1 when there
   are not that many. */
int symfile_segment(const struct symfile *f, size_t i, uint64_t *vaddr, uint64_t *memsz);
/* 1 when link-time address vaddr lies inside one of the file's PT_LOAD segments. */
int symfile_contains(const struct symfile *f, uint64_t vaddr);

/*
 * Resolves link-time address vaddr into out[0..max) (innermost first, as dwarfidx_lookup),
 * DWARF first, the ELF symbol table for what DWARF does not cover. inlines = 0 keeps only
 * the outermost frame. Returns the number of frames, 0 when nothing is known. Strings stay
 * valid until symfile_free.
 */
int symfile_resolve(struct symfile *f, uint64_t vaddr, struct dwarfidx_frame *out, int max,
                    int inlines);

/* Statistics for the timing report: symbols read, and the DWARF index's counters (all 0
   without DWARF). */
void symfile_stats(const struct symfile *f, size_t *nsyms, struct dwarfidx_stats *st);

#endif
