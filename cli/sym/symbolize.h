/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * symbolize.h - turns the lookup addresses of a profile into functions, files and lines.
 *
 * For every mapping of the profile that holds a sampled address, the symbolizer finds the
 * ELF file (the binary given on the command line, matched by build ID or path; the mapping's
 * path under --lib-prefix / --sysroot; separate debug files by build ID and .gnu_debuglink;
 * debuginfod when DEBUGINFOD_URLS is set), reads its symbol table and DWARF once into sorted
 * indexes, and resolves each unique address once, inline chains included, names demangled
 * (C++, Rust legacy and v0). A file that is missing or does not match is reported once on
 * stderr ("heaptap: warning: ...") and its frames stay raw addresses. CLI only.
 */
#ifndef HEAPTAP_CLI_SYM_SYMBOLIZE_H
#define HEAPTAP_CLI_SYM_SYMBOLIZE_H

#include "../../profile/model.h"

struct sym_options {
	const char *binary;           /* the main program given by the user, or NULL */
	const char *const *lib_prefix;/* NULL-terminated list of directories (jeprof --lib_prefix), or NULL */
	const char *sysroot;          /* prepended to every mapping path, or NULL */
	int demangle;                 /* 1 (default) to demangle C++ and Rust names */
	int inlines;                  /* 1 (default) to expand inline frames */
	int quiet;                    /* 1: no warnings on stderr */
	const char *debug_root;       /* root of separate debug files (--debug-dir), or NULL for
	                                 $HEAPTAP_DEBUG_ROOT, else /usr/lib/debug */
	int no_lines;                 /* 1: frames that DWARF names get no file:line (no line table
	                                 is decoded): for reports that print function names only */
};

/* Fills o with the defaults: demangle and inlines on, everything else off / NULL.
   (symbolize_profile(p, NULL) uses the same defaults.) */
void symbolize_options_init(struct sym_options *o);

/*
 * Resolves every address of p that p->syms does not already hold, adding the results to
 * p->syms (created when NULL). Addresses that cannot be resolved get an entry with no frames.
 * Returns 0, or -1 after an error that stopped everything (a message was printed).
 */
int symbolize_profile(struct profile *p, const struct sym_options *opt);

#endif
