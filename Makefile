# logbucket: one non-recursive Makefile.
#   make            build ./logbucketd (release: -O2 -g)
#   make run        install missing packages, build, start the daemon on its defaults
#   make test       install missing packages, build, run every test under prove
#   make SAN=1 ...  the same with AddressSanitizer + UndefinedBehaviorSanitizer in build-san/
#   make bench      build the benchmarks (run them by hand, see benchmarks/README.md)
#   make fuzz       build the libFuzzer targets with clang (needs clang)
#   make check-deps fail if a lower layer includes a higher one

SAN ?= 0
CC ?= gcc
ifeq ($(CC),cc)
CC := gcc
endif

ifeq ($(SAN),1)
BUILD := build-san
SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
OPT := -O1 -g
else
BUILD := build
SANFLAGS :=
OPT := -O2 -g
endif

PKGS := libmicrohttpd liblz4 zlib inih jansson
WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
        -Wformat=2 -Wvla
CPPFLAGS := -D_GNU_SOURCE -I. -MMD -MP
CFLAGS := -std=c11 $(OPT) $(WARN) $(SANFLAGS) -pthread \
          $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
LDFLAGS := $(SANFLAGS) -pthread
# jemalloc is the allocator of the daemon. Sanitizers bring their own
# allocator, so the SAN build leaves jemalloc out (LB_NO_JEMALLOC).
ifeq ($(SAN),1)
CPPFLAGS += -DLB_NO_JEMALLOC
LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lm
else
LIBS := $(shell pkg-config --libs $(PKGS) jemalloc 2>/dev/null) -lm
endif
TEST_LIBS := $(shell pkg-config --libs cmocka 2>/dev/null)

# Layers, bottom first. A layer's unit tests link only it and the layers below.
LAYERS := config store ingest query http
config_DEPS :=
store_DEPS := config
ingest_DEPS := store config
query_DEPS := store config
http_DEPS := ingest query store config

layer_srcs = $(filter-out http/main.c,$(wildcard $(1)/*.c))
layer_objs = $(patsubst %.c,$(BUILD)/%.o,$(call layer_srcs,$(1)))
layer_lib = $(BUILD)/lib$(1).a

SUPPORT_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(wildcard tests/support/*.c))
SUPPORT_LIB := $(BUILD)/libtestsupport.a

DAEMON := $(BUILD)/logbucketd
ALL_LIBS := $(foreach l,http ingest query store config,$(call layer_lib,$(l)))

UNIT_TESTS := $(foreach l,$(LAYERS),\
    $(patsubst tests/unit/$(l)/%_test.c,$(BUILD)/tests/%.t,$(wildcard tests/unit/$(l)/*_test.c)))

BENCH_SRCS := $(wildcard benchmarks/*.c)
BENCHES := $(patsubst benchmarks/%.c,$(BUILD)/bench/%,$(BENCH_SRCS))

.PHONY: all run test unit e2e bench fuzz clean deps check-deps format
# keep the objects of test and benchmark binaries: a second make rebuilds nothing
.SECONDARY:
all: $(DAEMON) $(if $(filter 0,$(SAN)),logbucketd)

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

$(SUPPORT_LIB): $(SUPPORT_OBJS)
	@mkdir -p $(dir $@)
	$(AR) rcs $@.$$$$.tmp $^ && mv -f $@.$$$$.tmp $@

$(DAEMON): $(BUILD)/http/main.o $(ALL_LIBS)
	$(CC) $(LDFLAGS) -o $@ $< $(ALL_LIBS) $(LIBS)

$(BUILD)/bench/%: $(BUILD)/benchmarks/%.o $(ALL_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $< $(ALL_LIBS) $(LIBS)

run: deps
	$(MAKE) all
	./logbucketd $(ARGS)

unit: $(UNIT_TESTS)

# prove runs the unit-test binaries and the end-to-end scripts. The daemon
# under test and the build folder are passed by environment.
PROVE ?= prove
PROVE_FLAGS ?= -j2
test: deps
	@./scripts/check-deps.sh
	$(MAKE) all unit $(if $(filter 1,$(SAN)),,bench)
	LOGBUCKETD=$(abspath $(DAEMON)) LB_BUILD=$(abspath $(BUILD)) LB_SAN=$(SAN) \
	    $(PROVE) $(PROVE_FLAGS) --exec '' -r $(BUILD)/tests \
	    $(wildcard tests/e2e/*.t) $(wildcard tests/crash/*.t)

bench: $(BENCHES)

FUZZ_SRCS := $(wildcard tests/fuzz/*_fuzz.c)
fuzz:
	@command -v clang >/dev/null || { echo "fuzz: clang is required"; exit 1; }
	$(MAKE) CC=clang BUILD=build-fuzz SANFLAGS="-fsanitize=fuzzer-no-link,address,undefined" \
	    OPT="-O1 -g" build-fuzz/libingest.a build-fuzz/libquery.a build-fuzz/libstore.a build-fuzz/libconfig.a
	@mkdir -p build-fuzz/fuzz
	for f in $(FUZZ_SRCS); do \
	    n=$$(basename $$f .c); \
	    clang -std=c11 -O1 -g -D_GNU_SOURCE -I. -fsanitize=fuzzer,address,undefined \
	        $(shell pkg-config --cflags $(PKGS)) -o build-fuzz/fuzz/$$n $$f \
	        build-fuzz/libingest.a build-fuzz/libquery.a build-fuzz/libstore.a build-fuzz/libconfig.a \
	        $(shell pkg-config --libs $(PKGS)) -lm -pthread || exit 1; \
	done

check-deps:
	@./scripts/check-deps.sh

format:
	clang-format -i $(wildcard */*.c */*.h tests/*/*.c tests/*/*/*.c)

clean:
	rm -rf build build-san build-fuzz logbucketd

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
