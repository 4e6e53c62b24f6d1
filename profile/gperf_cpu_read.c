/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * gperf_cpu_read.c - the gperftools binary CPU profile reader of gperf_cpu_read.h: header
 * (0, header words, version, period in µs, ...), records up to the trailer (0, 1, 0), then
 * the memory map through textscan's map section. Every read is bounds-checked against n.
 */
#include "gperf_cpu_read.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "textscan.h"

static uint64_t word_at(const uint8_t *d, size_t i)
{
	uint64_t v;
	memcpy(&v, d + 8 * i, 8);
	return v;
}

int gperf_cpu_read_sniff(const uint8_t *d, size_t n)
{
	return n >= 40 && word_at(d, 0) == 0 && word_at(d, 1) == 3 && word_at(d, 2) == 0;
}

int gperf_cpu_read(const uint8_t *d, size_t n, const char *name, struct profile *p, char *err,
                   size_t errcap)
{
	size_t nw = n / 8;
	if (!gperf_cpu_read_sniff(d, n)) {
		snprintf(err, errcap, "%s: not a gperftools CPU profile", name);
		return -1;
	}
	uint64_t hdr = word_at(d, 1), period_us = word_at(d, 3);
	size_t i = 2 + hdr;
	if (hdr < 3 || i > nw) {
		snprintf(err, errcap, "%s: truncated gperftools CPU profile header", name);
		return -1;
	}
	p->cpu = 1;
	p->period = period_us * 1000;
	p->format = profile_strdup(p, "gperftools-cpu");
	uint64_t *addrs = NULL;
	size_t cap = 0;
	int done = 0;
	while (i + 2 <= nw) {
		uint64_t count = word_at(d, i), depth = word_at(d, i + 1);
		if (depth > nw - i - 2) {
			snprintf(err, errcap, "%s: record at byte %zu runs past the end", name, 8 * i);
			free(addrs);
			return -1;
		}
		if (count == 0 && depth == 1 && word_at(d, i + 2) == 0) {
			i += 3;
			done = 1;
			break;
		}
		if (depth == 0 || depth > 100000) {
			snprintf(err, errcap, "%s: bad record depth %llu at byte %zu", name,
			         (unsigned long long)depth, 8 * i);
			free(addrs);
			return -1;
		}
		if (depth > cap) {
			cap = depth;
			addrs = realloc(addrs, cap * sizeof *addrs);
			if (!addrs) {
				snprintf(err, errcap, "%s: out of memory", name);
				return -1;
			}
		}
		for (size_t k = 0; k < depth; k++)
			addrs[k] = word_at(d, i + 2 + k);
		textscan_fix_callers(addrs, depth);
		double v[PV_COUNT] = {0};
		v[PV_INUSE_OBJS] = (double)count;
		v[PV_INUSE_BYTES] = (double)count * (double)period_us * 1000.0;
		profile_add(p, addrs, (uint32_t)depth, v);
		i += 2 + depth;
	}
	free(addrs);
	if (!done) {
		snprintf(err, errcap, "%s: no trailer (a truncated profile)", name);
		return -1;
	}
	struct textscan ts;
	textscan_init(&ts, d + 8 * i, n - 8 * i, name);
	ts.in_maps = 1;
	while (textscan_next(&ts))
		textscan_trailer_line(&ts, p);
	int rc = textscan_finish(&ts, p, 0);
	p->jemalloc_frames = 0;
	textscan_release(&ts);
	return rc;
}
