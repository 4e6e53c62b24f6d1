/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * check.h - the assertion every unit test uses: CHECK(cond, "fmt", ...) counts a failed
 * condition and prints file:line, the condition and the message to stderr, and check_finish()
 * ends main with the count and the exit status. It is not a test framework: no registration,
 * fixtures or early exit, and it is included by one test file per binary (it defines state).
 */
#ifndef HEAPTAP_TESTS_UNIT_CHECK_H
#define HEAPTAP_TESTS_UNIT_CHECK_H

#include <stdio.h>

static int failures;

/* The message is a string literal, optionally with printf arguments; it may be left out. */
#define CHECK(cond, ...)                                                                      \
	do {                                                                                  \
		if (!(cond)) {                                                                \
			failures++;                                                           \
			fprintf(stderr, "%s:%d: check failed: %s", __FILE__, __LINE__, #cond); \
			fprintf(stderr, ": " __VA_ARGS__);                                    \
			fputc('\n', stderr);                                                  \
		}                                                                             \
	} while (0)

/* Prints "<name>: all checks passed" or the failure count; returns main's exit status. */
static inline int check_finish(const char *name)
{
	if (failures) {
		fprintf(stderr, "%s: %d checks failed\n", name, failures);
		return 1;
	}
	printf("%s: all checks passed\n", name);
	return 0;
}

#endif
