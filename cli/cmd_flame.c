/*
 * cmd_flame.c - `heaptap flame`: an interactive SVG flame graph of one or more profiles (summed),
 * or with --base A a differential one (widths from the profiles, colour by growth since A).
 * Option parsing and loading are common.c's, stack naming stacks.c's, layout and SVG
 * render/flame.c's; this file only wires them and maps flamegraph.pl's options.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "common.h"
#include "render/flame.h"
#include "render/svgflame.h"
#include "stacks.h"

static const char flame_help[] =
	"usage: heaptap flame [options] [BINARY] PROFILE... [-o out.svg]\n"
	"       heaptap flame [options] [BINARY] --base A.heap B.heap [-o diff.svg]\n"
	"Writes an interactive SVG flame graph (stdout without -o): stacks merged by function path,\n"
	"root at the bottom, widths proportional to the selected value. Hover for details and\n"
	"file:line, click to zoom, Search (or Ctrl-F) to highlight a regex. Inlined frames are\n"
	"marked \" [inline]\" with a dashed outline. With --base the widths come from the profiles\n"
	"and frames are red where they grew since the base, blue where they shrank (the stronger,\n"
	"the larger the change); stacks that exist only in the base are not drawn.\n"
	"  --title=TEXT           title (default \"Flame Graph\", \"Icicle Graph\" with --inverted)\n"
	"  --subtitle=TEXT        second title line\n"
	"  --width=PX             image width (default 1200)\n"
	"  --height=PX            frame height (default 16)\n"
	"  --minwidth=PX|N%       omit frames narrower than PX pixels or N% of the total (default 0.1)\n"
	"  --inverted             icicle graph: root at the top\n"
	"  --reverse              merge stacks from the leaf side (allocation sites at the root)\n"
	"  --countname=TEXT       unit in tooltips (default bytes, or objects for *_objects)\n"
	"  --colors=PALETTE       mem (default), hot, io, red, green, blue, aqua, yellow, purple, orange\n";

enum { O_TITLE = 1, O_SUBTITLE, O_WIDTH, O_HEIGHT, O_MINWIDTH, O_INVERTED, O_REVERSE, O_COUNTNAME, O_COLORS };

static const struct common_opt flame_opts[] = {
	{"title", 1, O_TITLE},       {"subtitle", 1, O_SUBTITLE}, {"width", 1, O_WIDTH},
	{"height", 1, O_HEIGHT},     {"minwidth", 1, O_MINWIDTH}, {"inverted", 0, O_INVERTED},
	{"reverse", 0, O_REVERSE},   {"countname", 1, O_COUNTNAME}, {"colors", 1, O_COLORS},
	{"color", 1, O_COLORS},      {NULL, 0, 0},
};

struct flame_ctx {
	struct flame_options fo;
	int reverse;
	int countname_given;
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
	case O_COLORS:
		if (flame_palette_parse(v, &c->fo.palette) != 0) {
			fprintf(stderr, "heaptap: flame: unknown palette '%s' (mem, hot, io, red, green, blue, "
			                "aqua, yellow, purple, orange)\n", v);
			return 2;
		}
		return 0;
	}
	return 0;
}

/* Builds display stacks of p with the flame graph's naming and feeds them into g. */
static int feed(struct flame_graph *g, const struct common_args *a, const struct profile *p, int as_base)
{
	struct stacks_options so;
	struct stacks s;
	stacks_options_from(&so, a);
	so.style = STACKS_FULL;
	if (stacks_build(&s, p, &so) != 0)
		return 1;
	svgflame_add_stacks(g, &s, p, as_base);
	stacks_release(&s);
	return 0;
}

int cmd_flame(int argc, char **argv)
{
	struct flame_ctx c;
	memset(&c, 0, sizeof c);
	flame_options_init(&c.fo);
	struct common_args a;
	struct common_extra ex = {.opts = flame_opts, .handle = flame_opt, .ctx = &c, .help = flame_help};
	int rc = common_parse(&a, argc, argv, &ex);
	if (rc >= 0)
		return rc;
	if (!c.countname_given)
		c.fo.countname = common_is_space(&a) ? "bytes" : "objects";

	struct profile p, base;
	profile_init(&p);
	profile_init(&base);
	struct flame_graph *g = flame_new(c.reverse);
	char subtitle[512];
	rc = common_load(&a, &p, 0);
	if (rc == 0 && a.base) {
		rc = common_read(&a, a.base, &base);
		if (rc == 0)
			rc = common_symbolize(&a, &base);
	}
	if (rc == 0)
		rc = feed(g, &a, &p, 0);
	if (rc == 0 && a.base) {
		rc = feed(g, &a, &base, 1);
		c.fo.differential = 1;
		if (!c.fo.subtitle) {
			snprintf(subtitle, sizeof subtitle,
			         "%s: widths from the profile, red = grew, blue = shrank since %s; "
			         "stacks only in the base are not shown",
			         common_value_name(a.value_index), a.base);
			c.fo.subtitle = subtitle;
		}
	}
	if (rc == 0) {
		FILE *out = stdout;
		if (a.output && !(out = fopen(a.output, "w"))) {
			fprintf(stderr, "heaptap: %s: %s\n", a.output, strerror(errno));
			rc = 1;
		} else {
			int w = flame_write_svg(g, &c.fo, out, NULL);
			int cl = out == stdout ? fflush(out) : fclose(out);
			if (w != 0 || cl != 0) {
				fprintf(stderr, "heaptap: %s: %s\n", a.output ? a.output : "stdout", strerror(errno));
				rc = 1;
			}
		}
	}
	flame_free(g);
	profile_release(&base);
	profile_release(&p);
	common_args_release(&a);
	return rc;
}
