/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * sys.c - clocks, mappings, file reads and once-only stderr messages for the collector
 * (sys.h). Uses only system calls and string functions; never the host's malloc or stdio.
 */
#include "sys.h"
#include "../base/pages.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/auxv.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../base/outbuf.h"

int64_t sys_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void sys_sleep_ms(unsigned ms)
{
	struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000};
	nanosleep(&ts, NULL);
}

int64_t sys_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void *sys_map(size_t n)
{
	return pages_map(n);
}

void sys_unmap(void *p, size_t n)
{
	pages_unmap(p, n);
}

long sys_read_file(const char *path, char **pbuf, size_t *pcap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t len = 0;
	for (;;) {
		if (*pbuf == NULL || len + 4096 > *pcap) {
			size_t ncap = *pcap ? *pcap * 2 : 256 * 1024;
			char *nb = sys_map(ncap);
			if (!nb) {
				close(fd);
				return -ENOMEM;
			}
			if (*pbuf) {
				memcpy(nb, *pbuf, len);
				sys_unmap(*pbuf, *pcap);
			}
			*pbuf = nb;
			*pcap = ncap;
		}
		ssize_t r = read(fd, *pbuf + len, *pcap - len - 1);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			close(fd);
			return -e;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	(*pbuf)[len] = 0;
	return (long)len;
}

long sys_read_small(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t len = 0;
	while (len + 1 < cap) {
		ssize_t r = read(fd, buf + len, cap - 1 - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	buf[len] = 0;
	return (long)len;
}

void sys_log(const char *a, const char *b, const char *c)
{
	char buf[512];
	struct outbuf ob;
	int saved = errno;
	outbuf_init(&ob, buf, sizeof buf - 1, -1);
	outbuf_puts(&ob, "heaptap: ");
	if (a)
		outbuf_puts(&ob, a);
	if (b)
		outbuf_puts(&ob, b);
	if (c)
		outbuf_puts(&ob, c);
	if (ob.len >= sizeof buf - 1)
		ob.len = sizeof buf - 2;
	buf[ob.len++] = '\n';
	(void)write_all(2, buf, ob.len);
	errno = saved;
}

void sys_log_once(int *once, const char *a, const char *b, const char *c)
{
	if (__atomic_exchange_n(once, 1, __ATOMIC_RELAXED))
		return;
	sys_log(a, b, c);
}

size_t sys_strlcpy(char *dst, const char *src, size_t cap)
{
	size_t n = strlen(src);
	if (cap) {
		size_t k = n < cap - 1 ? n : cap - 1;
		memcpy(dst, src, k);
		dst[k] = 0;
	}
	return n;
}

int sys_thread_start(void *(*fn)(void *), void *arg)
{
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_t th;
	/* glibc's, not the one libheaptap.so exports for the CPU profiler (lib/cpu_threads.c):
	   the collector's own threads are not the program's */
	typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
	static create_fn create;
	if (!create)
		create = (create_fn)dlsym(RTLD_NEXT, "pthread_create");
	int rc = create ? create(&th, &attr, fn, arg) : EAGAIN;
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

int sys_secure_execution(void)
{
	return getauxval(AT_SECURE) != 0;
}

int sys_fd_high(int fd)
{
	if (fd < 0)
		return fd;
	struct rlimit rl;
	long floor = SYS_FD_FLOOR;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    (long)(rl.rlim_cur / 2) < floor)
		floor = (long)(rl.rlim_cur / 2);
	if (fd >= floor)
		return fd;
	int hi = fcntl(fd, F_DUPFD_CLOEXEC, (int)floor);
	if (hi < 0)
		return fd;
	close(fd);
	return hi;
}

static uint64_t fd_losses; /* atomic */

int sys_fd_own(struct sys_fd *f, int fd)
{
	f->fd = -1;
	f->dev = f->ino = 0;
	if (fd < 0)
		return -1;
	fd = sys_fd_high(fd);
	struct stat st;
	if (fstat(fd, &st) != 0) {
		close(fd);
		return -1;
	}
	f->dev = (uint64_t)st.st_dev;
	f->ino = (uint64_t)st.st_ino;
	f->fd = fd;
	return fd;
}

int sys_fd_check(struct sys_fd *f)
{
	if (f->fd < 0)
		return 0;
	struct stat st;
	if (fstat(f->fd, &st) == 0 && (uint64_t)st.st_dev == f->dev && (uint64_t)st.st_ino == f->ino)
		return 1;
	__atomic_fetch_add(&fd_losses, 1, __ATOMIC_RELAXED);
	f->fd = -1;
	f->dev = f->ino = 0;
	return 0;
}

void sys_fd_close(struct sys_fd *f)
{
	if (sys_fd_check(f))
		close(f->fd);
	f->fd = -1;
	f->dev = f->ino = 0;
}

uint64_t sys_fd_losses(void)
{
	return __atomic_load_n(&fd_losses, __ATOMIC_RELAXED);
}

uint64_t sys_random_u64(void)
{
	uint64_t v = 0;
	if (syscall(SYS_getrandom, &v, sizeof v, 1 /* GRND_NONBLOCK */) == (long)sizeof v)
		return v;
	/* splitmix64 over the clocks, the pid and a stack address */
	uint64_t z = (uint64_t)sys_now_ns() ^ ((uint64_t)sys_mono_ns() << 17) ^
	             ((uint64_t)getpid() << 40) ^ (uint64_t)(uintptr_t)&v;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void sys_process_identity(char *exe, size_t exe_cap, char *cmdline, size_t cmd_cap)
{
	ssize_t n = readlink("/proc/self/exe", exe, exe_cap - 1);
	exe[n > 0 ? n : 0] = 0;
	long m = sys_read_small("/proc/self/cmdline", cmdline, cmd_cap);
	if (m < 0)
		m = 0;
	while (m > 0 && cmdline[m - 1] == 0)
		m--;
	for (long i = 0; i < m; i++)
		if (cmdline[i] == 0)
			cmdline[i] = ' ';
	cmdline[m] = 0;
}
