/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * elffile.c - the mapped ELF files and symbol-table walks of elffile.h. No heap, no stdio.
 */
#include "elffile.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int elffile_open(struct elffile *f, const char *path)
{
	memset(f, 0, sizeof *f);
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK); /* a FIFO is not waited on */
	if (fd < 0)
		return -errno;
	struct stat st;
	int rc = 0;
	if (fstat(fd, &st) != 0)
		rc = -errno;
	else if (!S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(Elf64_Ehdr))
		rc = -ENOEXEC;
	void *m = MAP_FAILED;
	if (rc == 0) {
		m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m == MAP_FAILED)
			rc = -errno;
	}
	close(fd);
	if (rc)
		return rc;
	const unsigned char *d = m;
	const Elf64_Ehdr *eh = m;
	size_t n = (size_t)st.st_size;
	if (memcmp(d, ELFMAG, SELFMAG) != 0 || d[EI_CLASS] != ELFCLASS64 || d[EI_DATA] != ELFDATA2LSB ||
	    eh->e_shoff == 0 || eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shnum == 0 ||
	    eh->e_shoff > n || (n - eh->e_shoff) / sizeof(Elf64_Shdr) < eh->e_shnum) {
		munmap(m, n);
		return -ENOEXEC;
	}
	f->data = d;
	f->len = n;
	f->dev = (uint64_t)st.st_dev;
	f->ino = (uint64_t)st.st_ino;
	return 0;
}

void elffile_close(struct elffile *f)
{
	if (f->data)
		munmap((void *)f->data, f->len);
	memset(f, 0, sizeof *f);
}

int elffile_symtab(const struct elffile *f, unsigned type, struct elffile_symtab *t)
{
	memset(t, 0, sizeof *t);
	if (!f->data)
		return -1;
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)f->data;
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(f->data + eh->e_shoff);
	size_t n = f->len;
	for (unsigned i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_type != type || sh[i].sh_link >= eh->e_shnum)
			continue;
		const Elf64_Shdr *tab = &sh[i], *str = &sh[tab->sh_link];
		if (tab->sh_offset > n || tab->sh_size > n - tab->sh_offset || str->sh_offset > n ||
		    str->sh_size > n - str->sh_offset || tab->sh_entsize != sizeof(Elf64_Sym) ||
		    str->sh_size == 0 || f->data[str->sh_offset + str->sh_size - 1] != 0 ||
		    tab->sh_offset % sizeof(uint64_t) != 0)
			return -1;
		t->syms = (const Elf64_Sym *)(f->data + tab->sh_offset);
		t->nsyms = tab->sh_size / sizeof(Elf64_Sym);
		t->strs = (const char *)f->data + str->sh_offset;
		t->nstrs = str->sh_size;
		return 0;
	}
	return -1;
}

const char *elffile_sym_name(const struct elffile_symtab *t, size_t i)
{
	return t->syms[i].st_name < t->nstrs ? t->strs + t->syms[i].st_name : NULL;
}

int elffile_sym_is_func(const struct elffile_symtab *t, size_t i)
{
	int type = ELF64_ST_TYPE(t->syms[i].st_info);
	return (type == STT_FUNC || type == STT_GNU_IFUNC) && t->syms[i].st_shndx != SHN_UNDEF &&
	       t->syms[i].st_value != 0 && t->syms[i].st_name < t->nstrs;
}
