# slaq: the command-line tool. Subcommands live one per file in src/cli/;
# other components (the simulator) add their objects to SLAQ_CMD_OBJS.
CLI_SRCS := $(sort $(wildcard src/cli/*.c))
SLAQ_CMD_OBJS += $(call OBJ,$(CLI_SRCS))
SLAQ_CMD_LIBS = $(LIBSLAQIO_A) $(LIBSLAQ_A)
# slaq replay reads slaqd's state.db through the store's reader (its only
# owner: src/daemon/store.h)
SLAQ_CMD_OBJS += $(call OBJ,src/daemon/store_run.c)
# slaq cluster node-key derives a node's key as the controller does, and
# --host speaks slaqd's sealed sessions: the agent link's code (one
# implementation of the handshake and the sealing: src/daemon/link.h,
# libsodium, already slaqd's)
SLAQ_CMD_OBJS += $(call OBJ,src/daemon/link.c)
SLAQ_CMD_LDLIBS := $(shell $(PKG_CONFIG) --libs sqlite3 libsodium 2>/dev/null)
SLAQ_CMD := $(BUILD)/bin/slaq
PROGRAMS += $(SLAQ_CMD)

# `slaq cluster up --slurm` submits contrib/slurm/slaq-cluster.sbatch, built
# into the program (od is in coreutils: no extra tool).
CLUSTER_SBATCH_C := $(BUILD)/gen/cluster_sbatch.c
SLAQ_CMD_OBJS += $(call OBJ,$(CLUSTER_SBATCH_C))

$(CLUSTER_SBATCH_C): contrib/slurm/slaq-cluster.sbatch
	@mkdir -p $(dir $@)
	@echo "  GEN   $@"
	@{ echo '/* Generated from $<: do not edit. */'; \
	   echo '#include "cli/cli.h"'; \
	   echo 'const char slaq_cluster_sbatch[] = {'; \
	   od -An -v -tx1 $< | sed -e 's/ \([0-9a-f][0-9a-f]\)/0x\1,/g'; \
	   echo '0x00};'; } >$@.tmp && mv $@.tmp $@
