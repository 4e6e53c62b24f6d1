/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pprof_write.c - the in-process pprof writer of pprof_write.h: one walk over the sampled
 * stacks that streams Location and Sample messages through pbwrite into base/deflate.c's gzip
 * compressor and out to a file descriptor. Locations are deduplicated by address in an open-addressing
 * hash table that lives in its own mmap and doubles when half full.
 *
 * It is not a general profile.proto writer (the CLI's pprof_export.c writes symbolized
 * profiles from the analyzer's model) and it never symbolizes. No malloc, no stdio: scratch
 * memory is mmap'd, the compressor's state included.
 */
#include "pprof_write.h"
#include "../../base/pages.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "../../base/deflate.h"
#include "../../base/outbuf.h"
#include "pbwrite.h"
#include "pprof_proto.h"

/* Fixed string table prefix; indexes below must match the order of fixed_strings. */
enum {
	STR_EMPTY, STR_ALLOC_OBJECTS, STR_COUNT, STR_ALLOC_SPACE, STR_BYTES, STR_INUSE_OBJECTS,
	STR_INUSE_SPACE, STR_SPACE, STR_COMMENT_PID, STR_COMMENT_CMDLINE, STR_COMMENT_TRIGGER,
	STR_COMMENT_EXE, STR_FIRST_MAPPING
};
/* comments of dump_losses, after the mappings' strings, in this order */
#define LOSS_COMMENTS 6
static const char *const loss_keys[LOSS_COMMENTS] = {
	"heaptap: samples=", "heaptap: dropped_samples=", "heaptap: dropped_bytes=",
	"heaptap: truncated_samples=", "heaptap: truncated_bytes=", "heaptap: unwind_failed=",
};
static const char *const fixed_strings[] = {
	"", "alloc_objects", "count", "alloc_space", "bytes", "inuse_objects", "inuse_space", "space",
};

#define PB_MIN_SIZE (256u << 10)

static int mmap_fail_countdown;

void pprof_write_fail_mmap_after(int n)
{
	mmap_fail_countdown = n;
}

static void *scratch_map(size_t n)
{
	if (mmap_fail_countdown > 0 && --mmap_fail_countdown == 0)
		return NULL;
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static size_t page_round(size_t n)
{
	return (size_t)pages_round_up(n);
}

/* ---- the gzip stream (base/deflate.c) into the file descriptor ---- */

static int fd_sink(void *ctx, const uint8_t *p, size_t n)
{
	return write_all(*(const int *)ctx, p, n);
}

static int gz_write(void *ctx, const uint8_t *p, size_t n)
{
	return deflate_write(ctx, p, n);
}

/* ---- location table: address -> location id ---- */

struct loc_entry {
	uint64_t addr;
	uint64_t id; /* 0 = empty slot */
};

struct loctab {
	struct loc_entry *slots;
	size_t cap; /* power of two */
	size_t count;
	size_t bytes; /* size of the mapping */
};

static size_t loc_hash(uint64_t addr, size_t cap)
{
	return (size_t)((addr * 0x9e3779b97f4a7c15ull) >> 17) & (cap - 1);
}

static int loctab_init(struct loctab *t, size_t cap)
{
	t->bytes = page_round(cap * sizeof(struct loc_entry));
	t->slots = scratch_map(t->bytes);
	if (!t->slots)
		return -ENOMEM;
	t->cap = cap;
	t->count = 0;
	return 0;
}

static void loctab_release(struct loctab *t)
{
	if (t->slots)
		munmap(t->slots, t->bytes);
	t->slots = NULL;
}

static struct loc_entry *loctab_slot(const struct loctab *t, uint64_t addr)
{
	size_t i = loc_hash(addr, t->cap);
	while (t->slots[i].id != 0 && t->slots[i].addr != addr)
		i = (i + 1) & (t->cap - 1);
	return &t->slots[i];
}

static int loctab_grow(struct loctab *t)
{
	struct loctab bigger;
	int rc = loctab_init(&bigger, t->cap * 2);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < t->cap; i++) {
		if (t->slots[i].id != 0) {
			*loctab_slot(&bigger, t->slots[i].addr) = t->slots[i];
			bigger.count++;
		}
	}
	loctab_release(t);
	*t = bigger;
	return 0;
}

/* ---- the walk ---- */

struct walk {
	const struct dump_source *src;
	struct pbwrite *pb;
	struct loctab locs;
	uint64_t *ids;        /* max_depth location ids of the stack being written */
	uint64_t next_id;
	int err;
	/* pre-pass results */
	size_t nstacks, nframes;
	uint32_t max_depth;
	uint64_t xfree_key;   /* the string index of "bytes_freed_by_other_threads" (written after
	                         the samples, when used) */
	int xfree_used;       /* a sample carries it */
};

/* A sample whose objects were freed by other threads than the ones that allocated them carries
   the numeric label bytes_freed_by_other_threads (unbiased, cumulative; unit bytes): why
   glibc's arenas may keep memory after a producer/consumer hand-off. */

static int count_stack(void *ctx, const struct dump_stack *st)
{
	struct walk *w = ctx;
	w->nstacks++;
	w->nframes += st->depth;
	if (st->depth > w->max_depth)
		w->max_depth = st->depth;
	return 0;
}

static int64_t to_i64(double d)
{
	if (!(d > -9.2e18 && d < 9.2e18))
		return d > 0 ? INT64_MAX : 0; /* +inf clamps; NaN and -inf become 0 */
	return (int64_t)d;
}

/* Returns the location id of the frame address, emitting a new Location when first seen. */
static uint64_t location_of(struct walk *w, uint64_t addr)
{
	if ((w->locs.count + 1) * 2 > w->locs.cap) {
		int rc = loctab_grow(&w->locs);
		if (rc < 0) {
			w->err = rc;
			return 0;
		}
	}
	struct loc_entry *e = loctab_slot(&w->locs, addr);
	if (e->id != 0)
		return e->id;
	e->addr = addr;
	e->id = w->next_id++;
	w->locs.count++;

	pprof_proto_location(w->pb, e->id, addr, w->src->mappings, w->src->nmappings);
	return e->id;
}

static int write_stack(void *ctx, const struct dump_stack *st)
{
	struct walk *w = ctx;
	struct pbwrite *pb = w->pb;
	/* pcs are return addresses: every frame is looked up at pc - 1 (inside the call). */
	if (st->depth > w->max_depth) {
		w->err = -EINVAL; /* the snapshot changed between the two walks */
		return 1;
	}
	for (uint32_t i = 0; i < st->depth; i++) {
		w->ids[i] = location_of(w, (uint64_t)st->pcs[i] - 1);
		if (w->err)
			return 1;
	}
	size_t s = pbwrite_begin(pb, P_SAMPLE);
	size_t ids = pbwrite_begin(pb, S_LOCATION_ID);
	for (uint32_t i = 0; i < st->depth; i++)
		pbwrite_raw_varint(pb, w->ids[i]);
	pbwrite_end(pb, ids);
	size_t vals = pbwrite_begin(pb, S_VALUE);
	pbwrite_raw_varint(pb, (uint64_t)to_i64(st->alloc_objs));
	pbwrite_raw_varint(pb, (uint64_t)to_i64(st->alloc_bytes));
	pbwrite_raw_varint(pb, (uint64_t)to_i64(st->live_objs));
	pbwrite_raw_varint(pb, (uint64_t)to_i64(st->live_bytes));
	pbwrite_end(pb, vals);
	/* numeric label "bytes": the average object size, as Go writes it */
	double objs = st->alloc_objs, bytes = st->alloc_bytes;
	if (!(objs > 0)) {
		objs = st->live_objs;
		bytes = st->live_bytes;
	}
	if (objs > 0) {
		size_t l = pbwrite_begin(pb, S_LABEL);
		pbwrite_varint(pb, L_KEY, STR_BYTES);
		pbwrite_int64(pb, L_NUM, to_i64(bytes / objs));
		pbwrite_end(pb, l);
	}
	if (st->xfree_bytes > 0) {
		size_t l = pbwrite_begin(pb, S_LABEL);
		pbwrite_varint(pb, L_KEY, w->xfree_key);
		pbwrite_int64(pb, L_NUM, to_i64(st->xfree_bytes));
		pbwrite_varint(pb, L_NUM_UNIT, STR_BYTES);
		pbwrite_end(pb, l);
		w->xfree_used = 1;
	}
	pbwrite_end(pb, s);
	if (pb->err) {
		w->err = pb->err;
		return 1;
	}
	return 0;
}

static void write_value_type(struct pbwrite *pb, uint32_t field, uint64_t type, uint64_t unit)
{
	size_t m = pbwrite_begin(pb, field);
	pbwrite_varint(pb, VT_TYPE, type);
	pbwrite_varint(pb, VT_UNIT, unit);
	pbwrite_end(pb, m);
}

/* A string table entry made of two parts (a "heaptap: key=" prefix and a value). */
static void write_string2(struct pbwrite *pb, const char *a, const char *b)
{
	if (!b)
		b = "";
	size_t na = strlen(a), nb = strlen(b);
	pbwrite_tag_len(pb, P_STRING, na + nb);
	pbwrite_raw(pb, a, na);
	pbwrite_raw(pb, b, nb);
}

static void write_strings(struct pbwrite *pb, const struct dump_source *src)
{
	for (size_t i = 0; i < sizeof fixed_strings / sizeof fixed_strings[0]; i++)
		pbwrite_string(pb, P_STRING, fixed_strings[i]);
	char num[24];
	fmt_u64(num, (uint64_t)(src->pid > 0 ? src->pid : 0));
	write_string2(pb, "heaptap: pid=", num);
	write_string2(pb, "heaptap: cmdline=", src->cmdline);
	write_string2(pb, "heaptap: trigger=", src->trigger);
	write_string2(pb, "heaptap: exe=", src->exe_path);
	pprof_proto_mapping_strings(pb, src->mappings, src->nmappings);
	/* what the stacks do not show, after the mappings' strings (comments, read back by
	   heaptap's reader; the CLI warns about them) */
	const struct dump_losses *l = &src->losses;
	const uint64_t loss[LOSS_COMMENTS] = {l->samples, l->dropped_samples, l->dropped_bytes,
	                                      l->truncated_samples, l->truncated_bytes,
	                                      l->unwind_failed};
	for (size_t i = 0; i < LOSS_COMMENTS; i++) {
		fmt_u64(num, loss[i]);
		write_string2(pb, loss_keys[i], num);
	}
	if (l->recycled_stacks) { /* delta profiles' only: extra_comments counts them */
		fmt_u64(num, l->recycled_stacks);
		write_string2(pb, "heaptap: recycled_stacks=", num);
		fmt_u64(num, l->recycled_objs);
		write_string2(pb, "heaptap: recycled_objs=", num);
		fmt_u64(num, l->recycled_bytes);
		write_string2(pb, "heaptap: recycled_bytes=", num);
	}
	/* after the mappings' strings: the reason and the memory figures, as comments */
	if (src->reason)
		write_string2(pb, "heaptap: reason=", src->reason);
	if (src->memory.present) {
		write_string2(pb, "heaptap: memory.allocator=", src->memory.allocator);
		for (int i = 0; i < MF_COUNT; i++) {
			char key[64];
			struct outbuf kb;
			outbuf_init(&kb, key, sizeof key - 1, -1);
			outbuf_puts(&kb, "heaptap: memory.");
			outbuf_puts(&kb, memfacts_name(i));
			outbuf_putc(&kb, '=');
			key[kb.len] = 0;
			fmt_u64(num, src->memory.v[i]);
			write_string2(pb, key, num);
		}
	}
}

/* The number of comment strings write_strings puts after the mappings' ones. */
static size_t extra_comments(const struct dump_source *src)
{
	return (src->reason ? 1 : 0) + (src->memory.present ? 1 + MF_COUNT : 0) +
	       (src->losses.recycled_stacks ? 3 : 0);
}

static void write_header(struct pbwrite *pb, const struct dump_source *src)
{
	write_value_type(pb, P_SAMPLE_TYPE, STR_ALLOC_OBJECTS, STR_COUNT);
	write_value_type(pb, P_SAMPLE_TYPE, STR_ALLOC_SPACE, STR_BYTES);
	write_value_type(pb, P_SAMPLE_TYPE, STR_INUSE_OBJECTS, STR_COUNT);
	write_value_type(pb, P_SAMPLE_TYPE, STR_INUSE_SPACE, STR_BYTES);
	write_strings(pb, src);
	pprof_proto_mappings(pb, src->mappings, src->nmappings, STR_FIRST_MAPPING);
	if (src->time_ns > 0)
		pbwrite_int64(pb, P_TIME_NANOS, src->time_ns);
	if (src->time_ns > 0 && src->start_time_ns > 0 && src->time_ns > src->start_time_ns)
		pbwrite_int64(pb, P_DURATION_NANOS, src->time_ns - src->start_time_ns);
	write_value_type(pb, P_PERIOD_TYPE, STR_SPACE, STR_BYTES);
	pbwrite_int64(pb, P_PERIOD, (int64_t)src->sample_period);
	size_t c = pbwrite_begin(pb, P_COMMENT);
	pbwrite_raw_varint(pb, STR_COMMENT_PID);
	pbwrite_raw_varint(pb, STR_COMMENT_CMDLINE);
	pbwrite_raw_varint(pb, STR_COMMENT_TRIGGER);
	pbwrite_raw_varint(pb, STR_COMMENT_EXE);
	for (size_t i = 0, n = LOSS_COMMENTS + extra_comments(src); i < n; i++)
		pbwrite_raw_varint(pb, STR_FIRST_MAPPING + 2 * src->nmappings + i);
	pbwrite_end(pb, c);
}

int pprof_write(const struct dump_source *src, int fd)
{
	struct walk w;
	memset(&w, 0, sizeof w);
	w.src = src;
	w.next_id = 1;
	src->for_each_stack(src, count_stack, &w);

	/* One sample holds depth location ids and four values (at most 10 bytes each) plus a
	   little framing; the buffer must hold two of the largest so streaming can keep going. */
	size_t pbcap = (size_t)w.max_depth * 10 * 2 + 4096;
	if (pbcap < PB_MIN_SIZE)
		pbcap = PB_MIN_SIZE;
	pbcap = page_round(pbcap);
	size_t idsize = page_round(((size_t)w.max_depth + 1) * sizeof(uint64_t));
	size_t zsize = page_round(sizeof(struct deflate));
	size_t total = pbcap + zsize + idsize;
	uint8_t *scratch = scratch_map(total);
	if (!scratch)
		return -ENOMEM;
	w.ids = (uint64_t *)(void *)(scratch + pbcap + zsize);

	size_t want = 1024;
	while (want < 2 * w.nframes && want < (1u << 16))
		want <<= 1;
	int rc = loctab_init(&w.locs, want);
	if (rc < 0) {
		munmap(scratch, total);
		return rc;
	}

	struct deflate *gz = (struct deflate *)(void *)(scratch + pbcap);
	deflate_init(gz, fd_sink, &fd);

	struct pbwrite pb;
	pbwrite_init(&pb, scratch, pbcap, gz_write, gz);
	w.pb = &pb;
	write_header(&pb, src);
	w.xfree_key = STR_FIRST_MAPPING + 2 * src->nmappings + LOSS_COMMENTS + extra_comments(src);
	if (!pb.err)
		src->for_each_stack(src, write_stack, &w);
	/* the label's key, appended to the string table only when a sample uses it (string
	   indexes count field 6 in order of appearance, wherever it appears) */
	if (!pb.err && !w.err && w.xfree_used)
		pbwrite_string(&pb, P_STRING, "bytes_freed_by_other_threads");
	rc = w.err ? w.err : pbwrite_finish(&pb);
	if (rc == 0)
		rc = deflate_finish(gz);
	loctab_release(&w.locs);
	munmap(scratch, total);
	return rc;
}
