/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cmd_flame.c - `heaptap flame`: an interactive SVG flame graph of one or more profiles (summed),
 * or with --base A a differential one (widths from the profiles, colour by growth since A).
 * It also reads folded stacks (flamegraph.pl's input, told apart by content, from files or
 * standard input) and takes flamegraph.pl's options. Option parsing and loading are
 * common.c's, stack naming stacks.c's, folded input foldedin.c's, layout and SVG
 * render/flame.c's; this file only wires them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "common.h"
#include "mapfile.h"
#include "foldedin.h"
#include "render/flame.h"
#include "views.h"

static const char flame_help[] =
	"usage: heaptap flame [options] [BINARY] PROFILE... [-o out.svg]\n"
	"       heaptap flame [options] [BINARY] --base A.heap B.heap [-o diff.svg]\n"
	"       heaptap flame [flamegraph.pl options] [FOLDED...] > out.svg\n"
	"Writes an interactive SVG flame graph (stdout without -o): stacks merged by function path,\n"
	"root at the bottom, widths proportional to the selected value. Hover for details and\n"
	"file:line, click to zoom, Search (or Ctrl-F) to highlight a regex. Inlined frames are\n"
	"marked \" [inline]\" with a dashed outline. With --base the widths come from the profiles\n"
	"and frames are red where they grew since the base, blue where they shrank (the stronger,\n"
	"the larger the change); stacks that exist only in the base are not drawn.\n"
	"  --title=TEXT           title (default \"Flame Graph\", \"Icicle Graph\" with --inverted;\n"
	"                         \"CPU Flame Graph\" for CPU profiles)\n"
	"  --subtitle=TEXT        second title line\n"
	"  --width=PX             image width (default 1200)\n"
	"  --height=PX            frame height (default 16)\n"
	"  --minwidth=PX|N%       omit frames narrower than PX pixels or N% of the total (default 0.1)\n"
	"  --inverted             icicle graph: root at the top\n"
	"  --reverse              merge stacks from the leaf side (allocation sites at the root)\n"
	"  --countname=TEXT       unit in tooltips (default bytes, or objects for *_objects)\n"
	"  --colors=PALETTE       mem (default; hot for CPU profiles), hot, io, red, green, blue, aqua,\n"
	"                         yellow, purple, orange\n"
	"  --nametype=TEXT        label of the hovered frame's details (default \"Function:\")\n"
	"  --fonttype=FONT --fontsize=PX --fontwidth=F   label font, size (12) and width factor (0.59)\n"
	"  --bgcolors=COLOR       background: yellow, blue, green, grey or #rrggbb\n"
	"  --notes=TEXT           a note kept in the SVG\n"
	"  --negate               differential: blue where it grew, red where it shrank\n"
	"  --factor=F             multiply folded counts by F\n"
	"  --hash --cp            accepted: colours always come from a hash of the name\n"
	"Folded stacks ('root;...;leaf COUNT' lines, as heaptap collapsed, jeprof --collapsed and\n"
	"stackcollapse write; two counts 'BEFORE AFTER' make a differential graph) are recognised by\n"
	"their content, in FOLDED files or on standard input when no file is named; their counts are\n"
	"'samples' unless --countname says otherwise.\n";

enum { O_TITLE = 1, O_SUBTITLE, O_WIDTH, O_HEIGHT, O_MINWIDTH, O_INVERTED, O_REVERSE, O_COUNTNAME, O_COLORS,
       O_NAMETYPE, O_FONTTYPE, O_FONTSIZE, O_FONTWIDTH, O_BGCOLORS, O_NOTES, O_NEGATE, O_FACTOR, O_NOOP,
       O_UNSUPPORTED };

static const struct common_opt flame_opts[] = {
	{"title", 1, O_TITLE},       {"subtitle", 1, O_SUBTITLE}, {"width", 1, O_WIDTH},
	{"height", 1, O_HEIGHT},     {"minwidth", 1, O_MINWIDTH}, {"inverted", 0, O_INVERTED},
	{"reverse", 0, O_REVERSE},   {"countname", 1, O_COUNTNAME}, {"colors", 1, O_COLORS},
	{"color", 1, O_COLORS},      {"nametype", 1, O_NAMETYPE}, {"fonttype", 1, O_FONTTYPE},
	{"fontsize", 1, O_FONTSIZE}, {"fontwidth", 1, O_FONTWIDTH}, {"bgcolors", 1, O_BGCOLORS},
	{"bgcolor", 1, O_BGCOLORS},  {"notes", 1, O_NOTES},       {"negate", 0, O_NEGATE},
	{"factor", 1, O_FACTOR},     {"hash", 0, O_NOOP},         {"cp", 0, O_NOOP},
	{"flamechart", 0, O_UNSUPPORTED}, {"random", 0, O_UNSUPPORTED}, {NULL, 0, 0},
};

