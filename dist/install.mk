# make install / make uninstall: the programs, libraries, headers,
# pkg-config files, manual pages, bash completion, the Python module, the
# systemd unit and the example configuration, under PREFIX (default
# /usr/local), staged under DESTDIR when it is set.
#
#   make install PREFIX=/usr DESTDIR=/tmp/stage
#
# SYSCONFDIR (default /etc) holds slaq/slaqd.conf: slaqd reads
# SYSCONFDIR/slaq/slaqd.conf by default when it runs from BINDIR. The paths
# are compiled into slaqd (BUILD/gen/paths.h), so an install with another
# PREFIX rebuilds it.

PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
DATADIR    ?= $(PREFIX)/share
MANDIR     ?= $(DATADIR)/man
DOCDIR     ?= $(DATADIR)/doc/slaq
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
BASHCOMPDIR  ?= $(DATADIR)/bash-completion/completions
# Debian's python3 searches /usr/lib/python3/dist-packages (packages) and
# /usr/local/lib/python3.X/dist-packages (local installs).
PYTHON_X    = $(shell /usr/bin/python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null || echo 3)
PYTHONDIR  ?= $(if $(filter /usr,$(PREFIX)),/usr/lib/python3/dist-packages,$(PREFIX)/lib/python$(PYTHON_X)/dist-packages)
UNITDIR    ?= $(PREFIX)/lib/systemd/system
SYSCONFDIR ?= /etc
INSTALL    ?= install

SLAQ_VERSION := $(shell sed -n 's/^\#define SLAQ_VERSION "\(.*\)"$$/\1/p' include/slaq/version.h)
SOMAJOR    := 0

