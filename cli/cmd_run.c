/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cmd_run.c - `heaptap run [--conf K:V,...] [--out DIR] -- PROG ARGS`: runs a program with
 * libheaptap.so preloaded, passes its exit status on, then reads the final dump it left and
 * prints where the live memory was at exit (allocation sites with file:line, bytes, objects,
 * %) and the files written (the dump, a collapsed-stacks file, a flame graph and a pprof file).
 * It does not profile by itself: the collector does. The dump is read and symbolized once and
 * every view is drawn from that one model (views.h); dump file names are parsed by
 * profile/series.c.
 */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../base/allocsym.h"
#include "../base/elffile.h"
#include "../profile/reader.h"
#include "../profile/series.h"
#include "cmd.h"
#include "common.h"
#include "memline.h"
#include "mapfile.h"
#include "memlimit.h"
#include "stacks.h"
#include "views.h"

enum { X_CONF = 1, X_OUT, X_TOP, X_QUIET, X_CPU };

static const char run_help[] =
	"usage: heaptap run [--conf KEY:VAL,...] [--out DIR] [--top N] [--cpu] [--] PROG [ARGS...]\n"
	"Runs PROG under the heaptap collector (libheaptap.so preloaded) and, when it exits, prints\n"
	"what it allocated, what was live at exit, the allocation sites that held the most live\n"
	"memory (function file:line, bytes, objects, %; 'from' names the program's own frame when\n"
	"the site is in library code) and the files written to DIR: the final dump (jeprof reads\n"
	"it), folded stacks, a flame graph (SVG) and a pprof profile (go tool pprof).\n"
	"Exits with PROG's status (128+N on signal N, 127 not found, 126 not executable); a\n"
	"statically linked PROG cannot be preloaded into and is refused (exit 1).\n"
	"  --conf KEY:VAL,...     collector options (HEAPTAP_CONF syntax, e.g. lg_prof_sample:17)\n"
	"  --out DIR              where the files go (default: ./heaptap-out)\n"
	"  --top N                how many sites to print (default 10)\n"
	"  -q, --quiet            print no report, only write the files\n"
	"  --cpu                  also profile CPU time (cpu_prof:true): a pprof CPU profile of the\n"
	"                         run, DIR/heaptap.<pid>.cpu.pb, and its total in the report\n"
	"  --lib_prefix=DIR[,DIR] --sysroot=DIR --debug-dir=DIR   where the program, its libraries\n"
	"                         and debug files are looked for, for the report and every file\n"
	"  --keep-allocator       keep the allocator's frames (malloc, jemalloc, Rust's shims)\n"
	"Unless the options set a dump schedule, a periodic dump is kept (replaced every 5 s) and\n"
	"reported when PROG ends without a final dump (Ctrl-C, a crash).\n"
	"With --conf prof_gdump:true the collector also dumps at new high-water marks (at most one a\n"
	"second) and the report adds the largest live estimate among them (the peak).\n"
	"A PROG that carries its own jemalloc (a Rust program on tikv-jemallocator: _rjem_mallctl\n"
	"in its symbol table) is profiled through it: run sets _RJEM_MALLOC_CONF (MALLOC_CONF for\n"
	"an unprefixed one) to prof:true,prof_accum:true before its own value, so it still wins.\n"
	"The collector is found as $HEAPTAP_LIB, next to the heaptap binary, or in ../lib/heaptap/.\n";

struct run_opts {
	const char *conf;
	const char *out;
	long top;
	int quiet;
	int cpu;
};

static int handle(void *ctx, int id, const char *v)
{
	struct run_opts *o = ctx;
	char *end;
	switch (id) {
	case X_CONF: o->conf = v; break;
	case X_OUT: o->out = v; break;
	case X_QUIET: o->quiet = 1; break;
	case X_CPU: o->cpu = 1; break;
	case X_TOP:
		errno = 0;
		o->top = strtol(v, &end, 10);
		if (errno || end == v || *end || o->top < 0) {
			fprintf(stderr, "heaptap: run: --top: expected a non-negative integer, got '%s'\n"
			                "heaptap: try 'heaptap run --help'\n", v);
			return 2;
		}
		break;
	}
	return 0;
}

/* Finds libheaptap.so; returns a malloc'd absolute path or NULL. */
static char *find_lib(void)
{
	const char *env = getenv("HEAPTAP_LIB");
	if (env && *env && access(env, R_OK) == 0)
		return realpath(env, NULL);
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return NULL;
	exe[n] = '\0';
	char *slash = strrchr(exe, '/');
	if (!slash)
		return NULL;
	*slash = '\0';
	static const char *const rel[] = {"libheaptap.so", "../lib/heaptap/libheaptap.so",
	                                  "../lib/libheaptap.so", NULL};
	for (int i = 0; rel[i]; i++) {
		char cand[PATH_MAX + 64];
		snprintf(cand, sizeof(cand), "%s/%s", exe, rel[i]);
		if (access(cand, R_OK) == 0)
			return realpath(cand, NULL);
	}
	return NULL;
}

