/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * collector.c - heaptap's own profiler as one set of operations (collector.h): thin calls
 * down into the sampling core (core.c), the dump writer (dump.c) and the statistics
 * (stats.c), and the backend instance made of them. No host malloc.
 */
#include "collector.h"

#include <errno.h>

#include "core.h"
#include "dump.h"
#include "stats.h"

int collector_enabled(void)
{
	core_init();
	return core.enabled;
}

int collector_dump_manual(char *name, size_t cap)
{
	if (name && cap)
		name[0] = 0;
	return dump_named(TRIG_MANUAL, name, cap);
}

int collector_set_active(int on)
{
	core_init();
	return core_set_active(on);
}

int collector_active(void)
{
	core_init();
	return core_active();
}

int collector_lg_sample(void)
{
	core_init();
	return (int)core_lg_sample();
}

int collector_reset(unsigned lg_sample)
{
	core_init();
	if (lg_sample > 62)
		return -EINVAL;
	tstate_enter();
	dump_lock(); /* a dump must not read the tables while they are cleared */
	int rc = core_reset_tables(lg_sample);
	dump_unlock();
	tstate_leave();
	return rc;
}

const struct backend collector_backend = {
	.name = "heaptap",
	.formats = DUMP_HEAPV2 | DUMP_PPROF | DUMP_LEGACY,
	.enabled = collector_enabled,
	.dump_fd = dump_fd,
	.dump_path = dump_path,
	.dump_manual = collector_dump_manual,
	.set_active = collector_set_active,
	.active = collector_active,
	.reset = collector_reset,
	.lg_sample = collector_lg_sample,
	.stats_json = stats_json,
};
