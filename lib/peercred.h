/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * peercred.h - who is at the other end of a local connection: the user id owning a TCP
 * socket of this machine (from /proc/net/tcp and /proc/net/tcp6, the socket's owner as the
 * kernel lists it) and the credentials of a Unix-domain peer (SO_PEERCRED).
 *
 * It is not a policy: the HTTP server decides whom it serves (http_server.c). Nothing here
 * allocates: the tables are read in chunks into a static buffer through a descriptor opened
 * and closed within the call. Not thread-safe (one caller: the server thread); not
 * async-signal-safe.
 */
#ifndef HEAPTAP_LIB_PEERCRED_H
#define HEAPTAP_LIB_PEERCRED_H

#include <stdint.h>

/*
 * Finds the TCP socket of this machine whose local end is peer_ip:peer_port and whose remote
 * end is self_ip:self_port (addresses as 16 bytes, IPv4 mapped into IPv6: what the server
 * sees of a connection, mirrored) in /proc/net/tcp and /proc/net/tcp6, and stores its owner
 * in *uid. Only a socket still open in some process counts (inode not 0): a connection whose
 * client has closed it, or a TIME_WAIT entry (listed with uid 0), is not found.
 * Returns 0, -ENOENT when there is no such socket (a remote peer, or a closed one), or the
 * negative errno of opening /proc/net/tcp (-ENOENT as well when /proc is not mounted).
 */
int peercred_tcp_uid(const unsigned char peer_ip[16], uint16_t peer_port, const unsigned char self_ip[16],
                     uint16_t self_port, uint32_t *uid);

/* The user id of the process at the other end of the connected Unix socket fd (SO_PEERCRED:
   the credentials it had when it connected). Returns 0, or -errno. */
int peercred_unix_uid(int fd, uint32_t *uid);

#endif
