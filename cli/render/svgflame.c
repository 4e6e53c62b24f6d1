/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * svgflame.c - feeds display stacks into a flame graph (svgflame.h). Names come from stacks.c;
 * the file:line of each frame is looked up again from the profile's symbol table by expanding
 * the sample's addresses the same way stacks.c does (root first, inline chains outermost
 * first, allocator frames trimmed from the leaf side), so trace frame i is expansion entry i.
 */
#include "svgflame.h"

#include <stdlib.h>
#include <string.h>

#include "../../profile/arena.h"
#include "../../profile/symtab.h"

/* Fills info[0..nframes) root first from the sample's symbols; returns 0 if they do not line up. */
static int frame_infos(const struct profile *p, const struct stacks_trace *tr, struct flame_frame_info *info)
{
	const struct prof_sample *sm = tr->sample;
	if (!p || !p->syms || !sm)
		return 0;
	uint32_t k = 0;
	for (uint32_t a = sm->naddrs; a-- > 0 && k < tr->nframes;) {
		uint64_t addr = sm->addrs[a];
		if (addr > 0x7fffffffffffffffULL)
			continue;
		const struct prof_symbol *sym = symtab_get(p->syms, addr);
		uint32_t nf = sym ? sym->nframes : 0;
		if (nf == 0) {
			info[k++] = (struct flame_frame_info){NULL, 0, 0};
			continue;
		}
		for (uint32_t c = nf; c-- > 0 && k < tr->nframes;) {
			const struct prof_frame *f = &sym->frames[c];
			info[k++] = (struct flame_frame_info){f->file, f->line, c + 1 < nf};
		}
	}
	return k == tr->nframes;
}

void svgflame_add_stacks(struct flame_graph *g, const struct stacks *s, const struct profile *p, int as_base)
{
	/* Every display name interned once, without its "[inline]" suffix. */
	uint32_t *gid = arena_xmalloc((s->nnames ? s->nnames : 1) * sizeof *gid);
	char *tmp = NULL;
	size_t tcap = 0;
	for (size_t i = 0; i < s->nnames; i++) {
		const char *nm = s->names[i].name;
		size_t len = strlen(nm);
		if (s->names[i].inlined && len >= 8 && strcmp(nm + len - 8, "[inline]") == 0) {
			if (len > tcap) {
				tcap = len * 2;
				tmp = arena_xrealloc(tmp, tcap);
			}
			memcpy(tmp, nm, len - 8);
			tmp[len - 8] = 0;
			nm = tmp;
		}
		gid[i] = flame_name_id(g, nm);
	}
	free(tmp);
	uint32_t *ids = NULL;
	struct flame_frame_info *info = NULL;
	size_t cap = 0;
	for (size_t t = 0; t < s->ntraces; t++) {
		const struct stacks_trace *tr = &s->traces[t];
		if (!(tr->value > 0))
			continue;
		if (tr->nframes > cap) {
			cap = tr->nframes * 2;
			ids = arena_xrealloc(ids, cap * sizeof *ids);
			info = arena_xrealloc(info, cap * sizeof *info);
		}
		int have = frame_infos(p, tr, info);
		for (uint32_t i = 0; i < tr->nframes; i++) {
			uint32_t id = tr->frames[i];
			ids[i] = gid[id];
			if (!have)
				info[i] = (struct flame_frame_info){NULL, 0, 0};
			info[i].inlined = s->names[id].inlined; /* the name's own mark decides */
		}
		if (as_base)
			flame_add_ids(g, ids, info, tr->nframes, 0, tr->value);
		else
			flame_add_ids(g, ids, info, tr->nframes, tr->value, 0);
	}
	free(gid);
	free(ids);
	free(info);
}
