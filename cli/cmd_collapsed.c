/*
 * cmd_collapsed.c - `heaptap collapsed`: folded stacks ("root;...;leaf N", FORMATS.md §9.1) for
 * flamegraph.pl, speedscope, inferno and heaptap's own flame graph. Unlike jeprof --collapsed,
 * the names are clean (no nm <addr> tags), identical name paths are merged, counts are
 * integers and never negative (--negative decides what happens to shrinking stacks).
 * It prints text only; the flame graph is cmd_flame.c's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "common.h"
#include "stacks.h"

enum { NEG_DROP, NEG_SEPARATE, NEG_ABS };
enum { X_NEGATIVE = 1 };

static const char collapsed_help[] =
	"usage: heaptap collapsed [options] [BINARY] PROFILE... [--base=OLD]\n"
	"Prints one line per distinct call path, root first: 'main;handle;alloc 123456'.\n"
	"Names are full demangled function names (inlined frames end in [inline]); --lines,\n"
	"--files and --addresses change the granularity. Counts are integers (truncated).\n"
	"  --negative=drop|separate|abs   with --base: what to do with stacks that shrank\n"
	"                   drop (default): leave them out (a note on stderr says how much)\n"
	"                   separate: print 'path BEFORE AFTER' (differential flame graph input)\n"
	"                   abs: print the absolute value of the delta\n";

static int handle(void *ctx, int id, const char *v)
{
	int *neg = ctx;
	if (id == X_NEGATIVE) {
		if (strcmp(v, "drop") == 0)
			*neg = NEG_DROP;
		else if (strcmp(v, "separate") == 0)
			*neg = NEG_SEPARATE;
		else if (strcmp(v, "abs") == 0)
			*neg = NEG_ABS;
		else {
			fprintf(stderr, "heaptap: collapsed: --negative: expected drop, separate or abs, got '%s'\n"
			                "heaptap: try 'heaptap collapsed --help'\n", v);
			return 2;
		}
	}
	return 0;
}

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
static void print_path(const struct merge *m, const struct folded *fo)
{
	const uint32_t *k = m->keys + fo->first;
	for (uint32_t i = 0; i < fo->len; i++) {
		const struct token *t = m->by_rank[k[i]];
		fwrite(t->name, 1, m->by_rank_len[k[i]], stdout);
		if (t->term)
			putchar(t->term);
	}
}

static int same_path(const struct merge *m, const struct folded *a, const struct folded *b)
{
	return a->len == b->len && memcmp(m->keys + a->first, m->keys + b->first, a->len * sizeof(uint32_t)) == 0;
}

static int build(const struct common_args *a, struct profile *p, struct stacks *s)
{
	struct stacks_options so;
	stacks_options_from(&so, a);
	so.style = STACKS_FULL;
	return stacks_build(s, p, &so) ? 1 : 0;
}

int cmd_collapsed(int argc, char **argv)
{
	int neg = NEG_DROP;
	static const struct common_opt opts[] = {{"negative", 1, X_NEGATIVE}, {NULL, 0, 0}};
	struct common_extra ex = {.opts = opts, .handle = handle, .ctx = &neg, .help = collapsed_help};
	struct common_args a;
	int rc = common_parse(&a, argc, argv, &ex);
	if (rc >= 0)
		return rc;
	if (common_redirect_stdout(&a)) {
		common_args_release(&a);
		return 1;
	}
	struct folded *arr = NULL;
	size_t n = 0, cap = 0;
	struct profile p, b;
	profile_init(&p);
	profile_init(&b);
	int separate = a.base && neg == NEG_SEPARATE;
	rc = common_load(&a, &p, !separate);
	if (rc == 0 && separate) {
		rc = common_read(&a, a.base, &b);
		if (rc == 0)
			rc = common_symbolize(&a, &b);
	}
	struct merge m;
	memset(&m, 0, sizeof(m));
	struct stacks s, sb;
	int have_s = 0, have_sb = 0;
	if (rc == 0) {
		if (build(&a, &p, &s))
			rc = 1;
		else
			have_s = 1;
		if (rc == 0 && separate) {
			if (build(&a, &b, &sb))
				rc = 1;
			else
				have_sb = 1;
		}
		size_t tb_s = 0, tb_sb = 0;
		if (rc == 0) {
			int oom = add_tokens(&m, &s);
			tb_sb = m.ntok;
			if (!oom && have_sb)
				oom = add_tokens(&m, &sb);
			size_t empty_tok = m.ntok;
			if (!oom)
				oom = push_token(&m, "", '\0') || rank_tokens(&m);
			if (!oom)
				oom = add_paths(&m, &arr, &n, &cap, &s, tb_s, m.rank[empty_tok], 0);
			if (!oom && have_sb)
				oom = add_paths(&m, &arr, &n, &cap, &sb, tb_sb, m.rank[empty_tok], 1);
			if (oom) {
				fprintf(stderr, "heaptap: collapsed: out of memory\n");
				rc = 1;
			}
		}
	}
	if (rc == 0) {
		g_merge = &m;
		if (n > 0) /* arr is NULL when no stack has a value */
			qsort(arr, n, sizeof(*arr), cmp_folded);
		size_t dropped = 0;
		double dropped_sum = 0;
		for (size_t i = 0; i < n;) {
			size_t j = i + 1;
			double before = arr[i].before, after = arr[i].after;
			while (j < n && same_path(&m, &arr[j], &arr[i])) {
				before += arr[j].before;
				after += arr[j].after;
				j++;
			}
			long long bi = common_sat_ll(before), ai = common_sat_ll(after);
			if (separate) {
				if (bi < 0)
					bi = 0;
				if (ai < 0)
					ai = 0;
				if (bi || ai) {
					print_path(&m, &arr[i]);
					printf(" %lld %lld\n", bi, ai);
				}
			} else if (ai < 0 && neg == NEG_DROP) {
				dropped++;
				dropped_sum += after;
			} else {
				if (ai < 0)
					ai = -ai;
				if (ai) {
					print_path(&m, &arr[i]);
					printf(" %lld\n", ai);
				}
			}
			i = j;
		}
		if (dropped) {
			char v[64];
			fprintf(stderr, "heaptap: collapsed: left out %zu stacks that shrank (%s %s in all); "
			                "see --negative=separate|abs\n",
			        dropped, common_fmt_value(&a, -dropped_sum, v, sizeof(v)), common_unit(&a));
		}
		if (fflush(stdout) != 0) {
			fprintf(stderr, "heaptap: collapsed: stdout: %s\n", strerror(errno));
			rc = 1;
		}
	}
	free(arr);
	merge_release(&m);
	if (have_sb)
		stacks_release(&sb);
	if (have_s)
		stacks_release(&s);
	profile_release(&b);
	profile_release(&p);
	common_args_release(&a);
	return rc;
}
