# slaq — top-level build.
#
# One GNU Make file drives the whole tree. Each component describes itself in
# its own fragment, src/<component>/module.mk, which appends to the variables
# below; this file holds the shared flags and rules. Objects go under
# $(BUILD) (build/ by default, build-asan/ for the sanitizer build), so the
# plain and instrumented builds never mix.
#
#   make            build libraries and programs (installs missing packages)
#   make test       build and run every test; ends with the runner's summary
#   make demo       the main job on embedded defaults: the demo batch under
#                   fair and slaq at once, side by side (HTTP=ADDR:PORT)
#   make demo-doc   make demo, its output written into docs/demo.md
#   make demo-one   the demo batch under one policy with slaq top
#                   (POLICY=slaq|fair|slaq-maxmin, HTTP=ADDR:PORT)
#   make demo-compare  the demo batch under fair and slaq, and simulated
#   make demo-aqp   12 approximate queries under relaqs and fair (SF=, HTTP=)
#   make demo-queues  a task array and ML jobs on 3 agents (Slurm steps on the
#                   local Slurm cluster; DIRECT=1: started here), queues or not
#   make demo-deadlines  20 slaq-train jobs with deadlines on the local Slurm
#                   cluster's 3 agents under mlfs, slaq and edf, side by side
#                   (JOBS=N, SEED=S, POLICIES=a,b; docs/deadlines.md)
#   make bench-real real jobs plainly, under fair and under slaq (REPS=N)
#   make bench-users the user-style corpus of real jobs, every way (REPS=N)
#   make plan-results every allocator side by side on the curve libraries
#   make tenants-results shares between users side by side in simulation
#   make user-curves record data/curves/users.jsonl from the user-style jobs
#   make bench-cluster the core at 1,000 nodes x 64 cores, 50,000 jobs (sim)
#   make sweep-live a sweep run live: POP under slaqd against Optuna (REPS=N)
#   make check-asan run the unit tests under ASan + UBSan
#   make soak       kill -9 a controller and two agents 20 times each under
#                   ML jobs, a query and a sweep; count what was lost
#                   (KILLS=N, SEED=S; tests/soak/soak.py, docs/cluster-runtime.md)
#   make deps       install missing Debian packages (idempotent)
#   make install    install under PREFIX (/usr/local) and DESTDIR; uninstall
#   make man        the manual pages (build/man), from the programs' --help
#   make deb        the Debian package build/slaq_VERSION_ARCH.deb

BUILD    ?= build
SANITIZE ?=
CC       ?= cc
PKG_CONFIG ?= pkg-config

# Packages every component needs at build time; components add theirs.
PC_PKGS := gsl jansson cmocka

WARN     := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
CSTD     := -std=c11 -D_GNU_SOURCE
OPT      ?= -O2 -g
ifeq ($(SANITIZE),1)
OPT      := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
LDSAN    := -fsanitize=address,undefined
endif
CPPFLAGS += -Iinclude -Isrc -Itests/unit
CFLAGS   += $(CSTD) $(WARN) $(OPT) -fPIC -MMD -MP
LDFLAGS  += $(LDSAN)

# Filled in by the fragments.
LIBS_STATIC :=
LIBS_SHARED :=
PROGRAMS    :=
TEST_LIBS   :=
UNIT_TESTS  :=
LIB_LDLIBS :=
SLAQ_CMD_OBJS :=

OBJ = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))

