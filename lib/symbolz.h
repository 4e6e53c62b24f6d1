/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * symbolz.h - in-process address -> function name look-up for /pprof/symbol: for each
 * object the dynamic loader has mapped, the ELF symbol table (.symtab, else .dynsym) of its
 * file, read once into a sorted array and searched by binary search.
 *
 * It is not a symbolizer: no DWARF, no inline frames, no demangling (jeprof pipes names
 * through c++filt; go pprof takes them verbatim). It never calls malloc: files are mapped
 * read-only with mmap and the sorted arrays live in mmap'd memory, cached until the object
 * is unloaded. Not thread-safe: one thread (the HTTP server's) calls it. Not signal-safe
 * (dl_iterate_phdr takes the loader's lock).
 */
#ifndef HEAPTAP_LIB_SYMBOLZ_H
#define HEAPTAP_LIB_SYMBOLZ_H

#include <stddef.h>
#include <stdint.h>

/*
 * Takes a snapshot of the loaded objects (dl_iterate_phdr) and loads the symbol tables of
 * new ones. Call before a batch of look-ups. Returns the number of objects with symbols.
 */
int symbolz_begin(void);

/*
 * Returns the name of the function containing addr (a runtime address in this process), or
 * NULL when no loaded object's symbol table covers it. The string stays valid until the next
 * symbolz_begin.
 */
const char *symbolz_lookup(uintptr_t addr);


#endif
