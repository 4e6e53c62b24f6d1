#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# sec_host_fds.sh - the collector never touches descriptors the host owns (issue 14, item 1):
# a host closes fds 3..63 after start-up and reopens its own files on 3 (input) and 4 (output),
# then allocates through code without unwind tables and without a frame pointer (hand-written
# asm) and through C, every allocation sampled, with interval dumps in heap_v2 and pprof.
# libunwind's address-validation pipe once sat on fds 3 and 4 and read the host's input and
# wrote stack bytes into its output in exactly this case. Asserted: the input read back by the
# host is byte-identical, the output file holds exactly what the host wrote, manual dumps
# (heaptap_dump, on the host's thread) were written meanwhile, the samples' stacks go through
# the asm frame to __libc_start_main, and /proc/self/fd lists nothing below the
# collector's high range (900) that the same host run without heaptap does not have, for
# prof_unwind dwarf, libunwind (the old name) and fp.
set -u
. "$(dirname "$0")/../e2e/lib/common.sh"
ht_init
command -v cc >/dev/null || ht_skip "no C compiler (cc)"
d=$TMP
cat >"$d/host.c" <<'C'
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* no .cfi directives (so no unwind table entry) and no frame pointer: malloc(n) */
__asm__(".text\n.globl nocfi_alloc\n.type nocfi_alloc, @function\nnocfi_alloc:\n"
        "\tsub $8, %rsp\n\tcall *malloc@GOTPCREL(%rip)\n\tadd $8, %rsp\n\tret\n"
        ".size nocfi_alloc, .-nocfi_alloc\n");
void *nocfi_alloc(size_t n);

__attribute__((noinline)) static void *c_alloc(size_t n) { return malloc(n); }

int main(int argc, char **argv)
{
	for (int fd = 3; fd < 64; fd++)
		close(fd);
	int in = open(argv[1], O_RDONLY);
	int out = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (in != 3 || out != 4) {
		fprintf(stderr, "host: got fds %d and %d, want 3 and 4\n", in, out);
		return 2;
	}
	static const char first[] = "host log line 1\n", second[] = "host log line 2\n";
	if (write(out, first, sizeof first - 1) != sizeof first - 1)
		return 3;
	/* heaptap's C API when preloaded: dumps that run on this thread, done when it returns */
	int (*dump)(const char *) = (int (*)(const char *))dlsym(RTLD_DEFAULT, "heaptap_dump");
	static void *keep[20000];
	for (int i = 0; i < 20000; i++) {
		if (dump && i % 7000 == 6999 && dump(NULL) != 0)
			return 6;
		keep[i] = (i & 1) ? nocfi_alloc(64 + (size_t)(i % 512)) : c_alloc(100);
		if (i % 3 == 0) {
			free(keep[i]);
			keep[i] = NULL;
		}
	}
	/* read the whole input back from fd 3's offset 0: nobody else may have moved it */
	static char buf[1 << 16];
	ssize_t n = read(in, buf, sizeof buf);
	FILE *copy = fopen(argv[3], "w");
	if (n < 0 || !copy || fwrite(buf, 1, (size_t)n, copy) != (size_t)n)
		return 4;
	fclose(copy);
	if (write(out, second, sizeof second - 1) != sizeof second - 1)
		return 5;
	/* what ls -l /proc/self/fd shows, without the listing's own handle */
	DIR *dir = opendir("/proc/self/fd");
	struct dirent *e;
	while (dir && (e = readdir(dir))) {
		if (e->d_name[0] == '.' || atoi(e->d_name) == dirfd(dir))
			continue;
		char link[64], target[4096];
		snprintf(link, sizeof link, "/proc/self/fd/%s", e->d_name);
		ssize_t k = readlink(link, target, sizeof target - 1);
		target[k < 0 ? 0 : k] = 0;
		printf("fd %s -> %s\n", e->d_name, target);
	}
	closedir(dir);
	close(in);
	close(out);
	return 0;
}
C
cc -O1 -g -fno-omit-frame-pointer -o "$d/host" "$d/host.c" -ldl || ht_fail "cannot build the host"
# the asm function really has no unwind information
readelf --debug-dump=frames "$d/host" 2>/dev/null | grep -q "pc=$(nm "$d/host" | awk '/ nocfi_alloc$/ {print $1}' | sed 's/^0*//')" &&
	ht_fail "nocfi_alloc has an FDE"
