/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * options.c - parses HEAPTAP_CONF into struct options (options.h) with a hand-written,
 * locale-free scanner, and holds the process's parsed options. Never allocates; messages go
 * out with write(2). Not the place where options take effect (core.c, dump.c, bgthread.c, lifecycle.c).
 */
#include "options.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../base/digits.h"

#include "../base/allocsym.h"
#include "../base/elffile.h"
#include "../base/outbuf.h"
#include "dumpfmt.h"
#include "procsel.h"
#include "sys.h"

extern char **environ;

static struct options g_opts;
static int g_loaded;

void options_init(struct options *o)
{
	memset(o, 0, sizeof *o);
	o->prof = 1;
	o->prof_active = 1;
	o->lg_prof_sample = 19;
	o->lg_prof_interval = -1;
	o->prof_gdump_rate_ms = 1000;
	o->prof_final = 1;
	o->prof_zone = 1;
	sys_strlcpy(o->prof_prefix, "heaptap", sizeof o->prof_prefix);
	o->prof_format = DUMP_HEAPV2;
	o->prof_unwind = UNWIND_DWARF;
	o->prof_bt_max = 128;
	o->prof_max_stacks = 0; /* no budget: the tables grow */
	o->prof_max_live = 0;
	o->push_interval_ms = 15000;
	o->push_queue = 8;
	o->push_timeout_ms = 10000;
	o->push_retries = 3;
	o->prof_dump_mode = 0600;
	o->http_dump_rate_ms = 1000;
	o->prof_oom_nat = 3;
	o->prof_oom_at[0] = 80;
	o->prof_oom_at[1] = 90;
	o->prof_oom_at[2] = 95;
	o->prof_oom_cooldown_ms = 60000;
	o->cpu_hz = 100;
	o->cpu_signal = SIGPROF;
	o->cpu_format = 1;
}

/* A value as the scanner hands it around: not NUL-terminated. */
struct span {
	const char *p;
	size_t n;
};

static int span_eq(struct span s, const char *lit)
{
	size_t n = strlen(lit);
	return s.n == n && memcmp(s.p, lit, n) == 0;
}

static int parse_bool(struct span v, int *out)
{
	if (span_eq(v, "true")) {
		*out = 1;
		return 0;
	}
	if (span_eq(v, "false")) {
		*out = 0;
		return 0;
	}
	return -1;
}

/* Unsigned integer: decimal, 0x hex, or 0-prefixed octal; the whole span must be digits. */
static int parse_u64(struct span v, uint64_t *out)
{
	size_t i = 0;
	unsigned base = 10;
	if (v.n == 0)
		return -1;
	if (v.n > 2 && v.p[0] == '0' && (v.p[1] == 'x' || v.p[1] == 'X')) {
		base = 16;
		i = 2;
	} else if (v.n > 1 && v.p[0] == '0') {
		base = 8;
		i = 1;
	}
	uint64_t x = 0;
	for (; i < v.n; i++) {
		int dv = digit_value(v.p[i]);
		if (dv < 0 || (unsigned)dv >= base)
			return -1;
		unsigned d = (unsigned)dv;
		if (x > (UINT64_MAX - d) / base)
			return -1;
		x = x * base + d;
	}
	*out = x;
	return 0;
}

static int parse_i64(struct span v, int64_t *out)
{
	uint64_t u;
	if (v.n > 1 && v.p[0] == '-') {
		struct span w = {v.p + 1, v.n - 1};
		if (parse_u64(w, &u) || u > (uint64_t)INT64_MAX)
			return -1;
		*out = -(int64_t)u;
		return 0;
	}
	if (parse_u64(v, &u) || u > (uint64_t)INT64_MAX)
		return -1;
	*out = (int64_t)u;
	return 0;
}

