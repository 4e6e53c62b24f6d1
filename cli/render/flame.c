/*
 * flame.c - the flame graph of flame.h: merges root-first name stacks into a tree (hash of
 * (parent, name, inline) -> node), orders siblings by name, lays frames out in pixels and writes
 * the SVG with its tooltips, colours and the script of svgscript.h. It does not read profiles,
 * symbolize or choose values: the commands do that and hand it names and numbers.
 */
#include "flame.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "svgscript.h"
#include "svgutil.h"

#define NONE UINT32_MAX

struct fnode {
	uint32_t name;    /* index into names */
	uint32_t parent;
	uint32_t child;   /* first child (in name order once laid out, for drawn frames) */
	uint32_t sibling; /* next sibling */
	uint32_t depth;   /* root = 0 */
	int32_t line;
	uint32_t inl;
	const char *file; /* interned, or NULL */
	double v, vb;     /* value, base value */
	double x;         /* value offset of the left edge from the root's, after layout */
};

struct centry {
	uint32_t parent, key; /* key = name << 1 | inl */
	uint32_t node;        /* NONE when the slot is empty */
};

struct flame_graph {
	int reverse;
	struct fnode *nodes;
	size_t nnodes, cap;
	/* child lookup: open addressing keyed by (parent, name, inl) */
	struct centry *ctab;
	size_t ctab_cap;
	/* interned strings */
	char **names;
	size_t nnames, names_cap;
	uint32_t *stab;
	size_t stab_cap;
};

static void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q) {
		fputs("heaptap: flame graph: out of memory\n", stderr);
		abort();
	}
	return q;
}

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ull;
	}
	return h ^ (h >> 29);
}

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	return x ^ (x >> 33);
}

static void stab_grow(struct flame_graph *g)
{
	size_t cap = g->stab_cap ? g->stab_cap * 2 : 1024;
	uint32_t *t = xrealloc(NULL, cap * sizeof *t);
	memset(t, 0xff, cap * sizeof *t);
	for (size_t i = 0; i < g->nnames; i++) {
		size_t j = hash_str(g->names[i]) & (cap - 1);
		while (t[j] != NONE)
			j = (j + 1) & (cap - 1);
		t[j] = (uint32_t)i;
	}
	free(g->stab);
	g->stab = t;
	g->stab_cap = cap;
}

static uint32_t intern(struct flame_graph *g, const char *s)
{
	if ((g->nnames + 1) * 2 > g->stab_cap)
		stab_grow(g);
	size_t j = hash_str(s) & (g->stab_cap - 1);
	while (g->stab[j] != NONE) {
		if (strcmp(g->names[g->stab[j]], s) == 0)
			return g->stab[j];
		j = (j + 1) & (g->stab_cap - 1);
	}
	if (g->nnames == g->names_cap) {
		g->names_cap = g->names_cap ? g->names_cap * 2 : 1024;
		g->names = xrealloc(g->names, g->names_cap * sizeof *g->names);
	}
	size_t len = strlen(s);
	char *c = xrealloc(NULL, len + 1);
	memcpy(c, s, len + 1);
	g->names[g->nnames] = c;
	g->stab[j] = (uint32_t)g->nnames;
	return (uint32_t)g->nnames++;
}

static uint64_t child_key(uint32_t parent, uint32_t name, uint32_t inl)
{
	return mix(((uint64_t)parent << 32) ^ ((uint64_t)name << 1) ^ inl);
}

static void ctab_grow(struct flame_graph *g)
{
	size_t cap = g->ctab_cap ? g->ctab_cap * 2 : 4096;
	struct centry *t = xrealloc(NULL, cap * sizeof *t);
	memset(t, 0xff, cap * sizeof *t);
	for (size_t i = 1; i < g->nnodes; i++) {
		const struct fnode *n = &g->nodes[i];
		size_t j = child_key(n->parent, n->name, n->inl) & (cap - 1);
		while (t[j].node != NONE)
			j = (j + 1) & (cap - 1);
		t[j] = (struct centry){n->parent, n->name << 1 | n->inl, (uint32_t)i};
	}
	free(g->ctab);
	g->ctab = t;
	g->ctab_cap = cap;
}

