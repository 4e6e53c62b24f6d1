/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * raw_read.c - the reader of jeprof's symbolized (`--raw`) profile files (see raw_read.h): the
 * symbol section as jeprof's ReadSymbols parses it, "outer--inner" inline chains turned into
 * frames innermost first, then the embedded heap profile. It symbolizes nothing itself.
 */
#include "raw_read.h"

#include <string.h>

#include "heapv2_read.h"
#include "legacy_read.h"
#include "symtab.h"

/* Splits "outer--inner" into frames innermost first and stores them for addr. A name that is
   the address itself (what jeprof writes when the server did not resolve it) is stored as
   "looked up, unknown" (no frames). */
static void put_symbol(struct prof_symtab *t, uint64_t addr, char *names)
{
	uint64_t self;
	if (textscan_hex_token(names, strlen(names), &self) == 0 && self == addr &&
	    (names[0] == '0' && (names[1] == 'x' || names[1] == 'X'))) {
		symtab_put(t, addr, NULL, 0, NULL);
		return;
	}
	struct prof_frame frames[64];
	const char *parts[64];
	uint32_t n = 0;
	char *s = names;
	for (;;) {
		char *sep = strstr(s, "--");
		/* "operator--" is a name, not a separator. */
		while (sep && sep - names >= 8 && strncmp(sep - 8, "operator", 8) == 0)
			sep = strstr(sep + 2, "--");
		if (n < 64)
			parts[n++] = s;
		if (!sep)
			break;
		*sep = '\0';
		s = sep + 2;
	}
	for (uint32_t i = 0; i < n; i++) {
		frames[i].func = parts[n - 1 - i];
		frames[i].file = NULL;
		frames[i].line = 0;
	}
	symtab_put(t, addr, frames, n, NULL);
}

int raw_read_scan(struct textscan *ts, struct profile *p, char *err, size_t errcap)
{
	if (!textscan_marker(ts->line, "symbol")) {
		textscan_error(ts, err, errcap, "not a symbolized profile ('--- symbol' expected)");
		return -1;
	}
	if (!p->syms)
		p->syms = symtab_new();
	int ended = 0;
	while (textscan_next(ts)) {
		char *l = ts->line;
		if (l[0] == '0' && l[1] == 'x') {
			/* ^0x0*([0-9a-f]+)\s+(.+) */
			const char *q = l + 2;
			uint64_t a = 0;
			int nd = 0;
			while ((*q >= '0' && *q <= '9') || (*q >= 'a' && *q <= 'f')) {
				if (nd || *q != '0')
					nd++;
				a = (a << 4) | (uint64_t)(*q <= '9' ? *q - '0' : *q - 'a' + 10);
				q++;
			}
			if (q > l + 2 && textscan_space((unsigned char)*q) && nd <= 16) {
				char *name = textscan_trim((char *)q);
				if (*name) {
					put_symbol(p->syms, a, name);
					continue;
				}
			}
			p->skipped_lines++;
		} else if (strncmp(l, "---", 3) == 0) {
			ended = 1;
			break;
		} else if (l[0] >= 'a' && l[0] <= 'z' && strchr(l, '=')) {
			char *eq = strchr(l, '=');
			*eq = '\0';
			char *key = textscan_trim(l), *val = textscan_trim(eq + 1);
			if (strcmp(key, "binary") == 0)
				p->exe_path = profile_strdup(p, val);
			else
				p->skipped_lines++;
		} else {
			p->skipped_lines++;
		}
	}
	if (!ended) {
		textscan_error(ts, err, errcap, "symbol section not terminated by '---'");
		return -1;
	}
	if (!textscan_next_header(ts)) {
		textscan_error(ts, err, errcap, "no profile after the symbol section");
		return -1;
	}
	if (!textscan_skip_heap_marker(ts)) {
		textscan_error(ts, err, errcap, "no profile after the '---' marker");
		return -1;
	}
	int rc;
	char *exe = p->exe_path;
	if (strncmp(ts->line, "heap profile:", 13) == 0) {
		rc = legacy_read_scan(ts, p, err, errcap);
	} else if (strncmp(ts->line, "heap", 4) == 0) {
		rc = heapv2_read_scan(ts, p, err, errcap);
	} else {
		textscan_error(ts, err, errcap, "cannot recognize profile section after symbols");
		return -1;
	}
	if (exe)
		p->exe_path = exe; /* binary= names what jeprof symbolized with: it wins */
	p->format = profile_strdup(p, "raw");
	return rc;
}

int raw_read(const uint8_t *d, size_t n, const char *name, struct profile *p, char *err, size_t errcap)
{
	return textscan_read(d, n, name, 0, raw_read_scan, p, err, errcap);
}
