# Unit tests: tests/unit/test_<module>.c -> $(BUILD)/tests/test_<module>,
# each a cmocka program linked against the project's static libraries.
UNIT_SRCS   := $(sort $(wildcard tests/unit/test_*.c))
UNIT_TESTS  += $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))
UNIT_LDLIBS := $(shell $(PKG_CONFIG) --libs cmocka 2>/dev/null) -lm

# test_alloc defines malloc & co. itself to count every allocation in the
# process (libgsl's included); -rdynamic is not needed, symbols of the
# executable come first in the dynamic linker's lookup.

# test_aqp_oom makes the query's arrays fail to grow: libslaq's reallocs go
# through its __wrap_realloc first.
$(BUILD)/tests/test_aqp_oom: LDFLAGS += -Wl,--wrap=realloc

# tests/daemon/test_store_faults.c: the store when the Nth allocation or
# disk access fails. Linked as the other daemon tests (src/daemon/module.mk),
# with slaqd's allocations through its wrappers; SQLite's go through them
# by sqlite3_config and its disk by a VFS of the test's own.
STORE_FAULTS_TEST := $(BUILD)/tests/test_store_faults
UNIT_TESTS        += $(STORE_FAULTS_TEST)
$(STORE_FAULTS_TEST): LDFLAGS += -Wl,--wrap=malloc -Wl,--wrap=calloc \
                                 -Wl,--wrap=realloc -Wl,--wrap=strdup
$(STORE_FAULTS_TEST): $(BUILD)/obj/tests/daemon/test_store_faults.o \
    $(SLAQD_TEST_OBJS) $(LIBSLAQIO_A) $(LIBSLAQ_A)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $< $(SLAQD_TEST_OBJS) $(LIBSLAQIO_A) $(LIBSLAQ_A) \
	  $(DAEMON_LDLIBS) $(LIB_LDLIBS) $(UNIT_LDLIBS)

# test_globals counts libslaq's calls to GSL's process-wide error handler.
$(BUILD)/tests/test_globals: LDFLAGS += -Wl,--wrap=gsl_set_error_handler -Wl,--wrap=gsl_set_error_handler_off

# make fuzz: libFuzzer harnesses (tests/fuzz) built with clang, ASan and
# UBSan from slaqd's own sources (their main() renamed), libslaqio and
# libslaq; run
# for a bounded time on the corpus in tests/fuzz/corpus by make test
# (tests/fuzz/test_fuzz.sh), longer by hand (tests/fuzz/README.md).
FUZZ_CC      ?= clang
FUZZ_FLAGS   := $(CSTD) -Wall -Wextra -Werror -g -O1 -fno-omit-frame-pointer \
                -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
FUZZERS      := $(BUILD)/fuzz/fuzz_protocol $(BUILD)/fuzz/fuzz_http \
                $(BUILD)/fuzz/fuzz_agent $(BUILD)/fuzz/fuzz_arrayrange \
                $(BUILD)/fuzz/fuzz_config $(BUILD)/fuzz/fuzz_jobenv
# The file readers' harnesses need only libslaqio's sources, built with
# them by clang so that libFuzzer sees the readers' coverage, and libslaq.
READER_FUZZERS := $(BUILD)/fuzz/fuzz_spec $(BUILD)/fuzz/fuzz_workload \
                  $(BUILD)/fuzz/fuzz_tasktrace $(BUILD)/fuzz/fuzz_dltrace \
                  $(BUILD)/fuzz/fuzz_rlmodel
.PHONY: fuzz
fuzz: $(FUZZERS) $(READER_FUZZERS)

$(READER_FUZZERS): $(BUILD)/fuzz/%: tests/fuzz/%.c $(IO_SRCS) $(LIBSLAQ_A) $(BUILD)/gen/paths.h $(wildcard src/io/*.h include/slaq/*.h)
	@mkdir -p $(dir $@)
	@echo "  FUZZ  $@"
	@$(FUZZ_CC) $(FUZZ_FLAGS) -Iinclude -Isrc -I$(BUILD)/gen $(PC_CFLAGS) -o $@ $< \
	  $(IO_SRCS) $(LIBSLAQ_A) $(LIB_LDLIBS) -ljansson -lm

$(FUZZERS): $(BUILD)/fuzz/%: tests/fuzz/%.c tests/fuzz/fuzz_daemon.h $(DAEMON_SRCS) $(WEB_ASSETS_C) $(LIBSLAQIO_A) $(LIBSLAQ_A) $(BUILD)/gen/paths.h $(wildcard src/daemon/*.h include/slaq/*.h)
	@mkdir -p $(dir $@)
	@echo "  FUZZ  $@"
	@$(FUZZ_CC) $(FUZZ_FLAGS) -Dmain=slaqd_main -Iinclude -Isrc -I$(BUILD)/gen $(PC_CFLAGS) \
	  -o $@ $< $(DAEMON_SRCS) $(WEB_ASSETS_C) \
	  $(LIBSLAQIO_A) $(LIBSLAQ_A) $(DAEMON_LDLIBS) $(LIB_LDLIBS)
