/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * symbolize.c - the symbolizer's driver: collects a profile's unique addresses, assigns each
 * to a mapping and an ELF file (the user's binary for the main program, by build ID, path or
 * jeprof's catch-all), resolves them file by file in address order, and stores the frames in
 * the profile's symbol table.
 *
 * The per-file work (finding files, DWARF and symbol indexes) is symfile.c's; this file owns
 * the policy (which mapping is the main program, what to warn about). It prints warnings
 * and, with HEAPTAP_TIMING=1, per-phase times; it parses no command line.
 */
#include "symbolize.h"
#include "../../base/bisect.h"

#include "../../base/hash.h"
#include "../../profile/arena.h"
#include "../../profile/symtab.h"
#include "findfile.h"
#include "symfile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_FRAMES 256

void symbolize_options_init(struct sym_options *o)
{
	memset(o, 0, sizeof(*o));
	o->demangle = 1;
	o->inlines = 1;
}

/* ---- the driver ---- */

/* Phases are timed in CPU seconds of the process: on a busy machine wall time mostly
   measures the neighbours. */
static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double wall_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* One ELF object to read, shared by every mapping of the same file. */
struct mod {
	const char *map_path; /* as the profile names it */
	const char *exact;    /* the user's binary, or NULL */
	const char *build_id; /* what the profile says it must be, or NULL */
	struct symfile *f;
	int tried;
};

/* One unique address. */
struct ent {
	uint64_t addr;
	int32_t mod;  /* -1: unresolvable */
	int32_t map;  /* mapping index, -1 for the catch-all */
};

struct run {
	struct profile *p;
	const struct sym_options *opt;
	struct symfile_cfg cfg;
	struct mod *mods;
	size_t nmods, mods_cap;
	int32_t *mod_slots;   /* open addressing over mods by path: mod index + 1, 0 empty */
	size_t mod_slots_cap; /* a power of two, or 0 */
	size_t *order;    /* mapping indexes sorted by start */
	int32_t *map_mod; /* mapping index -> module */
	int32_t main_mod; /* the user's binary, or -1 */
};

static const struct profile *sort_ctx;

static int cmp_map_start(const void *a, const void *b)
{
	const struct prof_mapping *x = &sort_ctx->maps[*(const size_t *)a];
	const struct prof_mapping *y = &sort_ctx->maps[*(const size_t *)b];
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (*(const size_t *)a < *(const size_t *)b) ? -1 : 1;
}

static int cmp_ent(const void *a, const void *b)
{
	const struct ent *x = a, *y = b;
	if (x->mod != y->mod)
		return x->mod < y->mod ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* 1 for mappings that are not files (anonymous memory, [vdso], [heap], memfd). */
static int map_is_special(const struct prof_mapping *m)
{
	const char *s = m->path;
	return !s || !s[0] || s[0] == '[' || strncmp(s, "//anon", 6) == 0 ||
	       strncmp(s, "/memfd:", 7) == 0 || strncmp(s, "/dev/", 5) == 0 ||
	       strncmp(s, "anon_inode:", 11) == 0;
}

/* 1 when path names a shared object the way jeprof recognises them (x.so, x.so.6.0.1). */
static int path_is_solib(const char *path)
{
	const char *b = base_name(path);
	const char *so = strstr(b, ".so");
	while (so) {
		const char *t = so + 3;
		while (*t == '.' || (*t >= '0' && *t <= '9'))
			t++;
		if (!*t)
			return 1;
		so = strstr(so + 1, ".so");
	}
	return 0;
}

static uint64_t mod_hash(const char *map_path, const char *exact)
{
	return hash_str(exact ? exact : map_path) ^ (exact ? 0x9e3779b97f4a7c15ULL : 0);
}

static int mod_same(const struct mod *m, const char *map_path, const char *exact)
{
	if ((m->exact == NULL) != (exact == NULL))
		return 0;
	return exact ? strcmp(m->exact, exact) == 0 : strcmp(m->map_path, map_path) == 0;
}

/* The module of a file, added when new; found through a hash of its path (a profile may list
   hundreds of thousands of mappings). Returns its index, or -1 out of memory. */
static int32_t add_mod(struct run *r, const char *map_path, const char *exact, const char *build_id)
{
	if ((r->nmods + 1) * 2 > r->mod_slots_cap) {
		size_t cap = r->mod_slots_cap ? r->mod_slots_cap * 2 : 64;
		int32_t *slots = calloc(cap, sizeof(*slots));
		if (!slots)
			return -1;
		for (size_t i = 0; i < r->nmods; i++) {
			size_t j = mod_hash(r->mods[i].map_path, r->mods[i].exact) & (cap - 1);
			while (slots[j])
				j = (j + 1) & (cap - 1);
			slots[j] = (int32_t)i + 1;
		}
		free(r->mod_slots);
		r->mod_slots = slots;
		r->mod_slots_cap = cap;
	}
	size_t j = mod_hash(map_path, exact) & (r->mod_slots_cap - 1);
	for (; r->mod_slots[j]; j = (j + 1) & (r->mod_slots_cap - 1)) {
		struct mod *m = &r->mods[r->mod_slots[j] - 1];
		if (mod_same(m, map_path, exact)) {
			if (!m->build_id && build_id)
				m->build_id = build_id;
			return r->mod_slots[j] - 1;
		}
	}
	if (r->nmods == r->mods_cap) {
		size_t cap = r->mods_cap ? r->mods_cap * 2 : 16;
		struct mod *v = realloc(r->mods, cap * sizeof(*v));
		if (!v)
			return -1;
		r->mods = v;
		r->mods_cap = cap;
	}
	r->mods[r->nmods] = (struct mod){map_path, exact, build_id, NULL, 0};
	r->mod_slots[j] = (int32_t)r->nmods + 1;
	return (int32_t)r->nmods++;
}

/* Picks the mapping of the main program, given the user's binary: by build ID, by the
   profile's own program path, by name, else the first mapping that is not a library. */
static int main_mapping(const struct profile *p, const char *binary, const char *bid)
{
	if (bid[0])
		for (size_t i = 0; i < p->nmaps; i++)
			if (p->maps[i].build_id && strcmp(p->maps[i].build_id, bid) == 0)
				return (int)i;
	if (p->exe_path && p->exe_path[0])
		for (size_t i = 0; i < p->nmaps; i++)
			if (p->maps[i].path && strcmp(p->maps[i].path, p->exe_path) == 0)
				return (int)i;
	for (size_t i = 0; i < p->nmaps; i++)
		if (!map_is_special(&p->maps[i]) && strcmp(base_name(p->maps[i].path), base_name(binary)) == 0)
			return (int)i;
	for (size_t i = 0; i < p->nmaps; i++)
		if (!map_is_special(&p->maps[i]) && !path_is_solib(p->maps[i].path))
			return (int)i;
	return -1;
}

/* bisect key: the start of the i-th mapping in address order */
static uint64_t map_start(const void *ctx, size_t i)
{
	const struct run *r = ctx;
	return r->p->maps[r->order[i]].start;
}

/* The mapping holding addr, or -1 (the latest-starting one when they overlap). */
static int find_map(const struct run *r, uint64_t addr)
{
	const struct profile *p = r->p;
	size_t lo = bisect_count_le(p->nmaps, addr, map_start, r);
	for (size_t k = lo, steps = 0; k > 0 && steps < 64; k--, steps++) {
		const struct prof_mapping *m = &p->maps[r->order[k - 1]];
		if (addr < m->limit)
			return (int)r->order[k - 1];
	}
	return -1;
}

/* The warnings printed so far, as hashes of "path\0why" (open addressing, 0 = empty): a run
   that symbolizes several profiles (diff, report) says each thing about a file once. */
static struct {
	uint64_t *h;
	size_t cap, n;
} warned;

/* 1 when path/why was not warned about before (and records it). */
static int warn_first(const char *path, const char *why)
{
	uint64_t h = hash_mix64(hash_str(path) * 31 + hash_str(why)) | 1;
	if ((warned.n + 1) * 2 > warned.cap) {
		size_t cap = warned.cap ? warned.cap * 2 : 64;
		uint64_t *t = calloc(cap, sizeof(*t));
		if (!t)
			return 1;
		for (size_t i = 0; i < warned.cap; i++) {
			if (!warned.h[i])
				continue;
			size_t j = warned.h[i] & (cap - 1);
			while (t[j])
				j = (j + 1) & (cap - 1);
			t[j] = warned.h[i];
		}
		free(warned.h);
		warned.h = t;
		warned.cap = cap;
	}
	size_t j = h & (warned.cap - 1);
	for (; warned.h[j]; j = (j + 1) & (warned.cap - 1))
		if (warned.h[j] == h)
			return 0;
	warned.h[j] = h;
	warned.n++;
	return 1;
}

static void warn_file(const struct run *r, const char *path, const char *why)
{
	if (!r->opt->quiet && warn_first(path, why))
		fprintf(stderr, "heaptap: warning: %s: %s; its frames stay unsymbolized\n", path, why);
}

/* Opens module m once (warning when it cannot be used); returns its file or NULL. */
static struct symfile *mod_open(struct run *r, struct mod *m)
{
	if (m->tried)
		return m->f;
	char why[4096 + 400];
	char subject[1024];
	m->tried = 1;
	arena_set_subject(m->exact ? m->exact : m->map_path, subject, sizeof subject);
	m->f = symfile_open(m->map_path, m->exact, m->build_id, &r->cfg, why, sizeof(why));
	arena_set_subject(subject, NULL, 0);
	const char *name = m->exact ? m->exact : m->map_path;
	if (!m->f)
		warn_file(r, name, why);
	else if (symfile_note(m->f) && !r->opt->quiet && warn_first(name, symfile_note(m->f)))
		fprintf(stderr, "heaptap: warning: %s: %s\n", name, symfile_note(m->f));
	return m->f;
}

int symbolize_profile(struct profile *p, const struct sym_options *opt)
{
	struct sym_options defaults;
	if (!opt) {
		symbolize_options_init(&defaults);
		opt = &defaults;
	}
	int timing = getenv("HEAPTAP_TIMING") && getenv("HEAPTAP_TIMING")[0] == '1';
	double t0 = now_s(), w0 = wall_s();
	if (!p->syms && !(p->syms = symtab_new())) {
		fprintf(stderr, "heaptap: symbolize: out of memory\n");
		return -1;
	}
	struct run r = {.p = p, .opt = opt, .main_mod = -1};
	r.cfg.lib_prefix = opt->lib_prefix;
	r.cfg.sysroot = opt->sysroot;
	r.cfg.debug_root = findfile_debug_root(opt->debug_root);
	r.cfg.demangle = opt->demangle;
	r.cfg.no_lines = opt->no_lines;
	int rc = -1;
	uint64_t *addrs = NULL;
	struct ent *ents = NULL;
	size_t naddrs = 0, nents = 0, nresolved = 0;

	/* 1. The unique addresses not yet symbolized, sorted (the model's set is sized by the
	   distinct addresses, not by the total: a set of every frame of every stack cost 22 MB
	   of freshly faulted pages and a fifth of the collect phase's time). */
	r.order = malloc((p->nmaps ? p->nmaps : 1) * sizeof(*r.order));
	r.map_mod = malloc((p->nmaps ? p->nmaps : 1) * sizeof(*r.map_mod));
	if (!r.order || !r.map_mod)
		goto oom;
	addrs = profile_unique_addrs(p, &naddrs);
	size_t kept = 0;
	for (size_t i = 0; i < naddrs; i++)
		if (!symtab_get(p->syms, addrs[i]))
			addrs[kept++] = addrs[i];
	naddrs = kept;

	/* 2. Mappings sorted by start, and the module of each. */
	for (size_t i = 0; i < p->nmaps; i++)
		r.order[i] = i;
	sort_ctx = p;
	qsort(r.order, p->nmaps, sizeof(*r.order), cmp_map_start);
	int main_map = -1;
	if (opt->binary) {
		char bid[129];
		symfile_read_build_id(opt->binary, bid, sizeof(bid));
		main_map = main_mapping(p, opt->binary, bid);
		r.main_mod = add_mod(&r, opt->binary, opt->binary,
		                     main_map >= 0 ? p->maps[main_map].build_id : NULL);
		if (r.main_mod < 0)
			goto oom;
	}
	for (size_t i = 0; i < p->nmaps; i++) {
		const struct prof_mapping *m = &p->maps[i];
		if (map_is_special(m))
			r.map_mod[i] = -1;
		else if (main_map >= 0 && strcmp(m->path, p->maps[main_map].path) == 0)
			r.map_mod[i] = r.main_mod;
		else if ((r.map_mod[i] = add_mod(&r, m->path, NULL, m->build_id)) < 0)
			goto oom;
	}

	/* 3. Each address to its module, then sorted so each file is read in address order. */
	ents = malloc((naddrs ? naddrs : 1) * sizeof(*ents));
	if (!ents)
		goto oom;
	for (size_t i = 0; i < naddrs; i++) {
		int mi = find_map(&r, addrs[i]);
		int32_t mod = mi >= 0 ? r.map_mod[mi] : r.main_mod; /* jeprof's catch-all */
		ents[nents++] = (struct ent){addrs[i], mod, mi};
	}
	qsort(ents, nents, sizeof(*ents), cmp_ent);
	double t1 = now_s(), t_open = 0;
	/* The user's binary is opened even when no address falls in it: a file the user named
	   that cannot be used (corrupt, truncated, not ELF, another build) is always reported. */
	if (r.main_mod >= 0) {
		mod_open(&r, &r.mods[r.main_mod]);
		t_open += now_s() - t1;
	}

	/* 4. Resolve. */
	struct dwarfidx_frame df[MAX_FRAMES];
	struct prof_frame pf[MAX_FRAMES];
	for (size_t i = 0; i < nents; i++) {
		const struct ent *e = &ents[i];
		struct symfile *f = NULL;
		if (e->mod >= 0) {
			struct mod *m = &r.mods[e->mod];
			if (!m->tried) {
				double to = now_s();
				mod_open(&r, m);
				t_open += now_s() - to;
			}
			f = m->f;
		}
		int n = 0;
		uint64_t vaddr = e->addr;
		if (f) {
			int ok;
			if (e->map >= 0) {
				const struct prof_mapping *mp = &p->maps[e->map];
				ok = symfile_vaddr(f, mp->start, mp->offset, e->addr, &vaddr) == 0;
			} else {
				ok = symfile_contains(f, vaddr);
			}
			if (ok)
				n = symfile_resolve(f, vaddr, df, MAX_FRAMES, opt->inlines);
		}
		for (int k = 0; k < n; k++)
			pf[k] = (struct prof_frame){df[k].func, df[k].file, df[k].line};
		const char *module = NULL;
		if (e->map >= 0)
			module = p->maps[e->map].path;
		else if (e->mod >= 0)
			module = r.mods[e->mod].map_path;
		symtab_put(p->syms, e->addr, pf, (uint32_t)n, module);
		nresolved += n > 0;
	}
	double t2 = now_s();

	if (timing) {
		size_t nsyms = 0, nfiles = 0;
		struct dwarfidx_stats sum = {0};
		for (size_t i = 0; i < r.nmods; i++) {
			if (!r.mods[i].f)
				continue;
			size_t n;
			struct dwarfidx_stats st;
			symfile_stats(r.mods[i].f, &n, &st);
			nsyms += n;
			const char *dbg = symfile_debug_path(r.mods[i].f);
			fprintf(stderr, "heaptap: timing: symbolize: file %s: %zu symbols, DWARF %s%s, "
			        "%zu of %zu functions walked\n", symfile_path(r.mods[i].f), n,
			        dbg ? "from " : "none", dbg ? dbg : "", st.nfuncs_walked, st.nfuncs);
			sum.ncus += st.ncus, sum.ncus_indexed += st.ncus_indexed;
			sum.nfuncs += st.nfuncs, sum.nfuncs_walked += st.nfuncs_walked;
			sum.nnodes += st.nnodes;
			nfiles++;
		}
		fprintf(stderr,
		        "heaptap: timing: symbolize: %zu addresses (%zu resolved) in %zu files: "
		        "cpu seconds: collect %.3f, open %.3f, resolve %.3f, total %.3f (wall %.3f) "
		        "(%zu symbols; %zu of %zu CUs and %zu of %zu functions walked, %zu with inlines)\n",
		        nents, nresolved, nfiles, t1 - t0, t_open, t2 - t1 - t_open, t2 - t0, wall_s() - w0, nsyms,
		        sum.ncus_indexed, sum.ncus, sum.nfuncs_walked, sum.nfuncs, sum.nnodes);
	}
	rc = 0;
	goto out;
oom:
	fprintf(stderr, "heaptap: symbolize: out of memory\n");
out:
	for (size_t i = 0; i < r.nmods; i++)
		symfile_free(r.mods[i].f);
	free(r.mods);
	free(r.mod_slots);
	free(r.order);
	free(r.map_mod);
	free(addrs);
	free(ents);
	findfile_cleanup();
	return rc;
}
