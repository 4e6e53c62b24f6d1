/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * stacks.c - from a symbolized profile to display stacks: inline expansion, naming by
 * granularity, jeprof's allocator-frame trimming, focus/ignore, flat and cumulative values
 * (see stacks.h). It neither symbolizes nor prints.
 */
#include "stacks.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/allocsym.h"
#include "../base/hash.h"
#include "../profile/arena.h"
#include "../profile/symtab.h"
#include "progress.h"

/* What one lookup address turns into, computed once per address. */
struct addr_info {
	uint64_t addr;
	uint32_t first, n;  /* name ids in priv->pool[first .. first+n), innermost (leaf) first */
	uint32_t outer;     /* pool[first + n - 1], the outermost name (saves a load per frame) */
	uint32_t cut;       /* trimming: the innermost inlined frames that are the allocator's */
	unsigned char used, alloc, focus, ignore;
};

/* The expansion budget of stacks_build: frames per input address, a floor, a ceiling (trace
   lengths and offsets are 32-bit downstream). */
#define STACKS_FRAMES_PER_ADDR 16
#define STACKS_MIN_FRAMES ((size_t)1 << 22)
#define STACKS_MAX_FRAMES ((size_t)1 << 31)

struct name_slot {
	uint32_t id;
	uint32_t used;
};

struct priv {
	struct addr_info *addrs; /* open addressing on addr */
	size_t addr_cap, addr_n;
	uint32_t *pool;
	size_t pool_n, pool_cap;
	struct name_slot *nslots; /* open addressing on name string */
	size_t nslot_cap;
	size_t names_cap;
	size_t traces_cap;
	uint32_t *stamp;          /* per name: last trace that counted it in cum */
	uint32_t *frames;         /* one block with every trace's frames */
	size_t frames_n, frames_cap;
	size_t *trace_first;      /* offsets into frames, fixed up at the end */
	/* Facts of a function name, keyed by its interned pointer (p->syms shares one copy of
	   equal names): computed once per function instead of once per address. */
	struct fn_fact *facts;
	size_t facts_cap, facts_n;
};

/* What stacks_build knows about one function name (struct priv's facts). */
struct fn_fact {
	const char *func;   /* the key; NULL = empty slot */
	uint32_t name_id[2];/* + 1: its display name as an outer / inlined frame at GRAN_FUNCTIONS, 0 unknown */
	signed char alloc;  /* stacks_is_allocator_full of it: 1, 0, or -1 not computed yet */
};

static const char *const skip_names[] = {
	"calloc", "cfree", "malloc", "newImpl", "void* newImpl", "free", "memalign", "posix_memalign",
	"aligned_alloc", "pvalloc", "valloc", "realloc", "mallocx", "rallocx", "xallocx", "dallocx",
	"sdallocx", "sdallocx_noflags", "tc_calloc", "tc_cfree", "tc_malloc", "tc_free", "tc_memalign",
	"tc_posix_memalign", "tc_pvalloc", "tc_valloc", "tc_realloc", "tc_new", "tc_delete",
	"tc_newarray", "tc_deletearray", "tc_new_nothrow", "tc_newarray_nothrow", "do_malloc",
	"::do_malloc", "::do_malloc_or_cpp_alloc", "DoSampledAllocation", "simple_alloc::allocate",
	"__malloc_alloc_template::allocate", "__builtin_delete", "__builtin_new",
	"__builtin_vec_delete", "__builtin_vec_new", "operator new", "operator new[]",
	"malloc_zone_malloc", "malloc_zone_calloc", "malloc_zone_valloc", "malloc_zone_realloc",
	"malloc_zone_memalign", "malloc_zone_free", "__start_google_malloc", "__stop_google_malloc",
	"__start_malloc_hook", "__stop_malloc_hook", NULL,
};

int stacks_is_allocator(const char *s)
{
	const char *t = s[0] == '_' ? s + 1 : s;
	for (int i = 0; skip_names[i]; i++)
		if (strcmp(s, skip_names[i]) == 0 || strcmp(t, skip_names[i]) == 0)
			return 1;
	/* jeprof's skip_regexp: TCMalloc|^tcmalloc:: */
	return strstr(s, "TCMalloc") != NULL || strncmp(s, "tcmalloc::", 10) == 0;
}

