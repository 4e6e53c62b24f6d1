/*
 * jemalloc_backend.h - drives jemalloc's own profiler through mallctl when the host runs on
 * a jemalloc built with profiling and started with opt.prof (MALLOC_CONF=prof:true), so the
 * control plane serves jemalloc's dumps instead of heaptap's.
 *
 * It is not an allocator shim: it only looks up mallctl / malloc_stats_print (plain,
 * "_rjem_" or "je_" prefixed) with dlsym and calls them. Call jemalloc_backend_detect once
 * (it may allocate: dlsym); the other functions call into jemalloc, which allocates from its
 * own arenas, never through heaptap's interposer. Not async-signal-safe.
 */
#ifndef HEAPTAP_LIB_JEMALLOC_BACKEND_H
#define HEAPTAP_LIB_JEMALLOC_BACKEND_H

#include "../base/outbuf.h"
#include "backend.h"

/* Looks the symbols up (idempotent). Returns 1 when jemalloc's mallctl was found and
   opt.prof reads true (the backend is usable), else 0. */
int jemalloc_backend_detect(void);

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

/* Reads a bool mallctl (opt.prof, config.prof, ...). Returns 0/1 or -errno. */
int jemalloc_backend_bool(const char *name);

/* Reads a string mallctl (config.malloc_conf, opt.prof_prefix). Returns the string or NULL. */
const char *jemalloc_backend_string(const char *name);

/* Appends malloc_stats_print(..., "J") output (jemalloc's statistics JSON) to ob.
   Returns 0, or -ENOSYS when malloc_stats_print is missing. */
int jemalloc_backend_stats_json(struct outbuf *ob);

/* jemalloc's profiler as a backend (backend.h): heap_v2 only, dumped by prof.dump into the run
   directory (rundir.h) and copied from there; statistics from malloc_stats_print, else
   heaptap's. */
extern const struct backend jemalloc_backend;

#endif
