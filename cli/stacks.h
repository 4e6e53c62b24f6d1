/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * stacks.h - turns a (symbolized) profile into display stacks: every sample's addresses
 * expanded into their inline chains, named at the chosen granularity, allocator frames
 * trimmed from the leaf side as jeprof does (in every profile, by a longer list of names:
 * jemalloc's whatever its prefix, Rust's allocator shims), --focus/--ignore applied; then
 * flat and cumulative values per name (a name counted once per stack, as jeprof does).
 *
 * It does no printing and no symbolizing: renderers (text, dot, collapsed, flame, report) read
 * the arrays it fills. CLI only; allocates.
 */
#ifndef HEAPTAP_CLI_STACKS_H
#define HEAPTAP_CLI_STACKS_H

#include <regex.h>
#include <stddef.h>
#include <stdint.h>

#include "../profile/model.h"
#include "common.h"

/* How frames are named. */
enum stacks_style {
	STACKS_SHORT = 0, /* jeprof --text names: args and templates removed, inlined frames get
	                     " (inline)", unresolved frames "0x<16 hex>" */
	STACKS_FULL       /* collapsed/flame names: full demangled names, inlined frames get
	                     "[inline]" (jeprof --collapsed), no <addr> tags */
};

/* How a frame without a function name is called. */
enum stacks_unresolved {
	STACKS_UNRESOLVED_DEFAULT = 0, /* ADDRESS with STACKS_SHORT (jeprof), MODULE with STACKS_FULL */
	STACKS_UNRESOLVED_ADDRESS,     /* "0x" and 16 hex digits */
	STACKS_UNRESOLVED_MODULE       /* "<file name>+0x<file offset>" when the mapping is known (the
	                                  same in every run, whatever the address-space layout) */
};

struct stacks_options {
	int value_index;        /* PV_* used for flat/cum/total and trace values */
	enum common_gran gran;
	enum stacks_style style;
	const regex_t *focus;   /* keep only stacks where some frame's name matches, or NULL */
	const regex_t *ignore;  /* drop stacks where some frame's name matches, or NULL */
	enum stacks_unresolved unresolved; /* naming of frames without a function name */
	int trim;               /* 0: keep allocator frames (--keep-allocator); otherwise (-1, the
	                           default, or 1) trim them. A frame is the allocator's when its
	                           outermost function is (stacks_is_allocator_full) or it lies in
	                           libjemalloc; it is dropped with every frame younger than it. */
	int sum_only;           /* 1: only names with flat/cum and the totals are wanted (jeprof
	                           --text): traces are not kept (s->ntraces stays 0), so memory
	                           does not grow with the number of frames */
	/* When set, every kept trace is handed to each (frames root first, name ids of the
	   struct stacks being built, valid only during the call) instead of being stored:
	   s->ntraces stays 0 as with sum_only, names get flat and cum. Memory is then the
	   caller's (e.g. folded.c keeps only the distinct paths). */
	void (*each)(void *ctx, const uint32_t *frames, uint32_t nframes, double value,
	             const struct prof_sample *sample);
	void *each_ctx;
};

/* Drops in place the allocator frames that lead p's stacks, by the rule stacks_build trims
   them (up to the last frame from the leaf that is the allocator's; a stack of allocator
   frames only keeps its outermost frame, and its value), then clears p->jemalloc_frames and
   compacts p. For writers of formats whose readers do not trim (pprof). Call after
   symbolizing. Allocates nothing. */
void stacks_trim_allocator(struct profile *p);

/* Fills o with the defaults for args a (value, granularity, focus/ignore, STACKS_SHORT; trim -1
   unless --keep-allocator; frames without a name as "<library>+0x<offset>", or as addresses
   with --no-symbolize). */
void stacks_options_from(struct stacks_options *o, const struct common_args *a);

/* One display name. */
struct stacks_name {
	const char *name;   /* owned by the struct stacks */
	double flat;        /* value of traces whose leaf is this name */
	double cum;         /* value of traces containing this name (once per trace) */
	int inlined;        /* 1: an inlined frame */
};

/* One sample after translation: frames root first. */
struct stacks_trace {
	uint32_t *frames;   /* name ids, ROOT FIRST (frames[nframes-1] is the leaf); repeats kept */
	uint32_t nframes;   /* may be 0 if trimming removed everything (then it is not stored) */
	double value;       /* the selected value */
	double v[PV_COUNT]; /* all four values of the sample */
	const struct prof_sample *sample; /* the sample it came from */
};

struct stacks {
	struct stacks_name *names;  /* indexed by name id */
	size_t nnames;
	struct stacks_trace *traces;/* one per kept sample with a nonzero value (in sample order) */
	size_t ntraces;
	double total;               /* selected value summed over ALL samples, before trimming and
	                               focus/ignore (jeprof's "Total:" line) */
	double kept_total;          /* summed over the kept traces (the base of percentages) */
	double total_v[PV_COUNT];   /* every value summed over all samples */
	void *priv;                 /* internal: arena and indexes */
};

/* Builds s from p. Returns 0, or -1 (message naming p->source printed) when the inline chains
   would expand the stacks to more than 16 frames per address of p (plus 4 Mi frames): memory
   stays proportional to the input. Out of memory ends the process (arena_oom). */
int stacks_build(struct stacks *s, const struct profile *p, const struct stacks_options *o);
/* Frees everything s owns. */
void stacks_release(struct stacks *s);

/* Name ids sorted for jeprof --text: by flat (or cum with by_cum) descending, ties by name
   ascending (bytewise); names with flat and cum both 0 are left out. Returns a malloc'd array
   (caller frees) and its length in *n. */
uint32_t *stacks_sorted(const struct stacks *s, int by_cum, size_t *n);

/* Looks up a name; returns its id or -1. */
long stacks_find(const struct stacks *s, const char *name);

/* jeprof's short function name: argument lists and template arguments removed, a leading
   return type dropped. Writes into out (cap bytes) and returns out. */
char *stacks_short_name(const char *full, char *out, size_t cap);

/* 1 when jeprof's allocator skip list (§1.5) contains this short name. */
int stacks_is_allocator(const char *short_name);

/* 1 when a function is allocator machinery: its short name is in jeprof's skip list (malloc,
   operator new, ...), or its full name is jemalloc's whatever the build's prefix (je_*,
   _rjem_*, imalloc, prof_backtrace, ...) or one of Rust's global-allocator shims and helpers
   (__rust_alloc*, __rust_realloc, __rdl_*, __rg_*, alloc::alloc::*, alloc::raw_vec::*,
   <T as core::alloc::global::GlobalAlloc>::*, tikv_jemallocator::*). */
int stacks_is_allocator_full(const char *full, const char *short_name);

/* 1 when the mapped file at path is an allocator library whose frames lead jemalloc's stacks
   (libjemalloc*): such frames are trimmed like named allocator frames. */
int stacks_is_allocator_module(const char *path);

#endif
