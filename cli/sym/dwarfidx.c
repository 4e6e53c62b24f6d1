/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * dwarfidx.c - the per-file DWARF address index: compile-unit ranges read up front, a CU's
 * list of functions on its first use, each function's DIE tree walked once on its first use
 * into disjoint "innermost function" segments, line numbers from libdw's sorted line tables.
 *
 * Why this exists instead of dwarf_getscopes / dwfl_module_addrsym per address: those rescan
 * a CU's DIE tree and the symbol table for every address (eu-addr2line -f -i takes minutes on
 * a large binary); here every DIE is read at most once and each address costs three binary
 * searches. This file does not know about ELF symbols, mappings or files on disk.
 */
#include "dwarfidx.h"
#include "../../base/bisect.h"

#include "demangle.h"

#include <dwarf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A subprogram or inlined subroutine. */
struct fnode {
	Dwarf_Off die_off;   /* its DIE, for the lazily resolved name */
	int32_t parent;      /* enclosing function node in the same CU, -1 for none */
	uint32_t call_file;  /* index in the CU's file table (inlined only), UINT32_MAX if none */
	uint32_t call_line;
	int inlined;
	const char *name;    /* resolved on first use; "" marks "no name" */
	int linkage;         /* name came from DW_AT_linkage_name */
};

/* A piece of code whose innermost function is node. Disjoint and sorted within a top. */
struct seg {
	uint64_t lo, hi;
	int32_t node;
};

/* A raw [lo, hi) range of a node at a nesting depth, before partitioning. */
struct ival {
	uint64_t lo, hi;
	int32_t node;
	int32_t depth;
};

/* A subprogram at CU or namespace level: walked (with everything inlined into it) the first
   time an address falls in it, never before. */
struct top {
	Dwarf_Off off;
	int loaded;
	struct seg *segs;
	size_t nsegs;
};

/* One address range of a top; a function split into hot and cold parts has several. */
struct toprange {
	uint64_t lo, hi;
	uint32_t top;
};

struct cu {
	Dwarf_Die die;       /* the CU DIE (or the split unit's DIE) */
	int indexed;         /* 1 once its top-level functions are listed */
	int has_ranges;      /* 1 when the CU DIE states its address ranges */
	struct top *tops;
	size_t ntops, tops_cap;
	struct toprange *tr; /* sorted by lo once indexed */
	size_t ntr, tr_cap;
	struct fnode *nodes; /* of every walked top; parents index this array */
	size_t nnodes, nodes_cap;
	Dwarf_Files *files;  /* for DW_AT_call_file; NULL until needed */
	size_t nfiles;
	int files_tried;
	/* Absolute file names (relative ones joined to DW_AT_comp_dir, as binutils prints
	   them), per index of the file table `named`, filled on first use. */
	Dwarf_Files *named;
	char **names;
	size_t nnames;
};

struct curange {
	uint64_t lo, hi;
	uint32_t cu;
};

/* Demangled names by the address of their mangled string in .debug_str: an inlined function
   has one abstract origin, so its thousands of inline instances demangle once. */
struct dcache {
	const char **keys;
	char **vals;
	size_t cap, n; /* cap is 0 or a power of two */
};

struct dwarfidx {
	Dwarf *dw;
	int demangle;
	struct dcache dc;
	struct cu *cus;
	size_t ncus;
	struct curange *ranges;
	size_t nranges;
	int rangeless_loaded; /* CUs without DW_AT_ranges/low_pc were indexed and added */
	int no_lines;         /* dwarfidx_set_lines(x, 0) */
	size_t nnodes_total, ntops_total, ntops_loaded;
};

/* ---- growable arrays ---- */

static int grow(void **v, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	size_t ncap = *cap ? *cap * 2 : 64;
	while (ncap < need)
		ncap *= 2;
	void *nv = realloc(*v, ncap * elem);
	if (!nv)
		return -1;
	*v = nv;
	*cap = ncap;
	return 0;
}

static int cmp_curange(const void *a, const void *b)
{
	const struct curange *x = a, *y = b;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->hi < y->hi ? -1 : x->hi > y->hi;
}

