/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pprof_export.c - the symbolized pprof writer of pprof_export.h. It streams the profile
 * through pbwrite: strings, functions and locations are emitted the first time a sample
 * needs them (protobuf lets repeated fields interleave; indexes follow the order of
 * appearance), deduplicated by small hash tables, and the bytes go through zlib's gz* API
 * or stdio. Not the in-process writer (profile/inproc/pprof_write.c), which must not allocate.
 */
#include "pprof_export.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "../../base/hash.h"
#include "../../profile/arena.h"
#include "../../profile/inproc/pbwrite.h"
#include "../../profile/pprof_read.h"
#include "../../profile/symtab.h"

enum {
	P_SAMPLE_TYPE = 1, P_SAMPLE = 2, P_MAPPING = 3, P_LOCATION = 4, P_FUNCTION = 5, P_STRING = 6,
	P_TIME_NANOS = 9, P_DURATION_NANOS = 10, P_PERIOD_TYPE = 11, P_PERIOD = 12, P_COMMENT = 13,
	VT_TYPE = 1, VT_UNIT = 2,
	S_LOCATION_ID = 1, S_VALUE = 2, S_LABEL = 3,
	LB_KEY = 1, LB_NUM = 3,
	M_ID = 1, M_START = 2, M_LIMIT = 3, M_OFFSET = 4, M_FILENAME = 5, M_BUILD_ID = 6,
	M_HAS_FUNCTIONS = 7, M_HAS_FILENAMES = 8, M_HAS_LINE_NUMBERS = 9, M_HAS_INLINE_FRAMES = 10,
	LOC_ID = 1, LOC_MAPPING_ID = 2, LOC_ADDRESS = 3, LOC_LINE = 4,
	LN_FUNCTION_ID = 1, LN_LINE = 2,
	F_ID = 1, F_NAME = 2, F_SYSTEM_NAME = 3, F_FILENAME = 4,
};

/* ---- u64 -> u64 map (value 0 = absent) ---- */

struct u64map {
	uint64_t *keys, *vals;
	size_t cap, count;
};

static void u64map_init(struct u64map *m)
{
	m->cap = 1024;
	m->count = 0;
	m->keys = arena_xcalloc(m->cap, sizeof *m->keys);
	m->vals = arena_xcalloc(m->cap, sizeof *m->vals);
}

static void u64map_release(struct u64map *m)
{
	free(m->keys);
	free(m->vals);
}

static size_t u64map_slot(const struct u64map *m, uint64_t key)
{
	size_t i = hash_mix64(key) & (m->cap - 1);
	while (m->vals[i] != 0 && m->keys[i] != key)
		i = (i + 1) & (m->cap - 1);
	return i;
}

static uint64_t u64map_get(const struct u64map *m, uint64_t key)
{
	return m->vals[u64map_slot(m, key)];
}

static void u64map_put(struct u64map *m, uint64_t key, uint64_t val)
{
	if ((m->count + 1) * 2 > m->cap) {
		struct u64map big = { arena_xcalloc(m->cap * 2, sizeof(uint64_t)),
		                      arena_xcalloc(m->cap * 2, sizeof(uint64_t)), m->cap * 2, 0 };
		for (size_t i = 0; i < m->cap; i++)
			if (m->vals[i])
				u64map_put(&big, m->keys[i], m->vals[i]);
		u64map_release(m);
		*m = big;
	}
	size_t i = u64map_slot(m, key);
	if (m->vals[i] == 0)
		m->count++;
	m->keys[i] = key;
	m->vals[i] = val;
}

/* ---- the export state ---- */

struct exporter {
	const struct profile *p;
	struct pbwrite pb;
	/* strings: hash of contents -> index + 1, with the strings kept to compare */
	char **strs;
	size_t nstrs, strs_cap;
	size_t *stab; /* open addressing over indexes + 1 */
	size_t stab_cap;
	struct u64map funcs; /* (name idx << 32 | file idx) -> function id */
	struct u64map locs;  /* address -> location id */
	uint64_t next_func, next_loc;
	int symbolized;
	int with_alloc, with_inuse; /* the sample types written */
	/* output */
	gzFile gz;
	FILE *f;
};

