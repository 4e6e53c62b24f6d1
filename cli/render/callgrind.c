/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * callgrind.c - the callgrind writer of callgrind.h. Every trace adds its value to its leaf's
 * self cost and to each caller -> callee pair along it (once per pair occurrence, as jeprof
 * counts); pairs are merged by sorting, functions printed in name order.
 */
#include "callgrind.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../profile/arena.h"

struct edge {
	uint32_t from, to;
	double v;
};

static const struct stacks *g_s; /* qsort has no context argument */

static int cmp_edge(const void *x, const void *y)
{
	const struct edge *a = x, *b = y;
	if (a->from != b->from)
		return strcmp(g_s->names[a->from].name, g_s->names[b->from].name);
	if (a->to != b->to)
		return strcmp(g_s->names[a->to].name, g_s->names[b->to].name);
	return 0;
}

static int cmp_id(const void *x, const void *y)
{
	return strcmp(g_s->names[*(const uint32_t *)x].name, g_s->names[*(const uint32_t *)y].name);
}

int callgrind_write(FILE *out, const struct stacks *s)
{
	size_t ne = 0, cap = 0;
	struct edge *e = NULL;
	double *self = arena_xcalloc(s->nnames + 1, sizeof(*self));
	unsigned char *seen = arena_xcalloc(s->nnames + 1, 1);
	for (size_t t = 0; t < s->ntraces; t++) {
		const struct stacks_trace *tr = &s->traces[t];
		if (!tr->nframes)
			continue;
		uint32_t leaf = tr->frames[tr->nframes - 1];
		self[leaf] += tr->value;
		seen[leaf] = 1;
		for (uint32_t i = 0; i + 1 < tr->nframes; i++) {
			if (ne == cap) {
				cap = cap ? cap * 2 : 1024;
				e = arena_xrealloc(e, cap * sizeof(*e));
			}
			e[ne++] = (struct edge){tr->frames[i], tr->frames[i + 1], tr->value};
			seen[tr->frames[i]] = 1;
		}
	}
	g_s = s;
	if (ne)
		qsort(e, ne, sizeof(*e), cmp_edge);
	size_t m = 0; /* merge equal pairs */
	for (size_t i = 0; i < ne; i++) {
		if (m && e[m - 1].from == e[i].from && e[m - 1].to == e[i].to)
			e[m - 1].v += e[i].v;
		else
			e[m++] = e[i];
	}
	uint32_t *ids = arena_xmalloc((s->nnames + 1) * sizeof(*ids));
	size_t nid = 0;
	for (size_t i = 0; i < s->nnames; i++)
		if (seen[i])
			ids[nid++] = (uint32_t)i;
	if (nid)
		qsort(ids, nid, sizeof(*ids), cmp_id);
	fputs("events: Hits\n", out);
	size_t k = 0;
	for (size_t i = 0; i < nid; i++) {
		uint32_t id = ids[i];
		fprintf(out, "\nfl=??\nfn=%s\n", s->names[id].name);
		if (self[id] != 0)
			fprintf(out, "0 %lld\n", (long long)self[id]);
		while (k < m && strcmp(s->names[e[k].from].name, s->names[id].name) < 0)
			k++;
		for (; k < m && e[k].from == id; k++)
			fprintf(out, "cfl=??\ncfn=%s\ncalls=%lld 0\n0 %lld\n", s->names[e[k].to].name,
			        (long long)e[k].v, (long long)e[k].v);
	}
	free(e);
	free(self);
	free(seen);
	free(ids);
	if (ferror(out)) {
		if (!errno)
			errno = EIO;
		return -1;
	}
	return 0;
}
