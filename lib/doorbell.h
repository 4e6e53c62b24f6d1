/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * doorbell.h - how anyone asks for a dump without writing it: signal handlers, the sampling
 * slow path (interval and high-water crossings), HTTP handlers and the C API ring the
 * doorbell; the background thread (bgthread.c) waits on it and takes the requests.
 *
 * A request is an atomic flag (a counter for interval dumps, which are one per crossing) plus
 * a count of rings woken through a process-private futex: both async-signal-safe, and no file descriptor
 * that a daemon closing "all fds" could take away or reuse. A leaf: it calls nothing of the
 * collector's. No malloc.
 */
#ifndef HEAPTAP_LIB_DOORBELL_H
#define HEAPTAP_LIB_DOORBELL_H

#include <stdint.h>

#include "trigger.h"

/* Resets the wake-up count. 0 (kept as int for callers that check). */
int doorbell_init(void);

/* Requests a dump for trig. Async-signal-safe; keeps errno. */
void doorbell_ring(enum dump_trigger trig);

/* Takes the pending requests: want[trig] = how many dumps to write (interval dumps are one per
   ring; the others merge into one). */
void doorbell_take(uint64_t want[TRIG_COUNT]);

/* Waits for a ring, or until the CLOCK_MONOTONIC deadline in ns (0 = no deadline). */
void doorbell_wait(int64_t deadline_ns);

/* In a fork child: a fresh wake-up count, no requests inherited. */
void doorbell_fork_child(void);

#endif
