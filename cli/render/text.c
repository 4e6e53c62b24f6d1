/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * text.c - renders jeprof's --text layout from display stacks (see text.h). Only formatting:
 * the numbers come from stacks.c, the units and percent rules from common.c.
 */
#include "text.h"

#include <stdlib.h>

int text_write_top(FILE *f, const struct common_args *a, const struct stacks *s, long max_rows)
{
	char v1[64], p1[32], p2[32], v2[64], p3[32];
	if (s->total != 0)
		fprintf(f, "Total: %s %s\n", common_fmt_value(a, s->total, v1, sizeof(v1)), common_unit(a));
	size_t n;
	uint32_t *ids = stacks_sorted(s, a->cum_sort, &n);
	double running = 0, tot = s->kept_total;
	for (size_t i = 0; i < n && (max_rows < 0 || (long)i < max_rows); i++) {
		const struct stacks_name *nm = &s->names[ids[i]];
		running += nm->flat;
		fprintf(f, "%8s %6s %6s %8s %6s %s\n", common_fmt_value(a, nm->flat, v1, sizeof(v1)),
		        common_fmt_percent(nm->flat, tot, p1, sizeof(p1)),
		        common_fmt_percent(running, tot, p2, sizeof(p2)),
		        common_fmt_value(a, nm->cum, v2, sizeof(v2)), common_fmt_percent(nm->cum, tot, p3, sizeof(p3)),
		        nm->name);
	}
	free(ids);
	return ferror(f) ? -1 : 0;
}
