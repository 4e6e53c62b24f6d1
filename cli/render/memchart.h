/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * memchart.h - the report's "Memory beside the heap" section: one SVG line chart of the
 * dumps' memory figures over time (sampled heap, what the allocator holds, RSS, the cgroup's
 * usage and limit) and the memory line of the last dump. CLI only; writes to a FILE, no
 * analysis. Not the heap chart (report.c) nor the figures (profile/inproc/memfacts.h).
 */
#ifndef HEAPTAP_CLI_RENDER_MEMCHART_H
#define HEAPTAP_CLI_RENDER_MEMCHART_H

#include <stdio.h>

#include "report.h"

/* Writes the section when at least one dump carries memory figures; else nothing. */
void memchart_write(FILE *out, const struct report_input *in);

#endif
