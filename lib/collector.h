/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * collector.h - heaptap's own profiler as a whole, as the C API and the control plane see it:
 * dump now (to a descriptor, a path, or under the prefix), the sampling switch and rate, the
 * reset, the statistics; and the same operations as a backend (backend.h).
 *
 * Every function initialises the sampling core first (core_init), so it works when called
 * before the library's constructor. Safe from any thread; may take the collector's locks, so
 * never from a signal handler nor with a collector lock held; never calls the host's malloc.
 */
#ifndef HEAPTAP_LIB_COLLECTOR_H
#define HEAPTAP_LIB_COLLECTOR_H

#include <stddef.h>

#include "../base/outbuf.h"
#include "backend.h"
#include "dumpfmt.h"

/* 1 if profiling is enabled (opt prof) and the tables exist. */
int collector_enabled(void);

/* A manual dump under prof_prefix (jemalloc's names); the first file's path copied to name
   when not NULL. 0, -ENOENT (off), -EINVAL (no prof_prefix), or -errno of the write. */
int collector_dump_manual(char *name, size_t cap);

/* The sampling switch (returns the old state), and the rate. */
int collector_set_active(int on);
int collector_active(void);
int collector_lg_sample(void);
/* Forgets the profile and sets the mean interval to 2^lg_sample (0..62), like prof.reset. */
int collector_reset(unsigned lg_sample);

/* heaptap's collector as a backend. */
extern const struct backend collector_backend;

#endif
