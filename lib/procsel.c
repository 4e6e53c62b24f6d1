/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * procsel.c - which processes of a tree profile and which serve the HTTP port (procsel.h):
 * the prof_procs globs matched against the executable (/proc/self/exe), and the rule that a
 * shell or a fork-and-wait launcher never takes the port unless prof_procs names it.
 *
 * It only edits the parsed options once, at load; it does not start or stop anything. The
 * glob matcher is a small one of its own ('*', '?', '[...]'; fnmatch may allocate). And the
 * one "port taken" line per session (procsel_busy_first). No malloc, no stdio; not
 * thread-safe (options_load and the one HTTP start call it).
 */
#include "procsel.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "../base/hash.h"
#include "../base/outbuf.h"
#include "sys.h"

/* Executables that start another program and wait for it: they must not hold the port the
   program they start is meant to serve (docs/HTTP.md "Which process of a tree serves"). */
static const char *const launchers[] = {
	"sh", "bash", "dash", "zsh", "ksh", "ksh93", "mksh", "ash", "busybox", "yash", "fish",
	"tcsh", "csh", "timeout", "tini", "dumb-init", "catatonit", NULL,
};

/* 1 when [set] at p (up to its ']', *end set past it) contains c; -1 when unterminated. */
static int class_match(const char *p, const char *pend, char c, const char **end)
{
	int neg = 0, hit = 0;
	if (p < pend && (*p == '!' || *p == '^')) {
		neg = 1;
		p++;
	}
	const char *first = p;
	while (p < pend && (*p != ']' || p == first)) {
		if (p + 2 < pend && p[1] == '-' && p[2] != ']') {
			if ((unsigned char)c >= (unsigned char)p[0] && (unsigned char)c <= (unsigned char)p[2])
				hit = 1;
			p += 3;
		} else {
			if (*p == c)
				hit = 1;
			p++;
		}
	}
	if (p >= pend)
		return -1;
	*end = p + 1;
	return hit != neg;
}

int procsel_glob(const char *pat, size_t n, const char *s)
{
	const char *p = pat, *pend = pat + n;
	const char *star = NULL, *retry = NULL; /* the last '*' and where its match resumes */
	while (*s) {
		const char *next = NULL;
		if (p < pend && *p == '*') {
			star = ++p;
			retry = s;
			continue;
		}
		if (p < pend && *p == '?') {
			p++;
			s++;
			continue;
		}
		if (p < pend && *p == '[') {
			int m = class_match(p + 1, pend, *s, &next);
			if (m == 1) {
				p = next;
				s++;
				continue;
			}
			if (m < 0 && *s == '[') { /* an unterminated '[' is an ordinary character */
				p++;
				s++;
				continue;
			}
		} else if (p < pend && *p == *s) {
			p++;
			s++;
			continue;
		}
		if (!star)
			return 0;
		p = star;
		s = ++retry;
	}
	while (p < pend && *p == '*')
		p++;
	return p == pend;
}

/* 1 when one of the '+'-separated globs matches: a glob with a '/' the whole path, any other
   the basename. */
static int procs_match(const char *globs, const char *path, const char *base)
{
	const char *g = globs;
	while (*g) {
		const char *e = g;
		while (*e && *e != '+')
			e++;
		size_t n = (size_t)(e - g);
		if (n && procsel_glob(g, n, memchr(g, '/', n) ? path : base))
			return 1;
		g = *e ? e + 1 : e;
	}
	return 0;
}

int procsel_apply(struct options *o)
{
	char path[512];
	ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
	if (n <= 0)
		return 1; /* no /proc: every process is chosen, as without the option */
	path[n] = 0;
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	if (o->prof_procs[0]) {
		if (procs_match(o->prof_procs, path, base))
			return 1; /* named: it profiles and serves, a shell too */
		/* not named: the interposer passes every call through */
		o->prof = 0;
		o->prof_prefix[0] = 0;
		o->prof_leak = o->prof_leak_error = 0;
		o->http[0] = 0;
		return 0;
	}
	for (int i = 0; launchers[i]; i++)
		if (strcmp(base, launchers[i]) == 0) {
			if (o->http[0] && o->verbose)
				sys_log(base, " starts other programs: it does not take the HTTP port"
				        " (prof_procs names the one that should; docs/HTTP.md)", NULL);
			o->http[0] = 0;
			break;
		}
	return 1;
}

static struct sys_fd busy_marker = SYS_FD_NONE;

int procsel_busy_first(const char *addr)
{
	if (sys_fd_check(&busy_marker))
		return 0;
	/* an abstract Unix socket named after the user, the session and the address: it lives as
	   long as the process that reported holds it, and needs no file */
	struct sockaddr_un un;
	memset(&un, 0, sizeof un);
	un.sun_family = AF_UNIX;
	struct outbuf ob;
	outbuf_init(&ob, un.sun_path + 1, sizeof un.sun_path - 2, -1);
	outbuf_puts(&ob, "heaptap.busy.");
	outbuf_u64(&ob, (uint64_t)geteuid());
	outbuf_putc(&ob, '.');
	outbuf_u64(&ob, (uint64_t)getsid(0));
	outbuf_putc(&ob, '.');
	outbuf_hex(&ob, hash_str(addr));
	socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + ob.len);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 1;
	if (bind(fd, (const struct sockaddr *)&un, len) != 0) {
		int e = errno;
		close(fd);
		return e != EADDRINUSE;
	}
	(void)sys_fd_own(&busy_marker, fd);
	return 1;
}
