/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * symfile.c - opens the ELF file behind a mapping (checking its build ID), finds its
 * separate debug info (build-ID tree, .gnu_debuglink with CRC check, debuginfod), and
 * answers address look-ups through dwarfidx (DWARF) and elfsyms (symbol table).
 *
 * File search order lives in findfile.c; the indexes live in dwarfidx.c and elfsyms.c. This
 * file decides which of the found files to trust and glues them together; it prints nothing.
 */
#include "symfile.h"

#include "../../profile/arena.h"
#include "../../profile/reader.h"
#include "demangle.h"
#include "elfsyms.h"
#include "findfile.h"

#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

struct elfh {
	int fd;
	Elf *elf;
	char *path;
	char bid[129]; /* lowercase hex, "" when none */
};

struct symfile {
	struct elfh main;   /* the object (or a debug file standing in for it) */
	struct elfh debug;  /* the separate debug file, elf == NULL when none */
	Dwarf *dw;
	struct dwarfidx *dx;
	const char *dw_path;
	struct elfsyms syms;
	const char **dem;   /* demangled symbol names, filled on first use */
	GElf_Phdr *loads;
	size_t nloads;
	int demangle;
	char note[640];     /* what the caller should warn about, "" when nothing */
};

/* A compressed section may claim at most this many times its stored size, plus the floor:
   DWARF compresses 3 to 10 times; zlib can claim 1000 times (a 3 MB file, 3 GiB inflated). */
#define SYMFILE_INFLATE_RATIO 32
#define SYMFILE_INFLATE_FLOOR ((uint64_t)16 << 20)

static int lib_inited;

static void lib_init(void)
{
	if (!lib_inited) {
		elf_version(EV_CURRENT);
		lib_inited = 1;
	}
}

static void elfh_close(struct elfh *h)
{
	if (h->elf)
		elf_end(h->elf);
	if (h->fd >= 0)
		close(h->fd);
	free(h->path);
	memset(h, 0, sizeof(*h));
	h->fd = -1;
}

static void hex_of(char *out, size_t outlen, const unsigned char *p, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	size_t k = 0;
	for (size_t i = 0; i < n && k + 2 < outlen; i++) {
		out[k++] = digits[p[i] >> 4];
		out[k++] = digits[p[i] & 15];
	}
	out[k] = 0;
}

/* NULL when the headers of elf (a file of size bytes) hold together: the ELF header reads,
   the program and section header tables lie inside the file and read, and the section name
   table exists. Otherwise what is wrong. */
static const char *elf_corrupt(Elf *elf, uint64_t size)
{
	GElf_Ehdr eh;
	if (!gelf_getehdr(elf, &eh))
		return "its ELF header cannot be read";
	size_t n;
	if (elf_getphdrnum(elf, &n) != 0)
		return "its program headers cannot be read";
	if (n && (eh.e_phoff > size || (uint64_t)n * eh.e_phentsize > size - eh.e_phoff))
		return "its program headers lie past the end of the file (truncated?)";
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph))
			return "a program header cannot be read";
	}
	/* libelf answers 0 sections for a table cut off by the end of the file: use the header's
	   own count (0 there means extended numbering: then libelf's answer is the count). */
	if (elf_getshdrnum(elf, &n) != 0)
		return "its section headers cannot be read";
	if (eh.e_shnum)
		n = eh.e_shnum;
	if (eh.e_shoff && (eh.e_shoff > size || (uint64_t)n * eh.e_shentsize > size - eh.e_shoff))
		return "its section headers lie past the end of the file (truncated?)";
	size_t shstrndx;
	if (n && elf_getshdrstrndx(elf, &shstrndx) != 0)
		return "its section name table cannot be read";
	return NULL;
}

/* Opens an ELF file from fd (taken over) named path. Returns 0, or -1 (fd closed) with the
   reason in why when why is not NULL. */
