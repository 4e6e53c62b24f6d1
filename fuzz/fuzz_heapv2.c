/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz_heapv2.c - fuzz target for the heap_v2 reader (profile/heapv2_read.c): any bytes must
 * either read into a consistent model or fail with a message, never crash or leak. The model
 * operations every command uses (compact, merge, subtract, unique addresses, mapping look-up)
 * run on the result too. Built for libFuzzer (make fuzz) and replayed by make check.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../profile/heapv2_read.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct profile p;
	char err[256];
	profile_init(&p);
	if (heapv2_read(data, size, "fuzz.heap", &p, err, sizeof err) == 0)
		fuzz_exercise_model(&p);
	else
		fuzz_check_error(err, "fuzz.heap:");
	profile_release(&p);
	return 0;
}
