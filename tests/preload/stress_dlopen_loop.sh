#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# stress_dlopen_loop.sh - dlopen/dlclose 300 times of a library whose function allocates (and
# keeps 1 KiB each time), under the collector at lg_prof_sample:0: no crash, the exact bytes
# kept are attributed to the library's function by name although it is unloaded at exit.
. "$(dirname "$0")/../e2e/lib/host.sh"
cat >"$HOST_TMP/plugin.c" <<'C'
#include <stdlib.h>
#include <string.h>
__attribute__((noinline)) void *plugin_alloc(size_t n)
{
	void *p = malloc(n);
	memset(p, 1, n);
	void *tmp = malloc(n * 4); /* churn freed before unload */
	free(tmp);
	return p;
}
C
cat >"$HOST_TMP/loop.c" <<'C'
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
void *kept[300];
int main(int argc, char **argv)
{
	for (int i = 0; i < 300; i++) {
		void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
		if (!h) { fprintf(stderr, "%s\n", dlerror()); return 1; }
		void *(*f)(size_t) = (void *(*)(size_t))dlsym(h, "plugin_alloc");
		kept[i] = f(1024);
		dlclose(h);
	}
	long sum = 0;
	for (int i = 0; i < 300; i++) sum += ((unsigned char *)kept[i])[5];
	printf("kept 300 x 1024 bytes, checksum %ld\n", sum);
	fflush(stdout);
	exit(0);
}
C
cc -O1 -g -shared -fPIC -o "$HOST_TMP/libplugin.so" "$HOST_TMP/plugin.c" || host_fail "cc plugin"
cc -O1 -g -o "$HOST_TMP/loop" "$HOST_TMP/loop.c" -ldl || host_fail "cc loop"
host_compare dl "$HOST_TMP/loop" "$HOST_TMP/libplugin.so"
dump=$(host_dumps dl.lg_prof_sample:0)
grep -q 'unloaded=1 path=.*libplugin.so' "$dump" || host_fail "the unloaded plugin is not kept in the dump's map"
"$HEAPTAP" top --show_bytes "$HOST_TMP/loop" "$dump" >"$HOST_TMP/top" || host_fail "top failed"
got=$(awk '$6 == "plugin_alloc" { print $1 }' "$HOST_TMP/top")
echo "plugin_alloc (unloaded): ${got:-nothing} bytes, want $((300 * 1024))"
[ "$got" = $((300 * 1024)) ] || { head "$HOST_TMP/top"; host_fail "plugin_alloc holds ${got:-nothing}"; }
host_check_parse dl.default
echo "dlopen loop ok"
