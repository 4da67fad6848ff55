# slaq: the command-line tool. Subcommands live one per file in src/cli/;
# other components (the simulator) add their objects to SLAQ_CMD_OBJS.
CLI_SRCS := $(sort $(wildcard src/cli/*.c))
SLAQ_CMD_OBJS += $(call OBJ,$(CLI_SRCS))
SLAQ_CMD_LIBS = $(LIBSLAQIO_A) $(LIBSLAQ_A)
# slaq replay reads slaqd's state.db
SLAQ_CMD_LDLIBS := $(shell $(PKG_CONFIG) --libs sqlite3 2>/dev/null)
SLAQ_CMD := $(BUILD)/bin/slaq
PROGRAMS += $(SLAQ_CMD)