/* mkdir -p for one or more missing levels. */
static int make_dirs(const char *dir)
{
	char buf[PATH_MAX];
	snprintf(buf, sizeof(buf), "%s", dir);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) != 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(buf, 0755) != 0 && errno != EEXIST)
		return -1;
	struct stat st;
	if (stat(buf, &st) != 0 || !S_ISDIR(st.st_mode)) {
		errno = ENOTDIR;
		return -1;
	}
	return 0;
}

/* Where execvp would find prog: prog itself when it has a '/', else the first executable
   regular file in $PATH. Writes into out; returns 0, or -1 when there is none. */
static int resolve_prog(const char *prog, char *out, size_t cap)
{
	if (strchr(prog, '/')) {
		snprintf(out, cap, "%s", prog);
		return 0;
	}
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (const char *p = path;;) {
		const char *colon = strchr(p, ':');
		size_t len = colon ? (size_t)(colon - p) : strlen(p);
		struct stat st;
		snprintf(out, cap, "%.*s%s%s", (int)len, p, len ? "/" : "", prog);
		if (stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0)
			return 0;
		if (!colon)
			return -1;
		p = colon + 1;
	}
}

/* 1 when path is an ELF executable without a program interpreter (linked with -static or
   -static-pie): the dynamic loader never runs in it, so LD_PRELOAD cannot load the collector.
   0 for anything else (dynamically linked ELF, scripts, unreadable files). */
static int is_static_elf(const char *path)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC); /* a FIFO is not waited on */
	if (fd < 0)
		return 0;
	unsigned char h[64];
	int is_static = 0;
	if (read(fd, h, sizeof(h)) == (ssize_t)sizeof(h) && memcmp(h, ELFMAG, SELFMAG) == 0 &&
	    (h[EI_CLASS] == ELFCLASS64 || h[EI_CLASS] == ELFCLASS32) && h[EI_DATA] == ELFDATA2LSB) {
		int is64 = h[EI_CLASS] == ELFCLASS64;
		uint16_t type, phnum, phentsize;
		uint64_t phoff;
		if (is64) {
			Elf64_Ehdr e;
			memcpy(&e, h, sizeof(e));
			type = e.e_type, phnum = e.e_phnum, phentsize = e.e_phentsize, phoff = e.e_phoff;
		} else {
			Elf32_Ehdr e;
			memcpy(&e, h, sizeof(e));
			type = e.e_type, phnum = e.e_phnum, phentsize = e.e_phentsize, phoff = e.e_phoff;
		}
		size_t want = is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
		if ((type == ET_EXEC || type == ET_DYN) && phnum > 0 && phentsize >= want) {
			int interp = 0, ok = 1;
			for (uint16_t i = 0; i < phnum && ok && !interp; i++) {
				unsigned char ph[sizeof(Elf64_Phdr)];
				ok = pread(fd, ph, want, (off_t)(phoff + (uint64_t)i * phentsize)) == (ssize_t)want;
				uint32_t pt;
				memcpy(&pt, ph, sizeof(pt)); /* p_type comes first in both classes */
				interp = ok && pt == PT_INTERP;
			}
			/* An ET_DYN without PT_INTERP is a shared library or a static-pie; only the
			   latter has an entry point to run. */
			is_static = ok && !interp;
		}
	}
	close(fd);
	return is_static;
}

/* The value of key (e.g. "lg_prof_sample") in a HEAPTAP_CONF-style list, copied into out;
   the last occurrence wins. 1 when found. */
static int conf_value(const char *conf, const char *key, char *out, size_t cap)
{
	size_t kl = strlen(key);
	int found = 0;
	for (const char *p = conf; p && *p;) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		if (n > kl && strncmp(p, key, kl) == 0 && p[kl] == ':' && n - kl - 1 < cap) {
			memcpy(out, p + kl + 1, n - kl - 1);
			out[n - kl - 1] = '\0';
			found = 1;
		}
		p = end ? end + 1 : NULL;
	}
	return found;
}

/*
 * When the program at exe carries its own jemalloc (its symbol tables define <prefix>mallctl),
 * sets that jemalloc's <PREFIX>MALLOC_CONF so its profiler runs (prof:true, cumulative counts
 * as run asks of heaptap, heaptap's lg_prof_sample when conf sets one), in front of the
 * variable's current value, which keeps the last word. The collector then drives it
 * (lib/jemalloc_backend.h). Returns 0, or -1 when setenv fails.
 */
static int setup_own_jemalloc(const char *exe, const char *prog, const char *conf, int quiet)
{
	struct elffile f;
	struct allocsym_found a;
	if (elffile_open(&f, exe) != 0)
		return 0;
	allocsym_scan(&f, &a);
	elffile_close(&f);
	if (!a.jemalloc)
		return 0;
	char var[ALLOCSYM_PREFIX_MAX + 16], lg[16], val[4096];
	allocsym_conf_var(a.je_prefix, var, sizeof(var));
	const char *old = getenv(var);
	int has_lg = conf_value(conf, "lg_prof_sample", lg, sizeof(lg));
	snprintf(val, sizeof(val), "prof:true,prof_accum:true%s%s%s%s", has_lg ? ",lg_prof_sample:" : "",
	         has_lg ? lg : "", old && *old ? "," : "", old && *old ? old : "");
	if (!quiet)
		fprintf(stderr, "heaptap: run: %s carries its own jemalloc (%smallctl): profiling through it "
		                "with %s=%s\n", prog, a.je_prefix, var, val);
	return setenv(var, val, 1);
}