/* jemalloc's own functions when they are not exported under a public name: every build
   prefixes its private symbols (je_ in a plain build, _rjem_je_ in tikv-jemallocator's, and
   the public ones _rjem_), and the static inline helpers a build leaves out of line keep
   their bare names (base/allocsym.h knows those, for the collector too). */
static const char *const jemalloc_prefixes[] = {"je_", "_rjem_", "__je_", NULL};
/* The Rust global-allocator shims and the standard library's allocation machinery, by the
   start of their full demangled names (a legacy symbol's "::h<hash>" suffix does not matter)
   or by what they contain (trait impls, "<T as Trait>::method"). */
static const char *const rust_prefixes[] = {
	"__rust_alloc", "__rust_realloc", "__rdl_", "__rg_", "alloc::alloc::", "<alloc::alloc::",
	"alloc::raw_vec::", "<alloc::raw_vec::", "tikv_jemallocator::", "<tikv_jemallocator::",
	"jemallocator::", "<jemallocator::", NULL,
};
static const char *const rust_infixes[] = {
	" as core::alloc::global::GlobalAlloc>::", " as core::alloc::GlobalAlloc>::",
	" as core::alloc::Allocator>::", " as core::alloc::Alloc>::", NULL,
};

static int starts_with_any(const char *s, const char *const *list)
{
	for (int i = 0; list[i]; i++)
		if (strncmp(s, list[i], strlen(list[i])) == 0)
			return 1;
	return 0;
}

int stacks_is_allocator_full(const char *full, const char *short_name)
{
	if (stacks_is_allocator(short_name) || starts_with_any(full, jemalloc_prefixes) ||
	    starts_with_any(full, rust_prefixes))
		return 1;
	if (allocsym_is_jemalloc_internal(short_name))
		return 1;
	for (int i = 0; rust_infixes[i]; i++)
		if (strstr(full, rust_infixes[i]))
			return 1;
	return 0;
}

int stacks_is_allocator_module(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	return strncmp(base, "libjemalloc", 11) == 0;
}

/* Removes every innermost open..close group (and, for parens, a following "\s*const"),
   repeatedly, like jeprof's `while (s/\([^()]*\)(\s*const)?//g) {}`. */
static void strip_groups(char *s, char open, char close, int eat_const)
{
	for (;;) {
		char *c = strchr(s, close);
		while (c) {
			char *o = c;
			while (o > s && o[-1] != open && o[-1] != close)
				o--;
			if (o > s && o[-1] == open)
				break;
			c = strchr(c + 1, close);
		}
		if (!c)
			return;
		char *o = c;
		while (o[-1] != open)
			o--;
		o--;
		char *end = c + 1;
		if (eat_const) {
			char *q = end;
			while (isspace((unsigned char)*q))
				q++;
			if (strncmp(q, "const", 5) == 0)
				end = q + 5;
		}
		memmove(o, end, strlen(end) + 1);
	}
}