struct flame_ctx {
	struct flame_options fo;
	int reverse;
	int countname_given;
	int colors_given;
	double factor;
	char bg[8];
};

static int parse_num(const char *v, double lo, double hi, double *out)
{
	char *end;
	errno = 0;
	double d = strtod(v, &end);
	if (errno || end == v || *end || !(d >= lo && d <= hi))
		return -1;
	*out = d;
	return 0;
}

static int flame_opt(void *vctx, int id, const char *v)
{
	struct flame_ctx *c = vctx;
	double d;
	switch (id) {
	case O_TITLE: c->fo.title = v; return 0;
	case O_SUBTITLE: c->fo.subtitle = v; return 0;
	case O_COUNTNAME: c->fo.countname = v; c->countname_given = 1; return 0;
	case O_INVERTED: c->fo.inverted = 1; return 0;
	case O_REVERSE: c->reverse = 1; return 0;
	case O_WIDTH:
	case O_HEIGHT:
		if (parse_num(v, id == O_WIDTH ? 100 : 4, id == O_WIDTH ? 100000 : 200, &d) != 0) {
			fprintf(stderr, "heaptap: flame: bad --%s '%s' (try --help)\n", id == O_WIDTH ? "width" : "height", v);
			return 2;
		}
		if (id == O_WIDTH)
			c->fo.width = (int)d;
		else
			c->fo.frame_height = (int)d;
		return 0;
	case O_MINWIDTH: {
		size_t len = strlen(v);
		char buf[64];
		int pct = len > 0 && v[len - 1] == '%';
		if (len == 0 || len >= sizeof buf) {
			fprintf(stderr, "heaptap: flame: bad --minwidth '%s' (try --help)\n", v);
			return 2;
		}
		memcpy(buf, v, len + 1);
		if (pct)
			buf[len - 1] = 0;
		if (parse_num(buf, 0, pct ? 100 : 1e6, &d) != 0) {
			fprintf(stderr, "heaptap: flame: bad --minwidth '%s' (try --help)\n", v);
			return 2;
		}
		c->fo.minwidth = d;
		c->fo.minwidth_pct = pct;
		return 0;
	}
	case O_NAMETYPE: c->fo.nametype = v; return 0;
	case O_FONTTYPE: c->fo.fonttype = v; return 0;
	case O_NOTES: c->fo.notes = v; return 0;
	case O_NEGATE: c->fo.negate = 1; return 0;
	case O_NOOP: return 0;
	case O_UNSUPPORTED:
		fprintf(stderr, "heaptap: flame: flamegraph.pl's --flamechart and --random are not supported "
		                "(stacks are merged; colours come from the names)\n");
		return 2;
	case O_FONTSIZE:
	case O_FONTWIDTH:
	case O_FACTOR:
		if (parse_num(v, id == O_FACTOR ? 0 : 0.01, id == O_FONTSIZE ? 200 : 1e12, &d) != 0) {
			fprintf(stderr, "heaptap: flame: bad --%s '%s' (try --help)\n",
			        id == O_FONTSIZE ? "fontsize" : id == O_FONTWIDTH ? "fontwidth" : "factor", v);
			return 2;
		}
		if (id == O_FONTSIZE)
			c->fo.fontsize = d;
		else if (id == O_FONTWIDTH)
			c->fo.fontwidth = d;
		else
			c->factor = d;
		return 0;
	case O_BGCOLORS: {
		static const char *const named[][2] = {{"yellow", "#eeeeb0"}, {"blue", "#e0e0ff"},
		                                       {"green", "#e0f5e0"}, {"grey", "#f8f8f8"}, {"gray", "#f8f8f8"}};
		for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
			if (strcmp(v, named[i][0]) == 0) {
				c->fo.bgcolor = named[i][1];
				return 0;
			}
		if (strlen(v) == 7 && v[0] == '#' && strspn(v + 1, "0123456789abcdefABCDEF") == 6) {
			memcpy(c->bg, v, 8);
			c->fo.bgcolor = c->bg;
			return 0;
		}
		fprintf(stderr, "heaptap: flame: bad --bgcolors '%s' (yellow, blue, green, grey or #rrggbb)\n", v);
		return 2;
	}
	case O_COLORS:
		c->colors_given = 1;
		if (flame_palette_parse(v, &c->fo.palette) != 0) {
			fprintf(stderr, "heaptap: flame: unknown palette '%s' (mem, hot, io, red, green, blue, "
			                "aqua, yellow, purple, orange)\n", v);
			return 2;
		}
		return 0;
	}
	return 0;
}

