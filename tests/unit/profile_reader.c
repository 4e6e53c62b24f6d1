/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * profile_reader.c - unit test of format detection and the single entry point: every golden
 * file is routed to the right reader (pprof gzipped and plain, raw, heap_v2, legacy), odd
 * prefixes are handled like jeprof does, file errors are named, and every text golden file
 * cut at every line boundary and inside lines either reads or fails with "<file>:<line>: ...".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "../../profile/model.h"
#include "../../profile/reader.h"
#include "check.h"



static const char *root(void)
{
	const char *r = getenv("ROOT");
	return r ? r : ".";
}

static uint8_t *slurp(const char *name, size_t *n)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/tests/golden/%s", root(), name);
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	uint8_t *buf = NULL;
	size_t cap = 0;
	*n = 0;
	for (;;) {
		if (*n == cap) {
			cap = cap ? cap * 2 : 65536;
			buf = realloc(buf, cap);
		}
		size_t r = fread(buf + *n, 1, cap - *n, f);
		if (!r)
			break;
		*n += r;
	}
	fclose(f);
	return buf;
}

static enum reader_format detect_str(const char *s)
{
	return reader_detect((const uint8_t *)s, strlen(s));
}

static void test_detect_strings(void)
{
	CHECK(detect_str("heap_v2/524288\n") == READER_HEAPV2, "heap_v2");
	CHECK(detect_str("%warn x\n%y\nheap_v2/1\n") == READER_HEAPV2, "after %% lines");
	CHECK(detect_str("--- heap\nheap_v2/1\n") == READER_HEAPV2, "after --- heap");
	CHECK(detect_str("--- growth\nheap profile: 1: 2 [3: 4] @ growth\n") == READER_LEGACY, "--- growth");
	CHECK(detect_str("heap profile: 1: 2 [3: 4]\n") == READER_LEGACY, "legacy");
	CHECK(detect_str("--- symbol\n") == READER_RAW, "raw");
	CHECK(detect_str("---   symbol\n") == READER_RAW, "raw with spaces (jeprof's /^--- *symbol/)");
	CHECK(detect_str(" heap_v2/1\n") == READER_UNKNOWN, "leading blank: jeprof wants ^heap");
	CHECK(detect_str("\nheap_v2/1\n") == READER_UNKNOWN, "an empty first line is the header");
	CHECK(detect_str("heapz_v2/1\n") == READER_UNKNOWN, "only 'heap profile:' or 'heap_v2/'");
	CHECK(detect_str("") == READER_UNKNOWN, "empty");
	CHECK(detect_str("%only\n") == READER_UNKNOWN, "only commands");
	const uint8_t gz[] = {0x1f, 0x8b, 8, 0};
	CHECK(reader_detect(gz, sizeof gz) == READER_PPROF, "gzip magic");
	const uint8_t pb[] = {0x0a, 0x04, 0x08, 0x01, 0x10, 0x02};
	CHECK(reader_detect(pb, sizeof pb) == READER_PPROF, "protobuf tag");
}

