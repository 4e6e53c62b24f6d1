/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * trigger.h - why a dump is taken: one table of the dump triggers with the letter each puts in
 * jemalloc-style file names (<prefix>.<pid>.<seq>.<letter><iseq>.heap), the name statistics and
 * dump metadata use, and whether the trigger is automatic (its files count against
 * prof_max_dumps). Data only; not the doorbell that requests dumps (doorbell.h) nor the
 * thread that serves them (bgthread.h).
 */
#ifndef HEAPTAP_LIB_TRIGGER_H
#define HEAPTAP_LIB_TRIGGER_H

enum dump_trigger {
	TRIG_INTERVAL,  /* 'i': every 2^lg_prof_interval bytes */
	TRIG_GDUMP,     /* 'u': new high-water mark */
	TRIG_MANUAL,    /* 'm': heaptap_dump(NULL), HTTP dump-now */
	TRIG_FINAL,     /* 'f': at exit */
	TRIG_TIME,      /* 't': prof_time_interval */
	TRIG_SIGNAL,    /* 's': prof_signal */
	TRIG_OOM,       /* 'o': memory pressure (prof_oom, memwatch.h) */
	TRIG_PEAK,      /* 'p': the peak profile at exit (prof_peak, peakprof.h) */
	TRIG_COUNT
};

struct trigger_info {
	char letter;
	const char *name;
	int automatic;  /* 1: rotated by prof_max_dumps */
};

extern const struct trigger_info trigger_table[TRIG_COUNT];

#endif
