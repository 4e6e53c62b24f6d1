/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * flame.c - the flame graph of flame.h: merges root-first name stacks into a tree as they come
 * (in sorted batches), orders siblings by name, lays frames out in pixels and writes the SVG
 * with its tooltips, colours and the script of svgscript.h. It does not read profiles,
 * symbolize or choose values: the commands do that and hand it names and numbers.
 */
#include "flame.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../base/hash.h"
#include "../../profile/arena.h"
#include "svgscript.h"
#include "svgutil.h"

#define NONE UINT32_MAX

/*
 * The merged tree: a node per distinct name path (the prefix tree). Stacks are gathered in a
 * bounded batch (BATCH_FRAMES frames), which is then sorted by its frame sequences and merged
 * into the tree: a stack reuses the nodes of the previous one for their common prefix, a
 * child of a node made in this batch is new (the stacks through it are neighbours in the
 * sort), and only a child of an older node is looked up: in its parent's list of children
 * when that is short, else in a hash table of the children of wide nodes (more than
 * NARROW_MAX children), where most nodes (deep in a big tree, one or two children each) never
 * go. So the memory is the tree (40 bytes a node, 48 with base values), a hash slot or two per
 * child of a wide node, and the batch; never the stacks added: a million stacks folding into a
 * thousand paths cost a thousand nodes. Sorting keeps most of the work on the batch, in cache,
 * where a hash probe per frame of every stack would miss it twice on a big tree.
 */
struct fnode {
	uint32_t key;     /* name << 1 | inlined */
	uint32_t parent;
	uint32_t child;   /* first child; siblings in name order once sorted (sort_children), in
	                     no particular order before */
	uint32_t sibling; /* next sibling */
	uint32_t file;    /* index into names, or NONE */
	int32_t line;
	uint32_t wit;     /* the last node of the stack whose file:line this is (its witness) */
	uint32_t wdir;    /* the child of this node towards wit, or NONE when wit is this node */
	double v;         /* value */
};

/* A stack of the batch. */
struct pending {
	uint32_t off, n;  /* frames[off .. off+n), root first */
	double v, vb;
};

/* One frame of the batch. */
struct pframe {
	uint32_t key;     /* name << 1 | inlined */
	uint32_t file;    /* index into names, or NONE */
	int32_t line;
};

#define BATCH_FRAMES ((size_t)1 << 18) /* 3 MiB of frames */
#define BATCH_STACKS ((size_t)1 << 16)
#define NARROW_MAX 8 /* a node with more children is wide: they go into the hash table */

struct flame_graph {
	int reverse;
	double total, base_total;
	/* the batch: stacks added and not merged yet */
	struct pending *stacks;
	size_t nstacks, stacks_cap;
	struct pframe *frames;
	size_t nframes, frames_cap;
	/* the merged tree; node 0 is the root ("all", name 0) */
	struct fnode *nodes;
	size_t nnodes, cap;
	double *vb;             /* base values by node, NULL while every base value added is 0 */
	uint64_t *wide;         /* bit per node: its children are in the slots */
	uint32_t *slots;        /* the children of wide nodes by (parent, key) hash (linear
	                           probing, load <= 1/2); NONE when empty */
	size_t nslots, nslotted;
	int sorted;             /* siblings are in name order (nothing merged since) */
	/* interned strings */
	char **names;
	size_t nnames, names_cap;
	uint32_t *stab;
	size_t stab_cap;
	const char *last_file;  /* the last file pointer interned, and its id: frames of one */
	uint32_t last_file_id;  /* profile share pointers, so most look-ups stop here */
};

/* FNV-1a folded once: the colours of every graph derive from it (palette_colour). */
static uint64_t name_hash(const char *s)
{
	uint64_t h = hash_str(s);
	return h ^ (h >> 29);
}

static void stab_grow(struct flame_graph *g)
{
	size_t cap = g->stab_cap ? g->stab_cap * 2 : 1024;
	uint32_t *t = arena_xmalloc(cap * sizeof *t);
	memset(t, 0xff, cap * sizeof *t);
	for (size_t i = 0; i < g->nnames; i++) {
		size_t j = name_hash(g->names[i]) & (cap - 1);
		while (t[j] != NONE)
			j = (j + 1) & (cap - 1);
		t[j] = (uint32_t)i;
	}
	free(g->stab);
	g->stab = t;
	g->stab_cap = cap;
}

