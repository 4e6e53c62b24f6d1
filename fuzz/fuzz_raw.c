/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz_raw.c - fuzz target for the jeprof --raw (symbolized profile) reader
 * (profile/raw_read.c): symbol section, inline chains and the embedded profile. Any bytes must
 * read consistently or fail naming the input. libFuzzer build: make fuzz; replayed by make check.
 */
#include <stdint.h>

#include "../profile/raw_read.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct profile p;
	char err[256];
	profile_init(&p);
	if (raw_read(data, size, "fuzz.raw", &p, err, sizeof err) == 0)
		fuzz_exercise_model(&p);
	else
		fuzz_check_error(err, "fuzz.raw:");
	profile_release(&p);
	return 0;
}
