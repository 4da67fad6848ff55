# slaq-train: real training jobs (nine algorithms) that slaq schedules, and
# the `curves` target that records their loss curves into data/curves/.
TRAIN_SRCS   := $(sort $(wildcard src/train/*.c))
TRAIN_OBJS   := $(call OBJ,$(TRAIN_SRCS))
TRAIN_LIBOBJS := $(filter-out $(BUILD)/obj/src/train/slaq_train.o,$(TRAIN_OBJS))
TRAIN_LDLIBS := -lopenblas -llbfgs -lxgboost -lgomp -lz -lpthread -lm \
                $(shell $(PKG_CONFIG) --libs jansson 2>/dev/null)
SLAQ_TRAIN   := $(BUILD)/bin/slaq-train
PROGRAMS     += $(SLAQ_TRAIN)

# slaq-train talks to slaqd through libslaq-client (src/train/client_link.c).
$(SLAQ_TRAIN): $(TRAIN_OBJS) $(LIBCLIENT_A)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(TRAIN_LDLIBS) $(CLIENT_LDLIBS)

# Unit tests of the trainers: tests/train/test_*.c link the trainer objects
# (everything but main) and cmocka.
TRAIN_TEST_SRCS := $(sort $(wildcard tests/train/test_*.c))
TRAIN_TESTS     := $(patsubst tests/train/%.c,$(BUILD)/tests/%,$(TRAIN_TEST_SRCS))
UNIT_TESTS      += $(TRAIN_TESTS)

$(TRAIN_TESTS): $(BUILD)/tests/%: $(BUILD)/obj/tests/train/%.o $(TRAIN_LIBOBJS) $(LIBCLIENT_A)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(TRAIN_LDLIBS) $(CLIENT_LDLIBS) \
	    $(shell $(PKG_CONFIG) --libs cmocka 2>/dev/null)

# test_train_oom makes growth fail: every realloc called from slaq-train's
# objects goes through its __wrap_realloc first.
$(BUILD)/tests/test_train_oom: LDFLAGS += -Wl,--wrap=realloc

# make curves: record every algorithm's loss curve with the real trainers
# (src/train/curves.sh lists the exact runs).
.PHONY: curves
curves: $(SLAQ_TRAIN)
	@src/train/curves.sh $(SLAQ_TRAIN) data/curves

# make user-curves: a second held-out curve library from the user-style
# corpus's PyTorch, scikit-learn and XGBoost jobs, each alone under a
# private slaqd on one core (data/curves/users.jsonl).
.PHONY: user-curves
user-curves:
	@$(MAKE) --no-print-directory build
	@/usr/bin/python3 scripts/user-curves.py --build $(BUILD)

# make train-speed: per-iteration speed-up from 1 to 2 worker threads of the
# data-parallel algorithms (wants an otherwise idle 2-core machine).
.PHONY: train-speed
train-speed: $(SLAQ_TRAIN)
	@tests/train/scaling.sh $(SLAQ_TRAIN) logreg svm kmeans
