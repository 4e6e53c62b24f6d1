/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz_symfile.c - fuzz target for the symbolizer's ELF and DWARF path (cli/sym/symfile.c,
 * dwarfidx.c, elfsyms.c, demangle.c): the input is an ELF file, opened as the user's binary
 * (header checks, build ID, separate debug file search, compressed-section limits, symbol
 * table and DWARF indexes), then addresses spread over its load segments and two taken from
 * the input's last bytes are resolved, inline chains included. Every answer must be a frame
 * list within bounds. The file lives in a private temporary directory, so a .gnu_debuglink
 * name can only find files there; debuginfod is never asked. Not a reader fuzzer (those are
 * fuzz_reader.c and friends). libFuzzer build: make fuzz; replayed by make check.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../cli/sym/symfile.h"

static char dir[64], path[96];

static void cleanup(void)
{
	unlink(path);
	rmdir(dir);
}

static void resolve(struct symfile *f, uint64_t vaddr)
{
	struct dwarfidx_frame out[64];
	for (int inl = 0; inl < 2; inl++) {
		int n = symfile_resolve(f, vaddr, out, 64, inl);
		if (n < 0 || n > 64 || (!inl && n > 1))
			abort();
		for (int i = 0; i < n; i++) {
			if (out[i].func)
				(void)strlen(out[i].func);
			if (out[i].file)
				(void)strlen(out[i].file);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!dir[0]) {
		unsetenv("DEBUGINFOD_URLS");
		snprintf(dir, sizeof dir, "/tmp/heaptap-fuzz-XXXXXX");
		if (!mkdtemp(dir))
			abort();
		snprintf(path, sizeof path, "%s/obj", dir);
		atexit(cleanup);
	}
	FILE *fp = fopen(path, "wb");
	if (!fp)
		abort();
	if (size && fwrite(data, 1, size, fp) != size)
		abort();
	fclose(fp);

	char bid[129];
	symfile_read_build_id(path, bid, sizeof bid);
	struct symfile_cfg cfg = {NULL, NULL, dir, 1, 0};
	char why[8192];
	for (int no_lines = 0; no_lines < 2; no_lines++) {
		cfg.no_lines = no_lines;
		struct symfile *f = symfile_open(path, path, NULL, &cfg, why, sizeof why);
		if (!f) {
			if (!why[0])
				abort(); /* a failure always says why */
			break;
		}
		(void)symfile_note(f);
		uint64_t va, sz;
		for (size_t i = 0; i < 16 && symfile_segment(f, i, &va, &sz) == 0; i++) {
			uint64_t step = sz / 48 + 1;
			for (uint64_t k = 0; k < 48; k++) {
				uint64_t a = va + k * step;
				if (symfile_contains(f, a))
					resolve(f, a);
				uint64_t rt;
				if (symfile_vaddr(f, 0x10000, 0, 0x10000 + k * step, &rt) == 0)
					resolve(f, rt);
			}
		}
		if (size >= 16) {
			uint64_t a, b;
			memcpy(&a, data + size - 16, 8);
			memcpy(&b, data + size - 8, 8);
			resolve(f, a);
			resolve(f, b);
		}
		size_t nsyms;
		struct dwarfidx_stats st;
		symfile_stats(f, &nsyms, &st);
		symfile_free(f);
	}
	unlink(path);
	return 0;
}
