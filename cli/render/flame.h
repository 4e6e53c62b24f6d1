/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * flame.h - flame graph layout and the interactive SVG writer, from a generic input: stacks of
 * frame names, root first, each with a value (and, for a differential graph, a base value).
 *
 * Stacks are merged by name path (a frame is its name plus an inline mark), siblings ordered by
 * name, widths proportional to the value, frames narrower than the minimum width pruned (their
 * values stay in their parents, so every drawn width is right). The SVG carries its own CSS and
 * JavaScript (hover details, click to zoom, Reset Zoom, regex Search with `Matched: P%`, Ctrl-F);
 * the same script drives several graphs inlined into one HTML page (svgscript.h). This knows
 * nothing about profiles or symbols: cli/cmd_flame.c and cli/render/report.c feed it. CLI only:
 * it allocates freely and aborts on out-of-memory.
 */
#ifndef HEAPTAP_CLI_RENDER_FLAME_H
#define HEAPTAP_CLI_RENDER_FLAME_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct flame_graph; /* opaque: the merged tree */

/* Optional per-frame extras for the tooltip. */
struct flame_frame_info {
	const char *file; /* source file, or NULL */
	int line;         /* 0 when unknown */
	int inlined;      /* 1: the frame was inlined into its caller (marked " [inline]", dashed) */
};

/* Creates an empty graph. reverse = 1 merges every stack from its leaf side (flamegraph.pl
   --reverse): flame_add then reverses the names it is given. */
struct flame_graph *flame_new(int reverse);
void flame_free(struct flame_graph *g);

/*
 * Adds one stack: names[0] is the root-most frame, names[n-1] the leaf; info is NULL or n
 * entries parallel to names. value is what the widths show (B, the "after" profile, in a
 * differential graph); base is the "before" value (0 when not differential). Strings are
 * copied. Stacks with n == 0 count into the root only. Negative values are added as given
 * (a caller that wants them clamped clamps them). When stacks that merge into one frame carry
 * different file:lines, the tooltip shows one of them (the first in name order of the stacks,
 * equal name paths in the order added). The stack goes into a batch that is merged into the
 * tree when full (and on flame_nframes or flame_write_svg), so memory grows with the merged
 * frames, not with the stacks added. A frame's value is summed in merge order (each batch
 * sorted by path): exact for whole numbers below 2^53; fractional values can differ in the
 * last bit from a sum in another order (the build before batches summed in name order of all
 * stacks), which shows only where a printed, rounded number sits on the rounding boundary.
 */
void flame_add(struct flame_graph *g, const char *const *names, const struct flame_frame_info *info,
               size_t n, double value, double base);

/* The same with names already interned by flame_name_id (faster when a caller adds many stacks
   over few names). */
uint32_t flame_name_id(struct flame_graph *g, const char *name);
void flame_add_ids(struct flame_graph *g, const uint32_t *ids, const struct flame_frame_info *info,
                   size_t n, double value, double base);

/* Sum of the values added (the root's value), and of the base values. */
double flame_total(const struct flame_graph *g);
double flame_base_total(const struct flame_graph *g);
/* Number of merged frames, the root included. */
size_t flame_nframes(const struct flame_graph *g);

enum flame_palette { FLAME_MEM, FLAME_HOT, FLAME_IO, FLAME_RED, FLAME_GREEN, FLAME_BLUE, FLAME_AQUA,
                     FLAME_YELLOW, FLAME_PURPLE, FLAME_ORANGE };

struct flame_options {
	const char *title;      /* NULL: "Flame Graph", or "Icicle Graph" when inverted */
	const char *subtitle;   /* NULL: none */
	const char *countname;  /* unit in tooltips; NULL: "bytes" */
	enum flame_palette palette;
	int width;              /* image width px (default 1200) */
	int frame_height;       /* px per frame (default 16) */
	double minwidth;        /* frames narrower are not drawn: px, or percent of the total */
	int minwidth_pct;       /* 1: minwidth is a percentage */
	int inverted;           /* icicle: root at top */
	int differential;       /* colour by value - base: red grew, blue shrank, saturation by
	                           |value - base| / max(value, base) */
	int fragment;           /* 1: no XML prolog and no <script> (for inlining into HTML that
	                           includes flame_script() once); 0: a standalone .svg document */
	const char *nametype;   /* label before the hovered frame's details; NULL: "Function:" */
	const char *fonttype;   /* font family of the labels; NULL: Verdana */
	double fontsize;        /* label font size px; 0: 12 */
	double fontwidth;       /* average character width / font size, for fitting labels; 0: 0.59 */
	const char *bgcolor;    /* background: "#rrggbb", or NULL: the palette's gradient */
	const char *notes;      /* text kept in the SVG as a <desc> note, or NULL */
	int negate;             /* differential: swap the colours (blue grew, red shrank) */
	const char *id;         /* the <svg> element's id and the prefix of the ids inside it (unique
	                           per page; plain [A-Za-z0-9_-]), NULL: "htf" */
};

/* Fills o with the defaults above (mem palette, bytes, 1200 x 16, minwidth 0.1 px). */
void flame_options_init(struct flame_options *o);

/* Parses a palette name ("mem", "hot", "io", "red", ...). Returns 0, or -1 if unknown. */
int flame_palette_parse(const char *name, enum flame_palette *out);

/* Counts of what the last flame_write_svg drew (for tests and --verbose). */
struct flame_stats {
	size_t drawn;      /* frames written */
	size_t pruned;     /* frames narrower than minwidth, not written */
	int max_depth;     /* deepest drawn frame (root = 0) */
	int height;        /* image height px */
};

/* Lays out and writes the SVG to out. Returns 0, or -1 after a write error (errno set). st may be
   NULL. */
int flame_write_svg(const struct flame_graph *g, const struct flame_options *o, FILE *out,
                    struct flame_stats *st);

/* The script and CSS a standalone graph embeds, and an HTML page includes once for all its
   graphs, are in svgscript.h. */

#endif
