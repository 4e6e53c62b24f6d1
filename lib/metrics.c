/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * metrics.c - the Prometheus exposition of metrics.h, written straight into an outbuf: one
 * HELP and one TYPE line per family, then its samples. Counters end in _total, sizes are in
 * bytes, as Prometheus's naming conventions ask. No host malloc.
 */
#include "metrics.h"

#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "core.h"
#include "cpuprof.h"
#include "dump.h"
#include "http_delta.h"
#include "procinfo.h"
#include "push.h"
#include "sys.h"
#include "threads.h"
#include "trigger.h"

static void family(struct outbuf *ob, const char *name, const char *type, const char *help)
{
	outbuf_puts(ob, "# HELP ");
	outbuf_puts(ob, name);
	outbuf_putc(ob, ' ');
	outbuf_puts(ob, help);
	outbuf_puts(ob, "\n# TYPE ");
	outbuf_puts(ob, name);
	outbuf_putc(ob, ' ');
	outbuf_puts(ob, type);
	outbuf_putc(ob, '\n');
}

/* name{label="value"} v; label NULL for none. Label values here never need escaping. */
static void sample(struct outbuf *ob, const char *name, const char *label, const char *value, uint64_t v)
{
	outbuf_puts(ob, name);
	if (label) {
		outbuf_putc(ob, '{');
		outbuf_puts(ob, label);
		outbuf_puts(ob, "=\"");
		outbuf_puts(ob, value);
		outbuf_puts(ob, "\"}");
	}
	outbuf_putc(ob, ' ');
	outbuf_u64(ob, v);
	outbuf_putc(ob, '\n');
}

static void one(struct outbuf *ob, const char *name, const char *type, const char *help, uint64_t v)
{
	family(ob, name, type, help);
	sample(ob, name, NULL, NULL, v);
}

/* Parses the first number of a small file; 0 when absent (or "max"). */
static int read_u64_file(const char *path, uint64_t *out)
{
	char buf[64];
	long n = sys_read_small(path, buf, sizeof buf);
	if (n <= 0 || buf[0] < '0' || buf[0] > '9')
		return -1;
	uint64_t v = 0;
	for (long i = 0; i < n && buf[i] >= '0' && buf[i] <= '9'; i++)
		v = v * 10 + (uint64_t)(buf[i] - '0');
	*out = v;
	return 0;
}

