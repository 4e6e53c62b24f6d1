/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cpu_sampler.c - the timers, the signal handler, the rings and the armed-thread table of
 * cpu_sampler.h.
 *
 * Timers are made with raw system calls (timer_create, timer_settime, timer_delete): glibc
 * moved their wrappers into libc at 2.34 under a new symbol version, and the collector must
 * load on glibc 2.17. A thread's CPU clock is ((~tid) << 3) | 6 (per-thread, scheduler time),
 * which the kernel lets any thread of the process name, so the table arms threads it did not
 * create itself.
 *
 * Rings: CPU_SHARDS bounded multi-producer queues (a thread writes into shard tid % SHARDS;
 * threads sharing a shard reserve slots with a compare-and-swap), one consumer. A slot's
 * sequence word is 2 * lap while free and 2 * lap + 1 once filled, so freshly mapped zero
 * pages are valid and untouched shards cost no memory. Not the sessions (cpuprof.c).
 */
#include "cpu_sampler.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "../base/outbuf.h"
#include "cfi.h"
#include "lockrank.h"
#include "sys.h"
#include "tstate.h"
#include "unwind.h"

#define SHARDS 32
#define LG_SLOTS 6
#define SLOTS (1u << LG_SLOTS)
#define COOKIE 0x68747063 /* "htpc": si_value of heaptap's timers */
#define TABLE_CAP 8192    /* armed threads at most TABLE_CAP / 2 */
#define SIGEV_TID 4       /* SIGEV_THREAD_ID */

struct slot {
	uint64_t seq;
	uint32_t depth, flags;
	uint64_t ticks;
	uintptr_t pcs[CPU_SAMPLER_FRAMES];
};

struct shard {
	uint64_t head;
	char pad1[56];
	uint64_t tail;
	char pad2[56];
};

/* the kernel's struct sigevent with the thread id member glibc 2.17 does not name */
struct ksigevent {
	union sigval value;
	int signo;
	int notify;
	union {
		int pad[12];
		int tid;
	} u;
};

struct armed {
	int tid;        /* 0: empty */
	int timer;      /* kernel timer id */
	uint32_t epoch; /* rescan that last saw it */
};

static struct shard *shards;        /* SHARDS shards, then SHARDS * SLOTS slots */
static struct slot *slots;
static size_t ring_bytes;

static int running;                 /* atomic: the handler records */
static int process_mode;            /* setitimer instead of per-thread timers */
static int cur_sig;
static unsigned cur_hz;
static int64_t period_ns;
static int handler_sig;             /* signal heaptap's handler is installed on, 0 none */
static struct sigaction prev_action;/* chained for signals that are not heaptap's */
static int log_once_busy;

static struct ranked_mutex tab_lock = RANKED_MUTEX_INITIALIZER(LOCKRANK_CPU_THREADS);
static struct armed *table;         /* TABLE_CAP entries, mapped on first start */
static size_t table_used;
static uint32_t epoch;
static uint64_t rng;

static uint64_t n_lost_full, n_lost_inside, n_stray, n_foreign, n_threads, n_failed;
static uint64_t n_taken, n_ticks, n_unwind_fp, n_unwind_leaf;

static __thread int my_tid __attribute__((tls_model("initial-exec")));

static void count(uint64_t *c)
{
	__atomic_fetch_add(c, 1, __ATOMIC_RELAXED);
}

/* ---- the handler ---- */

static int is_ours(const siginfo_t *si)
{
	if (si->si_code == SI_TIMER)
		return si->si_value.sival_int == COOKIE;
	return process_mode && si->si_code == SI_KERNEL;
}

static void chain(int sig, siginfo_t *si, void *uc)
{
	count(&n_foreign);
	if (prev_action.sa_flags & SA_SIGINFO) {
		if (prev_action.sa_sigaction)
			prev_action.sa_sigaction(sig, si, uc);
	} else if (prev_action.sa_handler != SIG_DFL && prev_action.sa_handler != SIG_IGN) {
		prev_action.sa_handler(sig);
	}
}