/* "<N>[ms|s|m|h]", bare number = seconds. */
static int parse_duration_ms(struct span v, uint64_t *out)
{
	uint64_t mult = 1000;
	struct span num = v;
	if (v.n > 2 && memcmp(v.p + v.n - 2, "ms", 2) == 0) {
		mult = 1;
		num.n -= 2;
	} else if (v.n > 1 && v.p[v.n - 1] == 's') {
		num.n -= 1;
	} else if (v.n > 1 && v.p[v.n - 1] == 'm') {
		mult = 60000;
		num.n -= 1;
	} else if (v.n > 1 && v.p[v.n - 1] == 'h') {
		mult = 3600000;
		num.n -= 1;
	}
	uint64_t x;
	if (parse_u64(num, &x) || (x && x > UINT64_MAX / mult))
		return -1;
	*out = x * mult;
	return 0;
}

/* "<N>[k|m|g|t]" (either case; binary multiples), bare number = bytes. */
static int parse_bytes(struct span v, uint64_t *out)
{
	static const char units[] = "kmgt";
	struct span num = v;
	unsigned shift = 0;
	if (v.n > 1) {
		char c = v.p[v.n - 1];
		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		const char *u = memchr(units, c, 4);
		if (u) {
			shift = 10 * (unsigned)(u - units + 1);
			num.n--;
		}
	}
	uint64_t x;
	if (parse_u64(num, &x) || (shift && x > (UINT64_MAX >> shift)))
		return -1;
	*out = x << shift;
	return 0;
}

static int parse_signal(struct span v, int *out)
{
	struct span s = v;
	if (s.n > 3 && memcmp(s.p, "SIG", 3) == 0) {
		s.p += 3;
		s.n -= 3;
	}
	if (span_eq(s, "USR1")) {
		*out = SIGUSR1;
		return 0;
	}
	if (span_eq(s, "USR2")) {
		*out = SIGUSR2;
		return 0;
	}
	if (span_eq(s, "HUP")) {
		*out = SIGHUP;
		return 0;
	}
	uint64_t n;
	if (parse_u64(v, &n) || n < 1 || n > 64 || n == SIGKILL || n == SIGSTOP)
		return -1;
	*out = (int)n;
	return 0;
}

static int parse_format(struct span v, unsigned *out)
{
	unsigned f = 0;
	size_t i = 0;
	while (i <= v.n) {
		size_t j = i;
		while (j < v.n && v.p[j] != '+')
			j++;
		struct span tok = {v.p + i, j - i};
		size_t k = 0;
		while (k < DUMPFMT_COUNT && !span_eq(tok, dumpfmt_table[k].name))
			k++;
		if (k == DUMPFMT_COUNT)
			return -1;
		f |= dumpfmt_table[k].bit;
		i = j + 1;
	}
	*out = f;
	return 0;
}

static int parse_string(struct span v, char *dst, size_t cap)
{
	if (v.n >= cap)
		return -1;
	memcpy(dst, v.p, v.n);
	dst[v.n] = 0;
	return 0;
}

/* prof_oom_at: percentages 1..100 joined by '+', at most 8, sorted ascending here. */
static int parse_percents(struct span v, struct options *o)
{
	unsigned at[8];
	unsigned n = 0;
	size_t i = 0;
	while (i <= v.n) {
		size_t j = i;
		while (j < v.n && v.p[j] != '+')
			j++;
		struct span tok = {v.p + i, j - i};
		uint64_t u;
		if (n == 8 || parse_u64(tok, &u) || u < 1 || u > 100)
			return -1;
		unsigned k = n++;
		for (; k > 0 && at[k - 1] > (unsigned)u; k--)
			at[k] = at[k - 1];
		at[k] = (unsigned)u;
		i = j + 1;
	}
	o->prof_oom_nat = n;
	memcpy(o->prof_oom_at, at, n * sizeof at[0]);
	return 0;
}

/* http_allow_users: "owner" (the default), "any", or user ids joined by '+' (at most 16). */
static int parse_users(struct span v, struct options *o)
{
	uint32_t uids[16];
	unsigned n = 0;
	if (span_eq(v, "owner") || span_eq(v, "any")) {
		o->http_allow_any = span_eq(v, "any");
		o->http_allow_nuids = 0;
		return 0;
	}
	size_t i = 0;
	while (i <= v.n) {
		size_t j = i;
		while (j < v.n && v.p[j] != '+')
			j++;
		struct span tok = {v.p + i, j - i};
		uint64_t u;
		if (n == 16 || parse_u64(tok, &u) || u >= UINT32_MAX)
			return -1;
		uids[n++] = (uint32_t)u;
		i = j + 1;
	}
	o->http_allow_any = 0;
	o->http_allow_nuids = n;
	memcpy(o->http_allow_uids, uids, n * sizeof uids[0]);
	return 0;
}

