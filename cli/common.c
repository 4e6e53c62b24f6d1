/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * common.c - the option parser and loading pipeline shared by heaptap's analysis commands
 * (see common.h for the contract). It reads and combines profiles and calls the symbolizer;
 * it does not interpret stacks or print reports.
 */
#include "common.h"

#include "mapfile.h"
#include "progress.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "../profile/arena.h"
#include "../profile/reader.h"
#include "memlimit.h"
#include "sym/symbolize.h"
#include "symhint.h"


enum {
	O_INUSE_SPACE = 1, O_INUSE_OBJECTS, O_ALLOC_SPACE, O_ALLOC_OBJECTS, O_SAMPLE_INDEX,
	O_SHOW_BYTES, O_FOCUS, O_IGNORE, O_FUNCTIONS, O_LINES, O_ADDRESSES, O_FILES,
	O_NODECOUNT, O_NODEFRACTION, O_EDGEFRACTION, O_MAXDEGREE, O_LIB_PREFIX, O_SYSROOT,
	O_BASE, O_NO_SYMBOLIZE, O_HELP, O_CUM, O_DROP_NEGATIVE, O_OUTPUT, O_DEBUG_DIR, O_NO_DEMANGLE,
	O_NO_INLINES, O_KEEP_ALLOCATOR, O_MAX_MEMORY
};

static const struct common_opt shared_opts[] = {
	{"inuse_space", 0, O_INUSE_SPACE},
	{"inuse_objects", 0, O_INUSE_OBJECTS},
	{"alloc_space", 0, O_ALLOC_SPACE},
	{"alloc_objects", 0, O_ALLOC_OBJECTS},
	{"sample_index", 1, O_SAMPLE_INDEX},
	{"show_bytes", 0, O_SHOW_BYTES},
	{"focus", 1, O_FOCUS},
	{"ignore", 1, O_IGNORE},
	{"functions", 0, O_FUNCTIONS},
	{"lines", 0, O_LINES},
	{"addresses", 0, O_ADDRESSES},
	{"files", 0, O_FILES},
	{"nodecount", 1, O_NODECOUNT},
	{"nodefraction", 1, O_NODEFRACTION},
	{"edgefraction", 1, O_EDGEFRACTION},
	{"maxdegree", 1, O_MAXDEGREE},
	{"lib-prefix", 1, O_LIB_PREFIX},
	{"lib_prefix", 1, O_LIB_PREFIX},
	{"sysroot", 1, O_SYSROOT},
	{"base", 1, O_BASE},
	{"no-symbolize", 0, O_NO_SYMBOLIZE},
	{"no_symbolize", 0, O_NO_SYMBOLIZE},
	{"help", 0, O_HELP},
	{"h", 0, O_HELP},
	{"cum", 0, O_CUM},
	{"drop_negative", 0, O_DROP_NEGATIVE},
	{"debug-dir", 1, O_DEBUG_DIR},
	{"no-demangle", 0, O_NO_DEMANGLE},
	{"no-inlines", 0, O_NO_INLINES},
	{"keep-allocator", 0, O_KEEP_ALLOCATOR},
	{"keep_allocator", 0, O_KEEP_ALLOCATOR},
	{"max-memory", 1, O_MAX_MEMORY},
	{"max_memory", 1, O_MAX_MEMORY},
	{"o", 1, O_OUTPUT},
	{"output", 1, O_OUTPUT},
	{NULL, 0, 0},
};

