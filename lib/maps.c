/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * maps.c - memory-map snapshots and dlclose records for dumps (maps.h): reads
 * /proc/self/maps into an mmap'd buffer, parses executable file mappings, attaches build IDs
 * found with dl_iterate_phdr, and appends synthetic lines for unloaded objects. Not the
 * symbolizer: addresses are resolved offline by the CLI.
 */
#include "maps.h"
#include "../base/pages.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <string.h>

#include "../base/digits.h"
#include "../base/outbuf.h"
#include "sys.h"

#define BUILD_ID_MAX 64
#define MAX_UNLOADED 512
#define MAX_OBJECTS 2048

/* Unloaded segments live at synthetic addresses no process can map: above the 57-bit user
   space of 5-level paging and below the kernel's half, one 64 GiB slot per segment. */
#define SYNTH_BASE ((uint64_t)1 << 62)
#define SYNTH_SLOT_LG 36

struct unloaded {
	uint64_t start, limit, offset; /* where it was mapped, and its file offset */
	uint64_t synth;                /* where its frames now point (SYNTH_BASE + slot) */
	char path[MAPS_PATH_MAX];
	uint8_t build_id[BUILD_ID_MAX];
	uint32_t build_id_len;
	int ready; /* atomic: 1 once filled */
};

static struct unloaded unloaded[MAX_UNLOADED];
static uint64_t unloads_unmoved; /* segments not moved: every slot taken (atomic) */
static int log_once_unloaded;
static size_t nunloaded; /* atomic: slots claimed */

struct object {
	uintptr_t lo, hi;
	uint8_t build_id[BUILD_ID_MAX];
	uint32_t build_id_len;
};

/* Loaded objects, refreshed at every snapshot (dumps are serialised by dump.c). */
static struct object *objects;
static size_t nobjects;

size_t maps_build_id(uintptr_t base, const void *phdrs, int nphdr, uint8_t *out, size_t cap)
{
	const ElfW(Phdr) *ph = phdrs;
	for (int i = 0; i < nphdr; i++) {
		if (ph[i].p_type != PT_NOTE)
			continue;
		const char *p = (const char *)(base + ph[i].p_vaddr);
		const char *end = p + ph[i].p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
			const char *name = p + sizeof *nh;
			const char *desc = name + ((nh->n_namesz + 3) & ~3u);
			const char *next = desc + ((nh->n_descsz + 3) & ~3u);
			if (next > end || next <= p)
				break;
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    memcmp(name, "GNU", 4) == 0) {
				size_t n = nh->n_descsz < cap ? nh->n_descsz : cap;
				memcpy(out, desc, n);
				return n;
			}
			p = next;
		}
	}
	return 0;
}

static int collect_object(struct dl_phdr_info *info, size_t size, void *ctx)
{
	(void)size;
	(void)ctx;
	if (nobjects >= MAX_OBJECTS)
		return 1;
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;
		if (a < lo)
			lo = a;
		if (a + ph->p_memsz > hi)
			hi = a + ph->p_memsz;
	}
	if (lo >= hi)
		return 0;
	struct object *o = &objects[nobjects++];
	o->lo = (uintptr_t)pages_round_down(lo);
	o->hi = hi;
	o->build_id_len = (uint32_t)maps_build_id(info->dlpi_addr, info->dlpi_phdr, info->dlpi_phnum,
	                                          o->build_id, sizeof o->build_id);
	return 0;
}

static const struct object *object_at(uintptr_t addr)
{
	for (size_t i = 0; i < nobjects; i++)
		if (addr >= objects[i].lo && addr < objects[i].hi)
			return &objects[i];
	return NULL;
}

static uint64_t parse_hex(const char **pp, const char *end)
{
	uint64_t v = 0;
	const char *p = *pp;
	for (int d; p < end && (d = digit_value(*p)) >= 0; p++)
		v = (v << 4) | (unsigned)d;
	*pp = p;
	return v;
}

static const char *skip_field(const char *p, const char *end)
{
	while (p < end && *p != ' ')
		p++;
	while (p < end && *p == ' ')
		p++;
	return p;
}

/* Copies n bytes plus a NUL into the string pool; returns the copy or "" when full. */
static const char *pool_str(struct maps_snapshot *s, const char *p, size_t n)
{
	if (!s->strs || s->strs_used + n + 1 > s->strs_cap)
		return "";
	char *dst = s->strs + s->strs_used;
	memcpy(dst, p, n);
	dst[n] = 0;
	s->strs_used += n + 1;
	return dst;
}

static const uint8_t *pool_bytes(struct maps_snapshot *s, const uint8_t *p, size_t n)
{
	if (!n)
		return NULL;
	return (const uint8_t *)pool_str(s, (const char *)p, n);
}

