/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mapfile.h - a whole regular file mapped read-only, for the CLI's quick looks into files (is it
 * a profile with a map section, folded stacks, a stripped binary). Refuses what is not a
 * regular file (a FIFO or a device is never read or waited on); and a descriptor read to its
 * end (a pipe, a socket). Not a reader of any format.
 */
#ifndef HEAPTAP_CLI_MAPFILE_H
#define HEAPTAP_CLI_MAPFILE_H

#include <stddef.h>

/* Maps the regular, non-empty file at path read-only (whole, under 1 TiB) and sets *size;
   NULL when it cannot be opened or mapped (nothing to release then). */
const unsigned char *mapfile_map(const char *path, size_t *size);
/* Releases what mapfile_map returned (NULL is fine). */
void mapfile_unmap(const unsigned char *m, size_t size);

/* Reads fd to its end into a malloc'd, NUL-terminated buffer (the caller frees it) and sets
   *len. NULL with errno set on a read error (EINTR is retried) or ENOMEM. */
char *mapfile_read_fd(int fd, size_t *len);

#endif
