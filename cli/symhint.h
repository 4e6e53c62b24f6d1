/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * symhint.h - after symbolizing, one stderr line per run on how to get the names that are
 * missing: which libraries' frames are shown as "<library>+0x<offset>", the distribution's
 * debug package for each when dpkg knows the file ("install zlib1g-dbgsym"), what to do for a
 * stripped file of the user's own, and DEBUGINFOD_URLS. Files that are missing or not stripped
 * are left to the symbolizer's warnings. It symbolizes nothing. CLI only: runs
 * `dpkg -S`, allocates.
 */
#ifndef HEAPTAP_CLI_SYMHINT_H
#define HEAPTAP_CLI_SYMHINT_H

#include "../profile/model.h"

/* Prints the hint for p's frames without a function name (not those in allocator libraries,
   which are trimmed), at most once per process. Nothing when every frame has a name. */
void symhint_print(const struct profile *p);

#endif
