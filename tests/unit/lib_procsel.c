/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib_procsel.c - unit test of lib/procsel.c: the glob matcher prof_procs uses ('*', '?',
 * classes, ranges, negation, an unterminated '['), the prof_procs option cleared for this
 * process when it is not named and kept when it is (the test binary is "lib_procsel"), and
 * the launchers' rule leaving a non-shell alone. Not a test of a process tree (e2e/http_tree).
 */
#include <string.h>

#include "../../lib/options.h"
#include "../../lib/procsel.h"
#include "check.h"

static int glob(const char *pat, const char *s)
{
	return procsel_glob(pat, strlen(pat), s);
}

int main(void)
{
	CHECK(glob("java", "java") && !glob("java", "javac") && !glob("java", "jav"));
	CHECK(glob("*", "") && glob("*", "bash") && glob("ja*", "java") && glob("*va", "java"));
	CHECK(glob("*a*a*", "java") && !glob("*a*a*a", "java") && glob("j?va", "java"));
	CHECK(glob("python3.[0-9]*", "python3.11") && !glob("python3.[0-9]*", "python3.x"));
	CHECK(glob("[!b]ash", "dash") && !glob("[!b]ash", "bash") && glob("[]x]", "]"));
	CHECK(glob("a[", "a[") && !glob("a[", "ab"));
	CHECK(glob("*/bin/java", "/usr/lib/jvm/x/bin/java") && !glob("*/bin/java", "/usr/bin/javac"));

	struct options o;
	options_init(&o);
	strcpy(o.http, "6060");
	strcpy(o.prof_procs, "java+python*");
	CHECK(procsel_apply(&o) == 0, "lib_procsel is not named");
	CHECK(o.prof == 0 && o.prof_prefix[0] == 0 && o.http[0] == 0 && o.prof_leak == 0);

	options_init(&o);
	strcpy(o.http, "6060");
	strcpy(o.prof_procs, "java+lib_proc*");
	CHECK(procsel_apply(&o) == 1 && o.prof == 1 && strcmp(o.http, "6060") == 0);

	options_init(&o);
	strcpy(o.http, "6060");
	CHECK(procsel_apply(&o) == 1 && strcmp(o.http, "6060") == 0, "not a shell: keeps the port");
	return check_finish("lib_procsel");
}
