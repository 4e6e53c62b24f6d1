/*
 * heapv2_read.c - the reader of jemalloc/heaptap `heap_v2/<R>` text profiles (see
 * heapv2_read.h). It follows jeprof's ReadThreadedHeapProfile line for line; where jeprof
 * silently skips a line that carries values but is broken, this reader reports it instead.
 */
#include "heapv2_read.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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
static int parse_count_line(const char *s, long *thread, double v[4])
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
	if (textscan_decimal(&p, &v[0]) || *p++ != ':' || !textscan_space((unsigned char)*p))
		return -1;
	p = textscan_skip_space(p);
	if (textscan_decimal(&p, &v[1]) || !textscan_space((unsigned char)*p))
		return -1;
	p = textscan_skip_space(p);
	if (*p++ != '[')
		return -1;
	p = textscan_skip_space(p);
	if (textscan_decimal(&p, &v[2]) || *p++ != ':' || !textscan_space((unsigned char)*p))
		return -1;
	p = textscan_skip_space(p);
	if (textscan_decimal(&p, &v[3]) || *p++ != ']')
		return -1;
	return *p ? 2 : 1;
}

static int starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

int heapv2_read_scan(struct textscan *ts, struct profile *p, char *err, size_t errcap)
{
	const char *h = ts->line;
	double period = 0;
	if (!starts_with(h, "heap_v2/") || h[8] < '0' || h[8] > '9') {
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
	int have_stack = 0, metadata = 0, in_maps = 0, rc = 0;
	char build_dir[4096] = "";

	while (textscan_next(ts)) {
		char *line = ts->line;
		if (in_maps) {
			metadata |= textscan_maps_line(p, line, build_dir, sizeof build_dir);
			continue;
		}
		if (starts_with(line, "MAPPED_LIBRARIES:") || starts_with(line, "--- Memory map:")) {
			in_maps = 1;
			continue;
		}
		if (textscan_metadata(p, line)) {
			metadata = 1;
			continue;
		}
		char *t = textscan_trim(line);
		if (!*t)
			continue;
		if (t[0] == '@' && textscan_space((unsigned char)t[1])) {
			const char *bad = NULL;
			long n = textscan_addresses(t + 1, &addrs, &addrs_cap, &bad);
			if (n < 0) {
				const char *e = bad;
				while (*e && !textscan_space((unsigned char)*e))
					e++;
				textscan_error(ts, err, errcap, "%s address '%.*s'",
				               n == -2 ? "out-of-range" : "bad",
				               (int)(e - bad > 40 ? 40 : e - bad), bad);
				rc = -1;
				break;
			}
			if (stack_cap < (size_t)n) {
				stack_cap = (size_t)n;
				stack = realloc(stack, stack_cap * sizeof *stack);
				if (!stack)
					abort();
			}
			memcpy(stack, addrs, (size_t)n * sizeof *stack);
			nstack = (size_t)n;
			textscan_fix_callers(stack, nstack);
			have_stack = 1;
			continue;
		}
		long thread;
		double v[4];
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
		double pv[PV_COUNT] = {v[0], v[1], v[2], v[3]};
		profile_add(p, stack, (uint32_t)nstack, pv);
	}
	free(addrs);
	free(stack);
	p->jemalloc_frames = !metadata;
	if (rc == 0)
		profile_compact(p);
	return rc;
}

int heapv2_read(const uint8_t *d, size_t n, const char *name, struct profile *p, char *err, size_t errcap)
{
	struct textscan ts;
	textscan_init(&ts, d, n, name);
	int rc;
	if (!textscan_next_header(&ts)) {
		textscan_error(&ts, err, errcap, "empty profile");
		rc = -1;
	} else {
		if (strncmp(ts.line, "---", 3) == 0 && !textscan_next_header(&ts)) {
			textscan_error(&ts, err, errcap, "no profile after '---' marker");
			rc = -1;
		} else {
			rc = heapv2_read_scan(&ts, p, err, errcap);
		}
	}
	textscan_release(&ts);
	if (!p->source)
		p->source = profile_strdup(p, name ? name : "<input>");
	return rc;
}
