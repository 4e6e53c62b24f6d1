/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pprof_read.c - the profile.proto reader of pprof_read.h: gunzip through zlib's inflate,
 * one pass over the top-level fields that records where each submessage lies, then the
 * tables (strings, functions, mappings, locations) are decoded and indexed by id, and each
 * sample is turned into a model sample. Every read is bounds-checked; nothing trusts a
 * length or an index from the input.
 *
 * Not a writer (pbwrite.c, pprof_write.c, pprof_export.c) and not a protobuf library: the
 * field numbers of profile.proto are wired in. CLI only; allocates.
 */
#include "pprof_read.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "../base/bisect.h"
#include "arena.h"
#include "symtab.h"

#define MAX_INFLATED ((size_t)1 << 30)

/* A length-delimited or varint field as found in the input. */
struct pbfield {
	uint32_t num;
	unsigned wt;
	uint64_t v;        /* varint, fixed64 or fixed32 value */
	size_t off;        /* offset of the key */
	size_t data, len;  /* payload of a wire type 2 field */
};

struct span {
	size_t off, len;
};

struct rfunc {
	uint64_t id;
	uint64_t name, system_name, filename;
	size_t off;
};

struct rmap {
	uint64_t id;
	uint64_t start, limit, offset, filename, build_id;
	size_t off;
	size_t model_index;
};

struct rline {
	uint64_t function_id;
	int64_t line;
	size_t off;
};

struct rloc {
	uint64_t id;
	uint64_t mapping_id;
	uint64_t address;
	size_t first_line, nlines; /* into reader.lines */
	size_t off;
	uint64_t lookup;           /* the address used in the model */
};

struct reader {
	const uint8_t *d;
	size_t n;
	char *err;
	size_t errcap;
	int failed;

	struct span *strings; size_t nstrings, strings_cap;
	char **str;           /* NUL-terminated copies */
	struct span *samples; size_t nsamples, samples_cap;
	struct span *locspans; size_t nlocspans, locspans_cap;
	struct rfunc *funcs; size_t nfuncs, funcs_cap;
	struct rmap *maps; size_t nmaps, maps_cap;
	struct rloc *locs; size_t nlocs;
	struct rline *lines; size_t nlines, lines_cap;
	struct { uint64_t type, unit; size_t off; } *types;
	size_t ntypes, types_cap;
	uint64_t *comments; size_t ncomments, comments_cap;
	size_t comments_off;
	int64_t time_nanos, period;
};

static int fail(struct reader *r, size_t off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct reader *r, size_t off, const char *fmt, ...)
{
	if (r->failed)
		return -1;
	r->failed = 1;
	if (r->errcap == 0)
		return -1;
	int k = snprintf(r->err, r->errcap, "byte offset %zu: ", off);
	if (k < 0)
		k = 0;
	if ((size_t)k < r->errcap) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(r->err + k, r->errcap - (size_t)k, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* Grows *arr (element size sz) so that it holds at least need elements. */
static void *grow(void *arr, size_t *cap, size_t need, size_t sz)
{
	if (need <= *cap)
		return arr;
	size_t c = *cap ? *cap * 2 : 16;
	while (c < need)
		c *= 2;
	void *p = arena_xrealloc(arr, c * sz);
	*cap = c;
	return p;
}

#define PUSH(arr, count, cap) \
	((arr) = grow((arr), &(cap), (count) + 1, sizeof *(arr)), &(arr)[(count)++])

/* ---- wire level ---- */

static int get_varint(struct reader *r, size_t *pos, size_t end, uint64_t *out)
{
	uint64_t v = 0;
	size_t start = *pos;
	for (unsigned i = 0; i < 10; i++) {
		if (*pos >= end)
			return fail(r, start, "truncated varint");
		uint8_t b = r->d[(*pos)++];
		if (i == 9 && b > 1)
			return fail(r, start, "varint longer than 64 bits");
		v |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80)) {
			*out = v;
			return 0;
		}
	}
	return fail(r, start, "varint longer than 10 bytes");
}

