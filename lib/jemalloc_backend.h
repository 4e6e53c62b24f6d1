/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * jemalloc_backend.h - drives jemalloc's own profiler through mallctl when the host runs on
 * a jemalloc built with profiling and started with opt.prof (MALLOC_CONF=prof:true), so the
 * control plane serves jemalloc's dumps instead of heaptap's.
 *
 * It is not an allocator shim: it finds <prefix>mallctl / <prefix>malloc_stats_print in the
 * symbol tables (.dynsym and .symtab, read from the files on disk: base/allocsym.h) of the
 * executable and the loaded libraries, exported or not, whatever the prefix ("", "je_",
 * "_rjem_", ...), and calls them. libheaptap.so itself is skipped. Call
 * jemalloc_backend_detect once (from start-up, inside tstate_enter); the other functions call
 * into jemalloc, which allocates from its own arenas, never through heaptap's interposer.
 * Not async-signal-safe.
 */
#ifndef HEAPTAP_LIB_JEMALLOC_BACKEND_H
#define HEAPTAP_LIB_JEMALLOC_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "../base/outbuf.h"

/* Looks the symbols up (idempotent). Returns 1 when jemalloc's mallctl was found and
   opt.prof reads true (the backend is usable), else 0. */
int jemalloc_backend_detect(void);

/* Says once on stderr what heaptap does with the program's allocator: profiling through its
   jemalloc; or, when that jemalloc cannot be driven (built without profiling, opt.prof false),
   exactly what to set (<PREFIX>MALLOC_CONF=prof:true,prof_active:false, the cargo feature);
   or that another private allocator (tcmalloc, mimalloc) in the executable hides the heap. */
void jemalloc_backend_explain(void);

/* The prefix of the jemalloc found ("", "je_", "_rjem_"). */
const char *jemalloc_backend_prefix(void);

/* 1 when pc lies in allocator machinery: jemalloc's own functions (the whole library when it
   is a shared one), Rust's global-allocator shims and the malloc family of the executable. */
int jemalloc_backend_is_machinery(uintptr_t pc);

/* 1 when mallctl was found at all (jemalloc is present), whatever opt.prof says. */
int jemalloc_backend_present(void);

/* 1 when the backend is usable (present and opt.prof true). */
int jemalloc_backend_enabled(void);

/* prof.active: sets it and returns the old value (0/1), or -errno. */
int jemalloc_backend_set_active(int on);
/* Returns prof.active (0/1), or -errno. */
int jemalloc_backend_active(void);

/* prof.dump to exactly path. Returns 0 or -errno. */
int jemalloc_backend_dump(const char *path);

/* prof.reset with a new lg_prof_sample. Returns 0 or -errno. */
int jemalloc_backend_reset(unsigned lg_sample);

/* prof.lg_sample, or -errno. */
int jemalloc_backend_lg_sample(void);

/* The jemalloc's mallctl itself, whatever its prefix: jemalloc's return value (0 or a
   positive errno), ENOENT when no jemalloc was found. */
int jemalloc_backend_ctl(const char *name, void *oldp, size_t *oldlenp, void *newp, size_t newlen);

/* Reads a bool mallctl (opt.prof, config.prof, ...). Returns 0/1 or -errno. */
int jemalloc_backend_bool(const char *name);

/* Reads a string mallctl (config.malloc_conf, opt.prof_prefix). Returns the string or NULL. */
const char *jemalloc_backend_string(const char *name);

/* Appends malloc_stats_print(..., "J") output (jemalloc's statistics JSON) to ob.
   Returns 0, or -ENOSYS when malloc_stats_print is missing. */
int jemalloc_backend_stats_json(struct outbuf *ob);

/* prof.dump, untouched, into a fresh file of the run directory (rundir.h) named
   jeprof.<pid>.<seq>.m.heap; its path copied to path (cap bytes). 0 or -errno. */
int jemalloc_backend_dump_manual(char *path, size_t cap);

#endif
