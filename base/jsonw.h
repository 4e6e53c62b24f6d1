/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * jsonw.h - a tiny JSON emitter over an outbuf (outbuf.h): objects, arrays and scalar members,
 * with the commas and string escaping done for the caller, nested up to 32 levels. Compact
 * output (no spaces). It never allocates and keeps no state beyond the caller's struct, so it
 * serves inside the host (statistics, HTTP replies) as well as in the CLI. Not a parser.
 */
#ifndef HEAPTAP_BASE_JSONW_H
#define HEAPTAP_BASE_JSONW_H

#include <stdint.h>

#include "outbuf.h"

struct jsonw {
	struct outbuf *ob;
	uint32_t has_items; /* bit d: the container at depth d already has a member */
	int depth;
};

void jsonw_init(struct jsonw *w, struct outbuf *ob);

/* Containers. key is the member name inside an object, NULL inside an array or at the top. */
void jsonw_object_begin(struct jsonw *w, const char *key);
void jsonw_object_end(struct jsonw *w);
void jsonw_array_begin(struct jsonw *w, const char *key);
void jsonw_array_end(struct jsonw *w);

/* Scalars, likewise keyed or not. */
void jsonw_u64(struct jsonw *w, const char *key, uint64_t v);
void jsonw_i64(struct jsonw *w, const char *key, int64_t v);
void jsonw_bool(struct jsonw *w, const char *key, int v);
void jsonw_str(struct jsonw *w, const char *key, const char *v);

#endif
