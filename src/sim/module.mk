# The simulators: discrete-event drivers of libslaq (jobs, tasks, queries,
# sweeps, deadlines) and their report writer. libslaqsim.a holds them for
# the tests; the slaq command links their objects, and its subcommands that
# drive them (slaq sim, slaq workload, slaq bench cluster) live in src/cli/.
SIM_LIB_SRCS := $(sort $(wildcard src/sim/*.c))
LIBSLAQSIM_A := $(BUILD)/lib/libslaqsim.a

LIBS_STATIC   += $(LIBSLAQSIM_A)
SLAQ_CMD_OBJS += $(call OBJ,$(SIM_LIB_SRCS))

$(LIBSLAQSIM_A): $(call OBJ,$(SIM_LIB_SRCS))
	@mkdir -p $(dir $@)
	$(AR) rcs $@ $^

# tests/sim/test_*.c: cmocka programs that also link libslaqsim.a.
SIM_TEST_SRCS := $(sort $(wildcard tests/sim/test_*.c))
SIM_TESTS     := $(patsubst tests/sim/%.c,$(BUILD)/tests/%,$(SIM_TEST_SRCS))
UNIT_TESTS    += $(SIM_TESTS)

$(SIM_TESTS): $(BUILD)/tests/%: $(BUILD)/obj/tests/sim/%.o $(LIBSLAQSIM_A) $(TEST_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $< $(LIBSLAQSIM_A) $(TEST_LIBS) $(LIB_LDLIBS) $(UNIT_LDLIBS)

# make results: regenerate docs/results/ and print the evaluation targets.
.PHONY: results
results:
	@$(MAKE) --no-print-directory all
	@scripts/sim-results.sh $(BUILD)

# make plan-results: every allocator side by side (fair, Algorithm 1, the
# planners, the oracles, a queue, shortest-first) on the tuning and the
# three held-out curve libraries, and the planner's targets
# (docs/results/plan/).
.PHONY: plan-results
plan-results:
	@$(MAKE) --no-print-directory build
	@python3 scripts/plan-results.py --build $(BUILD)

# make tenants-results: shares between users in simulation (no shares,
# slaq+shares, weighted fair between users, fair-share with a FIFO queue
# inside) on the tuning and two held-out curve libraries, and the targets
# of shares between users (docs/results/tenants/).
.PHONY: tenants-results
tenants-results:
	@$(MAKE) --no-print-directory build
	@python3 scripts/tenants-results.py --build $(BUILD)

# make yaq-results: Yaq's queue management in the task-level simulator, on
# the thesis's synthetic workloads and the public traces of
# ../shared/data/traces/tasks (docs/results/yaq/, docs/queues.md).
.PHONY: yaq-results
yaq-results:
	@$(MAKE) --no-print-directory build
	@scripts/yaq-results.sh $(BUILD)

# make mlfs-results: regenerate docs/results/mlfs/ (jobs with deadlines,
# required accuracy and urgency; the real trace read from ../shared).
.PHONY: mlfs-results
mlfs-results:
	@$(MAKE) --no-print-directory build
	@scripts/mlfs-results.sh $(BUILD)

# make sweep-traces: record the sweeps of data/sweeps/ with real slaq-train
# runs: mlpc and logreg on a tenth of the training rows (20-40 minutes for
# both), then the same configurations on all the rows, where training
# outweighs the start-up (mlpc-full, logreg-full: about 70 CPU minutes),
# then mlpc-wide: 60 wider networks on all the rows for 30 epochs of about
# a CPU second each (about 60 CPU minutes); SEED=N for other configurations.
# make sweep-live: mlpc-wide's sweep run live, POP under slaqd against
# Optuna's best pruner on the replay, 3 repetitions (scripts/sweep-live.py).
# make sweep-results: replay them under slaq's sweep policies and Optuna's
# pruners, and measure the curve model (docs/results/sweeps/).
.PHONY: sweep-traces sweep-results sweep-live
sweep-traces: $(SLAQ_TRAIN)
	@/usr/bin/python3 scripts/sweep-traces.py --train $(SLAQ_TRAIN) \
	    --out data/sweeps --sweep mlpc --sweep logreg --subsample 0.1 \
	    --seed $(or $(SEED),12)
	@/usr/bin/python3 scripts/sweep-traces.py --train $(SLAQ_TRAIN) \
	    --out data/sweeps --sweep mlpc --sweep logreg --subsample 1 \
	    --tag full --seed $(or $(SEED),12)
	@/usr/bin/python3 scripts/sweep-traces.py --train $(SLAQ_TRAIN) \
	    --out data/sweeps --sweep mlpc-wide --configs 60 --epochs 30 \
	    --subsample 1 --seed $(or $(SEED),12)

# TRACES=DIR|FILE... replays other traces (e.g. a directory of them), OUT=DIR
# writes elsewhere than docs/results/sweeps.
sweep-results: deps
	@$(MAKE) --no-print-directory build
	@$(if $(OUT),OUT=$(OUT) )scripts/sweep-results.sh $(BUILD) $(TRACES)

# make sweep-live: scripts/sweep-live.py on examples/sweeps/mlpc-wide.json
# (its target is the recorded sweep's, 0.8568): POP under slaqd against
# Optuna's successive halving, the best pruner on the replay; REPS=N
# repetitions (default 3), each at most 7 minutes a way.
sweep-live: deps
	@$(MAKE) --no-print-directory build
	@/usr/bin/python3 scripts/sweep-live.py --build $(BUILD) \
	    --spec examples/sweeps/mlpc-wide.json --pruner sha \
	    --reps $(or $(REPS),3) --timeout 420
