/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cmd_merge.c - `heaptap merge PROFILE... -o OUT`: sums several profiles (any readable format)
 * into one heap_v2 file that jeprof and every heaptap command read. Values are written
 * pre-compensated for the common sampling period, so a reader that unsamples gets the summed
 * estimates back. It does not symbolize; the addresses and mappings are kept as they were.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../base/outbuf.h"
#include "../profile/inproc/dumpsrc.h"
#include "../profile/inproc/heapv2_write.h"
#include "cmd.h"
#include "common.h"
#include "render/pprof_export.h"
#include "stacks.h"

static const char merge_help[] =
	"usage: heaptap merge [options] [BINARY] PROFILE... -o OUT\n"
	"Sums the profiles (jemalloc/heaptap heap_v2, gperftools, pprof) into OUT: a heap_v2 text\n"
	"profile that jeprof and every heaptap command read, or, when OUT ends in .pb.gz or .pb, a\n"
	"symbolized pprof profile for go tool pprof. Profiles sampled with different periods are\n"
	"merged on their unsampled values and written with period 1.\n"
	"  -o FILE, --output=FILE the file to write ('-' for stdout)\n";

struct merge_src {
	const struct profile *p;
	uint64_t *pcs;
	size_t pcs_cap;
};

static int each_stack(const struct dump_source *src, int (*fn)(void *ctx, const struct dump_stack *st),
                      void *ctx)
{
	struct merge_src *ms = src->priv;
	const struct profile *p = ms->p;
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct prof_sample *s = &p->samples[i];
		if (s->naddrs > ms->pcs_cap) {
			free(ms->pcs);
			ms->pcs_cap = s->naddrs * 2;
			ms->pcs = malloc(ms->pcs_cap * sizeof(*ms->pcs));
			if (!ms->pcs)
				return -ENOMEM;
		}
		/* The model holds lookup addresses (return address - 1); the writer wants return
		   addresses (it writes frame 0 minus one, and readers subtract one from the rest). */
		for (uint32_t k = 0; k < s->naddrs; k++)
			ms->pcs[k] = s->addrs[k] + 1;
		struct dump_stack st = {
			.pcs = (const uintptr_t *)ms->pcs,
			.depth = s->naddrs,
			.live_objs = s->v[PV_INUSE_OBJS] > 0 ? s->v[PV_INUSE_OBJS] : 0,
			.live_bytes = s->v[PV_INUSE_BYTES] > 0 ? s->v[PV_INUSE_BYTES] : 0,
			.alloc_objs = s->v[PV_ALLOC_OBJS] > 0 ? s->v[PV_ALLOC_OBJS] : 0,
			.alloc_bytes = s->v[PV_ALLOC_BYTES] > 0 ? s->v[PV_ALLOC_BYTES] : 0,
			.xfree_bytes = s->xfree > 0 ? s->xfree : 0,
		};
		if (st.live_bytes == 0 && st.alloc_bytes == 0 && st.xfree_bytes == 0)
			continue;
		int r = fn(ctx, &st);
		if (r)
			return r;
	}
	return 0;
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* Writes p to fd as heap_v2. jemalloc dumps lose nothing by going without heaptap's metadata;
   with it, readers would stop trimming jemalloc's own frames, so it is only written when no
   input was a jemalloc dump. */
