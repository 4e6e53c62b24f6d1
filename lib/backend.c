/*
 * backend.c - the choice of backend.h between heaptap's collector and jemalloc's profiler.
 */
#include "backend.h"

#include "collector.h"
#include "jemalloc_backend.h"

static const struct backend *chosen;
static int decided;

const struct backend *backend_get(void)
{
	const struct backend *b = __atomic_load_n(&chosen, __ATOMIC_ACQUIRE);
	return b ? b : &collector_backend;
}

void backend_choose(void)
{
	if (__atomic_exchange_n(&decided, 1, __ATOMIC_ACQ_REL))
		return;
	if (jemalloc_backend_detect()) {
		collector_backend.set_active(0);
		__atomic_store_n(&chosen, &jemalloc_backend, __ATOMIC_RELEASE);
	} else {
		__atomic_store_n(&chosen, &collector_backend, __ATOMIC_RELEASE);
	}
}
