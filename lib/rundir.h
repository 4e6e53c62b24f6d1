/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rundir.h - the process's private run directory, "$TMPDIR/heaptap.<pid>.XXXXXX" (mkdtemp:
 * mode 0700, an unpredictable name), created on first use: where the control plane keeps the
 * files of a Mesos-style run and where jemalloc's profiler is asked to dump before heaptap
 * serves the file. Not the dump prefix of automatic dumps (prof_prefix). Creation is
 * thread-safe (the HTTP thread and the dump paths both use it); no malloc.
 */
#ifndef HEAPTAP_LIB_RUNDIR_H
#define HEAPTAP_LIB_RUNDIR_H

#include <stddef.h>

/* The directory, created on first use; NULL (errno set) when it cannot be created. */
const char *rundir_get(void);

/* Writes "<rundir>/<name>" into dst (cap bytes). Returns dst, or NULL when the directory
   cannot be created or the path does not fit. */
char *rundir_path(char *dst, size_t cap, const char *name);

/* In a fork child: forgets the parent's directory (the child's pid names its own). */
void rundir_fork_child(void);

#endif
