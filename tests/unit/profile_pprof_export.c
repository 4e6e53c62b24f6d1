/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * profile_pprof_export.c - unit test of the CLI's symbolized pprof exporter: a model profile
 * with mappings, symbols (inline chains, unknown addresses, a synthetic address) and
 * negative values is exported, gzipped and plain, and read back with pprof_read; every
 * value, address, frame, mapping and fact must survive. Not a go tool pprof test (see
 * tests/e2e/pprof_gotool.sh and pprof_golden.sh).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../cli/render/pprof_export.h"
#include "../../profile/model.h"
#include "../../profile/pprof_read.h"
#include "../../profile/symtab.h"
#include "check.h"



static uint8_t *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long len = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *b = malloc(len > 0 ? (size_t)len : 1);
	*n = fread(b, 1, (size_t)len, f);
	fclose(f);
	return b;
}

static void build(struct profile *p, int with_alloc)
{
	profile_init(p);
	profile_add_mapping(p, 0x400000, 0x500000, 0x1000, "/usr/bin/prog", "abcdef0123");
	profile_add_mapping(p, 0x7f0000000000, 0x7f0000100000, 0, "/lib/libc.so.6", NULL);
	uint64_t s0[] = { 0x401000, 0x402000, 0x7f0000000100 };
	uint64_t s1[] = { 0x403000, 0x402000, 0x7f0000000100 };
	uint64_t s2[] = { PPROF_READ_SYNTH_BASE + 5 };
	double v0[PV_COUNT] = { 3.9, 3000.7, with_alloc ? 10.2 : 0, with_alloc ? 10000.9 : 0 };
	double v1[PV_COUNT] = { -2.5, -2048.0, with_alloc ? 4 : 0, with_alloc ? 4096 : 0 };
	double v2[PV_COUNT] = { 1, 64, with_alloc ? 1 : 0, with_alloc ? 64 : 0 };
	profile_add(p, s0, 3, v0);
	profile_add(p, s1, 3, v1);
	profile_add(p, s2, 1, v2);
	p->syms = symtab_new();
	struct prof_frame chain[2] = { { "inlined_helper", "a.h", 12 }, { "outer(int)", "a.c", 40 } };
	symtab_put(p->syms, 0x401000, chain, 2, "/usr/bin/prog");
	struct prof_frame one = { "main", "main.c", 7 };
	symtab_put(p->syms, 0x402000, &one, 1, "/usr/bin/prog");
	symtab_put(p->syms, 0x403000, NULL, 0, "/usr/bin/prog"); /* looked up, unknown */
	struct prof_frame nofile = { "start_thread", NULL, 0 };
	symtab_put(p->syms, 0x7f0000000100, &nofile, 1, "/lib/libc.so.6");
	struct prof_frame synth = { "[jit]", NULL, 0 };
	symtab_put(p->syms, PPROF_READ_SYNTH_BASE + 5, &synth, 1, NULL);
	p->period = 524288;
	p->time_ns = 1234567890123ll;
	p->pid = 99;
	p->cmdline = profile_strdup(p, "prog -x");
	p->exe_path = profile_strdup(p, "/usr/bin/prog");
	p->format = profile_strdup(p, "heap_v2");
	p->has_alloc = with_alloc;
}

static void check_frame(const struct prof_symbol *s, uint32_t i, const char *func, const char *file,
                        int line)
{
	CHECK(s && i < s->nframes, "frame %u missing", i);
	if (!s || i >= s->nframes)
		return;
	const struct prof_frame *f = &s->frames[i];
	CHECK(f->func && !strcmp(f->func, func), "func %s, want %s", f->func ? f->func : "(null)", func);
	CHECK(file ? f->file && !strcmp(f->file, file) : f->file == NULL, "file %s, want %s",
	      f->file ? f->file : "(null)", file ? file : "(null)");
	CHECK(f->line == line, "line %d, want %d", f->line, line);
}

