/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * stats.c - the statistics JSON of stats.h, written with the jsonw emitter. No host malloc.
 */
#include "stats.h"
#include "sys.h"

#include <unistd.h>

#include "../base/jsonw.h"
#include "../include/heaptap.h"
#include "cfi.h"
#include "core.h"
#include "cpuprof.h"
#include "dump.h"
#include "dumpfmt.h"
#include "http_server.h"
#include "memacct.h"
#include "memwatch.h"
#include "peakprof.h"
#include "options.h"
#include "real.h"
#include "maps.h"
#include "sampzone.h"
#include "threads.h"
#include "trigger.h"

static const char *const fn_names[FN_COUNT] = {
	"malloc", "free", "calloc", "realloc", "reallocarray", "posix_memalign",
	"aligned_alloc", "memalign", "valloc", "pvalloc", "malloc_usable_size", "new", "delete",
};

static void options_json(struct jsonw *w)
{
	const struct options *o = options_get();
	char fmt[32];
	struct outbuf fb;
	outbuf_init(&fb, fmt, sizeof fmt - 1, -1);
	for (size_t i = 0; i < DUMPFMT_COUNT; i++) {
		if (!(o->prof_format & dumpfmt_table[i].bit))
			continue;
		if (fb.len)
			outbuf_putc(&fb, '+');
		outbuf_puts(&fb, dumpfmt_table[i].name);
	}
	fmt[fb.len] = 0;
	jsonw_object_begin(w, "options");
	jsonw_bool(w, "prof", o->prof);
	jsonw_bool(w, "prof_active", o->prof_active);
	jsonw_u64(w, "lg_prof_sample", o->lg_prof_sample);
	jsonw_i64(w, "lg_prof_interval", o->lg_prof_interval);
	jsonw_bool(w, "prof_gdump", o->prof_gdump);
	jsonw_u64(w, "prof_gdump_rate_ms", o->prof_gdump_rate_ms);
	jsonw_bool(w, "prof_final", o->prof_final);
	jsonw_bool(w, "prof_leak", o->prof_leak);
	jsonw_bool(w, "prof_leak_error", o->prof_leak_error);
	jsonw_bool(w, "prof_accum", o->prof_accum);
	jsonw_str(w, "prof_prefix", o->prof_prefix);
	jsonw_u64(w, "prof_time_interval_ms", o->prof_time_interval_ms);
	jsonw_u64(w, "prof_signal", (uint64_t)o->prof_signal);
	jsonw_u64(w, "prof_max_dumps", o->prof_max_dumps);
	jsonw_str(w, "prof_format", fmt);
	jsonw_str(w, "prof_unwind", options_unwind_name(o->prof_unwind));
	jsonw_u64(w, "prof_bt_max", o->prof_bt_max);
	jsonw_u64(w, "prof_max_stacks", o->prof_max_stacks);
	jsonw_u64(w, "prof_max_live", o->prof_max_live);
	jsonw_str(w, "http", o->http);
	jsonw_bool(w, "verbose", o->verbose);
	jsonw_bool(w, "stats_exact", o->stats_exact);
	jsonw_u64(w, "prof_dump_mode", o->prof_dump_mode);
	jsonw_bool(w, "prof_oom", o->prof_oom);
	outbuf_init(&fb, fmt, sizeof fmt - 1, -1);
	for (unsigned i = 0; i < o->prof_oom_nat; i++) {
		if (i)
			outbuf_putc(&fb, '+');
		outbuf_u64(&fb, o->prof_oom_at[i]);
	}
	fmt[fb.len] = 0;
	jsonw_str(w, "prof_oom_at", fmt);
	jsonw_u64(w, "prof_oom_cooldown_ms", o->prof_oom_cooldown_ms);
	jsonw_u64(w, "prof_mem_limit", o->prof_mem_limit);
	jsonw_str(w, "mem_cgroup", o->mem_cgroup);
	jsonw_bool(w, "prof_peak", o->prof_peak);
	jsonw_object_end(w);
}

