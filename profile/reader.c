/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * reader.c - format detection and the single entry point of the profile readers (see
 * reader.h). It only looks at the first meaningful line or bytes and dispatches; the formats
 * themselves are parsed in heapv2_read.c, legacy_read.c, raw_read.c and pprof_read.c.
 */
#include "reader.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "arena.h"
#include "gperf_cpu_read.h"
#include "heapv2_read.h"
#include "legacy_read.h"
#include "raw_read.h"
#include "textscan.h"

#if defined(__has_include)
#if __has_include("pprof_read.h")
#include "pprof_read.h"
#define READER_HAVE_PPROF 1
#endif
#endif

/* gzip, a protobuf that starts with a sample_type field (0x0a = '\n', checked by the pprof
   reader's sniffer), or any other first byte that text never starts with. */
static int looks_binary(const uint8_t *d, size_t n)
{
	if (n >= 2 && d[0] == 0x1f && d[1] == 0x8b)
		return 1;
#ifdef READER_HAVE_PPROF
	if (pprof_read_sniff(d, n))
		return 1;
#endif
	return n > 0 && !(d[0] >= 0x20 && d[0] < 0x7f) && d[0] != '\n' && d[0] != '\r' && d[0] != '\t';
}

/* Positions ts on the header line; returns the format. */
static enum reader_format detect_scan(struct textscan *ts)
{
	if (!textscan_next_header(ts))
		return READER_UNKNOWN;
	if (textscan_marker(ts->line, "symbol"))
		return READER_RAW;
	if (!textscan_skip_heap_marker(ts))
		return READER_UNKNOWN;
	if (strncmp(ts->line, "heap profile:", 13) == 0)
		return READER_LEGACY;
	if (strncmp(ts->line, "heap_v2/", 8) == 0)
		return READER_HEAPV2;
	return READER_UNKNOWN;
}

enum reader_format reader_detect(const uint8_t *d, size_t n)
{
	if (looks_binary(d, n))
		return READER_PPROF;
	/* Only the first lines matter: scan a bounded prefix without copying the whole input. */
	struct textscan ts;
	textscan_init(&ts, d, n, NULL);
	enum reader_format f = detect_scan(&ts);
	textscan_release(&ts);
	return f;
}

/* Profiles (files or standard input) larger than this are refused. */
#define READER_FILE_MAX ((size_t)4 << 30)

/* Decompressed text profiles larger than this are refused (a gzip bomb is a few KB). */
#define READER_GUNZIP_MAX ((size_t)2 << 30)

/*
 * Inflates the gzip stream d[0..n) (concatenated members too) into a malloc'd buffer, at most
 * `limit` bytes of output. Returns it with *outn, or NULL when the stream is corrupt; sets
 * *too_big when the limit was hit.
 */
static uint8_t *gunzip(const uint8_t *d, size_t n, size_t limit, size_t *outn, int *too_big)
{
	z_stream z;
	memset(&z, 0, sizeof z);
	*too_big = 0;
	if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
		return NULL;
	size_t cap = n * 4 + 4096, len = 0;
	if (cap > limit)
		cap = limit;
	uint8_t *out = arena_xmalloc(cap);
	z.next_in = (Bytef *)d;
	int ok = 0;
	for (;;) {
		size_t in_chunk = n - (size_t)((const uint8_t *)z.next_in - d);
		z.avail_in = in_chunk > (1u << 30) ? (1u << 30) : (uInt)in_chunk;
		if (len == cap) {
			if (cap >= limit) {
				*too_big = 1;
				break;
			}
			cap = cap * 2 > limit ? limit : cap * 2;
			out = arena_xrealloc(out, cap);
		}
		size_t room = cap - len;
		z.next_out = out + len;
		z.avail_out = room > (1u << 30) ? (1u << 30) : (uInt)room;
		uInt before = z.avail_out;
		int r = inflate(&z, Z_NO_FLUSH);
		len += before - z.avail_out;
		if (r == Z_STREAM_END) {
			if ((const uint8_t *)z.next_in < d + n && inflateReset(&z) == Z_OK)
				continue; /* another member */
			ok = 1;
			break;
		}
		if (r != Z_OK && !(r == Z_BUF_ERROR && z.avail_out == 0))
			break;
		if (r == Z_OK && z.avail_in == 0 && (const uint8_t *)z.next_in >= d + n && z.avail_out != 0)
			break; /* input ended inside the stream */
	}
	inflateEnd(&z);
	if (!ok) {
		free(out);
		return NULL;
	}
	*outn = len;
	return out;
}

