/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * elfsyms.c - reads an ELF symbol table once into a sorted array of function symbols and
 * answers "which function holds this address" by binary search.
 *
 * This replaces a linear symbol search per address (what makes eu-addr2line -S slow, see
 * docs/SYMBOLIZE.md). It does not demangle and does not read DWARF.
 */
#include "elfsyms.h"
#include "../../base/bisect.h"

#include <stdlib.h>
#include <string.h>

/* Ranks aliases at one address: higher is the better name to show. */
static int sym_rank(const struct elfsym *e, int bind, int type)
{
	int r = 0;
	if (e->size)
		r += 8;
	if (bind == STB_GLOBAL)
		r += 4;
	else if (bind == STB_WEAK)
		r += 2;
	if (type == STT_FUNC || type == STT_GNU_IFUNC)
		r += 1;
	/* Reserved-looking names (__foo, _fini helpers) lose against plain ones. */
	if (e->name[0] != '_' || e->name[1] != '_')
		r += 16;
	return r;
}

struct ranked {
	struct elfsym s;
	int rank;
};

static int cmp_ranked(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;
	if (x->s.start != y->s.start)
		return x->s.start < y->s.start ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank > y->rank ? -1 : 1; /* best first */
	return strcmp(x->s.name, y->s.name);
}

/* Returns the section of the given type that has data, or NULL. */
static Elf_Scn *find_symtab(Elf *elf, GElf_Word type, GElf_Shdr *out)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		if (gelf_getshdr(scn, out) && out->sh_type == type && out->sh_size > 0)
			return scn;
	}
	return NULL;
}

/* Returns 1 when section index shndx of elf holds code; *end = the section's end address. */
static int section_is_exec(Elf *elf, size_t shndx, uint64_t *end)
{
	Elf_Scn *scn = elf_getscn(elf, shndx);
	GElf_Shdr sh;
	*end = 0;
	if (!scn || !gelf_getshdr(scn, &sh))
		return 0;
	*end = sh.sh_addr + sh.sh_size;
	return (sh.sh_flags & SHF_EXECINSTR) != 0;
}

size_t elfsyms_load(struct elfsyms *s, Elf *elf)
{
	memset(s, 0, sizeof(*s));
	GElf_Shdr sh;
	Elf_Scn *scn = find_symtab(elf, SHT_SYMTAB, &sh);
	if (!scn) {
		scn = find_symtab(elf, SHT_DYNSYM, &sh);
		s->from_dynsym = scn != NULL;
	}
	if (!scn || sh.sh_entsize == 0)
		return 0;
	Elf_Data *data = elf_getdata(scn, NULL);
	if (!data)
		return 0;
	size_t count = sh.sh_size / sh.sh_entsize;
	struct ranked *r = malloc((count ? count : 1) * sizeof(*r));
	if (!r)
		return 0;
	size_t n = 0;
	for (size_t i = 1; i < count; i++) {
		GElf_Sym sym;
		if (!gelf_getsym(data, (int)i, &sym))
			break;
		int type = GELF_ST_TYPE(sym.st_info), bind = GELF_ST_BIND(sym.st_info);
		if (sym.st_shndx == SHN_UNDEF || sym.st_shndx == SHN_ABS || sym.st_value == 0)
			continue;
		if (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE)
			continue;
		uint64_t send = 0;
		int exec = sym.st_shndx < SHN_LORESERVE && section_is_exec(elf, sym.st_shndx, &send);
		/* Hand-written assembly often leaves functions untyped. */
		if (type == STT_NOTYPE && !exec)
			continue;
		const char *name = elf_strptr(elf, sh.sh_link, sym.st_name);
		if (!name || !name[0] || name[0] == '$' || (name[0] == '.' && name[1] == 'L'))
			continue;
		r[n].s.start = sym.st_value;
		r[n].s.size = sym.st_size;
		/* An unsized symbol (_init, assembly) is bounded by its section's end. */
		r[n].s.end = sym.st_size ? sym.st_value + sym.st_size
		                         : (send > sym.st_value ? send : sym.st_value + 1);
		r[n].s.name = name;
		r[n].rank = sym_rank(&r[n].s, bind, type);
		n++;
	}
	qsort(r, n, sizeof(*r), cmp_ranked);
	s->v = malloc((n ? n : 1) * sizeof(*s->v));
	if (!s->v) {
		free(r);
		return 0;
	}
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (k && s->v[k - 1].start == r[i].s.start) {
			/* An alias: keep the best-ranked (first) name, the largest size. */
			if (r[i].s.size > s->v[k - 1].size) {
				s->v[k - 1].size = r[i].s.size;
				s->v[k - 1].end = r[i].s.end;
			}
			continue;
		}
		s->v[k++] = r[i].s;
	}
	free(r);
	s->n = k;
	return k;
}

void elfsyms_release(struct elfsyms *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}

/* bisect key: symbol i's start */
static uint64_t sym_start(const void *ctx, size_t i)
{
	return ((const struct elfsym *)ctx)[i].start;
}

const struct elfsym *elfsyms_lookup(const struct elfsyms *s, uint64_t vaddr)
{
	size_t lo = bisect_count_le(s->n, vaddr, sym_start, s->v); /* first start > vaddr */
	if (lo == 0)
		return NULL;
	const struct elfsym *e = &s->v[lo - 1];
	if (vaddr >= e->end)
		return NULL;
	return e;
}