/* Reads the next field of the message ending at end. Returns 1 with f filled, 0 at end. */
static int next_field(struct reader *r, size_t *pos, size_t end, struct pbfield *f)
{
	if (r->failed || *pos >= end)
		return 0;
	f->off = *pos;
	uint64_t key;
	if (get_varint(r, pos, end, &key) < 0)
		return 0;
	f->num = (uint32_t)(key >> 3);
	f->wt = (unsigned)(key & 7);
	if ((key >> 3) == 0 || (key >> 3) > 0x1fffffff)
		return fail(r, f->off, "invalid field number %llu", (unsigned long long)(key >> 3)), 0;
	f->v = 0;
	f->data = f->len = 0;
	switch (f->wt) {
	case 0:
		if (get_varint(r, pos, end, &f->v) < 0)
			return 0;
		break;
	case 1:
		if (end - *pos < 8)
			return fail(r, f->off, "truncated fixed64 field %u", f->num), 0;
		for (int i = 7; i >= 0; i--)
			f->v = (f->v << 8) | r->d[*pos + (size_t)i];
		*pos += 8;
		break;
	case 2: {
		uint64_t len;
		if (get_varint(r, pos, end, &len) < 0)
			return 0;
		if (len > end - *pos)
			return fail(r, f->off, "field %u: length %llu exceeds the %zu bytes left", f->num,
			            (unsigned long long)len, end - *pos), 0;
		f->data = *pos;
		f->len = (size_t)len;
		*pos += (size_t)len;
		break;
	}
	case 5:
		if (end - *pos < 4)
			return fail(r, f->off, "truncated fixed32 field %u", f->num), 0;
		for (int i = 3; i >= 0; i--)
			f->v = (f->v << 8) | r->d[*pos + (size_t)i];
		*pos += 4;
		break;
	default:
		return fail(r, f->off, "field %u: unsupported wire type %u", f->num, f->wt), 0;
	}
	return 1;
}

static int want_wt(struct reader *r, const struct pbfield *f, unsigned wt)
{
	if (f->wt != wt)
		return fail(r, f->off, "field %u: wire type %u, expected %u", f->num, f->wt, wt);
	return 0;
}

/* Calls fn for each element of a repeated varint field, packed (wire type 2) or not. */
static int each_varint(struct reader *r, const struct pbfield *f,
                       int (*fn)(struct reader *r, void *ctx, uint64_t v, size_t off), void *ctx)
{
	if (f->wt == 0)
		return fn(r, ctx, f->v, f->off);
	if (f->wt != 2)
		return fail(r, f->off, "field %u: wire type %u, expected 0 or 2", f->num, f->wt);
	size_t pos = f->data, end = f->data + f->len;
	while (pos < end) {
		size_t at = pos;
		uint64_t v;
		if (get_varint(r, &pos, end, &v) < 0)
			return -1;
		if (fn(r, ctx, v, at) < 0)
			return -1;
	}
	return 0;
}

/* ---- top level ---- */

static int push_comment(struct reader *r, void *ctx, uint64_t v, size_t off)
{
	(void)ctx;
	(void)off;
	*PUSH(r->comments, r->ncomments, r->comments_cap) = v;
	return 0;
}

static int scan_value_type(struct reader *r, const struct pbfield *f, uint64_t *type, uint64_t *unit)
{
	struct pbfield g;
	size_t pos = f->data, end = f->data + f->len;
	*type = *unit = 0;
	while (next_field(r, &pos, end, &g)) {
		if (g.num == 1 || g.num == 2) {
			if (want_wt(r, &g, 0) < 0)
				return -1;
			*(g.num == 1 ? type : unit) = g.v;
		}
	}
	return r->failed ? -1 : 0;
}

static int scan_function(struct reader *r, const struct pbfield *f)
{
	struct rfunc *fn = PUSH(r->funcs, r->nfuncs, r->funcs_cap);
	memset(fn, 0, sizeof *fn);
	fn->off = f->off;
	struct pbfield g;
	size_t pos = f->data, end = f->data + f->len;
	while (next_field(r, &pos, end, &g)) {
		if (g.num >= 1 && g.num <= 5 && want_wt(r, &g, 0) < 0)
			return -1;
		switch (g.num) {
		case 1: fn->id = g.v; break;
		case 2: fn->name = g.v; break;
		case 3: fn->system_name = g.v; break;
		case 4: fn->filename = g.v; break;
		default: break;
		}
	}
	if (!r->failed && fn->id == 0)
		return fail(r, f->off, "function with id 0");
	return r->failed ? -1 : 0;
}

