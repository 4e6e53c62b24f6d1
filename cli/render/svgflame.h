/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * svgflame.h - the bridge from display stacks (cli/stacks.h) to the generic flame graph
 * (flame.h): each trace becomes one root-first name stack, with the file:line of every frame
 * and inline marks recovered from the profile's symbols. Shared by `heaptap flame` and the HTML
 * report. It neither loads profiles nor writes SVG. CLI only; allocates.
 */
#ifndef HEAPTAP_CLI_RENDER_SVGFLAME_H
#define HEAPTAP_CLI_RENDER_SVGFLAME_H

#include "../../profile/model.h"
#include "../stacks.h"
#include "flame.h"

/*
 * Adds the traces of a struct stacks to g while stacks_build makes them, without keeping them:
 * set stacks_options.each to svgflame_sink_add and each_ctx to a sink initialised with the
 * struct stacks being built (s, whose names it reads as they appear) and its profile p (for
 * file:line; may be NULL to skip them). Every trace with a positive value goes into g as it is
 * made, as the value (as_base 0) or as the base value of a differential graph (as_base 1), so
 * memory is g's merged tree, not the stacks. Inlined frames lose their "[inline]" name suffix
 * and get flame_frame_info.inlined instead. Release the sink after the build.
 */
struct svgflame_sink {
	struct flame_graph *g;
	const struct stacks *s;
	const struct profile *p;
	int as_base;
	/* private */
	uint32_t *gid;          /* display name id -> graph name id, UINT32_MAX until used */
	size_t ngid;
	uint32_t *ids;          /* one trace's frames, as graph ids */
	struct flame_frame_info *info;
	size_t cap;
	char *tmp;              /* a name without its "[inline]" suffix */
	size_t tcap;
};
void svgflame_sink_init(struct svgflame_sink *k, struct flame_graph *g, const struct stacks *s,
                        const struct profile *p, int as_base);
/* The stacks_options.each callback: ctx is a struct svgflame_sink. Traces whose value is not
   positive are left out. */
void svgflame_sink_add(void *ctx, const uint32_t *frames, uint32_t nframes, double value,
                       const struct prof_sample *sample);
void svgflame_sink_release(struct svgflame_sink *k);

#endif