static uint32_t new_node(struct flame_graph *g, uint32_t parent, uint32_t name, uint32_t inl)
{
	if (g->nnodes == g->cap) {
		g->cap = g->cap ? g->cap * 2 : 1024;
		g->nodes = xrealloc(g->nodes, g->cap * sizeof *g->nodes);
	}
	struct fnode *n = &g->nodes[g->nnodes];
	memset(n, 0, sizeof *n);
	n->name = name;
	n->parent = parent;
	n->child = NONE;
	n->sibling = parent == NONE ? NONE : g->nodes[parent].child;
	n->inl = inl;
	n->depth = parent == NONE ? 0 : g->nodes[parent].depth + 1;
	if (parent != NONE)
		g->nodes[parent].child = (uint32_t)g->nnodes;
	return (uint32_t)g->nnodes++;
}

static uint32_t get_child(struct flame_graph *g, uint32_t parent, uint32_t name, uint32_t inl)
{
	if ((g->nnodes + 1) * 2 > g->ctab_cap)
		ctab_grow(g);
	/* The key lives in the table, so a probe touches no node: on a large profile the tree does
	   not fit in the cache, and this halves the misses per frame. */
	uint32_t key = name << 1 | inl;
	size_t j = child_key(parent, name, inl) & (g->ctab_cap - 1);
	while (g->ctab[j].node != NONE) {
		if (g->ctab[j].parent == parent && g->ctab[j].key == key)
			return g->ctab[j].node;
		j = (j + 1) & (g->ctab_cap - 1);
	}
	uint32_t id = new_node(g, parent, name, inl);
	g->ctab[j] = (struct centry){parent, key, id};
	return id;
}

struct flame_graph *flame_new(int reverse)
{
	struct flame_graph *g = xrealloc(NULL, sizeof *g);
	memset(g, 0, sizeof *g);
	g->reverse = reverse;
	new_node(g, NONE, intern(g, "all"), 0);
	return g;
}

void flame_free(struct flame_graph *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->nnames; i++)
		free(g->names[i]);
	free(g->names);
	free(g->stab);
	free(g->ctab);
	free(g->nodes);
	free(g);
}

uint32_t flame_name_id(struct flame_graph *g, const char *name)
{
	return intern(g, name ? name : "??");
}

void flame_add_ids(struct flame_graph *g, const uint32_t *ids, const struct flame_frame_info *info, size_t n,
                   double value, double base)
{
	uint32_t cur = 0;
	g->nodes[0].v += value;
	g->nodes[0].vb += base;
	for (size_t k = 0; k < n; k++) {
		size_t i = g->reverse ? n - 1 - k : k;
		uint32_t inl = info && info[i].inlined ? 1 : 0;
		uint32_t c = get_child(g, cur, ids[i], inl);
		struct fnode *node = &g->nodes[c];
		if (!node->file && info && info[i].file && info[i].file[0]) {
			const char *f = g->names[intern(g, info[i].file)];
			node = &g->nodes[c];
			node->file = f;
			node->line = info[i].line;
		}
		node->v += value;
		node->vb += base;
		cur = c;
	}
}

void flame_add(struct flame_graph *g, const char *const *names, const struct flame_frame_info *info,
               size_t n, double value, double base)
{
	uint32_t *ids = xrealloc(NULL, (n ? n : 1) * sizeof *ids);
	for (size_t i = 0; i < n; i++)
		ids[i] = intern(g, names[i] ? names[i] : "??");
	flame_add_ids(g, ids, info, n, value, base);
	free(ids);
}

double flame_total(const struct flame_graph *g)
{
	return g->nodes[0].v;
}

double flame_base_total(const struct flame_graph *g)
{
	return g->nodes[0].vb;
}

size_t flame_nframes(const struct flame_graph *g)
{
	return g->nnodes;
}

/* ---- layout ---- */

struct sort_ctx {
	const struct fnode *nodes;
	const uint32_t *rank; /* name id -> position in byte order */
};
static struct sort_ctx sort_ctx;