/* Runs argv with the collector; returns the status to exit with, *pid the child's pid, *sig
   the signal that killed it (0 when it exited). */
static int run_child(char **argv, const char *lib, const char *conf, pid_t *pid_out, int *sig)
{
	const char *old = getenv("LD_PRELOAD");
	char *preload;
	if (asprintf(&preload, "%s%s%s", lib, old && *old ? ":" : "", old && *old ? old : "") < 0)
		return -1;
	fflush(stdout);
	fflush(stderr);
	struct sigaction ign = {.sa_handler = SIG_IGN}, oint, oquit;
	sigaction(SIGINT, &ign, &oint);
	sigaction(SIGQUIT, &ign, &oquit);
	pid_t pid = fork();
	if (pid < 0) {
		free(preload);
		return -1;
	}
	if (pid == 0) {
		sigaction(SIGINT, &oint, NULL);
		sigaction(SIGQUIT, &oquit, NULL);
		memlimit_restore(); /* PROG's memory is its own business */
		setenv("LD_PRELOAD", preload, 1);
		setenv("HEAPTAP_CONF", conf, 1);
		execvp(argv[0], argv);
		fprintf(stderr, "heaptap: run: %s: %s\n", argv[0], strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	free(preload);
	*pid_out = pid;
	int st;
	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR) {
			st = -1;
			break;
		}
	}
	sigaction(SIGINT, &oint, NULL);
	sigaction(SIGQUIT, &oquit, NULL);
	if (st == -1)
		return -1;
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	*sig = WTERMSIG(st);
	return 128 + WTERMSIG(st);
}

/* 1 when name (a file in run's directory) is a dump of run's naming scheme,
   heaptap.<pid>.<seq>.<kind>[<n>].<ext>, as profile/series.c parses it; e gets its fields. */
static int dump_name(const char *name, struct series_entry *e)
{
	return series_parse_name(name, e) && e->kind && e->prefix_len == 7 && strncmp(name, "heaptap", 7) == 0;
}

/* 1 when name is a heap_v2 dump (.heap) of run's scheme; e gets its fields. */
static int heap_dump_name(const char *name, struct series_entry *e)
{
	return dump_name(name, e) && strcmp(e->ext, ".heap") == 0;
}

/* The largest live estimate among pid's high-water dumps (heaptap.<pid>.<seq>.u<n>.heap, written
   with prof_gdump:true), in bytes; 0 when there are none. */
static double peak_from_gdumps(const char *dir, pid_t pid, int *ndumps)
{
	*ndumps = 0;
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	double peak = 0;
	struct dirent *e;
	struct series_entry se;
	while ((e = readdir(d))) {
		if (!heap_dump_name(e->d_name, &se) || se.pid != pid || se.kind != 'u')
			continue;
		char *path;
		if (asprintf(&path, "%s/%s", dir, e->d_name) < 0)
			continue;
		struct profile q;
		profile_init(&q);
		char err[256];
		if (profile_read_file(path, &q, err, sizeof(err)) == 0) {
			double t = profile_total(&q, PV_INUSE_BYTES);
			if (t > peak)
				peak = t;
			(*ndumps)++;
		}
		profile_release(&q);
		free(path);
	}
	closedir(d);
	return peak;
}

/* Removes pid's periodic dumps (heaptap.<pid>.<seq>.t<n>.*) under dir: the safety copy run
   asked for is not needed once the final dump exists. */
static void remove_periodic(const char *dir, pid_t pid)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	struct series_entry se;
	while ((e = readdir(d))) {
		if (!dump_name(e->d_name, &se) || se.pid != pid || se.kind != 't' || se.kseq < 0)
			continue;
		char *path;
		if (asprintf(&path, "%s/%s", dir, e->d_name) >= 0) {
			unlink(path);
			free(path);
		}
	}
	closedir(d);
}

/* The final dump of pid under dir (heaptap.<pid>.<seq>.f.heap, the highest seq), or with
   final_only 0 its newest dump of any kind (heaptap.<pid>.<seq>.<kind><n>.heap); NULL if none. */
static char *find_dump_kind(const char *dir, pid_t pid, char kind)
{
	DIR *d = opendir(dir);
	if (!d)
		return NULL;
	char *best = NULL;
	long long best_seq = -1;
	struct dirent *e;
	struct series_entry se;
	while ((e = readdir(d))) {
		if (!heap_dump_name(e->d_name, &se) || se.pid != pid || (kind && se.kind != kind) ||
		    (!kind && se.kind == 'p'))
			continue;
		if (se.seq > best_seq) {
			free(best);
			if (asprintf(&best, "%s/%s", dir, e->d_name) < 0)
				best = NULL;
			best_seq = se.seq;
		}
	}
	closedir(d);
	return best;
}

