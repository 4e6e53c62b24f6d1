/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * sys.h - small operating-system helpers for the collector: clocks, anonymous mappings,
 * whole-file reads into caller buffers, "log once" diagnostics to stderr, and starting the
 * collector's own threads.
 *
 * All of it is built on raw system calls and never allocates from the host's heap; only
 * sys_log* and the clocks are async-signal-safe. Not a formatting library (base/outbuf.h).
 */
#ifndef HEAPTAP_LIB_SYS_H
#define HEAPTAP_LIB_SYS_H

#include <stddef.h>
#include <stdint.h>

/* Wall-clock and monotonic time in nanoseconds. */
int64_t sys_now_ns(void);
int64_t sys_mono_ns(void);
/* Sleeps ms milliseconds (less when a signal interrupts it). Async-signal-safe. */
void sys_sleep_ms(unsigned ms);

/* Zeroed anonymous private mapping of n bytes (MAP_NORESERVE), or NULL. */
void *sys_map(size_t n);
void sys_unmap(void *p, size_t n);

/* Reads the whole file at path into a mapping that it grows as needed: *pbuf and *pcap describe
   the caller's current mapping (both may start NULL and 0). Returns the length read, or -errno. */
long sys_read_file(const char *path, char **pbuf, size_t *pcap);

/* Reads at most cap-1 bytes of path into buf, NUL-terminated. Returns the length or -errno. */
long sys_read_small(const char *path, char *buf, size_t cap);
/* The program's path (readlink of /proc/self/exe, "" when unknown) and its command line with
   the arguments joined by single spaces (truncated to fit), both NUL-terminated. */
void sys_process_identity(char *exe, size_t exe_cap, char *cmdline, size_t cmd_cap);

/* Writes "heaptap: <a><b><c>\n" to stderr (any part may be NULL). */
void sys_log(const char *a, const char *b, const char *c);
/* The same, but only the first time *once is 0 (which it then sets). */
void sys_log_once(int *once, const char *a, const char *b, const char *c);

/* Starts fn(arg) on a detached thread created with every signal blocked (so the host's signal
   handlers never run on the collector's threads). 0, or pthread_create's error number. May
   allocate through the host's malloc inside pthread_create: call it inside tstate_enter. */
int sys_thread_start(void *(*fn)(void *), void *arg);

/* 1 under secure execution (getauxval(AT_SECURE): setuid, setgid, file capabilities). */
int sys_secure_execution(void);

/* Moves descriptor fd (which the caller created) above the range a host reuses: to the lowest
   free number >= SYS_FD_FLOOR (or half the soft RLIMIT_NOFILE when that is lower), close-on-exec,
   closing the original. Returns the new descriptor, or fd itself when it cannot be moved. */
#define SYS_FD_FLOOR 900
int sys_fd_high(int fd);

/* A descriptor the collector keeps across calls, with the identity (device, inode) it had when
   the collector made it. A host may close every descriptor above 2 and reuse the numbers for
   its own files: before each use, sys_fd_check tells whether the number still refers to ours,
   so the collector never reads, writes or closes the host's file. */
struct sys_fd {
	int fd;    /* -1: none */
	uint64_t dev, ino;
};
#define SYS_FD_NONE {-1, 0, 0}

/* Takes ownership of fd, which the caller just created: moved above the host's range
   (sys_fd_high), its identity recorded. Returns f->fd (-1 when fd < 0 or fstat fails: closed). */
int sys_fd_own(struct sys_fd *f, int fd);
/* 1 while f is open and still refers to what sys_fd_own recorded. Otherwise 0, and a descriptor
   that was lost (closed by the host, its number maybe reused) is forgotten without closing it
   and counted (sys_fd_losses). Async-signal-safe. */
int sys_fd_check(struct sys_fd *f);
/* Closes f when it is still ours; forgets it either way. */
void sys_fd_close(struct sys_fd *f);
/* Descriptors found lost by sys_fd_check since start (shown in the stats as fds_lost). */
uint64_t sys_fd_losses(void);

/* 64 unpredictable bits (getrandom; the clock and addresses mixed when it is unavailable). */
uint64_t sys_random_u64(void);

/* Copies src into dst (cap bytes), always NUL-terminated; returns strlen(src). */
size_t sys_strlcpy(char *dst, const char *src, size_t cap);

#endif
