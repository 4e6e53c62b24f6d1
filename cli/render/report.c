/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * report.c - the HTML series report of report.h: per-stack series of live values across the
 * dumps, the least-squares fits that find leak suspects and growers, and the page itself
 * (chart SVG, tables, flame graphs from flame.c, facts). It writes one file with everything
 * inline; it does not load, order or symbolize dumps.
 */
#include "report.h"
#include "memchart.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../base/hash.h"
#include "../../profile/arena.h"
#include "../common.h"
#include "../stacks.h"
#include "flame.h"
#include "svgflame.h"
#include "svgscript.h"
#include "svgutil.h"

#define CHART_SERIES 8  /* stacks drawn in the chart; the rest is "other" */
#define TABLE_ROWS 25   /* rows of the peak dump's top table */
#define GROWER_ROWS 15
#define SUSPECT_ROWS 15

/* ---- fits ---- */

void report_fit_series(const double *t, const double *v, size_t n, struct report_fit *f)
{
	memset(f, 0, sizeof *f);
	if (n == 0)
		return;
	double mt = 0, mv = 0;
	for (size_t i = 0; i < n; i++) {
		mt += t[i];
		mv += v[i];
	}
	mt /= (double)n;
	mv /= (double)n;
	double stt = 0, stv = 0, svv = 0;
	for (size_t i = 0; i < n; i++) {
		stt += (t[i] - mt) * (t[i] - mt);
		stv += (t[i] - mt) * (v[i] - mv);
		svv += (v[i] - mv) * (v[i] - mv);
	}
	f->slope = stt > 0 ? stv / stt : 0;
	f->intercept = mv - f->slope * mt;
	/* R² of a simple linear fit is the squared correlation of t and v. */
	f->r2 = stt > 0 && svv > 0 ? (stv * stv) / (stt * svv) : 0;
	for (size_t i = 1; i < n; i++) {
		if (v[i] > v[i - 1])
			f->inc++;
		else if (v[i] < v[i - 1])
			f->dec++;
	}
	f->monotone = f->inc + f->dec ? (double)f->inc / (f->inc + f->dec) : 0;
	f->rise = f->slope * (t[n - 1] - t[0]);
}

double report_noise(double peak, uint64_t period, int space)
{
	if (!space || period <= 1 || !(peak > 0))
		return 0;
	return sqrt(peak * (double)period);
}

int report_is_suspect(const struct report_fit *f, size_t n, double noise)
{
	return n >= REPORT_MIN_DUMPS && f->slope > 0 && f->r2 >= REPORT_MIN_R2 &&
	       f->monotone >= REPORT_MIN_MONOTONE && f->rise >= REPORT_NOISE_K * noise;
}

/* ---- series of stacks ---- */

struct series {
	char *key;          /* frame names joined by '\n', root first */
	const char *leaf;   /* points into key: the last name */
	const char *caller; /* the name before it (a copy), or NULL */
	double *v;          /* one value per dump */
	double peak;        /* max over dumps */
	double noise;       /* sampling noise bound at the peak (report_noise) */
	struct report_fit fit;
};

struct series_set {
	struct series *s;
	size_t n, cap;
	uint32_t *tab;      /* open addressing over indexes + 1 (0 = empty) */
	size_t tab_cap;
	size_t ndumps;
};

static void set_grow(struct series_set *ss)
{
	size_t cap = ss->tab_cap ? ss->tab_cap * 2 : 1024;
	uint32_t *t = arena_xmalloc(cap * sizeof *t);
	memset(t, 0, cap * sizeof *t);
	for (size_t i = 0; i < ss->n; i++) {
		size_t j = hash_str(ss->s[i].key) & (cap - 1);
		while (t[j])
			j = (j + 1) & (cap - 1);
		t[j] = (uint32_t)i + 1;
	}
	free(ss->tab);
	ss->tab = t;
	ss->tab_cap = cap;
}

static struct series *set_get(struct series_set *ss, const char *key)
{
	if ((ss->n + 1) * 2 > ss->tab_cap)
		set_grow(ss);
	size_t j = hash_str(key) & (ss->tab_cap - 1);
	while (ss->tab[j]) {
		struct series *s = &ss->s[ss->tab[j] - 1];
		if (strcmp(s->key, key) == 0)
			return s;
		j = (j + 1) & (ss->tab_cap - 1);
	}
	if (ss->n == ss->cap) {
		ss->cap = ss->cap ? ss->cap * 2 : 256;
		ss->s = arena_xrealloc(ss->s, ss->cap * sizeof *ss->s);
	}
	struct series *s = &ss->s[ss->n];
	memset(s, 0, sizeof *s);
	size_t len = strlen(key);
	s->key = arena_xmalloc(len + 1);
	memcpy(s->key, key, len + 1);
	const char *nl = strrchr(s->key, '\n');
	s->leaf = nl ? nl + 1 : s->key;
	if (nl) {
		const char *p = nl;
		while (p > s->key && p[-1] != '\n')
			p--;
		size_t cl = (size_t)(nl - p);
		char *c = arena_xmalloc(cl + 1);
		memcpy(c, p, cl);
		c[cl] = 0;
		s->caller = c;
	}
	s->v = arena_xmalloc(ss->ndumps * sizeof *s->v);
	memset(s->v, 0, ss->ndumps * sizeof *s->v);
	ss->tab[j] = (uint32_t)ss->n + 1;
	ss->n++;
	return s;
}

