/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * push.h - the push client (HEAPTAP_CONF push_url): every push_interval it takes a delta
 * profile (delta.h: inuse_* absolute, alloc_* since the previous push), encodes it for the
 * backend's dialect (pushfmt.h: Pyroscope /ingest, Pyroscope's Connect push API, Parca's
 * writeraw) with the process's labels, queues it, and sends the queue over plain HTTP with
 * timeouts and retries with backoff. Everything runs on the collector's background thread
 * (bgthread.c), which no host thread ever waits for; the queue is bounded (the oldest profile is dropped and counted);
 * its memory is mmap'd; nothing calls the host's malloc.
 *
 * Not the encodings (pushfmt.h) nor the HTTP client (pushhttp.h).
 */
#ifndef HEAPTAP_LIB_PUSH_H
#define HEAPTAP_LIB_PUSH_H

#include <stdint.h>

/* What the push client did since start (atomics; any thread). */
struct push_counts {
	uint64_t pushed;        /* profiles the backend accepted (2xx) */
	uint64_t errors;        /* failed attempts: connect, timeout, non-2xx */
	uint64_t dropped;       /* profiles dropped: queue full, or given up after the retries */
	uint64_t rejected;      /* profiles the backend refused for good (4xx other than 408/429) */
	uint64_t queued;        /* profiles waiting now */
	uint64_t bytes;         /* payload bytes accepted */
	int last_status;        /* HTTP status of the last attempt, 0 none, -errno when no reply */
};
void push_get_counts(struct push_counts *out);

/* 1 when push_url is set and valid. */
int push_enabled(void);

/* Reads the push_* options (lifecycle.c, at start; the background thread must then be
   started). Logs once on a bad URL or an unknown dialect. */
void push_start(void);

/* When the background thread must call push_run next (monotonic ns), 0 when never. */
int64_t push_due_ns(void);
/* On the background thread: takes a profile when one is due and sends what the queue holds
   and may be tried now (each attempt bounded by push_timeout_ms). */
void push_run(int64_t now_mono_ns);

/* At exit, on the exiting thread: takes the profile of the interval so far and sends it with
   what the queue holds, one attempt each, within min(push_timeout, 5 s) in all (waiting first
   for a push the background thread has under way); what is not sent is dropped, counted and
   said in one stderr line. Pushing stops for good. */
void push_at_exit(void);

/* In a fork child: the parent's thread is gone; the child starts its own on next start. */
void push_fork_child(void);

#endif