static const char shared_help[] =
	"\nshared options (--opt=V, --opt V and pprof-style -opt=V all work):\n"
	"  --inuse_space (default) --inuse_objects --alloc_space --alloc_objects\n"
	"  -sample_index=NAME|N   the same, pprof style\n"
	"  --show_bytes           space in bytes (B) instead of MiB (MB)\n"
	"  --functions (default) --lines --addresses --files   granularity\n"
	"  --focus=RE --ignore=RE keep / drop stacks with a frame matching RE (POSIX ERE)\n"
	"  --nodecount=N --nodefraction=F --edgefraction=F --maxdegree=N   size limits\n"
	"  --base=PROFILE         subtract PROFILE (--drop_negative clamps at 0)\n"
	"  --lib-prefix=DIR[,DIR] --sysroot=DIR   where to find the libraries\n"
	"  --debug-dir=DIR        root of separate debug files (default /usr/lib/debug)\n"
	"  --no-demangle --no-inlines             raw symbol names; no inlined frames\n"
	"  --no-symbolize         show raw addresses\n"
	"  --keep-allocator       keep the allocator's frames (malloc, jemalloc, Rust's shims)\n"
	"  --max-memory=SIZE      stop with an error beyond SIZE of memory (4G, 512M, none;\n"
	"                         default $HEAPTAP_MAX_MEMORY, else 4G or half the RAM)\n"
	"  -o FILE, --output=FILE write to FILE instead of stdout\n"
	"  BINARY and PROFILE arguments may come in any order (an ELF file is the binary)\n";

const char *common_value_name(int k)
{
	static const char *const names[PV_COUNT] = {"inuse_objects", "inuse_space", "alloc_objects",
	                                            "alloc_space"};
	return k >= 0 && k < PV_COUNT ? names[k] : "?";
}

int common_usage_error(const struct common_args *a, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "heaptap: %s: ", a->cmd ? a->cmd : "heaptap");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nheaptap: try 'heaptap %s --help'\n", a->cmd ? a->cmd : "");
	return 2;
}

int common_is_elf(const char *path)
{
	char err[16];
	int fd = reader_open_regular(path, err, sizeof err);
	if (fd < 0)
		return 0;
	unsigned char m[4];
	ssize_t n = read(fd, m, 4);
	close(fd);
	return n == 4 && m[0] == 0x7f && m[1] == 'E' && m[2] == 'L' && m[3] == 'F';
}

static int push_str(char ***arr, size_t *n, const char *s)
{
	char **na = realloc(*arr, (*n + 2) * sizeof(**arr));
	if (!na)
		return -1;
	*arr = na;
	na[*n] = strdup(s);
	if (!na[*n])
		return -1;
	(*n)++;
	na[*n] = NULL;
	return 0;
}

static int parse_int(const char *s, long lo, long hi, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

static int parse_fraction(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= 0 && v <= 1))
		return -1;
	*out = v;
	return 0;
}

static int set_value(struct common_args *a, int k)
{
	if (a->value_given && a->value_index != k)
		return common_usage_error(a, "only one of --inuse_space, --inuse_objects, --alloc_space, --alloc_objects");
	a->value_index = k;
	a->value_given = 1;
	return 0;
}

static int compile_re(struct common_args *a, regex_t *re, const char *pat, const char *opt)
{
	int rc = regcomp(re, pat, REG_EXTENDED | REG_NOSUB);
	if (rc) {
		char msg[256];
		regerror(rc, re, msg, sizeof(msg));
		return common_usage_error(a, "--%s: bad regular expression '%s': %s", opt, pat, msg);
	}
	return 0;
}

