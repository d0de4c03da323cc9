# logbucket: one non-recursive Makefile.
#   make            build ./logbucketd (release: -O2 -g)
#   make run        install missing packages, build, start the daemon on its defaults
#   make test       install missing packages, build, run every test under prove
#   make SAN=1 ...  the same with AddressSanitizer + UndefinedBehaviorSanitizer in build-san/
#   make TSAN=1 ... the same with ThreadSanitizer in build-tsan/
#   make bench      build the benchmarks (run them by hand, see benchmarks/README.md)
#   make fuzz       build the libFuzzer targets with clang (needs clang)
#   make check-deps fail on an upward include, store internals above the store, a file cycle

SAN ?= 0
TSAN ?= 0
CC ?= gcc
ifeq ($(CC),cc)
CC := gcc
endif

# SANITIZED: a sanitizer build (no jemalloc, no ./logbucketd copy, no
# benchmarks, LB_SAN=1 so that the long tests run less).
SANITIZED := 0
SANENV :=
TSAN_REPORTS :=
ifeq ($(SAN),1)
BUILD := build-san
SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
OPT := -O1 -g
SANITIZED := 1
else ifeq ($(TSAN),1)
# ThreadSanitizer: make test TSAN=1 runs every test, the end-to-end and
# crash scripts too (the daemon's HTTP, flush and compaction threads are
# what it is for; libmicrohttpd's own threads gave no report, and the
# tests take about a minute and a half on 2 cores).
# Reports go to files, build-tsan/tsan-report.PID (a daemon's would
# otherwise go with its test's folder): make test prints them and fails if
# there is one, even from a daemon killed with SIGKILL. tests/tsan.supp
# lists what is suppressed and why. LB_TSAN=1: unit tests without threads
# of their own skip themselves, or run less (tests/support/store_testutil.h).
BUILD := build-tsan
SANFLAGS := -fsanitize=thread -fno-omit-frame-pointer
OPT := -O1 -g
SANITIZED := 1
TSAN_REPORTS := $(CURDIR)/$(BUILD)/tsan-report
SANENV := LB_TSAN=1 TSAN_OPTIONS="suppressions=$(CURDIR)/tests/tsan.supp second_deadlock_stack=1 \
    history_size=4 log_path=$(TSAN_REPORTS)"
else
BUILD := build
SANFLAGS :=
OPT := -O2 -g
endif

PKGS := libmicrohttpd liblz4 libzstd zlib inih libpcre2-8 snappy
# jansson only in tests: a second JSON parser that checks the daemon's replies
TEST_PKGS := cmocka jansson
WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
        -Wformat=2 -Wvla
CPPFLAGS := -D_GNU_SOURCE -I. -MMD -MP
CFLAGS := -std=c11 $(OPT) $(WARN) $(SANFLAGS) -pthread \
          $(shell pkg-config --cflags $(PKGS) $(TEST_PKGS) 2>/dev/null)
LDFLAGS := $(SANFLAGS) -pthread
# jemalloc is the allocator of the daemon. Sanitizers bring their own
# allocator, so the SAN and TSAN builds leave jemalloc out (LB_NO_JEMALLOC).
ifeq ($(SANITIZED),1)
CPPFLAGS += -DLB_NO_JEMALLOC
LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lm
else
LIBS := $(shell pkg-config --libs $(PKGS) jemalloc 2>/dev/null) -lm
endif
TEST_LIBS := $(shell pkg-config --libs $(TEST_PKGS) 2>/dev/null)

# Layers, bottom first (DESIGN.md section 2). A layer's unit tests link only
# it and the layers below.
LAYERS := base config model store ingest query http
base_DEPS :=
config_DEPS := base
model_DEPS := config base
store_DEPS := model config base
ingest_DEPS := store model config base
query_DEPS := store model config base
http_DEPS := ingest query store model config base

layer_srcs = $(filter-out http/main.c,$(wildcard $(1)/*.c $(1)/*/*.c))
layer_objs = $(patsubst %.c,$(BUILD)/%.o,$(call layer_srcs,$(1)))
layer_lib = $(BUILD)/lib$(1).a

