# SPDX-License-Identifier: BSD-2-Clause
# heaptap - a heap profiler for Linux native programs. `make help` lists the targets.
#
# One Makefile, no configure step. Sources are found by directory, so adding a file needs no edit here:
#   base/*.c                      tiny helpers, no malloc (in the collector and the CLI)
#   profile/*.c                   profile model and readers (the CLI's)
#   profile/inproc/*.c            the writers and math that also run inside the host: the .so takes this folder
#   lib/*.c                       the collector, libheaptap.so (lib/interpose.c holds the malloc family)
#   cli/*.c cli/sym/*.c cli/render/*.c   the heaptap CLI (cli/main.c has main())
#   tests/unit/lib_*.c            unit tests against the collector's modules (no interposition)
#   tests/unit/{base,profile,cli}_*.c    unit tests against the CLI side
#   tests/progs/*.c, *.cc         programs the preload and end-to-end tests run
#   fuzz/fuzz_*.c                 one fuzz target per parser; corpora in fuzz/corpus/<name>/
#   examples/*.c                  the bundled demo programs

CC       ?= cc
CXX      ?= c++
O        := build
WERROR   ?= 1
OPT      ?= -O2 -g
WARN     := -Wall -Wextra -Wshadow -Wformat=2 -Wundef -Wvla -Wno-unused-parameter
ifeq ($(WERROR),1)
WARN     += -Werror
endif
CPPFLAGS := -std=c11 -D_GNU_SOURCE -Iinclude
CFLAGS   := $(OPT) $(WARN)
SAN      := -fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=all -fno-omit-frame-pointer -DHEAPTAP_LOCKRANK
TSAN     := -fsanitize=thread -fno-omit-frame-pointer -DHEAPTAP_LOCKRANK

