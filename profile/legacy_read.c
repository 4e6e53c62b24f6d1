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

/* Parses "n: s [an: as]" at *s (perl: \d+:\s+\d+\s+\[\s*\d+:\s+\d+\]); advances *s. */
static int parse_pairs(const char **s, double v[4])
{
	const char *p = *s;
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
	*s = p;
	return 0;
}

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
	double hv[4];
	if (parse_pairs(&q, hv) == 0) {
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
	int metadata = 0, in_maps = 0, rc = 0;
	char build_dir[4096] = "";

	while (textscan_next(ts)) {
		char *line = ts->line;
		if (in_maps) {
			metadata |= textscan_maps_line(p, line, build_dir, sizeof build_dir);
			continue;
		}
		if (strncmp(line, "MAPPED_LIBRARIES:", 17) == 0 ||
		    strncmp(line, "--- Memory map:", 15) == 0) {
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
		if (*t < '0' || *t > '9') {
			p->skipped_lines++; /* comments (Go's "# ..."), anything else jeprof ignores */
			continue;
		}
		const char *s = t;
		double v[4];
		if (parse_pairs(&s, v) != 0) {
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
			const char *e = bad;
			while (*e && !textscan_space((unsigned char)*e))
				e++;
			textscan_error(ts, err, errcap, "%s address '%.*s'", n == -2 ? "out-of-range" : "bad",
			               (int)(e - bad > 40 ? 40 : e - bad), bad);
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
		double pv[PV_COUNT] = {v[0], v[1], v[2], v[3]};
		profile_add(p, addrs, (uint32_t)n, pv);
	}
	free(addrs);
	p->jemalloc_frames = !metadata;
	if (rc == 0)
		profile_compact(p);
	return rc;
}

int legacy_read(const uint8_t *d, size_t n, const char *name, struct profile *p, char *err, size_t errcap)
{
	struct textscan ts;
	textscan_init(&ts, d, n, name);
	int rc;
	if (!textscan_next_header(&ts)) {
		textscan_error(&ts, err, errcap, "empty profile");
		rc = -1;
	} else if (strncmp(ts.line, "---", 3) == 0 && !textscan_next_header(&ts)) {
		textscan_error(&ts, err, errcap, "no profile after '---' marker");
		rc = -1;
	} else {
		rc = legacy_read_scan(&ts, p, err, errcap);
	}
	textscan_release(&ts);
	if (!p->source)
		p->source = profile_strdup(p, name ? name : "<input>");
	return rc;
}
