/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * memline.h - the one explained line about a process's memory that `run`, `top` and `report`
 * print from a dump's memory figures (profile/inproc/memfacts.h): the sampled heap, what the
 * allocator holds (in use, free, trimmable), the resident set, swap and the cgroup's limit.
 *
 * Formatting only: it reads nothing and allocates nothing. Not the collector's accounting
 * (lib/memacct.c) nor the report's chart (render/report.c).
 */
#ifndef HEAPTAP_CLI_MEMLINE_H
#define HEAPTAP_CLI_MEMLINE_H

#include <stddef.h>

#include "../profile/inproc/memfacts.h"

/* "1.5 MiB" (whole numbers without ".0" when whole != 0). */
void memline_bytes(double v, char *buf, size_t cap, int whole);

/* Writes "heap 96.0 MiB (sampled) · allocator holds 140.0 MiB (44.0 MiB free, of which
   3.0 MiB trimmable) · RSS 180.0 MiB · limit 256.0 MiB (cgroup uses 200.0 MiB)" into buf;
   parts whose figures are unknown are left out. Returns 0, or -1 when m has no figures. */
int memline_format(const struct memfacts *m, char *buf, size_t cap);

#endif
