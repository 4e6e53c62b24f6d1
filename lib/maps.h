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

#define MAPS_PATH_MAX 384
#define MAPS_UNLOAD_SEGS 8

/* An object about to be closed: its path, build ID and executable segments. */
struct maps_unload {
	char path[MAPS_PATH_MAX];
	uint8_t build_id[64];
	uint32_t build_id_len;
	size_t nseg;
	struct {
		uint64_t start, limit, offset;
	} seg[MAPS_UNLOAD_SEGS];
};

/* Before dlclose(handle): reads the object's path, build ID and executable segments into u.
   Returns 1 when there is something to record. Call with the reentrancy depth raised (dlinfo
   may set dlerror). */
int maps_note_unload(void *handle, struct maps_unload *u);

/* After the real dlclose: when no loaded object maps u's segments any more (the close really
   unloaded it, and nothing took its place yet), records them for later dumps at synthetic
   addresses and writes up to cap moves to out; returns how many (0: nothing moves). A segment
   recorded before (the same file at the same place, with the same build ID) keeps its
   synthetic addresses. Thread-safe, lock-free; no host malloc. */
size_t maps_commit_unload(const struct maps_unload *u, struct maps_remap *out, size_t cap);

/* Where frame pc is after the moves r[0..n) (pc itself when none covers it). */
uintptr_t maps_remap_pc(uintptr_t pc, const struct maps_remap *r, size_t n);

/* Number of unloaded objects recorded so far. */
/* Segments of unloaded objects left at their addresses because the table of unloaded objects
   was full (their frames may then be charged to a library loaded there later). */
uint64_t maps_unloads_unmoved(void);
size_t maps_unloaded_count(void);

/* Finds the GNU build ID in a loaded object's program headers; returns its length (0 when
   none) and copies up to cap bytes to out. */
size_t maps_build_id(uintptr_t base, const void *phdrs, int nphdr, uint8_t *out, size_t cap);

#endif