/* Returns the string table index of s, writing a new entry on first use. */
static uint64_t intern(struct exporter *x, const char *s)
{
	if (!s)
		s = "";
	if ((x->nstrs + 1) * 2 > x->stab_cap) {
		size_t cap = x->stab_cap ? x->stab_cap * 2 : 1024;
		size_t *tab = arena_xcalloc(cap, sizeof *tab);
		for (size_t i = 0; i < x->nstrs; i++) {
			size_t j = hash_str(x->strs[i]) & (cap - 1);
			while (tab[j])
				j = (j + 1) & (cap - 1);
			tab[j] = i + 1;
		}
		free(x->stab);
		x->stab = tab;
		x->stab_cap = cap;
	}
	size_t j = hash_str(s) & (x->stab_cap - 1);
	while (x->stab[j]) {
		if (!strcmp(x->strs[x->stab[j] - 1], s))
			return x->stab[j] - 1;
		j = (j + 1) & (x->stab_cap - 1);
	}
	if (x->nstrs == x->strs_cap) {
		x->strs_cap = x->strs_cap ? x->strs_cap * 2 : 256;
		x->strs = arena_xrealloc(x->strs, x->strs_cap * sizeof *x->strs);
	}
	x->strs[x->nstrs] = strdup(s);
	if (!x->strs[x->nstrs])
		arena_oom();
	x->stab[j] = ++x->nstrs;
	pbwrite_string(&x->pb, P_STRING, s);
	return x->nstrs - 1;
}

static void value_type(struct exporter *x, uint32_t field, const char *type, const char *unit)
{
	uint64_t t = intern(x, type), u = intern(x, unit);
	size_t m = pbwrite_begin(&x->pb, field);
	pbwrite_varint(&x->pb, VT_TYPE, t);
	pbwrite_varint(&x->pb, VT_UNIT, u);
	pbwrite_end(&x->pb, m);
}

static uint64_t function_of(struct exporter *x, const struct prof_frame *fr)
{
	uint64_t name = intern(x, fr->func ? fr->func : "??");
	uint64_t file = intern(x, fr->file);
	uint64_t key = name << 32 | file;
	uint64_t id = u64map_get(&x->funcs, key);
	if (id)
		return id;
	id = ++x->next_func;
	u64map_put(&x->funcs, key, id);
	size_t m = pbwrite_begin(&x->pb, P_FUNCTION);
	pbwrite_varint(&x->pb, F_ID, id);
	pbwrite_varint(&x->pb, F_NAME, name);
	pbwrite_varint(&x->pb, F_SYSTEM_NAME, name);
	if (file)
		pbwrite_varint(&x->pb, F_FILENAME, file);
	pbwrite_end(&x->pb, m);
	return id;
}

static uint64_t location_of(struct exporter *x, uint64_t addr)
{
	uint64_t id = u64map_get(&x->locs, addr);
	if (id)
		return id;
	id = ++x->next_loc;
	u64map_put(&x->locs, addr, id);

	const struct prof_symbol *sym = x->p->syms ? symtab_get(x->p->syms, addr) : NULL;
	uint32_t nframes = sym ? sym->nframes : 0;
	uint64_t fids_small[16];
	uint64_t *fids = nframes <= 16 ? fids_small : arena_xcalloc(nframes, sizeof *fids);
	for (uint32_t i = 0; i < nframes; i++) {
		const struct prof_frame *fr = &sym->frames[i];
		fids[i] = fr->func || fr->file ? function_of(x, fr) : 0;
	}
	const struct prof_mapping *mp = profile_find_mapping(x->p, addr);
	size_t m = pbwrite_begin(&x->pb, P_LOCATION);
	pbwrite_varint(&x->pb, LOC_ID, id);
	if (mp)
		pbwrite_varint(&x->pb, LOC_MAPPING_ID, (uint64_t)(mp - x->p->maps) + 1);
	if (addr < PPROF_READ_SYNTH_BASE)
		pbwrite_varint(&x->pb, LOC_ADDRESS, addr);
	for (uint32_t i = 0; i < nframes; i++) {
		if (!fids[i])
			continue;
		size_t l = pbwrite_begin(&x->pb, LOC_LINE);
		pbwrite_varint(&x->pb, LN_FUNCTION_ID, fids[i]);
		if (sym->frames[i].line > 0)
			pbwrite_int64(&x->pb, LN_LINE, sym->frames[i].line);
		pbwrite_end(&x->pb, l);
	}
	pbwrite_end(&x->pb, m);
	if (fids != fids_small)
		free(fids);
	return id;
}

