/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pprof_export.h - writes the analyzer's model as a SYMBOLIZED pprof profile.proto: one
 * Location per unique address with its inline chain as Lines, Functions named from
 * p->syms, mappings marked has_functions/has_filenames/has_line_numbers/has_inline_frames
 * so `go tool pprof` shows the names without re-symbolizing (which can take minutes).
 *
 * Sample types: alloc_objects, alloc_space, inuse_objects, inuse_space when the profile
 * has alloc data, else inuse_objects, inuse_space; period_type space/bytes. Values are the
 * model's unsampled doubles truncated to int64. Not a reader and not the collector's writer
 * (profile/inproc/pprof_write.c); CLI only, allocates.
 */
#ifndef HEAPTAP_CLI_RENDER_PPROF_EXPORT_H
#define HEAPTAP_CLI_RENDER_PPROF_EXPORT_H

#include "../../profile/model.h"

/*
 * Writes p to path ("-" = stdout), gzipped when gzip is nonzero. Symbols come from p->syms
 * (symbolize first); addresses p->syms does not know are written as bare locations. The
 * mappings are marked symbolized only when p->syms is set. Returns 0 or a negative errno
 * value (the file could not be created or written); prints nothing.
 */
int pprof_export(const struct profile *p, const char *path, int gzip);

/* Which sample types pprof_export_fd writes. */
enum pprof_export_parts {
	PPROF_EXPORT_ALL = 0,   /* as pprof_export: alloc_* (when p has them) and inuse_* */
	PPROF_EXPORT_INUSE,     /* inuse_objects, inuse_space only */
	PPROF_EXPORT_ALLOC,     /* alloc_objects, alloc_space only (p must have them) */
};

struct pprof_export_options {
	int gzip;
	enum pprof_export_parts parts;
	int64_t duration_ns;    /* written as duration_nanos when > 0 */
};

/* As pprof_export, to the open descriptor fd (closed in all cases) with options o. */
int pprof_export_fd(const struct profile *p, int fd, const struct pprof_export_options *o);

#endif