static int add_curange(struct dwarfidx *x, size_t *cap, uint64_t lo, uint64_t hi, size_t cu)
{
	if (hi <= lo || lo == 0)
		return 0;
	if (grow((void **)&x->ranges, cap, x->nranges + 1, sizeof(*x->ranges)) < 0)
		return -1;
	x->ranges[x->nranges++] = (struct curange){lo, hi, (uint32_t)cu};
	x->cus[cu].has_ranges = 1;
	return 0;
}

/* bisect key: element i of an array of section offsets */
static uint64_t u64_at(const void *ctx, size_t i)
{
	return ((const Dwarf_Off *)ctx)[i];
}

/* The CU whose unit DIE sits at offset off (cus are in section order), or -1. */
static ptrdiff_t cu_at(const struct dwarfidx *x, const Dwarf_Off *offs, Dwarf_Off off)
{
	size_t lo = bisect_count_lt(x->ncus, off, u64_at, offs);
	return lo < x->ncus && offs[lo] == off ? (ptrdiff_t)lo : -1;
}

struct dwarfidx *dwarfidx_new(Dwarf *dw, int demangle)
{
	struct dwarfidx *x = calloc(1, sizeof(*x));
	if (!x)
		return NULL;
	x->dw = dw;
	x->demangle = demangle;
	size_t cus_cap = 0, ranges_cap = 0, units_cap = 0;
	Dwarf_Die *units = NULL; /* the unit DIE of each CU (the skeleton's, for split units) */
	Dwarf_CU *cu = NULL;
	Dwarf_Half version;
	uint8_t unit_type;
	Dwarf_Die cudie, subdie;
	while (dwarf_get_units(dw, cu, &cu, &version, &unit_type, &cudie, &subdie) == 0) {
		if (unit_type == DW_UT_type || unit_type == DW_UT_split_type)
			continue;
		Dwarf_Die die = cudie;
		/* A skeleton unit's code lives in its split unit, when libdw found the .dwo. */
		if (unit_type == DW_UT_skeleton && dwarf_tag(&subdie) == DW_TAG_compile_unit)
			die = subdie;
		if (grow((void **)&x->cus, &cus_cap, x->ncus + 1, sizeof(*x->cus)) < 0 ||
		    grow((void **)&units, &units_cap, x->ncus + 1, sizeof(*units)) < 0)
			break;
		struct cu *c = &x->cus[x->ncus];
		memset(c, 0, sizeof(*c));
		c->die = die;
		units[x->ncus++] = cudie;
	}
	/* CU address ranges: .debug_aranges when the producer wrote it (one flat table, GCC),
	   else each CU DIE's DW_AT_ranges / low_pc (clang writes no aranges by default). */
	Dwarf_Off *offs = malloc((x->ncus ? x->ncus : 1) * sizeof(*offs));
	Dwarf_Aranges *ar;
	size_t nar = 0;
	if (offs && x->ncus && dwarf_getaranges(dw, &ar, &nar) == 0) {
		for (size_t i = 0; i < x->ncus; i++)
			offs[i] = dwarf_dieoffset(&units[i]);
		for (size_t i = 0; i < nar; i++) {
			Dwarf_Addr start;
			Dwarf_Word len;
			Dwarf_Off off;
			ptrdiff_t k;
			if (dwarf_getarangeinfo(dwarf_onearange(ar, i), &start, &len, &off) == 0 &&
			    (k = cu_at(x, offs, off)) >= 0 && add_curange(x, &ranges_cap, start, start + len, (size_t)k) < 0)
				break;
		}
	}
	free(offs);
	for (size_t i = 0; i < x->ncus; i++) {
		if (x->cus[i].has_ranges)
			continue;
		Dwarf_Addr base, lo, hi;
		ptrdiff_t off = 0;
		while ((off = dwarf_ranges(&units[i], off, &base, &lo, &hi)) > 0)
			if (add_curange(x, &ranges_cap, lo, hi, i) < 0)
				break;
	}
	free(units);
	if (x->nranges)
		qsort(x->ranges, x->nranges, sizeof(*x->ranges), cmp_curange);
	return x;
}