static void test_golden_files(void)
{
	static const struct {
		const char *name;
		enum reader_format f;
		const char *format;
	} cases[] = {
		{"jemalloc_accum.heap", READER_HEAPV2, "heap_v2"},
		{"gperftools_heapprofile.heap", READER_LEGACY, "heapprofile"},
		{"tcmalloc_sample.heap", READER_LEGACY, "heap_v2"},
		{"tcmalloc_growth.heap", READER_LEGACY, "growth"},
		{"go_debug1.heap", READER_LEGACY, "heap"},
		{"raw_jemalloc.heap", READER_RAW, "raw"},
		{"go_debug1.pb.gz", READER_PPROF, NULL},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		size_t n;
		uint8_t *d = slurp(cases[i].name, &n);
		CHECK(d != NULL, "%s missing", cases[i].name);
		if (!d)
			continue;
		CHECK(reader_detect(d, n) == cases[i].f, "%s detected as %d", cases[i].name, reader_detect(d, n));
		struct profile p;
		char err[512];
		profile_init(&p);
		int rc = profile_read_mem(d, n, cases[i].name, &p, err, sizeof err);
		CHECK(rc == 0 && p.nsamples > 0, "%s: %s", cases[i].name, rc ? err : "no samples");
		if (rc == 0 && cases[i].format)
			CHECK(strcmp(p.format, cases[i].format) == 0, "%s: format %s", cases[i].name, p.format);
		if (rc == 0)
			CHECK(strcmp(p.source, cases[i].name) == 0, "source %s", p.source);
		if (cases[i].f == READER_PPROF && rc == 0) {
			/* The protobuf Go's pprof made from go_debug1.heap (Go scales 'heap' as Poisson,
			   jeprof as v1, so only the structure is compared): same stacks, alloc present. */
			CHECK(p.has_alloc, "pprof alloc values");
			/* the same bytes, gunzipped: a bare protobuf is detected and read too */
			uint8_t *raw = malloc(1 << 20);
			z_stream z;
			memset(&z, 0, sizeof z);
			inflateInit2(&z, 16 + MAX_WBITS);
			z.next_in = d;
			z.avail_in = (uInt)n;
			z.next_out = raw;
			z.avail_out = 1 << 20;
			int zr = inflate(&z, Z_FINISH);
			size_t rawn = z.total_out;
			inflateEnd(&z);
			CHECK(zr == Z_STREAM_END, "gunzip");
			CHECK(reader_detect(raw, rawn) == READER_PPROF, "plain protobuf");
			struct profile q;
			profile_init(&q);
			rc = profile_read_mem(raw, rawn, "plain.pb", &q, err, sizeof err);
			CHECK(rc == 0 && q.nsamples == p.nsamples, "plain protobuf read: %s", rc ? err : "");
			profile_release(&q);
			free(raw);
		}
		profile_release(&p);
		free(d);
	}
}

static void test_file_errors(void)
{
	struct profile p;
	char err[512];
	profile_init(&p);
	int rc = profile_read_file("/nonexistent/x.heap", &p, err, sizeof err);
	CHECK(rc == -1 && strcmp(err, "/nonexistent/x.heap: No such file or directory") == 0, "'%s'", err);
	rc = profile_read_file("/", &p, err, sizeof err);
	CHECK(rc == -1 && strcmp(err, "/: not a regular file (a directory)") == 0, "'%s'", err);
	/* Only regular files are read: a device is refused before any byte is read. */
	rc = profile_read_file("/dev/null", &p, err, sizeof err);
	CHECK(rc == -1 && strcmp(err, "/dev/null: not a regular file (a character device)") == 0, "'%s'", err);
	rc = profile_read_file("/dev/zero", &p, err, sizeof err);
	CHECK(rc == -1 && strcmp(err, "/dev/zero: not a regular file (a character device)") == 0, "'%s'", err);
	const uint8_t junk[] = {0x1f, 0x8b, 0xff, 0xff};
	rc = profile_read_mem(junk, sizeof junk, "junk.pb.gz", &p, err, sizeof err);
	CHECK(rc == -1 && strncmp(err, "junk.pb.gz: ", 12) == 0, "pprof errors are named: '%s'", err);
	CHECK(p.nsamples == 0, "left empty");
	profile_release(&p);
}

/* gzip of d[0..n) (one member) into a malloc'd buffer. */
static uint8_t *gzip_bytes(const uint8_t *d, size_t n, size_t *outn)
{
	z_stream z;
	memset(&z, 0, sizeof z);
	deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
	size_t cap = deflateBound(&z, (uLong)n) + 64;
	uint8_t *out = malloc(cap);
	z.next_in = (Bytef *)d;
	z.avail_in = (uInt)n;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	deflate(&z, Z_FINISH);
	*outn = z.total_out;
	deflateEnd(&z);
	return out;
}

