/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * svgutil.h - small text helpers shared by the SVG and HTML renderers: XML escaping that also
 * repairs what XML cannot carry (invalid UTF-8, control bytes), label truncation on character
 * boundaries, and number formatting for humans (thousands separators, binary units).
 * Not a general XML library: it only writes. CLI only; nothing here allocates.
 */
#ifndef HEAPTAP_CLI_RENDER_SVGUTIL_H
#define HEAPTAP_CLI_RENDER_SVGUTIL_H

#include <stddef.h>
#include <stdio.h>

/* Writes the first n bytes of s XML-escaped (&<>"' as entities). Bytes that are not valid
   UTF-8 and control bytes other than tab and newline become '?'. */
void svgutil_escape_n(FILE *out, const char *s, size_t n);
/* Same for a NUL-terminated string. */
void svgutil_escape(FILE *out, const char *s);

/* Number of characters (UTF-8 code points; invalid bytes count one each) in s. */
size_t svgutil_nchars(const char *s);
/* Byte length of the first nchars characters of s (all of s if it has fewer). */
size_t svgutil_prefix_bytes(const char *s, size_t nchars);

/* Writes the label of a frame of width_px: the whole name if it fits, else as many characters
   as fit followed by "..", or nothing when fewer than 3 characters fit. char_px is the width of
   one character. XML-escaped. */
void svgutil_label(FILE *out, const char *name, double width_px, double char_px);

/* Formats v rounded to an integer with thousands separators ("1,234,567", "-12"). out needs 32
   bytes. Returns out. */
char *svgutil_commas(char *out, double v);

/* Formats a byte count with binary units ("512 B", "1.5 KiB", "12.3 MiB", "-2.0 GiB"). out needs
   32 bytes. Returns out. */
char *svgutil_bytes(char *out, double v);

#endif
