/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * demangle.c - symbol name demangling for the symbolizer, over libiberty's cplus_demangle.
 *
 * libiberty's automatic style tries Rust first (legacy names overlap with C++'s `_ZN`, and
 * it drops the `17h<hash>` suffix unless asked to be verbose), then the Itanium C++ ABI, and
 * decodes Rust v0 `_R` names. This file only chooses the flags and filters out what is not
 * a mangled name; it is not a demangler.
 */
#include "demangle.h"

#include <libiberty/demangle.h>
#include <stdlib.h>
#include <string.h>

int demangle_is_mangled(const char *name)
{
	if (!name)
		return 0;
	if (name[0] == '_' && (name[1] == 'Z' || name[1] == 'R'))
		return 1;
	/* Some targets prefix an extra underscore (Mach-O style). */
	return name[0] == '_' && name[1] == '_' && name[2] == 'Z';
}

char *demangle_name(const char *name)
{
	if (!demangle_is_mangled(name))
		return NULL;
	const char *m = name[1] == '_' ? name + 1 : name;
	char *d = cplus_demangle(m, DMGL_PARAMS | DMGL_ANSI);
	if (!d && m[1] == 'R')
		d = cplus_demangle(m, DMGL_PARAMS | DMGL_ANSI | DMGL_RUST);
	return d;
}