/* The final dump (final_only) or the newest dump of any kind but the peak profile. */
static char *find_dump(const char *dir, pid_t pid, int final_only)
{
	return find_dump_kind(dir, pid, final_only ? 'f' : 0);
}

static int cmp_str(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

/* The names of the final dumps (*.f.heap) in dir now, sorted; *n their count. Caller frees
   each name and the array. */
static char **list_final_dumps(const char *dir, size_t *n)
{
	*n = 0;
	char **v = NULL;
	size_t cap = 0;
	DIR *d = opendir(dir);
	if (!d)
		return NULL;
	struct dirent *e;
	struct series_entry se;
	while ((e = readdir(d))) {
		if (!series_parse_name(e->d_name, &se) || se.kind != 'f' || strcmp(se.ext, ".heap") != 0)
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 64;
			char **nv = realloc(v, cap * sizeof(*v));
			if (!nv)
				break;
			v = nv;
		}
		if (!(v[*n] = strdup(e->d_name)))
			break;
		(*n)++;
	}
	closedir(d);
	if (*n)
		qsort(v, *n, sizeof(*v), cmp_str);
	return v;
}

/* Final dumps under dir of processes other than pid that were not there before the run
   (before[0..nbefore), sorted): the children PROG started (a shell's, a build's). The one that
   held the most live memory goes to *best (malloc'd path, or NULL) and is left read (not
   symbolized) in *bestp (profile_init'ed by the caller), with its live bytes, pid and program
   name (cap bytes). Returns how many there were. */
static int child_dumps(const char *dir, pid_t pid, char *const *before, size_t nbefore, char **best,
                       struct profile *bestp, double *best_live, pid_t *best_pid, char *prog, size_t cap)
{
	*best = NULL;
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	int n = 0;
	struct dirent *e;
	struct series_entry se;
	while ((e = readdir(d))) {
		const char *nm = e->d_name;
		if (!heap_dump_name(nm, &se) || se.kind != 'f' || se.pid == pid)
			continue;
		if (nbefore && bsearch(&nm, before, nbefore, sizeof(*before), cmp_str))
			continue;
		char *path;
		if (asprintf(&path, "%s/%s", dir, nm) < 0)
			continue;
		n++;
		struct profile q;
		profile_init(&q);
		char err[256];
		double live = -1;
		if (n <= 64 && profile_read_file(path, &q, err, sizeof(err)) == 0)
			live = profile_total(&q, PV_INUSE_BYTES);
		if (live >= 0 && (!*best || live > *best_live)) {
			free(*best);
			*best = path;
			path = NULL;
			*best_live = live;
			*best_pid = (pid_t)se.pid;
			const char *name = q.cmdline && *q.cmdline ? q.cmdline : q.exe_path ? q.exe_path : "?";
			snprintf(prog, cap, "%.*s", (int)strcspn(name, " "), name);
			profile_release(bestp);
			*bestp = q; /* moved: q is not released */
			profile_init(&q);
		}
		profile_release(&q);
		free(path);
	}
	closedir(d);
	return n;
}

struct site {
	uint32_t name; /* the leaf: the caller of malloc (or the innermost inlined frame) */
	int64_t from;  /* the frame of the program's own code that leads there, or -1 */
	double bytes, objs, abytes, aobjs;
	const char *module; /* the leaf's mapped file, or NULL */
};

static int cmp_site_key(const void *x, const void *y)
{
	const struct site *a = x, *b = y;
	if (a->name != b->name)
		return a->name < b->name ? -1 : 1;
	return a->from < b->from ? -1 : a->from > b->from;
}

static int cmp_live(const void *x, const void *y)
{
	const struct site *a = x, *b = y;
	if (a->bytes != b->bytes)
		return a->bytes > b->bytes ? -1 : 1;
	return cmp_site_key(x, y);
}

static int cmp_alloc(const void *x, const void *y)
{
	const struct site *a = x, *b = y;
	if (a->abytes != b->abytes)
		return a->abytes > b->abytes ? -1 : 1;
	return cmp_site_key(x, y);
}

/* 1 when a "function file:line" name is in the program's own sources: a known file that is
   not a system header or library source (/usr/..., glibc's "./..." paths, Rust's standard
   library under /rustc/<hash>/, crates under ~/.cargo/registry/). */
static int own_code(const char *name)
{
	const char *file = strrchr(name, ' ');
	if (!file)
		return 0;
	file++;
	return strncmp(file, "??", 2) != 0 && strncmp(file, "/usr/", 5) != 0 && strncmp(file, "./", 2) != 0 &&
	       strncmp(file, "/rustc/", 7) != 0 && !strstr(file, "/.cargo/registry/");
}

/* 1 when the ELF file at path names libstdc++ (in its dynamic string table: it needs it). */
static int links_libstdcxx(const char *path)
{
	size_t n = 0;
	const unsigned char *m = mapfile_map(path, &n);
	int found = m && memmem(m, n, "libstdc++.so", 12) != NULL;
	mapfile_unmap(m, n);
	return found;
}