static int is_word(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

char *stacks_short_name(const char *full, char *out, size_t cap)
{
	if (cap == 0)
		return out;
	snprintf(out, cap, "%s", full);
	strip_groups(out, '(', ')', 1);
	strip_groups(out, '<', '>', 0);
	/* s/^.*\s+(\w+::)/$1/: cut at the last blank that is followed by a word and "::". */
	char *cut = NULL;
	for (char *p = out; *p; p++) {
		if (!isspace((unsigned char)*p))
			continue;
		char *w = p + 1;
		char *q = w;
		while (is_word(*q))
			q++;
		if (q > w && q[0] == ':' && q[1] == ':')
			cut = w;
	}
	if (cut)
		memmove(out, cut, strlen(cut) + 1);
	return out;
}

static int grow_names(struct stacks *s, struct priv *pv)
{
	if (s->nnames < pv->names_cap)
		return 0;
	pv->names_cap = pv->names_cap ? pv->names_cap * 2 : 256;
	s->names = arena_xrealloc(s->names, pv->names_cap * sizeof(*s->names));
	pv->stamp = arena_xrealloc(pv->stamp, pv->names_cap * sizeof(*pv->stamp));
	return 0;
}

static void rehash_names(struct stacks *s, struct priv *pv)
{
	size_t cap = pv->nslot_cap ? pv->nslot_cap * 2 : 512;
	struct name_slot *ns = arena_xcalloc(cap, sizeof(*ns));
	for (size_t i = 0; i < s->nnames; i++) {
		size_t j = hash_str(s->names[i].name) & (cap - 1);
		while (ns[j].used)
			j = (j + 1) & (cap - 1);
		ns[j].used = 1;
		ns[j].id = (uint32_t)i;
	}
	free(pv->nslots);
	pv->nslots = ns;
	pv->nslot_cap = cap;
}

static uint32_t intern_name(struct stacks *s, struct priv *pv, const char *name, int inlined)
{
	if ((s->nnames + 1) * 2 > pv->nslot_cap)
		rehash_names(s, pv);
	size_t j = hash_str(name) & (pv->nslot_cap - 1);
	while (pv->nslots[j].used) {
		if (strcmp(s->names[pv->nslots[j].id].name, name) == 0)
			return pv->nslots[j].id;
		j = (j + 1) & (pv->nslot_cap - 1);
	}
	grow_names(s, pv);
	uint32_t id = (uint32_t)s->nnames++;
	char *copy = strdup(name);
	if (!copy)
		arena_oom();
	s->names[id] = (struct stacks_name){.name = copy, .inlined = inlined};
	pv->stamp[id] = UINT32_MAX;
	pv->nslots[j].used = 1;
	pv->nslots[j].id = id;
	return id;
}

long stacks_find(const struct stacks *s, const char *name)
{
	const struct priv *pv = s->priv;
	if (!pv || !pv->nslot_cap)
		return -1;
	size_t j = hash_str(name) & (pv->nslot_cap - 1);
	while (pv->nslots[j].used) {
		if (strcmp(s->names[pv->nslots[j].id].name, name) == 0)
			return pv->nslots[j].id;
		j = (j + 1) & (pv->nslot_cap - 1);
	}
	return -1;
}

/* Growable string for building names. */
struct sbuf {
	char *p;
	size_t n, cap;
};

static void sb_printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
	for (;;) {
		va_list ap;
		va_start(ap, fmt);
		int k = vsnprintf(b->p ? b->p + b->n : NULL, b->p ? b->cap - b->n : 0, fmt, ap);
		va_end(ap);
		if (k < 0)
			return;
		if (b->p && b->n + (size_t)k < b->cap) {
			b->n += (size_t)k;
			return;
		}
		b->cap = (b->n + (size_t)k + 1) * 2;
		b->p = arena_xrealloc(b->p, b->cap);
	}
}

static int rx_match(const regex_t *re, const char *s)
{
	return regexec(re, s, 0, NULL, 0) == 0;
}

/* Matches re against an address's strings the way jeprof's SymbolMatches does: the address,
   every (short) function name of its inline chain and every file:line. */
static int addr_matches(const regex_t *re, uint64_t addr, const struct prof_symbol *sym)
{
	char buf[4096];
	snprintf(buf, sizeof(buf), "0x%016llx", (unsigned long long)addr);
	if (rx_match(re, buf) || rx_match(re, buf + 2)) /* jeprof's key has no 0x */
		return 1;
	if (!sym)
		return 0;
	for (uint32_t i = 0; i < sym->nframes; i++) {
		const struct prof_frame *f = &sym->frames[i];
		if (f->func) {
			stacks_short_name(f->func, buf, sizeof(buf));
			if (rx_match(re, buf) || rx_match(re, f->func))
				return 1;
		}
		snprintf(buf, sizeof(buf), "%s:%d", f->file ? f->file : "??", f->line);
		if (rx_match(re, buf))
			return 1;
	}
	return 0;
}

/* Name of frame j (0 innermost) of addr's chain of n frames. */
/* "<module basename>+0x<file offset>" for an address without a name, when its mapping is
   known: the same across runs and address-space layouts, unlike the address. */
