/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * procinfo.c - the process facts of procinfo.h, read from /proc/self (exe, cgroup), uname
 * and the main program's program headers (dl_iterate_phdr). No host malloc.
 */
#include "procinfo.h"

#include <link.h>
#include <pthread.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "../base/outbuf.h"
#include "maps.h"
#include "sys.h"

static struct procinfo info;
static int ready; /* 0 unread, 1 read (atomic) */
static pthread_mutex_t once_lock = PTHREAD_MUTEX_INITIALIZER;

static int is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

int procinfo_container_id(const char *cgroup, char out[65])
{
	int found = 0;
	size_t i = 0, n = strlen(cgroup);
	while (i < n) {
		if (!is_hex(cgroup[i])) {
			i++;
			continue;
		}
		size_t j = i;
		while (j < n && is_hex(cgroup[j]))
			j++;
		if (j - i == 64) {
			memcpy(out, cgroup + i, 64);
			out[64] = 0;
			found = 1;
		}
		i = j;
	}
	return found;
}

static int main_object(struct dl_phdr_info *pi, size_t size, void *ctx)
{
	(void)size;
	uint8_t id[64];
	size_t n = maps_build_id(pi->dlpi_addr, pi->dlpi_phdr, pi->dlpi_phnum, id, sizeof id);
	char *hex = ctx;
	if (n > sizeof id)
		n = sizeof id;
	for (size_t k = 0; k < n; k++) {
		hex[2 * k] = "0123456789abcdef"[id[k] >> 4];
		hex[2 * k + 1] = "0123456789abcdef"[id[k] & 15];
	}
	hex[2 * n] = 0;
	return 1; /* the first object is the main program */
}

/* The cgroup path of /proc/self/cgroup: v2's "0::PATH", else v1's memory controller line. */
static void read_cgroup(char *out, size_t cap)
{
	char buf[4096];
	long n = sys_read_small("/proc/self/cgroup", buf, sizeof buf);
	out[0] = 0;
	if (n <= 0)
		return;
	char *line = buf;
	while (line && *line) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = 0;
		char *c1 = strchr(line, ':');
		char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (c2) {
			int v2 = c1 - line == 1 && line[0] == '0' && c2 == c1 + 1;
			*c2 = 0; /* the controllers, comma-separated */
			int mem = strstr(c1 + 1, "memory") != NULL;
			if (v2 || (mem && !out[0]))
				sys_strlcpy(out, c2 + 1, cap);
			if (v2)
				return;
		}
		line = nl ? nl + 1 : NULL;
	}
}

static void read_all(void)
{
	char exe[4096];
	memset(&info, 0, sizeof info);
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	exe[n > 0 ? n : 0] = 0;
	const char *base = strrchr(exe, '/');
	sys_strlcpy(info.program, base ? base + 1 : exe, sizeof info.program);
	struct utsname u;
	if (uname(&u) == 0)
		sys_strlcpy(info.hostname, u.nodename, sizeof info.hostname);
	fmt_u64(info.pid, (uint64_t)getpid());
	dl_iterate_phdr(main_object, info.build_id);
	read_cgroup(info.cgroup, sizeof info.cgroup);
	procinfo_container_id(info.cgroup, info.container_id);
}

const struct procinfo *procinfo_get(void)
{
	if (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE)) {
		pthread_mutex_lock(&once_lock);
		if (!ready) {
			read_all();
			__atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
		}
		pthread_mutex_unlock(&once_lock);
	}
	return &info;
}

void procinfo_fork_child(void)
{
	pthread_mutex_init(&once_lock, NULL);
	__atomic_store_n(&ready, 0, __ATOMIC_RELEASE);
}
