/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cli_flame_fit.c - unit test of the series report's statistics (cli/render/report.h): the
 * least-squares slope and intercept, R², the increasing-step fraction, the sampling-noise floor
 * and the leak-suspect rule, on series whose answers are known in closed form (a line, a single
 * step, a flat series, noise).
 */
#include <math.h>
#include <stdio.h>

#include "../../cli/render/report.h"
#include "check.h"



int main(void)
{
	double t[20], v[20];
	struct report_fit f;

	/* a perfect line: slope 1000/s, intercept 500, R² 1, every step up */
	for (int i = 0; i < 10; i++) {
		t[i] = 0.2 * i;
		v[i] = 500 + 1000 * t[i];
	}
	report_fit_series(t, v, 10, &f);
	CHECK(fabs(f.slope - 1000) < 1e-9 && fabs(f.intercept - 500) < 1e-9, "slope %g intercept %g", f.slope, f.intercept);
	CHECK(fabs(f.r2 - 1) < 1e-12 && f.inc == 9 && f.dec == 0 && f.monotone == 1, "r2 %g inc %d dec %d", f.r2, f.inc, f.dec);
	CHECK(report_is_suspect(&f, 10, 0), "a line is a suspect");
	CHECK(!report_is_suspect(&f, 4, 0), "four dumps are not enough");

	/* one step in the middle of 20 equally spaced dumps: R² = 3p(1-p) adjusted for n:
	   for n = 20, p = 1/2 the correlation of t with a step is 0.75 * n^2 / (n^2 - 1) */
	for (int i = 0; i < 20; i++) {
		t[i] = i;
		v[i] = i < 10 ? 0 : 4096;
	}
	report_fit_series(t, v, 20, &f);
	double want = 0.75 * 400.0 / 399.0;
	CHECK(fabs(f.r2 - want) < 1e-9, "step r2 %.6f want %.6f", f.r2, want);
	CHECK(f.inc == 1 && f.dec == 0 && f.monotone == 1, "step steps %d %d", f.inc, f.dec);
	CHECK(!report_is_suspect(&f, 20, 0), "a single step is not a suspect (r2 %.3f < 0.8)", f.r2);

	/* with 4 dumps one step reaches R² 0.8 (0.75 * 16/15): why REPORT_MIN_DUMPS is 5; the worst
	   single step over 5 and 6 dumps stays below 0.8 */
	double s4[] = {0, 0, 1, 1}, s5[] = {0, 0, 1, 1, 1}, s6[] = {0, 0, 0, 1, 1, 1};
	report_fit_series(t, s4, 4, &f);
	CHECK(fabs(f.r2 - 0.8) < 1e-12, "4-dump step r2 %.6f", f.r2);
	report_fit_series(t, s5, 5, &f);
	CHECK(fabs(f.r2 - 0.75) < 1e-12 && !report_is_suspect(&f, 5, 0), "5-dump step r2 %.6f", f.r2);
	report_fit_series(t, s6, 6, &f);
	CHECK(fabs(f.r2 - 0.75 * 36 / 35) < 1e-12 && !report_is_suspect(&f, 6, 0), "6-dump step r2 %.6f", f.r2);

	/* the noise floor: a line rising 1800 over 1.8 s against sampling noise (own arrays: t[]
	   holds dump indexes from here on) */
	double tl[10], vl[10];
	for (int i = 0; i < 10; i++) {
		tl[i] = 0.2 * i;
		vl[i] = 500 + 1000 * tl[i];
	}
	report_fit_series(tl, vl, 10, &f);
	CHECK(fabs(f.rise - 1800) < 1e-9, "rise %g", f.rise);
	CHECK(report_is_suspect(&f, 10, 599.9) && !report_is_suspect(&f, 10, 600.1), "noise floor at rise / 3");
	/* sqrt(peak * R): 2 MiB live sampled every 16 KiB -> 2^17.5 bytes; none for objects or R = 1 */
	CHECK(fabs(report_noise(2 << 20, 16384, 1) - sqrt(2.0 * (1 << 20) * 16384)) < 1e-6, "noise bytes");
	CHECK(report_noise(2 << 20, 16384, 0) == 0 && report_noise(2 << 20, 1, 1) == 0, "no noise bound");

	/* flat: nothing varies, R² 0, no steps, monotone 0 */
	for (int i = 0; i < 8; i++)
		v[i] = 777;
	report_fit_series(t, v, 8, &f);
	CHECK(f.slope == 0 && f.r2 == 0 && f.inc == 0 && f.dec == 0 && f.monotone == 0, "flat %g %g", f.slope, f.r2);
	CHECK(!report_is_suspect(&f, 8, 0), "flat is not a suspect");

	/* a staircase leak (a new sample every third dump): equal steps do not count against it */
	for (int i = 0; i < 15; i++)
		v[i] = 16384.0 * (i / 3);
	report_fit_series(t, v, 15, &f);
	CHECK(f.inc == 4 && f.dec == 0 && f.monotone == 1 && f.r2 > 0.9, "staircase inc %d r2 %.3f", f.inc, f.r2);
	CHECK(report_is_suspect(&f, 15, 0), "a staircase leak is a suspect");

	/* a churned pool: alternating up and down around a level, slightly rising */
	for (int i = 0; i < 12; i++)
		v[i] = 100000 + (i % 2 ? 3000 : -3000) + 10 * i;
	report_fit_series(t, v, 12, &f);
	CHECK(f.inc == 6 && f.dec == 5, "churn steps %d %d", f.inc, f.dec);
	CHECK(!report_is_suspect(&f, 12, 0), "churn is not a suspect (r2 %.3f, m %.2f)", f.r2, f.monotone);

	/* shrinking steadily: negative slope, never a suspect */
	for (int i = 0; i < 6; i++)
		v[i] = 1000 - 100 * i;
	report_fit_series(t, v, 6, &f);
	CHECK(fabs(f.slope + 100) < 1e-9 && fabs(f.r2 - 1) < 1e-12 && f.monotone == 0, "shrink %g %g", f.slope, f.r2);
	CHECK(!report_is_suspect(&f, 6, 0), "shrinking is not a suspect");

	return check_finish("cli_flame_fit");
}
