/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * heapv2_read.c - the reader of jemalloc/heaptap `heap_v2/<R>` text profiles (see
 * heapv2_read.h). It follows jeprof's ReadThreadedHeapProfile line for line; where jeprof
 * silently skips a line that carries values but is broken, this reader reports it instead.
 */
#include "heapv2_read.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"

void heapv2_read_unsample(double period, double *objs, double *bytes)
{
	if (period <= 0 || *objs == 0 || *bytes == 0)
		return;
	double ratio = (*bytes / *objs) / period;
	double factor = 1.0 / (1.0 - exp(-ratio));
	if (!isfinite(factor))
		return;
	*objs *= factor;
	*bytes *= factor;
}

/*
 * Parses a trimmed count line "t*: n: s [an: as]" or "t<N>: ...". Returns 1 when valid (with
 * *thread = -1 for t*), 2 when valid up to ']' but followed by text (a thread name: jeprof
 * ignores the line), 0 when the line is not a count line, -1 when it is a broken one.
 */
static int parse_count_line(const char *s, long *thread, double v[PV_COUNT])
{
	if (s[0] != 't')
		return 0;
	const char *p = s + 1;
	if (*p == '*') {
		*thread = -1;
		p++;
	} else if (*p >= '0' && *p <= '9') {
		long t = 0;
		while (*p >= '0' && *p <= '9') {
			if (t < 100000000)
				t = t * 10 + (*p - '0');
			p++;
		}
		*thread = t;
	} else {
		return 0;
	}
	if (*p++ != ':')
		return 0;
	/* From here on it is a count line; anything wrong is an error. */
	if (!textscan_space((unsigned char)*p))
		return -1;
	p = textscan_skip_space(p);
	if (textscan_counts(&p, v))
		return -1;
	return *p ? 2 : 1;
}

int heapv2_read_scan(struct textscan *ts, struct profile *p, char *err, size_t errcap)
{
	const char *h = ts->line;
	double period = 0;
	if (strncmp(h, "heap_v2/", 8) != 0 || h[8] < '0' || h[8] > '9') {
		textscan_error(ts, err, errcap,
		               "threaded heap profiles require v2 sampling with a sample rate (heap_v2/<R>)");
		return -1;
	}
	const char *q = h + 8;
	textscan_decimal(&q, &period);
	p->format = profile_strdup(p, "heap_v2");
	p->period = period >= 1.8e19 ? UINT64_MAX : (uint64_t)period;

	uint64_t *addrs = NULL, *stack = NULL;
	size_t addrs_cap = 0, stack_cap = 0, nstack = 0;
	int have_stack = 0, rc = 0;
	size_t last = SIZE_MAX; /* the sample the current stack's first t* line made */

	while (textscan_next(ts)) {
		if (textscan_trailer_line(ts, p))
			continue;
		char *t = textscan_trim(ts->line);
		if (!*t)
			continue;
		if (t[0] == '@' && textscan_space((unsigned char)t[1])) {
			const char *bad = NULL;
			long n = textscan_addresses(t + 1, &addrs, &addrs_cap, &bad);
			if (n < 0) {
				textscan_error_address(ts, err, errcap, n, bad);
				rc = -1;
				break;
			}
			if (stack_cap < (size_t)n) {
				stack_cap = (size_t)n;
				stack = arena_xrealloc(stack, stack_cap * sizeof *stack);
			}
			memcpy(stack, addrs, (size_t)n * sizeof *stack);
			nstack = (size_t)n;
			textscan_fix_callers(stack, nstack);
			have_stack = 1;
			last = SIZE_MAX;
			continue;
		}
		if (strncmp(t, "# heaptap: xfree ", 17) == 0) {
			/* bytes of the stack above freed by other threads (heaptap's, jeprof skips it) */
			const char *colon = strchr(t + 17, ':');
			double xb = colon ? strtod(colon + 1, NULL) : 0;
			if (have_stack && last < p->nsamples && xb > 0 && xb < 1e19)
				p->samples[last].xfree += xb;
			else if (have_stack && last == SIZE_MAX && xb > 0 && xb < 1e19) {
				double zero[PV_COUNT] = {0, 0, 0, 0};
				profile_add(p, stack, (uint32_t)nstack, zero);
				last = p->nsamples - 1;
				p->samples[last].xfree = xb;
			}
			continue;
		}
		long thread;
		double v[PV_COUNT];
		int c = parse_count_line(t, &thread, v);
		if (c < 0) {
			textscan_error(ts, err, errcap,
			               ts->last_unterminated ? "truncated count line"
			                                     : "malformed count line");
			rc = -1;
			break;
		}
		if (c == 0 || c == 2) {
			p->skipped_lines++;
			continue;
		}
		if (!have_stack || thread >= 0)
			continue; /* header totals and per-thread shares: parsed, not used */
		heapv2_read_unsample(period, &v[0], &v[1]);
		heapv2_read_unsample(period, &v[2], &v[3]);
		if (v[2] != 0 || v[3] != 0)
			p->has_alloc = 1;
		/* jeprof adds every t* line after a stack to that stack; so does this reader, into
		   one sample: a copy per line would turn a deep stack followed by a million short
		   lines into gigabytes. */
		if (last < p->nsamples) {
			for (int k = 0; k < PV_COUNT; k++)
				p->samples[last].v[k] += v[k];
		} else {
			profile_add(p, stack, (uint32_t)nstack, v);
			last = p->nsamples - 1;
		}
	}
	free(addrs);
	free(stack);
	return textscan_finish(ts, p, rc);
}

int heapv2_read(const uint8_t *d, size_t n, const char *name, struct profile *p, char *err, size_t errcap)
{
	return textscan_read(d, n, name, 1, heapv2_read_scan, p, err, errcap);
}
