/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cli_flame.c - unit test of the flame graph layout and SVG writer (cli/render/flame.h) with
 * synthetic stacks: merging by name path, widths against values, pruning, ordering, inverted
 * and reversed graphs, differential colours, inline marks, escaping and label truncation.
 * It reads the SVG text back with a tiny attribute scanner; the browser test covers the script.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../cli/render/flame.h"
#include "../../cli/render/svgutil.h"
#include "check.h"



static char *render(struct flame_graph *g, const struct flame_options *o, struct flame_stats *st)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f || flame_write_svg(g, o, f, st) != 0) {
		fprintf(stderr, "render failed\n");
		exit(1);
	}
	fclose(f);
	return buf;
}

struct frame {
	int found;
	double x, y, w;
	int r, g, b;
	char tip[512];
	char label[256];
	int inl;
};

/* Finds the n-th (0-based) frame whose tooltip starts with `prefix` followed by " (". */
static struct frame find_frame(const char *svg, const char *prefix, int nth)
{
	struct frame fr;
	memset(&fr, 0, sizeof fr);
	const char *p = strstr(svg, "<g class=\"frames\">");
	size_t pl = strlen(prefix);
	while (p && (p = strstr(p, "<title>")) != NULL) {
		const char *t = p + 7;
		if (strncmp(t, prefix, pl) == 0 && strncmp(t + pl, " (", 2) == 0 && nth-- == 0) {
			const char *g = p;
			while (g > svg && strncmp(g, "<g", 2) != 0)
				g--;
			fr.inl = strncmp(g, "<g class=\"inl\"", 14) == 0;
			const char *e = strstr(t, "</title>");
			size_t n = (size_t)(e - t) < sizeof fr.tip - 1 ? (size_t)(e - t) : sizeof fr.tip - 1;
			memcpy(fr.tip, t, n);
			const char *r = strstr(e, "<rect");
			sscanf(strstr(r, " x=\"") + 4, "%lf", &fr.x);
			sscanf(strstr(r, " y=\"") + 4, "%lf", &fr.y);
			sscanf(strstr(r, " width=\"") + 8, "%lf", &fr.w);
			sscanf(strstr(r, "fill=\"rgb(") + 10, "%d,%d,%d", &fr.r, &fr.g, &fr.b);
			const char *l = strchr(strstr(r, "<text"), '>') + 1;
			const char *le = strstr(l, "</text>");
			n = (size_t)(le - l) < sizeof fr.label - 1 ? (size_t)(le - l) : sizeof fr.label - 1;
			memcpy(fr.label, l, n);
			fr.found = 1;
			return fr;
		}
		p = t;
	}
	return fr;
}

static size_t count_str(const char *s, const char *needle)
{
	size_t n = 0;
	for (const char *p = s; (p = strstr(p, needle)) != NULL; p += strlen(needle))
		n++;
	return n;
}

