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
	uint32_t *keys;       /* all paths' ranks, back to back */
	size_t nkeys, keycap;
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

/* Appends s's traces to *arr as rank keys (tokens of s start at index tbase). Call after
   ranks are assigned. */
static int add_paths(struct merge *m, struct folded **arr, size_t *n, size_t *cap,
                     const struct stacks *s, size_t tbase, uint32_t empty_rank, int as_before)
{
	for (size_t t = 0; t < s->ntraces; t++) {
		const struct stacks_trace *tr = &s->traces[t];
		size_t need = tr->nframes ? tr->nframes : 1;
		if (m->nkeys + need > m->keycap) {
			size_t nc = (m->nkeys + need) * 2;
			uint32_t *nk = realloc(m->keys, nc * sizeof(*nk));
			if (!nk)
				return -1;
			m->keys = nk;
			m->keycap = nc;
		}
		uint32_t first = (uint32_t)m->nkeys;
		if (!tr->nframes) /* the empty path joins to "", as does one frame named "" */
			m->keys[m->nkeys++] = empty_rank;
		for (uint32_t f = 0; f < tr->nframes; f++)
			m->keys[m->nkeys++] = m->rank[tbase + 2 * (size_t)tr->frames[f] + (f + 1 == tr->nframes)];
		if (*n == *cap) {
			*cap = *cap ? *cap * 2 : 256;
			struct folded *na = realloc(*arr, *cap * sizeof(**arr));
			if (!na)
				return -1;
			*arr = na;
		}
		struct folded *fo = &(*arr)[(*n)++];
		fo->first = first;
		fo->len = (uint32_t)need;
		fo->before = as_before ? tr->value : 0;
		fo->after = as_before ? 0 : tr->value;
	}
	return 0;
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
	free(m->keys);
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


int folded_write(FILE *out, const struct stacks *s, const struct stacks *sb, enum folded_negative neg,
                 struct folded_result *r)
{
	struct folded_result dummy;
	if (!r)
		r = &dummy;
	memset(r, 0, sizeof(*r));
	struct merge m;
	memset(&m, 0, sizeof(m));
	struct folded *arr = NULL;
	size_t n = 0, cap = 0;
	int oom = add_tokens(&m, s);
	size_t tb_sb = m.ntok;
	if (!oom && sb)
		oom = add_tokens(&m, sb);
	size_t empty_tok = m.ntok;
	if (!oom)
		oom = push_token(&m, "", '\0') || rank_tokens(&m);
	if (!oom)
		oom = add_paths(&m, &arr, &n, &cap, s, 0, m.rank[empty_tok], 0);
	if (!oom && sb)
		oom = add_paths(&m, &arr, &n, &cap, sb, tb_sb, m.rank[empty_tok], 1);
	if (oom) {
		fprintf(stderr, "heaptap: folded stacks: out of memory\n");
		free(arr);
		merge_release(&m);
		return -1;
	}
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
	free(arr);
	merge_release(&m);
	return ferror(out) ? -2 : 0;
}
