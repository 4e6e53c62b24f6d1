/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * recstore.c - the chunked record store of recstore.h: a directory of chunk pointers, chunks
 * mapped on demand, a free list threaded through freed records. No host malloc; not
 * thread-safe (the caller locks).
 */
#include "recstore.h"

#include <errno.h>
#include <string.h>

#include "sys.h"

int recstore_init(struct recstore *s, uint32_t rec_size, uint32_t chunk_lg, uint64_t max_records)
{
	memset(s, 0, sizeof *s);
	if (rec_size < 4)
		rec_size = 4;
	if (max_records >= UINT32_MAX)
		max_records = UINT32_MAX - 1;
	uint64_t per = (uint64_t)1 << chunk_lg;
	uint64_t chunks = (max_records + per - 1) / per;
	if (chunks == 0)
		chunks = 1;
	/* the directory starts at one page and doubles as chunks come: address space to need */
	s->dir_bytes = 4096;
	s->chunks = sys_map(s->dir_bytes);
	if (!s->chunks)
		return -ENOMEM;
	s->max_chunks = (uint32_t)chunks;
	s->chunk_lg = chunk_lg;
	s->rec_size = rec_size;
	return 0;
}

static size_t chunk_bytes(const struct recstore *s)
{
	return ((size_t)s->rec_size << s->chunk_lg);
}

void recstore_clear(struct recstore *s)
{
	for (uint32_t c = 0; c < s->nchunks; c++) {
		sys_unmap(s->chunks[c], chunk_bytes(s));
		s->chunks[c] = NULL;
	}
	s->nchunks = 0;
	s->used = 0;
	s->free_head = 0;
	s->live = 0;
}

void recstore_release(struct recstore *s)
{
	if (s->chunks) {
		recstore_clear(s);
		sys_unmap(s->chunks, s->dir_bytes);
	}
	memset(s, 0, sizeof *s);
}

uint32_t recstore_alloc(struct recstore *s)
{
	uint32_t i = s->free_head;
	if (i) {
		memcpy(&s->free_head, recstore_get(s, i), sizeof s->free_head);
		s->live++;
		return i;
	}
	if ((s->used >> s->chunk_lg) >= s->nchunks) { /* every mapped chunk is handed out */
		if (s->nchunks >= s->max_chunks)
			return 0;
		if ((size_t)(s->nchunks + 1) * sizeof *s->chunks > s->dir_bytes) {
			/* a directory twice the size: the pointers are copied, no record moves */
			char **dir = sys_map(s->dir_bytes * 2);
			if (!dir)
				return 0;
			memcpy(dir, s->chunks, (size_t)s->nchunks * sizeof *s->chunks);
			sys_unmap(s->chunks, s->dir_bytes);
			s->chunks = dir;
			s->dir_bytes *= 2;
		}
		char *c = sys_map(chunk_bytes(s));
		if (!c)
			return 0;
		s->chunks[s->nchunks++] = c;
	}
	s->live++;
	return ++s->used;
}

void recstore_free(struct recstore *s, uint32_t i)
{
	memcpy(recstore_get(s, i), &s->free_head, sizeof s->free_head);
	s->free_head = i;
	s->live--;
}

size_t recstore_bytes(const struct recstore *s)
{
	return s->dir_bytes + (size_t)s->nchunks * chunk_bytes(s);
}
