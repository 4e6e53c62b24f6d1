/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * peercred.c - the owner of a local TCP socket from /proc/net/tcp{,6}, and SO_PEERCRED, as
 * peercred.h declares them.
 *
 * A line of /proc/net/tcp reads "sl: LOCAL REMOTE st tx:rx tr:when retrnsmt uid timeout inode
 * ...", an address being the kernel's 32-bit words in hex as they lie in memory (so parsing
 * each word and storing it natively gives back the network bytes) and a port in hex. The
 * files are read in chunks into one static buffer, line by line, until the socket is found.
 * Not the policy of who may connect (http_server.c); never allocates.
 */
#include "peercred.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../base/digits.h"

static char buf[65536];

/* Parses n hex digits at s into *v; returns 0 or -1. */
static int hex_word(const char *s, size_t n, uint32_t *v)
{
	uint32_t x = 0;
	for (size_t i = 0; i < n; i++) {
		int d = digit_value(s[i]);
		if (d < 0)
			return -1;
		x = x << 4 | (uint32_t)d;
	}
	*v = x;
	return 0;
}

/* "0100007F:1F90" (IPv4) or 32 hex digits ":PORT" (IPv6) into a 16-byte address and port. */
static int endpoint(const char *s, size_t n, unsigned char ip[16], uint16_t *port)
{
	uint32_t w, p;
	if (n == 8 + 1 + 4) {
		if (hex_word(s, 8, &w) != 0)
			return -1;
		memset(ip, 0, 10);
		ip[10] = ip[11] = 0xff;
		memcpy(ip + 12, &w, 4);
	} else if (n == 32 + 1 + 4) {
		for (int k = 0; k < 4; k++) {
			if (hex_word(s + 8 * k, 8, &w) != 0)
				return -1;
			memcpy(ip + 4 * k, &w, 4);
		}
	} else {
		return -1;
	}
	if (s[n - 5] != ':' || hex_word(s + n - 4, 4, &p) != 0)
		return -1;
	*port = (uint16_t)p;
	return 0;
}

/* Parses a decimal field; returns 0 or -1. */
static int dec_field(const char *s, size_t n, uint64_t *v)
{
	uint64_t x = 0;
	if (n == 0 || n > 19)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		x = x * 10 + (uint64_t)(s[i] - '0');
	}
	*v = x;
	return 0;
}

struct want {
	const unsigned char *peer_ip, *self_ip;
	uint16_t peer_port, self_port;
};

/* 1 when the line is the wanted socket with an inode, its owner in *uid. */
static int match_line(const char *s, size_t n, const struct want *w, uint32_t *uid)
{
	const char *tok[10];
	size_t tl[10];
	int k = 0;
	size_t i = 0;
	while (k < 10) {
		while (i < n && s[i] == ' ')
			i++;
		if (i == n)
			return 0;
		size_t j = i;
		while (j < n && s[j] != ' ')
			j++;
		tok[k] = s + i;
		tl[k++] = j - i;
		i = j;
	}
	unsigned char lip[16], rip[16];
	uint16_t lport, rport;
	uint64_t owner, inode;
	if (endpoint(tok[1], tl[1], lip, &lport) != 0 || endpoint(tok[2], tl[2], rip, &rport) != 0)
		return 0;
	if (lport != w->peer_port || rport != w->self_port || memcmp(lip, w->peer_ip, 16) != 0 ||
	    memcmp(rip, w->self_ip, 16) != 0)
		return 0;
	if (dec_field(tok[7], tl[7], &owner) != 0 || dec_field(tok[9], tl[9], &inode) != 0)
		return 0;
	if (inode == 0 || owner > UINT32_MAX)
		return 0; /* closed by its process (orphaned, TIME_WAIT): nobody to name */
	*uid = (uint32_t)owner;
	return 1;
}

/* Scans one table; 1 found, 0 not there, -errno when it cannot be read. */
static int scan(const char *path, const struct want *w, uint32_t *uid)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t len = 0;
	int found = 0;
	for (;;) {
		ssize_t got = read(fd, buf + len, sizeof buf - len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		len += (size_t)got;
		size_t start = 0;
		for (;;) {
			const char *nl = memchr(buf + start, '\n', len - start);
			if (!nl)
				break;
			size_t end = (size_t)(nl - buf);
			if (match_line(buf + start, end - start, w, uid)) {
				found = 1;
				break;
			}
			start = end + 1;
		}
		if (found)
			break;
		if (start == 0 && len == sizeof buf)
			len = 0; /* a line longer than the buffer: not one of the kernel's; skip it */
		memmove(buf, buf + start, len - start);
		len -= start;
	}
	close(fd);
	return found;
}

int peercred_tcp_uid(const unsigned char peer_ip[16], uint16_t peer_port, const unsigned char self_ip[16],
                     uint16_t self_port, uint32_t *uid)
{
	struct want w = {peer_ip, self_ip, peer_port, self_port};
	/* An IPv4 client may own an AF_INET socket (in tcp) or an AF_INET6 one speaking IPv4
	   through mapped addresses (in tcp6): look in both. */
	int rc4 = scan("/proc/net/tcp", &w, uid);
	if (rc4 == 1)
		return 0;
	int rc6 = scan("/proc/net/tcp6", &w, uid);
	if (rc6 == 1)
		return 0;
	if (rc4 < 0 && rc6 < 0)
		return rc4;
	return -ENOENT;
}

int peercred_unix_uid(int fd, uint32_t *uid)
{
	struct ucred cr;
	socklen_t len = sizeof cr;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) != 0)
		return -errno;
	*uid = (uint32_t)cr.uid;
	return 0;
}
