/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pushfmt.c - the push request encodings of pushfmt.h: URL-encoded Pyroscope names, a
 * multipart body, the PushRequest protobuf written by hand (three nested messages), and
 * grpc-gateway JSON with base64. No malloc.
 */
#include "pushfmt.h"

#include <string.h>

#include "../../base/outbuf.h"

int pushfmt_dialect_of(const char *format, const char *path)
{
	static const char *const names[] = {"ingest", "ingest-multipart", "connect", "parca"};
	if (format && *format) {
		for (int i = 0; i < 4; i++)
			if (strcmp(format, names[i]) == 0)
				return i;
		return -1;
	}
	size_t n = strlen(path);
	static const struct { const char *tail; int d; } tails[] = {
		{"/ingest", PUSHFMT_INGEST},
		{"/push.v1.PusherService/Push", PUSHFMT_CONNECT},
		{"/profiles/writeraw", PUSHFMT_PARCA},
	};
	for (size_t i = 0; i < sizeof tails / sizeof tails[0]; i++) {
		size_t t = strlen(tails[i].tail);
		if (n >= t && strcmp(path + n - t, tails[i].tail) == 0)
			return tails[i].d;
	}
	return -1;
}

int pushfmt_profiles(enum pushfmt_dialect d)
{
	return d == PUSHFMT_PARCA ? 2 : 1;
}

void pushfmt_sanitize(char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c <= ' ' || c == 0x7f || c == ',' || c == '{' || c == '}' || c == '=' || c == '"' || c == '\\')
			*s = '_';
	}
}

size_t pushfmt_bound(const struct pushfmt_input *in)
{
	size_t n = 16384;
	for (size_t i = 0; i < in->nlabels; i++)
		n += 2 * (strlen(in->labels[i].name) + strlen(in->labels[i].value)) + 64;
	for (int k = 0; k < 2; k++)
		n += in->prof_len[k] / 3 * 4 + 8 + in->prof_len[k];
	return n;
}

/* ---- URL encoding ---- */

static void url_enc(struct outbuf *ob, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
		    c == '_' || c == '.' || c == '~') {
			outbuf_putc(ob, (char)c);
		} else {
			outbuf_putc(ob, '%');
			outbuf_putc(ob, "0123456789ABCDEF"[c >> 4]);
			outbuf_putc(ob, "0123456789ABCDEF"[c & 15]);
		}
	}
}

/* Pyroscope's ingest target: path?name=<service>{k=v,...}&from&until&spyName[&format=pprof] */
static void ingest_target(const struct pushfmt_input *in, struct pushfmt_request *req, int raw)
{
	char name[1536];
	struct outbuf nb, tb;
	outbuf_init(&nb, name, sizeof name - 1, -1);
	outbuf_puts(&nb, in->service);
	outbuf_putc(&nb, '{');
	for (size_t i = 0; i < in->nlabels; i++) {
		if (i)
			outbuf_putc(&nb, ',');
		outbuf_puts(&nb, in->labels[i].name);
		outbuf_putc(&nb, '=');
		outbuf_puts(&nb, in->labels[i].value);
	}
	outbuf_putc(&nb, '}');
	name[nb.len] = 0;
	outbuf_init(&tb, req->target, sizeof req->target - 1, -1);
	outbuf_puts(&tb, in->path);
	outbuf_puts(&tb, "?name=");
	url_enc(&tb, name);
	outbuf_puts(&tb, "&from=");
	outbuf_i64(&tb, in->from_s);
	outbuf_puts(&tb, "&until=");
	outbuf_i64(&tb, in->until_s);
	outbuf_puts(&tb, "&spyName=heaptap");
	if (raw)
		outbuf_puts(&tb, "&format=pprof");
	req->target[tb.len] = 0;
}

/* ---- protobuf, by hand ---- */

