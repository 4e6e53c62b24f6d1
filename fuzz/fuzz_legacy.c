/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz_legacy.c - fuzz target for the `heap profile:` reader (profile/legacy_read.c): any bytes
 * must read into a consistent model or fail with a message naming the input; the model
 * operations run on the result (fuzz_common.h). libFuzzer build: make fuzz; replayed by make check.
 */
#include <stdint.h>

#include "../profile/legacy_read.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct profile p;
	char err[256];
	profile_init(&p);
	if (legacy_read(data, size, "fuzz.heap", &p, err, sizeof err) == 0)
		fuzz_exercise_model(&p);
	else
		fuzz_check_error(err, "fuzz.heap:");
	profile_release(&p);
	return 0;
}