static uint32_t intern(struct flame_graph *g, const char *s)
{
	if ((g->nnames + 1) * 2 > g->stab_cap)
		stab_grow(g);
	size_t j = name_hash(s) & (g->stab_cap - 1);
	while (g->stab[j] != NONE) {
		if (strcmp(g->names[g->stab[j]], s) == 0)
			return g->stab[j];
		j = (j + 1) & (g->stab_cap - 1);
	}
	if (g->nnames == g->names_cap) {
		g->names_cap = g->names_cap ? g->names_cap * 2 : 1024;
		g->names = arena_xrealloc(g->names, g->names_cap * sizeof *g->names);
	}
	size_t len = strlen(s);
	char *c = arena_xmalloc(len + 1);
	memcpy(c, s, len + 1);
	g->names[g->nnames] = c;
	g->stab[j] = (uint32_t)g->nnames;
	return (uint32_t)g->nnames++;
}

/* ---- the tree ---- */

static uint32_t child_hash(uint32_t parent, uint32_t key)
{
	return (uint32_t)hash_mix64((uint64_t)parent << 32 | key);
}

static int is_wide(const struct flame_graph *g, uint32_t id)
{
	return (int)(g->wide[id >> 6] >> (id & 63) & 1);
}

static uint32_t new_node(struct flame_graph *g, uint32_t parent, uint32_t key)
{
	if (g->nnodes == g->cap) {
		if (g->cap >= NONE / 2)
			arena_oom(); /* 2^31 nodes: node indexes are 32-bit */
		size_t old = g->cap;
		g->cap = g->cap ? g->cap * 2 : 1024;
		g->nodes = arena_xrealloc(g->nodes, g->cap * sizeof *g->nodes);
		g->wide = arena_xrealloc(g->wide, g->cap / 64 * sizeof *g->wide);
		memset(g->wide + old / 64, 0, (g->cap - old) / 64 * sizeof *g->wide);
		if (g->vb)
			g->vb = arena_xrealloc(g->vb, g->cap * sizeof *g->vb);
	}
	uint32_t id = (uint32_t)g->nnodes++;
	struct fnode *n = &g->nodes[id];
	n->key = key;
	n->parent = parent;
	n->child = NONE;
	n->file = n->wit = n->wdir = NONE;
	n->line = 0;
	n->v = 0;
	if (g->vb)
		g->vb[id] = 0;
	if (parent != NONE) { /* first of its siblings until sort_children orders them */
		n->sibling = g->nodes[parent].child;
		g->nodes[parent].child = id;
	} else {
		n->sibling = NONE;
	}
	return id;
}

/* Puts node id (a child of a wide node) into the slots. */
static void slot_put(struct flame_graph *g, uint32_t id)
{
	size_t mask = g->nslots - 1, j = child_hash(g->nodes[id].parent, g->nodes[id].key) & mask;
	while (g->slots[j] != NONE)
		j = (j + 1) & mask;
	g->slots[j] = id;
	g->nslotted++;
}

/* Makes room in the slots for n more nodes at a load of at most 1/2: a bigger table refilled
   with the children of wide nodes among nodes [1, limit) (the younger ones are the batch
   being merged: it puts them in itself), in node order, each slot loaded a few nodes ahead
   (on a big table each is a cache miss). */
static void slots_reserve(struct flame_graph *g, size_t n, size_t limit)
{
	if ((g->nslotted + n) * 2 <= g->nslots)
		return;
	size_t cap = g->nslots ? g->nslots * 2 : 1024;
	while ((g->nslotted + n) * 2 > cap)
		cap *= 2;
	free(g->slots);
	g->slots = arena_xmalloc(cap * sizeof *g->slots);
	memset(g->slots, 0xff, cap * sizeof *g->slots);
	g->nslots = cap;
	g->nslotted = 0;
	enum { AHEAD = 16 };
	const struct fnode *nd = g->nodes;
	for (size_t i = 1; i < limit; i++) {
		size_t a = i + AHEAD;
		if (a < limit && is_wide(g, nd[a].parent))
			__builtin_prefetch(&g->slots[child_hash(nd[a].parent, nd[a].key) & (cap - 1)]);
		if (is_wide(g, nd[i].parent))
			slot_put(g, (uint32_t)i);
	}
}

/* Makes parent wide: its children older than node from go into the slots (the younger ones go
   in when their batch is merged). */
static void make_wide(struct flame_graph *g, uint32_t parent, size_t nkids, size_t from)
{
	slots_reserve(g, nkids, from);
	g->wide[parent >> 6] |= (uint64_t)1 << (parent & 63);
	for (uint32_t c = g->nodes[parent].child; c != NONE; c = g->nodes[c].sibling)
		if (c < from)
			slot_put(g, c);
}

/* The child of parent (a node older than node from) with key, or NONE. */
static uint32_t find_child(struct flame_graph *g, uint32_t parent, uint32_t key, size_t from)
{
	if (!is_wide(g, parent)) {
		size_t nkids = 0;
		for (uint32_t c = g->nodes[parent].child; c != NONE; c = g->nodes[c].sibling, nkids++)
			if (g->nodes[c].key == key)
				return c;
		if (nkids <= NARROW_MAX)
			return NONE;
		make_wide(g, parent, nkids, from);
	}
	size_t mask = g->nslots - 1;
	for (size_t j = child_hash(parent, key) & mask;; j = (j + 1) & mask) {
		uint32_t x = g->slots[j];
		if (x == NONE || (g->nodes[x].parent == parent && g->nodes[x].key == key))
			return x;
	}
}