# Installed programs: the slaq command, slaqd, slaq-train, slaq-aqp and the
# example job (the load generator and test programs stay in the build tree).
INSTALL_PROGRAMS := $(SLAQ_CMD) $(SLAQD) $(SLAQ_TRAIN) $(SLAQ_AQP) $(TOY_JOB)
INSTALL_HEADERS  := $(sort $(wildcard include/slaq/*.h))
EXAMPLE_FILES    := $(sort $(shell find examples -type f ! -name '*.o' 2>/dev/null))
MAN_STAMP        := $(BUILD)/man/.stamp
GEN_PATHS        := $(BUILD)/gen/paths.h

# The install paths slaqd needs (and the source tree, whose data/models a
# slaqd not installed reads), rewritten only when they change.
$(GEN_PATHS): FORCE
	@mkdir -p $(dir $@)
	@printf '#define SLAQ_BINDIR "%s"\n#define SLAQ_SYSCONFDIR "%s"\n#define SLAQ_DATADIR "%s"\n#define SLAQ_SRCDIR "%s"\n' \
	    '$(BINDIR)' '$(SYSCONFDIR)' '$(DATADIR)' '$(CURDIR)' >$@.tmp
	@cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@
$(BUILD)/obj/src/daemon/slaqd.o $(BUILD)/obj/src/io/rlmodel.o: $(GEN_PATHS)
$(BUILD)/obj/src/daemon/slaqd.o $(BUILD)/obj/src/io/rlmodel.o: CPPFLAGS += -I$(BUILD)/gen
.PHONY: FORCE
FORCE:

# The pages name the documentation's directory, so they are made again
# when DOCDIR changes.
GEN_DOCDIR := $(BUILD)/gen/docdir
$(GEN_DOCDIR): FORCE
	@mkdir -p $(dir $@)
	@echo '$(DOCDIR)' >$@.tmp
	@cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@

$(MAN_STAMP): $(SLAQ_CMD) $(SLAQD) $(SLAQ_TRAIN) $(SLAQ_AQP) $(TOY_JOB) scripts/man.sh $(wildcard dist/man/*.h2m) $(GEN_DOCDIR)
	@echo "  MAN   $(BUILD)/man"
	@rm -rf $(BUILD)/man
	@SLAQ_DOCDIR='$(DOCDIR)' scripts/man.sh $(BUILD) $(BUILD)/man
	@touch $@

.PHONY: man install uninstall
man: $(MAN_STAMP)

# install FILE... DIR with mode; the directory is created first.
define inst
	$(INSTALL) -d $(DESTDIR)$(2)
	$(INSTALL) -m $(3) $(1) $(DESTDIR)$(2)/
endef
define subst_paths
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@BINDIR@|$(BINDIR)|g' \
	    -e 's|@LIBDIR@|$(LIBDIR)|g' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|g' \
	    -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' -e 's|@VERSION@|$(SLAQ_VERSION)|g'
endef

install: $(INSTALL_PROGRAMS) $(LIBSLAQ_A) $(LIBSLAQ_SO) $(LIBCLIENT_A) $(LIBCLIENT_SO) $(MAN_STAMP)
	$(call inst,$(INSTALL_PROGRAMS),$(BINDIR),755)
	$(call inst,$(INSTALL_HEADERS),$(INCLUDEDIR)/slaq,644)
	$(call inst,$(LIBSLAQ_A) $(LIBCLIENT_A),$(LIBDIR),644)
	@# shared libraries: the real file, the soname link, the link-time link
	for lib in libslaq libslaq-client; do \
	    $(INSTALL) -m 644 $(BUILD)/lib/$$lib.so $(DESTDIR)$(LIBDIR)/$$lib.so.$(SLAQ_VERSION) && \
	    ln -sf $$lib.so.$(SLAQ_VERSION) $(DESTDIR)$(LIBDIR)/$$lib.so.$(SOMAJOR) && \
	    ln -sf $$lib.so.$(SOMAJOR) $(DESTDIR)$(LIBDIR)/$$lib.so || exit 1; \
	done
	$(INSTALL) -d $(DESTDIR)$(PKGCONFIGDIR)
	for pc in slaq slaq-client; do \
	    $(subst_paths) dist/$$pc.pc.in >$(DESTDIR)$(PKGCONFIGDIR)/$$pc.pc || exit 1; \
	done
	$(call inst,$(BUILD)/man/man1/*.1,$(MANDIR)/man1,644)
	$(call inst,$(BUILD)/man/man8/*.8,$(MANDIR)/man8,644)
	$(INSTALL) -d $(DESTDIR)$(BASHCOMPDIR)
	$(INSTALL) -m 644 dist/slaq.bash-completion $(DESTDIR)$(BASHCOMPDIR)/slaq
	ln -sf slaq $(DESTDIR)$(BASHCOMPDIR)/slaqd
	ln -sf slaq $(DESTDIR)$(BASHCOMPDIR)/slaq-train
	$(call inst,python/slaq/*.py,$(PYTHONDIR)/slaq,644)
	$(INSTALL) -d $(DESTDIR)$(UNITDIR)
	$(subst_paths) dist/slaqd.service.in >$(DESTDIR)$(UNITDIR)/slaqd.service
	@# the configuration: never overwrite one the administrator has edited
	$(INSTALL) -d $(DESTDIR)$(SYSCONFDIR)/slaq
	test -e $(DESTDIR)$(SYSCONFDIR)/slaq/slaqd.conf || \
	    $(INSTALL) -m 644 dist/slaqd.conf $(DESTDIR)$(SYSCONFDIR)/slaq/slaqd.conf
	@# every example (a C job, a PyTorch job, sweep specifications) and the
	@# configuration file, as the docs' quick starts use them
	for f in $(EXAMPLE_FILES); do \
	    $(INSTALL) -d $(DESTDIR)$(DOCDIR)/$$(dirname $$f) && \
	    $(INSTALL) -m 644 $$f $(DESTDIR)$(DOCDIR)/$$(dirname $$f)/ || exit 1; \
	done
	$(call inst,dist/slaqd.conf,$(DOCDIR)/examples,644)
	@# Prometheus' scrape configuration and slaq's rules (docs/metrics.md)
	$(call inst,dist/prometheus/prometheus.yml dist/prometheus/slaq-rules.yml,$(DOCDIR)/examples/prometheus,644)
	@# MLF-RL's network, slaqd's default --rl-model
	$(call inst,data/models/mlfs-rl.model,$(DATADIR)/slaq,644)
	$(call inst,README.md docs/*.md,$(DOCDIR),644)

# Removes what install put there (the configuration only if unchanged).
uninstall:
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(notdir $(INSTALL_PROGRAMS)))
	rm -rf $(DESTDIR)$(INCLUDEDIR)/slaq $(DESTDIR)$(PYTHONDIR)/slaq $(DESTDIR)$(DOCDIR)
	rm -f $(foreach l,libslaq libslaq-client,$(DESTDIR)$(LIBDIR)/$(l).a \
	    $(DESTDIR)$(LIBDIR)/$(l).so $(DESTDIR)$(LIBDIR)/$(l).so.$(SOMAJOR) \
	    $(DESTDIR)$(LIBDIR)/$(l).so.$(SLAQ_VERSION))
	rm -f $(DESTDIR)$(PKGCONFIGDIR)/slaq.pc $(DESTDIR)$(PKGCONFIGDIR)/slaq-client.pc
	rm -f $(DESTDIR)$(MANDIR)/man1/slaq.1 $(DESTDIR)$(MANDIR)/man1/slaq-*.1 \
	    $(DESTDIR)$(MANDIR)/man8/slaqd.8
	rm -f $(addprefix $(DESTDIR)$(BASHCOMPDIR)/,slaq slaqd slaq-train)
	rm -f $(DESTDIR)$(UNITDIR)/slaqd.service
	rm -rf $(DESTDIR)$(DATADIR)/slaq
	cmp -s dist/slaqd.conf $(DESTDIR)$(SYSCONFDIR)/slaq/slaqd.conf && \
	    rm -f $(DESTDIR)$(SYSCONFDIR)/slaq/slaqd.conf || true
	rmdir $(DESTDIR)$(SYSCONFDIR)/slaq 2>/dev/null || true

# make deb: the Debian packages (scripts/deb.sh: slaq, libslaq0,
# libslaq-dev, python3-slaq, slaq-doc) in $(BUILD). The same build is
# staged with make install for PREFIX=/usr and the multiarch library
# directory; only the objects that hold the install paths (slaqd.o,
# libslaqio's rlmodel.o) and the
# manual pages are made again for it.
DEB_STAGE ?= $(BUILD)/deb-stage
DEB_MULTIARCH = $(shell dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null)
.PHONY: deb
deb: deps
	@rm -rf $(DEB_STAGE) && mkdir -p $(DEB_STAGE)
	@$(MAKE) --no-print-directory PREFIX=/usr SYSCONFDIR=/etc \
	    UNITDIR=/lib/systemd/system LIBDIR=/usr/lib/$(DEB_MULTIARCH) \
	    DOCDIR=/usr/share/doc/slaq-doc \
	    DESTDIR=$(abspath $(DEB_STAGE)) install >$(DEB_STAGE).log 2>&1 || \
	    { tail -n 30 $(DEB_STAGE).log; exit 1; }
	@rm -f $(BUILD)/slaq_*.deb $(BUILD)/libslaq*.deb $(BUILD)/python3-slaq_*.deb $(BUILD)/slaq-doc_*.deb
	@scripts/deb.sh $(DEB_STAGE) $(BUILD)