static int cmp_sibling(const void *a, const void *b)
{
	const struct fnode *x = &sort_ctx.nodes[*(const uint32_t *)a];
	const struct fnode *y = &sort_ctx.nodes[*(const uint32_t *)b];
	uint32_t rx = sort_ctx.rank[x->name], ry = sort_ctx.rank[y->name];
	if (rx != ry)
		return rx < ry ? -1 : 1;
	return (int)x->inl - (int)y->inl;
}

static const struct flame_graph *name_graph;

static int cmp_name(const void *a, const void *b)
{
	return strcmp(name_graph->names[*(const uint32_t *)a], name_graph->names[*(const uint32_t *)b]);
}

/* Orders the children of every drawn frame by name and computes their left offsets (in value
   units). Frames that are not drawn keep their children unordered: nothing needs them, and a
   large profile has far more of those than of drawn ones. */
static void layout(struct flame_graph *g, const unsigned char *draw)
{
	uint32_t *byname = xrealloc(NULL, g->nnames * sizeof *byname);
	uint32_t *rank = xrealloc(NULL, g->nnames * sizeof *rank);
	for (size_t i = 0; i < g->nnames; i++)
		byname[i] = (uint32_t)i;
	name_graph = g;
	qsort(byname, g->nnames, sizeof *byname, cmp_name);
	name_graph = NULL;
	for (size_t i = 0; i < g->nnames; i++)
		rank[byname[i]] = (uint32_t)i;
	free(byname);
	sort_ctx.nodes = g->nodes;
	sort_ctx.rank = rank;
	uint32_t *kids = NULL;
	size_t cap = 0;
	g->nodes[0].x = 0;
	/* Parents precede their children in index order, so one pass places everything. */
	for (size_t i = 0; i < g->nnodes; i++) {
		if (!draw[i])
			continue;
		size_t nk = 0;
		for (uint32_t c = g->nodes[i].child; c != NONE; c = g->nodes[c].sibling) {
			if (nk == cap) {
				cap = cap ? cap * 2 : 64;
				kids = xrealloc(kids, cap * sizeof *kids);
			}
			kids[nk++] = c;
		}
		qsort(kids, nk, sizeof *kids, cmp_sibling);
		double x = g->nodes[i].x;
		uint32_t next = NONE;
		for (size_t k = nk; k-- > 0;) { /* relink in order */
			g->nodes[kids[k]].sibling = next;
			next = kids[k];
		}
		g->nodes[i].child = next;
		for (size_t k = 0; k < nk; k++) {
			struct fnode *c = &g->nodes[kids[k]];
			c->x = x;
			x += c->v > 0 ? c->v : 0;
		}
	}
	free(kids);
	free(rank);
	sort_ctx.nodes = NULL;
	sort_ctx.rank = NULL;
}

/* ---- colours ---- */

struct rgb {
	int r, g, b;
};

static struct rgb palette_colour(enum flame_palette p, const char *name)
{
	/* Two stable pseudo-random numbers in [0,1) from the name, so a function keeps its colour
	   across graphs. */
	uint64_t h = mix(hash_str(name));
	double v1 = (double)(h & 0xffff) / 65536.0, v2 = (double)((h >> 16) & 0xffff) / 65536.0;
	struct rgb c;
	switch (p) {
	case FLAME_MEM: /* greens through sea-greens to teal-blues */
		c.r = (int)(30 + 70 * v2);
		c.g = (int)(160 + 80 * v1);
		c.b = (int)(60 + 170 * v2);
		break;
	case FLAME_HOT: /* reds to yellows */
		c.r = (int)(205 + 50 * v2);
		c.g = (int)(50 + 180 * v1);
		c.b = (int)(20 + 40 * v2);
		break;
	case FLAME_IO: /* blues */
		c.r = (int)(70 + 50 * v1);
		c.g = (int)(90 + 60 * v1);
		c.b = (int)(190 + 65 * v2);
		break;
	case FLAME_RED:
		c.r = (int)(200 + 55 * v1);
		c.g = c.b = (int)(50 + 80 * v1);
		break;
	case FLAME_GREEN:
		c.g = (int)(200 + 55 * v1);
		c.r = c.b = (int)(50 + 80 * v1);
		break;
	case FLAME_BLUE:
		c.b = (int)(205 + 50 * v1);
		c.r = c.g = (int)(80 + 80 * v1);
		break;
	case FLAME_AQUA:
		c.r = (int)(50 + 60 * v1);
		c.g = (int)(165 + 55 * v1);
		c.b = (int)(165 + 55 * v1);
		break;
	case FLAME_YELLOW:
		c.r = (int)(175 + 55 * v1);
		c.g = (int)(175 + 55 * v1);
		c.b = (int)(50 + 20 * v1);
		break;
	case FLAME_PURPLE:
		c.r = (int)(190 + 65 * v1);
		c.g = (int)(80 + 60 * v1);
		c.b = (int)(190 + 65 * v1);
		break;
	case FLAME_ORANGE:
	default:
		c.r = (int)(190 + 65 * v1);
		c.g = (int)(90 + 65 * v1);
		c.b = 0;
		break;
	}
	return c;
}

