/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * arena.h - a bump allocator for the analyzer's profile model and symbol table: many small
 * strings and address arrays that live exactly as long as their owner and are freed at once.
 *
 * Not for the collector (it allocates with malloc) and not a general allocator: nothing can be
 * freed individually. CLI only. Allocation failure ends the program with exit status 1 and a
 * message naming the file being worked on (the CLI cannot do anything useful without memory,
 * and a hostile input must not make it abort).
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

/* malloc/realloc/calloc that call arena_oom instead of returning NULL. */
void *arena_xmalloc(size_t n);
void *arena_xrealloc(void *p, size_t n);
void *arena_xcalloc(size_t n, size_t size);

/* Names the file the program is working on (a profile being read, an ELF file being indexed)
   for arena_oom's message; NULL or "" for none. The name is copied (truncated to 1 KiB).
   Returns the previous subject in prev (prevcap bytes, may be 0) so a caller can restore it. */
void arena_set_subject(const char *name, char *prev, size_t prevcap);
/* Text arena_oom appends in parentheses (e.g. the memory limit and how to raise it), copied;
   NULL for none. */
void arena_set_oom_hint(const char *hint);
/* Prints "heaptap: <subject>: out of memory (<hint>)" on stderr and ends the process with
   _exit(1): no abort, no core, no atexit handlers (a half-written report is not flushed).
   For every allocation failure the CLI cannot recover from, also in libraries' handlers. */
void arena_oom(void) __attribute__((noreturn));

#endif
