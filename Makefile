# SPDX-License-Identifier: GPL-2.0
#
# poolscope — the only Makefile (non-recursive).
#
# Knobs:
#   O=DIR        build directory (default .output); every artifact goes there
#   V=1          print full commands
#   SAN=1        build with AddressSanitizer + UBSan (make test does a SAN=1 build too)
#   WERROR=0     do not turn warnings into errors
#   STATIC_LIBS=0  link libbpf, libelf, zlib, liburing, SQLite dynamically (default: static)
#   EXTRA_CFLAGS extra flags for cc
#   CC, CLANG, BPFTOOL, MINGW_CC, GO_MD2MAN   tools
#   PREFIX=DIR   install prefix (default /usr/local); DESTDIR=DIR stages the install under DIR
#
# Layout. Read top-down it is the pipeline: probes -> recorder -> trace <- converters, and
# trace -> analysis -> report/plot. Includes are written from the top of the tree
# ("userspace/lib/trace/trace.h"); dependencies go one way, downwards in this list:
#   userspace/poolscope.c     the command table and main()
#   userspace/cmd-*.c         one file per subcommand: parse options, call down, print
#   userspace/record/         the libbpf side of `record` (root, Linux)
#   userspace/load/           the SMB / local workload (`load`)
#   userspace/win/            poolscope-win.exe (mingw-w64)
#   bpf/*.bpf.c               BPF programs, compiled CO-RE, one skeleton each; poolscope_abi.h
#                             is the layout they share with userspace/record
#   bpf/vmlinux/<arch>/       pinned vmlinux.h (make vmlinux regenerates it from this kernel's BTF)
#   analysis/                 growth statistics, attribution, ranking and report formats (pure C)
#   userspace/lib/            libpscore.a: pure C, no libbpf, no root; tests and commands link it
#     trace/                  the trace file (SQLite): the contract, writer, reader
#     etw/                    ETL parser and the Windows converters; the sample-file and ETW
#                             session code poolscope-win.exe shares with them
#     kmem/                   Linux kmem helpers the recorder uses: slab names, kallsyms,
#                             the /proc/meminfo and /proc/slabinfo readers, a hash table
#     workload/               the workload spec and the shared-memory rows load writes for record
#     prom/                   the metrics page (OpenMetrics/Prometheus text) and the endpoint
#                             thread `record --listen` serves it from
#     util/                   portable helpers (also built for Windows)
#   tests/unit/*_test.c       one test binary each, linked against the library
#   tests/cli/*.sh            CLI tests without root (golden outputs on fixture traces), run in
#                             the unit part against both builds; exit 77 = skip
#   tests/fixtures/           mkfixtures.c (the fixture traces) and expected/ (golden outputs)
#   tests/live/*.sh           live tests (root, BTF); exit 77 = skip with a reason
#   tests/leaklab/progs/      the leak lab's scenarios: known kernel-memory behaviour each
#   tests/leaklab/run.sh      make leaklab (root): records each scenario with and without noise
#                             and scores the report's verdict against its known answer
#   tests/sim/verdict_sim.c   make verdict-sim: the verdict's rule on simulated windows
#   tests/win/                programs for the Windows C runtime, run under Wine by tests/live
#   docs/commands/*.md        one page per command; `make man` turns them into man pages
#
# Targets: all test test-unit test-live bench verdict-sim demo leaklab fuzz windows man install
#          uninstall deps vmlinux clean help

O        ?= .output
V        ?=
SAN      ?=
WERROR   ?= 1
CC       ?= cc
CLANG    ?= clang
BPFTOOL  ?= bpftool
MINGW_CC ?= x86_64-w64-mingw32-gcc
GO_MD2MAN ?= go-md2man
ARCH     := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-9s %s\n' "$(1)" "$(2)";
endif

VERSION := $(shell git describe --tags --always --dirty 2>/dev/null || echo 0.1)

WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2 -Wundef \
	-Wno-unused-parameter
ifeq ($(WERROR),1)
WARN += -Werror
endif

SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
ifeq ($(SAN),1)
override O := $(O)/san
OPT := -O1 -g $(SANFLAGS)
SANLD := $(SANFLAGS)
else
OPT := -O2 -g
SANLD :=
endif

CFLAGS  := $(OPT) -std=gnu11 $(WARN) -D_GNU_SOURCE \
	-I. -I$(O) $(EXTRA_CFLAGS)
