/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * elfsyms.h - the function symbols of one ELF file as a sorted array, for address look-ups
 * by binary search.
 *
 * Read once per file from .symtab (or .dynsym when the file is stripped); aliases at one
 * address collapse into the best name (global over weak over local, sized over unsized).
 * It knows nothing of DWARF, mappings or demangling. CLI only: it allocates.
 */
#ifndef HEAPTAP_CLI_SYM_ELFSYMS_H
#define HEAPTAP_CLI_SYM_ELFSYMS_H

#include <gelf.h>
#include <stddef.h>
#include <stdint.h>

struct elfsym {
	uint64_t start;   /* st_value: a link-time virtual address */
	uint64_t size;    /* 0 when the symbol table did not say */
	uint64_t end;     /* start + size, or for an unsized symbol the end of its section */
	const char *name; /* points into the Elf's string table: valid while the Elf is open */
};

struct elfsyms {
	struct elfsym *v; /* sorted by start, one per address */
	size_t n;
	int from_dynsym;  /* 1 when only .dynsym was available */
};

/* Fills s (caller-owned) with the function symbols of elf. Returns the number of symbols,
   0 when elf has no usable symbol table (s is still valid and empty). */
size_t elfsyms_load(struct elfsyms *s, Elf *elf);

/* Frees what elfsyms_load allocated and leaves s empty. */
void elfsyms_release(struct elfsyms *s);

/* Returns the symbol containing vaddr, or NULL: the last symbol starting at or below vaddr,
   when vaddr lies below its end. */
const struct elfsym *elfsyms_lookup(const struct elfsyms *s, uint64_t vaddr);

#endif