static int write_heapv2(int fd, const struct profile *p, uint64_t period, int with_meta)
{
	char *maps = NULL;
	size_t maps_len = 0;
	FILE *mf = open_memstream(&maps, &maps_len);
	if (!mf)
		return -ENOMEM;
	struct dump_mapping *dm = calloc(p->nmaps + 1, sizeof(*dm));
	uint8_t *ids = calloc(p->nmaps + 1, 64);
	if (!dm || !ids) {
		fclose(mf);
		free(maps);
		free(dm);
		free(ids);
		return -ENOMEM;
	}
	for (size_t i = 0; i < p->nmaps; i++) {
		const struct prof_mapping *m = &p->maps[i];
		fprintf(mf, "%llx-%llx r-xp %08llx 00:00 0 %s\n", (unsigned long long)m->start,
		        (unsigned long long)m->limit, (unsigned long long)m->offset, m->path ? m->path : "");
		dm[i].start = m->start;
		dm[i].limit = m->limit;
		dm[i].offset = m->offset;
		dm[i].path = m->path ? m->path : "";
		memcpy(dm[i].perms, "r-xp", 5);
		dm[i].unloaded = m->unloaded;
		if (m->build_id) {
			uint32_t n = 0;
			for (const char *c = m->build_id; c[0] && c[1] && n < 64; c += 2) {
				int hi = hexval(c[0]), lo = hexval(c[1]);
				if (hi < 0 || lo < 0)
					break;
				ids[i * 64 + n++] = (uint8_t)(hi * 16 + lo);
			}
			dm[i].build_id = n ? ids + i * 64 : NULL;
			dm[i].build_id_len = n;
		}
	}
	fclose(mf);
	struct merge_src ms = {.p = p};
	struct dump_source src = {
		.sample_period = period,
		.accum = p->has_alloc,
		.time_ns = p->time_ns,
		.pid = p->pid,
		.exe_path = p->exe_path ? p->exe_path : "",
		.cmdline = p->cmdline ? p->cmdline : "",
		.trigger = "manual",
		.maps_text = maps,
		.maps_len = maps_len,
		.mappings = dm,
		.nmappings = p->nmaps,
		.for_each_stack = each_stack,
		.priv = &ms,
	};
	static char buf[1 << 16];
	struct outbuf ob;
	outbuf_init(&ob, buf, sizeof(buf), fd);
	int rc;
	if (with_meta) {
		rc = heapv2_write(&src, &ob);
	} else {
		/* The same layout without the "# heaptap:" lines. */
		double t[4] = {0, 0, 0, 0};
		for (size_t i = 0; i < p->nsamples; i++)
			for (int k = 0; k < 4; k++)
				t[k] += p->samples[i].v[k] > 0 ? p->samples[i].v[k] : 0;
		outbuf_puts(&ob, "heap_v2/");
		outbuf_u64(&ob, period);
		outbuf_putc(&ob, '\n');
		heapv2_write_counts(&ob, period, t[PV_INUSE_OBJS], t[PV_INUSE_BYTES], t[PV_ALLOC_OBJS],
		                    t[PV_ALLOC_BYTES]);
		for (size_t i = 0; i < p->nsamples; i++) {
			const struct prof_sample *s = &p->samples[i];
			double v[4];
			for (int k = 0; k < 4; k++)
				v[k] = s->v[k] > 0 ? s->v[k] : 0;
			if (v[PV_INUSE_BYTES] == 0 && v[PV_ALLOC_BYTES] == 0)
				continue;
			outbuf_putc(&ob, '@');
			for (uint32_t k = 0; k < s->naddrs; k++) {
				outbuf_puts(&ob, " 0x");
				outbuf_hex(&ob, s->addrs[k] + (k > 0));
			}
			outbuf_putc(&ob, '\n');
			heapv2_write_counts(&ob, period, v[PV_INUSE_OBJS], v[PV_INUSE_BYTES], v[PV_ALLOC_OBJS],
			                    v[PV_ALLOC_BYTES]);
		}
		outbuf_puts(&ob, "\nMAPPED_LIBRARIES:\n");
		outbuf_put(&ob, maps, maps_len);
		rc = ob.err ? -ob.err : 0;
	}
	if (outbuf_flush(&ob) != 0 && rc == 0)
		rc = -ob.err;
	free(ms.pcs);
	free(maps);
	free(dm);
	free(ids);
	return rc;
}

int cmd_merge(int argc, char **argv)
{
	struct common_extra ex = {.help = merge_help};
	struct common_args a;
	int rc = common_parse(&a, argc, argv, &ex);
	if (rc >= 0)
		return rc;
	if (!a.output) {
		rc = common_usage_error(&a, "no output file (-o OUT)");
		common_args_release(&a);
		return rc;
	}
	if (a.nprofiles == 0) {
		rc = common_usage_error(&a, "no profile given");
		common_args_release(&a);
		return rc;
	}
	struct profile p;
	profile_init(&p);
	rc = common_read(&a, a.profiles[0], &p);
	uint64_t period = p.period;
	int jemalloc = p.jemalloc_frames;
	for (size_t k = 1; rc == 0 && k < a.nprofiles; k++) {
		struct profile q;
		profile_init(&q);
		rc = common_read(&a, a.profiles[k], &q);
		if (rc == 0)
			rc = common_check_same_kind(&p, a.profiles[0], &q, a.profiles[k]);
		if (rc == 0) {
			if (q.period != period)
				period = 1;
			jemalloc |= q.jemalloc_frames;
			profile_merge(&p, &q, 1.0);
		}
		profile_release(&q);
	}
	size_t olen = strlen(a.output);
	int pb_gz = olen > 6 && strcmp(a.output + olen - 6, ".pb.gz") == 0;
	int pb = olen > 3 && strcmp(a.output + olen - 3, ".pb") == 0;
	if (rc == 0 && (pb_gz || pb)) {
		rc = common_symbolize(&a, &p);
		if (rc == 0) {
			/* go tool pprof does not know jemalloc's internal frames: drop them as jeprof does */
			if (!a.keep_allocator)
				stacks_trim_allocator(&p);
		}
		int w = rc == 0 ? pprof_export(&p, a.output, pb_gz) : 0;
		if (w) {
			fprintf(stderr, "heaptap: %s: %s\n", a.output, strerror(-w));
			rc = 1;
		}
	} else if (rc == 0 && p.cpu) {
		fprintf(stderr, "heaptap: %s: CPU profiles merge into pprof only (name it .pb.gz or .pb)\n",
		        a.output);
		rc = 1;
	} else if (rc == 0) {
		if (period == 0)
			period = 1;
		int fd = strcmp(a.output, "-") == 0 ? 1 : open(a.output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0) {
			fprintf(stderr, "heaptap: %s: %s\n", a.output, strerror(errno));
			rc = 1;
		} else {
			int w = write_heapv2(fd, &p, period, !jemalloc);
			if (fd != 1 && close(fd) != 0 && w == 0)
				w = -errno;
			if (w) {
				fprintf(stderr, "heaptap: %s: %s\n", a.output, strerror(-w));
				rc = 1;
			}
		}
	}
	profile_release(&p);
	common_args_release(&a);
	return rc;
}