static int elfh_from_fd_why(struct elfh *h, int fd, const char *path, char *why, size_t whylen)
{
	memset(h, 0, sizeof(*h));
	h->fd = -1;
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		if (why)
			snprintf(why, whylen, "not a regular file");
		close(fd);
		return -1;
	}
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	int is_elf = elf && elf_kind(elf) == ELF_K_ELF;
	const char *bad = is_elf ? elf_corrupt(elf, (uint64_t)st.st_size) : "not an ELF file";
	if (bad) {
		if (why)
			snprintf(why, whylen, "%s%s", is_elf ? "corrupt ELF file: " : "", bad);
		if (elf)
			elf_end(elf);
		close(fd);
		return -1;
	}
	h->fd = fd;
	h->elf = elf;
	h->path = strdup(path);
	const void *id = NULL;
	ssize_t n = dwelf_elf_gnu_build_id(elf, &id);
	if (n > 0)
		hex_of(h->bid, sizeof(h->bid), id, (size_t)n);
	return 0;
}

static int elfh_from_fd(struct elfh *h, int fd, const char *path)
{
	return elfh_from_fd_why(h, fd, path, NULL, 0);
}

/* Opens the ELF file at path: only a regular file (reader_open_regular: a FIFO is not waited
   on, a device not read). Returns 0; -1 when there is no such file; -2 when it exists but
   cannot be used; the reason in why (may be NULL). */
static int elfh_open_why(struct elfh *h, const char *path, char *why, size_t whylen)
{
	char err[4096 + 64];
	int fd = reader_open_regular(path, err, sizeof err);
	if (fd < 0) {
		int missing = errno == ENOENT || errno == ENOTDIR;
		memset(h, 0, sizeof(*h));
		h->fd = -1;
		if (why) {
			const char *colon = strncmp(err, path, strlen(path)) == 0 ? err + strlen(path) : NULL;
			const char *r = colon && colon[0] == ':' ? colon + 2 : err;
			size_t n = strlen(r) < whylen ? strlen(r) : whylen - 1;
			memcpy(why, r, n);
			why[n] = 0;
		}
		return missing ? -1 : -2;
	}
	return elfh_from_fd_why(h, fd, path, why, whylen) == 0 ? 0 : -2;
}

static int elfh_open(struct elfh *h, const char *path)
{
	return elfh_open_why(h, path, NULL, 0);
}

/* 1 when the file carries DWARF with contents (not NOBITS as in a stripped file). */
static int has_dwarf(Elf *elf)
{
	size_t shstrndx;
	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return 0;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS || sh.sh_size == 0)
			continue;
		const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && (strcmp(name, ".debug_info") == 0 || strcmp(name, ".zdebug_info") == 0))
			return 1;
	}
	return 0;
}

static int has_symtab(Elf *elf)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB && sh.sh_size > 0)
			return 1;
	}
	return 0;
}

/* ---- finding the object ---- */

struct find_ctx {
	const char *want_bid;    /* NULL: any */
	struct elfh *out;
	char mismatch[4096 + 300]; /* the first file whose build ID differed */
	char bad[2 * 4096 + 300];  /* why the first file that exists could not be used */
	const char *self;          /* the name the caller's warning gives the file */
};

static int try_object(void *vctx, const char *path)
{
	struct find_ctx *c = vctx;
	struct elfh h;
	char why[4096 + 64];
	int rc = elfh_open_why(&h, path, why, sizeof why);
	if (rc != 0) {
		if (rc == -2 && !c->bad[0]) {
			if (c->self && strcmp(c->self, path) == 0) /* the warning names it already */
				snprintf(c->bad, sizeof(c->bad), "%s", why);
			else
				snprintf(c->bad, sizeof(c->bad), "%s: %s", path, why);
		}
		return 0;
	}
	if (c->want_bid && c->want_bid[0] && h.bid[0] && strcmp(h.bid, c->want_bid) != 0) {
		if (!c->mismatch[0])
			snprintf(c->mismatch, sizeof(c->mismatch), "build ID mismatch (profile %s, file %s has %s)",
			         c->want_bid, path, h.bid);
		elfh_close(&h);
		return 0;
	}
	*c->out = h;
	return 1;
}

/* ---- finding the debug file ---- */

struct debug_ctx {
	const char *bid;   /* the object's build ID, "" when none */
	const char *link;  /* .gnu_debuglink name, or NULL */
	GElf_Word crc;
	const char *self;  /* the object's own path (never its own debug file) */
	struct elfh *out;
};