static void set_release(struct series_set *ss)
{
	for (size_t i = 0; i < ss->n; i++) {
		free(ss->s[i].key);
		free((char *)ss->s[i].caller);
		free(ss->s[i].v);
	}
	free(ss->s);
	free(ss->tab);
}

/*
 * One dump's traces streamed into the report while stacks_build names them (the
 * stacks_options.each callback), not kept: each goes into the series of dump d and into up to
 * two flame graphs (the peak one, the differential one). Memory is the series and the graphs'
 * merged frames, not the dump's stacks times their depth.
 */
struct dump_sink {
	struct series_set *ss;
	size_t d;
	const struct stacks *st;     /* the stacks being built: their names */
	struct svgflame_sink fl[2];
	size_t nfl;
	char *key;                   /* one trace's series key */
	size_t cap;
};

/* Adds one trace to dump d's series: its key is its frame names joined by '\n', root first. */
static void sink_add(void *ctx, const uint32_t *frames, uint32_t nframes, double value,
                     const struct prof_sample *sample)
{
	struct dump_sink *k = ctx;
	const struct stacks_name *names = k->st->names;
	size_t len = 0;
	for (uint32_t i = 0; i < nframes; i++)
		len += strlen(names[frames[i]].name) + 1;
	if (len + 1 > k->cap) {
		k->cap = (len + 1) * 2;
		k->key = arena_xrealloc(k->key, k->cap);
	}
	char *o = k->key;
	for (uint32_t i = 0; i < nframes; i++) {
		const char *nm = names[frames[i]].name;
		size_t l = strlen(nm);
		if (i)
			*o++ = '\n';
		memcpy(o, nm, l);
		o += l;
	}
	*o = 0;
	set_get(k->ss, k->key)->v[k->d] += value;
	for (size_t f = 0; f < k->nfl; f++)
		svgflame_sink_add(&k->fl[f], frames, nframes, value, sample);
}

/* Builds dump d's stacks with o, streaming them into the series and into peakg / diffg where
   dump d belongs there; *total gets the dump's total. Returns 0 or -1 (stacks_build's). */
static int add_dump(struct series_set *ss, const struct report_input *in, size_t d, size_t peak,
                    const struct stacks_options *o, struct flame_graph *peakg, struct flame_graph *diffg,
                    double *total)
{
	const struct profile *p = &in->dumps[d];
	struct stacks st;
	struct dump_sink k;
	memset(&k, 0, sizeof k);
	k.ss = ss;
	k.d = d;
	k.st = &st;
	/* each trace goes to the peak graph first, then as the differential graph's base (the
	   first dump) or widths (the last one); every graph gets its traces in dump order */
	if (d == peak)
		svgflame_sink_init(&k.fl[k.nfl++], peakg, &st, p, 0);
	if (diffg && d == 0)
		svgflame_sink_init(&k.fl[k.nfl++], diffg, &st, p, 1);
	if (diffg && d == in->n - 1)
		svgflame_sink_init(&k.fl[k.nfl++], diffg, &st, p, 0);
	struct stacks_options so = *o;
	so.each = sink_add;
	so.each_ctx = &k;
	int rc = stacks_build(&st, p, &so);
	for (size_t f = 0; f < k.nfl; f++)
		svgflame_sink_release(&k.fl[f]);
	free(k.key);
	if (rc != 0)
		return -1;
	*total = st.total;
	stacks_release(&st);
	return 0;
}

/* ---- output helpers ---- */

static void esc(FILE *out, const char *s)
{
	svgutil_escape(out, s ? s : "");
}

/* A JSON string literal, safe inside <script> ('<' escaped). */
static void json_str(FILE *out, const char *s)
{
	fputc('"', out);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(out, "\\%c", *p);
		else if (*p < 0x20 || *p == '<' || *p == '>' || *p == '&')
			fprintf(out, "\\u%04x", *p);
		else
			fputc(*p, out);
	}
	fputc('"', out);
}

/* The selected value's name: "CPU time" or "samples" for CPU profiles. */
static const char *value_name(int k)
{
	if (common_is_cpu())
		return k == PV_INUSE_BYTES || k == PV_ALLOC_BYTES ? "CPU time" : "samples";
	return common_value_name(k);
}

static const char *fmt_value(char *buf, double v, int space)
{
	if (space && common_is_cpu())
		return common_fmt_time(v, 0, buf, 32); /* CPU profiles: CPU time, not bytes */
	if (space)
		return svgutil_bytes(buf, v);
	svgutil_commas(buf, v);
	return buf;
}

static const char *fmt_rate(char *buf, double v, int space, int time_known)
{
	char num[32];
	snprintf(buf, 48, "%s%s/%s", v > 0 ? "+" : "", fmt_value(num, v, space), time_known ? "s" : "dump");
	return buf;
}

static const char *fmt_time(char *buf, size_t cap, int64_t ns)
{
	if (ns <= 0) {
		snprintf(buf, cap, "unknown");
		return buf;
	}
	time_t secs = (time_t)(ns / 1000000000);
	struct tm tm;
	gmtime_r(&secs, &tm);
	char d[64];
	strftime(d, sizeof d, "%Y-%m-%d %H:%M:%S", &tm);
	snprintf(buf, cap, "%s.%03d UTC", d, (int)((ns / 1000000) % 1000));
	return buf;
}