static size_t varint_len(uint64_t v)
{
	size_t n = 1;
	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static void varint(struct outbuf *ob, uint64_t v)
{
	while (v >= 0x80) {
		outbuf_putc(ob, (char)(0x80 | (v & 0x7f)));
		v >>= 7;
	}
	outbuf_putc(ob, (char)v);
}

/* A length-delimited field's tag and length. */
static void ld(struct outbuf *ob, unsigned field, size_t len)
{
	varint(ob, (uint64_t)field << 3 | 2);
	varint(ob, len);
}

static size_t ld_size(unsigned field, size_t len)
{
	return varint_len((uint64_t)field << 3 | 2) + varint_len(len) + len;
}

/* LabelPair { 1 name, 2 value } */
static size_t pair_size(const char *n, const char *v)
{
	return ld_size(1, strlen(n)) + ld_size(2, strlen(v));
}

static void pair(struct outbuf *ob, const char *n, const char *v)
{
	ld(ob, 1, pair_size(n, v));
	ld(ob, 1, strlen(n));
	outbuf_puts(ob, n);
	ld(ob, 2, strlen(v));
	outbuf_puts(ob, v);
}

/* PushRequest { 1 series: RawProfileSeries { 1 labels: LabelPair, 2 samples: RawSample {
   1 raw_profile } } } */
static void connect_body(struct outbuf *ob, const struct pushfmt_input *in)
{
	size_t labels = ld_size(1, pair_size("__name__", "memory")) + ld_size(1, pair_size("service_name", in->service));
	for (size_t i = 0; i < in->nlabels; i++)
		labels += ld_size(1, pair_size(in->labels[i].name, in->labels[i].value));
	size_t sample = ld_size(1, in->prof_len[0]);
	size_t series = labels + ld_size(2, sample);
	ld(ob, 1, series);
	pair(ob, "__name__", "memory");
	pair(ob, "service_name", in->service);
	for (size_t i = 0; i < in->nlabels; i++)
		pair(ob, in->labels[i].name, in->labels[i].value);
	ld(ob, 2, sample);
	ld(ob, 1, in->prof_len[0]);
	outbuf_put(ob, in->prof[0], in->prof_len[0]);
}

/* ---- JSON with base64 ---- */

static void base64(struct outbuf *ob, const uint8_t *p, size_t n)
{
	static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t i = 0;
	for (; i + 3 <= n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
		char q[4] = {tab[v >> 18], tab[(v >> 12) & 63], tab[(v >> 6) & 63], tab[v & 63]};
		outbuf_put(ob, q, 4);
	}
	if (n - i == 1) {
		uint32_t v = (uint32_t)p[i] << 16;
		char q[4] = {tab[v >> 18], tab[(v >> 12) & 63], '=', '='};
		outbuf_put(ob, q, 4);
	} else if (n - i == 2) {
		uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8;
		char q[4] = {tab[v >> 18], tab[(v >> 12) & 63], tab[(v >> 6) & 63], '='};
		outbuf_put(ob, q, 4);
	}
}

static void json_label(struct outbuf *ob, const char *n, const char *v, int first)
{
	outbuf_puts(ob, first ? "{\"name\":\"" : ",{\"name\":\"");
	outbuf_json_str(ob, n);
	outbuf_puts(ob, "\",\"value\":\"");
	outbuf_json_str(ob, v);
	outbuf_puts(ob, "\"}");
}

static void parca_body(struct outbuf *ob, const struct pushfmt_input *in)
{
	outbuf_puts(ob, "{\"series\":[{\"labels\":{\"labels\":[");
	json_label(ob, "__name__", "memory", 1);
	json_label(ob, "service_name", in->service, 0);
	for (size_t i = 0; i < in->nlabels; i++)
		json_label(ob, in->labels[i].name, in->labels[i].value, 0);
	outbuf_puts(ob, "]},\"samples\":[");
	for (int k = 0; k < 2; k++) {
		if (!in->prof[k])
			continue;
		outbuf_puts(ob, k ? ",{\"rawProfile\":\"" : "{\"rawProfile\":\"");
		base64(ob, in->prof[k], in->prof_len[k]);
		outbuf_puts(ob, "\"}");
	}
	outbuf_puts(ob, "]}],\"normalized\":false}");
}

size_t pushfmt_encode(enum pushfmt_dialect d, const struct pushfmt_input *in, struct pushfmt_request *req,
                      uint8_t *out, size_t cap)
{
	static const char boundary[] = "heaptap-7c1f3e9a52b04d68";
	struct outbuf ob;
	outbuf_init(&ob, (char *)out, cap, -1);
	req->extra[0] = 0;
	switch (d) {
	case PUSHFMT_INGEST:
		ingest_target(in, req, 1);
		req->ctype = "application/octet-stream";
		outbuf_put(&ob, in->prof[0], in->prof_len[0]);
		break;
	case PUSHFMT_INGEST_MULTIPART:
		ingest_target(in, req, 0);
		req->ctype = "multipart/form-data; boundary=heaptap-7c1f3e9a52b04d68";
		outbuf_puts(&ob, "--");
		outbuf_puts(&ob, boundary);
		outbuf_puts(&ob, "\r\nContent-Disposition: form-data; name=\"profile\"; filename=\"profile.pprof\"\r\n"
		                 "Content-Type: application/octet-stream\r\n\r\n");
		outbuf_put(&ob, in->prof[0], in->prof_len[0]);
		outbuf_puts(&ob, "\r\n--");
		outbuf_puts(&ob, boundary);
		outbuf_puts(&ob, "--\r\n");
		break;
	case PUSHFMT_CONNECT:
		sizeof req->target > strlen(in->path) ? (void)strcpy(req->target, in->path) : (void)(req->target[0] = 0);
		req->ctype = "application/proto";
		strcpy(req->extra, "Connect-Protocol-Version: 1\r\n");
		connect_body(&ob, in);
		break;
	case PUSHFMT_PARCA:
		sizeof req->target > strlen(in->path) ? (void)strcpy(req->target, in->path) : (void)(req->target[0] = 0);
		req->ctype = "application/json";
		parca_body(&ob, in);
		break;
	}
	return ob.truncated ? 0 : ob.len;
}
