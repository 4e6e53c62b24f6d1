/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * svgflame.c - feeds display stacks into a flame graph (svgflame.h). Names come from stacks.c;
 * the file:line of each frame is looked up again from the profile's symbol table by expanding
 * the sample's addresses the same way stacks.c does (root first, inline chains outermost
 * first, allocator frames trimmed from the leaf side), so trace frame i is expansion entry i.
 * Traces are streamed in while stacks_build makes them (the sink), never kept.
 */
#include "svgflame.h"

#include <stdlib.h>
#include <string.h>

#include "../../profile/arena.h"
#include "../../profile/symtab.h"

/* Fills info[0..nframes) root first from the sample's symbols; returns 0 if they do not line up. */
static int frame_infos(const struct profile *p, const struct prof_sample *sm, uint32_t nframes,
                       struct flame_frame_info *info)
{
	if (!p || !p->syms || !sm)
		return 0;
	uint32_t k = 0;
	for (uint32_t a = sm->naddrs; a-- > 0 && k < nframes;) {
		uint64_t addr = sm->addrs[a];
		if (addr > 0x7fffffffffffffffULL)
			continue;
		const struct prof_symbol *sym = symtab_get(p->syms, addr);
		uint32_t nf = sym ? sym->nframes : 0;
		if (nf == 0) {
			info[k++] = (struct flame_frame_info){NULL, 0, 0};
			continue;
		}
		for (uint32_t c = nf; c-- > 0 && k < nframes;) {
			const struct prof_frame *f = &sym->frames[c];
			info[k++] = (struct flame_frame_info){f->file, f->line, c + 1 < nf};
		}
	}
	return k == nframes;
}

void svgflame_sink_init(struct svgflame_sink *k, struct flame_graph *g, const struct stacks *s,
                        const struct profile *p, int as_base)
{
	memset(k, 0, sizeof *k);
	k->g = g;
	k->s = s;
	k->p = p;
	k->as_base = as_base;
}

void svgflame_sink_release(struct svgflame_sink *k)
{
	free(k->gid);
	free(k->ids);
	free(k->info);
	free(k->tmp);
	memset(k, 0, sizeof *k);
}

/* The graph's id of display name id (interned on first use, without its "[inline]" suffix). */
static uint32_t graph_id(struct svgflame_sink *k, uint32_t id)
{
	if (id >= k->ngid) {
		size_t n = k->s->nnames > id ? k->s->nnames : (size_t)id + 1;
		k->gid = arena_xrealloc(k->gid, n * sizeof *k->gid);
		memset(k->gid + k->ngid, 0xff, (n - k->ngid) * sizeof *k->gid);
		k->ngid = n;
	}
	if (k->gid[id] != UINT32_MAX)
		return k->gid[id];
	const char *nm = k->s->names[id].name;
	size_t len = strlen(nm);
	if (k->s->names[id].inlined && len >= 8 && strcmp(nm + len - 8, "[inline]") == 0) {
		if (len > k->tcap) {
			k->tcap = len * 2;
			k->tmp = arena_xrealloc(k->tmp, k->tcap);
		}
		memcpy(k->tmp, nm, len - 8);
		k->tmp[len - 8] = 0;
		nm = k->tmp;
	}
	return k->gid[id] = flame_name_id(k->g, nm);
}

void svgflame_sink_add(void *ctx, const uint32_t *frames, uint32_t nframes, double value,
                       const struct prof_sample *sample)
{
	struct svgflame_sink *k = ctx;
	if (!(value > 0))
		return;
	if (nframes > k->cap) {
		k->cap = nframes * 2;
		k->ids = arena_xrealloc(k->ids, k->cap * sizeof *k->ids);
		k->info = arena_xrealloc(k->info, k->cap * sizeof *k->info);
	}
	int have = frame_infos(k->p, sample, nframes, k->info);
	for (uint32_t i = 0; i < nframes; i++) {
		uint32_t id = frames[i];
		k->ids[i] = graph_id(k, id);
		if (!have)
			k->info[i] = (struct flame_frame_info){NULL, 0, 0};
		k->info[i].inlined = k->s->names[id].inlined; /* the name's own mark decides */
	}
	if (k->as_base)
		flame_add_ids(k->g, k->ids, k->info, nframes, 0, value);
	else
		flame_add_ids(k->g, k->ids, k->info, nframes, value, 0);
}