/* The trigger of a jemalloc/heaptap dump name "<prefix>.<pid>.<seq>.<t><n>.heap" (or .pb.gz,
   .pb, .txt), from its letter. */
static const char *trigger_of(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	static const char *const ext[] = {".heap", ".pb.gz", ".pb", ".txt"};
	const char *end = NULL;
	for (size_t i = 0; i < sizeof ext / sizeof ext[0] && !end; i++)
		end = strstr(base, ext[i]);
	if (!end)
		return "";
	const char *p = end;
	while (p > base && p[-1] != '.')
		p--;
	if (p == base)
		return "";
	switch (*p) {
	case 'i': return "interval";
	case 'u': return "gdump";
	case 'm': return "manual";
	case 'f': return "final";
	case 't': return "time";
	case 's': return "signal";
	}
	return "";
}

/* The stack of a series as text, one frame a line, leaf first. */
static void write_stack(FILE *out, const char *key)
{
	const char *end = key + strlen(key);
	while (end > key) {
		const char *p = end;
		while (p > key && p[-1] != '\n')
			p--;
		svgutil_escape_n(out, p, (size_t)(end - p));
		fputc('\n', out);
		end = p > key ? p - 1 : key;
	}
}

static const char *const chart_colors[CHART_SERIES + 1] = {
	"#e6550d", "#3182bd", "#31a354", "#756bb1", "#de2d26", "#fdae6b", "#6baed6", "#a1d99b", "#bdbdbd",
};

/* ---- sections ---- */

struct ctx {
	FILE *out;
	const struct common_args *a;
	const struct report_input *in;
	int space;
	struct series_set ss;
	double *total;       /* per dump, the selected value over all samples */
	size_t peak;         /* dump with the largest total */
	uint32_t *order;     /* series by peak value, descending */
	size_t nchart;
};


static int cmp_peak(const void *x, const void *y, void *arg)
{
	const struct ctx *sort_ctx = arg;
	const struct series *a = &sort_ctx->ss.s[*(const uint32_t *)x], *b = &sort_ctx->ss.s[*(const uint32_t *)y];
	if (a->peak != b->peak)
		return a->peak > b->peak ? -1 : 1;
	return strcmp(a->key, b->key);
}

static int cmp_slope(const void *x, const void *y, void *arg)
{
	const struct ctx *sort_ctx = arg;
	const struct series *a = &sort_ctx->ss.s[*(const uint32_t *)x], *b = &sort_ctx->ss.s[*(const uint32_t *)y];
	if (a->fit.slope != b->fit.slope)
		return a->fit.slope > b->fit.slope ? -1 : 1;
	return strcmp(a->key, b->key);
}

static int cmp_growth(const void *x, const void *y, void *arg)
{
	const struct ctx *sort_ctx = arg;
	size_t n = sort_ctx->in->n;
	const struct series *a = &sort_ctx->ss.s[*(const uint32_t *)x], *b = &sort_ctx->ss.s[*(const uint32_t *)y];
	double da = a->v[n - 1] - a->v[0], db = b->v[n - 1] - b->v[0];
	if (da != db)
		return da > db ? -1 : 1;
	return strcmp(a->key, b->key);
}

static void series_label(FILE *out, const struct series *s)
{
	esc(out, s->leaf);
	if (s->caller) {
		fputs(" \xe2\x86\x90 ", out); /* ← */
		esc(out, s->caller);
	}
}

