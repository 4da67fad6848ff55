# libslaqio: readers and writers of slaq's shared file formats (curves,
# workloads) with error messages that name the file, line and field.
IO_SRCS   := $(sort $(wildcard src/io/*.c))
IO_OBJS   := $(call OBJ,$(IO_SRCS))
LIBSLAQIO_A := $(BUILD)/lib/libslaqio.a
IO_LDLIBS := $(shell $(PKG_CONFIG) --libs jansson 2>/dev/null)

LIBS_STATIC += $(LIBSLAQIO_A)
TEST_LIBS   := $(LIBSLAQIO_A) $(TEST_LIBS)
LIB_LDLIBS += $(IO_LDLIBS)

$(LIBSLAQIO_A): $(IO_OBJS)
	@mkdir -p $(dir $@)
	$(AR) rcs $@ $^