/* A free slot of the calling thread's shard, or NULL when it is full. */
static struct slot *reserve(struct shard *sh, struct slot *base, uint64_t *pos_out)
{
	uint64_t pos = __atomic_load_n(&sh->head, __ATOMIC_RELAXED);
	for (;;) {
		struct slot *s = &base[pos & (SLOTS - 1)];
		uint64_t seq = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);
		uint64_t want = 2 * (pos >> LG_SLOTS);
		if (seq == want) {
			if (__atomic_compare_exchange_n(&sh->head, &pos, pos + 1, 1, __ATOMIC_RELAXED,
			                                __ATOMIC_RELAXED)) {
				*pos_out = pos;
				return s;
			}
		} else if ((int64_t)(seq - want) < 0) {
			return NULL; /* last lap's sample not drained yet */
		} else {
			pos = __atomic_load_n(&sh->head, __ATOMIC_RELAXED);
		}
	}
}

static void on_signal(int sig, siginfo_t *si, void *ucv)
{
	int saved = errno;
	if (!is_ours(si)) {
		chain(sig, si, ucv);
	} else if (!__atomic_load_n(&running, __ATOMIC_ACQUIRE)) {
		count(&n_stray);
	} else if (tstate_inside()) {
		/* heaptap's own malloc slow path or thread: its locks may be held; nothing here
		   takes them, but the sample would describe heaptap, not the program */
		count(&n_lost_inside);
	} else {
		tstate_enter();
		if (!my_tid)
			my_tid = (int)syscall(SYS_gettid);
		struct shard *sh = &shards[(unsigned)my_tid % SHARDS];
		struct slot *base = &slots[((unsigned)my_tid % SHARDS) * SLOTS];
		uint64_t pos;
		struct slot *s = reserve(sh, base, &pos);
		if (!s) {
			count(&n_lost_full);
		} else {
			const ucontext_t *uc = ucv;
			int fb = 0;
#if defined(__x86_64__)
			uintptr_t pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
			uintptr_t sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
			uintptr_t bp = (uintptr_t)uc->uc_mcontext.gregs[REG_RBP];
			uint32_t n = unwind_walk_context(s->pcs, CPU_SAMPLER_FRAMES, pc, sp, bp, &fb);
#else
			(void)uc;
			s->pcs[0] = 0;
			uint32_t n = 1;
#endif
			s->depth = n ? n : 1;
			s->flags = (fb ? CPU_SAMPLE_FP : 0) | (n == CPU_SAMPLER_FRAMES ? CPU_SAMPLE_TRUNC : 0);
			int over = si->si_code == SI_TIMER ? si->si_overrun : 0;
			s->ticks = 1 + (uint64_t)(over > 0 ? over : 0);
			count(&n_taken);
			__atomic_fetch_add(&n_ticks, s->ticks, __ATOMIC_RELAXED);
			if (fb)
				count(n <= 1 ? &n_unwind_leaf : &n_unwind_fp);
			__atomic_store_n(&s->seq, 2 * (pos >> LG_SLOTS) + 1, __ATOMIC_RELEASE);
		}
		tstate_leave();
	}
	errno = saved;
}

void cpu_sampler_drain(void (*fn)(void *ctx, const uintptr_t *pcs, uint32_t depth,
                                  uint64_t ticks, unsigned flags),
                       void *ctx)
{
	/* objects loaded or unloaded since the last drain, for the handler's unwinder (cfi.h:
	   before glibc 2.35 it must not call dl_iterate_phdr itself) */
	(void)cfi_objects_refresh();
	if (!shards)
		return;
	for (unsigned k = 0; k < SHARDS; k++) {
		struct shard *sh = &shards[k];
		struct slot *base = &slots[k * SLOTS];
		for (;;) {
			uint64_t pos = sh->tail;
			struct slot *s = &base[pos & (SLOTS - 1)];
			uint64_t lap = pos >> LG_SLOTS;
			if (__atomic_load_n(&s->seq, __ATOMIC_ACQUIRE) != 2 * lap + 1)
				break;
			fn(ctx, s->pcs, s->depth, s->ticks, s->flags);
			__atomic_store_n(&s->seq, 2 * (lap + 1), __ATOMIC_RELEASE);
			sh->tail = pos + 1;
		}
	}
}