static void test_basic(void)
{
	struct flame_graph *g = flame_new(0);
	const char *s1[] = {"main", "mid", "leaf_a"};
	const char *s2[] = {"main", "mid", "leaf_b"};
	const char *s3[] = {"main", "other"};
	const char *s4[] = {"main", "mid", "leaf_a"}; /* merges into s1 */
	flame_add(g, s1, NULL, 3, 300, 0);
	flame_add(g, s2, NULL, 3, 100, 0);
	flame_add(g, s3, NULL, 2, 400, 0);
	flame_add(g, s4, NULL, 3, 200, 0);
	CHECK(flame_total(g) == 1000, "total %g", flame_total(g));
	CHECK(flame_nframes(g) == 6, "frames %zu", flame_nframes(g)); /* all main mid leaf_a leaf_b other */

	struct flame_options o;
	flame_options_init(&o);
	struct flame_stats st;
	char *svg = render(g, &o, &st);
	CHECK(strncmp(svg, "<?xml", 5) == 0, "prolog missing");
	CHECK(strstr(svg, "htflameInit") != NULL, "script missing");
	CHECK(st.drawn == 6 && st.pruned == 0 && st.max_depth == 3, "drawn %zu pruned %zu depth %d",
	      st.drawn, st.pruned, st.max_depth);

	struct frame all = find_frame(svg, "all", 0), mainf = find_frame(svg, "main", 0);
	struct frame mid = find_frame(svg, "mid", 0), la = find_frame(svg, "leaf_a", 0);
	struct frame lb = find_frame(svg, "leaf_b", 0), oth = find_frame(svg, "other", 0);
	CHECK(all.found && mainf.found && mid.found && la.found && lb.found && oth.found, "a frame is missing");
	CHECK(fabs(all.w - 1180) < 0.01 && fabs(all.x - 10) < 0.01, "root x %g w %g", all.x, all.w);
	CHECK(strcmp(all.tip, "all (1,000 bytes, 100.00%)") == 0, "root tip '%s'", all.tip);
	CHECK(strcmp(la.tip, "leaf_a (500 bytes, 50.00%)") == 0, "leaf_a tip '%s'", la.tip);
	CHECK(fabs(la.w - 590) < 0.02, "leaf_a w %g", la.w);
	CHECK(fabs(lb.w - 118) < 0.02, "leaf_b w %g", lb.w);
	CHECK(fabs(mid.w - 708) < 0.02, "mid w %g", mid.w);
	CHECK(fabs(oth.w - 472) < 0.02, "other w %g", oth.w);
	/* siblings in name order: leaf_a then leaf_b inside mid; mid before other inside main */
	CHECK(fabs(la.x - mid.x) < 0.01 && fabs(lb.x - (la.x + la.w)) < 0.02, "leaf order %g %g %g", mid.x, la.x, lb.x);
	CHECK(fabs(oth.x - (mid.x + mid.w)) < 0.02, "other x %g", oth.x);
	/* root at the bottom, each level one frame height (16) above its parent */
	CHECK(fabs(mainf.y - (all.y - 16)) < 0.01 && fabs(la.y - (all.y - 48)) < 0.01, "y %g %g %g",
	      all.y, mainf.y, la.y);
	CHECK(all.y + 16 + 34 == st.height, "bottom pad: root y %g height %d", all.y, st.height);
	/* mem palette: greens/blues, never red-dominant */
	CHECK(la.g > la.r && lb.g > lb.r && oth.g > oth.r, "mem colours %d,%d,%d", la.r, la.g, la.b);
	CHECK(strcmp(la.label, "leaf_a") == 0, "label '%s'", la.label);
	free(svg);

	/* inverted: root at the top, below the title area */
	o.inverted = 1;
	svg = render(g, &o, &st);
	all = find_frame(svg, "all", 0);
	la = find_frame(svg, "leaf_a", 0);
	CHECK(fabs(all.y - 36) < 0.01 && fabs(la.y - (36 + 48)) < 0.01, "inverted y %g %g", all.y, la.y);
	CHECK(strstr(svg, ">Icicle Graph</text>") != NULL, "icicle title");
	free(svg);
	flame_free(g);
}

static void test_prune_escape_truncate(void)
{
	struct flame_graph *g = flame_new(0);
	const char *big[] = {"std::vector<int>::push_back(int&&)", "a & b"};
	const char *tiny[] = {"std::vector<int>::push_back(int&&)", "tiny_leaf"};
	char longname[300];
	memset(longname, 'x', sizeof longname - 1);
	longname[sizeof longname - 1] = 0;
	const char *lng[] = {longname};
	flame_add(g, big, NULL, 2, 100000, 0);
	flame_add(g, tiny, NULL, 2, 5, 0);   /* 5/200005 * 1180 = 0.03 px < 0.1: pruned */
	flame_add(g, lng, NULL, 1, 100000, 0);

	struct flame_options o;
	flame_options_init(&o);
	struct flame_stats st;
	char *svg = render(g, &o, &st);
	CHECK(st.pruned == 1 && st.drawn == 4, "pruned %zu drawn %zu", st.pruned, st.drawn);
	CHECK(strstr(svg, "tiny_leaf") == NULL, "pruned frame was drawn");
	struct frame v = find_frame(svg, "std::vector&lt;int&gt;::push_back(int&amp;&amp;)", 0);
	CHECK(v.found, "escaped name not found");
	/* the pruned child's value stays in its parent */
	CHECK(strstr(v.tip, "(100,005 bytes,") != NULL, "parent tip '%s'", v.tip);
	CHECK(find_frame(svg, "a &amp; b", 0).found, "a & b not escaped");
	struct frame l = find_frame(svg, longname, 0);
	CHECK(l.found, "long frame missing");
	/* width 589.99 - 3 px of 7.08 px characters: 82 fit, 80 shown plus ".." */
	size_t ll = strlen(l.label);
	CHECK(ll == 82 && strcmp(l.label + 80, "..") == 0, "label len %zu '%s'", ll, l.label);
	free(svg);

	/* a percentage minwidth: 10% of 1180 px */
	o.minwidth = 60;
	o.minwidth_pct = 1;
	svg = render(g, &o, &st);
	CHECK(st.drawn == 1, "60%% minwidth drew %zu", st.drawn); /* only the root is >= 60% */
	free(svg);
	flame_free(g);
}