static uint32_t file_crc32(int fd)
{
	struct stat st;
	if (fstat(fd, &st) != 0 || st.st_size == 0)
		return 0;
	void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		return 0;
	uLong crc = crc32(0L, Z_NULL, 0);
	const unsigned char *b = p;
	size_t left = (size_t)st.st_size;
	while (left) {
		uInt chunk = left > (1u << 30) ? (1u << 30) : (uInt)left;
		crc = crc32(crc, b, chunk);
		b += chunk;
		left -= chunk;
	}
	munmap(p, (size_t)st.st_size);
	return (uint32_t)crc;
}

static int try_debug(void *vctx, const char *path)
{
	struct debug_ctx *c = vctx;
	if (c->self && strcmp(path, c->self) == 0)
		return 0;
	struct elfh h;
	if (elfh_open(&h, path) != 0)
		return 0;
	int ok = has_dwarf(h.elf);
	if (ok && c->bid[0] && h.bid[0])
		ok = strcmp(c->bid, h.bid) == 0;
	else if (ok && c->link && !h.bid[0])
		ok = file_crc32(h.fd) == c->crc;
	if (!ok) {
		elfh_close(&h);
		return 0;
	}
	*c->out = h;
	return 1;
}

static void find_debug(struct symfile *f, const struct symfile_cfg *cfg)
{
	GElf_Word crc = 0;
	const char *link = dwelf_elf_gnu_debuglink(f->main.elf, &crc);
	struct debug_ctx c = {f->main.bid, link, crc, f->main.path, &f->debug};
	if (findfile_each_debug(f->main.path, f->main.bid[0] ? f->main.bid : NULL, link, cfg->debug_root,
	                        try_debug, &c))
		return;
	if (f->main.bid[0]) {
		char *path = NULL;
		int fd = findfile_debuginfod(f->main.bid, 0, &path);
		if (fd >= 0) {
			struct elfh h;
			if (elfh_from_fd(&h, fd, path) == 0) {
				if (has_dwarf(h.elf) && (!h.bid[0] || strcmp(h.bid, f->main.bid) == 0))
					f->debug = h;
				else
					elfh_close(&h);
			}
		}
		free(path);
	}
}

/* ---- opening ---- */

/* "1.5 GiB"-style text of n bytes. */
static void fmt_bytes(uint64_t n, char *buf, size_t cap)
{
	if (n >= (uint64_t)1 << 30)
		snprintf(buf, cap, "%.1f GiB", (double)n / (double)((uint64_t)1 << 30));
	else if (n >= (uint64_t)1 << 20)
		snprintf(buf, cap, "%.1f MiB", (double)n / (double)((uint64_t)1 << 20));
	else
		snprintf(buf, cap, "%llu bytes", (unsigned long long)n);
}

/* 0 when every compressed section of elf (SHF_COMPRESSED, or GNU .zdebug_*) claims a size
   within SYMFILE_INFLATE_RATIO of what it stores; else -1 with the first offender in note.
   libdw inflates whole sections into memory, so the claim is what reading it would cost. */
static int check_inflate(Elf *elf, char *note, size_t notecap)
{
	size_t shstrndx;
	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return 0;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS || sh.sh_size == 0)
			continue;
		const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
		uint64_t claim = 0;
		if (sh.sh_flags & SHF_COMPRESSED) {
			GElf_Chdr ch;
			if (!gelf_getchdr(scn, &ch))
				continue;
			claim = ch.ch_size;
		} else if (name && strncmp(name, ".zdebug", 7) == 0) {
			Elf_Data *d = elf_rawdata(scn, NULL);
			const unsigned char *b = d ? d->d_buf : NULL;
			if (!b || d->d_size < 12 || memcmp(b, "ZLIB", 4) != 0)
				continue;
			for (int i = 4; i < 12; i++)
				claim = claim << 8 | b[i];
		} else {
			continue;
		}
		uint64_t allowed = SYMFILE_INFLATE_FLOOR + (uint64_t)SYMFILE_INFLATE_RATIO * sh.sh_size;
		if (claim > allowed) {
			char c[32], s[32];
			fmt_bytes(claim, c, sizeof c);
			fmt_bytes(sh.sh_size, s, sizeof s);
			snprintf(note, notecap, "section %s would decompress to %s from %s (more than %d times "
			         "its size): its DWARF is not read, names come from the symbol table",
			         name ? name : "?", c, s, SYMFILE_INFLATE_RATIO);
			return -1;
		}
	}
	return 0;
}

