/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * safefile.h - writing a profile file inside the host so that nobody else can redirect it: a
 * temporary beside the target with an unpredictable name (<leaf>.tmp.<pid>.<16 hex>), created
 * O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC relative to a descriptor of the parent directory, its
 * mode set with fchmod whatever the umask, moved above the host's descriptors, optionally
 * fdatasync'ed, then renamed over the target; a failed write leaves no temporary. Used by the
 * heap dumps (dump.c) and the CPU profiles (cpuprof.c).
 *
 * Not the file naming, retention or error reporting (the callers'). No malloc, no stdio.
 */
#ifndef HEAPTAP_LIB_SAFEFILE_H
#define HEAPTAP_LIB_SAFEFILE_H

#include <sys/types.h>

/* Opens path's parent directory (O_DIRECTORY, above the host's descriptors) and points *leaf
   at path's last component. Returns the descriptor, or -ENAMETOOLONG, -EISDIR, -errno. */
int safefile_open_parent(const char *path, const char **leaf);

/* Writes path as described above. fill(ctx, fd) writes the content (0 or -errno); before, when
   not NULL, runs once the parent is open (dirfd, the leaf), before the temporary is created.
   Returns 0 or -errno. */
int safefile_write(const char *path, mode_t mode, int sync, int (*fill)(void *ctx, int fd),
                   void *ctx, void (*before)(int dirfd, const char *leaf));

#endif