static int module_name(const struct profile *p, uint64_t addr, char *out, size_t cap)
{
	const struct prof_mapping *m = profile_find_mapping(p, addr);
	if (!m || !m->path || !m->path[0] || m->path[0] == '[')
		return 0;
	const char *base = strrchr(m->path, '/');
	base = base ? base + 1 : m->path;
	snprintf(out, cap, "%s+0x%llx", base, (unsigned long long)(addr - m->start + m->offset));
	return 1;
}

static void frame_name(struct sbuf *b, const struct stacks_options *o, uint64_t addr,
                       const struct prof_frame *f, int inlined, const char *modname, int mapped)
{
	char shortbuf[4096];
	const char *fn = NULL;
	if (f && f->func)
		fn = o->style == STACKS_SHORT ? stacks_short_name(f->func, shortbuf, sizeof(shortbuf)) : f->func;
	const char *isuf = inlined ? (o->style == STACKS_SHORT ? " (inline)" : "[inline]") : "";
	char fileline[4096];
	int have_file = f && f->file && f->file[0];
	/* Only the granularities that print it pay for it (one snprintf per frame otherwise). */
	int need_fileline = o->gran == GRAN_LINES || o->gran == GRAN_ADDRESSES ||
	                    (o->gran == GRAN_FUNCTIONS && !fn && o->style == STACKS_FULL && have_file);
	if (!need_fileline)
		fileline[0] = '\0';
	else if (have_file)
		snprintf(fileline, sizeof(fileline), "%s:%d", f->file, f->line);
	else if (fn && o->style == STACKS_SHORT)
		snprintf(fileline, sizeof(fileline), "??:?"); /* addr2line's answer jeprof shows */
	else
		snprintf(fileline, sizeof(fileline), "??:0");
	b->n = 0;
	if (b->p)
		b->p[0] = '\0';
	switch (o->gran) {
	case GRAN_FUNCTIONS:
		if (fn)
			sb_printf(b, "%s%s", fn, isuf);
		else if (o->style == STACKS_FULL && have_file)
			sb_printf(b, "%s%s", fileline, isuf);
		else if (modname)
			sb_printf(b, "%s", modname);
		else
			sb_printf(b, "0x%016llx", (unsigned long long)addr);
		break;
	case GRAN_LINES:
		if (!fn && !have_file && modname)
			sb_printf(b, "%s", modname);
		else if (!fn && !have_file && o->style == STACKS_SHORT)
			sb_printf(b, "0x%016llx ??:0", (unsigned long long)addr); /* as jeprof */
		else if (!fn && !have_file)
			sb_printf(b, "0x%016llx", (unsigned long long)addr);
		else if (o->style == STACKS_SHORT)
			sb_printf(b, "%s%s %s", fn ? fn : "??", isuf, fileline);
		else
			sb_printf(b, "%s %s%s", fn ? fn : "??", fileline, isuf);
		break;
	case GRAN_ADDRESSES:
		/* jeprof: the bare 16-digit address, then the function (its address when unknown). */
		if (fn)
			sb_printf(b, "%016llx %s%s %s", (unsigned long long)addr, fn, isuf, fileline);
		else
			sb_printf(b, "%016llx 0x%016llx%s %s", (unsigned long long)addr, (unsigned long long)addr,
			          isuf, fileline);
		break;
	case GRAN_FILES:
		if (have_file)
			sb_printf(b, "%s", f->file);
		else if ((fn || mapped) && o->style == STACKS_SHORT)
			sb_printf(b, "??:?"); /* jeprof: addr2line's unknown location, kept as a "file" */
		else
			sb_printf(b, "0x%016llx", (unsigned long long)addr);
		break;
	}
}