static int apply_shared(struct common_args *a, int id, const char *v)
{
	long n;
	switch (id) {
	case O_INUSE_SPACE: return set_value(a, PV_INUSE_BYTES);
	case O_INUSE_OBJECTS: return set_value(a, PV_INUSE_OBJS);
	case O_ALLOC_SPACE: return set_value(a, PV_ALLOC_BYTES);
	case O_ALLOC_OBJECTS: return set_value(a, PV_ALLOC_OBJS);
	case O_SAMPLE_INDEX:
		for (int k = 0; k < PV_COUNT; k++)
			if (strcmp(v, common_value_name(k)) == 0)
				return set_value(a, k);
		/* pprof numbers the sample types in the order alloc_objects, alloc_space, inuse_objects,
		   inuse_space (Go's heap profile). */
		if (parse_int(v, 0, 3, &n) == 0) {
			static const int go_order[4] = {PV_ALLOC_OBJS, PV_ALLOC_BYTES, PV_INUSE_OBJS, PV_INUSE_BYTES};
			return set_value(a, go_order[n]);
		}
		return common_usage_error(a, "-sample_index: unknown sample type '%s' (inuse_space, inuse_objects, alloc_space, alloc_objects)", v);
	case O_SHOW_BYTES: a->show_bytes = 1; return 0;
	case O_FOCUS:
		if (a->focus)
			regfree(&a->focus_re);
		a->focus = v;
		return compile_re(a, &a->focus_re, v, "focus") ? (a->focus = NULL, 2) : 0;
	case O_IGNORE:
		if (a->ignore)
			regfree(&a->ignore_re);
		a->ignore = v;
		return compile_re(a, &a->ignore_re, v, "ignore") ? (a->ignore = NULL, 2) : 0;
	case O_FUNCTIONS: a->gran = GRAN_FUNCTIONS; return 0;
	case O_LINES: a->gran = GRAN_LINES; return 0;
	case O_ADDRESSES: a->gran = GRAN_ADDRESSES; return 0;
	case O_FILES: a->gran = GRAN_FILES; return 0;
	case O_NODECOUNT:
		if (parse_int(v, 0, 1000000000, &n))
			return common_usage_error(a, "--nodecount: expected a non-negative integer, got '%s'", v);
		a->nodecount = (int)n;
		return 0;
	case O_MAXDEGREE:
		if (parse_int(v, 0, 1000000000, &n))
			return common_usage_error(a, "--maxdegree: expected a non-negative integer, got '%s'", v);
		a->maxdegree = (int)n;
		return 0;
	case O_NODEFRACTION:
		if (parse_fraction(v, &a->nodefraction))
			return common_usage_error(a, "--nodefraction: expected a number in [0,1], got '%s'", v);
		return 0;
	case O_EDGEFRACTION:
		if (parse_fraction(v, &a->edgefraction))
			return common_usage_error(a, "--edgefraction: expected a number in [0,1], got '%s'", v);
		return 0;
	case O_LIB_PREFIX: {
		char *dup = strdup(v), *save = NULL;
		if (!dup)
			return common_usage_error(a, "out of memory");
		for (char *t = strtok_r(dup, ",", &save); t; t = strtok_r(NULL, ",", &save))
			if (*t && push_str(&a->lib_prefix, &a->nlib_prefix, t)) {
				free(dup);
				return common_usage_error(a, "out of memory");
			}
		free(dup);
		return 0;
	}
	case O_SYSROOT: a->sysroot = v; return 0;
	case O_BASE: a->base = v; return 0;
	case O_NO_SYMBOLIZE: a->no_symbolize = 1; return 0;
	case O_CUM: a->cum_sort = 1; return 0;
	case O_DROP_NEGATIVE: a->drop_negative = 1; return 0;
	case O_OUTPUT: a->output = v; return 0;
	case O_DEBUG_DIR: a->debug_dir = v; return 0;
	case O_NO_DEMANGLE: a->no_demangle = 1; return 0;
	case O_NO_INLINES: a->no_inlines = 1; return 0;
	case O_KEEP_ALLOCATOR: a->keep_allocator = 1; return 0;
	case O_MAX_MEMORY: {
		uint64_t nb;
		if (memlimit_parse(v, &nb))
			return common_usage_error(a, "--max-memory: expected a size such as 4G, 512M or none, got '%s'", v);
		if (memlimit_set(nb, 1))
			return common_usage_error(a, "--max-memory: cannot set the limit to '%s': %s", v, strerror(errno));
		return 0;
	}
	}
	return 0;
}

static const struct common_opt *lookup(const struct common_opt *tab, const char *name, size_t len)
{
	for (; tab && tab->name; tab++)
		if (strlen(tab->name) == len && memcmp(tab->name, name, len) == 0)
			return tab;
	return NULL;
}