/* Prints up to o->top rows of sites (sorted), the value chosen by alloc. */
static void print_sites(const struct stacks *s, const struct site *sites, size_t n, long top,
                        int alloc, double total)
{
	char b1[32], name[4096];
	printf("\n%12s %6s %10s  %s\n", alloc ? "allocated" : "live bytes", "%", "objects",
	       "allocation site (function file:line)");
	for (size_t i = 0; i < n && (long)i < top; i++) {
		double bytes = alloc ? sites[i].abytes : sites[i].bytes;
		if (bytes <= 0)
			break;
		memline_bytes(bytes, b1, sizeof(b1), 0);
		/* A function without line information (a library without debug info): name its
		   library instead of addr2line's "??:?". */
		const char *nm = s->names[sites[i].name].name;
		size_t len = strlen(nm);
		const char *mod = sites[i].module ? strrchr(sites[i].module, '/') : NULL;
		if (mod && len > 5 && strcmp(nm + len - 5, " ??:?") == 0)
			snprintf(name, sizeof(name), "%.*s (%s)", (int)(len - 5), nm, mod + 1);
		else
			snprintf(name, sizeof(name), "%s", nm);
		printf("%12s %5.1f%% %10.0f  %s\n", b1, 100.0 * bytes / total,
		       alloc ? sites[i].aobjs : sites[i].objs, name);
		if (sites[i].from >= 0)
			printf("%31s  from %s\n", "", s->names[sites[i].from].name);
	}
}

/* The allocation sites of p (symbolized) into a calloc'd array (*nsites of them, merged by
   site) over the stacks *s it builds; NULL on failure (s then released). */
static struct site *build_sites(const struct profile *p, struct stacks *s_out, size_t *nsites_out)
{
	struct stacks_options so = {.value_index = PV_INUSE_BYTES, .gran = GRAN_LINES, .style = STACKS_SHORT, .trim = -1,
	                            .unresolved = STACKS_UNRESOLVED_MODULE};
	if (p->has_alloc)
		so.value_index = PV_ALLOC_BYTES; /* keep the traces of freed memory too */
	struct stacks s;
	if (stacks_build(&s, p, &so))
		return NULL;
	struct site *sites = calloc(s.ntraces + 1, sizeof(*sites));
	if (!sites) {
		stacks_release(&s);
		return NULL;
	}
	/* One site per (leaf, nearest frame of the program's own code when the leaf is not). */
	for (size_t t = 0; t < s.ntraces; t++) {
		const struct stacks_trace *tr = &s.traces[t];
		struct site *st = &sites[t];
		st->name = tr->frames[tr->nframes - 1];
		st->from = -1;
		const struct prof_mapping *m =
			tr->sample && tr->sample->naddrs ? profile_find_mapping(p, tr->sample->addrs[0]) : NULL;
		st->module = m && m->path && m->path[0] ? m->path : NULL;
		if (!own_code(s.names[st->name].name)) {
			for (uint32_t k = tr->nframes - 1; k-- > 0;) {
				if (own_code(s.names[tr->frames[k]].name)) {
					st->from = tr->frames[k];
					break;
				}
			}
		}
		st->bytes = tr->v[PV_INUSE_BYTES];
		st->objs = tr->v[PV_INUSE_OBJS];
		st->abytes = tr->v[PV_ALLOC_BYTES];
		st->aobjs = tr->v[PV_ALLOC_OBJS];
	}
	qsort(sites, s.ntraces, sizeof(*sites), cmp_site_key);
	size_t nsites = 0;
	for (size_t t = 0; t < s.ntraces; t++) {
		if (nsites > 0 && cmp_site_key(&sites[nsites - 1], &sites[t]) == 0) {
			sites[nsites - 1].bytes += sites[t].bytes;
			sites[nsites - 1].objs += sites[t].objs;
			sites[nsites - 1].abytes += sites[t].abytes;
			sites[nsites - 1].aobjs += sites[t].aobjs;
		} else {
			sites[nsites++] = sites[t];
		}
	}
	*s_out = s;
	*nsites_out = nsites;
	return sites;
}

