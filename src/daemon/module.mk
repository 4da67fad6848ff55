# slaqd: the scheduler daemon (event loop, job processes, enforcement,
# SQLite persistence, HTTP API). Links libslaq for every scheduling decision.
DAEMON_SRCS   := $(sort $(wildcard src/daemon/*.c))
# The dashboard (web/) is compiled in: a generated source holds its files.
WEB_FILES     := $(sort $(wildcard web/*.html web/*.js web/*.css web/*.svg))
WEB_ASSETS_C  := $(BUILD)/gen/web_assets.c
DAEMON_OBJS   := $(call OBJ,$(DAEMON_SRCS) $(WEB_ASSETS_C))
SLAQD         := $(BUILD)/bin/slaqd
# libsodium: the agent link's handshake and sealing (link.c).
DAEMON_LDLIBS := $(shell $(PKG_CONFIG) --libs libmicrohttpd sqlite3 jansson libsodium 2>/dev/null)
PC_PKGS       += libmicrohttpd sqlite3 libsodium
PROGRAMS      += $(SLAQD)

# libslaqio: the sweep spec reader (src/io/sweepspec.c), shared with slaq.
$(SLAQD): $(DAEMON_OBJS) $(LIBSLAQIO_A) $(LIBSLAQ_A)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(DAEMON_OBJS) $(LIBSLAQIO_A) $(LIBSLAQ_A) $(DAEMON_LDLIBS) $(LIB_LDLIBS)

$(WEB_ASSETS_C): $(WEB_FILES) scripts/embed-web.sh
	@mkdir -p $(dir $@)
	@echo "  GEN   $@"
	@scripts/embed-web.sh $@ $(WEB_FILES)

# bench/daemon: the load generator that measures slaqd (bench/daemon/run.sh).
LOADGEN  := $(BUILD)/bin/slaq-loadgen
PROGRAMS += $(LOADGEN)

$(LOADGEN): $(call OBJ,bench/daemon/loadgen.c) $(LIBCLIENT_A)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(CLIENT_LDLIBS)

# bench/daemon/agents.sh: plays node agents against a controller.
AGENTGEN := $(BUILD)/bin/slaq-agentgen
PROGRAMS += $(AGENTGEN)

$(AGENTGEN): $(call OBJ,bench/daemon/agentgen.c src/daemon/link.c)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(shell $(PKG_CONFIG) --libs jansson libsodium 2>/dev/null)

# tests/daemon/test_link.c: the agent link's handshake and sealing.
LINK_TEST  := $(BUILD)/tests/test_link
UNIT_TESTS += $(LINK_TEST)

$(LINK_TEST): $(call OBJ,tests/daemon/test_link.c src/daemon/link.c)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(shell $(PKG_CONFIG) --libs jansson libsodium 2>/dev/null) $(UNIT_LDLIBS)

# make check-daemon: the end-to-end suite with slaqd under valgrind, then
# against the ASan/UBSan build (a slaqd that does not exit cleanly fails it).
PYTEST = $(shell python3 -c 'import pytest' 2>/dev/null && echo python3 || echo /usr/bin/python3) -m pytest -q -p no:cacheprovider
.PHONY: check-daemon
check-daemon: deps
	@$(MAKE) --no-print-directory build
	SLAQ_VALGRIND=1 $(PYTEST) tests/e2e
	@$(MAKE) --no-print-directory BUILD=build-asan SANITIZE=1 build
	SLAQ_BUILD=build-asan $(PYTEST) tests/e2e

# tests/daemon/test_store.c and test_enforce.c: the store on real SQLite
# files and enforcement in a cgroup directory of a temporary directory;
# test_conn.c and test_jobs.c: connections and jobs driven through
# socketpairs under a clock the test moves (tests/daemon/session.h). All
# linked with slaqd's own objects, its main() renamed (as for the
# fuzzers), so that they run the code slaqd runs.
DAEMON_UNIT    := store enforce conn jobs
UNIT_TESTS     += $(patsubst %,$(BUILD)/tests/test_%,$(DAEMON_UNIT))
SLAQD_MAIN_OBJ := $(BUILD)/obj/tests/daemon/slaqd_main.o
$(SLAQD_MAIN_OBJ): src/daemon/slaqd.c $(BUILD)/gen/paths.h
	@mkdir -p $(dir $@)
	@echo "  CC    $< (main renamed)"
	@$(CC) $(CPPFLAGS) -I$(BUILD)/gen $(CFLAGS) -Wno-missing-prototypes \
	  -Dmain=slaqd_main -c -o $@ $<
# test_store compares docs/state-db.md with the schema.
$(BUILD)/obj/tests/daemon/test_store.o: CPPFLAGS += -DSTATE_DB_DOC='"$(CURDIR)/docs/state-db.md"'
SLAQD_TEST_OBJS := $(SLAQD_MAIN_OBJ) \
                   $(filter-out $(call OBJ,src/daemon/slaqd.c),$(DAEMON_OBJS))
$(patsubst %,$(BUILD)/tests/test_%,$(DAEMON_UNIT)): $(BUILD)/tests/test_%: \
    $(BUILD)/obj/tests/daemon/test_%.o $(SLAQD_TEST_OBJS) \
    $(BUILD)/lib/libslaqio.a $(LIBSLAQ_A)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $< $(SLAQD_TEST_OBJS) $(LIBSLAQIO_A) $(LIBSLAQ_A) \
	  $(DAEMON_LDLIBS) $(LIB_LDLIBS) $(UNIT_LDLIBS)
