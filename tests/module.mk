# Unit tests: tests/unit/test_<module>.c -> $(BUILD)/tests/test_<module>,
# each a cmocka program linked against the project's static libraries.
UNIT_SRCS   := $(sort $(wildcard tests/unit/test_*.c))
UNIT_TESTS  += $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))
UNIT_LDLIBS := $(shell $(PKG_CONFIG) --libs cmocka 2>/dev/null) -lm

# test_alloc defines malloc & co. itself to count every allocation in the
# process (libgsl's included); -rdynamic is not needed, symbols of the
# executable come first in the dynamic linker's lookup.

# test_globals counts libslaq's calls to GSL's process-wide error handler.
$(BUILD)/tests/test_globals: LDFLAGS += -Wl,--wrap=gsl_set_error_handler -Wl,--wrap=gsl_set_error_handler_off
