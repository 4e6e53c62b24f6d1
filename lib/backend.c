/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * backend.c - the choice of backend.h between heaptap's collector and the program's jemalloc
 * profiler, and the jemalloc backend's operations: dumps in every format through dump.c
 * (which then reads jemalloc's snapshots, jemalloc_dump.h), raw prof.dump files for the
 * exact-path and manual dumps, prof.active / prof.reset / prof.lg_sample through mallctl,
 * statistics from malloc_stats_print. No host malloc.
 */
#include "backend.h"

#include "collector.h"
#include "dump.h"
#include "jemalloc_backend.h"
#include "options.h"
#include "stats.h"

static const struct backend *chosen;
static int decided;

static int je_dump_manual(char *name, size_t cap)
{
	return jemalloc_backend_dump_manual(name, cap);
}

static int je_reset(unsigned lg_sample)
{
	if (lg_sample > 62)
		return -22; /* EINVAL */
	dump_lock(); /* not while a snapshot is read */
	int rc = jemalloc_backend_reset(lg_sample);
	dump_unlock();
	return rc;
}

static void je_stats_json(struct outbuf *ob)
{
	if (jemalloc_backend_stats_json(ob) != 0)
		stats_json(ob);
}

const struct backend jemalloc_backend = {
	.name = "jemalloc",
	.formats = DUMP_HEAPV2 | DUMP_PPROF | DUMP_LEGACY,
	.enabled = jemalloc_backend_enabled,
	.dump_fd = dump_fd,
	.dump_path = jemalloc_backend_dump,
	.dump_manual = je_dump_manual,
	.set_active = jemalloc_backend_set_active,
	.active = jemalloc_backend_active,
	.reset = je_reset,
	.lg_sample = jemalloc_backend_lg_sample,
	.stats_json = je_stats_json,
};

const struct backend *backend_get(void)
{
	const struct backend *b = __atomic_load_n(&chosen, __ATOMIC_ACQUIRE);
	return b ? b : &collector_backend;
}

void backend_choose(void)
{
	if (__atomic_exchange_n(&decided, 1, __ATOMIC_ACQ_REL))
		return;
	const struct options *o = options_get();
	if (jemalloc_backend_detect()) {
		collector_backend.set_active(0);
		dump_use_jemalloc();
		/* heaptap's prof_active drives jemalloc's switch (the advice for programs not always
		   profiled is prof:true,prof_active:false in their *MALLOC_CONF) */
		if (o->prof)
			jemalloc_backend_set_active(o->prof_active);
		__atomic_store_n(&chosen, &jemalloc_backend, __ATOMIC_RELEASE);
	} else {
		__atomic_store_n(&chosen, &collector_backend, __ATOMIC_RELEASE);
	}
	if (o->prof)
		jemalloc_backend_explain();
}