static void write_chart(struct ctx *c)
{
	FILE *out = c->out;
	const struct report_input *in = c->in;
	size_t n = in->n;
	const double W = 900, H = 320, ml = 80, mr = 20, mt = 12, mb = 42;
	double pw = W - ml - mr, ph = H - mt - mb;
	double tmax = in->time_s[n - 1] > 0 ? in->time_s[n - 1] : 0;
	double ymax = 0;
	for (size_t i = 0; i < n; i++) {
		double sum = 0;
		for (size_t k = 0; k < c->nchart; k++)
			sum += c->ss.s[c->order[k]].v[i];
		if (c->total[i] > ymax)
			ymax = c->total[i];
		if (sum > ymax)
			ymax = sum;
	}
	if (!(ymax > 0))
		ymax = 1;
	ymax *= 1.05;
#define XOF(i) (ml + (tmax > 0 ? in->time_s[i] / tmax : 0.5) * pw)
#define YOF(v) (mt + ph - ((v) / ymax) * ph)
	fprintf(out, "<div class=\"chartwrap\"><svg id=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
	             "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\">\n", W, H, W, H);
	char buf[64];
	for (int k = 0; k <= 4; k++) {
		double v = ymax / 1.05 * k / 4, y = YOF(v);
		fprintf(out, "<line class=\"grid\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>", ml, ml + pw, y, y);
		fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", ml - 6, y + 4,
		        fmt_value(buf, v, c->space));
	}
	for (int k = 0; k <= 5; k++) {
		double x = ml + pw * k / 5;
		double tv = tmax * k / 5;
		fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%.*f%s</text>", x, mt + ph + 16,
		        in->time_known ? (tmax < 10 ? 2 : 1) : 0, tv, in->time_known ? " s" : "");
	}
	fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", ml + pw / 2, H - 6,
	        in->time_known ? "time since the first dump" : "dump index (no usable times)");
	/* stacked areas, bottom up: the top series first, then "other" */
	double *lo = arena_xmalloc(n * sizeof *lo), *hi = arena_xmalloc(n * sizeof *hi);
	memset(lo, 0, n * sizeof *lo);
	for (size_t k = 0; k <= c->nchart; k++) {
		const struct series *s = k < c->nchart ? &c->ss.s[c->order[k]] : NULL;
		for (size_t i = 0; i < n; i++) {
			double v = s ? s->v[i] : c->total[i] - lo[i];
			hi[i] = lo[i] + (v > 0 ? v : 0);
		}
		fprintf(out, "<path class=\"area\" fill=\"%s\" fill-opacity=\"0.85\" d=\"", chart_colors[k]);
		for (size_t i = 0; i < n; i++)
			fprintf(out, "%s%.1f,%.1f", i ? "L" : "M", XOF(i), YOF(hi[i]));
		for (size_t i = n; i-- > 0;)
			fprintf(out, "L%.1f,%.1f", XOF(i), YOF(lo[i]));
		fputs("Z\"><title>", out);
		if (s)
			series_label(out, s);
		else
			fputs("other stacks", out);
		fputs("</title></path>\n", out);
		memcpy(lo, hi, n * sizeof *lo);
	}
	free(lo);
	free(hi);
	fputs("<polyline class=\"totalline\" points=\"", out);
	for (size_t i = 0; i < n; i++)
		fprintf(out, "%s%.1f,%.1f", i ? " " : "", XOF(i), YOF(c->total[i]));
	fputs("\"/>\n", out);
	for (size_t i = 0; i < n; i++)
		fprintf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\"><title>dump %zu: %s</title></circle>", XOF(i),
		        YOF(c->total[i]), i + 1, fmt_value(buf, c->total[i], c->space));
	fprintf(out, "\n<line class=\"axis\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>", ml, ml + pw, mt + ph, mt + ph);
	fprintf(out, "<line class=\"axis\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>", ml, ml, mt, mt + ph);
	fprintf(out, "<line class=\"cursor hide\" x1=\"0\" x2=\"0\" y1=\"%.1f\" y2=\"%.1f\"/>\n", mt, mt + ph);
	fputs("</svg><div id=\"chartinfo\">Move the mouse over the chart to read the values of each dump.</div></div>\n", out);
	fputs("<div class=\"legend\">", out);
	for (size_t k = 0; k <= c->nchart; k++) {
		fprintf(out, "<span class=\"item\"><span class=\"swatch\" style=\"background:%s\"></span> ", chart_colors[k]);
		if (k < c->nchart)
			series_label(out, &c->ss.s[c->order[k]]);
		else
			fputs("other stacks", out);
		fputs("</span> ", out);
	}
	fputs("<span class=\"item\">&#8212; total</span></div>\n", out);

	/* data for the hover read-out */
	fputs("<script type=\"application/json\" id=\"ht-data\">{", out);
	fprintf(out, "\"geo\":{\"w\":%.0f,\"ml\":%.1f,\"pw\":%.1f,\"tmax\":%.17g},\"space\":%d,\"timeKnown\":%d,\"t\":[",
	        W, ml, pw, tmax, c->space, in->time_known);
	for (size_t i = 0; i < n; i++)
		fprintf(out, "%s%.6f", i ? "," : "", in->time_s[i]);
	fputs("],\"files\":[", out);
	for (size_t i = 0; i < n; i++) {
		const char *b = strrchr(in->paths[i], '/');
		if (i)
			fputc(',', out);
		json_str(out, b ? b + 1 : in->paths[i]);
	}
	fputs("],\"total\":[", out);
	for (size_t i = 0; i < n; i++)
		fprintf(out, "%s%.17g", i ? "," : "", c->total[i]);
	fputs("],\"series\":[", out);
	for (size_t k = 0; k < c->nchart; k++) {
		const struct series *s = &c->ss.s[c->order[k]];
		char label[1024];
		snprintf(label, sizeof label, "%s%s%s", s->leaf, s->caller ? " \xe2\x86\x90 " : "", s->caller ? s->caller : "");
		fprintf(out, "%s{\"color\":\"%s\",\"label\":", k ? "," : "", chart_colors[k]);
		json_str(out, label);
		fputs(",\"v\":[", out);
		for (size_t i = 0; i < n; i++)
			fprintf(out, "%s%.17g", i ? "," : "", s->v[i]);
		fputs("]}", out);
	}
	fputs("]}</script>\n", out);
#undef XOF
#undef YOF
}

static void write_fit_cells(struct ctx *c, const struct series *s)
{
	char b1[64], b2[64], b3[64];
	size_t n = c->in->n;
	fprintf(c->out, "<td class=\"num\">%s</td><td class=\"num\">%s</td><td class=\"num\">%s</td>",
	        fmt_rate(b1, s->fit.slope, c->space, c->in->time_known), fmt_value(b2, s->v[0], c->space),
	        fmt_value(b3, s->v[n - 1], c->space));
	fprintf(c->out, "<td class=\"num\">%.3f</td><td class=\"num\">%.2f (%d&#8593; %d&#8595;)</td>", s->fit.r2,
	        s->fit.monotone, s->fit.inc, s->fit.dec);
}

