/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * legacy_read.c - the reader of `heap profile: n: s [an: as] @ <type>/<period>` text profiles
 * (see legacy_read.h), following jeprof's ReadHeapProfile: the header picks no scaling, v1
 * (uniform, period/2) or v2 (Poisson) scaling, applied per record pair before summing.
 * Where perl would die (a v1 pair with zero objects or bytes) this reader leaves the pair as is.
 */
#include "legacy_read.h"

#include <stdlib.h>
#include <string.h>

#include "heapv2_read.h"

enum { ALG_NONE = 0, ALG_V1 = 1, ALG_V2 = 2 };

static void unsample_v1(double adj, double *n, double *s)
{
	if (*n == 0 || *s == 0)
		return; /* perl divides by zero here and dies */
	double ratio = (*s / *n) / adj;
	if (ratio < 1) {
		*n /= ratio;
		*s /= ratio;
	}
}

int legacy_read_scan(struct textscan *ts, struct profile *p, char *err, size_t errcap)
{
	static const char tag[] = "heap profile:";
	const char *h = ts->line;
	if (strncmp(h, tag, sizeof tag - 1) != 0) {
		textscan_error(ts, err, errcap, "not a 'heap profile:' header");
		return -1;
	}
	int alg = ALG_NONE;
	double adj = 0;
	char type[64] = "";
	const char *q = textscan_skip_space(h + sizeof tag - 1);
	double hv[PV_COUNT];
	if (textscan_counts(&q, hv) == 0) {
		/* (\s*@\s*([^/]*)(/(\d+))?)? */
		const char *r = textscan_skip_space(q);
		if (*r == '@') {
			r = textscan_skip_space(r + 1);
			const char *e = strchr(r, '/');
			size_t tl = e ? (size_t)(e - r) : strlen(r);
			if (tl >= sizeof type)
				tl = sizeof type - 1;
			memcpy(type, r, tl);
			type[tl] = '\0';
			double period = 0;
			int have_period = 0;
			if (e) {
				const char *d = e + 1;
				have_period = textscan_decimal(&d, &period) == 0;
			}
			if (!*type) {
				/* "@" with an empty type: perl's $6 is '', as without "@" */
			} else if (strcmp(type, "heapprofile") == 0 || !strstr(type, "heap")) {
				alg = ALG_NONE;
			} else if (strstr(type, "_v2")) {
				alg = ALG_V2;
				if (have_period)
					adj = period;
			} else {
				alg = ALG_V1;
				if (have_period)
					adj = period / 2;
			}
		}
		if (!*type && hv[0] == hv[2] && hv[1] == hv[3])
			alg = ALG_V1; /* no type: an old remote heap profile */
	}
	if (alg != ALG_NONE && adj == 0)
		adj = 131072;

	p->format = profile_strdup(p, *type ? type : "heap");
	p->period = alg == ALG_NONE ? 0 : adj >= 1.8e19 ? UINT64_MAX : (uint64_t)adj;

	uint64_t *addrs = NULL;
	size_t addrs_cap = 0;
	int rc = 0;

	while (textscan_next(ts)) {
		if (textscan_trailer_line(ts, p))
			continue;
		char *t = textscan_trim(ts->line);
		if (!*t)
			continue;
		if (*t < '0' || *t > '9') {
			p->skipped_lines++; /* comments (Go's "# ..."), anything else jeprof ignores */
			continue;
		}
		const char *s = t;
		double v[PV_COUNT];
		if (textscan_counts(&s, v) != 0) {
			textscan_error(ts, err, errcap,
			               ts->last_unterminated ? "truncated record" : "malformed record");
			rc = -1;
			break;
		}
		if (!textscan_space((unsigned char)*s) || *(s = textscan_skip_space(s)) != '@' ||
		    !textscan_space((unsigned char)s[1])) {
			p->skipped_lines++; /* no "@ addresses": jeprof skips it too */
			continue;
		}
		const char *bad = NULL;
		long n = textscan_addresses(s + 1, &addrs, &addrs_cap, &bad);
		if (n < 0) {
			textscan_error_address(ts, err, errcap, n, bad);
			rc = -1;
			break;
		}
		textscan_fix_callers(addrs, (size_t)n);
		if (alg == ALG_V2) {
			heapv2_read_unsample(adj, &v[0], &v[1]);
			heapv2_read_unsample(adj, &v[2], &v[3]);
		} else if (alg == ALG_V1) {
			unsample_v1(adj, &v[0], &v[1]);
			unsample_v1(adj, &v[2], &v[3]);
		}
		if (v[2] != 0 || v[3] != 0)
			p->has_alloc = 1;
		profile_add(p, addrs, (uint32_t)n, v);
	}
	free(addrs);
	return textscan_finish(ts, p, rc);
}

int legacy_read(const uint8_t *d, size_t n, const char *name, struct profile *p, char *err, size_t errcap)
{
	return textscan_read(d, n, name, 1, legacy_read_scan, p, err, errcap);
}
