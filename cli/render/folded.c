/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * folded.c - folded stacks from display stacks (see folded.h). Paths are compared as arrays
 * of token ranks rather than joined strings, so sorting tens of thousands of deep paths stays
 * cheap. It prints to the stream it is given and nothing else.
 */
#include "folded.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../base/hash.h"
#include "../../profile/arena.h"
#include "../common.h"

/* The merge works on keys, not joined strings: a path "a;b;c" is the token sequence
   "a;" "b;" "c\0" (names with ';' already replaced), and since no token is a proper prefix of
   another (a name holds neither ';' nor NUL), comparing two joined paths with strcmp gives the
   same order as comparing their token sequences token by token. So every distinct token gets
   its rank in strcmp order once, a path becomes an array of ranks, and the 60,000-path sort
   compares small integers instead of long strings with shared prefixes. */
struct token {
	const char *name; /* with ';' replaced by ',' */
	unsigned char term; /* ';' (a frame with a frame after it) or '\0' (the leaf) */
};

struct folded {
	uint32_t first, len; /* ranks in keys[first .. first+len) */
	double before, after; /* after holds the value when there is no base */
};

struct merge {
	struct token *tok;    /* 2 per name of each stacks, plus the empty path's */
	size_t ntok, tokcap;
	char **owned;         /* names copied to replace ';' */
	size_t nowned;
	const uint32_t *keys; /* all paths' ranks, back to back (the folded_set's) */
	uint32_t *rank;       /* by token index; then tok is sorted */
	const struct token **by_rank;
	size_t *by_rank_len;
};

static int cmp_tok_parts(const struct token *x, const struct token *y)
{
	const unsigned char *a = (const unsigned char *)x->name, *b = (const unsigned char *)y->name;
	for (size_t i = 0;; i++) {
		unsigned ca = a[i] ? a[i] : x->term, cb = b[i] ? b[i] : y->term;
		if (ca != cb)
			return ca < cb ? -1 : 1;
		if (!a[i]) /* then b[i] is NUL too: the terminators matched and names hold neither */
			return 0;
	}
}

static const struct merge *g_merge; /* qsort has no context argument */

static int cmp_tok_idx(const void *x, const void *y)
{
	uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;
	return cmp_tok_parts(&g_merge->tok[i], &g_merge->tok[j]);
}

static int cmp_folded(const void *x, const void *y)
{
	const struct folded *a = x, *b = y;
	const uint32_t *ka = g_merge->keys + a->first, *kb = g_merge->keys + b->first;
	uint32_t n = a->len < b->len ? a->len : b->len;
	for (uint32_t i = 0; i < n; i++)
		if (ka[i] != kb[i])
			return ka[i] < kb[i] ? -1 : 1;
	return a->len < b->len ? -1 : a->len > b->len;
}

static int push_token(struct merge *m, const char *name, unsigned char term)
{
	if (m->ntok == m->tokcap) {
		size_t nc = m->tokcap ? m->tokcap * 2 : 1024;
		struct token *nt = realloc(m->tok, nc * sizeof(*nt));
		if (!nt)
			return -1;
		m->tok = nt;
		m->tokcap = nc;
	}
	m->tok[m->ntok].name = name;
	m->tok[m->ntok].term = term;
	m->ntok++;
	return 0;
}

/* Adds the tokens of s's names (2 per name id, from index base: 2*id+0 ends with ';',
   2*id+1 with NUL). */
static int add_tokens(struct merge *m, const struct stacks *s)
{
	char **no = realloc(m->owned, (m->nowned + s->nnames) * sizeof(*no));
	if (!no)
		return -1;
	m->owned = no;
	for (size_t i = 0; i < s->nnames; i++) {
		const char *nm = s->names[i].name;
		if (strchr(nm, ';')) {
			/* ';' separates frames and cannot be escaped: replace it inside names. */
			char *c = strdup(nm);
			if (!c)
				return -1;
			for (char *q = c; *q; q++)
				if (*q == ';')
					*q = ',';
			m->owned[m->nowned++] = c;
			nm = c;
		}
		if (push_token(m, nm, ';') || push_token(m, nm, '\0'))
			return -1;
	}
	return 0;
}

/* The distinct paths of one or two streamed stacks_build runs (see folded.h): every path's
   name ids once in keys, looked up by an open-addressing table of path indexes. Memory grows
   with the distinct paths, never with the samples. */
/* The key of the path without frames (no name id reaches it). */
#define EMPTY_PATH UINT32_MAX

