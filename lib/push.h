/*
 * push.h - the push client (HEAPTAP_CONF push_url): every push_interval it takes a delta
 * profile (delta.h: inuse_* absolute, alloc_* since the previous push), encodes it for the
 * backend's dialect (pushfmt.h: Pyroscope /ingest, Pyroscope's Connect push API, Parca's
 * writeraw) with the process's labels, queues it, and sends the queue over plain HTTP with
 * timeouts and retries with backoff. Everything runs on its own thread, which no host
 * thread ever waits for; the queue is bounded (the oldest profile is dropped and counted);
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

/* 1 when push_url is set and the client was started. */
int push_enabled(void);

/* Starts the push thread when push_url is set (lifecycle.c, at start). Logs once on a bad
   URL. May allocate inside pthread_create only. */
void push_start(void);

/* In a fork child: the parent's thread is gone; the child starts its own on next start. */
void push_fork_child(void);

#endif
