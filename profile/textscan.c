/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * textscan.c - line scanning and shared token parsing for the text profile readers (see
 * textscan.h), including the memory-map section and heaptap's "# heaptap:" metadata lines.
 * It decides nothing about record formats; heapv2_read.c, legacy_read.c and raw_read.c do.
 */
#include "textscan.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "../base/hash.h"
#include "arena.h"

/* The input textscan_set_mapped names, and how far behind the cursor pages are dropped. */
static const char *mapped_base;
static size_t mapped_n;
#define DROP_STEP ((size_t)16 << 20)

void textscan_set_mapped(const void *base, size_t n)
{
	mapped_base = base;
	mapped_n = base ? n : 0;
}

/* Gives back the whole pages of a mapped input before the line just scanned. */
static void drop_behind(struct textscan *ts)
{
	if (!mapped_base || ts->d < mapped_base || ts->d + ts->n > mapped_base + mapped_n)
		return;
	size_t off = (size_t)(ts->d - mapped_base);
	size_t upto = (off + ts->pos) & ~(DROP_STEP - 1); /* mapped_base is page-aligned */
	size_t from = (off + ts->dropped) & ~(DROP_STEP - 1);
	if (upto > from)
		madvise((void *)(mapped_base + from), upto - from, MADV_DONTNEED);
	ts->dropped = ts->pos;
}

void textscan_init(struct textscan *ts, const void *d, size_t n, const char *name)
{
	memset(ts, 0, sizeof *ts);
	ts->d = d;
	ts->n = n;
	ts->name = name ? name : "<input>";
	ts->cap = 256;
	ts->line = arena_xmalloc(ts->cap);
	ts->line[0] = '\0';
}

void textscan_release(struct textscan *ts)
{
	free(ts->line);
	ts->line = NULL;
	free(ts->map_slots);
	ts->map_slots = NULL;
	ts->map_slots_cap = ts->map_slots_n = 0;
}

int textscan_next(struct textscan *ts)
{
	if (ts->pos >= ts->n)
		return 0;
	const char *s = ts->d + ts->pos;
	size_t avail = ts->n - ts->pos;
	const char *nl = memchr(s, '\n', avail);
	size_t len = nl ? (size_t)(nl - s) : avail;
	ts->pos += len + (nl != NULL);
	ts->last_unterminated = nl == NULL;
	ts->lineno++;
	if (len + 1 > ts->cap) {
		while (ts->cap < len + 1)
			ts->cap *= 2;
		ts->line = arena_xrealloc(ts->line, ts->cap);
	}
	size_t w = 0;
	if (!memchr(s, '\r', len)) {
		memcpy(ts->line, s, len);
		w = len;
	} else {
		for (size_t i = 0; i < len; i++)
			if (s[i] != '\r')
				ts->line[w++] = s[i];
	}
	ts->line[w] = '\0';
	if (mapped_base && ts->pos >= ts->dropped + DROP_STEP)
		drop_behind(ts);
	ts->len = w;
	return 1;
}

int textscan_next_header(struct textscan *ts)
{
	while (textscan_next(ts))
		if (ts->line[0] != '%')
			return 1;
	return 0;
}

char *textscan_trim(char *s)
{
	while (textscan_space((unsigned char)*s))
		s++;
	size_t n = strlen(s);
	while (n && textscan_space((unsigned char)s[n - 1]))
		n--;
	s[n] = '\0';
	return s;
}

const char *textscan_skip_space(const char *s)
{
	while (textscan_space((unsigned char)*s))
		s++;
	return s;
}

int textscan_decimal(const char **s, double *v)
{
	const char *p = *s;
	if (*p < '0' || *p > '9')
		return -1;
	uint64_t u = 0;
	int exact = 1;
	const char *start = p;
	while (*p >= '0' && *p <= '9') {
		unsigned d = (unsigned)(*p - '0');
		if (u > (UINT64_MAX - d) / 10)
			exact = 0;
		else
			u = u * 10 + d;
		p++;
	}
	if (exact) {
		*v = (double)u;
	} else {
		/* Beyond 64 bits: let strtod round the digits (no sign, no point: locale-free). */
		char buf[64];
		size_t n = (size_t)(p - start);
		if (n >= sizeof buf) {
			*v = 1e308; /* absurd but finite; nothing real is this big */
		} else {
			memcpy(buf, start, n);
			buf[n] = '\0';
			*v = strtod(buf, NULL);
		}
	}
	*s = p;
	return 0;
}

