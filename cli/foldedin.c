/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * foldedin.c - the folded-stacks reader of foldedin.h: splits lines into frames and counts the
 * way flamegraph.pl reads them (the count is the last whitespace-separated number, a second
 * number before it makes the line differential) and hands each stack to the flame graph.
 */
#include "foldedin.h"

#include <stdlib.h>
#include <string.h>

#include "../profile/arena.h"

/* Parses a count at the end of line[0..*len): digits with an optional '.' and decimals, preceded
   by a blank. On success stores it, shortens *len to before the blank(s) and returns 1. */
static int take_count(const char *line, size_t *len, double *out)
{
	size_t e = *len;
	while (e > 0 && (line[e - 1] == ' ' || line[e - 1] == '\t'))
		e--;
	size_t b = e;
	int dot = 0, digits = 0;
	while (b > 0 && ((line[b - 1] >= '0' && line[b - 1] <= '9') || (line[b - 1] == '.' && !dot))) {
		if (line[b - 1] == '.')
			dot = 1;
		else
			digits++;
		b--;
	}
	if (!digits || b == e || b == 0 || (line[b - 1] != ' ' && line[b - 1] != '\t') || line[b] == '.')
		return 0;
	char num[64];
	size_t k = e - b < sizeof(num) - 1 ? e - b : sizeof(num) - 1;
	memcpy(num, line + b, k);
	num[k] = '\0';
	*out = strtod(num, NULL);
	while (b > 0 && (line[b - 1] == ' ' || line[b - 1] == '\t'))
		b--;
	*len = b;
	return 1;
}

/* Splits one line into stack (len) and counts; returns the number of counts (0: not folded). */
static int split_line(const char *line, size_t *len, double *before, double *after)
{
	if (!take_count(line, len, after) || *len == 0)
		return 0;
	size_t l2 = *len;
	double b;
	if (take_count(line, &l2, &b) && l2 > 0) {
		*len = l2;
		*before = b;
		return 2;
	}
	return 1;
}

int foldedin_sniff(const char *buf, size_t n)
{
	/* The whole text is searched for a NUL only when its first line says folded stacks: a
	   profile of hundreds of MiB (mapped) is told apart by its first lines, without every one
	   of its pages being read in. */
	if (n == 0)
		return 0;
	static const char *const headers[] = {"heap_v2/", "heap profile:", "--- ", "MAPPED_LIBRARIES", "@ ", NULL};
	const char *p = buf, *end = buf + n;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		if (memchr(p, '\0', len))
			return 0;
		if (len && p[len - 1] == '\r')
			len--;
		size_t i = 0;
		while (i < len && (p[i] == ' ' || p[i] == '\t'))
			i++;
		if (i < len && p[i] != '#') {
			for (int h = 0; headers[h]; h++)
				if (strncmp(p, headers[h], strlen(headers[h])) == 0)
					return 0;
			double b, a;
			return split_line(p, &len, &b, &a) > 0 && !memchr(buf, '\0', n);
		}
		if (!nl)
			break;
		p = nl + 1;
	}
	return 0;
}

/* Drops a frame annotation from name[0..*len) and returns 1 when it marked an inlined frame. */
static int strip_mark(const char *name, size_t *len)
{
	static const char *const marks[] = {"[inline]", "_[i]", "_[k]", "_[j]", "_[w]", NULL};
	for (int m = 0; marks[m]; m++) {
		size_t k = strlen(marks[m]);
		if (*len > k && memcmp(name + *len - k, marks[m], k) == 0) {
			*len -= k;
			return m < 2;
		}
	}
	return 0;
}

void foldedin_add(struct flame_graph *g, const char *buf, size_t n, double factor, int as_base,
                  struct foldedin_result *r)
{
	memset(r, 0, sizeof(*r));
	uint32_t *ids = NULL;
	struct flame_frame_info *info = NULL;
	size_t cap = 0;
	char *name = NULL;
	size_t name_cap = 0;
	const char *p = buf, *end = buf + n;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		const char *line = p;
		p = nl ? nl + 1 : end;
		if (len && line[len - 1] == '\r')
			len--;
		size_t i = 0;
		while (i < len && (line[i] == ' ' || line[i] == '\t'))
			i++;
		if (i == len || line[i] == '#')
			continue;
		double before = 0, after = 0;
		int ncounts = split_line(line, &len, &before, &after);
		if (!ncounts) {
			r->bad++;
			continue;
		}
		r->two_columns |= ncounts == 2;
		size_t nf = 0;
		for (size_t s = 0; s <= len;) {
			size_t e = s;
			while (e < len && line[e] != ';')
				e++;
			if (nf == cap) {
				cap = cap ? cap * 2 : 64;
				ids = arena_xrealloc(ids, cap * sizeof(*ids));
				info = arena_xrealloc(info, cap * sizeof(*info));
			}
			size_t fl = e - s;
			int inl = strip_mark(line + s, &fl);
			if (fl + 1 > name_cap) {
				name_cap = (fl + 1) * 2;
				name = arena_xrealloc(name, name_cap);
			}
			memcpy(name, line + s, fl);
			name[fl] = '\0';
			ids[nf] = flame_name_id(g, name);
			info[nf] = (struct flame_frame_info){NULL, 0, inl};
			nf++;
			s = e + 1;
		}
		if (ncounts == 2)
			flame_add_ids(g, ids, info, nf, after * factor, before * factor);
		else if (as_base)
			flame_add_ids(g, ids, info, nf, 0, after * factor);
		else
			flame_add_ids(g, ids, info, nf, after * factor, 0);
		r->stacks++;
	}
	free(ids);
	free(info);
	free(name);
}
