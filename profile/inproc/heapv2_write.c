/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * heapv2_write.c - the jemalloc heap_v2 text writer of heapv2_write.h: header, records,
 * memory map and heaptap's metadata. Runs inside the host, so it formats with outbuf only
 * (no malloc, no stdio). It does not decide what is in the snapshot; dump.c does.
 */
#include "heapv2_write.h"

#include <string.h>

#include "unbias.h"

struct totals {
	double objs, nbytes, aobjs, abytes;
};

static int add_total(void *ctx, const struct dump_stack *st)
{
	struct totals *t = ctx;
	t->objs += st->live_objs;
	t->nbytes += st->live_bytes;
	t->aobjs += st->alloc_objs;
	t->abytes += st->alloc_bytes;
	return 0;
}

static void put_counts(struct outbuf *ob, uint64_t o, uint64_t b, uint64_t ao, uint64_t ab)
{
	outbuf_puts(ob, "  t*: ");
	outbuf_u64(ob, o);
	outbuf_puts(ob, ": ");
	outbuf_u64(ob, b);
	outbuf_puts(ob, " [");
	outbuf_u64(ob, ao);
	outbuf_puts(ob, ": ");
	outbuf_u64(ob, ab);
	outbuf_puts(ob, "]\n");
}

void heapv2_write_counts(struct outbuf *ob, uint64_t period, double objs, double nbytes,
                         double aobjs, double abytes)
{
	uint64_t o, b, ao, ab;
	unbias_precompensate(objs, nbytes, period, &o, &b);
	unbias_precompensate(aobjs, abytes, period, &ao, &ab);
	put_counts(ob, o, b, ao, ab);
}

struct rec_ctx {
	const struct dump_source *src;
	struct outbuf *ob;
};

static int write_record(void *ctx, const struct dump_stack *st)
{
	struct rec_ctx *rc = ctx;
	struct outbuf *ob = rc->ob;
	uint64_t period = rc->src->sample_period;
	uint64_t o, b, ao, ab;
	unbias_precompensate(st->live_objs, st->live_bytes, period, &o, &b);
	unbias_precompensate(st->alloc_objs, st->alloc_bytes, period, &ao, &ab);
	uint64_t xb = st->xfree_bytes > 0 ? (uint64_t)(st->xfree_bytes + 0.5) : 0;
	if (o == 0 && ao == 0 && xb == 0)
		return 0;
	outbuf_putc(ob, '@');
	if (st->depth == 0) {
		/* never a bare '@': jeprof would fold the counts into the previous stack */
		outbuf_puts(ob, " 0x0");
	}
	for (uint32_t i = 0; i < st->depth; i++) {
		uint64_t pc = st->pcs[i];
		if (i == 0 && pc > 0)
			pc -= 1;
		outbuf_puts(ob, " 0x");
		outbuf_hex(ob, pc);
	}
	outbuf_putc(ob, '\n');
	put_counts(ob, o, b, ao, ab);
	if (xb) {
		/* bytes of this stack freed by other threads than the allocating ones (cumulative,
		   unbiased): a line jeprof skips, heaptap's reader takes */
		outbuf_puts(ob, "  # heaptap: xfree ");
		outbuf_u64(ob, (uint64_t)(st->xfree_objs + 0.5));
		outbuf_puts(ob, ": ");
		outbuf_u64(ob, xb);
		outbuf_putc(ob, '\n');
	}
	return ob->err ? -ob->err : 0;
}

static void meta_key(struct outbuf *ob, const char *key)
{
	outbuf_puts(ob, "# heaptap: ");
	outbuf_puts(ob, key);
	outbuf_putc(ob, '=');
}

/* Writes s with newlines replaced by spaces, so one metadata line stays one line. */
static void put_line_safe(struct outbuf *ob, const char *s)
{
	for (; s && *s; s++)
		outbuf_putc(ob, *s == '\n' || *s == '\r' ? ' ' : *s);
}

