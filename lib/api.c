/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * api.c - the public C API of include/heaptap.h: thin wrappers that start the collector if
 * its constructor has not run yet (lifecycle_init) and map the results of the profiler in
 * use (backend.h: heaptap's own, or the program's jemalloc) to the documented return values. No host malloc; none of it is
 * async-signal-safe.
 */
#include <errno.h>

#include "../base/outbuf.h"
#include "../include/heaptap.h"
#include "attrs.h"
#include "backend.h"
#include "collector.h"
#include "dump.h"
#include "lifecycle.h"
#include "stats.h"

HEAPTAP_EXPORT int heaptap_dump(const char *path)
{
	lifecycle_init();
	if (!backend_get()->enabled())
		return -ENOENT;
	if (path && !path[0])
		return -EINVAL;
	/* with path NULL and an empty prof_prefix there is no name to use: -EINVAL */
	if (path)
		return dump_path(path) ? -EIO : 0;
	int rc = dump_named(TRIG_MANUAL, NULL, 0);
	return rc == 0 || rc == -EINVAL ? rc : -EIO;
}

HEAPTAP_EXPORT int heaptap_set_active(int active)
{
	lifecycle_init();
	return backend_get()->set_active(active);
}

HEAPTAP_EXPORT int heaptap_active(void)
{
	lifecycle_init();
	return backend_get()->active();
}

HEAPTAP_EXPORT int heaptap_reset(unsigned lg_sample)
{
	lifecycle_init();
	return backend_get()->reset(lg_sample);
}

HEAPTAP_EXPORT long heaptap_stats_json(char *buf, size_t cap)
{
	if (!buf || cap == 0)
		return -ENOSPC;
	lifecycle_init();
	struct outbuf ob;
	outbuf_init(&ob, buf, cap - 1, -1);
	stats_json(&ob);
	if (ob.truncated) {
		buf[0] = 0;
		return -ENOSPC;
	}
	buf[ob.len] = 0;
	return (long)ob.len;
}

HEAPTAP_EXPORT int heaptap_http_start(const char *addr)
{
	lifecycle_init();
	return lifecycle_http_start(addr);
}

HEAPTAP_EXPORT const char *heaptap_version(void)
{
	return HEAPTAP_VERSION;
}
