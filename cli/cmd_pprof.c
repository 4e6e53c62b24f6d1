/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cmd_pprof.c - `heaptap pprof`: converts any profile heaptap reads (heap_v2, legacy text,
 * jeprof --raw, pprof) into a symbolized, gzipped pprof profile.proto that `go tool pprof`
 * shows with function names and file:line without symbolizing again. Several profiles are
 * summed and --base subtracted, as in every command. It only loads and hands over: the
 * encoding is render/pprof_export.c's.
 */
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "common.h"
#include "views.h"

enum { X_NO_GZIP = 1 };

static const struct common_opt pprof_opts[] = {
	{ "no-gzip", 0, X_NO_GZIP },
	{ NULL, 0, 0 },
};

static const char pprof_help[] =
	"usage: heaptap pprof [options] [BINARY] PROFILE... -o OUT.pb.gz\n"
	"Writes the profile(s) as a symbolized pprof protobuf for `go tool pprof`: functions,\n"
	"file:line and inline frames included, mappings marked symbolized, values unsampled.\n"
	"Sample types alloc_objects, alloc_space, inuse_objects, inuse_space (the last two only\n"
	"when the input has no alloc data); period_type space/bytes.\n"
	"  -o FILE, --output=FILE   where to write (required; '-' for stdout)\n"
	"  --no-gzip                write the protobuf uncompressed\n";

static int handle(void *ctx, int id, const char *v)
{
	(void)v;
	if (id == X_NO_GZIP)
		*(int *)ctx = 0;
	return 0;
}

int cmd_pprof(int argc, char **argv)
{
	struct common_args a;
	int gzip = 1;
	struct common_extra ex = { pprof_opts, handle, &gzip, pprof_help, 0 };
	int rc = common_parse(&a, argc, argv, &ex);
	if (rc >= 0)
		return rc;
	if (!a.output) {
		rc = common_usage_error(&a, "an output file is required (-o OUT.pb.gz)");
		common_args_release(&a);
		return rc;
	}
	struct profile p;
	profile_init(&p);
	rc = common_load(&a, &p, 1);
	if (rc == 0)
		rc = views_pprof(a.output, &a, &p, gzip);
	profile_release(&p);
	common_args_release(&a);
	return rc;
}