struct report {
	int fd;
	int problems;
};

static void problem(struct report *r, const char *a, struct span s, const char *b,
                    const char *c, const char *d)
{
	r->problems++;
	if (r->fd < 0)
		return;
	char buf[700];
	struct outbuf ob;
	outbuf_init(&ob, buf, sizeof buf - 1, -1);
	outbuf_puts(&ob, "heaptap: HEAPTAP_CONF: ");
	outbuf_puts(&ob, a);
	outbuf_put(&ob, s.p, s.n > 200 ? 200 : s.n);
	if (b)
		outbuf_puts(&ob, b);
	if (c)
		outbuf_puts(&ob, c);
	if (d)
		outbuf_puts(&ob, d);
	if (ob.len > sizeof buf - 2)
		ob.len = sizeof buf - 2;
	buf[ob.len++] = '\n';
	(void)write_all(r->fd, buf, ob.len);
}

/* "invalid value 'v' for key (expected E; using D)" */
static void bad_value(struct report *r, struct span key, struct span v, const char *expected,
                      const char *dflt)
{
	char tail[300];
	struct outbuf ob;
	outbuf_init(&ob, tail, sizeof tail - 1, -1);
	outbuf_puts(&ob, "' for ");
	outbuf_put(&ob, key.p, key.n > 60 ? 60 : key.n);
	outbuf_puts(&ob, " (expected ");
	outbuf_puts(&ob, expected);
	outbuf_puts(&ob, "; using ");
	outbuf_puts(&ob, dflt);
	outbuf_puts(&ob, ")");
	tail[ob.len < sizeof tail ? ob.len : sizeof tail - 1] = 0;
	problem(r, "invalid value '", v, tail, NULL, NULL);
}

static void fmt_u(char *buf, uint64_t v)
{
	fmt_u64(buf, v);
}

