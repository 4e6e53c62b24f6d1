/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cmd_collapsed.c - `heaptap collapsed`: folded stacks ("root;...;leaf N", FORMATS.md §9.1) for
 * flamegraph.pl, speedscope, inferno and heaptap's own flame graph. Unlike jeprof --collapsed,
 * the names are clean (no nm <addr> tags), identical name paths are merged, counts are
 * integers and never negative (--negative decides what happens to shrinking stacks).
 * It parses options and loads; the folding is render/folded.c's.
 */
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "common.h"
#include "views.h"

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
	if (rc == 0)
		rc = views_folded(stdout, &a, &p, separate ? &b : NULL, neg == NEG_ABS ? FOLDED_NEG_ABS : FOLDED_NEG_DROP);
	profile_release(&b);
	profile_release(&p);
	common_args_release(&a);
	return rc;
}