struct flame_graph *flame_new(int reverse)
{
	struct flame_graph *g = arena_xmalloc(sizeof *g);
	memset(g, 0, sizeof *g);
	g->reverse = reverse;
	g->last_file_id = NONE;
	intern(g, "all");
	new_node(g, NONE, 0); /* the root, "all" (name 0) */
	return g;
}

void flame_free(struct flame_graph *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->nnames; i++)
		free(g->names[i]);
	free(g->names);
	free(g->stab);
	free(g->stacks);
	free(g->frames);
	free(g->nodes);
	free(g->vb);
	free(g->wide);
	free(g->slots);
	free(g);
}

uint32_t flame_name_id(struct flame_graph *g, const char *name)
{
	return intern(g, name ? name : "??");
}

/* 1 when sibling keys a and b are in that order: names in byte order, then the inline mark. */
static int key_less(const struct flame_graph *g, uint32_t a, uint32_t b)
{
	if (a >> 1 == b >> 1)
		return (a & 1) < (b & 1);
	return strcmp(g->names[a >> 1], g->names[b >> 1]) < 0;
}

/*
 * Which file:line a frame shows: the one of the first stack, in name order of the stacks (the
 * order the graph lays them out in: a stack before the longer ones it is a prefix of, and
 * among equal paths the first added), that has one at that frame. A node keeps the last node
 * of that stack (its witness) and its child leading there; a stack merged later replaces it
 * when it comes first. Returns 1 when the stack ending at path[n] (path[0..n], root first)
 * comes before the witness w of path[d], whose child towards w is wdir.
 */
static int stack_first(const struct flame_graph *g, const uint32_t *path, size_t n, size_t d,
                       uint32_t w, uint32_t wdir)
{
	if (wdir == NONE) /* the witness ends here: a prefix of the new stack, or equal and older */
		return 0;
	if (d == n) /* the new stack ends here, the witness goes on */
		return 1;
	if (wdir != path[d + 1]) /* they part here */
		return key_less(g, g->nodes[path[d + 1]].key, g->nodes[wdir].key);
	/* They part further down (only when the stacks differ in which frames have a file): find
	   where by climbing from the witness, after measuring its depth. */
	size_t dw = 0;
	for (uint32_t x = w; x != 0; x = g->nodes[x].parent)
		dw++;
	uint32_t below = NONE;
	for (uint32_t x = w;; below = x, x = g->nodes[x].parent, dw--) {
		if (dw > n || path[dw] != x)
			continue;
		if (x == w) /* the witness is a prefix of the new stack */
			return 0;
		if (dw == n) /* the new stack is a prefix of the witness */
			return 1;
		return key_less(g, g->nodes[path[dw + 1]].key, g->nodes[below].key);
	}
}

/* Gives the stack ending at path[n] (frames fr, root first) the file:line of the frames where
   it comes first (see stack_first), from the leaf up; w0/first0 remember the last witness
   compared, which is often the same for many depths. */
static void take_files(struct flame_graph *g, const uint32_t *path, size_t n, const struct pframe *fr)
{
	uint32_t w0 = NONE;
	int first0 = 0;
	for (size_t k = n; k-- > 0;) {
		if (fr[k].file == NONE)
			continue;
		struct fnode *f = &g->nodes[path[k + 1]];
		if (f->file != NONE) {
			if (f->wit == path[n])
				continue; /* an older stack with the same path comes first */
			if (f->wit != w0) {
				w0 = f->wit;
				first0 = stack_first(g, path, n, k + 1, f->wit, f->wdir);
			}
			if (!first0)
				continue;
		}
		f->file = fr[k].file;
		f->line = fr[k].line;
		f->wit = path[n];
		f->wdir = k + 1 < n ? path[k + 2] : NONE;
	}
}

/* Batch order: frame sequences by key (name id, then the inline mark: any fixed order puts
   the stacks that share a prefix next to each other), a prefix first, then the order added. */
