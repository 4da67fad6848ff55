# slaq-aqp: approximate TPC-H queries by online aggregation (a TPC-H
# generator and the engine, docs/aqp.md), and `make aqp-traces`, which
# records every query's mini-batch trace into data/aqp/.
AQP_SRCS    := $(sort $(wildcard src/aqp/*.c))
AQP_OBJS    := $(call OBJ,$(AQP_SRCS))
AQP_LIBOBJS := $(filter-out $(BUILD)/obj/src/aqp/slaq_aqp.o,$(AQP_OBJS))
AQP_LDLIBS  := $(shell $(PKG_CONFIG) --libs sqlite3 2>/dev/null) -lpthread -lm
SLAQ_AQP    := $(BUILD)/bin/slaq-aqp
PROGRAMS    += $(SLAQ_AQP)

# (libslaq-client by path: src/client/module.mk is read after this one)
$(SLAQ_AQP): $(AQP_OBJS) $(BUILD)/lib/libslaq-client.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(AQP_LDLIBS) $(shell $(PKG_CONFIG) --libs jansson 2>/dev/null)

# Unit tests: tests/aqp/test_*.c link the engine (everything but main),
# SQLite (the exact answers to compare with) and cmocka.
AQP_TEST_SRCS := $(sort $(wildcard tests/aqp/test_*.c))
AQP_TESTS     := $(patsubst tests/aqp/%.c,$(BUILD)/tests/%,$(AQP_TEST_SRCS))
UNIT_TESTS    += $(AQP_TESTS)

$(AQP_TESTS): $(BUILD)/tests/%: $(BUILD)/obj/tests/aqp/%.o $(AQP_LIBOBJS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(AQP_LDLIBS) \
	    $(shell $(PKG_CONFIG) --libs cmocka 2>/dev/null)

# make aqp-traces: every query's trace at one thread (scripts/aqp-traces.sh
# lists the runs); a few minutes.
.PHONY: aqp-traces
aqp-traces: $(SLAQ_AQP)
	@scripts/aqp-traces.sh $(SLAQ_AQP) data/aqp

# make aqp-thesis-traces: the thesis's seven queries (Q1, Q3, Q5, Q6,
# Q11, Q16, Q19) in 100 mini-batches at SF 0.1, 0.3 and 1, into
# data/aqp/thesis-traces-b100.jsonl (docs/relaqs.md); under a minute.
.PHONY: aqp-thesis-traces
aqp-thesis-traces: $(SLAQ_AQP)
	@tmp=$$(mktemp -d) && \
	  QUERIES="q1 q3 q5 q6 q11 q16 q19" BATCH_COUNTS=100 \
	  scripts/aqp-traces.sh $(SLAQ_AQP) $$tmp && \
	  mv $$tmp/traces-b100.jsonl data/aqp/thesis-traces-b100.jsonl && \
	  rmdir $$tmp

# make bench-aqp [SF=0.3]: each query's wall and CPU seconds at 1 and 2
# threads, default bounds and --bootstrap (bench/aqp.sh).
.PHONY: bench-aqp
bench-aqp: $(SLAQ_AQP)
	@bench/aqp.sh $(SLAQ_AQP) $(or $(SF),0.3)
