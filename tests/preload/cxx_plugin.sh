#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# cxx_plugin.sh - operator new frames are stripped even when libstdc++ arrives late: a C
# program (no libstdc++ at start) dlopens a C++ plugin (RTLD_LOCAL) whose function allocates
# with new[]; the final dump must attribute exactly the plugin function's bytes to it, with
# no "operator new" leaf, both through jeprof and in the raw stack (frame 0 in the plugin).
set -u
command -v jeprof >/dev/null || { echo "jeprof not installed"; exit 77; }
command -v c++ >/dev/null || { echo "no C++ compiler"; exit 77; }
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
cat >"$d/plug.cc" <<'CC'
extern "C" __attribute__((noinline)) void *plug_alloc(int n) { return new char[n]; }
extern "C" __attribute__((noinline)) void *plug_obj() { return new long[4]; }
CC
cat >"$d/host.c" <<'C'
#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char **argv)
{
	void *h = dlopen(argv[1], RTLD_NOW);
	if (!h) { fprintf(stderr, "%s\n", dlerror()); return 1; }
	void *(*f)(int) = (void *(*)(int))dlsym(h, "plug_alloc");
	void *(*g)(void) = (void *(*)(void))dlsym(h, "plug_obj");
	for (int i = 0; i < 100; i++) { f(1000); g(); }
	return 0;
}
C
c++ -shared -fPIC -O1 -g -o "$d/libplug.so" "$d/plug.cc" || exit 1
cc -O1 -g -o "$d/host" "$d/host.c" -ldl || exit 1
ldd "$d/host" | grep -q 'libstdc++' && { echo "host must not link libstdc++"; exit 1; }
cd "$d"
HEAPTAP_CONF=lg_prof_sample:0 LD_PRELOAD="$HEAPTAP_LIB" ./host "$d/libplug.so" || { echo "host failed"; exit 1; }
f=$(ls *.f.heap)
out=$(jeprof --text --show_bytes ./host "$f" 2>/dev/null)
echo "$out" | head -8
fail=0
echo "$out" | grep -Eq '^ *100000 .* plug_alloc$' || { echo "FAIL: plug_alloc does not hold exactly 100000 bytes"; fail=1; }
echo "$out" | grep -Eq '^ *3200 .* plug_obj$' || { echo "FAIL: plug_obj does not hold exactly 3200 bytes"; fail=1; }
echo "$out" | grep -q 'operator new' && { echo "FAIL: an operator new frame was left as a leaf"; fail=1; }
[ $fail -eq 0 ] && echo ok
exit $fail
