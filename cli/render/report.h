/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * report.h - the self-contained HTML report over a series of heap dumps of one program: live
 * heap over time (total and top stacks, stacked, with hover), leak suspects and top growers
 * (least-squares slope, R², increasing-step fraction per stack), the peak dump's top table and
 * flame graph, a differential flame graph first -> last, and the process facts from the dumps'
 * metadata. One HTML file with inline SVG, CSS and JavaScript: it never touches the network.
 *
 * It does not read, order or symbolize dumps (cmd_report.c does); it analyses and writes.
 * The suspect rule is documented in docs/REPORT.md. CLI only; allocates.
 */
#ifndef HEAPTAP_CLI_RENDER_REPORT_H
#define HEAPTAP_CLI_RENDER_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../../profile/model.h"
#include "../common.h"

/* Thresholds of the leak-suspect rule (docs/REPORT.md). */
#define REPORT_MIN_R2 0.8
#define REPORT_MIN_MONOTONE 0.7
#define REPORT_MIN_DUMPS 5 /* from 5 dumps on, one step (alloc once, hold) has R² < 0.78 */
#define REPORT_NOISE_K 3.0  /* the fitted rise must exceed this many sampling-noise bounds */

/* The least-squares line v = intercept + slope * t through a stack's series, and its steadiness. */
struct report_fit {
	double slope;      /* value units per second (per dump when times are unknown) */
	double intercept;
	double r2;         /* coefficient of determination, 0 when v (or t) does not vary */
	double monotone;   /* increasing steps / (increasing + decreasing steps); 0 with no change */
	int inc, dec;      /* steps v[i+1] > v[i], v[i+1] < v[i] */
	double rise;       /* slope * (t[n-1] - t[0]): the growth the line explains */
};

/* Fits v[0..n) over t[0..n). */
void report_fit_series(const double *t, const double *v, size_t n, struct report_fit *f);

/*
 * The sampling noise bound of a live value that peaked at `peak`: an unbiased estimate of V bytes
 * sampled every R bytes on average has a standard deviation of at most sqrt(V * R) (exactly that
 * for objects much smaller than R, less for larger ones). Returns sqrt(peak * period) for byte
 * values of a sampled profile (period > 1), else 0 (exact counts, or object counts, whose bound
 * needs sizes the series does not keep).
 */
double report_noise(double peak, uint64_t period, int space);

/* 1 when a fit over n dumps makes a leak suspect: n >= REPORT_MIN_DUMPS, slope > 0,
   r2 >= REPORT_MIN_R2, monotone >= REPORT_MIN_MONOTONE and rise >= REPORT_NOISE_K * noise. */
int report_is_suspect(const struct report_fit *f, size_t n, double noise);

struct report_input {
	struct profile *dumps;     /* n profiles, in series order, symbolized */
	const char *const *paths;  /* their file names */
	size_t n;                  /* >= 1 */
	const double *time_s;      /* per dump: seconds since the first dump */
	const int64_t *time_ns;    /* per dump: wall clock (ns since the epoch), 0 when unknown */
	int time_known;            /* 0: time_s holds dump indexes (slopes are per dump) */
	const char *title;         /* NULL: "heaptap report" */
};

/* Writes the HTML report to out. a gives the value selector, granularity and focus/ignore.
   Returns 0, or -1 after a write error (errno set) or an allocation failure (message printed). */
int report_write_html(FILE *out, const struct common_args *a, const struct report_input *in);

#endif
