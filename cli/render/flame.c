/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * flame.c - the flame graph of flame.h: collects root-first name stacks, merges them into a tree
 * by sorting them (siblings come out in name order), lays frames out in pixels and writes
 * the SVG with its tooltips, colours and the script of svgscript.h. It does not read profiles,
 * symbolize or choose values: the commands do that and hand it names and numbers.
 */
#include "flame.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../base/hash.h"
#include "../../profile/arena.h"
#include "svgscript.h"
#include "svgutil.h"

#define NONE UINT32_MAX

struct fnode {
	uint32_t name;    /* index into names */
	uint32_t parent;
	uint32_t child;   /* first child; siblings are in name order */
	uint32_t sibling; /* next sibling */
	uint32_t depth;   /* root = 0 */
	int32_t line;
	uint32_t inl;
	uint32_t file;    /* index into names, or NONE */
	double v, vb;     /* value, base value */
	double x;         /* value offset of the left edge from the root's */
};

/* A stack as added, waiting for the tree to be built. */
struct pending {
	uint32_t off, n;  /* frames[off .. off+n), root first */
	double v, vb;
};

/* One frame as added. */
struct pframe {
	uint32_t key;     /* name << 1 | inlined */
	uint32_t file;    /* index into names, or NONE */
	int32_t line;
};

struct flame_graph {
	int reverse;
	/* what was added */
	struct pending *stacks;
	size_t nstacks, stacks_cap;
	struct pframe *frames;
	size_t nframes, frames_cap;
	double total, base_total;
	/* the merged tree, built from the above when needed */
	struct fnode *nodes;
	size_t nnodes, cap;
	int built;
	/* interned strings */
	char **names;
	size_t nnames, names_cap;
	uint32_t *stab;
	size_t stab_cap;
	const char *last_file;  /* the last file pointer interned, and its id: frames of one */
	uint32_t last_file_id;  /* profile share pointers, so most look-ups stop here */
};

/* FNV-1a folded once: the colours of every graph derive from it (palette_colour). */
static uint64_t name_hash(const char *s)
{
	uint64_t h = hash_str(s);
	return h ^ (h >> 29);
}

