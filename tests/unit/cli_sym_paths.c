/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cli_sym_paths.c - unit test of the symbolizer's pure parts: the order in which mapped files
 * and separate debug files are searched (jeprof's --lib_prefix order, GDB's debug-file
 * conventions), the debug-root choice, and name demangling (C++, Rust legacy with its hash
 * dropped, Rust v0, GCC clone suffixes, non-mangled names left alone).
 */
#include "../../cli/sym/demangle.h"
#include "../../cli/sym/findfile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"

struct list {
	char v[32][512];
	int n;
	int stop_at; /* 1-based index at which the callback stops, 0 = never */
};

static int collect(void *ctx, const char *path)
{
	struct list *l = ctx;
	if (l->n < 32)
		snprintf(l->v[l->n++], sizeof(l->v[0]), "%s", path);
	return l->stop_at && l->n == l->stop_at ? 7 : 0;
}

static void expect_list(const char *what, const struct list *l, const char *const *want)
{
	int n = 0;
	while (want[n])
		n++;
	CHECK(l->n == n, "%s: %d candidates, want %d", what, l->n, n);
	for (int i = 0; i < n && i < l->n; i++)
		CHECK(strcmp(l->v[i], want[i]) == 0, "%s[%d]: '%s', want '%s'", what, i, l->v[i], want[i]);
}

static void test_candidates(void)
{
	const char *const prefixes[] = {"/p", "/q", NULL};
	struct list l = {0};
	int rc = findfile_each_candidate("/lib/dir/x.so", prefixes, NULL, collect, &l);
	const char *const want[] = {"/p/lib/dir/x.so", "/q/lib/dir/x.so", "/p/dir/x.so", "/q/dir/x.so",
	                            "/p/x.so", "/q/x.so", "/lib/dir/x.so", NULL};
	CHECK(rc == 0, "rc %d", rc);
	expect_list("lib_prefix order", &l, want);

	memset(&l, 0, sizeof(l));
	findfile_each_candidate("/usr/lib/libz.so.1 (deleted)", NULL, "/sys/root", collect, &l);
	const char *const want2[] = {"/sys/root/usr/lib/libz.so.1", NULL};
	expect_list("sysroot, deleted suffix", &l, want2);

	memset(&l, 0, sizeof(l));
	findfile_each_candidate("/bin/prog", NULL, NULL, collect, &l);
	const char *const want3[] = {"/bin/prog", NULL};
	expect_list("plain", &l, want3);

	/* The callback's nonzero value stops the walk and is returned. */
	memset(&l, 0, sizeof(l));
	l.stop_at = 2;
	rc = findfile_each_candidate("/lib/dir/x.so", prefixes, NULL, collect, &l);
	CHECK(rc == 7 && l.n == 2, "stop: rc %d after %d candidates", rc, l.n);
}

static void test_debug_candidates(void)
{
	struct list l = {0};
	findfile_each_debug("/opt/app/bin/prog", "abcdef0123", "prog.debug", "/dbg", collect, &l);
	const char *const want[] = {"/dbg/.build-id/ab/cdef0123.debug", "/opt/app/bin/prog.debug",
	                            "/opt/app/bin/.debug/prog.debug", "/dbg/opt/app/bin/prog.debug",
	                            "/dbg/opt/app/bin/prog", "/dbg/opt/app/bin/prog.debug", NULL};
	expect_list("debug files", &l, want);

	/* A debuglink naming the file itself is not offered as its own debug file. */
	memset(&l, 0, sizeof(l));
	findfile_each_debug("/bin/prog", NULL, "prog", "/dbg", collect, &l);
	const char *const want2[] = {"/bin/.debug/prog", "/dbg/bin/prog", "/dbg/bin/prog", "/dbg/bin/prog.debug", NULL};
	expect_list("self debuglink", &l, want2);

	memset(&l, 0, sizeof(l));
	findfile_each_debug(NULL, "0011aa", NULL, "/r", collect, &l);
	const char *const want3[] = {"/r/.build-id/00/11aa.debug", NULL};
	expect_list("build ID only", &l, want3);
}

static void test_debug_root(void)
{
	unsetenv("HEAPTAP_DEBUG_ROOT");
	CHECK(strcmp(findfile_debug_root(NULL), "/usr/lib/debug") == 0, "default root");
	setenv("HEAPTAP_DEBUG_ROOT", "/env/root", 1);
	CHECK(strcmp(findfile_debug_root(NULL), "/env/root") == 0, "environment root");
	CHECK(strcmp(findfile_debug_root("/opt"), "/opt") == 0, "option beats environment");
	unsetenv("HEAPTAP_DEBUG_ROOT");
}

static void expect_demangle(const char *in, const char *want)
{
	char *got = demangle_name(in);
	if (!want)
		CHECK(got == NULL, "demangle(%s) = '%s', want none", in, got);
	else
		CHECK(got && strcmp(got, want) == 0, "demangle(%s) = '%s', want '%s'", in, got ? got : "(null)", want);
	free(got);
}

static void test_demangle(void)
{
	expect_demangle("_ZN6shapes6detail4PoolIiLi3EEpLERKi", "shapes::detail::Pool<int, 3>::operator+=(int const&)");
	expect_demangle("_ZN6shapesplERKNS_3VecES2_", "shapes::operator+(shapes::Vec const&, shapes::Vec const&)");
	expect_demangle("_ZN12_GLOBAL__N_16hiddenEi", "(anonymous namespace)::hidden(int)");
	expect_demangle("_Z3fooi.constprop.0", "foo(int) [clone .constprop.0]");
	/* Rust legacy: the 17h<hash>E suffix goes, like rustfilt; $LT$/$GT$ escapes decode. */
	expect_demangle("_ZN1m10alloc_here17hdda5053d6ed7b78fE", "m::alloc_here");
	expect_demangle("_ZN1m5inner15Holder$LT$T$GT$4grow17h17a36d2b48b753d6E", "m::inner::Holder<T>::grow");
	/* Rust v0. */
	expect_demangle("_RNvCskK7mfDs1mzF_1m10alloc_here", "m::alloc_here");
	expect_demangle("_RNvMNtCskK7mfDs1mzF_1m5innerINtB2_6HolderjE4growB4_", "<m::inner::Holder<usize>>::grow");
	/* Not mangled: left to the caller. */
	expect_demangle("main", NULL);
	expect_demangle("_start", NULL);
	expect_demangle("", NULL);
	CHECK(demangle_is_mangled("__ZN1a1bEv") == 1, "double underscore prefix");
	CHECK(demangle_is_mangled("_Rust") == 1 && demangle_is_mangled("Z") == 0, "prefix checks");
	expect_demangle("_Zfoo_not_valid", NULL);
}

int main(void)
{
	test_candidates();
	test_debug_candidates();
	test_debug_root();
	test_demangle();
	if (failures) {
		printf("%d failure(s)\n", failures);
		return 1;
	}
	printf("cli_sym_paths: all passed\n");
	return 0;
}
