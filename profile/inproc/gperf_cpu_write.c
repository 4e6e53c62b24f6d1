/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * gperf_cpu_write.c - the gperftools binary CPU profile writer of gperf_cpu_write.h: words
 * through an outbuf to the descriptor. A stack's count is its ticks (a record's count is a
 * native word: no limit that matters). Not a reader; no malloc.
 */
#include "gperf_cpu_write.h"

#include <string.h>

#include "../../base/outbuf.h"

static void word(struct outbuf *ob, uint64_t v)
{
	outbuf_put(ob, &v, sizeof v); /* native order, as gperftools writes it */
}

static int write_record(void *ctx, const struct cpu_stack *st)
{
	struct outbuf *ob = ctx;
	word(ob, st->ticks);
	word(ob, st->depth);
	for (uint32_t i = 0; i < st->depth; i++)
		word(ob, st->pcs[i]);
	return ob->err;
}

int gperf_cpu_write(const struct cpu_source *src, int fd)
{
	char buf[16384];
	struct outbuf ob;
	outbuf_init(&ob, buf, sizeof buf, fd);
	uint64_t period_us = src->period_ns / 1000;
	word(&ob, 0);
	word(&ob, 3);
	word(&ob, 0);
	word(&ob, period_us ? period_us : 1);
	word(&ob, 0);
	src->for_each_stack(src, write_record, &ob);
	word(&ob, 0);
	word(&ob, 1);
	word(&ob, 0);
	outbuf_put(&ob, src->maps_text, src->maps_len);
	return outbuf_flush(&ob);
}