static struct fn_fact *fn_fact_of(struct priv *pv, const char *func)
{
	if ((pv->facts_n + 1) * 2 > pv->facts_cap) {
		size_t cap = pv->facts_cap ? pv->facts_cap * 2 : 1024;
		struct fn_fact *nf = arena_xcalloc(cap, sizeof(*nf));
		for (size_t i = 0; i < pv->facts_cap; i++) {
			if (!pv->facts[i].func)
				continue;
			size_t j = hash_mix64((uintptr_t)pv->facts[i].func) & (cap - 1);
			while (nf[j].func)
				j = (j + 1) & (cap - 1);
			nf[j] = pv->facts[i];
		}
		free(pv->facts);
		pv->facts = nf;
		pv->facts_cap = cap;
	}
	size_t j = hash_mix64((uintptr_t)func) & (pv->facts_cap - 1);
	while (pv->facts[j].func && pv->facts[j].func != func)
		j = (j + 1) & (pv->facts_cap - 1);
	if (!pv->facts[j].func) {
		pv->facts[j] = (struct fn_fact){.func = func, .alloc = -1};
		pv->facts_n++;
	}
	return &pv->facts[j];
}

/* stacks_is_allocator_full of a function name, once per name. */
static int fn_is_allocator(struct priv *pv, const char *full)
{
	struct fn_fact *f = fn_fact_of(pv, full);
	if (f->alloc < 0) {
		char sn[4096];
		stacks_short_name(full, sn, sizeof(sn));
		f->alloc = (signed char)stacks_is_allocator_full(full, sn);
	}
	return f->alloc;
}

/* 1 when addr (whose symbol is sym, or NULL) is an allocator frame: the outermost function of
   its inline chain is the allocator's by name (stacks_is_allocator_full), or the address lies
   in an allocator library. jemalloc's own frames lead its stacks; a stripped libjemalloc leaves
   most of them nameless (jeprof's nm look-up happens to call them "malloc"), so anything inside
   the allocator's library is the allocator's. */
static int addr_is_allocator(const struct profile *p, struct priv *pv, uint64_t addr, const struct prof_symbol *sym)
{
	if (sym && sym->nframes && sym->frames[sym->nframes - 1].func) {
		const char *full = sym->frames[sym->nframes - 1].func;
		if (pv) {
			if (fn_is_allocator(pv, full))
				return 1;
		} else {
			char sn[4096];
			stacks_short_name(full, sn, sizeof(sn));
			if (stacks_is_allocator_full(full, sn))
				return 1;
		}
	}
	const struct prof_mapping *m = profile_find_mapping(p, addr);
	const char *path = m && m->path ? m->path : sym && sym->module ? sym->module : NULL;
	return path && stacks_is_allocator_module(path);
}

static struct addr_info *addr_lookup(const struct profile *p, struct stacks *s, struct priv *pv,
                                     const struct stacks_options *o, int trim, uint64_t addr,
                                     struct sbuf *b)
{
	if ((pv->addr_n + 1) * 2 > pv->addr_cap) {
		size_t cap = pv->addr_cap ? pv->addr_cap * 2 : 1024;
		struct addr_info *na = arena_xcalloc(cap, sizeof(*na));
		for (size_t i = 0; i < pv->addr_cap; i++) {
			if (!pv->addrs[i].used)
				continue;
			size_t j = hash_mix64(pv->addrs[i].addr) & (cap - 1);
			while (na[j].used)
				j = (j + 1) & (cap - 1);
			na[j] = pv->addrs[i];
		}
		free(pv->addrs);
		pv->addrs = na;
		pv->addr_cap = cap;
	}
	size_t j = hash_mix64(addr) & (pv->addr_cap - 1);
	while (pv->addrs[j].used) {
		if (pv->addrs[j].addr == addr)
			return &pv->addrs[j];
		j = (j + 1) & (pv->addr_cap - 1);
	}
	struct addr_info *ai = &pv->addrs[j];
	pv->addr_n++;
	memset(ai, 0, sizeof(*ai));
	ai->used = 1;
	ai->addr = addr;