static void stab_grow(struct flame_graph *g)
{
	size_t cap = g->stab_cap ? g->stab_cap * 2 : 1024;
	uint32_t *t = arena_xmalloc(cap * sizeof *t);
	memset(t, 0xff, cap * sizeof *t);
	for (size_t i = 0; i < g->nnames; i++) {
		size_t j = name_hash(g->names[i]) & (cap - 1);
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
	size_t j = name_hash(s) & (g->stab_cap - 1);
	while (g->stab[j] != NONE) {
		if (strcmp(g->names[g->stab[j]], s) == 0)
			return g->stab[j];
		j = (j + 1) & (g->stab_cap - 1);
	}
	if (g->nnames == g->names_cap) {
		g->names_cap = g->names_cap ? g->names_cap * 2 : 1024;
		g->names = arena_xrealloc(g->names, g->names_cap * sizeof *g->names);
	}
	size_t len = strlen(s);
	char *c = arena_xmalloc(len + 1);
	memcpy(c, s, len + 1);
	g->names[g->nnames] = c;
	g->stab[j] = (uint32_t)g->nnames;
	return (uint32_t)g->nnames++;
}

struct flame_graph *flame_new(int reverse)
{
	struct flame_graph *g = arena_xmalloc(sizeof *g);
	memset(g, 0, sizeof *g);
	g->reverse = reverse;
	g->last_file_id = NONE;
	intern(g, "all");
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
	free(g->stacks);
	free(g->frames);
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
	g->built = 0;
	g->total += value;
	g->base_total += base;
	if (g->nstacks == g->stacks_cap) {
		g->stacks_cap = g->stacks_cap ? g->stacks_cap * 2 : 1024;
		g->stacks = arena_xrealloc(g->stacks, g->stacks_cap * sizeof *g->stacks);
	}
	if (g->nframes + n > g->frames_cap) {
		g->frames_cap = (g->nframes + n) * 2 + 4096;
		g->frames = arena_xrealloc(g->frames, g->frames_cap * sizeof *g->frames);
	}
	g->stacks[g->nstacks++] = (struct pending){(uint32_t)g->nframes, (uint32_t)n, value, base};
	for (size_t k = 0; k < n; k++) {
		size_t i = g->reverse ? n - 1 - k : k;
		struct pframe *f = &g->frames[g->nframes++];
		f->key = ids[i] << 1 | (info && info[i].inlined ? 1u : 0u);
		f->file = NONE;
		f->line = 0;
		if (info && info[i].file && info[i].file[0]) {
			if (info[i].file != g->last_file) {
				g->last_file_id = intern(g, info[i].file);
				g->last_file = info[i].file;
			}
			f->file = g->last_file_id;
			f->line = info[i].line;
		}
	}
}

void flame_add(struct flame_graph *g, const char *const *names, const struct flame_frame_info *info,
               size_t n, double value, double base)
{
	uint32_t *ids = arena_xmalloc((n ? n : 1) * sizeof *ids);
	for (size_t i = 0; i < n; i++)
		ids[i] = intern(g, names[i] ? names[i] : "??");
	flame_add_ids(g, ids, info, n, value, base);
	free(ids);
}

double flame_total(const struct flame_graph *g)
{
	return g->total;
}

double flame_base_total(const struct flame_graph *g)
{
	return g->base_total;
}

/* ---- the tree ---- */

/*
 * Builds the merged tree without hashing: the stacks are sorted by their frame sequences (names
 * in byte order, then the inline mark), so stacks that share a prefix are neighbours. One pass
 * then walks them, reusing the previous stack's nodes for the common prefix and appending new
 * nodes for the rest; children come out in name order and nodes in depth-first order, and the
 * memory touched is mostly the path just used. On a dump with 90,000 stacks this is several
 * times faster than a hash table of (parent, name) -> child, whose probes all miss the cache.
 */
struct sort_ctx {
	const struct flame_graph *g;
	const uint32_t *rkey; /* per frame: rank(name) << 1 | inline */
};

static int cmp_name(const void *a, const void *b, void *arg)
{
	const struct sort_ctx *c = arg;
	return strcmp(c->g->names[*(const uint32_t *)a], c->g->names[*(const uint32_t *)b]);
}

static int cmp_stack(const void *a, const void *b, void *arg)
{
	const struct sort_ctx *c = arg;
	const struct pending *x = &c->g->stacks[*(const uint32_t *)a];
	const struct pending *y = &c->g->stacks[*(const uint32_t *)b];
	const uint32_t *kx = c->rkey + x->off, *ky = c->rkey + y->off;
	uint32_t n = x->n < y->n ? x->n : y->n;
	for (uint32_t i = 0; i < n; i++)
		if (kx[i] != ky[i])
			return kx[i] < ky[i] ? -1 : 1;
	if (x->n != y->n)
		return x->n < y->n ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1; /* stable */
}

static uint32_t new_node(struct flame_graph *g, uint32_t parent, uint32_t key)
{
	if (g->nnodes == g->cap) {
		g->cap = g->cap ? g->cap * 2 : 1024;
		g->nodes = arena_xrealloc(g->nodes, g->cap * sizeof *g->nodes);
	}
	struct fnode *n = &g->nodes[g->nnodes];
	memset(n, 0, sizeof *n);
	n->name = key >> 1;
	n->inl = key & 1;
	n->parent = parent;
	n->child = n->sibling = n->file = NONE;
	n->depth = parent == NONE ? 0 : g->nodes[parent].depth + 1;
	return (uint32_t)g->nnodes++;
}

static void build(struct flame_graph *g)
{
	if (g->built)
		return;
	g->nnodes = 0;
	new_node(g, NONE, 0); /* the root, "all" (name 0) */
	g->nodes[0].v = g->total;
	g->nodes[0].vb = g->base_total;

	size_t nn = g->nnames, ns = g->nstacks;
	uint32_t *byname = arena_xmalloc(nn * sizeof *byname), *rank = arena_xmalloc(nn * sizeof *rank);
	for (size_t i = 0; i < nn; i++)
		byname[i] = (uint32_t)i;
	struct sort_ctx sc = {g, NULL};
	qsort_r(byname, nn, sizeof *byname, cmp_name, &sc);
	for (size_t i = 0; i < nn; i++)
		rank[byname[i]] = (uint32_t)i;
	uint32_t *rkey = arena_xmalloc((g->nframes ? g->nframes : 1) * sizeof *rkey);
	for (size_t i = 0; i < g->nframes; i++)
		rkey[i] = rank[g->frames[i].key >> 1] << 1 | (g->frames[i].key & 1);
	uint32_t *ord = arena_xmalloc((ns ? ns : 1) * sizeof *ord);
	for (size_t i = 0; i < ns; i++)
		ord[i] = (uint32_t)i;
	sc.rkey = rkey;
	qsort_r(ord, ns, sizeof *ord, cmp_stack, &sc);

	/* path[k]: the node at depth k+1 of the previous stack; prev = that stack */
	uint32_t *path = NULL;
	size_t path_cap = 0, plen = 0;
	const uint32_t *prev = NULL;
	for (size_t s = 0; s < ns; s++) {
		const struct pending *st = &g->stacks[ord[s]];
		const uint32_t *key = rkey + st->off;
		const struct pframe *fr = g->frames + st->off;
		size_t common = 0;
		while (common < plen && common < st->n && key[common] == prev[common])
			common++;
		if (st->n > path_cap) {
			path_cap = st->n * 2;
			path = arena_xrealloc(path, path_cap * sizeof *path);
		}
		for (size_t k = common; k < st->n; k++) {
			uint32_t parent = k ? path[k - 1] : 0;
			uint32_t id = new_node(g, parent, fr[k].key);
			/* the previous stack's node at this depth is the previous sibling when it had the
			   same parent, i.e. when the stacks diverge exactly here */
			if (k == common && k < plen)
				g->nodes[path[k]].sibling = id;
			else
				g->nodes[parent].child = id;
			path[k] = id;
		}
		for (size_t k = 0; k < st->n; k++) {
			struct fnode *n = &g->nodes[path[k]];
			n->v += st->v;
			n->vb += st->vb;
			if (n->file == NONE && fr[k].file != NONE) {
				n->file = fr[k].file;
				n->line = fr[k].line;
			}
		}
		prev = key;
		plen = st->n;
	}
	free(path);
	free(ord);
	free(rkey);
	free(rank);
	free(byname);

	/* Left offsets: parents precede their children in index order. */
	g->nodes[0].x = 0;
	for (size_t i = 0; i < g->nnodes; i++) {
		double x = g->nodes[i].x;
		for (uint32_t c = g->nodes[i].child; c != NONE; c = g->nodes[c].sibling) {
			g->nodes[c].x = x;
			x += g->nodes[c].v > 0 ? g->nodes[c].v : 0;
		}
	}
	g->built = 1;
}

size_t flame_nframes(const struct flame_graph *cg)
{
	struct flame_graph *g = (struct flame_graph *)cg; /* the tree is built lazily */
	build(g);
	return g->nnodes;
}

/* ---- colours ---- */

struct rgb {
	int r, g, b;
};

static struct rgb palette_colour(enum flame_palette p, const char *name)
{
	/* Two stable pseudo-random numbers in [0,1) from the name, so a function keeps its colour
	   across graphs. */
	uint64_t h = hash_mix64(name_hash(name));
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

/* Differential colour: red for growth, blue for shrinkage (the other way round with negate),
   saturated by the relative change |value - base| / max(value, base) (1 for a frame that is new
   or gone); grey when unchanged. */
static struct rgb diff_colour(double value, double base, int negate)
{
	struct rgb c;
	double delta = negate ? base - value : value - base, m = fabs(value) > fabs(base) ? fabs(value) : fabs(base);
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
	if (n->file != NONE) {
		fputs("\nat ", out);
		svgutil_escape(out, g->names[n->file]);
		if (n->line > 0)
			fprintf(out, ":%d", n->line);
	}
}

int flame_write_svg(const struct flame_graph *cg, const struct flame_options *o, FILE *out,
                    struct flame_stats *st)
{
	struct flame_graph *g = (struct flame_graph *)cg; /* the tree is built lazily */
	build(g);
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
	unsigned char *draw = arena_xmalloc(n);
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

	double font_px = o->fontsize > 0 ? o->fontsize : FONT_PX;
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
	if (o->nametype) {
		fputs(" data-nametype=\"", out);
		svgutil_escape(out, o->nametype);
		fputc('"', out);
	}
	if (!o->fragment)
		fputs(" onload=\"htflameInit(this)\"", out);
	fputs(">\n", out);
	if (!o->fragment) {
		fprintf(out, "<style type=\"text/css\"><![CDATA[\n%s]]></style>\n", svgscript_flame_css());
		fprintf(out, "<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n", svgscript_flame_js());
	}
	if (o->fonttype || o->fontsize > 0) {
		fprintf(out, "<style type=\"text/css\">#%s .frames text {", id);
		if (o->fonttype) {
			fputs(" font-family: ", out);
			svgutil_escape(out, o->fonttype);
			fputc(';', out);
		}
		if (o->fontsize > 0)
			fprintf(out, " font-size: %gpx;", o->fontsize);
		fputs(" }</style>\n", out);
	}
	if (o->notes) {
		fputs("<desc class=\"notes\">", out);
		svgutil_escape(out, o->notes);
		fputs("</desc>\n", out);
	}
	fprintf(out,
	        "<defs><linearGradient id=\"%s-bg\" y1=\"0\" y2=\"1\" x1=\"0\" x2=\"0\">"
	        "<stop stop-color=\"%s\" offset=\"5%%\"/><stop stop-color=\"%s\" offset=\"95%%\"/>"
	        "</linearGradient></defs>\n",
	        id, palettes[bg].bg0, palettes[bg].bg1);
	if (o->bgcolor) {
		fprintf(out, "<rect class=\"background\" x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"", width, height);
		svgutil_escape(out, o->bgcolor);
		fputs("\"/>\n", out);
	} else {
		fprintf(out, "<rect class=\"background\" x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"url(#%s-bg)\"/>\n",
		        width, height, id);
	}
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

	double char_px = font_px * (o->fontwidth > 0 ? o->fontwidth : FONT_W);
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
			c = diff_colour(f->v, f->vb, o->negate);
		else
			c = palette_colour(o->palette, g->names[f->name]);
		fputs(f->inl ? "<g class=\"inl\"><title>" : "<g><title>", out);
		write_tooltip(out, g, f, o, total, base_total);
		fprintf(out, "</title><rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"rgb(%d,%d,%d)\" rx=\"2\" ry=\"2\"/>",
		        x0, y, w, fh - 1, c.r, c.g, c.b);
		fprintf(out, "<text x=\"%.2f\" y=\"%.1f\">", x0 + 3, y + fh - 4.5);
		if (f->inl) { /* the label carries the mark too, when it fits */
			size_t len = strlen(g->names[f->name]);
			char *lab = arena_xmalloc(len + 10);
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