SUPPORT_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(wildcard tests/support/*.c))
SUPPORT_LIB := $(BUILD)/libtestsupport.a

DAEMON := $(BUILD)/logbucketd
ALL_LIBS := $(foreach l,http ingest query store model config base,$(call layer_lib,$(l)))

UNIT_TESTS := $(foreach l,$(LAYERS),\
    $(patsubst tests/unit/$(l)/%_test.c,$(BUILD)/tests/%.t,$(wildcard tests/unit/$(l)/*_test.c)))

BENCH_SRCS := $(wildcard benchmarks/*.c)
BENCHES := $(patsubst benchmarks/%.c,$(BUILD)/bench/%,$(BENCH_SRCS))

.PHONY: all run test unit e2e bench fuzz soak clean deps check-deps format format-check
# keep the objects of test and benchmark binaries: a second make rebuilds nothing
.SECONDARY:
all: $(DAEMON) $(if $(filter 0,$(SANITIZED)),logbucketd)

logbucketd: $(DAEMON)
	cp $< $@.$$$$.tmp && mv -f $@.$$$$.tmp $@

deps:
	@./scripts/deps.sh

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

define LAYER_RULES
$(call layer_lib,$(1)): $(call layer_objs,$(1))
	@mkdir -p $$(dir $$@)
	$$(AR) rcs $$@.$$$$$$$$.tmp $$^ && mv -f $$@.$$$$$$$$.tmp $$@

$(BUILD)/tests/%.t: $(BUILD)/tests/unit/$(1)/%_test.o $(SUPPORT_LIB) $(call layer_lib,$(1)) \
                    $(foreach d,$($(1)_DEPS),$(call layer_lib,$(d)))
	@mkdir -p $$(dir $$@)
	$$(CC) $$(LDFLAGS) -o $$@ $$< $(SUPPORT_LIB) $(call layer_lib,$(1)) \
	    $(foreach d,$($(1)_DEPS),$(call layer_lib,$(d))) $$(TEST_LIBS) $$(LIBS)
endef
$(foreach l,$(LAYERS),$(eval $(call LAYER_RULES,$(l))))

# The web console (http/console/) is built into the daemon: its files become
# a generated C source in $(BUILD)/gen/, archived into libhttp.a.
CONSOLE_FILES := $(sort $(wildcard http/console/*.html http/console/*.js http/console/*.css \
    http/console/*.svg))
CONSOLE_OBJ := $(BUILD)/gen/console_files.o
# The list of files, rewritten only when it changes: a removed file also
# makes the source again.
$(BUILD)/gen/console_files.list: console-list-check
	@mkdir -p $(dir $@)
	@echo '$(CONSOLE_FILES)' | cmp -s - $@ || echo '$(CONSOLE_FILES)' >$@
.PHONY: console-list-check
$(BUILD)/gen/console_files.c: $(CONSOLE_FILES) scripts/embed-console.pl $(BUILD)/gen/console_files.list
	@mkdir -p $(dir $@)
	perl scripts/embed-console.pl $(CONSOLE_FILES) >$@.tmp && mv -f $@.tmp $@
$(CONSOLE_OBJ): $(BUILD)/gen/console_files.c
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@
$(call layer_lib,http): $(CONSOLE_OBJ)

$(SUPPORT_LIB): $(SUPPORT_OBJS)
	@mkdir -p $(dir $@)
	$(AR) rcs $@.$$$$.tmp $^ && mv -f $@.$$$$.tmp $@

$(DAEMON): $(BUILD)/http/main.o $(ALL_LIBS)
	$(CC) $(LDFLAGS) -o $@ $< $(ALL_LIBS) $(LIBS)

$(BUILD)/bench/%: $(BUILD)/benchmarks/%.o $(ALL_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $< $(ALL_LIBS) $(LIBS)

run: deps
	$(MAKE) $(BUILD_JOBS) all
	./logbucketd $(ARGS)

unit: $(UNIT_TESTS)

# prove runs the unit-test binaries and the end-to-end scripts. The daemon
# under test and the build folder are passed by environment.
PROVE ?= prove
PROVE_FLAGS ?= -j2 --timer
# The build before the tests runs on every core unless make was given -j
# (CI calls plain `make test`: a serial build took half its time).
BUILD_JOBS = $(if $(findstring j,$(firstword $(MAKEFLAGS))$(filter -j%,$(MAKEFLAGS))),,-j$(shell nproc 2>/dev/null || echo 2))
test: deps
	$(MAKE) $(BUILD_JOBS) all unit $(if $(filter 1,$(SANITIZED)),,bench)
	@./scripts/check-deps.sh $(BUILD)
	@$(MAKE) -s format-check
	$(if $(TSAN_REPORTS),rm -f $(TSAN_REPORTS).*)
	LOGBUCKETD=$(abspath $(DAEMON)) LB_BUILD=$(abspath $(BUILD)) LB_SAN=$(SANITIZED) $(SANENV) \
	    $(PROVE) $(PROVE_FLAGS) --exec $(CURDIR)/scripts/run-test.sh -r $(BUILD)/tests \
	    $(wildcard tests/e2e/*.t) $(wildcard tests/crash/*.t); rc=$$?; \
	$(if $(TSAN_REPORTS),for f in $(TSAN_REPORTS).*; do test -e "$$f" || continue; \
	    echo "== $$f"; cat "$$f"; rc=1; done;) exit $$rc

bench: $(BENCHES)

# A bounded soak (10 minutes; SOAK_SECS=N for another length): 64 client
# loops of mixed writes and queries, RSS and descriptors printed over time
# and checked flat after warm-up.
SOAK_SECS ?= 600
soak: all
	./scripts/soak.sh $(SOAK_SECS) 64

FUZZ_SRCS := $(wildcard tests/fuzz/*_fuzz.c)
# undefined behaviour stops the target (a crash libFuzzer keeps): clang's
# UBSan otherwise prints its report and goes on, and the run passes
FUZZ_UB := -fno-sanitize-recover=undefined
fuzz:
	@command -v clang >/dev/null || { echo "fuzz: clang is required"; exit 1; }
	$(MAKE) $(BUILD_JOBS) CC=clang BUILD=build-fuzz SANFLAGS="-fsanitize=fuzzer-no-link,address,undefined $(FUZZ_UB)" \
	    OPT="-O1 -g" build-fuzz/libingest.a build-fuzz/libquery.a build-fuzz/libstore.a build-fuzz/libmodel.a build-fuzz/libconfig.a build-fuzz/libbase.a
	@mkdir -p build-fuzz/fuzz
	for f in $(FUZZ_SRCS); do \
	    n=$$(basename $$f .c); \
	    clang -std=c11 -O1 -g -D_GNU_SOURCE -I. -fsanitize=fuzzer,address,undefined $(FUZZ_UB) \
	        $(shell pkg-config --cflags $(PKGS) jansson) -o build-fuzz/fuzz/$$n $$f \
	        build-fuzz/libingest.a build-fuzz/libquery.a build-fuzz/libstore.a build-fuzz/libmodel.a build-fuzz/libconfig.a build-fuzz/libbase.a \
	        $(shell pkg-config --libs $(PKGS) jansson) -lm -pthread || exit 1; \
	done

check-deps:
	@./scripts/check-deps.sh $(BUILD)

# The C sources clang-format covers (style: .clang-format). format rewrites
# them; format-check changes nothing and fails, listing the files that differ.
CLANG_FORMAT ?= clang-format
FORMAT_SRCS = $(sort $(filter-out build%,\
    $(wildcard */*.c */*.h */*/*.c */*/*.h tests/*/*.c tests/*/*/*.c)))
format:
	$(CLANG_FORMAT) -i $(FORMAT_SRCS)

format-check:
	@command -v $(CLANG_FORMAT) >/dev/null || \
	    { echo "format-check: $(CLANG_FORMAT) is missing (apt-get install clang-format)"; exit 1; }
	@bad=$$(for f in $(FORMAT_SRCS); do \
	    $(CLANG_FORMAT) --dry-run --Werror "$$f" >/dev/null 2>&1 || echo "$$f"; done); \
	if [ -n "$$bad" ]; then \
	    echo "format-check: clang-format would change these files (make format fixes them):"; \
	    echo "$$bad" | sed 's/^/  /'; exit 1; \
	fi

clean:
	rm -rf build build-san build-tsan build-fuzz logbucketd

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
