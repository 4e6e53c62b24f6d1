#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# inproc_symbols.sh - checks what build/libheaptap.so imports and exports.
#
# The collector runs inside someone else's process: it must not call the host's malloc family
# or stdio/locale directly (it reaches the real allocator only through pointers found with
# dlsym). So every undefined symbol must be on the allowlist below (system calls, string
# functions, pthread, dl*, libm: no libunwind, no zlib); a forbidden one fails with its name, and
# an unknown one fails too, so that a new import is looked at before it is allowed. The one
# stdio import, fcloseall, is prof_leak_error's flush inside exit() (lib/lifecycle.c). Exports
# must be exactly the malloc family (C23's free_sized and free_aligned_sized included), C++ operator new/delete, dlclose, jemalloc's mallctl,
# pthread_create (the CPU profiler arms new threads' timers: lib/cpu_threads.c) and heaptap_*; never jemalloc's other entry points (mallocx, sdallocx, nallocx, rallocx, xallocx,
# sallocx, dallocx, malloc_stats_print, mallctlnametomib, mallctlbymib): programs take their
# presence for "jemalloc is the allocator" (docs/INTERNALS.md "mallctl").
set -u
lib="${HEAPTAP_LIB:-build/libheaptap.so}"
[ -f "$lib" ] || { echo "no $lib (run make)"; exit 1; }
command -v nm >/dev/null || { echo "nm not installed"; exit 77; }

forbidden=' malloc calloc realloc free reallocarray posix_memalign aligned_alloc memalign valloc
 pvalloc cfree malloc_usable_size strdup strndup asprintf vasprintf fopen fdopen fclose fflush
 fprintf printf sprintf snprintf vfprintf vprintf vsprintf vsnprintf fputs puts fputc putc
 fwrite fread fgets getline getdelim fscanf sscanf scanf setvbuf setlocale newlocale
 localeconv strerror perror opendir readdir closedir qsort backtrace backtrace_symbols
 backtrace_symbols_fd tmpfile open_memstream realpath canonicalize_file_name '

allowed=' _ITM_deregisterTMCloneTable _ITM_registerTMCloneTable __cxa_atexit __cxa_finalize
 __environ environ __errno_location __gmon_start__ __register_atfork __stack_chk_fail _exit
 exit abort raise kill getpid gettid syscall sysconf time clock_gettime nanosleep sched_yield
 open openat close read write pread pwrite lseek fstat stat access readlink rename unlink
 renameat unlinkat fstatat fchmod fcntl getrlimit getauxval geteuid getuid
 getsid ftruncate getcwd mkdtemp memfd_create pipe2 poll madvise mmap munmap mremap waitpid
 fdatasync getenv sigaction sigemptyset sigfillset sigaddset pthread_sigmask
 mincore
 memchr memcmp memcpy memmove memset strchr strcmp strcpy strlen strncmp strrchr strstr
 strncpy strnlen strcspn
 exp expm1 log log1p llround ceil floor
 dl_iterate_phdr dladdr dladdr1 dlinfo dlsym dlerror dlopen
 pthread_attr_destroy pthread_attr_getstack pthread_attr_init pthread_attr_setdetachstate
 pthread_attr_setstacksize pthread_create pthread_key_create
 __libc_stack_end
 pthread_mutex_lock pthread_mutex_unlock pthread_mutex_trylock pthread_mutex_init
 pthread_cond_init pthread_cond_signal pthread_cond_wait setitimer
 pthread_self pthread_setspecific pthread_getspecific pthread_once pthread_setname_np
 socket bind listen accept accept4 setsockopt getsockopt getsockname connect recv send shutdown inet_ntop inet_pton
 chmod lstat getuid geteuid uname
 posix_spawn posix_spawn_file_actions_init posix_spawn_file_actions_addopen
 posix_spawn_file_actions_adddup2 posix_spawn_file_actions_destroy
 fcloseall '

# one line, single spaces, so " name " matches whole names
forbidden=" $(echo $forbidden) "
allowed=" $(echo $allowed) "

fail=0
for s in $(nm -D --undefined-only --format=just-symbols "$lib" | sed 's/@.*//' | sort -u); do
	if [[ "$forbidden" == *" $s "* ]]; then
		echo "FORBIDDEN import: $s (the collector must not call it inside the host)"
		fail=1
	elif [[ "$allowed" != *" $s "* ]]; then
		echo "UNREVIEWED import: $s (add it to the allowlist in $0 if it is safe in-process)"
		fail=1
	fi
done

# the C++ operators: the one list in lib/cxxops.h
cxx_names=$(sed -n 's/^[[:space:]]*X(RCXX_[A-Z_]*, \(_Z[A-Za-z0-9_]*\)).*/\1/p' "${ROOT:-.}/lib/cxxops.h")
[ "$(echo $cxx_names | wc -w)" -eq 20 ] || { echo "cannot read the 20 operators from lib/cxxops.h"; exit 1; }
want_exports=" aligned_alloc calloc cfree dlclose free free_aligned_sized free_sized malloc malloc_usable_size mallctl memalign
 posix_memalign pthread_create pvalloc realloc reallocarray valloc $cxx_names "
want_exports=" $(echo $want_exports) "
nexp=0
for s in $(nm -D --defined-only --format=just-symbols "$lib" | sed 's/@.*//' | sort -u); do
	nexp=$((nexp + 1))
	case "$s" in
	heaptap_*) ;;
	mallocx | sdallocx | nallocx | rallocx | xallocx | sallocx | dallocx | malloc_stats_print | mallctlnametomib | mallctlbymib)
		echo "forbidden export: $s (programs probe it to decide jemalloc is the allocator)"; fail=1 ;;
	*) if [[ "$want_exports" != *" $s "* ]]; then echo "unexpected export: $s"; fail=1; fi ;;
	esac
done
for s in $want_exports heaptap_dump heaptap_set_active heaptap_active heaptap_reset heaptap_stats_json heaptap_version; do
	nm -D --defined-only --format=just-symbols "$lib" | sed 's/@.*//' | grep -qx "$s" || { echo "missing export: $s"; fail=1; }
done
[ $fail -eq 0 ] && echo "ok: $(nm -D --undefined-only "$lib" | wc -l) imports reviewed, $nexp exports"
exit $fail
