/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * memwatch.c - the memory-pressure watch of memwatch.h: thresholds armed and disarmed with
 * hysteresis, the cooldown, cgroup v2 memory.events, and the reason line of each dump. No
 * host malloc; state touched by the background thread only (the statistics read it with
 * relaxed atomics).
 */
#include "memwatch.h"

#include <string.h>
#include <unistd.h>

#include "../base/outbuf.h"
#include "cgroup.h"
#include "memacct.h"
#include "options.h"
#include "sys.h"

static int64_t next_due;
static unsigned char disarmed[8];
static int64_t last_dump_ns;
static int dumped_once;
static uint64_t ev_high, ev_max;
static int ev_known;
static uint64_t cached_limit;
static unsigned limit_age;
static struct memwatch_state st = {0, 0, 0, 0, ""};

int memwatch_enabled(void)
{
	return options_get()->prof_oom;
}

int64_t memwatch_due(void)
{
	if (!memwatch_enabled())
		return 0;
	if (!next_due)
		next_due = sys_mono_ns();
	return next_due;
}

void memwatch_fork_child(void)
{
	memset(disarmed, 0, sizeof disarmed);
	next_due = last_dump_ns = 0;
	dumped_once = ev_known = 0;
	limit_age = 0;
	memset(&st, 0, sizeof st);
	st.source = "";
}

static uint64_t rss_statm(void)
{
	char buf[256];
	if (sys_read_small("/proc/self/statm", buf, sizeof buf) <= 0)
		return 0;
	const char *s = buf;
	uint64_t size, resident;
	if (cgroup_parse_u64(&s, &size) || cgroup_parse_u64(&s, &resident))
		return 0;
	return resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

/* The limit and the use measured against it; the cgroup's limit read again every second. */
static void measure(uint64_t *usage, uint64_t *limit)
{
	const struct options *o = options_get();
	if (limit_age == 0)
		cached_limit = cgroup_limit();
	limit_age = (limit_age + 1) % (1000 / MEMWATCH_POLL_MS);
	uint64_t cg = cached_limit;
	if (o->prof_mem_limit && (!cg || o->prof_mem_limit < cg)) {
		*limit = o->prof_mem_limit;
		*usage = rss_statm();
		st.source = "prof_mem_limit";
	} else if (cg) {
		*limit = cg;
		*usage = cgroup_usage();
		st.source = "cgroup";
	} else {
		*limit = (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE);
		*usage = rss_statm();
		st.source = "physical";
	}
}

static void put_mib(struct outbuf *ob, uint64_t v)
{
	outbuf_fixed(ob, (double)v / 1048576.0, 1);
	outbuf_puts(ob, " MiB");
}

/* "memory use U MiB of limit L MiB (P %, <source>): <what>" into reason. */
static void describe(char *reason, size_t cap, uint64_t usage, uint64_t limit, const char *what,
                     uint64_t n)
{
	struct outbuf ob;
	outbuf_init(&ob, reason, cap - 1, -1);
	outbuf_puts(&ob, "memory use ");
	put_mib(&ob, usage);
	outbuf_puts(&ob, " of limit ");
	put_mib(&ob, limit);
	outbuf_puts(&ob, " (");
	outbuf_fixed(&ob, limit ? 100.0 * (double)usage / (double)limit : 0.0, 1);
	outbuf_puts(&ob, " %, ");
	outbuf_puts(&ob, st.source);
	if (strcmp(st.source, "cgroup") == 0) {
		outbuf_putc(&ob, ' ');
		outbuf_puts(&ob, cgroup_dir());
	}
	outbuf_puts(&ob, "): ");
	outbuf_puts(&ob, what);
	outbuf_u64(&ob, n);
	reason[ob.len] = 0;
}

/* 1 when a dump may be written now (the cooldown, or an escalation of the same episode). */
static int allowed(int64_t now, int escalation)
{
	int64_t cool = (int64_t)options_get()->prof_oom_cooldown_ms * 1000000;
	return escalation || !dumped_once || now - last_dump_ns >= cool;
}

static void note_dump(int64_t now)
{
	last_dump_ns = now;
	dumped_once = 1;
	__atomic_fetch_add(&st.dumps, 1, __ATOMIC_RELAXED);
}

int memwatch_check(int64_t now, char *reason, size_t cap)
{
	if (!memwatch_enabled() || now < next_due)
		return 0;
	next_due = now + (int64_t)MEMWATCH_POLL_MS * 1000000;
	memacct_init(); /* the cgroup located, once */
	const struct options *o = options_get();
	uint64_t usage, limit;
	measure(&usage, &limit);
	__atomic_store_n(&st.usage, usage, __ATOMIC_RELAXED);
	__atomic_store_n(&st.limit, limit, __ATOMIC_RELAXED);
	__atomic_fetch_add(&st.checks, 1, __ATOMIC_RELAXED);
	if (!limit)
		return 0;

	/* re-arm what use fell well below; the highest still disarmed marks the episode */
	unsigned top_disarmed = 0;
	for (unsigned i = 0; i < o->prof_oom_nat; i++) {
		unsigned at = o->prof_oom_at[i];
		unsigned floor = at > MEMWATCH_REARM_POINTS ? at - MEMWATCH_REARM_POINTS : 0;
		if (disarmed[i] && (double)usage * 100.0 < (double)floor * (double)limit)
			disarmed[i] = 0;
		if (disarmed[i])
			top_disarmed = at;
	}
	/* the highest threshold crossed and armed */
	int hit = -1;
	for (unsigned i = 0; i < o->prof_oom_nat; i++)
		if (!disarmed[i] && (double)usage * 100.0 >= (double)o->prof_oom_at[i] * (double)limit)
			hit = (int)i;
	if (hit >= 0) {
		int escalation = top_disarmed && o->prof_oom_at[hit] > top_disarmed;
		if (!allowed(now, escalation))
			return 0; /* stays armed: written when the cooldown is over, if still above */
		for (int i = 0; i <= hit; i++)
			disarmed[i] = 1;
		describe(reason, cap, usage, limit, "crossed prof_oom_at ", o->prof_oom_at[hit]);
		struct outbuf ob;
		outbuf_init(&ob, reason, cap - 1, -1);
		ob.len = strlen(reason);
		outbuf_puts(&ob, " %");
		reason[ob.len] = 0;
		note_dump(now);
		return 1;
	}

	/* cgroup v2: the kernel throttled (high) or reclaimed at the limit (max) */
	uint64_t h, m;
	if (cgroup_events(&h, &m) == 0) {
		int grew = ev_known && (h > ev_high || m > ev_max);
		const char *what = m > ev_max ? "memory.events max now " : "memory.events high now ";
		uint64_t n = m > ev_max ? m : h;
		if (grew && !allowed(now, 0))
			return 0; /* counted again at the next check */
		ev_high = h;
		ev_max = m;
		ev_known = 1;
		if (grew) {
			describe(reason, cap, usage, limit, what, n);
			note_dump(now);
			return 1;
		}
	}
	return 0;
}

void memwatch_get(struct memwatch_state *out)
{
	out->checks = __atomic_load_n(&st.checks, __ATOMIC_RELAXED);
	out->dumps = __atomic_load_n(&st.dumps, __ATOMIC_RELAXED);
	out->usage = __atomic_load_n(&st.usage, __ATOMIC_RELAXED);
	out->limit = __atomic_load_n(&st.limit, __ATOMIC_RELAXED);
	out->source = st.source ? st.source : "";
}