head -c 20000 /dev/urandom >"$d/input"
# the descriptors the host has without heaptap (the test runner may pass some down)
mkdir -p "$d/plain"
"$d/host" "$d/input" "$d/plain/output" "$d/plain/readback" >"$d/plain/fds" || ht_fail "the host fails unprofiled"
base=$(awk '$2 < 900 {print $2}' "$d/plain/fds" | sort -n | paste -sd' ')
echo "unprofiled host's descriptors below 900: $base"
fail=0
for unw in dwarf libunwind fp; do
	r=$d/$unw
	mkdir -p "$r"
	HEAPTAP_CONF="prof_prefix:$r/ht,lg_prof_sample:0,prof_format:heap_v2+pprof,prof_unwind:$unw" \
		LD_PRELOAD="$HEAPTAP_LIB" "$d/host" "$d/input" "$r/output" "$r/readback" >"$r/fds" 2>"$r/err"
	rc=$?
	cat "$r/err"
	[ $rc -eq 0 ] || { echo "FAIL ($unw): the host exited with $rc"; fail=1; continue; }
	cmp -s "$d/input" "$r/readback" || { echo "FAIL ($unw): the host read back different input bytes"; fail=1; }
	printf 'host log line 1\nhost log line 2\n' | cmp -s - "$r/output" ||
		{ echo "FAIL ($unw): the host's output file was written by someone else:"; od -c "$r/output" | head; fail=1; }
	echo "== /proc/self/fd of the host ($unw)"
	cat "$r/fds"
	grep -q "^fd 3 -> $d/input\$" "$r/fds" && grep -q "^fd 4 -> $r/output\$" "$r/fds" ||
		{ echo "FAIL ($unw): fds 3 and 4 are not the host's files"; fail=1; }
	low=$(awk '$2 < 900 {print $2}' "$r/fds" | sort -n | paste -sd' ')
	[ "$low" = "$base" ] || { echo "FAIL ($unw): descriptors below 900: $low, unprofiled: $base"; fail=1; }
	# dumps were written while the host ran (heap_v2 and pprof), and the stacks go through
	# the asm function on to the outermost frames (the asm frame has no frame pointer either,
	# so its caller main is skipped, as by any unwinder without unwind information)
	[ "$(ls "$r"/ht.*.m*.heap "$r"/ht.*.m*.pb.gz 2>/dev/null | wc -l)" = 4 ] ||
		{ echo "FAIL ($unw): want 2 manual dumps in 2 formats: $(ls "$r")"; fail=1; }
	f=$(ls "$r"/ht.*.f.heap 2>/dev/null | head -1)
	[ -n "$f" ] || { echo "FAIL ($unw): no final dump"; fail=1; continue; }
	if [ "$unw" != fp ]; then
		t=$("$HEAPTAP" top --cum --show_bytes "$d/host" "$f" 2>&1)
		echo "$t" | grep -E ' nocfi_alloc$| __libc_start_main$' | head -3
		echo "$t" | grep -Eq '^ *[0-9]+ +[0-9.]+% +[0-9.]+% +[0-9]+ +[0-9.]+% nocfi_alloc$' ||
			{ echo "FAIL ($unw): no stack through nocfi_alloc"; fail=1; }
		echo "$t" | grep -Eq '^ *[0-9]+ +[0-9.]+% +[0-9.]+% +[0-9]+ +100\.0% __libc_start_main$' ||
			{ echo "FAIL ($unw): stacks stop early (__libc_start_main does not hold every byte)"; echo "$t" | head; fail=1; }
	fi
done
[ $fail -eq 0 ] && echo ok
exit $fail