static void apply(struct options *o, struct span key, struct span v, struct report *r)
{
	char cur[64];
	int b;
	uint64_t u;
	int64_t i;

#define BOOL_KEY(name)                                                        \
	if (span_eq(key, #name)) {                                            \
		if (parse_bool(v, &b) == 0)                                   \
			o->name = b;                                          \
		else                                                          \
			bad_value(r, key, v, "true or false",                 \
			          o->name ? "true" : "false");                \
		return;                                                       \
	}

/* A string option: copied when it fits, else the message names what was expected and cur,
   what stays. */
#define STR_KEY(name, expect, cur)                                            \
	if (span_eq(key, #name)) {                                            \
		if (parse_string(v, o->name, sizeof o->name))                 \
			bad_value(r, key, v, expect, cur);                    \
		return;                                                       \
	}

#define U64_KEY(name, lo, hi, expect)                                         \
	if (span_eq(key, #name)) {                                            \
		if (parse_u64(v, &u) == 0 && u + 1 >= (uint64_t)(lo) + 1 && u <= (hi))          \
			o->name = u;                                          \
		else {                                                        \
			fmt_u(cur, (uint64_t)o->name);                        \
			bad_value(r, key, v, expect, cur);                    \
		}                                                             \
		return;                                                       \
	}

	BOOL_KEY(prof)
	BOOL_KEY(prof_active)
	BOOL_KEY(prof_gdump)
	BOOL_KEY(prof_final)
	BOOL_KEY(prof_leak)
	BOOL_KEY(prof_accum)
	BOOL_KEY(verbose)
	BOOL_KEY(stats_exact)
	BOOL_KEY(prof_oom)
	BOOL_KEY(prof_peak)
	BOOL_KEY(prof_zone)
	if (span_eq(key, "prof_leak_error")) {
		if (parse_bool(v, &b) == 0) {
			o->prof_leak_error = b;
			if (b)
				o->prof_leak = 1;
		} else {
			bad_value(r, key, v, "true or false", o->prof_leak_error ? "true" : "false");
		}
		return;
	}
	U64_KEY(lg_prof_sample, 0, 62, "0..62")
	U64_KEY(prof_gdump_rate_ms, 0, UINT64_MAX / 1000000, "milliseconds")
	U64_KEY(prof_max_dumps, 0, UINT64_MAX, "a count, 0 = unlimited")
	U64_KEY(prof_dump_mode, 0, 0777, "permission bits, e.g. 0600 or 0640")
	U64_KEY(prof_bt_max, 1, 256, "1..256")
	U64_KEY(prof_max_stacks, 0, 4000000000u, "0 (no budget) or 1..4000000000")
	U64_KEY(prof_max_live, 0, 4000000000u, "0 (no budget) or 1..4000000000")
	if (span_eq(key, "lg_prof_interval")) {
		if (parse_i64(v, &i) == 0 && i >= -1 && i <= 62) {
			o->lg_prof_interval = (int)i;
		} else {
			if (o->lg_prof_interval < 0)
				sys_strlcpy(cur, "-1", sizeof cur);
			else
				fmt_u(cur, (uint64_t)o->lg_prof_interval);
			bad_value(r, key, v, "-1..62", cur);
		}
		return;
	}
	STR_KEY(prof_prefix, "a path prefix shorter than 512 bytes", o->prof_prefix)
	if (span_eq(key, "prof_time_interval")) {
		if (parse_duration_ms(v, &u) == 0) {
			o->prof_time_interval_ms = u;
		} else {
			fmt_u(cur, o->prof_time_interval_ms);
			bad_value(r, key, v, "<N>[ms|s|m|h]", "0");
		}
		return;
	}
	if (span_eq(key, "prof_signal")) {
		if (parse_signal(v, &o->prof_signal))
			bad_value(r, key, v, "USR1, USR2 or a signal number", "none");
		return;
	}
	if (span_eq(key, "prof_format")) {
		if (parse_format(v, &o->prof_format))
			bad_value(r, key, v, "heap_v2, pprof or heap_v2+pprof", "heap_v2");
		return;
	}
	if (span_eq(key, "prof_unwind")) {
		if (span_eq(v, "dwarf"))
			o->prof_unwind = UNWIND_DWARF;
		else if (span_eq(v, "fp"))
			o->prof_unwind = UNWIND_FP;
		else if (span_eq(v, "libunwind")) /* libunwind is gone: the same DWARF walk */
			o->prof_unwind = UNWIND_DWARF;
		else
			bad_value(r, key, v, "dwarf, fp or libunwind (= dwarf)", options_unwind_name(o->prof_unwind));
		return;
	}
	STR_KEY(http, "an address shorter than 256 bytes", "none")
	STR_KEY(http_token, "a token shorter than 256 bytes", "none")
	if (span_eq(key, "http_allow_users")) {
		if (parse_users(v, o))
			bad_value(r, key, v, "owner, any or user ids joined by '+'", "owner");
		return;
	}
	STR_KEY(http_hosts, "host names joined by '+', shorter than 256 bytes", "none")
	U64_KEY(http_dump_rate_ms, 0, UINT64_MAX / 1000000, "milliseconds, 0 = no limit")
	if (span_eq(key, "prof_mem_limit")) {
		if (parse_bytes(v, &u) == 0) {
			o->prof_mem_limit = u;
		} else {
			fmt_u(cur, o->prof_mem_limit);
			bad_value(r, key, v, "<N>[k|m|g|t] bytes, 0 = none", cur);
		}
		return;
	}
	if (span_eq(key, "prof_oom_at")) {
		if (parse_percents(v, o))
			bad_value(r, key, v, "percentages 1..100 joined by '+', at most 8", "80+90+95");
		return;
	}
	if (span_eq(key, "prof_oom_cooldown")) {
		if (parse_duration_ms(v, &u) == 0) {
			o->prof_oom_cooldown_ms = u;
		} else {
			fmt_u(cur, o->prof_oom_cooldown_ms / 1000);
			bad_value(r, key, v, "<N>[ms|s|m|h]", "60s");
		}
		return;
	}
	STR_KEY(prof_procs, "executable names or globs joined by '+', shorter than 256 bytes", "all")
	STR_KEY(mem_cgroup, "a directory shorter than 256 bytes", "found from /proc")
	/* the push client: strings as given (push.c checks the URL and the format) */
	STR_KEY(push_url, "an http:// URL shorter than 512 bytes", "none")
	STR_KEY(push_format, "ingest, ingest-multipart, connect or parca", "none")
	STR_KEY(push_service, "a name shorter than 128 bytes", "none")
	STR_KEY(push_labels, "name=value pairs joined by '+', shorter than 512 bytes", "none")
	STR_KEY(push_token, "a token shorter than 256 bytes", "none")
	STR_KEY(push_basic, "user:password shorter than 256 bytes", "none")
	STR_KEY(push_tenant, "a tenant shorter than 128 bytes", "none")
	if (span_eq(key, "push_interval")) {
		if (parse_duration_ms(v, &u) == 0 && u >= 1000 && u <= 86400000) {
			o->push_interval_ms = u;
		} else {
			fmt_u(cur, o->push_interval_ms);
			bad_value(r, key, v, "<N>[ms|s|m|h] from 1s to 24h", cur);
		}
		return;
	}
	U64_KEY(push_queue, 1, 64, "1..64")
	U64_KEY(push_timeout_ms, 100, 600000, "100..600000 milliseconds")
	U64_KEY(push_retries, 0, 100, "0..100")
	/* the CPU profiler */
	BOOL_KEY(cpu_prof)
	BOOL_KEY(cpu_fork)
	U64_KEY(cpu_hz, 1, 10000, "1..10000")
	if (span_eq(key, "cpu_signal")) {
		if (parse_signal(v, &o->cpu_signal) && !(span_eq(v, "PROF") || span_eq(v, "SIGPROF")))
			bad_value(r, key, v, "PROF, USR1, USR2 or a signal number", "PROF");
		else if (span_eq(v, "PROF") || span_eq(v, "SIGPROF"))
			o->cpu_signal = SIGPROF;
		return;
	}
	if (span_eq(key, "cpu_timer")) {
		if (span_eq(v, "thread") || span_eq(v, "process"))
			o->cpu_timer = span_eq(v, "process");
		else
			bad_value(r, key, v, "thread or process", o->cpu_timer ? "process" : "thread");
		return;
	}
	if (span_eq(key, "cpu_format")) {
		if (span_eq(v, "pprof") || span_eq(v, "gperf") || span_eq(v, "pprof+gperf"))
			o->cpu_format = span_eq(v, "pprof") ? 1 : span_eq(v, "gperf") ? 2 : 3;
		else
			bad_value(r, key, v, "pprof, gperf or pprof+gperf", "pprof");
		return;
	}
	STR_KEY(cpu_prefix, "a path prefix shorter than 512 bytes", "prof_prefix")
	STR_KEY(cpu_file, "a path shorter than 512 bytes", "none")
	problem(r, "unknown option '", key, "' (ignored)", NULL, NULL);
#undef BOOL_KEY
#undef U64_KEY
#undef STR_KEY
}

int options_parse(struct options *o, const char *conf, int errfd)
{
	struct report r = {errfd, 0};
	if (!conf)
		return 0;
	const char *p = conf;
	while (*p) {
		const char *end = p;
		while (*end && *end != ',')
			end++;
		if (end > p) {
			const char *colon = p;
			while (colon < end && *colon != ':')
				colon++;
			struct span item = {p, (size_t)(end - p)};
			if (colon == end) {
				problem(&r, "malformed option '", item, "' (expected key:value; ignored)",
				        NULL, NULL);
			} else {
				struct span key = {p, (size_t)(colon - p)};
				struct span val = {colon + 1, (size_t)(end - colon - 1)};
				apply(o, key, val, &r);
			}
		}
		p = *end ? end + 1 : end;
	}
	return r.problems;
}

const struct options *options_get(void)
{
	return &g_opts;
}

struct options *options_mut(void)
{
	return &g_opts;
}

/* The environment as NUL-separated "NAME=value" strings: libc's when it is set up, else a
   copy of /proc/self/environ (for calls made before libc set up environ). */
static char envbuf[64 * 1024];
static long envlen = -1;

static const char *env_get(const char *name)
{
	if (environ)
		return getenv(name);
	if (envlen < 0)
		envlen = sys_read_small("/proc/self/environ", envbuf, sizeof envbuf);
	size_t nl = strlen(name);
	for (long i = 0; i < envlen;) {
		const char *e = envbuf + i;
		size_t len = strlen(e);
		if (strncmp(e, name, nl) == 0 && e[nl] == '=')
			return e + nl + 1;
		i += (long)len + 1;
	}
	return NULL;
}

/* The MALLOC_CONF keys that mean the same in heaptap (docs/OPTIONS.md "Other variables"). */
static const char *const shared_keys[] = {
	"prof", "prof_active", "lg_prof_sample", "lg_prof_interval", "prof_gdump", "prof_final",
	"prof_leak", "prof_leak_error", "prof_accum", "prof_prefix", NULL,
};

/* Appends the pairs of MALLOC_CONF whose keys heaptap shares to ob (comma-separated). */
static void translate_malloc_conf(const char *mc, struct outbuf *ob)
{
	for (const char *p = mc; p && *p;) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		const char *colon = memchr(p, ':', n);
		for (int i = 0; colon && shared_keys[i]; i++) {
			if (strlen(shared_keys[i]) != (size_t)(colon - p) ||
			    strncmp(p, shared_keys[i], (size_t)(colon - p)) != 0)
				continue;
			if (ob->len)
				outbuf_putc(ob, ',');
			outbuf_put(ob, p, n);
		}
		p = end ? end + 1 : NULL;
	}
}

/* log2 of a byte count, rounded to the nearest integer (HEAP_PROFILE_ALLOCATION_INTERVAL). */
static int lg_round(uint64_t v)
{
	int lg = 0;
	while (lg < 62 && ((uint64_t)1 << (lg + 1)) <= v)
		lg++;
	/* nearer the next power of two? */
	if (lg < 62 && v - ((uint64_t)1 << lg) > ((uint64_t)1 << (lg + 1)) - v)
		lg++;
	return lg;
}

/* 1 when v is a decimal number without sign or junk; its value in *out. */
static int env_u64(const char *v, uint64_t *out)
{
	if (!v || !*v)
		return 0;
	struct span sp = {v, strlen(v)};
	return parse_u64(sp, out) == 0;
}

/* Appends gperftools' HEAPPROFILE and its companions, translated, to ob. */
static void translate_gperftools(const char *prefix, struct outbuf *ob)
{
	uint64_t v;
	if (ob->len)
		outbuf_putc(ob, ',');
	outbuf_puts(ob, "prof_prefix:");
	outbuf_puts(ob, prefix);
	/* gperftools dumps every 1 GiB allocated unless told otherwise */
	const char *alloc = env_get("HEAP_PROFILE_ALLOCATION_INTERVAL");
	outbuf_puts(ob, ",lg_prof_interval:");
	if (env_u64(alloc, &v))
		outbuf_i64(ob, v == 0 ? -1 : lg_round(v));
	else
		outbuf_puts(ob, "30");
	if (env_u64(env_get("HEAP_PROFILE_INUSE_INTERVAL"), &v) && v > 0)
		outbuf_puts(ob, ",prof_gdump:true");
	if (env_u64(env_get("HEAP_PROFILE_TIME_INTERVAL"), &v) && v > 0) {
		outbuf_puts(ob, ",prof_time_interval:");
		outbuf_u64(ob, v);
		outbuf_puts(ob, "s");
	}
	if (env_u64(env_get("HEAPPROFILESIGNAL"), &v) && v > 0 && v < 65) {
		outbuf_puts(ob, ",prof_signal:");
		outbuf_u64(ob, v);
	}
}

/* gperftools' CPU profiler variables (CPUPROFILE=FILE, CPUPROFILE_FREQUENCY), applied straight
   to o (a file name may hold commas, which HEAPTAP_CONF's syntax cannot carry), below
   HEAPTAP_CONF. Left alone, with one line saying so, when gperftools' own profiler
   (libprofiler.so, libtcmalloc_and_profiler.so) is in the process: it reads them itself. */
static const char *self_maps(void)
{
	static char maps[256 * 1024];
	long n = sys_read_small("/proc/self/maps", maps, sizeof maps);
	maps[n > 0 ? n : 0] = 0;
	return maps;
}

static void apply_cpuprofile(struct options *o)
{
	const char *file = env_get("CPUPROFILE");
	if (!file || !*file)
		return;
	const char *maps = self_maps();
	if (strstr(maps, "/libprofiler.so") || strstr(maps, "/libtcmalloc_and_profiler.so")) {
		(void)write_all(2, "heaptap: CPUPROFILE is left to gperftools' profiler in this process\n", 68);
		return;
	}
	if (sys_strlcpy(o->cpu_file, file, sizeof o->cpu_file) >= sizeof o->cpu_file) {
		o->cpu_file[0] = 0;
		return;
	}
	uint64_t hz;
	if (env_u64(env_get("CPUPROFILE_FREQUENCY"), &hz) && hz >= 1 && hz <= 4000)
		o->cpu_hz = (unsigned)hz;
}

/* 1 when a jemalloc is in the process (its MALLOC_CONF is then its own): a mapped libjemalloc,
   or <prefix>mallctl in the executable's symbol tables. */
static int jemalloc_in_process(void)
{
	if (strstr(self_maps(), "/libjemalloc"))
		return 1;
	struct elffile f;
	struct allocsym_found a;
	if (elffile_open(&f, "/proc/self/exe") != 0)
		return 0;
	allocsym_scan(&f, &a);
	elffile_close(&f);
	return a.jemalloc;
}

void options_load(void)
{
	if (g_loaded)
		return;
	g_loaded = 1;
	options_init(&g_opts);
	if (sys_secure_execution()) {
		/* setuid, setgid or file capabilities: the caller's environment must not choose what a
		   privileged program writes where or serves. Pass through, profile nothing. */
		g_opts.prof = 0;
		g_opts.prof_prefix[0] = 0;
		g_opts.secure = 1;
		return;
	}
	/* The variables of the tools heaptap replaces, lowest precedence first: MALLOC_CONF's
	   shared keys (when no jemalloc of the process reads it), then gperftools' HEAPPROFILE
	   family, then HEAPTAP_CONF, which wins. */
	static char legacy[2048];
	struct outbuf ob;
	outbuf_init(&ob, legacy, sizeof legacy - 1, -1);
	const char *mc = env_get("MALLOC_CONF"), *hp = env_get("HEAPPROFILE");
	const char *names[2] = {NULL, NULL};
	if (mc && *mc && !jemalloc_in_process()) {
		translate_malloc_conf(mc, &ob);
		if (ob.len)
			names[0] = "MALLOC_CONF";
	}
	if (hp && *hp) {
		translate_gperftools(hp, &ob);
		names[names[0] ? 1 : 0] = "HEAPPROFILE";
	}
	legacy[ob.truncated ? 0 : ob.len] = 0;
	const char *conf = env_get("HEAPTAP_CONF");
	apply_cpuprofile(&g_opts);
	if (legacy[0])
		options_parse(&g_opts, legacy, 2);
	options_parse(&g_opts, conf, 2);
	/* prof_procs and the launchers' rule; a process passed through says nothing */
	if (procsel_apply(&g_opts) && legacy[0]) {
		char line[2300];
		outbuf_init(&ob, line, sizeof line - 1, -1);
		outbuf_puts(&ob, "heaptap: options from ");
		outbuf_puts(&ob, names[0]);
		if (names[1]) {
			outbuf_puts(&ob, " and ");
			outbuf_puts(&ob, names[1]);
		}
		outbuf_puts(&ob, " (");
		outbuf_puts(&ob, legacy);
		outbuf_puts(&ob, conf && *conf ? "), then HEAPTAP_CONF, which wins\n" : ")\n");
		(void)write_all(2, line, ob.len);
	}
}

const char *options_unwind_name(int mode)
{
	return mode == UNWIND_FP ? "fp" : "dwarf";
}