static int scan_mapping(struct reader *r, const struct pbfield *f)
{
	struct rmap *m = PUSH(r->maps, r->nmaps, r->maps_cap);
	memset(m, 0, sizeof *m);
	m->off = f->off;
	struct pbfield g;
	size_t pos = f->data, end = f->data + f->len;
	while (next_field(r, &pos, end, &g)) {
		if (g.num >= 1 && g.num <= 10 && want_wt(r, &g, 0) < 0)
			return -1;
		switch (g.num) {
		case 1: m->id = g.v; break;
		case 2: m->start = g.v; break;
		case 3: m->limit = g.v; break;
		case 4: m->offset = g.v; break;
		case 5: m->filename = g.v; break;
		case 6: m->build_id = g.v; break;
		default: break;
		}
	}
	if (!r->failed && m->id == 0)
		return fail(r, f->off, "mapping with id 0");
	return r->failed ? -1 : 0;
}

static int scan_top(struct reader *r, size_t end)
{
	struct pbfield f;
	size_t pos = 0;
	while (next_field(r, &pos, end, &f)) {
		switch (f.num) {
		case 1: { /* sample_type */
			if (want_wt(r, &f, 2) < 0)
				return -1;
			r->types = grow(r->types, &r->types_cap, r->ntypes + 1, sizeof *r->types);
			if (scan_value_type(r, &f, &r->types[r->ntypes].type, &r->types[r->ntypes].unit) < 0)
				return -1;
			r->types[r->ntypes++].off = f.off;
			break;
		}
		case 2:
		case 4:
		case 6:
			if (want_wt(r, &f, 2) < 0)
				return -1;
			if (f.num == 2)
				*PUSH(r->samples, r->nsamples, r->samples_cap) = (struct span){ f.off, f.len };
			else if (f.num == 4)
				*PUSH(r->locspans, r->nlocspans, r->locspans_cap) = (struct span){ f.off, f.len };
			else
				*PUSH(r->strings, r->nstrings, r->strings_cap) = (struct span){ f.data, f.len };
			break;
		case 3:
			if (want_wt(r, &f, 2) < 0 || scan_mapping(r, &f) < 0)
				return -1;
			break;
		case 5:
			if (want_wt(r, &f, 2) < 0 || scan_function(r, &f) < 0)
				return -1;
			break;
		case 9:
		case 12:
			if (want_wt(r, &f, 0) < 0)
				return -1;
			if (f.num == 9)
				r->time_nanos = (int64_t)f.v;
			else
				r->period = (int64_t)f.v;
			break;
		case 13:
			if (!r->comments_off)
				r->comments_off = f.off;
			if (each_varint(r, &f, push_comment, NULL) < 0)
				return -1;
			break;
		case 7: case 8: case 10: case 14: case 15:
			if (want_wt(r, &f, 0) < 0)
				return -1;
			break;
		case 11:
			if (want_wt(r, &f, 2) < 0)
				return -1;
			break;
		default:
			break; /* unknown fields are skipped, as protobuf requires */
		}
	}
	return r->failed ? -1 : 0;
}

/* Re-reads the key and length of a field whose key is at off (used for stored spans). */
static int reopen(struct reader *r, size_t off, size_t end, struct pbfield *f)
{
	size_t pos = off;
	return next_field(r, &pos, end, f) ? 0 : -1;
}

static const char *str_at(struct reader *r, uint64_t idx, size_t off, const char *what)
{
	if (idx >= r->nstrings) {
		fail(r, off, "%s: string index %llu out of range (%zu strings)", what,
		     (unsigned long long)idx, r->nstrings);
		return NULL;
	}
	return r->str[idx];
}

static int build_strings(struct reader *r)
{
	if (r->nstrings == 0)
		return fail(r, 0, "empty string table (string_table[0] must be \"\")");
	if (r->strings[0].len != 0)
		return fail(r, r->strings[0].off, "string_table[0] is not empty");
	r->str = arena_xcalloc(r->nstrings, sizeof *r->str);
	for (size_t i = 0; i < r->nstrings; i++) {
		char *s = arena_xmalloc(r->strings[i].len + 1);
		memcpy(s, r->d + r->strings[i].off, r->strings[i].len);
		s[r->strings[i].len] = 0;
		r->str[i] = s;
	}
	return 0;
}

/* ---- locations ---- */

