/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * procsel.h - choosing the processes of a tree: LD_PRELOAD and HEAPTAP_CONF reach every process
 * a launch script starts, and this decides, once per process at option load, which of them
 * profile and which serve the HTTP port (docs/HTTP.md "Which process of a tree serves the
 * port", docs/OPTIONS.md prof_procs).
 *
 * Not the option parser (options.h) nor the HTTP server. No malloc; not thread-safe.
 */
#ifndef HEAPTAP_LIB_PROCSEL_H
#define HEAPTAP_LIB_PROCSEL_H

#include <stddef.h>

#include "options.h"

/*
 * Applies the rule to the parsed options o for this process's executable (/proc/self/exe):
 * with o->prof_procs set, a process whose executable matches none of its globs passes through
 * (prof, prof_prefix, prof_leak and http cleared); without it, a shell or a fork-and-wait
 * launcher (sh, bash, dash, zsh, timeout, tini, ...) profiles but never takes the HTTP port.
 * Returns 1 when the process is chosen, 0 when it passes through.
 */
int procsel_apply(struct options *o);

/* 1 when this process is the first of its session (getsid) and user to report that addr is
   taken: it then keeps a marker (an abstract Unix socket, close-on-exec) for its lifetime, so
   the other processes of a launch tree stay silent while it lives. 0 otherwise. */
int procsel_busy_first(const char *addr);

/* 1 when s matches the glob pat[0..n) ('*', '?', '[a-z]', '[!x]'; no escapes). */
int procsel_glob(const char *pat, size_t n, const char *s);

#endif
