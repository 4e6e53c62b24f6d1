/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * demangle.h - turns linker symbol names into the names programmers wrote: C++ (Itanium
 * ABI), Rust legacy (`_ZN...17h<hash>E`, hash dropped as rustfilt does) and Rust v0 (`_R`).
 *
 * A thin wrapper over libiberty's demangler; it does not cache (callers resolve each name
 * once) and does not know about DWARF or ELF. CLI only: it allocates.
 */
#ifndef HEAPTAP_CLI_SYM_DEMANGLE_H
#define HEAPTAP_CLI_SYM_DEMANGLE_H

/*
 * Returns a newly malloc'd demangled form of name (with parameter lists, as `addr2line -C`
 * and `c++filt` print them), or NULL when name is not a mangled name this knows (the caller
 * then keeps name as is). The caller frees the result.
 */
char *demangle_name(const char *name);

/* Returns 1 when name looks mangled (starts with _Z, _R or __Z), else 0. Cheap. */
int demangle_is_mangled(const char *name);

#endif
