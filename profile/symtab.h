/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * symtab.h - a table from lookup address to its resolved frames (struct prof_symbol).
 *
 * Filled by readers whose input carries symbols (pprof with functions, jeprof --raw files)
 * and by the symbolizer (cli/sym); read by every renderer. Each address is resolved once;
 * strings are interned in the table's own arena, so equal names share one pointer. CLI only.
 */
#ifndef HEAPTAP_PROFILE_SYMTAB_H
#define HEAPTAP_PROFILE_SYMTAB_H

#include "model.h"

struct prof_symtab *symtab_new(void);
void symtab_free(struct prof_symtab *t);

/* Returns the symbol of addr, or NULL if the address was never added. */
const struct prof_symbol *symtab_get(const struct prof_symtab *t, uint64_t addr);

/* Adds (or replaces) the frames of addr; frames[0] innermost. Strings are copied (interned).
   nframes may be 0 to record "looked up, unknown". */
void symtab_put(struct prof_symtab *t, uint64_t addr, const struct prof_frame *frames,
                uint32_t nframes, const char *module);

/* Interns a string in the table's arena; equal strings get the same pointer. */
const char *symtab_intern(struct prof_symtab *t, const char *s);

/* Number of addresses in the table. */
size_t symtab_count(const struct prof_symtab *t);
/* The i-th symbol added (i < symtab_count), for walking every address once. */
const struct prof_symbol *symtab_at(const struct prof_symtab *t, size_t i);

/* Adds every entry of src whose address dst does not hold yet (strings re-interned in dst). */
void symtab_merge(struct prof_symtab *dst, const struct prof_symtab *src);

#endif