void dwarfidx_free(struct dwarfidx *x)
{
	if (!x)
		return;
	for (size_t i = 0; i < x->dc.cap; i++)
		free(x->dc.vals[i]);
	free(x->dc.keys);
	free(x->dc.vals);
	for (size_t i = 0; i < x->ncus; i++) {
		struct cu *c = &x->cus[i];
		for (size_t k = 0; k < c->ntops; k++)
			free(c->tops[k].segs);
		free(c->tops);
		free(c->tr);
		free(c->nodes);
		for (size_t k = 0; k < c->nnames; k++)
			free(c->names[k]);
		free(c->names);
	}
	free(x->cus);
	free(x->ranges);
	free(x);
}

/* ---- walking one CU ---- */

/* DIE nesting deeper than this is taken as corrupt input (it would only exhaust the stack). */
#define MAX_DIE_NESTING 512

struct walk {
	struct cu *c;
	int level;      /* DIE nesting of the current walk_children call */
	struct ival *iv;
	size_t niv, iv_cap;
	int failed;
};

/* What add_function needs of a DIE, gathered in ONE pass over its attributes (dwarf_attr
   would rescan them for each). */
struct fattrs {
	Dwarf_Attribute low, high;
	int has_low, has_high, has_ranges, has_call_file, has_call_line;
	Dwarf_Word call_file, call_line;
};

static int fattrs_cb(Dwarf_Attribute *a, void *arg)
{
	struct fattrs *f = arg;
	switch (dwarf_whatattr(a)) {
	case DW_AT_low_pc:
		f->low = *a;
		f->has_low = 1;
		break;
	case DW_AT_high_pc:
		f->high = *a;
		f->has_high = 1;
		break;
	case DW_AT_ranges:
		f->has_ranges = 1;
		break;
	case DW_AT_call_file:
		f->has_call_file = dwarf_formudata(a, &f->call_file) == 0;
		break;
	case DW_AT_call_line:
		f->has_call_line = dwarf_formudata(a, &f->call_line) == 0;
		break;
	default:
		break;
	}
	return DWARF_CB_OK;
}

static int32_t add_node(struct walk *w, Dwarf_Die *die, int32_t parent, int inlined,
                        const struct fattrs *fa)
{
	struct cu *c = w->c;
	if (grow((void **)&c->nodes, &c->nodes_cap, c->nnodes + 1, sizeof(*c->nodes)) < 0) {
		w->failed = 1;
		return -1;
	}
	struct fnode *n = &c->nodes[c->nnodes];
	memset(n, 0, sizeof(*n));
	n->die_off = dwarf_dieoffset(die);
	n->parent = parent;
	n->inlined = inlined;
	n->call_file = inlined && fa->has_call_file ? (uint32_t)fa->call_file : UINT32_MAX;
	n->call_line = inlined && fa->has_call_line ? (uint32_t)fa->call_line : 0;
	return (int32_t)c->nnodes++;
}

static void add_ival(struct walk *w, uint64_t lo, uint64_t hi, int32_t node, int depth)
{
	if (grow((void **)&w->iv, &w->iv_cap, w->niv + 1, sizeof(*w->iv)) < 0) {
		w->failed = 1;
		return;
	}
	w->iv[w->niv++] = (struct ival){lo, hi, node, depth};
}

static int form_is_address(unsigned int form)
{
	switch (form) {
	case DW_FORM_addr:
	case DW_FORM_addrx:
	case DW_FORM_addrx1:
	case DW_FORM_addrx2:
	case DW_FORM_addrx3:
	case DW_FORM_addrx4:
	case DW_FORM_GNU_addr_index:
		return 1;
	default:
		return 0;
	}
}