	const struct prof_symbol *sym = p->syms ? symtab_get(p->syms, addr) : NULL;
	uint32_t nf = sym ? sym->nframes : 0;
	uint32_t want = nf ? nf : 1;
	if (pv->pool_n + want > pv->pool_cap) {
		pv->pool_cap = (pv->pool_n + want) * 2;
		pv->pool = arena_xrealloc(pv->pool, pv->pool_cap * sizeof(*pv->pool));
	}
	ai->first = (uint32_t)pv->pool_n;
	char modbuf[512];
	const char *modname = NULL;
	int want_mod = o->unresolved == STACKS_UNRESOLVED_MODULE ||
	               (o->unresolved == STACKS_UNRESOLVED_DEFAULT && o->style == STACKS_FULL);
	if (want_mod && (nf == 0 || !sym->frames[nf - 1].func) && module_name(p, addr, modbuf, sizeof(modbuf)))
		modname = modbuf;
	int mapped = 0;
	if (o->gran == GRAN_FILES) {
		const struct prof_mapping *m = profile_find_mapping(p, addr);
		mapped = m && m->path && m->path[0] && m->path[0] != '[';
	}
	if (nf == 0) {
		frame_name(b, o, addr, NULL, 0, modname, mapped);
		pv->pool[pv->pool_n++] = intern_name(s, pv, b->p, 0);
	} else {
		for (uint32_t k = 0; k < nf; k++) {
			int inl = k + 1 < nf;
			/* At function granularity a named frame's name depends on the function only. */
			struct fn_fact *ff = o->gran == GRAN_FUNCTIONS && sym->frames[k].func
			                             ? fn_fact_of(pv, sym->frames[k].func) : NULL;
			if (ff && ff->name_id[inl]) {
				pv->pool[pv->pool_n++] = ff->name_id[inl] - 1;
				continue;
			}
			frame_name(b, o, addr, &sym->frames[k], inl, modname, mapped);
			uint32_t id = intern_name(s, pv, b->p, inl);
			pv->pool[pv->pool_n++] = id;
			if (ff)
				ff->name_id[inl] = id + 1;
		}
	}
	ai->n = (uint32_t)(pv->pool_n - ai->first);
	ai->outer = pv->pool[pv->pool_n - 1];
	if (trim) {
		ai->alloc = (unsigned char)addr_is_allocator(p, pv, addr, sym);
		/* Allocator code inlined into the caller (Rust's RawVec and Global::alloc_impl are):
		   its frames are cut from the inner end of the chain like whole frames. */
		for (uint32_t k = 0; !ai->alloc && k + 1 < nf; k++)
			if (sym->frames[k].func && fn_is_allocator(pv, sym->frames[k].func))
				ai->cut = k + 1;
	}
	if (o->focus)
		ai->focus = (unsigned char)addr_matches(o->focus, addr, sym);
	if (o->ignore)
		ai->ignore = (unsigned char)addr_matches(o->ignore, addr, sym);
	return ai;
}

void stacks_trim_allocator(struct profile *p)
{
	for (size_t i = 0; i < p->nsamples; i++) {
		struct prof_sample *sm = &p->samples[i];
		uint32_t cut = 0; /* frames to drop from the leaf side */
		for (uint32_t a = 0; a < sm->naddrs; a++)
			if (sm->addrs[a] <= 0x7fffffffffffffffULL &&
			    addr_is_allocator(p, NULL, sm->addrs[a], p->syms ? symtab_get(p->syms, sm->addrs[a]) : NULL))
				cut = a + 1;
		if (cut >= sm->naddrs)
			cut = sm->naddrs - 1; /* all allocator: keep the outermost frame and the value */
		sm->addrs += cut;
		sm->naddrs -= cut;
	}
	p->jemalloc_frames = 0;
	profile_compact(p);
}

void stacks_options_from(struct stacks_options *o, const struct common_args *a)
{
	memset(o, 0, sizeof(*o));
	o->value_index = a->value_index;
	o->gran = a->gran;
	o->style = STACKS_SHORT;
	o->focus = a->focus ? &a->focus_re : NULL;
	o->ignore = a->ignore ? &a->ignore_re : NULL;
	o->trim = a->keep_allocator ? 0 : -1;
	/* Frames without a name: "<library>+0x<offset>" unless the user asked for raw addresses. */
	o->unresolved = a->no_symbolize ? STACKS_UNRESOLVED_ADDRESS : STACKS_UNRESOLVED_MODULE;
}