static void load_segments(struct symfile *f)
{
	size_t n = 0;
	if (elf_getphdrnum(f->main.elf, &n) != 0 || n == 0)
		return;
	f->loads = calloc(n, sizeof(*f->loads));
	if (!f->loads)
		return;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(f->main.elf, (int)i, &ph) && ph.p_type == PT_LOAD)
			f->loads[f->nloads++] = ph;
	}
}

struct symfile *symfile_open(const char *map_path, const char *exact, const char *build_id,
                             const struct symfile_cfg *cfg, char *why, size_t whylen)
{
	lib_init();
	struct symfile *f = calloc(1, sizeof(*f));
	if (!f) {
		snprintf(why, whylen, "%s", strerror(ENOMEM));
		return NULL;
	}
	f->main.fd = f->debug.fd = -1;
	f->demangle = cfg->demangle;
	if (build_id && !build_id[0])
		build_id = NULL;
	struct find_ctx fc = {.want_bid = build_id, .out = &f->main, .self = exact ? exact : map_path};
	int found = exact ? try_object(&fc, exact)
	                  : findfile_each_candidate(map_path, cfg->lib_prefix, cfg->sysroot, try_object, &fc);
	if (!found && !exact && build_id) {
		/* The object is gone: its debug file (symbols, DWARF, program headers) stands in. */
		struct debug_ctx dc = {build_id, NULL, 0, NULL, &f->main};
		found = findfile_each_debug(NULL, build_id, NULL, cfg->debug_root, try_debug, &dc);
		if (!found) {
			char *path = NULL;
			int fd = findfile_debuginfod(build_id, 1, &path);
			if (fd >= 0)
				found = elfh_from_fd(&f->main, fd, path) == 0;
			free(path);
		}
	}
	if (!found) {
		if (fc.mismatch[0])
			snprintf(why, whylen, "%s", fc.mismatch);
		else if (fc.bad[0])
			snprintf(why, whylen, "%s", fc.bad);
		else if (exact)
			snprintf(why, whylen, "cannot open as an ELF file");
		else
			snprintf(why, whylen, "not found");
		free(f);
		return NULL;
	}
	load_segments(f);
	Elf *dwelf = NULL;
	if (has_dwarf(f->main.elf)) {
		dwelf = f->main.elf;
		f->dw_path = f->main.path;
	} else {
		find_debug(f, cfg);
		if (f->debug.elf) {
			dwelf = f->debug.elf;
			f->dw_path = f->debug.path;
		}
	}
	char inote[400];
	if (dwelf && check_inflate(dwelf, inote, sizeof inote) != 0) {
		if (dwelf == f->main.elf)
			snprintf(f->note, sizeof f->note, "%s", inote);
		else
			snprintf(f->note, sizeof f->note, "debug file %.100s: %s", f->debug.path, inote);
		dwelf = NULL;
		f->dw_path = NULL;
	}
	if (dwelf) {
		f->dw = dwarf_begin_elf(dwelf, DWARF_C_READ, NULL);
		if (f->dw)
			dwarf_new_oom_handler(f->dw, arena_oom); /* libdw would abort() */
		if (f->dw)
			f->dx = dwarfidx_new(f->dw, cfg->demangle);
		else
			f->dw_path = NULL;
		if (f->dx && cfg->no_lines)
			dwarfidx_set_lines(f->dx, 0);
	}
	/* The full symbol table beats .dynsym, wherever it is. */
	if (!has_symtab(f->main.elf) && f->debug.elf && has_symtab(f->debug.elf))
		elfsyms_load(&f->syms, f->debug.elf);
	else
		elfsyms_load(&f->syms, f->main.elf);
	f->dem = calloc(f->syms.n ? f->syms.n : 1, sizeof(*f->dem));
	return f;
}

int symfile_read_build_id(const char *path, char *out, size_t outlen)
{
	lib_init();
	out[0] = 0;
	struct elfh h;
	if (elfh_open(&h, path) != 0)
		return -1;
	snprintf(out, outlen, "%s", h.bid);
	elfh_close(&h);
	return out[0] ? 0 : -1;
}

