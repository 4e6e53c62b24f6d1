/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * dot.c - renders display stacks as a Graphviz dot call graph the way jeprof's PrintDot does
 * (see dot.h). Node and edge selection and styling live here; nothing is read or executed.
 */
#include "dot.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct edge {
	uint32_t src, dst;
	double w;
};

static const struct stacks *g_s;

static int cmp_nodes(const void *x, const void *y)
{
	const struct stacks_name *a = &g_s->names[*(const uint32_t *)x];
	const struct stacks_name *b = &g_s->names[*(const uint32_t *)y];
	double ca = fabs(a->cum), cb = fabs(b->cum);
	if (ca != cb)
		return ca > cb ? -1 : 1;
	return strcmp(a->name, b->name);
}

static int cmp_edges(const void *x, const void *y)
{
	const struct edge *a = x, *b = y;
	if (a->w != b->w)
		return a->w > b->w ? -1 : 1;
	int c = strcmp(g_s->names[a->src].name, g_s->names[b->src].name);
	return c ? c : strcmp(g_s->names[a->dst].name, g_s->names[b->dst].name);
}

static int cmp_pair(const void *x, const void *y)
{
	const struct edge *a = x, *b = y;
	if (a->src != b->src)
		return a->src < b->src ? -1 : 1;
	if (a->dst != b->dst)
		return a->dst < b->dst ? -1 : 1;
	return 0;
}

/* Writes s as the body of a dot string: quotes and backslashes escaped, whitespace runs and
   "::" turned into line breaks as jeprof does. */
static void put_label_name(FILE *f, const char *s)
{
	for (const char *p = s; *p;) {
		if (*p == ' ' || *p == '\t' || *p == '\n') {
			while (*p == ' ' || *p == '\t' || *p == '\n')
				p++;
			fputs("\\n", f);
		} else if (p[0] == ':' && p[1] == ':') {
			fputs("\\n", f);
			p += 2;
		} else {
			if (*p == '"' || *p == '\\')
				fputc('\\', f);
			fputc(*p++, f);
		}
	}
}

static void put_escaped(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		fputc(*s, f);
	}
}

