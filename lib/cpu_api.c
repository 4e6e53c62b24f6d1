/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cpu_api.c - the CPU profiler's part of the public C API (include/heaptap.h): start, stop and
 * write the run profile (cpuprof.h). Thin wrappers; no host malloc; not async-signal-safe.
 */
#include <errno.h>

#include "../include/heaptap.h"
#include "attrs.h"
#include "cpuprof.h"
#include "lifecycle.h"

HEAPTAP_EXPORT int heaptap_cpu_start(void)
{
	lifecycle_init();
	return cpuprof_run_start();
}

HEAPTAP_EXPORT int heaptap_cpu_stop(void)
{
	lifecycle_init();
	return cpuprof_run_stop();
}

HEAPTAP_EXPORT int heaptap_cpu_write(const char *path)
{
	lifecycle_init();
	if (!path || !path[0])
		return -EINVAL;
	int rc = cpuprof_run_write(path);
	return rc == 0 || rc == -ENOENT ? rc : -EIO;
}