static void print_help(const struct common_args *a, const struct common_extra *extra)
{
	if (extra && extra->help)
		fputs(extra->help, stdout);
	else
		printf("usage: heaptap %s [options] [BINARY] PROFILE...\n", a->cmd);
	if (!extra || !extra->raw_positionals)
		fputs(shared_help, stdout);
}

int common_parse(struct common_args *a, int argc, char **argv, const struct common_extra *extra)
{
	memset(a, 0, sizeof(*a));
	a->cmd = argc > 0 ? argv[0] : "heaptap";
	a->value_index = PV_INUSE_BYTES;
	a->gran = GRAN_FUNCTIONS;
	a->nodecount = -1;
	a->nodefraction = 0.005;
	a->edgefraction = 0.001;
	a->maxdegree = 8;
	int raw = extra && extra->raw_positionals;
	char **pos = NULL;
	size_t npos = 0;
	int rc = -1;

	for (int i = 1; i < argc; i++) {
		char *arg = argv[i];
		if (strcmp(arg, "--") == 0) {
			for (i++; i < argc; i++)
				if (push_str(&pos, &npos, argv[i]))
					goto oom;
			break;
		}
		if (arg[0] != '-' || arg[1] == '\0') {
			if (push_str(&pos, &npos, arg))
				goto oom;
			if (raw) {
				/* a command line to run: everything after its first word is its own */
				for (i++; i < argc; i++)
					if (push_str(&pos, &npos, argv[i]))
						goto oom;
				break;
			}
			continue;
		}
		const char *name = arg + 1 + (arg[1] == '-');
		const char *eq = strchr(name, '=');
		size_t len = eq ? (size_t)(eq - name) : strlen(name);
		const struct common_opt *o = lookup(extra ? extra->opts : NULL, name, len);
		int is_extra = o != NULL;
		if (!o)
			o = lookup(shared_opts, name, len);
		if (!o) {
			rc = common_usage_error(a, "unknown option '%s'", arg);
			goto out;
		}
		const char *val = NULL;
		if (o->has_arg) {
			if (eq)
				val = eq + 1;
			else if (i + 1 < argc)
				val = argv[++i];
			else {
				rc = common_usage_error(a, "option '%s' needs a value", arg);
				goto out;
			}
		} else if (eq) {
			rc = common_usage_error(a, "option '--%.*s' takes no value", (int)len, name);
			goto out;
		}
		if (!is_extra && o->id == O_HELP) {
			print_help(a, extra);
			rc = 0;
			goto out;
		}
		int r = is_extra ? (extra->handle ? extra->handle(extra->ctx, o->id, val) : 0)
		                 : apply_shared(a, o->id, val);
		if (r) {
			rc = r;
			goto out;
		}
	}

	if (raw) {
		a->rest = pos;
		a->nrest = npos;
		pos = NULL;
		npos = 0;
	} else {
		for (size_t k = 0; k < npos; k++) {
			if (common_is_elf(pos[k])) {
				if (a->binary) {
					rc = common_usage_error(a, "two binaries given: '%s' and '%s'", a->binary, pos[k]);
					goto out;
				}
				a->binary = pos[k];
			} else if (push_str(&a->profiles, &a->nprofiles, pos[k])) {
				goto oom;
			}
		}
		if (a->binary) {
			/* pos is freed below: keep a copy of the binary's name in rest. */
			if (push_str(&a->rest, &a->nrest, a->binary))
				goto oom;
			a->binary = a->rest[a->nrest - 1];
		}
	}
	goto out;
oom:
	rc = common_usage_error(a, "out of memory");
out:
	if (rc >= 0 && a->binary && (a->nrest == 0 || a->binary != a->rest[a->nrest - 1]))
		a->binary = NULL; /* it pointed into pos */
	for (size_t k = 0; k < npos; k++)
		free(pos[k]);
	free(pos);
	if (rc >= 0)
		common_args_release(a); /* the command returns at once: nothing for it to free */
	return rc;
}

