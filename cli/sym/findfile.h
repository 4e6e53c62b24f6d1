/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * findfile.h - where the files of a profile's mappings and their separate debug info may be:
 * the mapping's path re-rooted under --lib-prefix / --sysroot (jeprof's order), the debug
 * root's .build-id tree, .gnu_debuglink places, and a debuginfod server.
 *
 * It generates candidate paths and fetches from debuginfod; it does not open or check ELF
 * files (symfile.c does). debuginfod is optional: libdebuginfod.so.1 is loaded with dlopen
 * only when DEBUGINFOD_URLS is set, so the CLI runs without it. CLI only: it allocates.
 */
#ifndef HEAPTAP_CLI_SYM_FINDFILE_H
#define HEAPTAP_CLI_SYM_FINDFILE_H

#include <stddef.h>

/* The default root of separate debug files; HEAPTAP_DEBUG_ROOT overrides it. */
#define FINDFILE_DEBUG_ROOT "/usr/lib/debug"

/* Callback for candidate paths: return nonzero to stop (that value is returned). */
typedef int (*findfile_fn)(void *ctx, const char *path);

/*
 * Calls fn for each place the file of mapping path may be: for /a/b/x.so and prefixes P, Q:
 * P/a/b/x.so, Q/a/b/x.so, P/b/x.so, Q/b/x.so, P/x.so, Q/x.so, then sysroot/a/b/x.so when a
 * sysroot is given, else /a/b/x.so itself. A " (deleted)" suffix is dropped. Returns the first
 * nonzero value fn returned, or 0.
 */
int findfile_each_candidate(const char *path, const char *const *lib_prefix, const char *sysroot,
                            findfile_fn fn, void *ctx);

/*
 * Calls fn for each place a separate debug file of elf_path may be, best first:
 * <root>/.build-id/xx/rest.debug (when build_id_hex is given), then for a .gnu_debuglink name L:
 * dir/L, dir/.debug/L, <root>/dir/L; then <root>/elf_path and <root>/elf_path.debug (jeprof).
 * build_id_hex and link may be NULL.
 */
int findfile_each_debug(const char *elf_path, const char *build_id_hex, const char *link,
                        const char *root, findfile_fn fn, void *ctx);

/* The debug root: root_opt when given (--debug-dir), else HEAPTAP_DEBUG_ROOT when set and
   non-empty, else FINDFILE_DEBUG_ROOT. */
const char *findfile_debug_root(const char *root_opt);

/* debuginfod's wait per file unless DEBUGINFOD_TIMEOUT is set (seconds, libdebuginfod's
   connect and no-progress timeouts), and the total wait of one run unless
   HEAPTAP_DEBUGINFOD_BUDGET is set (seconds). */
#define FINDFILE_DEBUGINFOD_TIMEOUT "5"
#define FINDFILE_DEBUGINFOD_BUDGET_S 30.0

/*
 * Asks the debuginfod servers in DEBUGINFOD_URLS for the debug file (executable = 0) or the
 * executable (executable = 1) with this build ID. Returns a file descriptor open for reading
 * and sets *path (malloc'd, caller frees) to the cached copy, or returns -1 when
 * DEBUGINFOD_URLS is unset, libdebuginfod is missing, or the servers do not have it.
 * Waits at most FINDFILE_DEBUGINFOD_TIMEOUT per file and FINDFILE_DEBUGINFOD_BUDGET_S per run
 * (then it asks no more); says on stderr when a query takes over a second ("heaptap:
 * debuginfod: waiting for ...") and when one fails other than by "not found" (a warning).
 */
int findfile_debuginfod(const char *build_id_hex, int executable, char **path);

/* Releases the debuginfod client, if one was created. */
void findfile_cleanup(void);

#endif
