/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * symhint.c - the missing-symbols hint of symhint.h: counts the unnamed frames per mapped file,
 * asks dpkg which package owns each file (trying the /lib twin of a /usr/lib path, as merged-/usr
 * systems register them), and words one line.
 */
#include "symhint.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../profile/symtab.h"
#include "common.h"
#include "mapfile.h"
#include "stacks.h"

#define MAX_FILES 8

struct missing {
	const char *path;
	size_t frames;
};

/* The binary package dpkg says owns path ("zlib1g" from "zlib1g:amd64: /lib/..."), into pkg;
   0 when dpkg is missing or does not know the file. */
static int dpkg_owner(const char *path, char *pkg, size_t cap)
{
	int fds[2];
	if (pipe(fds) != 0)
		return 0;
	pid_t pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return 0;
	}
	if (pid == 0) {
		dup2(fds[1], 1);
		int null = open("/dev/null", O_WRONLY);
		if (null >= 0)
			dup2(null, 2);
		close(fds[0]);
		close(fds[1]);
		char *argv[] = {"dpkg", "-S", (char *)path, NULL};
		execvp("dpkg", argv);
		_exit(127);
	}
	close(fds[1]);
	char buf[1024];
	size_t n = 0;
	for (ssize_t r; n < sizeof(buf) - 1;) {
		r = read(fds[0], buf + n, sizeof(buf) - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fds[0]);
	buf[n] = '\0';
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || n == 0)
		return 0;
	size_t len = strcspn(buf, ":, \n"); /* "pkg:arch: path" or "pkg1, pkg2: path" */
	if (len == 0 || len >= cap)
		return 0;
	memcpy(pkg, buf, len);
	pkg[len] = '\0';
	return 1;
}

static int owner(const char *path, char *pkg, size_t cap)
{
	if (dpkg_owner(path, pkg, cap))
		return 1;
	if (strncmp(path, "/usr/lib/", 9) == 0 || strncmp(path, "/usr/lib64/", 11) == 0) {
		char alt[4096];
		snprintf(alt, sizeof(alt), "%s", path + 4);
		if (dpkg_owner(alt, pkg, cap))
			return 1;
	}
	char *real = realpath(path, NULL);
	int ok = real && strcmp(real, path) != 0 && dpkg_owner(real, pkg, cap);
	free(real);
	return ok;
}

/* 1 when the ELF file at path has a symbol table (.symtab): it is not stripped, so its frames
   lack names for another reason (a build ID mismatch, which the symbolizer warns about). */
static int has_symtab(const char *path)
{
	size_t n = 0;
	const unsigned char *m = mapfile_map(path, &n);
	int found = 0;
	if (m && n >= sizeof(Elf64_Ehdr) && memcmp(m, ELFMAG, SELFMAG) == 0 && m[EI_CLASS] == ELFCLASS64) {
		Elf64_Ehdr eh;
		memcpy(&eh, m, sizeof(eh));
		for (size_t i = 0; i < eh.e_shnum && !found; i++) {
			uint64_t off = eh.e_shoff + (uint64_t)i * eh.e_shentsize;
			if (eh.e_shentsize < sizeof(Elf64_Shdr) || off + sizeof(Elf64_Shdr) > n)
				break;
			Elf64_Shdr sh;
			memcpy(&sh, m + off, sizeof(sh));
			found = sh.sh_type == SHT_SYMTAB;
		}
	}
	mapfile_unmap(m, n);
	return found;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* Where debuginfod servers of this distribution are, for the suggestion. */
static const char *debuginfod_url(void)
{
	FILE *f = fopen("/etc/os-release", "r");
	char line[256];
	const char *url = NULL;
	while (f && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "ID=", 3) != 0)
			continue;
		if (strstr(line, "ubuntu"))
			url = "https://debuginfod.ubuntu.com";
		else if (strstr(line, "debian"))
			url = "https://debuginfod.debian.net";
		else if (strstr(line, "fedora"))
			url = "https://debuginfod.fedoraproject.org";
	}
	if (f)
		fclose(f);
	return url ? url : "https://debuginfod.elfutils.org";
}

/* The mapped file of addr (whose symbol is s, NULL: none) when it is a frame the hint counts:
   no function name, in a file that is not the allocator's; else NULL. */