/* Adds the ranges of die as a function node; returns the node, or -1 when it has no code. */
static int32_t add_function(struct walk *w, Dwarf_Die *die, int32_t parent, int depth, int inlined)
{
	struct fattrs fa;
	memset(&fa, 0, sizeof(fa));
	if (dwarf_getattrs(die, fattrs_cb, &fa, 0) != 1)
		return -1;
	int32_t node = -1;
	if (fa.has_ranges) {
		Dwarf_Addr base, lo, hi;
		ptrdiff_t off = 0;
		while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
			if (hi <= lo)
				continue;
			if (node < 0 && (node = add_node(w, die, parent, inlined, &fa)) < 0)
				return -1;
			add_ival(w, lo, hi, node, depth);
		}
		return node;
	}
	if (!fa.has_low || !fa.has_high)
		return -1; /* a declaration or an abstract instance: no code */
	Dwarf_Addr lo, hi;
	Dwarf_Word len;
	if (dwarf_formaddr(&fa.low, &lo) != 0)
		return -1;
	if (form_is_address(dwarf_whatform(&fa.high))) {
		if (dwarf_formaddr(&fa.high, &hi) != 0)
			return -1;
	} else {
		if (dwarf_formudata(&fa.high, &len) != 0)
			return -1;
		hi = lo + len;
	}
	if (hi <= lo)
		return -1;
	if ((node = add_node(w, die, parent, inlined, &fa)) < 0)
		return -1;
	add_ival(w, lo, hi, node, depth);
	return node;
}

/* Walks the children of die; parent is the innermost enclosing function node. */
static void walk_children(struct walk *w, Dwarf_Die *die, int32_t parent, int depth)
{
	Dwarf_Die child;
	if (w->level >= MAX_DIE_NESTING || dwarf_child(die, &child) != 0)
		return;
	w->level++;
	do {
		int32_t node;
		switch (dwarf_tag(&child)) {
		case DW_TAG_subprogram:
		case DW_TAG_inlined_subroutine:
		case DW_TAG_entry_point:
			node = add_function(w, &child, parent, depth + 1,
			                    dwarf_tag(&child) == DW_TAG_inlined_subroutine);
			if (node >= 0)
				walk_children(w, &child, node, depth + 1);
			break;
		case DW_TAG_lexical_block:
		case DW_TAG_try_block:
		case DW_TAG_catch_block:
		case DW_TAG_with_stmt:
		case DW_TAG_namespace:
		case DW_TAG_module:
		case DW_TAG_common_block:
			walk_children(w, &child, parent, depth);
			break;
		default:
			/* Types, variables, parameters: no code inside (C++ member function
			   definitions sit at namespace level, pointing to their declaration). */
			break;
		}
	} while (!w->failed && dwarf_siblingof(&child, &child) == 0);
	w->level--;
}

static int cmp_ival(const void *a, const void *b)
{
	const struct ival *x = a, *y = b;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1; /* outer first */
	if (x->hi != y->hi)
		return x->hi > y->hi ? -1 : 1;       /* longer first */
	return x->node < y->node ? -1 : x->node > y->node;
}

struct segbuf {
	struct seg *v;
	size_t n, cap;
	int failed;
};

static void emit(struct segbuf *b, uint64_t lo, uint64_t hi, int32_t node)
{
	if (hi <= lo)
		return;
	if (b->n && b->v[b->n - 1].hi == lo && b->v[b->n - 1].node == node) {
		b->v[b->n - 1].hi = hi;
		return;
	}
	if (grow((void **)&b->v, &b->cap, b->n + 1, sizeof(*b->v)) < 0) {
		b->failed = 1;
		return;
	}
	b->v[b->n++] = (struct seg){lo, hi, node};
}

/*
 * Turns nested ranges into disjoint segments owned by the innermost range: a sweep over the
 * ranges sorted by start (outer first) with a stack of the open ones. Ranges that overlap
 * without nesting (broken DWARF) are clipped to their enclosing range.
 */