static int scan_line(struct reader *r, const struct pbfield *f)
{
	struct rline *ln = PUSH(r->lines, r->nlines, r->lines_cap);
	memset(ln, 0, sizeof *ln);
	ln->off = f->off;
	struct pbfield g;
	size_t pos = f->data, end = f->data + f->len;
	while (next_field(r, &pos, end, &g)) {
		if (g.num >= 1 && g.num <= 3 && want_wt(r, &g, 0) < 0)
			return -1;
		if (g.num == 1)
			ln->function_id = g.v;
		else if (g.num == 2)
			ln->line = (int64_t)g.v;
	}
	return r->failed ? -1 : 0;
}

static int scan_location(struct reader *r, const struct span *sp, struct rloc *l)
{
	struct pbfield f, g;
	if (reopen(r, sp->off, r->n, &f) < 0)
		return -1;
	memset(l, 0, sizeof *l);
	l->off = sp->off;
	l->first_line = r->nlines;
	size_t pos = f.data, end = f.data + f.len;
	while (next_field(r, &pos, end, &g)) {
		switch (g.num) {
		case 1: case 2: case 3: case 5:
			if (want_wt(r, &g, 0) < 0)
				return -1;
			if (g.num == 1)
				l->id = g.v;
			else if (g.num == 2)
				l->mapping_id = g.v;
			else if (g.num == 3)
				l->address = g.v;
			break;
		case 4:
			if (want_wt(r, &g, 2) < 0 || scan_line(r, &g) < 0)
				return -1;
			break;
		default:
			break;
		}
	}
	if (r->failed)
		return -1;
	l->nlines = r->nlines - l->first_line;
	if (l->id == 0)
		return fail(r, sp->off, "location with id 0");
	return 0;
}