/* ---- timers ---- */

static int timer_make(int tid, int *id)
{
	struct ksigevent ev;
	memset(&ev, 0, sizeof ev);
	ev.value.sival_int = COOKIE;
	ev.signo = cur_sig;
	ev.notify = SIGEV_TID;
	ev.u.tid = tid;
	clockid_t clk = (clockid_t)((~(unsigned)tid << 3) | 6);
	int kid = -1;
	if (syscall(SYS_timer_create, clk, &ev, &kid) != 0)
		return -errno;
	/* a random first expiry in (0, period]: a thread that runs less than a period is still
	   sampled with the right probability */
	rng = rng * 6364136223846793005ull + 1442695040888963407ull;
	int64_t first = 1 + (int64_t)((rng >> 11) % (uint64_t)period_ns);
	struct itimerspec its;
	its.it_interval.tv_sec = period_ns / 1000000000;
	its.it_interval.tv_nsec = period_ns % 1000000000;
	its.it_value.tv_sec = first / 1000000000;
	its.it_value.tv_nsec = first % 1000000000;
	if (syscall(SYS_timer_settime, kid, 0, &its, NULL) != 0) {
		int e = errno;
		syscall(SYS_timer_delete, kid);
		return -e;
	}
	*id = kid;
	return 0;
}

static size_t slot_of(int tid)
{
	return ((unsigned)tid * 2654435761u) & (TABLE_CAP - 1);
}

static struct armed *find(int tid)
{
	for (size_t i = slot_of(tid);; i = (i + 1) & (TABLE_CAP - 1))
		if (table[i].tid == tid || table[i].tid == 0)
			return &table[i];
}

/* Removes entry e (backward-shift deletion keeps every probe chain whole). */
static void unlink_entry(struct armed *e)
{
	size_t i = (size_t)(e - table);
	for (;;) {
		table[i].tid = 0;
		size_t j = i;
		for (;;) {
			j = (j + 1) & (TABLE_CAP - 1);
			if (table[j].tid == 0)
				return;
			size_t home = slot_of(table[j].tid);
			/* j's entry may move to i when its home does not lie in (i, j] */
			if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j))
				break;
		}
		table[i] = table[j];
		i = j;
	}
}

/* Arms tid (tab_lock held); a stale entry of a thread that had the same id is replaced. */
static void arm(int tid, int replace)
{
	struct armed *e = find(tid);
	if (e->tid == tid) {
		e->epoch = epoch;
		if (!replace)
			return;
		syscall(SYS_timer_delete, e->timer);
		unlink_entry(e);
		e = find(tid);
	}
	int id;
	if (table_used + 1 > TABLE_CAP / 2 || timer_make(tid, &id) != 0) {
		count(&n_failed);
		return;
	}
	e->tid = tid;
	e->timer = id;
	e->epoch = epoch;
	table_used++;
	count(&n_threads);
}

static void disarm_all(void)
{
	for (size_t i = 0; i < TABLE_CAP; i++) {
		if (table[i].tid) {
			syscall(SYS_timer_delete, table[i].timer);
			table[i].tid = 0;
		}
	}
	table_used = 0;
}

/* Calls fn for every thread id in /proc/self/task. 0 or -errno. */
static int each_task(void (*fn)(int tid))
{
	int fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	char buf[4096] __attribute__((aligned(8)));
	for (;;) {
		long n = syscall(SYS_getdents64, fd, buf, sizeof buf);
		if (n <= 0)
			break;
		for (long off = 0; off < n;) {
			unsigned short reclen;
			memcpy(&reclen, buf + off + 16, sizeof reclen);
			const char *name = buf + off + 19;
			int tid = 0;
			for (const char *c = name; *c >= '0' && *c <= '9'; c++)
				tid = tid * 10 + (*c - '0');
			if (tid > 0)
				fn(tid);
			off += reclen;
		}
	}
	close(fd);
	return 0;
}

