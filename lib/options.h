/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * options.h - HEAPTAP_CONF, the collector's options: the parsed struct every part of the
 * collector reads, and the parser.
 *
 * Syntax as jemalloc's MALLOC_CONF: comma-separated key:value pairs, split on the FIRST colon
 * (values may contain colons, not commas); booleans true/false; integers decimal, 0x hex or
 * 0-prefixed octal. Every key is documented in docs/OPTIONS.md. A bad key or value is reported
 * on one stderr line and ignored. The parser never allocates; not thread-safe by itself (the
 * collector parses once, at init, before any other thread can read the struct).
 */
#ifndef HEAPTAP_LIB_OPTIONS_H
#define HEAPTAP_LIB_OPTIONS_H

#include <stdint.h>

/* prof_unwind:libunwind, from the days heaptap linked libunwind, is read as UNWIND_DWARF */
enum unwind_mode { UNWIND_DWARF = 0, UNWIND_FP = 1 };

struct options {
	int prof;                    /* profiling at all (true) */
	int prof_active;             /* sampling on at start (true) */
	unsigned lg_prof_sample;     /* R = 2^x (19), 0..62 */
	int lg_prof_interval;        /* interval dumps every ~2^x bytes allocated, -1 off (-1) */
	int prof_gdump;              /* dump on a new high-water mark of the live estimate (false) */
	uint64_t prof_gdump_rate_ms; /* at most one gdump per this many ms (1000) */
	int prof_final;              /* dump at exit (true) */
	int prof_leak;               /* leak summary on stderr at exit (false) */
	int prof_leak_error;         /* as prof_leak, and _exit(1) when something leaked (false) */
	int prof_accum;              /* keep cumulative alloc counts (false) */
	char prof_prefix[512];       /* dump file prefix ("heaptap"); "" = no automatic dumps */
	uint64_t prof_time_interval_ms; /* periodic dumps, 0 off */
	int prof_signal;             /* signal number that triggers a dump, 0 off */
	uint64_t prof_max_dumps;     /* keep only the newest N automatic dumps, 0 unlimited */
	unsigned prof_format;        /* DUMP_* bits of dumpfmt.h (DUMP_HEAPV2) */
	int prof_unwind;             /* enum unwind_mode (UNWIND_DWARF: cfi.c, frame pointers where it cannot) */
	unsigned prof_bt_max;        /* frames per stack, 1..256 (128) */
	uint64_t prof_max_stacks;    /* budget: stacks held at once (0 = none, the default) */
	uint64_t prof_max_live;      /* budget: live samples held at once (0 = none, the default) */
	char http[256];              /* HTTP listen address, "" none (lib/http*.c reads it) */
	char http_token[256];        /* HTTP bearer token, "" none */
	int verbose;                 /* extra diagnostics on stderr (false) */
	int stats_exact;             /* exact usable-size byte counters; every call goes slow (false) */
	unsigned prof_dump_mode;     /* permission bits of dump files (0600) */
	int secure;                  /* secure execution (AT_SECURE): the environment was ignored */
	/* the control plane's admission (docs/SECURITY.md "Control plane") */
	int http_allow_any;          /* http_allow_users:any: serve every local user (false) */
	unsigned http_allow_nuids;   /* http_allow_users:<uid>+<uid>: users served besides the */
	uint32_t http_allow_uids[16];/* host's own (getuid, geteuid) and root */
	char http_hosts[256];        /* extra Host names accepted, '+'-separated ("") */
	uint64_t http_dump_rate_ms;  /* at least this long between dumps asked for over HTTP (1000) */
	/* memory pressure and the peak profile (docs/OPTIONS.md "Memory evidence") */
	int prof_oom;                /* dump when memory use crosses prof_oom_at of the limit (false) */
	unsigned prof_oom_nat;       /* thresholds in prof_oom_at, ascending (3) */
	unsigned prof_oom_at[8];     /* percent of the limit (80, 90, 95) */
	uint64_t prof_oom_cooldown_ms; /* at most one memory-pressure dump per this long (60000) */
	uint64_t prof_mem_limit;     /* the limit in bytes when no smaller cgroup limit (0 = none) */
	char mem_cgroup[256];        /* the memory cgroup's directory ("" = found from /proc) */
	int prof_peak;               /* keep the profile of the live heap at its peak (false) */
	int prof_zone;               /* sampled blocks from the sampled-object zone (true) */
	/* the push client (push.h, docs/FLEET.md) */
	char push_url[512];          /* http://host:port/path of the backend, "" none */
	uint64_t push_interval_ms;   /* a profile this often (15 s) */
	char push_format[24];        /* ingest, ingest-multipart, connect, parca; "" from the path */
	char push_service[128];      /* service_name ("" the program's name) */
	char push_labels[512];       /* user labels, name=value joined by '+' */
	char push_token[256];        /* Authorization: Bearer */
	char push_basic[256];        /* Authorization: Basic of user:password */
	char push_tenant[128];       /* X-Scope-OrgID */
	uint64_t push_queue;         /* profiles kept while the backend is down (8) */
	uint64_t push_timeout_ms;    /* connect + send + reply, per attempt (10000) */
	uint64_t push_retries;       /* attempts per profile beyond the first (3) */
	char prof_procs[256];        /* executables that profile and serve, globs joined by '+' ("" = all) */
	/* the CPU profiler (docs/CPU.md) */
	int cpu_prof;                /* a CPU profile of the whole run, written at exit (false) */
	unsigned cpu_hz;             /* samples per second of CPU time, per thread (100) */
	int cpu_signal;              /* the sampling signal (SIGPROF) */
	int cpu_timer;               /* 0 per-thread CPU-time timers, 1 process-wide setitimer */
	unsigned cpu_format;         /* run profile's files: 1 pprof, 2 gperftools, 3 both (1) */
	char cpu_prefix[512];        /* run profile's file prefix ("" = prof_prefix) */
	char cpu_file[512];          /* the run profile to exactly this file (CPUPROFILE), "" none */
	int cpu_fork;                /* a forked child continues the run profile into its own file (false) */
};

/* Fills o with the defaults. */
void options_init(struct options *o);

/*
 * Applies conf (NUL-terminated; NULL or "" = nothing) on top of o. Each problem is reported
 * as one line "heaptap: HEAPTAP_CONF: ..." written to errfd (skipped when errfd < 0).
 * Returns the number of problems (0 = all applied).
 */
int options_parse(struct options *o, const char *conf, int errfd);

/* The options in force in this process (valid after core_init). */
const struct options *options_get(void);

/* The HEAPTAP_CONF spelling of an enum unwind_mode. */
const char *options_unwind_name(int mode);
/* Parses the environment once (getenv, or /proc/self/environ when too early) into the
   process options; later calls do nothing. Under secure execution (AT_SECURE: a setuid or
   setgid program, or one with file capabilities) the environment is not read at all and
   profiling is off (prof:false, no prefix, no HTTP): the library passes every call through. */
void options_load(void);
/* Mutable access for the collector (heaptap_reset changes lg_prof_sample). */
struct options *options_mut(void);

#endif