static void write_site_cell(struct ctx *c, const struct series *s)
{
	fputs("<td class=\"site\">", c->out);
	esc(c->out, s->leaf);
	fputs("<details><summary>stack</summary><pre class=\"stack\">", c->out);
	write_stack(c->out, s->key);
	fputs("</pre></details></td>", c->out);
}

static void write_suspects(struct ctx *c, const uint32_t *by_slope)
{
	FILE *out = c->out;
	size_t n = c->in->n, shown = 0;
	fprintf(out, "<h2 id=\"suspects-h\">Leak suspects</h2>\n<p class=\"note\">Stacks whose live %s grow "
	             "steadily: least-squares slope &gt; 0 over %s, R&#178; &#8805; %.1f, a fraction of "
	             "increasing steps (among steps that changed) &#8805; %.1f, and a fitted rise of at least %.0f "
	             "times the sampling noise bound &#8730;(peak &#215; period), over at least %d dumps; ranked "
	             "by slope. See docs/REPORT.md.</p>\n",
	        c->space ? "bytes" : "objects", c->in->time_known ? "time" : "the dump index", REPORT_MIN_R2,
	        REPORT_MIN_MONOTONE, REPORT_NOISE_K, REPORT_MIN_DUMPS);
	if (c->a->value_index == PV_ALLOC_BYTES || c->a->value_index == PV_ALLOC_OBJS)
		fputs("<p class=\"note\">The selected value is cumulative (alloc_*): it never shrinks, so every "
		      "stack that keeps allocating qualifies. Use the default inuse_space to look for leaks.</p>\n",
		      out);
	fputs("<table class=\"data\" id=\"suspects\"><tr><th>#</th><th>allocation site</th><th class=\"num\">slope</th>"
	      "<th class=\"num\">first</th><th class=\"num\">last</th><th class=\"num\">R&#178;</th>"
	      "<th class=\"num\">increasing steps</th></tr>\n", out);
	for (size_t k = 0; k < c->ss.n && shown < SUSPECT_ROWS; k++) {
		const struct series *s = &c->ss.s[by_slope[k]];
		if (!report_is_suspect(&s->fit, n, s->noise))
			continue;
		shown++;
		fprintf(out, "<tr class=\"suspect\" data-site=\"");
		esc(out, s->leaf);
		fprintf(out, "\"><td>%zu</td>", shown);
		write_site_cell(c, s);
		write_fit_cells(c, s);
		fputs("</tr>\n", out);
	}
	fputs("</table>\n", out);
	if (!shown)
		fprintf(out, "<p class=\"note\" id=\"nosuspects\">No leak suspects: %s.</p>\n",
		        n < REPORT_MIN_DUMPS ? "too few dumps to tell" : "no stack grows steadily");
}

/* Leak suspects by allocation site: every stack's series summed by its leaf frame, so a leak
   spread over many call paths (each too small or too noisy alone) still shows. */
static void write_site_suspects(struct ctx *c)
{
	FILE *out = c->out;
	size_t n = c->in->n;
	struct series_set sites;
	memset(&sites, 0, sizeof sites);
	sites.ndumps = n;
	for (size_t k = 0; k < c->ss.n; k++) {
		const struct series *s = &c->ss.s[k];
		struct series *site = set_get(&sites, s->leaf);
		for (size_t i = 0; i < n; i++)
			site->v[i] += s->v[i];
	}
	uint32_t *ord = arena_xmalloc((sites.n ? sites.n : 1) * sizeof *ord);
	size_t nsus = 0;
	for (size_t k = 0; k < sites.n; k++) {
		struct series *s = &sites.s[k];
		for (size_t i = 0; i < n; i++)
			if (s->v[i] > s->peak)
				s->peak = s->v[i];
		report_fit_series(c->in->time_s, s->v, n, &s->fit);
		s->noise = report_noise(s->peak, c->in->dumps[0].period, c->space);
		if (report_is_suspect(&s->fit, n, s->noise))
			ord[nsus++] = (uint32_t)k;
	}
	struct ctx sc = *c;
	sc.ss = sites;
	qsort_r(ord, nsus, sizeof *ord, cmp_slope, &sc);
	fputs("<h3>By allocation site</h3>\n<p class=\"note\">The same rule on the sum of all stacks that end in "
	      "the same function.</p>\n<table class=\"data\" id=\"suspect-sites\"><tr><th>#</th>"
	      "<th>allocation site</th><th class=\"num\">stacks</th><th class=\"num\">slope</th>"
	      "<th class=\"num\">first</th><th class=\"num\">last</th><th class=\"num\">R&#178;</th>"
	      "<th class=\"num\">increasing steps</th></tr>\n",
	      out);
	for (size_t k = 0; k < nsus && k < SUSPECT_ROWS; k++) {
		const struct series *s = &sites.s[ord[k]];
		size_t nstacks = 0;
		for (size_t j = 0; j < c->ss.n; j++)
			nstacks += strcmp(c->ss.s[j].leaf, s->key) == 0;
		fputs("<tr class=\"suspect\" data-site=\"", out);
		esc(out, s->key);
		fprintf(out, "\"><td>%zu</td><td class=\"site\">", k + 1);
		esc(out, s->key);
		fprintf(out, "</td><td class=\"num\">%zu</td>", nstacks);
		write_fit_cells(c, s);
		fputs("</tr>\n", out);
	}
	fputs("</table>\n", out);
	if (!nsus)
		fputs("<p class=\"note\">No allocation site grows steadily.</p>\n", out);
	free(ord);
	set_release(&sites);
}