static void arm_found(int tid)
{
	arm(tid, 0);
}

void cpu_sampler_rescan(void)
{
	lockrank_lock(&tab_lock);
	if (__atomic_load_n(&running, __ATOMIC_RELAXED) && !process_mode && table) {
		epoch++;
		if (each_task(arm_found) == 0) {
			for (size_t i = 0; i < TABLE_CAP; i++) {
				if (table[i].tid && table[i].epoch != epoch) {
					syscall(SYS_timer_delete, table[i].timer);
					unlink_entry(&table[i]);
					table_used--;
					i--; /* the shift may have moved another entry here */
				}
			}
		}
	}
	lockrank_unlock(&tab_lock);
}

void cpu_sampler_thread_begin(void)
{
	if (!__atomic_load_n(&running, __ATOMIC_ACQUIRE) || process_mode)
		return;
	int tid = (int)syscall(SYS_gettid);
	my_tid = tid;
	lockrank_lock(&tab_lock);
	if (__atomic_load_n(&running, __ATOMIC_RELAXED) && table)
		arm(tid, 1);
	lockrank_unlock(&tab_lock);
}

void cpu_sampler_thread_end(void)
{
	if (!__atomic_load_n(&running, __ATOMIC_ACQUIRE) || process_mode)
		return;
	int tid = (int)syscall(SYS_gettid);
	lockrank_lock(&tab_lock);
	if (table) {
		struct armed *e = find(tid);
		if (e->tid == tid) {
			syscall(SYS_timer_delete, e->timer);
			unlink_entry(e);
			table_used--;
		}
	}
	lockrank_unlock(&tab_lock);
}

/* ---- start and stop ---- */