void common_args_release(struct common_args *a)
{
	if (a->focus)
		regfree(&a->focus_re);
	if (a->ignore)
		regfree(&a->ignore_re);
	for (size_t k = 0; k < a->nlib_prefix; k++)
		free(a->lib_prefix[k]);
	free(a->lib_prefix);
	for (size_t k = 0; k < a->nprofiles; k++)
		free(a->profiles[k]);
	free(a->profiles);
	for (size_t k = 0; k < a->nrest; k++)
		free(a->rest[k]);
	free(a->rest);
	memset(a, 0, sizeof(*a));
}


/* 1 unless path is a regular uncompressed file without a "MAPPED_LIBRARIES:" line (a heap_v2
   dump may have an empty map section; only a missing one means it was cut short). */
static int has_maps_section(const char *path)
{
	size_t n = 0;
	const unsigned char *m = mapfile_map(path, &n);
	if (!m)
		return 1;
	int found = n >= 2 && m[0] == 0x1f && m[1] == 0x8b;
	/* The section ends the file: search from the end, a window at a time, giving each window's
	   pages back, so a dump of hundreds of MB is not made resident here either. */
	const size_t win = (size_t)8 << 20;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	for (size_t end = n; !found && end > 0;) {
		size_t start = end > win ? end - win : 0;
		size_t len = end - start + (end < n ? 16 : 0); /* overlap: a word across two windows */
		found = memmem(m + start, len, "MAPPED_LIBRARIES:", 17) != NULL;
		size_t from = (start + page - 1) & ~(page - 1);
		if (end > from)
			madvise((void *)(m + from), end - from, MADV_DONTNEED);
		end = start;
	}
	mapfile_unmap(m, n);
	return found;
}

/* 1 once a CPU profile was read: values are samples and CPU nanoseconds (profile.cpu). */
static int cpu_units;

int common_read(const struct common_args *a, const char *path, struct profile *p)
{
	if (strcmp(path, "-") == 0)
		path = "/dev/stdin";
	if (access(path, F_OK) != 0) {
		fprintf(stderr, "heaptap: %s: %s\n", path, strerror(errno));
		return 1;
	}
	char err[512] = "";
	char what[300];
	snprintf(what, sizeof(what), "reading %s", path);
	progress_step(what);
	arena_set_subject(path, NULL, 0); /* stays the subject of what follows (merge, stacks) */
	int rr = profile_read_file(path, p, err, sizeof(err));
	progress_step(NULL);
	if (rr != 0) {
		/* The reader's message usually names the file already. */
		if (!err[0])
			fprintf(stderr, "heaptap: %s: cannot read profile\n", path);
		else if (strncmp(err, "heaptap: ", 9) == 0)
			fprintf(stderr, "%s\n", err);
		else if (strstr(err, path))
			fprintf(stderr, "heaptap: %s\n", err);
		else
			fprintf(stderr, "heaptap: %s: %s\n", path, err);
		return 1;
	}
	if (p->format && strcmp(p->format, "heap_v2") == 0 && p->nmaps == 0 && !has_maps_section(path))
		fprintf(stderr, "heaptap: warning: %s: no MAPPED_LIBRARIES section (jemalloc and heaptap "
		                "always write one): the file looks truncated, and its frames cannot be "
		                "symbolized\n", path);
	cpu_units = p->cpu; /* mixed kinds are refused (common_check_same_kind) */
	return 0;
}

int common_redirect_stdout(const struct common_args *a)
{
	if (!a->output || strcmp(a->output, "-") == 0)
		return 0;
	if (!freopen(a->output, "w", stdout)) {
		fprintf(stderr, "heaptap: %s: %s\n", a->output, strerror(errno));
		return 1;
	}
	return 0;
}

