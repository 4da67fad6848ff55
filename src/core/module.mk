# libslaq: the pure scheduling core (static and shared).
CORE_SRCS   := $(sort $(wildcard src/core/*.c))
CORE_OBJS   := $(call OBJ,$(CORE_SRCS))
LIBSLAQ_A   := $(BUILD)/lib/libslaq.a
LIBSLAQ_SO  := $(BUILD)/lib/libslaq.so
CORE_LDLIBS := $(shell $(PKG_CONFIG) --libs gsl 2>/dev/null) -lm

LIBS_STATIC += $(LIBSLAQ_A)
LIBS_SHARED += $(LIBSLAQ_SO)
TEST_LIBS   := $(LIBSLAQ_A) $(TEST_LIBS)
LIB_LDLIBS += $(CORE_LDLIBS)

$(LIBSLAQ_A): $(CORE_OBJS)
	@mkdir -p $(dir $@)
	$(AR) rcs $@ $^

$(LIBSLAQ_SO): $(CORE_OBJS)
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-soname,libslaq.so.0 $(LDFLAGS) -o $@ $^ $(CORE_LDLIBS)