/* Gzipped text profiles (go tool pprof reads them too) are read as the text they hold. */
static void test_gzipped_text(void)
{
	size_t n, gzn, gz2n;
	uint8_t *d = slurp("jemalloc_accum.heap", &n);
	if (!d) {
		CHECK(0, "golden missing");
		return;
	}
	uint8_t *gz = gzip_bytes(d, n, &gzn);
	struct profile p, q;
	char err[512];
	profile_init(&p);
	profile_init(&q);
	CHECK(profile_read_mem(d, n, "a.heap", &p, err, sizeof err) == 0, "%s", err);
	CHECK(profile_read_mem(gz, gzn, "a.heap.gz", &q, err, sizeof err) == 0, "%s", err);
	CHECK(q.format && strcmp(q.format, "heap_v2") == 0 && q.nsamples == p.nsamples && q.nmaps == p.nmaps,
	      "gzipped heap_v2 read as heap_v2");
	for (int k = 0; k < PV_COUNT; k++)
		CHECK(profile_total(&p, k) == profile_total(&q, k), "total %d", k);
	/* two members: the first half and the second half of the file, split at a line end */
	size_t half = n / 2;
	while (half < n && d[half - 1] != '\n')
		half++;
	uint8_t *g1 = gzip_bytes(d, half, &gzn);
	uint8_t *g2 = gzip_bytes(d + half, n - half, &gz2n);
	uint8_t *both = malloc(gzn + gz2n);
	memcpy(both, g1, gzn);
	memcpy(both + gzn, g2, gz2n);
	profile_release(&q);
	CHECK(profile_read_mem(both, gzn + gz2n, "two.gz", &q, err, sizeof err) == 0 &&
	          profile_total(&q, PV_INUSE_BYTES) == profile_total(&p, PV_INUSE_BYTES),
	      "concatenated gzip members: %s", err);
	/* gzipped junk text: named as unrecognized, not as a broken protobuf */
	const char junk[] = "hello world\n";
	uint8_t *gj = gzip_bytes((const uint8_t *)junk, sizeof junk - 1, &gzn);
	CHECK(profile_read_mem(gj, gzn, "j.gz", &q, err, sizeof err) == -1 &&
	          strcmp(err, "j.gz: unrecognized profile format") == 0,
	      "'%s'", err);
	profile_release(&p);
	profile_release(&q);
	free(d);
	free(gz);
	free(g1);
	free(g2);
	free(both);
	free(gj);
}

/* Every prefix of each text golden file either reads or fails naming file and line. */
static void test_truncation(void)
{
	static const char *const names[] = {"jemalloc_accum.heap", "gperftools_heapprofile.heap",
	                                    "synth_heapv2_edge.heap", "raw_jemalloc.heap", "go_debug1.heap"};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		size_t n;
		uint8_t *d = slurp(names[i], &n);
		if (!d) {
			CHECK(0, "%s missing", names[i]);
			continue;
		}
		int ok = 0, failed = 0, truncated = 0;
		size_t step = n / 400 + 1;
		for (size_t cut = 0; cut <= n; cut += (cut < 200 ? 1 : step)) {
			struct profile p;
			char err[512] = "";
			profile_init(&p);
			int rc = profile_read_mem(d, cut, "cut.heap", &p, err, sizeof err);
			if (rc == 0) {
				ok++;
			} else {
				failed++;
				CHECK(strncmp(err, "cut.heap:", 9) == 0, "%s cut at %zu: '%s'", names[i], cut, err);
				truncated += strstr(err, "truncated") != NULL;
			}
			profile_release(&p);
		}
		CHECK(ok > 0 && failed > 0, "%s: %d read, %d failed", names[i], ok, failed);
		free(d);
	}
}

int main(void)
{
	test_detect_strings();
	test_golden_files();
	test_file_errors();
	test_gzipped_text();
	test_truncation();
	return check_finish("profile_reader");
}
