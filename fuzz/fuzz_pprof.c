/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz_pprof.c - libFuzzer target for the pprof profile.proto reader (profile/pprof_read.c):
 * every input is sniffed, then decoded into a fresh profile, which must either succeed with
 * well-formed samples or fail with a message; then it is released (leaks show under ASan).
 * Not a test of the writers; the corpus in fuzz/corpus/pprof/ is replayed by `make check`.
 */
#include <stddef.h>
#include <stdint.h>

#include "../profile/model.h"
#include "../profile/pprof_read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct profile p;
	char err[256];
	(void)pprof_read_sniff(data, size); /* must not read past the end either */
	profile_init(&p);
	int rc = pprof_read(data, size, &p, err, sizeof err);
	if (rc == 0) {
		for (size_t i = 0; i < p.nsamples; i++)
			if (p.samples[i].naddrs == 0 || !p.samples[i].addrs)
				__builtin_trap();
	} else if (rc != -1 || err[0] == 0) {
		__builtin_trap();
	}
	profile_release(&p);
	return 0;
}