static const struct prof_mapping *unnamed_file(const struct profile *p, uint64_t addr, const struct prof_symbol *s)
{
	if (addr > 0x7fffffffffffffffULL || (s && s->nframes && s->frames[s->nframes - 1].func))
		return NULL;
	const struct prof_mapping *m = profile_find_mapping(p, addr);
	if (!m || !m->path || m->path[0] != '/' || stacks_is_allocator_module(m->path))
		return NULL;
	return m;
}

/* The frames the hint counts, by file. */
struct missing_files {
	struct missing files[MAX_FILES];
	size_t n, total;
};

/* Counts addr (whose symbol is sym, NULL: none) in mf when it is a frame without a name in a
   file that is present and has no symbols (the others got the symbolizer's warning). */
static void note_unnamed(struct missing_files *mf, const struct profile *p, uint64_t addr,
                         const struct prof_symbol *sym)
{
	const struct prof_mapping *m = unnamed_file(p, addr, sym);
	if (!m)
		return;
	size_t f = 0;
	while (f < mf->n && strcmp(mf->files[f].path, m->path) != 0)
		f++;
	if (f == mf->n) {
		if (mf->n == MAX_FILES || access(m->path, R_OK) != 0 || has_symtab(m->path))
			return;
		mf->files[mf->n++] = (struct missing){m->path, 0};
	}
	mf->files[f].frames++;
	mf->total++;
}

/* 0 when no sample can have a frame the hint counts, judged once per distinct address: after
   symbolizing, every address of every sample is in p->syms. Then the frames need no walk. */
static int any_unnamed(const struct profile *p)
{
	if (!p->syms)
		return 1;
	size_t n = symtab_count(p->syms);
	for (size_t i = 0; i < n; i++) {
		const struct prof_symbol *s = symtab_at(p->syms, i);
		if (unnamed_file(p, s->addr, s))
			return 1;
	}
	return 0;
}

void symhint_print(const struct profile *p)
{
	static int shown;
	if (shown || !any_unnamed(p))
		return;
	struct missing_files mf = {.n = 0, .total = 0};
	/* distinct addresses: the symbol table's entries once symbolized (so a report over many
	   dumps counts an address once, not once per dump), else every frame of every sample */
	if (p->syms) {
		size_t nsyms = symtab_count(p->syms);
		for (size_t i = 0; i < nsyms; i++) {
			const struct prof_symbol *sym = symtab_at(p->syms, i);
			note_unnamed(&mf, p, sym->addr, sym);
		}
	} else {
		for (size_t i = 0; i < p->nsamples; i++)
			for (uint32_t k = 0; k < p->samples[i].naddrs; k++)
				note_unnamed(&mf, p, p->samples[i].addrs[k], NULL);
	}
	struct missing *files = mf.files;
	size_t nfiles = mf.n, total = mf.total;
	if (!total)
		return;
	shown = 1;
	char line[2048];
	size_t n = (size_t)snprintf(line, sizeof(line), "heaptap: hint: %zu frame address%s without a name "
	                            "(shown as FILE+0xOFFSET): ", total, total == 1 ? "" : "es");
	int own_file = 0;
	for (size_t f = 0; f < nfiles && f < 3 && n < sizeof(line); f++) {
		char pkg[128];
		const char *sep = f ? "; " : "";
		if (owner(files[f].path, pkg, sizeof(pkg))) {
			n += (size_t)snprintf(line + n, sizeof(line) - n, "%s%s: install %s-dbgsym (the distribution's "
			                      "debug packages)", sep, base_name(files[f].path), pkg);
		} else {
			own_file = 1;
			n += (size_t)snprintf(line + n, sizeof(line) - n, "%s%s is stripped: pass its unstripped copy "
			                      "as BINARY or its debug file under --debug-dir", sep, files[f].path);
		}
	}
	if (nfiles > 3 && n < sizeof(line))
		n += (size_t)snprintf(line + n, sizeof(line) - n, "; and %zu more file%s", nfiles - 3,
		                      nfiles == 4 ? "" : "s");
	const char *urls = getenv("DEBUGINFOD_URLS");
	if (n < sizeof(line)) {
		if (!urls || !*urls)
			snprintf(line + n, sizeof(line) - n, "; or set DEBUGINFOD_URLS=%s", debuginfod_url());
		else if (!own_file)
			snprintf(line + n, sizeof(line) - n, " (the servers in DEBUGINFOD_URLS had none)");
	}
	fprintf(stderr, "%s\n", line);
}