/* Differential colour: red for growth, blue for shrinkage, saturated by the relative change
   |value - base| / max(value, base) (1 for a frame that is new or gone); grey when unchanged. */
static struct rgb diff_colour(double value, double base)
{
	struct rgb c;
	double delta = value - base, m = fabs(value) > fabs(base) ? fabs(value) : fabs(base);
	double k = m > 0 ? fabs(delta) / m : 0;
	if (k > 1)
		k = 1;
	int fade = (int)lround(220 * (1 - k));
	if (delta > 0) {
		c.r = 255;
		c.g = c.b = fade;
	} else if (delta < 0) {
		c.b = 255;
		c.r = c.g = fade;
	} else {
		c.r = c.g = c.b = 235;
	}
	return c;
}

static const struct {
	const char *name;
	enum flame_palette p;
	const char *bg0, *bg1; /* background gradient top, bottom */
} palettes[] = {
	{"mem", FLAME_MEM, "#eeeeee", "#e0f5e0"},    {"hot", FLAME_HOT, "#eeeeee", "#eeeeb0"},
	{"io", FLAME_IO, "#f8f8f8", "#e8e8e8"},      {"red", FLAME_RED, "#f8f8f8", "#e8e8e8"},
	{"green", FLAME_GREEN, "#f8f8f8", "#e8e8e8"}, {"blue", FLAME_BLUE, "#f8f8f8", "#e8e8e8"},
	{"aqua", FLAME_AQUA, "#f8f8f8", "#e8e8e8"},   {"yellow", FLAME_YELLOW, "#f8f8f8", "#e8e8e8"},
	{"purple", FLAME_PURPLE, "#f8f8f8", "#e8e8e8"}, {"orange", FLAME_ORANGE, "#f8f8f8", "#e8e8e8"},
};

int flame_palette_parse(const char *name, enum flame_palette *out)
{
	for (size_t i = 0; i < sizeof palettes / sizeof palettes[0]; i++) {
		if (strcmp(name, palettes[i].name) == 0) {
			*out = palettes[i].p;
			return 0;
		}
	}
	return -1;
}

void flame_options_init(struct flame_options *o)
{
	memset(o, 0, sizeof *o);
	o->countname = "bytes";
	o->palette = FLAME_MEM;
	o->width = 1200;
	o->frame_height = 16;
	o->minwidth = 0.1;
}

/* ---- SVG ---- */

#define FONT_PX 12.0
#define FONT_W 0.59 /* average character width / font size (Verdana) */
#define XPAD 10.0

/* Rounds to the 2 decimals the SVG carries, so edges computed from equal offsets print equal. */
static double px2(double v)
{
	return nearbyint(v * 100) / 100;
}

static void write_pct(FILE *out, double v, double total)
{
	if (total != 0)
		fprintf(out, "%.2f%%", 100.0 * v / total);
	else
		fputs("nan%", out);
}