struct folded_set {
	uint32_t *keys;        /* name ids of side 0 and 1's paths; rank keys after ranking */
	size_t nkeys, keycap;
	struct folded *paths;
	size_t npaths, pathcap;
	uint32_t *slots;       /* path index + 1, 0 empty */
	size_t slotcap;
	size_t side_end;       /* paths[0 .. side_end) are side 0's once side 1 has started */
	int side;
	struct folded_sink sinks[2];
};

static uint64_t path_hash(int side, const uint32_t *ids, uint32_t n)
{
	uint64_t h = hash_mix64((uint64_t)n * 2 + (uint64_t)side);
	for (uint32_t i = 0; i < n; i++)
		h = hash_mix64(h ^ ids[i]);
	return h;
}

static void set_grow_slots(struct folded_set *fs)
{
	size_t nc = fs->slotcap ? fs->slotcap * 2 : 1024;
	uint32_t *ns = arena_xcalloc(nc, sizeof(*ns));
	for (size_t i = 0; i < fs->npaths; i++) {
		const struct folded *fo = &fs->paths[i];
		int side = i >= fs->side_end && fs->side;
		size_t h = (size_t)path_hash(side, fs->keys + fo->first, fo->len) & (nc - 1);
		while (ns[h])
			h = (h + 1) & (nc - 1);
		ns[h] = (uint32_t)(i + 1);
	}
	free(fs->slots);
	fs->slots = ns;
	fs->slotcap = nc;
}

void folded_sink_add(void *ctx, const uint32_t *frames, uint32_t nframes, double value,
                     const struct prof_sample *sample)
{
	(void)sample;
	static const uint32_t empty = EMPTY_PATH;
	if (nframes == 0) { /* the empty path joins to "", as does one frame named "" */
		frames = &empty;
		nframes = 1;
	}
	struct folded_sink *sk = ctx;
	struct folded_set *fs = sk->set;
	if (sk->side != fs->side) { /* side 1 begins: side 0 is complete */
		fs->side = sk->side;
		fs->side_end = fs->npaths;
	}
	if ((fs->npaths + 1) * 2 > fs->slotcap)
		set_grow_slots(fs);
	size_t h = (size_t)path_hash(fs->side, frames, nframes) & (fs->slotcap - 1);
	for (uint32_t x; (x = fs->slots[h]) != 0; h = (h + 1) & (fs->slotcap - 1)) {
		struct folded *fo = &fs->paths[x - 1];
		if (fo->len == nframes && (x - 1 >= fs->side_end || !fs->side) == 1 &&
		    memcmp(fs->keys + fo->first, frames, nframes * sizeof(*frames)) == 0) {
			*(fs->side ? &fo->before : &fo->after) += value;
			return;
		}
	}
	if (fs->nkeys + nframes > fs->keycap) {
		fs->keycap = (fs->nkeys + nframes) * 2 + 1024;
		fs->keys = arena_xrealloc(fs->keys, fs->keycap * sizeof(*fs->keys));
	}
	if (fs->npaths == fs->pathcap) {
		fs->pathcap = fs->pathcap ? fs->pathcap * 2 : 256;
		fs->paths = arena_xrealloc(fs->paths, fs->pathcap * sizeof(*fs->paths));
	}
	struct folded *fo = &fs->paths[fs->npaths];
	fo->first = (uint32_t)fs->nkeys;
	fo->len = nframes;
	fo->before = fs->side ? value : 0;
	fo->after = fs->side ? 0 : value;
	memcpy(fs->keys + fs->nkeys, frames, nframes * sizeof(*frames));
	fs->nkeys += nframes;
	fs->slots[h] = (uint32_t)++fs->npaths;
}

struct folded_set *folded_set_new(void)
{
	struct folded_set *fs = arena_xcalloc(1, sizeof(*fs));
	for (int i = 0; i < 2; i++) {
		fs->sinks[i].set = fs;
		fs->sinks[i].side = i;
	}
	return fs;
}

struct folded_sink *folded_set_sink(struct folded_set *fs, int base)
{
	return &fs->sinks[base != 0];
}

void folded_set_free(struct folded_set *fs)
{
	if (!fs)
		return;
	free(fs->keys);
	free(fs->paths);
	free(fs->slots);
	free(fs);
}

/* Turns the name ids of paths[from .. to) into rank keys (tokens of their stacks start at
   index tbase). Call after ranks are assigned. */
static void rank_paths(struct merge *m, struct folded_set *fs, size_t from, size_t to, size_t tbase,
                       uint32_t empty_rank)
{
	for (size_t i = from; i < to; i++) {
		struct folded *fo = &fs->paths[i];
		uint32_t *k = fs->keys + fo->first;
		for (uint32_t f = 0; f < fo->len; f++)
			k[f] = k[f] == EMPTY_PATH ? empty_rank
			                          : m->rank[tbase + 2 * (size_t)k[f] + (f + 1 == fo->len)];
	}
}