/* Prints the live-at-exit report of p (the dump, symbolized). Returns 0 or 1. */
static int report(const struct run_opts *o, const struct profile *p, const char *prog, const char *when,
                  double peak, int npeak)
{
	struct stacks s;
	size_t nsites;
	struct site *sites = build_sites(p, &s, &nsites);
	if (!sites)
		return 1;
	double live = s.total_v[PV_INUSE_BYTES], live_objs = s.total_v[PV_INUSE_OBJS];
	char b1[32], b2[32], note[96] = "";
	if (p->period > 1) {
		memline_bytes((double)p->period, b2, sizeof(b2), 1);
		snprintf(note, sizeof(note), " (estimated from samples, one per %s allocated on average)", b2);
	}
	printf("\n");
	if (p->has_alloc) {
		memline_bytes(s.total_v[PV_ALLOC_BYTES], b1, sizeof(b1), 0);
		double aobjs = s.total_v[PV_ALLOC_OBJS];
		printf("heaptap: allocated by %s while it ran: %s in %.0f object%s%s\n", prog, b1, aobjs,
		       aobjs >= 0.5 && aobjs < 1.5 ? "" : "s", note);
		note[0] = '\0';
	}
	if (live > 0) {
		memline_bytes(live, b1, sizeof(b1), 0);
		printf("heaptap: live heap of %s %s: %s in %.0f object%s%s\n", prog, when, b1, live_objs,
		       live_objs >= 0.5 && live_objs < 1.5 ? "" : "s", note);
	} else if (p->nsamples == 0 && p->period > 1) {
		printf("heaptap: live heap of %s %s: nothing sampled (one sample per %s allocated on "
		       "average; --conf lg_prof_sample:0 records every allocation)\n", prog, when, b2);
	} else if (p->nsamples == 0) {
		printf("heaptap: live heap of %s %s: none\n", prog, when);
	} else {
		printf("heaptap: live heap of %s %s: none (every sampled allocation was freed)%s\n",
		       prog, when, note);
	}
	char ml[512];
	if (memline_format(&p->mem, ml, sizeof ml) == 0)
		printf("heaptap: memory of %s %s: %s\n", prog, when, ml);
	/* jemalloc exports its own operator new/delete: C++ allocations then never reach the
	   malloc heaptap interposes. Say so rather than let a small report look complete. */
	int jemalloc = 0;
	for (size_t i = 0; i < p->nmaps; i++)
		jemalloc |= p->maps[i].path && stacks_is_allocator_module(p->maps[i].path);
	if (jemalloc && p->exe_path && links_libstdcxx(p->exe_path))
		printf("heaptap: note: %s runs on jemalloc, whose operator new bypasses the malloc heaptap "
		       "samples: C++ allocations are missing (profile it with MALLOC_CONF=prof:true and read "
		       "jemalloc's dumps with heaptap top)\n", prog);
	if (npeak > 0) {
		memline_bytes(peak > live ? peak : live, b1, sizeof(b1), 0);
		printf("heaptap: peak live heap seen: %s (largest of %d high-water dumps and the final one)\n",
		       b1, npeak);
	}
	if (live > 0) {
		qsort(sites, nsites, sizeof(*sites), cmp_live);
		print_sites(&s, sites, nsites, o->top, 0, live);
	} else if (p->has_alloc && s.total_v[PV_ALLOC_BYTES] > 0) {
		qsort(sites, nsites, sizeof(*sites), cmp_alloc);
		print_sites(&s, sites, nsites, o->top, 1, s.total_v[PV_ALLOC_BYTES]);
	}
	free(sites);
	stacks_release(&s);
	return 0;
}

/* Prints the "heap at its peak" table from pid's peak profile (heaptap.<pid>.<seq>.p.heap,
   written at exit with prof_peak:true), when there is one and it is larger than live. */
static void report_peak(const struct run_opts *o, const struct common_args *a, const char *dir, pid_t pid,
                        double live)
{
	char *path = find_dump_kind(dir, pid, 'p');
	if (!path)
		return;
	struct profile q;
	profile_init(&q);
	struct stacks s;
	size_t nsites;
	struct site *sites = NULL;
	if (common_read(a, path, &q) == 0 && common_symbolize(a, &q) == 0)
		sites = build_sites(&q, &s, &nsites);
	double peak = sites ? s.total_v[PV_INUSE_BYTES] : 0;
	if (sites && peak > live) {
		char b1[32];
		memline_bytes(peak, b1, sizeof(b1), 0);
		printf("\nheaptap: heap at its peak: %s (prof_peak: the live heap when it was largest, %s)\n",
		       b1, path + strlen(dir) + 1);
		qsort(sites, nsites, sizeof(*sites), cmp_live);
		print_sites(&s, sites, nsites, o->top, 0, peak);
	}
	if (sites) {
		free(sites);
		stacks_release(&s);
	}
	profile_release(&q);
	free(path);
}

/* Writes the other views of the dump p (symbolized): folded stacks to names[0], the flame
   graph to names[1] and, unless the collector wrote it, a pprof file to names[2]. ok[0..2] say
   which exist afterwards. Trims p's allocator frames. */
static void write_views(const struct common_args *a, struct profile *p, char *const names[3], int ok[3])
{
	FILE *f = fopen(names[0], "w");
	if (f) {
		ok[0] = views_folded(f, a, p, NULL, FOLDED_NEG_DROP) == 0;
		ok[0] &= fclose(f) == 0;
	}
	struct flame_options fo;
	flame_options_init(&fo);
	fo.countname = common_is_space(a) ? "bytes" : "objects";
	if ((f = fopen(names[1], "w"))) {
		ok[1] = views_flame(f, a, p, NULL, &fo, 0) == 0;
		ok[1] &= fclose(f) == 0;
	}
	if (access(names[2], F_OK) == 0)
		ok[2] = 1; /* the collector wrote one itself */
	else
		ok[2] = views_pprof(names[2], a, p, 1) == 0; /* last: it trims p */
}

