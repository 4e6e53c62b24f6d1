/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * leaky.c - heaptap's demo program: a small "server" with one real leak (a request handler
 * that loses a small object every time it runs), one memory hog (a cache that keeps a few
 * large buffers for the life of the process) and plenty of freed churn that should NOT show
 * up in a live-heap profile. `make demo` runs it under `heaptap run`.
 *
 * It is not a test of its own: the numbers are fixed so the report is predictable
 * (about 7.3 MiB leaked, 8 MiB cached, ~29 MiB allocated and freed).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REQUESTS 60000
#define SESSION_BYTES 128
#define CACHE_SLOTS 8
#define CACHE_BYTES (1024 * 1024)

struct session {
	char user[48];
	long id;
	char pad[SESSION_BYTES - 48 - sizeof(long)];
};

static char *cache[CACHE_SLOTS];
static volatile unsigned long sink;

/* The leak: every request allocates a session and forgets to free it. */
static struct session *open_session(long id)
{
	struct session *s = malloc(sizeof(*s));
	if (!s)
		abort();
	snprintf(s->user, sizeof(s->user), "user%ld", id % 1000);
	s->id = id;
	return s;
}

/* Freed churn: a temporary buffer per request, released at once. */
static void parse_request(long id)
{
	size_t n = 256 + (size_t)(id % 512);
	char *tmp = malloc(n);
	if (!tmp)
		abort();
	memset(tmp, (int)(id & 0x7f), n);
	sink += (unsigned char)tmp[n / 2];
	free(tmp);
}

static void handle_request(long id)
{
	parse_request(id);
	struct session *s = open_session(id);
	sink += (unsigned long)s->id; /* ... and s is never freed */
}

/* The hog: a cache that fills a few large slots and keeps them. */
static void cache_fill(void)
{
	for (int i = 0; i < CACHE_SLOTS; i++) {
		cache[i] = malloc(CACHE_BYTES);
		if (!cache[i])
			abort();
		memset(cache[i], i, CACHE_BYTES);
	}
}

int main(void)
{
	cache_fill();
	for (long id = 0; id < REQUESTS; id++)
		handle_request(id);
	unsigned long sum = sink;
	for (int i = 0; i < CACHE_SLOTS; i++)
		sum += (unsigned char)cache[i][i];
	printf("leaky: served %d requests, cache of %d x %d KiB (checksum %lu)\n", REQUESTS,
	       CACHE_SLOTS, CACHE_BYTES / 1024, sum);
	return 0;
}