static int cmp_loc(const void *a, const void *b)
{
	const struct rloc *x = a, *y = b;
	return x->id < y->id ? -1 : x->id > y->id;
}
static int cmp_func(const void *a, const void *b)
{
	const struct rfunc *x = a, *y = b;
	return x->id < y->id ? -1 : x->id > y->id;
}
static int cmp_map(const void *a, const void *b)
{
	const struct rmap *x = a, *y = b;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* Binary searches over the id-sorted tables (base/bisect.h; a key function per table). */
#define DEFINE_FIND(name, type)                                                \
	static uint64_t name##_key(const void *ctx, size_t i)                  \
	{                                                                      \
		return ((const type *)ctx)[i].id;                              \
	}                                                                      \
	static const type *name(const type *arr, size_t n, uint64_t want)     \
	{                                                                      \
		size_t lo = bisect_count_lt(n, want, name##_key, arr);         \
		return lo < n && arr[lo].id == want ? &arr[lo] : NULL;         \
	}
DEFINE_FIND(find_loc, struct rloc)
DEFINE_FIND(find_func, struct rfunc)
DEFINE_FIND(find_map, struct rmap)

/* After sorting by id: fails on the first id that repeats. */
#define DEFINE_DUP(name, type)                                             \
	static int name(struct reader *r, const type *arr, size_t n, const char *what) \
	{                                                                      \
		for (size_t i = 1; i < n; i++)                                     \
			if (arr[i].id == arr[i - 1].id)                                \
				return fail(r, arr[i].off, "duplicate %s id %llu", what,    \
				            (unsigned long long)arr[i].id);                \
		return 0;                                                          \
	}
DEFINE_DUP(dup_loc, struct rloc)
DEFINE_DUP(dup_func, struct rfunc)
DEFINE_DUP(dup_map, struct rmap)

/* Puts the frames of a location with lines into p->syms under its lookup address. */
static int add_location_syms(struct reader *r, struct profile *p, const struct rloc *l)
{
	struct prof_frame fr[64];
	struct prof_frame *frames = l->nlines <= 64 ? fr : arena_xcalloc(l->nlines, sizeof *frames);
	int rc = 0;
	for (size_t i = 0; i < l->nlines; i++) {
		const struct rline *ln = &r->lines[l->first_line + i];
		const struct rfunc *fn = find_func(r->funcs, r->nfuncs, ln->function_id);
		frames[i].func = NULL;
		frames[i].file = NULL;
		frames[i].line = ln->line > 0 && ln->line < 0x7fffffff ? (int)ln->line : 0;
		if (!fn) {
			if (ln->function_id != 0) {
				rc = fail(r, ln->off, "line refers to unknown function id %llu",
				          (unsigned long long)ln->function_id);
				break;
			}
			continue;
		}
		const char *name = str_at(r, fn->name, fn->off, "function name");
		const char *sys = str_at(r, fn->system_name, fn->off, "function system name");
		const char *file = str_at(r, fn->filename, fn->off, "function file name");
		if (!name || !sys || !file) {
			rc = -1;
			break;
		}
		frames[i].func = name[0] ? name : sys[0] ? sys : NULL;
		frames[i].file = file[0] ? file : NULL;
	}
	if (rc == 0) {
		const char *module = NULL;
		const struct rmap *m = find_map(r->maps, r->nmaps, l->mapping_id);
		if (m && r->str[m->filename][0])
			module = r->str[m->filename];
		if (!p->syms)
			p->syms = symtab_new();
		symtab_put(p->syms, l->lookup, frames, (uint32_t)l->nlines, module);
	}
	if (frames != fr)
		free(frames);
	return rc;
}

static int build_locations(struct reader *r, struct profile *p)
{
	r->nlocs = r->nlocspans;
	r->locs = arena_xcalloc(r->nlocs ? r->nlocs : 1, sizeof *r->locs);
	for (size_t i = 0; i < r->nlocs; i++) {
		if (scan_location(r, &r->locspans[i], &r->locs[i]) < 0)
			return -1;
		struct rloc *l = &r->locs[i];
		if (l->mapping_id != 0 && !find_map(r->maps, r->nmaps, l->mapping_id))
			return fail(r, l->off, "location %llu refers to unknown mapping id %llu",
			            (unsigned long long)l->id, (unsigned long long)l->mapping_id);
		l->lookup = l->address ? l->address : PPROF_READ_SYNTH_BASE + i;
		if (l->nlines > 0 || l->address == 0)
			if (add_location_syms(r, p, l) < 0)
				return -1;
	}
	if (r->nlocs)
		qsort(r->locs, r->nlocs, sizeof *r->locs, cmp_loc);
	return dup_loc(r, r->locs, r->nlocs, "location");
}

/* ---- samples ---- */

struct sample_ctx {
	struct profile *p;
	uint64_t *addrs;
	size_t naddrs, addrs_cap;
	int64_t *vals;
	size_t nvals, vals_cap;
};

static int push_location(struct reader *r, void *ctx, uint64_t id, size_t off)
{
	struct sample_ctx *c = ctx;
	const struct rloc *l = find_loc(r->locs, r->nlocs, id);
	if (!l)
		return fail(r, off, "sample refers to unknown location id %llu", (unsigned long long)id);
	*PUSH(c->addrs, c->naddrs, c->addrs_cap) = l->lookup;
	return 0;
}

static int push_value(struct reader *r, void *ctx, uint64_t v, size_t off)
{
	struct sample_ctx *c = ctx;
	(void)r;
	(void)off;
	*PUSH(c->vals, c->nvals, c->vals_cap) = (int64_t)v;
	return 0;
}

/* A sample label's value when it is heaptap's bytes_freed_by_other_threads (numeric), else 0
   (a malformed label fails the read like any malformed field). */
static double label_xfree(struct reader *r, const struct pbfield *l)
{
	struct pbfield g;
	uint64_t key = 0, num = 0;
	size_t pos = l->data, end = l->data + l->len;
	while (next_field(r, &pos, end, &g)) {
		if (g.num == 1 && g.wt == 0)
			key = g.v;
		else if (g.num == 3 && g.wt == 0)
			num = g.v;
	}
	if (r->failed || key == 0 || key >= r->nstrings || (int64_t)num <= 0)
		return 0;
	return strcmp(r->str[key], "bytes_freed_by_other_threads") == 0 ? (double)num : 0;
}

static int build_samples(struct reader *r, struct profile *p, const int *type_pv)
{
	struct sample_ctx c = { p, NULL, 0, 0, NULL, 0, 0 };
	int rc = 0;
	for (size_t i = 0; i < r->nsamples && rc == 0; i++) {
		struct pbfield f, g;
		if (reopen(r, r->samples[i].off, r->n, &f) < 0) {
			rc = -1;
			break;
		}
		c.naddrs = c.nvals = 0;
		double xfree = 0;
		size_t pos = f.data, end = f.data + f.len;
		while (next_field(r, &pos, end, &g)) {
			if (g.num == 1 && each_varint(r, &g, push_location, &c) < 0)
				break;
			if (g.num == 2 && each_varint(r, &g, push_value, &c) < 0)
				break;
			if (g.num == 3 && want_wt(r, &g, 2) < 0)
				break;
			if (g.num == 3)
				xfree += label_xfree(r, &g);
		}
		if (r->failed) {
			rc = -1;
			break;
		}
		if (c.nvals != r->ntypes) {
			rc = fail(r, f.off, "sample has %zu values, expected %zu (one per sample type)",
			          c.nvals, r->ntypes);
			break;
		}
		if (c.naddrs > UINT32_MAX) {
			rc = fail(r, f.off, "sample has too many locations");
			break;
		}
		double v[PV_COUNT] = { 0, 0, 0, 0 };
		for (size_t k = 0; k < r->ntypes; k++)
			if (type_pv[k] >= 0)
				v[type_pv[k]] += (double)c.vals[k];
		if (v[PV_ALLOC_OBJS] != 0 || v[PV_ALLOC_BYTES] != 0)
			p->has_alloc = 1;
		if (c.naddrs == 0) {
			/* pprof allows stackless samples; the model wants a frame, so give one a name. */
			uint64_t synth = PPROF_READ_SYNTH_BASE + r->nlocs + 1;
			struct prof_frame fr = { "[no stack]", NULL, 0 };
			if (!p->syms)
				p->syms = symtab_new();
			if (!symtab_get(p->syms, synth))
				symtab_put(p->syms, synth, &fr, 1, NULL);
			profile_add(p, &synth, 1, v);
		} else {
			profile_add(p, c.addrs, (uint32_t)c.naddrs, v);
		}
		p->samples[p->nsamples - 1].xfree = xfree;
	}
	free(c.addrs);
	free(c.vals);
	return rc;
}

/* ---- sample types, comments, driver ---- */

static int map_types(struct reader *r, int *type_pv, struct profile *p)
{
	int any = 0;
	for (size_t k = 0; k < r->ntypes; k++) {
		const char *t = str_at(r, r->types[k].type, r->types[k].off, "sample type");
		if (!t || !str_at(r, r->types[k].unit, r->types[k].off, "sample unit"))
			return -1;
		int pv = -1;
		if (!strcmp(t, "inuse_objects") || !strcmp(t, "objects"))
			pv = PV_INUSE_OBJS;
		else if (!strcmp(t, "inuse_space") || !strcmp(t, "space"))
			pv = PV_INUSE_BYTES;
		else if (!strcmp(t, "alloc_objects"))
			pv = PV_ALLOC_OBJS;
		else if (!strcmp(t, "alloc_space"))
			pv = PV_ALLOC_BYTES;
		/* a CPU profile (Go's, heaptap's): samples as objects, CPU time as bytes */
		else if (!strcmp(t, "samples"))
			pv = PV_INUSE_OBJS;
		else if (!strcmp(t, "cpu"))
			pv = PV_INUSE_BYTES, p->cpu = 1;
		/* a repeated type would count twice: keep the first */
		for (size_t j = 0; j < k && pv >= 0; j++)
			if (type_pv[j] == pv)
				pv = -1;
		type_pv[k] = pv;
		any |= pv >= 0;
	}
	if (!any) {
		if (r->errcap == 0) {
			r->failed = 1;
			return -1;
		}
		size_t k = (size_t)snprintf(r->err, r->errcap, "neither a heap nor a CPU profile (sample types:");
		for (size_t i = 0; i < r->ntypes && k < r->errcap; i++)
			k += (size_t)snprintf(r->err + k, r->errcap - k, "%s %s/%s", i ? "," : "",
			                      r->str[r->types[i].type], r->str[r->types[i].unit]);
		if (r->ntypes == 0 && k < r->errcap)
			k += (size_t)snprintf(r->err + k, r->errcap - k, " none");
		if (k < r->errcap)
			snprintf(r->err + k, r->errcap - k, ")");
		r->failed = 1;
		return -1;
	}
	/* has_alloc is decided by the values (build_samples): a heaptap dump taken without
	   prof_accum carries the alloc types with zeros */
	return 0;
}

static void read_comments(struct reader *r, struct profile *p)
{
	for (size_t i = 0; i < r->ncomments; i++) {
		if (r->comments[i] >= r->nstrings)
			continue; /* comments are informational: a bad index is not fatal */
		const char *s = r->str[r->comments[i]];
		if (strncmp(s, "heaptap: ", 9) != 0)
			continue;
		s += 9;
		const char *eq = strchr(s, '=');
		if (eq && profile_loss_set(&p->losses, s, (size_t)(eq - s), eq + 1))
			continue;
		if (!strncmp(s, "pid=", 4))
			p->pid = atoi(s + 4);
		else if (!strncmp(s, "cmdline=", 8) && s[8])
			p->cmdline = profile_strdup(p, s + 8);
		else if (!strncmp(s, "exe=", 4) && s[4])
			p->exe_path = profile_strdup(p, s + 4);
		else if (!strncmp(s, "trigger=", 8) && s[8] && !p->trigger)
			p->trigger = profile_strdup(p, s + 8);
		else if (strchr(s, '='))
			profile_meta_memory(p, s, (size_t)(strchr(s, '=') - s), strchr(s, '=') + 1);
	}
}

static int build_mappings(struct reader *r, struct profile *p)
{
	/* keep the input's order (mapping[0] is the main program), index by id afterwards */
	for (size_t i = 0; i < r->nmaps; i++) {
		struct rmap *m = &r->maps[i];
		const char *file = str_at(r, m->filename, m->off, "mapping file name");
		const char *bid = str_at(r, m->build_id, m->off, "mapping build id");
		if (!file || !bid)
			return -1;
		char *lower = NULL;
		if (bid[0]) {
			lower = strdup(bid);
			if (!lower)
				arena_oom();
			for (char *c = lower; *c; c++)
				if (*c >= 'A' && *c <= 'F')
					*c = (char)(*c - 'A' + 'a');
		}
		profile_add_mapping(p, m->start, m->limit, m->offset, file, lower);
		free(lower);
	}
	if (r->nmaps)
		qsort(r->maps, r->nmaps, sizeof *r->maps, cmp_map);
	if (dup_map(r, r->maps, r->nmaps, "mapping") < 0)
		return -1;
	if (r->nfuncs)
		qsort(r->funcs, r->nfuncs, sizeof *r->funcs, cmp_func);
	return dup_func(r, r->funcs, r->nfuncs, "function");
}

static void reader_release(struct reader *r)
{
	if (r->str)
		for (size_t i = 0; i < r->nstrings; i++)
			free(r->str[i]);
	free(r->str);
	free(r->strings);
	free(r->samples);
	free(r->locspans);
	free(r->funcs);
	free(r->maps);
	free(r->locs);
	free(r->lines);
	free(r->types);
	free(r->comments);
}

/* Inflates a gzip stream; returns a malloc'd buffer or NULL with err filled. */
static uint8_t *gunzip(const uint8_t *data, size_t n, size_t *outn, char *err, size_t errcap)
{
	z_stream zs;
	memset(&zs, 0, sizeof zs);
	if (inflateInit2(&zs, 15 + 16) != Z_OK) {
		snprintf(err, errcap, "byte offset 0: gzip: cannot initialise zlib");
		return NULL;
	}
	size_t cap = n * 4 + 4096, len = 0;
	uint8_t *out = arena_xmalloc(cap);
	zs.next_in = (Bytef *)(uintptr_t)data;
	int zr = Z_OK;
	size_t in_done = 0;
	for (;;) {
		if (len == cap) {
			if (cap >= MAX_INFLATED) {
				snprintf(err, errcap, "byte offset %zu: gzip: decompressed size exceeds %zu bytes",
				         in_done, MAX_INFLATED);
				goto bad;
			}
			cap *= 2;
			uint8_t *bigger = arena_xrealloc(out, cap);
			out = bigger;
		}
		size_t left = n - in_done;
		zs.avail_in = left > (1u << 30) ? (1u << 30) : (uInt)left;
		size_t room = cap - len;
		zs.next_out = out + len;
		zs.avail_out = room > (1u << 30) ? (1u << 30) : (uInt)room;
		uInt before_out = zs.avail_out, before_in = zs.avail_in;
		zr = inflate(&zs, Z_NO_FLUSH);
		len += before_out - zs.avail_out;
		in_done += before_in - zs.avail_in;
		if (zr == Z_STREAM_END) {
			/* concatenated gzip members decompress to the concatenation, as Go reads them */
			if (n - in_done >= 2 && data[in_done] == 0x1f && data[in_done + 1] == 0x8b &&
			    inflateReset(&zs) == Z_OK)
				continue;
			break;
		}
		if (zr == Z_BUF_ERROR && zs.avail_out != 0) {
			snprintf(err, errcap, "byte offset %zu: gzip: truncated compressed data", in_done);
			goto bad;
		}
		if (zr != Z_OK && zr != Z_BUF_ERROR) {
			snprintf(err, errcap, "byte offset %zu: gzip: %s", in_done,
			         zs.msg ? zs.msg : "corrupt compressed data");
			goto bad;
		}
	}
	inflateEnd(&zs);
	*outn = len;
	return out;
bad:
	inflateEnd(&zs);
	free(out);
	return NULL;
}

/* The wire type profile.proto gives each top-level field 1..15 (13 may be packed or not). */
static int sniff_wt_ok(uint64_t field, unsigned wt)
{
	switch (field) {
	case 1: case 2: case 3: case 4: case 5: case 6: case 11:
		return wt == 2;
	case 13:
		return wt == 0 || wt == 2;
	case 7: case 8: case 9: case 10: case 12: case 14: case 15:
		return wt == 0;
	default:
		return field > 15 && (wt == 0 || wt == 1 || wt == 2 || wt == 5);
	}
}

static int sniff_varint(const uint8_t *d, size_t n, size_t *i, uint64_t *v)
{
	*v = 0;
	for (unsigned shift = 0; *i < n && shift < 64; shift += 7) {
		uint8_t b = d[(*i)++];
		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return 1;
	}
	return 0;
}

int pprof_read_sniff(const uint8_t *data, size_t n)
{
	if (n >= 2 && data[0] == 0x1f && data[1] == 0x8b)
		return 1;
	size_t i = 0;
	for (int nfields = 0; nfields < 8 && i < n; nfields++) {
		uint64_t key, v;
		if (!sniff_varint(data, n, &i, &key) || !sniff_wt_ok(key >> 3, (unsigned)(key & 7)))
			return 0;
		unsigned wt = (unsigned)(key & 7);
		if (wt == 0 || wt == 2) {
			if (!sniff_varint(data, n, &i, &v))
				return nfields > 0;
			if (wt == 2) {
				if (v > n - i)
					return nfields > 0; /* the first field must fit; later ones may be cut */
				i += (size_t)v;
			}
		} else {
			size_t k = wt == 1 ? 8 : 4;
			if (k > n - i)
				return nfields > 0;
			i += k;
		}
	}
	return n > 0;
}

int pprof_read(const uint8_t *data, size_t n, struct profile *p, char *err, size_t errcap)
{
	uint8_t *inflated = NULL;
	if (errcap)
		err[0] = 0;
	if (n >= 2 && data[0] == 0x1f && data[1] == 0x8b) {
		inflated = gunzip(data, n, &n, err, errcap);
		if (!inflated)
			return -1;
		data = inflated;
	}
	struct reader r;
	memset(&r, 0, sizeof r);
	r.d = data;
	r.n = n;
	r.err = err;
	r.errcap = errcap;

	int type_pv_small[8];
	int *type_pv = type_pv_small;
	int rc = scan_top(&r, n);
	if (rc == 0)
		rc = build_strings(&r);
	if (rc == 0 && r.ntypes > 8) {
		type_pv = arena_xcalloc(r.ntypes, sizeof *type_pv);
	}
	if (rc == 0)
		rc = map_types(&r, type_pv, p);
	if (rc == 0)
		rc = build_mappings(&r, p);
	if (rc == 0)
		rc = build_locations(&r, p);
	if (rc == 0)
		rc = build_samples(&r, p, type_pv);
	if (rc == 0) {
		read_comments(&r, p);
		p->format = profile_strdup(p, "pprof");
		p->period = r.period > 0 ? (uint64_t)r.period : 0;
		p->time_ns = r.time_nanos;
	}
	if (type_pv != type_pv_small)
		free(type_pv);
	reader_release(&r);
	free(inflated);
	return rc == 0 && !r.failed ? 0 : -1;
}
