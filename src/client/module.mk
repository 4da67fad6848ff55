# libslaq-client: the C library training jobs link to talk to slaqd
# (include/slaq/client.h), static and shared, plus the example job in
# examples/ that the end-to-end tests and the load generator drive.
CLIENT_SRCS   := $(sort $(wildcard src/client/*.c))
CLIENT_OBJS   := $(call OBJ,$(CLIENT_SRCS))
LIBCLIENT_A   := $(BUILD)/lib/libslaq-client.a
LIBCLIENT_SO  := $(BUILD)/lib/libslaq-client.so
CLIENT_LDLIBS := $(shell $(PKG_CONFIG) --libs jansson 2>/dev/null) -lm
TOY_JOB       := $(BUILD)/bin/slaq-toy-job

LIBS_STATIC += $(LIBCLIENT_A)
LIBS_SHARED += $(LIBCLIENT_SO)
PROGRAMS    += $(TOY_JOB)

$(LIBCLIENT_A): $(CLIENT_OBJS)
	@mkdir -p $(dir $@)
	$(AR) rcs $@ $^

$(LIBCLIENT_SO): $(CLIENT_OBJS)
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-soname,libslaq-client.so.0 $(LDFLAGS) -o $@ $^ $(CLIENT_LDLIBS)

$(TOY_JOB): $(call OBJ,examples/toy_job.c) $(LIBCLIENT_A)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(CLIENT_LDLIBS) -lpthread

# The client's unit test runs against a scripted fake slaqd.
CLIENT_TEST := $(BUILD)/tests/test_client
UNIT_TESTS  += $(CLIENT_TEST)

$(CLIENT_TEST): $(call OBJ,tests/daemon/test_client.c) $(LIBCLIENT_A)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(CLIENT_LDLIBS) $(shell $(PKG_CONFIG) --libs cmocka 2>/dev/null)
