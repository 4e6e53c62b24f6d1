/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * glibc_compat.h - makes the collector's objects load on glibc 2.17 and later when they are
 * built on a newer one: force-included (the Makefile's -include) into every object of
 * libheaptap.so and libheaptap.a, never included by hand. It binds functions that glibc
 * 2.29-2.34 re-versioned (moved from libpthread/libdl into libc, or changed) to their
 * GLIBC_2.2.5 versions, which glibc keeps for old binaries, and replaces functions newer than
 * 2.17 by system calls with a run-time fallback (stat family, memfd_create, getrandom).
 *
 * It is not a portability layer for other C libraries or architectures (only x86-64 glibc
 * builds are rewritten; elsewhere it is empty), and not used by the CLI or the tests.
 * tests/static/selfcontained.sh checks the result: no GLIBC_2.x above 2.17 in the .so.
 */
#ifndef HEAPTAP_LIB_GLIBC_COMPAT_H
#define HEAPTAP_LIB_GLIBC_COMPAT_H

#include <features.h>

#if defined(__x86_64__) && defined(__GLIBC__) && !defined(HEAPTAP_NO_GLIBC_COMPAT)

/* The pre-2.34 homes of these are libpthread.so.0 and libdl.so.2: the Makefile links both
   explicitly (--no-as-needed) so that an old glibc loads them for the library. Not
   pthread_create: the library defines it (lib/cpu_threads.c) and finds glibc's with
   dlsym(RTLD_NEXT). */
#if __GLIBC_PREREQ(2, 34)
__asm__(".symver pthread_join,pthread_join@GLIBC_2.2.5");
__asm__(".symver pthread_detach,pthread_detach@GLIBC_2.2.5");
__asm__(".symver pthread_key_create,pthread_key_create@GLIBC_2.2.5");
__asm__(".symver pthread_key_delete,pthread_key_delete@GLIBC_2.2.5");
__asm__(".symver pthread_getspecific,pthread_getspecific@GLIBC_2.2.5");
__asm__(".symver pthread_setspecific,pthread_setspecific@GLIBC_2.2.5");
__asm__(".symver pthread_mutex_trylock,pthread_mutex_trylock@GLIBC_2.2.5");
__asm__(".symver pthread_mutexattr_init,pthread_mutexattr_init@GLIBC_2.2.5");
__asm__(".symver pthread_mutexattr_settype,pthread_mutexattr_settype@GLIBC_2.2.5");
__asm__(".symver pthread_mutexattr_destroy,pthread_mutexattr_destroy@GLIBC_2.2.5");
__asm__(".symver pthread_rwlock_init,pthread_rwlock_init@GLIBC_2.2.5");
__asm__(".symver pthread_rwlock_rdlock,pthread_rwlock_rdlock@GLIBC_2.2.5");
__asm__(".symver pthread_rwlock_wrlock,pthread_rwlock_wrlock@GLIBC_2.2.5");
__asm__(".symver pthread_rwlock_unlock,pthread_rwlock_unlock@GLIBC_2.2.5");
__asm__(".symver pthread_attr_setstacksize,pthread_attr_setstacksize@GLIBC_2.2.5");
__asm__(".symver pthread_once,pthread_once@GLIBC_2.2.5");
__asm__(".symver pthread_kill,pthread_kill@GLIBC_2.2.5");
__asm__(".symver pthread_setname_np,pthread_setname_np@GLIBC_2.12");
__asm__(".symver pthread_getattr_np,pthread_getattr_np@GLIBC_2.2.5");
__asm__(".symver sem_init,sem_init@GLIBC_2.2.5");
__asm__(".symver sem_wait,sem_wait@GLIBC_2.2.5");
__asm__(".symver sem_post,sem_post@GLIBC_2.2.5");
__asm__(".symver sem_timedwait,sem_timedwait@GLIBC_2.2.5");
__asm__(".symver dlsym,dlsym@GLIBC_2.2.5");
__asm__(".symver dlvsym,dlvsym@GLIBC_2.2.5");
__asm__(".symver dladdr,dladdr@GLIBC_2.2.5");
__asm__(".symver dladdr1,dladdr1@GLIBC_2.3.3");
__asm__(".symver dlinfo,dlinfo@GLIBC_2.3.3");
__asm__(".symver dlerror,dlerror@GLIBC_2.2.5");
#endif
#if __GLIBC_PREREQ(2, 32)
__asm__(".symver pthread_sigmask,pthread_sigmask@GLIBC_2.2.5");
#endif
#if __GLIBC_PREREQ(2, 29)
__asm__(".symver exp,exp@GLIBC_2.2.5");
__asm__(".symver log,log@GLIBC_2.2.5");
__asm__(".symver pow,pow@GLIBC_2.2.5");
#endif
#if __GLIBC_PREREQ(2, 27)
__asm__(".symver expf,expf@GLIBC_2.2.5");
__asm__(".symver logf,logf@GLIBC_2.2.5");
#endif

#if __GLIBC_PREREQ(2, 25)
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* stat, fstat, lstat and fstatat are functions only since 2.33 (before, inline wrappers of
   __xstat & co): the x86-64 system calls fill the same struct stat. */
static inline int heaptap_compat_stat(const char *path, struct stat *st)
{
	return (int)syscall(SYS_stat, path, st);
}
static inline int heaptap_compat_lstat(const char *path, struct stat *st)
{
	return (int)syscall(SYS_lstat, path, st);
}
static inline int heaptap_compat_fstat(int fd, struct stat *st)
{
	return (int)syscall(SYS_fstat, fd, st);
}
static inline int heaptap_compat_fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
	return (int)syscall(SYS_newfstatat, dirfd, path, st, flags);
}
#define stat(p, st) heaptap_compat_stat(p, st)
#define lstat(p, st) heaptap_compat_lstat(p, st)
#define fstat(fd, st) heaptap_compat_fstat(fd, st)
#define fstatat(d, p, st, f) heaptap_compat_fstatat(d, p, st, f)