static void write_growers(struct ctx *c, const uint32_t *by_growth)
{
	FILE *out = c->out;
	size_t n = c->in->n;
	char b[64];
	fputs("<h2>Top growers</h2>\n<p class=\"note\">Stacks ranked by growth from the first dump to the last.</p>\n"
	      "<table class=\"data\" id=\"growers\"><tr><th>#</th><th>allocation site</th><th class=\"num\">growth</th>"
	      "<th class=\"num\">slope</th><th class=\"num\">first</th><th class=\"num\">last</th>"
	      "<th class=\"num\">R&#178;</th><th class=\"num\">increasing steps</th></tr>\n",
	      out);
	size_t shown = 0;
	for (size_t k = 0; k < c->ss.n && shown < GROWER_ROWS; k++) {
		const struct series *s = &c->ss.s[by_growth[k]];
		double d = s->v[n - 1] - s->v[0];
		if (!(d > 0))
			break;
		shown++;
		fprintf(out, "<tr%s data-site=\"", report_is_suspect(&s->fit, n, s->noise) ? " class=\"suspect\"" : "");
		esc(out, s->leaf);
		fprintf(out, "\"><td>%zu</td>", shown);
		write_site_cell(c, s);
		fprintf(out, "<td class=\"num\">+%s</td>", fmt_value(b, d, c->space));
		write_fit_cells(c, s);
		fputs("</tr>\n", out);
	}
	fputs("</table>\n", out);
	if (!shown)
		fputs("<p class=\"note\">No stack grew.</p>\n", out);
}

static void write_top_table(struct ctx *c, const struct stacks *st)
{
	FILE *out = c->out;
	size_t nrows = 0;
	uint32_t *rows = stacks_sorted(st, 0, &nrows);
	char b1[64], b2[64];
	double tot = st->kept_total;
	fputs("<table class=\"data\" id=\"peaktop\"><tr><th class=\"num\">flat</th><th class=\"num\">flat%</th>"
	      "<th class=\"num\">sum%</th><th class=\"num\">cum</th><th class=\"num\">cum%</th><th>function</th></tr>\n",
	      out);
	double sum = 0;
	for (size_t i = 0; i < nrows && i < TABLE_ROWS; i++) {
		const struct stacks_name *nm = &st->names[rows[i]];
		sum += nm->flat;
		fprintf(out, "<tr><td class=\"num\">%s</td><td class=\"num\">%.1f%%</td><td class=\"num\">%.1f%%</td>"
		             "<td class=\"num\">%s</td><td class=\"num\">%.1f%%</td><td class=\"site\">",
		        fmt_value(b1, nm->flat, c->space), tot ? 100 * nm->flat / tot : 0, tot ? 100 * sum / tot : 0,
		        fmt_value(b2, nm->cum, c->space), tot ? 100 * nm->cum / tot : 0);
		esc(out, nm->name);
		fputs("</td></tr>\n", out);
	}
	fputs("</table>\n", out);
	if (nrows > TABLE_ROWS)
		fprintf(out, "<p class=\"note\">%zu more rows not shown (heaptap top lists them all).</p>\n",
		        nrows - TABLE_ROWS);
	free(rows);
}

/* The sites whose objects other threads freed (heaptap dumps: bytes_freed_by_other_threads), in
   the newest dump, as a top table of those bytes; nothing when there are none. The values of
   p are swapped for the table's build and put back. */
static void write_cross_thread(struct ctx *c, const struct common_args *a, struct profile *p)
{
	double total = 0;
	for (size_t i = 0; i < p->nsamples; i++)
		total += p->samples[i].xfree;
	if (!(total > 0))
		return;
	double (*saved)[PV_COUNT] = malloc(p->nsamples * sizeof *saved);
	if (!saved)
		return;
	for (size_t i = 0; i < p->nsamples; i++) {
		memcpy(saved[i], p->samples[i].v, sizeof saved[i]);
		memset(p->samples[i].v, 0, sizeof p->samples[i].v);
		p->samples[i].v[PV_INUSE_BYTES] = p->samples[i].xfree;
	}
	struct stacks_options so;
	stacks_options_from(&so, a);
	so.style = STACKS_SHORT;
	so.value_index = PV_INUSE_BYTES;
	so.sum_only = 1; /* a top table: names' flat and cum only */
	struct stacks st;
	if (stacks_build(&st, p, &so) == 0) {
		char b[64];
		int space = c->space;
		c->space = 1;
		fprintf(c->out, "<h2>Freed by another thread</h2>\n<p class=\"note\">%s allocated at these "
		                "sites and freed by a thread other than the one that allocated them (an "
		                "estimate from the sampled objects, since start, in the newest dump). With "
		                "glibc's malloc such a block goes back to the allocating thread's arena, "
		                "which may keep the memory after a producer/consumer hand-off: compare "
		                "the allocator's free bytes in the memory line above.</p>\n",
		        fmt_value(b, total, 1));
		write_top_table(c, &st);
		c->space = space;
		stacks_release(&st);
	}
	for (size_t i = 0; i < p->nsamples; i++)
		memcpy(p->samples[i].v, saved[i], sizeof saved[i]);
	free(saved);
}