static void test_reverse_inline(void)
{
	struct flame_graph *g = flame_new(1);
	const char *s1[] = {"main", "a", "alloc_site"};
	const char *s2[] = {"main", "b", "alloc_site"};
	struct flame_frame_info info[3] = {{"main.c", 10, 0}, {"a.c", 20, 1}, {"site.c", 30, 0}};
	flame_add(g, s1, info, 3, 10, 0);
	flame_add(g, s2, NULL, 3, 30, 0);
	struct flame_options o;
	flame_options_init(&o);
	char *svg = render(g, &o, NULL);
	/* reversed: alloc_site sits directly on the root and holds everything */
	struct frame site = find_frame(svg, "alloc_site", 0), all = find_frame(svg, "all", 0);
	CHECK(site.found && fabs(site.w - all.w) < 0.01 && fabs(site.y - (all.y - 16)) < 0.01,
	      "reverse: site w %g y %g", site.w, site.y);
	CHECK(strstr(site.tip, "\nat site.c:30") != NULL, "file:line tip '%s'", site.tip);
	struct frame a = find_frame(svg, "a [inline]", 0);
	CHECK(a.found && a.inl, "inline frame not marked");
	CHECK(strstr(a.tip, "at a.c:20") != NULL, "inline tip '%s'", a.tip);
	CHECK(count_str(svg, "<g class=\"inl\">") == 1, "inline count");
	free(svg);
	flame_free(g);
}

static void test_differential(void)
{
	struct flame_graph *g = flame_new(0);
	const char *grow[] = {"main", "grows"};
	const char *shrink[] = {"main", "shrinks"};
	const char *same[] = {"main", "same"};
	const char *gone[] = {"main", "gone"};
	flame_add(g, grow, NULL, 2, 5000, 1000);
	flame_add(g, shrink, NULL, 2, 1000, 3000);
	flame_add(g, same, NULL, 2, 2000, 2000);
	flame_add(g, gone, NULL, 2, 0, 700);
	CHECK(flame_base_total(g) == 6700, "base total %g", flame_base_total(g));
	struct flame_options o;
	flame_options_init(&o);
	o.differential = 1;
	char *svg = render(g, &o, NULL);
	struct frame gr = find_frame(svg, "grows", 0), sh = find_frame(svg, "shrinks", 0);
	struct frame sa = find_frame(svg, "same", 0);
	CHECK(gr.found && sh.found && sa.found, "diff frames missing");
	CHECK(!find_frame(svg, "gone", 0).found, "base-only frame drawn");
	/* saturation by |delta| / max(value, base): grows 4000/5000 -> 220 * 0.2 = 44,
	   shrinks 2000/3000 -> 220 / 3 = 73 */
	CHECK(gr.r == 255 && gr.g == 44 && gr.b == 44, "grows colour %d,%d,%d", gr.r, gr.g, gr.b);
	CHECK(sh.b == 255 && sh.r == 73 && sh.g == 73, "shrinks colour %d,%d,%d", sh.r, sh.g, sh.b);
	CHECK(sa.r == sa.g && sa.g == sa.b, "same colour %d,%d,%d", sa.r, sa.g, sa.b);
	CHECK(strstr(gr.tip, "base 1,000 bytes") && strstr(gr.tip, "delta +4,000 bytes (+400.00%)"),
	      "diff tip '%s'", gr.tip);
	CHECK(fabs(gr.w - 1180.0 * 5000 / 8000) < 0.02, "diff width %g", gr.w);
	free(svg);
	flame_free(g);
}

