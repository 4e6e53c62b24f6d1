/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * legacy_write.c - the gperftools legacy heap text writer of legacy_write.h. Two walks over
 * the stacks: one to sum the header, one to print the records; then the maps text. Only
 * outbuf and libm: no malloc, no stdio, so it runs inside the host. Not a reader (the CLI's
 * legacy reader is elsewhere) and not the heap_v2 writer (heapv2_write.c).
 */
#include "legacy_write.h"

#include "unbias.h"

void legacy_write_precompensate(double objs, double bytes, uint64_t period,
                                uint64_t *out_objs, uint64_t *out_bytes)
{
	*out_objs = 0;
	*out_bytes = 0;
	if (!(objs > 0) || !(bytes > 0) || !(objs < 1e18) || !(bytes < 1e18))
		return;
	/* the same pre-image jemalloc prints in heap_v2: go's scaling is jeprof's formula */
	unbias_precompensate(objs, bytes, period, out_objs, out_bytes);
	/* Go's parser rejects a record with 0 objects but some bytes. */
	if (*out_objs == 0 && *out_bytes > 0)
		*out_objs = 1;
}

struct legacy_walk {
	const struct dump_source *src;
	struct outbuf *ob;
	uint64_t sum[4]; /* live objs, live bytes, alloc objs, alloc bytes */
};

static void record_values(const struct dump_source *src, const struct dump_stack *st, uint64_t v[4])
{
	legacy_write_precompensate(st->live_objs, st->live_bytes, src->sample_period, &v[0], &v[1]);
	if (src->accum)
		legacy_write_precompensate(st->alloc_objs, st->alloc_bytes, src->sample_period, &v[2], &v[3]);
	else
		v[2] = v[3] = 0;
}

static int sum_stack(void *ctx, const struct dump_stack *st)
{
	struct legacy_walk *w = ctx;
	uint64_t v[4];
	record_values(w->src, st, v);
	for (int i = 0; i < 4; i++)
		w->sum[i] += v[i];
	return 0;
}

/* gperftools' "%6d: %8d [%6d: %8d] @" shape. */
static void put_padded(struct outbuf *ob, uint64_t v, size_t width)
{
	char tmp[24];
	size_t n = fmt_u64(tmp, v);
	while (n < width--)
		outbuf_putc(ob, ' ');
	outbuf_put(ob, tmp, n);
}

static void put_counts(struct outbuf *ob, const uint64_t v[4])
{
	put_padded(ob, v[0], 6);
	outbuf_puts(ob, ": ");
	put_padded(ob, v[1], 8);
	outbuf_puts(ob, " [");
	put_padded(ob, v[2], 6);
	outbuf_puts(ob, ": ");
	put_padded(ob, v[3], 8);
	outbuf_puts(ob, "] @");
}

static int print_stack(void *ctx, const struct dump_stack *st)
{
	struct legacy_walk *w = ctx;
	uint64_t v[4];
	record_values(w->src, st, v);
	if (v[0] == 0 && v[1] == 0 && v[2] == 0 && v[3] == 0)
		return 0;
	put_counts(w->ob, v);
	/* Frame 0 as return address - 1, as in heap_v2: jeprof and heaptap adjust only the other
	   frames, Go pprof adjusts all (giving ret - 2, still inside the call instruction). */
	for (uint32_t i = 0; i < st->depth; i++) {
		uint64_t pc = st->pcs[i];
		if (i == 0 && pc > 0)
			pc -= 1;
		outbuf_puts(w->ob, " 0x");
		outbuf_hex(w->ob, pc);
	}
	outbuf_putc(w->ob, '\n');
	return w->ob->err != 0;
}

void legacy_write(const struct dump_source *src, struct outbuf *ob)
{
	struct legacy_walk w = { src, ob, { 0, 0, 0, 0 } };
	src->for_each_stack(src, sum_stack, &w);
	/* Go's parser shows the four sample types only when the header's alloc pair differs from
	   the inuse pair; Go's own runtime bumps the alloc bytes by one for that, so do we. */
	if (src->accum && w.sum[2] == w.sum[0] && w.sum[3] == w.sum[1] && (w.sum[2] || w.sum[3]))
		w.sum[3]++;
	outbuf_puts(ob, "heap profile: ");
	put_counts(ob, w.sum);
	outbuf_puts(ob, " heap_v2/");
	outbuf_u64(ob, src->sample_period);
	outbuf_putc(ob, '\n');
	src->for_each_stack(src, print_stack, &w);
	outbuf_puts(ob, "\nMAPPED_LIBRARIES:\n");
	if (src->maps_text && src->maps_len > 0) {
		outbuf_put(ob, src->maps_text, src->maps_len);
		if (src->maps_text[src->maps_len - 1] != '\n')
			outbuf_putc(ob, '\n');
	}
}
