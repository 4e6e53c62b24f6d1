/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * common.h - what every analysis command of the heaptap CLI shares: the jeprof/pprof-style
 * option set (value selector, granularity, focus/ignore, graph thresholds, library search
 * paths, --base), telling a binary from a profile by content, and loading (read, merge,
 * subtract the base, symbolize) into one struct profile.
 *
 * It is not a renderer and knows nothing of stacks or names (see stacks.h). CLI only: it
 * allocates freely, prints diagnostics to stderr as "heaptap: <what>: <why>", and never exits
 * the process itself; functions return the exit status the command should return.
 */
#ifndef HEAPTAP_CLI_COMMON_H
#define HEAPTAP_CLI_COMMON_H

#include <regex.h>
#include <stddef.h>

#include "../profile/model.h"

/* Frame granularity (jeprof --functions / --lines / --addresses / --files). */
enum common_gran {
	GRAN_FUNCTIONS = 0,
	GRAN_LINES,
	GRAN_ADDRESSES,
	GRAN_FILES
};

/* A command-specific option, recognised by common_parse beside the shared ones. */
struct common_opt {
	const char *name; /* without dashes: "title" matches --title, -title, --title=X */
	int has_arg;      /* 1: takes a value (--name=V or --name V); 0: a flag */
	int id;           /* handed back to the callback */
};

/* How a command extends the shared parser; every field may be 0/NULL. */
struct common_extra {
	const struct common_opt *opts; /* array ended by an entry with name NULL */
	/* Called for each extra option seen, value NULL for flags. Returns 0, or 2 after printing a
	   usage error. */
	int (*handle)(void *ctx, int id, const char *value);
	void *ctx;
	/* The command's --help text (usage line first), printed to stdout on --help/-h; the
	   shared options are described after it. */
	const char *help;
	/* 1: the command takes no BINARY/PROFILE positionals of the usual kind; the first
	   positional and everything after it (or everything after "--") go to args.rest, unparsed
	   (e.g. `run [--] PROG ARGS`). */
	int raw_positionals;
};

struct common_args {
	const char *cmd;          /* the command name, for messages */

	int value_index;          /* PV_*: default PV_INUSE_BYTES */
	int value_given;          /* 1 when the user chose one */
	int show_bytes;           /* --show_bytes: space in bytes ("B") instead of MiB ("MB") */
	enum common_gran gran;    /* default GRAN_FUNCTIONS */
	int cum_sort;             /* --cum */

	const char *focus;        /* --focus=RE (POSIX ERE), or NULL */
	const char *ignore;       /* --ignore=RE, or NULL */
	regex_t focus_re, ignore_re; /* compiled when focus/ignore are set */

	int nodecount;            /* --nodecount=N; -1 when not given (each command picks its default) */
	double nodefraction;      /* default 0.005 */
	double edgefraction;      /* default 0.001 */
	int maxdegree;            /* default 8 */

	char **lib_prefix;        /* NULL-terminated (--lib-prefix / --lib_prefix, comma-separated, repeatable), or NULL */
	size_t nlib_prefix;
	const char *sysroot;      /* --sysroot=DIR, or NULL */
	const char *base;         /* --base=PROFILE, or NULL */
	int drop_negative;        /* --drop_negative (with --base) */
	int no_symbolize;         /* --no-symbolize */
	const char *debug_dir;    /* --debug-dir=DIR: root of separate debug files, or NULL */
	int no_demangle;          /* --no-demangle */
	int no_inlines;           /* --no-inlines */
	int keep_allocator;       /* --keep-allocator: do not trim the allocator's frames */
	const char *output;       /* -o FILE / --output=FILE, or NULL (commands that write files) */

	const char *binary;       /* the ELF positional, or NULL */
	char **profiles;          /* the other positionals, in order */
	size_t nprofiles;
	char **rest;              /* with raw_positionals: every positional (and all after "--") */
	size_t nrest;
};

