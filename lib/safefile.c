/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * safefile.c - the safe temporary-and-rename file writer of safefile.h.
 */
#include "safefile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h> /* renameat's declaration only: no stdio call */
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../base/outbuf.h"
#include "dumpfmt.h"
#include "sys.h"

int safefile_open_parent(const char *path, const char **leaf)
{
	const char *slash = strrchr(path, '/');
	char dir[DUMP_PATH_MAX];
	if (!slash) {
		*leaf = path;
		dir[0] = '.';
		dir[1] = 0;
	} else {
		size_t n = slash == path ? 1 : (size_t)(slash - path);
		if (n >= sizeof dir)
			return -ENAMETOOLONG;
		memcpy(dir, path, n);
		dir[n] = 0;
		*leaf = slash + 1;
	}
	if (!**leaf)
		return -EISDIR;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : sys_fd_high(fd);
}

int safefile_write(const char *path, mode_t mode, int sync, int (*fill)(void *ctx, int fd),
                   void *ctx, void (*before)(int dirfd, const char *leaf))
{
	const char *leaf;
	int dirfd = safefile_open_parent(path, &leaf);
	if (dirfd < 0)
		return dirfd;
	char tmp[DUMP_PATH_MAX + 48];
	struct outbuf ob;
	outbuf_init(&ob, tmp, sizeof tmp - 1, -1);
	outbuf_puts(&ob, leaf);
	outbuf_puts(&ob, ".tmp.");
	outbuf_u64(&ob, (uint64_t)getpid());
	outbuf_putc(&ob, '.');
	outbuf_hex_pad(&ob, sys_random_u64(), 16);
	tmp[ob.len] = 0;
	int rc = ob.truncated ? -ENAMETOOLONG : 0;
	if (rc == 0 && before)
		before(dirfd, leaf);
	int fd = -1;
	if (rc == 0) {
		fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
		rc = fd < 0 ? -errno : 0;
		fd = sys_fd_high(fd);
	}
	if (rc == 0) {
		/* the mode asked for, whatever the host's umask */
		if (fchmod(fd, mode) != 0)
			rc = -errno;
		if (rc == 0)
			rc = fill(ctx, fd);
		/* on disk (and its page cache clean, so reclaimable) before an OOM kill can follow */
		if (rc == 0 && sync && fdatasync(fd) != 0)
			rc = -errno;
		if (close(fd) != 0 && rc == 0)
			rc = -errno;
		if (rc == 0 && renameat(dirfd, tmp, dirfd, leaf) != 0)
			rc = -errno;
		if (rc != 0)
			unlinkat(dirfd, tmp, 0);
	}
	close(dirfd);
	return rc;
}