/* The CPU profile of the run (--cpu): its line in the files list, with the CPU time it holds. */
static void print_cpu_file(const char *dir, const char *od, pid_t pid)
{
	char *path;
	if (asprintf(&path, "%s/heaptap.%d.cpu.pb", dir, (int)pid) < 0)
		return;
	struct profile cp;
	profile_init(&cp);
	char err[256];
	if (profile_read_file(path, &cp, err, sizeof(err)) == 0)
		printf("  CPU profile (go tool pprof): %s%s (%.2f s of CPU time)\n", od, path + strlen(dir),
		       profile_total(&cp, PV_INUSE_BYTES) / 1e9);
	else
		fprintf(stderr, "heaptap: run: no CPU profile: %s\n", err);
	profile_release(&cp);
	free(path);
}

int cmd_run(int argc, char **argv)
{
	struct run_opts o = {.out = "heaptap-out", .top = 10};
	static const struct common_opt opts[] = {{"conf", 1, X_CONF}, {"out", 1, X_OUT}, {"top", 1, X_TOP},
	                                         {"quiet", 0, X_QUIET}, {"q", 0, X_QUIET}, {"cpu", 0, X_CPU},
	                                         {NULL, 0, 0}};
	struct common_extra ex = {.opts = opts, .handle = handle, .ctx = &o, .help = run_help, .raw_positionals = 1};
	struct common_args a;
	int rc = common_parse(&a, argc, argv, &ex);
	if (rc >= 0)
		return rc;
	if (a.nrest == 0) {
		rc = common_usage_error(&a, "no program to run (heaptap run -- PROG ARGS)");
		common_args_release(&a);
		return rc;
	}
	char exe[PATH_MAX] = "";
	int resolved = resolve_prog(a.rest[0], exe, sizeof(exe)) == 0;
	if (resolved && is_static_elf(exe)) {
		fprintf(stderr, "heaptap: run: %s: statically linked, so LD_PRELOAD cannot load the "
		                "collector into it and nothing would be profiled; link it dynamically "
		                "(not run)\n", a.rest[0]);
		common_args_release(&a);
		return 1;
	}
	char *lib = find_lib();
	if (!lib) {
		fprintf(stderr, "heaptap: run: cannot find libheaptap.so (set HEAPTAP_LIB, or build it with make)\n");
		common_args_release(&a);
		return 1;
	}
	char *dir = NULL;
	if (make_dirs(o.out) != 0 || !(dir = realpath(o.out, NULL))) {
		fprintf(stderr, "heaptap: %s: %s\n", o.out, strerror(errno));
		free(lib);
		common_args_release(&a);
		return 1;
	}
	const char *envconf = getenv("HEAPTAP_CONF");
	/* A program stopped by Ctrl-C or a signal writes no final dump: unless the user chose the
	   dump schedule, keep one periodic dump (replaced every 5 s) to report instead. */
	int own_schedule = 0;
	static const char *const sched[] = {"prof_time_interval", "prof_max_dumps", "prof_gdump",
	                                    "lg_prof_interval", NULL};
	for (int i = 0; sched[i]; i++)
		own_schedule |= (envconf && strstr(envconf, sched[i])) || (o.conf && strstr(o.conf, sched[i]));
	char *conf;
	if (asprintf(&conf, "prof_prefix:%s/heaptap,prof_final:true,prof_accum:true,prof_peak:true%s%s%s%s%s%s", dir,
	             own_schedule ? "" : ",prof_time_interval:5s,prof_max_dumps:1",
	             o.cpu ? ",cpu_prof:true" : "",
	             envconf && *envconf ? "," : "", envconf && *envconf ? envconf : "",
	             o.conf && *o.conf ? "," : "", o.conf && *o.conf ? o.conf : "") < 0) {
		free(dir);
		free(lib);
		common_args_release(&a);
		return 1;
	}
	if (resolved && setup_own_jemalloc(exe, a.rest[0], conf, o.quiet) != 0) {
		fprintf(stderr, "heaptap: run: cannot set the environment: %s\n", strerror(errno));
		free(conf);
		free(dir);
		free(lib);
		common_args_release(&a);
		return 1;
	}
	pid_t pid = 0;
	int sig = 0;
	size_t nbefore;
	char **before = list_final_dumps(dir, &nbefore);
	int status = run_child(a.rest, lib, conf, &pid, &sig);
	pid_t run_pid = pid;
	if (status < 0) {
		fprintf(stderr, "heaptap: run: %s: %s\n", a.rest[0], strerror(errno));
		status = 1;
		goto done;
	}
	char *dump = find_dump(dir, pid, 1);
	const char *when = "at exit";
	if (!dump && !sig && (status == 127 || status == 126))
		goto done; /* exec failed (the child said why) */
	/* The dump reported and written out in other forms: read once, symbolized once. */
	struct profile p;
	profile_init(&p);
	int loaded = 0; /* 1: p holds dump, read but not yet symbolized */
	/* PROG may be a shell or a driver whose children did the work: report whichever process
	   held the most live memory. */
	const char *who = a.rest[0];
	char cprog[256] = "", *cdump = NULL;
	double clive = 0;
	pid_t cpid = 0;
	struct profile cp;
	profile_init(&cp);
	int nchild = child_dumps(dir, pid, before, nbefore, &cdump, &cp, &clive, &cpid, cprog, sizeof(cprog));
	int had_own = dump != NULL;
	if (cdump) {
		double mlive = -1;
		if (dump) {
			char err[256];
			if (profile_read_file(dump, &p, err, sizeof(err)) == 0) {
				mlive = profile_total(&p, PV_INUSE_BYTES);
				loaded = 1;
			} else {
				profile_release(&p);
			}
		}
		if (clive > mlive) {
			if (!o.quiet)
				printf("\nheaptap: run: %s started %d process%s that left dumps; reporting the one "
				       "that held the most live memory, %s (pid %d)\n", a.rest[0], nchild,
				       nchild == 1 ? "" : "es", cprog, (int)cpid);
			free(dump);
			dump = cdump;
			cdump = NULL;
			who = cprog;
			pid = cpid;
			profile_release(&p);
			p = cp; /* moved */
			profile_init(&cp);
			loaded = 1;
		}
		free(cdump);
	}
	profile_release(&cp);
	if (!dump) {
		if (sig)
			fprintf(stderr, "heaptap: run: %s was killed by signal %d (%s) before its final dump\n",
			        a.rest[0], sig, strsignal(sig));
		else
			fprintf(stderr, "heaptap: run: %s exited with status %d without a final dump (it skipped "
			                "the exit handlers, e.g. with _exit)\n", a.rest[0], status);
		dump = find_dump(dir, pid, 0);
		if (!dump) {
			fprintf(stderr, "heaptap: run: no dump to report (one is written every 5 s; "
			                "--conf prof_time_interval:1s writes one every second)\n");
			if (status == 0)
				status = 1;
			goto done;
		}
		fprintf(stderr, "heaptap: run: reporting the last dump it wrote: %s\n", dump);
		when = "in its last dump";
	}
	if (!own_schedule && strcmp(when, "at exit") == 0)
		remove_periodic(dir, pid);
	int npeak;
	double peak = peak_from_gdumps(dir, pid, &npeak);
	int lrc = loaded ? 0 : common_read(&a, dump, &p);
	if (lrc == 0)
		lrc = common_symbolize(&a, &p);
	if (lrc == 0)
		common_warn_losses(&p);
	if (lrc != 0 && status == 0)
		status = 1;
	if (lrc == 0 && !o.quiet && report(&o, &p, who, when, peak, npeak) != 0 && status == 0)
		status = 1;
	if (lrc == 0 && !o.quiet)
		report_peak(&o, &a, dir, pid, profile_total(&p, PV_INUSE_BYTES));

	/* The other views of the same dump, from the same loaded profile. */
	char *names[3] = {NULL, NULL, NULL};
	int ok[3] = {0, 0, 0};
	size_t blen = strlen(dump) - 5; /* without ".heap" */
	if (lrc == 0 && asprintf(&names[0], "%.*s.collapsed", (int)blen, dump) >= 0 &&
	    asprintf(&names[1], "%.*s.svg", (int)blen, dump) >= 0 && asprintf(&names[2], "%.*s.pb.gz", (int)blen, dump) >= 0)
		write_views(&a, &p, names, ok);
	if (!o.quiet) {
		/* Shown under the directory as the user named it. */
		char od[PATH_MAX];
		snprintf(od, sizeof(od), "%s", o.out);
		for (size_t l = strlen(od); l > 1 && od[l - 1] == '/';)
			od[--l] = '\0';
		if (strcmp(od, "/") == 0)
			od[0] = '\0';
		size_t dl = strlen(dir);
		printf("\nfiles:\n  dump (jeprof, heaptap top):  %s%s\n", od, dump + dl);
		if (ok[0])
			printf("  folded stacks:               %s%s\n", od, names[0] + dl);
		if (ok[1])
			printf("  flame graph:                 %s%s\n", od, names[1] + dl);
		if (ok[2])
			printf("  pprof (go tool pprof):       %s%s\n", od, names[2] + dl);
		if (o.cpu)
			print_cpu_file(dir, od, run_pid);
		int others = nchild - (who != a.rest[0]) + (who != a.rest[0] && had_own);
		if (others > 0)
			printf("  final dumps of %d other process%s of this run in %s (heaptap top, merge)\n",
			       others, others == 1 ? "" : "es", od[0] ? od : "/");
		fflush(stdout);
	}
	for (int i = 0; i < 3; i++)
		free(names[i]);
	profile_release(&p);
	free(dump);
done:
	for (size_t i = 0; i < nbefore; i++)
		free(before[i]);
	free(before);
	free(conf);
	free(dir);
	free(lib);
	common_args_release(&a);
	return status;
}