/* memfd_create (glibc 2.27, Linux 3.17): the system call, else an unlinked file of our own
   in /dev/shm (O_TMPFILE where the kernel has it, else an O_EXCL name removed at once). */
static inline int heaptap_compat_memfd_create(const char *name, unsigned flags)
{
	int fd = (int)syscall(SYS_memfd_create, name, flags);
	if (fd >= 0 || errno != ENOSYS)
		return fd;
	int cloexec = (flags & 1u) ? O_CLOEXEC : 0; /* MFD_CLOEXEC */
	fd = open("/dev/shm", O_RDWR | O_TMPFILE | cloexec, 0600);
	if (fd >= 0)
		return fd;
	static unsigned seq;
	for (int tries = 0; tries < 64; tries++) {
		char path[64] = "/dev/shm/.heaptap-";
		uint64_t v = ((uint64_t)getpid() << 32) ^ __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED) ^
		             (uint64_t)(uintptr_t)&v;
		size_t n = 18;
		for (int i = 0; i < 16; i++, v >>= 4)
			path[n++] = "0123456789abcdef"[v & 15];
		path[n] = 0;
		fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | cloexec, 0600);
		if (fd >= 0) {
			unlink(path);
			return fd;
		}
		if (errno != EEXIST)
			return -1;
	}
	return -1;
}
#define memfd_create(n, f) heaptap_compat_memfd_create(n, f)

/* getrandom (glibc 2.25, Linux 3.17): the system call; ENOSYS is the caller's to handle. */
static inline long heaptap_compat_getrandom(void *buf, size_t n, unsigned flags)
{
	return syscall(SYS_getrandom, buf, n, flags);
}
#define getrandom(b, n, f) heaptap_compat_getrandom(b, n, f)
#endif

#endif
#endif