DEPFLAGS = -MMD -MP
# libbpf, libelf, zlib, liburing and SQLite are linked statically into poolscope (as perf and
# bpftool link libbpf): the binary then resolves 3 shared libraries at start instead of 8, a
# cost every command pays (etl info's speed target counts process start), and the ABI the
# skeletons were built against is the one that runs. STATIC_LIBS=0 links them dynamically.
STATIC_LIBS ?= 1
ifeq ($(STATIC_LIBS),1)
LINK_STATIC := -Wl,-Bstatic
LINK_DYNAMIC := -Wl,-Bdynamic
endif
LDLIBS_CORE := $(LINK_STATIC) -lsqlite3 $(LINK_DYNAMIC) -lm -lpthread
LDLIBS_BPF  := $(LINK_STATIC) -lbpf -lelf -lz $(LINK_DYNAMIC)
# libsmbclient is not linked: userspace/load/smb.c dlopen()s it for SMB runs only (linked, its
# ~100 dependent libraries would be loaded at every start of every command). The header is still
# needed to build.
LDLIBS_LOAD := $(LINK_STATIC) -luring $(LINK_DYNAMIC) -lpthread -ldl
# compressed inputs (userspace/decompress.c): zlib, liblzma, libzstd
LDLIBS_Z    := -lz -llzma -lzstd
# source lines (userspace/srcline.c): elfutils' libdw reads DWARF, linked in as libelf is; it
# reads compressed debuginfo through bzip2, xz and zlib
LDLIBS_DW   := $(LINK_STATIC) -ldw $(LINK_DYNAMIC) -lbz2 -llzma -lz
# pprof profiles (userspace/pprof.c): protobuf-c, linked in as libbpf is
LDLIBS_PB   := $(LINK_STATIC) -lprotobuf-c $(LINK_DYNAMIC)
# the tracefs backend (userspace/record/tracefs.c): libtracefs reads the ring buffers,
# libtraceevent parses events by the kernel's own format files
# and libtracecmd reads trace-cmd's trace.dat for convert (userspace/record/replay.c)
TRACEFS_CFLAGS := $(shell pkg-config --cflags libtracefs libtraceevent libtracecmd 2>/dev/null)
LDLIBS_TFS  := $(shell pkg-config --libs libtracecmd libtracefs libtraceevent 2>/dev/null || \
		 echo -ltracecmd -ltracefs -ltraceevent)
CFLAGS += $(shell pkg-config --cflags smbclient 2>/dev/null)

BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) -Wall -Werror -Werror=undef \
	-Ibpf -Ibpf/vmlinux/$(ARCH) -I$(O)

