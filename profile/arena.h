/*
 * arena.h - a bump allocator for the analyzer's profile model and symbol table: many small
 * strings and address arrays that live exactly as long as their owner and are freed at once.
 *
 * Not for the collector (it allocates with malloc) and not a general allocator: nothing can be
 * freed individually. CLI only. Allocation failure aborts the program with a message (the CLI
 * cannot do anything useful without memory).
 */
#ifndef HEAPTAP_PROFILE_ARENA_H
#define HEAPTAP_PROFILE_ARENA_H

#include <stddef.h>

struct arena_chunk;

struct arena {
	struct arena_chunk *head; /* newest chunk first */
	char *cur, *end;          /* free space in the newest chunk */
	size_t nbytes;            /* bytes handed out so far (statistics) */
};

/* Fills a with an empty arena (no allocation until the first arena_alloc). */
void arena_init(struct arena *a);
/* Frees every chunk and leaves a empty. */
void arena_release(struct arena *a);
/* Returns n bytes aligned to 8, uninitialised; valid until arena_release. n may be 0. */
void *arena_alloc(struct arena *a, size_t n);
/* Copies n bytes of s plus a NUL terminator into the arena. */
char *arena_strndup(struct arena *a, const char *s, size_t n);
/* Copies a NUL-terminated string into the arena. */
char *arena_strdup(struct arena *a, const char *s);
/* Copies n bytes into the arena. */
void *arena_memdup(struct arena *a, const void *p, size_t n);

/* malloc/realloc/calloc that abort with "heaptap: out of memory" instead of returning NULL. */
void *arena_xmalloc(size_t n);
void *arena_xrealloc(void *p, size_t n);
void *arena_xcalloc(size_t n, size_t size);

#endif