/* Installs the handler on sig unless another one owns it. 0 or -EBUSY. */
static int install(int sig)
{
	struct sigaction cur;
	if (sigaction(sig, NULL, &cur) != 0)
		return -errno;
	int ours = (cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_signal;
	if (ours && handler_sig == sig)
		return 0;
	int foreign = (cur.sa_flags & SA_SIGINFO) ? cur.sa_sigaction != NULL
	                                          : cur.sa_handler != SIG_DFL && cur.sa_handler != SIG_IGN;
	if (foreign && (sig == SIGPROF || handler_sig == sig)) {
		/* another profiler (gperftools, a JVM agent, a sanitizer) samples with it: two
		   profilers on one signal corrupt each other's samples */
		char num[16];
		fmt_u64(num, (uint64_t)sig);
		sys_log_once(&log_once_busy, "cpu: signal ", num,
		             handler_sig == sig ? " was taken over by another handler: the CPU profiler "
		                                  "does not start (no fight over it)"
		                                : " already has a handler (another CPU profiler?): the "
		                                  "CPU profiler stays off; cpu_signal:<N> picks another signal");
		return -EBUSY;
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(sig, &sa, &prev_action) != 0)
		return -errno;
	if (!foreign) /* nothing to chain to */
		memset(&prev_action, 0, sizeof prev_action);
	handler_sig = sig;
	return 0;
}

static int map_memory(void)
{
	if (!shards) {
		ring_bytes = SHARDS * sizeof(struct shard) + (size_t)SHARDS * SLOTS * sizeof(struct slot);
		void *p = sys_map(ring_bytes);
		if (!p)
			return -ENOMEM;
		shards = p;
		slots = (struct slot *)(shards + SHARDS);
	}
	if (!table) {
		table = sys_map(TABLE_CAP * sizeof(struct armed));
		if (!table)
			return -ENOMEM;
	}
	return 0;
}

int cpu_sampler_start(unsigned hz, int sig, int force_process)
{
	if (hz < 1 || hz > 10000 || sig < 1 || sig > 64)
		return -EINVAL;
	lockrank_lock(&tab_lock);
	int rc = 0;
	if (__atomic_load_n(&running, __ATOMIC_RELAXED)) {
		rc = -EALREADY;
		goto out;
	}
	if ((rc = map_memory()) != 0 || (rc = install(sig)) != 0)
		goto out;
	unwind_init(); /* the DWARF rules' cache (the heap profiler may be off: prof:false) */
	(void)cfi_objects_refresh(); /* the handler's table of loaded objects (before glibc 2.35) */
	cur_sig = sig;
	cur_hz = hz;
	period_ns = 1000000000 / (int64_t)hz;
	rng ^= sys_random_u64();
	/* try the calling thread first: where per-thread timers cannot be made (an old or
	   restricted kernel), one process-wide ITIMER_PROF timer (SIGPROF only) */
	int id;
	process_mode = force_process || timer_make((int)syscall(SYS_gettid), &id) != 0;
	if (!process_mode)
		syscall(SYS_timer_delete, id);
	if (process_mode && sig != SIGPROF) {
		rc = -EINVAL;
		goto out;
	}
	__atomic_store_n(&running, 1, __ATOMIC_RELEASE);
	if (process_mode) {
		struct itimerval it;
		it.it_interval.tv_sec = period_ns / 1000000000;
		it.it_interval.tv_usec = (period_ns % 1000000000) / 1000;
		it.it_value = it.it_interval;
		if (setitimer(ITIMER_PROF, &it, NULL) != 0) {
			rc = -errno;
			__atomic_store_n(&running, 0, __ATOMIC_RELEASE);
		}
	} else {
		epoch++;
		each_task(arm_found);
	}
out:
	lockrank_unlock(&tab_lock);
	return rc;
}

void cpu_sampler_stop(void)
{
	lockrank_lock(&tab_lock);
	if (__atomic_load_n(&running, __ATOMIC_RELAXED)) {
		if (process_mode) {
			struct itimerval it;
			memset(&it, 0, sizeof it);
			setitimer(ITIMER_PROF, &it, NULL);
		} else {
			disarm_all();
		}
		__atomic_store_n(&running, 0, __ATOMIC_RELEASE);
	}
	lockrank_unlock(&tab_lock);
}

int cpu_sampler_running(void)
{
	return __atomic_load_n(&running, __ATOMIC_ACQUIRE);
}

const char *cpu_sampler_timer_name(void)
{
	return process_mode ? "setitimer" : "thread";
}

void cpu_sampler_get_counts(struct cpu_sampler_counts *out)
{
	out->lost_full = __atomic_load_n(&n_lost_full, __ATOMIC_RELAXED);
	out->lost_inside = __atomic_load_n(&n_lost_inside, __ATOMIC_RELAXED);
	out->stray = __atomic_load_n(&n_stray, __ATOMIC_RELAXED);
	out->foreign = __atomic_load_n(&n_foreign, __ATOMIC_RELAXED);
	out->threads = __atomic_load_n(&n_threads, __ATOMIC_RELAXED);
	out->threads_failed = __atomic_load_n(&n_failed, __ATOMIC_RELAXED);
	out->taken = __atomic_load_n(&n_taken, __ATOMIC_RELAXED);
	out->ticks = __atomic_load_n(&n_ticks, __ATOMIC_RELAXED);
	out->unwind_fp = __atomic_load_n(&n_unwind_fp, __ATOMIC_RELAXED);
	out->unwind_leaf = __atomic_load_n(&n_unwind_leaf, __ATOMIC_RELAXED);
	out->armed = __atomic_load_n(&table_used, __ATOMIC_RELAXED);
}

/* ---- fork ---- */

void cpu_sampler_fork_prepare(void)
{
	lockrank_lock(&tab_lock);
}

void cpu_sampler_fork_parent(void)
{
	lockrank_unlock(&tab_lock);
}

void cpu_sampler_fork_child(void)
{
	/* the child inherits no timer (POSIX timers and setitimer are not inherited) */
	__atomic_store_n(&running, 0, __ATOMIC_RELEASE);
	my_tid = 0;
	if (shards)
		sys_unmap(shards, ring_bytes);
	shards = NULL;
	slots = NULL;
	if (table)
		sys_unmap(table, TABLE_CAP * sizeof(struct armed));
	table = NULL;
	table_used = 0;
	lockrank_unlock(&tab_lock); /* taken by cpu_sampler_fork_prepare in this very thread */
}
