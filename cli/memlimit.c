/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * memlimit.c - the CLI's memory cap (see memlimit.h): size parsing, the default from the
 * physical memory, RLIMIT_DATA, and the hint arena_oom prints. It allocates nothing and
 * never exits the process.
 */
#include "memlimit.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <unistd.h>

#include "../profile/arena.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define MEMLIMIT_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define MEMLIMIT_SANITIZED 1
#endif
#endif

static struct rlimit start_lim;
static int have_start;

uint64_t memlimit_default(void)
{
	uint64_t cap = (uint64_t)4 << 30;
	long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
	if (pages > 0 && psz > 0) {
		uint64_t half = (uint64_t)pages * (uint64_t)psz / 2;
		if (half < cap)
			cap = half;
	}
	if (cap < (uint64_t)256 << 20)
		cap = (uint64_t)256 << 20;
	return cap;
}

int memlimit_parse(const char *s, uint64_t *out)
{
	if (!s || !*s)
		return -1;
	if (strcasecmp(s, "none") == 0 || strcasecmp(s, "unlimited") == 0) {
		*out = 0;
		return 0;
	}
	if (*s < '0' || *s > '9')
		return -1;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	unsigned shift = 0;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	default: break;
	}
	if (shift && (*end == 'i' || *end == 'I') && (end[1] == 'b' || end[1] == 'B'))
		end += 2;
	else if (*end == 'b' || *end == 'B')
		end++;
	if (*end || (shift && v > (UINT64_MAX >> shift)))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

static void save_start(void)
{
	if (!have_start && getrlimit(RLIMIT_DATA, &start_lim) == 0)
		have_start = 1;
}

/* "1.5 GiB"-style text of n bytes into buf. */
static __attribute__((unused)) void fmt_size(uint64_t n, char *buf, size_t cap)
{
	if (n >= (uint64_t)1 << 30)
		snprintf(buf, cap, "%.1f GiB", (double)n / (double)((uint64_t)1 << 30));
	else
		snprintf(buf, cap, "%.0f MiB", (double)n / (double)((uint64_t)1 << 20));
}

int memlimit_set(uint64_t nbytes, int explicit_)
{
	save_start();
#ifdef MEMLIMIT_SANITIZED
	(void)explicit_;
	(void)nbytes;
	arena_set_oom_hint(NULL);
	return 0;
#else
	char hint[200], sz[32];
	if (!have_start)
		return -1;
	struct rlimit lim = start_lim;
	if (nbytes == 0) {
		lim.rlim_cur = start_lim.rlim_cur;
	} else {
		rlim_t want = (rlim_t)nbytes;
		if (!explicit_ && start_lim.rlim_cur != RLIM_INFINITY && start_lim.rlim_cur < want)
			want = start_lim.rlim_cur;
		if (lim.rlim_max != RLIM_INFINITY && want > lim.rlim_max)
			want = lim.rlim_max;
		lim.rlim_cur = want;
	}
	if (setrlimit(RLIMIT_DATA, &lim) != 0)
		return -1;
	if (lim.rlim_cur == RLIM_INFINITY) {
		arena_set_oom_hint(NULL);
	} else {
		fmt_size((uint64_t)lim.rlim_cur, sz, sizeof sz);
		snprintf(hint, sizeof hint, "the limit is %s of data memory; --max-memory=SIZE or "
		         "HEAPTAP_MAX_MEMORY sets it", sz);
		arena_set_oom_hint(hint);
	}
	return 0;
#endif
}

int memlimit_init(void)
{
	const char *env = getenv("HEAPTAP_MAX_MEMORY");
	uint64_t n = memlimit_default();
	int explicit_ = 0;
	if (env && *env) {
		if (memlimit_parse(env, &n) != 0) {
			fprintf(stderr, "heaptap: HEAPTAP_MAX_MEMORY: expected a size such as 4G, 512M or "
			                "none, got '%s'\n", env);
			return 2;
		}
		explicit_ = 1;
	}
	memlimit_set(n, explicit_);
	return 0;
}

void memlimit_restore(void)
{
	if (have_start)
		setrlimit(RLIMIT_DATA, &start_lim);
}