static void roundtrip(int with_alloc, int gzip)
{
	struct profile p, q;
	build(&p, with_alloc);
	char path[] = "/tmp/heaptap-export-test-XXXXXX";
	int fd = mkstemp(path);
	close(fd);
	int rc = pprof_export(&p, path, gzip);
	CHECK(rc == 0, "pprof_export returned %d", rc);
	size_t n = 0;
	uint8_t *b = slurp(path, &n);
	unlink(path);
	CHECK(b && n > 10, "no output");
	if (!b)
		return;
	CHECK(gzip ? b[0] == 0x1f && b[1] == 0x8b : b[0] != 0x1f, "gzip %d: first byte %02x", gzip, b[0]);
	profile_init(&q);
	char err[256];
	rc = pprof_read(b, n, &q, err, sizeof err);
	CHECK(rc == 0, "read back: %s", err);
	CHECK(q.nsamples == 3, "%zu samples", q.nsamples);
	CHECK(q.has_alloc == with_alloc, "has_alloc %d", q.has_alloc);
	CHECK(q.period == 524288 && q.time_ns == 1234567890123ll && q.pid == 99, "facts");
	CHECK(q.cmdline && !strcmp(q.cmdline, "prog -x") && q.exe_path &&
	      !strcmp(q.exe_path, "/usr/bin/prog"), "cmdline/exe");
	CHECK(q.nmaps == 2 && !strcmp(q.maps[0].path, "/usr/bin/prog") && q.maps[0].offset == 0x1000 &&
	      q.maps[0].build_id && !strcmp(q.maps[0].build_id, "abcdef0123") &&
	      q.maps[1].start == 0x7f0000000000, "mappings");
	if (q.nsamples == 3) {
		const struct prof_sample *s = q.samples;
		CHECK(s[0].naddrs == 3 && s[0].addrs[0] == 0x401000 && s[0].addrs[2] == 0x7f0000000100,
		      "sample 0 addresses");
		CHECK(s[0].v[PV_INUSE_OBJS] == 3 && s[0].v[PV_INUSE_BYTES] == 3000, "values truncated");
		CHECK(s[1].v[PV_INUSE_OBJS] == -2 && s[1].v[PV_INUSE_BYTES] == -2048, "negative values");
		CHECK(s[0].v[PV_ALLOC_OBJS] == (with_alloc ? 10 : 0) &&
		      s[0].v[PV_ALLOC_BYTES] == (with_alloc ? 10000 : 0), "alloc values");
		CHECK(s[1].addrs[1] == s[0].addrs[1], "shared location keeps one address");
		CHECK(s[2].naddrs == 1 && s[2].addrs[0] >= PPROF_READ_SYNTH_BASE, "synthetic address");
		const struct prof_symbol *sym = q.syms ? symtab_get(q.syms, 0x401000) : NULL;
		CHECK(sym && sym->nframes == 2, "inline chain");
		check_frame(sym, 0, "inlined_helper", "a.h", 12);
		check_frame(sym, 1, "outer(int)", "a.c", 40);
		CHECK(sym && sym->module && !strcmp(sym->module, "/usr/bin/prog"), "module");
		sym = q.syms ? symtab_get(q.syms, 0x402000) : NULL;
		check_frame(sym, 0, "main", "main.c", 7);
		sym = q.syms ? symtab_get(q.syms, 0x7f0000000100) : NULL;
		check_frame(sym, 0, "start_thread", NULL, 0);
		CHECK(!q.syms || !symtab_get(q.syms, 0x403000), "unknown address came back with symbols");
		sym = q.syms ? symtab_get(q.syms, s[2].addrs[0]) : NULL;
		check_frame(sym, 0, "[jit]", NULL, 0);
	}
	profile_release(&q);
	free(b);

	/* an unwritable path is an errno, not a crash */
	CHECK(pprof_export(&p, "/nonexistent-dir/x.pb.gz", gzip) < 0, "bad path accepted");
	profile_release(&p);
}

int main(void)
{
	roundtrip(1, 1);
	roundtrip(0, 1);
	roundtrip(1, 0);
	return check_finish("profile_pprof_export");
}