void stats_json(struct outbuf *ob)
{
	core_init();
	tstate_enter(); /* no sampling (and no table lock) from a signal handler meanwhile */
	struct threads_sum ts;
	threads_sum(&ts);

	core_lock_tables();
	uint64_t samples = core.samples;
	uint64_t live_samples = core.live_samples;
	uint64_t live_bytes = core.live_bytes_fp;
	uint64_t peak_bytes = core.peak_bytes_fp;
	uint64_t nstacks = stacktab_count(&core.stacks);
	uint64_t queued = core.stacks.queued, recycled = core.stacks.recycled;
	uint64_t drop_stack = core.dropped_stacks;
	uint64_t drop_live = core.dropped_live;
	uint64_t drop_bytes = core.dropped_bytes_fp;
	uint64_t trunc = core.truncated_samples, trunc_bytes = core.truncated_bytes_fp;
	uint64_t unwind_failed = core.unwind_failed;
	uint64_t moved = core.moved_stacks;
	/* the collector's own memory: address space mapped for the tables (the filter included),
	   and the part holding entries */
	uint64_t tables = stacktab_bytes(&core.stacks) + livetab_bytes(&core.live);
	uint64_t mapped = tables + sizeof livetab_filter + sizeof livetab_gran;
	uint64_t used = tables;
	uint64_t peak_copies, peak_skipped;
	peakprof_counts_locked(&peak_copies, &peak_skipped);
	core_unlock_tables();
	struct dump_counts dc;
	dump_get_counts(&dc);
	struct memfacts mf;
	memacct_read(&mf);

	struct jsonw w;
	jsonw_init(&w, ob);
	jsonw_object_begin(&w, NULL);
	jsonw_str(&w, "version", HEAPTAP_VERSION);
	jsonw_u64(&w, "pid", (uint64_t)getpid());
	jsonw_i64(&w, "start_time_ns", core.start_time_ns);
	jsonw_bool(&w, "enabled", core.enabled);
	jsonw_bool(&w, "secure_execution", options_get()->secure);
	jsonw_u64(&w, "fds_lost", sys_fd_losses());
	jsonw_bool(&w, "active", core_active());
	jsonw_u64(&w, "sample_period", __atomic_load_n(&core.period, __ATOMIC_RELAXED));
	jsonw_u64(&w, "threads_live", ts.live);
	jsonw_u64(&w, "threads_seen", ts.seen);
	jsonw_u64(&w, "threads_unregistered", ts.unregistered);

	int exact = __atomic_load_n(&core_exact.on, __ATOMIC_ACQUIRE);
	jsonw_object_begin(&w, "calls");
	for (int i = 0; i < FN_COUNT; i++)
		if (i != FN_FREE || exact) /* free's calls: stats_exact only (interpose.c) */
			jsonw_u64(&w, fn_names[i], ts.calls[i]);
	jsonw_object_end(&w);
	jsonw_u64(&w, "allocated_bytes", ts.nbytes);
	if (exact) {
		/* kept only with stats_exact (every request on the slow path: tstate.h) */
		jsonw_array_begin(&w, "size_histogram_log2");
		for (int i = 0; i < TSTATE_HIST_BUCKETS; i++)
			jsonw_u64(&w, NULL, ts.hist[i]);
		jsonw_array_end(&w);
	}

	jsonw_object_begin(&w, "sampler");
	jsonw_u64(&w, "samples", samples);
	jsonw_u64(&w, "live_samples", live_samples);
	jsonw_u64(&w, "stacks", nstacks);
	jsonw_u64(&w, "stacks_queued_for_reuse", queued);
	jsonw_u64(&w, "stacks_recycled", recycled);
	jsonw_u64(&w, "dropped_stack_table_full", drop_stack);
	jsonw_u64(&w, "dropped_live_table_full", drop_live);
	jsonw_u64(&w, "dropped_bytes_estimate", drop_bytes);
	jsonw_u64(&w, "truncated_stacks", trunc);
	jsonw_u64(&w, "truncated_bytes_estimate", trunc_bytes);
	jsonw_u64(&w, "unwind_failed", unwind_failed);
	jsonw_u64(&w, "stacks_moved_at_dlclose", moved);
	jsonw_u64(&w, "segments_not_moved_at_dlclose", maps_unloads_unmoved());
	jsonw_u64(&w, "reentrant_calls", __atomic_load_n(&core.reentrant, __ATOMIC_RELAXED));
	struct cfi_counts cc;
	cfi_get_counts(&cc);
	jsonw_u64(&w, "unwind_rule_parses", cc.parses);
	jsonw_u64(&w, "unwind_fallbacks", cc.fallbacks);
	jsonw_object_end(&w);
	jsonw_u64(&w, "collector_mapped_bytes", mapped);
	jsonw_u64(&w, "collector_table_bytes", used);
	/* the sampled-object zone (sampzone.h); read racily */
	jsonw_object_begin(&w, "zone");
	jsonw_bool(&w, "enabled", core_zone_on());
	jsonw_u64(&w, "mapped_bytes", __atomic_load_n(&sampzone_main.mapped, __ATOMIC_RELAXED));
	jsonw_u64(&w, "index_bytes", __atomic_load_n(&sampzone_main.index_bytes, __ATOMIC_RELAXED));
	jsonw_u64(&w, "blocks_live", __atomic_load_n(&sampzone_main.live, __ATOMIC_RELAXED));
	jsonw_u64(&w, "cached_bytes", __atomic_load_n(&sampzone_main.cache_bytes, __ATOMIC_RELAXED));
	jsonw_u64(&w, "cache_hits", __atomic_load_n(&sampzone_main.cache_hits, __ATOMIC_RELAXED));
	jsonw_u64(&w, "fallbacks", __atomic_load_n(&sampzone_main.refused, __ATOMIC_RELAXED));
	jsonw_u64(&w, "leaked", __atomic_load_n(&sampzone_main.leaked, __ATOMIC_RELAXED));
	jsonw_bool(&w, "filter_needed", __atomic_load_n(&real.filter_needed, __ATOMIC_RELAXED) != 0);
	jsonw_object_end(&w);
	jsonw_u64(&w, "live_bytes_estimate", live_bytes);
	jsonw_u64(&w, "peak_live_bytes_estimate", peak_bytes);
	if (__atomic_load_n(&core_exact.on, __ATOMIC_ACQUIRE)) {
		/* stats_exact: usable sizes of the allocator below (core.h) */
		jsonw_object_begin(&w, "exact");
		jsonw_u64(&w, "allocated_usable_bytes", __atomic_load_n(&core_exact.allocated, __ATOMIC_RELAXED));
		jsonw_u64(&w, "freed_usable_bytes", __atomic_load_n(&core_exact.freed, __ATOMIC_RELAXED));
		jsonw_i64(&w, "live_usable_bytes", __atomic_load_n(&core_exact.live, __ATOMIC_RELAXED));
		jsonw_i64(&w, "peak_live_usable_bytes", __atomic_load_n(&core_exact.peak, __ATOMIC_RELAXED));
		jsonw_object_end(&w);
	}

	jsonw_object_begin(&w, "memory");
	memacct_json(&w, &mf);
	jsonw_object_end(&w);
	if (options_get()->prof_oom) {
		struct memwatch_state ws;
		memwatch_get(&ws);
		jsonw_object_begin(&w, "memory_watch");
		jsonw_u64(&w, "checks", ws.checks);
		jsonw_u64(&w, "dumps", ws.dumps);
		jsonw_u64(&w, "usage", ws.usage);
		jsonw_u64(&w, "limit", ws.limit);
		jsonw_str(&w, "limit_source", ws.source);
		jsonw_object_end(&w);
	}
	if (options_get()->prof_peak) {
		jsonw_object_begin(&w, "peak_profile");
		jsonw_u64(&w, "copies", peak_copies);
		jsonw_u64(&w, "skipped_no_memory", peak_skipped);
		jsonw_object_end(&w);
	}

	/* the CPU profiler (docs/CPU.md): zeros until a CPU profile ever ran */
	struct cpuprof_stats cs;
	cpuprof_get_stats(&cs);
	jsonw_object_begin(&w, "cpu");
	jsonw_bool(&w, "running", cs.running);
	jsonw_str(&w, "timer", cs.started ? cs.timer : "none");
	jsonw_u64(&w, "hz", cs.hz);
	jsonw_u64(&w, "samples", cs.sampler.taken);
	jsonw_u64(&w, "ticks", cs.sampler.ticks);
	jsonw_u64(&w, "lost_buffer_full", cs.sampler.lost_full);
	jsonw_u64(&w, "lost_in_heaptap", cs.sampler.lost_inside);
	jsonw_u64(&w, "unwind_fp_fallback", cs.sampler.unwind_fp);
	jsonw_u64(&w, "unwind_failed", cs.sampler.unwind_leaf);
	jsonw_u64(&w, "unwind_unknown_object", cc.objtab_misses);
	jsonw_u64(&w, "stray_signals", cs.sampler.stray);
	jsonw_u64(&w, "chained_signals", cs.sampler.foreign);
	jsonw_u64(&w, "threads_armed", cs.sampler.armed);
	jsonw_u64(&w, "threads_armed_total", cs.sampler.threads);
	jsonw_u64(&w, "threads_failed", cs.sampler.threads_failed);
	jsonw_u64(&w, "profiles_written", cs.written);
	jsonw_u64(&w, "profile_write_errors", cs.write_failed);
	jsonw_object_end(&w);

	jsonw_object_begin(&w, "dumps");
	for (int i = 0; i < TRIG_COUNT; i++)
		jsonw_u64(&w, trigger_table[i].name, dc.ok[i]);
	jsonw_object_end(&w);
	jsonw_object_begin(&w, "dump_errors");
	for (int i = 0; i < TRIG_COUNT; i++)
		jsonw_u64(&w, trigger_table[i].name, dc.failed[i]);
	jsonw_object_end(&w);
	jsonw_u64(&w, "last_dump_errno", (uint64_t)dc.last_errno);
	/* the control plane: refused and dropped requests are counted, never silent */
	struct http_server_counts hc;
	http_server_get_counts(&hc);
	jsonw_object_begin(&w, "http");
	jsonw_u64(&w, "connections", hc.connections);
	jsonw_u64(&w, "requests", hc.requests);
	jsonw_u64(&w, "refused_user", hc.refused_user);
	jsonw_u64(&w, "refused_cross_site", hc.refused_cross_site);
	jsonw_u64(&w, "refused_host", hc.refused_host);
	jsonw_u64(&w, "refused_token", hc.refused_token);
	jsonw_u64(&w, "refused_busy", hc.refused_busy);
	jsonw_u64(&w, "rate_limited", hc.rate_limited);
	jsonw_u64(&w, "malformed", hc.malformed);
	jsonw_u64(&w, "evicted", hc.evicted);
	jsonw_u64(&w, "timed_out", hc.timed_out);
	jsonw_u64(&w, "dropped_unread", hc.dropped_unread);
	jsonw_u64(&w, "pending_bytes", hc.pending_bytes);
	jsonw_u64(&w, "pending_peak", hc.pending_peak);
	jsonw_object_end(&w);
	options_json(&w);
	jsonw_object_end(&w);
	tstate_leave();
}