int stacks_build(struct stacks *s, const struct profile *p, const struct stacks_options *o)
{
	memset(s, 0, sizeof(*s));
	struct priv *pv = arena_xcalloc(1, sizeof(*pv));
	s->priv = pv;
	int trim = o->trim != 0;
	/* Inline chains multiply a stack's frames. Real code averages a few frames per address;
	   a hostile input can name one address with thousands of inlined functions and repeat it
	   a million times (a few KB gzipped, gigabytes expanded). The expanded frames are held to
	   a multiple of the input's addresses, so memory stays proportional to the input. */
	size_t naddrs_in = 0;
	for (size_t i = 0; i < p->nsamples; i++)
		naddrs_in += p->samples[i].naddrs;
	size_t budget = STACKS_MIN_FRAMES;
	if (naddrs_in < (STACKS_MAX_FRAMES - budget) / STACKS_FRAMES_PER_ADDR)
		budget += naddrs_in * STACKS_FRAMES_PER_ADDR;
	else
		budget = STACKS_MAX_FRAMES;
	char subject[1024];
	arena_set_subject(p->source, subject, sizeof subject);
	progress_step("naming and summing stacks");
	int k = o->value_index;
	struct sbuf b = {0};
	struct addr_info *path = NULL; /* copies: the table may grow (and move) mid-sample */
	size_t path_cap = 0;
	size_t expanded = 0; /* frames of every trace so far, held to budget */

	for (size_t i = 0; i < p->nsamples; i++) {
		const struct prof_sample *sm = &p->samples[i];
		for (int v = 0; v < PV_COUNT; v++)
			s->total_v[v] += sm->v[v];
		double val = sm->v[k];
		s->total += val;
		if (val == 0)
			continue;
		if (sm->naddrs > path_cap) {
			path_cap = sm->naddrs * 2;
			path = arena_xrealloc(path, path_cap * sizeof(*path));
		}
		size_t np = 0;
		/* The table is bigger than the caches on huge dumps: start every slot's load now. */
		for (uint32_t a = 0; a < sm->naddrs && pv->addr_cap; a++)
			__builtin_prefetch(&pv->addrs[hash_mix64(sm->addrs[a]) & (pv->addr_cap - 1)]);
		for (uint32_t a = 0; a < sm->naddrs; a++) {
			uint64_t addr = sm->addrs[a];
			if (addr > 0x7fffffffffffffffULL)
				continue; /* jeprof drops these as fake entries */
			struct addr_info *ai = addr_lookup(p, s, pv, o, trim, addr, &b);
			if (ai->alloc) {
				np = 0; /* everything so far was inside the allocator */
				continue;
			}
			path[np] = *ai;
			if (ai->cut) {
				np = 0; /* so was everything so far, and the chain's inner end */
				path[0] = *ai;
				path[0].first += ai->cut;
				path[0].n -= ai->cut;
			}
			np++;
		}
		if (np == 0)
			continue;
		if (o->focus) {
			int hit = 0;
			for (size_t a = 0; a < np && !hit; a++)
				hit = path[a].focus;
			if (!hit)
				continue;
		}
		if (o->ignore) {
			int hit = 0;
			for (size_t a = 0; a < np && !hit; a++)
				hit = path[a].ignore;
			if (hit)
				continue;
		}
		/* Expand to names, root first: walk the path from the root, each chain from its end. */
		size_t nf = 0;
		for (size_t a = 0; a < np; a++)
			nf += path[a].n;
		if (nf > budget - expanded) {
			fprintf(stderr, "heaptap: %s: its %zu addresses expand to more than %zu frames with "
			        "their inlined functions; refusing an input that amplifies this much\n",
			        p->source && p->source[0] ? p->source : "profile", naddrs_in, budget);
			arena_set_subject(subject, NULL, 0);
			free(path);
			free(b.p);
			stacks_release(s);
			progress_step(NULL);
			return -1;
		}
		expanded += nf;
		int stream = o->sum_only || o->each;
		if (stream)
			pv->frames_n = 0; /* one trace at a time in the same block */
		if (pv->frames_n + nf > pv->frames_cap) {
			pv->frames_cap = (pv->frames_n + nf) * 2 + 1024;
			pv->frames = arena_xrealloc(pv->frames, pv->frames_cap * sizeof(*pv->frames));
		}
		size_t first = pv->frames_n;
		for (size_t a = np; a-- > 0;) {
			pv->frames[pv->frames_n++] = path[a].outer;
			for (uint32_t c = path[a].n - 1; c-- > 0;)
				pv->frames[pv->frames_n++] = pv->pool[path[a].first + c];
		}
		if (stream) {
			uint32_t *fr = pv->frames;
			s->kept_total += val;
			s->names[fr[nf - 1]].flat += val;
			uint32_t t = (uint32_t)i; /* a distinct stamp per sample */
			for (size_t f = 0; f < nf; f++) {
				if (pv->stamp[fr[f]] != t) {
					pv->stamp[fr[f]] = t;
					s->names[fr[f]].cum += val;
				}
			}
			if (o->each)
				o->each(o->each_ctx, fr, (uint32_t)nf, val, sm);
			continue;
		}
		if (s->ntraces == pv->traces_cap) {
			pv->traces_cap = pv->traces_cap ? pv->traces_cap * 2 : 256;
			s->traces = arena_xrealloc(s->traces, pv->traces_cap * sizeof(*s->traces));
			pv->trace_first = arena_xrealloc(pv->trace_first, pv->traces_cap * sizeof(*pv->trace_first));
		}
		uint32_t t = (uint32_t)s->ntraces++;
		struct stacks_trace *tr = &s->traces[t];
		tr->frames = NULL;
		tr->nframes = (uint32_t)nf;
		tr->value = val;
		memcpy(tr->v, sm->v, sizeof(tr->v));
		tr->sample = sm;
		pv->trace_first[t] = first;
		s->kept_total += val;
		uint32_t *fr = pv->frames + first;
		s->names[fr[nf - 1]].flat += val;
		for (size_t f = 0; f < nf; f++) {
			if (pv->stamp[fr[f]] != t) {
				pv->stamp[fr[f]] = t;
				s->names[fr[f]].cum += val;
			}
		}
	}
	for (size_t t = 0; t < s->ntraces; t++)
		s->traces[t].frames = pv->frames + pv->trace_first[t];
	arena_set_subject(subject, NULL, 0);
	progress_step(NULL);
	free(path);
	free(b.p);
	return 0;
}

