/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * arena.c - the bump allocator behind the profile model and the symbol table (see arena.h).
 * Chunks grow geometrically up to 1 MiB; a request bigger than a chunk gets a chunk of its own.
 * Not thread-safe and never used inside the collector.
 */
#include "arena.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct arena_chunk {
	struct arena_chunk *next;
	size_t size;
	/* data follows, 16-byte aligned by the allocation */
	max_align_t data[];
};

enum { ARENA_MIN_CHUNK = 4096, ARENA_MAX_CHUNK = 1 << 20 };

static char oom_subject[1024];
static char oom_hint[256];

void arena_set_subject(const char *name, char *prev, size_t prevcap)
{
	if (prev && prevcap)
		snprintf(prev, prevcap, "%s", oom_subject);
	snprintf(oom_subject, sizeof oom_subject, "%s", name ? name : "");
}

void arena_set_oom_hint(const char *hint)
{
	snprintf(oom_hint, sizeof oom_hint, "%s", hint ? hint : "");
}

void arena_oom(void)
{
	/* No stdio: the failure may have happened inside it, and its buffers need memory. */
	char msg[sizeof oom_subject + sizeof oom_hint + 64];
	int n = snprintf(msg, sizeof msg, "heaptap: %s%sout of memory%s%s%s\n", oom_subject,
	                 oom_subject[0] ? ": " : "", oom_hint[0] ? " (" : "", oom_hint, oom_hint[0] ? ")" : "");
	if (n > 0 && write(2, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1) < 0)
		n = 0;
	_exit(1);
}

void *arena_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		arena_oom();
	return p;
}

void *arena_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		arena_oom();
	return q;
}

void *arena_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		arena_oom();
	return p;
}

void arena_init(struct arena *a)
{
	a->head = NULL;
	a->cur = a->end = NULL;
	a->nbytes = 0;
}

void arena_release(struct arena *a)
{
	struct arena_chunk *c = a->head;
	while (c) {
		struct arena_chunk *next = c->next;
		free(c);
		c = next;
	}
	arena_init(a);
}

void *arena_alloc(struct arena *a, size_t n)
{
	n = (n + 7) & ~(size_t)7;
	if (n == 0)
		n = 8;
	if ((size_t)(a->end - a->cur) < n || !a->cur) {
		size_t size = a->head ? a->head->size * 2 : ARENA_MIN_CHUNK;
		if (size > ARENA_MAX_CHUNK)
			size = ARENA_MAX_CHUNK;
		if (size < n)
			size = n;
		if (size > SIZE_MAX - sizeof(struct arena_chunk))
			arena_oom();
		struct arena_chunk *c = arena_xmalloc(sizeof *c + size);
		c->size = size;
		if (n > ARENA_MAX_CHUNK / 4 && a->head) {
			/* A big block: keep the current chunk's free space for later small requests. */
			c->next = a->head->next;
			a->head->next = c;
			a->nbytes += n;
			return c->data;
		}
		c->next = a->head;
		a->head = c;
		a->cur = (char *)c->data;
		a->end = a->cur + size;
	}
	void *p = a->cur;
	a->cur += n;
	a->nbytes += n;
	return p;
}

char *arena_strndup(struct arena *a, const char *s, size_t n)
{
	char *d = arena_alloc(a, n + 1);
	if (n)
		memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

char *arena_strdup(struct arena *a, const char *s)
{
	return arena_strndup(a, s, strlen(s));
}

void *arena_memdup(struct arena *a, const void *p, size_t n)
{
	void *d = arena_alloc(a, n);
	if (n)
		memcpy(d, p, n);
	return d;
}