/* Hex digit value + 1 by byte; 0 = not a hex digit (a table: addresses are most of a dump). */
static const unsigned char hex_plus1[256] = {
    ['0'] = 1,  ['1'] = 2,  ['2'] = 3,  ['3'] = 4,  ['4'] = 5,  ['5'] = 6,  ['6'] = 7,  ['7'] = 8,
    ['8'] = 9,  ['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
    ['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

static int hexval(int c)
{
	return (int)hex_plus1[(unsigned char)c] - 1;
}

int textscan_hex_token(const char *tok, size_t tlen, uint64_t *v)
{
	if (tlen >= 2 && tok[0] == '0' && (tok[1] == 'x' || tok[1] == 'X')) {
		tok += 2;
		tlen -= 2;
	}
	if (tlen == 0)
		return -1;
	size_t i = 0;
	while (i < tlen && tok[i] == '0') /* leading zeros are not significant */
		i++;
	if (tlen - i > 16) {
		for (size_t k = i; k < tlen; k++)
			if (!hex_plus1[(unsigned char)tok[k]])
				return -1;
		return -2;
	}
	uint64_t u = 0;
	for (; i < tlen; i++) {
		unsigned h = hex_plus1[(unsigned char)tok[i]];
		if (!h)
			return -1;
		u = (u << 4) | (h - 1);
	}
	*v = u;
	return 0;
}

long textscan_addresses(const char *s, uint64_t **addrs, size_t *cap, const char **bad)
{
	long n = 0;
	for (;;) {
		s = textscan_skip_space(s);
		if (!*s)
			break;
		uint64_t v = 0;
		const char *e = s;
		/* The usual token, "0x" and 1-16 hex digits then a blank or the end, in one pass;
		   anything else goes through textscan_hex_token. */
		if (s[0] == '0' && s[1] == 'x') {
			const char *q = s + 2;
			unsigned h;
			while ((h = hex_plus1[(unsigned char)*q]) != 0 && q - s < 18) {
				v = (v << 4) | (h - 1);
				q++;
			}
			if (q > s + 2 && (*q == '\0' || textscan_space((unsigned char)*q)))
				e = q;
		}
		if (e == s) {
			while (*e && !textscan_space((unsigned char)*e))
				e++;
			int rc = textscan_hex_token(s, (size_t)(e - s), &v);
			if (rc < 0) {
				*bad = s;
				return rc;
			}
		}
		if ((size_t)n == *cap) {
			*cap = *cap ? *cap * 2 : 64;
			*addrs = arena_xrealloc(*addrs, *cap * sizeof **addrs);
		}
		(*addrs)[n++] = v;
		s = e;
	}
	return n;
}

void textscan_fix_callers(uint64_t *addrs, size_t n)
{
	for (size_t i = 1; i < n; i++)
		addrs[i] -= 1;
}

void textscan_error(const struct textscan *ts, char *err, size_t errcap, const char *fmt, ...)
{
	if (!err || !errcap)
		return;
	int k = snprintf(err, errcap, "%s:%lu: ", ts->name, ts->lineno);
	if (k < 0 || (size_t)k >= errcap)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err + k, errcap - (size_t)k, fmt, ap);
	va_end(ap);
}

/* ---- the memory map section ---- */

/* Parses a hex number at *s (no prefix); returns 0 and advances, or -1. */
static int scan_hex(const char **s, uint64_t *v)
{
	const char *p = *s;
	uint64_t u = 0;
	int n = 0;
	while (hexval((unsigned char)*p) >= 0) {
		if (n++ >= 16)
			return -1;
		u = (u << 4) | (uint64_t)hexval((unsigned char)*p);
		p++;
	}
	if (!n)
		return -1;
	*v = u;
	*s = p;
	return 0;
}

/* Skips a run of non-blank characters; returns 0 if at least one was skipped. */
static int skip_word(const char **s)
{
	const char *p = *s;
	while (*p && !textscan_space((unsigned char)*p))
		p++;
	if (p == *s)
		return -1;
	*s = p;
	return 0;
}

static void add_map_path(struct profile *p, uint64_t start, uint64_t limit, uint64_t offset, const char *path,
                         const char *build_dir)
{
	const char *mark = *build_dir ? strstr(path, "$build") : NULL;
	if (mark) {
		char buf[8192];
		snprintf(buf, sizeof buf, "%.*s%s%s", (int)(mark - path), path, build_dir, mark + 6);
		profile_add_mapping(p, start, limit, offset, buf, NULL);
	} else {
		profile_add_mapping(p, start, limit, offset, path, NULL);
	}
}

static int metadata_line(struct textscan *ts, struct profile *p, const char *line);

/* Handles one line of the memory-map section (see textscan_trailer_line); build_dir holds the
   last build= directory. Returns 1 when the line was heaptap metadata, else 0. */
static int maps_line(struct textscan *ts, struct profile *p, char *line, char *build_dir, size_t build_cap)
{
	if (metadata_line(ts, p, line))
		return 1;
	const char *s = textscan_skip_space(line);
	if (strncmp(s, "build=", 6) == 0) {
		char *v = textscan_trim((char *)s + 6);
		snprintf(build_dir, build_cap, "%s", v);
		return 0;
	}
	uint64_t start, limit, offset = 0;
	if (scan_hex(&s, &start) || *s++ != '-' || scan_hex(&s, &limit))
		return 0;
	if (*s == ':') {
		/* compact form "start-end: path" */
		char *path = textscan_trim((char *)s + 1);
		if (*path && limit > start)
			add_map_path(p, start, limit, 0, path, build_dir);
		return 0;
	}
	if (!textscan_space((unsigned char)*s))
		return 0;
	s = textscan_skip_space(s);
	const char *perms = s;
	if (skip_word(&s) || s - perms < 3)
		return 0;
	int exec = perms[2] == 'x';
	s = textscan_skip_space(s);
	if (scan_hex(&s, &offset))
		return 0;
	s = textscan_skip_space(s);
	if (skip_word(&s)) /* device */
		return 0;
	s = textscan_skip_space(s);
	if (skip_word(&s)) /* inode */
		return 0;
	char *path = textscan_trim((char *)s);
	if (exec && limit > start)
		add_map_path(p, start, limit, offset, path, build_dir);
	return 0;
}

/* Finds "key=" in s (at the start or after a blank); returns the value's start or NULL. */
static const char *kv_find(const char *s, const char *key)
{
	size_t k = strlen(key);
	for (const char *q = s; (q = strstr(q, key)) != NULL; q++)
		if ((q == s || textscan_space((unsigned char)q[-1])) && q[k] == '=')
			return q + k + 1;
	return NULL;
}

static int kv_hex(const char *s, const char *key, uint64_t *v)
{
	const char *q = kv_find(s, key);
	if (!q)
		return -1;
	if (q[0] == '0' && (q[1] == 'x' || q[1] == 'X'))
		q += 2;
	return scan_hex(&q, v);
}

static size_t map_slot(const struct textscan *ts, uint64_t start, uint64_t limit)
{
	return hash_mix64(start * 31 + limit) & (ts->map_slots_cap - 1);
}

/* The index of the mapping [start, limit) of p, or SIZE_MAX. Mappings added since the last
   call are indexed first (a hash table: a dump may list a mapping line per mapping). */
static size_t find_map_exact(struct textscan *ts, const struct profile *p, uint64_t start, uint64_t limit)
{
	if (p->nmaps < ts->map_slots_n) { /* another profile, or released: start over */
		memset(ts->map_slots, 0, ts->map_slots_cap * sizeof *ts->map_slots);
		ts->map_slots_n = 0;
	}
	if (p->nmaps * 2 >= ts->map_slots_cap) {
		size_t cap = ts->map_slots_cap ? ts->map_slots_cap : 64;
		while (p->nmaps * 2 >= cap)
			cap *= 2;
		free(ts->map_slots);
		ts->map_slots = arena_xcalloc(cap, sizeof *ts->map_slots);
		ts->map_slots_cap = cap;
		ts->map_slots_n = 0;
	}
	for (; ts->map_slots_n < p->nmaps; ts->map_slots_n++) {
		const struct prof_mapping *m = &p->maps[ts->map_slots_n];
		size_t j = map_slot(ts, m->start, m->limit);
		while (ts->map_slots[j]) {
			const struct prof_mapping *o = &p->maps[ts->map_slots[j] - 1];
			if (o->start == m->start && o->limit == m->limit)
				break; /* the first one wins, as the scan it replaces did */
			j = (j + 1) & (ts->map_slots_cap - 1);
		}
		if (!ts->map_slots[j])
			ts->map_slots[j] = ts->map_slots_n + 1;
	}
	for (size_t j = map_slot(ts, start, limit); ts->map_slots[j]; j = (j + 1) & (ts->map_slots_cap - 1)) {
		const struct prof_mapping *m = &p->maps[ts->map_slots[j] - 1];
		if (m->start == start && m->limit == limit)
			return ts->map_slots[j] - 1;
	}
	return SIZE_MAX;
}

static void metadata_mapping(struct textscan *ts, struct profile *p, const char *s)
{
	uint64_t start, limit, offset = 0;
	if (kv_hex(s, "start", &start) || kv_hex(s, "limit", &limit) || limit <= start)
		return;
	kv_hex(s, "offset", &offset);
	char build_id[256] = "";
	const char *b = kv_find(s, "build_id");
	if (b) {
		size_t n = 0;
		while (hexval((unsigned char)b[n]) >= 0 && n + 1 < sizeof build_id)
			n++;
		for (size_t i = 0; i < n; i++)
			build_id[i] = (char)(b[i] >= 'A' && b[i] <= 'F' ? b[i] - 'A' + 'a' : b[i]);
		build_id[n] = '\0';
	}
	const char *u = kv_find(s, "unloaded");
	int unloaded = u && *u == '1';
	const char *path = kv_find(s, "path");
	char pathbuf[8192];
	snprintf(pathbuf, sizeof pathbuf, "%s", path ? path : "");
	char *pth = textscan_trim(pathbuf);

	size_t i = find_map_exact(ts, p, start, limit);
	if (i != SIZE_MAX) {
		struct prof_mapping *m = &p->maps[i];
		if (*build_id)
			m->build_id = profile_strdup(p, build_id);
		m->unloaded = unloaded;
		if (!*m->path && *pth)
			m->path = profile_strdup(p, pth);
		return;
	}
	profile_add_mapping(p, start, limit, offset, pth, *build_id ? build_id : NULL);
	p->maps[p->nmaps - 1].unloaded = unloaded;
}

/* Handles "# heaptap: key=value" (line must start with it). Returns 1 if it did, else 0. */
static int metadata_line(struct textscan *ts, struct profile *p, const char *line)
{
	static const char tag[] = "# heaptap:";
	if (strncmp(line, tag, sizeof tag - 1) != 0)
		return 0;
	const char *s = textscan_skip_space(line + sizeof tag - 1);
	const char *eq = strchr(s, '=');
	if (!eq)
		return 1;
	size_t klen = (size_t)(eq - s);
	char vbuf[8192];
	snprintf(vbuf, sizeof vbuf, "%s", eq + 1);
	char *v = textscan_trim(vbuf);
#define KEY(k) (klen == sizeof(k) - 1 && memcmp(s, k, klen) == 0)
	if (klen > 8 && memcmp(s, "mapping ", 8) == 0) {
		metadata_mapping(ts, p, s + 8);
	} else if (KEY("pid")) {
		long pid = strtol(v, NULL, 10);
		p->pid = pid > 0 && pid <= 0x7fffffff ? (int)pid : 0;
	} else if (KEY("time_ns")) {
		p->time_ns = strtoll(v, NULL, 10);
	} else if (KEY("start_time_ns")) {
		p->start_time_ns = strtoll(v, NULL, 10);
	} else if (KEY("period")) {
		if (!p->period)
			p->period = strtoull(v, NULL, 10);
	} else if (profile_loss_set(&p->losses, s, klen, v)) {
		/* one of dump_losses' counts */
	} else if (KEY("trigger")) {
		p->trigger = profile_strdup(p, v);
	} else if (KEY("exe")) {
		p->exe_path = profile_strdup(p, v);
	} else if (KEY("cmdline")) {
		p->cmdline = profile_strdup(p, v);
	} else {
		profile_meta_memory(p, s, klen, v);
	}
#undef KEY
	return 1;
}

/* ---- what every text reader does the same way ---- */

int textscan_read(const void *d, size_t n, const char *name, int skip_marker,
                  int (*scan)(struct textscan *, struct profile *, char *, size_t), struct profile *p,
                  char *err, size_t errcap)
{
	struct textscan ts;
	textscan_init(&ts, d, n, name);
	int rc = -1;
	if (!textscan_next_header(&ts))
		textscan_error(&ts, err, errcap, "empty profile");
	else if (skip_marker && strncmp(ts.line, "---", 3) == 0 && !textscan_next_header(&ts))
		textscan_error(&ts, err, errcap, "no profile after '---' marker");
	else
		rc = scan(&ts, p, err, errcap);
	textscan_release(&ts);
	if (!p->source)
		p->source = profile_strdup(p, name ? name : "<input>");
	return rc;
}

int textscan_marker(const char *s, const char *word)
{
	if (strncmp(s, "---", 3) != 0)
		return 0;
	s += 3;
	while (*s == ' ')
		s++;
	return strncmp(s, word, strlen(word)) == 0;
}

int textscan_skip_heap_marker(struct textscan *ts)
{
	if (textscan_marker(ts->line, "heap") || textscan_marker(ts->line, "growth"))
		return textscan_next_header(ts);
	return 1;
}

int textscan_counts(const char **s, double v[PV_COUNT])
{
	const char *p = *s;
	if (textscan_decimal(&p, &v[0]) || *p++ != ':' || !textscan_space((unsigned char)*p))
		return -1;
	p = textscan_skip_space(p);
	if (textscan_decimal(&p, &v[1]) || !textscan_space((unsigned char)*p))
		return -1;
	p = textscan_skip_space(p);
	if (*p++ != '[')
		return -1;
	p = textscan_skip_space(p);
	if (textscan_decimal(&p, &v[2]) || *p++ != ':' || !textscan_space((unsigned char)*p))
		return -1;
	p = textscan_skip_space(p);
	if (textscan_decimal(&p, &v[3]) || *p++ != ']')
		return -1;
	*s = p;
	return 0;
}

void textscan_error_address(const struct textscan *ts, char *err, size_t errcap, long n, const char *bad)
{
	const char *e = bad;
	while (*e && !textscan_space((unsigned char)*e))
		e++;
	textscan_error(ts, err, errcap, "%s address '%.*s'", n == -2 ? "out-of-range" : "bad",
	               (int)(e - bad > 40 ? 40 : e - bad), bad);
}

int textscan_trailer_line(struct textscan *ts, struct profile *p)
{
	char *line = ts->line;
	if (ts->in_maps) {
		ts->metadata |= maps_line(ts, p, line, ts->build_dir, sizeof ts->build_dir);
		return 1;
	}
	if (strncmp(line, "MAPPED_LIBRARIES:", 17) == 0 || strncmp(line, "--- Memory map:", 15) == 0) {
		ts->in_maps = 1;
		return 1;
	}
	if (metadata_line(ts, p, line)) {
		ts->metadata = 1;
		return 1;
	}
	return 0;
}

int textscan_finish(struct textscan *ts, struct profile *p, int rc)
{
	p->jemalloc_frames = !ts->metadata;
	if (rc == 0)
		profile_compact(p);
	return rc;
}
