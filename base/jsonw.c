/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * jsonw.c - the JSON emitter of jsonw.h. No malloc.
 */
#include "jsonw.h"

void jsonw_init(struct jsonw *w, struct outbuf *ob)
{
	w->ob = ob;
	w->has_items = 0;
	w->depth = 0;
}

/* The comma before a member, and its key. */
static void member(struct jsonw *w, const char *key)
{
	uint32_t bit = 1u << (w->depth & 31);
	if (w->has_items & bit)
		outbuf_putc(w->ob, ',');
	w->has_items |= bit;
	if (key) {
		outbuf_putc(w->ob, '"');
		outbuf_json_str(w->ob, key);
		outbuf_puts(w->ob, "\":");
	}
}

static void open_container(struct jsonw *w, const char *key, char c)
{
	member(w, key);
	outbuf_putc(w->ob, c);
	w->depth++;
	w->has_items &= ~(1u << (w->depth & 31));
}

static void close_container(struct jsonw *w, char c)
{
	outbuf_putc(w->ob, c);
	if (w->depth > 0)
		w->depth--;
}

void jsonw_object_begin(struct jsonw *w, const char *key)
{
	open_container(w, key, '{');
}

void jsonw_object_end(struct jsonw *w)
{
	close_container(w, '}');
}

void jsonw_array_begin(struct jsonw *w, const char *key)
{
	open_container(w, key, '[');
}

void jsonw_array_end(struct jsonw *w)
{
	close_container(w, ']');
}

void jsonw_u64(struct jsonw *w, const char *key, uint64_t v)
{
	member(w, key);
	outbuf_u64(w->ob, v);
}

void jsonw_i64(struct jsonw *w, const char *key, int64_t v)
{
	member(w, key);
	outbuf_i64(w->ob, v);
}

void jsonw_bool(struct jsonw *w, const char *key, int v)
{
	member(w, key);
	outbuf_puts(w->ob, v ? "true" : "false");
}

void jsonw_str(struct jsonw *w, const char *key, const char *v)
{
	member(w, key);
	outbuf_putc(w->ob, '"');
	outbuf_json_str(w->ob, v ? v : "");
	outbuf_putc(w->ob, '"');
}
