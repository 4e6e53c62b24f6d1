/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pushfmt.h - the request bodies of the continuous-profiling backends heaptap pushes to,
 * around gzipped pprof profiles:
 *   PUSHFMT_INGEST            Pyroscope POST /ingest?name=<service>{labels}&from&until
 *                             &spyName&format=pprof, the raw profile as the body
 *   PUSHFMT_INGEST_MULTIPART  the same without format, multipart/form-data with a "profile"
 *                             field (the server tests format before the content type)
 *   PUSHFMT_CONNECT           Pyroscope's POST /push.v1.PusherService/Push, a PushRequest
 *                             protobuf (application/proto) with __name__ and service_name
 *   PUSHFMT_PARCA             Parca's POST /profiles/writeraw, grpc-gateway JSON with the
 *                             profiles base64 in rawProfile; two of them: inuse_* without a
 *                             duration (absolute), alloc_* with one (Parca reads a profile
 *                             with duration_nanos > 0 as a delta)
 * Used by the collector's push client (lib/push.c) and `heaptap push` (cli/cmd_push.c).
 *
 * Not the HTTP exchange nor the profiles themselves. Writes into caller-owned memory; no
 * malloc, no stdio: safe inside the host.
 */
#ifndef HEAPTAP_PROFILE_PUSHFMT_H
#define HEAPTAP_PROFILE_PUSHFMT_H

#include <stddef.h>
#include <stdint.h>

enum pushfmt_dialect {
	PUSHFMT_INGEST,
	PUSHFMT_INGEST_MULTIPART,
	PUSHFMT_CONNECT,
	PUSHFMT_PARCA,
};

/* The dialect named by format ("ingest", "ingest-multipart", "connect", "parca"), or when
   format is "" the one the URL path ends with (/ingest, /push.v1.PusherService/Push,
   /profiles/writeraw). -1 when neither tells. */
int pushfmt_dialect_of(const char *format, const char *path);

/* The profiles a dialect needs: 2 for PARCA (inuse absolute, alloc delta), else 1 (all four
   sample types, alloc_* delta). */
int pushfmt_profiles(enum pushfmt_dialect d);

struct pushfmt_label {
	const char *name, *value;
};

struct pushfmt_input {
	const char *path;                  /* the URL's path (the target starts with it) */
	const char *service;               /* service_name */
	const struct pushfmt_label *labels;/* further labels (hostname, pid, ..., user labels) */
	size_t nlabels;
	const uint8_t *prof[2];            /* gzipped pprof: [0] (and [1] for PARCA: alloc) */
	size_t prof_len[2];
	int64_t from_s, until_s;           /* the window, Unix seconds */
};

struct pushfmt_request {
	char target[2048];                 /* path and query for the request line */
	const char *ctype;                 /* Content-Type */
	char extra[256];                   /* further header lines, CRLF-terminated ("" none) */
};

/* Bytes the body may take at most for in (the caller maps that much). */
size_t pushfmt_bound(const struct pushfmt_input *in);

/* Writes the request of dialect d for in: head parts into req, the body into out[0..cap).
   Returns the body's length, or 0 when it did not fit (a bug: cap below pushfmt_bound). */
size_t pushfmt_encode(enum pushfmt_dialect d, const struct pushfmt_input *in, struct pushfmt_request *req,
                      uint8_t *out, size_t cap);

/* Replaces in s every byte that Pyroscope's name{labels} syntax or Prometheus label values
   cannot carry safely (',', '{', '}', '=', '"', spaces, control bytes) by '_'. */
void pushfmt_sanitize(char *s);

#endif
