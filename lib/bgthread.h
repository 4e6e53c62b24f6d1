/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bgthread.h - the collector's background thread: it waits on the doorbell (doorbell.h) and
 * on its own clocks (prof_time_interval, the gdump rate limit) and writes the dumps asked for,
 * so that no allocating thread ever waits for a disk.
 *
 * Started by lifecycle.c when a configured trigger needs it, or lazily (a forked child: the
 * parent's thread does not exist there). Not the requests (doorbell.c) nor the writing
 * (dump.c). Not async-signal-safe.
 */
#ifndef HEAPTAP_LIB_BGTHREAD_H
#define HEAPTAP_LIB_BGTHREAD_H

/* Starts the thread unless it runs or is starting. Returns quickly when it does (one atomic
   load): safe to call from every slow-path event. Logs once when it cannot be started. */
void bgthread_ensure(void);

/* At exit, on the calling thread: writes the dumps still requested (not time dumps: nothing
   is due at exit but the final dump), then waits (at most 5 s) for the thread to finish the
   ones it had taken. */
void bgthread_drain(void);

/* In a fork child: the thread is gone; the next bgthread_ensure starts a new one. */
void bgthread_fork_child(void);

#endif