/*
 * The merged tree against a plain reference, on random stacks over few names (with and
 * without the inline mark) where only some frames have a file:line: every frame's value and
 * the file:line it shows must be those of the flame.h contract, i.e. the stacks sorted by
 * name path (a prefix first, equal paths in the order added) and merged in that order, each
 * frame taking the file:line of the first stack that has one there. Enough stacks to fill
 * several of the tree's batches, added in random order, forward and reversed.
 */
#define RS_MAXD 7

struct rstack {
	int n;
	int name[RS_MAXD], inl[RS_MAXD], file[RS_MAXD], line[RS_MAXD]; /* file -1: none */
	double v;
	int idx;
};

static const char *const rs_names[] = {"delta", "alpha", "echo", "bravo", "charlie"};
static const char *const rs_files[] = {"x.c", "y.c", "z.h"};
static int rs_reverse;

static int rs_cmp(const void *a, const void *b)
{
	const struct rstack *x = a, *y = b;
	int n = x->n < y->n ? x->n : y->n;
	for (int i = 0; i < n; i++) {
		int fx = rs_reverse ? x->n - 1 - i : i, fy = rs_reverse ? y->n - 1 - i : i;
		int c = strcmp(rs_names[x->name[fx]], rs_names[y->name[fy]]);
		if (c)
			return c;
		if (x->inl[fx] != y->inl[fy])
			return x->inl[fx] - y->inl[fy];
	}
	if (x->n != y->n)
		return x->n - y->n;
	return x->idx - y->idx;
}

