# slaqd: the scheduler daemon (event loop, job processes, enforcement,
# SQLite persistence, HTTP API). Links libslaq for every scheduling decision.
DAEMON_SRCS   := $(sort $(wildcard src/daemon/*.c))
DAEMON_OBJS   := $(call OBJ,$(DAEMON_SRCS))
SLAQD         := $(BUILD)/bin/slaqd
DAEMON_LDLIBS := $(shell $(PKG_CONFIG) --libs libmicrohttpd sqlite3 jansson 2>/dev/null)
PC_PKGS       += libmicrohttpd sqlite3
PROGRAMS      += $(SLAQD)

$(SLAQD): $(DAEMON_OBJS) $(LIBSLAQ_A)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(DAEMON_OBJS) $(LIBSLAQ_A) $(DAEMON_LDLIBS) $(LIB_LDLIBS)

# bench/daemon: the load generator that measures slaqd (bench/daemon/run.sh).
LOADGEN  := $(BUILD)/bin/slaq-loadgen
PROGRAMS += $(LOADGEN)

$(LOADGEN): $(call OBJ,bench/daemon/loadgen.c) $(LIBCLIENT_A)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(CLIENT_LDLIBS)