# Profile code that runs inside the host (writers and math, no malloc): its own folder.
PROFILE_INPROC := $(wildcard profile/inproc/*.c)

BASE_SRC    := $(wildcard base/*.c)
PROFILE_SRC := $(wildcard profile/*.c) $(PROFILE_INPROC)
LIB_SRC     := $(wildcard lib/*.c)
CLI_SRC     := $(wildcard cli/*.c cli/sym/*.c cli/render/*.c)
CLI_MAIN    := cli/main.c

INPROC_SRC  := $(BASE_SRC) $(PROFILE_INPROC) $(LIB_SRC)
CORE_SRC    := $(BASE_SRC) $(PROFILE_INPROC) $(filter-out lib/interpose.c lib/interpose_cxx.c lib/cpu_threads.c,$(LIB_SRC))
TOOL_SRC    := $(BASE_SRC) $(PROFILE_SRC) $(filter-out $(CLI_MAIN),$(CLI_SRC))

# The collector: position independent, hidden by default, initial-exec TLS (no lazy TLS malloc).
# lib/glibc_compat.h binds every object to symbol versions glibc 2.17 has (docs/INTERNALS.md
# "Portability").
PIC_FLAGS   := -fPIC -fvisibility=hidden -ftls-model=initial-exec -fno-omit-frame-pointer \
               -fno-stack-protector -fno-builtin-malloc -fno-builtin-free -pthread \
               -include lib/glibc_compat.h
# Nothing beyond glibc: libpthread.so.0 and libdl.so.2 are named so that a glibc older than
# 2.34 (where pthread_* and dl* live there) loads them; on newer ones they are empty stubs.
SO_LIBS     := -lm -Wl,--no-as-needed -l:libpthread.so.0 -l:libdl.so.2 -Wl,--as-needed
LIB_LIBS    := -lm -ldl -pthread
CLI_LIBS    := -ldw -lelf -l:libiberty.a -lz -lm -pthread

pic_obj  = $(patsubst %.c,$(O)/pic/%.o,$(1))
cli_obj  = $(patsubst %.c,$(O)/cli/%.o,$(1))
san_obj  = $(patsubst %.c,$(O)/san/%.o,$(1))
tsan_obj = $(patsubst %.c,$(O)/tsan/%.o,$(1))

UNIT_LIB_SRC := $(wildcard tests/unit/lib_*.c)
UNIT_CLI_SRC := $(filter-out $(UNIT_LIB_SRC),$(wildcard tests/unit/*.c))
UNIT_BINS    := $(patsubst tests/unit/%.c,$(O)/tests/%,$(UNIT_LIB_SRC) $(UNIT_CLI_SRC))
# The collector's multi-threaded unit tests (tables and slow paths under the lock) again under ThreadSanitizer.
TSAN_UNIT_SRC := $(wildcard tests/unit/lib_core.c tests/unit/lib_stacktab.c tests/unit/lib_livetab.c)
TSAN_BINS    := $(patsubst tests/unit/lib_%.c,$(O)/tests/tsan_%,$(TSAN_UNIT_SRC))
PROG_C       := $(wildcard tests/progs/*.c)
PROG_CC      := $(wildcard tests/progs/*.cc)
PROG_BINS    := $(patsubst tests/progs/%.c,$(O)/progs/%,$(PROG_C)) $(patsubst tests/progs/%.cc,$(O)/progs/%,$(PROG_CC))
EXAMPLE_BINS := $(patsubst examples/%.c,$(O)/examples/%,$(wildcard examples/*.c))
FUZZ_SRC     := $(wildcard fuzz/fuzz_*.c)
FUZZ_REPLAY  := $(patsubst fuzz/fuzz_%.c,$(O)/fuzz/replay_%,$(FUZZ_SRC))
FUZZ_BINS    := $(patsubst fuzz/fuzz_%.c,$(O)/fuzz/libfuzzer_%,$(FUZZ_SRC))

.PHONY: all help deps deps-check deps-bench check unit demo bench fuzz clean format progs install

# `make install PREFIX=/opt/heaptap DESTDIR=/tmp/stage`: the library, the archive, the CLI, the
# public header, heaptap.pc and the docs.
PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
DOCDIR     ?= $(PREFIX)/share/doc/heaptap
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
VERSION    := $(shell sed -n 's/^\#define HEAPTAP_VERSION "\(.*\)"/\1/p' include/heaptap.h)
all: $(O)/libheaptap.so $(O)/libheaptap.a $(O)/heaptap

help:
	@echo "make            build $(O)/libheaptap.so, $(O)/libheaptap.a and $(O)/heaptap"
	@echo "make demo       run heaptap on the bundled example program (installs what it needs)"
	@echo "make check      build and run every test; ends with 'N passed, N failed' (T=pattern to filter)"
	@echo "make bench      run the benchmarks against jemalloc, tcmalloc, heaptrack, jeprof, go tool pprof"
	@echo "make fuzz       build the libFuzzer targets ($(O)/fuzz/libfuzzer_*) to run by hand"
	@echo "make install    install library, archive, CLI, header, heaptap.pc and docs (PREFIX=$(PREFIX), DESTDIR)"
	@echo "make deps       install the Debian packages the build needs (check/bench sets: deps-check, deps-bench)"
	@echo "make clean      remove $(O)/"

deps:
	@scripts/deps.sh build
deps-check:
	@scripts/deps.sh check
deps-bench:
	@scripts/deps.sh bench

# ---- objects ----
# every collector object carries lib/glibc_compat.h (PIC_FLAGS' -include): rebuilt when it changes
$(O)/pic/%.o: %.c lib/glibc_compat.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(PIC_FLAGS) -MMD -MP -c $< -o $@
$(O)/cli/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -pthread -MMD -MP -c $< -o $@
$(O)/san/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(SAN) -pthread -MMD -MP -c $< -o $@
$(O)/tsan/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(TSAN) -pthread -MMD -MP -c $< -o $@

# The unit tests link lib/ without the library constructor (they set HEAPTAP_CONF, then call
# lifecycle_init themselves).
$(O)/san/lib/lifecycle.o $(O)/tsan/lib/lifecycle.o: CPPFLAGS += -DHEAPTAP_NO_CONSTRUCTOR

# ---- the collector ----
$(O)/libheaptap.so: $(call pic_obj,$(INPROC_SRC)) lib/heaptap.map
	$(CC) -shared -Wl,--version-script=lib/heaptap.map -Wl,-z,nodelete -Wl,--build-id -o $@ $(call pic_obj,$(INPROC_SRC)) $(SO_LIBS)
# The archive holds one relocatable object: a program that links malloc from it gets the whole
# collector, its constructor (lib/lifecycle.c) included, never a part of it.
# Its references carry no symbol versions (lib/glibc_compat.h's are for the .so): the program's
# own link decides, -static included.
$(O)/libheaptap.a: $(call pic_obj,$(INPROC_SRC))
	$(CC) -r -nostdlib -o $(O)/pic/heaptap-all.o $^
	args=; for s in $$(nm -u $(O)/pic/heaptap-all.o | awk '$$2 ~ /@/ {print $$2}'); do \
	    args="$$args --redefine-sym $$s=$${s%%@*}"; done; \
	[ -z "$$args" ] || objcopy $$args $(O)/pic/heaptap-all.o
	rm -f $@; ar rcs $@ $(O)/pic/heaptap-all.o

# ---- the CLI ----
$(O)/heaptap: $(call cli_obj,$(TOOL_SRC) $(CLI_MAIN))
	$(CC) -o $@ $^ $(CLI_LIBS)
$(O)/heaptap-asan: $(call san_obj,$(TOOL_SRC) $(CLI_MAIN))
	$(CC) $(SAN) -o $@ $^ $(CLI_LIBS)

# ---- tests ----
# Static pattern rules: a plain pattern rule would lose to the CLI-side one below whenever the
# collector's sanitizer objects are not built yet (make prefers rules whose prerequisites exist).
$(patsubst tests/unit/%.c,$(O)/tests/%,$(UNIT_LIB_SRC)): $(O)/tests/lib_%: tests/unit/lib_%.c $(call san_obj,$(CORE_SRC))
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(SAN) -pthread -o $@ $< $(call san_obj,$(CORE_SRC)) $(LIB_LIBS)
$(TSAN_BINS): $(O)/tests/tsan_%: tests/unit/lib_%.c $(call tsan_obj,$(CORE_SRC))
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(TSAN) -pthread -o $@ $< $(call tsan_obj,$(CORE_SRC)) $(LIB_LIBS)
$(O)/tests/%: tests/unit/%.c $(call san_obj,$(TOOL_SRC))
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(SAN) -pthread -o $@ $< $(call san_obj,$(TOOL_SRC)) $(CLI_LIBS)

PROG_FLAGS := -O1 -g -fno-omit-frame-pointer -fno-inline -pthread
$(O)/progs/%: tests/progs/%.c
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -Iinclude $(PROG_FLAGS) -o $@ $< -ldl -lm
$(O)/progs/%: tests/progs/%.cc
	@mkdir -p $(@D)
	$(CXX) -std=c++17 -Iinclude $(PROG_FLAGS) -o $@ $< -ldl
$(O)/examples/%: examples/%.c
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -O1 -g -fno-inline -pthread -o $@ $<
progs: $(PROG_BINS) $(EXAMPLE_BINS)

# ---- fuzzing: replay drivers (gcc + sanitizers, run by make check) and libFuzzer builds ----
# fuzz/fuzz_lib_*.c fuzz the collector's parsers (options, HTTP) and link its modules; the others link the CLI side.
$(patsubst fuzz/fuzz_lib_%.c,$(O)/fuzz/replay_lib_%,$(wildcard fuzz/fuzz_lib_*.c)): $(O)/fuzz/replay_lib_%: fuzz/fuzz_lib_%.c fuzz/replay_main.c $(call san_obj,$(CORE_SRC))
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(SAN) -pthread -o $@ $< fuzz/replay_main.c $(call san_obj,$(CORE_SRC)) $(LIB_LIBS)
$(O)/fuzz/libfuzzer_lib_%: fuzz/fuzz_lib_%.c $(CORE_SRC)
	@mkdir -p $(@D)
	clang $(CPPFLAGS) -DHEAPTAP_NO_CONSTRUCTOR -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -o $@ $< $(CORE_SRC) $(LIB_LIBS)
$(O)/fuzz/replay_%: fuzz/fuzz_%.c fuzz/replay_main.c $(call san_obj,$(TOOL_SRC))
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(SAN) -pthread -o $@ $< fuzz/replay_main.c $(call san_obj,$(TOOL_SRC)) $(CLI_LIBS)
$(O)/fuzz/libfuzzer_%: fuzz/fuzz_%.c $(TOOL_SRC)
	@mkdir -p $(@D)
	clang $(CPPFLAGS) -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -o $@ $< $(TOOL_SRC) $(CLI_LIBS)
fuzz: $(FUZZ_BINS)

unit: $(UNIT_BINS) $(TSAN_BINS)

check: deps-check
	$(MAKE) all $(O)/heaptap-asan $(UNIT_BINS) $(TSAN_BINS) $(PROG_BINS) $(EXAMPLE_BINS) $(FUZZ_REPLAY)
	@tests/run.sh $(T)

demo: deps-check
	$(MAKE) all $(EXAMPLE_BINS)
	$(O)/heaptap run -- $(O)/examples/leaky

bench: deps-bench
	$(MAKE) all $(PROG_BINS)
	@bench/run.sh

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(DOCDIR)
	install -m 0755 $(O)/heaptap $(DESTDIR)$(BINDIR)/heaptap
	install -m 0755 $(O)/libheaptap.so $(DESTDIR)$(LIBDIR)/libheaptap.so
	install -m 0644 $(O)/libheaptap.a $(DESTDIR)$(LIBDIR)/libheaptap.a
	install -m 0644 include/heaptap.h $(DESTDIR)$(INCLUDEDIR)/heaptap.h
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|g' \
	    -e 's|@VERSION@|$(VERSION)|g' scripts/heaptap.pc.in >$(DESTDIR)$(PKGCONFIGDIR)/heaptap.pc
	chmod 0644 $(DESTDIR)$(PKGCONFIGDIR)/heaptap.pc
	install -m 0644 README.md docs/*.md $(DESTDIR)$(DOCDIR)/

format:
	clang-format -i $(wildcard base/*.[ch] profile/*.[ch] profile/*/*.[ch] lib/*.[ch] cli/*.[ch] cli/*/*.[ch] include/*.h)

clean:
	rm -rf $(O)

-include $(shell find $(O) -name '*.d' 2>/dev/null)