static void write_tooltip(FILE *out, const struct flame_graph *g, const struct fnode *n,
                          const struct flame_options *o, double total, double base_total)
{
	char num[32];
	const char *cn = o->countname ? o->countname : "bytes";
	svgutil_escape(out, g->names[n->name]);
	if (n->inl)
		fputs(" [inline]", out);
	fprintf(out, " (%s ", svgutil_commas(num, n->v));
	svgutil_escape(out, cn);
	fputs(", ", out);
	write_pct(out, n->v, total);
	fputc(')', out);
	if (o->differential) {
		double d = n->v - n->vb;
		fprintf(out, "\nbase %s ", svgutil_commas(num, n->vb));
		svgutil_escape(out, cn);
		fputs(", ", out);
		write_pct(out, n->vb, base_total);
		fprintf(out, "; delta %s%s ", d > 0 ? "+" : "", svgutil_commas(num, d));
		svgutil_escape(out, cn);
		if (n->vb != 0)
			fprintf(out, " (%+.2f%%)", 100.0 * d / n->vb);
		else if (d != 0)
			fputs(" (new)", out);
	}
	if (n->file) {
		fputs("\nat ", out);
		svgutil_escape(out, n->file);
		if (n->line > 0)
			fprintf(out, ":%d", n->line);
	}
}

int flame_write_svg(const struct flame_graph *cg, const struct flame_options *o, FILE *out,
                    struct flame_stats *st)
{
	struct flame_graph *g = (struct flame_graph *)cg; /* layout orders children in place */
	const char *id = o->id ? o->id : "htf";
	double width = o->width > 0 ? o->width : 1200;
	double fh = o->frame_height > 0 ? o->frame_height : 16;
	double total = g->nodes[0].v, base_total = g->nodes[0].vb;
	double avail = width - 2 * XPAD;
	double scale = total > 0 ? avail / total : 0;
	double minpx = o->minwidth_pct ? avail * o->minwidth / 100.0 : o->minwidth;
	size_t bg = 0;
	for (size_t i = 0; i < sizeof palettes / sizeof palettes[0]; i++)
		if (palettes[i].p == o->palette)
			bg = i;

	/* Which frames are drawn: wide enough and under a drawn parent (a child is never wider
	   than its parent, so pruning is inherited anyway; checking the parent keeps it exact). */
	size_t n = g->nnodes;
	unsigned char *draw = xrealloc(NULL, n);
	int maxdepth = 0;
	size_t ndrawn = 0, npruned = 0;
	for (size_t i = 0; i < n; i++) {
		const struct fnode *f = &g->nodes[i];
		int ok = total > 0 && f->v > 0 && (i == 0 || draw[f->parent]) && f->v * scale >= minpx;
		if (i == 0 && total > 0)
			ok = 1;
		draw[i] = (unsigned char)ok;
		if (ok) {
			ndrawn++;
			if ((int)f->depth > maxdepth)
				maxdepth = (int)f->depth;
		} else {
			npruned++;
		}
	}

	layout(g, draw);

	double pad_top = FONT_PX * 3 + (o->subtitle ? FONT_PX * 2 : 0);
	double pad_bottom = FONT_PX * 2 + 10;
	double height = pad_top + pad_bottom + (maxdepth + 1) * fh;
	const char *title = o->title ? o->title : o->inverted ? "Icicle Graph" : "Flame Graph";

