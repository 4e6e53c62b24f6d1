/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cli_sym_profile.c - unit test of symbolize_profile's policy on a profile built in memory
 * from this very process: its own /proc/self/maps as the mappings and return addresses taken
 * here as the stacks. Checks functions, files and lines of our own code (PIE, at the random
 * base ASLR chose), that every unique address gets exactly one entry, that special mappings
 * ([vdso], anonymous) and addresses outside every mapping stay unresolved, that symbols the
 * profile already carried are kept, that a missing file leaves its frames raw, and --no-inlines.
 */
#include "../../cli/sym/symbolize.h"
#include "../../profile/symtab.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"

static int probe_line;

/* Returns the lookup address of the call below (return address - 1), and where it is. */
__attribute__((noinline)) static uint64_t probe_callee(void)
{
	return (uint64_t)(uintptr_t)__builtin_return_address(0) - 1;
}

__attribute__((noinline)) static uint64_t probe_target(void)
{
	probe_line = __LINE__ + 1;
	uint64_t a = probe_callee();
	__asm__ volatile("" ::: "memory");
	return a;
}

/* Adds every mapping of /proc/self/maps to p; returns the [vdso] start (0 if none). */
static uint64_t add_self_maps(struct profile *p)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096];
	uint64_t vdso = 0;
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi, off;
		char perms[8], path[4096] = "";
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095[^\n]", &lo, &hi, perms, &off, path) < 4)
			continue;
		if (perms[2] != 'x')
			continue;
		char *s = path;
		while (*s == ' ')
			s++;
		if (strcmp(s, "[vdso]") == 0)
			vdso = lo;
		profile_add_mapping(p, lo, hi, off, s, NULL);
	}
	if (f)
		fclose(f);
	return vdso;
}

static const char *base(const char *s)
{
	const char *b = s ? strrchr(s, '/') : NULL;
	return b ? b + 1 : s;
}

int main(void)
{
	struct profile p;
	profile_init(&p);
	uint64_t vdso = add_self_maps(&p);
	uint64_t here = probe_target();
	/* A mapping for a file that does not exist, and an address in it. */
	profile_add_mapping(&p, 0x10000, 0x20000, 0, "/nonexistent/heaptap-test/libgone.so", NULL);
	uint64_t gone = 0x10100, nowhere = 0x1000; /* below every mapping */
	/* An address whose symbol the "input" already carried. */
	uint64_t presym = here + 1;
	p.syms = symtab_new();
	struct prof_frame pre = {"from_the_input", "input.c", 7};
	symtab_put(p.syms, presym, &pre, 1, NULL);

	const double v[PV_COUNT] = {1, 100, 0, 0};
	uint64_t s1[] = {here, presym, gone};
	uint64_t s2[] = {here, nowhere};
	profile_add(&p, s1, 3, v);
	profile_add(&p, s2, 2, v);
	if (vdso) {
		uint64_t s3[] = {vdso + 0x10, here};
		profile_add(&p, s3, 2, v);
	}

	struct sym_options o;
	symbolize_options_init(&o);
	o.quiet = 1;
	CHECK(symbolize_profile(&p, &o) == 0, "symbolize_profile failed");

	const struct prof_symbol *s = symtab_get(p.syms, here);
	CHECK(s && s->nframes >= 1, "our own call site is unresolved");
	if (s && s->nframes >= 1) {
		const struct prof_frame *f = &s->frames[s->nframes - 1];
		CHECK(f->func && strcmp(f->func, "probe_target") == 0, "function '%s', want probe_target", f->func);
		CHECK(f->file && strcmp(base(f->file), "cli_sym_profile.c") == 0, "file '%s'", f->file);
		CHECK(f->line == probe_line, "line %d, want %d", f->line, probe_line);
		CHECK(s->module && strstr(s->module, "cli_sym_profile"), "module '%s'", s->module);
	}
	s = symtab_get(p.syms, presym);
	CHECK(s && s->nframes == 1 && strcmp(s->frames[0].func, "from_the_input") == 0,
	      "a symbol the input carried was replaced");
	s = symtab_get(p.syms, gone);
	CHECK(s && s->nframes == 0, "an address in a missing file should be recorded without frames");
	s = symtab_get(p.syms, nowhere);
	CHECK(s && s->nframes == 0, "an address outside every mapping should be recorded without frames");
	if (vdso) {
		s = symtab_get(p.syms, vdso + 0x10);
		CHECK(s && s->nframes == 0, "a [vdso] address should stay raw");
	}
	size_t want = vdso ? 5 : 4;
	CHECK(symtab_count(p.syms) == want, "%zu symbol entries, want %zu (one per unique address)",
	      symtab_count(p.syms), want);

	/* A second pass has nothing left to do and changes nothing. */
	CHECK(symbolize_profile(&p, &o) == 0 && symtab_count(p.syms) == want, "second pass changed the table");
	profile_release(&p);

	/* --no-inlines and --no-demangle on the same address: one frame, the containing function. */
	profile_init(&p);
	add_self_maps(&p);
	profile_add(&p, &here, 1, v);
	o.inlines = 0;
	o.demangle = 0;
	CHECK(symbolize_profile(&p, &o) == 0, "symbolize_profile failed");
	s = symtab_get(p.syms, here);
	CHECK(s && s->nframes == 1 && s->frames[0].func && strcmp(s->frames[0].func, "probe_target") == 0,
	      "--no-inlines: want exactly probe_target");
	profile_release(&p);

	/* NULL options mean the defaults. */
	profile_init(&p);
	add_self_maps(&p);
	profile_add(&p, &here, 1, v);
	CHECK(symbolize_profile(&p, NULL) == 0 && symtab_get(p.syms, here) &&
	      symtab_get(p.syms, here)->nframes >= 1, "default options");
	profile_release(&p);

	if (failures) {
		printf("%d failure(s)\n", failures);
		return 1;
	}
	printf("cli_sym_profile: all passed\n");
	return 0;
}