static void partition(struct walk *w, struct top *t)
{
	if (w->niv == 0)
		return;
	qsort(w->iv, w->niv, sizeof(*w->iv), cmp_ival);
	struct ival *stack = malloc((w->niv ? w->niv : 1) * sizeof(*stack));
	struct segbuf b = {0};
	if (!stack) {
		w->failed = 1;
		return;
	}
	size_t sp = 0;
	uint64_t cur = 0;
	for (size_t i = 0; i <= w->niv; i++) {
		const struct ival *iv = i < w->niv ? &w->iv[i] : NULL;
		/* Close every open range that ends before this one starts. */
		while (sp && (!iv || stack[sp - 1].hi <= iv->lo)) {
			struct ival *o = &stack[--sp];
			if (cur < o->hi) {
				emit(&b, cur > o->lo ? cur : o->lo, o->hi, o->node);
				cur = o->hi;
			}
		}
		if (!iv)
			break;
		struct ival n = *iv;
		if (sp) {
			struct ival *o = &stack[sp - 1];
			if (n.hi > o->hi)
				n.hi = o->hi;
			if (n.hi <= n.lo)
				continue;
			if (cur < n.lo)
				emit(&b, cur > o->lo ? cur : o->lo, n.lo, o->node);
		}
		stack[sp++] = n;
		cur = n.lo;
	}
	free(stack);
	if (b.failed) {
		free(b.v);
		w->failed = 1;
		return;
	}
	t->segs = b.v;
	t->nsegs = b.n;
}

static int cmp_toprange(const void *a, const void *b)
{
	const struct toprange *x = a, *y = b;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->hi < y->hi ? -1 : x->hi > y->hi;
}

/* Lists the functions with code among the children of die (descending into namespaces),
   without entering them. */
