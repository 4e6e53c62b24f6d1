/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz_common.h - checks shared by the profile readers' fuzz targets: after a successful read
 * the model must be consistent and survive every operation the commands perform; after a
 * failed one the message must name the input. Header-only (static functions) so each target
 * stays one file; not used outside fuzz/.
 */
#ifndef HEAPTAP_FUZZ_COMMON_H
#define HEAPTAP_FUZZ_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../profile/model.h"
#include "../profile/symtab.h"

static void fuzz_fail(const char *what)
{
	fprintf(stderr, "fuzz invariant violated: %s\n", what);
	abort();
}

static void fuzz_check_error(const char *err, const char *prefix)
{
	if (strncmp(err, prefix, strlen(prefix)) != 0)
		fuzz_fail("error message does not name the input");
}

static void fuzz_exercise_model(struct profile *p)
{
	for (size_t i = 0; i < p->nsamples; i++)
		if (p->samples[i].naddrs < 1 || !p->samples[i].addrs)
			fuzz_fail("sample without frames");
	if (!p->format || !p->source)
		fuzz_fail("format or source not set");
	size_t n = 0;
	uint64_t *u = profile_unique_addrs(p, &n);
	for (size_t i = 0; i < n; i++) {
		if (i && u[i] <= u[i - 1])
			fuzz_fail("unique addresses not sorted and unique");
		const struct prof_mapping *m = profile_find_mapping(p, u[i]);
		if (m && (u[i] < m->start || u[i] >= m->limit))
			fuzz_fail("find_mapping returned a mapping not containing the address");
		if (p->syms)
			symtab_get(p->syms, u[i]);
	}
	free(u);
	struct profile q;
	profile_init(&q);
	profile_merge(&q, p, 1.0);
	profile_merge(&q, p, 1.0);
	if (q.nsamples > p->nsamples)
		fuzz_fail("merge did not combine identical stacks");
	profile_merge(&q, p, -2.0);
	profile_compact(&q);
	profile_release(&q);
	for (int k = 0; k < PV_COUNT; k++)
		(void)profile_total(p, k);
}

#endif
