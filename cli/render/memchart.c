/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * memchart.c - the memory chart of memchart.h: four or five polylines on one scale, a legend,
 * and the last dump's memory line (cli/memline.h).
 */
#include "memchart.h"

#include "../memline.h"

struct line_def {
	const char *name, *color;
	int a, b; /* the figure, or the sum of two (b >= 0) */
};

static const struct line_def lines[] = {
	{"heap (sampled)", "#1f77b4", MF_HEAP_LIVE, -1},
	{"allocator holds", "#ff7f0e", MF_ALLOC_IN_USE, MF_ALLOC_FREE},
	{"RSS", "#2ca02c", MF_RSS, -1},
	{"cgroup usage", "#9467bd", MF_CGROUP_USAGE, -1},
	{"limit", "#d62728", MF_CGROUP_LIMIT, -1},
};

static double value(const struct memfacts *m, const struct line_def *l)
{
	return (double)m->v[l->a] + (l->b >= 0 ? (double)m->v[l->b] : 0);
}

void memchart_write(FILE *out, const struct report_input *in)
{
	size_t n = in->n, last = n;
	double ymax = 0;
	for (size_t i = 0; i < n; i++) {
		if (!in->dumps[i].mem.present)
			continue;
		last = i;
		for (size_t k = 0; k < sizeof lines / sizeof lines[0]; k++) {
			double v = value(&in->dumps[i].mem, &lines[k]);
			if (v > ymax)
				ymax = v;
		}
	}
	if (last == n)
		return;
	char ml[512], b[32];
	memline_format(&in->dumps[last].mem, ml, sizeof ml);
	fputs("<h2>Memory beside the heap</h2>\n<p class=\"note\">What each dump recorded of the process's "
	      "memory: the sampled heap, what the allocator holds (in use + free), RSS, and the cgroup's "
	      "usage and limit. The gap between the heap and the allocator is fragmentation and free "
	      "lists; between the allocator and RSS, other mappings. Last dump: ", out);
	for (const char *p = ml; *p; p++) {
		if (*p == '<')
			fputs("&lt;", out);
		else if (*p == '&')
			fputs("&amp;", out);
		else
			fputc(*p, out);
	}
	fputs("</p>\n", out);
	const double W = 900, H = 260, l0 = 80, r0 = 20, t0 = 12, b0 = 42;
	double pw = W - l0 - r0, ph = H - t0 - b0;
	double tmax = in->time_s[n - 1] > 0 ? in->time_s[n - 1] : 0;
	if (!(ymax > 0))
		ymax = 1;
	ymax *= 1.05;
	fprintf(out, "<div class=\"chartwrap\"><svg id=\"memchart\" xmlns=\"http://www.w3.org/2000/svg\" "
	             "width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\">\n", W, H, W, H);
	for (int k = 0; k <= 4; k++) {
		double v = ymax / 1.05 * k / 4, y = t0 + ph - v / ymax * ph;
		memline_bytes(v, b, sizeof b, 1);
		fprintf(out, "<line class=\"grid\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>"
		             "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" font-size=\"11\">%s</text>\n",
		        l0, l0 + pw, y, y, l0 - 6, y + 4, b);
	}
	for (size_t k = 0; k < sizeof lines / sizeof lines[0]; k++) {
		int any = 0;
		for (size_t i = 0; i < n; i++)
			any |= in->dumps[i].mem.present && value(&in->dumps[i].mem, &lines[k]) > 0;
		if (!any)
			continue;
		fprintf(out, "<polyline class=\"mem\" data-name=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"",
		        lines[k].name, lines[k].color);
		for (size_t i = 0; i < n; i++) {
			if (!in->dumps[i].mem.present)
				continue;
			double x = l0 + (tmax > 0 ? in->time_s[i] / tmax : 0.5) * pw;
			double y = t0 + ph - value(&in->dumps[i].mem, &lines[k]) / ymax * ph;
			fprintf(out, "%.1f,%.1f ", x, y);
		}
		fputs("\"/>\n", out);
		fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" fill=\"%s\">%s</text>\n",
		        l0 + 10 + 150.0 * (double)k, H - 8, lines[k].color, lines[k].name);
	}
	fputs("</svg></div>\n", out);
}