int common_symbolize(const struct common_args *a, struct profile *p)
{
	if (a->no_symbolize)
		return 0;
	struct sym_options so;
	symbolize_options_init(&so);
	so.binary = a->binary;
	so.lib_prefix = (const char *const *)a->lib_prefix;
	so.sysroot = a->sysroot;
	so.debug_root = a->debug_dir;
	if (a->no_demangle)
		so.demangle = 0;
	if (a->no_inlines)
		so.inlines = 0;
	/* top and collapsed at function granularity print names only: skip the line tables (a
	   third of the symbolizer's time) unless --focus/--ignore, which match file:line too. */
	if (a->gran == GRAN_FUNCTIONS && !a->focus && !a->ignore && a->cmd &&
	    (strcmp(a->cmd, "top") == 0 || strcmp(a->cmd, "collapsed") == 0))
		so.no_lines = 1;
	progress_step("symbolizing");
	int rc = symbolize_profile(p, &so) == 0 ? 0 : 1;
	progress_step(NULL);
	if (rc == 0)
		symhint_print(p);
	return rc;
}

/* Bytes as a short human figure. */
static void fmt_bytes_short(double v, char *buf, size_t cap)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	int u = 0;
	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	snprintf(buf, cap, u ? "%.1f %s" : "%.0f %s", v, units[u]);
}

int common_losses_text(const struct profile *p, char *buf, size_t cap)
{
	const struct prof_losses *l = &p->losses;
	buf[0] = 0;
	if (!l->known || (l->dropped_samples == 0 && l->truncated_samples == 0 && l->recycled_bytes == 0 &&
	                  l->recycled_objs == 0))
		return 0;
	double live = 0;
	for (size_t i = 0; i < p->nsamples; i++)
		live += p->samples[i].v[PV_INUSE_BYTES];
	size_t n = 0;
	char b[32];
	if (l->dropped_samples) {
		fmt_bytes_short((double)l->dropped_bytes, b, sizeof b);
		double share = live + (double)l->dropped_bytes > 0
		                       ? 100.0 * (double)l->dropped_bytes / (live + (double)l->dropped_bytes)
		                       : 0;
		n += (size_t)snprintf(buf + n, cap - n,
		                      "%llu of %llu samples dropped by the collector (~%s when allocated, "
		                      "up to %.1f%% of the bytes; raise or unset prof_max_live/prof_max_stacks)",
		                      (unsigned long long)l->dropped_samples, (unsigned long long)l->samples,
		                      b, share);
	}
	if (l->truncated_samples && n < cap) {
		fmt_bytes_short((double)l->truncated_bytes, b, sizeof b);
		n += (size_t)snprintf(buf + n, cap - n,
		                      "%s%llu of %llu samples had stacks cut at prof_bt_max (%.1f%% of samples, "
		                      "~%s when allocated; their outer callers show as heaptap_truncated_stack)",
		                      n ? "; " : "", (unsigned long long)l->truncated_samples,
		                      (unsigned long long)l->samples,
		                      l->samples ? 100.0 * (double)l->truncated_samples / (double)l->samples : 0,
		                      b);
	}
	if ((l->recycled_bytes || l->recycled_objs) && n < cap) {
		double alloc = 0;
		for (size_t i = 0; i < p->nsamples; i++)
			alloc += p->samples[i].v[PV_ALLOC_BYTES];
		double rb = (double)l->recycled_bytes;
		fmt_bytes_short(rb, b, sizeof b);
		n += (size_t)snprintf(buf + n, cap - n,
		                      "%s%llu objects (%s, %.1f%% of the window's allocated bytes) were "
		                      "allocated from %llu stacks the collector recycled during the delta "
		                      "window: they are in no stack of this profile",
		                      n ? "; " : "", (unsigned long long)l->recycled_objs, b,
		                      alloc + rb > 0 ? 100.0 * rb / (alloc + rb) : 0,
		                      (unsigned long long)l->recycled_stacks);
	}
	return n > 0;
}

void common_warn_losses(const struct profile *p)
{
	char line[1024];
	if (common_losses_text(p, line, sizeof line))
		fprintf(stderr, "heaptap: warning: %s\n", line);
}