/* The process's own memory: /proc/self/statm (pages) and its cgroup's files. */
static void process_memory(struct outbuf *ob)
{
	char buf[256];
	long n = sys_read_small("/proc/self/statm", buf, sizeof buf);
	if (n > 0) {
		uint64_t f[2] = {0, 0};
		long i = 0;
		for (int k = 0; k < 2; k++) {
			while (i < n && (buf[i] < '0' || buf[i] > '9'))
				i++;
			while (i < n && buf[i] >= '0' && buf[i] <= '9')
				f[k] = f[k] * 10 + (uint64_t)(buf[i++] - '0');
		}
		uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
		one(ob, "process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.", f[0] * page);
		one(ob, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.", f[1] * page);
	}
	const struct procinfo *pi = procinfo_get();
	if (!pi->cgroup[0])
		return;
	/* cgroup v2 under /sys/fs/cgroup, v1's memory controller under /sys/fs/cgroup/memory */
	static const char *const roots[2] = {"/sys/fs/cgroup", "/sys/fs/cgroup/memory"};
	static const char *const usage[2] = {"/memory.current", "/memory.usage_in_bytes"};
	static const char *const limit[2] = {"/memory.max", "/memory.limit_in_bytes"};
	for (int v = 0; v < 2; v++) {
		char path[1024];
		struct outbuf pb;
		uint64_t use, lim;
		outbuf_init(&pb, path, sizeof path - 64, -1);
		outbuf_puts(&pb, roots[v]);
		outbuf_puts(&pb, strcmp(pi->cgroup, "/") == 0 ? "" : pi->cgroup);
		size_t base = pb.len;
		outbuf_puts(&pb, usage[v]);
		path[pb.len] = 0;
		if (read_u64_file(path, &use) != 0)
			continue;
		one(ob, "heaptap_cgroup_memory_bytes", "gauge",
		    "Memory charged to the process's cgroup (memory.current, or v1's usage_in_bytes).", use);
		pb.len = base;
		outbuf_puts(&pb, limit[v]);
		path[pb.len] = 0;
		if (read_u64_file(path, &lim) == 0 && lim < ((uint64_t)1 << 62))
			one(ob, "heaptap_cgroup_memory_limit_bytes", "gauge",
			    "Memory limit of the process's cgroup (absent when unlimited).", lim);
		return;
	}
}

void metrics_write(struct outbuf *ob)
{
	core_init();
	tstate_enter();
	struct threads_sum ts;
	threads_sum(&ts);
	core_lock_tables();
	uint64_t samples = core.samples;
	uint64_t live_bytes = core.live_bytes_fp, peak_bytes = core.peak_bytes_fp;
	uint64_t live_samples = core.live_samples;
	uint64_t nstacks = stacktab_count(&core.stacks);
	uint64_t drop_stack = core.dropped_stacks, drop_live = core.dropped_live;
	core_unlock_tables();
	struct dump_counts dc;
	dump_get_counts(&dc);
	struct push_counts pc;
	push_get_counts(&pc);

	one(ob, "heaptap_heap_live_bytes", "gauge",
	    "Estimated bytes of live heap objects (unbiased from the sampled ones).", live_bytes);
	one(ob, "heaptap_heap_peak_bytes", "gauge", "Highest heaptap_heap_live_bytes since start or reset.",
	    peak_bytes);
	one(ob, "heaptap_allocated_bytes_total", "counter", "Bytes requested from the allocator since start.",
	    ts.nbytes);
	one(ob, "heaptap_samples_total", "counter", "Allocations sampled since start.", samples);
	one(ob, "heaptap_live_samples", "gauge", "Sampled allocations still live.", live_samples);
	one(ob, "heaptap_stacks", "gauge", "Distinct call stacks in the stack table.", nstacks);
	one(ob, "heaptap_sample_period_bytes", "gauge", "Mean bytes between two samples (2^lg_prof_sample).",
	    __atomic_load_n(&core.period, __ATOMIC_RELAXED));
	family(ob, "heaptap_dropped_samples_total", "counter",
	       "Sampled allocations not recorded because a table was full, by table.");
	sample(ob, "heaptap_dropped_samples_total", "reason", "stack_table_full", drop_stack);
	sample(ob, "heaptap_dropped_samples_total", "reason", "live_table_full", drop_live);
	family(ob, "heaptap_dumps_total", "counter", "Profiles dumped to files, by trigger.");
	for (int i = 0; i < TRIG_COUNT; i++)
		sample(ob, "heaptap_dumps_total", "kind", trigger_table[i].name, dc.ok[i]);
	family(ob, "heaptap_dump_errors_total", "counter", "Dumps that failed, by trigger.");
	for (int i = 0; i < TRIG_COUNT; i++)
		sample(ob, "heaptap_dump_errors_total", "kind", trigger_table[i].name, dc.failed[i]);
	one(ob, "heaptap_pushes_total", "counter", "Profiles the push backend accepted.", pc.pushed);
	one(ob, "heaptap_push_errors_total", "counter",
	    "Failed push attempts (no connection, timeout, or a status other than 2xx).", pc.errors);
	one(ob, "heaptap_push_dropped_total", "counter",
	    "Profiles never delivered: the queue was full, the retries ran out, or the backend refused them.",
	    pc.dropped);
	one(ob, "heaptap_push_queue_profiles", "gauge", "Profiles waiting to be pushed.", pc.queued);
	one(ob, "heaptap_delta_windows", "gauge", "Delta profiles (?seconds=N) being collected now.",
	    http_delta_open());
	struct cpuprof_stats cs;
	cpuprof_get_stats(&cs);
	one(ob, "heaptap_cpu_samples_total", "counter", "CPU profiler samples taken since start.",
	    cs.sampler.taken);
	family(ob, "heaptap_cpu_samples_lost_total", "counter", "CPU profiler samples lost, by cause.");
	sample(ob, "heaptap_cpu_samples_lost_total", "reason", "buffer_full", cs.sampler.lost_full);
	sample(ob, "heaptap_cpu_samples_lost_total", "reason", "in_heaptap", cs.sampler.lost_inside);
	one(ob, "heaptap_cpu_unwind_failed_total", "counter",
	    "CPU samples whose stack could not be unwound (only the interrupted pc kept).",
	    cs.sampler.unwind_leaf);
	one(ob, "heaptap_cpu_threads_armed", "gauge", "Threads with a CPU-time timer now.", cs.sampler.armed);
	one(ob, "heaptap_cpu_profiles_written_total", "counter", "CPU profiles written (files and HTTP).",
	    cs.written);
	one(ob, "heaptap_cpu_profile_write_errors_total", "counter", "CPU profiles that could not be written.",
	    cs.write_failed);
	process_memory(ob);
	tstate_leave();
}
