/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cli_stacks.c - unit test of cli/stacks.c and render/text.c on a hand-made profile with
 * known symbols: jeprof's short names and allocator skip list, flat/cum with recursion counted
 * once, allocator trimming by name and by library, inline naming in both styles, granularity,
 * focus/ignore after the total, the sort order, and the exact --text rows.
 */
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../cli/common.h"
#include "../../cli/render/text.h"
#include "../../cli/stacks.h"
#include "../../profile/symtab.h"
#include "check.h"



static void check_short(const char *full, const char *want)
{
	char buf[256];
	stacks_short_name(full, buf, sizeof(buf));
	CHECK(strcmp(buf, want) == 0, "short name of '%s' is '%s', want '%s'", full, buf, want);
}

static void put1(struct prof_symtab *t, uint64_t addr, const char *func, const char *file, int line)
{
	struct prof_frame f = {func, file, line};
	symtab_put(t, addr, &f, 1, "/bin/app");
}

static void add(struct profile *p, double bytes, double objs, int n, ...)
{
	uint64_t a[16];
	va_list ap;
	va_start(ap, n);
	for (int i = 0; i < n; i++)
		a[i] = va_arg(ap, uint64_t);
	va_end(ap);
	double v[PV_COUNT] = {objs, bytes, 0, 0};
	profile_add(p, a, (uint32_t)n, v);
}

static const struct stacks_name *find(const struct stacks *s, const char *name)
{
	long id = stacks_find(s, name);
	return id < 0 ? NULL : &s->names[id];
}

static void check_fc(const struct stacks *s, const char *name, double flat, double cum)
{
	const struct stacks_name *n = find(s, name);
	CHECK(n != NULL, "no name '%s'", name);
	if (n)
		CHECK(n->flat == flat && n->cum == cum, "%s: flat %g cum %g, want %g %g", name, n->flat, n->cum, flat, cum);
}

/* The frames of the first trace whose leaf is `leaf`, joined with ';'. */
static void trace_of(const struct stacks *s, const char *leaf, char *out, size_t cap)
{
	out[0] = '\0';
	for (size_t t = 0; t < s->ntraces; t++) {
		const struct stacks_trace *tr = &s->traces[t];
		if (strcmp(s->names[tr->frames[tr->nframes - 1]].name, leaf) != 0)
			continue;
		size_t len = 0;
		for (uint32_t f = 0; f < tr->nframes; f++)
			len += (size_t)snprintf(out + len, cap - len, "%s%s", f ? ";" : "", s->names[tr->frames[f]].name);
		return;
	}
}

