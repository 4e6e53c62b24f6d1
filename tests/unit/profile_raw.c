/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * profile_raw.c - unit test of the jeprof --raw (symbolized profile) reader: the real file in
 * tests/golden/raw_jemalloc.heap (fetched by the real jeprof from a loopback symbol server, see
 * regen.sh) and hand-written edge cases: inline chains turned innermost first, unresolved
 * addresses, binary=, the embedded heap_v2 and legacy profiles, and errors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../profile/model.h"
#include "../../profile/reader.h"
#include "../../profile/symtab.h"
#include "check.h"



static void test_golden(void)
{
	const char *root = getenv("ROOT");
	char path[4096], path2[4096], err[512];
	snprintf(path, sizeof path, "%s/tests/golden/raw_jemalloc.heap", root ? root : ".");
	snprintf(path2, sizeof path2, "%s/tests/golden/jemalloc_accum.heap", root ? root : ".");
	struct profile p, q;
	profile_init(&p);
	profile_init(&q);
	int rc = profile_read_file(path, &p, err, sizeof err);
	CHECK(rc == 0, "%s", err);
	rc = profile_read_file(path2, &q, err, sizeof err);
	CHECK(rc == 0, "%s", err);
	if (failures) {
		profile_release(&p);
		profile_release(&q);
		return;
	}
	CHECK(strcmp(p.format, "raw") == 0, "format %s", p.format);
	CHECK(p.exe_path && strcmp(p.exe_path, "/usr/bin/golden") == 0, "binary= %s", p.exe_path);
	CHECK(p.jemalloc_frames == 1, "embedded jemalloc dump");
	CHECK(p.nsamples == q.nsamples && p.nmaps == q.nmaps, "same profile as the one served");
	for (int k = 0; k < PV_COUNT; k++)
		CHECK(profile_total(&p, k) == profile_total(&q, k), "total %d", k);
	/* every address of every stack was sent to the symbol server and comes back in the file */
	size_t n, chains = 0, unresolved = 0, plain = 0;
	uint64_t *u = profile_unique_addrs(&p, &n);
	CHECK(symtab_count(p.syms) == n, "symbols %zu for %zu addresses", symtab_count(p.syms), n);
	for (size_t i = 0; i < n; i++) {
		const struct prof_symbol *s = symtab_get(p.syms, u[i]);
		CHECK(s != NULL, "address %#llx has no symbol", (unsigned long long)u[i]);
		if (!s)
			continue;
		char want[64];
		if (u[i] % 4 == 3) { /* the server left it out: jeprof printed the address as the name */
			CHECK(s->nframes == 0, "unresolved %#llx kept as unknown", (unsigned long long)u[i]);
			unresolved++;
		} else if (u[i] % 4 == 1) {
			snprintf(want, sizeof want, "inner_%llx", (unsigned long long)u[i]);
			CHECK(s->nframes == 3 && strcmp(s->frames[0].func, want) == 0 &&
			          strncmp(s->frames[1].func, "mid_", 4) == 0 && strncmp(s->frames[2].func, "outer_", 6) == 0,
			      "chain innermost first at %#llx", (unsigned long long)u[i]);
			chains++;
		} else {
			snprintf(want, sizeof want, "fn_%llx", (unsigned long long)u[i]);
			CHECK(s->nframes == 1 && strcmp(s->frames[0].func, want) == 0, "plain %s", want);
			plain++;
		}
	}
	CHECK(chains && unresolved && plain, "all kinds present: %zu %zu %zu", chains, unresolved, plain);
	free(u);
	profile_release(&p);
	profile_release(&q);
}

static void test_synthetic(void)
{
	const char *text = "--- symbol\r\n"
	                   "binary=/opt/x\r\n"
	                   "0x0000000000401000 main\r\n"
	                   "0x0000000000402000 std::list<int>::operator--()--helper\r\n"
	                   "0x403000\r\n"
	                   "junk\r\n"
	                   "---\r\n"
	                   "--- heap\r\n"
	                   "heap profile: 1: 10 [1: 10] @ heapprofile\r\n"
	                   "1: 10 [1: 10] @ 0x402000 0x401001\r\n";
	struct profile p;
	char err[256];
	profile_init(&p);
	int rc = profile_read_mem((const uint8_t *)text, strlen(text), "s.raw", &p, err, sizeof err);
	CHECK(rc == 0, "%s", err);
	if (rc == 0) {
		CHECK(p.nsamples == 1 && p.samples[0].addrs[1] == 0x401000, "embedded legacy profile, callers -1");
		const struct prof_symbol *s = symtab_get(p.syms, 0x402000);
		CHECK(s && s->nframes == 2 && strcmp(s->frames[0].func, "helper") == 0 &&
		          strcmp(s->frames[1].func, "std::list<int>::operator--()") == 0,
		      "operator-- is not a separator");
		CHECK(symtab_get(p.syms, 0x403000) == NULL, "a line without a name is skipped");
		CHECK(p.skipped_lines == 2, "skipped %lu", p.skipped_lines);
		CHECK(strcmp(p.exe_path, "/opt/x") == 0, "binary");
	}
	profile_release(&p);

	static const char *const bad[][2] = {
		{"--- symbol\n0x1 f\n", "b.raw:2: symbol section not terminated by '---'"},
		{"--- symbol\n0x1 f\n---\n", "b.raw:3: no profile after the symbol section"},
		{"--- symbol\n---\n--- heap\nwhat\n", "b.raw:4: cannot recognize profile section after symbols"},
		{"--- symbol\n---\nheap_v2/1\n@ 0x1\n  t*: 1: x [0: 0]\n", "b.raw:5: malformed count line"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char e[256] = "";
		profile_init(&p);
		rc = profile_read_mem((const uint8_t *)bad[i][0], strlen(bad[i][0]), "b.raw", &p, e, sizeof e);
		CHECK(rc == -1 && strcmp(e, bad[i][1]) == 0, "case %zu: '%s'", i, e);
		profile_release(&p);
	}
}

int main(void)
{
	test_golden();
	test_synthetic();
	return check_finish("profile_raw");
}
