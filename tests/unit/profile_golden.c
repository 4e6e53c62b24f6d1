/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * profile_golden.c - checks every reader against the real jeprof: for each .heap file in tests/golden
 * (real jemalloc, gperftools, tcmalloc and Go dumps plus synthetic edge cases) the four totals
 * of the model must equal, after jeprof's %d truncation, the totals jeprof printed into
 * <name>.expect (tests/golden/regen.sh). Not a test of symbolization or rendering.
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../profile/model.h"
#include "../../profile/reader.h"

static const char *const sel_names[PV_COUNT] = {"inuse_objects", "inuse_space", "alloc_objects",
                                                "alloc_space"};

static int load_expect(const char *path, double want[PV_COUNT])
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	char line[512];
	int seen = 0;
	while (fgets(line, sizeof line, f)) {
		if (line[0] == '#')
			continue;
		char key[64];
		double v;
		if (sscanf(line, "%63s %lf", key, &v) != 2)
			continue;
		for (int k = 0; k < PV_COUNT; k++)
			if (strcmp(key, sel_names[k]) == 0) {
				want[k] = v;
				seen |= 1 << k;
			}
	}
	fclose(f);
	return seen == 15 ? 0 : -1;
}

int main(void)
{
	const char *root = getenv("ROOT");
	char dir[4096];
	snprintf(dir, sizeof dir, "%s/tests/golden", root ? root : ".");
	DIR *d = opendir(dir);
	if (!d) {
		fprintf(stderr, "cannot open %s\n", dir);
		return 1;
	}
	int failures = 0, files = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);
		if (n < 6 || strcmp(e->d_name + n - 5, ".heap") != 0)
			continue;
		char path[8192], expect[8192];
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		snprintf(expect, sizeof expect, "%s/%.*s.expect", dir, (int)(n - 5), e->d_name);
		double want[PV_COUNT];
		if (load_expect(expect, want) != 0) {
			fprintf(stderr, "%s: missing or incomplete (run tests/golden/regen.sh)\n", expect);
			failures++;
			continue;
		}
		struct profile p;
		char err[512];
		profile_init(&p);
		files++;
		if (profile_read_file(path, &p, err, sizeof err) != 0) {
			fprintf(stderr, "FAIL %s: %s\n", e->d_name, err);
			failures++;
			continue;
		}
		for (int k = 0; k < PV_COUNT; k++) {
			double got = trunc(profile_total(&p, k));
			/* The same formula summed in a different order: allow one unit of rounding. */
			if (fabs(got - want[k]) > 1) {
				fprintf(stderr, "FAIL %s: %s: heaptap %.0f, jeprof %.0f\n", e->d_name, sel_names[k],
				        got, want[k]);
				failures++;
			}
		}
		printf("%-32s %-12s samples %6zu maps %3zu inuse %12.0f B alloc %12.0f B\n", e->d_name,
		       p.format, p.nsamples, p.nmaps, profile_total(&p, PV_INUSE_BYTES),
		       profile_total(&p, PV_ALLOC_BYTES));
		profile_release(&p);
	}
	closedir(d);
	if (files < 10) {
		fprintf(stderr, "only %d golden profiles found in %s\n", files, dir);
		failures++;
	}
	if (failures) {
		fprintf(stderr, "%d failures\n", failures);
		return 1;
	}
	printf("profile_golden: %d profiles agree with jeprof\n", files);
	return 0;
}
