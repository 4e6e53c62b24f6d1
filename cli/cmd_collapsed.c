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

struct folded {
	char *path;
	double before, after; /* after holds the value when there is no base */
};

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

static int cmp_folded(const void *x, const void *y)
{
	return strcmp(((const struct folded *)x)->path, ((const struct folded *)y)->path);
}

/* Appends the traces of s to *arr as joined paths with their value in before or after. */
static int add_paths(struct folded **arr, size_t *n, size_t *cap, const struct stacks *s, int as_before)
{
	size_t bcap = 256;
	char *buf = malloc(bcap);
	if (!buf)
		return -1;
	for (size_t t = 0; t < s->ntraces; t++) {
		const struct stacks_trace *tr = &s->traces[t];
		size_t len = 0;
		for (uint32_t f = 0; f < tr->nframes; f++) {
			const char *nm = s->names[tr->frames[f]].name;
			size_t l = strlen(nm);
			if (len + l + 2 > bcap) {
				bcap = (len + l + 2) * 2;
				char *nb = realloc(buf, bcap);
				if (!nb) {
					free(buf);
					return -1;
				}
				buf = nb;
			}
			if (f)
				buf[len++] = ';';
			/* ';' separates frames and cannot be escaped: replace it inside names. */
			for (size_t i = 0; i < l; i++)
				buf[len++] = nm[i] == ';' ? ',' : nm[i];
		}
		buf[len] = '\0';
		if (*n == *cap) {
			*cap = *cap ? *cap * 2 : 256;
			struct folded *na = realloc(*arr, *cap * sizeof(**arr));
			if (!na) {
				free(buf);
				return -1;
			}
			*arr = na;
		}
		struct folded *fo = &(*arr)[(*n)++];
		fo->path = strdup(buf);
		if (!fo->path) {
			free(buf);
			return -1;
		}
		fo->before = as_before ? tr->value : 0;
		fo->after = as_before ? 0 : tr->value;
	}
	free(buf);
	return 0;
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
	if (rc >= 0) {
		common_args_release(&a);
		return rc;
	}
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
	if (rc == 0) {
		struct stacks s;
		if (build(&a, &p, &s))
			rc = 1;
		else {
			if (add_paths(&arr, &n, &cap, &s, 0))
				rc = 1;
			stacks_release(&s);
		}
		if (rc == 0 && separate) {
			if (build(&a, &b, &s))
				rc = 1;
			else {
				if (add_paths(&arr, &n, &cap, &s, 1))
					rc = 1;
				stacks_release(&s);
			}
		}
		if (rc)
			fprintf(stderr, "heaptap: collapsed: out of memory\n");
	}
	if (rc == 0) {
		if (n > 0) /* arr is NULL when no stack has a value */
			qsort(arr, n, sizeof(*arr), cmp_folded);
		size_t dropped = 0;
		double dropped_sum = 0;
		for (size_t i = 0; i < n;) {
			size_t j = i + 1;
			double before = arr[i].before, after = arr[i].after;
			while (j < n && strcmp(arr[j].path, arr[i].path) == 0) {
				before += arr[j].before;
				after += arr[j].after;
				j++;
			}
			long long bi = (long long)before, ai = (long long)after;
			if (separate) {
				if (bi < 0)
					bi = 0;
				if (ai < 0)
					ai = 0;
				if (bi || ai)
					printf("%s %lld %lld\n", arr[i].path, bi, ai);
			} else if (ai < 0 && neg == NEG_DROP) {
				dropped++;
				dropped_sum += after;
			} else {
				if (ai < 0)
					ai = -ai;
				if (ai)
					printf("%s %lld\n", arr[i].path, ai);
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
	for (size_t i = 0; i < n; i++)
		free(arr[i].path);
	free(arr);
	profile_release(&b);
	profile_release(&p);
	common_args_release(&a);
	return rc;
}