static int64_t to_i64(double d)
{
	if (!(d > -9.2e18 && d < 9.2e18))
		return d > 0 ? INT64_MAX : d < 0 ? INT64_MIN : 0;
	return (int64_t)d;
}

static void write_sample(struct exporter *x, const struct prof_sample *s)
{
	for (uint32_t i = 0; i < s->naddrs; i++)
		location_of(x, s->addrs[i]);
	uint64_t bytes_key = intern(x, "bytes");
	size_t m = pbwrite_begin(&x->pb, P_SAMPLE);
	size_t k = pbwrite_begin(&x->pb, S_LOCATION_ID);
	for (uint32_t i = 0; i < s->naddrs; i++)
		pbwrite_raw_varint(&x->pb, u64map_get(&x->locs, s->addrs[i]));
	pbwrite_end(&x->pb, k);
	k = pbwrite_begin(&x->pb, S_VALUE);
	if (x->with_alloc) {
		pbwrite_raw_varint(&x->pb, (uint64_t)to_i64(s->v[PV_ALLOC_OBJS]));
		pbwrite_raw_varint(&x->pb, (uint64_t)to_i64(s->v[PV_ALLOC_BYTES]));
	}
	if (x->with_inuse) {
		pbwrite_raw_varint(&x->pb, (uint64_t)to_i64(s->v[PV_INUSE_OBJS]));
		pbwrite_raw_varint(&x->pb, (uint64_t)to_i64(s->v[PV_INUSE_BYTES]));
	}
	pbwrite_end(&x->pb, k);
	double objs = x->with_alloc ? s->v[PV_ALLOC_OBJS] : s->v[PV_INUSE_OBJS];
	double bytes = x->with_alloc ? s->v[PV_ALLOC_BYTES] : s->v[PV_INUSE_BYTES];
	if (objs != 0 && !x->p->cpu) { /* the bytes label: heap samples only */
		k = pbwrite_begin(&x->pb, S_LABEL);
		pbwrite_varint(&x->pb, LB_KEY, bytes_key);
		pbwrite_int64(&x->pb, LB_NUM, to_i64(bytes / objs));
		pbwrite_end(&x->pb, k);
	}
	pbwrite_end(&x->pb, m);
}

static void write_mappings(struct exporter *x)
{
	const struct profile *p = x->p;
	for (size_t i = 0; i < p->nmaps; i++) {
		const struct prof_mapping *mp = &p->maps[i];
		uint64_t file = intern(x, mp->path);
		uint64_t bid = intern(x, mp->build_id);
		size_t m = pbwrite_begin(&x->pb, P_MAPPING);
		pbwrite_varint(&x->pb, M_ID, i + 1);
		pbwrite_varint(&x->pb, M_START, mp->start);
		pbwrite_varint(&x->pb, M_LIMIT, mp->limit);
		pbwrite_varint(&x->pb, M_OFFSET, mp->offset);
		pbwrite_varint(&x->pb, M_FILENAME, file);
		if (bid)
			pbwrite_varint(&x->pb, M_BUILD_ID, bid);
		if (x->symbolized) {
			pbwrite_bool(&x->pb, M_HAS_FUNCTIONS, 1);
			pbwrite_bool(&x->pb, M_HAS_FILENAMES, 1);
			pbwrite_bool(&x->pb, M_HAS_LINE_NUMBERS, 1);
			pbwrite_bool(&x->pb, M_HAS_INLINE_FRAMES, 1);
		}
		pbwrite_end(&x->pb, m);
	}
}

static void write_comment(struct exporter *x, const char *key, const char *val, uint64_t *ids,
                          size_t *n)
{
	if (!val || !*val)
		return;
	size_t len = strlen(key) + strlen(val) + 1;
	char *s = arena_xcalloc(len, 1);
	snprintf(s, len, "%s%s", key, val);
	ids[(*n)++] = intern(x, s);
	free(s);
}

static int sink(void *ctx, const uint8_t *b, size_t n)
{
	struct exporter *x = ctx;
	while (n > 0) {
		unsigned chunk = n > (1u << 30) ? (1u << 30) : (unsigned)n;
		if (x->gz) {
			if (gzwrite(x->gz, b, chunk) != (int)chunk) {
				int e;
				gzerror(x->gz, &e);
				return e == Z_ERRNO && errno ? -errno : -EIO;
			}
		} else if (fwrite(b, 1, chunk, x->f) != chunk) {
			return errno ? -errno : -EIO;
		}
		b += chunk;
		n -= chunk;
	}
	return 0;
}

