# test_layers.sh — the components include only what lies below them:
#
#   src/core   the scheduling core: its own headers and include/slaq only
#              (pure: no file formats, no simulator, no daemon, no CLI)
#   src/io     file formats: the core's public API and its util.h only
#   src/sim    the simulators: the core and io, never the CLI or the daemon
#              (the slaq subcommands that drive them live in src/cli)
#
# A check that a rule is held proves nothing unless the rule can fail, so
# the same check runs on a copy of the tree with one forbidden include
# planted in each component, and must find each.
. "$(dirname "$0")/lib.sh"

# layer_violations ROOT: "file: include" for every quoted include a
# component's file may not have. A bare name ("fit.h") is one of the
# component's own headers when that file sits beside the includer.
layer_violations() {
  local root=$1
  # component, then the include prefixes it may use (an extended regex)
  while read -r comp allowed; do
    for f in "$root"/src/"$comp"/*.[ch]; do
      [ -f "$f" ] || continue
      sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f" |
        while read -r inc; do
          [[ $inc != */* && -f $(dirname "$f")/$inc ]] && continue
          [[ $inc =~ ^($allowed) ]] && continue
          echo "${f#"$root"/}: $inc"
        done
    done
  done <<'EOF'
core slaq/|core/
io slaq/|io/|core/util\.h$|paths\.h$
sim slaq/|sim/|io/|core/
EOF
}

layer_violations . >"$TMP/found"
check "no component includes a layer above it (found: $(tr '\n' ';' <"$TMP/found"))" \
  test ! -s "$TMP/found"

# The same check on a copy with a forbidden include planted per component.
mkdir -p "$TMP/tree/src"
cp -r src/core src/io src/sim "$TMP/tree/src/"
printf '#include "sim/sim.h"\n' >>"$TMP/tree/src/core/policy.c"
printf '#include "daemon/daemon.h"\n' >>"$TMP/tree/src/io/curves.c"
printf '#include "cli/cli.h"\n' >>"$TMP/tree/src/sim/sim.c"
layer_violations "$TMP/tree" >"$TMP/planted"
check "a core file including the simulator is found" \
  grep -q '^src/core/policy.c: sim/sim.h$' "$TMP/planted"
check "an io file including the daemon is found" \
  grep -q '^src/io/curves.c: daemon/daemon.h$' "$TMP/planted"
check "a simulator file including the CLI is found" \
  grep -q '^src/sim/sim.c: cli/cli.h$' "$TMP/planted"
check "nothing else is found in the copy" \
  test "$(wc -l <"$TMP/planted")" -eq 3
finish