# --- sources ------------------------------------------------------------------------------------
# Core: portable C with no libbpf and no Linux-only API, so tests and converters run without root.
CORE_SRCS := $(wildcard userspace/lib/*/*.c analysis/*.c)
# The binary: command table, commands, recorder and workload (Linux).
BIN_SRCS  := $(wildcard userspace/*.c userspace/record/*.c userspace/load/*.c userspace/top/*.c)
BPF_SRCS  := $(wildcard bpf/*.bpf.c)
TEST_SRCS := $(wildcard tests/unit/*_test.c)
TEST_HARNESS := tests/unit/harness.c
LIVE_PROGS := $(wildcard tests/live/progs/*.c)
LAB_PROGS  := $(wildcard tests/leaklab/progs/*.c)

CORE_OBJS := $(CORE_SRCS:%.c=$(O)/%.o)
BIN_OBJS  := $(BIN_SRCS:%.c=$(O)/%.o)
BPF_OBJS  := $(BPF_SRCS:%.bpf.c=$(O)/%.bpf.o)
SKELS     := $(patsubst bpf/%.bpf.c,$(O)/%.skel.h,$(BPF_SRCS))
TEST_BINS := $(TEST_SRCS:tests/unit/%.c=$(O)/tests/%)
LIVE_BINS := $(LIVE_PROGS:tests/live/progs/%.c=$(O)/tests/live/%)
LAB_BINS  := $(LAB_PROGS:tests/leaklab/progs/%.c=$(O)/tests/leaklab/%)
# Writes the fixture traces of tests/cli and tests/live/plot.sh with this tree's trace library.
FIXGEN    := $(O)/tests/mkfixtures
CORE_LIB  := $(O)/libpscore.a
POOLSCOPE := $(O)/poolscope

.DEFAULT_GOAL := all
.DELETE_ON_ERROR:
.SECONDARY:
.PHONY: all test test-unit test-live bench verdict-sim demo leaklab fuzz windows man install uninstall deps \
	vmlinux clean help check-deps

all: $(POOLSCOPE) $(TEST_BINS) $(LIVE_BINS) $(LAB_BINS) $(FIXGEN)

# --- BPF ----------------------------------------------------------------------------------------
$(O)/bpf/%.bpf.o: bpf/%.bpf.c
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) $(DEPFLAGS) -MF $(@:.o=.d) -MT $@ -c $< -o $@.tmp
	$(Q)$(BPFTOOL) gen object $@ $@.tmp && rm -f $@.tmp

$(O)/%.skel.h: $(O)/bpf/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst -,_,$*)_bpf > $@

# The version string lives in a generated header that is rewritten only when `git describe`
# changes, so the objects that print it are rebuilt then (a -D flag would not trigger that).
VERSION_H := $(O)/ps_version.h
$(VERSION_H): FORCE
	$(Q)mkdir -p $(@D)
	$(Q)echo '#define POOLSCOPE_VERSION "$(VERSION)"' > $@.tmp
	$(Q)cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@
$(CORE_OBJS) $(BIN_OBJS): | $(VERSION_H)
.PHONY: FORCE
FORCE:

# The first build has no .d files yet: every recorder object waits for every skeleton.
$(filter $(O)/userspace/record/%,$(BIN_OBJS)) $(O)/userspace/cmd-record.o: | $(SKELS)

# --- C ------------------------------------------------------------------------------------------
$(O)/%.o: %.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(DEPFLAGS) -c $< -o $@

$(O)/userspace/record/tracefs.o $(O)/userspace/record/replay.o: CFLAGS += $(TRACEFS_CFLAGS)

$(CORE_LIB): $(CORE_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

# pprof's profile.proto (Debian's golang-github-google-pprof-dev) compiled by protoc-c for
# `export --pprof`: the message as pprof defines it, not a copy kept here.
PPROF_PROTO ?= /usr/share/gocode/src/github.com/google/pprof/proto/profile.proto
GEN_OBJS := $(O)/gen/profile.pb-c.o
$(O)/gen/profile.pb-c.c $(O)/gen/profile.pb-c.h &: $(PPROF_PROTO)
	$(call msg,PROTOC-C,$@)
	$(Q)mkdir -p $(@D)
	$(Q)protoc-c --c_out=$(@D) --proto_path=$(dir $(PPROF_PROTO)) $(PPROF_PROTO)
# generated code: built without the project's warnings, which are for code written here
$(O)/gen/profile.pb-c.o: $(O)/gen/profile.pb-c.c
	$(call msg,CC,$@)
	$(Q)$(CC) $(OPT) -std=gnu11 -I$(O) -c $< -o $@
$(O)/userspace/pprof.o: | $(O)/gen/profile.pb-c.h

$(POOLSCOPE): $(BIN_OBJS) $(GEN_OBJS) $(CORE_LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(SANLD) -o $@ $(BIN_OBJS) $(GEN_OBJS) $(CORE_LIB) $(LDLIBS_DW) $(LDLIBS_BPF) $(LDLIBS_LOAD) \
		$(LDLIBS_Z) $(LDLIBS_PB) $(LDLIBS_TFS) $(LDLIBS_CORE)

$(O)/tests/%_test: $(O)/tests/unit/%_test.o $(O)/tests/unit/harness.o $(CORE_LIB)
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(SANLD) -o $@ $^ $(LDLIBS_CORE)

# The tracefs backend's event handlers fed records decoded by the kernel's format text: this
# test links the backend and the snapshot it fills, with the trace libraries.
$(O)/tests/unit/tracefs_test.o: CFLAGS += $(TRACEFS_CFLAGS)
$(O)/tests/tracefs_test: $(O)/tests/unit/tracefs_test.o $(O)/tests/unit/harness.o \
		$(O)/userspace/record/tracefs.o $(O)/userspace/record/snapshot.o $(CORE_LIB)
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(SANLD) -o $@ $^ $(LDLIBS_TFS) $(LDLIBS_CORE)

$(FIXGEN): $(O)/tests/fixtures/mkfixtures.o $(CORE_LIB)
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(SANLD) -o $@ $^ $(LDLIBS_CORE)

$(O)/tests/live/%: tests/live/progs/%.c $(wildcard tests/live/progs/*.h)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -o $@ $< -lpthread

# The leak lab's scenario programs (tests/leaklab/progs): one known kernel-memory behaviour each.
$(O)/tests/leaklab/%: tests/leaklab/progs/%.c $(wildcard tests/leaklab/progs/*.h)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -o $@ $<

# --- tests --------------------------------------------------------------------------------------
# make test: deps, a normal build, a SAN=1 build and the Windows cross-build (-Werror); the
# fuzzers built and run 300 times each from a fixed seed (so that none of them stops building
# unseen); unit tests under both Linux builds, live tests (root) once.
# The builds run one job per CPU unless make was given -j itself.
SUBMAKE = $(MAKE) --no-print-directory $(if $(filter -j%,$(MAKEFLAGS)),,-j$(shell nproc))
test: check-deps
	$(Q)$(SUBMAKE) all
	$(Q)$(SUBMAKE) SAN=1 all
	$(Q)$(SUBMAKE) windows
	$(Q)$(SUBMAKE) fuzz FUZZ_LIMIT='-runs=300 -seed=1'
	$(Q)O=$(O) tests/run.sh

test-unit: all
	$(Q)O=$(O) tests/run.sh --unit

test-live: all
	$(Q)O=$(O) tests/run.sh --live

bench: check-deps all
	$(Q)O=$(O) tests/bench/run.sh

# The verdict rule on simulated windows (docs/analysis.md quotes it): pure C, no root.
verdict-sim: $(O)/tests/verdict_sim
	$(Q)$(O)/tests/verdict_sim

$(O)/tests/verdict_sim: tests/sim/verdict_sim.c $(CORE_LIB)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -o $@ $< $(CORE_LIB) $(LDLIBS_CORE)

demo: check-deps all
	$(Q)O=$(O) tests/demo.sh

leaklab: check-deps all
	$(Q)O=$(O) tests/leaklab/run.sh

# --- fuzz ---------------------------------------------------------------------------------------
# libFuzzer, FUZZ_SECS each, stopping at the first crash, leak or undefined behaviour (the input
# that did it is left in $(O)/fuzz/): the .etl reader and the XPRESS decoder (seeded with the
# corpus .etl files); convert of an .etl (the corpus files and tests/fuzz/convert-seeds, pool
# traces written by tests/unit/etlwriter.c); the text inputs of convert (the corpus poolmon and
# !poolused files and tests/fuzz/text-seeds, a sample file and pooltag.txt lines of our own); the
# trace reader and the report on traces built from a recipe (tests/fuzz/trace_fuzz.c, no seeds).
FUZZ_SECS   ?= 60
FUZZ_LIMIT  ?= -max_total_time=$(FUZZ_SECS)
FUZZ_CORPUS := $(or $(PS_CORPUS),tests/corpus)
FUZZ_CFLAGS := -g -O1 -std=gnu11 -D_GNU_SOURCE -I. -DPOOLSCOPE_VERSION='"fuzz"' \
	-fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CC     := $(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer
FUZZ_RUN     = $(FUZZ_LIMIT) -timeout=20 -rss_limit_mb=4096 -artifact_prefix=$(O)/fuzz/
# The core library compiled once for the four fuzzers, instrumented as libFuzzer asks of code
# linked into a fuzzer (fuzzer-no-link), so its objects build in parallel; each fuzzer links only
# the members it calls. The convert fuzzer's feed flushes in smaller batches
# (PS_FEED_BATCH_BYTES), so more of its inputs reach a flush: that object is linked ahead of the
# archive, whose own copy is then never pulled in.
FUZZ_CORE_LIB := $(O)/fuzz/libpscore.a
FUZZ_FEED_OBJ := $(O)/fuzz/obj/convert_etl_feed-small.o
FUZZ_BINS   := $(addprefix $(O)/fuzz/,etl_fuzz convert_fuzz text_fuzz trace_fuzz)
FUZZ_HDRS   := $(wildcard userspace/lib/*/*.h analysis/*.h tests/fuzz/*.h tests/unit/*.h)
$(O)/fuzz/obj/%.o: %.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link $(DEPFLAGS) -c $< -o $@
$(FUZZ_FEED_OBJ): userspace/lib/etw/convert_etl_feed.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -DPS_FEED_BATCH_BYTES=73728 $(DEPFLAGS) \
		-c $< -o $@
$(FUZZ_CORE_LIB): $(CORE_SRCS:%.c=$(O)/fuzz/obj/%.o)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^
$(O)/fuzz/convert_fuzz: tests/fuzz/convert_fuzz.c $(FUZZ_FEED_OBJ) $(FUZZ_CORE_LIB) $(FUZZ_HDRS)
	$(call msg,LINK,$@)
	$(Q)$(FUZZ_CC) $(filter-out %.h,$^) -o $@ -lsqlite3 -lm -lpthread
$(O)/fuzz/%_fuzz: tests/fuzz/%_fuzz.c $(FUZZ_CORE_LIB) $(FUZZ_HDRS)
	$(call msg,LINK,$@)
	$(Q)$(FUZZ_CC) $(filter-out %.h,$^) -o $@ -lsqlite3 -lm -lpthread
fuzz: $(FUZZ_BINS)
	$(Q)mkdir -p $(O)/fuzz/work $(O)/fuzz/convert-work $(O)/fuzz/text-work $(O)/fuzz/trace-work
	$(call msg,FUZZ,$(O)/fuzz/etl_fuzz)
	$(Q)$(O)/fuzz/etl_fuzz $(FUZZ_RUN) -max_len=131072 $(O)/fuzz/work $(FUZZ_CORPUS)/etl
	$(call msg,FUZZ,$(O)/fuzz/convert_fuzz)
	$(Q)$(O)/fuzz/convert_fuzz $(FUZZ_RUN) -max_len=131072 $(O)/fuzz/convert-work \
		$(FUZZ_CORPUS)/etl tests/fuzz/convert-seeds
	$(call msg,FUZZ,$(O)/fuzz/text_fuzz)
	$(Q)$(O)/fuzz/text_fuzz $(FUZZ_RUN) -max_len=65536 $(O)/fuzz/text-work \
		$(FUZZ_CORPUS)/windows tests/fuzz/text-seeds
	$(call msg,FUZZ,$(O)/fuzz/trace_fuzz)
	$(Q)$(O)/fuzz/trace_fuzz $(FUZZ_RUN) -max_len=4096 -len_control=0 $(O)/fuzz/trace-work

# --- Windows ------------------------------------------------------------------------------------
# The library files poolscope-win.exe shares with the converters: its sample-file writer and its
# ETW session settings (so what it writes is what convert reads), and the portable helpers.
WIN_LIB_SRCS := userspace/lib/util/util.c userspace/lib/etw/poolsample.c userspace/lib/etw/etwsession.c
WIN_SRCS := $(wildcard userspace/win/*.c) $(WIN_LIB_SRCS)
WIN_CFLAGS := -O2 -g -std=gnu11 $(WARN) -I. -D_WIN32_WINNT=0x0A00 -DPOOLSCOPE_VERSION='"$(VERSION)"'
windows: $(O)/win/poolscope-win.exe $(O)/win/tests/sample_restart.exe

$(O)/win/poolscope-win.exe: $(WIN_SRCS) $(wildcard userspace/win/*.h userspace/lib/etw/*.h \
		userspace/lib/util/*.h)
	$(call msg,MINGW,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(MINGW_CC) $(WIN_CFLAGS) -municode -o $@ $(WIN_SRCS) -ladvapi32 -lntdll

# The sample writer on the Windows C runtime, run under Wine by tests/live/wine.sh.
$(O)/win/tests/sample_restart.exe: tests/win/sample_restart.c userspace/win/wide.c $(WIN_LIB_SRCS) \
		$(wildcard userspace/win/*.h userspace/lib/etw/*.h userspace/lib/util/*.h)
	$(call msg,MINGW,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(MINGW_CC) $(WIN_CFLAGS) -o $@ tests/win/sample_restart.c userspace/win/wide.c \
		$(WIN_LIB_SRCS) -ladvapi32 -lntdll

# --- man pages ----------------------------------------------------------------------------------
# docs/commands/*.md are the command reference, written for go-md2man (a pandoc-style title
# line). Not part of `all`, so building poolscope needs no go-md2man; tests/cli/manpages.sh
# builds them with this rule and checks them against `poolscope help CMD`.
MAN_PAGES := $(patsubst docs/commands/%.md,$(O)/man/%.1,$(wildcard docs/commands/*.md))
man: $(MAN_PAGES)

$(O)/man/%.1: docs/commands/%.md
	$(call msg,MAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(GO_MD2MAN) -in $< -out $@

# --- install ------------------------------------------------------------------------------------
# The binary, and beside it in share/poolscope the data it looks for relative to itself
# (userspace/cmd-report.c, cmd-plot.c: ../share/poolscope from the binary's directory): the
# default rules and the gnuplot scripts. poolscope-win.exe runs on Windows and is not installed.
# and the man pages (docs/commands, built by the rule above) and the bash completion.
PREFIX    ?= /usr/local
DESTDIR   ?=
BINDIR    := $(PREFIX)/bin
DATADIR   := $(PREFIX)/share/poolscope
MAN1DIR   := $(PREFIX)/share/man/man1
# bash-completion looks in share/bash-completion/completions of every XDG data directory
COMPDIR   := $(PREFIX)/share/bash-completion/completions
PLOT_SCRIPTS := $(wildcard plots/*.gp)
install: $(POOLSCOPE) $(MAN_PAGES)
	$(call msg,INSTALL,$(DESTDIR)$(PREFIX))
	$(Q)install -d '$(DESTDIR)$(BINDIR)' '$(DESTDIR)$(DATADIR)/plots'
	$(Q)install -m 0755 $(POOLSCOPE) '$(DESTDIR)$(BINDIR)/poolscope'
	$(Q)install -m 0644 analysis/rules/default.rules '$(DESTDIR)$(DATADIR)/default.rules'
	$(Q)install -m 0644 $(PLOT_SCRIPTS) '$(DESTDIR)$(DATADIR)/plots/'
	$(Q)install -d '$(DESTDIR)$(COMPDIR)'
	$(Q)install -m 0644 userspace/completion/poolscope '$(DESTDIR)$(COMPDIR)/poolscope'
ifneq ($(strip $(MAN_PAGES)),)
	$(Q)install -d '$(DESTDIR)$(MAN1DIR)'
	$(Q)install -m 0644 $(MAN_PAGES) '$(DESTDIR)$(MAN1DIR)/'
endif

uninstall:
	$(call msg,UNINSTALL,$(DESTDIR)$(PREFIX))
	$(Q)rm -f '$(DESTDIR)$(BINDIR)/poolscope' '$(DESTDIR)$(DATADIR)/default.rules' \
		'$(DESTDIR)$(COMPDIR)/poolscope' \
		$(foreach f,$(notdir $(PLOT_SCRIPTS)),'$(DESTDIR)$(DATADIR)/plots/$(f)') \
		$(foreach f,$(notdir $(MAN_PAGES)),'$(DESTDIR)$(MAN1DIR)/$(f)')
	$(Q)rmdir '$(DESTDIR)$(DATADIR)/plots' '$(DESTDIR)$(DATADIR)' 2>/dev/null || true

# --- setup --------------------------------------------------------------------------------------
# Debian packages everything needs: build, tests, demo, leak lab, Windows cross-build.
DEB_PKGS := clang llvm bpftool libbpf-dev libelf-dev libdw-dev libbz2-dev zlib1g-dev liblzma-dev libzstd-dev \
	libsqlite3-dev sqlite3 \
	libtraceevent-dev gnuplot-nox samba smbclient libsmbclient-dev mingw-w64 liburing-dev \
	iproute2 procps pkg-config make gcc libclang-rt-14-dev libnl-3-200 libnl-genl-3-200 libglib2.0-0 \
	go-md2man jq xz-utils zstd wine64 \
	protobuf-c-compiler libprotobuf-c-dev golang-github-google-pprof-dev golang-go prometheus time \
	tmux bash-completion libtracefs-dev libtracecmd-dev trace-cmd
# ksmbd-tools conflicts with samba as a package: its binaries are unpacked under $(O) instead.
KSMBD_TOOLS := $(O)/ksmbd-tools
deps:
	tests/deps.sh $(DEB_PKGS)
	tests/deps.sh --ksmbd-tools $(KSMBD_TOOLS)

# Installs only when something is missing, so make test stays quick on a prepared machine.
check-deps:
	$(Q)tests/deps.sh --check $(DEB_PKGS)
	$(Q)tests/deps.sh --ksmbd-tools $(KSMBD_TOOLS)

vmlinux:
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > bpf/vmlinux/$(ARCH)/vmlinux.h

clean:
	rm -rf $(O) .output

help:
	@sed -n '3,/^# Targets:/p' Makefile

-include $(shell find $(O) -path $(O)/san -prune -o -name '*.d' -print 2>/dev/null)