void symfile_free(struct symfile *f)
{
	if (!f)
		return;
	dwarfidx_free(f->dx);
	if (f->dw)
		dwarf_end(f->dw);
	if (f->dem) {
		for (size_t i = 0; i < f->syms.n; i++)
			if (f->dem[i] && f->dem[i] != f->syms.v[i].name)
				free((char *)f->dem[i]);
		free(f->dem);
	}
	elfsyms_release(&f->syms);
	free(f->loads);
	elfh_close(&f->debug);
	elfh_close(&f->main);
	free(f);
}

const char *symfile_path(const struct symfile *f)
{
	return f->main.path;
}

const char *symfile_note(const struct symfile *f)
{
	return f->note[0] ? f->note : NULL;
}

const char *symfile_debug_path(const struct symfile *f)
{
	return f->dx ? f->dw_path : NULL;
}

int symfile_vaddr(const struct symfile *f, uint64_t start, uint64_t offset, uint64_t addr,
                  uint64_t *vaddr)
{
	uint64_t foff = addr - start + offset;
	const GElf_Phdr *best = NULL;
	for (size_t i = 0; i < f->nloads; i++) {
		const GElf_Phdr *ph = &f->loads[i];
		if (foff < ph->p_offset || foff - ph->p_offset >= ph->p_filesz)
			continue;
		if (!best || ((ph->p_flags & PF_X) && !(best->p_flags & PF_X)))
			best = ph;
	}
	if (!best)
		return -1;
	*vaddr = foff - best->p_offset + best->p_vaddr;
	return 0;
}

int symfile_segment(const struct symfile *f, size_t i, uint64_t *vaddr, uint64_t *memsz)
{
	if (i >= f->nloads)
		return -1;
	*vaddr = f->loads[i].p_vaddr;
	*memsz = f->loads[i].p_memsz;
	return 0;
}

int symfile_contains(const struct symfile *f, uint64_t vaddr)
{
	for (size_t i = 0; i < f->nloads; i++) {
		const GElf_Phdr *ph = &f->loads[i];
		if (vaddr >= ph->p_vaddr && vaddr - ph->p_vaddr < ph->p_memsz)
			return 1;
	}
	return 0;
}

static const char *sym_name(struct symfile *f, const struct elfsym *s)
{
	size_t i = (size_t)(s - f->syms.v);
	if (!f->dem[i]) {
		char *d = f->demangle ? demangle_name(s->name) : NULL;
		/* Versioned names in a .symtab (memcpy@@GLIBC_2.14) show without the version. */
		const char *name = d ? d : s->name;
		const char *at = strchr(name, '@');
		if (at && at != name) {
			if (d)
				d[at - d] = 0;
			else
				d = strndup(s->name, (size_t)(at - s->name));
		}
		f->dem[i] = d ? d : s->name;
	}
	return f->dem[i];
}

int symfile_resolve(struct symfile *f, uint64_t vaddr, struct dwarfidx_frame *out, int max,
                    int inlines)
{
	if (max <= 0)
		return 0;
	int n = f->dx ? dwarfidx_lookup(f->dx, vaddr, out, max) : 0;
	/* The outermost frame takes the symbol table's name unless DWARF gave a linkage name:
	   it names the code actually there (main.cold, f.part.0, _GLOBAL__sub_I_x), as
	   addr2line, llvm-symbolizer and jeprof's nm show it. */
	if (n == 0 || !out[n - 1].func || !out[n - 1].linkage) {
		const struct elfsym *s = elfsyms_lookup(&f->syms, vaddr);
		if (s) {
			if (n == 0)
				out[n++] = (struct dwarfidx_frame){NULL, NULL, 0, 0};
			out[n - 1].func = sym_name(f, s);
		}
	}
	if (!inlines && n > 1) {
		out[0] = out[n - 1];
		n = 1;
	}
	return n;
}

void symfile_stats(const struct symfile *f, size_t *nsyms, struct dwarfidx_stats *st)
{
	*nsyms = f->syms.n;
	memset(st, 0, sizeof(*st));
	if (f->dx)
		dwarfidx_stats(f->dx, st);
}
