/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * series.c - ordering a set of heap dumps of one process (see series.h): file-name parsing for
 * jemalloc's, heaptap's and gperftools' naming schemes and a stable sort on (pid, seq, time,
 * name). It neither reads files nor compares profile contents.
 */
#include "series.h"

#include "arena.h"

#include <stdlib.h>
#include <string.h>

static int all_digits(const char *s, size_t n)
{
	if (n == 0 || n > 18)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return 0;
	return 1;
}

static long long to_ll(const char *s, size_t n)
{
	long long v = 0;
	for (size_t i = 0; i < n; i++)
		v = v * 10 + (s[i] - '0');
	return v;
}

int series_parse_name(const char *path, struct series_entry *e)
{
	e->path = path;
	e->pid = 0;
	e->seq = -1;
	e->kind = 0;
	e->kseq = -1;
	e->ext = "";
	e->prefix_len = 0;
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	size_t len = strlen(base);
	static const char *const exts[] = {".heap", ".pb.gz", ".pb", ".txt"};
	for (size_t i = 0; i < sizeof exts / sizeof exts[0]; i++) {
		size_t k = strlen(exts[i]);
		if (len > k && strcmp(base + len - k, exts[i]) == 0) {
			len -= k;
			e->ext = exts[i];
			break;
		}
	}
	/* Split base[0..len) at its last three dots: prefix . pid . seq . kind<kseq> */
	const char *dots[3] = {NULL, NULL, NULL};
	int nd = 0;
	for (size_t i = len; i-- > 0 && nd < 3;)
		if (base[i] == '.')
			dots[nd++] = base + i;
	const char *end = base + len;
	if (nd >= 1) {
		const char *last = dots[0] + 1;
		size_t ln = (size_t)(end - last);
		/* gperftools: <prefix>.<NNNN> */
		if (all_digits(last, ln)) { /* jemalloc's last part always starts with a letter */
			e->seq = to_ll(last, ln);
			return 1;
		}
		if (nd >= 3 && ln >= 1 && strchr("iumftsop", last[0]) &&
		    (ln == 1 || all_digits(last + 1, ln - 1))) {
			const char *seq = dots[1] + 1, *pid = dots[2] + 1;
			size_t sn = (size_t)(dots[0] - seq), pn = (size_t)(dots[1] - pid);
			if (all_digits(seq, sn) && all_digits(pid, pn) && pn <= 9) {
				e->pid = (int)to_ll(pid, pn);
				e->seq = to_ll(seq, sn);
				e->kind = last[0];
				e->kseq = ln > 1 ? to_ll(last + 1, ln - 1) : -1;
				e->prefix_len = (size_t)(dots[2] - base);
				return 1;
			}
		}
	}
	return 0;
}

void series_entry_from_profile(struct series_entry *e, const char *path, const struct profile *p)
{
	series_parse_name(path, e);
	if (!e->pid && p)
		e->pid = p->pid;
	e->time_ns = p ? p->time_ns : 0;
	e->user = (void *)p;
}

static int entry_cmp(const struct series_entry *a, const struct series_entry *b)
{
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->seq >= 0 && b->seq >= 0 && a->seq != b->seq)
		return a->seq < b->seq ? -1 : 1;
	if (a->time_ns && b->time_ns && a->time_ns != b->time_ns)
		return a->time_ns < b->time_ns ? -1 : 1;
	if ((a->seq >= 0) != (b->seq >= 0))
		return a->seq >= 0 ? -1 : 1; /* named dumps before unnamed ones */
	return strcmp(a->path ? a->path : "", b->path ? b->path : "");
}

void series_sort(struct series_entry *e, size_t n)
{
	/* Bottom-up merge sort: stable, and n is a few hundred dumps at most. */
	if (n < 2)
		return;
	struct series_entry *tmp = arena_xmalloc(n * sizeof *tmp);
	for (size_t width = 1; width < n; width *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * width) {
			size_t mid = lo + width < n ? lo + width : n;
			size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
			size_t i = lo, j = mid, k = lo;
			while (i < mid && j < hi)
				tmp[k++] = entry_cmp(&e[j], &e[i]) < 0 ? e[j++] : e[i++];
			while (i < mid)
				tmp[k++] = e[i++];
			while (j < hi)
				tmp[k++] = e[j++];
		}
		memcpy(e, tmp, n * sizeof *e);
	}
	free(tmp);
}
