/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * peakprof.c - the peak profile of peakprof.h: two buffers of (PC vector, live objects,
 * live bytes), the copy (written under the table lock by the slow path) and the dump's view
 * (written under the dump lock from the copy), each in mappings grown by doubling. No host
 * malloc.
 */
#include "peakprof.h"

#include <errno.h>
#include <string.h>

#include "stacktab.h"
#include "sys.h"
#include "unwind.h"

struct peak_ent {
	uint64_t pcs_off;
	uint32_t depth;
	uint64_t objs_fp, bytes_fp;
};

struct peak_buf {
	struct peak_ent *ents;
	size_t n, cap;
	uintptr_t *pcs;
	size_t npcs, pcs_cap;
	uint64_t live_bytes;
};

uint64_t peakprof_next = UINT64_MAX;
static int enabled;
static struct peak_buf copy;  /* table lock */
static struct peak_buf view;  /* dump lock */
static uint64_t taken, skipped;

void peakprof_enable_locked(uint64_t live_bytes)
{
	enabled = 1;
	peakprof_next = live_bytes > copy.live_bytes ? live_bytes : copy.live_bytes;
}

/* Makes room for nents entries and npcs PCs in b (contents lost when it grows). */
static int reserve(struct peak_buf *b, size_t nents, size_t npcs)
{
	if (nents > b->cap) {
		size_t cap = b->cap ? b->cap : 1024;
		while (cap < nents)
			cap *= 2;
		void *p = sys_map(cap * sizeof *b->ents);
		if (!p)
			return -ENOMEM;
		if (b->ents)
			sys_unmap(b->ents, b->cap * sizeof *b->ents);
		b->ents = p;
		b->cap = cap;
	}
	if (npcs > b->pcs_cap) {
		size_t cap = b->pcs_cap ? b->pcs_cap : 16384;
		while (cap < npcs)
			cap *= 2;
		void *p = sys_map(cap * sizeof *b->pcs);
		if (!p)
			return -ENOMEM;
		if (b->pcs)
			sys_unmap(b->pcs, b->pcs_cap * sizeof *b->pcs);
		b->pcs = p;
		b->pcs_cap = cap;
	}
	return 0;
}

void peakprof_take_locked(const struct stacktab *t, uint64_t live)
{
	if (!enabled)
		return;
	size_t nents = 0, npcs = 0;
	for (uint32_t id = 0; id < stacktab_id_end(t); id++) {
		const struct stack_entry *e = stacktab_get((struct stacktab *)t, id);
		if (e->depth && e->live_samples) {
			nents++;
			npcs += e->depth;
		}
	}
	/* the next copy is due 10 % higher either way: a failed copy is not retried per sample */
	peakprof_next = live + live / 10;
	if (reserve(&copy, nents, npcs) != 0) {
		skipped++;
		return;
	}
	copy.n = copy.npcs = 0;
	for (uint32_t id = 0; id < stacktab_id_end(t); id++) {
		const struct stack_entry *e = stacktab_get((struct stacktab *)t, id);
		if (!e->depth || !e->live_samples)
			continue;
		struct peak_ent *p = &copy.ents[copy.n++];
		p->pcs_off = copy.npcs;
		p->depth = e->depth;
		p->objs_fp = e->live_objs_fp;
		p->bytes_fp = e->live_bytes_fp;
		memcpy(copy.pcs + copy.npcs, stacktab_pcs(t, e), e->depth * sizeof *copy.pcs);
		copy.npcs += e->depth;
	}
	copy.live_bytes = live;
	taken++;
}

void peakprof_reset_locked(void)
{
	copy.n = copy.npcs = 0;
	copy.live_bytes = 0;
	if (enabled)
		peakprof_next = 0;
}

void peakprof_rewrite_pcs_locked(uintptr_t (*map)(uintptr_t pc, const void *ctx), const void *ctx)
{
	for (size_t i = 0; i < copy.npcs; i++)
		copy.pcs[i] = map(copy.pcs[i], ctx);
}

int peakprof_view_locked(uint64_t *live_bytes)
{
	if (!enabled)
		return -ENOENT;
	int rc = copy.n == 0 ? -ENOENT : reserve(&view, copy.n, copy.npcs);
	if (rc == 0) {
		memcpy(view.ents, copy.ents, copy.n * sizeof *copy.ents);
		memcpy(view.pcs, copy.pcs, copy.npcs * sizeof *copy.pcs);
		view.n = copy.n;
		view.npcs = copy.npcs;
		view.live_bytes = copy.live_bytes;
	}
	if (rc == 0 && live_bytes)
		*live_bytes = view.live_bytes;
	return rc;
}

int peakprof_for_each_stack(const struct dump_source *src,
                            int (*fn)(void *ctx, const struct dump_stack *st), void *ctx)
{
	(void)src;
	const double one = (double)(1u << STACKTAB_OBJS_SHIFT);
	for (size_t i = 0; i < view.n; i++) {
		const struct peak_ent *p = &view.ents[i];
		const uintptr_t *pcs = view.pcs + p->pcs_off;
		/* operator new frames of a libstdc++ loaded after the sample are stripped here */
		uint32_t skip = unwind_strip(pcs, p->depth);
		struct dump_stack st;
		memset(&st, 0, sizeof st);
		st.pcs = pcs + skip;
		st.depth = p->depth - skip;
		st.live_objs = (double)p->objs_fp / one;
		st.live_bytes = (double)p->bytes_fp;
		st.live_samples = 1;
		int r = fn(ctx, &st);
		if (r)
			return r;
	}
	return 0;
}

void peakprof_counts_locked(uint64_t *t, uint64_t *s)
{
	*t = taken;
	*s = skipped;
}
