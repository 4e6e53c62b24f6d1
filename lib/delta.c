/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * delta.c - the readings and delta profiles of delta.h: a reading copies each stack's hash
 * and cumulative counts under the table lock; a delta profile is a dump (dump_fd_view) whose
 * per-stack values are rewritten against the reading while the snapshot is taken. What stacks
 * recycled inside the window allocated is counted from the grand totals (delta.h) and written
 * as the profile's recycled_* losses, never lost silently.
 *
 * Not the endpoints (http_delta.c) nor the push client (push.c). No host malloc.
 */
#include "delta.h"
#include "../base/pages.h"

#include <errno.h>
#include <string.h>

#include "core.h"
#include "dump.h"
#include "../profile/inproc/dumpsrc.h"
#include "sys.h"

/* Room for every stack id the table has handed out, and some to grow (table lock held: the
   stack table grows without a ceiling, so the reading does too). 0 or -ENOMEM (the old
   reading stays). */
static int ensure_cap(struct delta_base *b)
{
	size_t need = stacktab_id_end(&core.stacks);
	if (b->ents && need <= b->cap)
		return 0;
	size_t cap = need + need / 4 + 1024;
	size_t bytes = (size_t)pages_round_up(cap * sizeof *b->ents);
	void *ents = sys_map(bytes);
	if (!ents)
		return -ENOMEM;
	if (b->ents) {
		memcpy(ents, b->ents, b->n * sizeof *b->ents);
		sys_unmap(b->ents, b->map_bytes);
	}
	b->ents = ents;
	b->cap = cap;
	b->map_bytes = bytes;
	return 0;
}

int delta_base_init(struct delta_base *b)
{
	memset(b, 0, sizeof *b);
	core_init();
	if (!core.enabled)
		return -ENOENT;
	b->time_ns = core.start_time_ns;
	core_lock_tables();
	int rc = ensure_cap(b);
	core_unlock_tables();
	if (rc)
		memset(b, 0, sizeof *b);
	return rc;
}

void delta_base_release(struct delta_base *b)
{
	if (b->ents)
		sys_unmap(b->ents, b->map_bytes);
	memset(b, 0, sizeof *b);
}

int delta_mark(struct delta_base *b)
{
	if (!core.enabled || !b->ents)
		return -ENOENT;
	core_lock_tables();
	(void)ensure_cap(b);
	size_t end = stacktab_id_end(&core.stacks);
	size_t n = end < b->cap ? end : b->cap;
	uint64_t objs = core.stacks.recycled_objs_fp, bytes = core.stacks.recycled_bytes_fp;
	for (uint32_t id = 0; id < n; id++) {
		const struct stack_entry *e = stacktab_get(&core.stacks, id);
		b->ents[id].hash = e->hash;
		b->ents[id].objs_fp = e->alloc_objs_fp;
		b->ents[id].bytes_fp = e->alloc_bytes_fp;
		if (e->depth) { /* a free slot keeps its last stack's counts */
			objs += e->alloc_objs_fp;
			bytes += e->alloc_bytes_fp;
		}
	}
	/* ids beyond the room (none after ensure_cap succeeded) count whole at the end: so here
	   they count nothing, and the totals hold only the stacks read */
	b->total_objs_fp = objs;
	b->total_bytes_fp = bytes;
	b->recycled = core.stacks.recycled;
	b->n = n;
	b->time_ns = sys_now_ns();
	core_unlock_tables();
	return 0;
}

struct view_ctx {
	struct delta_base *b;
	unsigned parts;
	int advance;
	size_t seen;       /* ids visited */
	int64_t time_ns;   /* when the snapshot began */
	uint64_t now_objs, now_bytes;     /* the visited stacks' cumulative counts */
	uint64_t shown_objs, shown_bytes; /* their alloc_* in the profile */
};

/* The dump_view callback: under the table lock, per stack id in order. */
static void adjust(void *ctx, uint32_t id, const struct stack_entry *e, struct dump_values *v)
{
	struct view_ctx *c = ctx;
	struct delta_base *b = c->b;
	if (c->seen == 0)
		c->time_ns = sys_now_ns();
	c->seen = (size_t)id + 1;
	uint64_t objs = v->alloc_objs_fp, bytes = v->alloc_bytes_fp;
	c->now_objs += objs;
	c->now_bytes += bytes;
	if (id < b->n && b->ents[id].hash == e->hash && b->ents[id].objs_fp <= objs &&
	    b->ents[id].bytes_fp <= bytes) {
		v->alloc_objs_fp = objs - b->ents[id].objs_fp;
		v->alloc_bytes_fp = bytes - b->ents[id].bytes_fp;
	}
	/* else: interned since the reading, recycled for another stack, or reset: whole */
	c->shown_objs += v->alloc_objs_fp;
	c->shown_bytes += v->alloc_bytes_fp;
	if (c->advance && id < b->cap) {
		b->ents[id].hash = e->hash;
		b->ents[id].objs_fp = objs;
		b->ents[id].bytes_fp = bytes;
	}
	if (!(c->parts & DELTA_ALLOC))
		v->alloc_objs_fp = v->alloc_bytes_fp = 0;
	if (!(c->parts & DELTA_INUSE))
		v->live_objs_fp = v->live_bytes_fp = 0;
}

/* The dump_view finish callback: under the table lock, after the last stack. What the window
   allocated in all (grand total now - at the reading) less what its stacks show is what the
   stacks recycled inside it took with them. */
static void finish(void *ctx, struct dump_losses *l)
{
	struct view_ctx *c = ctx;
	struct delta_base *b = c->b;
	uint64_t objs = c->now_objs + core.stacks.recycled_objs_fp;
	uint64_t bytes = c->now_bytes + core.stacks.recycled_bytes_fp;
	uint64_t recycled = core.stacks.recycled;
	if (c->parts & DELTA_ALLOC) {
		uint64_t seen_o = b->total_objs_fp + c->shown_objs, seen_b = b->total_bytes_fp + c->shown_bytes;
		/* a reset makes the totals go back: nothing to report then */
		uint64_t lost_o = objs > seen_o ? objs - seen_o : 0, lost_b = bytes > seen_b ? bytes - seen_b : 0;
		if (lost_o || lost_b) {
			l->recycled_stacks = recycled > b->recycled ? recycled - b->recycled : 1;
			l->recycled_objs = lost_o >> STACKTAB_OBJS_SHIFT;
			l->recycled_bytes = lost_b;
		}
	}
	if (c->advance) {
		b->total_objs_fp = objs;
		b->total_bytes_fp = bytes;
		b->recycled = recycled;
	}
}

int delta_write(struct delta_base *b, int fd, enum dump_format fmt, const char *why, unsigned parts,
                int with_duration, int advance)
{
	if (!b->ents)
		return -ENOENT;
	core_lock_tables();
	(void)ensure_cap(b); /* the ids interned since: a stack beyond the room counts whole */
	core_unlock_tables();
	struct view_ctx c = {b, parts, advance, 0, 0, 0, 0, 0, 0};
	struct dump_view view = {adjust, &c, with_duration ? b->time_ns : 0, finish};
	int64_t before = sys_now_ns();
	int rc = dump_fd_view(fd, fmt, why, &view);
	if (advance && rc != -ENOENT) {
		/* the snapshot was taken (the values above are the reading now) unless the dump
		   failed before it: then the next delta simply covers both windows */
		if (c.seen || rc == 0) {
			b->n = c.seen < b->cap ? c.seen : b->cap;
			b->time_ns = c.seen ? c.time_ns : before;
		}
	}
	return rc;
}