/*
 * Parses argv (argv[0] is the command name). Options may come anywhere, as --opt=V, --opt V,
 * -opt=V or -opt V (pprof style; -sample_index=inuse_space|inuse_objects|alloc_space|
 * alloc_objects|0..3 too). "--" ends the options. Positionals are classified by content: a
 * file starting with the ELF magic is the binary (at most one), anything else a profile.
 * Returns -1 when the command should go on, otherwise the exit status to return at once:
 * 0 after --help, 2 after a usage error (message printed with a hint to --help). A missing
 * positional file is not an error here (common_load reports it). Allocates; when it returns
 * -1 the caller releases with common_args_release, otherwise a has been released already.
 */
int common_parse(struct common_args *a, int argc, char **argv, const struct common_extra *extra);
void common_args_release(struct common_args *a);

/* For commands that print their report (top, diff, collapsed): with -o FILE (not "-"), points
   stdout at FILE (created or truncated). Returns 0, or 1 with "heaptap: FILE: <why>" printed. */
int common_redirect_stdout(const struct common_args *a);

/* Prints "heaptap: <cmd>: <msg>" and the --help hint to stderr; returns 2. */
int common_usage_error(const struct common_args *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* 1 if path is a readable regular file starting with the ELF magic, else 0 (a FIFO or a
   device is not opened for reading or waited on). */
int common_is_elf(const char *path);


/*
 * Reads one profile file into p (profile_init'ed by the caller); "-" reads standard input. Returns 0, or 1 after printing
 * "heaptap: <path>: No such file or directory" or the reader's message.
 */
int common_read(const struct common_args *a, const char *path, struct profile *p);

/* Symbolizes p (unless --no-symbolize) with the binary, lib prefixes and sysroot of a.
   Returns 0 or 1 (message printed). */
int common_symbolize(const struct common_args *a, struct profile *p);

/*
 * The usual pipeline: reads every profile of a (at least one, else a usage error, 2), sums
 * them, subtracts --base when given (dropping negatives with --drop_negative), symbolizes.
 * p must be profile_init'ed; the caller releases it. Returns 0, 1 (bad input) or 2.
 * Pass with_base 0 to ignore --base (diff loads it itself).
 */
int common_load(const struct common_args *a, struct profile *p, int with_base);

/* One sentence (no newline) saying what p's stacks do not show: samples the collector dropped
   and stacks it cut at prof_bt_max, with counts and estimated shares of the bytes. Returns 0
   (buf empty) when there is nothing to say. */
int common_losses_text(const struct profile *p, char *buf, size_t cap);
/* Prints common_losses_text as one "heaptap: warning:" line on stderr, when there is one. */
void common_warn_losses(const struct profile *p);

/* 0 when profiles a and b may be summed or compared; else prints "heaptap: <b's file>: is a
   CPU profile and <a's file> a heap profile (...)" (or the other way round) and returns 1. */
int common_check_same_kind(const struct profile *a, const char *apath, const struct profile *b,
                           const char *bpath);
/* 1 once a CPU profile was loaded (common_load): values are samples and CPU nanoseconds. */
int common_is_cpu(void);
/* CPU nanoseconds for people: "1.23 s" from 1 s up, "45.6 ms" below (signed when sign). */
char *common_fmt_time(double ns, int sign, char *buf, size_t cap);

/* "MB", "B" or "objects" for the selected value ("s" or "samples" for a CPU profile). */
const char *common_unit(const struct common_args *a);
/* 1 when the selected value is a byte count. */
int common_is_space(const struct common_args *a);
/* Formats v the jeprof way for the selected value: space %.1f of MiB, or %d bytes / objects
   (truncated toward zero). Returns buf. */
char *common_fmt_value(const struct common_args *a, double v, char *buf, size_t cap);
/* v truncated toward zero, saturated to [LLONG_MIN, LLONG_MAX] (NaN gives 0): counts from
   a profile may be absurd (1e30), and converting those with a cast is undefined behaviour. */
long long common_sat_ll(double v);

/* Formats jeprof's percentage: "%.1f%%" of v/total, or nan/+inf/-inf when total is 0. */
char *common_fmt_percent(double v, double total, char *buf, size_t cap);

/* The name of value index k: "inuse_space", "inuse_objects", "alloc_space", "alloc_objects". */
const char *common_value_name(int k);


#endif