static int cmp_pending(const void *a, const void *b, void *arg)
{
	const struct flame_graph *g = arg;
	const struct pending *x = &g->stacks[*(const uint32_t *)a], *y = &g->stacks[*(const uint32_t *)b];
	const struct pframe *fx = g->frames + x->off, *fy = g->frames + y->off;
	uint32_t n = x->n < y->n ? x->n : y->n;
	for (uint32_t i = 0; i < n; i++)
		if (fx[i].key != fy[i].key)
			return fx[i].key < fy[i].key ? -1 : 1;
	if (x->n != y->n)
		return x->n < y->n ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/* Merges the batch into the tree and empties it. */
static void merge(struct flame_graph *g)
{
	size_t ns = g->nstacks;
	if (!ns)
		return;
	g->sorted = 0;
	uint32_t *ord = arena_xmalloc(ns * sizeof *ord);
	for (size_t i = 0; i < ns; i++)
		ord[i] = (uint32_t)i;
	qsort_r(ord, ns, sizeof *ord, cmp_pending, g);
	size_t from = g->nnodes; /* nodes made by this batch: [from, nnodes) */
	size_t pcap = 64, plen = 0; /* path[k]: the previous stack's node at depth k */
	uint32_t *path = arena_xmalloc(pcap * sizeof *path);
	path[0] = 0;
	const struct pframe *prev = NULL;
	for (size_t s = 0; s < ns; s++) {
		const struct pending *st = &g->stacks[ord[s]];
		const struct pframe *fr = g->frames + st->off;
		size_t n = st->n, common = 0;
		while (common < plen && common < n && fr[common].key == prev[common].key)
			common++;
		if (n + 1 > pcap) {
			pcap = (n + 1) * 2;
			path = arena_xrealloc(path, pcap * sizeof *path);
		}
		for (size_t k = common; k < n; k++) {
			uint32_t parent = path[k], x = NONE;
			if (parent < from) /* an older node: its child may exist */
				x = find_child(g, parent, fr[k].key, from);
			if (x == NONE)
				x = new_node(g, parent, fr[k].key);
			path[k + 1] = x;
		}
		for (size_t k = 1; k <= n; k++)
			g->nodes[path[k]].v += st->v;
		if (g->vb)
			for (size_t k = 1; k <= n; k++)
				g->vb[path[k]] += st->vb;
		take_files(g, path, n, fr);
		prev = fr;
		plen = n;
	}
	/* the new children of wide nodes into the slots */
	size_t nput = 0;
	for (size_t i = from; i < g->nnodes; i++)
		nput += (size_t)is_wide(g, g->nodes[i].parent);
	slots_reserve(g, nput, from);
	for (size_t i = from; i < g->nnodes && nput; i++)
		if (is_wide(g, g->nodes[i].parent))
			slot_put(g, (uint32_t)i);
	free(path);
	free(ord);
	g->nstacks = 0;
	g->nframes = 0;
}

void flame_add_ids(struct flame_graph *g, const uint32_t *ids, const struct flame_frame_info *info, size_t n,
                   double value, double base)
{
	g->total += value;
	g->base_total += base;
	if (!(base == 0) && !g->vb)
		g->vb = arena_xcalloc(g->cap, sizeof *g->vb);
	if (g->nstacks && (g->nframes + n > BATCH_FRAMES || g->nstacks == BATCH_STACKS))
		merge(g);
	if (g->nstacks == g->stacks_cap) {
		g->stacks_cap = g->stacks_cap ? g->stacks_cap * 2 : 1024;
		g->stacks = arena_xrealloc(g->stacks, g->stacks_cap * sizeof *g->stacks);
	}
	if (g->nframes + n > g->frames_cap) {
		g->frames_cap = g->nframes + n > BATCH_FRAMES ? g->nframes + n : BATCH_FRAMES;
		g->frames = arena_xrealloc(g->frames, g->frames_cap * sizeof *g->frames);
	}
	g->stacks[g->nstacks++] = (struct pending){(uint32_t)g->nframes, (uint32_t)n, value, base};
	for (size_t k = 0; k < n; k++) {
		size_t i = g->reverse ? n - 1 - k : k;
		struct pframe *f = &g->frames[g->nframes++];
		f->key = ids[i] << 1 | (info && info[i].inlined ? 1u : 0u);
		f->file = NONE;
		f->line = 0;
		if (info && info[i].file && info[i].file[0]) {
			if (info[i].file != g->last_file) {
				g->last_file_id = intern(g, info[i].file);
				g->last_file = info[i].file;
			}
			f->file = g->last_file_id;
			f->line = info[i].line;
		}
	}
}

void flame_add(struct flame_graph *g, const char *const *names, const struct flame_frame_info *info,
               size_t n, double value, double base)
{
	uint32_t *ids = arena_xmalloc((n ? n : 1) * sizeof *ids);
	for (size_t i = 0; i < n; i++)
		ids[i] = intern(g, names[i] ? names[i] : "??");
	flame_add_ids(g, ids, info, n, value, base);
	free(ids);
}

double flame_total(const struct flame_graph *g)
{
	return g->total;
}

double flame_base_total(const struct flame_graph *g)
{
	return g->base_total;
}

struct sort_ctx {
	const struct flame_graph *g;
	const uint32_t *rank; /* by name id: its place in byte order */
};

static int cmp_name(const void *a, const void *b, void *arg)
{
	const struct sort_ctx *c = arg;
	return strcmp(c->g->names[*(const uint32_t *)a], c->g->names[*(const uint32_t *)b]);
}

static int cmp_child(const void *a, const void *b, void *arg)
{
	const struct sort_ctx *c = arg;
	uint32_t ka = c->g->nodes[*(const uint32_t *)a].key, kb = c->g->nodes[*(const uint32_t *)b].key;
	uint32_t ra = c->rank[ka >> 1], rb = c->rank[kb >> 1];
	if (ra != rb)
		return ra < rb ? -1 : 1;
	return (ka & 1) < (kb & 1) ? -1 : (ka & 1) > (kb & 1);
}

/* Orders every node's children by name (byte order), then the inline mark, and sets the
   root's values. */
static void sort_children(struct flame_graph *g)
{
	merge(g);
	if (g->sorted)
		return;
	g->nodes[0].v = g->total;
	if (g->vb)
		g->vb[0] = g->base_total;
	size_t nn = g->nnames;
	uint32_t *byname = arena_xmalloc(nn * sizeof *byname), *rank = arena_xmalloc(nn * sizeof *rank);
	for (size_t i = 0; i < nn; i++)
		byname[i] = (uint32_t)i;
	struct sort_ctx sc = {g, NULL};
	qsort_r(byname, nn, sizeof *byname, cmp_name, &sc);
	for (size_t i = 0; i < nn; i++)
		rank[byname[i]] = (uint32_t)i;
	free(byname);
	sc.rank = rank;
	uint32_t *kids = NULL;
	size_t kcap = 0;
	for (size_t i = 0; i < g->nnodes; i++) {
		uint32_t c = g->nodes[i].child;
		if (c == NONE || g->nodes[c].sibling == NONE)
			continue;
		size_t nk = 0;
		for (; c != NONE; c = g->nodes[c].sibling) {
			if (nk == kcap) {
				kcap = kcap ? kcap * 2 : 64;
				kids = arena_xrealloc(kids, kcap * sizeof *kids);
			}
			kids[nk++] = c;
		}
		qsort_r(kids, nk, sizeof *kids, cmp_child, &sc);
		g->nodes[i].child = kids[0];
		for (size_t k = 0; k + 1 < nk; k++)
			g->nodes[kids[k]].sibling = kids[k + 1];
		g->nodes[kids[nk - 1]].sibling = NONE;
	}
	free(kids);
	free(rank);
	g->sorted = 1;
}

size_t flame_nframes(const struct flame_graph *cg)
{
	struct flame_graph *g = (struct flame_graph *)cg; /* the batch is merged lazily */
	merge(g);
	return g->nnodes;
}

/* ---- colours ---- */

struct rgb {
	int r, g, b;
};

static struct rgb palette_colour(enum flame_palette p, const char *name)
{
	/* Two stable pseudo-random numbers in [0,1) from the name, so a function keeps its colour
	   across graphs. */
	uint64_t h = hash_mix64(name_hash(name));
	double v1 = (double)(h & 0xffff) / 65536.0, v2 = (double)((h >> 16) & 0xffff) / 65536.0;
	struct rgb c;
	switch (p) {
	case FLAME_MEM: /* greens through sea-greens to teal-blues */
		c.r = (int)(30 + 70 * v2);
		c.g = (int)(160 + 80 * v1);
		c.b = (int)(60 + 170 * v2);
		break;
	case FLAME_HOT: /* reds to yellows */
		c.r = (int)(205 + 50 * v2);
		c.g = (int)(50 + 180 * v1);
		c.b = (int)(20 + 40 * v2);
		break;
	case FLAME_IO: /* blues */
		c.r = (int)(70 + 50 * v1);
		c.g = (int)(90 + 60 * v1);
		c.b = (int)(190 + 65 * v2);
		break;
	case FLAME_RED:
		c.r = (int)(200 + 55 * v1);
		c.g = c.b = (int)(50 + 80 * v1);
		break;
	case FLAME_GREEN:
		c.g = (int)(200 + 55 * v1);
		c.r = c.b = (int)(50 + 80 * v1);
		break;
	case FLAME_BLUE:
		c.b = (int)(205 + 50 * v1);
		c.r = c.g = (int)(80 + 80 * v1);
		break;
	case FLAME_AQUA:
		c.r = (int)(50 + 60 * v1);
		c.g = (int)(165 + 55 * v1);
		c.b = (int)(165 + 55 * v1);
		break;
	case FLAME_YELLOW:
		c.r = (int)(175 + 55 * v1);
		c.g = (int)(175 + 55 * v1);
		c.b = (int)(50 + 20 * v1);
		break;
	case FLAME_PURPLE:
		c.r = (int)(190 + 65 * v1);
		c.g = (int)(80 + 60 * v1);
		c.b = (int)(190 + 65 * v1);
		break;
	case FLAME_ORANGE:
	default:
		c.r = (int)(190 + 65 * v1);
		c.g = (int)(90 + 65 * v1);
		c.b = 0;
		break;
	}
	return c;
}

/* Differential colour: red for growth, blue for shrinkage (the other way round with negate),
   saturated by the relative change |value - base| / max(value, base) (1 for a frame that is new
   or gone); grey when unchanged. */
static struct rgb diff_colour(double value, double base, int negate)
{
	struct rgb c;
	double delta = negate ? base - value : value - base, m = fabs(value) > fabs(base) ? fabs(value) : fabs(base);
	double k = m > 0 ? fabs(delta) / m : 0;
	if (k > 1)
		k = 1;
	int fade = (int)lround(220 * (1 - k));
	if (delta > 0) {
		c.r = 255;
		c.g = c.b = fade;
	} else if (delta < 0) {
		c.b = 255;
		c.r = c.g = fade;
	} else {
		c.r = c.g = c.b = 235;
	}
	return c;
}

static const struct {
	const char *name;
	enum flame_palette p;
	const char *bg0, *bg1; /* background gradient top, bottom */
} palettes[] = {
	{"mem", FLAME_MEM, "#eeeeee", "#e0f5e0"},    {"hot", FLAME_HOT, "#eeeeee", "#eeeeb0"},
	{"io", FLAME_IO, "#f8f8f8", "#e8e8e8"},      {"red", FLAME_RED, "#f8f8f8", "#e8e8e8"},
	{"green", FLAME_GREEN, "#f8f8f8", "#e8e8e8"}, {"blue", FLAME_BLUE, "#f8f8f8", "#e8e8e8"},
	{"aqua", FLAME_AQUA, "#f8f8f8", "#e8e8e8"},   {"yellow", FLAME_YELLOW, "#f8f8f8", "#e8e8e8"},
	{"purple", FLAME_PURPLE, "#f8f8f8", "#e8e8e8"}, {"orange", FLAME_ORANGE, "#f8f8f8", "#e8e8e8"},
};

int flame_palette_parse(const char *name, enum flame_palette *out)
{
	for (size_t i = 0; i < sizeof palettes / sizeof palettes[0]; i++) {
		if (strcmp(name, palettes[i].name) == 0) {
			*out = palettes[i].p;
			return 0;
		}
	}
	return -1;
}

void flame_options_init(struct flame_options *o)
{
	memset(o, 0, sizeof *o);
	o->countname = "bytes";
	o->palette = FLAME_MEM;
	o->width = 1200;
	o->frame_height = 16;
	o->minwidth = 0.1;
}

/* ---- SVG ---- */

/*
 * The drawn frames in the order the SVG lists them: depth first from the root, children in
 * name order. A frame is drawn when its value is positive and at least the minimum width, and
 * its parent is drawn (a child is never wider than its parent, so pruning is inherited anyway;
 * checking the parent keeps it exact); the root whenever the total is positive. Left offsets
 * are the parent's plus the positive values of the siblings before.
 */
struct walk_level {
	uint32_t next; /* the next child to look at, or NONE */
	double x;      /* its left offset (value units from the root's left edge) */
};

struct walk {
	const struct flame_graph *g;
	double scale, minpx;
	struct walk_level *st; /* st[d]: under the drawn frame at depth d */
	size_t sp, cap;
	int root;              /* 1: the root is still to be returned */
};

static void walk_init(struct walk *w, const struct flame_graph *g, double scale, double minpx)
{
	memset(w, 0, sizeof *w);
	w->g = g;
	w->scale = scale;
	w->minpx = minpx;
	w->root = g->total > 0;
}

static void walk_release(struct walk *w)
{
	free(w->st);
}

/* The next drawn frame (its depth, root = 0, and left offset), or NONE after the last. */
static uint32_t walk_next(struct walk *w, uint32_t *depth, double *x)
{
	const struct fnode *nodes = w->g->nodes;
	uint32_t id = NONE;
	double at = 0;
	if (w->root) {
		w->root = 0;
		id = 0;
	}
	while (id == NONE && w->sp) {
		struct walk_level *l = &w->st[w->sp - 1];
		uint32_t c = l->next;
		if (c == NONE) {
			w->sp--;
			continue;
		}
		l->next = nodes[c].sibling;
		at = l->x;
		double v = nodes[c].v;
		l->x += v > 0 ? v : 0;
		if (v > 0 && v * w->scale >= w->minpx)
			id = c;
	}
	if (id == NONE)
		return NONE;
	if (w->sp == w->cap) {
		w->cap = w->cap ? w->cap * 2 : 64;
		w->st = arena_xrealloc(w->st, w->cap * sizeof *w->st);
	}
	*depth = (uint32_t)w->sp;
	*x = at;
	w->st[w->sp++] = (struct walk_level){nodes[id].child, at};
	return id;
}

#define FONT_PX 12.0
#define FONT_W 0.59 /* average character width / font size (Verdana) */
#define XPAD 10.0

/* Rounds to the 2 decimals the SVG carries, so edges computed from equal offsets print equal. */
static double px2(double v)
{
	return nearbyint(v * 100) / 100;
}

static void write_pct(FILE *out, double v, double total)
{
	if (total != 0)
		fprintf(out, "%.2f%%", 100.0 * v / total);
	else
		fputs("nan%", out);
}

static void write_tooltip(FILE *out, const struct flame_graph *g, const struct fnode *n, double vb,
                          const struct flame_options *o, double total, double base_total)
{
	char num[32];
	const char *cn = o->countname ? o->countname : "bytes";
	svgutil_escape(out, g->names[n->key >> 1]);
	if (n->key & 1)
		fputs(" [inline]", out);
	fprintf(out, " (%s ", svgutil_commas(num, n->v));
	svgutil_escape(out, cn);
	fputs(", ", out);
	write_pct(out, n->v, total);
	fputc(')', out);
	if (o->differential) {
		double d = n->v - vb;
		fprintf(out, "\nbase %s ", svgutil_commas(num, vb));
		svgutil_escape(out, cn);
		fputs(", ", out);
		write_pct(out, vb, base_total);
		fprintf(out, "; delta %s%s ", d > 0 ? "+" : "", svgutil_commas(num, d));
		svgutil_escape(out, cn);
		if (vb != 0)
			fprintf(out, " (%+.2f%%)", 100.0 * d / vb);
		else if (d != 0)
			fputs(" (new)", out);
	}
	if (n->file != NONE) {
		fputs("\nat ", out);
		svgutil_escape(out, g->names[n->file]);
		if (n->line > 0)
			fprintf(out, ":%d", n->line);
	}
}

int flame_write_svg(const struct flame_graph *cg, const struct flame_options *o, FILE *out,
                    struct flame_stats *st)
{
	struct flame_graph *g = (struct flame_graph *)cg; /* siblings are ordered lazily */
	sort_children(g);
	const char *id = o->id ? o->id : "htf";
	double width = o->width > 0 ? o->width : 1200;
	double fh = o->frame_height > 0 ? o->frame_height : 16;
	double total = g->total, base_total = g->base_total;
	double avail = width - 2 * XPAD;
	double scale = total > 0 ? avail / total : 0;
	double minpx = o->minwidth_pct ? avail * o->minwidth / 100.0 : o->minwidth;
	size_t bg = 0;
	for (size_t i = 0; i < sizeof palettes / sizeof palettes[0]; i++)
		if (palettes[i].p == o->palette)
			bg = i;

	/* Which frames are drawn, counted first (the height depends on the deepest). */
	struct walk w;
	uint32_t depth;
	double x;
	int maxdepth = 0;
	size_t ndrawn = 0;
	walk_init(&w, g, scale, minpx);
	while (walk_next(&w, &depth, &x) != NONE) {
		ndrawn++;
		if ((int)depth > maxdepth)
			maxdepth = (int)depth;
	}
	walk_release(&w);

	double font_px = o->fontsize > 0 ? o->fontsize : FONT_PX;
	double pad_top = FONT_PX * 3 + (o->subtitle ? FONT_PX * 2 : 0);
	double pad_bottom = FONT_PX * 2 + 10;
	double height = pad_top + pad_bottom + (maxdepth + 1) * fh;
	const char *title = o->title ? o->title : o->inverted ? "Icicle Graph" : "Flame Graph";

	if (!o->fragment)
		fputs("<?xml version=\"1.0\" standalone=\"no\"?>\n"
		      "<!DOCTYPE svg PUBLIC \"-//W3C//DTD SVG 1.1//EN\" "
		      "\"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd\">\n",
		      out);
	fprintf(out,
	        "<svg version=\"1.1\" class=\"htflame\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
	        "xmlns=\"http://www.w3.org/2000/svg\" id=\"%s\" data-fh=\"%.0f\" data-inverted=\"%d\" data-total=\"%.17g\"",
	        width, height, width, height, id, fh, o->inverted ? 1 : 0, total);
	if (o->nametype) {
		fputs(" data-nametype=\"", out);
		svgutil_escape(out, o->nametype);
		fputc('"', out);
	}
	if (!o->fragment)
		fputs(" onload=\"htflameInit(this)\"", out);
	fputs(">\n", out);
	if (!o->fragment) {
		fprintf(out, "<style type=\"text/css\"><![CDATA[\n%s]]></style>\n", svgscript_flame_css());
		fprintf(out, "<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n", svgscript_flame_js());
	}
	if (o->fonttype || o->fontsize > 0) {
		fprintf(out, "<style type=\"text/css\">#%s .frames text {", id);
		if (o->fonttype) {
			fputs(" font-family: ", out);
			svgutil_escape(out, o->fonttype);
			fputc(';', out);
		}
		if (o->fontsize > 0)
			fprintf(out, " font-size: %gpx;", o->fontsize);
		fputs(" }</style>\n", out);
	}
	if (o->notes) {
		fputs("<desc class=\"notes\">", out);
		svgutil_escape(out, o->notes);
		fputs("</desc>\n", out);
	}
	fprintf(out,
	        "<defs><linearGradient id=\"%s-bg\" y1=\"0\" y2=\"1\" x1=\"0\" x2=\"0\">"
	        "<stop stop-color=\"%s\" offset=\"5%%\"/><stop stop-color=\"%s\" offset=\"95%%\"/>"
	        "</linearGradient></defs>\n",
	        id, palettes[bg].bg0, palettes[bg].bg1);
	if (o->bgcolor) {
		fprintf(out, "<rect class=\"background\" x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"", width, height);
		svgutil_escape(out, o->bgcolor);
		fputs("\"/>\n", out);
	} else {
		fprintf(out, "<rect class=\"background\" x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"url(#%s-bg)\"/>\n",
		        width, height, id);
	}
	fprintf(out, "<text class=\"title\" x=\"%.1f\" y=\"%.0f\">", width / 2, FONT_PX * 2);
	svgutil_escape(out, title);
	fputs("</text>\n", out);
	if (o->subtitle) {
		fprintf(out, "<text class=\"subtitle\" x=\"%.1f\" y=\"%.0f\">", width / 2, FONT_PX * 4);
		svgutil_escape(out, o->subtitle);
		fputs("</text>\n", out);
	}
	fprintf(out, "<text class=\"details\" x=\"%.0f\" y=\"%.0f\"> </text>\n", XPAD, height - pad_bottom / 2);
	fprintf(out, "<text class=\"unzoom hide\" x=\"%.0f\" y=\"%.0f\">Reset Zoom</text>\n", XPAD, FONT_PX * 2);
	fprintf(out, "<text class=\"search\" x=\"%.0f\" y=\"%.0f\">Search</text>\n", width - XPAD - 100, FONT_PX * 2);
	fprintf(out, "<text class=\"ic\" x=\"%.0f\" y=\"%.0f\">ic</text>\n", width - XPAD - 16, FONT_PX * 2);
	fprintf(out, "<text class=\"matched\" x=\"%.0f\" y=\"%.0f\"> </text>\n", width - XPAD - 100,
	        height - pad_bottom / 2);
	fputs("<g class=\"frames\">\n", out);

	double char_px = font_px * (o->fontwidth > 0 ? o->fontwidth : FONT_W);
	walk_init(&w, g, scale, minpx);
	for (uint32_t i; (i = walk_next(&w, &depth, &x)) != NONE;) {
		const struct fnode *f = &g->nodes[i];
		double vb = g->vb ? g->vb[i] : 0;
		double x0 = px2(XPAD + x * scale), x1 = px2(XPAD + (x + f->v) * scale);
		double wpx = x1 - x0;
		double y = o->inverted ? pad_top + depth * fh : height - pad_bottom - (depth + 1) * fh;
		const char *name = g->names[f->key >> 1];
		int inl = (int)(f->key & 1);
		struct rgb c;
		if (i == 0 && !o->differential)
			c = (struct rgb){200, 200, 200};
		else if (o->differential)
			c = diff_colour(f->v, vb, o->negate);
		else
			c = palette_colour(o->palette, name);
		fputs(inl ? "<g class=\"inl\"><title>" : "<g><title>", out);
		write_tooltip(out, g, f, vb, o, total, base_total);
		fprintf(out, "</title><rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"rgb(%d,%d,%d)\" rx=\"2\" ry=\"2\"/>",
		        x0, y, wpx, fh - 1, c.r, c.g, c.b);
		fprintf(out, "<text x=\"%.2f\" y=\"%.1f\">", x0 + 3, y + fh - 4.5);
		if (inl) { /* the label carries the mark too, when it fits */
			size_t len = strlen(name);
			char *lab = arena_xmalloc(len + 10);
			memcpy(lab, name, len);
			memcpy(lab + len, " [inline]", 10);
			svgutil_label(out, lab, wpx - 3, char_px);
			free(lab);
		} else {
			svgutil_label(out, name, wpx - 3, char_px);
		}
		fputs("</text></g>\n", out);
	}
	fputs("</g>\n</svg>\n", out);
	walk_release(&w);
	if (st) {
		st->drawn = ndrawn;
		st->pruned = g->nnodes - ndrawn;
		st->max_depth = maxdepth;
		st->height = (int)height;
	}
	if (ferror(out)) {
		if (!errno)
			errno = EIO;
		return -1;
	}
	return 0;
}