static void write_flame(struct ctx *c, struct flame_graph *g, const char *id, const char *title, int differential)
{
	struct flame_options fo;
	flame_options_init(&fo);
	fo.fragment = 1;
	fo.id = id;
	fo.title = title;
	fo.differential = differential;
	fo.countname = c->space ? "bytes" : "objects";
	if (common_is_cpu()) {
		fo.countname = c->space ? "ns of CPU time" : "samples";
		fo.palette = differential ? fo.palette : FLAME_HOT;
	}
	if (differential)
		fo.subtitle = "widths from the last dump; red = grew, blue = shrank since the first; stacks only "
		              "in the first dump are not shown";
	fprintf(c->out, "<div class=\"flametools\">Search (regex): <input class=\"flamesearch\" data-for=\"%s\" "
	                "type=\"text\" placeholder=\"e.g. ^leak\"> <button class=\"flameunzoom\" data-for=\"%s\">"
	                "Reset zoom</button> Click a frame to zoom.</div>\n<div class=\"flamebox\">",
	        id, id);
	flame_write_svg(g, &fo, c->out, NULL);
	fputs("</div>\n", c->out);
}

static void write_facts(struct ctx *c)
{
	FILE *out = c->out;
	const struct report_input *in = c->in;
	const struct profile *first = &in->dumps[0];
	char b[128], b2[64], b3[64];
	fputs("<h2>Configuration and process</h2>\n<table class=\"data\" id=\"facts\">\n", out);
	fputs("<tr><th>command line</th><td>", out);
	esc(out, first->cmdline ? first->cmdline : "unknown");
	fputs("</td></tr>\n<tr><th>program</th><td>", out);
	esc(out, first->exe_path ? first->exe_path : c->a->binary ? c->a->binary : "unknown");
	fprintf(out, "</td></tr>\n<tr><th>pid</th><td>");
	if (first->pid)
		fprintf(out, "%d", first->pid);
	else
		fputs("unknown", out);
	fputs("</td></tr>\n<tr><th>format</th><td>", out);
	esc(out, first->format ? first->format : "unknown");
	fputs("</td></tr>\n<tr><th>sampling period</th><td>", out);
	if (first->cpu && first->period > 0)
		fprintf(out, "%.3f ms of CPU time (%.0f Hz)", (double)first->period / 1e6, 1e9 / (double)first->period);
	else if (first->period > 1)
		fprintf(out, "%llu bytes (lg_prof_sample:%d)", (unsigned long long)first->period,
		        (int)lround(log2((double)first->period)));
	else if (first->period == 1)
		fputs("every allocation", out);
	else
		fputs("unknown", out);
	fprintf(out, "</td></tr>\n<tr><th>value</th><td>%s</td></tr>\n", value_name(c->a->value_index));
	fprintf(out, "<tr><th>dumps</th><td>%zu, spanning %.3f %s</td></tr>\n</table>\n", in->n,
	        in->time_s[in->n - 1], in->time_known ? "s" : "dump indexes");
	if (!in->time_known)
		fputs("<p class=\"note\">The dump times are unknown, all equal, or not increasing in dump order: "
		      "the axis is the dump index and slopes are per dump.</p>\n",
		      out);

	fputs("<h3>Dumps</h3>\n<table class=\"data\" id=\"dumps\"><tr><th>#</th><th>file</th><th>trigger</th>"
	      "<th>time</th><th class=\"num\">+s</th><th>pid</th><th class=\"num\">total</th>"
	      "<th class=\"num\">objects</th><th class=\"num\">stacks</th></tr>\n",
	      out);
	for (size_t i = 0; i < in->n; i++) {
		const struct profile *p = &in->dumps[i];
		fprintf(out, "<tr%s><td>%zu</td><td>", i == c->peak ? " class=\"suspect\"" : "", i + 1);
		esc(out, in->paths[i]);
		fputs("</td><td>", out);
		esc(out, p->trigger ? p->trigger : trigger_of(in->paths[i]));
		fprintf(out, "</td><td>%s</td><td class=\"num\">%.3f</td><td>",
		        fmt_time(b, sizeof b, in->time_ns[i]), in->time_s[i]);
		if (p->pid)
			fprintf(out, "%d", p->pid);
		fprintf(out, "</td><td class=\"num\">%s</td><td class=\"num\">%s</td><td class=\"num\">%zu</td></tr>\n",
		        fmt_value(b2, c->total[i], c->space), svgutil_commas(b3, profile_total(p, PV_INUSE_OBJS)),
		        p->nsamples);
	}
	fputs("</table>\n", out);
}

