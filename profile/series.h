/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * series.h - puts a set of dumps of one process (or of a process and its forked children) in
 * the order they were written, for `heaptap report`: by pid, then by the sequence number of
 * jemalloc-style names (<prefix>.<pid>.<seq>.<kind><n>.heap, heaptap's .pb.gz/.txt too,
 * gperftools' <prefix>.<NNNN>.heap), then by the dump's wall-clock time, then by name.
 * It reads no file itself; the caller fills entries from names and loaded profiles. CLI only.
 */
#ifndef HEAPTAP_PROFILE_SERIES_H
#define HEAPTAP_PROFILE_SERIES_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

struct series_entry {
	const char *path; /* not owned */
	int pid;          /* from the name, else from the profile; 0 when unknown */
	long long seq;    /* the global dump counter of the name, -1 when the name has none */
	char kind;        /* jemalloc/heaptap trigger letter: i u m f t s (0 when none) */
	long long kseq;   /* the per-kind counter, -1 when absent ("f" has none) */
	int64_t time_ns;  /* wall-clock time of the dump (heaptap metadata), 0 when unknown */
	const char *ext;  /* the extension the name ends in (".heap", ".pb.gz", ".pb", ".txt"), or "" */
	size_t prefix_len;/* length of the <prefix> part of the base name (jemalloc/heaptap scheme),
	                     0 otherwise */
	void *user;       /* the caller's (e.g. the loaded profile); carried along by sorting */
};

/*
 * Parses the file name (directories and the .heap / .pb.gz / .pb / .txt extension ignored).
 * Fills pid, seq, kind, kseq, ext and prefix_len of e (those the name lacks become 0 / -1 /
 * 0 / -1 / "" / 0) and sets e->path = path. Returns 1 when the name follows one of the known schemes, else 0.
 */
int series_parse_name(const char *path, struct series_entry *e);

/* Fills e from path and a profile already read from it: the name's fields, then pid (when the
   name has none) and time_ns from the profile. e->user = p. */
void series_entry_from_profile(struct series_entry *e, const char *path, const struct profile *p);

/* Sorts entries into dump order (see the top of this file). Stable for equal keys. */
void series_sort(struct series_entry *e, size_t n);

#endif
