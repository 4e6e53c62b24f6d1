/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * attrs.h - the compiler attributes the collector's code is marked with: the section that
 * holds the profiler's own frames (stripped from every captured stack), branch hints, and
 * the visibility of the few symbols the library exports. Definitions only; no code.
 */
#ifndef HEAPTAP_LIB_ATTRS_H
#define HEAPTAP_LIB_ATTRS_H

/* Code of the profiler's own frames: stripped from the front of every captured stack. */
#define HEAPTAP_TEXT __attribute__((section("heaptap_text"), noinline))
/* A symbol libheaptap.so exports (lib/heaptap.map lists them; everything else is hidden). */
#define HEAPTAP_EXPORT __attribute__((visibility("default")))

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

#endif
