/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cpu_pprof_write.c - the CPU pprof writer of cpu_pprof_write.h: the header (sample and period
 * types, strings, mappings, comments), then one walk over the stacks that emits each new
 * Location the first time its address is seen (an address -> id table in its own mmap,
 * doubled when half full) and one Sample per stack. No malloc, no stdio.
 */
#include "cpu_pprof_write.h"
#include "../../base/pages.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "../../base/deflate.h"
#include "../../base/outbuf.h"
#include "pbwrite.h"
#include "pprof_proto.h"


/* the fixed strings, then per mapping its path and build ID, then the comments */
enum { STR_EMPTY, STR_SAMPLES, STR_COUNT, STR_CPU, STR_NANOSECONDS, STR_FIXED };
static const char *const fixed_strings[STR_FIXED] = {"", "samples", "count", "cpu", "nanoseconds"};

#define PB_CAP (256u << 10)

/* ---- address -> location id ---- */

struct addr_ids {
	uint64_t *slot; /* pairs: address, id (0 = empty) */
	size_t cap, used, bytes;
};

static int ids_init(struct addr_ids *t, size_t cap)
{
	t->bytes = (size_t)pages_round_up(cap * 2 * sizeof(uint64_t));
	void *p = pages_map(t->bytes);
	if (!p)
		return -ENOMEM;
	t->slot = p;
	t->cap = cap;
	t->used = 0;
	return 0;
}

static uint64_t *ids_find(const struct addr_ids *t, uint64_t addr)
{
	size_t i = (size_t)((addr * 0x9e3779b97f4a7c15ull) >> 20) & (t->cap - 1);
	while (t->slot[2 * i + 1] && t->slot[2 * i] != addr)
		i = (i + 1) & (t->cap - 1);
	return &t->slot[2 * i];
}

/* Room for one more address: doubles the table when half full. */
static int ids_reserve(struct addr_ids *t)
{
	if ((t->used + 1) * 2 <= t->cap)
		return 0;
	struct addr_ids big;
	if (ids_init(&big, t->cap * 2) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < t->cap; i++) {
		if (t->slot[2 * i + 1]) {
			uint64_t *e = ids_find(&big, t->slot[2 * i]);
			e[0] = t->slot[2 * i];
			e[1] = t->slot[2 * i + 1];
		}
	}
	big.used = t->used;
	munmap(t->slot, t->bytes);
	*t = big;
	return 0;
}

/* ---- the walk ---- */

struct walk {
	const struct cpu_source *src;
	struct pbwrite *pb;
	struct addr_ids ids;
	uint64_t next_id;
	uint64_t idbuf[288];
	int err;
};

static int fd_sink(void *ctx, const uint8_t *p, size_t n)
{
	return write_all(*(int *)ctx, p, n);
}

/* gzip on the way out: the profile's bytes go through deflate (base/deflate.c, no zlib in the
   host), the compressed ones to the descriptor; go tool pprof and every backend read both. */
struct gz {
	struct deflate d;
	int fd;
};

static int gz_out(void *ctx, const uint8_t *p, size_t n)
{
	return fd_sink(&((struct gz *)ctx)->fd, p, n);
}

static int gz_in(void *ctx, const uint8_t *p, size_t n)
{
	return deflate_write(&((struct gz *)ctx)->d, p, n);
}

static uint64_t location_id(struct walk *w, uint64_t addr)
{
	int rc = ids_reserve(&w->ids);
	if (rc < 0) {
		w->err = rc;
		return 0;
	}
	uint64_t *e = ids_find(&w->ids, addr);
	if (e[1])
		return e[1];
	e[0] = addr;
	e[1] = w->next_id++;
	w->ids.used++;
	pprof_proto_location(w->pb, e[1], addr, w->src->mappings, w->src->nmappings);
	return e[1];
}

static int write_sample(void *ctx, const struct cpu_stack *st)
{
	struct walk *w = ctx;
	uint32_t depth = st->depth;
	if (depth > sizeof w->idbuf / sizeof w->idbuf[0])
		depth = sizeof w->idbuf / sizeof w->idbuf[0];
	for (uint32_t i = 0; i < depth; i++) {
		/* the leaf is the interrupted instruction; callers' return addresses point past
		   their call */
		w->idbuf[i] = location_id(w, (uint64_t)st->pcs[i] - (i ? 1 : 0));
		if (w->err)
			return 1;
	}
	size_t s = pbwrite_begin(w->pb, P_SAMPLE);
	size_t l = pbwrite_begin(w->pb, S_LOCATION_ID);
	for (uint32_t i = 0; i < depth; i++)
		pbwrite_raw_varint(w->pb, w->idbuf[i]);
	pbwrite_end(w->pb, l);
	size_t v = pbwrite_begin(w->pb, S_VALUE);
	pbwrite_raw_varint(w->pb, st->ticks);
	pbwrite_raw_varint(w->pb, st->ticks * w->src->period_ns);
	pbwrite_end(w->pb, v);
	pbwrite_end(w->pb, s);
	if (w->pb->err) {
		w->err = w->pb->err;
		return 1;
	}
	return 0;
}