int report_write_html(FILE *out, const struct common_args *a, const struct report_input *in)
{
	struct ctx c;
	memset(&c, 0, sizeof c);
	c.out = out;
	c.a = a;
	c.in = in;
	c.space = common_is_space(a);
	c.ss.ndumps = in->n;
	c.total = arena_xmalloc(in->n * sizeof *c.total);

	struct stacks_options so;
	stacks_options_from(&so, a);
	so.style = STACKS_FULL;
	struct flame_graph *peakg = flame_new(0), *diffg = in->n >= 2 ? flame_new(0) : NULL;
	struct stacks peak_short;
	int have_peak_short = 0;
	for (size_t i = 0; i < in->n; i++)
		c.total[i] = profile_total(&in->dumps[i], a->value_index);
	for (size_t i = 1; i < in->n; i++)
		if (c.total[i] > c.total[c.peak])
			c.peak = i;
	for (size_t i = 0; i < in->n; i++) {
		if (add_dump(&c.ss, in, i, c.peak, &so, peakg, diffg, &c.total[i]) != 0) {
			flame_free(peakg);
			flame_free(diffg);
			set_release(&c.ss);
			free(c.total);
			return -1;
		}
	}
	struct stacks_options so_short = so;
	so_short.style = STACKS_SHORT;
	so_short.sum_only = 1; /* the top table reads the names' flat and cum only */
	if (stacks_build(&peak_short, &in->dumps[c.peak], &so_short) == 0)
		have_peak_short = 1;

	for (size_t k = 0; k < c.ss.n; k++) {
		struct series *s = &c.ss.s[k];
		for (size_t i = 0; i < in->n; i++)
			if (s->v[i] > s->peak)
				s->peak = s->v[i];
		report_fit_series(in->time_s, s->v, in->n, &s->fit);
		s->noise = report_noise(s->peak, in->dumps[0].period, c.space);
	}
	size_t ns = c.ss.n;
	uint32_t *by_peak = arena_xmalloc((ns ? ns : 1) * sizeof *by_peak);
	uint32_t *by_slope = arena_xmalloc((ns ? ns : 1) * sizeof *by_slope);
	uint32_t *by_growth = arena_xmalloc((ns ? ns : 1) * sizeof *by_growth);
	for (size_t k = 0; k < ns; k++)
		by_peak[k] = by_slope[k] = by_growth[k] = (uint32_t)k;
	qsort_r(by_peak, ns, sizeof *by_peak, cmp_peak, &c);
	qsort_r(by_slope, ns, sizeof *by_slope, cmp_slope, &c);
	qsort_r(by_growth, ns, sizeof *by_growth, cmp_growth, &c);
	c.order = by_peak;
	c.nchart = ns < CHART_SERIES ? ns : CHART_SERIES;

	/* ---- the page ---- */
	const char *title = in->title ? in->title : "heaptap report";
	char b1[64], b2[128];
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	      "script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">\n<title>",
	      out);
	esc(out, title);
	fprintf(out, "</title>\n<style>\n%s%s</style>\n<script>\n%s%s</script>\n</head>\n<body>\n<h1>", svgscript_report_css(),
	        svgscript_flame_css(), svgscript_flame_js(), svgscript_report_js());
	esc(out, title);
	fputs("</h1>\n<p class=\"note\">", out);
	esc(out, in->dumps[0].cmdline ? in->dumps[0].cmdline : in->paths[0]);
	fprintf(out, " &#8212; %zu dump%s, peak %s (%s) at dump %zu.</p>\n", in->n, in->n == 1 ? "" : "s",
	        fmt_value(b1, c.total[c.peak], c.space), value_name(a->value_index), c.peak + 1);

	if (common_is_cpu())
		fprintf(out, "<h2>CPU time per profile</h2>\n<p class=\"note\">The %s of every profile: the total (black line) and the "
		             "largest stacks stacked (by their peak), labelled by function &#8592; caller.</p>\n",
		        value_name(a->value_index));
	else
		fprintf(out, "<h2>Live heap over time</h2>\n<p class=\"note\">The total %s of every dump (black line) and the "
		             "largest stacks stacked (by their peak), labelled by allocation site &#8592; caller.</p>\n",
		        value_name(a->value_index));
	write_chart(&c);
	memchart_write(out, in);
	write_suspects(&c, by_slope);
	write_site_suspects(&c);
	write_growers(&c, by_growth);

	fprintf(out, "<h2>Peak dump</h2>\n<p class=\"note\">Dump %zu, ", c.peak + 1);
	esc(out, in->paths[c.peak]);
	fprintf(out, ", %s, total %s.</p>\n", fmt_time(b2, sizeof b2, in->time_ns[c.peak]),
	        fmt_value(b1, c.total[c.peak], c.space));
	if (have_peak_short) {
		write_top_table(&c, &peak_short);
		stacks_release(&peak_short);
	}
	write_flame(&c, peakg, "flame-peak", "Peak dump", 0);
	write_cross_thread(&c, a, &in->dumps[in->n - 1]);
	if (diffg) {
		fprintf(out, "<h2>Growth: first &#8594; last dump</h2>\n<p class=\"note\">Differential flame graph: "
		             "dump 1 (%s) as the base, dump %zu (%s) as the widths.</p>\n",
		        fmt_value(b1, c.total[0], c.space), in->n, fmt_value(b2, c.total[in->n - 1], c.space));
		write_flame(&c, diffg, "flame-diff", "First \xe2\x86\x92 last", 1);
	}
	write_facts(&c);
	fputs("<p class=\"note\">Generated by heaptap " "report" ". Self-contained: no network access.</p>\n"
	      "</body></html>\n",
	      out);

	free(by_peak);
	free(by_slope);
	free(by_growth);
	flame_free(peakg);
	flame_free(diffg);
	set_release(&c.ss);
	free(c.total);
	if (ferror(out)) {
		if (!errno)
			errno = EIO;
		return -1;
	}
	return 0;
}