	if (!o->fragment)
		fputs("<?xml version=\"1.0\" standalone=\"no\"?>\n"
		      "<!DOCTYPE svg PUBLIC \"-//W3C//DTD SVG 1.1//EN\" "
		      "\"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd\">\n",
		      out);
	fprintf(out,
	        "<svg version=\"1.1\" class=\"htflame\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
	        "xmlns=\"http://www.w3.org/2000/svg\" id=\"%s\" data-fh=\"%.0f\" data-inverted=\"%d\" data-total=\"%.17g\"",
	        width, height, width, height, id, fh, o->inverted ? 1 : 0, total);
	if (!o->fragment)
		fputs(" onload=\"htflameInit(this)\"", out);
	fputs(">\n", out);
	if (!o->fragment) {
		fprintf(out, "<style type=\"text/css\"><![CDATA[\n%s]]></style>\n", svgscript_flame_css());
		fprintf(out, "<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n", svgscript_flame_js());
	}
	fprintf(out,
	        "<defs><linearGradient id=\"%s-bg\" y1=\"0\" y2=\"1\" x1=\"0\" x2=\"0\">"
	        "<stop stop-color=\"%s\" offset=\"5%%\"/><stop stop-color=\"%s\" offset=\"95%%\"/>"
	        "</linearGradient></defs>\n",
	        id, palettes[bg].bg0, palettes[bg].bg1);
	fprintf(out, "<rect class=\"background\" x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"url(#%s-bg)\"/>\n",
	        width, height, id);
	fprintf(out, "<text class=\"title\" x=\"%.1f\" y=\"%.0f\">", width / 2, FONT_PX * 2);
	svgutil_escape(out, title);
	fputs("</text>\n", out);
	if (o->subtitle) {
		fprintf(out, "<text class=\"subtitle\" x=\"%.1f\" y=\"%.0f\">", width / 2, FONT_PX * 4);
		svgutil_escape(out, o->subtitle);
		fputs("</text>\n", out);
	}
	fprintf(out, "<text class=\"details\" x=\"%.0f\" y=\"%.0f\"> </text>\n", XPAD, height - pad_bottom / 2);
	fprintf(out, "<text class=\"unzoom hide\" x=\"%.0f\" y=\"%.0f\">Reset Zoom</text>\n", XPAD, FONT_PX * 2);
	fprintf(out, "<text class=\"search\" x=\"%.0f\" y=\"%.0f\">Search</text>\n", width - XPAD - 100, FONT_PX * 2);
	fprintf(out, "<text class=\"ic\" x=\"%.0f\" y=\"%.0f\">ic</text>\n", width - XPAD - 16, FONT_PX * 2);
	fprintf(out, "<text class=\"matched\" x=\"%.0f\" y=\"%.0f\"> </text>\n", width - XPAD - 100,
	        height - pad_bottom / 2);
	fputs("<g class=\"frames\">\n", out);

	double char_px = FONT_PX * FONT_W;
	for (size_t i = 0; i < n; i++) {
		if (!draw[i])
			continue;
		const struct fnode *f = &g->nodes[i];
		double x0 = px2(XPAD + f->x * scale), x1 = px2(XPAD + (f->x + f->v) * scale);
		double w = x1 - x0;
		double y = o->inverted ? pad_top + f->depth * fh : height - pad_bottom - (f->depth + 1) * fh;
		struct rgb c;
		if (i == 0 && !o->differential)
			c = (struct rgb){200, 200, 200};
		else if (o->differential)
			c = diff_colour(f->v, f->vb);
		else
			c = palette_colour(o->palette, g->names[f->name]);
		fputs(f->inl ? "<g class=\"inl\"><title>" : "<g><title>", out);
		write_tooltip(out, g, f, o, total, base_total);
		fprintf(out, "</title><rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"rgb(%d,%d,%d)\" rx=\"2\" ry=\"2\"/>",
		        x0, y, w, fh - 1, c.r, c.g, c.b);
		fprintf(out, "<text x=\"%.2f\" y=\"%.1f\">", x0 + 3, y + fh - 4.5);
		if (f->inl) { /* the label carries the mark too, when it fits */
			size_t len = strlen(g->names[f->name]);
			char *lab = xrealloc(NULL, len + 10);
			memcpy(lab, g->names[f->name], len);
			memcpy(lab + len, " [inline]", 10);
			svgutil_label(out, lab, w - 3, char_px);
			free(lab);
		} else {
			svgutil_label(out, g->names[f->name], w - 3, char_px);
		}
		fputs("</text></g>\n", out);
	}
	fputs("</g>\n</svg>\n", out);
	free(draw);
	if (st) {
		st->drawn = ndrawn;
		st->pruned = npruned;
		st->max_depth = maxdepth;
		st->height = (int)height;
	}
	if (ferror(out)) {
		if (!errno)
			errno = EIO;
		return -1;
	}
	return 0;
}