/* The whole of standard input in a malloc'd buffer; NULL on a read error (message printed). */
static char *slurp_stdin(size_t *n)
{
	size_t cap = 1 << 16;
	char *buf = malloc(cap);
	*n = 0;
	for (ssize_t r; buf;) {
		if (*n == cap) {
			char *nb = realloc(buf, cap * 2);
			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
		r = read(0, buf + *n, cap - *n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			fprintf(stderr, "heaptap: flame: standard input: %s\n", strerror(errno));
			free(buf);
			return NULL;
		}
		if (r == 0)
			return buf;
		*n += (size_t)r;
	}
	free(buf);
	fprintf(stderr, "heaptap: flame: standard input: out of memory\n");
	return NULL;
}

/* One input: a file mapped, or standard input read into memory. */
struct input {
	const char *path;
	const unsigned char *map; /* common_map'ed, or NULL */
	char *mem;                /* standard input, or NULL */
	size_t n;
	int folded;
};

static int open_input(struct input *in, const char *path)
{
	memset(in, 0, sizeof(*in));
	in->path = path;
	if (strcmp(path, "-") == 0) {
		if (!(in->mem = slurp_stdin(&in->n)))
			return 1;
		in->folded = foldedin_sniff(in->mem, in->n);
		return 0;
	}
	in->map = mapfile_map(path, &in->n);
	in->folded = in->map && foldedin_sniff((const char *)in->map, in->n);
	return 0;
}

static void close_input(struct input *in)
{
	mapfile_unmap(in->map, in->n);
	free(in->mem);
}

/* Adds the folded stacks of in to g. Returns 0, or 1 when no line of it was folded. */
static int add_folded(struct flame_graph *g, struct flame_ctx *c, const struct input *in, int as_base)
{
	struct foldedin_result r;
	const char *text = in->mem ? in->mem : (const char *)in->map;
	foldedin_add(g, text, in->n, c->factor, as_base, &r);
	if (r.two_columns)
		c->fo.differential = 1;
	const char *name = strcmp(in->path, "-") == 0 ? "standard input" : in->path;
	if (r.bad)
		fprintf(stderr, "heaptap: flame: %s: ignored %zu line%s that are not 'frames count' (a "
		                "negative count is one)\n", name, r.bad, r.bad == 1 ? "" : "s");
	if (r.stacks == 0) {
		fprintf(stderr, "heaptap: flame: %s: no stack counts found\n", name);
		return 1;
	}
	return 0;
}

/* The flame graph of folded stacks: inputs[0..n) summed, base (may be NULL) as the base. */
static int flame_folded(struct flame_ctx *c, const struct common_args *a, struct input *ins, size_t n,
                        struct input *base, FILE *out)
{
	struct flame_graph *g = flame_new(c->reverse);
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = add_folded(g, c, &ins[i], 0);
	if (rc == 0 && base) {
		rc = add_folded(g, c, base, 1);
		c->fo.differential = 1;
	}
	if (rc == 0 && (flame_write_svg(g, &c->fo, out, NULL) != 0 || fflush(out) != 0)) {
		fprintf(stderr, "heaptap: %s: %s\n", a->output ? a->output : "stdout", strerror(errno));
		rc = 1;
	}
	flame_free(g);
	return rc;
}

int cmd_flame(int argc, char **argv)
{
	struct flame_ctx c;
	memset(&c, 0, sizeof c);
	c.factor = 1;
	flame_options_init(&c.fo);
	struct common_args a;
	struct common_extra ex = {.opts = flame_opts, .handle = flame_opt, .ctx = &c, .help = flame_help};
	int rc = common_parse(&a, argc, argv, &ex);
	if (rc >= 0)
		return rc;

	/* Folded stacks or profiles? Look at every input (standard input when none is named). */
	static char *const dash[] = {"-"};
	char *const *paths = a.profiles;
	size_t npaths = a.nprofiles;
	if (npaths == 0 && !isatty(0)) {
		paths = dash;
		npaths = 1;
	}
	struct input *ins = calloc(npaths + 1, sizeof(*ins)), base_in;
	memset(&base_in, 0, sizeof(base_in));
	size_t nopen = 0, nfolded = 0;
	for (; rc < 0 && ins && nopen < npaths; nopen++) {
		if (open_input(&ins[nopen], paths[nopen]))
			rc = 1;
		else
			nfolded += (size_t)ins[nopen].folded;
	}
	if (!ins)
		rc = 1;
	if (rc < 0 && paths == dash && ins[0].n == 0)
		rc = common_usage_error(&a, "no profile given, and nothing on standard input");
	int have_base = 0;
	if (rc < 0 && nfolded && a.base) {
		have_base = open_input(&base_in, a.base) == 0;
		if (!have_base || !base_in.folded)
			rc = common_usage_error(&a, "--base %s: with folded stacks the base must be folded stacks too", a.base);
	}
	if (rc < 0 && nfolded && nfolded != npaths)
		rc = common_usage_error(&a, "cannot mix folded stacks and profiles in one graph");
	FILE *out = stdout;
	if (rc < 0 && a.output && strcmp(a.output, "-") != 0 && !(out = fopen(a.output, "w"))) {
		fprintf(stderr, "heaptap: %s: %s\n", a.output, strerror(errno));
		out = stdout;
		rc = 1;
	}
	if (rc < 0 && nfolded) {
		if (!c.countname_given)
			c.fo.countname = "samples";
		rc = flame_folded(&c, &a, ins, npaths, have_base ? &base_in : NULL, out);
	} else if (rc < 0) {
		if (!c.countname_given)
			c.fo.countname = common_is_space(&a) ? "bytes" : "objects";
		struct profile p, base;
		profile_init(&p);
		profile_init(&base);
		char subtitle[512];
		char tmpl[] = "/tmp/heaptap-stdin-XXXXXX";
		int tfd = -1;
		if (paths == dash) {
			/* a profile on standard input, already read: hand the reader a file */
			tfd = mkstemp(tmpl);
			rc = tfd >= 0 && write(tfd, ins[0].mem, ins[0].n) == (ssize_t)ins[0].n ? -1 : 1;
			if (rc == 1)
				fprintf(stderr, "heaptap: flame: %s: %s\n", tmpl, strerror(errno));
			rc = rc == 1 ? 1 : common_read(&a, tmpl, &p);
			if (rc == 0)
				rc = common_symbolize(&a, &p);
		} else {
			rc = common_load(&a, &p, 0);
		}
		if (rc == 0 && p.cpu) {
			/* a CPU profile: flamegraph.pl's hot palette, the title and the unit say CPU */
			if (!c.colors_given)
				c.fo.palette = FLAME_HOT;
			if (!c.fo.title)
				c.fo.title = c.fo.inverted ? "CPU Icicle Graph" : "CPU Flame Graph";
			if (!c.countname_given)
				c.fo.countname = common_is_space(&a) ? "ns of CPU time" : "samples";
		}
		if (rc == 0 && a.base) {
			rc = common_read(&a, a.base, &base);
			if (rc == 0)
				rc = common_check_same_kind(&p, a.profiles[0], &base, a.base);
			if (rc == 0)
				rc = common_symbolize(&a, &base);
			c.fo.differential = 1;
			if (rc == 0 && !c.fo.subtitle) {
				snprintf(subtitle, sizeof subtitle,
				         "%s: widths from the profile, red = grew, blue = shrank since %s; "
				         "stacks only in the base are not shown",
				         common_value_name(a.value_index), a.base);
				c.fo.subtitle = subtitle;
			}
		}
		char losses[1024];
		if (rc == 0 && !c.fo.subtitle && common_losses_text(&p, losses, sizeof losses))
			c.fo.subtitle = losses;
		if (rc == 0)
			rc = views_flame(out, &a, &p, a.base ? &base : NULL, &c.fo, c.reverse);
		if (tfd >= 0) {
			close(tfd);
			unlink(tmpl);
		}
		profile_release(&base);
		profile_release(&p);
	}
	if (out != stdout && fclose(out) != 0 && rc == 0) {
		fprintf(stderr, "heaptap: %s: %s\n", a.output, strerror(errno));
		rc = 1;
	}
	for (size_t i = 0; i < nopen; i++)
		close_input(&ins[i]);
	if (have_base || base_in.map || base_in.mem)
		close_input(&base_in);
	free(ins);
	common_args_release(&a);
	return rc;
}
