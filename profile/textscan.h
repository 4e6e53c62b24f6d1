/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * textscan.h - line-by-line scanning of a text profile held in memory, with the token helpers
 * the text readers (heap_v2, legacy, raw) share: their common entry (header, '---' marker,
 * errors), jeprof's whitespace, decimal counts, hex addresses, and the MAPPED_LIBRARIES /
 * heaptap metadata section that follows the records. Not a general tokenizer; CLI only
 * (allocates the line buffer with malloc).
 */
#ifndef HEAPTAP_PROFILE_TEXTSCAN_H
#define HEAPTAP_PROFILE_TEXTSCAN_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

struct textscan {
	const char *d;         /* the whole input (not owned) */
	size_t n, pos;         /* its size and the offset of the next line */
	const char *name;      /* file name for messages */
	unsigned long lineno;  /* 1-based number of the line last returned by textscan_next */
	char *line;            /* that line: '\r' removed, '\n' removed, NUL-terminated (owned) */
	size_t len, cap;       /* its length (may contain NUL bytes) and buffer size */
	int last_unterminated; /* the line returned last had no '\n' (the input ends inside it) */
	int in_maps;           /* the memory-map section has begun (textscan_trailer_line) */
	int metadata;          /* a "# heaptap:" line was seen: heaptap frames, not jemalloc's */
	char build_dir[4096];  /* the map section's build= directory ("" until one is seen) */
	uint64_t *map_slots;   /* "# heaptap: mapping" lines find their mapping by (start, limit)
	                          here: index + 1, 0 empty (owned) */
	size_t map_slots_cap, map_slots_n; /* capacity (a power of two); mappings indexed */
	size_t dropped;        /* with a mapped input (textscan_set_mapped): the offset up to which
	                          whole pages were handed back to the kernel */
};

/*
 * Tells the scanners that base[0..n) is a read-only private file mapping: a scan over it then
 * gives the pages behind its cursor back as it goes (madvise MADV_DONTNEED), so reading a
 * dump of hundreds of MB keeps only a window of it resident. Safe whatever is re-read later
 * (the kernel reads the file again). NULL clears it. One mapping at a time; CLI readers only.
 */
void textscan_set_mapped(const void *base, size_t n);

/* Starts scanning d[0..n). */
void textscan_init(struct textscan *ts, const void *d, size_t n, const char *name);
/* Frees the line buffer. */
void textscan_release(struct textscan *ts);
/* Reads the next line into ts->line; returns 1, or 0 at the end of the input. */
int textscan_next(struct textscan *ts);
/* Reads lines until one does not start with '%' (jeprof's command lines; skipped). Returns 1
   with that line in ts->line, 0 at the end of the input. */
int textscan_next_header(struct textscan *ts);

/*
 * The entry of the text readers: scans d[0..n) with scan (a reader's *_read_scan) from its
 * first line that is not a '%' command line (or, with skip_marker, the one after a leading
 * "---" marker line), names
 * the profile after name when it has no source yet, and returns scan's result; an empty input
 * or a marker with nothing after it is an error ("<name>:<line>: <what>" in err).
 */
int textscan_read(const void *d, size_t n, const char *name, int skip_marker,
                  int (*scan)(struct textscan *, struct profile *, char *, size_t), struct profile *p,
                  char *err, size_t errcap);
/* Is s "---", optional spaces, then word? (perl: /^--- *word/) */
int textscan_marker(const char *s, const char *word);
/* When ts->line is a "--- heap" or "--- growth" marker, moves to the next header line.
   Returns 0 when there is none, else 1. */
int textscan_skip_heap_marker(struct textscan *ts);

/* jeprof's (perl's) \s: space, \t, \n, \v, \f, \r. */
static inline int textscan_space(int c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}
/* Returns s with leading blanks skipped and trailing blanks cut (writes a NUL). */
char *textscan_trim(char *s);
/* Skips blanks; returns the new position. */
const char *textscan_skip_space(const char *s);
/* Parses one or more decimal digits at *s into *v (as perl does: exact below 2^53) and
   advances *s. Returns 0, or -1 when *s does not start with a digit. */
int textscan_decimal(const char **s, double *v);
/* Parses the counts "n: s [an: as]" at *s (perl: \d+:\s+\d+\s+\[\s*\d+:\s+\d+\]) into v and
   advances *s past the ']'. Returns 0, or -1 when they are malformed. */
int textscan_counts(const char **s, double v[PV_COUNT]);
/* Parses one address token [0x|0X]<hex digits> of exactly tlen bytes. Returns 0, -1 when it is
   not hex, -2 when it has more than 16 significant digits. */
int textscan_hex_token(const char *tok, size_t tlen, uint64_t *v);

/* Parses whitespace-separated address tokens from s into a growable array (*addrs, *cap;
   malloc'd, reused between calls). Returns the count, or -1 (bad token) / -2 (too long)
   with *bad pointing at the offending token. */
long textscan_addresses(const char *s, uint64_t **addrs, size_t *cap, const char **bad);

/* Formats the error for a textscan_addresses failure n (< 0) at token bad. */
void textscan_error_address(const struct textscan *ts, char *err, size_t errcap, long n, const char *bad);

/* Applies jeprof's FixCallerAddresses: subtracts 1 from every frame except frame 0. */
void textscan_fix_callers(uint64_t *addrs, size_t n);

/*
 * Consumes ts->line when it belongs to the part every text format shares: the
 * MAPPED_LIBRARIES: or "--- Memory map:" marker; any line after it (a /proc/<pid>/maps line,
 * whose executable ones become mappings, the compact "start-end: path" form, "build=<dir>"
 * substituted into later paths, a metadata line; anything else is ignored); or a
 * "# heaptap: key=value" metadata line. Returns 1 when it did, 0 when the line is the caller's.
 */
int textscan_trailer_line(struct textscan *ts, struct profile *p);
/* Ends a reader's scan with result rc: marks the frames as jemalloc's unless heaptap metadata
   was seen, and compacts p when rc is 0. Returns rc. */
int textscan_finish(struct textscan *ts, struct profile *p, int rc);

/* Formats "<name>:<line>: <what>" into err. */
void textscan_error(const struct textscan *ts, char *err, size_t errcap, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
