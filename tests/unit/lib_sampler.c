/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib_sampler.c - unit test of the sampling math: the mean of the exponential intervals
 * (lib/sampler.c), the sampling probability 1 - exp(-s/R) they produce with the collector's
 * "sample when s >= bytes left" rule, and that weights (profile/inproc/unbias.c) turn the samples
 * back into the true totals. Seeds are fixed, so the numbers are the same on every run; the
 * bounds are many standard deviations wide.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "../../lib/sampler.h"
#include "../../profile/inproc/unbias.h"
#include "check.h"

/* Simulates the collector's countdown over n allocations of the given sizes (cycled). */
struct sim {
	uint64_t rng, left, period;
};

static int sim_alloc(struct sim *s, uint64_t size)
{
	if (size >= s->left) {
		s->left = sampler_interval(&s->rng, s->period);
		return 1;
	}
	s->left -= size;
	return 0;
}

int main(void)
{
	/* mean interval over 1e6 draws within 1% of R (sd of the mean is 0.1% of R) */
	const uint64_t periods[] = {1u << 10, 1u << 19, 1ull << 30};
	for (size_t k = 0; k < 3; k++) {
		uint64_t R = periods[k], rng = 12345 + k;
		double sum = 0;
		uint64_t minv = UINT64_MAX;
		for (int i = 0; i < 1000000; i++) {
			uint64_t v = sampler_interval(&rng, R);
			sum += (double)v;
			if (v < minv)
				minv = v;
		}
		double mean = sum / 1e6;
		CHECK(fabs(mean - (double)R) < 0.01 * (double)R, "R=%llu mean=%.1f",
		      (unsigned long long)R, mean);
		CHECK(minv >= 1, "interval 0 drawn");
	}

	/* R = 1: every allocation, weight exactly 1 */
	uint64_t rng = 7;
	for (int i = 0; i < 1000; i++)
		CHECK(sampler_interval(&rng, 1) == 1, "R=1 interval");
	CHECK(unbias_weight(1, 1) == 1.0 && unbias_weight(1 << 20, 1) == 1.0, "R=1 weight");
	CHECK(unbias_weight(0, 1) == 1.0, "R=1 weight of size 0");

	/* weights: 1 / (1 - exp(-s/R)) */
	CHECK(fabs(unbias_weight(524288, 524288) - 1.0 / (1.0 - exp(-1.0))) < 1e-12, "w(R)");
	CHECK(fabs(unbias_weight(16, 524288) - 32768.5) < 0.01, "w(16)=%.4f",
	      unbias_weight(16, 524288));
	CHECK(fabs(unbias_weight(1ull << 30, 524288) - 1.0) < 1e-12, "w(huge)");
	CHECK(unbias_weight(0, 524288) == unbias_weight(1, 524288), "size 0 counts as 1");
	/* the series (x < 1/2) and libm agree over every size class, both sides of the switch */
	double worst = 0;
	for (uint64_t sz = 1; sz < (1ull << 24); sz += 1 + sz / 7) {
		double ref = 1.0 / -expm1(-(double)sz / 524288.0);
		double rel = fabs(unbias_weight(sz, 524288) / ref - 1.0);
		worst = rel > worst ? rel : worst;
	}
	CHECK(worst < 1e-12, "weight series vs expm1: relative error %.3g", worst);
	/* -ln(u) without libm, from the smallest u drawn to 1 */
	worst = 0;
	for (double u = 1.0 / 9007199254740992.0; u <= 1.0; u *= 1.0009765625) {
		double ref = -log(u), got = sampler_neg_log(u);
		double err = ref > 0 ? fabs(got / ref - 1.0) : fabs(got);
		worst = err > worst ? err : worst;
	}
	CHECK(worst < 1e-13 && sampler_neg_log(1.0) == 0.0, "-ln(u): relative error %.3g", worst);

	/* sampling probability and unbiased totals, mixed sizes, one countdown */
	const uint64_t sizes[] = {16, 4096, 100000, 3000000};
	const uint64_t R = 65536;
	struct sim s = {99, 0, R};
	s.left = sampler_interval(&s.rng, R);
	uint64_t n[4] = {0}, hits[4] = {0};
	double est_objs[4] = {0}, est_bytes[4] = {0};
	for (int i = 0; i < 4000000; i++) {
		int k = i & 3;
		n[k]++;
		if (sim_alloc(&s, sizes[k])) {
			hits[k]++;
			double w = unbias_weight(sizes[k], R);
			est_objs[k] += w;
			est_bytes[k] += w * (double)sizes[k];
		}
	}
	for (int k = 0; k < 4; k++) {
		double p = 1.0 - exp(-(double)sizes[k] / (double)R);
		double expect = p * (double)n[k];
		double sd = sqrt((double)n[k] * p * (1 - p));
		CHECK(fabs((double)hits[k] - expect) < 6 * sd + 1, "size %llu: %llu samples, expected %.1f",
		      (unsigned long long)sizes[k], (unsigned long long)hits[k], expect);
		/* relative error of the estimate: sd = sqrt((1-p)/(n p)) */
		double rel = sqrt((1 - p) / ((double)n[k] * p));
		double truth_bytes = (double)n[k] * (double)sizes[k];
		CHECK(fabs(est_objs[k] - (double)n[k]) < 6 * rel * (double)n[k] + 1,
		      "size %llu: estimated %.0f objects of %llu", (unsigned long long)sizes[k],
		      est_objs[k], (unsigned long long)n[k]);
		CHECK(fabs(est_bytes[k] - truth_bytes) < 6 * rel * truth_bytes + 1,
		      "size %llu: estimated %.0f bytes of %.0f", (unsigned long long)sizes[k],
		      est_bytes[k], truth_bytes);
	}
	/* the huge size is always sampled */
	CHECK(hits[3] == n[3], "3 MB allocations: %llu of %llu sampled", (unsigned long long)hits[3],
	      (unsigned long long)n[3]);

	/* different seeds give different streams */
	uint64_t a = 1, b = 2;
	CHECK(sampler_next(&a) != sampler_next(&b), "seeds");
	uint64_t z = 0;
	sampler_seed(&z, 0);
	CHECK(z != 0, "seeded state is never 0");

	if (failures)
		fprintf(stderr, "lib_sampler: %d failure(s)\n", failures);
	else
		printf("lib_sampler: ok\n");
	return failures != 0;
}
