/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * reader.h - the one entry point that turns a profile file (or bytes) of any supported format
 * into the profile model: it detects the format by content and calls the right reader
 * (pprof protobuf, gzipped or not; jeprof --raw symbolized; jemalloc/heaptap heap_v2;
 * gperftools/tcmalloc/Go `heap profile:` text; any of the text formats gzipped). It renders
 * and symbolizes nothing. CLI only.
 */
#ifndef HEAPTAP_PROFILE_READER_H
#define HEAPTAP_PROFILE_READER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "model.h"

/* The formats reader_detect tells apart. */
enum reader_format {
	READER_UNKNOWN = 0,
	READER_PPROF,  /* gzip magic, or a binary (protobuf) first byte */
	READER_RAW,    /* "--- symbol" */
	READER_HEAPV2, /* "heap_v2/" */
	READER_LEGACY, /* "heap profile:" */
};

/* Detects the format of d[0..n) by content (skipping jeprof's leading '%' lines and a
   "--- heap" / "--- growth" marker). Allocates nothing. */
enum reader_format reader_detect(const uint8_t *d, size_t n);

/*
 * Reads a profile held in memory. p must have been profile_init'ed; whatever it holds is
 * released first. name is the file name used in messages and stored in p->source. Returns 0,
 * or -1 with a message in err (NUL-terminated, truncated to errcap): "<name>:<line>: <what>"
 * for text formats, "<name>: unrecognized profile format", "<name>: <what>" otherwise; on
 * failure p is left empty (re-initialised). Never crashes or reads outside d, whatever d holds.
 */
int profile_read_mem(const uint8_t *d, size_t n, const char *name, struct profile *p, char *err,
                     size_t errcap);

/* Reads the whole file at path and calls profile_read_mem. path must name a regular file
   ("<path>: not a regular file (a FIFO)" otherwise: a FIFO is never waited on, a device never
   read), except "-" or "/dev/stdin", standard input, which may also be a pipe or socket. At
   most 4 GiB are read. A file that cannot be read gives "<path>: <strerror>". */
int profile_read_file(const char *path, struct profile *p, char *err, size_t errcap);

/* Opens path for reading only if it is a regular file: opened with O_NONBLOCK (a FIFO is not
   waited on), checked with fstat, O_NONBLOCK cleared again. Returns the descriptor
   (O_CLOEXEC), or -1 with "<path>: <strerror>" or "<path>: not a regular file (a FIFO)" in err. */
int reader_open_regular(const char *path, char *err, size_t errcap);

/* "a FIFO", "a character device", "a directory", ... for a stat mode. */
const char *reader_file_kind(mode_t mode);

#endif
