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
 * Adds every trace of s with a positive value to g: as the value (as_base 0) or as the base
 * value of a differential graph (as_base 1). p is the profile s was built from (for file:line;
 * may be NULL to skip them). Inlined frames lose their "[inline]" name suffix and get
 * flame_frame_info.inlined instead.
 */
void svgflame_add_stacks(struct flame_graph *g, const struct stacks *s, const struct profile *p, int as_base);

#endif