include $(sort $(wildcard src/*/module.mk)) tests/module.mk bench/module.mk

PC_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(PC_PKGS) 2>/dev/null)
CPPFLAGS  += $(PC_CFLAGS)

.PHONY: all deps build test test-unit check-asan soak demo demo-doc demo-one demo-compare demo-aqp bench-suspend demo-sweep demo-queues demo-deadlines clean help
# Keep objects that only pattern rules mention (test objects).
.SECONDARY:
.DEFAULT_GOAL := all

all: deps
	@$(MAKE) --no-print-directory build

build: $(LIBS_STATIC) $(LIBS_SHARED) $(PROGRAMS) $(UNIT_TESTS)

deps:
	@scripts/deps.sh $(sort $(wildcard deps/*.txt))
	@scripts/deps-npm.sh tests/browser

test: deps
	@$(MAKE) --no-print-directory build
	@scripts/run-tests.sh $(BUILD)

test-unit: build
	@scripts/run-tests.sh --unit-only $(BUILD)

# HTTP=ADDR:PORT puts the dashboard there (default 127.0.0.1:7070, or a
# free port when that one is taken).
# The demo builds quietly (the compiler's lines go to a log, shown only
# when the build fails), so that its own output is what a user reads.
demo: deps
	@echo "== building slaq (log: $(BUILD)/demo-build.log)"
	@mkdir -p $(BUILD)
	@$(MAKE) --no-print-directory build >$(BUILD)/demo-build.log 2>&1 || \
	    { tail -n 30 $(BUILD)/demo-build.log; exit 1; }
	@scripts/demo-pair.sh $(if $(HTTP),--http $(HTTP)) $(BUILD)

# make demo, its output kept and put into docs/demo.md's sample.
demo-doc: deps
	@$(MAKE) --no-print-directory build >$(BUILD)/demo-build.log 2>&1 || \
	    { tail -n 30 $(BUILD)/demo-build.log; exit 1; }
	@scripts/demo-pair.sh --http 127.0.0.1:0 $(BUILD) | tee $(BUILD)/demo.out
	@python3 scripts/demo_report.py doc docs/demo.md $(BUILD)/demo.out

demo-one: deps
	@$(MAKE) --no-print-directory build
	@scripts/demo.sh $(if $(POLICY),--policy $(POLICY)) $(if $(HTTP),--http $(HTTP)) $(BUILD)

# REPS=3 repeats the pair of runs and summarises the ratios.
demo-compare: deps
	@$(MAKE) --no-print-directory build
	@scripts/demo-compare.sh --reps $(or $(REPS),1) $(BUILD)

# 12 real slaq-aqp queries under slaqd with relaqs, then fair, side by
# side (docs/relaqs.md); SF=scale factor (default 0.3), HTTP=ADDR:PORT.
demo-aqp: deps
	@$(MAKE) --no-print-directory build
	@scripts/demo-aqp.sh --scale-factor $(or $(SF),0.3) $(if $(HTTP),--http $(HTTP)) $(BUILD)

# A real sweep under slaqd, POP then Default (about 5 minutes).
demo-sweep: deps
	@$(MAKE) --no-print-directory build
	@scripts/demo-sweep.sh $(if $(HTTP),--http $(HTTP)) $(BUILD)

# A task array (TASKS=500 of 1-5 s x SCALE) and JOBS=4 slaq-train jobs on a
# controller and 3 agents (Slurm steps on the local Slurm cluster when it
# starts here, else or with DIRECT=1 started directly), with node queues
# (BOUND=auto, slaqd's default; or N, mwt:S) and without: makespan,
# utilisation, idle gap, the ML jobs' t90
# (docs/arrays.md, "Node queues").
demo-queues: deps
	@$(MAKE) --no-print-directory build
	@scripts/demo-queues.py --tasks $(or $(TASKS),500) --jobs $(or $(JOBS),4) --scale $(or $(SCALE),1) --bound $(or $(BOUND),auto) $(if $(DIRECT),--direct) --out $(BUILD)/demo-queues.json $(BUILD)

# JOBS=20 slaq-train jobs with deadlines, required accuracies and
# urgencies on the local Slurm cluster (scripts/slurm-local.sh; plain
# processes when Slurm cannot start), the same submissions under each
# policy (docs/deadlines.md, "A real run"); 10-20 minutes.
demo-deadlines: deps
	@$(MAKE) --no-print-directory build
	@scripts/demo-deadlines.py --jobs $(or $(JOBS),20) --seed $(or $(SEED),1) --policies $(or $(POLICIES),mlfs,slaq,edf) --out $(BUILD)/demo-deadlines.json $(BUILD)

# Suspend latency and checkpoint size of a real job under slaqd.
bench-suspend: build
	@scripts/bench-suspend.py $(BUILD)

check-asan: deps
	@$(MAKE) --no-print-directory BUILD=build-asan SANITIZE=1 test-unit

# The cluster's kill -9 soak (a few minutes): prints its counts as JSON
# and fails if an acknowledged report is missing without a count, a query
# misses its exact answer or the sweep outgrows its slots.
soak: build
	@python3 tests/soak/soak.py --build $(BUILD) --kills $(or $(KILLS),20) \
	    --seed $(or $(SEED),1) --verbose

# The slaq command: links every subcommand's objects.
$(SLAQ_CMD): $(SLAQ_CMD_OBJS) $(SLAQ_CMD_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(SLAQ_CMD_OBJS) $(SLAQ_CMD_LIBS) $(LIB_LDLIBS) $(SLAQ_CMD_LDLIBS)

# Unit tests link the libraries in dependency order (TEST_LIBS).
$(BUILD)/tests/test_%: $(BUILD)/obj/tests/unit/test_%.o $(TEST_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $< $(TEST_LIBS) $(LIB_LDLIBS) $(UNIT_LDLIBS)

# Compiles print one short line each; `make V=1` shows the commands.
$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
ifeq ($(V),1)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<
else
	@echo "  CC    $<"
	@$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<
endif

clean:
	rm -rf build build-asan

help:
	@sed -n '3,/^$$/s/^# \{0,1\}//p' Makefile

# make install, uninstall, man, deb: dist/install.mk.
include dist/install.mk

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