static void write_meta(const struct dump_source *src, struct outbuf *ob)
{
	meta_key(ob, "version");
	outbuf_puts(ob, "0.1.0\n");
	meta_key(ob, "pid");
	outbuf_u64(ob, (uint64_t)src->pid);
	outbuf_putc(ob, '\n');
	meta_key(ob, "time_ns");
	outbuf_i64(ob, src->time_ns);
	outbuf_putc(ob, '\n');
	meta_key(ob, "start_time_ns");
	outbuf_i64(ob, src->start_time_ns);
	outbuf_putc(ob, '\n');
	meta_key(ob, "period");
	outbuf_u64(ob, src->sample_period);
	outbuf_putc(ob, '\n');
	/* what the stacks do not show (the CLI warns about it) */
	const struct dump_losses *l = &src->losses;
	const struct {
		const char *key;
		uint64_t v;
	} loss[] = {
		{"samples", l->samples},
		{"dropped_samples", l->dropped_samples},
		{"dropped_bytes", l->dropped_bytes},
		{"truncated_samples", l->truncated_samples},
		{"truncated_bytes", l->truncated_bytes},
		{"unwind_failed", l->unwind_failed},
		{"recycled_stacks", l->recycled_stacks},
		{"recycled_objs", l->recycled_objs},
		{"recycled_bytes", l->recycled_bytes},
	};
	for (size_t i = 0; i < sizeof loss / sizeof loss[0]; i++) {
		if (i >= 6 && l->recycled_stacks == 0)
			break; /* delta profiles' only */
		meta_key(ob, loss[i].key);
		outbuf_u64(ob, loss[i].v);
		outbuf_putc(ob, '\n');
	}
	meta_key(ob, "trigger");
	put_line_safe(ob, src->trigger ? src->trigger : "manual");
	outbuf_putc(ob, '\n');
	meta_key(ob, "exe");
	put_line_safe(ob, src->exe_path ? src->exe_path : "");
	outbuf_putc(ob, '\n');
	meta_key(ob, "cmdline");
	put_line_safe(ob, src->cmdline ? src->cmdline : "");
	outbuf_putc(ob, '\n');
	if (src->reason) {
		meta_key(ob, "reason");
		put_line_safe(ob, src->reason);
		outbuf_putc(ob, '\n');
	}
	if (src->memory.present) {
		/* jeprof reads these lines of the map section as map lines that match no pattern */
		meta_key(ob, "memory.allocator");
		put_line_safe(ob, src->memory.allocator ? src->memory.allocator : "");
		outbuf_putc(ob, '\n');
		for (int i = 0; i < MF_COUNT; i++) {
			outbuf_puts(ob, "# heaptap: memory.");
			outbuf_puts(ob, memfacts_name(i));
			outbuf_putc(ob, '=');
			outbuf_u64(ob, src->memory.v[i]);
			outbuf_putc(ob, '\n');
		}
	}
	for (size_t i = 0; i < src->nmappings; i++) {
		const struct dump_mapping *m = &src->mappings[i];
		outbuf_puts(ob, "# heaptap: mapping start=0x");
		outbuf_hex(ob, m->start);
		outbuf_puts(ob, " limit=0x");
		outbuf_hex(ob, m->limit);
		outbuf_puts(ob, " offset=0x");
		outbuf_hex(ob, m->offset);
		outbuf_puts(ob, " build_id=");
		if (m->build_id && m->build_id_len) {
			for (uint32_t k = 0; k < m->build_id_len; k++)
				outbuf_hex_pad(ob, m->build_id[k], 2);
		} else {
			outbuf_putc(ob, '-');
		}
		outbuf_puts(ob, " unloaded=");
		outbuf_putc(ob, m->unloaded ? '1' : '0');
		outbuf_puts(ob, " path=");
		put_line_safe(ob, m->path);
		outbuf_putc(ob, '\n');
	}
}

int heapv2_write(const struct dump_source *src, struct outbuf *ob)
{
	struct totals t;
	memset(&t, 0, sizeof t);
	src->for_each_stack(src, add_total, &t);

	outbuf_puts(ob, "heap_v2/");
	outbuf_u64(ob, src->sample_period);
	outbuf_putc(ob, '\n');
	heapv2_write_counts(ob, src->sample_period, t.objs, t.nbytes, t.aobjs, t.abytes);

	struct rec_ctx rc = {src, ob};
	src->for_each_stack(src, write_record, &rc);

	outbuf_puts(ob, "\nMAPPED_LIBRARIES:\n");
	if (src->maps_text && src->maps_len) {
		outbuf_put(ob, src->maps_text, src->maps_len);
		if (src->maps_text[src->maps_len - 1] != '\n')
			outbuf_putc(ob, '\n');
	}
	write_meta(src, ob);
	return ob->err ? -ob->err : 0;
}
