/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * recstore.h - a store of fixed-size records with stable 32-bit numbers: records live in
 * chunks the store maps itself (never the host's malloc), found through a directory, so the
 * store grows a chunk at a time without moving or copying a record, and a freed record's
 * number is reused. Record numbers start at 1 (0 means "none").
 *
 * Not a hash table (linhash.h finds records) and not thread-safe: the caller's lock covers
 * every call. A freed record's first 4 bytes hold the free list's link.
 */
#ifndef HEAPTAP_LIB_RECSTORE_H
#define HEAPTAP_LIB_RECSTORE_H

#include <stddef.h>
#include <stdint.h>

struct recstore {
	char **chunks;        /* the directory (grows by doubling): chunk c holds records c << chunk_lg ... */
	uint32_t nchunks;     /* chunks mapped */
	uint32_t max_chunks;  /* the directory's size */
	uint32_t chunk_lg;    /* log2 of records per chunk */
	uint32_t rec_size;    /* bytes per record (>= 4) */
	uint32_t used;        /* records handed out from the chunks (numbers 1..used) */
	uint32_t free_head;   /* first freed record, 0 = none */
	uint64_t live;        /* records allocated and not freed */
	size_t dir_bytes;
};

/* Prepares a store of rec_size-byte records, 2^chunk_lg per chunk, up to max_records in all
   (rounded up to whole chunks; < 2^32). Maps only a one-page directory, which doubles as
   chunks are added. 0 or -ENOMEM. */
int recstore_init(struct recstore *s, uint32_t rec_size, uint32_t chunk_lg, uint64_t max_records);
/* Unmaps everything. */
void recstore_release(struct recstore *s);
/* Forgets every record and unmaps every chunk; the store stays usable. */
void recstore_clear(struct recstore *s);

/* A fresh record's number (its bytes are not cleared), or 0 when no memory can be mapped or
   the store is at max_records. */
uint32_t recstore_alloc(struct recstore *s);
/* Gives record i back for reuse. */
void recstore_free(struct recstore *s, uint32_t i);

/* Record i (1 <= i <= used). */
static inline void *recstore_get(const struct recstore *s, uint32_t i)
{
	uint32_t k = i - 1;
	return s->chunks[k >> s->chunk_lg] + (size_t)(k & ((1u << s->chunk_lg) - 1)) * s->rec_size;
}

/* Bytes mapped for the chunks and the directory. */
size_t recstore_bytes(const struct recstore *s);

#endif
