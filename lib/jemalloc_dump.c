/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * jemalloc_dump.c - jemalloc's heap_v2 dumps read back in-process (jemalloc_dump.h).
 *
 * heap_v2 as jemalloc writes it: "heap_v2/<period>", a "t*:" total line and per-thread lines,
 * then per stack an "@ 0x<pc> 0x<pc> ..." line followed by its "t*: <objs>: <bytes> [<objs>:
 * <bytes>]" line (current, then cumulative) and per-thread lines, and "MAPPED_LIBRARIES:".
 * Only the "@" and "t*" lines of stacks are read; the map is heaptap's own (maps.h).
 */
#include "jemalloc_dump.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../base/outbuf.h"
#include "../profile/inproc/unbias.h"
#include "dumpfmt.h"
#include "jemalloc_backend.h"
#include "rundir.h"
#include "sys.h"

#define TRIM_MAX_FRAMES 32

struct jstack {
	size_t off;            /* first frame in pcs */
	uint32_t depth;
	double cur_objs, cur_bytes, acc_objs, acc_bytes; /* as printed */
};

static struct jstack *stacks;
static size_t nstacks, stacks_cap;
static uintptr_t *pcs;
static size_t npcs, pcs_cap;
static uint64_t file_period;
static uint64_t seq;

/* Makes room for n stacks and m frames (the file's size bounds both). */
static int reserve(size_t n, size_t m)
{
	if (n > stacks_cap) {
		if (stacks)
			sys_unmap(stacks, stacks_cap * sizeof *stacks);
		stacks_cap = 0;
		if (!(stacks = sys_map(n * sizeof *stacks)))
			return -ENOMEM;
		stacks_cap = n;
	}
	if (m > pcs_cap) {
		if (pcs)
			sys_unmap(pcs, pcs_cap * sizeof *pcs);
		pcs_cap = 0;
		if (!(pcs = sys_map(m * sizeof *pcs)))
			return -ENOMEM;
		pcs_cap = m;
	}
	return 0;
}

static int is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static uint64_t hex_value(char c)
{
	return c <= '9' ? (uint64_t)(c - '0') : (uint64_t)((c | 32) - 'a' + 10);
}

/* Reads an unsigned decimal at *p (skipping blanks first); advances *p. */
static double read_count(const char **p, const char *end)
{
	const char *s = *p;
	while (s < end && *s == ' ')
		s++;
	double v = 0;
	while (s < end && *s >= '0' && *s <= '9')
		v = v * 10 + (*s++ - '0');
	*p = s;
	return v;
}

/* Skips to just past the next occurrence of c on the line; 0 when there is none. */
static int skip_past(const char **p, const char *end, char c)
{
	const char *s = *p;
	while (s < end && *s != c)
		s++;
	if (s == end)
		return 0;
	*p = s + 1;
	return 1;
}

/* Drops the frames up to the last allocator frame among the leading ones (one is kept). */
static void trim(struct jstack *st, int (*is_machinery)(uintptr_t pc))
{
	uint32_t last = 0, n = st->depth < TRIM_MAX_FRAMES ? st->depth : TRIM_MAX_FRAMES;
	for (uint32_t i = 0; i < n; i++)
		if (is_machinery(pcs[st->off + i]))
			last = i + 1;
	if (last >= st->depth)
		last = st->depth - 1;
	st->off += last;
	st->depth -= last;
}