int dot_write(FILE *f, const struct common_args *a, const struct stacks *s, const char *prog,
              int flags)
{
	int for_svg = flags & DOT_SVG;
	double local_total = s->kept_total;
	double nodelimit = trunc(a->nodefraction * local_total);
	double edgelimit = trunc(a->edgefraction * local_total);
	long nodecount = a->nodecount < 0 ? 80 : a->nodecount;
	char u1[64], u2[64], u3[64], u4[64], p1[32];
	const char *unit = common_unit(a);

	uint32_t *list = malloc((s->nnames + 1) * sizeof(*list));
	int32_t *node = malloc((s->nnames + 1) * sizeof(*node));
	if (!list || !node) {
		free(list);
		free(node);
		fprintf(stderr, "heaptap: callgraph: out of memory\n");
		return -1;
	}
	for (size_t i = 0; i < s->nnames; i++) {
		list[i] = (uint32_t)i;
		node[i] = 0;
	}
	g_s = s;
	qsort(list, s->nnames, sizeof(*list), cmp_nodes);
	long last = nodecount - 1;
	if (last > (long)s->nnames - 1)
		last = (long)s->nnames - 1;
	while (last >= 0 && fabs(s->names[list[last]].cum) <= nodelimit)
		last--;
	if (last < 0) {
		fprintf(stderr, "heaptap: callgraph: no nodes to print\n");
		free(list);
		free(node);
		return 1;
	}
	if (nodelimit > 0 || edgelimit > 0)
		fprintf(stderr, "heaptap: %s: dropping nodes with <= %s %s; edges with <= %s abs(%s)\n",
		        a->cmd ? a->cmd : "callgraph", common_fmt_value(a, nodelimit, u1, sizeof(u1)), unit,
		        common_fmt_value(a, edgelimit, u2, sizeof(u2)), unit);

	fputs("digraph \"", f);
	put_escaped(f, prog);
	fprintf(f, "; %s %s\" {\n", common_fmt_value(a, s->total, u1, sizeof(u1)), unit);
	fputs("node [width=0.375,height=0.25];\n", f);
	fputs("Legend [shape=box,fontsize=24,shape=plaintext,label=\"", f);
	put_escaped(f, prog);
	fprintf(f, "\\lTotal %s: %s\\lFocusing on: %s\\lDropped nodes with <= %s abs(%s)\\l"
	           "Dropped edges with <= %s %s\\l\"];\n",
	        unit, common_fmt_value(a, s->total, u1, sizeof(u1)),
	        common_fmt_value(a, local_total, u2, sizeof(u2)),
	        common_fmt_value(a, nodelimit, u3, sizeof(u3)), unit,
	        common_fmt_value(a, edgelimit, u4, sizeof(u4)), unit);

	for (long i = 0; i <= last; i++) {
		const struct stacks_name *nm = &s->names[list[i]];
		double fs = 8;
		if (local_total > 0)
			fs = 8 + 50.0 * sqrt(fabs(nm->flat / local_total));
		node[list[i]] = (int32_t)(i + 1);
		fprintf(f, "N%ld [label=\"", i + 1);
		put_label_name(f, nm->name);
		fprintf(f, "\\n%s (%s)", common_fmt_value(a, nm->flat, u1, sizeof(u1)),
		        common_fmt_percent(nm->flat, local_total, p1, sizeof(p1)));
		if (nm->flat != nm->cum)
			fprintf(f, "\\rof %s (%s)", common_fmt_value(a, nm->cum, u1, sizeof(u1)),
			        common_fmt_percent(nm->cum, local_total, p1, sizeof(p1)));
		const char *style = "";
		if ((flags & DOT_HEAPCHECK) && nm->flat > 0)
			style = ",style=filled,fillcolor=gray"; /* what leaks */
		else if ((flags & DOT_HEAPCHECK) && nm->flat < 0)
			style = ",peripheries=3";
		fprintf(f, "\\r\",shape=box,fontsize=%.1f%s];\n", fs, style);
	}

	/* Edges between consecutive frames of every trace, both ends kept as nodes. */
	size_t ne = 0, cap = 0;
	struct edge *e = NULL;
	for (size_t t = 0; t < s->ntraces; t++) {
		const struct stacks_trace *tr = &s->traces[t];
		for (uint32_t j = 0; j + 1 < tr->nframes; j++) {
			uint32_t src = tr->frames[j], dst = tr->frames[j + 1];
			if (!node[src] || !node[dst])
				continue;
			if (ne == cap) {
				cap = cap ? cap * 2 : 1024;
				struct edge *n2 = realloc(e, cap * sizeof(*e));
				if (!n2) {
					free(e);
					free(list);
					free(node);
					fprintf(stderr, "heaptap: callgraph: out of memory\n");
					return -1;
				}
				e = n2;
			}
			e[ne++] = (struct edge){src, dst, tr->value};
		}
	}
	if (ne)
		qsort(e, ne, sizeof(*e), cmp_pair);
	size_t m = 0;
	for (size_t i = 0; i < ne; i++) {
		if (m && e[m - 1].src == e[i].src && e[m - 1].dst == e[i].dst)
			e[m - 1].w += e[i].w;
		else
			e[m++] = e[i];
	}
	if (m)
		qsort(e, m, sizeof(*e), cmp_edges);
	int *indeg = calloc(s->nnames + 1, sizeof(int)), *outdeg = calloc(s->nnames + 1, sizeof(int));
	for (size_t i = 0; indeg && outdeg && i < m; i++) {
		int keep;
		if (indeg[e[i].dst] == 0)
			keep = 1;
		else if (fabs(e[i].w) <= edgelimit)
			keep = 0;
		else if (outdeg[e[i].src] >= a->maxdegree || indeg[e[i].dst] >= a->maxdegree)
			keep = 0;
		else
			keep = 1;
		if (!keep)
			continue;
		outdeg[e[i].src]++;
		indeg[e[i].dst]++;
		double frac = local_total != 0 ? fabs(3 * (e[i].w / local_total)) : 0;
		if (frac > 1)
			frac = 1;
		double w = frac * 2;
		if (w < 1 && for_svg)
			w = 1;
		double ew = pow(fabs(e[i].w), 0.7);
		if (ew > 100000)
			ew = 100000;
		fprintf(f, "N%d -> N%d [label=%s, weight=%d, style=\"setlinewidth(%f)%s\"];\n",
		        node[e[i].src], node[e[i].dst], common_fmt_value(a, e[i].w, u1, sizeof(u1)),
		        (int)ew, w, s->names[e[i].dst].inlined ? ",dashed" : "");
	}
	fputs("}\n", f);
	free(indeg);
	free(outdeg);
	free(e);
	free(list);
	free(node);
	return ferror(f) ? -1 : 0;
}
