/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rundir.c - the run directory of rundir.h. No malloc.
 */
#include "rundir.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../base/outbuf.h"

static char dir[512];

static int state; /* 0 none, 1 being created, 2 ready (atomic): dumps and the HTTP thread race */

const char *rundir_get(void)
{
	int expect = 0;
	while (!__atomic_compare_exchange_n(&state, &expect, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		if (expect == 2)
			return dir;
		sched_yield(); /* another thread is creating it */
		expect = 0;
	}
	const char *base = getenv("TMPDIR");
	if (!base || !*base || strlen(base) > sizeof dir - 64)
		base = "/tmp";
	struct outbuf ob;
	outbuf_init(&ob, dir, sizeof dir - 1, -1);
	outbuf_puts(&ob, base);
	outbuf_puts(&ob, "/heaptap.");
	outbuf_u64(&ob, (uint64_t)getpid());
	outbuf_puts(&ob, ".XXXXXX");
	dir[ob.len] = 0;
	if (!mkdtemp(dir)) {
		int e = errno;
		dir[0] = 0;
		__atomic_store_n(&state, 0, __ATOMIC_RELEASE);
		errno = e;
		return NULL;
	}
	__atomic_store_n(&state, 2, __ATOMIC_RELEASE);
	return dir;
}

char *rundir_path(char *dst, size_t cap, const char *name)
{
	const char *d = rundir_get();
	if (!d)
		return NULL;
	struct outbuf ob;
	outbuf_init(&ob, dst, cap - 1, -1);
	outbuf_puts(&ob, d);
	outbuf_putc(&ob, '/');
	outbuf_puts(&ob, name);
	if (ob.truncated) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	dst[ob.len] = 0;
	return dst;
}

void rundir_fork_child(void)
{
	dir[0] = 0;
	__atomic_store_n(&state, 0, __ATOMIC_RELEASE);
}