int common_check_same_kind(const struct profile *a, const char *apath, const struct profile *b,
                           const char *bpath)
{
	if (a->cpu == b->cpu)
		return 0;
	fprintf(stderr, "heaptap: %s: is a %s profile and %s a %s profile: CPU time and heap memory "
	                "cannot be summed or compared\n",
	        bpath, b->cpu ? "CPU" : "heap", apath, a->cpu ? "CPU" : "heap");
	return 1;
}

int common_is_cpu(void)
{
	return cpu_units;
}

char *common_fmt_time(double ns, int sign, char *buf, size_t cap)
{
	const char *s = sign ? (ns < 0 ? "-" : "+") : (ns < 0 ? "-" : "");
	double v = fabs(ns);
	if (v >= 1e9)
		snprintf(buf, cap, "%s%.2f s", s, v / 1e9);
	else
		snprintf(buf, cap, "%s%.1f ms", s, v / 1e6);
	return buf;
}

int common_load(const struct common_args *a, struct profile *p, int with_base)
{
	if (a->nprofiles == 0)
		return common_usage_error(a, "no profile given");
	if (common_read(a, a->profiles[0], p))
		return 1;
	for (size_t k = 1; k < a->nprofiles; k++) {
		struct profile q;
		profile_init(&q);
		if (common_read(a, a->profiles[k], &q) ||
		    common_check_same_kind(p, a->profiles[0], &q, a->profiles[k])) {
			profile_release(&q);
			return 1;
		}
		profile_merge(p, &q, 1.0);
		profile_release(&q);
	}
	if (with_base && a->base) {
		struct profile b;
		profile_init(&b);
		if (common_read(a, a->base, &b) || common_check_same_kind(p, a->profiles[0], &b, a->base)) {
			profile_release(&b);
			return 1;
		}
		profile_merge(p, &b, -1.0);
		profile_release(&b);
		profile_compact(p);
		if (a->drop_negative)
			for (size_t i = 0; i < p->nsamples; i++)
				for (int k = 0; k < PV_COUNT; k++)
					if (p->samples[i].v[k] < 0)
						p->samples[i].v[k] = 0;
	}
	if ((a->value_index == PV_ALLOC_BYTES || a->value_index == PV_ALLOC_OBJS) && !p->has_alloc)
		fprintf(stderr, "heaptap: warning: %s carries no allocation totals, so %s is 0 "
		                "(record them with prof_accum:true)\n", a->profiles[0], common_value_name(a->value_index));
	common_warn_losses(p);
	cpu_units = p->cpu;
	return common_symbolize(a, p);
}

int common_is_space(const struct common_args *a)
{
	return a->value_index == PV_INUSE_BYTES || a->value_index == PV_ALLOC_BYTES;
}

const char *common_unit(const struct common_args *a)
{
	if (cpu_units)
		return common_is_space(a) ? "s" : "samples";
	if (!common_is_space(a))
		return "objects";
	return a->show_bytes ? "B" : "MB";
}

char *common_fmt_value(const struct common_args *a, double v, char *buf, size_t cap)
{
	if (cpu_units && common_is_space(a))
		snprintf(buf, cap, "%.2f", v / 1e9); /* CPU nanoseconds as seconds */
	else if (common_is_space(a) && !a->show_bytes)
		snprintf(buf, cap, "%.1f", v / 1048576.0);
	else
		snprintf(buf, cap, "%lld", common_sat_ll(v));
	return buf;
}

long long common_sat_ll(double v)
{
	/* 2^63 is exact as a double; LLONG_MAX is not (it rounds up to 2^63). */
	if (v != v)
		return 0;
	if (v >= 9223372036854775808.0)
		return LLONG_MAX;
	if (v <= -9223372036854775808.0)
		return LLONG_MIN;
	return (long long)v;
}

char *common_fmt_percent(double v, double total, char *buf, size_t cap)
{
	if (total == 0) {
		if (v == 0)
			snprintf(buf, cap, "nan");
		else
			snprintf(buf, cap, v < 0 ? "-inf" : "+inf");
	} else {
		snprintf(buf, cap, "%.1f%%", v * 100.0 / total);
	}
	return buf;
}

