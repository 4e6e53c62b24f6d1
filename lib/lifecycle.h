/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lifecycle.h - the collector's process life cycle, the top of lib/: start-up (the library
 * constructor, or the first call of the C API), the fork handlers, the exit sequence (pending
 * dumps, the final dump, the leak summary), the background thread's start and the HTTP
 * server's. It calls down into every other module; none calls it.
 *
 * Not async-signal-safe. Start-up may allocate through the host's malloc (pthread_atfork,
 * pthread_create, dlsym), always inside the reentrancy guard.
 */
#ifndef HEAPTAP_LIB_LIFECYCLE_H
#define HEAPTAP_LIB_LIFECYCLE_H

/*
 * Starts the collector for this process once (idempotent, thread-safe): the sampling core,
 * the doorbell and the dump signal, the fork and exit handlers, the background thread when a
 * configured trigger needs it, and the HTTP server when HEAPTAP_CONF names an address.
 */
void lifecycle_init(void);

/* Chooses the profiler backend and starts the HTTP server on addr with the configured token
   (http_server_start's results: 0, -EALREADY, -EINVAL, -EADDRINUSE...). */
int lifecycle_http_start(const char *addr);

#endif
