/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cmd_diff.c - `heaptap diff --base OLD NEW`: what grew and what shrank between two profiles,
 * one row per function (or line, file) with old, new, delta and delta%, largest change
 * first. `--text` prints jeprof's signed --text layout of NEW minus OLD instead.
 * Loading is common.c's and naming stacks.c's; this file only pairs names and prints.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "common.h"
#include "render/text.h"
#include "stacks.h"

enum { X_TEXT = 1 };

static const char diff_help[] =
	"usage: heaptap diff [options] --base=OLD [BINARY] NEW...\n"
	"Shows what grew and what shrank from OLD to NEW (several NEW profiles are summed): one row\n"
	"per function with the old and new value, the delta and the delta relative to old, sorted by\n"
	"the size of the change. Names whose value did not change are left out.\n"
	"  --cum                  compare cumulative values instead of flat (self) values\n"
	"  --nodecount=N          print at most N rows\n"
	"  --text                 jeprof --text layout of NEW minus OLD (signed values)\n";

struct row {
	const char *name;
	double before, after;
};

static int handle(void *ctx, int id, const char *v)
{
	if (id == X_TEXT)
		*(int *)ctx = 1;
	return 0;
}

static int cmp_rows(const void *x, const void *y)
{
	const struct row *a = x, *b = y;
	double da = fabs(a->after - a->before), db = fabs(b->after - b->before);
	if (da != db)
		return da > db ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* Values for people: bytes in B/KiB/MiB/GiB (one decimal above B) unless --show_bytes asks for
   exact bytes; objects as integers. */
static void fmt_val(const struct common_args *a, double v, char *buf, size_t cap)
{
	if (common_is_cpu() && common_is_space(a) && !a->show_bytes) {
		common_fmt_time(v, 0, buf, cap); /* CPU profiles: time, not bytes */
		return;
	}
	if (!common_is_space(a) || a->show_bytes) {
		common_fmt_value(a, v, buf, cap);
		return;
	}
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	int u = 0;
	while (fabs(v) >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, cap, "%lld B", (long long)v);
	else
		snprintf(buf, cap, "%.1f %s", v, units[u]);
}

static void fmt_signed(const struct common_args *a, double v, char *buf, size_t cap)
{
	if (cap < 2)
		return;
	buf[0] = v < 0 ? '-' : '+';
	fmt_val(a, fabs(v), buf + (v != 0), cap - 1);
}

static void fmt_delta_pct(double before, double after, char *buf, size_t cap)
{
	if (before == 0)
		snprintf(buf, cap, after == 0 ? "0.0%%" : "new");
	else
		snprintf(buf, cap, "%+.1f%%", (after - before) * 100.0 / fabs(before));
}

static double pick(const struct stacks_name *n, int cum)
{
	return cum ? n->cum : n->flat;
}

static int print_diff(const struct common_args *a, const struct stacks *sb, const struct stacks *sn)
{
	size_t cap = sb->nnames + sn->nnames + 1, n = 0;
	struct row *rows = calloc(cap, sizeof(*rows));
	if (!rows) {
		fprintf(stderr, "heaptap: diff: out of memory\n");
		return 1;
	}
	for (size_t i = 0; i < sn->nnames; i++) {
		long j = stacks_find(sb, sn->names[i].name);
		rows[n++] = (struct row){sn->names[i].name, j >= 0 ? pick(&sb->names[j], a->cum_sort) : 0,
		                         pick(&sn->names[i], a->cum_sort)};
	}
	for (size_t i = 0; i < sb->nnames; i++)
		if (stacks_find(sn, sb->names[i].name) < 0)
			rows[n++] = (struct row){sb->names[i].name, pick(&sb->names[i], a->cum_sort), 0};
	qsort(rows, n, sizeof(*rows), cmp_rows);

	char v1[64], v2[64], v3[64], pct[32];
	const char *unit = common_unit(a);
	fmt_val(a, sb->total, v1, sizeof(v1));
	fmt_val(a, sn->total, v2, sizeof(v2));
	fmt_signed(a, sn->total - sb->total, v3, sizeof(v3));
	fmt_delta_pct(sb->total, sn->total, pct, sizeof(pct));
	if (common_is_space(a) && !a->show_bytes) {
		/* the unit is part of every value */
		printf("Total: %s -> %s (%s, %s)\n", v1, v2, v3, pct);
		printf("%11s %11s %11s %8s  %s%s\n", "old", "new", "delta", "delta%", "name",
		       a->cum_sort ? " (cumulative)" : "");
	} else {
		printf("Total: %s %s -> %s %s (%s %s, %s)\n", v1, unit, v2, unit, v3, unit, pct);
		printf("%11s %11s %11s %8s  %s (%s%s)\n", "old", "new", "delta", "delta%", "name", unit,
		       a->cum_sort ? ", cumulative" : "");
	}
	long shown = 0;
	for (size_t i = 0; i < n; i++) {
		/* Unchanged, also when one side went through a format that truncates to whole numbers
		   (pprof's int64 values) and the other kept the estimate's fraction. */
		if (fabs(rows[i].after - rows[i].before) < 1)
			continue;
		if (a->nodecount >= 0 && shown >= a->nodecount)
			break;
		fmt_val(a, rows[i].before, v1, sizeof(v1));
		fmt_val(a, rows[i].after, v2, sizeof(v2));
		fmt_signed(a, rows[i].after - rows[i].before, v3, sizeof(v3));
		fmt_delta_pct(rows[i].before, rows[i].after, pct, sizeof(pct));
		printf("%11s %11s %11s %8s  %s\n", v1, v2, v3, pct, rows[i].name);
		shown++;
	}
	free(rows);
	return 0;
}

int cmd_diff(int argc, char **argv)
{
	int text = 0;
	static const struct common_opt opts[] = {{"text", 0, X_TEXT}, {NULL, 0, 0}};
	struct common_extra ex = {.opts = opts, .handle = handle, .ctx = &text, .help = diff_help};
	struct common_args a;
	int rc = common_parse(&a, argc, argv, &ex);
	if (rc >= 0)
		return rc;
	if (!a.base) {
		rc = common_usage_error(&a, "--base=OLD is required");
		common_args_release(&a);
		return rc;
	}
	if (common_redirect_stdout(&a)) {
		common_args_release(&a);
		return 1;
	}
	struct profile p, b;
	profile_init(&p);
	profile_init(&b);
	struct stacks_options so;
	stacks_options_from(&so, &a);
	if (!text)
		so.unresolved = STACKS_UNRESOLVED_MODULE; /* two runs: addresses differ, offsets do not */
	if (text) {
		rc = common_load(&a, &p, 1);
		if (rc == 0) {
			struct stacks s;
			if (stacks_build(&s, &p, &so)) {
				rc = 1;
			} else {
				text_write_top(stdout, &a, &s, a.nodecount);
				stacks_release(&s);
			}
		}
	} else {
		rc = common_load(&a, &p, 0);
		if (rc == 0)
			rc = common_read(&a, a.base, &b);
		if (rc == 0)
			rc = common_check_same_kind(&p, a.profiles[0], &b, a.base);
		if (rc == 0)
			rc = common_symbolize(&a, &b);
		if (rc == 0) {
			struct stacks sn, sb;
			if (stacks_build(&sn, &p, &so)) {
				rc = 1;
			} else {
				if (stacks_build(&sb, &b, &so)) {
					rc = 1;
				} else {
					rc = print_diff(&a, &sb, &sn);
					stacks_release(&sb);
				}
				stacks_release(&sn);
			}
		}
	}
	if (rc == 0 && fflush(stdout) != 0) {
		fprintf(stderr, "heaptap: diff: stdout: %s\n", strerror(errno));
		rc = 1;
	}
	profile_release(&b);
	profile_release(&p);
	common_args_release(&a);
	return rc;
}
