/*
 * api.c - the public C API of include/heaptap.h (except heaptap_http_start, which lives
 * with the HTTP server): thin wrappers over collector.h that map its results to the
 * documented return values. No host malloc; none of it is async-signal-safe.
 */
#include <errno.h>

#include "../base/outbuf.h"
#include "../include/heaptap.h"
#include "collector.h"

#define API __attribute__((visibility("default")))

API int heaptap_dump(const char *path)
{
	collector_init();
	if (!collector_enabled())
		return -ENOENT;
	if (path && !path[0])
		return -EINVAL;
	/* with path NULL and an empty prof_prefix there is no name to use: -EINVAL */
	if (path)
		return collector_dump_path(path) ? -EIO : 0;
	int rc = collector_dump_named(TRIG_MANUAL, NULL, 0);
	return rc == 0 || rc == -EINVAL ? rc : -EIO;
}

API int heaptap_set_active(int active)
{
	return collector_set_active(active);
}

API int heaptap_active(void)
{
	collector_init();
	return collector_active();
}

API int heaptap_reset(unsigned lg_sample)
{
	return collector_reset(lg_sample);
}

API long heaptap_stats_json(char *buf, size_t cap)
{
	if (!buf || cap == 0)
		return -ENOSPC;
	struct outbuf ob;
	outbuf_init(&ob, buf, cap - 1, -1);
	collector_stats_json(&ob);
	if (ob.truncated) {
		buf[0] = 0;
		return -ENOSPC;
	}
	buf[ob.len] = 0;
	return (long)ob.len;
}

API const char *heaptap_version(void)
{
	return HEAPTAP_VERSION;
}
