/*
 * rundir.c - the run directory of rundir.h. No malloc.
 */
#include "rundir.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../base/outbuf.h"

static char dir[512];

const char *rundir_get(void)
{
	if (dir[0])
		return dir;
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
		dir[0] = 0;
		return NULL;
	}
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
}