/* Ranks every token in strcmp order (equal strings, equal rank). */
static int rank_tokens(struct merge *m)
{
	uint32_t *idx = malloc((m->ntok ? m->ntok : 1) * sizeof(*idx));
	m->rank = malloc((m->ntok ? m->ntok : 1) * sizeof(*m->rank));
	m->by_rank = malloc((m->ntok ? m->ntok : 1) * sizeof(*m->by_rank));
	m->by_rank_len = malloc((m->ntok ? m->ntok : 1) * sizeof(*m->by_rank_len));
	if (!idx || !m->rank || !m->by_rank || !m->by_rank_len) {
		free(idx);
		return -1;
	}
	for (size_t i = 0; i < m->ntok; i++)
		idx[i] = (uint32_t)i;
	g_merge = m;
	qsort(idx, m->ntok, sizeof(*idx), cmp_tok_idx);
	uint32_t r = 0;
	for (size_t i = 0; i < m->ntok; i++) {
		if (i && cmp_tok_parts(&m->tok[idx[i - 1]], &m->tok[idx[i]]) != 0)
			r++;
		m->rank[idx[i]] = r;
		m->by_rank[r] = &m->tok[idx[i]];
		m->by_rank_len[r] = strlen(m->tok[idx[i]].name);
	}
	free(idx);
	return 0;
}

static void merge_release(struct merge *m)
{
	for (size_t i = 0; i < m->nowned; i++)
		free(m->owned[i]);
	free(m->owned);
	free(m->tok);
	free(m->rank);
	free(m->by_rank);
	free(m->by_rank_len);
}

/* Prints the joined path of fo (no newline). */
static void print_path(FILE *out, const struct merge *m, const struct folded *fo)
{
	const uint32_t *k = m->keys + fo->first;
	for (uint32_t i = 0; i < fo->len; i++) {
		const struct token *t = m->by_rank[k[i]];
		fwrite(t->name, 1, m->by_rank_len[k[i]], out);
		if (t->term)
			putc(t->term, out);
	}
}

static int same_path(const struct merge *m, const struct folded *a, const struct folded *b)
{
	return a->len == b->len && memcmp(m->keys + a->first, m->keys + b->first, a->len * sizeof(uint32_t)) == 0;
}


int folded_write(FILE *out, struct folded_set *fs, const struct stacks *s, const struct stacks *sb,
                 enum folded_negative neg, struct folded_result *r)
{
	struct folded_result dummy;
	if (!r)
		r = &dummy;
	memset(r, 0, sizeof(*r));
	struct merge m;
	memset(&m, 0, sizeof(m));
	int oom = add_tokens(&m, s);
	size_t tb_sb = m.ntok;
	if (!oom && sb)
		oom = add_tokens(&m, sb);
	size_t empty_tok = m.ntok;
	if (!oom)
		oom = push_token(&m, "", '\0') || rank_tokens(&m);
	if (oom) {
		fprintf(stderr, "heaptap: folded stacks: out of memory\n");
		merge_release(&m);
		return -1;
	}
	size_t side_end = fs->side ? fs->side_end : fs->npaths;
	rank_paths(&m, fs, 0, side_end, 0, m.rank[empty_tok]);
	rank_paths(&m, fs, side_end, fs->npaths, tb_sb, m.rank[empty_tok]);
	struct folded *arr = fs->paths;
	size_t n = fs->npaths;
	m.keys = fs->keys;
	g_merge = &m;
	if (n > 0) /* arr is NULL when no stack has a value */
		qsort(arr, n, sizeof(*arr), cmp_folded);
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;
		double before = arr[i].before, after = arr[i].after;
		while (j < n && same_path(&m, &arr[j], &arr[i])) {
			before += arr[j].before;
			after += arr[j].after;
			j++;
		}
		long long bi = common_sat_ll(before), ai = common_sat_ll(after);
		if (sb) {
			if (bi < 0)
				bi = 0;
			if (ai < 0)
				ai = 0;
			if (bi || ai) {
				print_path(out, &m, &arr[i]);
				fprintf(out, " %lld %lld\n", bi, ai);
			}
		} else if (ai < 0 && neg == FOLDED_NEG_DROP) {
			r->dropped++;
			r->dropped_sum += after;
		} else {
			if (ai < 0)
				ai = -ai;
			if (ai) {
				print_path(out, &m, &arr[i]);
				fprintf(out, " %lld\n", ai);
			}
		}
		i = j;
	}
	m.keys = NULL; /* fs's */
	merge_release(&m);
	return ferror(out) ? -2 : 0;
}
