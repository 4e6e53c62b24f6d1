/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * memline.c - the memory line of memline.h, with snprintf into the caller's buffer.
 */
#include "memline.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void memline_bytes(double v, char *buf, size_t cap, int whole)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	int u = 0;
	while ((v >= 1024 || v <= -1024) && u < 4) {
		v /= 1024;
		u++;
	}
	if (u == 0 || (whole && v == (double)(long long)v))
		snprintf(buf, cap, "%.0f %s", v, units[u]);
	else
		snprintf(buf, cap, "%.1f %s", v, units[u]);
}

/* Appends printf-style text at *len of buf (cap), keeping it NUL-terminated. */
__attribute__((format(printf, 4, 5))) static void add(char *buf, size_t cap, size_t *len,
                                                      const char *fmt, ...)
{
	if (*len + 1 >= cap)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf + *len, cap - *len, fmt, ap);
	va_end(ap);
	if (n > 0)
		*len += (size_t)n < cap - *len ? (size_t)n : cap - *len - 1;
}

int memline_format(const struct memfacts *m, char *buf, size_t cap)
{
	if (!cap)
		return -1;
	buf[0] = 0;
	if (!m->present)
		return -1;
	const uint64_t *v = m->v;
	char x[32], y[32];
	size_t len = 0;
	memline_bytes((double)v[MF_HEAP_LIVE], x, sizeof x, 0);
	add(buf, cap, &len, "heap %s (sampled)", x);
	uint64_t holds = v[MF_ALLOC_IN_USE] + v[MF_ALLOC_FREE];
	if (holds) {
		memline_bytes((double)holds, x, sizeof x, 0);
		memline_bytes((double)v[MF_ALLOC_FREE], y, sizeof y, 0);
		add(buf, cap, &len, " \xc2\xb7 allocator holds %s", x);
		add(buf, cap, &len, " (%s free", y);
		if (v[MF_ALLOC_TRIMMABLE]) {
			memline_bytes((double)v[MF_ALLOC_TRIMMABLE], x, sizeof x, 0);
			add(buf, cap, &len, ", of which %s trimmable", x);
		}
		add(buf, cap, &len, ")");
	}
	if (v[MF_RSS]) {
		memline_bytes((double)v[MF_RSS], x, sizeof x, 0);
		add(buf, cap, &len, " \xc2\xb7 RSS %s", x);
	}
	if (v[MF_SWAP]) {
		memline_bytes((double)v[MF_SWAP], x, sizeof x, 0);
		add(buf, cap, &len, " (+ %s swapped)", x);
	}
	if (v[MF_CGROUP_LIMIT]) {
		memline_bytes((double)v[MF_CGROUP_LIMIT], x, sizeof x, 0);
		memline_bytes((double)v[MF_CGROUP_USAGE], y, sizeof y, 0);
		add(buf, cap, &len, " \xc2\xb7 limit %s (cgroup uses %s)", x, y);
	}
	return 0;
}