static void add_mapping(struct maps_snapshot *s, uint64_t start, uint64_t limit, uint64_t off,
                        const char *path, size_t pathlen, const uint8_t *bid, uint32_t bidlen,
                        int unloaded_flag)
{
	if (s->n >= s->maps_cap)
		return;
	struct dump_mapping *m = &s->maps[s->n++];
	memset(m, 0, sizeof *m);
	m->start = start;
	m->limit = limit;
	m->offset = off;
	m->path = pool_str(s, path, pathlen);
	m->build_id = pool_bytes(s, bid, bidlen);
	m->build_id_len = m->build_id ? bidlen : 0;
	memcpy(m->perms, "r-xp", 5);
	m->unloaded = unloaded_flag;
}

/* Parses the executable file mappings of the text; main_first selects the pass. */
static void parse_lines(struct maps_snapshot *s, const char *exe, size_t textlen, int main_pass)
{
	size_t exelen = exe ? strlen(exe) : 0;
	const char *p = s->text, *end = s->text + textlen;
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol)
			eol = end;
		const char *q = p;
		uint64_t start = parse_hex(&q, eol);
		if (q < eol && *q == '-')
			q++;
		uint64_t limit = parse_hex(&q, eol);
		while (q < eol && *q == ' ')
			q++;
		const char *perms = q;
		q = skip_field(q, eol);
		uint64_t off = parse_hex(&q, eol);
		q = skip_field(q, eol); /* offset's trailing spaces */
		q = skip_field(q, eol); /* dev */
		q = skip_field(q, eol); /* inode */
		const char *path = q;
		size_t pathlen = (size_t)(eol - path);
		if (eol - perms >= 4 && perms[2] == 'x' && pathlen > 0 && path[0] == '/') {
			int is_main = exelen && pathlen == exelen && memcmp(path, exe, exelen) == 0;
			if (is_main == main_pass) {
				const struct object *o = object_at((uintptr_t)start);
				add_mapping(s, start, limit, off, path, pathlen, o ? o->build_id : NULL,
				            o ? o->build_id_len : 0, 0);
			}
		}
		p = eol + 1;
	}
}

int maps_snapshot_take(struct maps_snapshot *s, const char *exe_path)
{
	s->len = 0;
	s->n = 0;
	s->strs_used = 0;
	if (!objects) {
		objects = sys_map(MAX_OBJECTS * sizeof *objects);
		if (!objects)
			return -12;
	}
	if (!s->maps) {
		s->maps = sys_map(4096 * sizeof *s->maps);
		s->maps_cap = s->maps ? 4096 : 0;
	}
	if (!s->strs) {
		s->strs = sys_map(1u << 20);
		s->strs_cap = s->strs ? 1u << 20 : 0;
	}

	long n = sys_read_file("/proc/self/maps", &s->text, &s->cap);
	if (n < 0)
		return (int)n;
	s->len = (size_t)n;

	nobjects = 0;
	dl_iterate_phdr(collect_object, NULL);
	parse_lines(s, exe_path, s->len, 1);
	parse_lines(s, exe_path, s->len, 0);

	size_t nu = __atomic_load_n(&nunloaded, __ATOMIC_ACQUIRE);
	if (nu > MAX_UNLOADED)
		nu = MAX_UNLOADED;
	for (size_t i = 0; i < nu; i++) {
		const struct unloaded *u = &unloaded[i];
		if (!__atomic_load_n(&u->ready, __ATOMIC_ACQUIRE) || u->synth == 0)
			continue;
		/* one synthetic maps line in the kernel's format */
		char line[512];
		struct outbuf ob;
		outbuf_init(&ob, line, sizeof line, -1);
		uint64_t synth_limit = u->synth + (u->limit - u->start);
		outbuf_hex_pad(&ob, u->synth, 8);
		outbuf_putc(&ob, '-');
		outbuf_hex_pad(&ob, synth_limit, 8);
		outbuf_puts(&ob, " r-xp ");
		outbuf_hex_pad(&ob, u->offset, 8);
		outbuf_puts(&ob, " 00:00 0                          ");
		outbuf_puts(&ob, u->path);
		outbuf_putc(&ob, '\n');
		if (ob.truncated || s->len + ob.len + 1 > s->cap)
			break;
		memcpy(s->text + s->len, line, ob.len);
		s->len += ob.len;
		add_mapping(s, u->synth, synth_limit, u->offset, u->path, strlen(u->path), u->build_id,
		            u->build_id_len, 1);
	}
	return 0;
}

/* A slot recorded for the same segment of the same file (same place, offset and build ID):
   an object loaded and unloaded again reuses it, so a loop of dlopen/dlclose holds one slot. */