static void index_children(struct cu *c, Dwarf_Die *die, int level)
{
	Dwarf_Die child;
	if (level >= MAX_DIE_NESTING || dwarf_child(die, &child) != 0)
		return;
	do {
		switch (dwarf_tag(&child)) {
		case DW_TAG_subprogram: {
			Dwarf_Addr base, lo, hi;
			ptrdiff_t off = 0;
			int32_t t = -1;
			while ((off = dwarf_ranges(&child, off, &base, &lo, &hi)) > 0) {
				if (hi <= lo)
					continue;
				if (t < 0) {
					if (grow((void **)&c->tops, &c->tops_cap, c->ntops + 1, sizeof(*c->tops)) < 0)
						return;
					t = (int32_t)c->ntops++;
					c->tops[t] = (struct top){dwarf_dieoffset(&child), 0, NULL, 0};
				}
				if (grow((void **)&c->tr, &c->tr_cap, c->ntr + 1, sizeof(*c->tr)) < 0)
					return;
				c->tr[c->ntr++] = (struct toprange){lo, hi, (uint32_t)t};
			}
			break;
		}
		case DW_TAG_namespace:
		case DW_TAG_module:
		case DW_TAG_lexical_block:
			index_children(c, &child, level + 1);
			break;
		default:
			break;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
}

static void index_cu(struct dwarfidx *x, struct cu *c)
{
	if (c->indexed)
		return;
	c->indexed = 1;
	index_children(c, &c->die, 0);
	if (c->ntr)
		qsort(c->tr, c->ntr, sizeof(*c->tr), cmp_toprange);
	x->ntops_total += c->ntops;
}

/* Walks one top-level function and everything inlined into it into its segments. */
static void load_top(struct dwarfidx *x, struct cu *c, struct top *t)
{
	if (t->loaded)
		return;
	t->loaded = 1;
	x->ntops_loaded++;
	Dwarf_Die die;
	if (!dwarf_offdie(x->dw, t->off, &die))
		return;
	size_t before = c->nnodes;
	struct walk w = {.c = c};
	int32_t node = add_function(&w, &die, -1, 0, 0);
	if (node >= 0 && !w.failed)
		walk_children(&w, &die, node, 0);
	if (!w.failed)
		partition(&w, t);
	free(w.iv);
	x->nnodes_total += c->nnodes - before;
}

/* Indexes every CU that did not state its ranges, and adds its functions' ranges as CU ranges. */
static void load_rangeless(struct dwarfidx *x)
{
	x->rangeless_loaded = 1;
	size_t cap = x->nranges;
	int added = 0;
	for (size_t i = 0; i < x->ncus; i++) {
		struct cu *c = &x->cus[i];
		if (c->has_ranges)
			continue;
		index_cu(x, c);
		for (size_t k = 0; k < c->ntr; k++) {
			if (grow((void **)&x->ranges, &cap, x->nranges + 1, sizeof(*x->ranges)) < 0)
				return;
			x->ranges[x->nranges++] = (struct curange){c->tr[k].lo, c->tr[k].hi, (uint32_t)i};
			added = 1;
		}
	}
	if (added)
		qsort(x->ranges, x->nranges, sizeof(*x->ranges), cmp_curange);
}

/* ---- look-ups ---- */

/* bisect keys: the starts of CU ranges, of top-level ranges and of segments */
static uint64_t curange_lo(const void *ctx, size_t i)
{
	return ((const struct curange *)ctx)[i].lo;
}

static struct cu *find_cu(struct dwarfidx *x, uint64_t vaddr)
{
	size_t lo = bisect_count_le(x->nranges, vaddr, curange_lo, x->ranges);
	/* Ranges of different CUs rarely overlap; look back a little in case they do. */
	for (size_t k = lo, steps = 0; k > 0 && steps < 16; k--, steps++) {
		const struct curange *r = &x->ranges[k - 1];
		if (vaddr < r->hi)
			return &x->cus[r->cu];
	}
	return NULL;
}

static uint64_t toprange_lo(const void *ctx, size_t i)
{
	return ((const struct toprange *)ctx)[i].lo;
}

static struct top *find_top(struct cu *c, uint64_t vaddr)
{
	size_t lo = bisect_count_le(c->ntr, vaddr, toprange_lo, c->tr);
	if (lo == 0 || vaddr >= c->tr[lo - 1].hi)
		return NULL;
	return &c->tops[c->tr[lo - 1].top];
}

static uint64_t seg_lo(const void *ctx, size_t i)
{
	return ((const struct seg *)ctx)[i].lo;
}

static const struct seg *find_seg(const struct top *t, uint64_t vaddr)
{
	size_t lo = bisect_count_le(t->nsegs, vaddr, seg_lo, t->segs);
	if (lo == 0 || vaddr >= t->segs[lo - 1].hi)
		return NULL;
	return &t->segs[lo - 1];
}

static const char *attr_string(Dwarf_Die *die, int name)
{
	Dwarf_Attribute a;
	if (!dwarf_attr_integrate(die, name, &a))
		return NULL;
	return dwarf_formstring(&a);
}

static size_t ptr_hash(const void *p, size_t mask)
{
	uint64_t h = (uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ull;
	return (size_t)(h >> 32) & mask;
}

/* Returns the demangled form of link (cached), or link itself when it does not demangle. */
static const char *demangled(struct dwarfidx *x, const char *link)
{
	struct dcache *d = &x->dc;
	if (d->n * 2 >= d->cap) {
		size_t ncap = d->cap ? d->cap * 2 : 1024;
		const char **nk = calloc(ncap, sizeof(*nk));
		char **nv = calloc(ncap, sizeof(*nv));
		if (!nk || !nv) {
			free(nk);
			free(nv);
			return link;
		}
		for (size_t i = 0; i < d->cap; i++) {
			if (!d->keys[i])
				continue;
			size_t j = ptr_hash(d->keys[i], ncap - 1);
			while (nk[j])
				j = (j + 1) & (ncap - 1);
			nk[j] = d->keys[i];
			nv[j] = d->vals[i];
		}
		free(d->keys);
		free(d->vals);
		d->keys = nk;
		d->vals = nv;
		d->cap = ncap;
	}
	size_t j = ptr_hash(link, d->cap - 1);
	while (d->keys[j] && d->keys[j] != link)
		j = (j + 1) & (d->cap - 1);
	if (!d->keys[j]) {
		d->keys[j] = link;
		d->vals[j] = demangle_name(link); /* NULL: not mangled, shown as is */
		d->n++;
	}
	return d->vals[j] ? d->vals[j] : link;
}

static const char *node_name(struct dwarfidx *x, struct fnode *n)
{
	if (n->name)
		return n->name[0] ? n->name : NULL;
	Dwarf_Die die;
	const char *nm = NULL;
	if (dwarf_offdie(x->dw, n->die_off, &die)) {
		const char *link = attr_string(&die, DW_AT_linkage_name);
		if (!link)
			link = attr_string(&die, DW_AT_MIPS_linkage_name);
		if (link) {
			n->linkage = 1;
			nm = x->demangle ? demangled(x, link) : link;
		} else {
			nm = attr_string(&die, DW_AT_name);
		}
	}
	n->name = nm ? nm : ""; /* into libdw's string section or the demangling cache */
	return nm;
}

/* The name of entry idx of file table files (of CU c), absolute when the CU says where it
   was compiled. The string lives until dwarfidx_free. */
static const char *file_name(struct cu *c, Dwarf_Files *files, size_t idx)
{
	const char *name = dwarf_filesrc(files, idx, NULL, NULL);
	if (!name || name[0] == '/')
		return name;
	if (files != c->named) {
		size_t n = 0;
		if (dwarf_getsrcfiles(&c->die, &files, &n) != 0)
			return name;
		for (size_t k = 0; k < c->nnames; k++)
			free(c->names[k]);
		free(c->names);
		c->names = calloc(n ? n : 1, sizeof(*c->names));
		c->nnames = c->names ? n : 0;
		c->named = files;
	}
	if (idx >= c->nnames)
		return name;
	if (!c->names[idx]) {
		Dwarf_Attribute a;
		const char *dir = dwarf_formstring(dwarf_attr(&c->die, DW_AT_comp_dir, &a));
		if (!dir || asprintf(&c->names[idx], "%s/%s", dir, name) < 0)
			return name;
	}
	return c->names[idx];
}

static const char *cu_file(struct cu *c, uint32_t idx)
{
	if (!c->files_tried) {
		c->files_tried = 1;
		if (dwarf_getsrcfiles(&c->die, &c->files, &c->nfiles) != 0)
			c->files = NULL;
	}
	if (!c->files || idx >= c->nfiles)
		return NULL;
	return file_name(c, c->files, idx);
}

void dwarfidx_set_lines(struct dwarfidx *x, int lines)
{
	x->no_lines = !lines;
}

/* The line table's file:line of vaddr in c, or file NULL / line 0. */
static void line_of(struct cu *c, uint64_t vaddr, const char **file, int *line)
{
	*file = NULL;
	*line = 0;
	Dwarf_Line *ln = dwarf_getsrc_die(&c->die, vaddr);
	if (ln) {
		Dwarf_Files *lf;
		size_t fidx;
		*file = dwarf_line_file(ln, &lf, &fidx) == 0 ? file_name(c, lf, fidx) : dwarf_linesrc(ln, NULL, NULL);
		if (dwarf_lineno(ln, line) != 0)
			*line = 0;
	}
}

int dwarfidx_lookup(struct dwarfidx *x, uint64_t vaddr, struct dwarfidx_frame *out, int max)
{
	if (max <= 0)
		return 0;
	struct cu *c = find_cu(x, vaddr);
	if (!c && !x->rangeless_loaded) {
		load_rangeless(x);
		c = find_cu(x, vaddr);
	}
	if (!c)
		return 0;
	index_cu(x, c);
	struct top *t = find_top(c, vaddr);
	if (t)
		load_top(x, c, t);
	const struct seg *s = t ? find_seg(t, vaddr) : NULL;
	const char *file = NULL;
	int line = 0;
	if (!s || !x->no_lines)
		line_of(c, vaddr, &file, &line);
	if (!s) {
		if (!file)
			return 0;
		out[0] = (struct dwarfidx_frame){NULL, file, line, 0};
		return 1;
	}
	int n = 0;
	int32_t k = s->node;
	while (k >= 0 && n < max) {
		struct fnode *nd = &c->nodes[k];
		const char *nm = node_name(x, nd);
		out[n++] = (struct dwarfidx_frame){nm, file, line, nd->linkage};
		if (!nd->inlined)
			break;
		/* The caller's position is this inline's call site. */
		file = nd->call_file != UINT32_MAX && !x->no_lines ? cu_file(c, nd->call_file) : NULL;
		line = x->no_lines ? 0 : (int)nd->call_line;
		k = nd->parent;
	}
	return n;
}

void dwarfidx_stats(const struct dwarfidx *x, struct dwarfidx_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->ncus = x->ncus;
	for (size_t i = 0; i < x->ncus; i++)
		st->ncus_indexed += x->cus[i].indexed;
	st->nfuncs = x->ntops_total;
	st->nfuncs_walked = x->ntops_loaded;
	st->nnodes = x->nnodes_total;
}