int pprof_export(const struct profile *p, const char *path, int gzip)
{
	int fd = strcmp(path, "-") == 0 ? dup(STDOUT_FILENO)
	                                 : open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	struct pprof_export_options o = {.gzip = gzip};
	return pprof_export_fd(p, fd, &o);
}

int pprof_export_fd(const struct profile *p, int fd, const struct pprof_export_options *o)
{
	int gzip = o->gzip;
	struct exporter x;
	memset(&x, 0, sizeof x);
	x.p = p;
	x.symbolized = p->syms != NULL;
	x.with_alloc = p->has_alloc && o->parts != PPROF_EXPORT_INUSE && !p->cpu;
	x.with_inuse = o->parts != PPROF_EXPORT_ALLOC || p->cpu;
	if (gzip) {
		x.gz = gzdopen(fd, "wb");
		if (!x.gz) {
			close(fd);
			return -ENOMEM;
		}
	} else {
		x.f = fdopen(fd, "wb");
		if (!x.f) {
			int e = errno;
			close(fd);
			return -e;
		}
	}
	size_t cap = 4u << 20;
	uint8_t *buf = arena_xcalloc(cap, 1);
	pbwrite_init(&x.pb, buf, cap, sink, &x);
	u64map_init(&x.funcs);
	u64map_init(&x.locs);

	intern(&x, ""); /* string_table[0] must be empty */
	if (x.with_alloc) {
		value_type(&x, P_SAMPLE_TYPE, "alloc_objects", "count");
		value_type(&x, P_SAMPLE_TYPE, "alloc_space", "bytes");
	}
	if (x.with_inuse && p->cpu) {
		/* a CPU profile: the inuse pair holds samples and CPU nanoseconds (model.h) */
		value_type(&x, P_SAMPLE_TYPE, "samples", "count");
		value_type(&x, P_SAMPLE_TYPE, "cpu", "nanoseconds");
	} else if (x.with_inuse) {
		value_type(&x, P_SAMPLE_TYPE, "inuse_objects", "count");
		value_type(&x, P_SAMPLE_TYPE, "inuse_space", "bytes");
	}
	write_mappings(&x);
	for (size_t i = 0; i < p->nsamples && !x.pb.err; i++)
		write_sample(&x, &p->samples[i]);
	if (p->cpu)
		value_type(&x, P_PERIOD_TYPE, "cpu", "nanoseconds");
	else
		value_type(&x, P_PERIOD_TYPE, "space", "bytes");
	if (p->period > 0)
		pbwrite_int64(&x.pb, P_PERIOD, (int64_t)p->period);
	if (p->time_ns > 0)
		pbwrite_int64(&x.pb, P_TIME_NANOS, p->time_ns);
	if (o->duration_ns > 0)
		pbwrite_int64(&x.pb, P_DURATION_NANOS, o->duration_ns);
	uint64_t ids[4];
	size_t nids = 0;
	char pid[32] = "";
	if (p->pid > 0)
		snprintf(pid, sizeof pid, "%d", p->pid);
	write_comment(&x, "heaptap: pid=", pid, ids, &nids);
	write_comment(&x, "heaptap: cmdline=", p->cmdline, ids, &nids);
	write_comment(&x, "heaptap: exe=", p->exe_path, ids, &nids);
	write_comment(&x, "heaptap: converted from ", p->format, ids, &nids);
	if (nids) {
		size_t m = pbwrite_begin(&x.pb, P_COMMENT);
		for (size_t i = 0; i < nids; i++)
			pbwrite_raw_varint(&x.pb, ids[i]);
		pbwrite_end(&x.pb, m);
	}
	int rc = pbwrite_finish(&x.pb);
	if (x.gz) {
		int zr = gzclose(x.gz);
		if (rc == 0 && zr != Z_OK)
			rc = -EIO;
	} else if (fclose(x.f) != 0 && rc == 0) {
		rc = errno ? -errno : -EIO;
	}
	for (size_t i = 0; i < x.nstrs; i++)
		free(x.strs[i]);
	free(x.strs);
	free(x.stab);
	u64map_release(&x.funcs);
	u64map_release(&x.locs);
	free(buf);
	return rc;
}