void stacks_release(struct stacks *s)
{
	struct priv *pv = s->priv;
	for (size_t i = 0; i < s->nnames; i++)
		free((char *)s->names[i].name);
	free(s->names);
	free(s->traces);
	if (pv) {
		free(pv->addrs);
		free(pv->pool);
		free(pv->nslots);
		free(pv->stamp);
		free(pv->frames);
		free(pv->trace_first);
		free(pv->facts);
		free(pv);
	}
	memset(s, 0, sizeof(*s));
}

static const struct stacks *sort_ctx;
static int sort_by_cum;

static int cmp_rows(const void *x, const void *y)
{
	const struct stacks_name *a = &sort_ctx->names[*(const uint32_t *)x];
	const struct stacks_name *b = &sort_ctx->names[*(const uint32_t *)y];
	double va = sort_by_cum ? a->cum : a->flat, vb = sort_by_cum ? b->cum : b->flat;
	if (va != vb)
		return va > vb ? -1 : 1;
	return strcmp(a->name, b->name);
}

uint32_t *stacks_sorted(const struct stacks *s, int by_cum, size_t *n)
{
	uint32_t *ids = arena_xmalloc((s->nnames + 1) * sizeof(*ids));
	size_t m = 0;
	for (size_t i = 0; i < s->nnames; i++)
		if (s->names[i].flat != 0 || s->names[i].cum != 0)
			ids[m++] = (uint32_t)i;
	sort_ctx = s;
	sort_by_cum = by_cum;
	qsort(ids, m, sizeof(*ids), cmp_rows);
	*n = m;
	return ids;
}
