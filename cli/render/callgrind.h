/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * callgrind.h - display stacks (cli/stacks.h) in the callgrind format that jeprof --callgrind
 * writes and KCachegrind / QCachegrind read: "events: Hits", then per function its self cost
 * (fn= / "0 COST") and one call record per callee (cfn= / calls= / inclusive cost). Costs are
 * the selected value, truncated to integers. It neither loads nor names. CLI only: allocates.
 */
#ifndef HEAPTAP_CLI_RENDER_CALLGRIND_H
#define HEAPTAP_CLI_RENDER_CALLGRIND_H

#include <stdio.h>

#include "../stacks.h"

/* Writes s to out. Returns 0, or -1 on a write error (errno set). */
int callgrind_write(FILE *out, const struct stacks *s);

#endif