int main(void)
{
	/* jeprof's ShortFunctionName */
	check_short("foo(int, char const*)", "foo");
	check_short("std::vector<int, std::allocator<int> >::push_back(int const&)", "std::vector::push_back");
	check_short("void ns::Foo<int>::bar(int) const", "ns::Foo::bar");
	check_short("operator new(unsigned long)", "operator new");
	check_short("(anonymous namespace)::f(int)", "::f");
	check_short("void foo<int>(int)", "void foo");
	check_short("plain", "plain");

	CHECK(stacks_is_allocator("malloc"), "malloc");
	CHECK(stacks_is_allocator("_malloc"), "_malloc");
	CHECK(stacks_is_allocator("operator new"), "operator new");
	CHECK(stacks_is_allocator("tc_newarray"), "tc_newarray");
	CHECK(stacks_is_allocator("TCMallocImplementation::Alloc"), "TCMalloc regexp");
	CHECK(stacks_is_allocator("tcmalloc::allocate_full"), "^tcmalloc::");
	CHECK(!stacks_is_allocator("my_malloc"), "my_malloc is not the allocator");
	CHECK(!stacks_is_allocator("operator"), "operator");
	CHECK(stacks_is_allocator_module("/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"), "libjemalloc");
	CHECK(!stacks_is_allocator_module("/usr/lib/libc.so.6"), "libc");

	struct profile p;
	profile_init(&p);
	p.syms = symtab_new();
	put1(p.syms, 0x10, "leaf(int)", "/src/a.c", 12);
	put1(p.syms, 0x20, "mid", "/src/a.c", 20);
	put1(p.syms, 0x30, "main", "/src/main.c", 5);
	put1(p.syms, 0x40, "rec", "/src/a.c", 40);
	put1(p.syms, 0x50, "malloc", NULL, 0);
	struct prof_frame chain[2] = {{"inl_callee", "/src/h.h", 7}, {"outer", "/src/a.c", 60}};
	symtab_put(p.syms, 0x60, chain, 2, "/bin/app");
	symtab_put(p.syms, 0x70, NULL, 0, NULL);
	profile_add_mapping(&p, 0x80, 0x90, 0, "/usr/lib/libjemalloc.so.2", NULL);
	profile_add_mapping(&p, 0x10, 0x80, 0, "/bin/app", NULL);

	add(&p, 100, 1, 3, 0x10ULL, 0x20ULL, 0x30ULL);
	add(&p, 50, 2, 3, 0x40ULL, 0x40ULL, 0x30ULL);     /* rec -> rec */
	add(&p, 25, 1, 3, 0x50ULL, 0x10ULL, 0x30ULL);     /* malloc at the leaf */
	add(&p, 10, 1, 2, 0x60ULL, 0x30ULL);              /* inline chain */
	add(&p, 5, 1, 2, 0x70ULL, 0x30ULL);               /* unresolved */
	add(&p, 7, 1, 4, 0x85ULL, 0x50ULL, 0x10ULL, 0x30ULL); /* inside libjemalloc, then malloc */

	struct stacks_options o = {.value_index = PV_INUSE_BYTES, .gran = GRAN_FUNCTIONS, .style = STACKS_SHORT, .trim = 1};
	struct stacks s;
	CHECK(stacks_build(&s, &p, &o) == 0, "build");
	CHECK(s.total == 197, "total %g", s.total);
	CHECK(s.kept_total == 197, "kept total %g", s.kept_total);
	check_fc(&s, "leaf", 132, 132);
	check_fc(&s, "rec", 50, 50); /* once per stack, not 100 */
	check_fc(&s, "main", 0, 197);
	check_fc(&s, "mid", 0, 100);
	check_fc(&s, "inl_callee (inline)", 10, 10);
	check_fc(&s, "outer", 0, 10);
	check_fc(&s, "0x0000000000000070", 5, 5);
	/* Trimmed frames may be named, but carry nothing. */
	CHECK(!find(&s, "malloc") || find(&s, "malloc")->cum == 0, "malloc was not trimmed");
	CHECK(!find(&s, "0x0000000000000085") || find(&s, "0x0000000000000085")->cum == 0,
	      "libjemalloc frame was not trimmed");
	char buf[512];
	trace_of(&s, "inl_callee (inline)", buf, sizeof(buf));
	CHECK(strcmp(buf, "main;outer;inl_callee (inline)") == 0, "inline trace '%s'", buf);
	trace_of(&s, "rec", buf, sizeof(buf));
	CHECK(strcmp(buf, "main;rec;rec") == 0, "recursive trace keeps both frames: '%s'", buf);

	size_t n;
	uint32_t *ids = stacks_sorted(&s, 0, &n);
	const char *order[] = {"leaf", "rec", "inl_callee (inline)", "0x0000000000000070", "main", "mid", "outer"};
	CHECK(n == 7, "%zu rows", n);
	for (size_t i = 0; i < n && i < 7; i++)
		CHECK(strcmp(s.names[ids[i]].name, order[i]) == 0, "row %zu is %s, want %s", i, s.names[ids[i]].name, order[i]);
	free(ids);

	/* The --text layout, byte for byte. */
	struct common_args a;
	memset(&a, 0, sizeof(a));
	a.value_index = PV_INUSE_BYTES;
	a.show_bytes = 1;
	char *text = NULL;
	size_t tlen = 0;
	FILE *mf = open_memstream(&text, &tlen);
	text_write_top(mf, &a, &s, 3);
	fclose(mf);
	const char *want =
		"Total: 197 B\n"
		"     132  67.0%  67.0%      132  67.0% leaf\n"
		"      50  25.4%  92.4%       50  25.4% rec\n"
		"      10   5.1%  97.5%       10   5.1% inl_callee (inline)\n";
	CHECK(strcmp(text, want) == 0, "text:\n%s\nwant:\n%s", text, want);
	free(text);
	stacks_release(&s);

	/* Without trimming, malloc and the libjemalloc frame are leaves. */
	o.trim = 0;
	stacks_build(&s, &p, &o);
	check_fc(&s, "malloc", 25, 32);
	check_fc(&s, "0x0000000000000085", 7, 7);
	stacks_release(&s);

	/* Full names (collapsed style), lines granularity, files. */
	o.trim = 1;
	o.style = STACKS_FULL;
	stacks_build(&s, &p, &o);
	trace_of(&s, "inl_callee[inline]", buf, sizeof(buf));
	CHECK(strcmp(buf, "main;outer;inl_callee[inline]") == 0, "full inline trace '%s'", buf);
	CHECK(find(&s, "leaf(int)") != NULL, "full name keeps the arguments");
	check_fc(&s, "app+0x60", 5, 5); /* unresolved: module and file offset (0x70 - 0x10), stable across runs */
	stacks_release(&s);
	o.unresolved = STACKS_UNRESOLVED_ADDRESS;
	stacks_build(&s, &p, &o);
	check_fc(&s, "0x0000000000000070", 5, 5);
	stacks_release(&s);
	o.unresolved = STACKS_UNRESOLVED_DEFAULT;
	o.style = STACKS_SHORT;
	o.gran = GRAN_LINES;
	stacks_build(&s, &p, &o);
	check_fc(&s, "leaf /src/a.c:12", 132, 132);
	check_fc(&s, "inl_callee (inline) /src/h.h:7", 10, 10);
	stacks_release(&s);
	o.gran = GRAN_FILES;
	stacks_build(&s, &p, &o);
	check_fc(&s, "/src/a.c", 182, 192); /* the inline stack ends in h.h */
	check_fc(&s, "/src/h.h", 10, 10);
	check_fc(&s, "/src/main.c", 0, 197);
	stacks_release(&s);

	/* Focus and ignore apply after the total. */
	regex_t re;
	regcomp(&re, "^mid$", REG_EXTENDED | REG_NOSUB);
	o.gran = GRAN_FUNCTIONS;
	o.focus = &re;
	stacks_build(&s, &p, &o);
	CHECK(s.total == 197 && s.kept_total == 100, "focus totals %g %g", s.total, s.kept_total);
	check_fc(&s, "leaf", 100, 100);
	stacks_release(&s);
	regfree(&re);
	regcomp(&re, "rec|/src/h\\.h", REG_EXTENDED | REG_NOSUB);
	o.focus = NULL;
	o.ignore = &re;
	stacks_build(&s, &p, &o);
	CHECK(s.kept_total == 137, "ignore kept %g", s.kept_total);
	CHECK(find(&s, "rec") == NULL || find(&s, "rec")->cum == 0, "rec ignored");
	stacks_release(&s);
	regfree(&re);

	/* Objects. */
	o.ignore = NULL;
	o.value_index = PV_INUSE_OBJS;
	stacks_build(&s, &p, &o);
	CHECK(s.total == 7, "objects total %g", s.total);
	check_fc(&s, "rec", 2, 2);
	stacks_release(&s);

	profile_release(&p);

	/* One deep stack of 5000 distinct addresses: the address table grows (and moves) while the
	   sample is being walked. Every frame is unresolved, so each is its own name. */
	profile_init(&p);
	uint64_t deep[5000];
	for (int i = 0; i < 5000; i++)
		deep[i] = 0x100000 + (uint64_t)i * 16;
	double dv[PV_COUNT] = {1, 64, 0, 0};
	profile_add(&p, deep, 5000, dv);
	profile_add(&p, deep + 4000, 1000, dv);
	o = (struct stacks_options){.value_index = PV_INUSE_BYTES, .style = STACKS_SHORT, .trim = 0};
	CHECK(stacks_build(&s, &p, &o) == 0, "deep build");
	CHECK(s.ntraces == 2 && s.traces[0].nframes == 5000, "deep traces");
	check_fc(&s, "0x0000000000100000", 64, 64);
	check_fc(&s, "0x000000000010fa00", 64, 128); /* deep[4000]: leaf of the second stack */
	check_fc(&s, "0x0000000000113870", 0, 128);  /* deep[4999]: the shared root */
	stacks_release(&s);
	profile_release(&p);
	/* Invariants on random profiles (fixed seed): flat sums to the kept total, no cum exceeds
	   it or falls below the flat, every trace's leaf carries its value, and the sort order holds. */
	uint64_t seed = 0x9e3779b97f4a7c15ULL;
	for (int round = 0; round < 20; round++) {
		profile_init(&p);
		p.syms = symtab_new();
		for (uint64_t ad = 1; ad <= 40; ad++) {
			char fn[32];
			snprintf(fn, sizeof(fn), "f%llu", (unsigned long long)(ad % 25)); /* shared names */
			if (ad % 7 == 0) {
				struct prof_frame ch[2] = {{fn, "x.c", (int)ad}, {"outer", "x.c", 1}};
				symtab_put(p.syms, ad * 16, ch, 2, NULL);
			} else if (ad % 11 != 0) {
				put1(p.syms, ad * 16, ad % 13 == 0 ? "malloc" : fn, "x.c", (int)ad);
			}
		}
		for (int i = 0; i < 200; i++) {
			uint64_t st[12];
			seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
			uint32_t depth = 1 + (uint32_t)((seed >> 33) % 12);
			for (uint32_t k = 0; k < depth; k++) {
				seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
				st[k] = 16 * (1 + (seed >> 33) % 40);
			}
			double v[PV_COUNT] = {1, (double)(1 + (seed >> 40) % 1000), 0, 0};
			profile_add(&p, st, depth, v);
		}
		o = (struct stacks_options){.value_index = PV_INUSE_BYTES, .style = (enum stacks_style)(round & 1),
		                            .gran = (enum common_gran)(round % 4), .trim = 1};
		stacks_build(&s, &p, &o);
		double flat = 0, leaf = 0;
		for (size_t i = 0; i < s.nnames; i++) {
			flat += s.names[i].flat;
			CHECK(s.names[i].cum <= s.kept_total + 1e-6, "round %d: cum of %s above the total", round, s.names[i].name);
			CHECK(s.names[i].cum + 1e-6 >= s.names[i].flat, "round %d: cum below flat for %s", round, s.names[i].name);
		}
		for (size_t t = 0; t < s.ntraces; t++)
			leaf += s.traces[t].value;
		CHECK(flat > s.kept_total - 1e-6 && flat < s.kept_total + 1e-6, "round %d: flat %g != kept %g", round, flat, s.kept_total);
		CHECK(leaf > s.kept_total - 1e-6 && leaf < s.kept_total + 1e-6, "round %d: traces %g != kept %g", round, leaf, s.kept_total);
		CHECK(s.kept_total <= s.total + 1e-6, "round %d: kept above total", round);
		ids = stacks_sorted(&s, round & 2, &n);
		for (size_t i = 1; i < n; i++) {
			const struct stacks_name *x = &s.names[ids[i - 1]], *y = &s.names[ids[i]];
			double vx = (round & 2) ? x->cum : x->flat, vy = (round & 2) ? y->cum : y->flat;
			CHECK(vx > vy || (vx == vy && strcmp(x->name, y->name) < 0), "round %d: order at %zu", round, i);
		}
		free(ids);
		stacks_release(&s);
		profile_release(&p);
	}

	return check_finish("cli_stacks");
}