static const struct unloaded *same_segment(const struct unloaded *want)
{
	size_t n = maps_unloaded_count();
	for (size_t i = 0; i < n; i++) {
		const struct unloaded *u = &unloaded[i];
		if (__atomic_load_n(&u->ready, __ATOMIC_ACQUIRE) && u->synth && u->start == want->start &&
		    u->limit == want->limit && u->offset == want->offset &&
		    u->build_id_len == want->build_id_len &&
		    memcmp(u->build_id, want->build_id, want->build_id_len) == 0 &&
		    strcmp(u->path, want->path) == 0)
			return u;
	}
	return NULL;
}

struct unload_ctx {
	uintptr_t addr;
	const char *name;
	struct maps_unload *u;
};

static int record_unload(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct unload_ctx *c = arg;
	struct maps_unload *u = c->u;
	if (info->dlpi_addr != c->addr || !info->dlpi_name || !info->dlpi_name[0])
		return 0;
	if (c->name && strcmp(c->name, info->dlpi_name) != 0)
		return 0;
	u->build_id_len = (uint32_t)maps_build_id(info->dlpi_addr, info->dlpi_phdr, info->dlpi_phnum,
	                                          u->build_id, sizeof u->build_id);
	sys_strlcpy(u->path, info->dlpi_name, sizeof u->path);
	for (int i = 0; i < info->dlpi_phnum && u->nseg < MAPS_UNLOAD_SEGS; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;
		uint64_t start = (uintptr_t)pages_round_down(a);
		uint64_t limit = (uintptr_t)pages_round_up(a + ph->p_memsz);
		if (limit - start > ((uint64_t)1 << SYNTH_SLOT_LG))
			continue; /* larger than a slot: its frames keep their addresses */
		u->seg[u->nseg].start = start;
		u->seg[u->nseg].limit = limit;
		u->seg[u->nseg].offset = pages_round_down(ph->p_offset);
		u->nseg++;
	}
	return 1;
}

int maps_note_unload(void *handle, struct maps_unload *u)
{
	memset(u, 0, sizeof *u);
	struct link_map *lm = NULL;
	if (!handle || dlinfo(handle, RTLD_DI_LINKMAP, &lm) != 0 || !lm)
		return 0;
	struct unload_ctx c = {(uintptr_t)lm->l_addr, lm->l_name, u};
	dl_iterate_phdr(record_unload, &c);
	return u->nseg > 0;
}

/* dl_iterate_phdr callback: whether any loaded object maps part of the recorded segments. */
static int overlaps(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	const struct maps_unload *u = arg;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uint64_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
		for (size_t k = 0; k < u->nseg; k++)
			if (lo < u->seg[k].limit && hi > u->seg[k].start)
				return 1;
	}
	return 0;
}

size_t maps_commit_unload(const struct maps_unload *u, struct maps_remap *out, size_t cap)
{
	if (!u->nseg || dl_iterate_phdr(overlaps, (void *)u))
		return 0; /* still loaded (another handle holds it), or its place already taken */
	size_t n = 0;
	for (size_t k = 0; k < u->nseg && n < cap; k++) {
		struct unloaded want;
		memset(&want, 0, sizeof want);
		want.start = u->seg[k].start;
		want.limit = u->seg[k].limit;
		want.offset = u->seg[k].offset;
		memcpy(want.path, u->path, sizeof want.path);
		memcpy(want.build_id, u->build_id, u->build_id_len);
		want.build_id_len = u->build_id_len;
		const struct unloaded *r = same_segment(&want);
		if (!r) {
			size_t slot = __atomic_fetch_add(&nunloaded, 1, __ATOMIC_ACQ_REL);
			if (slot >= MAX_UNLOADED) {
				__atomic_fetch_add(&unloads_unmoved, u->nseg - k, __ATOMIC_RELAXED);
				sys_log_once(&log_once_unloaded, "more unloaded library segments than ",
				             "the table of unloaded objects holds: later ones keep their "
				             "addresses and may be charged to a library loaded there",
				             " (counted: sampler.segments_not_moved_at_dlclose)");
				break;
			}
			struct unloaded *nu = &unloaded[slot];
			*nu = want;
			nu->synth = SYNTH_BASE + ((uint64_t)slot << SYNTH_SLOT_LG);
			__atomic_store_n(&nu->ready, 1, __ATOMIC_RELEASE);
			r = nu;
		}
		out[n++] = (struct maps_remap){r->start, r->limit, r->synth};
	}
	return n;
}

uintptr_t maps_remap_pc(uintptr_t pc, const struct maps_remap *r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (pc >= r[i].start && pc < r[i].limit)
			return (uintptr_t)(r[i].to + (pc - r[i].start));
	return pc;
}

uint64_t maps_unloads_unmoved(void)
{
	return __atomic_load_n(&unloads_unmoved, __ATOMIC_RELAXED);
}

size_t maps_unloaded_count(void)
{
	size_t n = __atomic_load_n(&nunloaded, __ATOMIC_ACQUIRE);
	return n < MAX_UNLOADED ? n : MAX_UNLOADED;
}
