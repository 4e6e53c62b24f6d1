/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * maps.h - the process's memory map for dumps: /proc/self/maps verbatim plus the executable
 * file mappings parsed out of it with their GNU build IDs (from the loaded objects' PT_NOTE
 * segments via dl_iterate_phdr), and the objects dlclose'd since start, which later dumps
 * keep as synthetic maps lines so their frames stay symbolizable.
 *
 * A snapshot owns mmap'd buffers that it reuses across dumps; it is not thread-safe (dump.c
 * serialises dumps). maps_note_unload is thread-safe and lock-free. No host malloc.
 */
#ifndef HEAPTAP_LIB_MAPS_H
#define HEAPTAP_LIB_MAPS_H

#include <stddef.h>
#include <stdint.h>

#include "../profile/inproc/dumpsrc.h"

struct maps_snapshot {
	char *text;                  /* maps text + synthetic lines */
	size_t len, cap;
	struct dump_mapping *maps;   /* executable file mappings, main program first */
	size_t n, maps_cap;
	char *strs;                  /* paths and build IDs the mappings point into */
	size_t strs_used, strs_cap;
};

/* Reads the current map. exe_path identifies the main program. Returns 0 or -errno (the
   snapshot then holds whatever could be read). */
int maps_snapshot_take(struct maps_snapshot *s, const char *exe_path);

/* Records the executable segments and build ID of the loaded object behind a dlopen handle,
   before it is closed. Call with the reentrancy depth raised (dlinfo may set dlerror). */
void maps_note_unload(void *handle);

/* Number of unloaded objects recorded so far. */
size_t maps_unloaded_count(void);

/* Finds the GNU build ID in a loaded object's program headers; returns its length (0 when
   none) and copies up to cap bytes to out. */
size_t maps_build_id(uintptr_t base, const void *phdrs, int nphdr, uint8_t *out, size_t cap);

#endif
