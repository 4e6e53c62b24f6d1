/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cmd_addr2line.c - `heaptap addr2line`: resolves link-time addresses of one ELF file with
 * heaptap's symbolizer and prints them the way binutils `addr2line` does (-f, -i, -C, -a).
 *
 * It exists so the symbolizer can be checked line for line against addr2line and timed
 * against llvm-symbolizer on the same addresses; it goes through symbolize_profile like
 * every other command (a profile with one single-frame sample per address and no mappings,
 * so jeprof's catch-all maps each address to the binary). It reads no profiles.
 */
#include "../cmd.h"
#include "../../profile/reader.h"
#include "../../profile/symtab.h"
#include "symbolize.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage_text[] =
	"usage: heaptap addr2line -e FILE [-a] [-f] [-i] [-C] [options] [ADDRESS...]\n"
	"Prints the function, source file and line of each address (hex, link-time, as in the\n"
	"ELF file; read one per line from stdin when none are given), in the layout of binutils\n"
	"addr2line: one 'function' line (with -f) and one 'file:line' line per frame.\n"
	"  -e FILE, --exe=FILE   the ELF file (separate debug info is found as for profiles)\n"
	"  -a, --addresses       print each address before its frames\n"
	"  -f, --functions       print function names\n"
	"  -i, --inlines         print the whole inline chain (innermost first), not only the innermost\n"
	"  -C, --demangle        demangle C++ and Rust names\n"
	"  --debug-dir=DIR       root of separate debug files (default $HEAPTAP_DEBUG_ROOT or /usr/lib/debug)\n"
	"  HEAPTAP_TIMING=1      print the symbolizer's phase times to stderr\n";

struct a2l {
	const char *exe;
	int addresses, functions, inlines, demangle;
	const char *debug_dir;
};

/* Parses "-fiC"-style flag clusters; returns 0, or 2 after a usage error. */
static int parse_flags(struct a2l *o, const char *arg)
{
	for (const char *c = arg + 1; *c; c++) {
		switch (*c) {
		case 'a': o->addresses = 1; break;
		case 'f': o->functions = 1; break;
		case 'i': o->inlines = 1; break;
		case 'C': o->demangle = 1; break;
		default:
			fprintf(stderr, "heaptap: addr2line: unknown option '-%c' (see heaptap addr2line --help)\n", *c);
			return 2;
		}
	}
	return 0;
}

static int parse_addr(const char *s, uint64_t *out)
{
	while (*s == ' ' || *s == '\t')
		s++;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	if (!*s)
		return -1;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 16);
	while (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r')
		end++;
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

static int push(uint64_t **v, size_t *n, size_t *cap, uint64_t a)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 256;
		uint64_t *nv = realloc(*v, nc * sizeof(*nv));
		if (!nv)
			return -1;
		*v = nv;
		*cap = nc;
	}
	(*v)[(*n)++] = a;
	return 0;
}

static void print_frame(const struct a2l *o, const struct prof_frame *f)
{
	if (o->functions)
		printf("%s\n", f && f->func ? f->func : "??");
	/* binutils: "??:0" when nothing is known, "??:?" when only the function is. */
	if (!f)
		printf("??:0\n");
	else if (f->line)
		printf("%s:%d\n", f->file ? f->file : "??", f->line);
	else
		printf("%s:?\n", f->file ? f->file : "??");
}

int cmd_addr2line(int argc, char **argv)
{
	struct a2l o = {0};
	uint64_t *addrs = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			fputs(usage_text, stdout);
			free(addrs);
			return 0;
		} else if (strcmp(a, "-e") == 0) {
			if (++i == argc) {
				fprintf(stderr, "heaptap: addr2line: -e needs a file\n");
				rc = 2;
				goto out;
			}
			o.exe = argv[i];
		} else if (strncmp(a, "-e", 2) == 0 && a[2]) {
			o.exe = a + 2;
		} else if (strncmp(a, "--exe=", 6) == 0) {
			o.exe = a + 6;
		} else if (strncmp(a, "--debug-dir=", 12) == 0) {
			o.debug_dir = a + 12;
		} else if (strcmp(a, "--addresses") == 0) {
			o.addresses = 1;
		} else if (strcmp(a, "--functions") == 0) {
			o.functions = 1;
		} else if (strcmp(a, "--inlines") == 0) {
			o.inlines = 1;
		} else if (strcmp(a, "--demangle") == 0) {
			o.demangle = 1;
		} else if (a[0] == '-' && a[1] && a[1] != '-' && !(a[1] == '0' && a[2] == 'x')) {
			if ((rc = parse_flags(&o, a)) != 0)
				goto out;
		} else if (a[0] == '-' && a[1] == '-') {
			fprintf(stderr, "heaptap: addr2line: unknown option '%s' (see heaptap addr2line --help)\n", a);
			rc = 2;
			goto out;
		} else {
			uint64_t v;
			if (parse_addr(a, &v) != 0) {
				fprintf(stderr, "heaptap: addr2line: '%s': not a hex address\n", a);
				rc = 2;
				goto out;
			}
			if (push(&addrs, &n, &cap, v) < 0)
				goto oom;
		}
	}
	if (!o.exe) {
		fprintf(stderr, "heaptap: addr2line: no file given (-e FILE)\n");
		rc = 2;
		goto out;
	}
	char perr[4096 + 64];
	int probe = reader_open_regular(o.exe, perr, sizeof perr); /* a FIFO is not waited on */
	if (probe < 0) {
		fprintf(stderr, "heaptap: addr2line: %s\n", perr);
		rc = 1;
		goto out;
	}
	close(probe);
	if (n == 0) {
		char line[256];
		size_t lineno = 0;
		while (fgets(line, sizeof(line), stdin)) {
			lineno++;
			uint64_t v;
			if (line[0] == '\n')
				continue;
			if (parse_addr(line, &v) != 0) {
				fprintf(stderr, "heaptap: addr2line: <stdin>:%zu: not a hex address\n", lineno);
				rc = 1;
				goto out;
			}
			if (push(&addrs, &n, &cap, v) < 0)
				goto oom;
		}
	}

	struct profile p;
	profile_init(&p);
	const double zero[PV_COUNT] = {0, 0, 0, 0};
	for (size_t i = 0; i < n; i++)
		profile_add(&p, &addrs[i], 1, zero);
	struct sym_options so;
	symbolize_options_init(&so);
	so.binary = o.exe;
	so.demangle = o.demangle;
	so.debug_root = o.debug_dir;
	if (symbolize_profile(&p, &so) != 0) {
		profile_release(&p);
		rc = 1;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		const struct prof_symbol *s = symtab_get(p.syms, addrs[i]);
		if (o.addresses)
			printf("0x%016" PRIx64 "\n", addrs[i]);
		if (!s || s->nframes == 0) {
			print_frame(&o, NULL);
			continue;
		}
		uint32_t nf = o.inlines ? s->nframes : 1;
		for (uint32_t k = 0; k < nf; k++)
			print_frame(&o, &s->frames[k]);
	}
	profile_release(&p);
	goto out;
oom:
	fprintf(stderr, "heaptap: addr2line: out of memory\n");
	rc = 1;
out:
	free(addrs);
	return rc;
}
