/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * digits.h - the value of a digit character, for the hand-written number parsers inside the
 * collector (options, /proc/self/maps). Locale-free and table-free, unlike isxdigit/strtoull;
 * not a number parser itself.
 */
#ifndef HEAPTAP_BASE_DIGITS_H
#define HEAPTAP_BASE_DIGITS_H

/* Returns 0..15 for '0'-'9', 'a'-'f', 'A'-'F', and -1 for any other character. */
static inline int digit_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

#endif