int profile_read_mem(const uint8_t *d, size_t n, const char *name, struct profile *p, char *err,
                     size_t errcap)
{
	if (!name)
		name = "<input>";
	if (err && errcap)
		err[0] = '\0';
	profile_release(p);
	int rc;
	if (n == 0) {
		snprintf(err, errcap, "%s: empty profile", name);
		rc = -1;
	} else if (looks_binary(d, n)) {
		if (d[0] == 0x1f && n >= 2 && d[1] == 0x8b) {
			/* A gzipped text profile (as go tool pprof accepts): read the text. Gzipped
			   protobuf goes to the pprof reader, which inflates it itself. */
			size_t un = 0;
			int too_big = 0;
			uint8_t *u = gunzip(d, n, READER_GUNZIP_MAX, &un, &too_big);
			if (too_big) {
				snprintf(err, errcap, "%s: decompresses to more than %zu MiB", name,
				         READER_GUNZIP_MAX >> 20);
				free(u);
				profile_release(p);
				return -1;
			}
			if (u && un > 0 && !looks_binary(u, un)) {
				rc = profile_read_mem(u, un, name, p, err, errcap);
				free(u);
				return rc;
			}
			free(u);
		}
		if (gperf_cpu_read_sniff(d, n)) {
			rc = gperf_cpu_read(d, n, name, p, err, errcap);
			if (rc != 0)
				profile_release(p);
			else
				p->source = profile_strdup(p, name);
			return rc;
		}
#ifdef READER_HAVE_PPROF
		char perr[512] = "";
		rc = pprof_read(d, n, p, perr, sizeof perr);
		if (rc != 0)
			snprintf(err, errcap, "%s: %s", name, *perr ? perr : "bad pprof profile");
#else
		snprintf(err, errcap, "%s: pprof support not built", name);
		rc = -1;
#endif
	} else {
		struct textscan ts;
		textscan_init(&ts, d, n, name);
		switch (detect_scan(&ts)) {
		case READER_RAW:
			rc = raw_read_scan(&ts, p, err, errcap);
			break;
		case READER_LEGACY:
			rc = legacy_read_scan(&ts, p, err, errcap);
			break;
		case READER_HEAPV2:
			rc = heapv2_read_scan(&ts, p, err, errcap);
			break;
		default:
			snprintf(err, errcap, "%s: unrecognized profile format", name);
			rc = -1;
			break;
		}
		textscan_release(&ts);
	}
	if (rc != 0) {
		profile_release(p);
		return -1;
	}
	p->source = profile_strdup(p, name);
	return 0;
}

const char *reader_file_kind(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG: return "a regular file";
	case S_IFDIR: return "a directory";
	case S_IFIFO: return "a FIFO";
	case S_IFCHR: return "a character device";
	case S_IFBLK: return "a block device";
	case S_IFSOCK: return "a socket";
	default: return "not a file";
	}
}

int reader_open_regular(const char *path, char *err, size_t errcap)
{
	/* O_NONBLOCK: opening a FIFO for reading would wait for a writer. */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		snprintf(err, errcap, "%s: %s", path, strerror(e));
		errno = e; /* callers tell a missing file from an unusable one */
		return -1;
	}
	struct stat st;
	if (fstat(fd, &st) != 0) {
		snprintf(err, errcap, "%s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errcap, "%s: not a regular file (%s)", path, reader_file_kind(st.st_mode));
		close(fd);
		errno = EINVAL;
		return -1;
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	return fd;
}

int profile_read_file(const char *path, struct profile *p, char *err, size_t errcap)
{
	/* Standard input may be a pipe (heaptap top - < x, curl ... | heaptap top -); any other
	   name must be a regular file. A device (/dev/zero) is never read. */
	int is_stdin = strcmp(path, "/dev/stdin") == 0 || strcmp(path, "-") == 0;
	int fd;
	struct stat st;
	if (is_stdin) {
		fd = dup(0);
		if (fd >= 0 && fstat(fd, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode) &&
		    !S_ISSOCK(st.st_mode)) {
			snprintf(err, errcap, "%s: standard input is %s, not a file or pipe", path,
			         reader_file_kind(st.st_mode));
			close(fd);
			profile_release(p);
			return -1;
		}
	} else {
		fd = reader_open_regular(path, err, errcap);
	}
	if (fd < 0) {
		if (is_stdin)
			snprintf(err, errcap, "%s: %s", path, strerror(errno));
		profile_release(p);
		return -1;
	}
	size_t cap = 1 << 16;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
		if ((uint64_t)st.st_size > READER_FILE_MAX) {
			snprintf(err, errcap, "%s: larger than %zu MiB", path, READER_FILE_MAX >> 20);
			close(fd);
			profile_release(p);
			return -1;
		}
		cap = (size_t)st.st_size + 1;
		/* A regular file is mapped, not copied: the text readers hand the pages behind
		   their cursor back as they go, so a dump of hundreds of MB is never resident
		   at once (a read() copy would be, beside the model built from it). */
		void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m != MAP_FAILED) {
			close(fd);
			madvise(m, (size_t)st.st_size, MADV_SEQUENTIAL);
			textscan_set_mapped(m, (size_t)st.st_size);
			int rc = profile_read_mem(m, (size_t)st.st_size, path, p, err, errcap);
			textscan_set_mapped(NULL, 0);
			munmap(m, (size_t)st.st_size);
			return rc;
		}
	}
	uint8_t *buf = arena_xmalloc(cap);
	size_t len = 0;
	for (;;) {
		if (len == cap) {
			if (cap >= READER_FILE_MAX) {
				snprintf(err, errcap, "%s: larger than %zu MiB", path, READER_FILE_MAX >> 20);
				close(fd);
				free(buf);
				profile_release(p);
				return -1;
			}
			cap = cap * 2 > READER_FILE_MAX ? READER_FILE_MAX : cap * 2;
			buf = arena_xrealloc(buf, cap);
		}
		ssize_t r = read(fd, buf + len, cap - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			snprintf(err, errcap, "%s: %s", path, strerror(errno));
			close(fd);
			free(buf);
			profile_release(p);
			return -1;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	int rc = profile_read_mem(buf, len, path, p, err, errcap);
	free(buf);
	return rc;
}