int jemalloc_dump_parse(const char *text, size_t len, int (*is_machinery)(uintptr_t pc),
                        uint64_t *period)
{
	static const char magic[] = "heap_v2/";
	nstacks = npcs = 0;
	if (len < sizeof magic || memcmp(text, magic, sizeof magic - 1) != 0)
		return -EPROTO;
	/* every frame takes at least 4 bytes of text (" 0x0"), every stack at least 16 */
	int rc = reserve(len / 16 + 1, len / 4 + 1);
	if (rc)
		return rc;
	const char *p = text + sizeof magic - 1, *end = text + len;
	file_period = (uint64_t)read_count(&p, end);
	*period = file_period;
	struct jstack *cur = NULL;
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol)
			eol = end;
		const char *s = p;
		p = eol + 1;
		while (s < eol && *s == ' ')
			s++;
		if (s < eol && *s == '@') {
			cur = &stacks[nstacks++];
			memset(cur, 0, sizeof *cur);
			cur->off = npcs;
			for (s++; s < eol;) {
				while (s < eol && *s == ' ')
					s++;
				if (eol - s < 3 || s[0] != '0' || (s[1] | 32) != 'x')
					break;
				uint64_t v = 0;
				for (s += 2; s < eol && is_hex(*s); s++)
					v = v << 4 | hex_value(*s);
				pcs[npcs++] = (uintptr_t)v;
				cur->depth++;
			}
			if (cur->depth == 0)
				nstacks--, cur = NULL;
		} else if (cur && eol - s > 3 && memcmp(s, "t*:", 3) == 0) {
			s += 3;
			cur->cur_objs = read_count(&s, eol);
			if (skip_past(&s, eol, ':'))
				cur->cur_bytes = read_count(&s, eol);
			if (skip_past(&s, eol, '[')) {
				cur->acc_objs = read_count(&s, eol);
				if (skip_past(&s, eol, ':'))
					cur->acc_bytes = read_count(&s, eol);
			}
			if (is_machinery)
				trim(cur, is_machinery);
			cur = NULL;
		} else if (eol - s >= 17 && memcmp(s, "MAPPED_LIBRARIES:", 17) == 0) {
			break;
		}
	}
	return 0;
}

int jemalloc_dump_for_each(const struct dump_source *src,
                           int (*fn)(void *ctx, const struct dump_stack *st), void *ctx)
{
	(void)src;
	for (size_t i = 0; i < nstacks; i++) {
		const struct jstack *j = &stacks[i];
		struct dump_stack st;
		memset(&st, 0, sizeof st);
		st.pcs = pcs + j->off;
		st.depth = j->depth;
		unbias_jeprof(j->cur_objs, j->cur_bytes, file_period, &st.live_objs, &st.live_bytes);
		unbias_jeprof(j->acc_objs, j->acc_bytes, file_period, &st.alloc_objs, &st.alloc_bytes);
		st.live_samples = (uint64_t)j->cur_objs;
		if (st.live_objs == 0 && st.alloc_objs == 0)
			continue;
		int r = fn(ctx, &st);
		if (r)
			return r;
	}
	return 0;
}

int jemalloc_dump_take(uint64_t *period, int *accum)
{
	if (!jemalloc_backend_enabled())
		return -ENOENT;
	char name[80], path[DUMP_PATH_MAX];
	struct outbuf ob;
	outbuf_init(&ob, name, sizeof name - 1, -1);
	outbuf_puts(&ob, "snapshot.");
	outbuf_u64(&ob, (uint64_t)getpid());
	outbuf_putc(&ob, '.');
	outbuf_u64(&ob, seq++);
	outbuf_puts(&ob, ".heap");
	name[ob.len] = 0;
	if (!rundir_path(path, sizeof path, name))
		return -errno;
	int rc = jemalloc_backend_dump(path);
	if (rc)
		return rc;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	unlink(path);
	if (fd < 0)
		return -errno;
	struct stat st;
	void *m = MAP_FAILED;
	if (fstat(fd, &st) != 0)
		rc = -errno;
	else if (st.st_size == 0)
		rc = -EPROTO;
	else if ((m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0)) == MAP_FAILED)
		rc = -errno;
	close(fd);
	if (rc)
		return rc;
	rc = jemalloc_dump_parse(m, (size_t)st.st_size, jemalloc_backend_is_machinery, period);
	munmap(m, (size_t)st.st_size);
	*accum = jemalloc_backend_bool("opt.prof_accum") == 1;
	return rc;
}
