/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * elffile.h - an ELF file on disk mapped read-only, and its symbol tables (.symtab and
 * .dynsym) walked in place: what the collector needs to find functions that a program links
 * statically and does not export (jemalloc's mallctl under any prefix), and to name the
 * addresses of loaded objects.
 *
 * Not a symbolizer (no DWARF, no sorting, no demangling) and not a general ELF parser: 64-bit
 * little-endian files only; everything else reads as "no symbols". It never allocates from
 * the heap (the file is mmap'd, open/fstat/mmap are plain system calls), keeps no global
 * state and is safe inside a host process; not async-signal-safe (mmap is, but callers are not).
 */
#ifndef HEAPTAP_BASE_ELFFILE_H
#define HEAPTAP_BASE_ELFFILE_H

#include <elf.h>
#include <stddef.h>
#include <stdint.h>

struct elffile {
	const unsigned char *data; /* the whole file, mapped read-only; NULL when not open */
	size_t len;
	uint64_t dev, ino;         /* the file's identity (fstat) */
};

/* One symbol table of a mapped file: entries and the string table their names index. */
struct elffile_symtab {
	const Elf64_Sym *syms;
	size_t nsyms;
	const char *strs;          /* NUL-terminated at strs[nstrs - 1] */
	size_t nstrs;
};

/* Maps the regular file at path. Returns 0, or -errno (-ENOEXEC when it is not a 64-bit
   little-endian ELF file with section headers). */
int elffile_open(struct elffile *f, const char *path);

/* Unmaps it (f may be unopened). */
void elffile_close(struct elffile *f);

/* Finds the section of type SHT_SYMTAB or SHT_DYNSYM and its string table, bounds checked.
   Returns 0 and fills t, or -1 when the file has no such usable table. */
int elffile_symtab(const struct elffile *f, unsigned type, struct elffile_symtab *t);

/* The name of t->syms[i], or NULL when its offset lies outside the string table. */
const char *elffile_sym_name(const struct elffile_symtab *t, size_t i);

/* 1 when t->syms[i] is a function (or ifunc) defined in this file at a nonzero address. */
int elffile_sym_is_func(const struct elffile_symtab *t, size_t i);

#endif
