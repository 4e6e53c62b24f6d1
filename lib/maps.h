/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * maps.h - the process's memory map for dumps: /proc/self/maps verbatim plus the executable
 * file mappings parsed out of it with their GNU build IDs (from the loaded objects' PT_NOTE
 * segments via dl_iterate_phdr), and the objects dlclose'd since start. An unloaded object's
 * executable segments get synthetic addresses no process can map (from 2^62, a 64 GiB slot
 * per segment); the collector moves the frames it holds into them when the object is closed
 * (core.c), and later dumps carry a maps line and mapping with the object's path, file offset
 * and build ID at those addresses. A library dlopen'ed later where the closed one was is
 * therefore never confused with it: old frames resolve through the synthetic mapping, new
 * ones through the live map.
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

/* One unloaded segment: frames in [start, limit) move to to + (pc - start). */
struct maps_remap {
	uint64_t start, limit, to;
};

/* Records the executable segments and build ID of the loaded object behind a dlopen handle,
   before it is closed, and writes up to cap of their moves to out; returns how many. A segment
   recorded before (the same file at the same place, with the same build ID) keeps its
   synthetic addresses. Call with the reentrancy depth raised (dlinfo may set dlerror). */
size_t maps_note_unload(void *handle, struct maps_remap *out, size_t cap);

/* Where frame pc is after the moves r[0..n) (pc itself when none covers it). */
uintptr_t maps_remap_pc(uintptr_t pc, const struct maps_remap *r, size_t n);

/* Number of unloaded objects recorded so far. */
size_t maps_unloaded_count(void);

/* Finds the GNU build ID in a loaded object's program headers; returns its length (0 when
   none) and copies up to cap bytes to out. */
size_t maps_build_id(uintptr_t base, const void *phdrs, int nphdr, uint8_t *out, size_t cap);

#endif
