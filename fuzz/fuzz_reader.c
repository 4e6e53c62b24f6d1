/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz_reader.c - fuzz target for the format dispatcher (profile/reader.c): detection plus
 * whichever reader it picks (pprof included). Any bytes must read consistently or fail with a
 * message naming the input; detection must agree with the reader that ran.
 * libFuzzer build: make fuzz; replayed by make check.
 */
#include <stdint.h>

#include "../profile/reader.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct profile p;
	char err[256];
	enum reader_format f = reader_detect(data, size);
	profile_init(&p);
	int rc = profile_read_mem(data, size, "fuzz.prof", &p, err, sizeof err);
	if (rc == 0) {
		if (f == READER_UNKNOWN)
			fuzz_fail("read an input detection called unknown");
		fuzz_exercise_model(&p);
	} else {
		fuzz_check_error(err, "fuzz.prof:");
		if (p.nsamples != 0)
			fuzz_fail("profile not left empty after an error");
	}
	profile_release(&p);
	return 0;
}