static void test_random_tree(int reverse)
{
	enum { NS = 90000 };
	struct rstack *st = calloc(NS, sizeof *st);
	uint64_t r = 88172645463325252ULL + (uint64_t)reverse;
#define RND() (r ^= r << 13, r ^= r >> 7, r ^= r << 17, r)
	struct flame_graph *g = flame_new(reverse);
	for (int i = 0; i < NS; i++) {
		struct rstack *s = &st[i];
		s->n = (int)(RND() % RS_MAXD) + 1;
		s->idx = i;
		s->v = (double)(RND() % 9 + 1);
		const char *nm[RS_MAXD];
		struct flame_frame_info info[RS_MAXD];
		for (int k = 0; k < s->n; k++) {
			s->name[k] = (int)(RND() % 5);
			s->inl[k] = RND() % 7 == 0;
			s->file[k] = RND() % 3 ? (int)(RND() % 3) : -1;
			s->line[k] = (int)(RND() % 50) + 1;
			nm[k] = rs_names[s->name[k]];
			info[k] = (struct flame_frame_info){s->file[k] < 0 ? NULL : rs_files[s->file[k]], s->line[k], s->inl[k]};
		}
		flame_add(g, nm, info, (size_t)s->n, s->v, 0);
	}
#undef RND
	/* the reference: merge the sorted stacks, nodes in depth-first (drawing) order */
	rs_reverse = reverse;
	qsort(st, NS, sizeof *st, rs_cmp);
	size_t cap = (size_t)NS * RS_MAXD + 1, nn = 0;
	struct rnode { int name, inl, file, line; double v; } *nd = calloc(cap, sizeof *nd);
	size_t path[RS_MAXD];
	const struct rstack *prev = NULL;
	for (int i = 0; i < NS; i++) {
		const struct rstack *s = &st[i];
		int common = 0;
		while (prev && common < prev->n && common < s->n) {
			int fp = reverse ? prev->n - 1 - common : common, fs = reverse ? s->n - 1 - common : common;
			if (prev->name[fp] != s->name[fs] || prev->inl[fp] != s->inl[fs])
				break;
			common++;
		}
		for (int k = 0; k < s->n; k++) {
			int f = reverse ? s->n - 1 - k : k;
			if (k >= common) {
				path[k] = nn++;
				nd[path[k]] = (struct rnode){s->name[f], s->inl[f], -1, 0, 0};
			}
			struct rnode *x = &nd[path[k]];
			x->v += s->v;
			if (x->file < 0 && s->file[f] >= 0) {
				x->file = s->file[f];
				x->line = s->line[f];
			}
		}
		prev = s;
	}
	CHECK(flame_nframes(g) == nn + 1, "reverse %d: %zu frames, the reference has %zu", reverse,
	      flame_nframes(g), nn + 1);
	struct flame_options o;
	flame_options_init(&o);
	o.minwidth = 0;
	o.countname = "n";
	struct flame_stats fs;
	char *svg = render(g, &o, &fs);
	CHECK(fs.drawn == nn + 1 && fs.pruned == 0, "reverse %d: drawn %zu pruned %zu", reverse, fs.drawn, fs.pruned);
	/* (memmem in a window: sanitizers' strstr measures the whole rest of the SVG each time) */
	const char *p = strstr(svg, "<title>all "), *end = svg + strlen(svg);
	size_t bad = 0;
	for (size_t i = 0; i < nn && p; i++) {
		p = memmem(p + 1, (size_t)(end - p - 1) < 4096 ? (size_t)(end - p - 1) : 4096, "<title>", 7);
		const char *e = p ? memmem(p, (size_t)(end - p) < 4096 ? (size_t)(end - p) : 4096, "</title>", 8) : NULL;
		if (!e) {
			p = NULL;
			break;
		}
		char want[256], num[32];
		const struct rnode *x = &nd[i];
		int w = snprintf(want, sizeof want, "<title>%s%s (%s n, ", rs_names[x->name], x->inl ? " [inline]" : "",
		                 svgutil_commas(num, x->v));
		char at[64] = "";
		if (x->file >= 0)
			snprintf(at, sizeof at, "\nat %s:%d", rs_files[x->file], x->line);
		size_t al = strlen(at);
		const char *tail = e - al;
		int ok = strncmp(p, want, (size_t)w) == 0 && strncmp(tail, at, al) == 0 && (al || tail[-1] == ')');
		if (!ok && bad++ < 3)
			fprintf(stderr, "reverse %d frame %zu: want %s...%s, got %.*s\n", reverse, i + 1, want, at,
			        (int)(e - p), p);
	}
	CHECK(p && bad == 0, "reverse %d: %zu of %zu frames differ from the reference", reverse, bad, nn);
	free(svg);
	free(nd);
	free(st);
	flame_free(g);
}

static void test_util(void)
{
	char b[32];
	CHECK(strcmp(svgutil_commas(b, 1234567.4), "1,234,567") == 0, "%s", b);
	CHECK(strcmp(svgutil_commas(b, -999.6), "-1,000") == 0, "%s", b);
	CHECK(strcmp(svgutil_commas(b, 0), "0") == 0, "%s", b);
	CHECK(strcmp(svgutil_bytes(b, 1536), "1.5 KiB") == 0, "%s", b);
	CHECK(strcmp(svgutil_bytes(b, 100), "100 B") == 0, "%s", b);
	CHECK(svgutil_nchars("h\xc3\xa9llo") == 5, "nchars");
	CHECK(svgutil_prefix_bytes("\xc3\xa9\xc3\xa9x", 2) == 4, "prefix bytes");
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	svgutil_escape(f, "a\x01<\xff\xc3\xa9\"");
	fclose(f);
	CHECK(strcmp(buf, "a?&lt;?\xc3\xa9&quot;") == 0, "escape '%s'", buf);
	free(buf);
	enum flame_palette p;
	CHECK(flame_palette_parse("hot", &p) == 0 && p == FLAME_HOT, "hot");
	CHECK(flame_palette_parse("nope", &p) == -1, "unknown palette");
}

int main(void)
{
	test_basic();
	test_prune_escape_truncate();
	test_reverse_inline();
	test_differential();
	test_random_tree(0);
	test_random_tree(1);
	test_util();
	return check_finish("cli_flame");
}