static void value_type(struct pbwrite *pb, uint32_t field, uint64_t type, uint64_t unit)
{
	size_t m = pbwrite_begin(pb, field);
	pbwrite_varint(pb, VT_TYPE, type);
	pbwrite_varint(pb, VT_UNIT, unit);
	pbwrite_end(pb, m);
}

/* One "heaptap: key=value" comment string. */
static void comment(struct pbwrite *pb, const char *key, const char *text, uint64_t num)
{
	char buf[600];
	struct outbuf ob;
	outbuf_init(&ob, buf, sizeof buf, -1);
	outbuf_puts(&ob, "heaptap: ");
	outbuf_puts(&ob, key);
	outbuf_putc(&ob, '=');
	if (text)
		outbuf_put(&ob, text, strnlen(text, 500));
	else
		outbuf_u64(&ob, num);
	pbwrite_bytes(pb, P_STRING, buf, ob.len);
}

/* Writes the comment strings and returns how many. */
static uint64_t comments(struct pbwrite *pb, const struct cpu_source *src)
{
	const struct cpu_losses *l = &src->losses;
	struct {
		const char *key;
		uint64_t v;
	} nums[] = {
		{"pid", (uint64_t)(src->pid > 0 ? src->pid : 0)}, {"hz", src->hz},
		{"cpu_samples", l->signals}, {"overruns", l->overruns},
		{"lost_buffer_full", l->lost_full}, {"lost_in_heaptap", l->lost_inside},
		{"lost_table", l->lost_table}, {"unwind_fp_fallback", l->unwind_fp},
		{"truncated", l->truncated}, {"threads", l->threads},
		{"threads_failed", l->threads_failed},
	};
	comment(pb, "profile", "cpu", 0);
	comment(pb, "timer", src->timer, 0);
	comment(pb, "cmdline", src->cmdline ? src->cmdline : "", 0);
	comment(pb, "exe", src->exe_path ? src->exe_path : "", 0);
	for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++)
		comment(pb, nums[i].key, NULL, nums[i].v);
	return 4 + sizeof nums / sizeof nums[0];
}

static void write_header(struct pbwrite *pb, const struct cpu_source *src)
{
	value_type(pb, P_SAMPLE_TYPE, STR_SAMPLES, STR_COUNT);
	value_type(pb, P_SAMPLE_TYPE, STR_CPU, STR_NANOSECONDS);
	for (size_t i = 0; i < STR_FIXED; i++)
		pbwrite_string(pb, P_STRING, fixed_strings[i]);
	pprof_proto_mapping_strings(pb, src->mappings, src->nmappings);
	uint64_t first_comment = STR_FIXED + 2 * src->nmappings;
	uint64_t ncomments = comments(pb, src);
	pprof_proto_mappings(pb, src->mappings, src->nmappings, STR_FIXED);
	if (src->start_ns > 0)
		pbwrite_int64(pb, P_TIME_NANOS, src->start_ns);
	if (src->duration_ns > 0)
		pbwrite_int64(pb, P_DURATION_NANOS, src->duration_ns);
	value_type(pb, P_PERIOD_TYPE, STR_CPU, STR_NANOSECONDS);
	pbwrite_int64(pb, P_PERIOD, (int64_t)src->period_ns);
	size_t c = pbwrite_begin(pb, P_COMMENT);
	for (uint64_t i = 0; i < ncomments; i++)
		pbwrite_raw_varint(pb, first_comment + i);
	pbwrite_end(pb, c);
}

int cpu_pprof_write(const struct cpu_source *src, int fd)
{
	struct walk *w = mmap(NULL, sizeof *w + PB_CAP, PROT_READ | PROT_WRITE,
	                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (w == MAP_FAILED)
		return -ENOMEM;
	memset(w, 0, sizeof *w);
	w->src = src;
	w->next_id = 1;
	struct gz *gz = mmap(NULL, sizeof *gz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (gz == MAP_FAILED) {
		munmap(w, sizeof *w + PB_CAP);
		return -ENOMEM;
	}
	gz->fd = fd;
	deflate_init(&gz->d, gz_out, gz);
	int rc = ids_init(&w->ids, 4096);
	if (rc == 0) {
		struct pbwrite pb;
		pbwrite_init(&pb, (uint8_t *)(w + 1), PB_CAP, gz_in, gz);
		w->pb = &pb;
		write_header(&pb, src);
		if (!pb.err)
			src->for_each_stack(src, write_sample, w);
		rc = w->err ? w->err : pbwrite_finish(&pb);
		if (rc == 0)
			rc = deflate_finish(&gz->d);
		munmap(w->ids.slot, w->ids.bytes);
	}
	munmap(gz, sizeof *gz);
	munmap(w, sizeof *w + PB_CAP);
	return rc;
}
